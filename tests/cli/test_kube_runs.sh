#!/usr/bin/env bash
# Workload runs through the real scheduler (docs/kubernetes.md "Runs through the scheduler"),
# against the test control plane (tests/kube/control_plane.sh: etcd, kube-apiserver 1.34.2,
# scheduler, controller-manager, KWOK with charts/hwemu/files/kwok-stages.yaml):
#   A. a generated trace (hwemu trace generate: 36 jobs of 24 workloads, gangs among them, about
#      90 s of emulated time) plus a job asking for 16 GPUs (more than any node has) runs to its
#      end at --speed 10 on a 5-node mixed spec (Intel, AMD, an 8-GPU and a 4-GPU H100 node):
#      each group of the trace (a workload's jobs that one pod template describes) is one
#      Indexed batch/v1 Job, one pod a job; every pod requests what its job holds, carries its class, a
#      performance pod has the affinity that keeps it off eco Nodes; every job ran on the node
#      the scheduler bound its pod to and completed; every pod Succeeded (KWOK's Stage, after the
#      engine's sim.joulie.io/complete annotation); the 16-GPU job is reported stalled and its pod
#      stays Pending, Unschedulable for the scheduler's own reason (Insufficient nvidia.com/gpu);
#      on every node the jobs' energies plus idle equal the counters' increase to the microjoule
#      (test_runs.sh's check, the same code splits the energy); the outputs, the run API and the
#      metrics say "placement": "kubernetes";
#   B. `kubectl label node cpu-0 joulie.io/power-profile=eco` keeps the performance pods of the
#      next run off cpu-0 (the scheduler, through the pods' affinity), while standard pods still
#      go there;
#   C. a run suspended by a stop (SIGTERM) in its middle resumes at the next start, through the
#      scheduler still: the same Jobs as run A, every pod Succeeded, the energy split whole.
# Exit 77 (skipped) when the control plane is not built: the test says what to run.
# Usage: test_kube_runs.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
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
metadata: {name: kuberuns}
spec:
  pools:
  - {name: cpu, profile: intel-xeon-2s-rapl, count: 2}
  - {name: amd, profile: amd-epyc-2s-hsmp, count: 1}
  - {name: h100, profile: nvidia-h100-sxm-8gpu, count: 1}
  - {name: h4, profile: nvidia-h100-sxm-4gpu, count: 1}
EOF
"$hwemu" trace generate --jobs 24 --seed 5 --time-scale 120 --out "$tmp/trace.jsonl" 2>/dev/null ||
    { bad "trace generate failed"; finish; }
# more GPUs than any node has (8): the scheduler leaves its pod Pending, the run says stalled
echo '{"type":"job","schemaVersion":"v2","jobId":"too-many-gpus","submitTimeOffsetSec":1,"podTemplate":{"requests":{"cpu":"2","nvidia.com/gpu":"16"}},"work":{"cpuUnits":10,"gpuUnits":10}}' \
    >>"$tmp/trace.jsonl"

port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/serve.err" --spec "$tmp/spec.yaml" --root "$tmp/r" --addr 127.0.0.1:$port \
    --speed 10 --kubeconfig "$KUBECONFIG" || { bad "serve did not come up: $(cat "$tmp/serve.err")"; finish; }
ready() {
    k get nodes -l sim.joulie.io/cluster=kuberuns -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{.spec.taints[*].key}{"\n"}{end}' >"$tmp/ready.txt" &&
        [ "$(grep -c '^True' "$tmp/ready.txt")" = 5 ] && ! grep -q node.kubernetes.io "$tmp/ready.txt"
}
# Ready, and the node lifecycle's taints lifted by the controller-manager
until_ok 90 ready && ok || bad "5 Nodes not Ready and schedulable in 90 s: $(k get nodes -o wide 2>&1); $(cat "$tmp/serve.err")"

