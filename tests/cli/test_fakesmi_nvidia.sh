#!/usr/bin/env bash
# fakesmi as nvidia-smi end to end against a running `hwemu serve` of tests/specs/gpu.yaml:
# -L through `hwemu exec`, --query-gpu header (golden) and value formats, -pl (success, the
# limit read back and the draw following it, the all-or-nothing range check, the fieldSupport
# warning and -eow on a node of its own), -pm, -lgc/-rgc and -lmc/-rmc round trips, the
# permission failures of HWEMU_UNPRIVILEGED=1, the error exits (unknown field, option, id),
# the -q -d POWER layout (golden, labels at column 54) and the 91-column summary table.
# Usage: test_fakesmi_nvidia.sh HWEMU_BINARY   (run from the source tree; fakesmi is next to
# hwemu, or named by HWEMU_FAKESMI)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
fakesmi=${HWEMU_FAKESMI:-$(dirname "$hwemu")/fakesmi}
golden=tests/fakesmi/nvidia
root=$(mktemp -d)
pid= pid_fs=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; [ -n "$pid_fs" ] && kill -9 $pid_fs 2>/dev/null; rm -rf "$root"' EXIT
[ -x "$fakesmi" ] || { bad "no fakesmi at $fakesmi"; finish; }

port=$(free_port)
serve_start http://127.0.0.1:$port "$root/serve.err" --spec tests/specs/gpu.yaml --root "$root/r" \
    --addr 127.0.0.1:$port --tick 200ms || { bad "serve did not come up: $(cat "$root/serve.err")"; finish; }

# smi NODE ARGS...: runs nvidia-smi on NODE; stdout in $out, stderr in $err, exit code in $rc.
smi() {
    local node=$1
    shift
    out=$(HWEMU_ROOT=$root/r HWEMU_NODE=$node "$fakesmi" nvidia-smi "$@" 2>"$root/err")
    rc=$?
    err=$(cat "$root/err")
}
# q NODE GPU FIELD: one --query-gpu value without unit.
q() { HWEMU_ROOT=$root/r HWEMU_NODE=$1 "$fakesmi" nvidia-smi -i "$2" --query-gpu="$3" --format=csv,noheader,nounits; }
# expect WHAT RC TEXT: the last smi call exited RC and printed exactly TEXT on stdout.
expect() {
    [ "$rc" = "$2" ] && [ "$out" = "$3" ] && ok || bad "$1: rc=$rc (want $2) stdout:
$out
stderr: $err"
}

# -L through hwemu exec (the node's tools first on PATH).
out=$(HWEMU_FAKESMI=$fakesmi "$hwemu" exec --root "$root/r" --node sxm-0 -- nvidia-smi -L 2>&1)
n=$(grep -cE '^GPU [0-7]: NVIDIA H100 80GB HBM3 \(UUID: GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\)$' <<<"$out")
[ "$n" = 8 ] && [ "$(wc -l <<<"$out")" = 8 ] && ok || bad "-L on sxm-0: $out"

