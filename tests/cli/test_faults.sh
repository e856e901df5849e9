#!/usr/bin/env bash
# Hardware faults (docs/faults.md), seen by programs no one here wrote:
# A. a spec's and a trace's bad faults are errors at file:line:col, nothing started;
# B. a GPU that falls off the bus (hwemu fault add): Debian's nvidia-smi 535
#    (scripts/fetch-nvidia-smi.sh) on the node's NVML prints "Unable to determine the device
#    handle ...: GPU is lost.  Reboot the system to recover this GPU" and exits 15 (the code
#    NVIDIA documents for GPU_IS_LOST, faults.md §1.4), fakesmi's nvidia-smi prints the same
#    bytes, nvidia-ml-py 12.535.161 raises NVMLError_GpuIsLost ("GPU is lost") through a handle
#    it kept and for a new one, the PCI function's config space reads all ones (faults.md
#    §1.5) while its vendor file keeps 0x10de; cleared (DELETE /faults/<id>), all is back;
#    an uncorrected memory error is Xid 48 to a client waiting in nvmlEventSetWait and counts in
#    nvmlDeviceGetTotalEccErrors;
# C. a BMC that times out: ipmitool 1.8.19 prints "DCMI request failed because: Timeout (c3)"
#    and FreeIPMI's ipmi-dcmi "message timeout" (faults.md §6.2, §6.3), both exit 1; a slow one
#    answers right, after its delay;
# D. a failing hwmon: lm-sensors' `sensors` prints "ERROR: Can't get value of subfeature
#    temp1_input: I/O error" and N/A (faults.md §5.3), cat "Input/output error";
# E. a capped package counts its throttled time in MSR_PKG_PERF_STATUS (rdmsr), an uncapped one
#    does not; a capped node that ignores its cap: the package's power stays above the PL1 an
#    agent wrote (read back as written), and the fault's event says limit-ignored; a lost PSU
#    holds a node within what is left;
# F. writes refused: a powercap write fails "No data available" (ENODATA, faults.md §4.3); a
#    locked package limit refuses its constraint stores ENODATA and enabled ENOSYS; a
#    RAPL counter that freezes stands still under a reader through the shim, then catches up;
# G. Redfish 503 with Retry-After and the Base registry's message (faults.md §7.3);
# H. a run with faults in its trace at --speed max: faults.jsonl names the jobs each touched,
#    a job on the lost GPU stalls for the fault's duration, a cooling fault on a rack slows its
#    jobs, and a second run gives the same jobs.jsonl and faults.jsonl byte for byte;
# J. a cooling fault throttles as the hardware does: node_exporter reads the thermal_throttle
#    counters, rdmsr PROCHOT and its sticky log (cleared by wrmsr), /telemetry the frequency lost,
#    nvidia-smi and nvidia-ml-py the GPUs' thermal slowdowns;
# K. a node that loses its power (its files, MSRs, IPMI, Redfish and GPUs fail; back, its counters,
#    APERF and cpufreq/stats restart from 0 and its settings are the profile's), a stuck
#    frequency, a RAPL counter that jumps;
# I. the power sensors measure with noise: a client that keeps only changing NVML samples
#    (nvidia-ml-py) measures an idle GPU's energy within 1 % of its energy counter; ipmitool's
#    DCMI reading and statistics, Redfish's, amdgpu's power1_input and power1_average (lm-sensors)
#    and amd_hsmp's change between ticks within their bands of the truth; with
#    spec.sensors.noise false every reading is the truth and never changes.
# Usage: test_faults.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
build=$(cd "$(dirname "$hwemu")" && pwd)
fakesmi=${HWEMU_FAKESMI:-$build/fakesmi}
root=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$root"' EXIT

# --- A. errors at file:line:col ---------------------------------------------------------------
cat >"$root/bad.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: bad}
spec:
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 1}
  faults:
  - {kind: gpu-lots, nodes: [intel-0]}
  - {kind: bmc-timeout, device: gpu0}
  - {kind: hwmon-error, nodes: [nope], params: {errno: EWHAT}}
EOF
out=$("$hwemu" clusterspec validate --spec "$root/bad.yaml" 2>&1)
rc=$?
want=('bad.yaml:8:12: spec.faults[0]: kind: unknown kind "gpu-lots"; did you mean "gpu-lost"?'
      'bad.yaml:9:33: spec.faults[1]: device: bmc-timeout cannot strike gpu (expected bmc)'
      'bad.yaml:10:56: spec.faults[2]: params.errno: "EWHAT" is not an errno hwemu knows'
      'bad.yaml:10:33: spec.faults[2]: nodes: no node "nope" in this spec')
[ $rc = 1 ] && ok || bad "a bad spec's faults: exit $rc, want 1"
for w in "${want[@]}"; do grep -qF "$w" <<<"$out" && ok || bad "a bad spec's faults: no \"$w\" in: $out"; done
printf '%s\n' '{"type":"job","jobId":"a"}' '{"type":"fault","kind":"gpu-lost","device":"gpu","durationSec":"x"}' \
    >"$root/bad.jsonl"
out=$("$hwemu" trace validate "$root/bad.jsonl" 2>&1)
grep -qF 'bad.jsonl:2:64: fault: durationSec: expected a number, got "x"' <<<"$out" && ok ||
    bad "a trace's bad fault record: $out"

# --- the engine --------------------------------------------------------------------------------
cat >"$root/spec.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: faults}
spec:
  defaults:
    baseLoad: {cpuUtil: 1.0, gpuUtil: 1.0, memoryIntensity: 0.2}
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 3}
  - {name: sxm, profile: nvidia-h100-sxm-8gpu, count: 1}
  - {name: hot, profile: intel-xeon-2s-rapl, count: 1}
  - {name: hotgpu, profile: nvidia-h100-sxm-4gpu, count: 1}
  - {name: epyc, profile: amd-epyc-2s-energy-only, count: 1}
  faults:
  - {id: bmc-dead, kind: bmc-timeout, nodes: [intel-0], params: {delayMs: 300}}
  - {id: bmc-late, kind: bmc-slow, nodes: [intel-2], params: {delayMs: 1500}}
  - {id: fan, kind: fan-failure, nodes: [hot-0]}
  - {id: heat, kind: inlet-temp, nodes: [hotgpu-0], params: {deltaC: 80}}
EOF
port=$(free_port)
url=http://127.0.0.1:$port
serve_start $url "$root/serve.err" --spec "$root/spec.yaml" --root "$root/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve did not come up: $(cat "$root/serve.err")"; finish; }
fault() { "$hwemu" fault "$1" --addr 127.0.0.1:$port "${@:2}"; }
# state NODE: the node's state/faults until it holds WORD (5 s at most)
wait_state() {
    for _ in $(seq 50); do
        "$hwemu" cat --root "$root/r" --node "$1" state/faults | grep -q -- "$2" && return 0
        sleep 0.1
    done
    return 1
}
on() { "$hwemu" exec --root "$root/r" --node "$@"; }

# --- B. a GPU falls off the bus -----------------------------------------------------------------
scripts/fetch-nvidia-smi.sh "$build/nvidia-tools" >"$root/fetch.log" 2>&1 ||
    { bad "cannot fetch Debian's nvidia-smi (scripts/fetch-nvidia-smi.sh): $(tail -3 "$root/fetch.log")"; finish; }
