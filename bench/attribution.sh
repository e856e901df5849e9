#!/usr/bin/env bash
# Real exporters against the engine's truth. Today: Scaphandre 1.0.0 (scripts/fetch-scaphandre.sh)
# under `hwemu exec` on an Intel RAPL node and an AMD energy-only node while a workload run moves
# their load (jobs start and end, so the power changes between and within intervals).
#  Node level: for each node, INTERVALS intervals of 2.5 s (tests/cli/scaphandre_truth.py:
#   Scaphandre's socket and host powers against the engine's energy per wall second, read from the
#   same files right before each of Scaphandre's refreshes; its counters against /debug/energy),
#   then the medians and worst errors, and what Scaphandre's host power leaves out of the node's
#   platform power (/telemetry's nodePowerWatts).
#  Per job: a second Scaphandre per node is scraped every 2.5 s through the whole run
#   (tests/cli/scaphandre_jobs.py); each job's process power (scaph_process_power_consumption_microwatts
#   of its pid, docs/interfaces.md "Jobs as processes") integrated over the intervals it was exported
#   in is its Scaphandre energy, set against the truth of jobs.jsonl (cpu + dram energy), per job, per
#   class and in total; and a plot (gnuplot, PNG) of both per job.
# Usage: bench/attribution.sh [path/to/hwemu] [INTERVALS] [PNG]   (run from the source tree;
#   PNG defaults to bench/attribution.png)
set -euo pipefail
hwemu=${1:-build/hwemu}
n=${2:-8}
png=${3:-bench/attribution.png}
build=$(cd "$(dirname "$hwemu")" && pwd)
scaph=$(scripts/fetch-scaphandre.sh "$build")
command -v gnuplot >/dev/null || { echo "attribution.sh: gnuplot is missing (apt-get install gnuplot-nox)" >&2; exit 1; }
tmp=$(mktemp -d /dev/shm/hwemu-attribution.XXXXXX)
pid= spids=() lpids=() jpids=()
cleanup() {
    for p in "${jpids[@]}" "${spids[@]}"; do kill $p 2>/dev/null || true; done
    [ -n "$pid" ] && kill $pid 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
    return 0
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cat >"$tmp/spec.yaml" <<'EOF2'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: attribution}
spec:
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 1}
  - {name: amd, profile: amd-epyc-2s-energy-only, count: 1}
EOF2
# CPU jobs over two to three minutes of wall time (the trace's own durations / 15)
"$hwemu" trace generate --jobs 14 --seed 7 --time-scale 15 --gpu-ratio 0 --out "$tmp/trace.jsonl" 2>/dev/null
port=$(free_port)
url=http://127.0.0.1:$port
# Scaphandre first (two per node: one for the node-level intervals, one for the jobs), the run
# after it, so that every job's process is there from its start
SIM_RUNS_DIR=$tmp/runs "$hwemu" serve --spec "$tmp/spec.yaml" --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms \
    2>"$tmp/serve.err" &
pid=$!
for _ in $(seq 300); do curl -sf "$url/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$url/healthz" >/dev/null || { echo "attribution.sh: hwemu serve did not come up: $(cat "$tmp/serve.err")" >&2; exit 1; }
for node in intel-0 amd-0; do
    for role in node jobs; do
        sport=$(free_port)
        "$hwemu" exec --root "$tmp/r" --node $node -- "$scaph" prometheus -a 127.0.0.1 -p $sport \
            >"$tmp/scaph-$node-$role.log" 2>&1 &
        spids+=($!)
        echo "$sport" >"$tmp/port-$node-$role"
    done
done
for f in "$tmp"/port-*; do
    for _ in $(seq 600); do curl -sf -o /dev/null "http://127.0.0.1:$(cat "$f")/metrics" && break; sleep 0.1; done
    curl -sf -o /dev/null "http://127.0.0.1:$(cat "$f")/metrics" ||
        { echo "attribution.sh: Scaphandre ($f) did not answer: $(tail -3 "${f/port-/scaph-}.log")" >&2; exit 1; }
