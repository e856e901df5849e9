#!/usr/bin/env bash
# The jobs' cgroup v2 trees (docs/interfaces.md "Job cgroups") while a workload run places jobs:
#   A  the spec field's errors (file:line, what was expected)
#   B  SLURM layout: the root's files, system.slice/slurmstepd.scope/job_<id> appearing for each
#      running job and vanishing when it ends, the same listings and texts through the shim and
#      the seccomp supervisor (ls, find, cat, readlink -f), a placeholder name never resolving
#   C  each running job's cpu.stat usage_usec moves as its held CPUs' busy time in /proc/stat
#      (the cpuN lines of its cpuset.cpus.effective, user+system+irq+softirq ticks), within the
#      ticks' truncation: 4 fields floored at each of 2 reads, 10 ms each, per CPU, plus 20 ms
#      for the instants between the two files' reads; user_usec is 90 % of usage (the split of
#      the /proc/stat view, seg_view.h)
#   D  the slot limit: maxJobsPerNode 4 runs at most 4 jobs at once (the fifth waits)
#   E  jobs.jsonl names each job's cgroup and its CPU time (request x utilization x duration)
#   F  a kill -9 of the engine and a restart: the resumed run's jobs show the same directories
#      and no usage_usec (nor the root's) below what was read before the kill
#   G  Kubernetes layout: kubepods-burstable-pod<uid>.slice with its cri-containerd scope, cpu.weight
#      from the request as runc converts shares (2 CPUs: 1 + (2048-2)*9999/262142 = 79), memory.max max;
#      a file held open while its pod ends (nothing takes the slot) reads ENODEV (fs/kernfs/file.c)
# Usage: test_cgroups.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$(realpath "$1")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
CG=/sys/fs/cgroup
SCOPE=$CG/system.slice/slurmstepd.scope

# --- A. spec errors ----------------------------------------------------------------------------
sed 's/manager: slurm/manager: slrum/' tests/runs/cgroups-slurm.yaml >"$tmp/bad1.yaml"
sed 's/maxJobsPerNode: 4/maxJobsPerNode: 0/' tests/runs/cgroups-slurm.yaml >"$tmp/bad2.yaml"
e1=$("$hwemu" clusterspec validate --spec "$tmp/bad1.yaml" 2>&1)
e2=$("$hwemu" clusterspec validate --spec "$tmp/bad2.yaml" 2>&1)
grep -q 'bad1.yaml:6:.*spec.jobCgroups: manager: unknown manager "slrum" (expected one of: slurm, kubernetes, none)' <<<"$e1" &&
    grep -q 'bad2.yaml:6:.*maxJobsPerNode: 0 is out of range' <<<"$e2" && ok || bad "spec errors: $e1 / $e2"

# --- B. a SLURM node with a short trace ----------------------------------------------------------
# a: 4 CPUs at 0.9 for ~6 s; b: 2 CPUs at 0.5 from +1 s for ~2 s; c: 1 CPU, long (outlives the test);
# d, e, f: 1 CPU each from +1 s (with a, b, c the node has 4 slots: one of them waits)
cat >"$tmp/trace.jsonl" <<'TR'
{"type":"job","jobId":"a","podTemplate":{"requests":{"cpu":"4","memory":"1Gi"}},"work":{"cpuUnits":24},"workloadProfile":{"cpuUtilization":0.9},"sensitivity":{"cpu":0}}
{"type":"job","jobId":"b","submitTimeOffsetSec":1,"podTemplate":{"requests":{"cpu":"2"}},"work":{"cpuUnits":4},"workloadProfile":{"cpuUtilization":0.5},"sensitivity":{"cpu":0}}
{"type":"job","jobId":"c","podTemplate":{"requests":{"cpu":"1"}},"work":{"cpuUnits":100000},"workloadProfile":{"cpuUtilization":0.8},"sensitivity":{"cpu":0}}
{"type":"job","jobId":"d","submitTimeOffsetSec":1,"podTemplate":{"requests":{"cpu":"1"}},"work":{"cpuUnits":2},"sensitivity":{"cpu":0}}
{"type":"job","jobId":"e","submitTimeOffsetSec":1,"podTemplate":{"requests":{"cpu":"1"}},"work":{"cpuUnits":2},"sensitivity":{"cpu":0}}
TR
port=$(free_port)
url=http://127.0.0.1:$port
root=$tmp/r
start() {
    SIM_WORKLOAD_TRACE_PATH=$tmp/trace.jsonl serve_start "$url" "$tmp/err" --spec tests/runs/cgroups-slurm.yaml \
        --root "$root" --addr 127.0.0.1:$port --tick 20ms || { bad "serve: $(cat "$tmp/err")"; finish; }
}
start
node=n-0
X() { "$hwemu" exec --root "$root" --node "$node" "$@"; }
sleep 0.5
# the root and the scope: the files of a cgroup2 root with these controllers
out=$(X -- sh -c "cat $CG/cgroup.controllers; wc -l <$CG/cpu.stat; cat $CG/cpuset.cpus.effective; ls $CG")
grep -q '^cpuset cpu io memory hugetlb pids rdma misc$' <<<"$out" && grep -qx 8 <<<"$out" && grep -qx '0-95' <<<"$out" &&
    grep -qx system.slice <<<"$out" && ! grep -q "$(printf '\001')" <<<"$out" && ok || bad "root files: $out"
