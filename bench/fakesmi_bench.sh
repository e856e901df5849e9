#!/usr/bin/env bash
# One GPU tool invocation's wall time (target: nvidia-smi --query-gpu <= 5 ms), median and
# p90 of 300 runs (fork, exec, the tool's work, exit) on an nvidia-h100-sxm-8gpu node:
#   true             /bin/true: what any fork+exec costs on this machine
#   query            nvidia-smi --query-gpu=<9 power fields> --format=csv for 8 GPUs
#   query (exec)     the same inside `hwemu exec` (PATH link, LD_PRELOAD shim loaded), as agents run it
#   table            nvidia-smi with no argument (the summary table)
#   rocm-smi         rocm-smi --showpower --json on an amd-instinct-mi300x-8gpu node
# Usage: bench/fakesmi_bench.sh BUILD_DIR     (figures go to bench/README.md)
set -euo pipefail
build=${1:-build}
root=$(mktemp -d /dev/shm/hwemu-bench.XXXXXX)
port=$((30000 + $$ % 20000))
trap 'kill $pid 2>/dev/null; rm -rf "$root"' EXIT
"$build/hwemu" serve --spec tests/specs/gpu.yaml --root "$root/r" --addr 127.0.0.1:$port 2>/dev/null &
pid=$!
for _ in $(seq 100); do [ -f "$root/r/mi300x-0.seg" ] && break; sleep 0.05; done
sleep 0.5
q=--query-gpu=index,name,power.draw,power.limit,enforced.power.limit,power.min_limit,power.max_limit,utilization.gpu,temperature.gpu
run() {
    local name=$1 r
    shift
    r=$("$@")
    printf "%-14s median %6s us   p90 %6s us\n" "$name" $r
}
export HWEMU_ROOT=$root/r HWEMU_NODE=sxm-0
run true "$build/exec_bench" 300 /bin/true
run query "$build/exec_bench" 300 "$build/fakesmi" nvidia-smi $q --format=csv
run "query (exec)" "$build/hwemu" exec --root "$root/r" --node sxm-0 -- "$build/exec_bench" 300 nvidia-smi $q --format=csv
run table "$build/exec_bench" 300 "$build/fakesmi" nvidia-smi
HWEMU_NODE=mi300x-0 run rocm-smi "$build/exec_bench" 300 "$build/fakesmi" rocm-smi --showpower --json
