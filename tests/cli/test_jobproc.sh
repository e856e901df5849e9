#!/usr/bin/env bash
# The jobs of a workload run as processes on their node (docs/interfaces.md "Jobs as processes"),
# through the preload shim and the seccomp supervisor (tests/cli/jobproc_check.py reads them as a
# program on the node):
#   A  /proc lists each running job's process (pid 4194304 + the job's index, the pid its cgroup.procs
#      shows) together with the host's entries: "self" and the reader's own pid, and /proc/self is
#      still the reader's own process; both routes list the same job pids
#   B  per job process: comm hwemu-job, state R, num_threads = the CPUs of its cgroup's cpuset,
#      starttime <= the node's uptime, rss = memory.current in pages, /proc/<pid>/cgroup names the
#      job's cgroup (which lists the pid), cmdline hwemu-job <jobId>, exe, status's Pid and
#      Threads, task/<pid>/stat; utime and stime read before and after its cgroup's cpu.stat
#      bracket ⌊user_usec / 10000⌋ and ⌊system_usec / 10000⌋ (the same counter: exact)
#   C  jobs.jsonl gives each job's pid; a job that ended has no /proc/<pid> any more (ENOENT on
#      both routes, and it is not listed), as an exited process
# Usage: test_jobproc.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$(realpath "$1")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
py=/usr/bin/python3

# a: 4 CPUs at 0.9, long; b: 2 CPUs at 0.5, ends after ~12 s (time for A and B on a loaded machine); c: 1 CPU at 0.8, long
cat >"$tmp/trace.jsonl" <<'TR'
{"type":"job","jobId":"a-compute","podTemplate":{"requests":{"cpu":"4","memory":"1Gi"}},"work":{"cpuUnits":100000},"workloadProfile":{"cpuUtilization":0.9},"sensitivity":{"cpu":0}}
{"type":"job","jobId":"b-short","podTemplate":{"requests":{"cpu":"2"}},"work":{"cpuUnits":24},"workloadProfile":{"cpuUtilization":0.5},"sensitivity":{"cpu":0}}
{"type":"job","jobId":"c-single","podTemplate":{"requests":{"cpu":"1"}},"work":{"cpuUnits":100000},"workloadProfile":{"cpuUtilization":0.8},"sensitivity":{"cpu":0}}
TR
port=$(free_port)
url=http://127.0.0.1:$port
root=$tmp/r
SIM_WORKLOAD_TRACE_PATH=$tmp/trace.jsonl SIM_RUNS_DIR=$tmp/runs serve_start "$url" "$tmp/err" \
    --spec tests/runs/cgroups-slurm.yaml --root "$root" --addr 127.0.0.1:$port --tick 100ms ||
    { bad "serve: $(cat "$tmp/err")"; finish; }
X() { "$hwemu" exec --root "$root" --node n-0 "$@"; }
for _ in $(seq 100); do
    [ "$(X -- sh -c 'ls -d /proc/419430[0-9] 2>/dev/null | wc -l')" = 3 ] && break
    sleep 0.1
done
sleep 1 # a few ticks of CPU time

# --- A and B, on each route -------------------------------------------------------------------------
for route in preload seccomp; do
    X --intercept $route -- $py tests/cli/jobproc_check.py >"$tmp/$route.json" 2>"$tmp/$route.err" ||
        { bad "$route: jobproc_check.py: $(cat "$tmp/$route.err")"; continue; }
    $py - "$tmp/$route.json" "$route" <<'PY' && ok || bad "$route (above)"
import json, sys
from exposition import fails, report
d, route = json.load(open(sys.argv[1])), sys.argv[2]
jobs = {j["pid"]: j for j in d["jobs"]}
names = {0: "a-compute", 1: "b-short", 2: "c-single"}
cpus = {0: 4, 1: 2, 2: 1}
if sorted(d["pids"]) != [4194304, 4194305, 4194306]:
    fails.append(f"job pids listed {d['pids']}, expected 4194304..4194306")
if not d["self"] or not d["own"] or d["selfStatPid"] != d["mypid"]:
    fails.append(f"the host's entries: self {d['self']}, own pid {d['own']}, /proc/self/stat pid {d['selfStatPid']} vs {d['mypid']}")
for pid, j in sorted(jobs.items()):
    k = pid - 4194304
    want = {"comm": "hwemu-job", "commFile": "hwemu-job", "statusName": "hwemu-job", "state": "R",
            "threads": cpus[k], "cpusetCpus": cpus[k], "statusThreads": cpus[k], "statusPid": pid,
            "taskStatPid": pid, "tasks": [str(pid)], "cmdline": ["hwemu-job", names[k], ""],
            "exe": "/usr/bin/hwemu-job", "rssPages": j["memoryCurrent"] // 4096, "procsListsIt": True,
            "bracket": True}
    for key, w in want.items():
        if j[key] != w:
            fails.append(f"pid {pid} {key}: {j[key]!r}, expected {w!r}")
    if not j["cgroup"].startswith("/system.slice/slurmstepd.scope/job_") or not j["cgroup"].endswith("/step_batch/user/task_0"):
        fails.append(f"pid {pid} cgroup {j['cgroup']}")
    if not 0 <= j["starttime"] <= j["uptimeTicks"]:
        fails.append(f"pid {pid} starttime {j['starttime']} vs uptime {j['uptimeTicks']} ticks")
    if j["utime"][1] < 1:
        fails.append(f"pid {pid}: no CPU time yet {j['utime']}")
    print(f"{route} pid {pid} ({names[k]}): utime {j['utime'][0]}<={j['utime'][1]}<={j['utime'][2]}, "
          f"stime {j['stime'][0]}<={j['stime'][1]}<={j['stime'][2]} ticks, {j['cgroup']}")
report()
PY
done
p1=$($py -c "import json; print(sorted(json.load(open('$tmp/preload.json'))['pids']))" 2>/dev/null)
p2=$($py -c "import json; print(sorted(json.load(open('$tmp/seccomp.json'))['pids']))" 2>/dev/null)
[ -n "$p1" ] && [ "$p1" = "$p2" ] && ok || bad "the routes list different job pids: $p1 / $p2"

# --- C. b ends: its process is gone --------------------------------------------------------------------
for _ in $(seq 400); do
    ls "$tmp"/runs/*/jobs.jsonl >/dev/null 2>&1 && grep -q '"b-short"' "$tmp"/runs/*/jobs.jsonl && break
    sleep 0.1
done
grep -h '"b-short"' "$tmp"/runs/*/jobs.jsonl 2>/dev/null | grep -q '"pid":4194305' && ok || bad "jobs.jsonl: $(cat "$tmp"/runs/*/jobs.jsonl 2>&1)"
for route in preload seccomp; do
    out=$(X --intercept $route -- sh -c 'cat /proc/4194305/stat 2>&1; ls /proc | grep -c "^419430[0-9]$"; cat /proc/4194304/comm')
    [ "$(grep -c 'No such file' <<<"$out")" = 1 ] && grep -qx 2 <<<"$out" && grep -qx hwemu-job <<<"$out" && ok ||
        bad "$route: an ended job's process: $out"
done
finish
