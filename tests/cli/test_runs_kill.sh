#!/usr/bin/env bash
# A run survives kill -9 at any instant (docs/runs.md "Restarts", docs/robustness.md "Runs"):
#   A  `hwemu run --speed max` of a generated trace killed -9 at random instants (the first kill
#      right after it printed its start line) for HWEMU_KILL_LOOP_SECONDS (default 40), then run
#      to its end, against a clean run of the same trace on a fresh root (the expected values:
#      docs/runs.md "Repeatability" makes a clean --speed max run's outputs a function of the
#      spec and trace alone): the same jobs, each once in jobs.jsonl and in otlp/logs.jsonl; the
#      same node, CPUs, GPUs, queue, start and end times for every job and the same makespan;
#      every job that did not run across a resume after a crash has the clean run's energies to
#      the microjoule, and one that did is within 20 J per such resume (the nodes' power settles
#      again after a restart: measured up to 2.5 J; see docs/runs.md); summary.json counts every
#      resume the engines said they made; each OTLP metrics point once, the clean run's values;
#      course.jsonl each line once, the clean run's times and job counts.
#   B  SIGTERM suspends `hwemu run` (exit 3, state "suspended", state.json kept, no summary);
#      the same command resumes it to the end, with the clean run's jobs and course.jsonl.
#   C  `hwemu serve`: GET /runs/<id>'s completed count never goes back across kill -9 restarts,
#      the run ended stays listed as it ended (summary.json) after another, with its jobs.jsonl,
#      and a run directory without a usable state is listed as failed with the reason.
#   D  `hwemu serve` killed -9 as soon as POST /runs answered: the restart resumes that run.
set -u
hwemu=$(realpath "${1:-build/hwemu}")
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
budget=${HWEMU_KILL_LOOP_SECONDS:-40}
spec=tests/runs/cluster.yaml
export SIM_RUN_CHECKPOINT_INTERVAL=100ms # checkpoints every 300 ticks (docs/runs.md), not every 30 s
"$hwemu" trace generate --jobs 24 --seed 7 --time-scale 4 --out "$tmp/trace.jsonl" 2>/dev/null ||
    { echo "FAIL: trace generate"; exit 1; }
# --batch 1: every node steps every tick, so a run lasts long enough to be killed anywhere
args=(run --spec "$spec" --trace "$tmp/trace.jsonl" --speed max --batch 1 --json)

# ---- the clean run --------------------------------------------------------------------------
"$hwemu" "${args[@]}" --root "$tmp/clean" >"$tmp/clean.json" 2>"$tmp/clean.err" || { cat "$tmp/clean.err"; bad "clean run"; finish; }
clean=$(ls -d "$tmp"/clean/runs/run-*)

