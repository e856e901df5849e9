"""An AMD SMI client (PyPI amdsmi 7.0.2, AMD's own Python bindings, unmodified) on one emulated
node, run by tests/cli/test_amdsmi.sh under `hwemu exec`. It reads and caps GPU 0 and compares
every answer with the engine's truth, which it reads at the same moment:
  - the node's amdgpu files through the shim (/sys/class/drm/card<n>/device/...: the segment the
    engine writes each tick), for identity, power, caps, temperatures, clocks, activity, memory;
  - the engine's energy counter of the GPU (`hwemu cat` of state/amdgpu/card<n>/energy_uj);
  - the engine's physics over HTTP (GET /telemetry/<node>: gpus[i].limitWatts, the cap the
    physics enforces, and powerWatts, the power it holds).
Usage: amdsmi_client.py NODE URL ABI_HEADER HWEMU [unprivileged]   (HWEMU: the hwemu binary)
Prints "ok <what>" or "FAIL: <what>" lines (test_amdsmi.sh counts them)."""
import ctypes
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import amdsmi
from amdsmi import amdsmi_wrapper as W

node, url, header, hwemu = sys.argv[1:5]
unprivileged = len(sys.argv) > 5


def check(cond, what):
    print(("ok " if cond else "FAIL: ") + what, flush=True)


def telemetry():
    with urllib.request.urlopen(f"{url}/telemetry/{node}", timeout=10) as r:
        return json.load(r)


def sysfs(path):
    with open(path) as f:
        return f.read().strip()


# The ABI: every struct this library fills has the size the wrapper (generated from AMD's header)
# declares; the expected sizes are amdsmi_abi.h's _Static_asserts.
sizes = dict(re.findall(r"_Static_assert\(sizeof\((\w+)\) == (\d+)", open(header).read()))
for name, size in sizes.items():
    check(ctypes.sizeof(getattr(W, name)) == int(size), f"sizeof({name}) {ctypes.sizeof(getattr(W, name))} == {size}")

# Before init every call is NOT_INIT (32), as amdsmi.h says of AMDSMI_CHECK_INIT.
try:
    amdsmi.amdsmi_get_socket_handles()
    check(False, "a call before amdsmi_init fails")
except amdsmi.AmdSmiLibraryException as e:
    check(e.get_error_code() == 32, f"before init: code {e.get_error_code()} (NOT_INIT 32)")

amdsmi.amdsmi_init()
handles = amdsmi.amdsmi_get_processor_handles()
cards = sorted(int(c[4:]) for c in os.listdir("/sys/class/drm") if re.fullmatch(r"card\d+", c)
               and sysfs(f"/sys/class/drm/{c}/device/vendor") == "0x1002")
check(len(handles) == len(cards), f"{len(handles)} GPUs, the node's AMD DRM cards: {cards}")
h = handles[0]
dev = f"/sys/class/drm/card{cards[0]}/device"
hwmon = f"{dev}/hwmon/" + os.listdir(f"{dev}/hwmon")[0]

# Identity: the PCI device's files.
asic = amdsmi.amdsmi_get_gpu_asic_info(h)
check(asic["market_name"] == sysfs(f"{dev}/product_name"), f"market_name {asic['market_name']!r} is product_name")
check(asic["device_id"] == hex(int(sysfs(f"{dev}/device"), 16)), f"device_id {asic['device_id']}")
check(asic["vendor_id"] == "0x1002", f"vendor_id {asic['vendor_id']}")
bdf = amdsmi.amdsmi_get_gpu_device_bdf(h)
check(os.path.realpath(dev).endswith("/" + bdf), f"bdf {bdf} is the card's PCI device")
uuids = {amdsmi.amdsmi_get_gpu_device_uuid(x) for x in handles}
check(len(uuids) == len(handles), f"one UUID per GPU ({len(uuids)})")
enum = [amdsmi.amdsmi_get_gpu_enumeration_info(x)["hip_id"] for x in handles]
check(enum == list(range(len(handles))), f"hip_id 0..N-1: {enum}")

# Power: MI300X reports the current socket power (power1_input), the W7900 the average
# (power1_average); the other one is N/A (0xFFFF), as on the real GPUs. Watts, truncated.
for _ in range(20):  # the same tick: the file read before and after the call agree
    before = os.path.exists(f"{hwmon}/power1_input") and sysfs(f"{hwmon}/power1_input")
    p = amdsmi.amdsmi_get_power_info(h)
    if before == (os.path.exists(f"{hwmon}/power1_input") and sysfs(f"{hwmon}/power1_input")):
        break
if os.path.exists(f"{hwmon}/power1_input"):
    check(p["current_socket_power"] == int(before) // 1000000 and p["average_socket_power"] == "N/A",
          f"power: current {p['current_socket_power']} W from power1_input {before} uW, average N/A")
else:
    avg = int(sysfs(f"{hwmon}/power1_average")) // 1000000
    check(p["current_socket_power"] == "N/A" and abs(p["average_socket_power"] - avg) <= 1,
          f"power: average {p['average_socket_power']} W from power1_average ({avg} W), current N/A")
