#!/usr/bin/env bash
# Benchmark of workload runs through the real Kubernetes scheduler (docs/kubernetes.md "Runs
# through the scheduler"), against the same run with hwemu's own (standalone) placement.
#
# It starts the test control plane (tests/kube/control_plane.sh: etcd, kube-apiserver,
# kube-scheduler, kube-controller-manager, KWOK; the binaries of scripts/fetch-kubernetes.sh),
# serves NODES `intel-xeon-2s-rapl` nodes as KWOK Nodes (--kubeconfig, --speed 10), waits until
# every Node is Ready and schedulable, POSTs a generated CPU-only trace whose jobs arrive over
# TRACE_DURATION of emulated time (hwemu trace generate --gpu-ratio 0, mean inter-arrival
# 5 s x 100 / NODES so the load grows with the cluster, jobs after TRACE_DURATION cut off) and
# waits for the run's end. Then it serves the same spec without --kubeconfig (standalone
# placement), runs the same trace, and prints for both:
#   - pods created and bound per second (kubernetes only: from the pods' creationTimestamp and
#     their PodScheduled condition's lastTransitionTime; mean over the span and the busiest second),
#   - the run's wall time and its makespan (emulated seconds, summary.json),
#   - the engine's tick p50 and p99 (joulie_sim_emulate_tick_duration_seconds histogram of
#     /metrics, interpolated in its buckets, over the whole serve),
#   - the engine's RSS (VmRSS and VmHWM of /proc/PID/status at the run's end) and, with
#     kubernetes, the control plane's (sum of VmRSS and of VmHWM of etcd, kube-apiserver,
#     kube-scheduler, kube-controller-manager and kwok).
#
# Usage: bench/kube_bench.sh BUILD_DIR [NODES (1000)] [TRACE_DURATION (1h; s, m or h)]
#   e.g. bench/kube_bench.sh build 200 20m          (run from the source tree)
# Everything (control plane state, roots, logs) goes in a temp dir removed at the end; set
# KUBE_BENCH_KEEP=1 to keep it (its path is printed).
set -u
build=${1:?usage: bench/kube_bench.sh BUILD_DIR [NODES] [TRACE_DURATION]}
nodes=${2:-1000}
dur=${3:-1h}
hwemu=$(cd "$build" 2>/dev/null && pwd)/hwemu
py=/usr/bin/python3
[ -x "$hwemu" ] || { echo "kube_bench: $build/hwemu not found or not executable: build first (cmake --build $build)" >&2; exit 2; }
case $nodes in '' | *[!0-9]*) echo "kube_bench: NODES '$nodes' is not a number" >&2; exit 2 ;; esac
case $dur in
    *h) secs=$((${dur%h} * 3600)) ;;
    *m) secs=$((${dur%m} * 60)) ;;
    *s) secs=${dur%s} ;;
    *) secs=$dur ;;
esac
case $secs in '' | *[!0-9]*) echo "kube_bench: TRACE_DURATION '$dur' is not N, Ns, Nm or Nh" >&2; exit 2 ;; esac

