#!/usr/bin/env bash
# Workload runs (docs/runs.md): the trace corpus's errors, the generator's reproducibility, and
# runs on a small cluster at --speed max: every job completes on CPUs and GPUs of its own, a run
# repeats bit for bit (again, --batch 1, other batches, under load), the
# per-job energies plus idle equal each node's counter deltas (and the counters agree with the
# nodes' energy_uj files), a node with jobs draws more than idle ones, a RAPL cap written through
# the shim slows CPU-bound sensitive jobs and lowers the energy, gangs that cannot run whole
# stall, the run API's answers and errors, the run's OTLP files (decoded by the receiver of
# tests/otlp, the official OTLP definitions) and a restart in the middle of a run. Expected values: docs/runs.md and the trace
# files written here; the energy files are read with `hwemu cat` (the shim's reader).
# Usage: test_runs.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$(realpath "$1")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
rpid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$rpid" ] && kill "$rpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
spec=tests/runs/cluster.yaml
one=tests/runs/one.yaml
shim="$(dirname "$hwemu")/libhwemu-shim.so"

# --- A. the corpus of bad traces: exit 1 and each expected line -----------------------------
for t in tests/corpus/traces/*.jsonl; do
    name=$(basename "$t" .jsonl)
    err=$(cd tests/corpus/traces && "$hwemu" trace validate "$name.jsonl" 2>&1 >/dev/null); rc=$?
    okc=1
    [ $rc -eq 1 ] || { bad "corpus $name: exit $rc, expected 1"; okc=0; }
    while IFS= read -r want; do
        [ -n "$want" ] && ! grep -qF -- "$want" <<<"$err" && { bad "corpus $name: missing: $want (got: $err)"; okc=0; }
    done <"tests/corpus/traces/$name.expect"
    grep -q -e AddressSanitizer -e 'runtime error' <<<"$err" && { bad "corpus $name: sanitizer report"; okc=0; }
    [ $okc = 1 ] && ok
done

# --- B. a bad trace starts nothing ---------------------------------------------------------
err=$("$hwemu" run --spec "$spec" --trace tests/corpus/traces/several.jsonl --root "$tmp/rb" --speed max 2>&1 >/dev/null)
rc=$?
if [ $rc -eq 1 ] && grep -qF 'several.jsonl:2: sensitivity.cpu: expected a number' <<<"$err" &&
   grep -qF 'nothing ran' <<<"$err" && [ -z "$(ls -A "$tmp/rb/runs")" ]; then ok; else bad "bad trace run: rc $rc: $err"; fi

# --- B2. what the engine says at its start comes under `hwemu run`'s name (engine.said, printed
# by cli_run.c; it was "hwemu serve: ..." before). A note of a start that goes on: a static file
# no segment uses is removed (root.c); the bad trace then stops the run. An error: a directory
# where the node's segment goes (node_open cannot open it), so the node cannot start.
mkdir -p "$tmp/rs" && chmod 755 "$tmp/rs" && : >"$tmp/rs/00000000deadbeef.static"
err=$("$hwemu" run --spec "$one" --trace tests/corpus/traces/several.jsonl --root "$tmp/rs" --speed max 2>&1 >/dev/null)
rc=$?
if [ $rc -eq 1 ] && grep -qxF "hwemu run: removed 1 static file of $tmp/rs that no segment uses any longer" <<<"$err" &&
   ! grep -q 'hwemu serve' <<<"$err"; then ok; else bad "a start note under hwemu run: rc $rc: $err"; fi
rm -rf "$tmp/rs" && mkdir -p "$tmp/rs/cpu-0.seg"
err=$("$hwemu" run --spec "$one" --trace tests/corpus/traces/several.jsonl --root "$tmp/rs" --speed max 2>&1 >/dev/null)
rc=$?
if [ $rc -eq 1 ] && grep -qF "hwemu run: node cpu-0: cannot open its segment $tmp/rs/cpu-0.seg" <<<"$err" &&
   grep -qxF 'hwemu run: 1 node could not start; nothing was changed for the others' <<<"$err" &&
   ! grep -q 'hwemu serve' <<<"$err"; then ok; else bad "a start error under hwemu run: rc $rc: $err"; fi

# --- C. the generator: same seed, same bytes; both modes load --------------------------------
"$hwemu" trace generate --jobs 16 --seed 11 --time-scale 60 --out "$tmp/g1.jsonl" 2>/dev/null
"$hwemu" trace generate -jobs 16 -seed 11 -time-scale 60 -out "$tmp/g2.jsonl" 2>/dev/null
"$hwemu" trace generate --jobs 16 --seed 12 --time-scale 60 --out "$tmp/g3.jsonl" 2>/dev/null
if cmp -s "$tmp/g1.jsonl" "$tmp/g2.jsonl" && ! cmp -s "$tmp/g1.jsonl" "$tmp/g3.jsonl"; then ok; else bad "generator not reproducible"; fi
"$hwemu" trace generate --mode diurnal --sim-hours 1 --diurnal-peak-rate 3 --seed 4 --out "$tmp/d.jsonl" 2>/dev/null
if "$hwemu" trace validate "$tmp/d.jsonl" >/dev/null && "$hwemu" trace validate "$tmp/g1.jsonl" >/dev/null; then ok
else bad "generated traces do not validate"; fi
out=$("$hwemu" trace generate --mode weekly 2>&1); [ $? -eq 2 ] && grep -q -- '--mode "weekly"' <<<"$out" && ok || bad "bad --mode: $out"

# --- D. a generated trace to its end -------------------------------------------------------
if "$hwemu" run --spec "$spec" --trace "$tmp/g1.jsonl" --root "$tmp/rd" --speed max >"$tmp/d.out" 2>"$tmp/d.err"; then ok
else bad "generated run: $(cat "$tmp/d.err")"; fi
dir=$(ls -d "$tmp"/rd/runs/*/ | head -1)
readings=$(for n in cpu-0 cpu-1 eco-0 gpu-0; do for z in 0 1; do
    p=sys/devices/virtual/powercap/intel-rapl/intel-rapl:$z
    echo "$n $z $("$hwemu" cat --node $n --root "$tmp/rd" $p/energy_uj) $("$hwemu" cat --node $n --root "$tmp/rd" $p/intel-rapl:$z:0/energy_uj 2>/dev/null || echo -)"
done; done)
python3 - "$dir" "$tmp/g1.jsonl" "$readings" <<'PY' && ok || bad "generated run's jobs and energy (above)"
import json, math, sys
d, trace, readings = sys.argv[1], sys.argv[2], sys.argv[3]
s = json.load(open(d + "/summary.json"))
jobs = [json.loads(l) for l in open(d + "/jobs.jsonl")]
want = {}
for l in open(trace):
    r = json.loads(l)
    if r["type"] == "job":
        want[r["jobId"]] = r