check(p["power_limit"] == int(sysfs(f"{hwmon}/power1_cap")), f"power_limit {p['power_limit']} uW is power1_cap")

# Energy: counts of 15.3 uJ (kEnergyCounterResolution, what the real library reports). The truth
# is the engine's counter, the amdgpu energy file (state/amdgpu/card<n>/energy_uj, uJ) that the
# engine advances with the power it holds over each tick, read by `hwemu cat` just before and
# just after the library's reading: counts x resolution lies between the two (to one count).
# Done at the start and the end of an 8 s interval, the interval's energy is the engine's within
# the two brackets' widths; a bracket is taken again (up to 40 times) while it is wider than
# 0.5 % of the interval's energy (a `hwemu cat` slowed by a loaded machine), so that the two
# together hold the library's interval within 1 % of the engine's.
res = amdsmi.amdsmi_get_energy_count(h)["counter_resolution"]
check(abs(res - 15.3) < 1e-5, f"counter_resolution {res} (15.3 uJ)")
card = cards[0]
INTERVAL = 8


def engine_uj():
    # hwemu reads the segment itself: without the shim (an ASan hwemu refuses to run after it)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    out = subprocess.run([hwemu, "cat", "--root", os.environ["HWEMU_ROOT"], "--node", node,
                          f"state/amdgpu/card{card}/energy_uj"], capture_output=True, text=True, check=True, env=env)
    return int(out.stdout)


def bracketed(max_width):
    for _ in range(40):
        before = engine_uj()
        e = amdsmi.amdsmi_get_energy_count(h)
        after = engine_uj()
        if after - before <= max_width:
            break
        time.sleep(0.05)
    uj = e["energy_accumulator"] * res
    check(before - res <= uj <= after + res, f"energy {uj:.0f} uJ between the engine's {before} and {after} uJ")
    return e["energy_accumulator"], e["timestamp"], before, after


width = 0.005 * telemetry()["gpus"][0]["powerWatts"] * 1e6 * INTERVAL
c0, ts0, b0, a0 = bracketed(width)
time.sleep(INTERVAL)
c1, ts1, b1, a1 = bracketed(width)
lib_j = (c1 - c0) * res / 1e6
lo, hi = (b1 - a0) / 1e6, (a1 - b0) / 1e6
mid = (lo + hi) / 2
check(lo - 2 * res / 1e6 <= lib_j <= hi + 2 * res / 1e6 and abs(lib_j - mid) <= 0.01 * mid,
      f"energy over {(ts1 - ts0) / 1e9:.2f} s: {lib_j:.3f} J, the engine's counter {lo:.3f}..{hi:.3f} J "
      f"(1 % of it: {0.01 * mid:.3f} J; the engine's power {telemetry()['gpus'][0]['powerWatts']} W)")

# Caps (uW): power1_cap, _default, _min, _max.
cap = amdsmi.amdsmi_get_power_cap_info(h)
want = {k: int(sysfs(f"{hwmon}/power1_{f}")) for k, f in (("power_cap", "cap"), ("default_power_cap", "cap_default"),
                                                        ("min_power_cap", "cap_min"), ("max_power_cap", "cap_max"))}
check(all(cap[k] == v for k, v in want.items()), f"power cap info {cap} is hwmon's {want}")

# Set: above the maximum INVAL (1), as rocm_smi's range check; without root NO_PERM (10), which
# rocm_smi checks first.
try:
    amdsmi.amdsmi_set_power_cap(h, 0, cap["max_power_cap"] + 1000000)
    check(False, "a cap above the maximum is refused")
except amdsmi.AmdSmiLibraryException as e:
    want = 10 if unprivileged else 1
    check(e.get_error_code() == want, f"cap above the maximum: code {e.get_error_code()} ({want})")
lo, hi = cap["min_power_cap"], cap["max_power_cap"]
target = (lo + hi) // 2 // 1000000 * 1000000 if hi > lo else hi  # the W7900's cap is pinned: min = max
if unprivileged:
    try:
        amdsmi.amdsmi_set_power_cap(h, 0, target)
        check(False, "a set without root is refused")
    except amdsmi.AmdSmiLibraryException as e:
        check(e.get_error_code() == 10, f"set without root: code {e.get_error_code()} (NO_PERM 10)")
    check(int(sysfs(f"{hwmon}/power1_cap")) == cap["power_cap"], "nothing written without root")
