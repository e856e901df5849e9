#!/usr/bin/env bash
# The real nvidia-smi on the node's NVML (libhwemu-nvml.so): Debian's nvidia-smi 535
# (scripts/fetch-nvidia-smi.sh; NVIDIA's libnvidia-ml is never fetched) under `hwemu exec` on
# every NVIDIA profile: -L, -q, --query-gpu, the table, and -pl, -lgc/-rgc, -lmc/-rmc, -pm as
# root and without (HWEMU_UNPRIVILEGED=1); the engine sees the limit (the enforced limit follows,
# the write is an event). One truth, two routes: with the engine stopped (SIGSTOP, so both read
# the same tick) the real tool and fakesmi's nvidia-smi print the same values, field by field
# (tests/cli/smi_compare.py), and the set commands print the same lines. Also: no processes
# (--query-compute-apps prints its header), every exported name survives NULL arguments
# (tests/nvml/null_calls.py), the library without a node (driver not loaded, exit 9), an AMD
# node has no NVML (the real tool's exit 12), and a dlopen by absolute path gets the node's
# NVML through the shim.
# Usage: test_nvml.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
build=$(cd "$(dirname "$hwemu")" && pwd)
fakesmi=${HWEMU_FAKESMI:-$build/fakesmi}
tools=$build/nvidia-tools
root=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && { kill -CONT $pid; kill -9 $pid; } 2>/dev/null; rm -rf "$root"' EXIT
scripts/fetch-nvidia-smi.sh "$tools" || { bad "cannot fetch Debian's nvidia-smi (scripts/fetch-nvidia-smi.sh)"; finish; }
smi=$tools/nvidia-smi/usr/lib/nvidia/current/nvidia-smi

cat >"$root/spec.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: nvml}
spec:
  defaults:
    baseLoad: {cpuUtil: 0.5, gpuUtil: 1.0, memoryIntensity: 0.2, gpuClass: gpu.compute_bound}
  pools:
  - {name: sxm, profile: nvidia-h100-sxm-8gpu, count: 1}
  - {name: sxm4, profile: nvidia-h100-sxm-4gpu, count: 1}
  - {name: nvl, profile: nvidia-h100-nvl-8gpu, count: 1}
  - {name: l40s, profile: nvidia-l40s-4gpu, count: 1, baseLoad: {gpuUtil: 0.0}}
  - {name: nopm, profile: nvidia-h100-sxm-8gpu, count: 1, overrides: {gpus: {persistenceMode: disabled}}}
  - {name: fs, profile: nvidia-h100-nvl-8gpu, count: 1, overrides: {gpus: {fieldSupport: {power.min_limit: "[N/A]"}}}}
  - {name: amd, profile: amd-instinct-mi300x-8gpu, count: 1}
EOF
port=$(free_port)
serve_start http://127.0.0.1:$port "$root/serve.err" --spec "$root/spec.yaml" --root "$root/r" \
    --addr 127.0.0.1:$port --tick 200ms || { bad "serve did not come up: $(cat "$root/serve.err")"; finish; }

# real NODE ARGS...: the real nvidia-smi through hwemu exec; stdout in $out, exit code in $rc.
real() {
    local node=$1
    shift
    out=$(HWEMU_FAKESMI=$fakesmi "$hwemu" exec --root "$root/r" --node "$node" -- "$smi" "$@" 2>"$root/err")
    rc=$?
}
# fake NODE ARGS...: fakesmi's nvidia-smi on the same node.
fake() {
    local node=$1
    shift
    out=$(HWEMU_ROOT=$root/r HWEMU_NODE=$node "$fakesmi" nvidia-smi "$@" 2>"$root/err")
    rc=$?
}
# frozen NODE ARGS...: both tools on the node with the engine stopped; outputs in
# $root/real.txt and $root/fake.txt (exit codes $rc_real, $rc_fake). The real tool runs as
# hwemu exec would run it (its environment), without exec's engine liveness check.
frozen() {
    local node=$1
    shift
    kill -STOP $pid
    HWEMU_ROOT=$root/r HWEMU_NODE=$node LD_LIBRARY_PATH=$root/r/$node.lib HWEMU_NVML=$root/r/$node.lib/libnvidia-ml.so.1 \
        "$smi" "$@" >"$root/real.txt" 2>"$root/err"
    rc_real=$?
    HWEMU_ROOT=$root/r HWEMU_NODE=$node "$fakesmi" nvidia-smi "$@" >"$root/fake.txt" 2>>"$root/err"
    rc_fake=$?
    kill -CONT $pid
}
# expect WHAT RC TEXT: the last call exited RC and printed exactly TEXT.
expect() {
    [ "$rc" = "$2" ] && [ "$out" = "$3" ] && ok || bad "$1: rc=$rc (want $2) stdout:
$out
stderr: $(cat "$root/err")"
}
# same WHAT NODE ARGS...: the real tool and fakesmi print the same lines and exit alike.
same() {
    local what=$1 node=$2
    shift 2
    real "$node" "$@"
    local r=$out rr=$rc
    fake "$node" "$@"
    [ "$r" = "$out" ] && [ "$rr" = "$rc" ] && ok || bad "$what: real (rc $rr):
$r
fakesmi (rc $rc):
$out"
}

