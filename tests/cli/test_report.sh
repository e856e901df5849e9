#!/usr/bin/env bash
# `hwemu report` (engine/telemetry/report.c): a run of CPU-bound jobs on one Intel node, and the
# same trace with both packages capped at 80 W through the node's powercap files (the cap slows
# the jobs and lowers the energy: test_runs.sh F); the report of both, the uncapped the baseline,
# opened in headless Chromium (Debian's chromium, --dump-dom after its scripts ran): every chart
# drew every series (pixels of its colour; of the jobs by state, running and completed), the table's numbers are the ones this test computes
# from summary.json and jobs.jsonl, the CSV says the same, and the page loads nothing from
# elsewhere. Usage: test_report.sh path/to/hwemu
set -uo pipefail
hwemu=$1
source "$(dirname "$0")/lib.sh"
command -v chromium >/dev/null || { echo "SKIP: chromium is not installed (apt-get install chromium; .ci/run installs it)"; exit 77; }
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
one=tests/runs/one.yaml
for i in 0 1 2 3; do
    printf '{"type":"job","jobId":"cpu-%d","submitTimeOffsetSec":%d,"podTemplate":{"requests":{"cpu":"24"}},"work":{"cpuUnits":2000},"sensitivity":{"cpu":1},"workloadClass":{"cpu":"cpu.compute_bound"}}\n' $i $i
done >"$tmp/cpu.jsonl"
"$hwemu" run --spec $one --trace "$tmp/cpu.jsonl" --root "$tmp/free" --speed max --course-interval 10s >/dev/null 2>"$tmp/free.err" ||
    bad "uncapped run: $(cat "$tmp/free.err")"
cap_packages $one "$tmp/capped" cpu-0 80000000 "$tmp/cap.err" || bad "the caps: $(cat "$tmp/cap.err")"
"$hwemu" run --spec $one --trace "$tmp/cpu.jsonl" --root "$tmp/capped" --speed max --course-interval 10s >/dev/null 2>"$tmp/capped.err" ||
    bad "capped run: $(cat "$tmp/capped.err")"
free=$(ls -d "$tmp"/free/runs/run-*) capped=$(ls -d "$tmp"/capped/runs/run-*)

"$hwemu" report "$free" "$capped" --out "$tmp/r.html" --csv "$tmp/r.csv" 2>"$tmp/report.err" && ok ||
    bad "hwemu report: $(cat "$tmp/report.err")"
grep -q "2 runs -> $tmp/r.html, $tmp/r.csv" "$tmp/report.err" && ok || bad "report's line: $(cat "$tmp/report.err")"
# self-contained: no script, style sheet or image from elsewhere
! grep -Eqi '<(script|link|img)[^>]*(src|href)=' "$tmp/r.html" && ok || bad "the report loads files: $(grep -Eoi '<(script|link|img)[^>]*(src|href)=[^>]*' "$tmp/r.html" | head -3)"

timeout 120 chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=10000 --dump-dom "file://$tmp/r.html" \
    >"$tmp/dom.html" 2>"$tmp/chromium.err" || bad "chromium: $(tail -5 "$tmp/chromium.err")"
python3 - "$tmp/dom.html" "$tmp/r.csv" "$free" "$capped" <<'PY' && ok || bad "the report in Chromium (above)"
import csv, html, json, math, re, sys
dom, csvp, dirs = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3:]
bad = []
m = re.search(r'<pre id="drawn">(.*?)</pre>', dom, re.S)
drawn = json.loads(html.unescape(m.group(1))) if m and m.group(1) else None
if not drawn:
    bad.append("#drawn is empty: the charts' script did not run")