# --query-gpu: canonical names with units in the header (also with nounits), values per field.
Q=index,name,uuid,pci.bus_id,serial,driver_version,count,timestamp,persistence_mode,pstate,memory.total,memory.used
Q=$Q,memory.free,utilization.gpu,utilization.memory,temperature.gpu,temperature.memory,power.management,power.draw
Q=$Q,power.draw.average,power.draw.instant,power.limit,enforced.power.limit,power.default_limit,power.min_limit
Q=$Q,power.max_limit,clocks.gr,clocks.sm,clocks.mem,clocks.video,clocks.max.gr,clocks.max.sm,clocks.max.mem
Q=$Q,compute_cap,pci.device_id,fan.speed,clocks_event_reasons.active,clocks_event_reasons.sw_power_cap
smi sxm-0 --query-gpu=$Q --format=csv
[ "$rc" = 0 ] && [ "$(head -1 <<<"$out")" = "$(cat $golden/query_header.txt)" ] && ok || bad "query header: $out"
[ "$(wc -l <<<"$out")" = 9 ] && ok || bad "query lines: $out"
smi sxm-0 --query-gpu=$Q --format=csv,nounits
[ "$(head -1 <<<"$out")" = "$(cat $golden/query_header.txt)" ] && ok || bad "nounits header: $(head -1 <<<"$out")"
smi sxm-0 -i 1 --query-gpu=$Q --format=csv,noheader
"$py" - "$out" <<'EOF' && ok || bad "query values: $out"
import re, sys
W = r"\d+\.\d\d W"
want = [r"1", r"NVIDIA H100 80GB HBM3", r"GPU-[0-9a-f-]{36}", r"00000000:11:00\.0", r"\d{13}", r"590\.48\.01", r"8",
        r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}", r"Enabled", r"P0", r"81559 MiB", r"\d+ MiB", r"\d+ MiB", r"\d+ %",
        r"\d+ %", r"\d+", r"\d+", r"\[Requested functionality has been deprecated\]", W, W, W, r"400\.00 W", W,
        r"700\.00 W", r"200\.00 W", r"700\.00 W", r"\d+ MHz", r"\d+ MHz", r"2619 MHz", r"\d+ MHz", r"1980 MHz",
        r"1980 MHz", r"2619 MHz", r"9\.0", r"0x233010DE", r"\[N/A\]", r"0x[0-9A-F]{16}", r"(Not )?Active"]
got = sys.argv[1].split(", ")
bad = [(i, w, g) for i, (w, g) in enumerate(zip(want, got)) if not re.fullmatch(w, g)]
sys.exit(1 if bad or len(got) != len(want) else 0)
EOF
smi sxm-0 --query-gpu=index,memory.total,power.max_limit,fan.speed,temperature.gpu --format=csv,noheader,nounits -i 7
[[ $out =~ ^7,\ 81559,\ 700\.00,\ \[N/A\],\ [0-9]+$ ]] && ok || bad "nounits values: $out"

# -i: by UUID, by PCI bus id in another spelling; a list selects in GPU index order, whatever
# the list's (as the real nvidia-smi 535 does: tests/cli/test_nvml.sh); unknown ids.
uuid=$(q sxm-0 3 uuid)
smi sxm-0 -i "$uuid,0000:11:00.0" --query-gpu=index --format=csv,noheader
expect "-i uuid,bus id" 0 $'1\n3'
smi sxm-0 -i 99 -L
expect "-i 99" 6 "No devices were found"
smi sxm-0 -i GPU-00000000-0000-0000-0000-000000000000 --query-gpu=index --format=csv
expect "-i unknown uuid" 6 "No devices were found"

# Usage errors.
HWEMU_ROOT=$root/r HWEMU_NODE=sxm-0 "$fakesmi" nvidia-smi --query-gpu=index,bogus --format=csv >"$root/out"
rc=$?
printf 'Field "bogus" is not a valid field to query.\n\n' | cmp -s - "$root/out" && [ $rc = 2 ] && ok ||
    bad "unknown field: rc=$rc $(od -c "$root/out")"
smi sxm-0 --frobnicate
expect "unknown option" 2 "ERROR: Option --frobnicate is not recognized. Please run 'nvidia-smi -h'."
smi sxm-0 --query-gpu=index
[ "$rc" = 2 ] && grep -q "Invalid combination of input arguments" <<<"$err" && ok || bad "query without format: $rc $err"
smi sxm-0 --version
[ "$rc" = 0 ] && [ "$out" = "$(cat $golden/version.txt)" ] && ok || bad "--version: $out"
smi sxm-0 -h
[ "$rc" = 0 ] && [ "$(head -1 <<<"$out")" = "NVIDIA System Management Interface -- v590.48.01" ] && ok || bad "-h: $out"

