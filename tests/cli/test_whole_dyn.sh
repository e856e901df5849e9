#!/usr/bin/env bash
# The node's load, memory and per-CPU frequency as stock tools read them (issue 14), through both
# routes (the shim for psutil and coreutils, the seccomp supervisor for node_exporter, a Go binary):
#   - /proc/stat, /proc/uptime, /proc/loadavg, /proc/meminfo: psutil 5.9.4 (Debian python3-psutil)
#     cpu_percent per CPU = the 60 % baseLoad of tests/specs/whole-dyn.yaml on every CPU;
#     virtual_memory total = node.capacity.memoryKi × 1024 and percent = 100 - available/total
#     follows memoryIntensity 0.25 (used share 0.04 + 0.8·0.25 = 24 %, render_proc/node.c);
#     boot_time = now - uptime; getloadavg (glibc's, which reads /proc/loadavg with an internal
#     open: the shim's getloadavg) = /proc/loadavg, rising from 0 toward the 58 running tasks (96 × 0.6)
#   - prometheus-node-exporter's cpu, meminfo, loadavg collectors under hwemu exec (seccomp):
#     node_cpu_seconds_total for 96 CPUs with idle/(idle+busy) = 0.4, node_memory_MemTotal_bytes
#     = memoryKi × 1024 (procfs parses `kB` × 1024), node_load1 = /proc/loadavg's first field
#   - counters never go back across an engine restart (ledger at the freeze horizon)
#   - DVFS: throttling one CPU, then every CPU of package 0, through scaling_max_freq files (as
#     an agent writes them), lowers package 0's power by about the throttled share and leaves
#     package 1 unchanged (physics_cpu.c: package power = Σ CPUs' share of the model)
# Usage: test_whole_dyn.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid= bg=
trap '[ -n "$bg" ] && kill $bg 2>/dev/null; [ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for tool in curl prometheus-node-exporter nproc sensors tlp-stat; do
    command -v $tool >/dev/null || { bad "$tool is not installed (scripts/install-deps.sh installs it)"; finish; }
done
/usr/bin/python3 -c 'import psutil' 2>/dev/null || { bad "python3-psutil is not installed"; finish; }
port=$(free_port)
url=http://127.0.0.1:$port
start() {
    serve_start "$url" "$tmp/err" --spec tests/specs/whole-dyn.yaml --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms ||
        { bad "serve: $(cat "$tmp/err")"; finish; }
}
start
X() { "$hwemu" exec --root "$tmp/r" --node "$@"; }
mem_ki=$(awk '/memoryKi/ {gsub(/[{},]/, " "); for (i = 1; i <= NF; i++) if ($i == "v:") print $(i+1)}' \
    profiles/intel-xeon-2s-rapl.yaml)

# psutil through the shim
X intel-0 -- /usr/bin/python3 - "$mem_ki" >"$tmp/ps" 2>&1 <<'PY' || bad "psutil: $(cat "$tmp/ps")"
import psutil, sys, time
want_total = int(sys.argv[1]) * 1024
pc = psutil.cpu_percent(interval=0.6, percpu=True)
assert len(pc) == 96, len(pc)
assert all(abs(p - 60) <= 2.5 for p in pc), pc
vm = psutil.virtual_memory()
assert vm.total == want_total, (vm.total, want_total)
assert abs(vm.percent - 24) < 3, vm
up = float(open("/proc/uptime").read().split()[0])
assert abs(psutil.boot_time() - (time.time() - up)) <= 2, (psutil.boot_time(), time.time(), up)
la = psutil.getloadavg()  # glibc getloadavg (os.getloadavg), which the shim answers from the node's file
fl = tuple(float(x) for x in open("/proc/loadavg").read().split()[:3])
assert 0 <= la[0] <= 58 and (la == fl or psutil.getloadavg() == fl), (la, fl)
stat = open("/proc/stat").read().splitlines()
assert stat[0].startswith("cpu  ") and stat[96].startswith("cpu95 ") and not stat[97].startswith("cpu"), stat[:2]
print("ok")
PY
[ "$(tail -1 "$tmp/ps")" = ok ] && ok

# the AMD node: 384 CPUs, and the same numbers from /proc/stat twice in a row never go back
X amd-0 -- /usr/bin/python3 - >"$tmp/ps2" 2>&1 <<'PY' || bad "psutil amd: $(cat "$tmp/ps2")"
import psutil
a = psutil.cpu_times(percpu=True)
assert len(a) == 384, len(a)
b = psutil.cpu_times(percpu=True)
assert all(y.idle >= x.idle and y.user >= x.user for x, y in zip(a, b))
print("ok")
PY
[ "$(tail -1 "$tmp/ps2")" = ok ] && ok