fail = []
if s["state"] != "completed" or s["jobs"]["completed"] != len(want) or len(jobs) != len(want):
    fail.append("not every job completed: %s" % s["jobs"])
for j in jobs:
    r = want[j["jobId"]]["podTemplate"]["requests"]
    if j["state"] != "completed" or j["node"] is None:
        fail.append("%s: %s" % (j["jobId"], j["state"]))
    if len(j["cpus"]) != max(1, math.ceil(float(r["cpu"]))):
        fail.append("%s holds %d CPUs for a request of %s" % (j["jobId"], len(j["cpus"]), r["cpu"]))
    g = int(r.get("nvidia.com/gpu", "0"))
    if len(j["gpus"]) != g or (g and j["node"] != "gpu-0"):
        fail.append("%s holds GPUs %s on %s for %d" % (j["jobId"], j["gpus"], j["node"], g))
    if j["class"] == "performance" and j["node"] == "eco-0":
        fail.append("%s is a performance job on the eco node" % j["jobId"])
    if j["work"]["cpuUnitsDone"] < j["work"]["cpuUnits"] - 1e-6 or j["work"]["gpuUnitsDone"] < j["work"]["gpuUnits"] - 1e-6:
        fail.append("%s completed with work left: %s" % (j["jobId"], j["work"]))
# no CPU or GPU is held by two jobs at once
for a in jobs:
    for b in jobs:
        if a["jobId"] < b["jobId"] and a["node"] == b["node"] and a["startSec"] < b["endSec"] and b["startSec"] < a["endSec"]:
            if set(a["cpus"]) & set(b["cpus"]) or set(a["gpus"]) & set(b["gpus"]):
                fail.append("%s and %s share CPUs or GPUs" % (a["jobId"], b["jobId"]))
# per node: the jobs' energies plus idle are the counters' delta, to the microjoule
for n in s["nodes"]:
    tot = sum(sum(j["energyMicrojoules"].values()) for j in jobs if j["node"] == n["node"])
    if tot + n["idleMicrojoules"] != n["counterDeltaMicrojoules"]:
        fail.append("%s: jobs %d + idle %d != counters %d" % (n["node"], tot, n["idleMicrojoules"], n["counterDeltaMicrojoules"]))
    if n["packageDeltaMicrojoules"] + n["dramDeltaMicrojoules"] + n["gpuDeltaMicrojoules"] != n["counterDeltaMicrojoules"]:
        fail.append("%s: parts do not add up" % n["node"])
# ... and the counters are what the nodes' energy_uj files show (package and DRAM zones; the
# files count in the zone's energy unit, 61.035 uJ here, and wrap at max_energy_range_uj)
files = {}
for line in readings.splitlines():
    node, z, pkg, dram = line.split()
    files.setdefault(node, [0, 0])
    files[node][0] += int(pkg)
    files[node][1] += int(dram)
