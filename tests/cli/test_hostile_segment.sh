#!/usr/bin/env bash
# A hostile segment (issue 13): tests/soak/seg_vandal.c does to intel-2's segment what a
# hostile agent could (hostile header counts and offsets with substep_ns = 0, high-water marks
# at 2^62, a junk event ring, slots that never settle, a publication generation and the value
# journal bumped in a loop, random bytes, truncation, deletion) while the engine runs three
# nodes; then to the static file the three share (junk entries, truncation, deletion).
# Expected (docs/robustness.md): the engine never stops or stalls; the readers of intel-0 (shim)
# and intel-1 (seccomp supervisor, a static reader) never see a decrease or an error; intel-2's
# reader survives (EIO while its file is short, never SIGBUS); each damage is a
# joulie.sim.segment.damaged event and one stderr line for intel-2 only, and intel-2 reads again
# once repaired. Then, with the engine down: marks at 2^62 on intel-0 move its energy by at most
# one step, and intel-1 with a broken header is rendered again with its counters salvaged.
# Usage: test_hostile_segment.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid= readers=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; touch "$tmp/stop"; for r in $readers; do kill $r 2>/dev/null; done;
      rm -rf "$tmp"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
cat >"$tmp/spec.yaml" <<'YAML'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: hostile}
spec:
  defaults: {baseLoad: {cpuUtil: 0.6}}
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 3}
YAML
start() { serve_start "$url" "$tmp/err" --spec "$tmp/spec.yaml" --root "$tmp/r" --addr 127.0.0.1:$port --tick 100ms; }
gcc -O2 tests/soak/counter_reader.c -o "$tmp/reader" &&
    gcc -O2 -static tests/soak/counter_reader.c -o "$tmp/reader-static" &&
    gcc -O2 -Iengine/segment tests/soak/seg_vandal.c engine/segment/segment.c -o "$tmp/vandal" ||
    { bad "helper builds"; finish; }
start || { bad "start: $(cat "$tmp/err")"; finish; }
Z=/sys/class/powercap
files="$Z/intel-rapl:0/energy_uj $Z/intel-rapl:1/energy_uj $Z/intel-rapl:0/constraint_0_power_limit_uw"
X() { "$hwemu" exec --root "$tmp/r" --node "$@"; }
READY_FILE=$tmp/ready0 X intel-0 -- "$tmp/reader" "$tmp/stop" $files >"$tmp/r0.out" 2>&1 & readers="$readers $!"
READY_FILE=$tmp/ready1 X intel-1 --intercept seccomp -- "$tmp/reader-static" "$tmp/stop" $files >"$tmp/r1.out" 2>&1 &
readers="$readers $!"
READY_FILE=$tmp/ready2 X intel-2 -- "$tmp/reader" "$tmp/stop" $files >"$tmp/r2.out" 2>&1 & readers="$readers $!"
# and the victim's views computed at read time (seg_view*.c), which must survive too
READY_FILE=$tmp/ready3 X intel-2 -- "$tmp/reader" "$tmp/stop" /proc/stat /proc/meminfo /proc/uptime >"$tmp/r3.out" 2>&1 &
readers="$readers $!"
# the attacks start once every reader has its files open (a slow start must not meet a broken file)
for _ in $(seq 400); do [ -f "$tmp/ready0" ] && [ -f "$tmp/ready1" ] && [ -f "$tmp/ready2" ] && [ -f "$tmp/ready3" ] && break; sleep 0.05; done
[ -f "$tmp/ready0" ] && [ -f "$tmp/ready1" ] && [ -f "$tmp/ready2" ] && [ -f "$tmp/ready3" ] && ok || bad "the readers did not start"
sleep 0.3
victim=$tmp/r/intel-2.seg
alive() { kill -0 $pid 2>/dev/null && curl -sf --max-time 2 "$url/healthz" >/dev/null && ok || bad "engine gone after: $1"; }
ticks() { curl -s "$url/metrics" | awk '/^joulie_sim_emulate_tick_duration_seconds_count/{print $2}'; }
attack() { "$tmp/vandal" "$victim" "$@" || bad "vandal $*"; sleep "${wait_s:-0.4}"; alive "$*"; }
t0=$(ticks)
attack header
attack hwm
attack ring
attack slots
attack gen 300
attack journal 300
attack random 1 2000
attack random 2 20000
wait_s=1.2 attack truncate 100000
wait_s=1.2 attack truncate 0
rm -f "$victim"; sleep 1.2; alive "rm"
[ -f "$victim" ] && ok || bad "the deleted segment was not put back"
t1=$(ticks)
[ -n "$t0" ] && [ -n "$t1" ] && [ "$t1" -gt $((t0 + 40)) ] && ok || bad "the tick stalled: $t0 -> $t1 ticks"
v=$("$hwemu" cat --root "$tmp/r" --node intel-2 $Z/intel-rapl:0/energy_uj 2>&1)
[[ "$v" =~ ^[0-9]+$ ]] && ok || bad "intel-2 does not read again once repaired: $v"
touch "$tmp/stop"
for r in $readers; do wait $r || bad "a reader exited with $?"; done
readers=
for r in r0 r1; do
    grep -Eq '^reads [1-9][0-9]* decreases 0 errors 0 rises [0-9]+$' "$tmp/$r.out" && ok ||
        bad "$r (another node's reader) noticed: $(head -3 "$tmp/$r.out" | tr '\n' ' ') $(tail -1 "$tmp/$r.out")"
