/* smi_node: the node behind the AMD SMI libraries; see smi_node.h. */
#include "smi_node.h"

#include "gpu_view.h"
#include "segment.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static enum smi_open state;
static struct amd_gpu gpus[GPU_MAX];
static unsigned n_gpus;
static const char *who;

static const char *const perf_levels[] = {"auto", "low", "high", "manual", "profile_standard", "profile_peak",
                                          "profile_min_mclk", "profile_min_sclk", "perf_determinism"};

static void open_once(void)
{
    char err[1024];
    if (gv_open(err, sizeof err)) {
        fprintf(stderr, "%s: %s; until then the library finds no amdgpu driver\n", who, err);
        state = SMI_NO_NODE;
        return;
    }
    int n = amd_gpus(gpus);
    n_gpus = n > 0 ? (unsigned)n : 0;
    if (!n_gpus) {
        fprintf(stderr, "%s: node %s has no AMD GPU (no sys/class/drm/card<n> with vendor 0x1002): run the program "
                "on an AMD node (`hwemu clusterspec list` shows the profiles)\n", who, gv_node());
        state = SMI_NO_AMD_GPU;
    }
}

enum smi_open smi_open(const char *lib)
{
    who = lib;
    pthread_once(&once, open_once);
    return state;
}

unsigned smi_count(void)
{
    return n_gpus;
}

const struct amd_gpu *smi_gpu(unsigned i)
{
    return i < n_gpus ? &gpus[i] : NULL;
}

bool smi_unprivileged(void)
{
    return gv_unprivileged();
}

bool smi_dev_hex(const struct amd_gpu *g, const char *attr, unsigned *v)
{
    char text[32], *end;
    if (!amd_dev_read(g, attr, text, sizeof text))
        return false;
    errno = 0;
    unsigned long x = strtoul(text, &end, 16);
    if (errno || end == text)
        return false;
    *v = (unsigned)x;
    return true;
}

bool smi_dev_ll(const struct amd_gpu *g, const char *attr, long long *v)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", g->dev, attr);
    return gv_read_ll(path, v);
}

bool smi_energy(const struct amd_gpu *g, uint64_t *counts, uint64_t *ns)
{
    char path[64];
    long long uj;
    snprintf(path, sizeof path, "state/amdgpu/card%d/energy_uj", g->card);
    *ns = (uint64_t)seg_now_ns();
    if (!gv_read_ll(path, &uj) || uj < 0)
        return false;
    *counts = (uint64_t)((double)uj / (double)SMI_ENERGY_RESOLUTION_UJ);
    return true;
}

bool smi_temp(const struct amd_gpu *g, unsigned sensor, unsigned metric, long long *mc)
{
    static const char *const labels[] = {"edge", "junction", "mem"};
    static const char *const suffix[] = {"input", "max", "min", "max_hyst", "min_hyst", "crit", "crit_hyst",
                                         "emergency", "emergency_hyst", "crit_min", "crit_min_hyst", "offset",
                                         "lowest", "highest"};
    if (sensor >= sizeof labels / sizeof labels[0] || metric >= sizeof suffix / sizeof suffix[0] || !g->hwmon[0])
        return false;
    for (int n = 1; n <= 8; n++) {
        char label[32], attr[48];
        if (gv_readf(label, sizeof label, "%s/temp%d_label", g->hwmon, n) < 0)
            continue;
        if (strcmp(label, labels[sensor]))
            continue;
        snprintf(attr, sizeof attr, "temp%d_%s", n, suffix[metric]);
        return amd_hwmon_ll(g, attr, mc);
    }
    return false;
}

int smi_cap_set(const struct amd_gpu *g, unsigned sensor, uint64_t uw)
{
    char attr[32];
    long long cur, lo, hi;
    if (smi_unprivileged())
        return EACCES;
    snprintf(attr, sizeof attr, "power%u_cap", sensor + 1);
    if (sensor > 8 || !amd_hwmon_ll(g, attr, &cur))
        return ENOENT;
    snprintf(attr, sizeof attr, "power%u_cap_max", sensor + 1);
    if (!amd_hwmon_ll(g, attr, &hi))
        return ENOENT;
    snprintf(attr, sizeof attr, "power%u_cap_min", sensor + 1);
    if (!amd_hwmon_ll(g, attr, &lo))
        return ENOENT;
    if (uw > (uint64_t)hi || uw < (uint64_t)lo)
        return EINVAL;
    snprintf(attr, sizeof attr, "power%u_cap", sensor + 1);
    return amd_hwmon_write(g, attr, (long long)uw);
}

bool smi_perf_level(const struct amd_gpu *g, uint32_t *level)
{
    char word[32];
    if (!amd_dev_read(g, "power_dpm_force_performance_level", word, sizeof word))
        return false;
    *level = 0x100;
    for (uint32_t i = 0; i < sizeof perf_levels / sizeof perf_levels[0]; i++)
        if (!strcmp(word, perf_levels[i]))
            *level = i;
    return true;
}

int smi_perf_level_set(const struct amd_gpu *g, uint32_t level)
{
    char path[96];
    if (level >= sizeof perf_levels / sizeof perf_levels[0])
        return EINVAL;
    if (smi_unprivileged())
        return EACCES;
    snprintf(path, sizeof path, "%s/power_dpm_force_performance_level", g->dev);
    return gv_write(path, perf_levels[level]);
}

bool smi_memory(const struct amd_gpu *g, uint32_t type, const char *what, uint64_t *bytes)
{
    static const char *const names[] = {"vram", "vis_vram", "gtt"};
    char attr[48];
    long long v;
    if (type >= sizeof names / sizeof names[0])
        return false;
    snprintf(attr, sizeof attr, "mem_info_%s_%s", names[type], what);
    if (!smi_dev_ll(g, attr, &v) || v < 0)
        return false;
    *bytes = (uint64_t)v;
    return true;
}
