#!/usr/bin/env bash
# kill -9 of the engine at random instants, most of them inside a tick (1500 nodes, a 20 ms
# tick that takes about half of it), each followed by a restart on the same root: every
# counter of every node continues, never below what the engine reported or a reader saw: the
# node's energy, each package's and each package's DRAM (a zone with no file on AMD nodes).
# Usage: test_restart.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
cat >"$tmp/spec.yaml" <<'YAML'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: restart}
spec:
  defaults: {baseLoad: {cpuUtil: 0.8}}
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 1200}
  - {name: amd, profile: amd-epyc-2s-energy-only, count: 300}
YAML
start() { serve_start "$url" "$tmp/err" --spec "$tmp/spec.yaml" --root "$tmp/r" --addr 127.0.0.1:$port --tick 20ms; }
energies() { curl -s "$url/debug/energy" >"$1"; }
# A reader's view: the energy files of a few nodes (raises their high-water marks).
files() { for n in intel-0 intel-1199 amd-0 amd-299; do
    "$hwemu" cat --root "$tmp/r" --node $n /sys/class/powercap/intel-rapl:0/energy_uj; done; }

start || { bad "first start: $(cat "$tmp/err")"; finish; }
for round in 1 2 3 4 5; do
    sleep "0.$((RANDOM % 5 + 2))"
    energies "$tmp/before.json"
    files >"$tmp/files.before"
    kill -9 $pid; wait $pid 2>/dev/null; pid=
    start || { bad "restart $round: $(tail -3 "$tmp/err")"; break; }
    energies "$tmp/after.json"
    files >"$tmp/files.after"
    "$py" - "$tmp/before.json" "$tmp/after.json" <<'PY' && ok || bad "round $round: an engine counter went back"
import json, sys
b = {n["node"]: n for n in json.load(open(sys.argv[1]))["nodes"]}
a = {n["node"]: n for n in json.load(open(sys.argv[2]))["nodes"]}
assert len(a) == len(b) == 1500
for name, nb in b.items():
    na = a[name]
    assert na["energyJoules"] >= nb["energyJoules"], (name, nb["energyJoules"], na["energyJoules"])
    for pb, pa in zip(nb["packages"], na["packages"]):
        assert pa["energyJoules"] >= pb["energyJoules"], (name, pb, pa)
        # DRAM on its own: AMD nodes render no DRAM zone, and its energy once started again
        # at each restart, hidden in the node's total by the packages' growth (a kept counter)
        assert pa["dramEnergyJoules"] >= pb["dramEnergyJoules"], (name, pb, pa)
PY
    paste "$tmp/files.before" "$tmp/files.after" | while read -r x y; do [ "$y" -ge "$x" ] || echo back; done \
        | grep -q back && bad "round $round: an energy_uj file went back" || ok
done
grep -c "1500 nodes (1500 resumed)" "$tmp/err" | grep -q '^5$' && ok || bad "not every restart resumed: $(grep nodes "$tmp/err")"
kill -TERM $pid; wait $pid; pid=
finish
