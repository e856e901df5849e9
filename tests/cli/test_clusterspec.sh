#!/usr/bin/env bash
# `hwemu clusterspec validate|render-nodes|list` on good specs: validate is silent, list has
# one line per node, render-nodes is a YAML stream of v1 Nodes that an independent parser
# (python3-yaml) reads with every label, annotation and resource a string; options, env
# variables and usage errors behave as the README says.
# Usage: test_clusterspec.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"

out=$("$hwemu" clusterspec validate --spec specs/smoke.yaml 2>&1); rc=$?
[ $rc -eq 0 ] && [ -z "$out" ] && ok || bad "validate smoke: rc=$rc out=$out"
out=$("$hwemu" clusterspec validate -spec specs/smoke.yaml 2>&1); rc=$?
[ $rc -eq 0 ] && [ -z "$out" ] && ok || bad "validate with -spec: rc=$rc out=$out"
out=$(SIM_CLUSTER_SPEC=specs/smoke.yaml "$hwemu" clusterspec list); rc=$?
want=$'intel-0     intel     intel-xeon-2s-rapl\nsxm-nopm-0  sxm-nopm  nvidia-h100-sxm-8gpu\nvm-0        vm        vm-no-powercap'
[ $rc -eq 0 ] && [ "$out" = "$want" ] && ok || bad "list smoke via SIM_CLUSTER_SPEC: $out"
out=$("$hwemu" clusterspec list --spec tests/specs/labels.yaml)
want=$'rack7-cpu-10  cpu   intel-xeon-2s-rapl\nrack7-cpu-11  cpu   intel-xeon-2s-rapl\nrack7-cpu-12  cpu   intel-xeon-2s-rapl\nvm-0          vm    vm-no-powercap\nvm-1          vm    vm-no-powercap'
[ "$out" = "$want" ] && ok || bad "list labels.yaml: $out"

# render-nodes, read back by python3-yaml.
check_nodes() { # spec, python assertions over `nodes`
    "$hwemu" clusterspec render-nodes --spec "$1" >"$tmp/nodes.yaml" || { bad "render-nodes $1 failed"; return; }
    if "$py" - "$tmp/nodes.yaml" <<PY; then ok; else bad "render-nodes $1 assertions"; fi
import sys, yaml
nodes = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
for n in nodes:
    assert n["apiVersion"] == "v1" and n["kind"] == "Node", n
    for section in (n["metadata"]["labels"], n["metadata"]["annotations"], n["status"]["capacity"], n["status"]["allocatable"]):
        for k, v in section.items():
            assert isinstance(k, str) and isinstance(v, str), (k, v)
    assert n["metadata"]["labels"]["kubernetes.io/hostname"] == n["metadata"]["name"]
by = {n["metadata"]["name"]: n for n in nodes}
$2
PY
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check_nodes specs/smoke.yaml '
assert sorted(by) == ["intel-0", "sxm-nopm-0", "vm-0"], sorted(by)
i = by["intel-0"]; l = i["metadata"]["labels"]
assert l["joulie.io/managed"] == "true" and l["type"] == "kwok"
assert l["joulie.io/rack"] == "rack-1" and l["joulie.io/cooling-zone"] == "zone-a"
assert l["sim.joulie.io/cluster"] == "smoke" and l["sim.joulie.io/pool"] == "intel"
assert l["feature.node.kubernetes.io/pci-0300_102b.present"] == "true"
assert i["metadata"]["annotations"] == {"sim.joulie.io/profile": "intel-xeon-2s-rapl", "kwok.x-k8s.io/node": "fake"}
assert i["spec"]["taints"] == [{"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}]
assert i["status"]["capacity"] == {"cpu": "96", "memory": "791917286Ki", "pods": "110"}
assert i["status"]["allocatable"] == {"cpu": "95", "memory": "787722982Ki", "pods": "110"}
g = by["sxm-nopm-0"]; gl = g["metadata"]["labels"]
assert gl["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3", gl["nvidia.com/gpu.product"]
assert gl["nvidia.com/gpu.count"] == "8" and gl["feature.node.kubernetes.io/pci-0302_10de.present"] == "true"
assert g["status"]["capacity"]["nvidia.com/gpu"] == "8"
v = by["vm-0"]
assert v["status"]["allocatable"]["cpu"] == "7900m", v["status"]["allocatable"]
assert "joulie.io/rack" not in v["metadata"]["labels"]
'
check_nodes tests/specs/labels.yaml '
assert sorted(by) == ["rack7-cpu-10", "rack7-cpu-11", "rack7-cpu-12", "vm-0", "vm-1"], sorted(by)
n = by["rack7-cpu-11"]; l = n["metadata"]["labels"]
assert l["tier"] == "pool"                                  # pool labels win over defaults
assert l["kubernetes.io/arch"] == "overridden-by-defaults"  # defaults win over the profile
assert l["sim.joulie.io/pool"] == "cpu" and l["sim.joulie.io/cluster"] == "lab"
assert l["joulie.io/rack"] == "rack-7" and l["joulie.io/cooling-zone"] == "cold"
assert "type" not in l                                      # kwok: false
assert n["metadata"]["annotations"] == {"sim.joulie.io/profile": "intel-xeon-2s-rapl"}
assert n["spec"]["taints"] == []
assert by["vm-1"]["metadata"]["labels"]["tier"] == "default"
'

# Usage errors exit 2, with a message naming what to do.
err=$("$hwemu" clusterspec validate 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "pass --spec FILE or set SIM_CLUSTER_SPEC" <<<"$err" && ok || bad "no spec: rc=$rc $err"
"$hwemu" clusterspec frob --spec specs/smoke.yaml >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "unknown subcommand"
"$hwemu" clusterspec list --spec >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "--spec without value"
"$hwemu" clusterspec list --sepc x >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "misspelt option"
"$hwemu" nosuch >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "unknown command"
"$hwemu" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "no command"
"$hwemu" clusterspec --help | grep -q "^Usage: hwemu clusterspec" && ok || bad "clusterspec --help"
"$hwemu" --help | grep -q "^Usage: hwemu <command>" && ok || bad "hwemu --help"
"$hwemu" --version | grep -q "^hwemu [0-9]" && ok || bad "--version"
finish
