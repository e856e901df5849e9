#!/usr/bin/env bash
# Exporter formats and /metrics against real consumers: `hwemu serve` with
# SIM_EXPORTERS=kepler-0.7,kepler-0.12 and a 200 ms tick; promtool on /metrics and on every exporter
# endpoint of every node; the HTTP errors (unknown exporter, unknown node, a format not enabled, a
# bad SIM_EXPORTERS; the GPU formats are test_gpu_telemetry.sh's); the counters of every format
# against /telemetry within one tick; Debian's prometheus scraping /metrics and the exporter
# endpoints of intel-0, with PromQL rate()s checked against /telemetry; the Grafana dashboard
# (well-formed, every metric it names exposed); and Kepler on energy-only hosts (AMD package and
# core counters without limits, one socket, a psys zone) against /telemetry and the zone files.
# Usage: test_exporters.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
root=$(mktemp -d)
pid= ppid_=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; [ -n "$ppid_" ] && kill $ppid_ 2>/dev/null; wait 2>/dev/null; rm -rf "$root"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
json() { "$py" -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
dash=charts/grafana/hwemu-dashboard.json

# A bad list is a usage error naming the variable; nothing starts.
err=$(SIM_EXPORTERS=kepler-0.7,dcgm "$hwemu" serve --root "$root/bad" --addr 127.0.0.1:$port 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q 'SIM_EXPORTERS="kepler-0.7,dcgm": unknown exporter "dcgm"' <<<"$err" && ok || bad "bad SIM_EXPORTERS: rc=$rc $err"

SIM_EXPORTERS=kepler-0.7,kepler-0.12 serve_start "$url" "$root/serve.err" --root "$root/r" --addr 127.0.0.1:$port \
    --tick 200ms || { bad "serve did not come up: $(cat "$root/serve.err")"; finish; }
sleep 0.5

# promtool and the Content-Type on /metrics and every exporter endpoint of every node.
curl -s "$url/metrics" >"$root/metrics.txt"
promtool check metrics <"$root/metrics.txt" 2>&1 && ok || bad "promtool on /metrics"
for node in intel-0 sxm-nopm-0 vm-0; do
    for x in kepler-0.7 kepler-0.12; do
        ctype=$(curl -s -o "$root/x.txt" -w '%{http_code} %{content_type}' "$url/exporters/$x/$node/metrics")
        [ "$ctype" = "200 text/plain; version=0.0.4; charset=utf-8" ] && ok || bad "$x $node: $ctype"
        out=$(promtool check metrics <"$root/x.txt" 2>&1) && ok || bad "promtool on $x/$node: $out"
    done
done
# The params form a scrape config can use instead of a metrics_path per node.
curl -s "$url/exporters/kepler-0.12/metrics?node=intel-0" | grep -q '^kepler_node_cpu_joules_total{node_name="intel-0",path="aggregated-package",zone="package"} ' \
    && ok || bad "?node= form"
# A VM has no meter: build info only.
n=$(curl -s "$url/exporters/kepler-0.7/vm-0/metrics" | grep -c '^kepler_node_')
[ "$n" = 0 ] && ok || bad "vm-0 exports $n kepler_node_ series"

# Errors: JSON 404s that say what to do.
code=$(curl -s -o "$root/body" -w '%{http_code} %{content_type}' "$url/exporters/scaphandre/intel-0/metrics")
[ "$code" = "404 application/json" ] && [ "$(json 'd["exporter"]' <"$root/body")" = scaphandre ] &&
    grep -q 'known: kepler-0.7, kepler-0.12, dcgm-exporter, rocm-device-metrics' "$root/body" && ok || bad "unknown exporter: $code $(cat "$root/body")"
code=$(curl -s -o "$root/body" -w '%{http_code}' "$url/exporters/kepler-0.7/nope-0/metrics")
[ "$code" = 404 ] && [ "$(json 'd["node"]' <"$root/body")" = nope-0 ] && ok || bad "unknown node: $code $(cat "$root/body")"
code=$(curl -s -o "$root/body" -w '%{http_code}' -X POST "$url/exporters/kepler-0.7/intel-0/metrics")
[ "$code" = 405 ] && ok || bad "POST: $code"
[ "$(curl -s "$url/exporters" | json '[(x["name"], x["enabled"]) for x in d["exporters"]]')" = \
  "[('kepler-0.7', True), ('kepler-0.12', True), ('dcgm-exporter', False), ('rocm-device-metrics', False)]" ] && ok || bad "/exporters index"

# Counters of every format against /telemetry at (nearly) the same instant: within one tick's
# energy of each zone (power x 0.2 s, 5 % margin).
"$py" - "$url" <<'EOF' && ok || bad "counters disagree across formats"
import json, re, sys, urllib.request
from exposition import fails, report
url = sys.argv[1]
get = lambda p: urllib.request.urlopen(url + p).read().decode()
tel = json.loads(get("/telemetry/intel-0"))
k07 = get("/exporters/kepler-0.7/intel-0/metrics")
k12 = get("/exporters/kepler-0.12/intel-0/metrics")
met = get("/metrics")
def val(text, name, **labels):
    tot, seen = 0.0, 0
    for line in text.splitlines():
        m = re.match(r'^(\w+)\{(.*)\} (\S+)$', line)
        if not m or m.group(1) != name:
            continue
        ls = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        if all(ls.get(k) == v for k, v in labels.items()):
            tot += float(m.group(3)); seen += 1
    assert seen, (name, labels)
    return tot
tick = 0.2 * 1.05
def near(what, a, b, watts):
    if abs(a - b) > watts * tick + 1e-5:
        fails.append(f"{what}: {a} vs {b} (one tick: {watts * tick:.3f} J)")
pk = tel["packages"]
for p in pk:
    k = str(p["index"])
    near(f"0.7 package {k}", val(k07, "kepler_node_package_joules_total", package=k), p["energyJoules"], p["powerWatts"])
    near(f"0.7 dram {k}", val(k07, "kepler_node_dram_joules_total", package=k), p["dramEnergyJoules"], 20)
    idle = val(k07, "kepler_node_package_joules_total", package=k, mode="idle")
    dyn = val(k07, "kepler_node_package_joules_total", package=k, mode="dynamic")
    assert 0 < idle < dyn, (idle, dyn)
pkg_j = sum(p["energyJoules"] for p in pk); dram_j = sum(p["dramEnergyJoules"] for p in pk)
pkg_w = sum(p["powerWatts"] for p in pk)
near("0.12 package", val(k12, "kepler_node_cpu_joules_total", zone="package"), pkg_j, pkg_w)
near("0.12 dram", val(k12, "kepler_node_cpu_joules_total", zone="dram"), dram_j, 40)
near("0.12 active+idle", val(k12, "kepler_node_cpu_active_joules_total", zone="package")
     + val(k12, "kepler_node_cpu_idle_joules_total", zone="package"), val(k12, "kepler_node_cpu_joules_total", zone="package"), 0)
near("0.7 vs 0.12 package", val(k07, "kepler_node_package_joules_total"), val(k12, "kepler_node_cpu_joules_total", zone="package"), pkg_w)
near("/metrics node energy", val(met, "joulie_sim_node_energy_joules_total", node="intel-0"), tel["energyJoules"], tel["nodePowerWatts"])
near("/metrics vs 0.7 package+dram", val(met, "joulie_sim_node_energy_joules_total", node="intel-0"),
     val(k07, "kepler_node_package_joules_total") + val(k07, "kepler_node_dram_joules_total"), tel["nodePowerWatts"])
w12 = val(k12, "kepler_node_cpu_watts", zone="package")
if abs(w12 - tel["cpu"]["packagePowerWatts"]) > 0.1 * w12:
    fails.append(f"0.12 package watts {w12} vs {tel['cpu']['packagePowerWatts']}")
report()
EOF

# Debian's prometheus scrapes /metrics and each exporter endpoint of intel-0 every second.
pport=$(free_port)
cat >"$root/prom.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}
scrape_configs:
- job_name: hwemu
  static_configs: [{targets: ['127.0.0.1:$port']}]
- job_name: kepler-0.7
  honor_labels: true   # Kepler 0.7 sets instance itself, as with the real exporter
  metrics_path: /exporters/kepler-0.7/intel-0/metrics
  static_configs: [{targets: ['127.0.0.1:$port']}]
- job_name: kepler-0.12
  metrics_path: /exporters/kepler-0.12/metrics
  params: {node: [intel-0]}
  static_configs: [{targets: ['127.0.0.1:$port']}]
EOF
promtool check config "$root/prom.yml" >/dev/null 2>&1 && ok || bad "prometheus config: $(promtool check config "$root/prom.yml" 2>&1)"
prom_start "$root" $pport && ok || { bad "prometheus did not start: $(tail -5 "$root/prom.log")"; finish; }
prom_scraped 3 && ok || bad "targets up: $(q 'sum(up)'); $(curl -s "$purl/api/v1/targets" | head -c 600)"
rate=$(q 'rate(joulie_sim_node_energy_joules_total{node="intel-0"}[5s])')
tel=$(curl -s "$url/telemetry/intel-0")
rapl_w=$(json 'd["cpu"]["packagePowerWatts"] + d["cpu"]["dramPowerWatts"]' <<<"$tel")
node_w=$(json 'd["nodePowerWatts"]' <<<"$tel")
echo "rate(joulie_sim_node_energy_joules_total) = $rate W; /telemetry packages+DRAM = $rapl_w W, nodePowerWatts = $node_w W"
"$py" -c "import sys; sys.exit(0 if abs($rate - $rapl_w) <= 0.1 * $rapl_w else 1)" 2>/dev/null && ok || bad "rate $rate vs $rapl_w W"
r07=$(q 'sum(rate(kepler_node_package_joules_total{instance="intel-0"}[5s]))')
r12=$(q 'rate(kepler_node_cpu_joules_total{node_name="intel-0",zone="package"}[5s])')
pkg_w=$(json 'd["cpu"]["packagePowerWatts"]' <<<"$tel")
echo "package energy rate: kepler-0.7 $r07 W, kepler-0.12 $r12 W, /telemetry $pkg_w W"
"$py" -c "import sys; sys.exit(0 if abs($r07 - $pkg_w) <= 0.1 * $pkg_w and abs($r12 - $pkg_w) <= 0.1 * $pkg_w else 1)" 2>/dev/null \
    && ok || bad "kepler package rates $r07 / $r12 vs $pkg_w W"
# The two formats' stored package energies: Prometheus scrapes the two jobs at independent
# offsets up to one scrape interval (1 s) apart, so they agree within that plus one tick (0.2 s).
d=$(q 'abs(sum(kepler_node_package_joules_total{instance="intel-0"}) - sum(kepler_node_cpu_joules_total{node_name="intel-0",zone="package"}))')
"$py" -c "import sys; sys.exit(0 if $d <= $pkg_w * 1.2 * 1.05 else 1)" 2>/dev/null && ok || bad "stored kepler counters differ by $d J"
kill $ppid_ 2>/dev/null
wait $ppid_ 2>/dev/null
ppid_=

# The Grafana dashboard: well-formed, with a datasource variable, and every metric it names on /metrics.
"$py" -m json.tool "$dash" >/dev/null && ok || bad "$dash is not well-formed JSON"
[ "$(json '[v["type"] for v in d["templating"]["list"]].count("datasource")' <"$dash")" = 1 ] && ok || bad "no datasource variable"
curl -s "$url/metrics" >"$root/metrics.txt"
names=$(grep -o '\bjoulie_sim_[a-z0-9_]*' "$dash" | sort -u)
[ -n "$names" ] && ok || bad "the dashboard names no metric"
for m in $names; do
    grep -q "^$m[{ ]" "$root/metrics.txt" && ok || bad "dashboard metric $m is not on /metrics"
done
exprs=$(json 'sum(1 for p in d["panels"] for t in p["targets"] if "joulie_sim_" not in t["expr"])' <"$dash")
[ "$exprs" = 0 ] && ok || bad "$exprs dashboard expressions name no joulie_sim_ metric"

# A format not enabled: 404 saying how to enable it. A GPU format on a node without GPUs: 404
# saying so (the GPU formats themselves: test_gpu_telemetry.sh).
kill $pid; wait $pid 2>/dev/null; pid=
SIM_EXPORTERS=kepler-0.7,dcgm-exporter serve_start "$url" "$root/serve.err" --root "$root/r" --addr 127.0.0.1:$port \
    --tick 200ms || { bad "serve did not come back: $(cat "$root/serve.err")"; finish; }
code=$(curl -s -o "$root/body" -w '%{http_code}' "$url/exporters/kepler-0.12/intel-0/metrics")
[ "$code" = 404 ] && grep -q 'SIM_EXPORTERS=kepler-0.12' "$root/body" && ok || bad "not enabled: $code $(cat "$root/body")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/exporters/kepler-0.7/intel-0/metrics")" = 200 ] && ok || bad "kepler-0.7 alone"
code=$(curl -s -o "$root/body" -w '%{http_code}' "$url/exporters/dcgm-exporter/intel-0/metrics")
[ "$code" = 404 ] && grep -q 'node intel-0 has no GPUs' "$root/body" && ok || bad "dcgm-exporter on intel-0: $code $(cat "$root/body")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/exporters/dcgm-exporter/sxm-nopm-0/metrics")" = 200 ] && ok || bad "dcgm-exporter on sxm-nopm-0"