# -pl: set, read back, the draw follows within 3 s at a 200 ms tick (once the 1 s average
# has reached the 400 W the GPU starts at).
for _ in $(seq 50); do
    [ "$(q sxm-0 0 power.draw)" = 400.00 ] && break
    sleep 0.1
done
smi sxm-0 -i 0 -pl 300
expect "-pl 300" 0 $'Power limit for GPU 00000000:10:00.0 was set to 300.00 W from 400.00 W.\nAll done.'
[ "$(q sxm-0 0 power.limit)" = 300.00 ] && ok || bad "power.limit after -pl: $(q sxm-0 0 power.limit)"
[ "$(q sxm-0 1 power.limit)" = 400.00 ] && ok || bad "-i 0 changed GPU 1"
settled=
for _ in $(seq 15); do
    sleep 0.2
    d=$(q sxm-0 0 power.draw)
    awk -v d="$d" 'BEGIN { exit !(d ~ /^[0-9]+\.[0-9][0-9]$/ && d <= 300) }' && { settled=1; break; }
done
[ -n "$settled" ] && ok || bad "power.draw still $d W 3 s after -pl 300"
smi sxm-0 -i 0 -q -d POWER
grep -q "^        Requested Power Limit  *: 300.00 W$" <<<"$out" && ok || bad "-q -d POWER after -pl: $out"

# Out of range: the first GPU named, nothing written.
smi sxm-0 -pl 50
first="Provided power limit 50.00 W is not a valid power limit which should be between 200.00 W and 700.00 W for GPU 00000000:10:00.0"
[ "$rc" = 2 ] && [ "$(head -1 <<<"$out")" = "$first" ] && [ "$(wc -l <<<"$out")" = 2 ] &&
    [ "$(tail -1 <<<"$out")" = "Terminating early due to previous errors." ] && ok || bad "-pl 50: rc=$rc $out"
[ "$(q sxm-0 0,1 power.limit | tr '\n' ' ')" = "300.00 400.00 " ] && ok || bad "-pl 50 wrote something"

# HWEMU_UNPRIVILEGED=1: every privileged command fails with the permission error and exit 4.
unpriv() { HWEMU_UNPRIVILEGED=1 smi "$@"; }
unpriv sxm-0 -i 1 -pl 250
expect "unprivileged -pl" 4 $'Failed to set power management limit for GPU 00000000:11:00.0: Insufficient Permissions\nTerminating early due to previous errors.'
[ "$(q sxm-0 1 power.limit)" = 400.00 ] && ok || bad "unprivileged -pl wrote"
unpriv nopm-0 -i 0 -pm 1
expect "unprivileged -pm" 4 $'Unable to set persistence mode for GPU 00000000:10:00.0: Insufficient Permissions\nTerminating early due to previous errors.'
for cmd in "-lgc 1000" "-rgc" "-lmc 2619" "-rmc"; do
    unpriv sxm-0 -i 2 $cmd
    [ "$rc" = 4 ] && grep -qE "(for GPU 00000000:12:00.0: Insufficient Permissions|^The current user does not have permission to change clocks for GPU 00000000:12:00.0.)$" <<<"$out" && ok || bad "unprivileged $cmd: $rc $out"
done

# -pm on the node whose GPUs start without persistence.
[ "$(q nopm-0 0 persistence_mode)" = Disabled ] && ok || bad "nopm-0 persistence"
smi nopm-0 -i 0 -pm 1
expect "-pm 1" 0 $'Enabled persistence mode for GPU 00000000:10:00.0.\nAll done.'
smi nopm-0 -i 0 -pm ENABLED
expect "-pm ENABLED again" 0 $'Persistence mode is already Enabled for GPU 00000000:10:00.0.\nAll done.'
[ "$(q nopm-0 0,1 persistence_mode | tr '\n' ' ')" = "Enabled Disabled " ] && ok || bad "-pm 1 -i 0 readback"
smi nopm-0 -i 0 -pm 0
expect "-pm 0" 0 $'Disabled persistence mode for GPU 00000000:10:00.0.\nAll done.'

