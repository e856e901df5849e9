/* render: every file of one node, in the order the kernel would have them: the node root's
 * cpuinfo and state/, then powercap, cpufreq and HSMP. Owns the layout's value table (one
 * binding per value). */
#include "node.h"
#include "render_cpuinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t grow_binds(struct node_layout *l, struct binding bind)
{
    if (l->nbinds == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        struct binding *nb = realloc(l->binds, sizeof *nb * l->cap);
        if (!nb)
            abort();
        l->binds = nb;
    }
    l->binds[l->nbinds] = bind;
    return l->nbinds++;
}

uint32_t layout_value(struct node_layout *l, const char *text, struct binding bind)
{
    uint32_t v = segb_value_text(l->b, text);
    uint32_t i = grow_binds(l, bind);
    (void)i; /* value indices and binding indices advance together */
    return v;
}

uint32_t layout_counter(struct node_layout *l, uint32_t unit_nj, struct binding bind)
{
    uint32_t v = segb_value_counter(l->b, unit_nj, 32);
    grow_binds(l, bind);
    return v;
}

void render_node(struct node_layout *l, const struct yt_node *tree, const char *profile,
                 const struct phys_cpu_params *p)
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
    struct cpuinfo_cpu *cpus = NULL;
    int ncpu = cpuinfo_cpus(tree, &cpus);
    for (int i = 0; i < ncpu; i++) {
        char dir[64];
        snprintf(dir, sizeof dir, "sys/devices/system/cpu/cpu%d", cpus[i].id);
        segb_dir(l->b, dir, 0755);
    }
    free(cpus);
    render_powercap(l, tree, p);
    render_cpufreq(l, tree, p);
    render_hsmp(l, tree, p);
    /* What the node owns whole: the host's own files there never show through. */
    static const char *const owned[] = {
        "sys/class/powercap", "sys/devices/virtual/powercap", "sys/devices/system/cpu/cpufreq",
        "sys/devices/system/cpu/intel_pstate", "sys/devices/system/cpu/amd_pstate", "sys/devices/platform/amd_hsmp",
        "sys/class/hwmon"};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        segb_own(l->b, owned[i]);
}