smi=$build/nvidia-tools/nvidia-smi/usr/lib/nvidia/current/nvidia-smi
venv=$build/nvml-venv # nvidia-ml-py 12.535.161, as test_nvml_clients.sh has it
nvml_venv "$build" "$root/pip.log" || { bad "cannot install nvidia-ml-py: $(tail -3 "$root/pip.log")"; finish; }
bdf=$(on sxm-0 -- "$smi" -i 2 --query-gpu=pci.bus_id --format=csv,noheader | sed 's/^0000//')
on sxm-0 -- "$venv/bin/python" tests/nvml/pynvml_lost.py 2 "$root/go" >"$root/pynvml.out" 2>&1 &
# (a client that holds its handles across the fault)
py=$!
for _ in $(seq 100); do grep -q ready "$root/pynvml.out" && break; sleep 0.1; done
fault add --kind gpu-lost --node sxm-0 --device gpu2 --id lost2 >/dev/null && ok || bad "hwemu fault add gpu-lost"
wait_state sxm-0 gl=4 && ok || bad "state/faults of sxm-0 never said gl=4"
touch "$root/go"
wait $py
py_out=$(cat "$root/pynvml.out")
for w in "count=8" "kept_power_mw=err:NVMLError_GpuIsLost:GPU is lost" "kept_energy_mj=err:NVMLError_GpuIsLost:GPU is lost" \
    "handle=err:NVMLError_GpuIsLost:GPU is lost"; do
    grep -qxF "$w" <<<"$py_out" && ok || bad "nvidia-ml-py on a lost GPU: no $w in: $py_out"
done
grep -qE '^other_power_mw=[0-9]+$' <<<"$py_out" && ok || bad "nvidia-ml-py: another GPU's power: $py_out"
lost_line='Unable to determine the device handle for GPU2: GPU is lost.  Reboot the system to recover this GPU'
for args in "" "--query-gpu=index,power.draw --format=csv" "-q" "-L" "-i 3 --query-gpu=index --format=csv,noheader"; do
    # shellcheck disable=SC2086 # args: options, split
    on sxm-0 -- "$smi" $args >"$root/real.txt" 2>&1
    r=$?
    # shellcheck disable=SC2086
    HWEMU_ROOT=$root/r HWEMU_NODE=sxm-0 "$fakesmi" nvidia-smi $args >"$root/fake.txt" 2>&1
    f=$?
    [ "$r" = "$f" ] && cmp -s "$root/real.txt" "$root/fake.txt" && ok ||
        bad "nvidia-smi $args on a lost GPU: real (exit $r) and fakesmi (exit $f) differ: $(diff "$root/real.txt" "$root/fake.txt")"
    case "$args" in
    "-i 3"*) [ "$r" = 0 ] && [ "$(cat "$root/real.txt")" = 3 ] && ok || bad "real nvidia-smi -i 3 beside a lost GPU: exit $r" ;;
    "-L") [ "$r" = 15 ] && grep -qxF 'Unable to determine the device handle for gpu 2: GPU is lost.  Reboot the system to recover this GPU' "$root/real.txt" &&
        grep -q '^GPU 3: ' "$root/real.txt" && ok || bad "real nvidia-smi -L with GPU 2 lost (exit $r): $(cat "$root/real.txt")" ;;
    *) [ "$r" = 15 ] && [ "$(head -1 "$root/real.txt")" = "$lost_line" ] && ok ||
        bad "real nvidia-smi $args with GPU 2 lost: exit $r (want 15): $(cat "$root/real.txt")" ;;
    esac
done
cfg=$(on sxm-0 -- od -An -tx1 -N8 "/sys/bus/pci/devices/$bdf/config" | tr -d ' \n')
[ "$cfg" = ffffffffffffffff ] && ok || bad "the lost GPU's config space ($bdf): $cfg, want all ones"
[ "$(on sxm-0 -- cat "/sys/bus/pci/devices/$bdf/vendor")" = 0x10de ] && ok || bad "the lost GPU's vendor file changed"
curl -sf "$url/debug/events?node=sxm-0" | grep -q '"joulie.sim.fault.started".*"gpu-lost"' && ok ||
    bad "no joulie.sim.fault.started event for the lost GPU"
fault clear lost2 >/dev/null && ok || bad "hwemu fault clear lost2"
for _ in $(seq 50); do on sxm-0 -- "$smi" -L >/dev/null 2>&1 && break; sleep 0.1; done
on sxm-0 -- "$smi" --query-gpu=index --format=csv,noheader >"$root/real.txt" 2>&1 && [ "$(wc -l <"$root/real.txt")" = 8 ] &&
    ok || bad "after the clear, nvidia-smi: $(cat "$root/real.txt")"
curl -sf "$url/debug/events?node=sxm-0" | grep -q '"joulie.sim.fault.ended".*"endReason":"cleared"' && ok ||
    bad "no joulie.sim.fault.ended event for the cleared fault"

# --- B2. Xid and ECC: nvidia-ml-py waiting in nvmlEventSetWait gets Xid 48 when uncorrected memory
# errors strike the GPU it registered, then Xid 63 for the row they remap, and
# nvmlDeviceGetTotalEccErrors counts them (faults.md §2.1: Xid 48 accompanies a double-bit error;
# Xid 63 a remap recorded) ---------------------------------------------------------------------------
on sxm-0 -- "$venv/bin/python" tests/nvml/pynvml_events.py 3 >"$root/events.out" 2>&1 &
py=$!
for _ in $(seq 100); do grep -q ready "$root/events.out" && break; sleep 0.1; done
fault add --kind gpu-ecc-uncorrected --node sxm-0 --device gpu3 --param count=2 >/dev/null
wait $py
ev=$(cat "$root/events.out")
# (then Xid 63, the row remap recorded: the next wait gets it, the oldest first)
for w in supported=8 event_gpu=3 event_type=8 event_xid=48 event2_xid=63 ecc_corrected=0 ecc_uncorrected=2; do
    grep -qxF "$w" <<<"$ev" && ok || bad "nvidia-ml-py's Xid event and ECC counts: no $w in: $ev"