rng = 262143328850
for n in s["nodes"]:
    for k, part in ((0, "package"), (1, "dram")):
        end = n[part + "StartMicrojoules"] + n[part + "DeltaMicrojoules"]
        got = files[n["node"]][k]
        diff = min(abs(got - end), abs(got + rng - end), abs(got + 2 * rng - end))
        if diff > 2 * 62:
            fail.append("%s %s: files %d, run %d" % (n["node"], part, got, end))
classes = s["energyJoules"]
if abs(classes["standard"] + classes["performance"] + classes["idle"] - classes["nodes"]) > 1e-3:
    fail.append("classes do not add up: %s" % classes)
print("\n".join(fail))
sys.exit(1 if fail else 0)
PY

# --- D2. repeatable bit for bit at --speed max (docs/runs.md "Repeatability"): the run of D again
# on a fresh root, with every node stepped at every tick (--batch 1), and in batches of 7 ticks
# on one worker gives the same jobs.jsonl and summary.json byte for byte, once the fields that
# name the run or time its placement on the wall clock are dropped (runId, the job cgroup names
# derived from it, placementMicrosecondsPerPlacedJob). A CPU hog runs meanwhile: the machine's
# load used to leak into the energies through the time the nodes' opening took -----------------
wallclock_free() { sed -E 's/"(runId|cgroup)":[[:space:]]*"[^"]*",?//g; s/"placementMicrosecondsPerPlacedJob":[^,}]*,?//g' "$1"; }
( end=$((SECONDS + 30)); while [ $SECONDS -lt $end ]; do :; done ) &
hog=$!
for v in "again" "batch1 --batch 1" "batch7 --batch 7 --workers 1"; do
    read -r name args <<<"$v"
    # shellcheck disable=SC2086 # args: the options, split
    if "$hwemu" run --spec "$spec" --trace "$tmp/g1.jsonl" --root "$tmp/rd-$name" --speed max $args >/dev/null 2>"$tmp/d-$name.err"; then
        other=$(ls -d "$tmp/rd-$name"/runs/*/ | head -1)
        okc=1
        for f in jobs.jsonl summary.json; do
            if ! diff=$(cmp <(wallclock_free "$dir/$f") <(wallclock_free "$other/$f") 2>&1); then
                bad "run D $name ($args): $f is not run D's: $diff"
                okc=0
            fi
        done
        [ $okc = 1 ] && ok
    else
        bad "run D $name ($args): $(cat "$tmp/d-$name.err")"
    fi
done
kill $hog 2>/dev/null
wait $hog 2>/dev/null
# the filter drops those three keys and nothing else
wallclock_free "$dir/summary.json" >"$tmp/d-summary.json"
wallclock_free "$dir/jobs.jsonl" >"$tmp/d-jobs.jsonl"
python3 - "$dir" "$tmp/d-summary.json" "$tmp/d-jobs.jsonl" <<'PY' && ok || bad "the wall-clock fields of run D (above)"
import json, sys
d, fs, fj = sys.argv[1:]
s, left = json.load(open(d + "/summary.json")), json.load(open(fs))
jobs, jleft = [json.loads(l) for l in open(d + "/jobs.jsonl")], [json.loads(l) for l in open(fj)]
fail = []
if set(s) - set(left) != {"runId", "placementMicrosecondsPerPlacedJob"} or any(left[k] != s[k] for k in left):
    fail.append("summary: dropped %s" % (set(s) - set(left)))
for a, b in zip(jobs, jleft):
    if set(a) - set(b) != {"cgroup"} or any(b[k] != a[k] for k in b):
        fail.append("%s: dropped %s" % (a["jobId"], set(a) - set(b)))
print("\n".join(fail))
sys.exit(1 if fail or len(jobs) != len(jleft) else 0)
PY
out=$("$hwemu" run --spec "$spec" --trace "$tmp/g1.jsonl" --root "$tmp/rd0" --speed max --batch 0 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qF -- '--batch "0" is not a number of ticks' <<<"$out" && ok || bad "--batch 0: rc $rc: $out"

# --- E. a node with jobs draws more than an idle one --------------------------------------
printf '%s\n' '{"type":"job","jobId":"busy","podTemplate":{"requests":{"cpu":"48"}},"work":{"cpuUnits":2880},"workloadClass":{"cpu":"cpu.compute_bound"}}' >"$tmp/busy.jsonl"
"$hwemu" run --spec "$spec" --trace "$tmp/busy.jsonl" --root "$tmp/re" --speed max >/dev/null 2>"$tmp/e.err"
python3 - "$(ls -d "$tmp"/re/runs/*/ | head -1)" <<'PY' && ok || bad "busy node vs idle nodes"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
j = json.loads(open(sys.argv[1] + "/jobs.jsonl").readline())
e = {n["node"]: n["counterDeltaMicrojoules"] for n in s["nodes"]}
busy = j["node"]
# a standard job prefers the eco node (placement score +10)
ok = busy == "eco-0" and all(e[busy] > 1.2 * e[n] for n in ("cpu-0", "cpu-1"))
print(busy, e)
sys.exit(0 if ok else 1)
PY