# Clock locks: the message shows the request, the file the driver's clamp; reset; refused
# values (a warning, as the real 535 tool prints it); the warning when persistence is off.
cat_file() { "$hwemu" cat --root "$root/r" --node "$1" "$2"; }
smi sxm-0 -i 2 -lgc 0,2100
expect "-lgc 0,2100" 0 $'GPU clocks set to "(gpuClkMin 0, gpuClkMax 2100)" for GPU 00000000:12:00.0\nAll done.'
[ "$(cat_file sxm-0 state/nvml/gpu2/locked_gpu_clocks)" = "0 1980" ] && ok || bad "locked_gpu_clocks after -lgc"
smi sxm-0 -i 2 -rgc
expect "-rgc" 0 "All done."
[ "$(cat_file sxm-0 state/nvml/gpu2/locked_gpu_clocks)" = none ] && ok || bad "locked_gpu_clocks after -rgc"
smi sxm-0 -i 2 -lgc 1800,1000
expect "-lgc min above max" 0 "Specified clock combination \"(gpuClkMin 1800, gpuClkMax 1000)\" is not supported for GPU 00000000:12:00.0. Run 'nvidia-smi -q -d SUPPORTED_CLOCKS' to see list of supported clock combinations
Treating as warning and moving on.
All done."
smi nopm-0 -i 1 -lgc 1500
[ "$rc" = 0 ] && grep -q '^GPU clocks set to "(gpuClkMin 1500, gpuClkMax 1500)" for GPU 00000000:11:00.0$' <<<"$out" &&
    grep -q "^Warning: persistence mode is disabled on device 00000000:11:00.0. See the Known Issues" <<<"$out" && ok ||
    bad "-lgc without persistence: $out"
smi l40s-0 -i 0 -lmc 405
[ "$rc" = 0 ] && grep -q '^Memory clocks set to "(memClkMin 405, memClkMax 405)" for GPU 00000000:10:00.0$' <<<"$out" &&
    ok || bad "-lmc 405: $out"
smi l40s-0 -i 0 -rmc
expect "-rmc" 0 "All done."
[ "$(cat_file l40s-0 state/nvml/gpu0/locked_memory_clocks)" = none ] && ok || bad "locked_memory_clocks after -rmc"

# -q: the preamble, labels at column 54, the POWER layout (golden without values), combined
# and lower-case -d, supported clocks cut at the memory clock's ceiling.
smi sxm-0 -i 0 -q -d POWER
[ "$(sed -E 's/ : .*$/ :/' <<<"$out")" = "$(cat $golden/q_power_layout.txt)" ] && ok || bad "-q -d POWER layout: $out"
smi sxm-0 -q
[ "$rc" = 0 ] && [ "$(sed -n 2p <<<"$out")" = "==============NVSMI LOG==============" ] && ok || bad "-q preamble"
n=$(grep -c ' : ' <<<"$out")
cols=$(awk 'index($0, " : ") { print index($0, " : ") - 1 }' <<<"$out" | sort -u)
[ "$n" -gt 500 ] && [ "$cols" = 54 ] && ok || bad "-q labels: $n lines, columns $cols"
[ "$(grep -c '^GPU 00000000:1[0-7]:00.0$' <<<"$out")" = 8 ] && ok || bad "-q GPU headers"
smi sxm-0 -i 0 -q -d clock,performance
grep -q "^    Clocks Event Reasons$" <<<"$out" && grep -q "^    Max Clocks$" <<<"$out" &&
    ! grep -q "Power Readings" <<<"$out" && ok || bad "-q -d clock,performance: $out"
