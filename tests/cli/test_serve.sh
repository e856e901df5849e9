#!/usr/bin/env bash
# `hwemu serve` end to end: the smoke spec served over HTTP with energy advancing, reads
# between ticks, writes answered with the kernel's errno and recorded as events, the HTTP
# error contract, promtool on /metrics, a kill -9 and restart that continues every counter
# and keeps what agents wrote, and a root rendered for another profile refused.
# Usage: test_serve.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
root=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$root"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port

start() { serve_start "$url" "$root/serve.err" --root "$root/r" --addr 127.0.0.1:$port --tick 200ms "$@"; }
json() { "$py" -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
R=(--root "$root/r" --node intel-0)
Z=/sys/class/powercap/intel-rapl:0

start || { bad "serve did not come up: $(cat "$root/serve.err")"; finish; }
grep -q "hwemu serve: 3 nodes (0 resumed) from builtin specs/smoke.yaml" "$root/serve.err" && ok || bad "start line: $(cat "$root/serve.err")"

# Telemetry: energy advances, nothing steps on a request.
sleep 0.3
e1=$(curl -s "$url/telemetry/intel-0" | json 'd["energyJoules"]')
sleep 0.5
e2=$(curl -s "$url/telemetry/intel-0" | json 'd["energyJoules"]')
"$py" -c "import sys; sys.exit(0 if $e2 > $e1 > 0 else 1)" && ok || bad "energy did not advance: $e1 -> $e2"
p=$(curl -s "$url/telemetry/intel-0" | json 'd["packagePowerWatts"] > 0 and len(d["packages"]) == 2 and d["packages"][0]["pl1Watts"] == 165')
[ "$p" = True ] && ok || bad "telemetry shape"

# Reads between ticks move on the 1 ms grid and never go back.
prev=0 moved=0
for _ in $(seq 20); do
    v=$("$hwemu" cat "${R[@]}" $Z/energy_uj)
    [ "$v" -ge "$prev" ] || bad "energy_uj went back: $prev -> $v"
    [ "$v" -gt "$prev" ] && moved=$((moved + 1))
    prev=$v
    sleep 0.01
done
[ $moved -ge 10 ] && ok || bad "energy_uj moved only $moved times in 20 reads 10 ms apart"

# Writes: normalised at the write, refused with the kernel's errno, events at the next tick.
"$hwemu" write "${R[@]}" $Z/constraint_0_power_limit_uw 100062499 && ok || bad "PL1 write refused"
[ "$("$hwemu" cat "${R[@]}" $Z/constraint_0_power_limit_uw)" = 100000000 ] && ok || bad "PL1 not floored to the unit"
err=$("$hwemu" write "${R[@]}" $Z/constraint_0_power_limit_uw 12ab 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "Invalid argument" <<<"$err" && ok || bad "bad PL1: rc=$rc $err"
err=$("$hwemu" write "${R[@]}" $Z/intel-rapl:0:0/constraint_0_power_limit_uw 5000000 2>&1)
grep -q "No data available" <<<"$err" && ok || bad "disabled DRAM limit: $err"
err=$("$hwemu" write "${R[@]}" $Z/energy_uj 0 2>&1)
grep -q "Permission denied" <<<"$err" && ok || bad "energy_uj write: $err"
"$hwemu" write "${R[@]}" /sys/devices/system/cpu/cpufreq/policy0/scaling_governor performance && ok || bad "governor"
err=$("$hwemu" write "${R[@]}" /sys/devices/system/cpu/cpufreq/policy0/energy_performance_preference power 2>&1)
grep -q "Device or resource busy" <<<"$err" && ok || bad "EPP under performance: $err"
"$hwemu" write "${R[@]}" /sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq 99999999 && ok || bad "max freq"
[ "$("$hwemu" cat "${R[@]}" /sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq)" = 3900000 ] && ok || bad "max clamp"
sleep 0.5
ev="$root/r/events.jsonl"
grep -q '"event":"joulie.sim.write.normalized".*constraint_0_power_limit_uw","written":"100062499".*"effective":"100000000"' "$ev" && ok || bad "normalized event: $(cat "$ev")"
grep -q '"event":"joulie.sim.write.rejected".*"written":"12ab".*"error.type":"einval"' "$ev" && ok || bad "rejected event"
grep -q '"error.type":"enodata"' "$ev" && grep -q '"error.type":"ebusy"' "$ev" && ok || bad "enodata/ebusy events"
"$py" -c "
import json, sys
for line in open('$ev'):
    o = json.loads(line)
    assert set(o) == {'time', 'node', 'event', 'attributes'}, o
" && ok || bad "events.jsonl is not one JSON object per line"
n=$(curl -s "$url/debug/events?node=intel-0" | json 'len(d["events"])')
[ "$n" -ge 7 ] && ok || bad "/debug/events has $n events"
# The package follows PL1 with its time window (999424 us) as time constant: within 6 % of the
# limit three windows after the write.
sleep 2.5
w=$(curl -s "$url/telemetry/intel-0" | json 'round(d["packages"][0]["powerWatts"], 1)')
"$py" -c "import sys; sys.exit(0 if 95 <= $w <= 106 else 1)" && ok || bad "package 0 at $w W under a 100 W PL1"

# HTTP contract.
code=$(curl -s -o "$root/body" -w '%{http_code}' -X POST "$url/control/intel-0")
[ "$code" = 409 ] && ok || bad "control: $code"
code=$(curl -s -o "$root/body" -w '%{http_code}' "$url/telemetry/nope")
[ "$code" = 404 ] && json 'd["node"]' <"$root/body" | grep -q nope && ok || bad "unknown node: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url/telemetry/intel-0")
[ "$code" = 405 ] && ok || bad "POST telemetry: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/control/intel-0")
[ "$code" = 405 ] && ok || bad "GET control: $code"
# The seed's request and control metrics (docs/telemetry.md "/metrics"; the seed's names and
# labels: simulator/cmd/simulator/main.go): every request above by route, method and status, and
# each POST /control by node and the action its body names (no body, or an action the seed does
# not know: "other"), all blocked (409).
for body in '{"action":"rapl.set_power_cap_watts","capWatts":100,"throttlePct":-1}' '{"action":"cpu.overclock"}'; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d "$body" "$url/control/intel-0")
    [ "$code" = 409 ] && ok || bad "control with $body: $code"
