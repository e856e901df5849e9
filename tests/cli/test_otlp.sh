#!/usr/bin/env bash
# The OTLP push of `hwemu serve` against a Node.js receiver (tests/otlp/receiver.js) that decodes
# every request strictly with the official OTLP protobuf definitions from npm
# (@opentelemetry/otlp-transformer's generated root): the decoded package energy and power match
# /telemetry/<node> within one tick, the VM node exports nothing, headers and resource attributes
# come from the OTEL_* variables; the facility resource (the smoke spec's cluster) carries the
# ambient of the facility and of each cooling zone, equal to the nodes' and /metrics' ambient,
# and the IT power (the nodes' power summed, as /metrics has it) and energy (its rate is that
# power); a 503 (with Retry-After) then 200 delivers the batch exactly once, a 400 is not
# retried, write events and a fault's start arrive as log records on /v1/logs; on tests/specs/shim.yaml the AMD
# energy-only node (RAPL energy counters, no limits) exports its package energy and power, and
# batches keep arriving about every interval while busy loops keep every CPU busy (the exporter
# runs at nice 19); and a collector that is down costs bounded memory with the drops counted
# on /metrics and reported on stderr.
# Usage: test_otlp.sh HWEMU_BINARY   (run from the source tree; needs node and npm)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
root=$(mktemp -d)
pid= rpid= hogs=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; [ -n "$rpid" ] && kill $rpid 2>/dev/null; [ -n "$hogs" ] && kill $hogs 2>/dev/null
      rm -rf "$root"' EXIT
port=$(free_port)
rport=$(free_port)
url=http://127.0.0.1:$port
recv=http://127.0.0.1:$rport
log=$root/recv.jsonl

receiver_start "$root" "$rport" "$log" >"$root/recv.err" || { bad "$(cat "$root/recv.err")"; finish; }

export OTEL_EXPORTER_OTLP_ENDPOINT=$recv/ OTEL_METRIC_EXPORT_INTERVAL=500 OTEL_BLRP_SCHEDULE_DELAY=200
export OTEL_EXPORTER_OTLP_HEADERS="x-test-token=a%20b, x-other=1" OTEL_RESOURCE_ATTRIBUTES="deployment.environment=ci"
serve_start "$url" "$root/serve.err" --root "$root/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve did not come up: $(cat "$root/serve.err")"; finish; }

# Sample /telemetry and /metrics' facility series every 50 ms (four samples a tick) while batches
# arrive.
"$py" - "$url" >"$root/samples.json" <<'EOF'
import json, re, sys, time, urllib.request
out = []
for _ in range(50):
    d = json.load(urllib.request.urlopen(sys.argv[1] + "/telemetry/intel-0"))
    m = dict(re.findall(r"^(joulie_sim_facility_\w+) (\S+)$", urllib.request.urlopen(sys.argv[1] + "/metrics").read().decode(), re.M))
    out.append({"t": time.time() * 1000, "pkgs": [(p["energyJoules"], p["powerWatts"]) for p in d["packages"]],
                "ambient": float(m["joulie_sim_facility_ambient_temp_celsius"]),
                "it": float(m["joulie_sim_facility_it_power_watts"])})
    time.sleep(0.05)
json.dump(out, sys.stdout)
EOF
"$hwemu" write --root "$root/r" --node intel-0 /sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw 100000000 &&
    ok || bad "write refused"
