/* render_platform: what the node's baseboard management and platform counters show, all from the
 * one node power the engine publishes (the figure /telemetry calls nodePowerWatts: packages,
 * DRAM, GPUs and the rest of the platform):
 *   state/platform/power     S "<current> <min> <max> <avg> <period_ms>\n" (segment.h "Devices")
 *   state/faults             S the faults striking the node now, as the segment's readers act on
 *                            them (engine/runtime/node.h node_faults_text, docs/faults.md)
 *   dev/ipmi0                the OpenIPMI device (class I, c 0600) of a bare-metal node: the
 *                            shim's BMC answers DCMI Get Power Reading from state/platform/power.
 *                            A hypervisor node (cpu.hypervisor) has no BMC and no device.
 *   sys/cray/pm_counters/    for a profile with crayPmCounters (HPE/Cray EX blades): the files
 *                            HPE's CSM documentation lists, "<n> W <us> us" / "<n> J <us> us"
 *                            (the format of the CEEMS fixture sys/cray/pm_counters), rewritten
 *                            every tick: power, energy (node: psys + GPUs), cpu_power/energy
 *                            (packages), memory_power/energy (DRAM), accel<i>_power/energy and
 *                            accel<i>_power_cap ("0 W": no cap) per GPU, power_cap ("0 W"),
 *                            freshness (samples since startup at raw_scan_hz), generation (1),
 *                            startup (the engine's start, us), raw_scan_hz and version (profile).
 * Never steps the physics; node.c fills the S values each tick. */
#include "profile.h"
#include "seg_attr.h"
#include "render.h"
#include "ytree.h"

#include <stdio.h>
#include <string.h>

#define PM "sys/cray/pm_counters"

static void pm_file(struct node_layout *l, const char *name, const char *init, uint8_t which, uint8_t accel)
{
    char path[128];
    snprintf(path, sizeof path, PM "/%s", name);
    uint32_t v = layout_value(l, init, (struct binding){.kind = BK_PM_COUNTER, .zone = which, .pkg = accel});
    segb_dynamic(l->b, path, 0444, SEG_S, v, SV_NONE, SEG_NONE);
}

static void pm_static(struct node_layout *l, const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, PM "/%s", name);
    segb_static(l->b, path, 0444, text, strlen(text));
}

static void render_pm_counters(struct node_layout *l, const struct yt_node *tree, const struct phys_gpu_params *g)
{
    char name[64], text[64];
    pm_file(l, "power", "0 W 0 us\n", PM_POWER, 0);
    pm_file(l, "energy", "0 J 0 us\n", PM_ENERGY, 0);
    pm_file(l, "cpu_power", "0 W 0 us\n", PM_CPU_POWER, 0);
    pm_file(l, "cpu_energy", "0 J 0 us\n", PM_CPU_ENERGY, 0);
    pm_file(l, "memory_power", "0 W 0 us\n", PM_MEMORY_POWER, 0);
    pm_file(l, "memory_energy", "0 J 0 us\n", PM_MEMORY_ENERGY, 0);
    int ngpus = g->vendor == PHYS_GPU_NONE ? 0 : g->count;
    for (int i = 0; i < ngpus && i < PHYS_GPU_MAX; i++) {
        snprintf(name, sizeof name, "accel%d_power", i);
        pm_file(l, name, "0 W 0 us\n", PM_ACCEL_POWER, (uint8_t)i);
        snprintf(name, sizeof name, "accel%d_energy", i);
        pm_file(l, name, "0 J 0 us\n", PM_ACCEL_ENERGY, (uint8_t)i);
        snprintf(name, sizeof name, "accel%d_power_cap", i);
        pm_static(l, name, "0 W\n");
    }
    pm_static(l, "power_cap", "0 W\n");
    long long hz = prof_int(tree, "crayPmCounters.rawScanHz", 10);
    pm_file(l, "freshness", "0\n", PM_FRESHNESS, (uint8_t)(hz < 1 ? 1 : hz > 255 ? 255 : hz)); /* pkg: the rate */
    pm_file(l, "startup", "0\n", PM_STARTUP, 0);
    pm_static(l, "generation", "1\n");
    snprintf(text, sizeof text, "%lld\n", prof_int(tree, "crayPmCounters.rawScanHz", 10));
    pm_static(l, "raw_scan_hz", text);
    snprintf(text, sizeof text, "%lld\n", prof_int(tree, "crayPmCounters.version", 3));
    pm_static(l, "version", text);
    segb_own(l->b, PM);
}

void render_platform(struct node_layout *l, const struct yt_node *tree, const struct phys_gpu_params *g)
{
    uint32_t v = layout_value(l, "0.0 0.0 0.0 0.0 0\n", (struct binding){.kind = BK_PLATFORM});
    segb_dynamic(l->b, "state/platform/power", 0444, SEG_S, v, SV_NONE, SEG_NONE);
    v = layout_value(l, "\n", (struct binding){.kind = BK_FAULTS});
    segb_dynamic(l->b, "state/faults", 0444, SEG_S, v, SV_NONE, SEG_NONE);
    if (!prof_bool(tree, "cpu.hypervisor", false))
        segb_device(l->b, "dev/ipmi0", 0600, SEG_I, SEG_NONE);
    if (yt_get(tree, "crayPmCounters"))
        render_pm_counters(l, tree, g);
}
