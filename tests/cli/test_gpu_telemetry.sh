#!/usr/bin/env bash
# GPUs in the engine's telemetry against real consumers: `hwemu serve` on tests/specs/gpu.yaml
# (200 ms tick) with SIM_EXPORTERS=dcgm-exporter,rocm-device-metrics,kepler-0.7,kepler-0.12 and an
# OTLP push to the Node.js receiver (tests/otlp/receiver.js, the official OTLP protobuf
# definitions from npm).
# Checks: /telemetry's gpus[] and gpu totals add up to the node's power and energy; /metrics'
# per-GPU series (promtool clean, values as /telemetry); the dcgm-exporter and ROCm exposition of
# every NVIDIA and AMD node (promtool finds nothing but what it finds in the real exporters'
# output; label order, names per product, values against /telemetry and the node's NVML files);
# a 404 naming the right format on another vendor's node; Kepler's GPU series (0.12:
# kepler_node_gpu_{,active_,idle_}{joules_total,watts} and kepler_node_gpu_info with NVML's name
# and UUID; 0.7: kepler_node_gpu_joules_total per mode, source NVML) against /telemetry within
# one tick, promtool-clean, and none on AMD or Intel GPUs; Debian's prometheus scraping both
# formats and /metrics, with PromQL: DCGM_FI_DEV_POWER_USAGE of the H100 SXM node against its GPU
# power, rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION)/1000 and rate(gpu_energy_consumed)/1e6 against
# the power; and the decoded OTLP batches: per-GPU hw.energy and hw.power with hw.type gpu, hw.id,
# hw.vendor and hw.model, values against /telemetry, GPUs included in hw.host.energy.
# Usage: test_gpu_telemetry.sh HWEMU_BINARY   (run from the source tree; needs node, npm, prometheus)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
root=$(mktemp -d)
pid= rpid= ppid_=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; [ -n "$rpid" ] && kill $rpid 2>/dev/null
      [ -n "$ppid_" ] && kill $ppid_ 2>/dev/null; wait 2>/dev/null; rm -rf "$root"' EXIT
