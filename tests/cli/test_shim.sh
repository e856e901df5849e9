#!/usr/bin/env bash
# libhwemu-shim.so and `hwemu exec` with real, unmodified programs: a C probe of the libc entry
# points (built plain, fortified and with 64-bit offsets), powercap-utils, linux-cpupower,
# coreutils and Python on an intel-xeon-2s-rapl node; an AMD energy-only node; a VM node
# without powercap; and the errors of `hwemu exec`.
# Usage: test_shim.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/err" --spec tests/specs/shim.yaml --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve: $(cat "$tmp/err")"; finish; }
X() { "$hwemu" exec --root "$tmp/r" --node "$@"; }
py=/usr/bin/python3
Z=/sys/class/powercap/intel-rapl:0

# The probe, three builds, one expected output (sysfs §1 for every line).
for flags in "-O0" "-O2 -D_FORTIFY_SOURCE=2" "-O2 -D_FORTIFY_SOURCE=2 -D_FILE_OFFSET_BITS=64"; do
    gcc $flags tests/shim/shim_probe.c -o "$tmp/probe" -lpthread || { bad "probe build $flags"; continue; }
    X intel-0 -- "$tmp/probe" >"$tmp/probe.out" 2>&1
    if diff <(grep -v '^open ' "$tmp/probe.out") tests/shim/shim_probe.expected >"$tmp/diff"; then ok; else
        bad "probe ($flags) differs from the kernel's answers:"; cat "$tmp/diff"; fi
    "$hwemu" write --root "$tmp/r" --node intel-0 $Z/constraint_0_power_limit_uw 165000000 || bad "reset PL1"
done

# powercap-utils: zones, constraints and live values; PL1 set and floored; ENODATA.
out=$(X intel-0 -- powercap-info -p intel-rapl)
grep -q "name: package-1" <<<"$out" && grep -q "name: long_term" <<<"$out" && grep -q "max_power_uw: 413000000" <<<"$out" \
    && ok || bad "powercap-info: $out"
