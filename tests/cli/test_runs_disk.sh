#!/usr/bin/env bash
# A full file system during a run (docs/robustness.md "Runs"): the disk is played full by
# tests/soak/enospc_preload.c (LD_PRELOAD: while a flag file exists, every write to a file under
# the runs directory is cut short and the next one fails with ENOSPC, as when a file system's last
# blocks go), which needs no root, no mount and no real disk filled beside other tests.
#   A  the disk is full for a while in the middle of `hwemu run --speed max`, then has room again:
#      jobs.jsonl and otlp/*.jsonl hold whole JSON lines only, each job once and every job of the
#      trace (the lines held back are written once there is room); stderr and events.jsonl name
#      the file and the errno; summary.json counts the failed writes and says no line was lost.
#   B  SIGTERM while the disk is full: no state.json.tmp or summary.json.tmp left, no empty
#      summary.json, the last good state.json stays; once there is room the same command resumes
#      the run from it to the end, every job once.
set -u
hwemu=$(realpath "${1:-build/hwemu}")
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
command -v gcc >/dev/null || { echo "SKIP: gcc not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 tests/soak/enospc_preload.c -o "$tmp/enospc.so" -ldl || { bad "preload build"; finish; }
spec=tests/runs/cluster.yaml
export SIM_RUN_CHECKPOINT_INTERVAL=100ms
"$hwemu" trace generate --jobs 24 --seed 7 --time-scale 4 --out "$tmp/trace.jsonl" 2>/dev/null || { bad "trace"; finish; }
njobs=$(grep -c '"type":"job"' "$tmp/trace.jsonl")
args=(run --spec "$spec" --trace "$tmp/trace.jsonl" --speed max --batch 1)
export ENOSPC_FLAG=$tmp/full
# the sanitizer build's hwemu needs its ASan runtime first in the preload list
preload="$(ldd "$hwemu" | awk '/libasan/ {print $3}') $tmp/enospc.so"

# whole DIR: every line of DIR's jobs.jsonl and otlp files is whole JSON, each job once, all of them
whole() {
    /usr/bin/python3 - "$1" "$njobs" <<'EOF'
import json, sys, glob
d, n = sys.argv[1], int(sys.argv[2])
bad = []
for p in [d + "/jobs.jsonl"] + glob.glob(d + "/otlp/*.jsonl"):
    for k, l in enumerate(open(p, "rb").read().split(b"\n")[:-1]):
        try:
            json.loads(l)
        except ValueError:
            bad.append("%s:%d: not a whole JSON line: %r" % (p, k + 1, l[:60]))
ids = [json.loads(l)["jobId"] for l in open(d + "/jobs.jsonl", "rb")]
if len(ids) != n or len(set(ids)) != n:
    bad.append("jobs.jsonl: %d lines, %d jobs, the trace has %d" % (len(ids), len(set(ids)), n))
print("; ".join(bad[:5]))
sys.exit(1 if bad else 0)
EOF
}

# ---- A: full for a while ------------------------------------------------------------------------
root=$tmp/a
mkdir -p "$root/runs"
ENOSPC_UNDER=$(realpath "$root/runs")/ LD_PRELOAD="$preload" "$hwemu" "${args[@]}" --root "$root" \
    >"$tmp/A.out" 2>"$tmp/A.err" &
p=$!
for _ in $(seq 500); do grep -q " on [0-9]* nodes from " "$tmp/A.err" && break; sleep 0.01; done
touch "$ENOSPC_FLAG"
for _ in $(seq 400); do grep -q "cannot write .*jobs.jsonl: No space left on device" "$tmp/A.err" && break; sleep 0.05; done
sleep 0.5
rm -f "$ENOSPC_FLAG"
wait $p && ok || bad "A: the run did not complete: $(tail -3 "$tmp/A.err")"
d=$(ls -d "$root"/runs/run-*)
grep -q "cannot write $d/jobs.jsonl: No space left on device; [0-9]* lines\? waits\? and" "$tmp/A.err" && ok ||
    bad "A: no message naming jobs.jsonl and ENOSPC: $(cat "$tmp/A.err")"
grep -q "jobs.jsonl is written again" "$tmp/A.err" && ok || bad "A: no message that jobs.jsonl is written again"
jq -se 'any(.[]; .event == "joulie.sim.run.output_failed" and (.attributes.file | endswith("jobs.jsonl")) and
    .attributes.error == "No space left on device")' "$root/events.jsonl" >/dev/null && ok || bad "A: no joulie.sim.run.output_failed event"
if out=$(whole "$d"); then ok; else bad "A: $out"; fi
jq -e '.outputProblems["jobs.jsonl"] | .failedWrites > 0 and .linesLost == 0' "$d/summary.json" >/dev/null && ok ||
    bad "A: summary.json does not count the failed writes: $(jq -c .outputProblems "$d/summary.json")"
jq -e ".jobs.completed == $njobs" "$d/summary.json" >/dev/null && ok || bad "A: summary.json: not every job completed"

# ---- B: SIGTERM on a full disk --------------------------------------------------------------------
root=$tmp/b
mkdir -p "$root/runs"
export ENOSPC_UNDER=$(realpath "$root/runs")/
LD_PRELOAD="$preload" "$hwemu" "${args[@]}" --root "$root" >"$tmp/B.out" 2>"$tmp/B.err" &
p=$!
for _ in $(seq 500); do grep -q " on [0-9]* nodes from " "$tmp/B.err" && break; sleep 0.01; done
sleep 0.7
touch "$ENOSPC_FLAG"
sleep 0.3
kill -TERM $p
wait $p
rc=$?
rm -f "$ENOSPC_FLAG"
d=$(ls -d "$root"/runs/run-*)
if [ $rc -eq 0 ]; then
    echo "B: the run ended before the SIGTERM: nothing to check"
else
    ls "$d"/*.tmp >/dev/null 2>&1 && bad "B: temporary files left: $(ls "$d")" || ok
    [ -e "$d/summary.json" ] && bad "B: summary.json written on a full disk ($(stat -c %s "$d/summary.json") bytes)" || ok
    jq -e .runId "$d/state.json" >/dev/null && ok || bad "B: the last good state.json did not survive"
    grep -q "cannot write $d/state.json: No space left on device" "$tmp/B.err" && ok ||
        bad "B: no message naming state.json and ENOSPC: $(cat "$tmp/B.err")"
    "$hwemu" "${args[@]}" --root "$root" >"$tmp/B2.out" 2>"$tmp/B2.err" && ok || bad "B: the resumed run did not complete"
    grep -q "resumes at" "$tmp/B2.err" && ok || bad "B: the run was not resumed: $(cat "$tmp/B2.err")"
    [ "$(ls -d "$root"/runs/run-* | wc -l)" -eq 1 ] && ok || bad "B: another run was started"
    if out=$(whole "$d"); then ok; else bad "B: $out"; fi
fi
finish
