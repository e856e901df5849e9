/* render_hsmp: AMD HSMP socket power caps in the platform-device hwmon layout
 * (sysfs §11.2; upstream c0), one hwmon device per socket:
 *   sys/devices/platform/amd_hsmp/hwmon/hwmon<s>/  name (R "amd_hsmp_hwmon"),
 *       power1_input (S, uW), power1_cap (A, clamped to [0, power1_cap_max]), power1_cap_max (R)
 *   sys/class/hwmon/hwmon<s> -> ../../devices/platform/amd_hsmp/hwmon/hwmon<s>
 *   .../hwmon<s>/device -> ../../../amd_hsmp.<s>, a platform device per socket (subsystem
 *   platform), so lm-sensors names the sockets apart (amd_hsmp_hwmon-isa-0000, -0001). The
 *   kernel's ACPI devices are AMDI0097:0<s>, which lm-sensors 3.6 would name alike.
 * Both are devices of the driver model (render_devmodel.h): amd_hsmp.<s> bound to amd_hsmp
 * (uevent DRIVER and MODALIAS, modalias, driver, sys/bus/platform links), hwmon<s> of class
 * hwmon (empty uevent). */
#include "params.h"
#include "render.h"
#include "render_devmodel.h"
#include "profile.h"
#include "seg_attr.h"
#include "ytree.h"

#include <stdio.h>
#include <string.h>

void render_hsmp(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p)
{
    if (!yt_get(tree, "hsmp"))
        return;
    struct seg_builder *b = l->b;
    long long cap_max = prof_int(tree, "hsmp.capMaxUW", 0), cap = prof_int(tree, "hsmp.capDefaultUW", 0);
    for (int s = 0; s < p->sockets && s < PHYS_MAX_PKGS; s++) {
        char dir[256], path[512], text[64];
        snprintf(dir, sizeof dir, "sys/devices/platform/amd_hsmp/hwmon/hwmon%d", s);
        segb_dir(b, dir, 0755);
        snprintf(path, sizeof path, "sys/class/hwmon/hwmon%d", s);
        snprintf(text, sizeof text, "../../devices/platform/amd_hsmp/hwmon/hwmon%d", s);
        segb_link(b, path, text);
        /* The socket's own platform device amd_hsmp.<s>, the hwmon's parent: libsensors names
         * a platform chip by the number after the dot of its device (lib/sysfs.c
         * classify_device), so the sockets read amd_hsmp_hwmon-isa-0000, -0001. */
        char devdir[128];
        snprintf(devdir, sizeof devdir, "sys/devices/platform/amd_hsmp.%d", s);
        dm_device(l, devdir, "bus/platform", "DRIVER=amd_hsmp\nMODALIAS=platform:amd_hsmp\n", DM_PM_UNSUPPORTED);
        dm_bus(l, devdir, "platform", "amd_hsmp");
        snprintf(path, sizeof path, "%s/modalias", devdir);
        segb_static(b, path, 0444, "platform:amd_hsmp\n", 18);
        snprintf(path, sizeof path, "%s/device", dir);
        snprintf(text, sizeof text, "../../../amd_hsmp.%d", s);
        segb_link(b, path, text);
        dm_device(l, dir, "class/hwmon", "", DM_PM_UNSUPPORTED);
        snprintf(path, sizeof path, "%s/name", dir);
        segb_static(b, path, 0444, "amd_hsmp_hwmon\n", 15);
        snprintf(path, sizeof path, "%s/power1_input", dir);
        snprintf(text, sizeof text, "%lld\n", (long long)(p->idle_pkg_w * 1000) * 1000);
        segb_dynamic(b, path, 0444, SEG_S, layout_value(l, text, (struct binding){.kind = BK_HSMP_POWER,
                                                                                  .pkg = (uint8_t)s}),
                     SV_NONE, SEG_NONE);
        snprintf(path, sizeof path, "%s/power1_cap", dir);
        snprintf(text, sizeof text, "%lld\n", cap);
        segb_dynamic(b, path, 0644, SEG_A, layout_value(l, text, (struct binding){.kind = BK_HSMP_CAP,
                                                                                  .pkg = (uint8_t)s}),
                     SV_UW_CLAMP, segb_param(b, (struct seg_param){.a = 0, .b = cap_max, .related = SEG_NONE}, NULL));
        snprintf(path, sizeof path, "%s/power1_cap_max", dir);
        snprintf(text, sizeof text, "%lld\n", cap_max);
        segb_static(b, path, 0444, text, strlen(text));
    }
}
