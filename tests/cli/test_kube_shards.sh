#!/usr/bin/env bash
# One run through the real scheduler on three shards equals the run on one engine
# (docs/kubernetes.md "Sharding"), against the test control plane (tests/kube/control_plane.sh:
# etcd, kube-apiserver 1.34.2, scheduler, controller-manager, KWOK with the chart's Stages).
# A 12-node mixed spec (7 Intel, 2 8-GPU H100, 2 AMD, 1 4-GPU H100) laid out so that shard 0 has
# no GPU node (the spec's k-th node is shard k mod 3's: shard 0 gets intel-0, -3, -6 and amd-0),
# and a generated trace (hwemu trace generate: 24 workloads, 36 jobs, GPU jobs and gangs among
# them, about 90 s of emulated time) plus a job asking for 16 GPUs (more than any node has):
#   U. one unsharded engine runs it through the scheduler at --speed 10 (every job but the
#      16-GPU one completed, as tests/cli/test_kube_runs.sh checks in depth);
#   S. three engines (--shard 0/3, 1/3, 2/3) on the same spec are each POSTed the same trace:
#      they answer the same run key (the default: a hash of the trace, spec and work rate), make
#      each Job once (the others' creations answer 409), each job completes on the one shard
#      whose node its pod was bound to (its line says that shard and "kubernetes"; its completed
#      event is only in that shard's otlp/logs.jsonl), every other shard's line says
#      "elsewhere"; shard 0 (no GPU node) stalls no GPU job (they are elsewhere), while the
#      16-GPU job is stalled on every shard (judged against the whole spec); every pod of the
#      run Succeeded;
#   M. `hwemu runs merge` makes the three run directories one: the same completed job ids as U,
#      one line a job, its course.jsonl the shards' summed on their times (recomputed from the
#      shards' files) and drawn by `hwemu report`, each node once, per node the jobs' energies plus idle equal its
#      counters' increase, and the cluster's energy equals U's within the tolerance computed
#      and explained below (part E); merging two of the three, or mixing in U's run, is refused;
#   R. the trace again under a key given (POST /runs?key=), shard 1 stopped in the middle and
#      started again: its run resumes under the key and the merge has U's completed jobs.
# Exit 77 (skipped) when the control plane is not built: the test says what to run.
# Usage: test_kube_shards.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kube/control_plane.sh"
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
kube_need "$tmp"
kube_start "$tmp/kube" || { bad "the control plane did not start (above)"; finish; }
k() { "$kubectl" "$@"; }

cat >"$tmp/spec.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: kubeshards}
spec:
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 7}
  - {name: h100, profile: nvidia-h100-sxm-8gpu, count: 2}
  - {name: amd, profile: amd-epyc-2s-hsmp, count: 2}
  - {name: h4, profile: nvidia-h100-sxm-4gpu, count: 1}
EOF
for i in 0 1 2; do
    "$hwemu" clusterspec list --spec "$tmp/spec.yaml" --shard $i/3 | awk '{print $1}' >"$tmp/nodes$i"
done
[ "$(tr '\n' ' ' <"$tmp/nodes0")" = "intel-0 intel-3 intel-6 amd-0 " ] && ok ||
    bad "shard 0 is not the GPU-less slice this test needs: $(cat "$tmp/nodes0")"
"$hwemu" trace generate --jobs 24 --seed 5 --time-scale 120 --out "$tmp/trace.jsonl" 2>/dev/null ||
    { bad "trace generate failed"; finish; }
echo '{"type":"job","schemaVersion":"v2","jobId":"too-many-gpus","submitTimeOffsetSec":1,"podTemplate":{"requests":{"cpu":"2","nvidia.com/gpu":"16"}},"work":{"cpuUnits":10,"gpuUnits":10}}' \
    >>"$tmp/trace.jsonl"
njobs=$(grep -c '"type": *"job"' "$tmp/trace.jsonl")