done
for node in intel-0 amd-0; do
    jurl=http://127.0.0.1:$(cat "$tmp/port-$node-jobs")/metrics
    "$hwemu" exec --root "$tmp/r" --node $node -- python3 tests/cli/scaphandre_jobs.py "$jurl" 100000 2.5 \
        >"$tmp/jobs-$node.jsonl" 2>"$tmp/jobs-$node.err" &
    jpids+=($!)
done
sleep 3
curl -sf -X POST --data-binary "@$tmp/trace.jsonl" "$url/runs" >"$tmp/run.json"
run=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["runId"])' "$tmp/run.json")
for node in intel-0 amd-0; do
    surl=http://127.0.0.1:$(cat "$tmp/port-$node-node")/metrics
    (
        for _ in $(seq "$n"); do # an interval that fails (a timeout under load) is reported below
            "$hwemu" exec --root "$tmp/r" --node $node -- python3 tests/cli/scaphandre_truth.py "$url" "$surl" $node 2.5 0.2 ||
                true
        done >"$tmp/rows-$node.jsonl" 2>"$tmp/rows-$node.err"
    ) &
    lpids+=($!)
done
wait "${lpids[@]}" || true
# the jobs' collectors run until the run has ended, and one interval more (a job's last interval)
while [ "$(curl -s "$url/runs/$run" | python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])')" = running ]; do
    sleep 1
done
sleep 3
for p in "${jpids[@]}"; do kill $p 2>/dev/null || true; done
for node in intel-0 amd-0; do
    [ -s "$tmp/rows-$node.err" ] && { echo "$node: intervals that failed:"; tail -3 "$tmp/rows-$node.err"; }
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
python3 - "$tmp" <<'EOF2'
import glob, json, os, statistics, sys
tmp = sys.argv[1]
print("\n| node | interval | Scaphandre host W | engine W (per wall s) | error | socket 0 read gaps start / end s | host read gaps start / end s | /telemetry packages W | engine pace | node platform W |")
print("|---|---|---|---|---|---|---|---|---|---|")
summary = []
for node in ("intel-0", "amd-0"):
    rows = [json.loads(l) for l in open(os.path.join(tmp, f"rows-{node}.jsonl")) if l.strip()]
    errs, sock_errs, energy_ok, missing = [], [], 0, []
    for i, d in enumerate(rows):
        host = next(r for r in d["rows"] if r["what"] == "host power W")
        for r in d["rows"]:
            if r["ref"] is None:
                energy_ok += r["err"] == 0
            elif r["what"].startswith("socket") and r["what"].endswith("power W") and r["err"] is not None:
                sock_errs.append(abs(r["err"]))
        errs.append(abs(host["err"]))
        print(f"| {node} | {i + 1} | {host['scaph']:.3f} | {host['ref']:.3f} | {host['err'] * 100:+.4f} % | "
              f"{d['gapS'][0]:.3f} / {d['gapS'][1]:.3f} | {d['hostGapS'][0]:.3f} / {d['hostGapS'][1]:.3f} | {d['telemetryPackageW']:.3f} | {d['paceRatio']:.4f} | {d['nodeW']:.3f} |")
        missing.append(d["nodeW"] - host["scaph"])
    summary.append((node, len(rows), statistics.median(errs), max(errs), statistics.median(sock_errs), max(sock_errs),
                    energy_ok, sum(1 for d in rows for r in d["rows"] if r["ref"] is None), statistics.median(missing)))
print("\n| node | intervals | host error median / max | socket error median / max | counters inside the /debug/energy bracket | platform power Scaphandre does not see (median) |")
print("|---|---|---|---|---|---|")
for node, k, hm, hx, sm, sx, eo, en, miss in summary:
    print(f"| {node} | {k} | {hm * 100:.4f} % / {hx * 100:.4f} % | {sm * 100:.4f} % / {sx * 100:.4f} % | {eo} of {en} | {miss:.1f} W |")

# --- per job ----------------------------------------------------------------------------------------
rundir = glob.glob(os.path.join(tmp, "runs", "*"))[0]
jobs = [json.loads(l) for l in open(os.path.join(rundir, "jobs.jsonl")) if l.strip()]
summ = json.load(open(os.path.join(rundir, "summary.json")))
ivs = {node: [json.loads(l) for l in open(os.path.join(tmp, f"jobs-{node}.jsonl")) if l.strip()]
       for node in ("intel-0", "amd-0")}
