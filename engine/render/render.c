/* render: every file of one node, in the order the kernel would have them: the node root's
 * cpuinfo and state/, then the topology (render_topology.c), the CPU vulnerabilities
 * (render_vulns.c), powercap, cpufreq, HSMP, the PCI
 * devices and GPUs, the uncore's PCI functions and /proc/bus/pci, the platform (BMC, pm_counters), coretemp, cpuidle, the MSR devices (their
 * registers read the counters and temperatures rendered before them), and last /proc/modules naming
 * their drivers. The value table lives in layout.c. */
#include "render.h"
#include "render_cpuinfo.h"
#include "render_pci.h"
#include "render_topology.h"
#include "render_vulns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A kept counter (BK_ENERGY_KEPT) for every zone of the physics that no energy_uj file shows:
 * the packages' PACKAGE, DRAM and CORE zones and the node's psys. */
static void render_kept_counters(struct node_layout *l, const struct phys_cpu_params *p)
{
    int npkgs = p->sockets < 1 ? 1 : p->sockets > PHYS_MAX_PKGS ? PHYS_MAX_PKGS : p->sockets; /* as the physics */
    for (int k = -1; k < npkgs; k++) {
        for (int z = 0; z < (k < 0 ? 1 : 3); z++) {
            int zone = k < 0 ? PHYS_ZONE_PSYS : z, pkg = k < 0 ? 0 : k;
            bool shown = false;
            for (uint32_t v = 0; v < l->nbinds && !shown; v++)
                shown = l->binds[v].kind == BK_ENERGY && l->binds[v].zone == zone && l->binds[v].pkg == pkg;
            if (!shown)
                layout_counter(l, 1000, (struct binding){.kind = BK_ENERGY_KEPT, .zone = (uint8_t)zone,
                                                         .pkg = (uint8_t)pkg});
        }
    }
}

void render_node(struct node_layout *l, const struct yt_node *tree, const char *profile,
                 const struct phys_cpu_params *p, const struct phys_gpu_params *g, const struct job_cgroups *cg)
{
    char json[512];
    int n = snprintf(json, sizeof json, "{\"schemaVersion\":1,\"profile\":\"%s\",\"substep\":\"1ms\"}\n", profile);
    segb_static(l->b, "state/hwemu.json", 0444, json, (size_t)n);
    /* The class and CPU directories exist on every node, as on any Linux host: a node without
     * powercap or cpufreq shows them empty rather than letting the host's own show through. */
    segb_dir(l->b, "sys/class/powercap", 0755);
    segb_dir(l->b, "sys/devices/virtual/powercap", 0755);
    segb_dir(l->b, "sys/devices/system/cpu/cpufreq", 0755);
    segb_dir(l->b, "sys/class/hwmon", 0755);
    /* /dev: the node's devices, then the host's but for the classes the node alone answers for
     * (shim/emu/emu_hide.h), whatever devices this node has */
    segb_dir(l->b, "dev", 0755);
    render_topology(l, tree);
    render_vulnerabilities(l, tree);
    render_powercap(l, tree, p);
    render_cpufreq(l, tree, p);
    render_hsmp(l, tree, p);
    render_proc(l, tree, p);
    render_cpuinfo_entry(l, tree, p->cpu_policy, p->cpu_pkg_n); /* after proc: its busy counters */
    render_cpufreq_stats(l, tree, p);
    struct pci_proc pp = {0};
    render_gpus(l, tree, p, g, &pp);
    render_uncore(l, tree, p, &pp);
    render_pci_proc(l, &pp); /* /proc/bus/pci/devices: every function rendered above */
    render_platform(l, tree, g);
    render_coretemp(l, tree, p); /* after every other hwmon device: it takes the next free numbers */
    render_cpuidle(l, tree, p);
    render_thermal_throttle(l, tree, p);
    render_msr(l, tree, p); /* after coretemp and proc: it reads their temperatures and busy counters */
    render_cgroup(l, p, cg);
    render_jobproc(l, p, cg);
    render_kept_counters(l, p); /* after every energy_uj file */
    render_modules(l, tree);    /* last: it lists the drivers of the devices rendered above */
    /* What the node owns whole: the host's own files there never show through. */
    static const char *const owned[] = {
        "sys/class/powercap", "sys/devices/virtual/powercap", "sys/devices/system/cpu/cpufreq",
        "sys/devices/system/cpu/intel_pstate", "sys/devices/system/cpu/amd_pstate", "sys/devices/platform/amd_hsmp",
        "sys/class/hwmon", "dev/cpu", "sys/fs/cgroup"};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        segb_own(l->b, owned[i]);
    /* Driver directories of other machines: absent here, whatever the host has. */
    static const char *const foreign[] = {"sys/devices/system/cpu/intel_pstate", "sys/devices/system/cpu/amd_pstate",
                                          "sys/devices/platform/amd_hsmp", "sys/devices/virtual/powercap/intel-rapl",
                                          "sys/devices/virtual/powercap/intel-rapl-mmio"};
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++)
        segb_absent(l->b, foreign[i]);
}
