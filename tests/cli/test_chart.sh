#!/usr/bin/env bash
# The Helm chart charts/hwemu: `helm lint --strict` and `helm template` (helm 3.22.0, built by
# scripts/fetch-kubernetes.sh) for five value sets, what each renders, and a server-side dry run
# of every rendered object against the real kube-apiserver of tests/kube/control_plane.sh.
# Value sets and what is expected of each (from the values this test passes):
#   default        one engine replica, no SIM_SHARD, SIM_KUBECONFIG=incluster; the spec ConfigMap
#                  passes `hwemu clusterspec validate`; the KWOK Stages ConfigMap is
#                  files/kwok-stages.yaml byte for byte; the dashboard ConfigMap is
#                  files/hwemu-dashboard.json byte for byte
#   shards3        shards=3: replicas 3, SIM_SHARD "$(POD_INDEX)/3", POD_INDEX from the pod-index label
#   agents         agents on (--pool intel): an agents container running hwemu agents through the
#                  copied loader, its selection and command after "--", the tools init container
#   monitor        serviceMonitor on: a ServiceMonitor whose selector picks exactly the engine Service
#   inputs         a trace (hwemu trace generate) and an extra profile (tests/corpus/profiles-good):
#                  their ConfigMaps pass `hwemu trace validate` and `hwemu clusterspec validate`
#                  with the profiles dir, and the engine gets SIM_WORKLOAD_TRACE_PATH, SIM_PROFILES_DIR
# Bad values: shards=0 fails with the chart's message.
# The dry run: monitoring.coreos.com/v1 ServiceMonitor is not a built-in kind, so the test first
# creates a minimal CustomResourceDefinition for it (any fields kept), as the Prometheus Operator
# would; every object of every set must then be accepted by the apiserver (`kubectl apply
# --dry-run=server`: admission, defaulting, schema validation, RBAC objects included).
# Exit 77 (skipped) when the control plane or helm is not built: the test says what to run.
# Usage: test_chart.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kube/control_plane.sh"
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 0. Every value of values.yaml is documented in the chart's README and in docs/kubernetes.md (a
# row for it or for the mapping holding it), and every documented value exists (no helm needed).
for doc in charts/hwemu/README.md docs/kubernetes.md; do
    out=$($py - charts/hwemu/values.yaml "$doc" 2>&1 <<'PYEOF'
import re, sys, yaml
values = yaml.safe_load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
# only the section of the values (docs/kubernetes.md has other tables, of events and variables)
m = re.search(r"^#+ Values\n(.*?)(?=^## |\Z)", text, re.M | re.S)
rows = set(re.findall(r"^\| `([\w.]+)` \|", m.group(1) if m else text, re.M))
missing, known = [], set()
def walk(d, prefix):
    for k, v in d.items():
        path = prefix + k
        known.add(path)
        if path in rows:
            continue
        if isinstance(v, dict) and v:
            walk(v, path + ".")
        else:
            missing.append(path)
walk(values, "")
stale = sorted(rows - known)
if missing or stale:
    sys.exit("undocumented: %s; documented but not in values.yaml: %s" % (missing, stale))
print(len(rows))
PYEOF
    ) && ok || bad "$doc: $out"
done
[ $fail = 0 ] || finish   # a documentation failure is reported even where the rest is skipped
echo "every value documented in charts/hwemu/README.md and docs/kubernetes.md"
kube_need "$tmp"
helm=$kube_bin/helm
if [ ! -x "$helm" ]; then
    echo "$helm is missing: run scripts/fetch-kubernetes.sh build"
    echo "SKIP: helm is not built"
    exit 77
fi
chart=charts/hwemu
# helm keeps its own state out of the user's home
export HELM_CACHE_HOME=$tmp/helm/cache HELM_CONFIG_HOME=$tmp/helm/config HELM_DATA_HOME=$tmp/helm/data

# The value sets.
"$hwemu" trace generate --jobs 5 --seed 7 --sim-hours 1 --out "$tmp/trace.jsonl" 2>/dev/null ||
    bad "hwemu trace generate failed"
cat >"$tmp/default.yaml" <<'EOF'
{}
EOF
cat >"$tmp/shards3.yaml" <<'EOF'
shards: 3
EOF
cat >"$tmp/agents.yaml" <<'EOF'
agents:
  enabled: true
  selection: [--pool, intel]
  command: [/bin/node_exporter, "--web.listen-address=0.0.0.0:{index+9100}", --collector.rapl]
  logsToFiles: true
EOF
cat >"$tmp/monitor.yaml" <<'EOF'
serviceMonitor:
  enabled: true
  labels: {release: prometheus}
EOF
$py - "$tmp/trace.jsonl" tests/corpus/profiles-good/lab-xeon.yaml "$tmp/inputs.yaml" <<'PYEOF'
import sys, yaml
trace, profile, out = sys.argv[1:]
spec = """apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: lab}
spec:
  pools:
  - {name: lab, profile: lab-xeon, count: 2}
"""
yaml.safe_dump({"spec": spec, "trace": open(trace).read(),
                "profiles": {"lab-xeon.yaml": open(profile).read()},
                "engine": {"speed": "10", "workers": 2, "exporters": "kepler-0.12"}},
               open(out, "w"), default_flow_style=False)