done
# the row the errors hit is remapped, pending until the GPU's reset (row remapping, faults.md
# §2.5; an H100 retires no pages: N/A, as the 590 capture of a healthy H100 shows): the real
# nvidia-smi 535's -q blocks and nvidia-ml-py read NVML's remapped rows and histogram
remap() { on sxm-0 -- "$smi" -i 3 -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER 2>&1 | sed -n '/^    ECC Errors/,$p'; }
rows() { on sxm-0 -- "$venv/bin/python" -c 'import pynvml; pynvml.nvmlInit(); h = pynvml.nvmlDeviceGetHandleByIndex(3)
print("rows=%d,%d,%d,%d" % tuple(pynvml.nvmlDeviceGetRemappedRows(h)))
try:
    pynvml.nvmlDeviceGetRetiredPages(h, pynvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
except pynvml.NVMLError_NotSupported:
    print("retired=not supported")' 2>&1; }
out=$(remap)
for w in "DRAM Uncorrectable            : 2" "Double Bit ECC                    : N/A" "Uncorrectable Error               : 1" \
    "Correctable Error                 : 0" "Pending                           : Yes" "Max                           : 2559 bank(s)" \
    "High                          : 1 bank(s)"; do
    grep -qF "$w" <<<"$out" && ok || bad "the real nvidia-smi -q after uncorrected errors: no \"$w\" in: $out"
done
out=$(rows)
[ "$out" = "$(printf 'rows=0,1,1,0\nretired=not supported')" ] && ok || bad "nvidia-ml-py's remapped rows: $out"
# the GPU's reset (a gpu-lost fault on it, cleared) applies the remap: no longer pending
fault add --kind gpu-lost --node sxm-0 --device gpu3 --id reset3 >/dev/null && wait_state sxm-0 gl=8 && fault clear reset3 >/dev/null
for _ in $(seq 50); do [ "$(rows | head -1)" = rows=0,1,0,0 ] && break; sleep 0.1; done
[ "$(rows | head -1)" = rows=0,1,0,0 ] && remap | grep -qF "Pending                           : No" && ok ||
    bad "after the GPU's reset the remap should be done: $(rows)"

# --- C. a BMC that times out, one that is slow --------------------------------------------------
out=$(on intel-0 -- ipmitool dcmi power reading 2>&1)
rc=$?
[ $rc = 1 ] && grep -qF 'DCMI request failed because: Timeout (c3)' <<<"$out" && ok ||
    bad "ipmitool dcmi power reading on a timing-out BMC: exit $rc: $out"
out=$(on intel-0 -- ipmi-dcmi --get-system-power-statistics 2>&1)
rc=$?
[ $rc = 1 ] && [ "$out" = "ipmi_cmd_dcmi_get_power_reading: message timeout" ] && ok ||
    bad "ipmi-dcmi on a timing-out BMC: exit $rc: $out"
t0=$(date +%s%N)
out=$(on intel-2 -- ipmi-dcmi --get-system-power-statistics 2>&1)
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc = 0 ] && grep -q '^Current Power *: [0-9]* Watts' <<<"$out" && [ $ms -ge 1500 ] && ok ||
    bad "ipmi-dcmi on a slow BMC: exit $rc after $ms ms (want 0 after 1500 ms or more): $out"
out=$(on intel-1 -- ipmi-dcmi --get-system-power-statistics 2>&1) && ok || bad "ipmi-dcmi on a healthy BMC: $out"

# --- D. a failing hwmon -------------------------------------------------------------------------
fault add --kind hwmon-error --node intel-1 --id flaky >/dev/null && wait_state intel-1 hw=5 && ok ||
    bad "hwmon-error never reached intel-1's state/faults"
on intel-1 -- sensors >"$root/sensors.out" 2>"$root/sensors.err"
grep -qxF "ERROR: Can't get value of subfeature temp1_input: I/O error" "$root/sensors.err" && ok ||
    bad "sensors on a failing hwmon, stderr: $(head -3 "$root/sensors.err")"
grep -q 'Package id 0: *N/A' "$root/sensors.out" && ok || bad "sensors on a failing hwmon, stdout: $(head -5 "$root/sensors.out")"
out=$(on intel-1 -- cat /sys/class/hwmon/hwmon0/temp1_input 2>&1)
[ "$out" = "cat: /sys/class/hwmon/hwmon0/temp1_input: Input/output error" ] && ok || bad "cat of a failing hwmon: $out"
[ "$(on intel-1 -- cat /sys/class/hwmon/hwmon0/name)" = coretemp ] && ok || bad "a failing hwmon's name file failed too"
fault clear flaky >/dev/null

# --- E. a capped node that ignores its cap ------------------------------------------------------
on intel-1 -- sh -c 'echo 60000000 > /sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw' && ok ||
    bad "writing a 60 W PL1 on intel-1"
pkg0() { curl -sf "$url/telemetry/intel-1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["powerWatts"])'; }
for _ in $(seq 100); do awk -v p="$(pkg0)" 'BEGIN { exit !(p <= 60.5) }' && break; sleep 0.1; done
p=$(pkg0)
awk -v p="$p" 'BEGIN { exit !(p <= 60.5) }' && ok || bad "the 60 W cap never held: package 0 at $p W"
# MSR_PKG_PERF_STATUS (0x613) counts the time a package's RAPL limit holds its power down, in the
# RAPL time unit (MSR_RAPL_POWER_UNIT 19:16: 2^-10 s; Intel SDM Vol. 3B §14.9.3), 32 bits: package
# 0, capped at 60 W (/telemetry's truth says so), counts the node's uptime between two reads in
# the same shell (the same order each time); package 1, not capped, stands still
p1=$(on intel-1 -- sh -c 'grep -l "^1$" /sys/devices/system/cpu/cpu*/topology/physical_package_id | head -1')
p1=${p1#/sys/devices/system/cpu/cpu} p1=${p1%%/*}
caps=$(curl -sf "$url/telemetry/intel-1" | python3 -c 'import json,sys; print(*[p["capped"] for p in json.load(sys.stdin)["packages"]])')
perf() { on intel-1 -- sh -c "cut -d' ' -f1 /proc/uptime; rdmsr -p 0 -u 0x613; rdmsr -p $p1 -u 0x613; rdmsr -p 0 -u -f 19:16 0x606" | tr '\n' ' '; }
read -r u0 a0 b0 tu <<<"$(perf)"
sleep 2
read -r u1 a1 b1 _ <<<"$(perf)"
awk -v u0="$u0" -v u1="$u1" -v a0="$a0" -v a1="$a1" -v b0="$b0" -v b1="$b1" -v tu="$tu" -v caps="$caps" \
    'BEGIN { d = (a1 - a0) / 2 ^ tu; e = u1 - u0; exit !(caps == "True False" && tu == 10 && e > 1 && d >= 0.8 * e && d <= 1.2 * e && b1 == b0) }' &&
    ok || bad "PKG_PERF_STATUS over $u0 -> $u1 s of uptime (packages capped: $caps, TU $tu): package 0 $a0 -> $a1, package 1 (CPU $p1) $b0 -> $b1"
fault add --kind limit-ignored --node intel-1 --device package0 --id deaf >/dev/null
for _ in $(seq 100); do awk -v p="$(pkg0)" 'BEGIN { exit !(p > 100) }' && break; sleep 0.1; done
p=$(pkg0)
# the profile's package draws 156 W at full load uncapped (the cap above pulled it to 60 W)
awk -v p="$p" 'BEGIN { exit !(p > 100) }' && ok || bad "a node ignoring its cap: package 0 at $p W, want above the 60 W limit"
[ "$(on intel-1 -- cat /sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw)" = 60000000 ] && ok ||
    bad "the ignored limit does not read back as written"
curl -sf "$url/debug/events?node=intel-1" | grep -q '"joulie.sim.fault.started".*"kind":"limit-ignored","device":"package0"' &&
    ok || bad "no event saying intel-1's limit is ignored"
fault clear deaf >/dev/null

# a lost PSU leaves intel-2 250 W: its packages share what DRAM and the rest of the platform
# leave (about 156 W each at full load before, the profile's; 328 W for the node)
node_w() { curl -sf "$url/telemetry/intel-2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodePowerWatts"])'; }
fault add --kind psu-loss --node intel-2 --param watts=250 --id psu >/dev/null
for _ in $(seq 100); do awk -v p="$(node_w)" 'BEGIN { exit !(p <= 250.5) }' && break; sleep 0.1; done
p=$(node_w)
awk -v p="$p" 'BEGIN { exit !(p <= 250.5 && p > 200) }' && ok || bad "a node with a lost PSU: $p W, want at most 250 W"
fault clear psu >/dev/null

# --- F. writes refused --------------------------------------------------------------------------
fault add --kind write-refused --node intel-1 --id busy >/dev/null && wait_state intel-1 wr=61 && ok ||
    bad "write-refused never reached intel-1's state/faults"
out=$(on intel-1 -- python3 -c 'import os; os.write(os.open("/sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw", os.O_WRONLY), b"70000000")' 2>&1)
rc=$?
[ $rc != 0 ] && grep -q 'OSError: \[Errno 61\] No data available' <<<"$out" && ok || bad "a refused write: exit $rc: $out"
fault clear busy >/dev/null

# a locked RAPL limit (faults.md §4.3): package 0's constraint store fails ENODATA, its enabled
# store ENOSYS; package 1 is not locked
fault add --kind limit-locked --node intel-1 --device package0 --id lock >/dev/null && wait_state intel-1 lk=1 && ok ||
    bad "limit-locked never reached intel-1's state/faults"
w() { on intel-1 -- python3 -c 'import os, sys; os.write(os.open(sys.argv[1], os.O_WRONLY), sys.argv[2].encode())' "$1" "$2" 2>&1; }
out=$(w /sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw 70000000)
grep -q 'OSError: \[Errno 61\] No data available' <<<"$out" && ok || bad "a locked PL1 store: $out"
out=$(w /sys/class/powercap/intel-rapl:0/enabled 1)
grep -q 'OSError: \[Errno 38\] Function not implemented' <<<"$out" && ok || bad "a locked zone's enabled store: $out"
out=$(w /sys/class/powercap/intel-rapl:1/constraint_0_power_limit_uw 150000000) && ok || bad "an unlocked package's store: $out"
fault clear lock >/dev/null

# --- F2. a RAPL counter that freezes: read through the shim, it stands still; package 1's runs;
# at the end it catches up with the truth (never back) ------------------------------------------
E0=/sys/class/powercap/intel-rapl:0/energy_uj E1=/sys/class/powercap/intel-rapl:1/energy_uj
fault add --kind rapl-freeze --node intel-1 --device package0 --id frozen >/dev/null
sleep 0.6 # the counter's last line runs to the next tick's time, then stands
a0=$(on intel-1 -- cat $E0) a1=$(on intel-1 -- cat $E1)
sleep 1
b0=$(on intel-1 -- cat $E0) b1=$(on intel-1 -- cat $E1)
[ "$a0" = "$b0" ] && [ "$b1" -gt "$a1" ] && ok || bad "a frozen package 0 counter: $a0 -> $b0 (want equal); package 1 $a1 -> $b1"
fault clear frozen >/dev/null
for _ in $(seq 50); do c0=$(on intel-1 -- cat $E0); [ "$c0" -gt "$b0" ] && break; sleep 0.1; done
# frozen for more than 1 s (the two sleeps above) with package 0 held at 60 W (the limit written
# in the limit-ignored part above, enforced since that fault ended): the catch-up is at least
# 60 J, where the 0.1 s between two polls of a running counter is 6 J
[ $((c0 - b0)) -gt 50000000 ] && ok || bad "the thawed counter: $b0 -> $c0 (want a jump to the truth)"

# --- G. Redfish unavailable ---------------------------------------------------------------------
fault add --kind redfish-unavailable --node intel-1 --param retryAfterSec=7 --id rf >/dev/null
for _ in $(seq 50); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/redfish/v1/Chassis/intel-1/Power")" = 503 ] && break
    sleep 0.1
done
hdr=$(curl -s -D - -o "$root/rf.json" "$url/redfish/v1/Chassis/intel-1/Power")
grep -q '^HTTP/1.1 503' <<<"$hdr" && grep -qi '^Retry-After: 7' <<<"$hdr" &&
    grep -qF '"message":"The service is temporarily unavailable.  Retry in 7 seconds."' "$root/rf.json" && ok ||
    bad "Redfish of a node whose BMC is unavailable: $hdr $(cat "$root/rf.json")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/redfish/v1/Chassis/intel-2/Power")" = 200 ] && ok ||
    bad "Redfish of a healthy node"