port=$(free_port)
rport=$(free_port)
pport=$(free_port)
url=http://127.0.0.1:$port
recv=http://127.0.0.1:$rport
log=$root/recv.jsonl
json() { "$py" -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

receiver_start "$root" "$rport" "$log" >"$root/recv.err" || { bad "$(cat "$root/recv.err")"; finish; }

OTEL_EXPORTER_OTLP_ENDPOINT=$recv OTEL_METRIC_EXPORT_INTERVAL=500 SIM_EXPORTERS=dcgm-exporter,rocm-device-metrics,kepler-0.7,kepler-0.12 \
    serve_start "$url" "$root/serve.err" --spec tests/specs/gpu.yaml --root "$root/r" --addr 127.0.0.1:$port \
    --tick 200ms || { bad "serve did not come up: $(cat "$root/serve.err")"; finish; }
sleep 1.5 # the NVML draw is a 1 s mean: let it fill

# /telemetry: gpus[] per GPU, the gpu totals, and the node's power and energy include them.
"$py" - "$url" <<'EOF' && ok || bad "/telemetry GPU fields (above)"
import json, sys, urllib.request
from exposition import fails, report
url = sys.argv[1]
want = {"sxm-0": ("nvidia", 8), "mi300x-0": ("amd", 8), "w7900-0": ("amd", 4), "flex-0": ("intel", 4), "l40s-0": ("nvidia", 4)}
for node, (vendor, count) in want.items():
    d = json.load(urllib.request.urlopen(f"{url}/telemetry/{node}"))
    g, gs = d["gpu"], d["gpus"]
    keys = {"index", "powerWatts", "drawWatts", "limitWatts", "enforcedLimitWatts", "temperatureC", "clockMHz",
            "memoryClockMHz", "energyJoules"}
    if not (g["present"] and g["vendor"] == vendor and g["count"] == count == len(gs) and g["product"]):
        fails.append(f"{node}: gpu {g}, {len(gs)} gpus")
    if any(set(x) != keys for x in gs) or [x["index"] for x in gs] != list(range(count)):
        fails.append(f"{node}: gpus[] fields {gs[0]}")
    if abs(g["powerWattsTotal"] - sum(x["powerWatts"] for x in gs)) > 1e-6 or g["powerWattsTotal"] <= 0:
        fails.append(f"{node}: powerWattsTotal {g['powerWattsTotal']}")
    if abs(g["avgPowerWattsTotal"] - sum(x["drawWatts"] for x in gs)) > 1e-6:
        fails.append(f"{node}: avgPowerWattsTotal {g['avgPowerWattsTotal']}")
    cpu = d["cpu"]["packagePowerWatts"] + d["cpu"]["dramPowerWatts"]
    if not cpu + g["powerWattsTotal"] <= d["nodePowerWatts"] + 1e-6 or d["packagePowerWatts"] != round(d["nodePowerWatts"]):
        fails.append(f"{node}: nodePowerWatts {d['nodePowerWatts']} < packages+DRAM {cpu} + GPUs {g['powerWattsTotal']}")
    parts = sum(p["energyJoules"] + p["dramEnergyJoules"] for p in d["packages"]) + sum(x["energyJoules"] for x in gs)
    if abs(d["energyJoules"] - parts) > 1e-5 or not all(x["energyJoules"] > 0 for x in gs):
        fails.append(f"{node}: energyJoules {d['energyJoules']} != packages + DRAM + GPUs {parts}")
e = json.load(urllib.request.urlopen(f"{url}/debug/energy"))
n = next(x for x in e["nodes"] if x["node"] == "sxm-0")
if len(n["gpus"]) != 8:
    fails.append(f"/debug/energy sxm-0: {n}")
report()
EOF

# /metrics: promtool clean; the per-GPU series as /telemetry read right after (energy within a
# couple of ticks).
curl -s "$url/metrics" >"$root/metrics.txt"
out=$(promtool check metrics <"$root/metrics.txt" 2>&1) && ok || bad "promtool on /metrics: $out"
"$py" - "$url" <<'EOF' && ok || bad "/metrics GPU series (above)"
import json, re, sys, urllib.request
met = urllib.request.urlopen(sys.argv[1] + "/metrics").read().decode()
tel = json.load(urllib.request.urlopen(sys.argv[1] + "/telemetry/sxm-0"))
def val(name, **labels):
    sel = ",".join(f'{k}="{v}"' for k, v in labels.items())
    m = re.search("^" + re.escape(f"{name}{{{sel}}}") + r" (\S+)$", met, re.M)
    assert m, (name, labels)
    return float(m.group(1))
for g in tel["gpus"]:
    k = str(g["index"])
    assert abs(val("joulie_sim_node_gpu_power_watts", node="sxm-0", gpu=k) - g["powerWatts"]) <= 0.01 * g["powerWatts"], g
    assert -1e-5 <= g["energyJoules"] - val("joulie_sim_node_gpu_energy_joules_total", node="sxm-0", gpu=k) <= g["powerWatts"] * 0.5, g
    assert abs(val("joulie_sim_node_gpu_cap_watts", node="sxm-0", gpu=k) - g["enforcedLimitWatts"]) <= 0.01 * g["enforcedLimitWatts"], g
    assert abs(val("joulie_sim_node_gpu_frequency_hertz", node="sxm-0", gpu=k) - g["clockMHz"] * 1e6) <= 1e-3, g
    assert abs(val("joulie_sim_node_gpu_temperature_celsius", node="sxm-0", gpu=k) - g["temperatureC"]) < 1, g
assert val("joulie_sim_node_gpu_util", node="sxm-0") == tel["gpu"]["utilization"]
EOF

# Every NVIDIA node in dcgm-exporter's format and every AMD node in the ROCm exporter's: the
# Content-Type, and promtool finding only what it finds in the real exporters' output (DCGM:
# the camelCase modelName label, a counter without _total; ROCm: gpu_nodes_total, a gauge).
lint_ok() { # FORMAT FILE: promtool's lint findings are exactly the format's own
    local out rc
    out=$(promtool check metrics <"$2" 2>&1); rc=$?
    [ $rc = 0 ] || [ $rc = 3 ] || { echo "promtool rc=$rc: $out"; return 1; }
    out=$(sort -u <<<"$out" | sed 's/^DCGM_FI_[A-Z_]* label names should/DCGM label names should/' | sort -u)
    case $1 in
    dcgm-exporter) want="DCGM label names should be written in 'snake_case' not 'camelCase'
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter metrics should have \"_total\" suffix" ;;
    *) want='gpu_nodes_total non-counter metrics should not have "_total" suffix' ;;
    esac
    [ "$out" = "$(sort <<<"$want")" ] || { echo "promtool findings: $out"; return 1; }
}
for x in dcgm-exporter:sxm-0 dcgm-exporter:sxm4-0 dcgm-exporter:nvl-0 dcgm-exporter:l40s-0 dcgm-exporter:nopm-0 \
    rocm-device-metrics:mi300x-0 rocm-device-metrics:legacy-0 rocm-device-metrics:w7900-0; do
    f=${x%%:*} node=${x#*:}
    ctype=$(curl -s -o "$root/$f-$node.txt" -w '%{http_code} %{content_type}' "$url/exporters/$f/$node/metrics")
    [ "$ctype" = "200 text/plain; version=0.0.4; charset=utf-8" ] && ok || bad "$f $node: $ctype"
    out=$(lint_ok "$f" "$root/$f-$node.txt") && ok || bad "promtool on $f/$node: $out"
done

# The DCGM series: labels in the template's order with the node's NVML identity, INT64 fields as
# integers and POWER_USAGE with six decimals; values as /telemetry and the NVML files show them.
uuid=$("$hwemu" cat --root "$root/r" --node sxm-0 state/nvml/gpu3/uuid)
grep -q "^DCGM_FI_DEV_POWER_USAGE{gpu=\"3\",UUID=\"$uuid\",pci_bus_id=\"00000000:13:00.0\",device=\"nvidia3\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"sxm-0\",DCGM_FI_DRIVER_VERSION=\"590.48.01\"} [0-9]*\.[0-9]\{6\}$" \
    "$root/dcgm-exporter-sxm-0.txt" && ok || bad "DCGM label set: $(grep -m1 '^DCGM_FI_DEV_POWER_USAGE{gpu="3"' "$root/dcgm-exporter-sxm-0.txt")"
"$py" - "$url" "$root" "$hwemu" <<'EOF' && ok || bad "GPU exporter values (above)"
import json, re, sys, urllib.request
from exposition import cat, check, report, series
url, root, hwemu = sys.argv[1:4]
# dcgm-exporter of sxm-0, then /telemetry (the same tick or a later one).
d = series(url + "/exporters/dcgm-exporter/sxm-0/metrics", raw=True)
tel = json.load(urllib.request.urlopen(url + "/telemetry/sxm-0"))
check(sorted(d) == sorted("DCGM_FI_DEV_" + n for n in ("SM_CLOCK", "MEM_CLOCK", "MEMORY_TEMP", "GPU_TEMP", "POWER_USAGE",
      "TOTAL_ENERGY_CONSUMPTION", "GPU_UTIL", "MEM_COPY_UTIL", "FB_FREE", "FB_USED")) and all(len(v) == 8 for v in d.values()),
      {n: len(v) for n, v in d.items()})
for labels, _, v in d["DCGM_FI_DEV_POWER_USAGE"]:
    g = tel["gpus"][int(labels["gpu"])]
    check(abs(float(v) - g["drawWatts"]) <= 0.01 * g["drawWatts"] and abs(float(v) - g["powerWatts"]) <= 0.02 * g["powerWatts"],
          f"POWER_USAGE {v} vs draw {g['drawWatts']}, power {g['powerWatts']}")
for labels, _, v in d["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]:
    g = tel["gpus"][int(labels["gpu"])]
    check(re.fullmatch(r"\d+", v) and -1 <= g["energyJoules"] * 1000 - int(v) <= g["powerWatts"] * 1000 * 1.0,
          f"TOTAL_ENERGY_CONSUMPTION {v} mJ vs {g['energyJoules']} J")
for name, key in (("DCGM_FI_DEV_SM_CLOCK", "clockMHz"), ("DCGM_FI_DEV_MEM_CLOCK", "memoryClockMHz"),
                  ("DCGM_FI_DEV_GPU_TEMP", "temperatureC")):
    for labels, _, v in d[name]:
        check(re.fullmatch(r"\d+", v) and abs(int(v) - tel["gpus"][int(labels["gpu"])][key]) <= 1, f"{name} {v}")
check([x[2] for x in d["DCGM_FI_DEV_GPU_UTIL"]] == ["100"] * 8, d["DCGM_FI_DEV_GPU_UTIL"][0])
total = int(cat(hwemu, root + "/r", "sxm-0", "state/nvml/gpu0/memory_total_mib"))
check(int(d["DCGM_FI_DEV_FB_USED"][0][2]) + int(d["DCGM_FI_DEV_FB_FREE"][0][2]) == total, f"FB used + free vs {total} MiB")
check(abs(int(d["DCGM_FI_DEV_MEMORY_TEMP"][0][2]) - int(cat(hwemu, root + "/r", "sxm-0", "state/nvml/gpu0/temperature_memory_c"))) <= 1,
      d["DCGM_FI_DEV_MEMORY_TEMP"][0])
# ROCm: the MI3xx names on the MI300X, the MI2xx ones on the Radeon; labels sorted; energy in uJ.
want = {"mi300x-0": ("gpu_package_power", "gpu_junction_temperature"),
        "w7900-0": ("gpu_average_package_power", "gpu_edge_temperature")}
for node, (power, hot) in want.items():
    r = series(f"{url}/exporters/rocm-device-metrics/{node}/metrics", raw=True)
    tel = json.load(urllib.request.urlopen(f"{url}/telemetry/{node}"))
    n = tel["gpu"]["count"]
    check(set(r) == {power, hot, "gpu_power_usage", "gpu_energy_consumed", "gpu_memory_temperature", "gpu_gfx_activity",
                     "gpu_clock", "gpu_nodes_total"}, f"{node}: {sorted(r)}")
    check(all(names == sorted(names) and labels["hostname"] == node for v in r.values() for labels, names, _ in v),
          f"{node}: labels not sorted")
    check(r["gpu_nodes_total"][0][2] == str(n), r["gpu_nodes_total"])
    check(all(l["clock_type"] == "system" and l["card_model"] == tel["gpu"]["product"] for l, _, _ in r["gpu_clock"]),
          r["gpu_clock"][0])
    for labels, _, v in r["gpu_energy_consumed"]:
        g = tel["gpus"][int(labels["gpu_id"])]
        check(-1 <= g["energyJoules"] * 1e6 - float(v) <= g["powerWatts"] * 1e6 * 1.0, f"{node}: gpu_energy_consumed {v} vs {g}")
    for (labels, _, v), (_, _, u) in zip(r[power], r["gpu_power_usage"]):
        g = tel["gpus"][int(labels["gpu_id"])]
        w = g["powerWatts"] if power == "gpu_package_power" else g["drawWatts"]
        check(v == u and abs(float(v) - w) <= 0.02 * w, f"{node}: {power} {v}, gpu_power_usage {u} vs {w}")
    t = float(r[hot][0][2])
    check(t == int(t) and 0 <= t - int(tel["gpus"][0]["temperatureC"]) <= 15, f"{node}: {hot} {t} vs {tel['gpus'][0]}")
report()
EOF

# Kepler's GPU series, NVIDIA only (Kepler reads GPUs through NVML): promtool-clean; on sxm-0 the
# 0.12 series per GPU with NVML's name and UUID, power NVML's (the draw), energy within one tick of
# /telemetry read right after, active + idle = total; 0.7's dynamic + idle per GPU likewise.
for x in kepler-0.7 kepler-0.12; do
    curl -s "$url/exporters/$x/sxm-0/metrics" >"$root/$x-sxm-0.txt"
    out=$(promtool check metrics <"$root/$x-sxm-0.txt" 2>&1) && ok || bad "promtool on $x/sxm-0: $out"
    for node in mi300x-0 flex-0; do
        n=$(curl -s "$url/exporters/$x/$node/metrics" | grep -c '^kepler_node_gpu')
        [ "$n" = 0 ] && ok || bad "$x on $node: $n GPU series (Kepler reads NVIDIA GPUs only)"
    done
done
"$py" - "$url" "$root" "$hwemu" <<'EOF' && ok || bad "Kepler GPU series (above)"
import json, sys, urllib.request
from exposition import cat, check, report, series
url, root, hwemu = sys.argv[1:4]
k12 = series(url + "/exporters/kepler-0.12/sxm-0/metrics")
k07 = series(url + "/exporters/kepler-0.7/sxm-0/metrics")
tel = json.load(urllib.request.urlopen(url + "/telemetry/sxm-0"))
fams = ["kepler_node_gpu_" + f for f in ("joules_total", "active_joules_total", "idle_joules_total", "watts",
                                         "active_watts", "idle_watts", "info")]
check(all(len(k12.get(f, [])) == 8 for f in fams), {f: len(k12.get(f, [])) for f in fams})
for g in tel["gpus"]:
    k = str(g["index"])
    one = {f: [v for l, v in k12[f] if l["gpu"] == k] for f in fams}
    labels = next(l for l, _ in k12["kepler_node_gpu_joules_total"] if l["gpu"] == k)
    check(labels == {"gpu": k, "gpu_name": cat(hwemu, root + "/r", "sxm-0", f"state/nvml/gpu{k}/name"),
                     "gpu_uuid": cat(hwemu, root + "/r", "sxm-0", f"state/nvml/gpu{k}/uuid"),
                     "node_name": "sxm-0", "vendor": "nvidia"}, labels)
    j = one["kepler_node_gpu_joules_total"][0]
    check(-1e-5 <= g["energyJoules"] - j <= g["powerWatts"] * 0.2 * 1.2, f"gpu {k}: 0.12 {j} J vs /telemetry {g['energyJoules']} J")
    check(abs(one["kepler_node_gpu_active_joules_total"][0] + one["kepler_node_gpu_idle_joules_total"][0] - j) <= 1e-5,
          f"gpu {k}: active + idle != total")
    check(0 < one["kepler_node_gpu_idle_joules_total"][0] < one["kepler_node_gpu_active_joules_total"][0], one)
    w = one["kepler_node_gpu_watts"][0]
    check(abs(w - g["drawWatts"]) <= 0.01 * g["drawWatts"], f"gpu {k}: {w} W vs NVML draw {g['drawWatts']} W")
    check(abs(one["kepler_node_gpu_active_watts"][0] + one["kepler_node_gpu_idle_watts"][0] - w) <= 1e-5, one)
    check(one["kepler_node_gpu_info"] == [1.0], one["kepler_node_gpu_info"])
    modes = {l["mode"]: v for l, v in k07["kepler_node_gpu_joules_total"] if l["package"] == k and l["source"] == "NVML"}
    check(set(modes) == {"dynamic", "idle"} and -1e-5 <= g["energyJoules"] - sum(modes.values()) <= g["powerWatts"] * 0.2 * 1.2,
          f"gpu {k}: 0.7 {modes} vs /telemetry {g['energyJoules']} J")
report()
EOF

# Another vendor's node: a 404 saying which format serves it.
for x in dcgm-exporter:mi300x-0:rocm-device-metrics rocm-device-metrics:sxm-0:dcgm-exporter dcgm-exporter:flex-0:; do
    f=${x%%:*} rest=${x#*:}
    node=${rest%%:*} use=${rest#*:}
    code=$(curl -s -o "$root/body" -w '%{http_code} %{content_type}' "$url/exporters/$f/$node/metrics")
    msg=$(json 'd["error"]' <"$root/body")
    if [ -n "$use" ]; then expect=": use $use\$"; else expect="node $node has Intel GPUs\$"; fi
    [ "$code" = "404 application/json" ] && [ "$(json 'd["node"]' <"$root/body")" = "$node" ] && grep -q "$expect" <<<"$msg" &&
        ok || bad "$f on $node: $code $msg"
done

# Debian's prometheus scrapes /metrics, dcgm-exporter of sxm-0 and the ROCm exporter of mi300x-0.
cat >"$root/prom.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}
scrape_configs:
- job_name: hwemu
  static_configs: [{targets: ['127.0.0.1:$port']}]
- job_name: dcgm
  metrics_path: /exporters/dcgm-exporter/sxm-0/metrics
  static_configs: [{targets: ['127.0.0.1:$port']}]
- job_name: rocm
  metrics_path: /exporters/rocm-device-metrics/metrics
  params: {node: [mi300x-0]}
  static_configs: [{targets: ['127.0.0.1:$port']}]
EOF
prom_start "$root" $pport && ok || { bad "prometheus did not start: $(tail -5 "$root/prom.log")"; finish; }
prom_scraped 3 && ok || bad "targets up: $(q 'sum(up)'); $(curl -s "$purl/api/v1/targets" | head -c 600)"
near() { # WHAT GOT WANT TOLERANCE (a fraction of WANT)
    echo "$1: $2 (want $3)"
    "$py" -c "import sys; sys.exit(0 if abs($2 - $3) <= $4 * $3 else 1)" 2>/dev/null && ok || bad "$1: $2 vs $3"
}
# rates over 10 s of 1 s scrapes: a scrape late by a few hundred ms on a loaded machine moves
# a rate over 5 samples by several percent, over 10 by half that
for _ in $(seq 40); do
    [ "$(q 'count(count_over_time(up[11s]) >= 11)')" = 3 ] && break
    sleep 0.5
done
sxm=$(curl -s "$url/telemetry/sxm-0" | json 'd["gpu"]["powerWattsTotal"]')
mi=$(curl -s "$url/telemetry/mi300x-0" | json 'd["gpu"]["powerWattsTotal"]')
near "sum(DCGM_FI_DEV_POWER_USAGE) of sxm-0, W" "$(q 'sum(DCGM_FI_DEV_POWER_USAGE{Hostname="sxm-0"})')" "$sxm" 0.01
near "sum(rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[10s])) / 1000 of sxm-0, W" \
    "$(q 'sum(rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{Hostname="sxm-0"}[10s])) / 1000')" "$sxm" 0.05
near "rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"}[10s]) / 1000 vs DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"}, W" \
    "$(q 'rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0"}[10s]) / 1000')" "$(q 'DCGM_FI_DEV_POWER_USAGE{gpu="0"}')" 0.05
