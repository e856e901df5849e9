/* render_devmodel: the entries the driver core adds to every device directory, whatever its
 * class or bus (docs/whole-node.md "The driver model"; sysfs §1.6):
 *   subsystem  symlink to the device's class or bus (drivers/base/core.c
 *              device_add_class_symlinks, bus_add_device)
 *   uevent     0644, the KEY=VALUE lines of dev_uevent and the class's or bus's uevent callback
 *              (drivers/base/core.c uevent_show); empty for a device without properties
 *   power/     drivers/base/power/sysfs.c runtime_attrs: control, runtime_active_time,
 *              runtime_status, runtime_suspended_time (never autosuspend_delay_ms: its read
 *              fails with EIO while autosuspend is off, and a rendered file cannot fail a read)
 *   driver     symlink to sys/bus/<bus>/drivers/<driver>, with the bus's devices/ and the
 *              driver's own link back (drivers/base/bus.c bus_add_device, driver_sysfs_add)
 * Links are relative, as kernfs writes them. Never: values that change (everything here is R). */
#include "render_devmodel.h"

#include <stdio.h>
#include <string.h>

void dm_link(struct node_layout *l, const char *dir, const char *name, const char *to)
{
    /* kernfs_get_target_path: up from the link's directory to the first strict ancestor of
     * the target, one "../" a level, then down the rest of the target's path. */
    char path[512], target[512];
    size_t base = strlen(dir), used = 0;
    for (;;) {
        bool ancestor = strncmp(dir, to, base) == 0 && to[base] == '/';
        if (ancestor || base == 0)
            break;
        while (base > 0 && dir[base - 1] != '/')
            base--;
        if (base > 0)
            base--; /* the '/' before the dropped component */
        used += (size_t)snprintf(target + used, sizeof target - used, "../");
        if (used >= sizeof target)
            return;
    }
    snprintf(target + used, sizeof target - used, "%s", to + (base ? base + 1 : 0));
    snprintf(path, sizeof path, "%s/%s", dir, name);
    segb_link(l->b, path, target);
}

static void dm_file(struct node_layout *l, const char *dir, const char *name, uint16_t mode, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    segb_static(l->b, path, mode, text, strlen(text));
}

void dm_device(struct node_layout *l, const char *dir, const char *subsystem, const char *uevent, enum dm_pm pm)
{
    char to[128];
    snprintf(to, sizeof to, "sys/%s", subsystem);
    dm_link(l, dir, "subsystem", to);
    dm_file(l, dir, "uevent", 0644, uevent);
    dm_power(l, dir, pm);
}

void dm_power(struct node_layout *l, const char *dir, enum dm_pm pm)
{
    char power[512];
    if (pm == DM_PM_NONE)
        return;
    snprintf(power, sizeof power, "%s/power", dir);
    segb_dir(l->b, power, 0755);
    /* control_show: "on" when runtime PM is forbidden (pm_runtime_forbid, as pci_pm_init does),
     * else "auto"; runtime_status_show: "unsupported" while runtime PM was never enabled. */
    dm_file(l, power, "control", 0644, pm == DM_PM_ON ? "on\n" : "auto\n");
    dm_file(l, power, "runtime_active_time", 0444, "0\n");
    dm_file(l, power, "runtime_status", 0444, pm == DM_PM_ON ? "active\n" : "unsupported\n");
    dm_file(l, power, "runtime_suspended_time", 0444, "0\n");
    if (pm == DM_PM_CPU) /* drivers/base/cpu.c register_cpu: dev_pm_qos_expose_latency_limit(dev, 0) */
        dm_file(l, power, "pm_qos_resume_latency_us", 0644, "0\n");
}

void dm_driver(struct node_layout *l, const char *dir, const char *bus, const char *driver)
{
    const char *name = strrchr(dir, '/');
    char at[256];
    snprintf(at, sizeof at, "sys/bus/%s/drivers/%s", bus, driver);
    dm_link(l, dir, "driver", at);
    dm_link(l, at, name ? name + 1 : dir, dir);
}

void dm_bus(struct node_layout *l, const char *dir, const char *bus, const char *driver)
{
    const char *name = strrchr(dir, '/');
    char at[256];
    snprintf(at, sizeof at, "sys/bus/%s/devices", bus);
    dm_link(l, at, name ? name + 1 : dir, dir);
    if (driver && *driver)
        dm_driver(l, dir, bus, driver);
}