done
# intel_pstate's max_perf_pct at 50 holds every CPU at half the 3.9 GHz maximum: a DVFS throttle of
# 100 x (1 - 1.95/3.9) = 50 % once the next tick applied it
"$hwemu" write "${R[@]}" /sys/devices/system/cpu/intel_pstate/max_perf_pct 50 && ok || bad "max_perf_pct"
for _ in $(seq 50); do
    curl -s "$url/metrics" >"$root/metrics"
    grep -q '^joulie_sim_node_throttle_pct{node="intel-0"} 50.000000$' "$root/metrics" && break
    sleep 0.1
done
m() { grep -qxF "$1" "$root/metrics" && ok || bad "/metrics has no line $1: $(grep "${1%%\{*}" "$root/metrics" | head -20)"; }
m 'joulie_sim_requests_total{route="control",method="POST",status="409"} 3'
m 'joulie_sim_requests_total{route="control",method="GET",status="405"} 1'
m 'joulie_sim_requests_total{route="telemetry",method="GET",status="404"} 1'
m 'joulie_sim_requests_total{route="telemetry",method="POST",status="405"} 1'
m 'joulie_sim_request_duration_seconds_count{route="control",method="POST"} 3'
m 'joulie_sim_request_duration_seconds_bucket{route="control",method="POST",le="+Inf"} 3'
m 'joulie_sim_controls_total{node="intel-0",action="rapl.set_power_cap_watts"} 1'
m 'joulie_sim_controls_total{node="intel-0",action="other"} 2'
m 'joulie_sim_control_actions_total{node="intel-0",action="rapl.set_power_cap_watts",result="blocked"} 1'
m 'joulie_sim_control_actions_total{node="intel-0",action="other",result="blocked"} 2'
m 'joulie_sim_node_throttle_pct{node="intel-0"} 50.000000'
m 'joulie_sim_node_throttle_pct{node="vm-0"} 0.000000'
t=$(curl -s "$url/telemetry/intel-0" | json '(d["cpu"]["throttlePct"], d["cpu"]["thermalThrottlePct"])')
[ "$t" = "(50, 0)" ] && ok || bad "telemetry cpu throttles: $t"
ctype=$(curl -s -o "$root/metrics" -w '%{content_type}' "$url/metrics")
[ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ] && ok || bad "metrics content type: $ctype"
grep -q '^joulie_sim_emulate_tick_duration_seconds_count [1-9]' "$root/metrics" && ok || bad "tick histogram"
grep -q '^joulie_sim_emulate_tick_overruns_total ' "$root/metrics" && ok || bad "overruns counter"
if command -v promtool >/dev/null; then
    out=$(promtool check metrics <"$root/metrics" 2>&1) && ok || bad "promtool: $out"
else
    bad "promtool is not installed (.ci/run installs prometheus)"
fi
[ "$(curl -s "$url/debug/nodes" | json 'd["count"]')" = 3 ] && ok || bad "/debug/nodes"

# kill -9 mid-run, restart on the same root: counters continue, writes stay in effect.
before=$("$hwemu" cat "${R[@]}" $Z/energy_uj)
tel_before=$(curl -s "$url/telemetry/intel-0" | json 'd["packages"][0]["energyJoules"]')
kill -9 $pid; wait $pid 2>/dev/null; pid=
sleep 0.3 # readers may go on for one tick (200 ms) past the last publication, then freeze
frozen1=$("$hwemu" cat "${R[@]}" $Z/energy_uj); sleep 0.4
frozen2=$("$hwemu" cat "${R[@]}" $Z/energy_uj)
[ "$frozen1" = "$frozen2" ] && [ "$frozen1" -ge "$before" ] && ok || bad "engine down: $before $frozen1 $frozen2"
start || bad "restart failed: $(tail -3 "$root/serve.err")"
grep -q "3 nodes (3 resumed)" "$root/serve.err" && ok || bad "resume line: $(tail -1 "$root/serve.err")"
after=$("$hwemu" cat "${R[@]}" $Z/energy_uj)
[ "$after" -ge "$frozen2" ] && ok || bad "energy_uj went back across the restart: $frozen2 -> $after"
tel_after=$(curl -s "$url/telemetry/intel-0" | json 'd["packages"][0]["energyJoules"]')
"$py" -c "import sys; sys.exit(0 if $tel_after >= $tel_before else 1)" && ok || bad "telemetry energy went back: $tel_before -> $tel_after"
[ "$("$hwemu" cat "${R[@]}" $Z/constraint_0_power_limit_uw)" = 100000000 ] && ok || bad "PL1 lost on restart"
[ "$("$hwemu" cat "${R[@]}" /sys/devices/system/cpu/cpufreq/policy0/scaling_governor)" = performance ] && ok || bad "governor lost"
kill -TERM $pid; wait $pid; rc=$?; pid=
[ $rc -eq 0 ] && ok || bad "SIGTERM exit $rc"

# A root rendered for another profile stops the start, naming the node and the remedy.
cat >"$root/other.yaml" <<'YAML'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: other}
spec:
  pools:
  - {name: intel, profile: vm-no-powercap, count: 1}
