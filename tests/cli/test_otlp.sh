#!/usr/bin/env bash
# The OTLP push of `hwemu serve` against a Node.js receiver (tests/otlp/receiver.js) that decodes
# every request strictly with the official OTLP protobuf definitions from npm
# (@opentelemetry/otlp-transformer's generated root): the decoded package energy and power match
# /telemetry/<node> within one tick, the VM node exports nothing, headers and resource attributes
# come from the OTEL_* variables, a 503 (with Retry-After) then 200 delivers the batch exactly
# once, a 400 is not retried, write events arrive as log records on /v1/logs, and a collector
# that is down costs bounded memory with the drops counted on /metrics and reported on stderr.
# Usage: test_otlp.sh HWEMU_BINARY   (run from the source tree; needs node and npm)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
otlp=$(cd "$(dirname "$0")/../otlp" && pwd)
root=$(mktemp -d)
pid= rpid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; [ -n "$rpid" ] && kill $rpid 2>/dev/null; rm -rf "$root"' EXIT
port=$(free_port)
rport=$(free_port)
url=http://127.0.0.1:$port
recv=http://127.0.0.1:$rport
log=$root/recv.jsonl

command -v node >/dev/null && command -v npm >/dev/null || { bad "node and npm are needed (apt-get install nodejs npm)"; finish; }
# npm ci only when node_modules is missing or older than the lock file (the normal and the
# sanitizer build share tests/otlp/node_modules), under a lock: test_gpu_telemetry.sh may run at
# the same time.
(
    flock 9
    if [ ! -f "$otlp/node_modules/.package-lock.json" ] || [ "$otlp/package-lock.json" -nt "$otlp/node_modules/.package-lock.json" ]; then
        npm ci --prefix "$otlp" --no-audit --no-fund >"$root/npm.log" 2>&1 || { tail -5 "$root/npm.log"; exit 1; }
    fi
) 9>"${TMPDIR:-/tmp}/hwemu-otlp-npm-$(id -u).lock" || { bad "npm ci failed"; finish; }
node "$otlp/receiver.js" "$rport" "$log" >"$root/recv.out" 2>&1 &
rpid=$!
for _ in $(seq 100); do grep -q listening "$root/recv.out" 2>/dev/null && break; sleep 0.05; done
grep -q listening "$root/recv.out" || { bad "receiver did not start: $(cat "$root/recv.out")"; finish; }

export OTEL_EXPORTER_OTLP_ENDPOINT=$recv/ OTEL_METRIC_EXPORT_INTERVAL=500 OTEL_BLRP_SCHEDULE_DELAY=200
export OTEL_EXPORTER_OTLP_HEADERS="x-test-token=a%20b, x-other=1" OTEL_RESOURCE_ATTRIBUTES="deployment.environment=ci"
serve_start "$url" "$root/serve.err" --root "$root/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve did not come up: $(cat "$root/serve.err")"; finish; }

# Sample /telemetry every 50 ms (four samples a tick) while batches arrive.
"$py" - "$url" >"$root/samples.json" <<'EOF'
import json, sys, time, urllib.request
out = []
for _ in range(50):
    d = json.load(urllib.request.urlopen(sys.argv[1] + "/telemetry/intel-0"))
    out.append({"t": time.time() * 1000, "pkgs": [(p["energyJoules"], p["powerWatts"]) for p in d["packages"]]})
    time.sleep(0.05)
json.dump(out, sys.stdout)
EOF
"$hwemu" write --root "$root/r" --node intel-0 /sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw 100000000 &&
    ok || bad "write refused"
sleep 1

# Every request decoded, with exactly application/json, the headers, one resource per measurable node.
"$py" - "$log" "$root/samples.json" <<'EOF' && ok || bad "metrics do not match /telemetry (above)"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
samples = json.load(open(sys.argv[2]))
errs = [r for r in reqs if r.get("error")]
assert not errs, f"receiver errors: {errs[:2]}"
mets = [r for r in reqs if r["path"] == "/v1/metrics"]
assert len(mets) >= 4, f"only {len(mets)} metrics requests"
for r in reqs:
    assert r["contentType"] == "application/json" and r["x-test-token"] == "a b" and r["x-other"] == "1", r