# engine NAME ARGS...: hwemu serve on a free port at --speed 10 with the cluster, a course line
# every 10 s of emulated time (several for the merged course.jsonl); URL in url_NAME
engine() {
    local name=$1 port
    shift
    port=$(free_port)
    eval "url_$name=http://127.0.0.1:$port"
    SIM_RUN_COURSE_INTERVAL=10s serve_start "http://127.0.0.1:$port" "$tmp/$name.err" --spec "$tmp/spec.yaml" --root "$tmp/$name" \
        --addr 127.0.0.1:$port --speed 10 --kubeconfig "$KUBECONFIG" "$@" || return 1
    pids+=($pid)
    eval "pid_$name=$pid"
}
ready() {
    k get nodes -l sim.joulie.io/cluster=kubeshards -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{.spec.taints[*].key}{"\n"}{end}' >"$tmp/ready.txt" &&
        [ "$(grep -c '^True' "$tmp/ready.txt")" = 12 ] && ! grep -q node.kubernetes.io "$tmp/ready.txt"
}
# run_wait URL ID: waits (up to 600 s: a loaded machine steps the nodes late) for the run to end
run_wait() {
    local st
    for _ in $(seq 1200); do
        st=$(curl -s "$1/runs/$2" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["state"])')
        [ "$st" != running ] && return 0
        sleep 0.5
    done
    echo "run $2 at $1 still running after 600 s: $(curl -s "$1/runs/$2")" >&2
    return 1
}
# succeeded LABEL N: N pods labelled sim.joulie.io/run=LABEL are Succeeded
succeeded() {
    [ "$(k get pods -A -l sim.joulie.io/run=$1 --field-selector=status.phase=Succeeded -o name | wc -l)" = "$2" ]
}

# --- U. one engine ---------------------------------------------------------------------------
engine u || { bad "serve did not come up: $(cat "$tmp/u.err")"; finish; }
until_ok 120 ready && ok || bad "12 Nodes not Ready and schedulable in 120 s: $(k get nodes -o wide 2>&1)"
ru=$(curl -s -X POST --data-binary @"$tmp/trace.jsonl" "$url_u/runs" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["runId"])') ||
    { bad "run U not started"; finish; }
run_wait "$url_u" "$ru" && ok || { bad "run U did not end: $(tail -5 "$tmp/u.err")"; finish; }
until_ok 90 succeeded "$ru" $((njobs - 1)) && ok || bad "run U: not every pod Succeeded"
kill $pid_u && wait $pid_u
du=$tmp/u/runs/$ru

# --- S. three shards, the same trace POSTed to each ------------------------------------------
for i in 0 1 2; do
    engine s$i --shard $i/3 || { bad "shard $i did not come up: $(cat "$tmp/s$i.err")"; finish; }
done
grep -q "runs use the standalone placement" "$tmp"/s*.err && bad "a shard says it places runs itself" || ok
# a run key must be a label value: refused before anything starts
code=$(curl -s -o "$tmp/badkey.json" -w '%{http_code}' -X POST --data-binary @"$tmp/trace.jsonl" "$url_s0/runs?key=-no-")
[ "$code" = 400 ] && grep -q 'is not a run key' "$tmp/badkey.json" && ok || bad "?key=-no- answered $code: $(cat "$tmp/badkey.json")"
keys=
for i in 0 1 2; do
    eval "u=\$url_s$i"
    curl -s -X POST --data-binary @"$tmp/trace.jsonl" "$u/runs" >"$tmp/post$i.json"
    eval "rs$i=\$($py -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"runId\"])' $tmp/post$i.json)"
    keys="$keys $($py -c 'import json,sys; print(json.load(open(sys.argv[1])).get("runKey"))' "$tmp/post$i.json")"
done
key=$(echo $keys | awk '{print $1}')
[ "$(echo $keys | tr ' ' '\n' | sort -u | wc -l)" = 1 ] && [[ $key == t-* ]] && ok ||
    bad "the shards answered run keys $keys: $(cat "$tmp"/post*.json)"
for i in 0 1 2; do
    eval "u=\$url_s$i r=\$rs$i"
    run_wait "$u" "$r" && ok || { bad "shard $i's run did not end: $(tail -5 "$tmp/s$i.err")"; finish; }
done
# every shard asked for every Job; all but the first were answered 409, taken as made (said nowhere)
grep -h 'kubernetes:.*Job.*409' "$tmp"/s*.err && bad "a shard took a 409 for a failure (above)" || ok
until_ok 90 succeeded "$key" $((njobs - 1)) && ok ||
    bad "run S: not every pod Succeeded: $(k get pods -A -l sim.joulie.io/run=$key --no-headers 2>&1 | awk '{print $4}' | sort | uniq -c)"