near "sum(rate(gpu_energy_consumed[10s])) / 1e6 of mi300x-0, W" \
    "$(q 'sum(rate(gpu_energy_consumed{hostname="mi300x-0"}[10s])) / 1e6')" "$mi" 0.05
near "sum(gpu_power_usage) of mi300x-0, W" "$(q 'sum(gpu_power_usage{hostname="mi300x-0"})')" "$mi" 0.01
near "sum(rate(joulie_sim_node_gpu_energy_joules_total[10s])) of sxm-0, W" \
    "$(q 'sum(rate(joulie_sim_node_gpu_energy_joules_total{node="sxm-0"}[10s]))')" "$sxm" 0.05
kill $ppid_ 2>/dev/null
wait $ppid_ 2>/dev/null
ppid_=

# OTLP: every request decoded; per-GPU hw.energy and hw.power with the GPU's attributes; values
# against /telemetry read after the batch (the power is steady, so /telemetry's energy is the
# batch's plus that power over the time between their ticks); hw.host.energy counts the GPUs.
"$py" - "$url" "$log" <<'EOF' && ok || bad "OTLP GPU points (above)"
import json, sys, time, urllib.request
url, log = sys.argv[1:3]
reqs = [json.loads(l) for l in open(log)]
tel, when = {}, {}
for n in ("sxm-0", "mi300x-0", "flex-0"):
    t0 = time.time()
    tel[n] = json.load(urllib.request.urlopen(f"{url}/telemetry/{n}"))
    when[n] = (t0 - 0.5, time.time())  # its tick: at most a tick (200 ms) and some lateness before