PYEOF
sets="default shards3 agents monitor inputs"

# 1. Lint and render.
for s in $sets; do
    if "$helm" lint --strict "$chart" -f "$tmp/$s.yaml" >"$tmp/lint-$s.out" 2>&1; then ok
    else bad "helm lint --strict ($s): $(cat "$tmp/lint-$s.out")"; fi
    if "$helm" template hw "$chart" --namespace default -f "$tmp/$s.yaml" >"$tmp/$s.rendered.yaml" 2>"$tmp/err"; then ok
    else bad "helm template ($s): $(cat "$tmp/err")"; fi
done
out=$("$helm" template hw "$chart" --set shards=0 2>&1) && bad "shards=0 rendered" ||
    { [[ $out == *"shards must be 1 or more"* ]] && ok || bad "shards=0: $out"; }

# 2. What each set renders.
mkdir -p "$tmp/x"
if $py - "$tmp" "$chart" <<'PYEOF' >"$tmp/checks.out" 2>&1; then ok; else cat "$tmp/checks.out"; bad "rendered objects (above)"; fi
import json, os, sys, yaml
tmp, chart = sys.argv[1:]
fails = []
def objs(s):
    return [d for d in yaml.safe_load_all(open("%s/%s.rendered.yaml" % (tmp, s))) if d]
def one(docs, kind, name=None):
    m = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    if len(m) != 1:
        raise SystemExit("%d %s%s objects, expected 1" % (len(m), kind, " " + name if name else ""))
    return m[0]
def env(c):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c.get("env", [])}
def check(cond, what):
    if not cond:
        fails.append(what)

d = objs("default")
kinds = sorted(x["kind"] for x in d)
check(kinds == sorted(["ConfigMap"] * 3 + ["ServiceAccount"] * 2 + ["ClusterRole"] * 2 + ["ClusterRoleBinding"] * 2
                      + ["Deployment", "StatefulSet", "Service", "Service"]), "default: kinds %s" % kinds)
st = one(d, "StatefulSet")
check(st["spec"]["replicas"] == 1, "default: replicas %s" % st["spec"]["replicas"])
e = env(st["spec"]["template"]["spec"]["containers"][0])
check("SIM_SHARD" not in e, "default: SIM_SHARD set")
check(e.get("SIM_KUBECONFIG") == "incluster", "default: SIM_KUBECONFIG %s" % e.get("SIM_KUBECONFIG"))
open("%s/x/spec.yaml" % tmp, "w").write(one(d, "ConfigMap", "hw-hwemu-spec")["data"]["spec.yaml"])
stages = one(d, "ConfigMap", "hw-hwemu-kwok-stages")["data"]["stages.yaml"]
check(stages == open(chart + "/files/kwok-stages.yaml").read(), "default: the KWOK Stages differ from files/kwok-stages.yaml")
check(len([x for x in yaml.safe_load_all(stages) if x and x["kind"] == "Stage"]) == 5, "default: not 5 Stages")
dash = one(d, "ConfigMap", "hw-hwemu-dashboard")["data"]["hwemu-dashboard.json"]
check(dash == open(chart + "/files/hwemu-dashboard.json").read(), "default: the dashboard differs from files/hwemu-dashboard.json")
json.loads(dash)

st = one(objs("shards3"), "StatefulSet")
e = env(st["spec"]["template"]["spec"]["containers"][0])
check(st["spec"]["replicas"] == 3, "shards3: replicas %s" % st["spec"]["replicas"])
check(e.get("SIM_SHARD") == "$(POD_INDEX)/3", "shards3: SIM_SHARD %s" % e.get("SIM_SHARD"))
check(e.get("POD_INDEX") == {"fieldRef": {"fieldPath": "metadata.labels['apps.kubernetes.io/pod-index']"}},
      "shards3: POD_INDEX %s" % e.get("POD_INDEX"))

pod = one(objs("agents"), "StatefulSet")["spec"]["template"]["spec"]
names = [c["name"] for c in pod["containers"]]
check(names == ["engine", "agents"], "agents: containers %s" % names)
check([c["name"] for c in pod["initContainers"]] == ["root-mode", "hwemu-tools"], "agents: init containers")
cmd = pod["containers"][1]["command"]
want = ["/opt/hwemu/runtime/ld-linux-x86-64.so.2", "--library-path", "/opt/hwemu/runtime", "/opt/hwemu/bin/hwemu", "agents"]
check(cmd[:5] == want, "agents: command starts %s" % cmd[:5])
check("--logs=/var/log/hwemu-agents" in cmd, "agents: no --logs")
i = cmd.index("--")
check(cmd[i - 2:i] == ["--pool", "intel"], "agents: selection %s" % cmd[i - 2:i])
check(cmd[i + 1:] == ["/bin/node_exporter", "--web.listen-address=0.0.0.0:{index+9100}", "--collector.rapl"],
      "agents: agent command %s" % cmd[i + 1:])

