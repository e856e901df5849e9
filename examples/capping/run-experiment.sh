#!/usr/bin/env bash
# run-experiment.sh: the reference experiment. One generated trace runs three times on the same
# cluster, each on a fresh engine at --speed N: with no agent (the baseline), with
# capping_agent.py's static policy and with its demand-driven one, the agents in the loop through
# `hwemu agents`. Then `hwemu report` compares the three (the first the baseline) and the table
# of energy saved and makespan change per policy is printed (and kept in OUT/table.md).
#
# Usage: run-experiment.sh [--out DIR] [--hwemu PATH] [--nodes N] [--speed N] [--seed S]
#                          [--sim-hours H] [--peak-rate R] [--time-scale T] [--policies LIST]
#                          [--hp-frac F] [--perf-per-hp K] [--eco-pct P] [--no-steer]
# Outputs in OUT (default ./capping-out): trace.jsonl, cluster.yaml, runs/<policy>/<runId>/,
# logs/<policy>/ (the engine's stderr, each agent's log), report.html, report.csv, table.md.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=capping-out
hwemu=$(command -v hwemu || true)
nodes=4 speed=20 seed=7 sim_hours=1 peak_rate=3 time_scale=60
policies="none static demand"
hp_frac=0.25 perf_per_hp=2 eco_pct=40 steer=--steer
while [ $# -gt 0 ]; do
    case $1 in --no-steer | -h | --help) ;; *) [ $# -ge 2 ] || { echo "run-experiment.sh: $1 needs a value" >&2; exit 2; } ;; esac
    case $1 in
    --out) out=$2 ;;
    --hwemu) hwemu=$2 ;;
    --nodes) nodes=$2 ;;
    --speed) speed=$2 ;;
    --seed) seed=$2 ;;
    --sim-hours) sim_hours=$2 ;;
    --peak-rate) peak_rate=$2 ;;
    --time-scale) time_scale=$2 ;;
    --policies) policies=$2 ;;
    --hp-frac) hp_frac=$2 ;;
    --perf-per-hp) perf_per_hp=$2 ;;
    --eco-pct) eco_pct=$2 ;;
    --no-steer) steer= ; shift; continue ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-experiment.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift 2
done
[ -n "$hwemu" ] && [ -x "$hwemu" ] || { echo "run-experiment.sh: no hwemu on PATH; give --hwemu PATH" >&2; exit 2; }
python=$(command -v python3) || { echo "run-experiment.sh: the agent needs python3" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ ! -e "$out/runs" ] || { echo "run-experiment.sh: $out/runs exists: give another --out, or remove it" >&2; exit 2; }

# the cluster: N two-socket Xeon nodes, RAPL caps on both packages
cat >"$out/cluster.yaml" <<EOF
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: capping-example}
spec:
  pools:
  - {name: cpu, profile: intel-xeon-2s-rapl, count: $nodes}
EOF
# the trace: diurnal mode, CPU jobs only; its performance jobs (large CPU jobs, sensitivity 0.5)
# are slowed by a cap, its standard ones (sensitivity 0, as in Joulie's generator) are not
"$hwemu" trace generate --mode diurnal --gpu-ratio 0 --seed "$seed" --sim-hours "$sim_hours" \
    --diurnal-peak-rate "$peak_rate" --time-scale "$time_scale" --out "$out/trace.jsonl"
# the agents reconcile every 10 emulated seconds, as Joulie's agent does
interval=$(awk -v s="$speed" 'BEGIN { printf "%.3f", 10 / s }')