# the control plane's helpers need free_port (tests/cli/lib.sh has the same)
free_port() {
    "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
. "$(dirname "$0")/../tests/kube/control_plane.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; [ -n "${KUBE_BENCH_KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
kube_need "$tmp" || exit 1

# --- the spec and the trace ------------------------------------------------------------------
cat >"$tmp/spec.yaml" <<EOF
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: kubebench}
spec:
  pools:
  - {name: cpu, profile: intel-xeon-2s-rapl, count: $nodes}
EOF
mean=$("$py" -c "print(5.0 * 100 / $nodes)")
# about three times as many workloads as the mean spacing asks: the generator's dips stretch it
"$hwemu" trace generate --jobs $((secs * 3 * nodes / 500 + 10)) --seed 7 --gpu-ratio 0 \
    --mean-inter-arrival-sec "$mean" --out "$tmp/full.jsonl" 2>"$tmp/gen.err" ||
    { echo "kube_bench: trace generate failed: $(cat "$tmp/gen.err")" >&2; exit 1; }
"$py" - "$tmp/full.jsonl" "$secs" >"$tmp/trace.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("submitTimeOffsetSec", 0) <= float(sys.argv[2]):
        sys.stdout.write(line)
PY
njobs=$(grep -c '"type": *"job"' "$tmp/trace.jsonl")
echo "kube_bench: $nodes nodes, trace of $njobs jobs arriving over $secs s (mean inter-arrival $mean s), --speed 10"

# serve_up URL ERRFILE ARGS...: `hwemu serve ARGS...` in the background (pid in $pid), up to
# 120 s for its /healthz (rendering many nodes on a loaded machine takes a while)
serve_up() {
    local url=$1 errfile=$2
    shift 2
    "$hwemu" serve "$@" 2>>"$errfile" &
    pid=$!
    for _ in $(seq 1200); do
        curl -sf "$url/healthz" >/dev/null 2>&1 && return 0
        kill -0 $pid 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# run_trace URL: POSTs the trace, waits for the run's end (up to 10 x the trace's duration plus
# 10 min); prints the run id and its wall seconds
run_trace() {
    local url=$1 id st t0 t1
    t0=$(date +%s.%N)
    id=$(curl -s -X POST --data-binary @"$tmp/trace.jsonl" "$url/runs" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["runId"])') ||
        { echo "kube_bench: POST /runs failed" >&2; return 1; }
    for _ in $(seq $((secs + 600))); do
        st=$(curl -s "$url/runs/$id" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["state"])')
        if [ "$st" != running ]; then
            t1=$(date +%s.%N)
            echo "$id $("$py" -c "print('%.1f' % ($t1 - $t0))")"
            return 0
        fi
        sleep 1
    done
    echo "kube_bench: run $id still running after $((secs + 600)) s: $(curl -s "$url/runs/$id")" >&2
    return 1
}
# rss PID...: the sums of VmRSS and VmHWM, in MiB
rss() {
    local p r=0 h=0 a b
    for p in "$@"; do
        a=$(awk '/^VmRSS:/ {print $2}' /proc/$p/status 2>/dev/null) || a=0
        b=$(awk '/^VmHWM:/ {print $2}' /proc/$p/status 2>/dev/null) || b=0
        r=$((r + ${a:-0})) h=$((h + ${b:-0}))
    done
    echo "$((r / 1024)) MiB (peak $((h / 1024)) MiB)"
}
# report MODE URL RUNDIR WALL: the run's makespan and the tick's p50/p99 from /metrics
report() {
    curl -s "$2/metrics" | grep '^joulie_sim_emulate_tick_duration_seconds' >"$tmp/tick-$1.txt"
    "$py" - "$1" "$3/summary.json" "$4" "$tmp/tick-$1.txt" <<'PY'
import json, re, sys
mode, summ, wall, tickf = sys.argv[1:]
s = json.load(open(summ))
buckets = []
for line in open(tickf):
    m = re.match(r'joulie_sim_emulate_tick_duration_seconds_bucket\{le="([^"]+)"\} (\S+)', line)
    if m:
        buckets.append((float("inf") if m.group(1) == "+Inf" else float(m.group(1)), float(m.group(2))))
buckets.sort()
def q(p):
    n = buckets[-1][1]
    lo, below = 0.0, 0.0
    for le, c in buckets:
        if c >= p * n:
            if le == float("inf"):
                return lo
            return lo + (le - lo) * (p * n - below) / max(c - below, 1)
        lo, below = le, c
    return lo
print("%s: run %s: %s, jobs %s, makespan %.0f s emulated, wall %s s; tick p50 %.1f ms, p99 %.1f ms over %d ticks"
      % (mode, s.get("runId", "?"), s["state"], s["jobs"], s["makespanSec"], wall,
         q(0.5) * 1e3, q(0.99) * 1e3, buckets[-1][1] if buckets else 0))
PY
}

# --- 1. through the scheduler ---------------------------------------------------------------
kube_start "$tmp/kube" || { echo "kube_bench: the control plane did not start (above)" >&2; exit 1; }
port=$(free_port)
url=http://127.0.0.1:$port
serve_up "$url" "$tmp/serve-k.err" --spec "$tmp/spec.yaml" --root "$tmp/rk" --addr 127.0.0.1:$port \
    --speed 10 --kubeconfig "$KUBECONFIG" || { echo "kube_bench: serve did not come up: $(tail -5 "$tmp/serve-k.err")" >&2; exit 1; }
t0=$(date +%s)
ready() {
    "$kubectl" get nodes -l sim.joulie.io/cluster=kubebench -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{.spec.taints[*].key}{"\n"}{end}' >"$tmp/ready.txt" 2>/dev/null &&
        [ "$(grep -c '^True' "$tmp/ready.txt")" = "$nodes" ] && ! grep -q node.kubernetes.io "$tmp/ready.txt"
}
for _ in $(seq 600); do ready && break; sleep 1; done
ready || { echo "kube_bench: $nodes Nodes not Ready and schedulable in 600 s ($(grep -c '^True' "$tmp/ready.txt") Ready)" >&2; exit 1; }
echo "kubernetes: $nodes Nodes Ready and schedulable $(($(date +%s) - t0)) s after serve's start"
read -r rid wall < <(run_trace "$url") || exit 1
[ -n "${rid:-}" ] || exit 1
engine_rss=$(rss $pid)
cp_pids=$(for e in $kube_pids; do echo "${e#*:}"; done)
cp_rss=$(rss $cp_pids)
"$kubectl" get pods -A -l sim.joulie.io/run=$rid -o json >"$tmp/pods.json"
report kubernetes "$url" "$tmp/rk/runs/$rid" "$wall"
"$py" - "$tmp/pods.json" <<'PY'
import json, sys
from datetime import datetime
from collections import Counter
def t(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").timestamp()
pods = json.load(open(sys.argv[1]))["items"]
made = [t(p["metadata"]["creationTimestamp"]) for p in pods]
bound = [t(c["lastTransitionTime"]) for p in pods for c in p["status"].get("conditions", [])
         if c["type"] == "PodScheduled" and c["status"] == "True"]
for what, ts in (("created", made), ("bound", bound)):
    if not ts:
        print("kubernetes: pods %s: none" % what)
        continue
    span = max(max(ts) - min(ts), 1)
    print("kubernetes: pods %s: %d over %.0f s, %.2f/s mean, %d/s in the busiest second"
          % (what, len(ts), span, len(ts) / span, max(Counter(ts).values())))
lag = sorted(b - m for p in pods for m in [t(p["metadata"]["creationTimestamp"])]
             for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled" and c["status"] == "True"
             for b in [t(c["lastTransitionTime"])])
if lag:
    print("kubernetes: creation to binding: p50 %.0f s, max %.0f s (1 s resolution)" % (lag[len(lag) // 2], lag[-1]))
PY
echo "kubernetes: engine RSS $engine_rss; control plane RSS $cp_rss (etcd, apiserver, scheduler, controller-manager, kwok)"
kill $pid && wait $pid
pid=
kube_stop

# --- 2. standalone placement ----------------------------------------------------------------
port=$(free_port)
url=http://127.0.0.1:$port
serve_up "$url" "$tmp/serve-s.err" --spec "$tmp/spec.yaml" --root "$tmp/rs" --addr 127.0.0.1:$port \
    --speed 10 || { echo "kube_bench: standalone serve did not come up: $(tail -5 "$tmp/serve-s.err")" >&2; exit 1; }
read -r rid wall < <(run_trace "$url") || exit 1
[ -n "${rid:-}" ] || exit 1
engine_rss=$(rss $pid)
report standalone "$url" "$tmp/rs/runs/$rid" "$wall"
echo "standalone: engine RSS $engine_rss"
kill $pid && wait $pid
pid=