smi l40s-0 -i 0 -q -d SUPPORTED_CLOCKS
mem=$(grep '^        Memory ' <<<"$out" | sed 's/.* : //' | tr '\n' ' ')
low=$(sed -n '/Memory  *: 405 MHz/,$p' <<<"$out" | grep -m1 Graphics | sed 's/.* : //')
[ "$mem" = "9001 MHz 405 MHz " ] && [ "$low" = "645 MHz" ] && ok || bad "supported clocks: $mem / $low"

# The summary table: 91 columns but the asctime date line, one block per GPU.
smi sxm-0
[[ $(head -1 <<<"$out") =~ ^[A-Z][a-z]{2}\ [A-Z][a-z]{2}\ [\ 0-9][0-9]\ [0-9:]{8}\ [0-9]{4}\ {7}$ ]] && ok || bad "table date"
w=$(tail -n +2 <<<"$out" | awk 'length($0) && length($0) != 91 { print NR + 1 ": " length($0) }')
[ -z "$w" ] && ok || bad "table lines not 91 wide: $w"
[ "$(grep -c '^|   [0-7]  NVIDIA H100 80GB HBM3          On  |   00000000:1[0-7]:00.0 Off |' <<<"$out")" = 8 ] &&
    grep -q "^| NVIDIA-SMI 590.48.01              Driver Version: 590.48.01      CUDA Version: 13.1     |$" <<<"$out" &&
    grep -q "^|  No running processes found  " <<<"$out" && ok || bad "table rows: $out"
grep -qE '^\| N/A +[0-9]+C    P[08] +[0-9]+W /  300W \| +[0-9]+MiB /  81559MiB \| +[0-9]+%      Default \|$' <<<"$out" &&
    ok || bad "table GPU 0 row 2 (300 W cap): $out"

# fieldSupport tokens, on a node of their own: printed verbatim, -pl "not supported in current
# scope" for that GPU, nothing written (exit 0), with -eow an error (exit 3).
cat >"$root/fs.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: fieldsupport}
spec:
  pools:
  - {name: fs, profile: nvidia-h100-nvl-8gpu, count: 1, overrides: {gpus: {fieldSupport: {power.min_limit: "[N/A]"}}}}
EOF
port_fs=$(free_port)
pid_main=$pid
serve_start http://127.0.0.1:$port_fs "$root/serve_fs.err" --spec "$root/fs.yaml" --root "$root/fs" \
    --addr 127.0.0.1:$port_fs --tick 200ms
up=$?
pid_fs=$pid pid=$pid_main
[ $up = 0 ] || bad "fieldSupport serve did not come up: $(cat "$root/serve_fs.err")"
fs() { out=$(HWEMU_ROOT=$root/fs HWEMU_NODE=fs-0 "$fakesmi" nvidia-smi "$@" 2>&1); rc=$?; err=; }
fs -i 0 --query-gpu=index,power.min_limit,power.max_limit,power.limit,name --format=csv,noheader,nounits
# power.min_limit and power.max_limit are one NVML call: the real tool prints the token for both
expect "fieldSupport token" 0 "0, [N/A], [N/A], 400.00, NVIDIA H100 NVL"
fs -i 0,1 -pl 300
expect "-pl on a token" 0 "Changing power management limit is not supported in current scope for GPU: 00000000:10:00.0.
Changing power management limit is not supported in current scope for GPU: 00000000:11:00.0.
All done."
fs -i 0 -pl 300 -eow
expect "-pl -eow on a token" 3 $'Changing power management limit is not supported in current scope for GPU: 00000000:10:00.0.\nTerminating early due to previous errors.'
fs --query-gpu=power.limit --format=csv,noheader,nounits
[ "$(sort -u <<<"$out")" = 400.00 ] && ok || bad "-pl on a token wrote: $out"
fs -i 0 -q -d POWER
grep -q "^        Min Power Limit  *: N/A$" <<<"$out" && ok || bad "-q token: $out"

finish
