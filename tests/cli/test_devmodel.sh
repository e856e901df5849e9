#!/usr/bin/env bash
# The kernel's device model around every emulated device (docs/whole-node.md "The driver model"),
# read by real programs nobody here wrote, through both routes (preload and seccomp):
#  - CodeCarbon 3.3.2 (PyPI `codecarbon`, in a venv of the build tree): finds RAPL through
#    /sys/class/powercap/intel-rapl/subsystem (where it failed with "Intel RAPL files not found"
#    before the node had the link) and measures the packages' energy, by its IntelRAPL class and
#    by the whole OfflineEmissionsTracker, on the Intel (8260), Xeon 6 (TPMI) and EPYC 9654 nodes;
#    tests/cli/codecarbon_truth.py brackets each figure with the engine's /debug/energy (exact).
#  - systool (Debian's sysfsutils 2.1.1, libsysfs): lists the powercap, hwmon and DRM class
#    devices with their parent devices (from the `device` links) and uevent, the cpu, node and
#    platform buses' devices (from sys/bus/<bus>/devices) and the drivers' devices (from the
#    sys/bus/<bus>/drivers/<driver> links).
#  - tests/cli/devmodel_walk.py: a walker of every class and bus member of the node (each must
#    have subsystem, uevent, power/; device and driver links lead to devices and drivers; every
#    link resolves inside the node's own tree, per `hwemu files`).
# Where each expectation comes from:
#  - the layout: Linux 6.12 drivers/base/core.c (device_add_class_symlinks: subsystem, device;
#    uevent_show), drivers/base/bus.c (bus_add_device, driver_sysfs_add),
#    drivers/base/power/sysfs.c (power/), drivers/powercap/powercap_sys.c (zones' parents),
#    drivers/base/cpu.c and drivers/acpi/processor_driver.c (cpuN bound to "processor"),
#    drivers/gpu/drm/drm_sysfs.c (DEVNAME=dri/<minor>); libsysfs prints a class device's name
#    after its first ':' (sysfsutils 2.1.1 lib/sysfs_class.c), hence "0" for intel-rapl:0.
#  - counts: the profiles' sourced CPU counts (2 x 48 threads on the 8260, 2 x 192 on the 9654),
#    two NUMA nodes and two coretemp packages on the 8260, the MI300X node's GPUs on buses
#    0x10-0x17 with render minors 129-136 (render_gpu_hwmon.c: 128 + card).
#  - CodeCarbon's rules: codecarbon/core/cpu.py IntelRAPL (package-* zones only, by default) and
#    codecarbon/core/rapl.py (the energy_uj difference); the truth's bracket is
#    codecarbon_truth.py's.
# Usage: test_devmodel.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
build=$(cd "$(dirname "$hwemu")" && pwd)
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
command -v systool >/dev/null || { bad "systool is not installed (sysfsutils; scripts/install-deps.sh)"; finish; }
port=$(free_port)
url=http://127.0.0.1:$port
tick=0.2
serve_start "$url" "$tmp/err" --spec tests/specs/whole-static.yaml --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve did not come up: $(cat "$tmp/err")"; finish; }
X() { local node=$1; shift; "$hwemu" exec --root "$tmp/r" --node "$node-0" ${route:+--intercept $route} -- "$@"; }

# The walker on every node: no problem, and as many devices as the node has (at least its CPUs).
for node in clx genoa gnr vm turin mi300x w7900 sxm; do
    "$hwemu" files --root "$tmp/r" --node "$node-0" >"$tmp/$node.files" 2>"$tmp/files.err" ||
        { bad "hwemu files $node-0: $(cat "$tmp/files.err")"; continue; }
    for route in preload seccomp; do
        out=$(X "$node" /usr/bin/python3 tests/cli/devmodel_walk.py "$tmp/$node.files" 2>&1)
        [ "$(wc -l <<<"$out")" = 1 ] && grep -q '^walked [1-9][0-9]* devices' <<<"$out" && ok ||
            bad "$route: the device model of $node-0: $(head -20 <<<"$out")"
    done
done