# --- F. a RAPL cap written through the shim slows CPU-bound sensitive jobs --------------------
for i in 0 1 2 3; do
    printf '{"type":"job","jobId":"cpu-%d","submitTimeOffsetSec":%d,"podTemplate":{"requests":{"cpu":"24"}},"work":{"cpuUnits":2000},"sensitivity":{"cpu":1},"workloadClass":{"cpu":"cpu.compute_bound"}}\n' $i $i
done >"$tmp/cpu.jsonl"
"$hwemu" run --spec "$one" --trace "$tmp/cpu.jsonl" --root "$tmp/free" --speed max >"$tmp/free.out" 2>&1 || bad "uncapped run failed"
port=$(free_port)
if serve_start "http://127.0.0.1:$port" "$tmp/cap.err" --spec "$one" --root "$tmp/capped" --addr "127.0.0.1:$port"; then
    for z in 0 1; do
        LD_PRELOAD="$shim" HWEMU_NODE=cpu-0 HWEMU_ROOT="$tmp/capped" \
            sh -c "echo 80000000 > /sys/class/powercap/intel-rapl:$z/constraint_0_power_limit_uw" || bad "shim write $z"
    done
    sleep 1.5 # one tick applies it
    kill $pid; wait $pid; pid=
    got=$(LD_PRELOAD="$shim" HWEMU_NODE=cpu-0 HWEMU_ROOT="$tmp/capped" cat /sys/class/powercap/intel-rapl:1/constraint_0_power_limit_uw)
    [ "$got" = 80000000 ] && ok || bad "cap reads back $got"
else
    bad "serve for the cap did not start: $(cat "$tmp/cap.err")"
fi
"$hwemu" run --spec "$one" --trace "$tmp/cpu.jsonl" --root "$tmp/capped" --speed max >"$tmp/capped.out" 2>&1 || bad "capped run failed"
python3 - "$(ls -d "$tmp"/free/runs/*/)" "$(ls -d "$tmp"/capped/runs/*/)" <<'PY' && ok || bad "cap did not slow the jobs or lower the energy"
import json, sys
def load(d):
    jobs = {j["jobId"]: j for j in map(json.loads, open(d + "/jobs.jsonl"))}
    return jobs, json.load(open(d + "/summary.json"))
fj, fs = load(sys.argv[1])
cj, cs = load(sys.argv[2])
slow = [ (cj[k]["endSec"] - cj[k]["startSec"]) / (fj[k]["endSec"] - fj[k]["startSec"]) for k in fj]
print("duration ratios", slow, "energy", fs["energyJoules"]["nodes"], cs["energyJoules"]["nodes"])
sys.exit(0 if min(slow) > 1.2 and cs["energyJoules"]["nodes"] < fs["energyJoules"]["nodes"] and cs["state"] == "completed" else 1)
PY

# --- G. jobs that can never run stall, the rest completes -----------------------------------
{
    echo '{"type":"workload","schemaVersion":"v2","workloadId":"big","gang":true,"pods":[{"role":"worker","replicas":2}]}'
    for i in 1 2; do echo '{"type":"job","jobId":"big-worker-0'$i'","workloadId":"big","gang":true,"podTemplate":{"requests":{"cpu":"4","nvidia.com/gpu":"5"}}}'; done
    echo '{"type":"workload","schemaVersion":"v2","workloadId":"short","gang":true,"pods":[{"role":"worker","replicas":3}]}'
    echo '{"type":"job","jobId":"short-worker-01","workloadId":"short","gang":true}'
    echo '{"type":"job","jobId":"huge","podTemplate":{"requests":{"cpu":"1000"}}}'
    echo '{"type":"job","jobId":"fine","work":{"cpuUnits":5}}'
} >"$tmp/stall.jsonl"
"$hwemu" run --spec "$spec" --trace "$tmp/stall.jsonl" --root "$tmp/rg" --speed max >"$tmp/g.out" 2>"$tmp/g.err"; rc=$?
python3 - "$(ls -d "$tmp"/rg/runs/*/)" "$rc" "$tmp/rg/events.jsonl" <<'PY' && ok || bad "stalls: $(cat "$tmp/g.err")"
import json, sys
d, rc = sys.argv[1], int(sys.argv[2])
s = json.load(open(d + "/summary.json"))
jobs = {j["jobId"]: j for j in map(json.loads, open(d + "/jobs.jsonl"))}
ev = [json.loads(l) for l in open(sys.argv[3])]
stalled = sorted(e["attributes"]["jobId"] if "attributes" in e else e.get("jobId") for e in ev if e.get("event") == "joulie.sim.job.stalled")
ok = (rc == 1 and s["state"] == "stalled" and s["jobs"]["stalled"] == 4 and s["jobs"]["completed"] == 1
      and jobs["fine"]["state"] == "completed"
      and "gang can never run whole" in jobs["big-worker-01"]["stallReason"]
      and "more pods than the trace has job records" in jobs["short-worker-01"]["stallReason"]
      and "no node can ever hold" in jobs["huge"]["stallReason"])