# Energy-only hosts and the other RAPL zones, on a spec of our own: amd-0 (AMD energy-only: package
# and core counters, no limits, no DRAM zone), amd1-0 (the same on one socket: Kepler 0.12 names
# each zone's own directory), psys-0 (amd-epyc-2s-energy-only with a psys zone added: Kepler
# 0.12's zone psys is the platform counter, the node's power) and vm-0 (no powercap: build info
# only). promtool on each; values against /telemetry and the zones' energy_uj files, read right
# after, within one tick.
kill $pid; wait $pid 2>/dev/null; pid=
cat >"$root/energy.yaml" <<EOF
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: energy}
spec:
  defaults:
    baseLoad: {cpuUtil: 0.7}
  pools:
  - {name: amd, profile: amd-epyc-2s-energy-only, count: 1}
  - {name: amd1, profile: amd-epyc-2s-energy-only, count: 1, overrides: {cpu: {sockets: 1}, node: {capacity: {cpu: 192}}}}
  - name: psys
    profile: amd-epyc-2s-energy-only
    count: 1
    overrides:
      powercap:
        controlTypes:
        - name: intel-rapl
          zones:
          - {repeat: per-package, nameFormat: package-%d, energyUnitNJ: 15258, constraints: []}
          - {repeat: once, nameFormat: psys, energyUnitNJ: 15258, constraints: []}
  - {name: vm, profile: vm-no-powercap, count: 1}
