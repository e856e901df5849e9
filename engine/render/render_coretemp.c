/* render_coretemp: the CPU temperature hwmon devices (drivers/hwmon/coretemp.c on Intel,
 * k10temp.c on AMD Zen), from the package temperature of the thermal model:
 *   Intel: sys/devices/platform/coretemp.<pkg>/hwmon/hwmon<N>/ per package: name "coretemp",
 *          temp1_* = package ("Package id <pkg>"), temp<core+2>_* = each core ("Core <core>"),
 *          each with _label, _input, _crit (TjMax), _crit_alarm (0), _max (TjMax - 10 °C);
 *          whole degrees (the digital thermal sensor reads 1 °C steps)
 *   AMD:   sys/devices/pci0000:00/0000:00:<18+pkg>.3/hwmon/hwmon<N>/ per socket: name "k10temp",
 *          temp1 = Tctl, temp3.. = Tccd1..Tccd<n> (family 19h: one per CCD, 8 cores each; family
 *          1Ah has none in 6.12), labels, 0.125 °C steps, no _max/_crit on Zen
 * (Linux 6.12 drivers/hwmon/coretemp.c and k10temp.c; lm-sensors 3.6.0 lib/sysfs.c names the chips
 * coretemp-isa-000<pkg> and k10temp-pci-00c3/00cb from the device and subsystem links). TjMax
 * of these Xeons is not published: 100 °C assumed (the node_exporter fixture's crit 100000).
 * Each package's temperature is one S value (published when its shown value moves); a core or
 * CCD reads it through a view (seg_view.h SEG_VIEW_TEMP) lowered by a fixed spread of 0 to 2 °C
 * (assumed: cores of a loaded package read within a few degrees of its hottest; the package
 * sensor is the hottest core). VMs (cpu.hypervisor) have no such sensors.
 * The driver model (render_devmodel.h): hwmon<N> is a class device (hwmon.c: class hwmon, no
 * uevent properties) with `device` -> its parent; coretemp.<pkg> a platform device bound to
 * coretemp (uevent DRIVER and MODALIAS=platform:coretemp, drivers/base/platform.c
 * platform_uevent, modalias_show); 0000:00:<18+pkg>.3 the data fabric's function 3, a PCI
 * function (class 0x060000, host bridge) bound to k10temp, with its uevent, modalias, driver
 * links and power/ (amd_df_function). */
#include "params.h"
#include "profile.h"
#include "render.h"
#include "render_cpuinfo.h"
#include "render_devmodel.h"
#include "seg_attr.h"
#include "seg_view.h"
#include "ytree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_text(struct seg_builder *b, const char *dir, const char *file, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    segb_static(b, path, 0444, text, strlen(text));
}

/* A static 0444 attribute formatted from one integer (fmt a literal at every use). */
#define put(b, dir, file, fmt, v)                                                                     \
    do {                                                                                              \
        char t_[64];                                                                                  \
        snprintf(t_, sizeof t_, fmt, (long long)(v));                                                 \
        put_text((b), (dir), (file), t_);                                                             \
    } while (0)

/* The first hwmon number no other renderer took. */
static int free_hwmon(struct seg_builder *b, int from)
{
    char path[64];
    for (int h = from;; h++) {
        snprintf(path, sizeof path, "sys/class/hwmon/hwmon%d", h);
        if (segb_find(b, path) == SEG_NONE)
            return h;
    }
}

/* tempN_input of a core or CCD: the package's value lowered by spread m°C, in steps of step. */
static void temp_view(struct node_layout *l, const char *dir, int n, uint32_t pkg_value, int spread, int step)
{
    char path[256];
    snprintf(path, sizeof path, "%s/temp%d_input", dir, n);
    uint32_t pa = segb_param(l->b, (struct seg_param){.a = pkg_value, .b = spread, .c = step, .related = SEG_NONE},
                             NULL);
    segb_dynamic(l->b, path, 0444, SEG_S, pkg_value, SEG_VIEW_TEMP, pa);
}

#define AMD_DF_CLASS 0x060000

/* The data fabric function 3's device id (include/linux/pci_ids.h PCI_DEVICE_ID_AMD_*_DF_F3, the
 * ids k10temp_id_table matches), 0 for a family/model outside this table. */
static unsigned amd_df_f3(int family, int model)
{
    if (family == 0x19)
        return model < 0x10 ? 0x1653 : model < 0x20 ? 0x14b0 : 0;
    if (family == 0x1a)
        return model < 0x20 ? 0x12c3 : 0;
    return 0;
}

/* The PCI function 0000:00:<18+k>.3 k10temp binds: uevent as pci_uevent prints it (subsystem ids
 * 0000), its modalias, its driver links and power/ as every PCI function has. It stays out of
 * sys/bus/pci/devices, which lspci lists: a function lspci would show needs the vendor, device
 * and config files render_pci.c renders, and the node shows the data fabric's functions nowhere. */
