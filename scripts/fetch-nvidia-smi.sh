#!/usr/bin/env bash
# Fetches Debian's real nvidia-smi (non-free, 535.x) and nvtop (contrib) into DIR without
# touching the system's apt configuration: scripts/debian-nonfree.list and apt state under DIR,
# `apt-get download`, `dpkg -x`. Only the two tools are unpacked; NVIDIA's libnvidia-ml is never
# fetched (the node's NVML, libhwemu-nvml.so, replaces it under `hwemu exec`).
#   scripts/fetch-nvidia-smi.sh DIR
# Leaves DIR/nvidia-smi/usr/lib/nvidia/current/nvidia-smi and DIR/nvtop/usr/bin/nvtop, and
# prints nothing when they are already there. Safe to run concurrently (a lock under DIR).
# Version: 535.261.03-1 (bookworm non-free, the release whose NVML calls were traced), else the
# newest 535 bookworm offers.
set -euo pipefail
dir=${1:?usage: fetch-nvidia-smi.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
smi=$dir/nvidia-smi/usr/lib/nvidia/current/nvidia-smi
nvtop=$dir/nvtop/usr/bin/nvtop
exec 9>"$dir/.fetch.lock"
flock 9
[ -x "$smi" ] && [ -x "$nvtop" ] && exit 0

apt=$dir/apt
list=$(cd "$(dirname "$0")" && pwd)/debian-nonfree.list
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
opts=(-o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$apt/lists"
      -o Dir::Cache="$apt/cache" -o APT::Sandbox::User=root -q)
if ! apt-get "${opts[@]}" update >"$apt/update.log" 2>&1; then
    echo "fetch-nvidia-smi: apt-get update with $list failed:" >&2
    tail -5 "$apt/update.log" >&2
    exit 1
fi
cd "$apt/debs"
rm -f ./*.deb
apt-get "${opts[@]}" download nvidia-smi=535.261.03-1 >"$apt/download.log" 2>&1 ||
    apt-get "${opts[@]}" download nvidia-smi >>"$apt/download.log" 2>&1 || {
    echo "fetch-nvidia-smi: cannot download nvidia-smi (non-free):" >&2
    tail -5 "$apt/download.log" >&2
    exit 1
}
apt-get "${opts[@]}" download nvtop >>"$apt/download.log" 2>&1 || {
    echo "fetch-nvidia-smi: cannot download nvtop (contrib):" >&2
    tail -5 "$apt/download.log" >&2
    exit 1
}
rm -rf "$dir/nvidia-smi" "$dir/nvtop"
dpkg -x nvidia-smi_*.deb "$dir/nvidia-smi"
dpkg -x nvtop_*.deb "$dir/nvtop"
[ -x "$smi" ] && [ -x "$nvtop" ] || { echo "fetch-nvidia-smi: the packages did not hold $smi and $nvtop" >&2; exit 1; }