EOF
SIM_EXPORTERS=kepler-0.7,kepler-0.12 serve_start "$url" "$root/serve.err" --spec "$root/energy.yaml" --root "$root/e" \
    --addr 127.0.0.1:$port --tick 200ms || { bad "serve did not come up on energy.yaml: $(cat "$root/serve.err")"; finish; }
sleep 0.5
for node in amd-0 amd1-0 psys-0 vm-0; do
    for x in kepler-0.7 kepler-0.12; do
        out=$(curl -s "$url/exporters/$x/$node/metrics" | promtool check metrics 2>&1) && ok || bad "promtool on $x/$node: $out"
    done
done
for x in kepler-0.7 kepler-0.12; do
    n=$(curl -s "$url/exporters/$x/vm-0/metrics" | grep -c '^kepler_node_')
    [ "$n" = 0 ] && ok || bad "$x: vm-0 exports $n kepler_node_ series"
done
"$py" - "$url" "$root/e" "$hwemu" <<'EOF' && ok || bad "Kepler on energy-only nodes (above)"
import json, sys, time, urllib.request
from exposition import cat, fails, report, series
url, root, hwemu = sys.argv[1:4]
def scrape(path):
    global scraped
    scraped = time.time()
    return series(url + path)
def uj(node, zone):
    return int(cat(hwemu, root, node, f"/sys/class/powercap/{zone}/energy_uj")) / 1e6