e1=$(X intel-0 -- powercap-info -p intel-rapl -z 0 -j); sleep 0.05; e2=$(X intel-0 -- powercap-info -p intel-rapl -z 0 -j)
[ "$e2" -gt "$e1" ] && ok || bad "energy did not move between two powercap-info calls: $e1 $e2"
X intel-0 -- powercap-set -p intel-rapl -z 0 -c 0 -l 120000001 && ok || bad "powercap-set PL1"
[ "$(X intel-0 -- powercap-info -p intel-rapl -z 0 -c 0 -l)" = 120000000 ] && ok || bad "PL1 not floored"
err=$(X intel-0 -- powercap-set -p intel-rapl -z 0:0 -c 0 -l 5000000 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "No data available" <<<"$err" && ok || bad "disabled DRAM limit: rc=$rc $err"
sleep 3.5 # three PL1 windows
w=$(curl -s "$url/telemetry/intel-0" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["powerWatts"])')
"$py" -c "import sys; sys.exit(0 if $w <= 125 else 1)" && ok || bad "package 0 at $w W under a 120 W PL1"

# linux-cpupower: what it reports, and frequency-set on every CPU of the node.
out=$(X intel-0 -- cpupower -c 0 frequency-info 2>&1)
grep -q "driver: intel_pstate" <<<"$out" && grep -q "hardware limits: 1000 MHz - 3.90 GHz" <<<"$out" \
    && grep -q "available cpufreq governors: performance powersave" <<<"$out" && ok || bad "frequency-info: $out"
X intel-0 -- cpupower -c all frequency-set -u 2GHz >/dev/null 2>&1 && ok || bad "frequency-set -u"
[ "$(X intel-0 -- cat /sys/devices/system/cpu/cpufreq/policy95/scaling_max_freq)" = 2000000 ] && ok || bad "max freq on CPU 95"
X intel-0 -- cpupower -c all frequency-set -g performance >/dev/null 2>&1 && ok || bad "frequency-set -g"
[ "$(X intel-0 -- cat /sys/devices/system/cpu/cpu7/cpufreq/scaling_governor)" = performance ] && ok || bad "governor"
sleep 3 # the frequency ramps with freqRampMS (500 ms)
f=$(X intel-0 -- cat /sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq)
[ "$f" -le 2050000 ] && [ "$f" -gt 1500000 ] && ok || bad "running frequency $f under performance capped at 2 GHz"

# coreutils and Python.
[ "$(X intel-0 -- cat $Z/name)" = package-0 ] && ok || bad "cat"
X intel-0 -- cat $Z/energy_uj >"$tmp/e" && [ -s "$tmp/e" ] && ok || bad "cat to a file (copy_file_range falls back)"
out=$(X intel-0 -- "$py" -c "
import os
print(open('$Z/name').read().strip())
print(os.stat('$Z/energy_uj').st_size)
print(os.path.realpath('$Z'))
try:
    open('$Z/energy_uj', 'w')
except OSError as e:
    print(e.errno)
")
[ "$out" = $'package-0\n4096\n/sys/devices/virtual/powercap/intel-rapl/intel-rapl:0\n13' ] && ok || bad "python: $out"
[ "$(X intel-0 -- "$py" -c 'import os; print(os.cpu_count())')" = 96 ] && ok || bad "os.cpu_count"
out=$(X intel-0 -- ls -l /sys/class/powercap/ 2>&1)
grep -q "^lrwxrwxrwx 1 root root .* intel-rapl:1 -> ../../devices/virtual/powercap/intel-rapl/intel-rapl:1$" <<<"$out" \
    && ! grep -q "cannot access\|No such" <<<"$out" && ok || bad "ls -l: $out"
out=$(X intel-0 -- ls -l $Z/energy_uj 2>&1)
grep -q "^-r-------- 1 root root 4096 " <<<"$out" && ok || bad "ls -l energy_uj: $out"
n=$(X intel-0 -- find /sys/class/powercap/intel-rapl:0/ -name 'constraint_*_name' | wc -l)
[ "$n" = 3 ] && ok || bad "find found $n constraint names (2 package + 1 dram)"
out=$(X intel-0 -- grep -r long_term /sys/devices/virtual/powercap/intel-rapl/intel-rapl:1/)
[ "$(wc -l <<<"$out")" = 2 ] && ok || bad "grep -r: $out"
out=$(X intel-0 -- "$py" -c "
import os, glob
print(sorted(os.listdir('/sys/class/powercap')))
print(len(glob.glob('/sys/class/powercap/intel-rapl:*/name')))
print(len(os.listdir('/sys/devices/system/cpu/cpufreq')))
")
[ "$out" = $'[\'intel-rapl\', \'intel-rapl:0\', \'intel-rapl:0:0\', \'intel-rapl:1\', \'intel-rapl:1:0\']\n4\n96' ] && ok || bad "python listdir/glob: $out"
# 17: the zone's 12 attributes, its child zone, and device, power, subsystem, uevent (sysfs §3.2)
out=$(X intel-0 -- bash -c 'cd /sys/class/powercap/intel-rapl:1 && cat name && ls | wc -l')
[ "$out" = $'package-1\n17' ] && ok || bad "cd into the tree, then relative names (also in a child): $out"
out=$(X intel-0 -- "$py" -c "
import psutil
print(psutil.cpu_count(logical=True), psutil.cpu_count(logical=False), len(psutil.cpu_freq(percpu=True)))
print(psutil.cpu_freq().max)  # scaling_max_freq, set to 2 GHz by cpupower above
")
[ "$out" = $'96 48 96\n2000.0' ] && ok || bad "psutil: $out"

# A shell's redirections: builtins and exec'd programs write through stdio's standard streams,
# which the shim points at its own streams while the number is the node's file (every writer
# and the refused writes: test_writes.sh).
out=$(X intel-0 -- bash -c "echo 110000000 > $Z/constraint_0_power_limit_uw; cat $Z/constraint_0_power_limit_uw
    /usr/bin/printf 111000000 > $Z/constraint_0_power_limit_uw; cat $Z/constraint_0_power_limit_uw
    read v < $Z/name; echo \$v; wc -c < $Z/name" 2>&1)
[ "$out" = $'110000000\n111000000\npackage-0\n10' ] && ok || bad "shell redirections: $out"
err=$(X intel-0 -- bash -c "echo abc > $Z/constraint_0_power_limit_uw" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "echo: write error: Invalid argument" <<<"$err" && ok || bad "refused redirection: $rc $err"

# AMD energy-only: energy counters, no constraint files, no writable limit.
out=$(X amd-0 -- powercap-info -p intel-rapl -z 0)
grep -q "name: package-0" <<<"$out" && grep -q "energy_uj:" <<<"$out" && ! grep -q "Constraint" <<<"$out" && ok || bad "amd zones: $out"
err=$(X amd-0 -- sh -c "ls $Z/constraint_0_power_limit_uw" 2>&1)
grep -q "No such file or directory" <<<"$err" && ok || bad "amd has a limit file: $err"
# The VM: no powercap at all.
err=$(X vm-0 -- powercap-info -p intel-rapl 2>&1); rc=$?
[ $rc -ne 0 ] && ok || bad "vm has intel-rapl: $err"
[ "$(X vm-0 -- "$py" -c 'import os; print(os.path.exists("/sys/class/powercap/intel-rapl:0"), os.listdir("/sys/class/powercap"), os.path.exists("/sys/devices/system/cpu/intel_pstate"))')" = "False [] False" ] \
    && ok || bad "vm: no powercap zone and no intel_pstate, whatever the host has"

# hwemu exec errors.
err=$("$hwemu" exec --root "$tmp/r" --node nope -- true 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "no node nope under" <<<"$err" && ok || bad "unknown node: $rc $err"
"$hwemu" exec --root "$tmp/r" --node intel-0 -- no-such-command 2>/dev/null; [ $? -eq 127 ] && ok || bad "missing command"
"$hwemu" exec --root "$tmp/r" --node intel-0 -- sh -c 'exit 7'; [ $? -eq 7 ] && ok || bad "exit status"
kill $pid; wait $pid 2>/dev/null; pid=
sleep 3.5
err=$("$hwemu" exec --root "$tmp/r" --node intel-0 -- true 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "is not running" <<<"$err" && ok || bad "stopped engine: $rc $err"
# Loaded by hand on a stopped engine, the shim answers from the last snapshot and says so once.
out=$(LD_PRELOAD="$(dirname "$hwemu")/libhwemu-shim.so" HWEMU_NODE=intel-0 HWEMU_ROOT="$tmp/r" \
    sh -c "cat $Z/energy_uj; cat $Z/energy_uj" 2>&1)
vals=$(grep '^[0-9]' <<<"$out" | sort -u)
[ "$(grep -c '^[0-9]' <<<"$out")" = 2 ] && [ "$(wc -l <<<"$vals")" = 1 ] \
    && grep -q "its engine last published" <<<"$out" && ok || bad "frozen values: $out"
out=$(LD_PRELOAD="$(dirname "$hwemu")/libhwemu-shim.so" HWEMU_NODE=nope HWEMU_ROOT="$tmp/r" cat /proc/version 2>&1)
grep -q "cannot emulate node nope" <<<"$out" && grep -q "^Linux" <<<"$out" && ok || bad "missing node: $out"
finish
