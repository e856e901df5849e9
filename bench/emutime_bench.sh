#!/usr/bin/env bash
# Agents in emulated time (docs/time.md): the wall time an engine at --speed max --time emulated
# takes with N agents in its loop (bench/emutime_agent.c: each reads energy_uj and sleeps PERIOD
# emulated seconds, COUNT times), against the same emulated time with one agent that sleeps it
# in one go (the ticks alone); the difference over the agents' wake-ups is the cost of one. Two
# cases: aligned (every agent's deadlines coincide: one move of time per period wakes them all)
# and staggered (agent k starts PERIOD*k/N late: N moves of time per period). Memory: the agents'
# proportional set size (Pss, /proc/PID/smaps_rollup: shared pages split among their users)
# summed once every agent of the aligned run but the last has started (they wait for it), and the
# engine's peak RSS (VmHWM); the
# load average at the start and the end (the machine may be shared).
# Usage: bench/emutime_bench.sh BUILD_DIR NODES AGENTS PERIOD_S COUNT   (figures: bench/README.md)
set -euo pipefail
build=$(realpath "${1:-build}")
nodes=${2:-40} agents=${3:-40} period=${4:-20} count=${5:-50}
tmp=$(mktemp -d /dev/shm/hwemu-emutime.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
cat >"$tmp/spec.yaml" <<EOF2
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: emutime-bench}
spec:
  defaults: {baseLoad: {cpuUtil: 0.6, memoryIntensity: 0.2}}
  pools:
  - {name: n, profile: intel-xeon-2s-rapl, count: $nodes}
EOF2

# one run: N agents, each "PERIOD COUNT PHASE(k)"; prints the wall seconds from the first
# wake-up to the last end
run() { # name n period count staggered
    local name=$1 n=$2 p=$3 c=$4 stag=$5 root="$tmp/$1"
    "$build/hwemu" serve --spec "$tmp/spec.yaml" --root "$root" --addr 127.0.0.1:0 --speed max --time emulated \
        --wait-agents "$n" --agent-wait 60s >"$tmp/$name.serve" 2>&1 &
    pid=$!
    for _ in $(seq 600); do [ -e "$root/clock" ] && break; sleep 0.05; done
    local apids=()
    local mem="0 0"
    for k in $(seq 0 $((n - 1))); do
        if [ "$k" -gt 0 ] && [ "$k" = $((n - 1)) ]; then
            # every agent but the last has started and waits for it (time does not move before
            # all joined): their memory, summed in one pass once the last ones are done loading
            sleep 2
            mem=$(printf '%s\n' "${apids[@]}" | awk '{ f = "/proc/" $1 "/smaps_rollup"
                while ((getline l < f) > 0) if (l ~ /^Pss:/) { split(l, a); s += a[2]; n++ }
                close(f) } END { print n + 0, s + 0 }')
        fi
        local phase=0 ms=0
        [ "$stag" = 1 ] && ms=$((p * 1000 * k / n)) && phase=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
        "$build/hwemu" exec --time emulated --node "n-$((k % nodes))" --root "$root" -- \
            "$build/emutime_agent" "$p" "$c" "$phase" >"$tmp/$name.$k" &
        apids+=($!)
    done
    wait "${apids[@]}"
    kill -0 $pid 2>/dev/null || { echo "the engine of $name ended early: $(cat "$tmp/$name.serve")" >&2; exit 1; }
    echo "$mem $(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")" >"$tmp/$name.mem"
    kill $pid; wait $pid 2>/dev/null || true
    pid=
    local w
    w=$(cat "$tmp/$name".[0-9]* | python3 -c '
import sys
v = [tuple(map(int, l.split())) for l in sys.stdin]
print("%.3f" % ((max(e for _, e in v) - min(f for f, _ in v)) / 1e9))')
    echo "  ($name: $w s wall, load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2 # progress, for long runs
    echo "$w"
}
emulated=$((period * count))
load0=$(cut -d' ' -f1-3 /proc/loadavg)
base=$(run base 1 "$emulated" 1 0)
aligned=$(run aligned "$agents" "$period" "$count" 0)
staggered=$(run staggered "$agents" "$period" "$count" 1)
wakes=$((agents * count))
python3 - "$nodes" "$agents" "$emulated" "$base" "$aligned" "$staggered" "$wakes" $(cat "$tmp/aligned.mem") \
    "$load0" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import sys
nodes, agents, emu, base, al, st, wakes, alive, pss, hwm, load0, load1 = sys.argv[1:]
base, al, st, wakes = float(base), float(al), float(st), int(wakes)
print(f"{nodes} nodes, {agents} agents, {emu} emulated s, {wakes} wake-ups (load average {load0} at the start, {load1} at the end)")
print(f"  ticks alone (1 agent, 1 wake-up): {base:.3f} s wall")
print(f"  aligned:   {al:.3f} s wall, {(al - base) / wakes * 1e6:.1f} us per wake-up")
print(f"  staggered: {st:.3f} s wall, {(st - base) / wakes * 1e6:.1f} us per wake-up")
print(f"  memory (aligned): {alive} agents measured, Pss {int(pss) / 1024:.1f} MiB in all "
      f"({int(pss) / max(int(alive), 1):.0f} kB each); engine peak RSS {int(hwm) / 1024:.1f} MiB")
PY