# node_exporter (seccomp route): cpu, meminfo, loadavg collectors
np=$(free_port)
# (hwemu exec itself in the background, not the X function: $! must be exec's pid, which passes
# the signal on to the exporter; a subshell's pid would leave both running after the test)
"$hwemu" exec --root "$tmp/r" --node intel-0 --intercept seccomp -- prometheus-node-exporter --web.listen-address=127.0.0.1:$np \
    --collector.disable-defaults --collector.cpu --collector.meminfo --collector.loadavg >"$tmp/ne.log" 2>&1 &
bg=$!
# scraped once cpu 3 has 4 s of CPU time (the modes are in /proc/stat's 0.01 s ticks: a scrape in
# the first tenth of a second shows 0.03 idle of 0.08, a share of 0.375), up to 30 s
cpu3_total() { awk '/^node_cpu_seconds_total\{cpu="3",/ { t += $2 } END { print t + 0 }' "$tmp/m1"; }
for _ in $(seq 300); do
    curl -sf http://127.0.0.1:$np/metrics >"$tmp/m1" && awk -v t="$(cpu3_total)" 'BEGIN { exit !(t >= 4) }' && break
    sleep 0.1
done
kill -TERM $bg; wait $bg 2>/dev/null; bg=
for c in cpu meminfo loadavg; do
    grep -q "^node_scrape_collector_success{collector=\"$c\"} 1$" "$tmp/m1" && ok || bad "$c collector failed: $(tail -3 "$tmp/ne.log")"
done
[ "$(grep -c '^node_cpu_seconds_total{cpu="[0-9]*",mode="idle"}' "$tmp/m1")" = 96 ] && ok ||
    bad "node_cpu_seconds_total idle of 96 CPUs: $(grep -c 'mode="idle"' "$tmp/m1")"
# (each of the five modes that move is cut to 0.01 s: 0.05 s / the total on top of the 0.01 allowed)
awk '/^node_cpu_seconds_total\{cpu="3",/ { if ($1 ~ /idle/) i = $2; else b += $2 } END { t = i + b; exit !(t >= 4 && (i / t - 0.4) ^ 2 < (0.01 + 0.05 / t) ^ 2) }' "$tmp/m1" \
    && ok || bad "cpu 3 idle share is not 0.4: $(grep 'cpu="3"' "$tmp/m1")"
awk -v w="$mem_ki" '$1 == "node_memory_MemTotal_bytes" { g = $2 } END { exit !(g == w * 1024) }' "$tmp/m1" \
    && ok || bad "node_memory_MemTotal_bytes: $(grep MemTotal "$tmp/m1") want $((mem_ki * 1024))"
grep -q '^node_load1 ' "$tmp/m1" && ok || bad "no node_load1"

# temperatures: lm-sensors 3.6.0 names the chips from the device and subsystem links as the
# kernel's coretemp and k10temp do (coretemp-isa-0000/0001, k10temp-pci-00c3/00cb for 00:18.3 and
# 00:19.3: lm-sensors 3.6.0 lib/sysfs.c, lib/data.c); coretemp has the package and 24 cores with high/crit (TjMax 100 °C
# assumed), k10temp Tctl and Tccd1..12 (EPYC 9654: 12 CCDs); psutil sees the same chips
X intel-0 -- sensors -j >"$tmp/sj" 2>&1 || bad "sensors -j intel: $(head -3 "$tmp/sj")"
/usr/bin/python3 - "$tmp/sj" <<'PY' && ok || bad "sensors -j intel: $(head -c 400 "$tmp/sj")"
import json, sys
d = json.load(open(sys.argv[1]))
assert {"coretemp-isa-0000", "coretemp-isa-0001"} <= set(d), list(d)
c = d["coretemp-isa-0000"]
assert c["Adapter"] == "ISA adapter" and len([k for k in c if k.startswith("Core ")]) == 24, c.keys()
p = c["Package id 0"]
assert p["temp1_crit"] == 100 and p["temp1_max"] == 90 and 15 < p["temp1_input"] < 100, p
assert all(c[k][[f for f in c[k] if f.endswith("_input")][0]] <= p["temp1_input"] for k in c if k.startswith("Core ")), c
PY
X amd-0 -- sensors -j >"$tmp/sa" 2>&1 || bad "sensors -j amd: $(head -3 "$tmp/sa")"
/usr/bin/python3 - "$tmp/sa" <<'PY' && ok || bad "sensors -j amd: $(head -c 400 "$tmp/sa")"
import json, sys
d = json.load(open(sys.argv[1]))
assert {"k10temp-pci-00c3", "k10temp-pci-00cb"} <= set(d), list(d)
c = d["k10temp-pci-00c3"]
assert c["Adapter"] == "PCI adapter" and "Tctl" in c and "Tccd12" in c and "Tccd13" not in c, c.keys()
assert (c["Tctl"]["temp1_input"] * 8) % 1 == 0, c["Tctl"]  # 0.125 °C steps
PY
X intel-0 -- /usr/bin/python3 -c '
import psutil
t = psutil.sensors_temperatures()
assert len(t["coretemp"]) == 2 * 25 and t["coretemp"][0].label == "Package id 0" and t["coretemp"][0].critical == 100, t
print("ok")' 2>&1 | grep -qx ok && ok || bad "psutil sensors_temperatures"