out=$(fault add --kind rf-lost --node intel-1 2>&1)
[ $? = 1 ] && grep -qF 'request:1:9: fault: kind: unknown kind "rf-lost"' <<<"$out" && ok || bad "a bad request: $out"

# --- J. a cooling fault throttles as the hardware does (faults.md §3) ----------------------------
# hot-0's fan failed at the engine's start (the spec's fault `fan`): its fully loaded packages
# reached TjMax and PROCHOT holds them there. What each route shows:
#   - the kernel's thermal_throttle counters (therm_throt.c) through Debian's node_exporter (its cpu
#     collector, seccomp route): one episode per package, counted on every core;
#   - IA32_PACKAGE_THERM_STATUS (rdmsr, msr-tools): bit 0, PROCHOT active;
#   - /telemetry's thermalThrottlePct: the frequency lost, against the running frequency of intel-0,
#     the same profile and load in healthy air (its BMC faults change no physics);
#   - joulie_sim_node_throttle_pct above 0 on hot-0, 0 on intel-0.
throttled() { on hot-0 -- cat /sys/devices/system/cpu/cpu5/thermal_throttle/package_throttle_count; }
for _ in $(seq 300); do [ "$(throttled)" = 1 ] && break; sleep 0.1; done
[ "$(throttled)" = 1 ] && ok || bad "hot-0 never throttled: package_throttle_count $(throttled)"
np=$(free_port)
"$hwemu" exec --root "$root/r" --node hot-0 --intercept seccomp -- prometheus-node-exporter \
    --web.listen-address=127.0.0.1:$np --collector.disable-defaults --collector.cpu >"$root/ne.log" 2>&1 &
ne=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:$np/metrics >"$root/ne.txt" && break; sleep 0.1; done
kill -TERM $ne; wait $ne 2>/dev/null
# intel-xeon-2s-rapl: 2 packages of 24 cores (cpu.coresPerSocket)
[ "$(grep -c '^node_cpu_package_throttles_total{package="[01]"} 1$' "$root/ne.txt")" = 2 ] &&
    [ "$(grep -c '^node_cpu_core_throttles_total{core="[0-9]*",package="[01]"} 1$' "$root/ne.txt")" = 48 ] && ok ||
    bad "node_exporter's throttle counters on hot-0: $(grep throttles "$root/ne.txt" | head -4) $(tail -2 "$root/ne.log")"
bit=$(on hot-0 -- rdmsr -p 5 -f 0:0 0x1b1)
[ "$bit" = 1 ] && ok || bad "PACKAGE_THERM_STATUS bit 0 (PROCHOT) of a package at TjMax: $bit"
# its log (bit 1, R/WC0, faults.md §3.5) is set while PROCHOT is: a write of 0 does not clear it then
on hot-0 -- wrmsr -p 5 0x1b1 0 && [ "$(on hot-0 -- rdmsr -p 5 -f 1:0 0x1b1)" = 3 ] && ok ||
    bad "PACKAGE_THERM_STATUS of a package at TjMax after a write of 0: $(on hot-0 -- rdmsr -p 5 0x1b1) (want bits 0 and 1)"
tele() { curl -sf "$url/telemetry/$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cpu"]["thermalThrottlePct"], d["packages"][0]["frequencyKHz"])'; }
read -r pct hot_khz <<<"$(tele hot-0)"
read -r pct0 cool_khz <<<"$(tele intel-0)"
awk -v p="$pct" -v h="$hot_khz" -v c="$cool_khz" -v p0="$pct0" \
    'BEGIN { w = 100 * (1 - h / c); exit !(p > 5 && p0 == 0 && (p - w) ^ 2 < 4) }' && ok ||
    bad "thermalThrottlePct $pct on hot-0 (package 0 at $hot_khz kHz, intel-0's at $cool_khz kHz), $pct0 on intel-0"