# run_start FILE: POSTs the trace; prints the run's id
run_start() {
    curl -s -X POST --data-binary @"$1" "$url/runs" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["runId"])'
}
# run_wait ID: waits (up to 480 s: a loaded machine steps the nodes late) for the run to end;
# prints its id
run_wait() {
    local id=$1 st
    for _ in $(seq 960); do
        st=$(curl -s "$url/runs/$id" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["state"])')
        [ "$st" != running ] && { echo "$id"; return 0; }
        sleep 0.5
    done
    echo "run $id still running after 480 s: $(curl -s "$url/runs/$id")" >&2
    return 1
}

# --- A. the generated trace through the scheduler ------------------------------------------
ra=$(run_start "$tmp/trace.jsonl") || { bad "run A not started"; finish; }
# while the run goes on, the 16-GPU job's pod is Pending: the scheduler found no node for it
unschedulable() {
    k get pods -l sim.joulie.io/run=$ra,job-name=$(k get jobs -l sim.joulie.io/run=$ra -o name | grep -o 'sim-too-many-gpus-[0-9a-f]*') -o json >"$tmp/toomany.json" &&
        grep -q '"reason": "Unschedulable"' "$tmp/toomany.json"
}
until_ok 60 unschedulable && ok || bad "the 16-GPU job's pod is not Unschedulable: $(cat "$tmp/toomany.json")"
ra=$(run_wait "$ra") && ok || { bad "run A did not end: $(tail -5 "$tmp/serve.err")"; finish; }
da=$tmp/r/runs/$ra
# pods: wait for every pod of a completed job to be Succeeded (annotation, then KWOK's Stage)
succeeded() {
    [ "$(k get pods -A -l sim.joulie.io/run=$ra --field-selector=status.phase=Succeeded -o name | wc -l)" = 36 ]
}
until_ok 60 succeeded && ok || bad "not every pod Succeeded in 60 s: $(k get pods -A -l sim.joulie.io/run=$ra --no-headers 2>&1 | awk '{print $4}' | sort | uniq -c)"
# the stalled job's Job is taken away at the run's end (its pod would stay Pending forever)
gone() { [ -z "$(k get jobs -l sim.joulie.io/run=$ra -o name | grep sim-too-many-gpus)" ]; }
until_ok 30 gone && ok || bad "the stalled job's Job is still there after the run: $(k get jobs -l sim.joulie.io/run=$ra)"
k get pods -A -l sim.joulie.io/run=$ra -o json >"$tmp/pods-a.json"
k get jobs -A -l sim.joulie.io/run=$ra -o json >"$tmp/jobs-a.json"
curl -s "$url/runs/$ra" >"$tmp/status-a.json"
curl -s "$url/metrics" >"$tmp/metrics.txt"
"$py" - "$da" "$tmp/trace.jsonl" "$tmp/pods-a.json" "$tmp/jobs-a.json" "$tmp/status-a.json" "$tmp/toomany.json" <<'PY' && ok || bad "run A through the scheduler (above)"
import json, math, sys
d, trace, podsf, jobsf, statusf, toomanyf = sys.argv[1:]
s = json.load(open(d + "/summary.json"))
jobs = {j["jobId"]: j for j in map(json.loads, open(d + "/jobs.jsonl"))}
want = {r["jobId"]: r for r in map(json.loads, open(trace)) if r["type"] == "job"}
# a pod's job: the completion index-th of its Job's jobIds
def job_of(p):
    a = p["metadata"]["annotations"]
    return json.loads(a["sim.joulie.io/jobIds"])[int(a.get("batch.kubernetes.io/job-completion-index", "0"))]
# the 16-GPU job's pod as seen during the run (after it, it goes with its Job)
pods = [p for p in json.load(open(podsf))["items"] if job_of(p) != "too-many-gpus"]
pods += json.load(open(toomanyf))["items"]
kjobs = json.load(open(jobsf))["items"] # after the run: the stalled one's is gone
st = json.load(open(statusf))
fail = []
if s["placement"] != "kubernetes" or st["placement"] != "kubernetes":
    fail.append("placement: summary %s, status %s" % (s["placement"], st["placement"]))
