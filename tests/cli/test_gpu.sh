#!/usr/bin/env bash
# GPU nodes at the kernel's boundary (engine/segment/gpu_files.h), read by programs no one here wrote:
# lm-sensors' `sensors` names and reads the amdgpu and i915 hwmon chips; an MI300X capped
# through hwmon power1_cap settles under the cap; the W7900 refuses every cap but 241 W; the
# Flex 170's power1_max is taken whole and clamped by the next tick (i915 and xe layouts);
# PCI devices and /dev/nvidiactl; persistence mode off resets an idle GPU's limit with an
# event; peer transfers share the receiver's link; a restart continues GPU energy and keeps
# the limits written.
# Usage: test_gpu.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
start() { serve_start "$url" "$tmp/err" --spec tests/specs/gpu.yaml --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms; }
X() { local node=$1; shift; "$hwemu" exec --root "$tmp/r" --node "$node" -- "$@"; }
C() { "$hwemu" cat --root "$tmp/r" --node "$1" "$2"; }
W() { "$hwemu" write --root "$tmp/r" --node "$1" "$2" "$3" 2>&1; }
# until SECONDS CMD...: retries CMD every 0.1 s until it succeeds or SECONDS pass.
until_ok() { local t=$1; shift; for _ in $(seq $((t * 10))); do "$@" && return 0; sleep 0.1; done; return 1; }

start || { bad "serve did not come up: $(cat "$tmp/err")"; finish; }