else:
    titles = [c["title"].split(" (")[0] for c in drawn["charts"]]
    want = ["Energy against makespan", "Cluster power over time", "Cumulative energy over time", "Jobs by state over time",
            "Throttling over time", "Energy by class", "Completion time by class", "Energy per node"]
    if titles != want:
        bad.append("charts %s, expected %s" % (titles, want))
    for t, c in zip(titles, drawn["charts"]):
        px = c["seriesPixels"]
        if t == "Jobs by state over time":  # per run: waiting, running, completed, stalled (none stalled,
            # and a state at 0 all along lies under the others): running and completed drew for each run
            if len(px) != 8 or min(px[1], px[2], px[5], px[6]) <= 0:
                bad.append("%s: running or completed drew nothing: %s" % (t, px))
        elif len(px) < 2 or min(px) <= 0:
            bad.append("%s: a series drew nothing: %s" % (t, px))
    print("drawn:", [(t, c["seriesPixels"]) for t, c in zip(titles, drawn["charts"])])
# the expected values, from the run directories
def run(d):
    s = json.load(open(d + "/summary.json"))
    jobs = [json.loads(l) for l in open(d + "/jobs.jsonl")]
    c = {j["jobId"]: j["endSec"] - j["queuedSec"] for j in jobs if j["state"] == "completed"}
    return s, c
(s0, c0), (s1, c1) = run(dirs[0]), run(dirs[1])
def q(c, p):
    v = sorted(c.values())
    return v[max(0, math.ceil(p * len(v)) - 1)]
e0, e1 = s0["energyJoules"]["nodes"], s1["energyJoules"]["nodes"]
m0, m1 = s0["makespanSec"], s1["makespanSec"]
slowed = sum(1 for k in c1 if k in c0 and c1[k] > c0[k] * 1.01)
exp = [[s0["runId"], s0["state"], "%.3f" % e0, "%.1f" % m0, "0.00", "0.00", "0", "%.1f" % q(c0, .5), "%.1f" % q(c0, .95), "0.00", "0.00"],
       [s1["runId"], s1["state"], "%.3f" % e1, "%.1f" % m1, "%.2f" % ((e0 - e1) / e0 * 100), "%.2f" % ((m1 - m0) / m0 * 100),
        str(slowed), "%.1f" % q(c1, .5), "%.1f" % q(c1, .95), "%.2f" % ((q(c1, .5) - q(c0, .5)) / q(c0, .5) * 100),
        "%.2f" % ((q(c1, .95) - q(c0, .95)) / q(c0, .95) * 100)]]
t = re.search(r'<table id="comparison">(.*?)</table>', dom, re.S).group(1)
rows = [[html.unescape(x) for x in re.findall(r"<td>(.*?)</td>", r)] for r in re.findall(r"<tr>(.*?)</tr>", t, re.S)]
rows = [r[:1] + r[2:] for r in rows if r]  # without the directory column
print("table:", rows)
if rows != exp:
    bad.append("the comparison table is not what summary.json and jobs.jsonl give: %s" % exp)
# the cap saved energy and slowed the jobs (test_runs.sh F)
if not (e1 < e0 and m1 > m0 and slowed == 4):
    bad.append("the capped run did not save energy and slow the 4 jobs: %s %s %s" % (e0, e1, slowed))
with open(csvp) as f:
    c = list(csv.DictReader(f))
if [r["run"] for r in c] != [s0["runId"], s1["runId"]] or abs(float(c[1]["energy_j"]) - e1) > 1e-5 or \
   abs(float(c[1]["energy_saved_pct"]) - (e0 - e1) / e0 * 100) > 1e-3 or int(c[1]["jobs_slowed"]) != slowed or \
   abs(float(c[1]["performance_j"]) - s1["energyJoules"]["performance"]) > 1e-5:
    bad.append("the CSV differs: %s" % c)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

out=$("$hwemu" report "$tmp/nothing" --out "$tmp/x.html" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "$tmp/nothing/summary.json: No such file" <<<"$out" && ok || bad "a missing run directory: rc $rc: $out"
out=$("$hwemu" report "$free" 2>&1); rc=$?
[ $rc = 2 ] && grep -q -- "--out FILE.html is required" <<<"$out" && ok || bad "no --out: rc $rc: $out"
finish