def res_attrs(rm):
    return {a["key"]: a["value"]["stringValue"] for a in rm["resource"]["attributes"]}
def points(m):
    return (m.get("sum") or m.get("gauge"))["dataPoints"]
def attrs(p):
    return {a["key"]: a["value"]["stringValue"] for a in p["attributes"]}
batches = []
for r in mets:
    nodes = {}
    for rm in r["body"]["resourceMetrics"]:
        ra = res_attrs(rm)
        assert ra["service.name"] == "hwemu" and ra["service.instance.id"] == ra["host.name"], ra
        assert ra["deployment.environment"] == "ci", ra
        nodes[ra["service.instance.id"]] = {m["name"]: m for sm in rm["scopeMetrics"] for m in sm["metrics"]}
    assert set(nodes) == {"intel-0", "sxm-nopm-0"}, f"resources {sorted(nodes)} (vm-0 must export nothing)"
    ms = nodes["intel-0"]
    for name in ("hw.host.energy", "hw.energy"):
        s = ms[name]["sum"]
        assert s["aggregationTemporality"] == 2 and s["isMonotonic"] is True, s
        for p in s["dataPoints"]:
            assert int(p["startTimeUnixNano"]) <= int(p["timeUnixNano"]), p
    assert isinstance(points(ms["hw.host.energy"])[0]["asInt"], str)
    e = {attrs(p)["hw.id"]: p["asDouble"] for p in points(ms["hw.energy"]) if attrs(p)["hw.type"] == "cpu"}
    w = {attrs(p)["hw.id"]: p["asDouble"] for p in points(ms["hw.power"]) if attrs(p)["hw.type"] == "cpu"}
    assert {a["hw.type"] for a in map(attrs, points(ms["hw.energy"]))} == {"cpu", "memory"}
    assert len(points(ms["hw.temperature"])) == 2
    batches.append((r["t"], [(e["cpu%d" % k], w["cpu%d" % k]) for k in range(2)]))
# Within one tick: the nearest sample (by energy) differs by at most one tick of energy; when it
# is the same tick (same energy), power is the same too.
t0, t1 = samples[0]["t"], samples[-1]["t"]
exact = checked = 0
for t, pk in batches:
    if not (t0 + 300 < t < t1):
        continue
    checked += 1
    best = min(samples, key=lambda s: abs(s["pkgs"][0][0] - pk[0][0]))
    for k in range(2):
        de = abs(best["pkgs"][k][0] - pk[k][0])
        assert de <= best["pkgs"][k][1] * 0.2 * 1.2 + 1e-6, f"pkg {k}: otlp {pk[k]} vs telemetry {best['pkgs'][k]}"
        if de < 1e-6:
            assert abs(best["pkgs"][k][1] - pk[k][1]) <= 1e-9 * pk[k][1], f"power {pk[k]} vs {best['pkgs'][k]}"
            exact += 1
assert checked >= 3 and exact >= 2, f"{checked} batches checked, {exact} exact package matches"
print(f"{len(mets)} metrics requests decoded, {checked} checked against /telemetry, {exact // 2} on the same tick")
EOF

# The write event as an OTLP log record of intel-0.
"$py" - "$log" <<'EOF' && ok || bad "no write event on /v1/logs"
import json, sys
recs = []
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["path"] == "/v1/logs" and r["status"] == 200:
        for rl in r["body"]["resourceLogs"]:
            node = {a["key"]: a["value"]["stringValue"] for a in rl["resource"]["attributes"]}["service.instance.id"]
            recs += [(node, lr) for sl in rl["scopeLogs"] for lr in sl["logRecords"]]