# a fault's start is an event too (docs/faults.md): a log record of the node it struck
"$hwemu" fault add --addr 127.0.0.1:$port --kind hwmon-error --node intel-0 --id otlp-fault >/dev/null &&
    ok || bad "hwemu fault add"
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
batches, facility = [], []
for r in mets:
    nodes = {}
    for rm in r["body"]["resourceMetrics"]:
        ra = res_attrs(rm)
        assert ra["service.name"] == "hwemu" and ra["deployment.environment"] == "ci", ra
        ms = {m["name"]: m for sm in rm["scopeMetrics"] for m in sm["metrics"]}
        if ra.get("hwemu.role") == "facility":
            assert ra["service.instance.id"] == "smoke" and "host.name" not in ra, ra
            facility.append((r["t"], ms))
        else:
            assert ra["service.instance.id"] == ra["host.name"], ra
            nodes[ra["service.instance.id"]] = ms
    assert set(nodes) == {"intel-0", "sxm-nopm-0"}, f"resources {sorted(nodes)} (vm-0 must export nothing)"
    # The facility: its ambient, each cooling zone's (smoke.yaml: zone-a +0, zone-b +3) equal to
    # its nodes' ambient; the IT power the nodes' power summed (vm-0 draws nothing).
    fm = facility[-1][1]
    amb = {attrs(p)["hw.id"]: p["asDouble"] for p in points(fm["hw.temperature"])}
    assert set(amb) == {"ambient", "zone-a_ambient", "zone-b_ambient"}, amb
    assert amb["zone-a_ambient"] == amb["ambient"] and amb["zone-b_ambient"] == amb["ambient"] + 3, amb
    for node, zone in (("intel-0", "zone-a"), ("sxm-nopm-0", "zone-b")):
        assert points(nodes[node]["hw.host.ambient_temperature"])[0]["asDouble"] == amb[zone + "_ambient"], node
    host_w = sum(points(nodes[n]["hw.host.power"])[0]["asDouble"] for n in ("intel-0", "sxm-nopm-0"))
    assert abs(points(fm["hwemu.facility.it.power"])[0]["asDouble"] - host_w) <= 1e-9 * host_w, (fm, host_w)
    s = fm["hwemu.facility.it.energy"]["sum"]
    assert s["isMonotonic"] is True and s["aggregationTemporality"] == 2 and fm["hwemu.facility.it.energy"]["unit"] == "J", s
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
# The facility against /metrics (the same snapshot when the IT power is the same), and its energy:
# between two batches it grows by the IT power held over the ticks between them.
same = 0
for t, fm in facility:
    amb = points(fm["hw.temperature"])[0]["asDouble"]
    it = points(fm["hwemu.facility.it.power"])[0]["asDouble"]
    best = min(samples, key=lambda s: abs(s["it"] - it))
    if abs(best["it"] - it) <= 1e-6 * it:
        same += 1
        assert abs(best["ambient"] - amb) <= 1e-3, f"ambient: otlp {amb}, /metrics {best['ambient']}"
assert same >= 2, f"only {same} facility batches match /metrics' IT power"
def energy(fm):
    p = points(fm["hwemu.facility.it.energy"])[0]
    return int(p["timeUnixNano"]) / 1e9, p["asDouble"]
powers = [points(fm["hwemu.facility.it.power"])[0]["asDouble"] for _, fm in facility]
for (_, a), (_, b) in zip(facility, facility[1:]):
    (ta, ea), (tb, eb) = energy(a), energy(b)
    assert eb >= ea, f"IT energy went back: {ea} -> {eb}"
    if tb > ta:
        rate = (eb - ea) / (tb - ta)
        assert min(powers) * 0.98 <= rate <= max(powers) * 1.02, f"IT energy rate {rate} W, IT power {min(powers)}..{max(powers)} W"
print(f"{len(mets)} metrics requests decoded, {checked} checked against /telemetry, {exact // 2} on the same tick; "
      f"{len(facility)} facility batches, {same} on a /metrics sample's tick")
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
f = [lr for node, lr in recs if node == "intel-0" and lr["body"]["stringValue"] == "joulie.sim.fault.started"]
assert f, "no joulie.sim.fault.started log record of intel-0"
a = {x["key"]: x["value"] for x in f[0]["attributes"]}
assert a["id"]["stringValue"] == "otlp-fault" and a["kind"]["stringValue"] == "hwmon-error", a
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

