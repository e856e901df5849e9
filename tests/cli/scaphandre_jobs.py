"""scaphandre_jobs: Scaphandre 1.0.0's per-process series for the jobs of a workload run, interval by
interval, next to the same counters read by this process (run it under `hwemu exec --node NODE`,
so the shim answers its reads of /proc as it answers Scaphandre's):
  scaphandre_jobs.py SCAPH_URL COUNT [INTERVAL_S]
prints one JSON object per line, one per interval between two refreshing scrapes:
  {"t0", "t1" (wall clock of the two scrapes), "hostW" (scaph_host_power_microwatts),
   "jobs": {pid: {"scaphW", "scaphShare" (= scaphW / hostW), "refShare"}}}
for every job process (pid >= 4194304) Scaphandre exports.

Scaphandre's rule (src/sensors/mod.rs get_process_power_consumption_microwatts, sysinfo 0.28
src/linux/process.rs compute_cpu_usage and system.rs clear_procs): a process's power is the host
power times cpu_usage / 100 / the number of CPUs, where cpu_usage = Δ(utime + stime) of its
/proc/<pid>/stat over Δ(the `cpu` line's total of /proc/stat) / CPUs × 100, both between two
refreshes. So the share is Δ(utime + stime) / Δ(total ticks): refShare is that share from this
process's own reads of /proc/<pid>/stat and /proc/stat right before each refreshing scrape.
A process Scaphandre has seen in one refresh only has cpu_usage 0 (compute_cpu_usage needs two)."""
import json
import re
import sys
import time
import urllib.request

BASE = 4194304


def scrape(url):
    out = {}
    for line in urllib.request.urlopen(url, timeout=20).read().decode().splitlines():
        m = re.match(r'^(\w+)(?:\{(.*)\})? (\S+)$', line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
            out.setdefault(m.group(1), []).append((labels, float(m.group(3))))
    return out


def ticks():
    """({pid: utime + stime} of the job processes, total ticks of /proc/stat's cpu line)."""
    import os
    jobs = {}
    for n in os.listdir("/proc"):
        if n.isdigit() and int(n) >= BASE:
            try:
                t = open(f"/proc/{n}/stat").read()
            except OSError:
                continue
            f = t[t.rindex(")") + 2:].split()
            jobs[int(n)] = int(f[11]) + int(f[12])
    cpu = open("/proc/stat").readline().split()
    return jobs, sum(int(x) for x in cpu[1:9])  # user .. steal (sysinfo's total_time; guest is 0)


def main():
    url, count = sys.argv[1], int(sys.argv[2])
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 2.5
    time.sleep(2.1)  # past Scaphandre's 2 s refresh guard
    prev_t = ticks()
    scrape(url)
    prev_stamp = time.time()
    for _ in range(count):
        time.sleep(interval)
        t = ticks()
        s = scrape(url)
        stamp = time.time()
        host = next((v for _, v in s.get("scaph_host_power_microwatts", [])), None)
        row = {"t0": prev_stamp, "t1": stamp, "hostW": None if host is None else host / 1e6, "jobs": {}}
        dtot = t[1] - prev_t[1]
        for labels, v in s.get("scaph_process_power_consumption_microwatts", []):
            pid = int(labels.get("pid", "0"))
            if pid < BASE:
                continue
            ref = None
            if pid in t[0] and pid in prev_t[0] and dtot > 0:
                ref = (t[0][pid] - prev_t[0][pid]) / dtot
            row["jobs"][pid] = {"scaphW": v / 1e6, "cmdline": labels.get("cmdline"), "exe": labels.get("exe"),
                                "scaphShare": v / host if host else None, "refShare": ref}
        print(json.dumps(row), flush=True)
        prev_t, prev_stamp = t, stamp


if __name__ == "__main__":
    main()