m = objs("monitor")
sm = one(m, "ServiceMonitor")
sel = sm["spec"]["selector"]["matchLabels"]
picked = [x["metadata"]["name"] for x in m if x["kind"] == "Service"
          and all(x["metadata"]["labels"].get(k) == v for k, v in sel.items())]
check(picked == ["hw-hwemu"], "monitor: the ServiceMonitor selects the Services %s" % picked)
check(sm["metadata"]["labels"].get("release") == "prometheus", "monitor: labels")

d = objs("inputs")
open("%s/x/trace.jsonl" % tmp, "w").write(one(d, "ConfigMap", "hw-hwemu-trace")["data"]["trace.jsonl"])
os.makedirs("%s/x/profiles" % tmp, exist_ok=True)
for f, text in one(d, "ConfigMap", "hw-hwemu-profiles")["data"].items():
    open("%s/x/profiles/%s" % (tmp, f), "w").write(text)
open("%s/x/inputs-spec.yaml" % tmp, "w").write(one(d, "ConfigMap", "hw-hwemu-spec")["data"]["spec.yaml"])
e = env(one(d, "StatefulSet")["spec"]["template"]["spec"]["containers"][0])
for k, v in {"SIM_WORKLOAD_TRACE_PATH": "/etc/hwemu/trace/trace.jsonl", "SIM_PROFILES_DIR": "/etc/hwemu/profiles",
             "SIM_SPEED": "10", "SIM_EMULATE_WORKERS": "2", "SIM_EXPORTERS": "kepler-0.12"}.items():
    check(e.get(k) == v, "inputs: %s is %s, expected %s" % (k, e.get(k), v))
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PYEOF
"$hwemu" clusterspec validate --spec "$tmp/x/spec.yaml" 2>"$tmp/err" && ok || bad "the default spec: $(cat "$tmp/err")"
"$hwemu" trace validate "$tmp/x/trace.jsonl" >"$tmp/err" 2>&1 && ok || bad "the trace ConfigMap: $(cat "$tmp/err")"
"$hwemu" clusterspec validate --spec "$tmp/x/inputs-spec.yaml" --profiles-dir "$tmp/x/profiles" 2>"$tmp/err" && ok ||
    bad "the inputs spec with its profiles ConfigMap: $(cat "$tmp/err")"

# 3. Every object of every set through the apiserver's server-side dry run.
kube_start "$tmp/kube" || { bad "the control plane did not start (above)"; finish; }
cat >"$tmp/servicemonitor-crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: servicemonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
EOF
"$kubectl" apply -f "$tmp/servicemonitor-crd.yaml" >/dev/null 2>"$tmp/err" || bad "the ServiceMonitor CRD: $(cat "$tmp/err")"
"$kubectl" wait --for=condition=Established crd/servicemonitors.monitoring.coreos.com --timeout=60s >/dev/null 2>&1 ||
    bad "the ServiceMonitor CRD is not Established"
# the discovery cache must know the new kind before kubectl maps it
for _ in $(seq 50); do "$kubectl" api-resources --api-group=monitoring.coreos.com 2>/dev/null | grep -q servicemonitors && break; sleep 0.2; done
for s in $sets; do
    n=$($py -c 'import sys, yaml; print(sum(1 for d in yaml.safe_load_all(open(sys.argv[1])) if d))' "$tmp/$s.rendered.yaml")
    if "$kubectl" apply --dry-run=server -f "$tmp/$s.rendered.yaml" >"$tmp/dry-$s.out" 2>&1; then
        got=$(grep -c "(server dry run)" "$tmp/dry-$s.out")
        [ "$got" = "$n" ] && ok || bad "$s: $got of $n objects accepted: $(cat "$tmp/dry-$s.out")"
        echo "$s: $n objects accepted by the apiserver's dry run"
    else
        bad "$s: the server-side dry run refused: $(grep -v "(server dry run)" "$tmp/dry-$s.out")"
    fi
done
# A dry run refuses what is wrong (so the check can fail): a StatefulSet without its selector.
$py - "$tmp/default.rendered.yaml" "$tmp/broken.yaml" <<'PYEOF'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "StatefulSet"]
del docs[0]["spec"]["selector"]
yaml.safe_dump(docs[0], open(sys.argv[2], "w"))
PYEOF
"$kubectl" apply --dry-run=server -f "$tmp/broken.yaml" >"$tmp/err" 2>&1 && bad "a StatefulSet without a selector passed the dry run" ||
    { grep -q "selector" "$tmp/err" && ok || bad "the broken StatefulSet: $(cat "$tmp/err")"; }
# Nothing was created by the dry runs.
left=$("$kubectl" get statefulsets,deployments,configmaps -n default -o name 2>/dev/null | grep -c hwemu)
[ "$left" = 0 ] && ok || bad "$left objects of the chart exist after the dry runs"
kube_stop
finish