root= serve_pid= agents_pid=
cleanup() {
    [ -n "$agents_pid" ] && kill "$agents_pid" 2>/dev/null && wait "$agents_pid" 2>/dev/null
    [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
    [ -n "$root" ] && rm -rf "$root"
    root= serve_pid= agents_pid=
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# field KEY: the value of KEY in the JSON object on stdin
field() { "$python" -c 'import json, sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$1"; }
die() { echo "run-experiment.sh: $*" >&2; exit 1; }

run_dirs=()
for policy in $policies; do
    case $policy in none | static | demand) ;; *) echo "run-experiment.sh: unknown policy $policy (none, static, demand)" >&2; exit 2 ;; esac
    logs=$out/logs/$policy
    mkdir -p "$logs" "$out/runs/$policy"
    # a fresh root each run (no cap an agent wrote stays), on tmpfs when there is one: the run's
    # checkpoints (every GET /runs that shows a job ended makes one) are fsync'd there
    root=$(mktemp -d "$([ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/hwemu-capping-XXXXXX")
    : >"$logs/engine.log"
    SIM_RUN_COURSE_INTERVAL=10s "$hwemu" serve --spec "$out/cluster.yaml" \
        --root "$root" --addr 127.0.0.1:0 --speed "$speed" 2>"$logs/engine.log" &
    serve_pid=$!
    url=
    for _ in $(seq 600); do
        url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$logs/engine.log" | head -1 || true)
        [ -n "$url" ] && curl -sf "$url/healthz" >/dev/null 2>&1 && break
        kill -0 $serve_pid 2>/dev/null || die "$policy: the engine stopped: $(cat "$logs/engine.log")"
        sleep 0.1
    done
    curl -sf "$url/healthz" >/dev/null 2>&1 || die "$policy: the engine did not answer within 60 s (see $logs/engine.log)"
    if [ "$policy" != none ]; then
        "$hwemu" agents --spec "$out/cluster.yaml" --root "$root" --logs "$logs" -- \
            "$python" "$here/capping_agent.py" --policy "$policy" --engine "$url" --nodes "$nodes" \
            --interval "$interval" --hp-frac "$hp_frac" --perf-per-hp "$perf_per_hp" --eco-pct "$eco_pct" $steer 2>>"$logs/agents.log" &
        agents_pid=$!
        # the run starts once every agent has set its node's caps (its first line in its log)
        for _ in $(seq 600); do
            set_=$(cat "$logs"/cpu-*.log 2>/dev/null | grep -c '^node cpu-[0-9]*: ' || true)
            [ "$set_" -ge "$nodes" ] && break
            kill -0 $agents_pid 2>/dev/null || break
            sleep 0.1
        done
        [ "$set_" -ge "$nodes" ] || die "$policy: the agents did not set their nodes' caps within 60 s (see $logs)"
    fi
    answer=$(curl -s --data-binary @"$out/trace.jsonl" "$url/runs") || die "$policy: POST $url/runs failed (see $logs/engine.log)"
    run_id=$(echo "$answer" | field runId)
    [ -n "$run_id" ] || die "$policy: the engine did not start the run: $answer"
    start=$(date +%s.%N)
    while :; do
        status=$(curl -sf "$url/runs/$run_id") || die "$policy: the engine stopped answering (see $logs/engine.log)"
        state=$(echo "$status" | field state)
        [ "$state" != running ] && break
        sleep 0.5
    done
    wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    # the run directory is complete once GET /runs says the run ended (summary.json written)
    cp -r "$root/runs/$run_id" "$out/runs/$policy/"
    cleanup
    run_dirs+=("$out/runs/$policy/$run_id")
    echo "run-experiment.sh: $policy: $run_id $state, $(echo "$status" | field timeSec) s emulated in $wall s" >&2
    # course.jsonl has a line every 10 s of emulated time; a longer gap is a tick the machine held
    # back, whose jobs all ended at its end: this run measured the machine's load as well
    "$python" - "$out/runs/$policy/$run_id/course.jsonl" "$speed" "$policy" <<'PY' >&2
import json, sys
t = [json.loads(l)["timeSec"] for l in open(sys.argv[1])]
gap = max([b - a for a, b in zip(t, t[1:])] or [0])
if gap > 30:
    print("run-experiment.sh: %s: warning: one tick lasted %.0f s of emulated time (%.1f s of wall time at --speed %s): "
          "the machine held the engine back; run it again on a quieter machine or at a lower --speed"
          % (sys.argv[3], gap, gap / float(sys.argv[2]), sys.argv[2]))
PY
done
trap - EXIT

"$hwemu" report "${run_dirs[@]}" --out "$out/report.html" --csv "$out/report.csv"
# the table: one row per policy, from the report's CSV (the first run the baseline)
"$python" - "$out/report.csv" $policies <<'PY' | tee "$out/table.md"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| policy | energy (kJ) | energy saved | makespan (s) | makespan change | jobs slowed | p95 completion change |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, r in zip(sys.argv[2:], rows):
    print("| %s | %.1f | %.1f %% | %.0f | %+.1f %% | %s | %+.1f %% |" % (
        name, float(r["energy_j"]) / 1e3, float(r["energy_saved_pct"]), float(r["makespan_s"]),
        float(r["makespan_change_pct"]), r["jobs_slowed"], float(r["p95_change_pct"])))
PY