# one Job a group (the stalled one's taken away): as many as run U made
nu=$(k get jobs -A -l sim.joulie.io/run=$ru -o name | wc -l)
ns=$(k get jobs -A -l sim.joulie.io/run=$key -o name | wc -l)
[ "$nu" = "$ns" ] && [ "$nu" -gt 0 ] && ok || bad "run S made $ns Jobs, run U $nu"
k get pods -A -l sim.joulie.io/run=$key -o json >"$tmp/pods-s.json"
for i in 0 1 2; do
    eval "d$i=\$tmp/s$i/runs/\$rs$i"
    eval "u=\$url_s$i"
    curl -s "$u/metrics" | grep -qx 'joulie_sim_run_placement_info{placement="kubernetes"} 1' && ok ||
        bad "shard $i does not say kubernetes placement"
done
# each node's power at rest (no job: the runs have ended and given the nodes back their load),
# for part E: the counters' power (packages, DRAM, GPUs) as the shards' /debug/nodes say it
sleep 3
for i in 0 1 2; do
    eval "u=\$url_s$i"
    curl -s "$u/debug/nodes"
    echo
done >"$tmp/rest.jsonl"

"$py" - "$tmp" "$d0" "$d1" "$d2" "$key" <<'PY' && ok || bad "the shards' runs (above)"
import json, sys
tmp, dirs, key = sys.argv[1], sys.argv[2:5], sys.argv[5]
nodes = [open("%s/nodes%d" % (tmp, i)).read().split() for i in range(3)]
shard_of = {n: i for i in range(3) for n in nodes[i]}
trace = [r for r in map(json.loads, open(tmp + "/trace.jsonl")) if r["type"] == "job"]
gpu = {r["jobId"] for r in trace if r.get("podTemplate", {}).get("requests", {}).get("nvidia.com/gpu", "0") != "0"}
pods = json.load(open(tmp + "/pods-s.json"))["items"]
def job_of(p):
    a = p["metadata"]["annotations"]
    return json.loads(a["sim.joulie.io/jobIds"])[int(a.get("batch.kubernetes.io/job-completion-index", "0"))]
