#!/usr/bin/env bash
# Crash soak (issue 13): 30 kill -9 of the engine at random instants, each followed by a
# restart on the same root, while readers on both routes read energy counters as fast as they
# can: tests/soak/counter_reader.c under the shim (intel-0) and under the seccomp supervisor
# (`hwemu exec --intercept seccomp`, intel-1), each with open+read+close and with pread on a
# descriptor kept open. Expected: not one read below an earlier one (segment.h "Resume": the
# dead engine's last snapshot keeps advancing to its horizon while the restart reads the
# segment, so the restart resumes from that horizon), and no read error.
# Usage: test_crash_soak.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid= r1= r2=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; touch "$tmp/stop"; [ -n "$r1" ] && kill $r1 2>/dev/null;
      [ -n "$r2" ] && kill $r2 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
cat >"$tmp/spec.yaml" <<'YAML'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: soak}
spec:
  defaults: {baseLoad: {cpuUtil: 0.9}}
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 2}
YAML
# A 300 ms tick: the horizon of the last snapshot is well after the instant of most kills.
start() { serve_start "$url" "$tmp/err" --spec "$tmp/spec.yaml" --root "$tmp/r" --addr 127.0.0.1:$port --tick 300ms; }
# dynamic for the shim; static for the supervisor (a static binary cannot load the shim, so
# every one of its calls is a system call the supervisor answers)
gcc -O2 tests/soak/counter_reader.c -o "$tmp/reader" || { bad "reader build"; finish; }
gcc -O2 -static tests/soak/counter_reader.c -o "$tmp/reader-static" || { bad "static reader build"; finish; }
start || { bad "first start: $(cat "$tmp/err")"; finish; }
Z=/sys/class/powercap
files="$Z/intel-rapl:0/energy_uj $Z/intel-rapl:0:0/energy_uj $Z/intel-rapl:1/energy_uj $Z/intel-rapl:1:0/energy_uj"
READY_FILE=$tmp/ready1 "$hwemu" exec --root "$tmp/r" --node intel-0 -- "$tmp/reader" "$tmp/stop" $files \
    >"$tmp/shim.out" 2>&1 &
r1=$!
READY_FILE=$tmp/ready2 "$hwemu" exec --root "$tmp/r" --node intel-1 --intercept seccomp -- "$tmp/reader-static" \
    "$tmp/stop" $files >"$tmp/seccomp.out" 2>&1 &
r2=$!
for _ in $(seq 400); do [ -f "$tmp/ready1" ] && [ -f "$tmp/ready2" ] && break; sleep 0.05; done
sleep 0.3
restarts=0
for round in $(seq 30); do
    sleep "0.$(printf %03d $((RANDOM % 400 + 20)))"
    kill -9 $pid; wait $pid 2>/dev/null; pid=
    start || { bad "restart $round: $(tail -3 "$tmp/err")"; break; }
    restarts=$((restarts + 1))
done
sleep 0.3
touch "$tmp/stop"
wait $r1; wait $r2; r1= r2=
[ $restarts -eq 30 ] && ok || bad "only $restarts restarts"
for route in shim seccomp; do
    out=$tmp/$route.out
    if grep -Eq '^reads [1-9][0-9]* decreases 0 errors 0 rises [0-9]{3,}$' "$out"; then ok; else
        bad "$route route: $(grep -c DECREASE "$out") decreases: $(head -3 "$out" | tr '\n' ' ') $(tail -1 "$out")"; fi
    echo "$route: $(tail -1 "$out")"
done
grep -c "2 nodes (2 resumed)" "$tmp/err" | grep -q '^30$' && ok || bad "not every restart resumed: $(grep nodes "$tmp/err" | sort | uniq -c)"
kill -TERM $pid; wait $pid; pid=
finish
