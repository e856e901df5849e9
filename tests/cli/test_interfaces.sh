#!/usr/bin/env bash
# The interfaces beyond sysfs (docs/interfaces.md), each read by a real, unmodified client:
#   MSR devices  msr-tools' rdmsr/wrmsr (Debian msr-tools 1.3) on the preload route and on the
#                seccomp route; the energy status registers against the powercap energy_uj of
#                the same counter; a PKG_POWER_LIMIT write validated and applied by the engine
#   IPMI-DCMI    Debian's ipmitool and FreeIPMI's ipmi-dcmi print the node power of /telemetry
#   Redfish      curl + Python JSON checks of the service root, Chassis and Power resources
#   pm_counters  cat of /sys/cray/pm_counters files on the test Cray profile
#   modules      /proc/modules: the drivers of each node's devices (both routes)
# Where each expected value comes from is said at each check. Bounded: one engine, ~20 s.
# Usage: test_interfaces.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && { kill -CONT $pid; kill $pid; } 2>/dev/null; rm -rf "$tmp"' EXIT
for tool in rdmsr wrmsr ipmitool ipmi-dcmi curl; do
    command -v $tool >/dev/null || { bad "$tool is missing (scripts/install-deps.sh: msr-tools ipmitool freeipmi-tools curl)"; finish; }
done
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/err" --spec tests/specs/interfaces.yaml --profiles-dir tests/cli/profiles-interfaces \
    --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms || { bad "serve: $(cat "$tmp/err")"; finish; }
X() { "$hwemu" exec --root "$tmp/r" --node "$@"; }
py=/usr/bin/python3
Z=/sys/class/powercap/intel-rapl:0
# Counters freeze at their horizon (one tick) while the engine does not publish (segment.h), so
# with the engine stopped every read of a counter, by any route, shows the same count.
freeze() { kill -STOP $pid; sleep 0.5; }
# F NODE -- PROGRAM...: the preload route as hwemu exec sets it up, without exec's check that
# the engine is alive (it refuses an engine stopped for over 3 ticks + 1 s, which several
# programs run while frozen can take on a loaded machine)
F() { local node=$1; shift 2; LD_PRELOAD=$(dirname "$hwemu")/libhwemu-shim.so HWEMU_ROOT=$tmp/r HWEMU_NODE=$node "$@"; }
thaw() { kill -CONT $pid; }
telem() { curl -sf "$url/telemetry/$1"; }
sleep 1 # a few ticks: statistics and counters have moved

# --- MSR devices ----------------------------------------------------------------------------------
# The device nodes as the kernel's msr driver makes them: c 202:<cpu>, 0600 root.
[ "$(X intel-0 -- stat -c '%F %t:%T %a %u' /dev/cpu/3/msr)" = "character special file ca:3 600 0" ] && ok ||
    bad "stat /dev/cpu/3/msr: $(X intel-0 -- stat -c '%F %t:%T %a %u' /dev/cpu/3/msr 2>&1)"
