#!/usr/bin/env bash
# The node's NVML (libhwemu-nvml.so) on an nvidia-h100-sxm-8gpu node of tests/specs/gpu.yaml:
#   nvmlDeviceGetPowerUsage   median and p90 per call from a C client (bench/nvml_bench.c,
#                             target under 200 ns), and the system calls its counted loop of
#                             100000 calls makes (strace: the calls between the two getppid
#                             markers; target 0)
#   real nvidia-smi           Debian's nvidia-smi 535 --query-gpu=power.draw --format=csv on the
#                             node's NVML, wall time per invocation (bench/exec_bench.c, 100 runs),
#                             beside fakesmi's nvidia-smi doing the same
# Usage: bench/nvml_bench.sh BUILD_DIR     (figures go to bench/README.md; needs strace)
set -euo pipefail
build=${1:-build}
root=$(mktemp -d /dev/shm/hwemu-bench.XXXXXX)
port=$((30000 + $$ % 20000))
trap 'kill $pid 2>/dev/null; rm -rf "$root"' EXIT
"$build/hwemu" serve --spec tests/specs/gpu.yaml --root "$root/r" --addr 127.0.0.1:$port 2>/dev/null &
pid=$!
for _ in $(seq 100); do [ -f "$root/r/sxm-0.seg" ] && break; sleep 0.05; done
sleep 0.5
scripts/fetch-nvidia-smi.sh "$build/nvidia-tools"
smi=$build/nvidia-tools/nvidia-smi/usr/lib/nvidia/current/nvidia-smi
ex() { "$build/hwemu" exec --root "$root/r" --node sxm-0 -- "$@"; }
ex "$build/nvml_bench"
ex strace -f -o "$root/trace" "$build/nvml_bench" 3 100000 >/dev/null
n=$(awk '/getppid/ { m++; next } m == 1 { n++ } END { print (m == 2 ? n + 0 : "no markers in the trace") }' "$root/trace")
echo "system calls in the counted loop of 100000 calls: $n"
q="--query-gpu=power.draw --format=csv"
printf "%-28s median %6s us   p90 %6s us\n" "real nvidia-smi (exec)" $(ex "$build/exec_bench" 100 "$smi" $q)
printf "%-28s median %6s us   p90 %6s us\n" "fakesmi nvidia-smi (exec)" $(ex "$build/exec_bench" 100 nvidia-smi $q)
printf "%-28s median %6s us   p90 %6s us\n" "true (exec)" $(ex "$build/exec_bench" 100 /bin/true)