m=$(curl -sf "$url/metrics")
awk '/^joulie_sim_node_throttle_pct\{node="hot-0"\}/ { h = $2 } /^joulie_sim_node_throttle_pct\{node="intel-0"\}/ { c = $2 }
     END { exit !(h > 5 && c == 0) }' <<<"$m" && ok || bad "joulie_sim_node_throttle_pct: $(grep 'throttle_pct{' <<<"$m")"
# the fan repaired: the episode ends; its length counts in the total and the maximum (one episode:
# the two are equal), PROCHOT drops
fault clear fan >/dev/null
tt() { on hot-0 -- cat /sys/devices/system/cpu/cpu5/thermal_throttle/core_throttle_total_time_ms; }
for _ in $(seq 50); do [ "$(tt)" != 0 ] && break; sleep 0.1; done
t=$(tt) mx=$(on hot-0 -- cat /sys/devices/system/cpu/cpu5/thermal_throttle/core_throttle_max_time_ms)
[ "$t" -ge 1000 ] && [ "$t" = "$mx" ] && [ "$(throttled)" = 1 ] && [ "$(on hot-0 -- rdmsr -p 5 -f 0:0 0x1b1)" = 0 ] && ok ||
    bad "after the repair: total $t ms, max $mx ms (want equal, 1 s or more), count $(throttled)"
# the logs are sticky (Intel SDM Vol. 3B §15.8.5.2, faults.md §3.5): PROCHOT has dropped, bit 1 stays
# set in IA32_PACKAGE_THERM_STATUS (0x1B1) and IA32_THERM_STATUS (0x19C) until software writes it
# 0; a write of 1 leaves it; the package's log and a core's are apart
l() { on hot-0 -- rdmsr -p "$1" -f 1:0 "$2"; }
logs="$(l 5 0x1b1) $(l 5 0x19c)"
on hot-0 -- wrmsr -p 5 0x1b1 2
logs="$logs $(l 5 0x1b1)"
on hot-0 -- wrmsr -p 5 0x1b1 0
logs="$logs $(l 5 0x1b1) $(l 5 0x19c)"
on hot-0 -- wrmsr -p 5 0x19c 0
logs="$logs $(l 5 0x19c)"
[ "$logs" = "2 2 2 0 2 0" ] && ok ||
    bad "the THERM_STATUS logs after an episode (pkg, core; pkg after a write of 1; pkg, core after the pkg's write of 0; core after its own): $logs, want 2 2 2 0 2 0"
# hotgpu-0's inlet is 80 °C warmer: its loaded GPUs heat to their maximum operating temperature
# (89 °C), where the driver caps their clocks (SW thermal slowdown, 0x20), and past the slowdown
# temperature (97 °C) the hardware's slowdown shows too (0x40): the real nvidia-smi 535 and
# nvidia-ml-py read NVML's clock-event reasons
q=clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.hw_thermal_slowdown,clocks.sm,temperature.gpu
for _ in $(seq 600); do
    out=$(on hotgpu-0 -- "$smi" -i 1 --query-gpu=$q --format=csv,noheader 2>&1)
    case "$out" in "Active, Active, "*) break ;; esac
    sleep 0.1
done
[[ "$out" =~ ^"Active, Active, 210 MHz, "(9[7-9]|1[0-9][0-9])$ ]] && ok ||
    bad "nvidia-smi on a GPU at its thermal limits: $out (want both slowdowns active, the clock at its 210 MHz minimum)"