def near(what, later, earlier, watts, since=0.0):
    # later read within one tick (200 ms, 20 % margin) of earlier; a file read is computed when it
    # is made, so it is ahead by the time since the earlier scrape too
    if not -1e-5 <= later - earlier <= watts * (0.2 + since) * 1.2:
        fails.append(f"{what}: {earlier} then {later} (one tick: {watts * 0.2:.3f} J, then {since:.3f} s)")
def zones(s, name):
    return {l["zone"]: (l["path"], v) for l, v in s[name] if l["node_name"] == node}
# amd-0: 0.7 core and package (no DRAM), 0.12 zones package and core, aggregated over the sockets.
node = "amd-0"
k07 = scrape("/exporters/kepler-0.7/amd-0/metrics")
t07 = scraped
k12 = scrape("/exporters/kepler-0.12/amd-0/metrics")
tel = json.load(urllib.request.urlopen(url + "/telemetry/amd-0"))
core = [uj("amd-0", "intel-rapl:0:0"), uj("amd-0", "intel-rapl:1:0")]
since07, since12 = time.time() - t07, time.time() - scraped
if sorted(k07) != ["kepler_exporter_build_info", "kepler_node_core_joules_total", "kepler_node_package_joules_total"]:
    fails.append(f"0.7 families {sorted(k07)}")
