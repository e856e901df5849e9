#!/usr/bin/env bash
# `hwemu agents`: Debian's real node_exporter (prometheus-node-exporter, a Go program: the seccomp
# route) on every node of one pool, each on its own port ({index+BASE}), each reporting its own
# node; a killed agent is started again; SIGTERM stops the whole fleet and leaves nothing behind.
# Where the expected values come from:
#   identity  before the fleet starts, cpu0's scaling_max_freq of node intel-I is written to a value
#             of its own (hwemu write; the value read back with hwemu cat is the expectation): the
#             agent on port BASE+I must report node_cpu_scaling_frequency_max_hertz{cpu="0"} equal
#             to 1000 x that node's value (node_exporter's cpufreq collector: kHz x 1000);
#   truth     its node_rapl_package_joules_total{index="0"} lies between the engine's own figure for
#             that node's package 0 (/debug/energy) read just before and just after the scrape, plus
#             one tick of that package's energy (the engine's figure is the last tick's);
#   selection only the pool's three nodes get an agent and a log (DIR/<node>.log); NODE_NAME and
#             {node} reach the agent (a second fleet of `sh -c` agents prints them).
# Exit 77 when prometheus-node-exporter is not installed (.ci/run installs it).
# Usage: test_agents.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
exporter=$(command -v prometheus-node-exporter || true)
if [ -z "$exporter" ]; then
    echo "SKIP: prometheus-node-exporter is not installed (apt-get install prometheus-node-exporter)"
    exit 77
fi
py=/usr/bin/python3
tmp=$(mktemp -d)
pid= apid=
trap '[ -n "$apid" ] && kill $apid 2>/dev/null; [ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

cat >"$tmp/spec.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: agents}
spec:
  defaults:
    baseLoad: {cpuUtil: 0.5}
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 3}
  - {name: amd, profile: amd-epyc-2s-energy-only, count: 1}
EOF

# 1. Bad selections are refused before anything starts.
out=$("$hwemu" agents --spec "$tmp/spec.yaml" --root "$tmp/r" --pool nope -- true 2>&1); rc=$?
[ $rc = 1 ] && [[ $out == *'no pool "nope" (its pools: intel amd)'* ]] && ok || bad "--pool nope: rc $rc: $out"
out=$("$hwemu" agents --spec "$tmp/spec.yaml" --label novalue -- true 2>&1); rc=$?
[ $rc = 2 ] && [[ $out == *"KEY=VALUE"* ]] && ok || bad "--label novalue: rc $rc: $out"
out=$("$hwemu" agents --spec "$tmp/spec.yaml" --root "$tmp/r" --pool amd -- true 2>&1); rc=$?
[ $rc = 1 ] && [[ $out == *"no node of the selection is under $tmp/r"* ]] && ok || bad "no engine: rc $rc: $out"

port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/serve.err" --spec "$tmp/spec.yaml" --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve did not come up: $(cat "$tmp/serve.err")"; finish; }

# 2. A value of cpu0's scaling_max_freq of each intel node's own.
f=sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq
declare -A want
for i in 0 1 2; do
    "$hwemu" write --root "$tmp/r" --node intel-$i $f $((3800000 - 100000 * i)) || bad "writing $f on intel-$i"
    want[$i]=$("$hwemu" cat --root "$tmp/r" --node intel-$i $f)
done
[ "${want[0]}" != "${want[1]}" ] && [ "${want[1]}" != "${want[2]}" ] && [ "${want[0]}" != "${want[2]}" ] && ok ||
    bad "the three nodes' scaling_max_freq are not distinct: ${want[*]}"

# Three consecutive free ports for {index+BASE}.
base=
for _ in $(seq 50); do
    b=$(free_port)
    if $py -c 'import socket, sys
b = int(sys.argv[1])
for p in range(b, b + 3):
    s = socket.socket(); s.bind(("127.0.0.1", p)); s.close()' "$b" 2>/dev/null; then base=$b; break; fi
done
[ -n "$base" ] || { bad "no three consecutive free ports"; finish; }

"$hwemu" agents --spec "$tmp/spec.yaml" --root "$tmp/r" --pool intel --logs "$tmp/logs" --grace 5 -- \
    "$exporter" "--web.listen-address=127.0.0.1:{index+$base}" --collector.disable-defaults \
    --collector.cpufreq --collector.rapl 2>"$tmp/agents.err" &