# --- AMD: lm-sensors reads the MI300X hwmon; a cap through power1_cap holds power under it.
out=$(X mi300x-0 sensors 2>&1)
[ "$(grep -c '^amdgpu-pci-' <<<"$out")" = 8 ] && ok || bad "sensors: 8 amdgpu chips expected: $out"
grep -q '^amdgpu-pci-1000$' <<<"$out" && grep -q 'PPT: .*(cap = 750.00 W)' <<<"$out" && ok || bad "sensors chip/cap: $out"
H=/sys/class/drm/card1/device/hwmon/hwmon2
X mi300x-0 bash -c "echo 300000000 > $H/power1_cap" && ok || bad "power1_cap write"
[ "$(C mi300x-0 $H/power1_cap)" = 300000000 ] && ok || bad "power1_cap reads $(C mi300x-0 $H/power1_cap)"
settled() { [ "$(C mi300x-0 $H/power1_input)" -le 300000000 ]; }
until_ok 3 settled && ok || bad "MI300X power did not settle under 300 W: $(C mi300x-0 $H/power1_input)"
out=$(X mi300x-0 sensors amdgpu-pci-1000 2>&1)
grep -q 'cap = 300.00 W' <<<"$out" && ok || bad "sensors after the cap: $out"
err=$(X mi300x-0 bash -c "echo 800000000 > $H/power1_cap" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "echo: write error: Invalid argument" <<<"$err" && ok || bad "cap above max: $rc $err"
[ "$(C mi300x-0 /sys/class/drm/card0/device/vendor)" = 0x1a03 ] && ok || bad "BMC VGA as card0"
[ "$(C mi300x-0 /sys/class/drm/card1/device/power_dpm_force_performance_level)" = auto ] && ok || bad "perf level"

# --- W7900: the cap is pinned at 241 W; every other value is EINVAL, as a rejected event.
H=/sys/class/hwmon/hwmon2
vals=$(for f in power1_cap power1_cap_min power1_cap_max power1_cap_default; do C w7900-0 $H/$f; done | sort -u)
[ "$vals" = 241000000 ] && ok || bad "W7900 cap files: $vals"
out=$(W w7900-0 $H/power1_cap 200000000)
grep -q "Invalid argument" <<<"$out" && ok || bad "W7900 200 W: $out"
W w7900-0 $H/power1_cap 241500000 >/dev/null && [ "$(C w7900-0 $H/power1_cap)" = 241000000 ] && ok || bad "W7900 241.5 W"
rejected() { grep -q '"node":"w7900-0","event":"joulie.sim.write.rejected".*"written":"200000000".*"error.type":"einval"' "$tmp/r/events.jsonl"; }
until_ok 2 rejected && ok || bad "W7900 rejected event"

# --- Intel Flex 170, i915: power1_max takes any value; the next tick shows what the hardware holds.
H=/sys/class/hwmon/hwmon2
out=$(X flex-0 sensors 2>&1)
grep -q '^i915-pci-1000$' <<<"$out" && ok || bad "sensors i915: $out"
[ "$(C flex-0 $H/name)" = i915 ] && [ "$(C flex-0 $H/power1_rated_max)" = 150000000 ] && ok || bad "i915 files"
grep -q "^A file 0664 sys/devices/pci0000:10/0000:10:00.0/hwmon/hwmon2/power1_max$" \
    <<<"$("$hwemu" files --root "$tmp/r" --node flex-0 sys/devices/pci0000:10/0000:10:00.0/hwmon/hwmon2/)" && ok || bad "power1_max mode"
W flex-0 $H/power1_max 100000000 >/dev/null; [ "$(C flex-0 $H/power1_max)" = 100000000 ] && ok || bad "whole watts kept"
# (a tick may come between the write and the read on a loaded host: then the write is made again,
# 5 times at most; the clamp it then shows is checked below)
for _ in 1 2 3 4 5; do
    out=$(X flex-0 bash -c "echo 200000000 > $H/power1_max; cat $H/power1_max")
    [ "$out" = 200000000 ] && break
done
[ "$out" = 200000000 ] && ok || bad "200 W reads as written before the tick: $out"
clamped() { [ "$(C flex-0 $H/power1_max)" = "$1" ]; }
until_ok 2 clamped 150000000 && ok || bad "200 W did not read back 150 W after the tick: $(C flex-0 $H/power1_max)"
grep -q '"node":"flex-0","event":"joulie.sim.write.normalized","attributes":{"file":"sys/devices/pci0000:10/0000:10:00.0/hwmon/hwmon2/power1_max","written":"200000000",.*"effective":"150000000"' \
    "$tmp/r/events.jsonl" && ok || bad "the clamp is not the write event's effective value"
W flex-0 $H/power1_max 10000000 >/dev/null
until_ok 2 clamped 40000000 && ok || bad "10 W did not read back 40 W: $(C flex-0 $H/power1_max)"
W flex-0 $H/power1_max 0 >/dev/null; sleep 0.5
[ "$(C flex-0 $H/power1_max)" = 0 ] && ok || bad "0 turns the limit off"
[ -n "$("$hwemu" files --root "$tmp/r" --node flex-0 sys/bus/pci/drivers/i915/0000:10:00.0)" ] && ok || bad "i915 driver link"
# xe: the package channel
[ "$(C flexxe-0 $H/name)" = xe ] && [ "$(C flexxe-0 $H/power2_label)" = pkg ] && ok || bad "xe layout"
W flexxe-0 $H/power2_max 500000000 >/dev/null
xe_clamped() { [ "$(C flexxe-0 $H/power2_max)" = 150000000 ]; }
until_ok 2 xe_clamped && ok || bad "xe power2_max clamp"
C flexxe-0 $H/power1_max >/dev/null 2>&1 && bad "xe has no power1_max" || ok

# --- NVIDIA: PCI devices, the control device, NVML state.
out=$(X sxm-0 bash -c 'for d in /sys/bus/pci/devices/*; do cat $d/vendor; done | sort | uniq -c')
# the BMC VGA, 8 NVIDIA GPUs and the 52 memory controller functions of the 8260 the profile extends
[ "$(echo $out)" = "1 0x102b 8 0x10de 52 0x8086" ] && ok || bad "the BMC VGA, 8 NVIDIA PCI functions and the uncore's 52: $out"
out=$(X sxm-0 stat -c '%F %t:%T %a' /dev/nvidiactl)
[ "$out" = "character special file c3:ff 666" ] && ok || bad "/dev/nvidiactl: $out"
out=$(X mi300x-0 stat -c %F /dev/nvidiactl 2>&1)
grep -q "No such file" <<<"$out" && ok || bad "/dev/nvidiactl on an AMD node: $out"
u0=$(C sxm-0 state/nvml/gpu0/uuid) u1=$(C sxm-0 state/nvml/gpu1/uuid) v0=$(C sxm4-0 state/nvml/gpu0/uuid)
[[ $u0 =~ ^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ ]] && [ "$u0" != "$u1" ] && [ "$u0" != "$v0" ] &&
    ok || bad "UUIDs: $u0 $u1 $v0"
[ "$(C sxm-0 state/nvml/gpu3/pci_bus_id)" = 00000000:13:00.0 ] && ok || bad "bus id"
grep -q "^405:645 630" <<<"$(C l40s-0 state/nvml/gpu0/supported_clocks)" && ok || bad "L40S smMaxByMem table"

# --- Persistence mode off: the idle GPU's written limit returns to its default, with an event.
W nopm-0 state/nvml/gpu2/power_limit_mw 300000 >/dev/null
reset() { [ "$(C nopm-0 state/nvml/gpu2/power_limit_mw)" = 700000 ]; }
until_ok 2 reset && ok || bad "idle limit not reset: $(C nopm-0 state/nvml/gpu2/power_limit_mw)"
grep -q '"node":"nopm-0","event":"joulie.sim.cap.reset","attributes":{"file":"state/nvml/gpu2/power_limit_mw","gpu":2,"from":"300000","to":"700000"' \
    "$tmp/r/events.jsonl" && ok || bad "cap.reset event"
W sxm-0 state/nvml/gpu2/power_limit_mw 300000 >/dev/null; sleep 0.5
[ "$(C sxm-0 state/nvml/gpu2/power_limit_mw)" = 300000 ] && ok || bad "persistence on: the limit stays"

# --- Peer transfers: GPUs 0 and 2 share GPU 1's 450 GB/s, GPU 3 sends 100 GB/s to GPU 4.
# (up to three tries: one `hwemu cat` reads its four files one after another, and a tick published
# between two of them, rare but seen under load, skews one pair by a tick's worth)
peer_rates() {
    local r1 r2
    r1=$("$hwemu" cat --root "$tmp/r" --node peer-0 state/nvml/gpu1/peer_rx_bytes state/nvml/gpu0/peer_tx_bytes \
         state/nvml/gpu2/peer_tx_bytes state/nvml/gpu4/peer_rx_bytes)
    sleep 1
    r2=$("$hwemu" cat --root "$tmp/r" --node peer-0 state/nvml/gpu1/peer_rx_bytes state/nvml/gpu0/peer_tx_bytes \
         state/nvml/gpu2/peer_tx_bytes state/nvml/gpu4/peer_rx_bytes)
    peer_seen="$(echo $r1) / $(echo $r2)"
    "$py" - "$r1" "$r2" <<'PY'
import sys
a = [int(x) for x in sys.argv[1].split()]; b = [int(x) for x in sys.argv[2].split()]
rx1, tx0, tx2, rx4 = [(y - x) / 1e9 for x, y in zip(a, b)]
# the four counters of (almost always) one tick, about a second apart (200 ms ticks)
ok = abs(tx0 - tx2) < 1 and abs(rx1 - (tx0 + tx2)) < 1 and 0.7 < rx1 / 450 < 1.5 and abs(rx1 / rx4 - 4.5) < 0.01
sys.exit(0 if ok else 1)
PY
}
peer_ok=false
for _ in 1 2 3; do peer_rates && { peer_ok=true; break; }; done
$peer_ok && ok || bad "peer transfer rates: $peer_seen"

# --- Restart: GPU energy continues, written limits stay.
e1=$(C sxm-0 state/nvml/gpu0/total_energy_mj)
a1=$(C mi300x-0 /sys/class/drm/card1/device/hwmon/hwmon2/power1_cap)
kill -9 $pid; wait $pid 2>/dev/null; pid=
start || { bad "restart: $(tail -3 "$tmp/err")"; finish; }
e2=$(C sxm-0 state/nvml/gpu0/total_energy_mj)
[ "$e2" -ge "$e1" ] && ok || bad "GPU energy went back across a restart: $e1 -> $e2"
[ "$(C mi300x-0 /sys/class/drm/card1/device/hwmon/hwmon2/power1_cap)" = "$a1" ] && ok || bad "MI300X cap lost"
[ "$(C sxm-0 state/nvml/gpu2/power_limit_mw)" = 300000 ] && ok || bad "NVML limit lost"
sleep 0.5
e3=$(C sxm-0 state/nvml/gpu0/total_energy_mj)
[ "$e3" -gt "$e2" ] && ok || bad "GPU energy does not advance after the restart: $e2 -> $e3"
finish
