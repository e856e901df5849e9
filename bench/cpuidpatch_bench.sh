#!/usr/bin/env bash
# What patching CPUID costs a process at its start (shim/preload/cpuidpatch.c): the same command
# (default `python3 -c pass`: python3.11 and its libraries scanned) run through
#   host    `hwemu exec --cpuid host`   (CPUID left alone: the shim's start without the scan)
#   patch   `hwemu exec --cpuid patch`  (every loaded object's CPUIDs found and rewritten)
# in turn, PAIRS pairs (default 40), each run's whole-process wall time; prints both medians and
# the median of the pairwise differences (a machine whose speed drifts moves both runs of a pair).
# Then the shim's own figure for one run (HWEMU_DEBUG=1: the objects scanned at start, the sites
# rewritten and the time the scan took inside the process).
# Usage: bench/cpuidpatch_bench.sh BUILD_DIR [PAIRS] [CMD ARGS...]   (figures: bench/README.md)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
pairs=${2:-40}
shift $(($# > 2 ? 2 : $#))
[ $# -gt 0 ] || set -- python3 -c pass
root=$(mktemp -d /dev/shm/hwemu-bench.XXXXXX)
port=$((30000 + $$ % 20000))
trap 'kill $pid 2>/dev/null; rm -rf "$root"' EXIT
"$build/hwemu" serve --root "$root/r" --addr 127.0.0.1:$port 2>/dev/null &
pid=$!
for _ in $(seq 100); do [ -f "$root/r/intel-0.seg" ] && break; sleep 0.05; done
sleep 0.5
python3 - "$build/hwemu" "$root/r" "$pairs" "$@" <<'PY'
import statistics, subprocess, sys, time
hwemu, root, pairs, cmd = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def run(mode):
    t = time.perf_counter()
    subprocess.run([hwemu, "exec", "--root", root, "--node", "intel-0", "--cpuid", mode, "--"] + cmd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t
run("host"), run("patch")  # warm the page cache
a, b = [], []
for _ in range(pairs):
    a.append(run("host"))
    b.append(run("patch"))
d = [y - x for x, y in zip(a, b)]
print(f"{' '.join(cmd)}: {pairs} pairs")
print(f"  --cpuid host   median {statistics.median(a) * 1e3:8.3f} ms")
print(f"  --cpuid patch  median {statistics.median(b) * 1e3:8.3f} ms")
print(f"  patch - host   median {statistics.median(d) * 1e3:8.3f} ms (pairwise)")
PY
echo -n "  in the process: "
HWEMU_DEBUG=1 "$build/hwemu" exec --root "$root/r" --node intel-0 --cpuid patch -- "$@" 2>&1 >/dev/null | grep 'CPUID patched at start'