j12, w12 = zones(k12, "kepler_node_cpu_joules_total"), zones(k12, "kepler_node_cpu_watts")
if {z: p for z, (p, _) in j12.items()} != {"package": "aggregated-package", "core": "aggregated-core"}:
    fails.append(f"0.12 zones {j12}")
for p in tel["packages"]:
    k = str(p["index"])
    for comp, later, since in (("package", p["energyJoules"], 0), ("core", core[p["index"]], since07)):
        got = sum(v for l, v in k07[f"kepler_node_{comp}_joules_total"] if l["package"] == k)
        near(f"0.7 {comp} {k}", later, got, w12[comp][1] / 2, since)
near("0.12 package", sum(p["energyJoules"] for p in tel["packages"]), j12["package"][1], w12["package"][1])
near("0.12 core", sum(core), j12["core"][1], w12["core"][1], since12)
if not 0 < w12["core"][1] < w12["package"][1]:
    fails.append(f"core {w12['core']} W, package {w12['package']} W")
# amd1-0: one socket, so each zone's own directory.
node = "amd1-0"
j12 = zones(scrape("/exporters/kepler-0.12/amd1-0/metrics"), "kepler_node_cpu_joules_total")
if {z: p for z, (p, _) in j12.items()} != {"package": "/sys/class/powercap/intel-rapl:0", "core": "/sys/class/powercap/intel-rapl:0:0"}:
    fails.append(f"one socket: {j12}")
# psys-0: zone psys at its own directory (intel-rapl:2, after the packages); power = the node's.
node = "psys-0"
# The node's power moves between ticks (the parts warm up), so the exporter's watts are checked to
# lie between /telemetry's power read right before and right after the scrape.
before = json.load(urllib.request.urlopen(url + "/telemetry/psys-0"))["nodePowerWatts"]
k12 = scrape("/exporters/kepler-0.12/psys-0/metrics")
tel = json.load(urllib.request.urlopen(url + "/telemetry/psys-0"))
j12, w12 = zones(k12, "kepler_node_cpu_joules_total"), zones(k12, "kepler_node_cpu_watts")
if j12.get("psys", ("",))[0] != "/sys/class/powercap/intel-rapl:2" or set(j12) != {"package", "psys"}:
    fails.append(f"psys zones {j12}")
else:
    later = uj("psys-0", "intel-rapl:2")
    near("0.12 psys", later, j12["psys"][1], w12["psys"][1], time.time() - scraped)
    lo, hi = sorted((before, tel["nodePowerWatts"]))
    if not lo * (1 - 1e-3) <= w12["psys"][1] <= hi * (1 + 1e-3):
        fails.append(f"psys {w12['psys'][1]} W outside nodePowerWatts {before} W (before) .. {tel['nodePowerWatts']} W (after)")
report()
EOF
finish
