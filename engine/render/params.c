/* params: a merged profile tree (with a pool's overrides) as physics parameters.
 * Owns the mapping from profile keys to struct phys_cpu_params; every default here is the
 * physics' documented default (physics_cpu.h) or the profile format's (profiles/README.md). */
#include "params.h"
#include "profile.h"
#include "render_cpuinfo.h"
#include "ytree.h"

#include <stdlib.h>
#include <string.h>

static int driver_of(const char *d)
{
    if (!strcmp(d, "intel_pstate"))
        return PHYS_DRV_INTEL_PSTATE;
    if (!strcmp(d, "intel_cpufreq"))
        return PHYS_DRV_INTEL_CPUFREQ;
    if (!strcmp(d, "amd-pstate-epp"))
        return PHYS_DRV_AMD_PSTATE_EPP;
    if (!strcmp(d, "amd-pstate"))
        return PHYS_DRV_AMD_PSTATE;
    return PHYS_DRV_ACPI_CPUFREQ;
}

int params_governor_of(const char *g)
{
    static const char *const names[] = {"performance", "powersave", "schedutil", "ondemand", "conservative",
                                        "userspace"};
    for (int i = 0; i < 6; i++)
        if (!strncmp(g, names[i], strlen(names[i])) && (g[strlen(names[i])] == 0 || g[strlen(names[i])] == '\n'))
            return i;
    return PHYS_GOV_POWERSAVE;
}

int params_pl_of(const char *name)
{
    if (!strcmp(name, "long_term"))
        return PHYS_PL1;
    if (!strcmp(name, "short_term"))
        return PHYS_PL2;
    if (!strcmp(name, "peak_power"))
        return PHYS_PL4;
    return -1;
}

int params_zone_of(const char *name, bool top)
{
    if (top && !strncmp(name, "package-", 8))
        return PHYS_ZONE_PACKAGE;
    if (!strcmp(name, "dram"))
        return PHYS_ZONE_DRAM;
    if (!strcmp(name, "core"))
        return PHYS_ZONE_CORE;
    if (!strcmp(name, "psys"))
        return PHYS_ZONE_PSYS;
    return -1;
}

static void counter(struct phys_counter *c, const struct yt_node *z)
{
    c->energy_unit_nj = prof_int(z, "energyUnitNJ", 0);
    c->max_energy_range_uj = prof_int(z, "maxEnergyRangeUJ", 0);
}

static void zone_params(struct phys_cpu_params *p, const struct yt_node *z, int pkg, bool psys)
{
    struct phys_pkg_params *k = &p->pkg[pkg];
    if (psys) {
        counter(&p->psys, z);
        return;
    }
    counter(&k->counter[PHYS_ZONE_PACKAGE], z);
    k->power_unit_uw = prof_int(z, "powerUnitUW", 0);
    k->rapl_enabled = (int)prof_int(z, "enabled", 1);
    const struct yt_node *cons = yt_get(z, "constraints");
    for (int i = 0; cons && cons->kind == YT_SEQ && i < cons->n; i++) {
        const struct yt_node *c = cons->vals[i];
        int pl = params_pl_of(prof_str(c, "name", ""));
        if (pl < 0)
            continue;
        struct phys_constraint *pc = &k->pl[pl];
        const char *rej = prof_str(c, "rejectWrites", "");
        pc->present = 1;
        pc->reject = !strcmp(rej, "locked") ? PHYS_REJECT_LOCKED : !strcmp(rej, "disabled") ? PHYS_REJECT_DISABLED
                                                                                          : PHYS_REJECT_NONE;
        pc->limit_uw = prof_int(c, "powerLimitUW", 0);
        pc->max_power_uw = prof_int(c, "maxPowerUW", 0);
        pc->time_window_us = prof_int(c, "timeWindowUS", 0);
        pc->limit_bits = (int)prof_int(z, "limitBits", 0);
        k->rapl_present = 1;
    }
    const struct yt_node *kids = yt_get(z, "children");
    for (int j = 0; kids && kids->kind == YT_SEQ && j < kids->n; j++) {
        int zone = params_zone_of(prof_str(kids->vals[j], "nameFormat", ""), false);
        if (zone == PHYS_ZONE_DRAM || zone == PHYS_ZONE_CORE)
            counter(&k->counter[zone], kids->vals[j]);
    }
}