errs = [r for r in reqs if r.get("error")]
assert not errs, f"receiver errors: {errs[:1]}"
last = [r for r in reqs if r["path"] == "/v1/metrics"][-1]["body"]
def attrs(o):
    return {a["key"]: a["value"].get("stringValue") for a in o["attributes"]}
nodes = {}
for rm in last["resourceMetrics"]:
    ra = attrs(rm["resource"])
    if ra.get("hwemu.role") != "facility":
        nodes[ra["service.instance.id"]] = {m["name"]: m for sm in rm["scopeMetrics"] for m in sm["metrics"]}
spec = json.load(urllib.request.urlopen(url + "/debug/nodes"))["nodes"]
assert sorted(nodes) == sorted(n["node"] for n in spec), f"resources {sorted(nodes)}: every GPU node exports"
vendors = {"sxm-0": "NVIDIA", "mi300x-0": "AMD", "flex-0": "Intel"}
for node, d in tel.items():
    ms = nodes[node]
    def gpu_points(name):
        out = {}
        for p in (ms[name].get("sum") or ms[name].get("gauge"))["dataPoints"]:
            a = attrs(p)
            if a.get("hw.type") == "gpu":
                assert a["hw.vendor"] == vendors[node] and a["hw.model"] == d["gpu"]["product"], a
                out[a["hw.id"]] = p
        return out
    e, w = gpu_points("hw.energy"), gpu_points("hw.power")
    n = d["gpu"]["count"]
    assert sorted(e) == sorted(w) == sorted(f"gpu{k}" for k in range(n)), (sorted(e), sorted(w))
    assert ms["hw.energy"]["sum"]["isMonotonic"] and ms["hw.energy"]["sum"]["aggregationTemporality"] == 2
    for g in d["gpus"]:
        p = e[f"gpu{g['index']}"]
        lo, hi = (t - int(p["timeUnixNano"]) / 1e9 for t in when[node])
        assert hi < 5, f"the last batch is {hi:.1f} s old"
        dt = (g["energyJoules"] - p["asDouble"]) / g["powerWatts"]
        assert lo - 0.01 <= dt <= hi + 0.01, \
            f"{node} gpu{g['index']}: otlp {p['asDouble']} J, /telemetry {g['energyJoules']} J at {g['powerWatts']} W: {dt:.3f} s apart, not in [{lo:.3f}, {hi:.3f}]"
        assert abs(w[f"gpu{g['index']}"]["asDouble"] - g["powerWatts"]) <= 0.02 * g["powerWatts"], (w, g)
    temps = [p for p in ms["hw.temperature"]["gauge"]["dataPoints"] if attrs(p).get("hw.parent", "").startswith("gpu")]
    assert len(temps) == n, temps
    host = int(ms["hw.host.energy"]["sum"]["dataPoints"][0]["asInt"])
    assert sum(p["asDouble"] for p in e.values()) <= host + 1 <= d["energyJoules"] + 1, (host, d["energyJoules"])
    assert ms["hw.host.power"]["gauge"]["dataPoints"][0]["asDouble"] >= sum(p["asDouble"] for p in w.values())
print(f"{len(reqs)} requests decoded; the GPU points of {', '.join(tel)} match /telemetry")
EOF
kill -INT $pid
wait $pid && ok || bad "serve did not stop cleanly"
pid=
finish
