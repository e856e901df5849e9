#!/usr/bin/env bash
# The JSON routes the page reads (docs/web.md), on the smoke spec, with curl: /debug/nodes pages,
# sorts, filters and sums as documented; /debug/cluster agrees with it at the same snapshot;
# /debug/history answers only newer points; /debug/events?after= only newer events; a node's
# last agent write; bad parameters are 400s naming the parameter; GET / is the page or the text
# saying how to build it; a run's course and jobs (GET /runs/<runId>/course, /jobs) page with
# after= and limit= through the lines of its files, its report (GET /runs/<runId>/report) is 409
# while it runs and then the bytes `hwemu report` writes of its directory, an unknown run is a
# 404 saying where the runs are listed. Usage: test_web_routes.sh path/to/hwemu
set -uo pipefail
hwemu=$1
source "$(dirname "$0")/lib.sh"
root=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null && wait $pid 2>/dev/null; rm -rf "$root"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
SIM_RUN_COURSE_INTERVAL=1s serve_start "$url" "$root/serve.err" --root "$root/r" --addr 127.0.0.1:$port --tick 200ms ||
    { echo "FAIL: serve did not start: $(cat "$root/serve.err")"; exit 1; }
Z=/sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw
"$hwemu" write --node intel-0 --root "$root/r" $Z 60000000 && ok || bad "write refused"
"$hwemu" write --node intel-0 --root "$root/r" $Z 12ab 2>/dev/null && bad "12ab accepted" || ok
sleep 0.5 # two ticks: both writes are events