apid=$!
# listener PORT: the pid listening on 127.0.0.1:PORT ("" when none).
listener() { ss -ltnpH "sport = :$1" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1; }
up=0
for _ in $(seq 300); do
    up=0
    for i in 0 1 2; do curl -sf -o /dev/null "http://127.0.0.1:$((base + i))/metrics" && up=$((up + 1)); done
    [ $up = 3 ] && break
    kill -0 $apid 2>/dev/null || break
    sleep 0.1
done
[ $up = 3 ] && ok || { bad "$up of 3 agents answer after 30 s: $(cat "$tmp/agents.err"; tail -n 3 "$tmp"/logs/*.log)"; finish; }

# 3. Each agent reports its own node (identity) and its node's package energy (truth).
# check_node I: both checks for the agent on BASE+I.
check_node() {
    local i=$1 e1 m e2
    e1=$(curl -s "$url/debug/energy")
    m=$(curl -s "http://127.0.0.1:$((base + i))/metrics")
    e2=$(curl -s "$url/debug/energy")
    $py - "$i" "${want[$i]}" "$e1" "$e2" "$m" <<'PYEOF'
import json, re, sys
i, want, e1, e2, m = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5]
node = "intel-%d" % i
def metric(name, label):
    for line in m.splitlines():
        if line.startswith(name + "{") and label in line:
            return float(line.split()[-1])
    sys.exit("%s: no %s{%s} in the agent's metrics" % (node, name, label))
hz = metric("node_cpu_scaling_frequency_max_hertz", 'cpu="0"')
if hz != want * 1000:
    sys.exit("%s: node_exporter says cpu0 scaling max %.0f Hz, the node's scaling_max_freq is %d kHz" % (node, hz, want))
def pkg0(e):
    return [n for n in e["nodes"] if n["node"] == node][0]["packages"][0]["energyJoules"]
lo, hi = pkg0(e1), pkg0(e2)
j = metric("node_rapl_package_joules_total", 'index="0"')
tick = max(hi - lo, 0) + 200.0 * 0.2   # one 200 ms tick at up to 200 W, on top of the bracket
if not (lo - 1e-6 <= j <= hi + tick):
    sys.exit("%s: node_rapl_package_joules_total{index=0} %.6f J outside the engine's [%.6f, %.6f] + one tick" % (node, j, lo, hi))
print("%s: cpu0 max %.0f Hz, package 0 %.3f J in [%.3f, %.3f]" % (node, hz, j, lo, hi))
PYEOF
}
for i in 0 1 2; do
    if msg=$(check_node $i 2>&1); then echo "$msg"; ok; else bad "$msg"; fi
done
logs=$(cd "$tmp/logs" && ls | tr '\n' ' ')
[ "$logs" = "intel-0.log intel-1.log intel-2.log " ] && ok || bad "log files '$logs', expected the intel pool's three"
grep -q "start 1 of the agent on node intel-2 (index 2)" "$tmp/logs/intel-2.log" && ok ||
    bad "intel-2.log lacks its start line: $(head -3 "$tmp/logs/intel-2.log")"

# 4. A killed agent comes back (backoff 1 s) on the same port, still the same node.
old=$(listener $((base + 1)))
[ -n "$old" ] && kill -KILL "$old"
new=
for _ in $(seq 150); do
    new=$(listener $((base + 1)))
    [ -n "$new" ] && [ "$new" != "$old" ] && break
    sleep 0.1
done
[ -n "$old" ] && [ -n "$new" ] && [ "$new" != "$old" ] && ok || bad "intel-1's agent (pid $old) did not come back: $(cat "$tmp/agents.err")"
grep -q "node intel-1: the agent ended (killed by signal 9" "$tmp/agents.err" && ok ||
    bad "no restart line for intel-1: $(cat "$tmp/agents.err")"
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$((base + 1))/metrics" && break; sleep 0.1; done
if msg=$(check_node 1 2>&1); then ok; else bad "after the restart: $msg"; fi
grep -q "start 2 of the agent on node intel-1" "$tmp/logs/intel-1.log" && ok || bad "intel-1.log lacks its second start"

