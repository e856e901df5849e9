#!/usr/bin/env bash
# The tests' Kubernetes control plane (tests/kube/control_plane.sh) on its own: it starts, answers
# as the pinned versions, plays a Node created through the API with KWOK, runs a batch/v1 Job of two
# pods through the real scheduler, and completes them only when annotated sim.joulie.io/complete:
# "true" (the chart's KWOK Stage, charts/hwemu/files/kwok-stages.yaml); then it stops and leaves no
# process behind. Expected values come from the objects this test creates (node name, pod count)
# and from the versions scripts/fetch-kubernetes.sh pins.
# Exit 77 (skipped) when the control plane is not built: the test says what to run.
# Usage: test_kube_plane.sh HWEMU_BINARY   (run from the source tree; the binary is not used)
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kube/control_plane.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kube_need "$tmp"

start=$(date +%s.%N)
kube_start "$tmp/kube" || { bad "the control plane did not start (above)"; finish; }
echo "control plane ready in $(python3 -c "import time; print(round(time.time() - $start, 1))") s"
ok
k() { "$kubectl" "$@"; }

# 1. The pinned versions answer (scripts/fetch-kubernetes.sh's ldflags).
v=$(curl -s --cacert "$kube_ca" -H "Authorization: Bearer $kube_token" "$kube_server/version" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["gitVersion"])')
[ "$v" = v1.34.2 ] && ok || bad "/version says $v, expected v1.34.2"
kv=$(k version -o json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])')
[ "$kv" = v1.34.2 ] && ok || bad "kubectl version says $kv, expected v1.34.2"

# 2. A KWOK Node created through the API (status as the creator gives it: 4 CPUs, 2 GPUs) becomes
# Ready, and the controller-manager lifts the not-ready taint.
cat >"$tmp/node.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: plane-node-0
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: plane-node-0}
spec:
  taints:
  - {key: kwok.x-k8s.io/node, value: fake, effect: NoSchedule}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110", nvidia.com/gpu: "2"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110", nvidia.com/gpu: "2"}
EOF
k apply -f "$tmp/node.yaml" >/dev/null 2>"$tmp/err" || bad "creating the Node: $(cat "$tmp/err")"
if k wait --for=condition=Ready node/plane-node-0 --timeout=60s >/dev/null 2>"$tmp/err"; then ok
else bad "node plane-node-0 not Ready in 60 s: $(cat "$tmp/err"); kwok log: $(tail -5 "$tmp/kube/kwok.log")"; fi
gpus=$(k get node plane-node-0 -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')
[ "$gpus" = 2 ] && ok || bad "allocatable nvidia.com/gpu is '$gpus' after KWOK took the Node, expected 2"

# 3. A Job of two pods (parallelism 2), each asking for 1 CPU and 1 GPU: both bound to the node by
# the scheduler, Running under KWOK, and still Running after a few seconds (no stage completes a
# Job's pod by itself).
cat >"$tmp/job.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: plane-job}
spec:
  completions: 2
  parallelism: 2
  backoffLimit: 0
  template:
    metadata:
      labels: {app: plane-job}
    spec:
      restartPolicy: Never
      nodeSelector: {type: kwok}
      tolerations:
      - {key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}
      containers:
      - name: work
        image: hwemu.invalid/none
        resources:
          requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}
          limits: {nvidia.com/gpu: "1"}
EOF
k apply -f "$tmp/job.yaml" >/dev/null 2>"$tmp/err" || bad "creating the Job: $(cat "$tmp/err")"
# pods_in PHASE: the number of the Job's pods in PHASE on plane-node-0.
pods_in() {
    k get pods -l app=plane-job -o jsonpath='{range .items[*]}{.spec.nodeName} {.status.phase}{"\n"}{end}' 2>/dev/null |
        grep -c "^plane-node-0 $1\$"
}
for _ in $(seq 300); do [ "$(pods_in Running)" = 2 ] && break; sleep 0.2; done
[ "$(pods_in Running)" = 2 ] && ok ||
    bad "the Job's pods are not both Running on plane-node-0 after 60 s: $(k get pods -o wide 2>&1)"
sleep 3
[ "$(pods_in Running)" = 2 ] && ok || bad "the Job's pods left Running unannotated: $(k get pods -o wide 2>&1)"

# 4. Annotated complete, both pods Succeeded (exit code 0, Ready False) and the Job Complete 2/2.
for p in $(k get pods -l app=plane-job -o name); do
    k annotate "$p" sim.joulie.io/complete=true >/dev/null 2>"$tmp/err" || bad "annotating $p: $(cat "$tmp/err")"
done
for _ in $(seq 300); do [ "$(pods_in Succeeded)" = 2 ] && break; sleep 0.2; done
[ "$(pods_in Succeeded)" = 2 ] && ok || bad "the annotated pods are not both Succeeded after 60 s: $(k get pods -o wide 2>&1)"
codes=$(k get pods -l app=plane-job -o jsonpath='{range .items[*]}{.status.containerStatuses[0].state.terminated.exitCode}{" "}{end}')
[ "$codes" = "0 0 " ] && ok || bad "exit codes '$codes', expected '0 0 '"
if k wait --for=condition=Complete job/plane-job --timeout=60s >/dev/null 2>"$tmp/err"; then ok
else bad "job plane-job not Complete: $(cat "$tmp/err") $(k get job plane-job -o wide 2>&1)"; fi
succeeded=$(k get job plane-job -o jsonpath='{.status.succeeded}')
[ "$succeeded" = 2 ] && ok || bad "job status.succeeded is '$succeeded', expected 2"

# 5. A pod asking for more GPUs than the node has stays Pending, with the scheduler's reason.
k run plane-big --image=hwemu.invalid/none --restart=Never \
    --overrides='{"spec":{"tolerations":[{"key":"kwok.x-k8s.io/node","operator":"Exists"}],"containers":[{"name":"plane-big","image":"hwemu.invalid/none","resources":{"requests":{"nvidia.com/gpu":"3"},"limits":{"nvidia.com/gpu":"3"}}}]}}' \
    >/dev/null 2>"$tmp/err" || bad "creating pod plane-big: $(cat "$tmp/err")"
for _ in $(seq 150); do
    msg=$(k get pod plane-big -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}' 2>/dev/null)
    [ -n "$msg" ] && break
    sleep 0.2
done
case $msg in *"Insufficient nvidia.com/gpu"*) ok ;; *) bad "pod plane-big: PodScheduled says '$msg'" ;; esac

# 6. Stopped: none of the components' processes is left.
pids=$(for e in $kube_pids; do echo "${e#*:}"; done)
kube_stop
left=""
for p in $pids; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
[ -z "$left" ] && ok || bad "processes left after kube_stop:$left"
finish