else:
    amdsmi.amdsmi_set_power_cap(h, 0, target)
    check(int(sysfs(f"{hwmon}/power1_cap")) == target, f"power1_cap reads {target} after the set")
    check(amdsmi.amdsmi_get_power_cap_info(h)["power_cap"] == target, "the library reads the new cap back")
    limit = None
    for _ in range(100):  # the engine takes it at its next tick
        limit = telemetry()["gpus"][0]["limitWatts"]
        if limit == target // 1000000:
            break
        time.sleep(0.1)
    check(limit == target // 1000000, f"the engine's limit is {limit} W, the {target // 1000000} W set")
    power = None
    for _ in range(150):  # and the physics holds the GPU's power at or below it within a few ticks
        power = telemetry()["gpus"][0]["powerWatts"]
        if power <= target / 1e6 + 0.5:
            break
        time.sleep(0.1)
    check(power <= target / 1e6 + 0.5, f"the engine's GPU power {power} W settles under the {target / 1e6} W cap")

# Temperatures: whole degrees C of the hwmon sensor labelled edge / junction / mem.
for kind, label in ((amdsmi.AmdSmiTemperatureType.EDGE, "edge"), (amdsmi.AmdSmiTemperatureType.HOTSPOT, "junction"),
                    (amdsmi.AmdSmiTemperatureType.VRAM, "mem")):
    n = next(f[4:-6] for f in os.listdir(hwmon) if re.fullmatch(r"temp\d+_label", f) and sysfs(f"{hwmon}/{f}") == label)
    for _ in range(20):
        mc = int(sysfs(f"{hwmon}/temp{n}_input"))
        t = amdsmi.amdsmi_get_temp_metric(h, kind, amdsmi.AmdSmiTemperatureMetric.CURRENT)
        if mc == int(sysfs(f"{hwmon}/temp{n}_input")):
            break
    check(t == mc // 1000, f"temperature {label}: {t} C from temp{n}_input {mc}")
    crit = amdsmi.amdsmi_get_temp_metric(h, kind, amdsmi.AmdSmiTemperatureMetric.CRITICAL)
    check(crit == int(sysfs(f"{hwmon}/temp{n}_crit")) // 1000, f"temperature {label} critical: {crit} C")

# Clocks: MHz of the pp_dpm_sclk / pp_dpm_mclk levels.
for kind, table in ((amdsmi.AmdSmiClkType.GFX, "pp_dpm_sclk"), (amdsmi.AmdSmiClkType.MEM, "pp_dpm_mclk")):
    for _ in range(20):
        text = sysfs(f"{dev}/{table}")
        c = amdsmi.amdsmi_get_clock_info(h, kind)
        if text == sysfs(f"{dev}/{table}"):
            break
    levels = [int(re.search(r":\s*(\d+)", l).group(1)) for l in text.splitlines()]
    cur = int(re.search(r":\s*(\d+)Mhz \*", text).group(1))
    check((c["clk"], c["min_clk"], c["max_clk"]) == (cur, min(levels), max(levels)),
          f"{table}: clock {c['clk']} MHz in [{c['min_clk']}, {c['max_clk']}], the table's {cur} in {levels}")

# The gpu_metrics table (codecarbon's fallback): all ones ("N/A") but what the node has.
for _ in range(20):
    text = sysfs(f"{dev}/pp_dpm_sclk")
    m = amdsmi.amdsmi_get_gpu_metrics_info(h)
    if text == sysfs(f"{dev}/pp_dpm_sclk"):
        break
cur = int(re.search(r":\s*(\d+)Mhz \*", text).group(1))
check(m["current_gfxclk"] == cur and m["common_header.structure_size"] == ctypes.sizeof(W.amdsmi_gpu_metrics_t)
      and m["temperature_vrsoc"] == "N/A" and isinstance(m["energy_accumulator"], int),
      f"gpu_metrics: current_gfxclk {m['current_gfxclk']} MHz, size {m['common_header.structure_size']}, "
      f"vrsoc {m['temperature_vrsoc']}, energy_accumulator {m['energy_accumulator']}")

# Utilisation and memory.
for _ in range(20):
    busy = int(sysfs(f"{dev}/gpu_busy_percent"))
    a = amdsmi.amdsmi_get_gpu_activity(h)
    if busy == int(sysfs(f"{dev}/gpu_busy_percent")):
        break
check(a["gfx_activity"] == busy, f"gfx_activity {a['gfx_activity']} % is gpu_busy_percent {busy}")
total = amdsmi.amdsmi_get_gpu_memory_total(h, amdsmi.AmdSmiMemoryType.VRAM)
check(total == int(sysfs(f"{dev}/mem_info_vram_total")), f"VRAM total {total} B")

# What the node does not have is NOT_SUPPORTED (2), as the real library answers a GPU without
# fans (the MI300X and this W7900 have no fan sensor in hwmon).
try:
    amdsmi.amdsmi_get_gpu_fan_speed(h, 0)
    check(False, "fan speed is not supported")
except amdsmi.AmdSmiLibraryException as e:
    check(e.get_error_code() == 2, f"fan speed: code {e.get_error_code()} (NOT_SUPPORTED 2)")
try:
    amdsmi.amdsmi_get_temp_metric(h, amdsmi.AmdSmiTemperatureType.HBM_0, amdsmi.AmdSmiTemperatureMetric.CURRENT)
    check(False, "HBM_0 temperature is not supported")
except amdsmi.AmdSmiLibraryException as e:
    check(e.get_error_code() == 2, f"HBM_0 temperature: code {e.get_error_code()} (NOT_SUPPORTED 2)")

amdsmi.amdsmi_shut_down()