/* Package and cpufreq policy of every CPU index, from the CPU list render_cpuinfo numbers
 * (policies as render_cpufreq groups them: per CPU, or per core with cpufreq.policyGrouping). */
static void cpu_map(const struct yt_node *t, struct phys_cpu_params *p)
{
    struct cpuinfo_cpu *cpus = NULL;
    int n = cpuinfo_cpus(t, &cpus);
    if (n < 0)
        abort();
    bool per_core = !strcmp(prof_str(t, "cpufreq.policyGrouping", "per-cpu"), "per-core");
    p->cpu_pkg_n = n < PHYS_MAX_CPUS ? n : PHYS_MAX_CPUS;
    for (int i = 0; i < p->cpu_pkg_n; i++) {
        int s = cpus[i].socket;
        p->cpu_pkg[i] = (uint8_t)(s < 0 ? 0 : s < PHYS_MAX_PKGS ? s : PHYS_MAX_PKGS - 1);
        p->cpu_policy[i] = (uint16_t)i;
        for (int o = 0; per_core && o < i; o++)
            if (cpus[o].socket == cpus[i].socket && cpus[o].core == cpus[i].core) {
                p->cpu_policy[i] = p->cpu_policy[o];
                break;
            }
    }
    p->policy_span = 1;
    for (int i = 0; i < p->cpu_pkg_n; i++)
        if (p->cpu_policy[i] != i)
            p->policy_span = 2; /* grouped policies: a write walks the CPUs */
    free(cpus);
}

void params_cpu(const struct yt_node *t, double ambient_c, struct phys_cpu_params *p)
{
    memset(p, 0, sizeof *p);
    p->sockets = (int)prof_int(t, "cpu.sockets", 1);
    p->dies_per_pkg = (int)prof_int(t, "cpu.diesPerPackage", 1);
    p->cpus = cpuinfo_ncpus(t);
    cpu_map(t, p);
    p->model = !strcmp(prof_str(t, "physics.cpu.model", "analytic"), "catalog-curve") ? PHYS_MODEL_CURVE
                                                                                    : PHYS_MODEL_ANALYTIC;
    p->idle_pkg_w = prof_num(t, "physics.cpu.idlePkgW", 0);
    p->max_pkg_w = prof_num(t, "physics.cpu.maxPkgW", 0);
    p->alpha_util = prof_num(t, "physics.cpu.alphaUtil", 0);
    p->beta_freq = prof_num(t, "physics.cpu.betaFreq", 0);
    p->knee = prof_num(t, "physics.cpu.knee", 0);
    p->core_fraction = prof_num(t, "physics.cpu.coreFraction", 0);
    p->freq_ramp_ms = (int)prof_int(t, "physics.cpu.freqRampMS", 0);
    const struct yt_node *lp = yt_path(t, "physics.cpu.curveLoadPct"), *w = yt_path(t, "physics.cpu.curveNodeW");
    for (int i = 0; lp && w && i < lp->n && i < w->n && i < PHYS_MAX_CURVE; i++) {
        yt_double(lp->vals[i], &p->curve_load_pct[i]);
        yt_double(w->vals[i], &p->curve_node_w[i]);
        p->curve_n = i + 1;
    }
    p->dram_w_per_socket = prof_num(t, "physics.dram.wattsPerSocket", 0);
    p->platform_other_w = prof_num(t, "physics.platform.otherW", 0);
    p->rapl_floor_w = prof_num(t, "physics.rapl.floorW", 0);
    p->hsmp_settle_tau_ms = (int)prof_int(t, "physics.hsmp.settleTauMS", 0);
    p->ambient_init_c = ambient_c;

    const char *drv = prof_str(t, "cpufreq.driver", "");
    p->driver = driver_of(drv);
    p->governor = params_governor_of(prof_str(t, "cpufreq.governor", "performance"));
    p->cpuinfo_min_khz = prof_int(t, "cpufreq.cpuinfoMinKHz", 0);
    p->cpuinfo_max_khz = prof_int(t, "cpufreq.cpuinfoMaxKHz", 0);
    p->base_khz = prof_int(t, "cpufreq.baseKHz", 0);
    p->boost = (int)prof_int(t, "cpufreq.boost", 1);
    p->epp = !strcmp(prof_str(t, "cpufreq.governor", ""), "performance") ? 0 : 128;
    const struct yt_node *tab = yt_path(t, "cpufreq.availableKHz");
    for (int i = 0; tab && tab->kind == YT_SEQ && i < tab->n && i < PHYS_MAX_FREQS; i++) {
        long long f = 0;
        yt_int(tab->vals[i], &f);
        p->freq_khz[i] = f;
        p->freq_n = i + 1;
    }

    const struct yt_node *cts = yt_path(t, "powercap.controlTypes");
    for (int c = 0; cts && cts->kind == YT_SEQ && c < cts->n; c++) {
        const struct yt_node *zones = yt_get(cts->vals[c], "zones");
        for (int zi = 0; zones && zones->kind == YT_SEQ && zi < zones->n; zi++) {
            const struct yt_node *z = zones->vals[zi];
            const char *repeat = prof_str(z, "repeat", "once"), *fmt = prof_str(z, "nameFormat", "");
            if (!strcmp(repeat, "once")) {
                if (!strcmp(fmt, "psys"))
                    zone_params(p, z, 0, true);
                continue;
            }
            for (int s = 0; s < p->sockets && s < PHYS_MAX_PKGS; s++)
                zone_params(p, z, s, false);
        }
    }
    if (yt_get(t, "hsmp"))
        for (int s = 0; s < p->sockets && s < PHYS_MAX_PKGS; s++) {
            p->pkg[s].hsmp_cap_default_uw = prof_int(t, "hsmp.capDefaultUW", 0);
            p->pkg[s].hsmp_cap_max_uw = prof_int(t, "hsmp.capMaxUW", 0);
        }
}

