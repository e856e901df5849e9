#!/usr/bin/env bash
# hwemu serve --kubeconfig against a real control plane (tests/kube/control_plane.sh: etcd,
# kube-apiserver 1.34.2, scheduler, controller-manager, KWOK): a 20-node spec of Intel, AMD,
# NVIDIA and AMD GPU pools (all KWOK nodes, the spec default) is registered, and every Node the API
# holds matches what `hwemu clusterspec render-nodes` prints for it (labels, annotations, taints,
# capacity and allocatable compared as quantities, nvidia.com/gpu and amd.com/gpu included; the
# controller-manager's beta.kubernetes.io/os and /arch copies allowed); a
# deleted Node comes back, with one joulie.sim.node.mismatch (missing); a Node annotated with
# another profile gives exactly one mismatch (profile) however often it changes after; a label
# set with kubectl reaches GET /nodes/<n>/labels (what PUT /nodes/<n>/labels sets) and its
# removal too; with the API gone the engine says so, retries, keeps ticking (energy advances)
# and stops at once; it also starts with the API down.
# Exit 77 (skipped) when the control plane is not built: the test says what to run.
# Usage: test_kube_nodes.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
if [ ! -f "$(dirname "$0")/../kube/control_plane.sh" ]; then
    echo "SKIP: tests/kube/control_plane.sh (the test control plane, branch kube-plane) is not in this tree"
    exit 77
fi
. "$(dirname "$0")/../kube/control_plane.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
kube_need "$tmp"
kube_start "$tmp/kube" || { bad "the control plane did not start (above)"; finish; }
k() { "$kubectl" "$@"; }

cat >"$tmp/spec.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: kubemix}
spec:
  defaults:
    labels: {joulie.io/managed: "true"}
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 6, rack: rack-1}
  - {name: amd, profile: amd-epyc-2s-hsmp, count: 5, rack: rack-2}
  - {name: h100, profile: nvidia-h100-sxm-4gpu, count: 4, labels: {joulie.io/gpu: nvidia}}
  - {name: mi300x, profile: amd-instinct-mi300x-8gpu, count: 3}
  - {name: vm, profile: vm-no-powercap, count: 2}
