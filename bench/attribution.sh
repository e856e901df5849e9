#!/usr/bin/env bash
# Real exporters against the engine's truth. Today: Scaphandre 1.0.0 (scripts/fetch-scaphandre.sh)
# under `hwemu exec` on an Intel RAPL node and an AMD energy-only node while a workload run moves
# their load (jobs start and end, so the power changes between and within intervals). For each
# node, INTERVALS intervals of 2.5 s (tests/cli/scaphandre_truth.py: Scaphandre's socket and host
# powers against the engine's energy per wall second, read from the same files right before each of
# Scaphandre's refreshes; its counters against /debug/energy), then the medians and worst errors,
# and what Scaphandre's host power leaves out of the node's platform power (/telemetry's
# nodePowerWatts). Per job: the run's jobs.jsonl holds every job's energy; Scaphandre has no series
# for them (the jobs are not processes on the node: see docs/interfaces.md, "Real exporters against
# the truth"), so the per-job table shows the truth only.
# Usage: bench/attribution.sh [path/to/hwemu] [INTERVALS]   (run from the source tree)
set -euo pipefail
hwemu=${1:-build/hwemu}
n=${2:-8}
build=$(cd "$(dirname "$hwemu")" && pwd)
scaph=$(scripts/fetch-scaphandre.sh "$build")
tmp=$(mktemp -d /dev/shm/hwemu-attribution.XXXXXX)
pid= spids=() lpids=()
trap 'for p in "${spids[@]}"; do kill $p 2>/dev/null; done; [ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cat >"$tmp/spec.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: attribution}
spec:
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 1}
  - {name: amd, profile: amd-epyc-2s-energy-only, count: 1}
EOF
# CPU jobs over a minute or two of wall time (the trace's own durations / 15)
"$hwemu" trace generate --jobs 14 --seed 7 --time-scale 15 --gpu-ratio 0 --out "$tmp/trace.jsonl" 2>/dev/null
port=$(free_port)
url=http://127.0.0.1:$port
SIM_WORKLOAD_TRACE_PATH=$tmp/trace.jsonl SIM_RUNS_DIR=$tmp/runs "$hwemu" serve --spec "$tmp/spec.yaml" --root "$tmp/r" \
    --addr 127.0.0.1:$port --tick 200ms 2>"$tmp/serve.err" &
pid=$!
for _ in $(seq 300); do curl -sf "$url/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
for node in intel-0 amd-0; do
    sport=$(free_port)
    "$hwemu" exec --root "$tmp/r" --node $node -- "$scaph" prometheus -a 127.0.0.1 -p $sport >"$tmp/scaph-$node.log" 2>&1 &
    spids+=($!)
    echo "$sport" >"$tmp/port-$node"
done
for node in intel-0 amd-0; do
    surl=http://127.0.0.1:$(cat "$tmp/port-$node")/metrics
    for _ in $(seq 300); do curl -sf -o /dev/null "$surl" && break; sleep 0.1; done
    (
        for _ in $(seq "$n"); do
            "$hwemu" exec --root "$tmp/r" --node $node -- python3 tests/cli/scaphandre_truth.py "$url" "$surl" $node 2.5 0.2
        done >"$tmp/rows-$node.jsonl" 2>"$tmp/rows-$node.err"
    ) &
    lpids+=($!)
done
wait "${lpids[@]}"
for node in intel-0 amd-0; do
    [ -s "$tmp/rows-$node.err" ] && { echo "$node: intervals that failed:"; tail -3 "$tmp/rows-$node.err"; }
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
python3 - "$tmp" <<'EOF'
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
runs = glob.glob(os.path.join(tmp, "runs", "*", "jobs.jsonl"))
if runs:
    jobs = [json.loads(l) for l in open(runs[0]) if l.strip()]
    print("\n| job | node | CPUs | state | truth: CPU + DRAM energy J | Scaphandre |")
    print("|---|---|---|---|---|---|")
    for j in jobs:
        e = j["energyJoules"]
        print(f"| {j['jobId']} | {j['node']} | {len(j['cpus'])} | {j['state']} | {e['cpu'] + e['dram']:.1f} | no series (not a process) |")
EOF