YAML
err=$("$hwemu" serve --root "$root/r" --addr 127.0.0.1:$port --spec "$root/other.yaml" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "node intel-0: .*intel-0.seg was rendered for node intel-0, profile intel-xeon-2s-rapl; make sure no agent uses node intel-0, remove" <<<"$err" && ok || bad "mismatched root: rc=$rc $err"

# Environment variables and usage errors.
err=$(SIM_EMULATE_TICK=fast "$hwemu" serve --root "$root/r2" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q 'SIM_EMULATE_TICK="fast"' <<<"$err" && ok || bad "bad tick: rc=$rc $err"
err=$("$hwemu" serve --root "$root/r2" --workers 0 2>&1); rc=$?
[ $rc -eq 2 ] && ok || bad "bad workers: rc=$rc"
SIM_HWEMU_ROOT="$root/r3" SIM_ADDR=127.0.0.1:$port "$hwemu" serve --tick 100ms 2>"$root/env.err" &
pid=$!
for _ in $(seq 50); do curl -sf "$url/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
[ -f "$root/r3/vm-0.seg" ] && ok || bad "SIM_HWEMU_ROOT not used"
kill -INT $pid; wait $pid; pid=

# Static files (segment.h "Files"): one per layout, kept while a segment names it, removed at the
# next start once none does. r3 holds the smoke spec's three; with vm-0 alone in the spec and
# the other two nodes' segments removed, theirs go and the VM's stays, byte for byte.
[ "$(ls "$root/r3"/*.static | wc -l)" = 3 ] && ok || bad "static files of the smoke spec: $(ls "$root/r3")"
vm_static=$("$py" - "$root/r3/vm-0.seg" <<'PY'
import struct, sys
h = open(sys.argv[1], "rb").read(160)
print("%016x.static" % struct.unpack_from("<Q", h, 152)[0])
PY
)
cp "$root/r3/$vm_static" "$root/vm.static.before"
rm -f "$root/r3/intel-0.seg" "$root/r3/sxm-nopm-0.seg"
cat >"$root/vm.yaml" <<'YAML'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: vm}
spec:
  pools:
  - {name: vm, profile: vm-no-powercap, count: 1}
YAML
SIM_HWEMU_ROOT="$root/r3" "$hwemu" serve --addr 127.0.0.1:$port --spec "$root/vm.yaml" --tick 100ms 2>"$root/prune.err" &
pid=$!
for _ in $(seq 50); do curl -sf "$url/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
kill -INT $pid; wait $pid; pid=
grep -q "removed 2 static files of $root/r3 that no segment uses any longer" "$root/prune.err" && ok ||
    bad "stale static files: $(cat "$root/prune.err")"
[ "$(ls "$root/r3"/*.static)" = "$root/r3/$vm_static" ] && cmp -s "$root/r3/$vm_static" "$root/vm.static.before" && ok ||
    bad "the VM's static file: $(ls "$root/r3")"
finish