# compare DIR: the run in DIR against the clean one (python prints what differs)
compare() {
    /usr/bin/python3 - "$clean" "$1" "$2" <<'EOF'
import json, sys, glob
clean, got, stderr_glob = sys.argv[1], sys.argv[2], sys.argv[3]
bad = []
def lines(p):
    out = []
    for n, l in enumerate(open(p, "rb").read().split(b"\n")[:-1]):
        try:
            out.append(json.loads(l))
        except ValueError:
            bad.append("%s:%d: not a whole JSON line: %r" % (p, n + 1, l[:80]))
    return out
a, b = lines(clean + "/jobs.jsonl"), lines(got + "/jobs.jsonl")
ids_b = [j["jobId"] for j in b]
dup = sorted({i for i in ids_b if ids_b.count(i) > 1})
if dup:
    bad.append("jobs in jobs.jsonl more than once: %s" % dup[:5])
if sorted(j["jobId"] for j in a) != sorted(set(ids_b)):
    bad.append("job sets differ: %d clean, %d here" % (len(a), len(set(ids_b))))
sa, sb = json.load(open(clean + "/summary.json")), json.load(open(got + "/summary.json"))
resumes = sb.get("resumes", [])
# an engine says it resumed after its resume's checkpoint: a kill between the two leaves one
# counted and not said; each start but the first resumes at most once
said = sum(open(f, "rb").read().count(b" resumes at ") for f in glob.glob(stderr_glob))
starts = len(glob.glob(stderr_glob))
if not said <= len(resumes) <= starts - 1:
    bad.append("summary.json counts %d resumes; the engines said %d in %d starts" % (len(resumes), said, starts))
crash_at = [r["fromSec"] for r in resumes if r["after"] == "crash" and r["fromSec"] > 0]
if sa["makespanSec"] != sb["makespanSec"]:
    bad.append("makespan %s, clean %s" % (sb["makespanSec"], sa["makespanSec"]))
ib = {j["jobId"]: j for j in b}
worst = 0
for j in a:
    k = ib.get(j["jobId"])
    if not k:
        continue
    for f in ("state", "node", "cpus", "gpus", "queuedSec", "startSec", "endSec", "work"):
        if j[f] != k[f]:
            bad.append("%s: %s %s, clean %s" % (j["jobId"], f, k[f], j[f]))
    # resumes after a crash while the job ran: the nodes' power settles again after the restart
    n = sum(1 for t in crash_at if j["startSec"] <= t < j["endSec"])
    for p in ("cpu", "dram", "gpu"):
        d = abs(k["energyMicrojoules"][p] - j["energyMicrojoules"][p])
        worst = max(worst, d)
        if d > 20e6 * n:
            bad.append("%s: %s energy %d uJ, clean %d uJ (%d resumes while it ran)" %
                       (j["jobId"], p, k["energyMicrojoules"][p], j["energyMicrojoules"][p], n))
def events(p):
    out = []
    for o in lines(p):
        for rl in o["resourceLogs"]:
            for sl in rl["scopeLogs"]:
                for r in sl["logRecords"]:
                    at = {x["key"]: list(x["value"].values())[0] for x in r["attributes"]}
                    out.append((at.get("jobId"), r["eventName"]))
    return out
ea, eb = events(clean + "/otlp/logs.jsonl"), events(got + "/otlp/logs.jsonl")
if sorted(ea) != sorted(eb) or len(set(eb)) != len(eb):
    bad.append("otlp/logs.jsonl: %d events (%d distinct), clean %d" % (len(eb), len(set(eb)), len(ea)))
def points(p):
    out = []
    for o in lines(p):
        ms = o["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]
        h = [m for m in ms if m["name"] == "joulie_sim_job_completion_seconds"][0]["histogram"]["dataPoints"][0]
        out.append((int(h["timeUnixNano"]) - int(h["startTimeUnixNano"]), h["count"]))
    return out
if points(clean + "/otlp/metrics.jsonl") != points(got + "/otlp/metrics.jsonl"):
    bad.append("otlp/metrics.jsonl: its points are not the clean run's, each once")
# course.jsonl (engine/runs/run_course.c): whole lines, each interval's line once (nothing lost
# or doubled across the resumes), the clean run's times and job counts (the jobs' times are the
# clean run's, above); energies may differ by the resume gaps
ca, cb = lines(clean + "/course.jsonl"), lines(got + "/course.jsonl")
ta, tb = [c["timeSec"] for c in ca], [c["timeSec"] for c in cb]
if tb != ta:
    bad.append("course.jsonl: times %s... (%d lines), the clean run's %s... (%d)" % (tb[:4], len(tb), ta[:4], len(ta)))
elif [c["jobs"] for c in cb] != [c["jobs"] for c in ca]:
    bad.append("course.jsonl: jobs by state differ from the clean run's")
for x in bad[:12]:
    print(x)
print("resumes %d (after a crash at %s s), worst energy difference %d uJ" % (len(resumes), crash_at[:8], worst),
      file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}

# ---- A: kill -9 at random instants ------------------------------------------------------------
root=$tmp/killed
kills=0 i=0 done_=0
end=$((SECONDS + budget))
while [ $SECONDS -lt $end ]; do
    i=$((i + 1))
    "$hwemu" "${args[@]}" --root "$root" >"$tmp/A.$i.out" 2>"$tmp/A.$i.err" &
    p=$!
    if [ $i -eq 1 ]; then # right after it says the run started: the first checkpoint is there
        for _ in $(seq 400); do grep -q " on [0-9]* nodes from " "$tmp/A.$i.err" && break; sleep 0.01; done
    else
        sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
        [ $((RANDOM % 3)) -eq 0 ] && sleep 1
    fi
    if kill -9 $p 2>/dev/null; then kills=$((kills + 1)); fi
    wait $p 2>/dev/null && { done_=1; break; }
    if [ $i -eq 1 ] && ! ls "$root"/runs/run-*/state.json >/dev/null 2>&1; then
        bad "A: killed right after its start line, the run has no state.json (item 5: the first checkpoint)"
    fi
done
if [ $done_ -eq 0 ]; then
    "$hwemu" "${args[@]}" --root "$root" >"$tmp/A.last.out" 2>"$tmp/A.last.err" || bad "A: the run after $kills kills did not complete"
fi
n=$(ls -d "$root"/runs/run-* | wc -l)
[ "$n" -eq 1 ] && ok || bad "A: $n run directories after $kills kills (one run, resumed each time)"
if out=$(compare "$(ls -d "$root"/runs/run-* | head -1)" "$tmp/A.*.err" 2>"$tmp/A.cmp"); then ok; else bad "A: $out"; fi
echo "A: $kills kills in $i starts; $(cat "$tmp/A.cmp")"

# ---- B: SIGTERM suspends, the same command resumes ---------------------------------------------
root=$tmp/term
"$hwemu" "${args[@]}" --root "$root" >"$tmp/B.1.out" 2>"$tmp/B.1.err" &
p=$!
for _ in $(seq 400); do grep -q " on [0-9]* nodes from " "$tmp/B.1.err" && break; sleep 0.01; done
sleep 1
kill -TERM $p
wait $p
rc=$?
if [ $rc -eq 3 ]; then
    [ "$(jq -r .state "$tmp/B.1.out")" = suspended ] && ok || bad "B: SIGTERM: state $(jq -r .state "$tmp/B.1.out")"
    ls "$root"/runs/run-*/state.json >/dev/null 2>&1 && ok || bad "B: SIGTERM left no state.json"
    ls "$root"/runs/run-*/summary.json >/dev/null 2>&1 && bad "B: a suspended run wrote summary.json" || ok
    "$hwemu" "${args[@]}" --root "$root" >"$tmp/B.2.out" 2>"$tmp/B.2.err" && ok || bad "B: the resumed run did not complete"
    grep -q "resumes at .* after a stop" "$tmp/B.2.err" && ok || bad "B: the second command did not resume: $(cat "$tmp/B.2.err")"
    [ "$(ls -d "$root"/runs/run-* | wc -l)" -eq 1 ] && ok || bad "B: a second run was started"
    jq -e '.resumes | length == 1 and .[0].after == "suspend"' "$root"/runs/run-*/summary.json >/dev/null && ok ||
        bad "B: summary.json does not count the resume"
    d=$(ls -d "$root"/runs/run-*)
    /usr/bin/python3 - "$clean/jobs.jsonl" "$d/jobs.jsonl" <<'EOF' && ok || bad "B: jobs differ from the clean run's"
import json, sys
a = {j["jobId"]: j for j in map(json.loads, open(sys.argv[1]))}
b = [json.loads(l) for l in open(sys.argv[2])]
ok = len(b) == len(a) == len({j["jobId"] for j in b})
for j in b:
    ok &= all(a[j["jobId"]][f] == j[f] for f in ("node", "cpus", "gpus", "startSec", "endSec", "work"))
if not ok:
    print("B:", len(a), len(b))
sys.exit(0 if ok else 1)
EOF
    # a suspension loses and doubles nothing of the course: the clean run's times and jobs by state
    # in every line (energies move by the restart's settling, as in A)
    diff <(jq -c '[.timeSec, .jobs]' "$clean/course.jsonl") <(jq -c '[.timeSec, .jobs]' "$d/course.jsonl") >"$tmp/B.course" &&
        ok || bad "B: course.jsonl differs from the clean run's: $(head -5 "$tmp/B.course")"
elif [ $rc -eq 0 ]; then
    echo "B: the run ended before the SIGTERM (machine too fast for this trace): nothing to check"
else
    bad "B: SIGTERM: exit $rc (3: suspended): $(tail -3 "$tmp/B.1.err")"
fi

# ---- C: serve: GET /runs never goes back; a run directory without state is listed failed -----
root=$tmp/serve
port=$(free_port)
url=http://127.0.0.1:$port
mkdir -p "$root/runs/run-20000101T000000Z-1"
cp "$tmp/trace.jsonl" "$root/runs/run-20000101T000000Z-1/trace.jsonl" # a run killed before its first state
export SIM_WORKLOAD_TRACE_PATH=$tmp/trace.jsonl SIM_SPEED=max SIM_BATCH_TICKS=1
serve_start "$url" "$tmp/C.err" --spec "$spec" --root "$root" --addr 127.0.0.1:$port || { bad "C: serve"; finish; }
jq -e '.runs[] | select(.runId == "run-20000101T000000Z-1") | .state == "failed" and (.error | test("first checkpoint"))' \
    <<<"$(curl -s "$url/runs")" >/dev/null && ok || bad "C: the run directory without state is not listed failed: $(curl -s "$url/runs")"
id=$(curl -s "$url/runs" | jq -r '.runs[] | select(.state == "running") | .runId')
seen=0 back=0
for round in 1 2 3 4; do
    sleep "0.$((RANDOM % 10))"
    c=$(curl -s "$url/runs/$id" | jq -r '.jobs.completed // empty')
    kill -9 $pid; wait $pid 2>/dev/null
    [ -n "$c" ] && seen=$c
    serve_start "$url" "$tmp/C.err" --spec "$spec" --root "$root" --addr 127.0.0.1:$port || { bad "C: restart $round"; break; }
    now=$(curl -s "$url/runs/$id" | jq -r '.jobs.completed // -1')
    if [ "$now" -lt "$seen" ]; then back=$((back + 1)); echo "C: round $round: completed $seen before kill -9, $now after"; fi
done
[ $back -eq 0 ] && ok || bad "C: the completed count went back in $back of 4 restarts"
# the run ends, the engine restarts: the run stays listed as it ended, its files still answer
for _ in $(seq 600); do
    [ "$(curl -s "$url/runs/$id" | jq -r .state)" = completed ] && break
    sleep 0.1
done
ended=$(curl -s "$url/runs/$id")
kill -9 $pid; wait $pid 2>/dev/null
serve_start "$url" "$tmp/C.err" --spec "$spec" --root "$root" --addr 127.0.0.1:$port || bad "C: restart after the end"
after=$(curl -s "$url/runs/$id")
jq -e --argjson a "$ended" '.state == "completed" and .jobs == $a.jobs and .energyJoules == $a.energyJoules
    and .timeSec == $a.timeSec' <<<"$after" >/dev/null && ok ||
    bad "C: the ended run after a restart: $after (before: $ended)"
[ "$(curl -s "$url/runs/$id/jobs" | jq -r .total)" = "$(jq -r .jobs.total <<<"$ended")" ] && ok ||
    bad "C: GET /runs/$id/jobs after a restart: $(curl -s "$url/runs/$id/jobs" | head -c 300)"
kill $pid; wait $pid 2>/dev/null

# ---- D: kill -9 as soon as POST /runs answered: the run resumes (its first checkpoint) ---------
unset SIM_WORKLOAD_TRACE_PATH
for round in 1 2 3; do
    root=$tmp/post$round
    serve_start "$url" "$tmp/D.err" --spec "$spec" --root "$root" --addr 127.0.0.1:$port || { bad "D: serve"; break; }
    id=$(curl -s --data-binary @"$tmp/trace.jsonl" "$url/runs" | jq -r .runId)
    kill -9 $pid; wait $pid 2>/dev/null
    serve_start "$url" "$tmp/D.err" --spec "$spec" --root "$root" --addr 127.0.0.1:$port || { bad "D: restart"; break; }
    st=$(curl -s "$url/runs/$id" | jq -r .state)
    [ "$st" = running ] || [ "$st" = completed ] && ok || bad "D: round $round: run $id after kill -9 right after POST /runs: $st"
    kill $pid; wait $pid 2>/dev/null
done
finish