EOF
S=(--spec "$tmp/spec.yaml")
"$hwemu" clusterspec render-nodes "${S[@]}" >"$tmp/rendered.yaml" || { bad "render-nodes failed"; finish; }
port=$(free_port)
url=http://127.0.0.1:$port
ev=$tmp/r/events.jsonl
# mismatch NODE REASON: how many joulie.sim.node.mismatch events of that reason NODE has had
mismatches() {
    "$py" - "$ev" "$1" "$2" <<'EOF'
import json, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "joulie.sim.node.mismatch" and e["node"] == sys.argv[2] and e["attributes"]["reason"] == sys.argv[3]:
        n += 1
print(n)
EOF
}
# until SECONDS CMD...: retries CMD every 0.2 s until it succeeds; 1 after SECONDS
until_ok() {
    local t=$1
    shift
    for _ in $(seq $((t * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    return 1
}
energy() { curl -s "$url/telemetry/$1" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["energyJoules"])'; }

serve_start "$url" "$tmp/serve.err" "${S[@]}" --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms \
    --kubeconfig "$KUBECONFIG" || { bad "serve did not come up: $(cat "$tmp/serve.err")"; finish; }
count() { [ "$(k get nodes -l sim.joulie.io/cluster=kubemix -o name | wc -l)" = 20 ]; }
until_ok 60 count && ok || bad "20 Nodes not registered in 60 s: $(k get nodes -o name | wc -l); $(cat "$tmp/serve.err")"
grep -q "kubernetes: registering and keeping the Nodes at $kube_server (kubeconfig $KUBECONFIG, context hwemu-test, token)" \
    "$tmp/serve.err" && ok || bad "start line: $(cat "$tmp/serve.err")"

# 1. Every Node is the one render-nodes prints. Quantities compare by value (the apiserver may
# write 1Gi for 1048576Ki); labels equal exactly (but for the controller's beta copies); hwemu's
# annotations and taints are all there
# (KWOK and the controllers add their own annotations, and the node lifecycle taints come and go).
k get nodes -o json >"$tmp/nodes.json"
"$py" - "$tmp/rendered.yaml" "$tmp/nodes.json" >"$tmp/cmp.out" 2>&1 <<'EOF'
import json, sys, yaml
from decimal import Decimal
suf = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "m": Decimal("0.001")}
def qty(s):
    for k in sorted(suf, key=len, reverse=True):
        if s.endswith(k):
            return Decimal(s[:-len(k)]) * suf[k]
    return Decimal(s)
want = {d["metadata"]["name"]: d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
have = {n["metadata"]["name"]: n for n in json.load(open(sys.argv[2]))["items"]}
bad = 0
def no(msg):
    global bad
    bad += 1
    print(msg)
if len(want) != 20:
    no(f"render-nodes printed {len(want)} Nodes")
gpus = {}
for name, w in want.items():
    h = have.get(name)
    if not h:
        no(f"{name}: not in the API"); continue
    wl, hl = w["metadata"]["labels"], dict(h["metadata"].get("labels", {}))
    # kube-controller-manager's node lifecycle controller copies kubernetes.io/os and /arch to
    # their deprecated beta.kubernetes.io names on every Node: those two only, and equal
    for g in ("os", "arch"):
        if "beta.kubernetes.io/" + g in hl and hl["beta.kubernetes.io/" + g] == wl.get("kubernetes.io/" + g):
            del hl["beta.kubernetes.io/" + g]
    if hl != wl:
        no(f"{name}: labels differ: " + str({k: (wl.get(k), hl.get(k)) for k in set(wl) | set(hl) if wl.get(k) != hl.get(k)}))
    for k, v in w["metadata"]["annotations"].items():
        if h["metadata"].get("annotations", {}).get(k) != v:
            no(f"{name}: annotation {k}: {h['metadata'].get('annotations', {}).get(k)!r}, rendered {v!r}")
    ht = [{k: t.get(k) for k in ("key", "value", "effect") if t.get(k)} for t in h["spec"].get("taints", [])]
    for t in w["spec"]["taints"]:
        if {k: v for k, v in t.items() if v} not in ht:
            no(f"{name}: taint {t} missing: {ht}")
    for part in ("capacity", "allocatable"):
        wq, hq = w["status"][part], h["status"].get(part, {})
        if set(wq) != set(hq) or any(qty(wq[k]) != qty(hq[k]) for k in wq):
            no(f"{name}: {part} {hq}, rendered {wq}")
    for r in ("nvidia.com/gpu", "amd.com/gpu"):
        if r in h["status"].get("allocatable", {}):
            gpus[r] = gpus.get(r, 0) + int(h["status"]["allocatable"][r])
# 4 H100 nodes of 4 GPUs, 3 MI300X nodes of 8 (the profiles' gpus.count)
if gpus != {"nvidia.com/gpu": 16, "amd.com/gpu": 24}:
    no(f"GPUs in the API: {gpus}")
print("compared", len(want), "Nodes")
sys.exit(1 if bad else 0)
EOF
[ $? = 0 ] && ok || bad "Nodes differ from render-nodes: $(head -20 "$tmp/cmp.out")"
until_ok 60 k wait --for=condition=Ready node/h100-0 --timeout=1s && ok || bad "KWOK did not make h100-0 Ready"
[ "$(mismatches intel-2 missing)" = 0 ] && ok || bad "mismatch events at registration"

# 2. A deleted Node comes back; one mismatch (missing) for it.
uid=$(k get node intel-2 -o jsonpath='{.metadata.uid}')
k delete node intel-2 --wait=false >/dev/null
back() { u=$(k get node intel-2 -o jsonpath='{.metadata.uid}') && [ -n "$u" ] && [ "$u" != "$uid" ]; }
until_ok 30 back && ok || bad "intel-2 did not come back in 30 s: $(tail -3 "$tmp/serve.err")"
until_ok 10 test "$(mismatches intel-2 missing)" = 1 && ok || bad "mismatch (missing) events for intel-2: $(mismatches intel-2 missing)"
grep -q "kubernetes: Node intel-2 was deleted: created again" "$tmp/serve.err" && ok || bad "no line for the re-creation"
[ "$(k get node intel-2 -o jsonpath='{.metadata.annotations.sim\.joulie\.io/profile}')" = intel-xeon-2s-rapl ] \
    && ok || bad "intel-2 came back without its profile"

# 3. Another profile on a Node: exactly one mismatch (profile), whatever changes on it after.
k annotate --overwrite node amd-1 sim.joulie.io/profile=nvidia-h100-sxm-4gpu >/dev/null
until_ok 10 test "$(mismatches amd-1 profile)" = 1 && ok || bad "mismatch (profile) for amd-1: $(mismatches amd-1 profile)"
for i in 1 2 3; do k label --overwrite node amd-1 hwemu-test/touch=$i >/dev/null; done
sleep 1.5
[ "$(mismatches amd-1 profile)" = 1 ] && ok || bad "amd-1's mismatch was emitted $(mismatches amd-1 profile) times"
curl -s "$url/debug/events?node=amd-1" | "$py" -c '
import json, sys
e = [x for x in json.load(sys.stdin)["events"] if x["event"] == "joulie.sim.node.mismatch"]
a = e[0]["attributes"]
sys.exit(0 if len(e) == 1 and a == {"reason": "profile", "profile": "amd-epyc-2s-hsmp", "found": "nvidia-h100-sxm-4gpu"} else 1)' \
    && ok || bad "/debug/events for amd-1: $(curl -s "$url/debug/events?node=amd-1" | head -c 400)"
# back to its own profile, then another: a change, so one more
k annotate --overwrite node amd-1 sim.joulie.io/profile=amd-epyc-2s-hsmp >/dev/null
sleep 1
k annotate --overwrite node amd-1 sim.joulie.io/profile=vm-no-powercap >/dev/null
until_ok 10 test "$(mismatches amd-1 profile)" = 2 && ok || bad "a second change gave $(mismatches amd-1 profile) events in all"

# 4. Labels set with kubectl reach the engine as PUT /nodes/<n>/labels does.
label() { curl -s "$url/nodes/intel-0/labels" | "$py" -c "import json,sys; print(json.load(sys.stdin)['labels'].get('joulie.io/power-profile', '-'))"; }
k label node intel-0 joulie.io/power-profile=eco >/dev/null
until_ok 10 test "$(label)" = eco && ok || bad "joulie.io/power-profile on intel-0 in the engine: $(label)"
k label node intel-0 joulie.io/power-profile- >/dev/null
until_ok 10 test "$(label)" = - && ok || bad "the removed label is still $(label) in the engine"

# 5. The API goes away: the engine says so, retries, ticks on, and stops at once.
kube_stop
e1=$(energy intel-0)
sleep 3
e2=$(energy intel-0)
"$py" -c "import sys; sys.exit(0 if $e2 > $e1 > 0 else 1)" && ok || bad "energy stalled with the API down: $e1 -> $e2"
until_ok 20 grep -q "kubernetes: .*retrying in .* (the engine runs on)" "$tmp/serve.err" && ok \
    || bad "no retry line: $(tail -3 "$tmp/serve.err")"
t0=$(date +%s%N)
kill $pid; wait $pid; rc=$?; pid=
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc = 0 ] && [ $ms -lt 5000 ] && ok || bad "stop with the API down: rc=$rc after $ms ms"

# 6. A start with the API down: the nodes run, the retries are said, a stop is prompt.
: >"$tmp/serve2.err"
serve_start "$url" "$tmp/serve2.err" "${S[@]}" --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms \
    --kubeconfig "$KUBECONFIG" || { bad "serve did not come up with the API down: $(cat "$tmp/serve2.err")"; finish; }
e1=$(energy h100-1)
sleep 2
e2=$(energy h100-1)
"$py" -c "import sys; sys.exit(0 if $e2 > $e1 > 0 else 1)" && ok || bad "energy with the API down from the start: $e1 -> $e2"
n=$(grep -c "kubernetes: GET $kube_server/api/v1/nodes?limit=500: .*retrying in" "$tmp/serve2.err")
[ "$n" -ge 2 ] && ok || bad "retries said $n times: $(cat "$tmp/serve2.err")"
t0=$(date +%s%N)
kill $pid; wait $pid; rc=$?; pid=
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc = 0 ] && [ $ms -lt 5000 ] && ok || bad "stop with the API down from the start: rc=$rc after $ms ms"
finish