# nproc and Python's os.sched_getaffinity: the node's CPUs (the shim answers sched_getaffinity),
# and a Go program's runtime.NumCPU through the supervisor is checked by node_exporter's
# node_cpu lines above (96 CPUs from /proc/stat)
[ "$(X intel-0 -- nproc)" = 96 ] && [ "$(X amd-0 -- nproc)" = 384 ] && ok || bad "nproc: $(X intel-0 -- nproc) $(X amd-0 -- nproc)"
[ "$(X amd-0 -- /usr/bin/python3 -c 'import os; print(len(os.sched_getaffinity(0)))')" = 384 ] && ok || bad "os.sched_getaffinity"

# cpupower idle-info (linux-cpupower 6.1): intel_idle/menu with skx_cstates on the 8260 (POLL,
# C1 2 µs, C1E 10 µs, C6 133 µs: drivers/idle/intel_idle.c), acpi_idle with POLL C1 C2 on EPYC;
# usage and time grow between two reads by the idle share (0.4 of the time)
X intel-0 -- cpupower idle-info >"$tmp/ii" 2>/dev/null
grep -qx 'CPUidle driver: intel_idle' "$tmp/ii" && grep -qx 'CPUidle governor: menu' "$tmp/ii" &&
    grep -qx 'Available idle states: POLL C1 C1E C6' "$tmp/ii" && grep -A2 -x 'C6:' "$tmp/ii" | grep -qx 'Latency: 133' &&
    ok || bad "cpupower idle-info intel: $(head -8 "$tmp/ii")"
X amd-0 -- cpupower idle-info >"$tmp/ia" 2>/dev/null
grep -qx 'CPUidle driver: acpi_idle' "$tmp/ia" && grep -qx 'Available idle states: POLL C1 C2' "$tmp/ia" &&
    grep -A1 -x 'C1:' "$tmp/ia" | grep -qx 'Flags/Description: ACPI FFH MWAIT 0x0' && ok || bad "cpupower idle-info amd: $(head -8 "$tmp/ia")"
C6=/sys/devices/system/cpu/cpu5/cpuidle/state3/time
s1=$(date +%s.%N); t1=$("$hwemu" cat --root "$tmp/r" --node intel-0 $C6); e1=$(date +%s.%N); sleep 1
s2=$(date +%s.%N); t2=$("$hwemu" cat --root "$tmp/r" --node intel-0 $C6); e2=$(date +%s.%N)
# 0.4 idle · 69.5 % in C6 = 278000 µs a second; the reads happened between s2 - e1 and e2 - s1
# apart (each read may also trail the engine by one 200 ms tick when a tick is late: 10 % margin
# and 0.2 s)
awk -v a="$t1" -v b="$t2" -v s1="$s1" -v e1="$e1" -v s2="$s2" -v e2="$e2" \
    'BEGIN { d = b - a; exit !(d >= 278000 * (s2 - e1 - 0.2) * 0.9 && d <= 278000 * (e2 - s1 + 0.2) * 1.1) }' &&
    ok || bad "C6 time of cpu5: $t1 -> $t2 between reads $s1..$e1 and $s2..$e2"

# tlp-stat -p (Debian tlp 1.5.0) shows the intel_pstate globals: num_pstates and turbo_pct from
# the 100 MHz ratios min 10, base 24, turbo 39 (intel_pstate.c: 39-10+1 = 30 P-states, turbo
# share 100 - 15·100/30 = 50 %), min_perf_pct 10·100/39 = 25; max_perf_pct written through the
# file limits the running frequency of every CPU (3.9 GHz · 50 % = 1.95 GHz)
X intel-0 -- tlp-stat -p >"$tmp/tlp" 2>&1
grep -Eq '^/sys/devices/system/cpu/intel_pstate/num_pstates += +30$' "$tmp/tlp" &&
    grep -Eq '^/sys/devices/system/cpu/intel_pstate/turbo_pct += +50 \[%\]$' "$tmp/tlp" &&
    grep -Eq '^/sys/devices/system/cpu/intel_pstate/min_perf_pct += +25 \[%\]$' "$tmp/tlp" &&
    grep -Eq '^/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver += intel_pstate$' "$tmp/tlp" && ok ||
    bad "tlp-stat -p: $(grep intel_pstate "$tmp/tlp")"
