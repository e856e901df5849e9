/* render_cpuidle: the idle states of every CPU (drivers/cpuidle/sysfs.c, Linux 6.12):
 *   sys/devices/system/cpu/cpuidle/   current_driver, current_governor (0644; taken, no effect),
 *                                     current_governor_ro, available_governors
 *   sys/devices/system/cpu/cpu<N>/cpuidle/state<K>/
 *       name, desc, latency, residency (µs), disable (0644; taken, no effect), usage and time
 *       (views of the CPU's idle time, seg_view.h): what cpupower idle-info reads. The kernel's
 *       power, above, below, rejected and default_status are left out: every file here is
 *       one per CPU and state, and they would double the segment of a node for files no tool
 *       of the tests reads (docs/whole-node.md)
 * The state tables are the drivers' own: intel_idle.c `skx_cstates` (Skylake-X/Cascade Lake,
 * model 85), `spr_cstates` (Sapphire/Emerald Rapids, 143/207), `gnr_cstates` (Granite Rapids,
 * 173), each after the POLL state every driver registers first (poll_state.c); AMD EPYC uses
 * acpi_idle (processor_idle.c) with the _CST layout captured on EPYC servers: C1 "ACPI FFH MWAIT
 * 0x0" 1/2 µs and C2 "ACPI IOPORT 0x814", whose latency on Genoa is not published (400 µs
 * assumed, residency twice the latency as acpi_idle sets it). Governor menu (Debian's NOHZ
 * kernel). A VM (cpu.hypervisor) or another CPU gets no cpuidle files.
 * How the idle time splits over the states, and the mean time of one entry, are assumed (no
 * source gives them for a loaded server): POLL 0.5 %, the shallow states 10 % and 20 %, the
 * deepest the rest; 5, 50, 200 and 2000 µs per entry. */
#include "params.h"
#include "profile.h"
#include "render.h"
#include "render_cpuinfo.h"
#include "seg_attr.h"
#include "seg_view.h"
#include "ytree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct idle_state {
    const char *name, *desc;
    int latency, residency;
    int share_permille, entry_us;
};

#define POLL {"POLL", "CPUIDLE CORE POLL IDLE", 0, 0, 5, 5}
static const struct idle_state skx[] = {POLL, {"C1", "MWAIT 0x00", 2, 2, 100, 50}, {"C1E", "MWAIT 0x01", 10, 20, 200, 200},
                                        {"C6", "MWAIT 0x20", 133, 600, 695, 2000}, {0}};
static const struct idle_state spr[] = {POLL, {"C1", "MWAIT 0x00", 1, 1, 100, 50}, {"C1E", "MWAIT 0x01", 2, 4, 200, 200},
                                        {"C6", "MWAIT 0x20", 290, 800, 695, 2000}, {0}};
static const struct idle_state gnr[] = {POLL, {"C1", "MWAIT 0x00", 1, 1, 100, 50}, {"C1E", "MWAIT 0x01", 4, 4, 200, 200},
                                        {"C6", "MWAIT 0x20", 170, 650, 400, 2000},
                                        {"C6P", "MWAIT 0x21", 210, 1000, 295, 2000}, {0}};
static const struct idle_state epyc[] = {POLL, {"C1", "ACPI FFH MWAIT 0x0", 1, 2, 200, 50},
                                         {"C2", "ACPI IOPORT 0x814", 400, 800, 795, 2000}, {0}};

static void put(struct seg_builder *b, const char *dir, const char *file, uint16_t mode, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    segb_static(b, path, mode, text, strlen(text));
}

/* The state table of the node's processor (NULL: no cpuidle files) and its driver. */
static const struct idle_state *table_of(const struct yt_node *tree, const char **driver)
{
    if (prof_bool(tree, "cpu.hypervisor", false))
        return NULL;
    const char *vendor = prof_str(tree, "cpu.vendorID", "");
    long long family = prof_int(tree, "cpu.family", 0), model = prof_int(tree, "cpu.model", 0);
    *driver = "intel_idle";
    if (!strcmp(vendor, "GenuineIntel") && family == 6)
        return model == 85 ? skx : model == 143 || model == 207 ? spr : model == 173 ? gnr : NULL;
    if (!strcmp(vendor, "AuthenticAMD") && (family == 0x19 || family == 0x1a)) {
        *driver = "acpi_idle";
        return epyc;
    }
    return NULL;
}

int render_cpuidle_c6_permille(const struct yt_node *tree)
{
    const char *driver;
    const struct idle_state *st = table_of(tree, &driver);
    int sum = 0;
    for (int k = 0; st && st[k].name; k++)
        if (!strncmp(st[k].name, "C6", 2))
            sum += st[k].share_permille;
    return sum;
}

void render_cpuidle(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p)
{
    const char *driver;
    const struct idle_state *st = table_of(tree, &driver);
    int n = render_proc_ncpus(p);
    uint32_t elapsed = segb_value_of(l->b, segb_find(l->b, "proc/stat"));
    if (!st || n == 0 || elapsed == SEG_NONE)
        return;
    struct seg_builder *b = l->b;
    char text[64], dir[160], path[224];
    const char *g = "sys/devices/system/cpu/cpuidle";
    snprintf(text, sizeof text, "%s\n", driver);
    put(b, g, "current_driver", 0444, text);
    put(b, g, "current_governor", 0644, "menu\n");
    put(b, g, "current_governor_ro", 0444, "menu\n");
    put(b, g, "available_governors", 0444, "ladder menu haltpoll \n");
    segb_own(b, g);
    struct cpuinfo_cpu *cpus = NULL;
    int ncpu = cpuinfo_cpus(tree, &cpus);
    if (ncpu < 0)
        abort();
    for (int i = 0; i < n && i < ncpu; i++) {
        /* the CPU's busy counter: the value after the elapsed one, by CPU index (render_proc.c) */
        uint32_t busy = elapsed + 1 + (uint32_t)i;
        for (int k = 0; st[k].name; k++) {
            snprintf(dir, sizeof dir, "sys/devices/system/cpu/cpu%d/cpuidle/state%d", cpus[i].id, k);
            put(b, dir, "name", 0444, (snprintf(text, sizeof text, "%s\n", st[k].name), text));
            put(b, dir, "desc", 0444, (snprintf(text, sizeof text, "%s\n", st[k].desc), text));
            put(b, dir, "latency", 0444, (snprintf(text, sizeof text, "%d\n", st[k].latency), text));
            put(b, dir, "residency", 0444, (snprintf(text, sizeof text, "%d\n", st[k].residency), text));
            put(b, dir, "disable", 0644, "0\n");
            for (int u = 0; u < 2; u++) {
                uint32_t pa = segb_param(b, (struct seg_param){.a = elapsed, .b = busy, .c = st[k].share_permille,
                                                               .d = u ? 0 : st[k].entry_us, .related = SEG_NONE},
                                         NULL);
                snprintf(path, sizeof path, "%s/%s", dir, u ? "time" : "usage");
                segb_dynamic(b, path, 0444, SEG_S, busy, SEG_VIEW_IDLE, pa);
            }
        }
        snprintf(dir, sizeof dir, "sys/devices/system/cpu/cpu%d/cpuidle", cpus[i].id);
        segb_own(b, dir);
    }
    free(cpus);
}
