#!/usr/bin/env bash
# Runs the tests a host's NVIDIA stack could leak into once more, on a host that has one: installs
# Debian's non-free nvidia-smi and libnvidia-ml1 (as a user's GPU workstation has them), runs the
# affected ctest tests in both build trees, and purges every package the install added, also
# when a test or the script fails (a trap). CI runs it after ./test.sh (.ci/run); never test.sh,
# which must not change a user's system. Root only (it installs packages).
#   scripts/host-nvidia-check.sh [BUILD_DIR...]     (default: build build-asan)
# apt's configuration is not touched: the non-free sources list (scripts/debian-nonfree.list) and
# its package lists (a temporary directory) are given on apt-get's command line, as
# scripts/fetch-nvidia-smi.sh does.
# Exit status: ctest's (0 when every test passed), 1 when the packages cannot be installed or
# were already there (then nothing is removed: they are the machine's own).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "host-nvidia-check: run as root (it installs nvidia-smi and libnvidia-ml1)" >&2; exit 1; }
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=(build build-asan)
for b in "${builds[@]}"; do
    [ -f "$b/CTestTestfile.cmake" ] || { echo "host-nvidia-check: $b is not a build tree (run ./test.sh first)" >&2; exit 1; }
done
# The tests whose nodes a host's /dev/nvidia*, libnvidia-ml.so.1 and nvidia-smi could reach.
tests='^cli_test_(gpu|nvml|nvml_clients|host_devices|linked_libs|interfaces|exec_go|shim|fakesmi_nvidia|whole_static)$'

if dpkg-query -W -f='${Status}' nvidia-smi libnvidia-ml1 2>/dev/null | grep -q "install ok installed"; then
    echo "host-nvidia-check: nvidia-smi or libnvidia-ml1 is installed already; run the tests by hand" >&2
    exit 1
fi
apt=$(mktemp -d)
before=$apt/before
added=()
# NVIDIA's libraries make their device files when run as root (/dev/nvidiactl, 195:255): any the
# step leaves is removed with the packages
devs_before=$(ls -d /dev/nvidia* 2>/dev/null || true)
cleanup() {
    local rc=$? d
    for d in /dev/nvidia*; do
        [ -e "$d" ] && ! grep -qxF "$d" <<<"$devs_before" && rm -rf "$d" && echo "host-nvidia-check: removed $d"
    done
    if [ ${#added[@]} -gt 0 ]; then
        echo "host-nvidia-check: purging ${added[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${added[@]}" >"$apt/purge.log" 2>&1 ||
            { echo "host-nvidia-check: purging failed:" >&2; tail -5 "$apt/purge.log" >&2; rc=1; }
    fi
    rm -rf "$apt"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$apt/lists/partial"
opts=(-o Dir::Etc::sourcelist="$PWD/scripts/debian-nonfree.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$apt/lists"
      -o APT::Sandbox::User=root -q)
apt-get "${opts[@]}" update >"$apt/update.log" 2>&1 ||
    { echo "host-nvidia-check: apt-get update with scripts/debian-nonfree.list failed:" >&2; tail -5 "$apt/update.log" >&2; exit 1; }
dpkg-query -W -f='${Package}\n' | sort >"$before"
DEBIAN_FRONTEND=noninteractive apt-get "${opts[@]}" install -y --no-install-recommends nvidia-smi libnvidia-ml1 \
    >"$apt/install.log" 2>&1 || install_rc=$?
# every package the install added (nvidia-smi's dependencies too), whether or not it finished
mapfile -t added < <(dpkg-query -W -f='${Package}\n' | sort | comm -13 "$before" -)
if [ "${install_rc:-0}" -ne 0 ]; then
    echo "host-nvidia-check: installing nvidia-smi and libnvidia-ml1 failed:" >&2
    tail -5 "$apt/install.log" >&2
    exit 1
fi
echo "host-nvidia-check: installed ${added[*]}; the host has $(ls /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1) and $(command -v nvidia-smi)"
rc=0
# as ./test.sh runs the sanitizer tree (the options do nothing to the normal one)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for b in "${builds[@]}"; do
    echo "host-nvidia-check: ctest in $b"
    ctest --test-dir "$b" -R "$tests" --output-on-failure || rc=1
done
exit $rc