X intel-0 -- sh -c 'echo 50 > /sys/devices/system/cpu/intel_pstate/max_perf_pct' || bad "max_perf_pct write"
for _ in $(seq 100); do
    f=$("$hwemu" cat --root "$tmp/r" --node intel-0 /sys/devices/system/cpu/cpufreq/policy7/scaling_cur_freq)
    [ "$f" -le 1950000 ] && break
    sleep 0.1
done
[ "$f" -le 1950000 ] && ok || bad "max_perf_pct 50 did not bring policy7 to 1.95 GHz: $f"
X intel-0 -- sh -c 'echo 100 > /sys/devices/system/cpu/intel_pstate/max_perf_pct' || bad "max_perf_pct back"

# counters across a restart
before=$(X intel-0 -- sh -c 'head -1 /proc/stat')
kill $pid; wait $pid 2>/dev/null; pid=
start
after=$(X intel-0 -- sh -c 'head -1 /proc/stat')
/usr/bin/python3 -c '
import sys
a = [int(x) for x in sys.argv[1].split()[1:]]; b = [int(x) for x in sys.argv[2].split()[1:]]
assert all(y >= x for x, y in zip(a, b)) and sum(b) > 0, (a, b)' "$before" "$after" \
    && ok || bad "/proc/stat went back across a restart: $before -> $after"

# DVFS through the files: one CPU, then every CPU of package 0
pkgw() { curl -s "$url/telemetry/intel-0" | /usr/bin/python3 -c '
import json, sys; d = json.load(sys.stdin); print(" ".join("%.6f" % p["powerWatts"] for p in d["packages"]))'; }
P=/sys/devices/system/cpu/cpufreq
for i in $(seq 0 95); do "$hwemu" write --root "$tmp/r" --node intel-0 $P/policy$i/scaling_governor performance || bad "governor $i"; done
sleep 4 # the frequency ramp (physics.cpu.freqRampMS 500) settles: e^-8
read -r p0 p1 <<<"$(pkgw)"
"$hwemu" write --root "$tmp/r" --node intel-0 $P/policy0/scaling_max_freq 1000000 || bad "write policy0"
sleep 3
read -r q0 q1 <<<"$(pkgw)"
# /proc/cpuinfo's cpu MHz follows each CPU's running frequency (psutil cpu_freq(percpu) reads it
# when there are as many lines as policies: psutil/_pslinux.py cpu_freq)
X intel-0 -- /usr/bin/python3 -c '
import psutil
f = psutil.cpu_freq(percpu=True)
# still ramping (freqRampMS 500): within 15 MHz of 1.0 GHz (cpu0) and 3.9 GHz (cpu1)
assert len(f) == 96 and abs(f[0].current - 1000) < 15 and abs(f[1].current - 3900) < 15, f[:2]
mhz = [l for l in open("/proc/cpuinfo") if l.startswith("cpu MHz")]
assert len(mhz) == 96 and mhz[0].startswith("cpu MHz\t\t: 10") and mhz[0].endswith("\n") and len(mhz[0].split(".")[1]) == 4, mhz[:2]
print("ok")' 2>&1 | grep -qx ok && ok || bad "cpu MHz per CPU: $(X intel-0 -- grep -m2 MHz /proc/cpuinfo)"
pkg0=$(for i in $(seq 0 95); do [ "$("$hwemu" cat --root "$tmp/r" --node intel-0 /sys/devices/system/cpu/cpu$i/topology/physical_package_id)" = 0 ] && echo $i; done)
for i in $pkg0; do "$hwemu" write --root "$tmp/r" --node intel-0 $P/policy$i/scaling_max_freq 1000000 || bad "write policy$i"; done
sleep 3
read -r r0 r1 <<<"$(pkgw)"
n0=$(echo $pkg0 | wc -w)
/usr/bin/python3 -c '
import sys
p0, p1, q0, q1, r0, r1, n = map(float, sys.argv[1:])
one = (p0 - q0) / (p0 - r0)   # the share one throttled CPU takes of the whole package drop
assert p0 > r0 + 10, (p0, r0)
assert abs(one - 1 / n) < 0.2 / n, (one, 1 / n)
assert abs(q1 - p1) < 0.05 and abs(r1 - p1) < 0.05, (p1, q1, r1)
' "$p0" "$p1" "$q0" "$q1" "$r0" "$r1" "$n0" && ok || bad "DVFS: package 0 $p0 -> $q0 -> $r0 W, package 1 $p1 -> $q1 -> $r1 W ($n0 CPUs in package 0)"
finish