void params_sensors(const struct yt_node *t, struct sensor_params *s)
{
    s->gpu_w = prof_num(t, "sensors.gpuPowerNoiseW", PARAMS_GPU_NOISE_W);
    s->socket_w = prof_num(t, "sensors.socketPowerNoiseW", PARAMS_SOCKET_NOISE_W);
    s->bmc_pct = prof_num(t, "sensors.bmcPowerNoisePct", PARAMS_BMC_NOISE_PCT);
}

/* gpus and physics.gpu (profiles/README.md): no gpus block -> vendor NONE. The limit in force at
 * render is limits.currentW when sourced, else defaultW (else maxW); capSettleTauMS 0 settles at
 * once; telemetryWindowMS <= 0 means 1 s; thermalRiseC absent keeps the GPUs at ambient. */
void params_gpu(const struct yt_node *t, double ambient_c, struct phys_gpu_params *g)
{
    memset(g, 0, sizeof *g);
    g->ambient_init_c = ambient_c;
    const struct yt_node *gp = yt_get(t, "gpus");
    if (!gp)
        return;
    const char *vendor = prof_str(gp, "vendor", "");
    g->vendor = !strcmp(vendor, "nvidia") ? PHYS_GPU_NVIDIA : !strcmp(vendor, "amd") ? PHYS_GPU_AMD
              : !strcmp(vendor, "intel") ? PHYS_GPU_INTEL : PHYS_GPU_NONE;
    long long count = prof_int(gp, "count", 0);
    g->count = (int)(count < 0 ? 0 : count > PHYS_GPU_MAX ? PHYS_GPU_MAX : count);
    g->max_w = prof_num(gp, "limits.maxW", 0);
    g->min_w = prof_num(gp, "limits.minW", 0);
    g->default_w = prof_num(gp, "limits.defaultW", g->max_w);
    const struct yt_node *cur = yt_path(gp, "limits.currentW");
    g->start_w = cur && cur->src ? prof_num(gp, "limits.currentW", g->default_w) : g->default_w;
    g->idle_w = prof_num(t, "physics.gpu.idleW", 0);
    g->natural_max_w = prof_num(t, "physics.gpu.naturalMaxW", g->max_w);
    g->tau_ns = prof_int(t, "physics.gpu.capSettleTauMS", 0) * 1000000LL;
    long long win = prof_int(t, "physics.gpu.telemetryWindowMS", 0);
    g->window_ns = (win > 0 ? win : 1000) * 1000000LL;
    g->thermal_rise_c = prof_num(gp, "thermalRiseC", 0);
    g->memory_mib = prof_int(gp, "memoryMiB", 0);
    g->gfx_min = (int)prof_int(gp, "clocks.graphicsMinMHz", 0);
    g->gfx_max = (int)prof_int(gp, "clocks.graphicsMaxMHz", 0);
    g->gfx_step = (int)prof_int(gp, "clocks.graphicsStepMHz", 0);
    g->gfx_idle = (int)prof_int(gp, "clocks.graphicsIdleMHz", g->gfx_min);
    g->video_max = (int)prof_int(gp, "clocks.videoMaxMHz", 0);
    const struct yt_node *mem = yt_path(gp, "clocks.memoryMHz");
    for (int i = 0; mem && mem->kind == YT_SEQ && i < mem->n && g->nmem < PHYS_GPU_MAX_MEMCLK; i++) {
        long long v;
        if (yt_int(mem->vals[i], &v) && v > 0)
            g->mem_clk[g->nmem++] = (int)v;
    }
    g->mem_idle = (int)prof_int(gp, "clocks.memoryIdleMHz", g->nmem ? g->mem_clk[0] : 0);
    const struct yt_node *sm = yt_path(gp, "clocks.supported.smMaxByMem");
    for (int i = 0; sm && sm->kind == YT_SEQ && i < sm->n; i++) {
        int m = (int)prof_int(sm->vals[i], "memMHz", 0), c = (int)prof_int(sm->vals[i], "maxGraphicsMHz", 0);
        for (int k = 0; k < g->nmem; k++)
            if (g->mem_clk[k] == m)
                g->mem_ceiling[k] = c;
    }
    g->persistence = strcmp(prof_str(gp, "persistenceMode", "enabled"), "disabled") != 0;
    g->peer_link_gbps = prof_num(gp, "transfer.peerLinkGBps", 0);
    g->receiver_gate = prof_bool(gp, "transfer.receiverGate", false);
}

