#!/usr/bin/env bash
# The shim's cost, in one run on this machine: median ns per open+read+close of
#   emulated   energy_uj of an intel-xeon-2s-rapl node, through libhwemu-shim.so
#   tmpfs      a file of the same size on /dev/shm, without the shim
#   passthru   the same tmpfs file with the shim loaded (what the shim adds to other files)
#   /proc/stat the whole of /proc/stat of a 384-CPU amd-epyc-2s-energy-only node (read to EOF)
# Usage: bench/shim_bench.sh BUILD_DIR     (figures go to bench/README.md)
set -euo pipefail
build=${1:-build}
root=$(mktemp -d /dev/shm/hwemu-bench.XXXXXX)
port=$((30000 + $$ % 20000))
trap 'kill $pid 2>/dev/null; rm -rf "$root"' EXIT
cat >"$root/spec.yaml" <<'EOF2'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: bench}
spec:
  defaults: {baseLoad: {cpuUtil: 0.6, memoryIntensity: 0.2}}
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 1}
  - {name: amd, profile: amd-epyc-2s-energy-only, count: 1}
EOF2
"$build/hwemu" serve --spec "$root/spec.yaml" --root "$root/r" --addr 127.0.0.1:$port 2>/dev/null &
pid=$!
for _ in $(seq 100); do [ -f "$root/r/intel-0.seg" ] && break; sleep 0.05; done
sleep 0.5
echo 1234567890123 >"$root/tmpfs_file"
file=/sys/class/powercap/intel-rapl:0/energy_uj
emu=$("$build/hwemu" exec --root "$root/r" --node intel-0 -- "$build/shim_bench" $file)
tmpfs=$("$build/shim_bench" "$root/tmpfs_file")
pass=$("$build/hwemu" exec --root "$root/r" --node intel-0 -- "$build/shim_bench" "$root/tmpfs_file")
stat=$("$build/hwemu" exec --root "$root/r" --node amd-0 -- "$build/shim_bench" /proc/stat 41 2000 whole)
statcpu=$(HWEMU_BENCH_CPU=1 "$build/hwemu" exec --root "$root/r" --node amd-0 -- "$build/shim_bench" /proc/stat 41 2000 whole)
emucpu=$(HWEMU_BENCH_CPU=1 "$build/hwemu" exec --root "$root/r" --node intel-0 -- "$build/shim_bench" $file)
echo "emulated energy_uj through the shim: $emu ns per open+read+close"
echo "/proc/stat of 384 CPUs (whole):      $stat ns per open+read to EOF+close"
echo "the same two in CPU time:            $emucpu ns (energy_uj), $statcpu ns (/proc/stat)"
echo "tmpfs file without the shim:         $tmpfs ns"
echo "tmpfs file with the shim loaded:     $pass ns"
awk -v e="$emu" -v t="$tmpfs" -v p="$pass" 'BEGIN {
    printf "emulated is %.1fx faster than tmpfs; the shim adds %+.1f%% to a file it does not emulate\n", t / e, (p - t) / t * 100 }'