bound = {job_of(p): p["spec"].get("nodeName") for p in pods}
fail = []
done_on = {}
for i, d in enumerate(dirs):
    s = json.load(open(d + "/summary.json"))
    if s.get("runKey") != key or s.get("shard") != "%d/3" % i or s.get("placement") != "kubernetes":
        fail.append("shard %d summary: key %s shard %s placement %s" % (i, s.get("runKey"), s.get("shard"), s.get("placement")))
    if sorted(n["node"] for n in s["nodes"]) != sorted(nodes[i]):
        fail.append("shard %d summary nodes %s" % (i, [n["node"] for n in s["nodes"]]))
    lines = [json.loads(l) for l in open(d + "/jobs.jsonl")]
    if len(lines) != len(trace) or len({l["jobId"] for l in lines}) != len(trace):
        fail.append("shard %d: %d lines for %d jobs" % (i, len(lines), len(trace)))
    for l in lines:
        if l.get("shard") != "%d/3" % i or l.get("placement") != "kubernetes":
            fail.append("shard %d line %s: shard %s placement %s" % (i, l["jobId"], l.get("shard"), l.get("placement")))
        if l["state"] == "completed":
            done_on.setdefault(l["jobId"], []).append(i)
            if shard_of.get(l["node"]) != i or bound.get(l["jobId"]) != l["node"]:
                fail.append("%s completed on shard %d on %s, its pod bound to %s" % (l["jobId"], i, l["node"], bound.get(l["jobId"])))
        elif l["state"] == "elsewhere":
            if shard_of.get(bound.get(l["jobId"])) == i:
                fail.append("%s elsewhere on shard %d, but bound to its node %s" % (l["jobId"], i, bound.get(l["jobId"])))
        elif l["state"] == "stalled":
            if l["jobId"] != "too-many-gpus":
                fail.append("%s stalled on shard %d: %s" % (l["jobId"], i, l.get("stallReason")))
        else:
            fail.append("%s %s on shard %d" % (l["jobId"], l["state"], i))
    if i == 0:
        e = [l["jobId"] for l in lines if l["jobId"] in gpu and l["jobId"] != "too-many-gpus" and l["state"] != "elsewhere"]
        if e:
            fail.append("shard 0 (no GPU node) did not leave its GPU jobs elsewhere: %s" % e)
    # the completed events: only the shard that ran the job says them
    for x in map(json.loads, open(d + "/otlp/logs.jsonl")):
        r = x["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
        if r["eventName"] == "joulie.sim.job.completed":
            jid = next(a["value"]["stringValue"] for a in r["attributes"] if a["key"] == "jobId")
            if not any(jid == l["jobId"] and l["state"] == "completed" for l in lines):
                fail.append("shard %d says %s completed, its line does not" % (i, jid))
twice = {j: s for j, s in done_on.items() if len(s) != 1}
if twice:
    fail.append("jobs completed on several shards: %s" % twice)
if set(done_on) != {r["jobId"] for r in trace} - {"too-many-gpus"}:
    fail.append("completed on some shard: %d of %d" % (len(done_on), len(trace) - 1))
print("run S: jobs completed per shard %s" % [sum(1 for s in done_on.values() if s == [i]) for i in range(3)])
print("\n".join(fail))
sys.exit(1 if fail else 0)
PY

# --- M. the merge ------------------------------------------------------------------------------
"$hwemu" runs merge --out "$tmp/merged" "$d2" "$d0" "$d1" 2>"$tmp/merge.err" && ok ||
    bad "runs merge failed: $(cat "$tmp/merge.err")"
grep -q "run key $key, 3 shards: $njobs jobs ($((njobs - 1)) completed:" "$tmp/merge.err" && ok || bad "merge said: $(cat "$tmp/merge.err")"
# the merged course.jsonl, recomputed here from the shards' own course.jsonl and the merged jobs.jsonl
# (docs/runs.md "Merging the shards' runs"): a line at each multiple of the interval a shard's line
# was written for and at each shard's end; per shard its line at or before it (its power only up to its end); jobs by state from the jobs' times; the last line
# the merged summary.json's energies and counts
"$py" - "$tmp/merged" "$d0" "$d1" "$d2" <<'PY' && ok || bad "the merged course.jsonl (above)"
import json, sys
m, shards = sys.argv[1], sys.argv[2:]
lines = lambda p: [json.loads(l) for l in open(p)]
course = lines(m + "/course.jsonl")
jobs = lines(m + "/jobs.jsonl")
summary = json.load(open(m + "/summary.json"))
sc = [lines(d + "/course.jsonl") for d in shards]
ns = lambda x: round(x * 1e9)
iv = {json.load(open(d + "/summary.json")).get("courseIntervalSec") for d in shards}
I = ns(iv.pop()) if len(iv) == 1 and None not in iv else 0
# a line before a shard's last counts at the multiple of the interval it was written for (its
# first tick at or after it), the last at its own time
for c in sc:
    for k, l in enumerate(c):
        l["timeSec"] = (ns(l["timeSec"]) // I * I) / 1e9 if I and k + 1 < len(c) else l["timeSec"]
if not I:
    fail_early = "the shards' summary.json say no one courseIntervalSec: %s" % iv
times = sorted({ns(l["timeSec"]) for c in sc for l in c})
fail = [fail_early] if not I else []
if [ns(l["timeSec"]) for l in course] != times:
    fail.append("merged times %s, the shards' %s" % ([l["timeSec"] for l in course][:8], [t / 1e9 for t in times][:8]))
done = [ns(j["endSec"]) for j in jobs if j["state"] == "completed"]
for l in course:
    t = ns(l["timeSec"])
    held = [[x for x in c if ns(x["timeSec"]) <= t] for c in sc]
    power = sum(h[-1]["powerWatts"] for h, c in zip(held, sc) if h and t <= ns(c[-1]["timeSec"]))
    energy = sum(h[-1]["energyJoules"]["nodes"] for h in held if h)
    if abs(l["powerWatts"] - power) > 1e-6 * max(1, power) or abs(l["energyJoules"]["nodes"] - energy) > 1e-6 * max(1, energy):
        fail.append("at %s s: power %s energy %s, the shards' %s %s" % (l["timeSec"], l["powerWatts"], l["energyJoules"]["nodes"], power, energy))
    if l["jobs"]["completed"] != sum(1 for e in done if e <= t) or "elsewhere" in l["jobs"]:
        fail.append("at %s s: jobs %s, %d ended by then" % (l["timeSec"], l["jobs"], sum(1 for e in done if e <= t)))
last = course[-1]
for k in ("standard", "performance", "idle", "nodes"):
    if last["energyJoules"][k] != summary["energyJoules"][k]:
        fail.append("last line %s %s, summary.json %s" % (k, last["energyJoules"][k], summary["energyJoules"][k]))
if last["jobs"]["completed"] != summary["jobs"]["completed"] or last["jobs"]["stalled"] != summary["jobs"]["stalled"]:
    fail.append("last line jobs %s, summary.json %s" % (last["jobs"], summary["jobs"]))
print("merged course: %d lines from %s" % (len(course), [len(c) for c in sc]))
print("\n".join(fail))
sys.exit(1 if fail else 0)
PY
if command -v chromium >/dev/null; then # hwemu report draws the merged run's course
    "$hwemu" report "$tmp/merged" --out "$tmp/merged.html" 2>/dev/null && ok || bad "hwemu report of the merged run"
    timeout 120 chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=10000 --dump-dom "file://$tmp/merged.html" \
        2>/dev/null | "$py" -c '
import html, json, re, sys
d = json.loads(html.unescape(re.search(r"<pre id=\"drawn\">(.*?)</pre>", sys.stdin.read(), re.S).group(1)))
c = {x["title"]: x["seriesPixels"] for x in d["charts"]}
sys.exit(0 if c.get("Cluster power over time", [0])[0] > 0 and c.get("Cumulative energy over time", [0])[0] > 0 else 1)' &&
        ok || bad "the merged run's report did not draw its course"
fi
out=$("$hwemu" runs merge --out "$tmp/m2" "$d0" "$d1" 2>&1) && bad "a merge of 2 of 3 shards went through" ||
    { grep -q "missing: shard 2/3" <<<"$out" && ok || bad "2 of 3: $out"; }
out=$("$hwemu" runs merge --out "$tmp/m3" "$d0" "$d1" "$du" 2>&1) && bad "a merge with run U went through" ||
    { grep -q "is not a shard's run" <<<"$out" && ok || bad "with run U: $out"; }

# --- E. the merged run against run U -------------------------------------------------------------
"$py" - "$tmp/merged" "$du" "$tmp/rest.jsonl" <<'PY' && ok || bad "the merged run against the unsharded one (above)"
import json, sys
m, u = sys.argv[1], sys.argv[2]
sm, su = json.load(open(m + "/summary.json")), json.load(open(u + "/summary.json"))
jm = [json.loads(l) for l in open(m + "/jobs.jsonl")]
ju = [json.loads(l) for l in open(u + "/jobs.jsonl")]
fail = []
done_m = {j["jobId"] for j in jm if j["state"] == "completed"}
done_u = {j["jobId"] for j in ju if j["state"] == "completed"}
if done_m != done_u:
    fail.append("completed: merged only %s, unsharded only %s" % (sorted(done_m - done_u), sorted(done_u - done_m)))
if len(jm) != len(ju) or len({j["jobId"] for j in jm}) != len(jm):
    fail.append("merged jobs.jsonl has %d lines for %d jobs" % (len(jm), len(ju)))
names = [n["node"] for n in sm["nodes"]]
if names != [n["node"] for n in su["nodes"]]:
    fail.append("merged nodes %s, unsharded %s (the spec's order)" % (names, [n["node"] for n in su["nodes"]]))
for n in sm["nodes"]: # the merge keeps each shard's split whole
    tot = sum(sum(j["energyMicrojoules"].values()) for j in jm if j["node"] == n["node"])
    if tot + n["idleMicrojoules"] + n["resumeGapMicrojoules"] != n["counterDeltaMicrojoules"]:
        fail.append("%s: jobs %d + idle %d != counters %d" % (n["node"], tot, n["idleMicrojoules"], n["counterDeltaMicrojoules"]))
if sm["jobs"]["completed"] != len(done_u) or sm["jobs"]["stalled"] != 1:
    fail.append("merged summary jobs %s" % sm["jobs"])

# The cluster's energy E: the sum over the nodes of their counters' increase over the run, i.e.
#   E = sum over nodes of (its power at rest x the run's time) + what the jobs add to it.
# The two setups run the same jobs on the same Nodes; two things make E differ:
# 1. Time (measured, and taken out). Each shard's run lasts until every pod of the run has
#    finished (docs/kubernetes.md "Sharding"), so its nodes are counted over the whole run, but
#    at --speed 10 a run's length in emulated seconds follows when its ticks came and when the
#    watch showed each binding: three engines on this shared machine tick later than one, so
#    the sharded run's jobs start later (makespan and times printed below; several seconds).
#    The energy of that is, per shard, its nodes' power at rest (packages, DRAM and GPUs with
#    no job, read from the shards' /debug/nodes after the runs) times (its time - run U's):
#    time_term, signed. It is most of the difference (run on 2026-12-02: 19.8 kJ of 20.8 kJ).
# 2. Placement (the tolerance). The scheduler binds pods as Nodes free up, and the shards free
#    them at other moments than one engine, so a job may run on another node (of another pool:
#    Intel or AMD, the 8-GPU or the 4-GPU H100 node) and beside other jobs; the same work then
#    draws another energy (a profile's power per busy CPU or GPU differs; a package's and a GPU
#    node's power is shared between the jobs on it, run_energy.c). What that changes of E is
#    what the jobs drew differently, so it is at most the sum over the jobs of |the job's energy
#    in the sharded run - in run U| (each run splits its nodes' energy exactly between jobs and
#    idle, checked above), plus what goes to idle instead: after a job starts or ends, its
#    package's frequency and its GPUs' power move to their new targets over the next ticks
#    (physics_cpu.c, physics_gpu.c), and which run's split gives that to the job or to idle
#    depends on where in its tick the job ended, so one tick (1 s) of each job's mean power.
#    Tolerance = the sum of both. Measured on 2026-12-02 (E about 350 kJ): what was left after
#    the time term was 0.9 kJ with the jobs' differences at 11.6 kJ (8 of 36 jobs on another
#    pool), 1.8 kJ with them at 3.0 kJ (4 moved), and 3.5 kJ with them at 5.1 kJ (3 moved) plus
#    12.6 kJ of ticks: 17.7 kJ, 5.0 % of E. The jobs' differences alone came within 60 % of what
#    was left, hence the ticks' part.
# Checked: |E_merged - time_term - E_U| <= tolerance. A shard's nodes missing from the merge or
# counted twice would move E by a third of it (about 115 kJ here), far past it.
rest = {}
for l in open(sys.argv[3]):
    if l.strip():
        for n in json.loads(l)["nodes"]:
            rest[n["node"]] = n.get("cpuWatts", 0) + n.get("dramWatts", 0) + n.get("gpuWatts", 0)
def pool_of(n):
    return n.rsplit("-", 1)[0] if n else None
def energy(j): return sum(j["energyMicrojoules"].values()) / 1e6
time_term = 0
for sh in sm["shards"]:
    d = json.load(open(sh["runDir"] + "/summary.json"))
    time_term += sum(rest[n["node"]] for n in d["nodes"]) * (d["timeSec"] - su["timeSec"])
um = {j["jobId"]: j for j in ju}
def power(j): return energy(j) / max(j["endSec"] - j["startSec"], 1.0)
moves = sum(abs(energy(j) - energy(um[j["jobId"]])) for j in jm if j["state"] == "completed")
ramps = sum(max(power(j), power(um[j["jobId"]])) * 1.0 for j in jm if j["state"] == "completed")
tol = moves + ramps
moved = sum(1 for j in jm if j["state"] == "completed" and pool_of(j["node"]) != pool_of(um[j["jobId"]]["node"]))
em, eu = sm["energyJoules"]["nodes"], su["energyJoules"]["nodes"]
resid = em - time_term - eu
print("cluster energy: merged %.0f J, unsharded %.0f J, difference %.0f J (%.2f %%); time term %.0f J; "
      "what is left %.0f J (%.2f %%), tolerance %.0f J (%.2f %%) = jobs' differences %.0f J (%d of %d on another "
      "pool) + a tick of each job's power %.0f J" % (em, eu, em - eu, 100 * (em - eu) / eu, time_term, resid,
      100 * resid / eu, tol, 100 * tol / eu, moves, moved, len(done_m), ramps))
print("time: shards %s s, unsharded %.1f s; makespan %.1f / %.1f s; rest power %.0f W" %
      ([sh["timeSec"] for sh in sm["shards"]], su["timeSec"], sm["makespanSec"], su["makespanSec"], sum(rest.values())))
if len(rest) != 12:
    fail.append("rest power of %d nodes: %s" % (len(rest), rest))
if abs(resid) > tol:
    fail.append("the cluster's energy differs by %.0f J beyond the time term, more than the tolerance %.0f J" % (resid, tol))
print("\n".join(fail))
sys.exit(1 if fail else 0)
PY

# --- R. a shard stopped in the middle of a run resumes it with its run key -----------------------
# The same trace again, under a key given (run S's Jobs keep theirs); shard 1 is stopped 3 s in
# (its run suspended, state.json keeps the key) and started again on its root: it goes on under
# the same key, finds the pods the others finished meanwhile (its first list), and the merge is
# whole again.
for i in 0 1 2; do
    eval "u=\$url_s$i"
    curl -s -X POST --data-binary @"$tmp/trace.jsonl" "$u/runs?key=resume-check" >"$tmp/postr$i.json"
    eval "rr$i=\$($py -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"runId\"])' $tmp/postr$i.json)"
done
grep -q '"runKey":"resume-check"' "$tmp/postr1.json" && ok || bad "POST ?key=resume-check: $(cat "$tmp/postr1.json")"
sleep 3
kill $pid_s1 && wait $pid_s1
grep -q "run $rr1 suspended" "$tmp/s1.err" && ok || bad "shard 1's run was not suspended: $(tail -3 "$tmp/s1.err")"
engine s1 --shard 1/3 || { bad "shard 1 did not come up again: $(tail -5 "$tmp/s1.err")"; finish; }
grep -q "run $rr1 resumes at" "$tmp/s1.err" && ok || bad "shard 1's run did not resume: $(tail -5 "$tmp/s1.err")"
for i in 0 1 2; do
    eval "u=\$url_s$i r=\$rr$i"
    run_wait "$u" "$r" && ok || { bad "shard $i's run R did not end: $(tail -5 "$tmp/s$i.err")"; finish; }
done
until_ok 90 succeeded resume-check $((njobs - 1)) && ok ||
    bad "run R: not every pod Succeeded: $(k get pods -A -l sim.joulie.io/run=resume-check --no-headers 2>&1 | awk '{print $4}' | sort | uniq -c)"
"$hwemu" runs merge --out "$tmp/merged-r" "$tmp/s0/runs/$rr0" "$tmp/s1/runs/$rr1" "$tmp/s2/runs/$rr2" 2>"$tmp/merge-r.err" &&
    ok || bad "runs merge of run R failed: $(cat "$tmp/merge-r.err")"
"$py" - "$tmp/merged-r" "$du" <<'PY' && ok || bad "run R merged (above)"
import json, sys
sm = json.load(open(sys.argv[1] + "/summary.json"))
done = {j["jobId"] for j in map(json.loads, open(sys.argv[1] + "/jobs.jsonl")) if j["state"] == "completed"}
want = {j["jobId"] for j in map(json.loads, open(sys.argv[2] + "/jobs.jsonl")) if j["state"] == "completed"}
resumes = [sh.get("resumes") for sh in sm["shards"]]
print("run R: %d completed, key %s, resumes per shard %s" % (len(done), sm["runKey"], [len(r or []) for r in resumes]))
ok = done == want and sm["runKey"] == "resume-check" and [len(r or []) for r in resumes] == [0, 1, 0] \
    and resumes[1][0]["after"] == "suspend"
sys.exit(0 if ok else 1)
PY
for i in 0 1 2; do eval "kill \$pid_s$i && wait \$pid_s$i"; done
pids=()
finish
