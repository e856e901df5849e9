"""devmodel_walk: a generic walker of the kernel's device model, as udev, libsysfs and hwloc walk
it, run against an emulated node (under `hwemu exec --node NODE`; tests/cli/test_devmodel.sh):
  devmodel_walk.py LISTING
LISTING is `hwemu files --node NODE` of the same node (the node's own entries: kind, mode, path,
link target). Prints one line per problem and a last line "walked N devices, M links"; exits 0.

What the kernel guarantees and this checks (Linux 6.12 drivers/base/core.c device_add,
device_add_class_symlinks, uevent_show; drivers/base/bus.c bus_add_device, driver_sysfs_add;
drivers/base/power/sysfs.c; fs/kernfs/symlink.c; the live 6.18 captures of sysfs-abi §1.6):
- every symlink of the node's sys/ resolves to an entry of the node's own tree;
- every member of a class (sys/class/<c>/<name>) or bus (sys/bus/<b>/devices/<name>) is a
  directory under /sys/devices whose `subsystem` resolves to that class or bus, with a readable
  `uevent` of KEY=VALUE lines and a `power/` holding control (auto|on), runtime_status
  (unsupported|active), runtime_active_time and runtime_suspended_time;
- a `device` link leads to a device (it has `subsystem`);
- a `driver` link leads to sys/bus/<b>/drivers/<d>, which links back to the device, and uevent
  says DRIVER=<d>; a `modalias` file says what uevent's MODALIAS says;
- every directory with a `subsystem` link is a device as above, and a class device is listed in
  its class.
The walk reads the files through the normal calls (os.listdir, os.readlink, realpath, open), so
the shim answers it as it answers any tool.
"""
import os
import posixpath
import sys


def main():
    entries, links = {}, {}
    with open(sys.argv[1]) as f:
        for line in f:
            parts = line.rstrip("\n").split(" ")
            parts = [p for p in parts if p != ""]
            if len(parts) < 4:
                continue
            kind, path = parts[1], parts[3]
            entries[path] = kind
            if kind == "link":
                links[path] = parts[5]
    problems = []

    def bad(msg):
        problems.append(msg)

    # 1. every link of sys/ resolves inside the node's tree (in the listing)
    for path, target in links.items():
        if not path.startswith("sys/"):
            continue
        to = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if to not in entries:
            bad("link /%s -> %s leaves the node's tree (/%s is not the node's)" % (path, target, to))

    # 2. the members of every class and bus the node has
    members = []
    for path in links:
        p = path.split("/")
        if len(p) == 4 and p[1] == "class":
            members.append(("class", p[2], "/" + path))
        elif len(p) == 5 and p[1] == "bus" and p[3] == "devices":
            members.append(("bus", p[2], "/" + path))
    # every other directory with a subsystem link is a device too (the AMD data fabric function
    # k10temp binds stays out of sys/bus/pci/devices: docs/whole-node.md "The driver model")
    listed = {os.path.realpath(m) for _, _, m in members}
    for path, target in links.items():
        if path.startswith("sys/devices/") and path.endswith("/subsystem"):
            d = "/" + path[: -len("/subsystem")]
            to = posixpath.normpath(posixpath.join(posixpath.dirname(path), target)).split("/")
            if d in listed or len(to) != 3:
                continue
            if to[1] == "class":
                bad("%s is a device of class %s but /sys/class/%s does not list it" % (d, to[2], to[2]))
            members.append((to[1], to[2], d))
    devices = set()
    for kind, sub, member in sorted(members):
        d = os.path.realpath(member)
        devices.add(d)
        where = "%s (%s %s)" % (member, kind, sub)
        if not d.startswith("/sys/devices/") or not os.path.isdir(d):
            bad("%s: resolves to %s, not a device directory" % (where, d))
            continue
        subsystem = os.path.join(d, "subsystem")
        want = "/sys/%s/%s" % (kind, sub)
        if not os.path.islink(subsystem):
            bad("%s: %s/subsystem missing" % (where, d))
        elif os.path.realpath(subsystem) != want:
            bad("%s: subsystem -> %s, not %s" % (where, os.path.realpath(subsystem), want))
        uevent = {}
        try:
            with open(os.path.join(d, "uevent")) as f:
                for line in f.read().splitlines():
                    if "=" not in line:
                        bad("%s: uevent line %r is not KEY=VALUE" % (where, line))
                    else:
                        k, v = line.split("=", 1)
                        uevent[k] = v
        except OSError as e:
            bad("%s: %s/uevent: %s" % (where, d, e))
        power = os.path.join(d, "power")
        if not os.path.isdir(power):
            bad("%s: %s/power/ missing" % (where, d))
        else:
            have = set(os.listdir(power))
            for f in ("control", "runtime_status", "runtime_active_time", "runtime_suspended_time"):
                if f not in have:
                    bad("%s: power/%s missing" % (where, f))
            if "control" in have and open(os.path.join(power, "control")).read() not in ("auto\n", "on\n"):
                bad("%s: power/control is not auto or on" % where)
            if "runtime_status" in have and open(os.path.join(power, "runtime_status")).read() not in (
                    "unsupported\n", "active\n"):
                bad("%s: power/runtime_status is not unsupported or active" % where)
        dev = os.path.join(d, "device")
        if os.path.islink(dev) and not os.path.islink(os.path.join(os.path.realpath(dev), "subsystem")):
            bad("%s: device -> %s, which is no device (no subsystem)" % (where, os.path.realpath(dev)))
        drv = os.path.join(d, "driver")
        if os.path.lexists(drv):
            name = os.path.basename(os.path.realpath(drv))
            if os.path.realpath(drv) != "/sys/bus/%s/drivers/%s" % (sub, name) or not os.path.isdir(drv):
                bad("%s: driver -> %s, not a driver of bus %s" % (where, os.path.realpath(drv), sub))
            elif os.path.realpath(os.path.join(drv, os.path.basename(d))) != d:
                bad("%s: driver %s does not link back to it" % (where, name))
            if uevent.get("DRIVER") != name:
                bad("%s: uevent DRIVER=%s, the driver link says %s" % (where, uevent.get("DRIVER"), name))
        elif "DRIVER" in uevent:
            bad("%s: uevent says DRIVER=%s without a driver link" % (where, uevent["DRIVER"]))
        modalias = os.path.join(d, "modalias")
        if os.path.exists(modalias) and open(modalias).read().rstrip("\n") != uevent.get("MODALIAS"):
            bad("%s: modalias and uevent's MODALIAS differ" % where)

    for p in problems:
        print(p)
    print("walked %d devices, %d links" % (len(devices), len(links)))


if __name__ == "__main__":
    main()
