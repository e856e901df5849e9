#!/usr/bin/env bash
# The Grafana dashboard (charts/grafana/hwemu-dashboard.json) as Grafana would run it: the node
# variable does not default to All (a cluster has thousands of nodes: its default is the first node,
# includeAll off), and every panel's every expression, with the variables as Grafana fills them
# ($pool All, $node every node, $__rate_interval 30s), returns data from Debian's Prometheus
# scraping `hwemu serve` while a run executes (the run panels: jobs submitted, running, completed,
# completion time; the pool panels: one series per pool of the smoke spec, 3).
# Usage: test_dashboard.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || { echo "SKIP: Debian's prometheus is needed (apt-get install prometheus)"; exit 77; }
tmp=$(mktemp -d)
pid= ppid_=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; [ -n "$ppid_" ] && kill $ppid_ 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
dash=charts/grafana/hwemu-dashboard.json
port=$(free_port)
url=http://127.0.0.1:$port

/usr/bin/python3 - "$dash" <<'PY' && ok || bad "the node variable's default"
import json, sys
d = json.load(open(sys.argv[1]))
v = {x["name"]: x for x in d["templating"]["list"]}
node = v["node"]
assert not node.get("includeAll") and "$__all" not in json.dumps(node.get("current", {})), node
assert "$pool" in node["query"]["query"] and v["pool"]["includeAll"], (node, v["pool"])
PY

# A run of 12 short jobs at speed 20: running for several seconds of wall time, jobs completing.
for i in $(seq 12); do
    echo "{\"type\":\"job\",\"jobId\":\"j$i\",\"submitTimeOffsetSec\":$((i * 5)),\"intentClass\":\"$([ $((i % 3)) = 0 ] && echo performance || echo standard)\",\"podTemplate\":{\"requests\":{\"cpu\":\"4\"}},\"work\":{\"cpuUnits\":400}}"
done >"$tmp/trace.jsonl"
SIM_WORKLOAD_TRACE_PATH=$tmp/trace.jsonl serve_start "$url" "$tmp/serve.err" --root "$tmp/r" --addr 127.0.0.1:$port \
    --tick 200ms --speed 20 || { bad "serve: $(cat "$tmp/serve.err")"; finish; }
pport=$(free_port)
cat >"$tmp/prom.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}
scrape_configs:
- job_name: hwemu
  static_configs: [{targets: ['127.0.0.1:$port']}]
YML
prom_start "$tmp" "$pport" && ok || { bad "prometheus did not start: $(tail -5 "$tmp/prom.log")"; finish; }
prom_scraped 1 && ok || bad "hwemu not scraped: $(q 'sum(up)')"
# until some job has completed and Prometheus has seen it (60 s at most under load)
for _ in $(seq 120); do
    c=$(q 'joulie_sim_job_completion_seconds_count')
    [[ $c =~ ^[0-9]+$ ]] && [ "$c" -ge 2 ] && break
    sleep 0.5
done
[[ $c =~ ^[0-9]+$ ]] && [ "$c" -ge 2 ] && ok || bad "no completions seen by Prometheus: $c; $(tail -3 "$tmp/serve.err")"

/usr/bin/python3 - "$dash" "$purl" <<'PY' >"$tmp/panels.out" && ok || bad "dashboard queries: $(cat "$tmp/panels.out")"
import json, sys, urllib.parse, urllib.request
d, purl = json.load(open(sys.argv[1])), sys.argv[2]
def query(expr):
    with urllib.request.urlopen(purl + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})) as r:
        return json.load(r)
nodes = [r["metric"]["node"] for r in query("joulie_sim_node_class_info")["data"]["result"]]
fails = []
for p in d["panels"]:
    for t in p.get("targets", []):
        expr = (t["expr"].replace("$__rate_interval", "30s").replace("$pool", ".*")
                .replace("$node", "|".join(sorted(nodes))))
        ans = query(expr)
        n = len(ans["data"]["result"]) if ans.get("status") == "success" else -1
        if n < 1:
            fails.append("%s / %s: %s series: %s" % (p["title"], t["refId"], n, expr))
        if "by (class)" in expr and "class_info" in expr and n != 3:
            fails.append("%s: %d series, expected one per pool of the smoke spec (3)" % (p["title"], n))
        print(p["title"], t["refId"], n)
if fails:
    print("\n".join(fails))
    sys.exit(1)
PY
finish