out=$(on hotgpu-0 -- "$venv/bin/python" -c 'import pynvml; pynvml.nvmlInit(); h = pynvml.nvmlDeviceGetHandleByIndex(1)
print(hex(pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(h) & (pynvml.nvmlClocksThrottleReasonSwThermalSlowdown | pynvml.nvmlClocksThrottleReasonHwThermalSlowdown)))' 2>&1)
[ "$out" = 0x60 ] && ok || bad "nvidia-ml-py's clock-event reasons on a GPU at its thermal limits: $out (want 0x60)"

# --- K. a node that loses its power, a stuck frequency, a RAPL counter that jumps ----------------
# intel-2 and sxm-0 lose their power: every file of theirs fails EIO (what a soft NFS mount of a
# server that stopped answering gives, faults.md §8), rdmsr and ipmitool fail, Redfish closes the
# connection unanswered (curl: exit 52, empty reply), the real nvidia-smi finds every GPU lost;
# the node draws nothing (/telemetry); back, its RAPL counter, its uptime and /proc/stat count
# from 0 again (a booting machine's), NVML's energy counter too, while /telemetry's energy (the
# truth) never went back.
E=/sys/class/powercap/intel-rapl:0/energy_uj
# what agents set on intel-2 and epyc-0 (acpi-cpufreq: cpufreq/stats) before their power goes
L=/sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw C0=/sys/devices/system/cpu/cpu0/cpufreq
set0="$(on intel-2 -- cat $L $C0/scaling_max_freq) $(on epyc-0 -- cat $C0/scaling_governor $C0/scaling_max_freq)"
on intel-2 -- sh -c "echo 90000000 > $L; echo 1500000 > $C0/scaling_max_freq" &&
    on epyc-0 -- sh -c "echo powersave > $C0/scaling_governor; echo 1500000 > $C0/scaling_max_freq" && ok ||
    bad "the settings written before the power loss"
for _ in $(seq 50); do [ "$(on epyc-0 -- cat $C0/stats/total_trans)" -gt 0 ] && break; sleep 0.1; done
tis() { on epyc-0 -- awk '{ s += $2 } END { print s / 100 }' $C0/stats/time_in_state; } # s (10 ms units)
stats0="$(on epyc-0 -- cat $C0/stats/total_trans) $(tis)" aperf0=$(on intel-2 -- rdmsr -p 0 -u 0xe8)
before=$(on intel-2 -- cat $E) up0=$(on intel-2 -- cut -d' ' -f1 /proc/uptime)
gpu_mj() { on sxm-0 -- "$venv/bin/python" -c 'import pynvml; pynvml.nvmlInit(); print(pynvml.nvmlDeviceGetTotalEnergyConsumption(pynvml.nvmlDeviceGetHandleByIndex(0)))'; }
gpu0=$(gpu_mj)
truth() { curl -sf "$url/telemetry/$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["energyJoules"], d["nodePowerWatts"])'; }
read -r j0 _ <<<"$(truth intel-2)"
fault add --kind power-loss --node intel-2 --id off >/dev/null && fault add --kind power-loss --node sxm-0 --id off-gpu >/dev/null &&
    fault add --kind power-loss --node epyc-0 --id off-epyc >/dev/null &&
    wait_state intel-2 off=5 && wait_state sxm-0 off=5 && wait_state epyc-0 off=5 && ok || bad "power-loss never reached state/faults"
out=$(on intel-2 -- cat $E 2>&1)
[ "$out" = "cat: '$E': Input/output error" ] && ok || bad "cat of a node without power: $out"
out=$(on intel-2 -- sh -c 'cat /proc/uptime; rdmsr 0x611; echo 5 > /sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw; ipmitool dcmi power reading' 2>&1)
grep -qF 'cat: /proc/uptime: Input/output error' <<<"$out" && grep -qF 'rdmsr: CPU 0 cannot read MSR 0x00000611' <<<"$out" &&
    grep -qF 'I/O error' <<<"$out" && ! grep -q 'Instantaneous power reading' <<<"$out" && ok ||
    bad "uptime, rdmsr, a limit write and ipmitool on a node without power: $out"
curl -s -o /dev/null "$url/redfish/v1/Chassis/intel-2/Power"
rc=$?
[ $rc = 52 ] && ok || bad "Redfish of a node without power: curl exit $rc, want 52 (empty reply)"
out=$(on sxm-0 -- "$smi" -L 2>&1)
rc=$?
[ $rc = 15 ] && grep -qF 'Unable to determine the device handle for gpu 0: GPU is lost.' <<<"$out" && ok ||
    bad "the real nvidia-smi -L on a node without power: exit $rc: $out"
sleep 0.5
read -r j1 w1 <<<"$(truth intel-2)"
sleep 1
read -r j2 _ <<<"$(truth intel-2)"
[ "$w1" = 0 ] && [ "$j1" = "$j2" ] && ok || bad "a node without power: $w1 W, energy $j1 -> $j2 J (want 0 W, unchanged)"
fault clear off >/dev/null && fault clear off-gpu >/dev/null && fault clear off-epyc >/dev/null
for _ in $(seq 50); do after=$(on intel-2 -- cat $E 2>/dev/null) && break; sleep 0.1; done
for _ in $(seq 50); do on epyc-0 -- cat /proc/uptime >/dev/null 2>&1 && break; sleep 0.1; done
# the settings are the profile's again, as a booted machine's (docs/faults.md power-loss); APERF,
# cpufreq/stats count from the power-up: the time in the states is at most the uptime since
set1="$(on intel-2 -- cat $L $C0/scaling_max_freq) $(on epyc-0 -- cat $C0/scaling_governor $C0/scaling_max_freq)"
[ "$set1" = "$set0" ] && ok || bad "the settings after a power cycle: $set1, want the profile's $set0"
stats1="$(on epyc-0 -- cat $C0/stats/total_trans) $(tis)" aperf1=$(on intel-2 -- rdmsr -p 0 -u 0xe8)
upe=$(on epyc-0 -- cut -d' ' -f1 /proc/uptime)
read -r n0 s0 <<<"$stats0"
read -r n1 s1 <<<"$stats1"
awk -v n0="$n0" -v s0="$s0" -v n1="$n1" -v s1="$s1" -v u="$upe" -v a0="$aperf0" -v a1="$aperf1" \
    'BEGIN { exit !(n0 > 0 && s1 < s0 && s1 <= u + 0.1 && a1 < a0) }' && ok ||
    bad "after a power cycle: total_trans $n0 -> $n1, time_in_state $s0 -> $s1 s (uptime $upe s), APERF $aperf0 -> $aperf1"
up1=$(on intel-2 -- cut -d' ' -f1 /proc/uptime) gpu1=$(gpu_mj)
read -r j3 _ <<<"$(truth intel-2)"
# the counters went back and count from the power-up: the package's energy since is what its
# at most 156 W (the profile's at full load) give over the uptime since (+1 s: the two reads are
# apart), the truth never went back
awk -v b="$before" -v a="$after" -v u0="$up0" -v u1="$up1" -v g0="$gpu0" -v g1="$gpu1" -v j2="$j2" -v j3="$j3" \
    'BEGIN { exit !(a < b && a <= 156e6 * (u1 + 1) && u1 < u0 && g1 < g0 && j3 >= j2) }' && ok ||
    bad "back from a power loss: energy_uj $before -> $after, uptime $up0 -> $up1, NVML energy $gpu0 -> $gpu1 mJ, truth $j2 -> $j3 J"
# a stuck frequency: intel-0's scaling_max_freq write is accepted and reads back, its running
# frequency stays; cleared, it follows the limit
C=/sys/devices/system/cpu/cpu0/cpufreq
f0=$(on intel-0 -- cat $C/scaling_cur_freq)
fault add --kind freq-stuck --node intel-0 --id stuck >/dev/null
sleep 0.5
on intel-0 -- sh -c "echo 1200000 > $C/scaling_max_freq" && [ "$(on intel-0 -- cat $C/scaling_max_freq)" = 1200000 ] && ok ||
    bad "a cpufreq write under a stuck frequency was not accepted"
sleep 1
f1=$(on intel-0 -- cat $C/scaling_cur_freq)
[ "$f1" -gt 2000000 ] && ok || bad "a stuck frequency moved: $f0 -> $f1 kHz under a 1.2 GHz limit"
fault clear stuck >/dev/null
# (the running frequency ramps toward its target: within 0.1 % of it, where stuck it stays above 2 GHz)
for _ in $(seq 50); do [ "$(on intel-0 -- cat $C/scaling_cur_freq)" -le 1201200 ] && break; sleep 0.1; done
f2=$(on intel-0 -- cat $C/scaling_cur_freq)
[ "$f2" -le 1201200 ] && ok || bad "after a stuck frequency: $f2 kHz, want the 1.2 GHz limit"
# a RAPL counter that jumps 500 J: package 1's counter (a shim reader) moves by more than what
# its power gives in the interval, the truth does not
E1=/sys/class/powercap/intel-rapl:1/energy_uj
# (/telemetry's package 1 energy is the truth, as of the last tick; the counter runs between
# ticks: the two routes are read in the same order before and after, and may still be a 200 ms
# tick and a loaded machine's delay apart, 30 J a tick at the package's 156 W: within 100 J, where
# no jump is 0 J)
pkg1() { curl -sf "$url/telemetry/intel-0" | python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][1]["energyJoules"])'; }
a=$(on intel-0 -- cat $E1) t0=$(pkg1)
fault add --kind rapl-jump --node intel-0 --device package1 --param joules=500 >/dev/null
for _ in $(seq 50); do b=$(on intel-0 -- cat $E1); [ $((b - a)) -gt 500000000 ] && break; sleep 0.1; done
b=$(on intel-0 -- cat $E1) t1=$(pkg1) # (in the order of a and t0: the reads' skews cancel)
awk -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" 'BEGIN { j = (b - a) / 1e6 - (t1 - t0); exit !(j > 400 && j < 600) }' && ok ||
    bad "a RAPL counter that jumps 500 J: $a -> $b uJ while package 1's truth moved $t0 -> $t1 J"
kill $pid
wait $pid 2>/dev/null
pid=

# --- H. faults in a run's trace, at --speed max -------------------------------------------------
cat >"$root/run.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: faults-run}
spec:
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 2, labels: {rack: r1}}
  - {name: sxm, profile: nvidia-h100-sxm-8gpu, count: 1, labels: {rack: r2}}
EOF
{
    for i in 1 2 3 4; do
        echo '{"type":"job","jobId":"cpu-'$i'","podTemplate":{"requests":{"cpu":"48"}},"work":{"cpuUnits":4000},"workloadClass":{"cpu":"cpu.compute_bound"}}'
    done
    for j in a b; do
        echo '{"type":"job","jobId":"gpu-'$j'","podTemplate":{"requests":{"cpu":"4","nvidia.com/gpu":"1"}},"work":{"cpuUnits":100,"gpuUnits":200},"workloadClass":{"gpu":"gpu.compute_bound"}}'
    done
} >"$root/jobs.jsonl"
cp "$root/jobs.jsonl" "$root/faulty.jsonl"
echo '{"type":"fault","id":"hot","kind":"fan-failure","labels":{"rack":"r1"},"atSec":5,"durationSec":60}' >>"$root/faulty.jsonl"
echo '{"type":"fault","id":"lost","kind":"gpu-lost","nodes":["sxm-0"],"device":"gpu0","atSec":10,"durationSec":30}' >>"$root/faulty.jsonl"
cp "$root/jobs.jsonl" "$root/unpowered.jsonl"
echo '{"type":"fault","id":"off","kind":"power-loss","nodes":["sxm-0"],"atSec":5,"durationSec":20}' >>"$root/unpowered.jsonl"
for v in clean:jobs faulty:faulty again:faulty off:unpowered; do
    "$hwemu" run --spec "$root/run.yaml" --trace "$root/${v#*:}.jsonl" --root "$root/run-${v%%:*}" --speed max \
        >/dev/null 2>"$root/run.err" || bad "run ${v%%:*}: $(cat "$root/run.err")"