out=$(URL=$url /usr/bin/python3 - <<'PY'
import json, os, urllib.request, urllib.error
url = os.environ["URL"]
def get(p):
    with urllib.request.urlopen(url + p) as r:
        return r.status, r.headers.get("Content-Type"), r.read()
def js(p):
    return json.loads(get(p)[2])
def status(p):
    try:
        return get(p)[0], ""
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()

def check(ok, what):
    print("ok" if ok else "FAIL: " + what)

all_ = js("/debug/nodes")
check(all_["count"] == 3 and all_["matched"] == 3 and len(all_["nodes"]) == 3, "unpaged: %s" % all_)
check([n["node"] for n in all_["nodes"]] == ["intel-0", "sxm-nopm-0", "vm-0"], "spec order: %s" % [n["node"] for n in all_["nodes"]])
check(abs(all_["totals"]["powerWatts"] - sum(n["powerWatts"] for n in all_["nodes"])) < 1e-6, "totals are not the rows' sum")
page = js("/debug/nodes?offset=1&limit=1")
check(page["matched"] == 3 and [n["node"] for n in page["nodes"]] == ["sxm-nopm-0"], "offset=1&limit=1: %s" % page["nodes"])
desc = js("/debug/nodes?sort=power&order=desc")["nodes"]
check(all(desc[i]["powerWatts"] >= desc[i + 1]["powerWatts"] for i in range(len(desc) - 1)) and desc[0]["node"] == "sxm-nopm-0",
      "sort=power&order=desc: %s" % [(n["node"], n["powerWatts"]) for n in desc])
lw = [n["node"] for n in js("/debug/nodes?sort=lastWrite&order=desc")["nodes"]]
check(lw == ["intel-0", "sxm-nopm-0", "vm-0"], "sort=lastWrite&order=desc (ties in the spec's order): %s" % lw)
check([n["node"] for n in js("/debug/nodes?order=desc")["nodes"]] == ["vm-0", "sxm-nopm-0", "intel-0"], "order=desc by node")
q = js("/debug/nodes?q=SXM")
check(q["matched"] == 1 and q["nodes"][0]["node"] == "sxm-nopm-0" and q["count"] == 3, "q=SXM: %s" % q)
check(js("/debug/nodes?pool=vm")["matched"] == 1 and js("/debug/nodes?profile=nope")["matched"] == 0, "pool=, profile= filters")
gpu = js("/debug/nodes?q=sxm")["nodes"][0]
check(gpu["gpus"] == 8 and gpu["gpuLimitWatts"] > 0 and gpu["gpuWatts"] > 0, "GPU node row: %s" % gpu)
intel = js("/debug/nodes?q=intel-0")["nodes"][0]
w = intel["lastWrite"]
check(w and w["event"] == "joulie.sim.write.rejected" and w["error"] == "einval" and w["written"] == "12ab"
      and w["file"].endswith("intel-rapl:0/constraint_0_power_limit_uw"), "intel-0 lastWrite: %s" % w)
check(js("/debug/nodes?q=vm-0")["nodes"][0]["lastWrite"] is None, "vm-0 has a last write")
for p, word in [("sort=watts", "sort"), ("order=up", "order"), ("offset=-1", "offset"), ("limit=x", "limit")]:
    code, body = status("/debug/nodes?" + p)
    check(code == 400 and word in body, "%s: %d %s" % (p, code, body))

# /debug/cluster and /debug/nodes of the same snapshot agree
for _ in range(20):
    c, n = js("/debug/cluster"), js("/debug/nodes?limit=0")
    if c["seq"] == n["seq"]:
        break
check(c["seq"] == n["seq"] and abs(c["power"]["totalWatts"] - n["totals"]["powerWatts"]) < 1e-6 and c["nodes"] == n["count"],
      "cluster %s vs nodes %s" % (c.get("power"), n["totals"]))
check([p["pool"] for p in c["pools"]] == ["intel", "sxm-nopm", "vm"] and sum(p["nodes"] for p in c["pools"]) == 3, "pools: %s" % c["pools"])
check(abs(c["itPowerWatts"] - c["power"]["totalWatts"]) < 1e-9 and c["gpus"] == 8, "itPowerWatts, gpus")

h = js("/debug/history")
check(h["points"] >= 3 and h["seq"] == sorted(h["seq"]) and h["last"] >= h["seq"][-1], "history: %s" % {k: h[k] for k in ("points", "last")})
check(all(len(h[k]) == h["points"] for k in ("time", "totalWatts", "cpuWatts", "dramWatts", "gpuWatts", "otherWatts", "ambientC")), "history columns")
newer = js("/debug/history?since=%d" % h["seq"][-1])
check(all(s > h["seq"][-1] for s in newer["seq"]) and newer["points"] == len(newer["seq"]), "since=: %s" % newer["seq"])
check(js("/debug/history?max=2")["points"] == 2, "max=2")
code, body = status("/debug/history?since=abc")
check(code == 400 and "since" in body, "since=abc: %d" % code)

ev = js("/debug/events")
check(ev["count"] >= 2 and len(ev["events"]) == ev["count"], "events: %d" % ev["count"])
check(js("/debug/events?after=%d" % ev["count"])["events"] == [], "after=count gives older events")
last = js("/debug/events?limit=1")
check(len(last["events"]) == 1 and last["events"][0] == ev["events"][-1], "limit=1 is not the newest")
check(js("/debug/events?after=%d" % (ev["count"] - 1))["events"] == [ev["events"][-1]], "after=count-1")
code, body = status("/debug/events?after=-3")
check(code == 400, "after=-3: %d" % code)

code, body = status("/ui/nope.js")
check(code == 404, "/ui/nope.js: %d" % code)
try:
    st, ctype, body = get("/")
    check(st == 200 and ctype.startswith("text/html") and b'id="chart-cluster"' in body, "GET /: %s" % ctype)
    for f in ("app.js", "app.css", "report.js", "uPlot.iife.min.js", "uPlot.min.css"):
        st, ctype, body = get("/ui/" + f)
        check(st == 200 and len(body) > 100, "/ui/%s" % f)
except urllib.error.HTTPError as e:
    body = e.read().decode()
    check(e.code == 404 and "HWEMU_WEB_UI=ON" in body, "GET / without the page: %d %s" % (e.code, body))
PY
)
while read -r line; do
    [ "$line" = ok ] && ok || bad "${line#FAIL: }"
done <<<"$out"

# --- a run's course, jobs and report (docs/runs.md "Run API")
for k in 0 1 2; do
    printf '{"type":"job","jobId":"r-%d","submitTimeOffsetSec":%d,"podTemplate":{"requests":{"cpu":"4"}},"work":{"cpuUnits":20}}\n' $k $k
