#!/usr/bin/env bash
# A run's course (engine/runs/run_course.c, docs/runs.md "Outputs"): course.jsonl in the run
# directory, one line per --course-interval of emulated time and one at the end; the same bytes
# from two --speed max runs of the same spec and trace (docs/runs.md "Repeatability"); its last
# line's energies and jobs are summary.json's; a package cap written through the node's powercap
# file shows as a cap in force and as throttling. Its resume across kill -9 and SIGTERM is in
# test_runs_kill.sh. Usage: test_run_course.sh path/to/hwemu
set -uo pipefail
hwemu=$1
source "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
spec=tests/runs/cluster.yaml
"$hwemu" trace generate --jobs 16 --seed 11 --time-scale 60 --out "$tmp/t.jsonl" 2>/dev/null || bad "trace generate"

for k in 1 2; do
    "$hwemu" run --spec "$spec" --trace "$tmp/t.jsonl" --root "$tmp/r$k" --speed max --course-interval 2m \
        >/dev/null 2>"$tmp/r$k.err" && ok || bad "run $k: $(cat "$tmp/r$k.err")"
done
d1=$(ls -d "$tmp"/r1/runs/*/ | head -1) d2=$(ls -d "$tmp"/r2/runs/*/ | head -1)
cmp "$d1/course.jsonl" "$d2/course.jsonl" && ok || bad "course.jsonl differs between two --speed max runs"
python3 - "$d1" "$spec" <<'PY' && ok || bad "course.jsonl against summary.json (above)"
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
c = [json.loads(l) for l in open(d + "/course.jsonl")]
t = [x["timeSec"] for x in c]
bad = []
# one line per 120 s of emulated time (--course-interval 2m; 1 s ticks land on each multiple), then the end
if t[:-1] != [120 * (k + 1) for k in range(len(t) - 1)] or t[-1] != s["timeSec"] or t[-1] - t[-2] > 120:
    bad.append("times %s ... %s, the run's end %s" % (t[:3], t[-3:], s["timeSec"]))
last = c[-1]
for k, v in s["energyJoules"].items():
    if k != "resumeGap" and abs(last["energyJoules"][k] - v) > 1e-6:
        bad.append("last line's energy %s %s, summary.json %s" % (k, last["energyJoules"][k], v))
if sum(p["energyJoules"] for p in last["pools"].values()) - s["energyJoules"]["nodes"] > 1e-3:
    bad.append("the pools' energies do not sum to the nodes'")
for k in ("completed", "stalled"):
    if last["jobs"][k] != s["jobs"][k]:
        bad.append("jobs %s %s, summary.json %s" % (k, last["jobs"][k], s["jobs"][k]))
# energy only grows; the power is the pools' sum; jobs are conserved
for a, b in zip(c, c[1:]):
    if b["energyJoules"]["nodes"] < a["energyJoules"]["nodes"]:
        bad.append("energy went back at %s" % b["timeSec"])
for x in c:
    if abs(sum(p["powerWatts"] for p in x["pools"].values()) - x["powerWatts"]) > 1e-6 * max(1, x["powerWatts"]):
        bad.append("power at %s is not its pools' sum" % x["timeSec"])
    if sum(x["jobs"].values()) != s["jobs"]["total"]:
        bad.append("jobs at %s: %s of %s" % (x["timeSec"], x["jobs"], s["jobs"]["total"]))
print(len(c), "lines; the first", c[0]["timeSec"], c[0]["powerWatts"], "W; the last", last["energyJoules"]["nodes"], "J")
for b in bad[:8]:
    print(b)
sys.exit(1 if bad else 0)
PY

# a cap: package 0 and 1 of cpu-0 (tests/runs/one.yaml: one Intel node) capped at 80 W through its
# powercap files while serve runs; the run afterwards runs CPU-bound jobs under it
for i in 0 1; do
    printf '{"type":"job","jobId":"cpu-%d","submitTimeOffsetSec":%d,"podTemplate":{"requests":{"cpu":"24"}},"work":{"cpuUnits":2000},"sensitivity":{"cpu":1},"workloadClass":{"cpu":"cpu.compute_bound"}}\n' $i $i
done >"$tmp/cpu.jsonl"
if cap_packages tests/runs/one.yaml "$tmp/capped" cpu-0 80000000 "$tmp/cap.err"; then
    "$hwemu" run --spec tests/runs/one.yaml --trace "$tmp/cpu.jsonl" --root "$tmp/capped" --speed max --course-interval 30s \
        >/dev/null 2>"$tmp/capped.err" && ok || bad "capped run: $(cat "$tmp/capped.err")"
    d=$(ls -d "$tmp"/capped/runs/*/ | head -1)
    # the expected: 2 packages capped at 80 W each (what was written); a package running a 24-CPU
    # compute-bound job draws more than 80 W uncapped (test_runs.sh F: the cap slows such jobs), so
    # it is throttled while a job runs; idle at the end, none is
    python3 - "$d/course.jsonl" <<'PY' && ok || bad "caps and throttling in course.jsonl (above)"
import json, sys
c = [json.loads(l) for l in open(sys.argv[1])]
p = [x["pools"] for x in c]
pool = list(p[0])[0]
caps = {(x[pool]["packagesCapped"], x[pool]["capWatts"]) for x in p}
thr = [x[pool]["packagesThrottled"] for x in p]
print("pool", pool, "caps", caps, "throttled packages per line", thr[:6])
sys.exit(0 if caps == {(2, 160)} and max(thr) >= 1 and thr[-1] == 0 else 1)
PY
else
    bad "the caps: $(cat "$tmp/cap.err")"
fi

out=$("$hwemu" run --trace "$tmp/t.jsonl" --root "$tmp/bad" --course-interval 0s 2>&1); rc=$?
[ $rc = 2 ] && grep -q -- '--course-interval "0s" is not a duration' <<<"$out" && ok || bad "--course-interval 0s: rc $rc: $out"
finish