print("\n| job | class | node | CPUs | life s | truth J (CPU + DRAM) | Scaphandre J | error | Scaphandre's intervals with power / life s | its mean W x life J | error |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
by_class, plot = {}, []
for j in sorted(jobs, key=lambda j: (j["node"], j["startSec"])):
    truth = j["energyJoules"]["cpu"] + j["energyJoules"]["dram"]
    rows = [r for r in ivs[j["node"]] if str(j["pid"]) in r["jobs"]]
    scaph = sum(r["jobs"][str(j["pid"])]["scaphW"] * (r["t1"] - r["t0"]) for r in rows)
    covered = sum(r["t1"] - r["t0"] for r in rows if r["jobs"][str(j["pid"])]["scaphW"] > 0)
    life = j["endSec"] - j["startSec"]
    c = by_class.setdefault(j["class"], [0.0, 0.0, 0])
    c[0] += truth
    c[1] += scaph
    c[2] += 1
    short = j["jobId"].replace("workload-", "w").replace("-worker-01", "")
    # what Scaphandre's model gives over the whole life: its mean power while it had one, x life
    full = scaph / covered * life if covered else 0.0
    plot.append((f"{short}/{j['node'].split('-')[0]}", truth, scaph, full))
    print(f"| {short} | {j['class']} | {j['node']} | {len(j['cpus'])} | {life:.1f} | {truth:.1f} | {scaph:.1f} | "
          f"{(scaph - truth) / truth * 100:+.1f} % | {covered:.1f} / {life:.1f} | {full:.1f} | {(full - truth) / truth * 100:+.1f} % |")
print("\n| class | jobs | truth J | Scaphandre J | error |")
print("|---|---|---|---|---|")
tt = ts = 0.0
for cls, (t, s, k) in sorted(by_class.items()):
    tt += t
    ts += s
    print(f"| {cls} | {k} | {t:.1f} | {s:.1f} | {(s - t) / t * 100:+.1f} % |")
print(f"| all jobs | {len(jobs)} | {tt:.1f} | {ts:.1f} | {(ts - tt) / tt * 100:+.1f} % |")
# the rest of the counters: the truth's idle (unrequested) share; Scaphandre's host energy over the
# run that no job process got (its host power integrated over the collector's intervals in the run)
idle = sum(nd["idleMicrojoules"] for nd in summ["nodes"]) / 1e6
counters = sum(nd["counterDeltaMicrojoules"] for nd in summ["nodes"]) / 1e6
host = 0.0
for node, rows in ivs.items():
    start = min((r["t0"] for r in rows if any(r["jobs"].values())), default=0)
    host += sum((r["hostW"] or 0) * (r["t1"] - r["t0"]) for r in rows if r["t0"] >= start - 2.6)
print(f"| idle (truth: unrequested share; Scaphandre: host energy no job got) | | {idle:.1f} | {host - ts:.1f} | |")
print(f"| the nodes' counters (truth) / Scaphandre's host energy over the run | | {counters:.1f} | {host:.1f} | "
      f"{(host - counters) / counters * 100:+.1f} % |")
with open(os.path.join(tmp, "plot.dat"), "w") as f:
    for name, t, s, full in plot:
        f.write(f"{name} {t:.3f} {s:.3f} {full:.3f}\n")
EOF2
gnuplot <<EOF2
set terminal pngcairo size 900,420 font "sans,9"
set output "$png"
set title "Per-job energy: hwemu's truth (jobs.jsonl) against Scaphandre 1.0.0's per-process series"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "energy (J)"
set xtics rotate by -45 scale 0
set key top right
set grid ytics
plot "$tmp/plot.dat" using 2:xtic(1) title "truth (CPU + DRAM)", "" using 3 title "Scaphandre (its series integrated)", \\
     "" using 4 title "Scaphandre's mean power x the job's life"
EOF2
echo "plot: $png"
exit 0
