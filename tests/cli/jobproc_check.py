"""jobproc_check: the node's job processes as a program on the node sees them (run under `hwemu exec
--node NODE`, either route), printed as one JSON object and checked by tests/cli/test_jobproc.sh:
  jobproc_check.py
- pids: the /proc listing's job processes (pids >= 4194304, docs/interfaces.md "Jobs as processes")
  and whether the listing also holds "self" and this process's own pid (the host's entries);
- per job process: comm, state, num_threads, starttime, rss, the cgroup its /proc/<pid>/cgroup
  names, its cmdline, exe, status's Pid and Threads, task/<pid>/stat's pid, and the bracket test
  of its CPU time: utime (field 14) and stime (15) read before and after the job cgroup's cpu.stat
  enclose ⌊user_usec / 10000⌋ and ⌊system_usec / 10000⌋ (the same counter, seg_view.h), and never
  decrease over the reads;
- its threads against the cgroup's cpuset.cpus.effective, rss against memory.current;
- selfStatPid: the first field of /proc/self/stat (the host's: this process's own pid)."""
import json
import os
import sys

BASE = 4194304


def rd(p):
    with open(p, "rb") as f:
        return f.read().decode()


def cpus(text):
    out = []
    for part in text.strip().split(","):
        if part:
            a, _, b = part.partition("-")
            out += range(int(a), int(b or a) + 1)
    return out


def stat_fields(pid):
    t = rd(f"/proc/{pid}/stat")
    comm = t[t.index("(") + 1:t.rindex(")")]
    rest = t[t.rindex(")") + 2:].split()
    return comm, [None, None] + rest  # so that f[k] is the man page's field k + 1 (0-based k)


names = os.listdir("/proc")
out = {"self": "self" in names, "own": str(os.getpid()) in names, "pids": [], "jobs": [],
       "selfStatPid": int(rd("/proc/self/stat").split()[0]), "mypid": os.getpid()}
for n in sorted(names):
    if n.isdigit() and int(n) >= BASE:
        out["pids"].append(int(n))
for pid in out["pids"]:
    try:
        comm, f1 = stat_fields(pid)
        cg = rd(f"/proc/{pid}/cgroup").strip()
        path = cg.split("::", 1)[1]
        unit = "/sys/fs/cgroup" + path
        if "/step_batch/" in unit:  # SLURM: the task's; the job's cpu.stat is the job's directory
            unit = unit[:unit.index("/step_batch/")]
        cs = dict(l.split() for l in rd(unit + "/cpu.stat").splitlines())
        comm2, f2 = stat_fields(pid)
        u1, s1, u2, s2 = int(f1[13]), int(f1[14]), int(f2[13]), int(f2[14])
        uu, su = int(cs["user_usec"]) // 10000, int(cs["system_usec"]) // 10000
        status = dict(l.split(":\t", 1) for l in rd(f"/proc/{pid}/status").splitlines() if ":\t" in l)
        tstat = rd(f"/proc/{pid}/task/{pid}/stat").split()
        tasks = os.listdir(f"/proc/{pid}/task")
        out["jobs"].append({
            "pid": pid, "comm": comm, "commFile": rd(f"/proc/{pid}/comm").strip(), "state": f1[2],
            "threads": int(f1[19]), "cpusetCpus": len(cpus(rd(unit + "/cpuset.cpus.effective"))),
            "starttime": int(f1[21]), "uptimeTicks": float(rd("/proc/uptime").split()[0]) * 100,
            "rssPages": int(f1[23]), "memoryCurrent": int(rd(unit + "/memory.current")),
            "cgroup": path, "procsListsIt": str(pid) in rd("/sys/fs/cgroup" + path + "/cgroup.procs").split()
            if "/step_batch/" in path or "cri-containerd" in path else None,
            "cmdline": rd(f"/proc/{pid}/cmdline").split("\0"), "exe": os.readlink(f"/proc/{pid}/exe"),
            "statusPid": int(status["Pid"]), "statusThreads": int(status["Threads"]), "statusName": status["Name"],
            "taskStatPid": int(tstat[0]), "tasks": tasks, "statm": rd(f"/proc/{pid}/statm").split(),
            "utime": [u1, uu, u2], "stime": [s1, su, s2],
            "bracket": u1 <= uu <= u2 and s1 <= su <= s2,
        })
    except FileNotFoundError:  # ended between the listing and the reads
        continue
json.dump(out, sys.stdout)
print()