done
dir() { ls -d "$root/run-$1"/runs/*/; }
# the end of a job (s from the run's start) in a run's jobs.jsonl
end_of() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d["jobId"] == sys.argv[2]: print(d["endSec"])' "$(dir "$1")/jobs.jsonl" "$2"; }
faults=$(cat "$(dir faulty)/faults.jsonl" 2>/dev/null)
grep -qF '{"event":"started","faultId":"lost","kind":"gpu-lost","device":"gpu0","atSec":10,"nodes":["sxm-0"],"jobs":["gpu-a"]}' <<<"$faults" &&
    ok || bad "faults.jsonl: the lost GPU's start: $faults"
grep -qF '"event":"ended","faultId":"lost"' <<<"$faults" && grep -q '"faultId":"hot".*"nodes":\["intel-0","intel-1"\],"jobs":\["cpu-' <<<"$faults" &&
    ok || bad "faults.jsonl: $faults"
[ ! -e "$(dir clean)/faults.jsonl" ] && ok || bad "a run without faults has a faults.jsonl"
# the job on the lost GPU waits the fault's 30 s: it ends 30 s later than without it (the run
# holds every rate while it waits; its other GPU job is untouched)
a0=$(end_of clean gpu-a) a1=$(end_of faulty gpu-a) b0=$(end_of clean gpu-b) b1=$(end_of faulty gpu-b)
awk -v a="$a0" -v b="$a1" 'BEGIN { d = b - a; exit !(d >= 29 && d <= 31) }' && [ "$b0" = "$b1" ] && ok ||
    bad "the job on the lost GPU: ends at $a0 s without the fault, $a1 s with it (want 30 s later); gpu-b $b0 / $b1"
# a run suspended (SIGTERM) while its trace's faults are on and resumed keeps their emulated
# times (docs/faults.md "Repeatability"): each fault starts once and ends once in faults.jsonl (a
# fault on at the suspension is struck again from the resume, not announced again; one that had
# ended does not strike again), and the lost GPU's ends at its 40 s of the run's time (its 10 s
# start and 30 s), before the 30 s after the resume a fault restarted at the resume would take.
# At --speed 50 the suspension comes 0.3 s of wall time (about 15 s of the run) after the GPU was
# lost; on a loaded machine the ticks can come late, so the times are bounds, not equalities.
cp "$root/faulty.jsonl" "$root/resume.jsonl"
echo '{"type":"fault","id":"blip","kind":"bmc-slow","nodes":["intel-0"],"atSec":1,"durationSec":2}' >>"$root/resume.jsonl"
rargs=(run --spec "$root/run.yaml" --trace "$root/resume.jsonl" --root "$root/run-resume" --speed 50)
"$hwemu" "${rargs[@]}" >/dev/null 2>"$root/resume1.err" &
rp=$!
for _ in $(seq 1500); do grep -qs '"started","faultId":"lost"' "$root"/run-resume/runs/*/faults.jsonl && break; sleep 0.02; done
sleep 0.3
kill -TERM $rp
wait $rp
rc=$?
susp=$(sed -n 's/.* suspended at \([0-9.]*\) s;.*/\1/p' "$root/resume1.err")
"$hwemu" "${rargs[@]}" >/dev/null 2>"$root/resume2.err" || bad "the resumed run: $(cat "$root/resume2.err")"
fj=$(cat "$root"/run-resume/runs/*/faults.jsonl)
[ $rc = 3 ] && [ -n "$susp" ] && ok || bad "the run to resume was not suspended (exit $rc): $(tail -2 "$root/resume1.err")"
for id in blip hot lost; do
    [ "$(grep -c "\"started\",\"faultId\":\"$id\"" <<<"$fj")" = 1 ] && [ "$(grep -c "\"ended\",\"faultId\":\"$id\"" <<<"$fj")" = 1 ] &&
        ok || bad "a resumed run's faults.jsonl: fault $id should start and end once (suspended at $susp s): $fj"
done
end_lost=$(python3 -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l)
    if d["event"] == "ended" and d["faultId"] == "lost": print(d["atSec"])' <<<"$fj")
awk -v t="$end_lost" -v s="${susp:-0}" 'BEGIN { exit !(t >= 40 && (s >= 40 || s < 12 || t < s + 29)) }' && ok ||
    bad "the lost GPU's fault in a run suspended at $susp s ended at $end_lost s of the run, want 40 s (its time), not 30 s after the resume: $fj"
# sxm-0 without power from 5 s to 25 s: both its jobs wait the 20 s, the CPU jobs elsewhere do not
a2=$(end_of off gpu-a) b2=$(end_of off gpu-b) c2=$(end_of off cpu-1) c0=$(end_of clean cpu-1)
awk -v a0="$a0" -v a="$a2" -v b0="$b0" -v b="$b2" 'BEGIN { exit !((a - a0 - 20) ^ 2 <= 1 && (b - b0 - 20) ^ 2 <= 1) }' &&
    [ "$c2" = "$c0" ] && ok || bad "jobs on a node without power for 20 s: gpu-a $a0 -> $a2 s, gpu-b $b0 -> $b2 s, cpu-1 $c0 -> $c2 s"
# the fan failure holds rack r1's packages at TjMax: their jobs end later
c0=$(end_of clean cpu-1) c1=$(end_of faulty cpu-1)
awk -v a="$c0" -v b="$c1" 'BEGIN { exit !(b > a + 1) }' && ok ||
    bad "a cooling fault on rack r1: cpu-1 ends at $c0 s without it, $c1 s with it (want later)"
for f in jobs.jsonl faults.jsonl; do
    cmp <(sed -E 's/"(runId|cgroup)":[[:space:]]*"[^"]*",?//g' "$(dir faulty)/$f") \
        <(sed -E 's/"(runId|cgroup)":[[:space:]]*"[^"]*",?//g' "$(dir again)/$f") && ok ||
        bad "the same spec, trace and faults at --speed max: $f differs"
done
# --- I. sensors that behave like real ones -------------------------------------------------------
# An idle H100 draws a constant power: an exact NVML reading never changes, so a client that keeps
# only changing samples (tests/nvml/pynvml_changes.py) has one sample and measures 0 J. NVML's
# reading is a measurement with noise (within nvidia-smi's documented +/- 5 W): it changes at
# every publication, and the client's energy is within 1 % of the energy counter's (the truth).
# The other power readings (docs/faults.md "Sensors") of idle nodes, whose truth (/telemetry)
# stands still: the BMC's (the real ipmitool's DCMI reading, Redfish's PowerConsumedWatts) within
# the profile's 1 % of it, amdgpu's power1_input (MI300X) and power1_average (W7900, through the
# real lm-sensors) and amd_hsmp's power1_input within 1 W, the Cray pm_counters' power within
# 1 % (the test profile tests/cli/profiles-interfaces/test-cray-pm-counters.yaml; the bounds:
# profiles/README.md sensors.*), read across ticks: with noise they take several values, without they are the
# truth, one value.
# sample NODE FILE: the file read 12 times 0.25 s apart (about 15 ticks of 200 ms) through the shim
sample() { ion "$1" -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do cat "$0"; sleep 0.25; done' "$2"; }
# check WHAT NOISE TRUTH BAND VALUES...: with noise, 2 or more distinct values, each within BAND of
# TRUTH; without, every value TRUTH (within a reading's rounding, 0.5 of its unit) and one value
check() {
    local what=$1 noise=$2 truth=$3 band=$4
    shift 4
    printf '%s\n' "$@" | awk -v n="$noise" -v t="$truth" -v b="$band" -v what="$what" '
        { d = $1 - t; if (d < 0) d = -d
          if ($1 == "" || (n == "true" ? d > b : d > 0.5)) { print what ": " $1 " vs the truth " t; bad = 1 }
          seen[$1] = 1 }
        END { k = 0; for (v in seen) k++
              if (n == "true" ? k < 2 : k != 1) { print what ": " k " distinct readings with noise " n; bad = 1 }
              exit bad }' && ok || bad "$what (noise $noise, truth $truth): $*"
}
ion() { "$hwemu" exec --root "$root/ri" --node "$@"; }
distinct() { printf '%s\n' "$@" | sort -u | wc -l; } # how many different values among the arguments
tel() { curl -sf "$iurl/telemetry/$1" | python3 -c "import json,sys; d = json.load(sys.stdin); print($2)"; }
for noise in true false; do
    cat >"$root/idle.yaml" <<EOF
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: idle}
spec:
  sensors: {noise: $noise}
  pools:
  - {name: idle, profile: nvidia-h100-sxm-8gpu, count: 1}
  - {name: xeon, profile: intel-xeon-2s-rapl, count: 1}
  - {name: mi, profile: amd-instinct-mi300x-8gpu, count: 1}
  - {name: w79, profile: amd-radeon-pro-w7900-4gpu, count: 1}
  - {name: epyc, profile: amd-epyc-2s-hsmp, count: 1}
  - {name: cray, profile: test-cray-pm-counters, count: 1}
EOF
    port=$(free_port)
    iurl=http://127.0.0.1:$port
    rm -rf "$root/ri"
    serve_start $iurl "$root/serve.err" --spec "$root/idle.yaml" --root "$root/ri" \
        --profiles-dir tests/cli/profiles-interfaces --addr 127.0.0.1:$port --tick 200ms || { bad "serve did not come up: $(cat "$root/serve.err")"; finish; }
    out=$(ion idle-0 -- "$venv/bin/python" tests/nvml/pynvml_changes.py 0 6 2>&1)
    n=$(sed -n 's/^samples=//p' <<<"$out") m=$(sed -n 's/^measured_j=//p' <<<"$out") t=$(sed -n 's/^truth_j=//p' <<<"$out")
    if [ $noise = true ]; then
        # 6 s at 200 ms ticks: about 30 readings; at least 10 even on a loaded machine
        [ "${n:-0}" -ge 10 ] && awk -v m="$m" -v t="$t" 'BEGIN { exit !(t > 0 && m >= 0.99 * t && m <= 1.01 * t) }' && ok ||
            bad "a change-only client on an idle GPU: $n samples, $m J measured, $t J by the counter (want within 1 %): $out"
    else
        [ "$n" = 1 ] && ok || bad "with spec.sensors.noise false an idle GPU's reading should never change: $out"
    fi
    # the BMC: ipmitool's instantaneous reading (whole watts) and Redfish's, 12 times across ticks;
    # with noise, on until each has shown two values (60 readings at most): 1 % of an idle node's
    # 96 W rounds to the same whole watt in most ticks, and 12 readings all gave 96 once (ASan)
    truth=$(tel xeon-0 'd["nodePowerWatts"]')
    dcmi=() rf=()
    for i in $(seq 60); do
        out=$(ion xeon-0 -- ipmitool dcmi power reading 2>&1)
        dcmi+=("$(sed -n 's/^ *Instantaneous power reading: *\([0-9]*\) Watts$/\1/p' <<<"$out")")
        rf+=("$(curl -sf "$iurl/redfish/v1/Chassis/xeon-0/Power" |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["PowerControl"][0]["PowerConsumedWatts"])')")
        if [ $i -ge 12 ]; then
            [ $noise = false ] && break
            [ "$(distinct "${dcmi[@]}")" -ge 2 ] && [ "$(distinct "${rf[@]}")" -ge 2 ] && break
        fi
        sleep 0.25
    done
    band=$(awk -v t="$truth" 'BEGIN { print t * 0.01 }')
    check "ipmitool dcmi power reading of an idle node (W)" $noise "$truth" "$(awk -v b="$band" 'BEGIN { print b + 0.5 }')" "${dcmi[@]}"
    check "Redfish PowerConsumedWatts of an idle node" $noise "$truth" "$band" "${rf[@]}"
    # its statistics: minimum <= average <= maximum, the average within the band of the truth
    out=$(ion xeon-0 -- ipmitool dcmi power reading 2>&1)
    v=($(sed -n 's/^ *\(Minimum\|Maximum\|Average\)[^:]*: *\([0-9]*\) Watts$/\2/p' <<<"$out"))
    awk -v lo="${v[0]:-0}" -v hi="${v[1]:-0}" -v a="${v[2]:-0}" -v t="$truth" -v b="$band" \
        'BEGIN { exit !(lo <= a && a <= hi && a - t <= b + 0.5 && t - a <= b + 0.5) }' && ok ||
        bad "ipmitool's DCMI statistics of an idle node (noise $noise, truth $truth W): $out"
    # amdgpu: the MI300X's power1_input, and the W7900's power1_average as lm-sensors prints it
    truth=$(tel mi-0 'd["gpus"][0]["powerWatts"]')
    f=$(ion mi-0 -- sh -c 'echo /sys/devices/pci0000:10/0000:10:00.0/hwmon/hwmon*/power1_input') # GPU 0 (bus 0x10)
    check "amdgpu power1_input of an idle MI300X (W)" $noise "$truth" 1.01 $(sample mi-0 "$f" | awk '{ print $1 / 1e6 }')
    truth=$(tel w79-0 'd["gpus"][0]["powerWatts"]')
    w=()
    for _ in $(seq 12); do
        w+=("$(ion w79-0 -- sensors amdgpu-pci-1000 2>/dev/null | awk '/^PPT:/ { print $2; exit }')") # GPU 0 (bus 0x10)
        sleep 0.25
    done
    check "lm-sensors' PPT (power1_average) of an idle W7900 (W)" $noise "$truth" 1.01 "${w[@]}"
    # amd_hsmp: socket 0's power1_input
    truth=$(tel epyc-0 'd["packages"][0]["powerWatts"]')
    check "amd_hsmp power1_input of an idle EPYC socket (W)" $noise "$truth" 1.01 \
        $(sample epyc-0 /sys/devices/platform/amd_hsmp/hwmon/hwmon0/power1_input | awk '{ print $1 / 1e6 }')
    # the Cray blade controller's node power (pm_counters/power, whole watts: "<W> W <us> us")
    truth=$(tel cray-0 'd["nodePowerWatts"]')
    band=$(awk -v t="$truth" 'BEGIN { print t * 0.01 + 0.5 }')
    check "pm_counters/power of an idle Cray node (W)" $noise "$truth" "$band" $(sample cray-0 /sys/cray/pm_counters/power | awk '{ print $1 }')
    kill $pid
    wait $pid 2>/dev/null
    pid=
done
finish
