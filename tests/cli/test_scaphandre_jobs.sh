#!/usr/bin/env bash
# Scaphandre 1.0.0's per-process power for the jobs of a workload run (docs/interfaces.md "Jobs as
# processes"), scored two ways. One Intel RAPL node (intel-xeon-2s-rapl: 96 CPUs, two packages with
# a DRAM zone each), two steady jobs from the run's first tick to its stop: A 8 CPUs at 0.95, B 4 CPUs
# at 0.5 (both on package 0: placement takes the first package with room). Scaphandre runs on the
# preload route; tests/cli/scaphandre_jobs.py scrapes it every 2.5 s for 6 intervals.
#  (a) Scaphandre's own rule from the same counters: each job's exported power over the host power
#      (its share) against Δ(utime + stime) of the job's /proc/<pid>/stat over Δ(total ticks) of
#      /proc/stat, read by a second client on the node right before each refresh. Both shares come
#      from the same emulated counters; they differ by the ticks' truncation (utime and stime floored
#      at two reads: 2 ticks of the job's >= 500 per interval, 0.4 %; the total's 96 CPUs x 5 fields
#      floored, under 0.5 % of 24000) and by the time between Scaphandre's read of /proc/stat and its
#      read of the job's stat (sysinfo walks every host process in between): a change d of that gap
#      from one refresh to the next moves one interval's share by d / 2.5 s and the next one's back
#      by as much, so the sum over the intervals telescopes. Under CI's sanitizer run the gap moved
#      by up to 0.2 s (shares -5 %, +8 %, -7 % in consecutive intervals). Tolerance: 2 % of the
#      share summed over all intervals, and 20 % (0.5 s of gap change) for any one interval. This
#      checks that /proc/<pid>/stat carries the job's CPU time.
#  (b) against the engine's truth (jobs.jsonl after the run is stopped): each job's mean power over
#      its life, energy (cpu + dram) / (stop - start), against Scaphandre's mean over its intervals.
#      Scaphandre's model leaves the idle power of the free CPUs unowned and spreads the rest over
#      busy time; the truth splits idle power by held CPUs (docs/runs.md). The expected Scaphandre
#      power follows from the run's own figures: (package + DRAM energy of the node over the run) /
#      run time x the job's cgroupCpuSeconds / (96 CPUs x its life). Checked: Scaphandre's mean within
#      3 % of that expectation (the 2 % of (a), plus the 2.5 s-sampled window against the whole
#      life: steady loads, and the engine's pace, emulated over wall seconds, within 0.4 % here), so
#      its error against the truth is the expected gap within 3 %; both printed.
# Exit 77 when no Rust toolchain can build Scaphandre.
# Usage: test_scaphandre_jobs.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
build=$(cd "$(dirname "$hwemu")" && pwd)
py=/usr/bin/python3
tmp=$(mktemp -d)
pid= spid=
trap '[ -n "$spid" ] && kill $spid 2>/dev/null; [ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

need_scaphandre "$build" "$tmp"

cat >"$tmp/spec.yaml" <<'EOF2'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: scaphandre-jobs}
spec:
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 1}
EOF2
cat >"$tmp/trace.jsonl" <<'EOF2'
{"type":"job","jobId":"A-compute","podTemplate":{"requests":{"cpu":"8"}},"work":{"cpuUnits":1000000},"workloadClass":{"cpu":"cpu.compute_bound"},"workloadProfile":{"cpuUtilization":0.95},"sensitivity":{"cpu":0}}
{"type":"job","jobId":"B-half","podTemplate":{"requests":{"cpu":"4"}},"work":{"cpuUnits":1000000},"workloadProfile":{"cpuUtilization":0.5},"sensitivity":{"cpu":0}}
EOF2
port=$(free_port)
url=http://127.0.0.1:$port
SIM_WORKLOAD_TRACE_PATH=$tmp/trace.jsonl SIM_RUNS_DIR=$tmp/runs serve_start "$url" "$tmp/serve.err" \
    --spec "$tmp/spec.yaml" --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve did not come up: $(cat "$tmp/serve.err")"; finish; }
sport=$(free_port)
surl=http://127.0.0.1:$sport/metrics
"$hwemu" exec --root "$tmp/r" --node intel-0 -- "$scaph" prometheus -a 127.0.0.1 -p "$sport" >"$tmp/scaph.log" 2>&1 &
spid=$!
for _ in $(seq 300); do
    curl -sf -o /dev/null "$surl" && break
    kill -0 $spid 2>/dev/null || break
    sleep 0.1
done
curl -sf -o /dev/null "$surl" || { bad "Scaphandre did not answer: $(tail -5 "$tmp/scaph.log")"; finish; }
# one refresh more, so that both jobs have been seen twice before the first checked interval
sleep 2.2
curl -sf -o /dev/null "$surl"
"$hwemu" exec --root "$tmp/r" --node intel-0 -- "$py" tests/cli/scaphandre_jobs.py "$surl" 6 2.5 >"$tmp/rows.jsonl" 2>"$tmp/rows.err" ||
    bad "scaphandre_jobs.py: $(tail -3 "$tmp/rows.err")"