# a job directory per running job (a, c and, from +1 s, b, d or e as slots allow)
for _ in $(seq 100); do
    n=$(X -- sh -c "ls -d $SCOPE/job_* 2>/dev/null | wc -l")
    [ "$n" -ge 4 ] && break
    sleep 0.1
done
[ "$n" = 4 ] && ok || bad "job directories: $n, expected 4 (4 slots)"
# both routes list and read the same tree (names, then the texts that do not move)
lst() { X --intercept "$1" -- sh -c "find $CG -name cpu.stat -o -name cgroup.procs -o -name memory.max | sort; cat $SCOPE/job_*/memory.max $SCOPE/job_*/step_batch/user/task_0/cgroup.procs; readlink -f $SCOPE/job_*/step_batch/user/task_0"; }
l1=$(lst preload) l2=$(lst seccomp)
if [ -n "$l1" ] && [ "$l1" = "$l2" ] && [ "$(grep -c '/job_[0-9]*/cpu.stat$' <<<"$l1")" = 4 ] &&
   [ "$(grep -c 'task_0$' <<<"$l1")" = 4 ] && grep -qx 1073741824 <<<"$l1"; then ok
else bad "routes differ or tree incomplete: preload <<$l1>> seccomp <<$l2>>"; fi
# an absent slot's placeholder never resolves; a name no job has is ENOENT
out=$(X -- sh -c "cat $SCOPE/job_1/cpu.stat 2>&1; ls $SCOPE/\$(printf '\\001')7 2>&1")
[ "$(grep -c 'No such file' <<<"$out")" = 2 ] && ok || bad "missing names: $out"

# --- C. cpu.stat against /proc/stat, per running job ---------------------------------------------
X -- /usr/bin/python3 - "$SCOPE" >"$tmp/c.out" 2>&1 <<'PY' && ok || bad "cpu.stat vs /proc/stat: $(cat "$tmp/c.out")"
import glob, sys, time
scope = sys.argv[1]
def cpus(text):
    out = []
    for part in text.strip().split(","):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out
def busy():
    t = {}
    for line in open("/proc/stat"):
        f = line.split()
        if f[0].startswith("cpu") and f[0] != "cpu":
            t[int(f[0][3:])] = (int(f[1]) + int(f[3]) + int(f[6]) + int(f[7])) * 0.01
    return t
def sample(dirs):
    u = {}
    for d in dirs:
        try:  # a job that ended meanwhile has no directory any more
            s = dict(l.split() for l in open(d + "/cpu.stat"))
        except FileNotFoundError:
            continue
        u[d] = {k: int(v) for k, v in s.items()}
    return u, busy()
