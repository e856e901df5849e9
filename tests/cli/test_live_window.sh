#!/usr/bin/env bash
# Counters between two ticks of a running engine (issue 13, docs/robustness.md "Between two
# ticks"): a tick that woke late must not leave its snapshot's line running past the time the
# next tick restarts it from. HWEMU_DEBUG_LATE_TICK=30ms (a test setting) makes every other tick
# of a 100 ms tick wake 30 ms late, and the tick after it, which wakes on time, publish its nodes
# 30 ms after taking its time: the window a node not yet published sits in at 10,000 nodes,
# made wide on purpose. Meanwhile an agent toggles both packages' PL1 between 40 W and 165 W
# (the power settles down over the 1 s window, so it drops a little at every tick of a cap) and
# tests/soak/counter_reader.c reads four energy counters (package and DRAM) under the shim as fast as it can, with
# open+read+close and with pread on a kept descriptor. Expected: not one read below an earlier
# one. With each tick's line ending one tick after its own time (the rule before this test),
# the reader saw the counters go back by up to the power drop times 30 ms.
# Usage: test_live_window.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid= r1= w1=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; touch "$tmp/stop"; [ -n "$r1" ] && kill $r1 2>/dev/null;
      [ -n "$w1" ] && kill $w1 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
cat >"$tmp/spec.yaml" <<'YAML'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: window}
spec:
  defaults: {baseLoad: {cpuUtil: 0.9}}
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 1}
YAML
gcc -O2 tests/soak/counter_reader.c -o "$tmp/reader" || { bad "reader build"; finish; }
HWEMU_DEBUG_LATE_TICK=30ms serve_start "$url" "$tmp/err" --spec "$tmp/spec.yaml" --root "$tmp/r" \
    --addr 127.0.0.1:$port --tick 100ms || { bad "start: $(cat "$tmp/err")"; finish; }
grep -q "HWEMU_DEBUG_LATE_TICK: every other tick wakes 0.030 s late" "$tmp/err" && ok || bad "no late ticks: $(cat "$tmp/err")"
Z=/sys/class/powercap
files="$Z/intel-rapl:0/energy_uj $Z/intel-rapl:0:0/energy_uj
       $Z/intel-rapl:1/energy_uj $Z/intel-rapl:1:0/energy_uj"
READY_FILE=$tmp/ready "$hwemu" exec --root "$tmp/r" --node intel-0 -- "$tmp/reader" "$tmp/stop" $files \
    >"$tmp/reader.out" 2>&1 &
r1=$!
# the agent: 8 caps and 8 releases, 0.35 s apart (3-4 ticks each), through the shim
"$hwemu" exec --root "$tmp/r" --node intel-0 -- sh -c '
    for i in 1 2 3 4 5 6 7 8; do
        for w in 40000000 165000000; do
            echo $w >/sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw || exit 1
            echo $w >/sys/class/powercap/intel-rapl:1/constraint_0_power_limit_uw || exit 1
            sleep 0.35
        done
    done' >"$tmp/writer.out" 2>&1 &
w1=$!
for _ in $(seq 400); do [ -f "$tmp/ready" ] && break; sleep 0.05; done
[ -f "$tmp/ready" ] && ok || bad "the reader never started: $(cat "$tmp/reader.out")"
wait $w1 && ok || bad "the agent's writes failed: $(cat "$tmp/writer.out")"
w1=
touch "$tmp/stop"
wait $r1
r1=
# the caps reached the physics: 32 accepted writes, and the packages were held below their power
accepted=$(curl -s "$url/debug/events?node=intel-0&limit=1000" | grep -o '"joulie.sim.write.accepted"' | wc -l)
[ "$accepted" -ge 32 ] && ok || bad "only $accepted accepted writes"
if grep -Eq '^reads [1-9][0-9]{4,} decreases 0 errors 0 rises [0-9]{3,}$' "$tmp/reader.out"; then ok; else
    bad "$(grep -c DECREASE "$tmp/reader.out") decreases: $(head -3 "$tmp/reader.out" | tr '\n' ' ') $(tail -1 "$tmp/reader.out")"
fi
echo "reader: $(tail -1 "$tmp/reader.out")"
kill -TERM $pid; wait $pid; pid=
finish