Q=index,name,uuid,pci.bus_id,serial,driver_version,count,persistence_mode,pstate,memory.total,memory.used
Q=$Q,memory.free,utilization.gpu,utilization.memory,temperature.gpu,temperature.memory,power.management,power.draw
Q=$Q,power.draw.average,power.draw.instant,power.limit,enforced.power.limit,power.default_limit,power.min_limit
Q=$Q,power.max_limit,clocks.gr,clocks.sm,clocks.mem,clocks.video,clocks.max.gr,clocks.max.sm,clocks.max.mem
Q=$Q,compute_cap,pci.device_id,pci.domain,pci.bus,pci.device,fan.speed,compute_mode,mig.mode.current
Q=$Q,mig.mode.pending,clocks_event_reasons.active,clocks_event_reasons.supported,clocks_event_reasons.gpu_idle
Q=$Q,clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown,clocks.applications.graphics
Q=$Q,clocks.default_applications.memory

# Every NVIDIA profile: -L, then the same tick through both routes: --query-gpu, -q, the table.
for node in sxm-0 sxm4-0 nvl-0 l40s-0 fs-0; do
    real $node -L
    r=$out rr=$rc
    fake $node -L
    [ "$rr" = 0 ] && [ -n "$r" ] && [ "$r" = "$out" ] && ok || bad "-L on $node: real (rc $rr): $r / fakesmi: $out"
    frozen $node --query-gpu=$Q --format=csv
    [ $rc_real = 0 ] && [ $rc_fake = 0 ] && python3 tests/cli/smi_compare.py csv "$root/real.txt" "$root/fake.txt" &&
        ok || bad "--query-gpu on $node (rc $rc_real/$rc_fake): $(cat "$root/err")"
    frozen $node -q
    [ $rc_real = 0 ] && [ $rc_fake = 0 ] && python3 tests/cli/smi_compare.py q "$root/real.txt" "$root/fake.txt" >/dev/null &&
        ok || bad "-q on $node (rc $rc_real/$rc_fake): $(python3 tests/cli/smi_compare.py q "$root/real.txt" "$root/fake.txt")"
    frozen $node
    [ $rc_real = 0 ] && [ $rc_fake = 0 ] && python3 tests/cli/smi_compare.py table "$root/real.txt" "$root/fake.txt" &&
        ok || bad "table on $node (rc $rc_real/$rc_fake)"
done
# How both round a power to two decimals: with the power forced through gdb to values whose
# single- and double-precision quotients print differently (551515 mW: 551.52 in float, 551.51
# in double; 45: 0.05 / 0.04; 55: 0.05 / 0.06), the real tool prints the float rounding, and
# fakesmi must print the same. (Before fakesmi divided in float, the comparisons above failed on
# the tick in ten whose power ends in 5 mW.)
if command -v gdb >/dev/null; then
    for mw_want in 551515:551.52 45:0.05 55:0.05 300005:300.01; do
        mw=${mw_want%%:*} want="${mw_want#*:} W"
        got=$(FORCE_MW=$mw HWEMU_ROOT=$root/r HWEMU_NODE=sxm-0 LD_LIBRARY_PATH=$root/r/sxm-0.lib \
            HWEMU_NVML=$root/r/sxm-0.lib/libnvidia-ml.so.1 LD_PRELOAD=$(dirname "$hwemu")/libhwemu-shim.so \
            gdb -q -batch -x tests/cli/force_power.py --args "$smi" -i 0 --query-gpu=power.draw \
            --format=csv,noheader 2>&1 | grep ' W$' | tail -1)
        [ "$got" = "$want" ] && ok || bad "real nvidia-smi on $mw mW printed '$got', want '$want'"
        got=$(FORCE_MW=$mw HWEMU_ROOT=$root/r HWEMU_NODE=sxm-0 gdb -q -batch -x tests/cli/force_power.py \
            --args "$fakesmi" nvidia-smi -i 0 --query-gpu=power.draw --format=csv,noheader 2>&1 | grep ' W$' | tail -1)
        [ "$got" = "$want" ] && ok || bad "fakesmi on $mw mW printed '$got', want '$want' (as the real tool)"
    done