if s["state"] != "stalled" or s["jobs"]["completed"] != len(want) - 1 or s["jobs"]["stalled"] != 1:
    fail.append("want every job but too-many-gpus completed: %s %s" % (s["state"], s["jobs"]))
tm = jobs.get("too-many-gpus", {})
if tm.get("state") != "stalled" or "no node can ever hold" not in tm.get("stallReason", ""):
    fail.append("too-many-gpus: %s" % tm)
# one batch/v1 Job a group (a workload's jobs with one pod template: the generated trace's
# hpo trials and distributed workers), one pod a job; the pod as the original makes it
groups = {}
for r in want.values():
    q = r["podTemplate"]["requests"]
    key = (r.get("workloadId", ""), r.get("submitTimeOffsetSec", 0), r.get("intentClass"), r.get("podRole"),
           json.dumps(q, sort_keys=True), json.dumps(r.get("workloadProfile"), sort_keys=True),
           json.dumps(r.get("workloadClass"), sort_keys=True))
    groups.setdefault(key if key[0] else r["jobId"], []).append(r["jobId"])
many = [g for g in groups.values() if len(g) > 1]
if len(kjobs) != len(groups) - 1 or len(pods) != len(want) or not many:
    fail.append("%d Jobs (%d groups, the stalled one's removed) and %d pods for %d trace jobs" % (len(kjobs), len(groups), len(pods), len(want)))
if sum(j["spec"]["completions"] for j in kjobs) != len(want) - 1:
    fail.append("Jobs' completions: %d" % sum(j["spec"]["completions"] for j in kjobs))
