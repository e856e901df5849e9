"""codecarbon_truth: CodeCarbon (PyPI `codecarbon`, the real package) measures an emulated node's
CPU energy through RAPL, checked against the engine's truth. Run under `hwemu exec --node NODE`
with the Python of a venv holding codecarbon (tests/cli/test_devmodel.sh):
  codecarbon_truth.py ENGINE_URL NODE TICK_S INTERVAL_S
prints one JSON object (what CodeCarbon found and measured, the truth's bracket) and exits 0; the
caller asserts.

How CodeCarbon 3.3.2 finds RAPL (codecarbon/core/cpu.py): IntelRAPL's directory is
/sys/class/powercap/intel-rapl/subsystem, the control type's `subsystem` link to the powercap
class; when that path does not exist, IntelRAPL() raises FileNotFoundError("Intel RAPL files not
found at /sys/class/powercap/intel-rapl/subsystem on linux") and the tracker measures no CPU
energy through RAPL. Otherwise it lists intel-rapl* under it (and under /sys/class/powercap and
/sys/devices/virtual/powercap), takes the `intel-rapl:*` zones with an energy_uj, keeps the zones
named package-* (DRAM only with rapl_include_dram) and measures each one's energy_uj difference
between two reads (codecarbon/core/rapl.py RAPLFile.delta), in kWh.

The truth: /debug/energy, the engine's package counters (J) at its last published tick. A file
read at instant t shows the counter at t, which lies between the publication just before the read
and that publication plus one tick of energy, so with a0/a1 fetched just before/after the first
read and b0/b1 around the last one, the packages' energy between the reads lies in
[b0 - a1 - tick energy, b1 - a0 + tick energy]: an exact bracket, no tolerance.
"""
import json
import sys
import time
import urllib.request

J_PER_KWH = 3.6e6


def packages(engine, node):
    """The node's package energies (J) from /debug/energy, in package order."""
    doc = json.loads(urllib.request.urlopen(engine + "/debug/energy", timeout=20).read().decode())
    n = next(x for x in doc["nodes"] if x["node"] == node)
    return [p["energyJoules"] for p in n["packages"]]


def power(engine, node):
    doc = json.loads(urllib.request.urlopen(engine + "/telemetry/" + node, timeout=20).read().decode())
    return sum(p["powerWatts"] for p in doc["packages"])


def main():
    engine, node, tick, interval = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    from codecarbon.core import cpu
    from codecarbon.core.units import Time

    out = {"raplAvailable": cpu.is_rapl_available()}
    a0 = packages(engine, node)
    try:
        rapl = cpu.IntelRAPL()  # the default directory: .../intel-rapl/subsystem
    except Exception as e:  # what CodeCarbon raises on a node without the driver model
        out["error"] = "%s: %s" % (type(e).__name__, e)
        print(json.dumps(out))
        return
    rapl.start()
    a1 = packages(engine, node)
    t0 = time.monotonic()
    time.sleep(interval)
    b0 = packages(engine, node)
    details = rapl.get_cpu_details(Time.from_seconds(time.monotonic() - t0))
    b1 = packages(engine, node)
    out["zones"] = sorted(f.path for f in rapl._rapl_files)
    out["details"] = details
    kwh = [v for k, v in details.items() if k.startswith("Processor Energy Delta")]
    out["measuredJ"] = sum(kwh) * J_PER_KWH
    # a tick of the packages' energy, doubled for a late tick under load
    e_tick = 2 * power(engine, node) * tick
    out["loJ"] = sum(b0) - sum(a1) - e_tick
    out["hiJ"] = sum(b1) - sum(a0) + e_tick
    out["packages"] = len(a0)

    # The whole tracker, as a user runs it (OfflineEmissionsTracker, machine mode): which CPU
    # mode it chose and the CPU energy it reports, bracketed the same way around start and stop.
    # Its scheduled measurement is set beyond the interval (measure_power_secs=60): CodeCarbon
    # 3.3.2's PeriodicScheduler.stop() (codecarbon/external/scheduler.py) cancels the next timer
    # but does not wait for a measurement in progress, so one scheduled near stop() runs
    # RAPLFile.delta (codecarbon/core/rapl.py) in two threads at once. When the later read stores
    # its last_energy first, the earlier one compares against it, sees the counter go back and adds
    # max_energy_range_uj (262,143 J on Intel), or one delta is lost. That is CodeCarbon's race,
    # on real hardware too: reproduced here with random 0-100 ms delays after each read (2 wraps
    # in 16 runs at measure_power_secs=1, none in 12 at 60), energy_uj itself monotonic.
    from codecarbon import OfflineEmissionsTracker

    t = OfflineEmissionsTracker(country_iso_code="USA", measure_power_secs=60, save_to_file=False,
                                log_level="error", tracking_mode="machine")
    a0 = packages(engine, node)
    t.start()
    a1 = packages(engine, node)
    out["trackerModes"] = [getattr(h, "_mode", "") for h in t._hardware if type(h).__name__ == "CPU"]
    time.sleep(interval)
    b0 = packages(engine, node)
    t.stop()
    b1 = packages(engine, node)
    out["trackerJ"] = t.final_emissions_data.cpu_energy * J_PER_KWH
    out["trackerLoJ"] = sum(b0) - sum(a1) - e_tick
    out["trackerHiJ"] = sum(b1) - sum(a0) + e_tick
    print(json.dumps(out))


if __name__ == "__main__":
    main()