else
    bad "gdb is missing (scripts/install-deps.sh installs it): cannot compare the tools' rounding"
fi
# What the real -q shows from the NVML (not N/A): the values the library answers.
frozen sxm-0 -i 0 -q
for want in "Product Architecture *: Hopper" "Device Id *: 0x233010DE" "Bus Id *: 00000000:10:00.0" \
    "Total *: 81559 MiB" "Current Power Limit *: [0-9]+\.[0-9]{2} W" "Min Power Limit *: 200.00 W" \
    "Max Clocks" "Graphics *: 1980 MHz" "Memory Current Temp *: [0-9]+ C" "Performance State *: P0"; do
    grep -qE "^ +$want$" "$root/real.txt" && ok || bad "real -q lacks '$want'"
done

# No processes run on the GPUs: the real tool's process query prints its header only.
real sxm-0 --query-compute-apps=pid,used_memory --format=csv
expect "--query-compute-apps" 0 "pid, used_gpu_memory [MiB]"
# -i: by PCI bus id in the three forms NVML's lookup accepts, one naming no GPU, a function
# other than 0, one that does not parse (alone and after an id that names GPU 0); lists in
# another order than the GPUs', with repeats, blanks, empty words, ids naming nothing: the real
# tool (export entries 12 and 75 for bus ids) and fakesmi select the same GPUs in the same
# order, or fail with the same message and exit code.
for id in 00000000:13:00.0 13:00.0 0000:13:00 0:2:0.0 00000000:13:00.1 00000000:13:00.0,0 zz:1 0,zz:1 \
    3,0 3,3 1,9 "1, 2" " 1" "1 " "" , 1, GPU-zz; do
    same "-i '$id'" sxm-0 -i "$id" --query-gpu=index,pci.bus_id --format=csv,noheader
done
real sxm-0 -i 00000000:13:00.0 --query-gpu=index --format=csv,noheader
[ "$rc" = 0 ] && [ "$out" = 3 ] && ok || bad "-i 00000000:13:00.0 selected '$out' (rc $rc), want GPU 3"
same "--query-compute-apps" sxm-0 --query-compute-apps=timestamp,gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,name,used_memory --format=csv
same "--query-compute-apps, an unknown field" sxm-0 --query-compute-apps=pid,bogus --format=csv

# -pl as root: the message, the requested limit read back, the engine applies it (the enforced
# limit follows within 3 s at a 200 ms tick, ET[108] in the real tool) and records the event.
before=$(HWEMU_ROOT=$root/r HWEMU_NODE=sxm-0 "$fakesmi" nvidia-smi -i 0 --query-gpu=power.limit --format=csv,noheader)
real sxm-0 -i 0 -pl 300
expect "-pl 300" 0 "Power limit for GPU 00000000:10:00.0 was set to 300.00 W from $before.
All done."
real sxm-0 -i 0 --query-gpu=power.limit --format=csv,noheader
expect "power.limit after -pl" 0 "300.00 W"
for _ in $(seq 30); do
    real sxm-0 -i 0 --query-gpu=enforced.power.limit --format=csv,noheader
    [ "$out" = "300.00 W" ] && break
    sleep 0.1
done
expect "enforced limit after -pl" 0 "300.00 W"
grep -q '"file":"state/nvml/gpu0/power_limit_mw","written":"300000"' "$root/r/events.jsonl" && ok ||
    bad "no write event for -pl 300 in events.jsonl"
before=$(HWEMU_ROOT=$root/r HWEMU_NODE=nopm-0 "$fakesmi" nvidia-smi -i 1 --query-gpu=power.limit --format=csv,noheader)
real nopm-0 -i 1 -pl 450.5
expect "-pl without persistence" 0 "Power limit for GPU 00000000:11:00.0 was set to 450.50 W from $before.