done >"$root/t.jsonl"
id=$(curl -s --data-binary @"$root/t.jsonl" "$url/runs" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["runId"])')
[ -n "$id" ] && ok || bad "POST /runs gave no run id"
code=$(curl -s -o "$root/rep409" -w '%{http_code}' "$url/runs/$id/report")
[ "$code" = 409 ] && grep -q "is running: a report is made from the summary.json" "$root/rep409" && ok ||
    bad "report while running: $code $(cat "$root/rep409")"
for _ in $(seq 300); do
    [ "$(curl -s "$url/runs/$id" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" = completed ] && break
    sleep 0.2
done
out=$(URL=$url DIR="$root/r/runs/$id" ID=$id /usr/bin/python3 - <<'PY'
import json, os, urllib.request, urllib.error
url, d, rid = os.environ["URL"], os.environ["DIR"], os.environ["ID"]
def check(ok, what):
    print("ok" if ok else "FAIL: " + what)
def status(p, method="GET"):
    try:
        with urllib.request.urlopen(urllib.request.Request(url + p, method=method, data=b"" if method == "POST" else None)) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
for name in ("course", "jobs"):
    want = [json.loads(l) for l in open("%s/%s.jsonl" % (d, name))]
    code, a = status("/runs/%s/%s" % (rid, name))
    check(code == 200 and a["lines"] == want and a["total"] == len(want) and a["next"] == len(want) and a["after"] == 0
          and a["state"] == "completed" and a["runId"] == rid, "%s: %s %s" % (name, code, {k: a.get(k) for k in ("after", "next", "total")}))
    check(len(want) >= 3, "%s.jsonl has %d lines" % (name, len(want)))
    code, a = status("/runs/%s/%s?after=2" % (rid, name))
    check(a["lines"] == want[2:] and a["next"] == len(want), "%s?after=2: %s" % (name, a["next"]))
    got, after = [], 0
    while True:  # one line at a time
        code, a = status("/runs/%s/%s?after=%d&limit=1" % (rid, name, after))
        if not a["lines"]:
            break
        check(len(a["lines"]) == 1 and a["next"] == after + 1, "%s?after=%d&limit=1: %s" % (name, after, a["next"]))
        got += a["lines"]
        after = a["next"]
    check(got == want, "%s paged by limit=1: %d of %d lines" % (name, len(got), len(want)))
    code, a = status("/runs/%s/%s?after=%d" % (rid, name, len(want) + 5))
    check(code == 200 and a["lines"] == [] and a["next"] == len(want) and a["total"] == len(want), "after past the end: %s" % a)
for q, word in (("after=-1", "after"), ("after=x", "after"), ("limit=0", "limit"), ("limit=10001", "limit")):
    code, a = status("/runs/%s/course?%s" % (rid, q))
    check(code == 400 and word in a["error"], "course?%s: %d %s" % (q, code, a))
for p in ("/runs/run-none/course", "/runs/run-none/jobs", "/runs/run-none/report"):
    code, a = status(p)
    check(code == 404 and "GET /runs lists" in a["error"], "%s: %d %s" % (p, code, a))
code, a = status("/runs/%s/course" % rid, "POST")
check(code == 405, "POST course: %d" % code)
PY
)
while read -r line; do
    [ "$line" = ok ] && ok || bad "${line#FAIL: }"
done <<<"$out"
code=$(curl -s -o "$root/served.html" -w '%{http_code} %{content_type}' "$url/runs/$id/report")
if [ "$code" = "404 application/json" ] && grep -q "HWEMU_WEB_UI=ON" "$root/served.html"; then
    ok # built without the page: the report route says how to get it
else
    [ "$code" = "200 text/html; charset=utf-8" ] && ok || bad "GET /runs/$id/report: $code $(head -c 300 "$root/served.html")"
    "$hwemu" report "$root/r/runs/$id" --out "$root/written.html" 2>/dev/null && cmp -s "$root/served.html" "$root/written.html" &&
        ok || bad "GET /runs/$id/report differs from hwemu report $root/r/runs/$id"
fi
finish
