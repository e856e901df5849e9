/* render_devmodel: the driver-model entries the kernel gives every device directory
 * (render_devmodel.c; docs/whole-node.md "The driver model"): `subsystem`, `uevent`, `power/`,
 * and for a device on a bus its `driver` link and the sys/bus/<bus> links. The renderers of
 * the devices (powercap, hwmon, CPUs, NUMA nodes, PCI functions, DRM minors, platform devices)
 * call it for each directory they make a device of. */
#ifndef HWEMU_RENDER_DEVMODEL_H
#define HWEMU_RENDER_DEVMODEL_H
#include "layout.h"

/* What a device's power/ directory says (drivers/base/power/sysfs.c; values live on 6.18). */
enum dm_pm {
    DM_PM_NONE,        /* no power/ (device_set_pm_not_required: CPU cache devices) */
    DM_PM_UNSUPPORTED, /* control "auto", runtime_status "unsupported": runtime PM never enabled */
    DM_PM_ON,          /* control "on", runtime_status "active": PCI functions (pci_pm_init forbids) */
    DM_PM_CPU,         /* as DM_PM_UNSUPPORTED plus pm_qos_resume_latency_us "0" (register_cpu) */
};

/* dir/subsystem -> sys/<subsystem> ("class/powercap", "bus/pci"), dir/uevent (0644, the text,
 * "" for a device without properties) and dir/power/ as pm says. dir is node-relative
 * ("sys/devices/..."). */
void dm_device(struct node_layout *l, const char *dir, const char *subsystem, const char *uevent, enum dm_pm pm);
/* dir/power/ alone, as pm says (dm_device's third part). */
void dm_power(struct node_layout *l, const char *dir, enum dm_pm pm);
/* A device's binding to a driver of bus `bus` (its name is dir's last component): dir/driver ->
 * sys/bus/<bus>/drivers/<driver> and sys/bus/<bus>/drivers/<driver>/<name> -> dir. */
void dm_driver(struct node_layout *l, const char *dir, const char *bus, const char *driver);
/* The links of a device of bus `bus`: sys/bus/<bus>/devices/<name> -> dir, and dm_driver when
 * driver is neither NULL nor empty. */
void dm_bus(struct node_layout *l, const char *dir, const char *bus, const char *driver);
/* dir/name, a symlink to the node-relative path to, written relative as sysfs writes it (up to
 * the first strict ancestor of to, then down: fs/kernfs/symlink.c kernfs_get_target_path). */
void dm_link(struct node_layout *l, const char *dir, const char *name, const char *to);

#endif