# tests/specs/shim.yaml: amd-0 (RAPL package and core energy counters, no limits) exports its
# packages (no DRAM zone: no memory points), vm-0 nothing. Then busy loops on every CPU for 4 s:
# the exporter thread runs at nice 19, below them, and batches must still come about every
# interval (500 ms).
n0=$(wc -l <"$log")
serve_start "$url" "$root/serve3.err" --spec tests/specs/shim.yaml --root "$root/s" --addr 127.0.0.1:$port \
    --tick 200ms || { bad "serve did not come up: $(cat "$root/serve3.err")"; finish; }
"$py" - "$url" >"$root/amd.json" <<'EOF'
import json, sys, time, urllib.request
out = []
for _ in range(30):
    d = json.load(urllib.request.urlopen(sys.argv[1] + "/telemetry/amd-0"))
    out.append([(p["energyJoules"], p["powerWatts"]) for p in d["packages"]])
    time.sleep(0.05)
json.dump(out, sys.stdout)
EOF
load0=$(date +%s%3N)
for _ in $(seq "$(nproc)"); do (while :; do :; done) & hogs="$hogs $!"; done
sleep 4
kill $hogs
wait $hogs 2>/dev/null
hogs=
load1=$(date +%s%3N)
kill -INT $pid
wait $pid && ok || bad "serve on shim.yaml did not stop cleanly"
pid=
"$py" - "$log" "$n0" "$root/amd.json" "$load0" "$load1" <<'EOF' && ok || bad "energy-only node or delivery under load (above)"
import json, sys
log, n0, samples, load0, load1 = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3])), int(sys.argv[4]), int(sys.argv[5])
mets = [r for r in map(json.loads, open(log)) if r["seq"] >= n0 and r["path"] == "/v1/metrics"]
assert mets and all(r["status"] == 200 for r in mets), [r.get("error") for r in mets][:2]
def attrs(o):
    return {a["key"]: a["value"]["stringValue"] for a in o["attributes"]}
checked = 0
for r in mets:
    nodes = {attrs(rm["resource"])["service.instance.id"]: {m["name"]: m for sm in rm["scopeMetrics"] for m in sm["metrics"]}
             for rm in r["body"]["resourceMetrics"]}
    assert set(nodes) == {"intel-0", "amd-0", "gpu-0", "shim"}, f"resources {sorted(nodes)} (vm-0 must export nothing)"
    ms = nodes["amd-0"]
    e = {attrs(p)["hw.id"]: p["asDouble"] for p in ms["hw.energy"]["sum"]["dataPoints"]}
    w = {attrs(p)["hw.id"]: p["asDouble"] for p in ms["hw.power"]["gauge"]["dataPoints"]}
    assert set(e) == set(w) == {"cpu0", "cpu1"}, (e, w)
    assert {attrs(p)["hw.type"] for p in ms["hw.energy"]["sum"]["dataPoints"]} == {"cpu"}
    # within one tick of a /telemetry sample; the same tick (same energy) has the same power
    best = min(samples, key=lambda s: abs(s[0][0] - e["cpu0"]))
    if abs(best[0][0] - e["cpu0"]) > best[0][1] * 0.2 * 1.2:
        continue
    checked += 1
    for k in range(2):
        assert abs(best[k][0] - e[f"cpu{k}"]) <= best[k][1] * 0.2 * 1.2, (k, e, best)
        if abs(best[k][0] - e[f"cpu{k}"]) < 1e-6:
            assert abs(best[k][1] - w[f"cpu{k}"]) <= 1e-9 * w[f"cpu{k}"], (k, w, best)
assert checked >= 2, f"only {checked} amd-0 batches within a tick of /telemetry"
# Under load: the batches' arrival times (ms) while every CPU was busy.
during = [r["t"] for r in mets if load0 + 500 <= r["t"] <= load1]
gaps = [b - a for a, b in zip(during, during[1:])]
print(f"amd-0 in {len(mets)} batches ({checked} against /telemetry); under load, {len(during)} batches in "
      f"{(load1 - load0 - 500) / 1000:.1f} s, gaps {gaps} ms")
assert len(during) >= 5 and max(gaps) <= 1500, "batches did not keep coming under load"
EOF

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