dirs = sorted(glob.glob(scope + "/job_*"))
sets = {d: cpus(open(d + "/cpuset.cpus.effective").read()) for d in dirs}
# each job's own CPUs (a: 4, b: 2, c, d, e: 1), no CPU in two jobs
assert all(1 <= len(c) <= 4 for c in sets.values()) and sorted(len(c) for c in sets.values())[-1] == 4, sets
held = [c for cs in sets.values() for c in cs]
assert len(held) == len(set(held)), sets
u1, b1 = sample(dirs)
time.sleep(1.0)
u2, b2 = sample(dirs)
checked = 0
for d in dirs:
    if d not in u2 or d not in u1:
        continue
    du = (u2[d]["usage_usec"] - u1[d]["usage_usec"]) / 1e6
    db = sum(b2[c] - b1[c] for c in sets[d])
    tol = 0.08 * len(sets[d]) + 0.02 * (1 + len(sets[d]))
    assert du > 0.2, (d, du)
    assert abs(du - db) <= tol, (d, du, db, tol, sets[d])
    s = u2[d]
    assert s["user_usec"] == s["usage_usec"] * 9 // 10 and s["system_usec"] == s["usage_usec"] - s["user_usec"], s
    checked += 1
assert checked >= 2, checked
print("ok", checked)
PY
# --- D, E. jobs end, their directories go, the fifth waited for a slot; jobs.jsonl ----------------
for _ in $(seq 200); do
    [ "$(cat "$root"/runs/*/jobs.jsonl 2>/dev/null | wc -l)" -ge 4 ] && break
    sleep 0.1
done
gone=$(X -- sh -c "ls $SCOPE")
python3 - "$root" "$gone" <<'PY' && ok || bad "ended jobs, slots, jobs.jsonl (above); scope lists: $gone"
import glob, json, sys
jobs = {}
for f in glob.glob(sys.argv[1] + "/runs/*/jobs.jsonl"):
    for line in open(f):
        j = json.loads(line)
        jobs[j["jobId"]] = j
listed = sys.argv[2].split()
assert set(jobs) == {"a", "b", "d", "e"}, sorted(jobs)
for k, j in jobs.items():
    name = j["cgroup"].rsplit("/", 1)[1]
    assert j["cgroup"].startswith("system.slice/slurmstepd.scope/job_") and name not in listed, (k, j["cgroup"], listed)
    # CPU time = cores x utilization (0.65: the default of cpu.mixed) x (end - start), within one tick's share
    want = {"a": 4 * 0.9, "b": 2 * 0.5, "d": 0.65, "e": 0.65}[k] * (j["endSec"] - j["startSec"])
    assert abs(j["cgroupCpuSeconds"] - want) <= 0.05 + 0.05 * want, (k, j["cgroupCpuSeconds"], want)
# 4 slots: a, c and two of b, d, e ran first; the third started only when one of them had ended
starts = sorted([jobs[k]["startSec"] for k in ("b", "d", "e")])
ends = sorted([jobs[k]["endSec"] for k in ("a", "b", "d", "e")])
assert starts[2] >= ends[0] - 0.05, (starts, ends)
print("ok")
PY

# --- F. kill -9 and restart: the long job's usage and the root's never go back ---------------------
for _ in $(seq 150); do [ -n "$(ls "$root"/runs/*/state.json 2>/dev/null)" ] && break; sleep 0.1; done
sleep 0.3
# snap: each job directory with its usage_usec, then the root's, taken again until the set of job
# directories is the same before and after the reads (a job of the resumed run may start or end
# between two reads of one snapshot)
snap() {
    local s i
    for i in $(seq 50); do
        s=$(X -- sh -c "a=\$(ls -d $SCOPE/job_* 2>/dev/null); for d in \$a; do echo \"\$d \$(grep usage_usec \$d/cpu.stat 2>/dev/null)\"; done; echo \"root \$(grep usage_usec $CG/cpu.stat)\"; b=\$(ls -d $SCOPE/job_* 2>/dev/null); [ \"\$a\" = \"\$b\" ]") && break
    done
    echo "$s"
}
before=$(snap)
kill -9 "$pid"
wait "$pid" 2>/dev/null
pid=
start
for _ in $(seq 100); do
    after=$(snap)
    grep -q "^root usage_usec" <<<"$after" && [ "$(grep -c /job_ <<<"$after")" -ge "$(grep -c /job_ <<<"$before")" ] && break
    sleep 0.1