# 5. SIGTERM stops the fleet: exit 0, no agent process left, every port closed.
pids=$(for i in 0 1 2; do listener $((base + i)); done)
kill -TERM $apid
for _ in $(seq 100); do kill -0 $apid 2>/dev/null || break; sleep 0.1; done
wait $apid; rc=$?
apid=
[ $rc = 0 ] && ok || bad "hwemu agents exited $rc after SIGTERM: $(tail -3 "$tmp/agents.err")"
left=""
for p in $pids; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
[ -z "$left" ] && ok || bad "agents left after the stop:$left"
grep -q "all agents stopped" "$tmp/agents.err" && ok || bad "no stop line: $(tail -3 "$tmp/agents.err")"

# 6. {node}, {index}, {index+N} and NODE_NAME on a label selection (the amd pool's label).
"$hwemu" agents --spec "$tmp/spec.yaml" --root "$tmp/r" --label sim.joulie.io/pool=amd --logs "$tmp/logs2" -- \
    sh -c 'echo "arg={node}/{index}/{index+7}/{other} env=$NODE_NAME/$HWEMU_AGENT_INDEX"; sleep 30' 2>"$tmp/agents2.err" &
apid=$!
for _ in $(seq 100); do grep -q "^arg=" "$tmp/logs2/amd-0.log" 2>/dev/null && break; sleep 0.1; done
line=$(grep "^arg=" "$tmp/logs2/amd-0.log" 2>/dev/null)
[ "$line" = "arg=amd-0/0/7/{other} env=amd-0/0" ] && ok || bad "the amd agent printed '$line'"
kill -TERM $apid
wait $apid; rc=$?
apid=
[ $rc = 0 ] && ok || bad "the second fleet exited $rc: $(cat "$tmp/agents2.err")"

# 7. The chart's way (charts/hwemu, agents.enabled): the install tree (cmake --install) with hwemu's
# shared libraries and loader copied beside it, as the Containerfile lays /opt/hwemu out, and hwemu
# run through that loader with HWEMU_SHIM and friends naming the copied files.
build=$(cd "$(dirname "$hwemu")" && pwd)
inst=$tmp/opt-hwemu
if cmake --install "$build" --prefix "$inst" >"$tmp/install.out" 2>&1; then ok; else bad "cmake --install: $(cat "$tmp/install.out")"; fi
mkdir -p "$inst/runtime"
ldd "$inst/bin/hwemu" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' |
    while read -r lib; do cp -L "$lib" "$inst/runtime/"; done
cp -L /lib64/ld-linux-x86-64.so.2 "$inst/runtime/"
cport=$(free_port)
HWEMU_SHIM=$inst/lib/hwemu/libhwemu-shim.so HWEMU_AUDIT=$inst/lib/hwemu/libhwemu-audit.so HWEMU_NVML_LIBRARY=$inst/lib/hwemu/libhwemu-nvml.so \
HWEMU_AMDSMI_LIBRARY=$inst/lib/hwemu/libhwemu-amdsmi.so HWEMU_ROCMSMI_LIBRARY=$inst/lib/hwemu/libhwemu-rocmsmi.so \
HWEMU_FAKESMI=$inst/lib/hwemu/fakesmi \
    "$inst/runtime/ld-linux-x86-64.so.2" --library-path "$inst/runtime" "$inst/bin/hwemu" agents \
    --spec "$tmp/spec.yaml" --root "$tmp/r" --pool amd -- \
    "$exporter" "--web.listen-address=127.0.0.1:{index+$cport}" --collector.disable-defaults --collector.rapl \
    2>"$tmp/agents3.err" &
apid=$!
for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$cport/metrics" && break; sleep 0.1; done
# the AMD energy-only profile has package and core zones: node_exporter finds both through the shim
zones=$(curl -s "http://127.0.0.1:$cport/metrics" | grep -c '^node_rapl_\(package\|core\)_joules_total')
[ "$zones" = 4 ] && ok || bad "the loader-run fleet's node_exporter shows $zones RAPL package/core series, expected 4 (2 sockets): $(cat "$tmp/agents3.err")"
kill -TERM $apid
wait $apid; rc=$?
apid=
[ $rc = 0 ] && ok || bad "the loader-run fleet exited $rc: $(cat "$tmp/agents3.err")"
finish