run=$(curl -s "$url/runs" | "$py" -c 'import json, sys; print(json.load(sys.stdin)["runs"][0]["runId"])')
curl -s -X POST "$url/runs/$run/stop" >/dev/null
for _ in $(seq 100); do
    [ -s "$tmp/runs/$run/summary.json" ] && break
    sleep 0.1
done
"$py" - "$tmp/rows.jsonl" "$tmp/runs/$run" <<'PY' && ok || bad "Scaphandre's per-job power (above)"
import json, os, sys
from exposition import fails, report
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
run = sys.argv[2]
jobs = {j["pid"]: j for j in (json.loads(l) for l in open(os.path.join(run, "jobs.jsonl")) if l.strip())}
summary = json.load(open(os.path.join(run, "summary.json")))
node = summary["nodes"][0]
if len(rows) < 6:
    fails.append(f"{len(rows)} intervals, expected 6")
# (a) each interval: Scaphandre's share against the stat files' share, then over all intervals
summed = {4194304: [0.0, 0.0], 4194305: [0.0, 0.0]}
for i, r in enumerate(rows):
    for pid in (4194304, 4194305):
        j = r["jobs"].get(str(pid))
        if j is None or j["scaphShare"] is None or j["refShare"] is None:
            fails.append(f"interval {i + 1}: no series or share for pid {pid}: {r['jobs'].get(str(pid))}")
            continue
        err = (j["scaphShare"] - j["refShare"]) / j["refShare"]
        print(f"(a) interval {i + 1} pid {pid}: Scaphandre {j['scaphW']:.3f} W = host {r['hostW']:.3f} W x "
              f"{j['scaphShare'] * 100:.4f} %; /proc/<pid>/stat share {j['refShare'] * 100:.4f} % ({err * 100:+.3f} %)")
        if abs(err) > 0.20:
            fails.append(f"(a) interval {i + 1} pid {pid}: share {j['scaphShare']} vs {j['refShare']}")
        dt = r["t1"] - r["t0"]
        summed[pid][0] += j["scaphShare"] * dt
        summed[pid][1] += j["refShare"] * dt
        want = jobs.get(pid, {}).get("jobId")
        if j["cmdline"] != f"hwemu-job{want}" or j["exe"] != "/usr/bin/hwemu-job":
            fails.append(f"pid {pid}: labels cmdline={j['cmdline']!r} exe={j['exe']!r}, expected hwemu-job{want}")
for pid, (scaph_s, ref_s) in summed.items():
    err = (scaph_s - ref_s) / ref_s if ref_s else float("inf")
    print(f"(a) all intervals pid {pid}: Scaphandre's share {err * 100:+.3f} % from the stat files'")
    if not abs(err) <= 0.02:
        fails.append(f"(a) all intervals pid {pid}: share {scaph_s} vs {ref_s} (share x s)")
# (b) mean powers: Scaphandre, its rule from the engine's figures, the truth
run_s = summary["timeSec"]
host_w = (node["packageDeltaMicrojoules"] + node["dramDeltaMicrojoules"]) / 1e6 / run_s
for pid in (4194304, 4194305):
    j = jobs.get(pid)
    if j is None:
        fails.append(f"jobs.jsonl has no pid {pid}")
        continue
    life = (j["endSec"] if j["endSec"] >= 0 else run_s) - j["startSec"]
    truth = (j["energyJoules"]["cpu"] + j["energyJoules"]["dram"]) / life
    rule = host_w * j["cgroupCpuSeconds"] / (96 * life)
    ivs = [(r["jobs"][str(pid)]["scaphW"], r["t1"] - r["t0"]) for r in rows if str(pid) in r["jobs"]]
    scaph = sum(w * dt for w, dt in ivs) / sum(dt for _, dt in ivs) if ivs else float("nan")
    print(f"(b) {j['jobId']} (pid {pid}, {len(j['cpus'])} CPUs): truth {truth:.3f} W, Scaphandre {scaph:.3f} W "
          f"({(scaph - truth) / truth * 100:+.2f} %), its rule from the run's figures {rule:.3f} W "
          f"(expected gap {(rule - truth) / truth * 100:+.2f} %; measured against it {(scaph - rule) / rule * 100:+.3f} %)")
    if not abs(scaph - rule) <= 0.03 * rule:
        fails.append(f"(b) {j['jobId']}: Scaphandre {scaph} W vs its rule {rule} W")
print(f"node: packages + DRAM {host_w:.3f} W over {run_s:.1f} s; idle (unrequested) share "
      f"{node['idleMicrojoules'] / (node['counterDeltaMicrojoules'] or 1) * 100:.1f} % of the counters")
report()
PY
grep -h 'panicked' "$tmp/scaph.log" && bad "Scaphandre panicked (above)" || ok
finish