hit = [lr for node, lr in recs if node == "intel-0" and lr["body"]["stringValue"] == "joulie.sim.write.accepted"]
assert hit, recs
a = {x["key"]: x["value"] for x in hit[0]["attributes"]}
assert a["file"]["stringValue"].endswith("intel-rapl:0/constraint_0_power_limit_uw") and a["written"]["stringValue"] == "100000000", a
assert int(hit[0]["timeUnixNano"]) > 1.7e18 and hit[0]["eventName"] == "joulie.sim.write.accepted", hit[0]
EOF

# 503 with Retry-After: 1, then 200: the same batch once more after about a second, never twice.
n0=$(wc -l <"$log")
curl -sf "$recv/script?path=/v1/metrics&statuses=503&retryAfter=1" >/dev/null
sleep 2.5
# 400: one attempt, never retried; later batches still go.
n1=$(wc -l <"$log")
curl -sf "$recv/script?path=/v1/metrics&statuses=400" >/dev/null
sleep 1.5
"$py" - "$log" "$n0" "$n1" <<'EOF' && ok || bad "retry semantics (above)"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
n0, n1 = int(sys.argv[2]), int(sys.argv[3])
def key(r):
    return r["body"]["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["sum"]["dataPoints"][0]["timeUnixNano"]
mets = [r for r in reqs if r["path"] == "/v1/metrics" and "body" in r]
after = [r for r in mets if r["seq"] >= n0]
first = next(i for i, r in enumerate(after) if r["status"] == 503)
r503, retry = after[first], after[first + 1]
assert retry["status"] == 200 and key(retry) == key(r503) and retry["body"] == r503["body"], "503 not resent as is"
assert retry["t"] - r503["t"] >= 900, f"Retry-After not honoured: resent after {retry['t'] - r503['t']} ms"
ok = [key(r) for r in mets if r["status"] == 200]
assert len(ok) == len(set(ok)), "a batch was delivered twice"
assert ok.count(key(r503)) == 1
r400 = next(r for r in mets if r["seq"] >= n1 and r["status"] == 400)
assert [key(r) for r in mets].count(key(r400)) == 1, "the 400 batch was sent again"
assert any(r["status"] == 200 and r["seq"] > r400["seq"] for r in mets), "no batch after the 400"
print(f"503 resent once after {retry['t'] - r503['t']} ms; 400 attempted once; {len(ok)} batches delivered once each")
EOF
curl -s "$url/metrics" | grep -q '^joulie_sim_otlp_dropped_batches_total 0$' && ok || bad "dropped batches with a collector up"
kill -INT $pid
wait $pid && ok || bad "serve did not stop cleanly"
pid=

# A collector that is down: at most 16 batches kept, the rest dropped, counted and reported.
export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1 OTEL_METRIC_EXPORT_INTERVAL=50
serve_start "$url" "$root/serve2.err" --root "$root/r" --addr 127.0.0.1:$port --tick 50ms ||
    { bad "serve did not come up: $(cat "$root/serve2.err")"; finish; }
sleep 2
d=$(curl -s "$url/metrics" | awk '$1 == "joulie_sim_otlp_dropped_batches_total" {print $2}')
[ "${d:-0}" -ge 5 ] && ok || bad "dropped batches: ${d:-none}"
grep -q "OTLP: [0-9]* batches dropped" "$root/serve2.err" && ok || bad "drops not reported: $(cat "$root/serve2.err")"
kill -INT $pid
wait $pid && ok || bad "serve with the collector down did not stop cleanly"
pid=

# Bad values are usage errors naming the variable; no endpoint means no exporter at all.
err=$(OTEL_METRIC_EXPORT_INTERVAL=soon "$hwemu" serve --root "$root/r" --addr 127.0.0.1:$port 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q 'OTEL_METRIC_EXPORT_INTERVAL="soon"' <<<"$err" && ok || bad "bad interval: rc=$rc $err"
finish