for route in preload seccomp; do
    # powercap: every zone's parent (device link), the control type without one, uevent empty
    out=$(X clx systool -c powercap -v 2>&1)
    awk '/Class Device = "0"$/{z=1} z && /^    Device = /{print; exit}' <<<"$out" | grep -qx '    Device = "intel-rapl"' &&
        awk '/Class Device = "0:0"$/{z=1} z && /^    Device = /{print; exit}' <<<"$out" |
        grep -qx '    Device = "intel-rapl:0"' && [ "$(grep -c '^    uevent              = $' <<<"$out")" -ge 5 ] && ok ||
        bad "$route: systool -c powercap on the 8260 node: $(head -40 <<<"$out")"
    # the cpu bus: the node's CPUs, not the host's
    out=$(X clx systool -b cpu 2>&1)
    [ "$(grep -c '^  Device = "cpu' <<<"$out")" = 96 ] && ok || bad "$route: systool -b cpu on the 8260: $(head <<<"$out")"
    out=$(X genoa systool -b cpu 2>&1)
    [ "$(grep -c '^  Device = "cpu' <<<"$out")" = 384 ] && ok || bad "$route: systool -b cpu on the 9654: $(head <<<"$out")"
    out=$(X clx systool -b node 2>&1)
    grep -qx '  Device = "node0"' <<<"$out" && grep -qx '  Device = "node1"' <<<"$out" && ok ||
        bad "$route: systool -b node: $out"
    out=$(X clx systool -b cpu -D 2>&1)
    [ "$(grep -c "^      Device = \"cpu[0-9]" <<<"$out")" = 96 ] && grep -q 'Devices using "processor" are:' <<<"$out" && ok ||
        bad "$route: systool -b cpu -D: $(head <<<"$out")"
    # platform: coretemp's two packages through its driver's links
    out=$(X clx systool -b platform -D 2>&1)
    awk '/Driver = "coretemp"/{z=1} z' <<<"$out" | head -6 | grep -q 'Device = "coretemp.1"' && ok ||
        bad "$route: systool -b platform -D: $(grep -A5 coretemp <<<"$out")"
    # DRM minors of the MI300X node: uevent with DEVNAME, parent the GPU's PCI function
    out=$(X mi300x systool -c drm -v 2>&1)
    grep -q '^DEVNAME=dri/renderD136$' <<<"$out" && grep -q '^DEVTYPE=drm_minor"$' <<<"$out" &&
        grep -qx '    Device = "0000:17:00.0"' <<<"$out" && ok || bad "$route: systool -c drm: $(head -30 <<<"$out")"
    out=$(X mi300x systool -c hwmon -v 2>&1)
    grep -qx '    Device = "0000:10:00.0"' <<<"$out" && grep -qx '    Device = "0000:00:18.3"' <<<"$out" && ok ||
        bad "$route: systool -c hwmon on the MI300X node: $(grep 'Device' <<<"$out" | head)"
done

# CodeCarbon from PyPI, in a venv of the build tree (made once).
venv=$build/codecarbon-venv
(
    flock 9
    [ -f "$venv/.ready" ] && exit 0
    python3 -m venv "$venv" && "$venv/bin/pip" install -q codecarbon==3.3.2 && touch "$venv/.ready"
) 9>"$build/.codecarbon-venv.lock" >"$tmp/pip.log" 2>&1
[ -f "$venv/.ready" ] || { bad "cannot install codecarbon into $venv: $(tail -5 "$tmp/pip.log")"; finish; }
# key JSON KEY: one value of codecarbon_truth.py's object
key() { /usr/bin/python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
# CodeCarbon treats two counters within 1 J of each other at its first read, and again over the
# interval, as one meter read twice and drops the second (codecarbon/core/rapl.py
# find_mirrored_counters, SEQUENTIAL_READ_TOLERANCE_KWH). A fresh node's packages both count
# from 0 J and the 8260's part-to-part spread makes them part by only ~0.17 J/s, as two packages
# just after power-on would: wait until each node's packages differ by more than 2 J.
for _ in $(seq 240); do
    curl -sf "$url/debug/energy" | /usr/bin/python3 -c 'import json, sys
nodes = {n["node"]: [p["energyJoules"] for p in n["packages"]] for n in json.load(sys.stdin)["nodes"]}
sys.exit(0 if all(abs(nodes[n][0] - nodes[n][1]) > 2 for n in ("clx-0", "gnr-0", "genoa-0")) else 1)' && break
    sleep 0.25
done
# every CPU family by the preload route, the Intel node by the seccomp route too
for run in preload:clx preload:gnr preload:genoa seccomp:clx; do
    route=${run%:*} node=${run#*:}
    out=$(X "$node" "$venv/bin/python" tests/cli/codecarbon_truth.py "$url" "$node-0" "$tick" 2 2>"$tmp/cc.err" | tail -1)
        [ "$(key "$out" error)" = None ] && [ "$(key "$out" raplAvailable)" = True ] &&
            [ "$(key "$out" trackerModes)" = "['intel_rapl']" ] && [ "$(key "$out" packages)" = 2 ] &&
            /usr/bin/python3 -c 'import json, sys
o = json.loads(sys.argv[1])
assert len(o["zones"]) == 2, o["zones"]
assert o["loJ"] > 0 and o["loJ"] <= o["measuredJ"] <= o["hiJ"], o
assert o["trackerLoJ"] > 0 and o["trackerLoJ"] <= o["trackerJ"] <= o["trackerHiJ"], o' "$out" && ok ||
            bad "$route: CodeCarbon on $node-0: $out $(tail -3 "$tmp/cc.err")"
done
finish