done
python3 - "$before" "$after" <<'PY' && ok || bad "across kill -9: before <<$before>> after <<$after>>"
import sys
def parse(t):
    jobs, root = {}, None
    for l in t.split("\n"):
        w = l.split()
        if len(w) == 3 and w[1] == "usage_usec":
            if w[0] == "root":
                root = int(w[2])
            else:
                jobs[w[0]] = int(w[2])
    return jobs, root
j1, r1 = parse(sys.argv[1])
j2, r2 = parse(sys.argv[2])
assert j1 and r1 is not None and r2 is not None, (j1, r1, r2)
# the jobs running before the kill run on under the same names (the resumed run names them as
# before), their usage and the root's never back; a job the resumed run started since may be there too
assert set(j1) <= set(j2), (sorted(j1), sorted(j2))
assert all(j2[k] >= j1[k] for k in j1) and r2 >= r1, (j1, j2, r1, r2)
print("ok")
PY
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pid=

# --- G. Kubernetes ------------------------------------------------------------------------------------
cat >"$tmp/k.jsonl" <<'TR'
{"type":"job","jobId":"p","podTemplate":{"requests":{"cpu":"2","memory":"256Mi"}},"work":{"cpuUnits":100000}}
{"type":"job","jobId":"q","podTemplate":{"requests":{"cpu":"1"}},"work":{"cpuUnits":3},"sensitivity":{"cpu":0}}
TR
root=$tmp/k
node=k-0
SIM_WORKLOAD_TRACE_PATH=$tmp/k.jsonl serve_start "$url" "$tmp/err" --spec tests/runs/cgroups-k8s.yaml --root "$root" \
    --addr 127.0.0.1:$port --tick 20ms || { bad "serve k8s: $(cat "$tmp/err")"; finish; }
B=$CG/kubepods.slice/kubepods-burstable.slice
# a file held open while its job ends reads ENODEV, as kernfs answers for a removed cgroup
X -- /usr/bin/python3 - "$B" >"$tmp/nodev.out" 2>&1 <<'PY' &
import errno, glob, os, sys, time
for _ in range(200):  # both pods
    if len(glob.glob(sys.argv[1] + "/kubepods-burstable-pod*")) == 2:
        break
    time.sleep(0.05)
fs = {d: open(d + "/cpu.stat") for d in glob.glob(sys.argv[1] + "/kubepods-burstable-pod*")}
for _ in range(300):
    gone = [d for d in fs if not os.path.exists(d)]
    if gone:
        break
    time.sleep(0.05)
f = fs[gone[0]]
f.seek(0)
try:
    f.read()
    print("read after the job ended")
except OSError as e:
    print("errno", errno.errorcode[e.errno])
PY
nodev=$!
for _ in $(seq 100); do
    # once the short pod q has ended, p's directory is the only one (p: 2 CPUs, its process 4194304)
    out=$(X --intercept seccomp -- sh -c "ls $B; [ \$(ls -d $B/kubepods-burstable-pod*.slice | wc -l) = 1 ] && cd $B/kubepods-burstable-pod*.slice && cat cpu.weight memory.max && ls -d cri-containerd-* && cat cri-containerd-*/cgroup.procs && grep usage_usec cri-containerd-*/cpu.stat" 2>&1)
    grep -q usage_usec <<<"$out" && break
    sleep 0.1
done
if grep -Eq '^kubepods-burstable-pod[0-9a-f]{8}_[0-9a-f]{4}_4[0-9a-f]{3}_[89ab][0-9a-f]{3}_[0-9a-f]{12}\.slice$' <<<"$out" &&
   grep -qx 79 <<<"$out" && grep -qx max <<<"$out" && grep -Eq '^cri-containerd-[0-9a-f]{64}\.scope$' <<<"$out" &&
   grep -qx 4194304 <<<"$out"; then ok; else bad "kubernetes layout: $out"; fi
wait $nodev
grep -qx 'errno ENODEV' "$tmp/nodev.out" && ok || bad "a file of an ended job: $(cat "$tmp/nodev.out")"
finish
