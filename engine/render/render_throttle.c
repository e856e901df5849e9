/* render_throttle: each CPU's thermal_throttle directory, Intel's thermal throttle counters
 * (Linux 6.12 drivers/thermal/intel/therm_throt.c, faults.md §3.3):
 *   sys/devices/system/cpu/cpu<N>/thermal_throttle/
 *     core_throttle_count, core_throttle_max_time_ms, core_throttle_total_time_ms
 *         when the CPU has the thermal interrupt (cpu.flags acpi and tm: intel_thermal_supported)
 *     package_throttle_count, package_throttle_max_time_ms, package_throttle_total_time_ms
 *         when it has package thermal status too (cpu.flags pts)
 * all 0444, "%lu\n". The kernel keeps them per CPU; the physics throttles whole packages (PROCHOT
 * at TjMax, runtime/node.c account_throttle), so every CPU of a package shows that package's
 * episodes in both its core and its package files: three S values per package (BK_THERMAL
 * count, total, maximum) that all its CPUs' files show, and a fourth without a file, whether it
 * is throttled now, which IA32_(PACKAGE_)THERM_STATUS bits 0 and 1 read (render_msr.c).
 * VMs (cpu.hypervisor) and other vendors have no such directory. */
#include "params.h"
#include "profile.h"
#include "render.h"
#include "render_cpuinfo.h"
#include "seg_attr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void render_thermal_throttle(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p)
{
    const char *flags = prof_str(tree, "cpu.flags", "");
    if (prof_bool(tree, "cpu.hypervisor", false) || strcmp(prof_str(tree, "cpu.vendorID", ""), "GenuineIntel") ||
        !cpuinfo_has_word(flags, "acpi") || !cpuinfo_has_word(flags, "tm"))
        return;
    bool pts = cpuinfo_has_word(flags, "pts");
    int sockets = p->sockets < 1 ? 1 : p->sockets > PHYS_MAX_PKGS ? PHYS_MAX_PKGS : p->sockets;
    uint32_t v[PHYS_MAX_PKGS][4];
    for (int k = 0; k < sockets; k++)
        for (int q = TQ_ACTIVE; q <= TQ_MAX_MS; q++)
            v[k][q] = layout_value(l, "0\n", (struct binding){.kind = BK_THERMAL, .zone = (uint8_t)q, .pkg = (uint8_t)k});
    struct cpuinfo_cpu *cpus = NULL;
    int n = cpuinfo_cpus(tree, &cpus);
    static const char *const files[] = {"throttle_count", "throttle_total_time_ms", "throttle_max_time_ms"};
    for (int i = 0; i < n; i++) {
        int k = cpus[i].socket >= 0 && cpus[i].socket < sockets ? cpus[i].socket : 0;
        char dir[96], path[160];
        snprintf(dir, sizeof dir, "sys/devices/system/cpu/cpu%d/thermal_throttle", cpus[i].id);
        segb_dir(l->b, dir, 0755);
        for (int scope = 0; scope < (pts ? 2 : 1); scope++)
            for (int q = 0; q < 3; q++) {
                snprintf(path, sizeof path, "%s/%s_%s", dir, scope ? "package" : "core", files[q]);
                segb_dynamic(l->b, path, 0444, SEG_S, v[k][TQ_COUNT + q], SV_NONE, SEG_NONE);
            }
    }
    free(cpus);
}