static void amd_df_function(struct node_layout *l, const char *dir, int family, int model, int k)
{
    unsigned id = amd_df_f3(family, model);
    char uevent[320], modalias[80];
    snprintf(modalias, sizeof modalias, "pci:v00001022d%08Xsv00000000sd00000000bc%02Xsc%02Xi%02X", id,
             AMD_DF_CLASS >> 16, (AMD_DF_CLASS >> 8) & 0xff, AMD_DF_CLASS & 0xff);
    snprintf(uevent, sizeof uevent,
             "DRIVER=k10temp\nPCI_CLASS=%X\nPCI_ID=1022:%04X\nPCI_SUBSYS_ID=0000:0000\nPCI_SLOT_NAME=0000:00:%02x.3\n"
             "MODALIAS=%s\n", AMD_DF_CLASS, id, 0x18 + k, modalias);
    dm_device(l, dir, "bus/pci", uevent, DM_PM_ON);
    dm_driver(l, dir, "pci", "k10temp");
    char path[256], text[96];
    snprintf(path, sizeof path, "%s/modalias", dir);
    snprintf(text, sizeof text, "%s\n", modalias);
    segb_static(l->b, path, 0444, text, strlen(text));
}

void render_coretemp(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p)
{
    if (prof_bool(tree, "cpu.hypervisor", false) || p->cpus < 1)
        return;
    const char *vendor = prof_str(tree, "cpu.vendorID", "");
    bool intel = !strcmp(vendor, "GenuineIntel"), amd = !strcmp(vendor, "AuthenticAMD");
    if (!intel && !amd)
        return;
    struct seg_builder *b = l->b;
    int sockets = p->sockets < 1 ? 1 : p->sockets > PHYS_MAX_PKGS ? PHYS_MAX_PKGS : p->sockets;
    int cores = (int)prof_int(tree, "cpu.coresPerSocket", 1), family = (int)prof_int(tree, "cpu.family", 0);
    int h = 0;
    char dir[192], path[256], target[192], text[64];
    double t0 = p->ambient_init_c;
    for (int k = 0; k < sockets; k++) {
        h = free_hwmon(b, h);
        int step = intel ? 1000 : 125;
        long long mc = (long long)(t0 * 1000) / step * step;
        snprintf(text, sizeof text, "%lld\n", mc);
        uint32_t v = layout_value(l, text, (struct binding){.kind = BK_PKG_TEMP, .pkg = (uint8_t)k, .zone = !intel});
        if (intel) {
            snprintf(dir, sizeof dir, "sys/devices/platform/coretemp.%d", k);
            dm_device(l, dir, "bus/platform", "DRIVER=coretemp\nMODALIAS=platform:coretemp\n", DM_PM_UNSUPPORTED);
            dm_bus(l, dir, "platform", "coretemp");
            put_text(b, dir, "modalias", "platform:coretemp\n");
            snprintf(dir, sizeof dir, "sys/devices/platform/coretemp.%d/hwmon/hwmon%d", k, h);
            snprintf(target, sizeof target, "../../../coretemp.%d", k);
        } else {
            snprintf(dir, sizeof dir, "sys/devices/pci0000:00/0000:00:%02x.3", 0x18 + k);
            amd_df_function(l, dir, family, (int)prof_int(tree, "cpu.model", 0), k);
            snprintf(dir, sizeof dir, "sys/devices/pci0000:00/0000:00:%02x.3/hwmon/hwmon%d", 0x18 + k, h);
            snprintf(target, sizeof target, "../../../0000:00:%02x.3", 0x18 + k);
        }
        segb_dir(b, dir, 0755);
        dm_device(l, dir, "class/hwmon", "", DM_PM_UNSUPPORTED);
        segb_link(b, (snprintf(path, sizeof path, "%s/device", dir), path), target);
        snprintf(path, sizeof path, "sys/class/hwmon/hwmon%d", h);
        snprintf(target, sizeof target, "../../%s", dir + 4);
        segb_link(b, path, target);
        put_text(b, dir, "name", intel ? "coretemp\n" : "k10temp\n");
        snprintf(path, sizeof path, "%s/temp1_input", dir);
        segb_dynamic(b, path, 0444, SEG_S, v, SV_NONE, SEG_NONE);
        if (intel) {
            put(b, dir, "temp1_label", "Package id %lld\n", k);
            put(b, dir, "temp1_crit", "%lld\n", 100000);
            put(b, dir, "temp1_crit_alarm", "%lld\n", 0);
            put(b, dir, "temp1_max", "%lld\n", 90000);
            for (int c = 0; c < cores; c++) {
                char name[32];
                temp_view(l, dir, c + 2, v, (c * 7 % 5) * 500, 1000);
                snprintf(name, sizeof name, "temp%d_label", c + 2);
                put(b, dir, name, "Core %lld\n", c);
                snprintf(name, sizeof name, "temp%d_crit", c + 2);
                put(b, dir, name, "%lld\n", 100000);
                snprintf(name, sizeof name, "temp%d_crit_alarm", c + 2);
                put(b, dir, name, "%lld\n", 0);
                snprintf(name, sizeof name, "temp%d_max", c + 2);
                put(b, dir, name, "%lld\n", 90000);
            }
        } else {
            put_text(b, dir, "temp1_label", "Tctl\n");
            int ccds = family == 0x19 ? (cores + 7) / 8 : 0;
            for (int c = 0; c < ccds && c < 12; c++) {
                char name[32];
                temp_view(l, dir, c + 3, v, (c * 7 % 5) * 500, 125);
                snprintf(name, sizeof name, "temp%d_label", c + 3);
                put(b, dir, name, "Tccd%lld\n", c + 1);
            }
        }
        h++;
    }
}
