#!/usr/bin/env bash
# One engine per root (docs/robustness.md "One engine per root", issue 25 item 1): a second
# `hwemu serve` or `hwemu run` on a live root exits 1 naming the root and the holder's pid and
# touches nothing; two engines started at the same instant give exactly one engine (5 rounds);
# after the refused second engine, `hwemu exec` still sees the first one running (before the
# lock, the second rewrote every header's engine_pid and exec then called the live engine "not
# running"); a kill -9'd engine leaves a .lock file that does not block the next start (the lock
# is the kernel's flock, released with the process).
# Usage: test_root_lock.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$(realpath "$1")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d /tmp/hwemu-rootlock.XXXXXX)
pid= pid2=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; [ -n "$pid2" ] && kill -9 $pid2 2>/dev/null; rm -rf "$tmp"' EXIT
root=$tmp/root

# 1. A second serve on a live root: refused, the first keeps running and ticking.
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/a.err" --root "$root" --addr 127.0.0.1:$port --tick 100ms || bad "first engine: $(cat "$tmp/a.err")"
first=$pid
[ "$(cat "$root/.lock")" = "$first" ] && ok || bad ".lock holds $(cat "$root/.lock"), not the engine's pid $first"
seg_before=$(stat -c %Y.%s "$root/intel-0.seg")
port2=$(free_port)
timeout 20 "$hwemu" serve --root "$root" --addr 127.0.0.1:$port2 --tick 100ms >/dev/null 2>"$tmp/b.err"
rc=$?
[ $rc = 1 ] && grep -qF "another engine (pid $first) serves $root: stop it or choose another --root" "$tmp/b.err" \
    && ok || bad "second serve: exit $rc, $(cat "$tmp/b.err")"
[ "$(grep -c . "$tmp/b.err")" = 1 ] && ok || bad "second serve: more than one line: $(cat "$tmp/b.err")"
# 2. A second `hwemu run` on the same root: refused the same way, its trace never started.
printf '{"type":"job","jobId":"j1","work":{"cpuUnits":10}}\n' >"$tmp/t.jsonl"
timeout 20 "$hwemu" run --root "$root" --trace "$tmp/t.jsonl" --speed max >/dev/null 2>"$tmp/c.err"
rc=$?
[ $rc = 1 ] && grep -qF "another engine (pid $first) serves $root" "$tmp/c.err" && ok \
    || bad "second run: exit $rc, $(cat "$tmp/c.err")"
# (the first engine made the runs directory at its start: the refused run must leave it empty)
[ -z "$(ls -A "$root/runs" 2>/dev/null)" ] && ok || bad "the refused run made a run in $root/runs: $(ls "$root/runs")"
# 3. The first engine is untouched: still alive, its lock file still names it, and exec sees it
#    running (exec compares the header's engine_pid with the living processes).
kill -0 $first 2>/dev/null && ok || bad "the first engine died"
[ "$(cat "$root/.lock")" = "$first" ] && ok || bad ".lock now holds $(cat "$root/.lock")"
out=$(timeout 20 "$hwemu" exec --root "$root" --node intel-0 -- cat /sys/class/powercap/intel-rapl:0/energy_uj 2>&1)
rc=$?
[ $rc = 0 ] && [[ "$out" =~ ^[0-9]+$ ]] && ok || bad "exec after the refused second engine: rc $rc: $out"
# 4. kill -9: the .lock file stays, yet the next engine starts (no stale lock).
kill -9 $first
wait $first 2>/dev/null
pid=
[ -e "$root/.lock" ] && ok || bad "no .lock left after kill -9 (the test expects the file to stay)"
serve_start "$url" "$tmp/d.err" --root "$root" --addr 127.0.0.1:$port --tick 100ms && ok \
    || bad "start after kill -9: $(cat "$tmp/d.err")"
kill $pid 2>/dev/null
wait $pid 2>/dev/null
pid=

# 5. Two engines started at the same instant, 5 rounds: exactly one comes up, the other exits 1
#    with the message. Both wait on a FIFO so that they start together.
for round in 1 2 3 4 5; do
    r=$tmp/race$round
    mkfifo "$tmp/go$round"
    pa=$(free_port)
    pb=$(free_port)
    (read -r _ <"$tmp/go$round"; exec "$hwemu" serve --root "$r" --addr 127.0.0.1:$pa --tick 100ms) 2>"$tmp/ra.err" &
    pid=$!
    (read -r _ <"$tmp/go$round"; exec "$hwemu" serve --root "$r" --addr 127.0.0.1:$pb --tick 100ms) 2>"$tmp/rb.err" &
    pid2=$!
    sleep 0.2
    echo go >"$tmp/go$round"   # one writer, two readers: both see the line or EOF together
    up=0 refused=0
    for _ in $(seq 300); do   # up to 15 s for both to settle
        a=$(curl -sf "http://127.0.0.1:$pa/healthz" 2>/dev/null)
        b=$(curl -sf "http://127.0.0.1:$pb/healthz" 2>/dev/null)
        na=0 nb=0
        kill -0 $pid 2>/dev/null || na=1
        kill -0 $pid2 2>/dev/null || nb=1
        if { [ "$a" = ok ] && [ $nb = 1 ]; } || { [ "$b" = ok ] && [ $na = 1 ]; }; then break; fi
        [ $na = 1 ] && [ $nb = 1 ] && break
        sleep 0.05
    done
    [ "$(curl -sf "http://127.0.0.1:$pa/healthz" 2>/dev/null)" = ok ] && up=$((up + 1))
    [ "$(curl -sf "http://127.0.0.1:$pb/healthz" 2>/dev/null)" = ok ] && up=$((up + 1))
    refused=$(cat "$tmp/ra.err" "$tmp/rb.err" | grep -c "another engine (pid [0-9]*) serves $r")
    [ $up = 1 ] && [ "$refused" = 1 ] && ok \
        || bad "round $round: $up engines up, $refused refused: $(cat "$tmp/ra.err" "$tmp/rb.err")"
    kill -9 $pid $pid2 2>/dev/null
    wait $pid $pid2 2>/dev/null
    pid= pid2=
done
finish
