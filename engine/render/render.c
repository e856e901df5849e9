/* render: every file of one node, in the order the kernel would have them: the node root's
 * cpuinfo and state/, then powercap, cpufreq, HSMP, GPUs, MSR devices and the platform (BMC,
 * pm_counters). The value table lives in layout.c. */
#include "render.h"
#include "render_cpuinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A list of CPU ids as the kernel prints cpumask lists: "0-3,8". */
static void cpu_list(const int *ids, int n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < n && used + 24 < len; i++) {
        int j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1)
            j++;
        used += (size_t)snprintf(out + used, len - used, "%s%d", used ? "," : "", ids[i]);
        if (j > i)
            used += (size_t)snprintf(out + used, len - used, "-%d", ids[j]);
        i = j;
    }
    snprintf(out + used, len - used, "\n");
}

/* sys/devices/system/cpu: the online/possible/present masks, and per CPU its directory, its
 * online file (CPUs but 0) and its topology (sysfs §4.1; Documentation/ABI/stable/
 * sysfs-devices-system-cpu). */
static void render_cpu_topology(struct node_layout *l, const struct yt_node *tree)
{
    struct cpuinfo_cpu *cpus = NULL;
    int ncpu = cpuinfo_cpus(tree, &cpus);
    if (ncpu < 0)
        abort();
    int *ids = malloc(sizeof *ids * (size_t)(ncpu + 1)), *same = malloc(sizeof *same * (size_t)(ncpu + 1));
    if (!ids || !same)
        abort();
    size_t cap = (size_t)ncpu * 8 + 64;
    char *list = malloc(cap), path[160];
    if (!list)
        abort();
    for (int i = 0; i < ncpu; i++)
        ids[i] = cpus[i].id;
    cpu_list(ids, ncpu, list, cap);
    static const char *const masks[] = {"online", "possible", "present"};
    for (int m = 0; m < 3; m++) {
        snprintf(path, sizeof path, "sys/devices/system/cpu/%s", masks[m]);
        segb_static(l->b, path, 0444, list, strlen(list));
    }
    segb_static(l->b, "sys/devices/system/cpu/offline", 0444, "\n", 1);
    segb_static(l->b, "sys/devices/system/cpu/kernel_max", 0444, "8191\n", 5);
    for (int i = 0; i < ncpu; i++) {
        const struct cpuinfo_cpu *c = &cpus[i];
        char text[64];
        snprintf(path, sizeof path, "sys/devices/system/cpu/cpu%d", c->id);
        segb_dir(l->b, path, 0755);
        if (c->id != 0) { /* CPU 0 cannot go offline: it has no online file */
            snprintf(path, sizeof path, "sys/devices/system/cpu/cpu%d/online", c->id);
            segb_static(l->b, path, 0644, "1\n", 2);
        }
        snprintf(path, sizeof path, "sys/devices/system/cpu/cpu%d/topology/physical_package_id", c->id);
        snprintf(text, sizeof text, "%d\n", c->socket);
        segb_static(l->b, path, 0444, text, strlen(text));
        snprintf(path, sizeof path, "sys/devices/system/cpu/cpu%d/topology/core_id", c->id);
        snprintf(text, sizeof text, "%d\n", c->core);
        segb_static(l->b, path, 0444, text, strlen(text));
        snprintf(path, sizeof path, "sys/devices/system/cpu/cpu%d/topology/die_id", c->id);
        segb_static(l->b, path, 0444, "0\n", 2);
        /* siblings: same core (thread_siblings, core_cpus) and same package (core_siblings,
         * package_cpus) */
        for (int pass = 0; pass < 2; pass++) {
            int n = 0;
            for (int j = 0; j < ncpu; j++)
                if (cpus[j].socket == c->socket && (pass || cpus[j].core == c->core))
                    same[n++] = cpus[j].id;
            cpu_list(same, n, list, cap);
            static const char *const names[2][2] = {{"thread_siblings_list", "core_cpus_list"},
                                                    {"core_siblings_list", "package_cpus_list"}};
            for (int k = 0; k < 2; k++) {
                snprintf(path, sizeof path, "sys/devices/system/cpu/cpu%d/topology/%s", c->id, names[pass][k]);
                segb_static(l->b, path, 0444, list, strlen(list));
            }
        }
    }
    free(list);
    free(same);
    free(ids);
    free(cpus);
}

void render_node(struct node_layout *l, const struct yt_node *tree, const char *profile,
                 const struct phys_cpu_params *p, const struct phys_gpu_params *g)
{
    size_t len = 0;
    char *cpuinfo = render_cpuinfo(tree, &len);
    if (!cpuinfo)
        abort();
    segb_static(l->b, "cpuinfo", 0444, cpuinfo, len);
    free(cpuinfo);
    char json[512];
    int n = snprintf(json, sizeof json, "{\"schemaVersion\":1,\"profile\":\"%s\",\"substep\":\"1ms\"}\n", profile);
    segb_static(l->b, "state/hwemu.json", 0444, json, (size_t)n);
    /* The class and CPU directories exist on every node, as on any Linux host: a node without
     * powercap or cpufreq shows them empty rather than letting the host's own show through. */
    segb_dir(l->b, "sys/class/powercap", 0755);
    segb_dir(l->b, "sys/devices/virtual/powercap", 0755);
    segb_dir(l->b, "sys/devices/system/cpu/cpufreq", 0755);
    segb_dir(l->b, "sys/class/hwmon", 0755);
    render_cpu_topology(l, tree);
    render_powercap(l, tree, p);
    render_cpufreq(l, tree, p);
    render_hsmp(l, tree, p);
    render_gpus(l, tree, p, g);
    render_msr(l, tree, p);
    render_platform(l, tree, g);
    /* What the node owns whole: the host's own files there never show through. */
    static const char *const owned[] = {
        "sys/class/powercap", "sys/devices/virtual/powercap", "sys/devices/system/cpu/cpufreq",
        "sys/devices/system/cpu/intel_pstate", "sys/devices/system/cpu/amd_pstate", "sys/devices/platform/amd_hsmp",
        "sys/class/hwmon", "dev/cpu"};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        segb_own(l->b, owned[i]);
    /* Driver directories of other machines: absent here, whatever the host has. */
    static const char *const foreign[] = {"sys/devices/system/cpu/intel_pstate", "sys/devices/system/cpu/amd_pstate",
                                          "sys/devices/platform/amd_hsmp", "sys/devices/virtual/powercap/intel-rapl",
                                          "sys/devices/virtual/powercap/intel-rapl-mmio"};
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++)
        segb_absent(l->b, foreign[i]);
}