Warning: persistence mode is disabled on device 00000000:11:00.0. See the Known Issues section of the nvidia-smi(1) man page for more information. Run with [--help | -h] switch to get more information on how to enable persistence mode.
All done."

# The set commands print the same through both routes (the state they leave is the same too).
same "-pl out of range" sxm-0 -pl 50
same "-pl on a fieldSupport token" fs-0 -i 0,1 -pl 300
HWEMU_UNPRIVILEGED=1 same "-pl without root" sxm-0 -i 1 -pl 250
same "-lgc" sxm-0 -i 2 -lgc 1000,1500
same "-lgc past the maximum" sxm-0 -i 2 -lgc 0,2100
same "-lgc min above max" sxm-0 -i 2 -lgc 1800,1000
same "-lgc without persistence" nopm-0 -i 2 -lgc 1500
same "-rgc" sxm-0 -i 2 -rgc
HWEMU_UNPRIVILEGED=1 same "-lgc without root" sxm-0 -i 2 -lgc 1000
same "-lmc" l40s-0 -i 0 -lmc 405
same "-rmc" l40s-0 -i 0 -rmc
same "-pm to the current state" sxm-0 -i 3 -pm 1
HWEMU_UNPRIVILEGED=1 same "-pm without root" nopm-0 -i 0 -pm 1
real sxm-0 -i 2 -lgc 1400,1600
[ "$("$hwemu" cat --root "$root/r" --node sxm-0 state/nvml/gpu2/locked_gpu_clocks)" = "1400 1600" ] && ok ||
    bad "locked_gpu_clocks after the real -lgc"
real nopm-0 -i 0 -pm 1
expect "-pm 1" 0 $'Enabled persistence mode for GPU 00000000:10:00.0.\nAll done.'
fake nopm-0 -i 0,1 --query-gpu=persistence_mode --format=csv,noheader
expect "-pm 1 seen by fakesmi" 0 $'Enabled\nDisabled'
real nopm-0 -i 0 -pm 0
expect "-pm 0" 0 $'Disabled persistence mode for GPU 00000000:10:00.0.\nAll done.'

# Every exported name, called with NULL arguments after init, returns an NVML code and never
# crashes: the modelled calls refuse the NULLs (INVALID_ARGUMENT), the others NOT_SUPPORTED.
out=$(HWEMU_ROOT=$root/r HWEMU_NODE=sxm-0 python3 tests/nvml/null_calls.py "$build/libhwemu-nvml.so" 2>&1)
[[ $out =~ ^[0-9]{3}\ names\;.*\ 3:[0-9]{3}$'\n'unexpected:\ none$ ]] && ok || bad "NULL arguments: $out"

# An AMD node has no NVIDIA library: the real tool's own message and exit 12.
real amd-0 -L
[ "$rc" = 12 ] && grep -q "^NVIDIA-SMI couldn't find libnvidia-ml.so library in your system." <<<"$out" && ok ||
    bad "nvidia-smi on the AMD node: rc=$rc $out"
# The library without a node: the driver "not loaded" (the real tool's message, exit 9), and why
# on stderr.
out=$(env -u HWEMU_NODE -u HWEMU_SEGMENT LD_LIBRARY_PATH=$root/r/l40s-0.lib "$smi" -L 2>"$root/err")
rc=$?
[ "$rc" = 9 ] && grep -q "^NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver" <<<"$out" &&
    grep -q "^hwemu-nvml: no emulated node (HWEMU_NODE is not set)" "$root/err" && ok ||
    bad "nvidia-smi without a node: rc=$rc $out $(cat "$root/err")"
# A dlopen by absolute path gets the node's NVML (the shim): a path that does not exist here.
out=$("$hwemu" exec --root "$root/r" --node l40s-0 -- python3 -c '
import ctypes
lib = ctypes.CDLL("/usr/lib64/nvidia/libnvidia-ml.so.1")
n = ctypes.c_uint()
print(lib.nvmlInit_v2(), lib.nvmlDeviceGetCount_v2(ctypes.byref(n)), n.value)' 2>&1)
[ "$out" = "0 0 4" ] && ok || bad "dlopen by absolute path: $out"

finish