by_job = {}
for p in pods:
    a = p["metadata"]["annotations"]
    jid = job_of(p)
    by_job[jid] = p
    r = want[jid]
    req = p["spec"]["containers"][0]["resources"]["requests"]
    cls = "performance" if r.get("intentClass") == "performance" else "standard"
    if a.get("joulie.io/workload-class") != cls or p["metadata"]["labels"].get("joulie.io/workload-class") != cls:
        fail.append("%s: class %s, want %s" % (jid, a.get("joulie.io/workload-class"), cls))
    if int(req["cpu"]) != max(1, math.ceil(float(r["podTemplate"]["requests"]["cpu"]))):
        fail.append("%s: pod requests cpu %s for %s" % (jid, req["cpu"], r["podTemplate"]["requests"]["cpu"]))
    g = r["podTemplate"]["requests"].get("nvidia.com/gpu", "0")
    if req.get("nvidia.com/gpu", "0") != g or (g != "0" and p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] != g):
        fail.append("%s: pod GPUs %s for %s" % (jid, req.get("nvidia.com/gpu"), g))
    aff = json.dumps(p["spec"].get("affinity", {}))
    perf_aff = '"key": "joulie.io/power-profile", "operator": "NotIn", "values": ["eco"]' in aff
    if perf_aff != (cls == "performance"):
        fail.append("%s (%s): affinity %s" % (jid, cls, aff))
    if not any(t.get("key") == "kwok.x-k8s.io/node" for t in p["spec"].get("tolerations", [])):
        fail.append("%s: no KWOK toleration" % jid)
    if not any(o["kind"] == "Job" for o in p["metadata"].get("ownerReferences", [])):
        fail.append("%s: pod not owned by a Job" % jid)
    j = jobs[jid]
    if jid == "too-many-gpus":
        cond = [c for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"]
        if p["status"]["phase"] != "Pending" or not cond or cond[0]["reason"] != "Unschedulable" or "Insufficient nvidia.com/gpu" not in cond[0].get("message", ""):
            fail.append("too-many-gpus pod: %s %s" % (p["status"]["phase"], cond))
        continue
    if p["status"]["phase"] != "Succeeded" or p["metadata"]["annotations"].get("sim.joulie.io/complete") != "true":
        fail.append("%s: pod %s, complete=%s" % (jid, p["status"]["phase"], a.get("sim.joulie.io/complete")))
    if j["state"] != "completed" or j["node"] != p["spec"].get("nodeName"):
        fail.append("%s: %s on %s, its pod was bound to %s" % (jid, j["state"], j["node"], p["spec"].get("nodeName")))
    if len(j["cpus"]) != int(req["cpu"]) or len(j["gpus"]) != int(g):
        fail.append("%s holds %d CPUs %d GPUs" % (jid, len(j["cpus"]), len(j["gpus"])))
    if j["work"]["cpuUnitsDone"] < j["work"]["cpuUnits"] - 1e-6 or j["work"]["gpuUnitsDone"] < j["work"]["gpuUnits"] - 1e-6:
        fail.append("%s completed with work left: %s" % (jid, j["work"]))
if set(by_job) != set(want):
    fail.append("pods for %s, trace jobs %s" % (sorted(by_job), sorted(want)))
# no CPU or GPU held by two jobs at once
jl = list(jobs.values())
for a in jl:
    for b in jl:
        if a["jobId"] < b["jobId"] and a["node"] and a["node"] == b["node"] and a["startSec"] < b["endSec"] and b["startSec"] < a["endSec"]:
            if set(a["cpus"]) & set(b["cpus"]) or set(a["gpus"]) & set(b["gpus"]):
                fail.append("%s and %s share CPUs or GPUs" % (a["jobId"], b["jobId"]))
# per node: the jobs' energies plus idle are the counters' delta, to the microjoule
for n in s["nodes"]:
    tot = sum(sum(j["energyMicrojoules"].values()) for j in jl if j["node"] == n["node"])
    if tot + n["idleMicrojoules"] != n["counterDeltaMicrojoules"]:
        fail.append("%s: jobs %d + idle %d != counters %d" % (n["node"], tot, n["idleMicrojoules"], n["counterDeltaMicrojoules"]))
c = s["energyJoules"]
if abs(c["standard"] + c["performance"] + c["idle"] - c["nodes"]) > 1e-3:
    fail.append("classes do not add up: %s" % c)
used = sorted({j["node"] for j in jl if j["node"]})
print("run A: %d Jobs (%d of them groups of %s jobs)" % (len(groups), len(many), [len(g) for g in many]))
print("run A: %d jobs completed on %s, makespan %.0f s, energy %.0f J (idle %.0f J)" % (s["jobs"]["completed"], used, s["makespanSec"], c["nodes"], c["idle"]))
print("\n".join(fail))
sys.exit(1 if fail else 0)
PY
grep -qx 'joulie_sim_run_placement_info{placement="kubernetes"} 1' "$tmp/metrics.txt" && ok ||
    bad "metrics: $(grep placement "$tmp/metrics.txt")"
grep -q "kubernetes: run $ra: each job becomes a batch/v1 Job" "$tmp/serve.err" && ok || bad "start line: $(cat "$tmp/serve.err")"

# --- B. an eco label keeps later performance pods off the node ------------------------------
k label node cpu-0 joulie.io/power-profile=eco >/dev/null || bad "kubectl label failed"
eco() { curl -s "$url/nodes/cpu-0/labels" | grep -q '"joulie.io/power-profile":[ ]*"eco"'; }
until_ok 20 eco && ok || bad "the label did not reach the engine: $(curl -s "$url/nodes/cpu-0/labels")"
"$py" - >"$tmp/trace-b.jsonl" <<'PY'
import json
for i in range(10):
    for cls in ("performance", "standard"):
        print(json.dumps({"type": "job", "jobId": "%s-%02d" % (cls, i), "submitTimeOffsetSec": 0.5 * i,
                          "intentClass": cls, "podTemplate": {"requests": {"cpu": "8", "memory": "1Gi"}},
                          "work": {"cpuUnits": 160}}))
PY
rb=$(run_start "$tmp/trace-b.jsonl") && rb=$(run_wait "$rb") && ok || bad "run B did not end"
"$py" - "$tmp/r/runs/$rb" <<'PY' && ok || bad "run B: performance jobs and the eco node (above)"
import json, sys
jobs = [json.loads(l) for l in open(sys.argv[1] + "/jobs.jsonl")]
perf_on = [j["jobId"] for j in jobs if j["class"] == "performance" and j["node"] == "cpu-0"]
std_on = [j["jobId"] for j in jobs if j["class"] == "standard" and j["node"] == "cpu-0"]
done = sum(j["state"] == "completed" for j in jobs)
print("run B: %d of %d completed; on cpu-0: performance %s, standard %s" % (done, len(jobs), perf_on, std_on))
sys.exit(0 if done == len(jobs) == 20 and not perf_on and std_on else 1)
PY

# --- C. a run suspended by a stop resumes through the scheduler ----------------------------
# Its Jobs keep their names (a creation answers 409), the watch's first list gives the bindings
# back (also of jobs waiting when the engine stopped), and pods of jobs that were running at the
# stop are completed when their work is done after the restart.
k label node cpu-0 joulie.io/power-profile- >/dev/null
rc=$(run_start "$tmp/trace.jsonl") || bad "run C not started"
sleep 3
kill $pid && wait $pid
pid=
serve_start "$url" "$tmp/serve.err" --spec "$tmp/spec.yaml" --root "$tmp/r" --addr 127.0.0.1:$port \
    --speed 10 --kubeconfig "$KUBECONFIG" || { bad "serve did not come up again: $(cat "$tmp/serve.err")"; finish; }
grep -q "run $rc resumes at" "$tmp/serve.err" && ok || bad "run C did not resume: $(tail -5 "$tmp/serve.err")"
run_wait "$rc" >/dev/null && ok || bad "run C did not end after its resume"
succeeded_c() {
    [ "$(k get pods -l sim.joulie.io/run=$rc --field-selector=status.phase=Succeeded -o name | wc -l)" = 36 ]
}
until_ok 60 succeeded_c && ok || bad "run C: not every pod Succeeded: $(k get pods -l sim.joulie.io/run=$rc --no-headers 2>&1 | awk '{print $3}' | sort | uniq -c)"
nj=$(k get jobs -l sim.joulie.io/run=$rc -o jsonpath='{range .items[*]}{.spec.completions}{"\n"}{end}' | awk '{n++; c += $1} END {print n, c}')
[ "$nj" = "$(k get jobs -l sim.joulie.io/run=$ra -o name | wc -l) 36" ] && ok || bad "run C: Jobs and completions $nj, want run A's"
"$py" - "$tmp/r/runs/$rc" <<'PY' && ok || bad "run C after its resume (above)"
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
jobs = [json.loads(l) for l in open(d + "/jobs.jsonl")]
fail = []
if s["placement"] != "kubernetes" or s["jobs"]["completed"] != 36 or s["jobs"]["stalled"] != 1 or len(jobs) != 37:
    fail.append("%s %s, %d lines" % (s["placement"], s["jobs"], len(jobs)))
if [r["after"] for r in s.get("resumes", [])] != ["suspend"]:
    fail.append("resumes: %s" % s.get("resumes"))
for n in s["nodes"]:
    tot = sum(sum(j["energyMicrojoules"].values()) for j in jobs if j["node"] == n["node"])
    if tot + n["idleMicrojoules"] + n["resumeGapMicrojoules"] != n["counterDeltaMicrojoules"]:
        fail.append("%s: jobs %d + idle %d != counters %d" % (n["node"], tot, n["idleMicrojoules"], n["counterDeltaMicrojoules"]))
print("run C: resumed at %s s, %d completed" % ([r["fromSec"] for r in s.get("resumes", [])], s["jobs"]["completed"]))
print("\n".join(fail))
sys.exit(1 if fail else 0)
PY
kill $pid && wait $pid
pid=
finish