done
for r in r2 r3; do
    grep -Eq '^reads [0-9]+ decreases [0-9]+ errors [0-9]+ rises [0-9]+$' "$tmp/$r.out" && ok ||
        bad "the victim's reader $r did not survive: $(tail -3 "$tmp/$r.out")"
done
"$py" - "$tmp/r/events.jsonl" <<'PY' && ok || bad "damage events"
import json, sys
kinds = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] != "joulie.sim.segment.damaged":
        continue
    assert e["node"] == "intel-2", line
    kinds[e["attributes"]["damage"]] = kinds.get(e["attributes"]["damage"], 0) + 1
missing = [k for k in ("header", "truncated", "deleted") if k not in kinds]
assert not missing, ("no event for", missing, kinds)
PY
grep -q "node intel-2: segment .*: its header was changed" "$tmp/err" && ok || bad "no header line on stderr"
grep -q "node intel-2: segment .*the file shrank" "$tmp/err" && ok || bad "no truncation line on stderr"
grep -q "node intel-2: segment .*deleted" "$tmp/err" && ok || bad "no deletion line on stderr"
grep -q "node intel-[01]: segment" "$tmp/err" && bad "other nodes reported damaged: $(grep 'node intel-[01]: segment' "$tmp/err")" || ok
[ "$(grep -c 'node intel-2: segment .*its header was changed' "$tmp/err")" -eq 1 ] && ok || bad "more than one line per kind"

# The static file the three nodes share (segment.h "Files"): junk entries, then cut short, then
# removed. Every node's readers would see it, so each is repaired within a tick or two, reported
# once with the file's path, and every node reads again.
static=$(ls "$tmp"/r/*.static)
[ "$(echo "$static" | wc -w)" = 1 ] && ok || bad "the three nodes of one pool do not share one static file: $static"
[ "$(stat -c %a "$static")" = 444 ] && ok || bad "the static file is writable on disk: $(stat -c %a "$static")"
wait_s=0.5 attack entries
wait_s=1.2 attack static-truncate 1000
rm -f "$static"; sleep 1.2; alive "rm static"
[ -f "$static" ] && ok || bad "the deleted static file was not put back"
for node in intel-0 intel-2; do
    v=$("$hwemu" cat --root "$tmp/r" --node $node $Z/intel-rapl:0/energy_uj 2>&1)
    [[ "$v" =~ ^[0-9]+$ ]] && ok || bad "$node does not read after the static file's repairs: $v"
done
"$py" - "$tmp/r/events.jsonl" "$static" <<'PY' && ok || bad "static file damage events"
import json, sys
kinds = set()
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "joulie.sim.segment.damaged" and e["attributes"]["file"] == sys.argv[2]:
        kinds.add(e["attributes"]["damage"])
assert kinds == {"static", "truncated", "deleted"}, kinds
PY
grep -q "static file $static: its entries, strings or parameters were changed" "$tmp/err" && ok ||
    bad "no stderr line for the static file: $(grep static "$tmp/err")"

# Engine down: marks at 2^62 (intel-0), a broken header (intel-1), then a restart.
curl -s "$url/debug/energy" >"$tmp/before.json"
kill -9 $pid; wait $pid 2>/dev/null; pid=
"$tmp/vandal" "$tmp/r/intel-0.seg" hwm && "$tmp/vandal" "$tmp/r/intel-1.seg" header || bad "vandal while down"
start || { bad "restart: $(tail -3 "$tmp/err")"; finish; }
curl -s "$url/debug/energy" >"$tmp/after.json"
"$py" - "$tmp/before.json" "$tmp/after.json" <<'PY' && ok || bad "resume after hostile marks"
import json, sys
b = {n["node"]: n["energyJoules"] for n in json.load(open(sys.argv[1]))["nodes"]}
a = {n["node"]: n["energyJoules"] for n in json.load(open(sys.argv[2]))["nodes"]}
for name in ("intel-0", "intel-1", "intel-2"):
    # never back; at most one step (20 kW over three 100 ms ticks, per counter) forward
    assert b[name] <= a[name] < b[name] + 7 * 6000, (name, b[name], a[name])
PY
grep -q "node intel-1: segment .*rendered again; its counters continue" "$tmp/err" && ok ||
    bad "intel-1's broken header at start: $(grep intel-1 "$tmp/err")"
kill -TERM $pid; wait $pid; pid=
finish