[ "$(X intel-0 -- ls /dev/cpu | wc -l)" = 96 ] && ok || bad "/dev/cpu should list the 96 CPUs of intel-0"
# 0x606 from the profile: powerUnitUW 125000 (PU 3), energyUnitNJ 61035 (ESU 14), 976 us (TU 10).
[ "$(X intel-0 -- rdmsr -p 5 0x606)" = a0e03 ] && ok || bad "0x606: $(X intel-0 -- rdmsr -p 5 0x606 2>&1)"
# 0x614: TDP = long_term maxPowerUW 165 W = 1320 units, MAX_POWER = short_term's 413 W = 3304.
[ "$(X intel-0 -- rdmsr -c 0x614)" = 0xce800000528 ] && ok || bad "0x614: $(X intel-0 -- rdmsr -c 0x614 2>&1)"
# 0x610 composed from the constraint files: PL1 165 W on (window 999424 us = 2^10 units), PL2 198 W on.
[ "$(X intel-0 -- rdmsr -c 0x610)" = 0x1863000158528 ] && ok || bad "0x610: $(X intel-0 -- rdmsr -c 0x610 2>&1)"
# 0x198: the package's scaling_cur_freq over 100 MHz in bits 15:8 (both read in one snapshot).
freeze
khz=$(F intel-0 -- cat /sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq)
ratio=$(F intel-0 -- rdmsr -p 0 -f 15:8 -d 0x198)
thaw
[ "$ratio" = $((khz / 100000)) ] && ok || bad "0x198 ratio $ratio vs scaling_cur_freq $khz"
# The registers turbostat and likwid read (engine/render/render_msr.c). Microcode: cpu.microcode
# 0x5000024 in 63:32; PLATFORM_INFO: base ratio 24 (2.40 GHz), lowest 10 (cpuinfo_min 1 GHz).
[ "$(X intel-0 -- rdmsr 0x8b)" = 500002400000000 ] && ok || bad "0x8b: $(X intel-0 -- rdmsr 0x8b 2>&1)"
[ "$(X intel-0 -- rdmsr -c 0xce)" = 0xa0000001800 ] && ok || bad "0xce: $(X intel-0 -- rdmsr -c 0xce 2>&1)"
# With the engine frozen: PACKAGE_THERM_STATUS 22:16 = TjMax 100 - coretemp's package temperature;
# MPERF/TSC = CPU 3's busy share (the spec's 0.6, as /proc/stat shows it); APERF/MPERF x the
# TSC's rate (TSC / the node's uptime) = its mean frequency since the start, within the
# profile's 1.0-3.9 GHz (tests/cli/test_msr_tools.sh compares it with the engine's in steady state).
freeze
set -- $(F intel-0 -- sh -c 'rdmsr -d -p 3 0x10; rdmsr -d -p 3 0xe7; rdmsr -d -p 3 0xe8; rdmsr -p 0 -f 22:16 -u 0x1b1
    cat /sys/class/hwmon/hwmon0/temp1_input; cut -d" " -f1 /proc/uptime')
thaw
[ $(( 100 - $5 / 1000 )) = "$4" ] && ok || bad "0x1b1 readout $4 vs coretemp's package ${5} m°C"
python3 -c "
import sys
tsc, mperf, aperf, up = int('$1'), int('$2'), int('$3'), float('$6')
busy = mperf / tsc
rate = tsc / up / 1e3  # kHz
ok = abs(busy - 0.6) < 0.006 and 1e6 <= aperf / mperf * rate <= 3.9e6
sys.exit(0 if ok else 1)" && ok || bad "CPU 3: TSC $1 MPERF $2 APERF $3 vs busy 0.6, 1.0-3.9 GHz, uptime $6"
# A register the node lacks: EIO, which rdmsr reports with exit status 4.
err=$(X intel-0 -- rdmsr 0x64d 2>&1); rc=$?
[ $rc = 4 ] && grep -q "cannot read MSR 0x0000064d" <<<"$err" && ok || bad "0x64d: rc=$rc $err"
err=$(X vm-0 -- rdmsr 0x606 2>&1); rc=$?
[ $rc = 4 ] && ok || bad "a VM's RAPL registers should fault: rc=$rc $err"

# The drivers' edges (tests/shim/devices_probe.c): 8-byte registers, EINVAL/EIO, read at the
# position without moving it, SEEK_END, stat; /dev/ipmi0's ioctls and readiness. Dynamic (the
# preload route) and static (the seccomp route, which --intercept auto picks for it).
gcc -O2 -o "$tmp/probe" tests/shim/devices_probe.c && gcc -O2 -static -o "$tmp/probe-static" tests/shim/devices_probe.c ||
    bad "devices_probe build"
out=$(X intel-0 -- "$tmp/probe" 2>&1) && ok || bad "devices_probe (preload): $(grep -v '^ok' <<<"$out")"
out=$(HWEMU_SV_TRACE=1 X intel-0 -- "$tmp/probe-static" 2>&1) && grep -q "open /dev/ipmi0" <<<"$out" && ok ||
    bad "devices_probe (static, seccomp): $(grep -v '^ok' <<<"$out" | head -20)"

# Energy: MSR count and energy_uj show one counter. Kernel arithmetic (intel_rapl_common.c):
# energy_uj = raw * (1e9 >> ESU) / 1000, with 1e9 >> 14 = 61035 (package), DRAM's fixed 15300 nJ.
reads() { # node: "pkg_raw pkg_uj dram_raw dram_uj" of package 1 (CPU 24, the first of socket 1: node 1 is 24-47,72-95), all through the preload route
    F $1 -- sh -c 'printf "%d %s %d %s\n" 0x$(rdmsr -p 24 0x611) $(cat /sys/class/powercap/intel-rapl:1/energy_uj) \
        0x$(rdmsr -p 24 0x619) $(cat /sys/class/powercap/intel-rapl:1/intel-rapl:1:0/energy_uj)'
}
freeze; a=$(reads intel-0); thaw; sleep 1; freeze; b=$(reads intel-0)
# the seccomp route: the supervisor answers rdmsr (env drops the shim, so the program's own
# calls go to the supervisor; HWEMU_SV_TRACE shows it answered the open)
sv=$(HWEMU_SV_TRACE=1 "$hwemu" exec --intercept seccomp --root "$tmp/r" --node intel-0 -- env -u LD_PRELOAD rdmsr -p 24 -d 0x611 2>"$tmp/sv.err")
thaw
grep -q "open /dev/cpu/24/msr" "$tmp/sv.err" && ok || bad "the supervisor did not answer rdmsr's open: $(head -5 "$tmp/sv.err")"
$py - "$a" "$b" "$sv" <<'PYEOF' && ok || bad "MSR energy vs energy_uj: $a / $b / $sv"
import sys
a = [int(x) for x in sys.argv[1].split()]; b = [int(x) for x in sys.argv[2].split()]; sv = int(sys.argv[3])
ok = True
for i, unit in ((0, 61035), (2, 15300)):
    # frozen: the same counter, so raw * unit / 1000 is energy_uj exactly (up to the wrap of energy_uj)
    for r in (a, b):
        if r[i] * unit // 1000 != r[i + 1]:
            print("count %d * %d nJ = %d uJ, energy_uj %d" % (r[i], unit, r[i] * unit // 1000, r[i + 1])); ok = False
    draw = (b[i] - a[i]) % 2**32
    duj = b[i + 1] - a[i + 1]
    if draw <= 0 or abs(draw * unit / 1000 - duj) > unit / 1000:
        print("delta %d units = %.0f uJ vs energy_uj delta %d" % (draw, draw * unit / 1000, duj)); ok = False
if sv != b[0]:
    print("seccomp route read %d, preload %d (frozen)" % (sv, b[0])); ok = False
sys.exit(0 if ok else 1)
PYEOF

# PKG_POWER_LIMIT writes go through constraint_0_power_limit_uw's validator: PL1 150 W
# (1200 units of 1/8 W, window field 10), PL2 as it was.
X intel-0 -- wrmsr -p 0 0x610 0x18630001584b0 && ok || bad "wrmsr 0x610"
[ "$(X intel-0 -- cat $Z/constraint_0_power_limit_uw)" = 150000000 ] && ok || bad "PL1 file after wrmsr: $(X intel-0 -- cat $Z/constraint_0_power_limit_uw)"
[ "$(X intel-0 -- rdmsr -c 0x610)" = 0x18630001584b0 ] && ok || bad "0x610 read back: $(X intel-0 -- rdmsr -c 0x610)"
# the same through the supervisor: PL1 140 W (1120 = 0x460)
"$hwemu" exec --intercept seccomp --root "$tmp/r" --node intel-0 -- env -u LD_PRELOAD wrmsr -p 0 0x610 0x1863000158460 &&
    [ "$(X intel-0 -- cat $Z/constraint_0_power_limit_uw)" = 140000000 ] && ok || bad "wrmsr on the seccomp route"
# read-only registers fault on write
err=$(X intel-0 -- wrmsr 0x611 0 2>&1); rc=$?
[ $rc = 4 ] && ok || bad "wrmsr 0x611 should fail with EIO (exit 4): rc=$rc $err"
for _ in $(seq 50); do # the engine drains the slot at its next tick (5 s at most on a loaded machine)
    pl1=$(telem intel-0 | $py -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["pl1Watts"])')
    [ "$pl1" = 140 ] && break
    sleep 0.1
done
[ "$pl1" = 140 ] && ok || bad "the engine did not apply the MSR's PL1: pl1Watts $pl1"
curl -sf "$url/debug/events?node=intel-0" | grep -q '"file":"sys/devices/virtual/powercap/intel-rapl/intel-rapl:0/constraint_0_power_limit_uw","written":"150000000"' \
    && ok || bad "no write event for the MSR's PL1 store"

# AMD: 0xC0010299 ESU 16 (energyUnitNJ 15258), TU 10, PU 0; package counter = energy_uj's; each
# core shows its package's core-zone count / coresPerSocket (96).
[ "$(X amd-0 -- rdmsr 0xC0010299)" = a1000 ] && ok || bad "0xC0010299: $(X amd-0 -- rdmsr 0xC0010299 2>&1)"
freeze
amd=$(F amd-0 -- sh -c 'printf "%d %s %d %s\n" 0x$(rdmsr -p 1 0xC001029B) $(cat /sys/class/powercap/intel-rapl:0/energy_uj) \
    0x$(rdmsr -p 1 0xC001029A) $(cat /sys/class/powercap/intel-rapl:0/intel-rapl:0:0/energy_uj)')
thaw
$py - "$amd" <<'PYEOF' && ok || bad "AMD energy registers: $amd"
import sys
p, puj, c, cuj = (int(x) for x in sys.argv[1].split())
ok = p * 15258 // 1000 == puj
# the core zone's count is its energy_uj / unit (within one count), shared by 96 cores
craw = cuj * 1000 // 15258
ok = ok and abs(c - craw // 96) <= 1
sys.exit(0 if ok else 1)
PYEOF
err=$(X amd-0 -- rdmsr 0x611 2>&1); [ $? = 4 ] && ok || bad "AMD 0x611 should be EIO: $err"

# --- IPMI-DCMI ------------------------------------------------------------------------------------
# The tools' figures against /telemetry's nodePowerWatts read just before and a tick after (the
# power can move between ticks, and a node publishes its tick before the engine's snapshot of all
# nodes): within 1 W of the range.
bracket() { # node value: ok when value is within 1 W of the telemetry before/after
    $py - "$2" "$(cat "$tmp/t1")" "$(cat "$tmp/t2")" <<'PYEOF'
import json, sys
v = float(sys.argv[1]); w = [json.loads(t)["nodePowerWatts"] for t in sys.argv[2:]]
sys.exit(0 if min(w) - 1 <= v <= max(w) + 1 else 1)
PYEOF
}
for node in gpu-0 intel-0; do
    telem $node >"$tmp/t1"; out=$(X $node -- ipmitool dcmi power reading 2>&1); rc=$?; sleep 0.3; telem $node >"$tmp/t2"
    w=$(sed -n 's/^ *Instantaneous power reading: *\([0-9]*\) Watts$/\1/p' <<<"$out")
    [ $rc = 0 ] && [ -n "$w" ] && bracket $node "$w" && grep -q "Power reading state is: *activated" <<<"$out" && ok ||
        bad "ipmitool on $node (rc $rc, /telemetry $(cat "$tmp/t1" | head -c 200)): $out"
    telem $node >"$tmp/t1"; out=$(X $node -- ipmi-dcmi --get-system-power-statistics 2>&1); rc=$?; sleep 0.3; telem $node >"$tmp/t2"
    w=$(sed -n 's/^Current Power *: \([0-9]*\) Watts$/\1/p' <<<"$out")
    [ $rc = 0 ] && [ -n "$w" ] && bracket $node "$w" && grep -q "Power Measurement *: Active" <<<"$out" && ok ||
        bad "ipmi-dcmi on $node (rc $rc): $out"
    # statistics: min <= avg <= max, and the reporting period has run since the start
    $py - "$out" <<'PYEOF' && ok || bad "ipmi-dcmi statistics on $node: $out"
import re, sys
t = sys.argv[1]
v = {k: int(re.search(k + r"[^:]*: (\d+)", t).group(1)) for k in ("Current", "Minimum", "Maximum", "Average")}
period = int(re.search(r"period *: (\d+) milliseconds", t).group(1))
sys.exit(0 if v["Minimum"] <= v["Average"] <= v["Maximum"] and v["Minimum"] <= v["Current"] <= v["Maximum"] and period >= 1000 else 1)
PYEOF
done
# the seccomp route answers the same (the tools with the shim dropped: the supervisor's ioctls)
for tool in "ipmitool dcmi power reading" "ipmi-dcmi --get-system-power-statistics"; do
    telem gpu-0 >"$tmp/t1"
    out=$("$hwemu" exec --intercept seccomp --root "$tmp/r" --node gpu-0 -- env -u LD_PRELOAD $tool 2>&1); rc=$?
    sleep 0.3; telem gpu-0 >"$tmp/t2"
    w=$(sed -n 's/^ *\(Instantaneous power reading\|Current Power\) *: *\([0-9]*\) Watts$/\2/p' <<<"$out")
    [ $rc = 0 ] && [ -n "$w" ] && bracket gpu-0 "$w" && ok || bad "$tool on the seccomp route (rc $rc): $out"
done
err=$(X vm-0 -- ipmitool dcmi power reading 2>&1); rc=$?
[ $rc = 1 ] && grep -q "Could not open device" <<<"$err" && ok || bad "a VM has no BMC: rc=$rc $err"

# --- Redfish --------------------------------------------------------------------------------------
telem gpu-0 >"$tmp/t1"
for u in /redfish/v1/ /redfish/v1/Chassis /redfish/v1/Chassis/gpu-0 /redfish/v1/Chassis/gpu-0/Power \
         /redfish/v1/Chassis/gpu-0/EnvironmentMetrics /redfish/v1/Chassis/gpu-0/PowerSubsystem; do
    curl -sf -H 'Accept: application/json' "$url$u" >"$tmp/rf$(echo "$u" | tr / _)" || bad "GET $u"
done
sleep 0.3; telem gpu-0 >"$tmp/t2"
$py - "$tmp" <<'PYEOF' && ok || bad "Redfish resources"
import json, os, sys
d = sys.argv[1]
def get(u): return json.load(open(os.path.join(d, "rf" + u.replace("/", "_"))))
w = [json.load(open(os.path.join(d, f)))["nodePowerWatts"] for f in ("t1", "t2")]
ok = True
def check(c, what):
    global ok
    if not c: print("redfish:", what); ok = False
root = get("/redfish/v1/")
check(root["Chassis"]["@odata.id"] == "/redfish/v1/Chassis" and root["RedfishVersion"], "service root")
members = [m["@odata.id"] for m in get("/redfish/v1/Chassis")["Members"]]
check(members == ["/redfish/v1/Chassis/%s" % n for n in ("intel-0", "amd-0", "gpu-0", "cray-0", "vm-0")], members)
ch = get("/redfish/v1/Chassis/gpu-0")
check(ch["Id"] == "gpu-0" and ch["Power"]["@odata.id"] == "/redfish/v1/Chassis/gpu-0/Power", "chassis links")
pc = get("/redfish/v1/Chassis/gpu-0/Power")["PowerControl"]
check(len(pc) == 1, "one PowerControl")
p, m = pc[0]["PowerConsumedWatts"], pc[0]["PowerMetrics"]
check(min(w) - 1 <= p <= max(w) + 1, "PowerConsumedWatts %s vs /telemetry %s" % (p, w))
check(m["MinConsumedWatts"] <= m["AverageConsumedWatts"] <= m["MaxConsumedWatts"] and m["IntervalInMin"] >= 1, m)
check(pc[0]["PowerLimit"]["LimitInWatts"] is None, "no BMC limit")
env = get("/redfish/v1/Chassis/gpu-0/EnvironmentMetrics")
check(min(w) - 1 <= env["PowerWatts"]["Reading"] <= max(w) + 1 and env["EnergyJoules"]["Reading"] > 0, env)
check(abs(env["EnergykWh"]["Reading"] * 3.6e6 - env["EnergyJoules"]["Reading"]) < 1e-3, "kWh vs J")
check(get("/redfish/v1/Chassis/gpu-0/PowerSubsystem")["Status"]["State"] == "Enabled", "power subsystem")
sys.exit(0 if ok else 1)
PYEOF
[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/redfish/v1/Chassis/nope/Power")" = 404 ] && ok || bad "unknown chassis: not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url/redfish/v1/Chassis")" = 405 ] && ok || bad "POST: not 405"

# --- Cray pm_counters -----------------------------------------------------------------------------
telem cray-0 >"$tmp/t1"
pm=$(X cray-0 -- sh -c 'for f in power energy cpu_power memory_power accel0_power accel7_energy freshness raw_scan_hz; do printf "%s=" $f; cat /sys/cray/pm_counters/$f; done')
sleep 0.3; telem cray-0 >"$tmp/t2"
$py - "$pm" "$tmp" <<'PYEOF' && ok || bad "pm_counters: $pm"
import json, os, re, sys
f = dict(l.split("=", 1) for l in sys.argv[1].splitlines())
t = [json.load(open(os.path.join(sys.argv[2], x))) for x in ("t1", "t2")]
ok = True
for k in ("power", "cpu_power", "memory_power", "accel0_power"):
    ok &= re.fullmatch(r"\d+ W \d{16} us", f[k]) is not None
for k in ("energy", "accel7_energy"):
    ok &= re.fullmatch(r"\d+ J \d{16} us", f[k]) is not None
num = {k: int(v.split()[0]) for k, v in f.items()}
within = lambda v, key: min(x[key] for x in t) - 1 <= v <= max(x[key] for x in t) + 1
ok &= within(num["power"], "nodePowerWatts")
ok &= min(x["gpus"][0]["powerWatts"] for x in t) - 1 <= num["accel0_power"] <= max(x["gpus"][0]["powerWatts"] for x in t) + 1
ok &= num["raw_scan_hz"] == 10 and num["freshness"] > 0 and num["energy"] > num["accel7_energy"] > 0
sys.exit(0 if ok else 1)
PYEOF
err=$(X intel-0 -- cat /sys/cray/pm_counters/power 2>&1); [ $? != 0 ] && ok || bad "intel-0 declares no pm_counters: $err"

# --- /proc/modules --------------------------------------------------------------------------------
# The drivers of the devices each node has, in kernel/module/procfs.c's format, newest first
# (render_modules.c): RAPL through the MSR driver on Intel and AMD, msr, the IPMI pair on bare
# metal; a VM has the msr devices (without registers) and no BMC, powercap or IPMI module. Read
# through the shim (cat) and the procfs crate's rules (Scaphandre's check: tests/cli/test_scaphandre.sh).
mods=$(X intel-0 -- cut -d' ' -f1,3,4,5 /proc/modules | tr '\n' ';')
[ "$mods" = "ipmi_devintf 0 - Live;ipmi_msghandler 1 ipmi_devintf, Live;msr 0 - Live;intel_rapl_msr 0 - Live;intel_rapl_common 1 intel_rapl_msr, Live;" ] &&
    ok || bad "intel-0 /proc/modules: $mods"
[ "$(X amd-0 -- cut -d' ' -f1 /proc/modules | tr '\n' ' ')" = "ipmi_devintf ipmi_msghandler msr intel_rapl_msr intel_rapl_common " ] &&
    ok || bad "amd-0 /proc/modules: $(X amd-0 -- cat /proc/modules)"
[ "$(X vm-0 -- cat /proc/modules)" = "msr 0 0 - Live 0x0000000000000000" ] && ok || bad "vm-0 /proc/modules: $(X vm-0 -- cat /proc/modules)"
# procfs files have size 0 (their text is made at read time), mode 0444
[ "$(X intel-0 -- stat -c '%a %s' /proc/modules)" = "444 0" ] && ok ||
    bad "stat /proc/modules: $(X intel-0 -- stat -c '%a %s' /proc/modules)"
sv=$("$hwemu" exec --intercept seccomp --root "$tmp/r" --node intel-0 -- env -u LD_PRELOAD cat /proc/modules | cut -d' ' -f1 | tr '\n' ' ')
[ "$sv" = "ipmi_devintf ipmi_msghandler msr intel_rapl_msr intel_rapl_common " ] && ok || bad "/proc/modules on the seccomp route: $sv"

finish