print(s["state"], s["jobs"], {k: j.get("stallReason") for k, j in jobs.items()}, "events:", stalled)
sys.exit(0 if ok and len(stalled) == 4 else 1)
PY

# --- H. the run API -----------------------------------------------------------------------
printf '%s\n' '{"type":"job","jobId":"long","podTemplate":{"requests":{"cpu":"8"}},"work":{"cpuUnits":1e9}}' >"$tmp/long.jsonl"
printf '%s\n' '{"type":"job","jobId":"quick","podTemplate":{"requests":{"cpu":"2"}},"work":{"cpuUnits":3}}' >"$tmp/quick.jsonl"
port=$(free_port); url=http://127.0.0.1:$port
if serve_start "$url" "$tmp/h.err" --spec "$spec" --root "$tmp/rh" --addr "127.0.0.1:$port" --trace-dir "$tmp"; then
    r=$(curl -s -w ' %{http_code}' -X POST --data-binary @tests/corpus/traces/several.jsonl "$url/runs")
    [[ "$r" == *' 400' ]] && grep -qF 'request body:2: sensitivity.cpu: expected a number, found a string' <<<"$r" &&
        grep -qF 'nothing was started' <<<"$r" && ok || bad "POST bad trace: $r"
    r=$(curl -s -w ' %{http_code}' -X POST --data-binary @"$tmp/long.jsonl" "$url/runs")
    id=$(sed -n 's/.*"runId":"\([^"]*\)".*/\1/p' <<<"$r")
    [[ "$r" == *' 201' ]] && [ -n "$id" ] && ok || bad "POST trace: $r"
    r=$(curl -s -w ' %{http_code}' -X POST --data-binary @"$tmp/quick.jsonl" "$url/runs")
    [[ "$r" == *' 409' ]] && grep -qF "run $id is active" <<<"$r" && ok || bad "second POST: $r"
    for _ in $(seq 100); do curl -s "$url/runs/$id" | grep -q '"ticks":[3-9]' && break; sleep 0.1; done
    r=$(curl -s "$url/runs/$id")
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["state"]=="running" and d["jobs"]["running"]==1 and d["timeSec"]>=1.5 and d["energyJoules"]["standard"]>0 else 1)' "$r" && ok || bad "GET run: $r"
    m=$(curl -s "$url/metrics")
    grep -q '^joulie_sim_job_submitted_total{class="standard"} 1$' <<<"$m" && grep -q '^joulie_sim_node_running_pods{node="eco-0"} 1$' <<<"$m" &&
        grep -q '^joulie_sim_node_class_info{node="gpu-0",class="nvidia-h100-sxm-8gpu"} 1$' <<<"$m" && ok || bad "metrics during the run: $(grep joulie_sim_job <<<"$m")"
    curl -s "$url/runs/nope" -w ' %{http_code}' | grep -q ' 404$' && ok || bad "GET unknown run"
    curl -s -X DELETE "$url/runs/$id" -w ' %{http_code}' | grep -q ' 405$' && ok || bad "DELETE run"
    r=$(curl -s -X POST "$url/runs/$id/stop" -w ' %{http_code}')
    [[ "$r" == *' 200' ]] && ok || bad "stop: $r"
    for _ in $(seq 50); do curl -s "$url/runs/$id" | grep -q '"state":"stopped"' && break; sleep 0.1; done
    curl -s "$url/runs/$id" | grep -q '"state":"stopped"' && [ -s "$tmp/rh/runs/$id/summary.json" ] && ok || bad "not stopped"
    curl -s -X POST "$url/runs/$id/stop" -w ' %{http_code}' | grep -q ' 409$' && ok || bad "stop twice"
    r=$(curl -s -w ' %{http_code}' -X POST -d "{\"tracePath\":\"$tmp/quick.jsonl\"}" "$url/runs")
    id2=$(sed -n 's/.*"runId":"\([^"]*\)".*/\1/p' <<<"$r")
    [[ "$r" == *' 201' ]] && ok || bad "POST tracePath: $r"
    for _ in $(seq 100); do curl -s "$url/runs/$id2" | grep -q '"state":"completed"' && break; sleep 0.1; done
    curl -s "$url/runs/$id2" | grep -q '"state":"completed"' && ok || bad "quick run: $(curl -s "$url/runs/$id2")"
    m=$(curl -s "$url/metrics")
    grep -q '^joulie_sim_job_completed_total{class="standard",node="eco-0"} 1$' <<<"$m" &&
        grep -q '^joulie_sim_job_completion_seconds_count 1$' <<<"$m" && ok || bad "completed metrics: $(grep joulie_sim_job <<<"$m")"
    curl -s "$url/debug/events" | grep -q '"event":"joulie.sim.job.completed"' && ok || bad "completed event"
    n=$(curl -s "$url/runs" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
    [ "$n" = 2 ] && ok || bad "GET /runs lists $n runs"
    r=$(curl -s -w ' %{http_code}' -X POST -d '{"tracePath":"nonexistent.jsonl"}' "$url/runs")
    [[ "$r" == *' 404' ]] && grep -qF 'nonexistent.jsonl: no such file in the trace directory' <<<"$r" && ok \
        || bad "missing tracePath: $r"
    # A job's GPU peer transfers (workloadProfile.gpuPeerTransfers) count where baseLoad's do: its
    # first GPU sends 100 GB/s to its second (within the H100 SXM's 450 GB/s link: all of it goes),
    # so over the node's GPUs the received and sent bytes grow at 100 GB/s, on one GPU each.
    printf '%s\n' '{"type":"job","jobId":"ring","podTemplate":{"requests":{"cpu":"1","nvidia.com/gpu":"2"}},"work":{"cpuUnits":1e9,"gpuUnits":1e9},"workloadProfile":{"gpuPeerTransfers":[{"from":0,"to":1,"GBps":100}]}}' >"$tmp/ring.jsonl"
    r=$(curl -s -w ' %{http_code}' -X POST --data-binary @"$tmp/ring.jsonl" "$url/runs")
    id3=$(sed -n 's/.*"runId":"\([^"]*\)".*/\1/p' <<<"$r")
    [[ "$r" == *' 201' ]] && ok || bad "POST ring: $r"
    peers() { for g in 0 1 2 3 4 5 6 7; do echo state/nvml/gpu$g/peer_rx_bytes state/nvml/gpu$g/peer_tx_bytes; done; }
    for _ in $(seq 100); do curl -s "$url/runs/$id3" | grep -q '"running":1' && break; sleep 0.1; done
    sleep 1.2 # a tick after the placement: the transfer runs over the intervals read below
    p1=$("$hwemu" cat --root "$tmp/rh" --node gpu-0 $(peers)); t1=$(date +%s.%N)
    sleep 4
    p2=$("$hwemu" cat --root "$tmp/rh" --node gpu-0 $(peers)); t2=$(date +%s.%N)
    python3 - "$p1" "$p2" "$t1" "$t2" <<'PY' && ok || bad "ring's peer transfer: $p1 / $p2"
import sys
a = [int(x) for x in sys.argv[1].split()]; b = [int(x) for x in sys.argv[2].split()]
dt = float(sys.argv[4]) - float(sys.argv[3])
d = [y - x for x, y in zip(a, b)]
rx, tx = d[0::2], d[1::2]
# one GPU receives what another sends, 100 GB/s; the files move at each 1 s tick, so 4 s of
# reads see 3 to 5 ticks' worth: 0.6..1.4 of the rate
ok = (sum(1 for v in rx if v > 0) == 1 and sum(1 for v in tx if v > 0) == 1 and abs(max(rx) - max(tx)) <= 2
      and 0.6 < max(rx) / 100e9 / dt < 1.4 and rx.index(max(rx)) != tx.index(max(tx)))
print(rx, tx, max(rx) / 1e9 / dt)
sys.exit(0 if ok else 1)
PY
    curl -s -X POST "$url/runs/$id3/stop" -w ' %{http_code}' | grep -q ' 200$' && ok || bad "stop ring"
    kill $pid; wait $pid; pid=
else
    bad "serve for the API did not start: $(cat "$tmp/h.err")"
fi

# --- I. SIM_WORKLOAD_TRACE_PATH at start; --speed N -----------------------------------------
port=$(free_port)
SIM_WORKLOAD_TRACE_PATH=tests/corpus/traces/intent.jsonl "$hwemu" serve --spec "$spec" --root "$tmp/ri" \
    --addr "127.0.0.1:$port" >/dev/null 2>"$tmp/i.err"; rc=$?
[ $rc -eq 1 ] && grep -qF 'intent.jsonl:1: intentClass: "eco" is not a class' "$tmp/i.err" &&
    grep -qF 'was not started' "$tmp/i.err" && ok || bad "bad SIM_WORKLOAD_TRACE_PATH: rc $rc $(cat "$tmp/i.err")"
printf '%s\n' '{"type":"job","jobId":"twenty","podTemplate":{"requests":{"cpu":"1"}},"work":{"cpuUnits":20}}' >"$tmp/twenty.jsonl"
port=$(free_port); url=http://127.0.0.1:$port
t0=$(date +%s.%N)
if SIM_WORKLOAD_TRACE_PATH="$tmp/twenty.jsonl" serve_start "$url" "$tmp/j.err" --spec "$spec" --root "$tmp/rj" \
    --addr "127.0.0.1:$port" --speed 10; then
    for _ in $(seq 150); do curl -s "$url/runs" | grep -q '"state":"completed"' && break; sleep 0.1; done
    t1=$(date +%s.%N)
    r=$(curl -s "$url/runs")
    python3 -c 'import json,sys; d=json.loads(sys.argv[1])["runs"][0]; w=float(sys.argv[3])-float(sys.argv[2]);
print("emulated", d["timeSec"], "wall", w); sys.exit(0 if d["state"]=="completed" and d["timeSec"]>=20 and w<d["timeSec"]/2 else 1)' \
        "$r" "$t0" "$t1" && ok || bad "--speed 10: $r"
    kill $pid; wait $pid; pid=
else
    bad "serve --speed 10: $(cat "$tmp/j.err")"
fi
# --- L. the run's OTLP files: every line a request the official OTLP definitions decode -------
odir=$(ls -d "$tmp"/rd/runs/*/ | head -1)/otlp
rport=$(free_port)
if receiver_start "$tmp" "$rport" "$tmp/recv.jsonl" >"$tmp/recv.err"; then
    codes=$( { while IFS= read -r l; do curl -s -o /dev/null -w '%{http_code}\n' -H 'Content-Type: application/json' \
                   --data-binary "$l" "http://127.0.0.1:$rport/v1/logs"; done <"$odir/logs.jsonl"
               while IFS= read -r l; do curl -s -o /dev/null -w '%{http_code}\n' -H 'Content-Type: application/json' \
                   --data-binary "$l" "http://127.0.0.1:$rport/v1/metrics"; done <"$odir/metrics.jsonl"; } | sort | uniq -c)
    kill $rpid; wait $rpid 2>/dev/null
    python3 - "$odir" "$(ls -d "$tmp"/rd/runs/*/)" "$codes" <<'PY' && ok || bad "run OTLP files (above)"
import json, sys
odir, rdir, codes = sys.argv[1], sys.argv[2], sys.argv[3]
jobs = sum(1 for _ in open(rdir + "/jobs.jsonl"))
logs = [json.loads(l) for l in open(odir + "/logs.jsonl")]
names = [r["logRecords"][0]["eventName"] for l in logs for rl in l["resourceLogs"] for r in rl["scopeLogs"]]
last = json.loads(open(odir + "/metrics.jsonl").readlines()[-1])
ms = {m["name"]: m for m in last["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]}
sub = sum(int(p["asInt"]) for p in ms["joulie_sim_job_submitted_total"]["sum"]["dataPoints"])
done = sum(int(p["asInt"]) for p in ms["joulie_sim_job_completed_total"]["sum"]["dataPoints"])
hist = ms["joulie_sim_job_completion_seconds"]["histogram"]["dataPoints"][0]
ok = (codes.split() == [str(len(logs) + sum(1 for _ in open(odir + "/metrics.jsonl"))), "200"]
      and names.count("joulie.sim.job.started") == jobs and names.count("joulie.sim.job.completed") == jobs
      and sub == jobs and done == jobs and int(hist["count"]) == jobs and sum(map(int, hist["bucketCounts"])) == jobs)
print("codes", codes, "events", len(names), "jobs", jobs, "submitted", sub, "completed", done)
sys.exit(0 if ok else 1)
PY
else
    bad "OTLP receiver: $(cat "$tmp/recv.err")"
fi

# --- M. eco labels set at run time steer placement ---------------------------------------------
printf '%s\n' '{"type":"job","jobId":"perf","intentClass":"performance","podTemplate":{"requests":{"cpu":"2"}},"work":{"cpuUnits":4}}' >"$tmp/perf.jsonl"
port=$(free_port); url=http://127.0.0.1:$port
if serve_start "$url" "$tmp/m.err" --spec "$spec" --root "$tmp/rm" --addr "127.0.0.1:$port" --speed 10; then
    curl -s "$url/nodes/eco-0/labels" | grep -q '"joulie.io/power-profile":"eco"' && ok || bad "GET labels: $(curl -s "$url/nodes/eco-0/labels")"
    r=$(curl -s -X PUT -d '{"joulie.io/power-profile":"not eco!"}' "$url/nodes/cpu-0/labels" -w ' %{http_code}')
    [[ "$r" == *' 400' ]] && grep -qF 'is not a label value' <<<"$r" && ok || bad "PUT bad label: $r"
    curl -s -X PUT -d '{"a":"b"}' "$url/nodes/nope/labels" -w ' %{http_code}' | grep -q ' 404$' && ok || bad "PUT unknown node"
    for n in cpu-0 cpu-1 gpu-0; do curl -s -o /dev/null -X PUT -d '{"joulie.io/power-profile":"eco"}' "$url/nodes/$n/labels"; done
    r=$(curl -s -X PUT -d '{"joulie.io/power-profile":null}' "$url/nodes/eco-0/labels")
    grep -q 'power-profile' <<<"$r" && bad "label not removed: $r" || ok
    id=$(curl -s -X POST --data-binary @"$tmp/perf.jsonl" "$url/runs" | sed -n 's/.*"runId":"\([^"]*\)".*/\1/p')
    for _ in $(seq 100); do curl -s "$url/runs/$id" | grep -q '"state":"completed"' && break; sleep 0.1; done
    grep -q '"node":"eco-0"' "$tmp/rm/runs/$id/jobs.jsonl" && ok || bad "the performance job went to $(cat "$tmp/rm/runs/$id/jobs.jsonl")"
    kill $pid; wait $pid; pid=
else
    bad "serve for labels: $(cat "$tmp/m.err")"
fi

# --- K. an engine restart in the middle of a run resumes it -----------------------------------
for i in 0 1 2; do
    printf '{"type":"job","jobId":"r-%d","submitTimeOffsetSec":%d,"podTemplate":{"requests":{"cpu":"4"}},"work":{"cpuUnits":480},"sensitivity":{"cpu":0}}\n' $i $((i * 15))
done >"$tmp/restart.jsonl"
port=$(free_port); url=http://127.0.0.1:$port
if SIM_WORKLOAD_TRACE_PATH="$tmp/restart.jsonl" serve_start "$url" "$tmp/k.err" --spec "$spec" --root "$tmp/rk" \
    --addr "127.0.0.1:$port" --speed 4; then
    for _ in $(seq 300); do # until 20 s of the run's 150 have passed
        t=$(curl -s "$url/runs" | sed -n 's/.*"timeSec":\([0-9]*\).*/\1/p')
        [ "${t:-0}" -ge 20 ] && break
        sleep 0.1
    done
    kill $pid; wait $pid; pid=
    rdir=$(ls -d "$tmp"/rk/runs/*/ | head -1)
    [ -s "$rdir/state.json" ] && [ ! -e "$rdir/summary.json" ] && grep -q 'suspended at' "$tmp/k.err" && ok ||
        bad "no checkpoint at the stop: $(ls "$rdir"; cat "$tmp/k.err")"
    # the rest at --speed max with `hwemu run`, which resumes the run and exits at its last tick,
    # so the nodes' files then show exactly the run's end
    if "$hwemu" run --spec "$spec" --root "$tmp/rk" --trace "$tmp/restart.jsonl" --speed max >/dev/null 2>"$tmp/k2.err"; then
        grep -q 'resumes at' "$tmp/k2.err" && grep -q 'is not started' "$tmp/k2.err" && [ "$(ls "$tmp/rk/runs" | wc -l)" = 1 ] && ok ||
            bad "resume: $(cat "$tmp/k2.err")"
        readings=$(for z in 0 1; do p=sys/devices/virtual/powercap/intel-rapl/intel-rapl:$z
            echo "$("$hwemu" cat --node eco-0 --root "$tmp/rk" $p/energy_uj) $("$hwemu" cat --node eco-0 --root "$tmp/rk" $p/intel-rapl:$z:0/energy_uj)"; done)
        python3 - "$rdir" "$readings" <<'PY' && ok || bad "the resumed run (above)"
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
jobs = {j["jobId"]: j for j in map(json.loads, open(d + "/jobs.jsonl"))}
fail = []
if s["state"] != "completed" or sorted(jobs) != ["r-0", "r-1", "r-2"] or any(j["state"] != "completed" for j in jobs.values()):
    fail.append("not every job completed once: %s %s" % (s["jobs"], sorted(jobs)))
if not (jobs["r-0"]["startSec"] < 20 < jobs["r-0"]["endSec"]):
    fail.append("r-0 did not span the restart: %s" % jobs["r-0"])
for n in s["nodes"]:
    tot = sum(sum(j["energyMicrojoules"].values()) for j in jobs.values() if j["node"] == n["node"])
    if tot + n["idleMicrojoules"] != n["counterDeltaMicrojoules"]:
        fail.append("%s: jobs %d + idle %d != counters %d" % (n["node"], tot, n["idleMicrojoules"], n["counterDeltaMicrojoules"]))
eco = [n for n in s["nodes"] if n["node"] == "eco-0"][0]
pkg = dram = 0
for line in sys.argv[2].splitlines():
    a, b = line.split()
    pkg += int(a); dram += int(b)
for part, got in (("package", pkg), ("dram", dram)):
    end = eco[part + "StartMicrojoules"] + eco[part + "DeltaMicrojoules"]
    if abs(got - end) > 2 * 62:
        fail.append("eco-0 %s: files %d, run %d: the energy is not continuous over the restart" % (part, got, end))
print("\n".join(fail))
sys.exit(1 if fail else 0)
PY
    else
        bad "the resumed run did not complete: $(cat "$tmp/k2.err")"
    fi
else
    bad "serve for the restart: $(cat "$tmp/k.err")"
fi
finish
