/* render_modules: the node's /proc/modules, listing the kernel modules whose devices the node
 * renders (run last: it looks at what the other renderers made). Agents check it before they
 * read a driver's files: Scaphandre 1.0.0's powercap sensor (src/sensors/powercap_rapl.rs,
 * PowercapRAPLSensor::check_module) reads it through the procfs crate and stops with a panic when
 * the file cannot be read, as on a host without /proc/modules.
 *
 * Format: kernel/module/procfs.c m_show (Linux 6.1): "<name> <size> <refcount> <used-by,...|-> <state>
 * <address>", the most recently loaded module first (new modules go to the head of the list), so
 * a module is listed before those it depends on. Sizes are 0 and addresses 0x0000000000000000: the
 * emulator has no module memory (the address is what a reader without CAP_SYSLOG sees anyway).
 *
 * Which modules (the drivers' Makefiles: drivers/powercap/Makefile, arch/x86/kernel/Makefile,
 * drivers/char/ipmi/Makefile, drivers/platform/x86/amd/hsmp/Makefile):
 *   intel-rapl control type     intel_rapl_msr (or intel_rapl_tpmi when the zones' limit fields
 *                               are TPMI's 18 bits) using intel_rapl_common; the MSR driver serves
 *                               AMD's RAPL too, so AMD energy-only hosts list it as well
 *   intel-rapl-mmio             processor_thermal_rapl using intel_rapl_common
 *   /dev/cpu/<n>/msr            msr
 *   /dev/ipmi0                  ipmi_devintf using ipmi_msghandler
 *   the HSMP device             amd_hsmp
 * Not listed: hwmon, cpufreq, GPU and other drivers (built in on Debian's kernels, or not
 * checked by any agent we run). It must never list a module whose files the node lacks. */
#include "profile.h"
#include "render.h"
#include "ytree.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A TPMI RAPL node: a zone of the intel-rapl control type with 18-bit limit fields (profiles
 * carry limitBits for TPMI only). */
static bool rapl_is_tpmi(const struct yt_node *tree)
{
    const struct yt_node *cts = yt_path(tree, "powercap.controlTypes");
    for (int i = 0; cts && cts->kind == YT_SEQ && i < cts->n; i++) {
        const struct yt_node *zones = yt_get(cts->vals[i], "zones");
        for (int j = 0; zones && zones->kind == YT_SEQ && j < zones->n; j++)
            if (prof_int(zones->vals[j], "limitBits", 0) == 18)
                return true;
    }
    return false;
}

static void line(char *buf, size_t len, size_t *used, const char *name, int refs, const char *users)
{
    if (*used >= len)
        return;
    int n = snprintf(buf + *used, len - *used, "%s 0 %d %s Live 0x0000000000000000\n", name, refs, users);
    if (n > 0)
        *used += (size_t)n;
}

void render_modules(struct node_layout *l, const struct yt_node *tree)
{
    struct seg_builder *b = l->b;
    char text[1024];
    size_t used = 0;
    bool rapl = segb_find(b, "sys/devices/virtual/powercap/intel-rapl") != SEG_NONE;
    bool mmio = segb_find(b, "sys/devices/virtual/powercap/intel-rapl-mmio") != SEG_NONE;
    bool tpmi = rapl && rapl_is_tpmi(tree);
    if (segb_find(b, "sys/devices/platform/amd_hsmp") != SEG_NONE)
        line(text, sizeof text, &used, "amd_hsmp", 0, "-");
    if (segb_find(b, "dev/ipmi0") != SEG_NONE) {
        line(text, sizeof text, &used, "ipmi_devintf", 0, "-");
        line(text, sizeof text, &used, "ipmi_msghandler", 1, "ipmi_devintf,");
    }
    if (segb_find(b, "dev/cpu/0/msr") != SEG_NONE)
        line(text, sizeof text, &used, "msr", 0, "-");
    if (mmio)
        line(text, sizeof text, &used, "processor_thermal_rapl", 0, "-");
    if (rapl)
        line(text, sizeof text, &used, tpmi ? "intel_rapl_tpmi" : "intel_rapl_msr", 0, "-");
    if (rapl || mmio) {
        char users[96];
        snprintf(users, sizeof users, "%s%s", rapl ? (tpmi ? "intel_rapl_tpmi," : "intel_rapl_msr,") : "",
                 mmio ? "processor_thermal_rapl," : "");
        line(text, sizeof text, &used, "intel_rapl_common", (int)rapl + (int)mmio, users);
    }
    segb_static(b, "proc/modules", 0444, text, used);
}
