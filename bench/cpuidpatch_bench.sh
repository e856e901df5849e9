#!/usr/bin/env bash
# What patching CPUID costs a process at its start (shim/preload/cpuidpatch.c): the median and
# p90 wall time of N runs (default 200) of a command (default `/usr/bin/python3 -c pass`: python3.11 and
# its libraries scanned, libc skipped) started by exec_bench (fork, exec, the command's work,
# exit, wait) inside `hwemu exec` on an Intel node, so that every run loads the shim:
#   host    --cpuid host    CPUID left alone: the shim's start without the scan
#   patch   --cpuid patch   every loaded object's CPUIDs found and rewritten
# twice each, in turn (host, patch, host, patch: a drifting machine shows as a spread between the
# two runs of one mode). Then the shim's own figure for one run of the command (HWEMU_DEBUG=1:
# the objects scanned at start, the sites rewritten, the time the scan took in the process).
# Usage: bench/cpuidpatch_bench.sh BUILD_DIR [N [CMD ARGS...]]   (figures: bench/README.md)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
n=${2:-200}
shift $(($# > 2 ? 2 : $#))
[ $# -gt 0 ] || set -- /usr/bin/python3 -c pass
root=$(mktemp -d /dev/shm/hwemu-bench.XXXXXX)
port=$((30000 + $$ % 20000))
trap 'kill $pid 2>/dev/null; rm -rf "$root"' EXIT
"$build/hwemu" serve --root "$root/r" --addr 127.0.0.1:$port 2>/dev/null &
pid=$!
for _ in $(seq 100); do [ -f "$root/r/intel-0.seg" ] && break; sleep 0.05; done
sleep 0.5
echo "$*: $n runs each"
for mode in host patch host patch; do
    r=$("$build/hwemu" exec --root "$root/r" --node intel-0 --cpuid $mode -- "$build/exec_bench" "$n" "$@")
    printf "  --cpuid %-6s median %6s us   p90 %6s us\n" $mode $r
done
echo -n "  in the process: "
HWEMU_DEBUG=1 "$build/hwemu" exec --root "$root/r" --node intel-0 --cpuid patch -- "$@" 2>&1 >/dev/null |
    grep 'CPUID patched at start'