/* --- the part-to-part spread ---------------------------------------------------------------- */

/* A number in [-1, 1] for (node, kind, index): FNV-1a of the name, then splitmix64's mixer. */
static double unit_draw(const char *node, unsigned kind, int index)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *c = (const unsigned char *)node; *c; c++)
        h = (h ^ *c) * 1099511628211ULL;
    h ^= ((uint64_t)kind << 32) ^ (uint64_t)(unsigned)index;
    h += 0x9e3779b97f4a7c15ULL;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return (double)(h >> 11) / (double)(1ULL << 52) - 1.0;
}

/* scale[0..n) = 1 + d_k with d_k = PARAMS_SPREAD · (u_k − mean u) / 2: |d_k| ≤ PARAMS_SPREAD
 * (|u_k − mean u| ≤ 2) and Σ d_k = 0. */
static void spread_units(const char *node, unsigned kind, int n, double *scale, size_t stride)
{
    if (n < 2)
        return;
    double u[64], mean = 0;
    if (n > 64)
        n = 64;
    for (int k = 0; k < n; k++)
        mean += (u[k] = unit_draw(node, kind, k));
    mean /= n;
    for (int k = 0; k < n; k++)
        *(double *)((char *)scale + stride * (size_t)k) = 1 + PARAMS_SPREAD * (u[k] - mean) / 2;
}

void params_spread(const char *node, struct phys_cpu_params *p, struct phys_gpu_params *g)
{
    if (!node)
        return;
    int npkg = p->sockets < 1 ? 1 : p->sockets > PHYS_MAX_PKGS ? PHYS_MAX_PKGS : p->sockets;
    spread_units(node, 1, npkg, &p->pkg[0].power_scale, sizeof p->pkg[0]);
    if (g->vendor != PHYS_GPU_NONE)
        spread_units(node, 2, g->count < PHYS_GPU_MAX ? g->count : PHYS_GPU_MAX, g->power_scale, sizeof g->power_scale[0]);
}
