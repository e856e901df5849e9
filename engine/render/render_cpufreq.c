/* render_cpufreq: the cpufreq tree of a node (sysfs §4-6; upstream c0).
 *
 *   sys/devices/system/cpu/cpufreq/policy<P>/   one per CPU (per-cpu) or per core (per-core),
 *                                               named after its first CPU
 *   sys/devices/system/cpu/cpu<c>/cpufreq       -> ../cpufreq/policy<P>
 *   sys/devices/system/cpu/cpufreq/boost        when the profile sources boost (A)
 *   sys/devices/system/cpu/intel_pstate/        intel_pstate and intel_cpufreq: status (A,
 *                                               taken, no effect), no_turbo (A), max_perf_pct and
 *                                               min_perf_pct (A: limit every CPU's frequency),
 *                                               turbo_pct and num_pstates (R, from the 100 MHz
 *                                               ratios), hwp_dynamic_boost (A, active with HWP,
 *                                               no effect on power)
 *   sys/devices/system/cpu/amd_pstate/status    amd-pstate drivers (A, taken, no effect)
 * Per policy: scaling_driver, scaling_available_governors (setpolicy drivers without the
 * trailing space), scaling_governor (A), cpuinfo_min_freq, cpuinfo_max_freq (S: follows
 * turbo at the write on a driver without a table, SEG_F_TURBO), cpuinfo_transition_latency,
 * scaling_min_freq / scaling_max_freq (A, clamped; shown at most cpuinfo_max_freq, SEG_F_CEIL),
 * scaling_cur_freq (S), scaling_setspeed (A: EINVAL unless userspace), affected_cpus,
 * related_cpus, scaling_available_frequencies (table drivers), and with HWP (intel_pstate) or
 * amd-pstate-epp: energy_performance_preference (A) and its available list; base_frequency on
 * intel_pstate with HWP.
 * cpufreq/stats/ (render_cpufreq_stats, table drivers: acpi-cpufreq): time_in_state,
 * total_trans, trans_table (views of per-policy counters, seg_view.h SEG_VIEW_CF_*) and reset
 * (A, 0200: clears them at the engine's next tick). intel_pstate and amd-pstate register no
 * frequency table, so a real machine has no stats directory there, nor does the node.
 * What agents write to a policy goes to every CPU of the policy in the physics, which runs each
 * CPU's own frequency; scaling_cur_freq shows the policy's first CPU. */
#include "params.h"
#include "render.h"
#include "profile.h"
#include "render_cpuinfo.h"
#include "seg_attr.h"
#include "seg_view.h"
#include "ytree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPU "sys/devices/system/cpu"
#define EPP_WORDS "default performance balance_performance balance_power power"

static void stat_file(struct seg_builder *b, const char *dir, const char *file, uint16_t mode, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    segb_static(b, path, mode, text, strlen(text));
}

static bool setpolicy(int driver)
{
    return driver == PHYS_DRV_INTEL_PSTATE || driver == PHYS_DRV_AMD_PSTATE_EPP;
}

/* cpuinfo_transition_latency (ns): the profile's cpufreq.transitionLatencyNS, else what the
 * driver sets: intel_cpufreq (passive) INTEL_CPUFREQ_TRANSITION_LATENCY 20000 and amd-pstate
 * (passive, guided) AMD_PSTATE_TRANSITION_LATENCY 20000 when _CPC gives none; intel_pstate
 * (active) and amd-pstate-epp set none, so 0 (prometheus/procfs's intel_pstate fixture reads 0;
 * cpupower prints "Cannot determine or is not supported" for an amd-pstate-epp policy,
 * linrunner/TLP issue 764). acpi-cpufreq takes the largest _PSS TransitionLatency (µs) × 1000,
 * capped at 20000 when _PCT is functional fixed hardware (acpi-cpufreq.c acpi_cpufreq_cpu_init):
 * a firmware value, so a profile fact; 0 without one. */
static long long latency_ns(const struct yt_node *cf, int driver)
{
    long long dflt = driver == PHYS_DRV_INTEL_CPUFREQ || driver == PHYS_DRV_AMD_PSTATE ? 20000 : 0;
    long long v = prof_int(cf, "transitionLatencyNS", dflt);
    return v < 0 ? 0 : v;
}

void render_cpufreq(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p)
{
    const struct yt_node *cf = yt_get(tree, "cpufreq");
    if (!cf)
        return;
    struct seg_builder *b = l->b;
    const char *driver = prof_str(cf, "driver", "");
    bool minimal = prof_bool(cf, "minimal", false);
    bool per_core = !strcmp(prof_str(cf, "policyGrouping", "per-cpu"), "per-core");
    bool hwp = prof_bool(cf, "hwp", false);
    char text[256], dir[256], path[512];

    /* The turbo switch: cpufreq/boost where the profile sources it (acpi-cpufreq, amd-pstate),
     * intel_pstate/no_turbo on the intel_pstate drivers (rendered here, before the policies whose
     * files follow it). */
    bool intel = p->driver == PHYS_DRV_INTEL_PSTATE || p->driver == PHYS_DRV_INTEL_CPUFREQ;
    uint32_t turbo = SEG_NONE;
    if (!minimal && yt_get(cf, "boost") && yt_get(cf, "boost")->src) {
        snprintf(text, sizeof text, "%d\n", p->boost ? 1 : 0);
        turbo = segb_dynamic(b, CPU "/cpufreq/boost", 0644, SEG_A, layout_value(l, text, (struct binding){.kind = BK_BOOST}),
                             SV_BOOL01, SEG_NONE);
    }
    if (!minimal && intel) {
        snprintf(text, sizeof text, "%d\n", p->boost ? 0 : 1);
        turbo = segb_dynamic(b, CPU "/intel_pstate/no_turbo", 0644, SEG_A,
                             layout_value(l, text, (struct binding){.kind = BK_NO_TURBO}), SV_UINT_CLAMP01, SEG_NONE);
    }
    /* cpuinfo_max_freq follows turbo on a driver without a frequency table: the base frequency
     * while it is off (intel_pstate_update_limits_for_all; amd_pstate_set_boost: the nominal
     * frequency, "the base frequency" of amd-pstate.rst), at once for every reader (segment.h
     * "Turbo"; phys_cpu_cpuinfo_max_khz is the physics' side), and a policy's limits show no more
     * than it: the driver's verify clamps policy->max, keeping the request. */
    bool follows = turbo != SEG_NONE && p->freq_n == 0 && p->base_khz > 0 && p->base_khz < p->cpuinfo_max_khz;
    snprintf(text, sizeof text, "%lld\n", (long long)p->cpuinfo_max_khz);
    uint32_t max_value = layout_value(l, text, (struct binding){.kind = BK_STATIC});
    uint32_t max_param = follows ? segb_param(b, (struct seg_param){.a = p->cpuinfo_max_khz, .b = p->base_khz,
                                                                    .c = intel, .related = turbo}, NULL)
                                 : SEG_NONE;

    /* Governor list as scaling_available_governors shows it. */
    const char *avail = prof_str(cf, "availableGovernors", "performance powersave");
    char govs[256];
    snprintf(govs, sizeof govs, "%s%s\n", avail, setpolicy(p->driver) ? "" : " ");
    const char *gov0 = prof_str(cf, "governor", "performance");
    char table[64 * 12] = "";
    for (int i = 0; i < p->freq_n; i++) {
        size_t used = strlen(table);
        snprintf(table + used, sizeof table - used, "%lld ", (long long)p->freq_khz[i]);
    }

    /* CPUs by number, each with its policy: the CPU itself, or per core the first CPU of the
     * core (the list is sorted by number, so the first one met is the lowest). */
    struct cpuinfo_cpu *cpus = NULL;
    int ncpu = cpuinfo_cpus(tree, &cpus);
    if (ncpu < 0)
        abort();
    int *policy_of = malloc(sizeof *policy_of * (size_t)(ncpu > 0 ? ncpu : 1));
    if (!policy_of)
        abort();
    for (int i = 0; i < ncpu; i++) {
        policy_of[i] = i;
        for (int o = 0; per_core && o < i; o++)
            if (cpus[o].socket == cpus[i].socket && cpus[o].core == cpus[i].core) {
                policy_of[i] = policy_of[o];
                break;
            }
    }
    for (int i = 0; i < ncpu; i++) {
        int c = cpus[i].id;
        snprintf(path, sizeof path, CPU "/cpu%d/cpufreq", c);
        snprintf(text, sizeof text, "../cpufreq/policy%d", cpus[policy_of[i]].id);
        segb_link(b, path, text);
        if (policy_of[i] != i)
            continue;
        int s = cpus[i].socket;
        int pkg = s < 0 ? 0 : s < PHYS_MAX_PKGS ? s : PHYS_MAX_PKGS - 1;
        snprintf(dir, sizeof dir, CPU "/cpufreq/policy%d", c);
        segb_dir(b, dir, 0755);
        snprintf(text, sizeof text, "%s\n", driver);
        stat_file(b, dir, "scaling_driver", 0444, text);
        if (minimal)
            continue;
        stat_file(b, dir, "scaling_available_governors", 0444, govs);
        char list[4096] = "";
        for (int o = i; o < ncpu; o++) {
            if (policy_of[o] != i)
                continue;
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%d", used ? " " : "", cpus[o].id);
        }
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "\n");
        stat_file(b, dir, "affected_cpus", 0444, list);
        stat_file(b, dir, "related_cpus", 0444, list);
        snprintf(text, sizeof text, "%lld\n", (long long)p->cpuinfo_min_khz);
        stat_file(b, dir, "cpuinfo_min_freq", 0444, text);
        snprintf(path, sizeof path, "%s/cpuinfo_max_freq", dir);
        uint32_t cmax = segb_dynamic(b, path, 0444, SEG_S, max_value, SV_NONE, max_param);
        if (follows)
            segb_flag(b, cmax, SEG_F_TURBO);
        snprintf(text, sizeof text, "%lld\n", latency_ns(cf, p->driver));
        stat_file(b, dir, "cpuinfo_transition_latency", 0444, text);
        if (p->freq_n) {
            snprintf(text, sizeof text, "%s\n", table);
            stat_file(b, dir, "scaling_available_frequencies", 0444, text);
        }

        snprintf(text, sizeof text, "%s\n", gov0);
        snprintf(path, sizeof path, "%s/scaling_governor", dir);
        uint32_t gov = segb_dynamic(b, path, 0644, SEG_A, layout_value(l, text, (struct binding){.kind = BK_GOVERNOR,
                                                                                           .pkg = (uint8_t)pkg, .cpu = (uint16_t)i}),
                                    SV_GOVERNOR, segb_param(b, (struct seg_param){.related = SEG_NONE}, avail));
        snprintf(text, sizeof text, "%lld\n", (long long)p->cpuinfo_max_khz);
        snprintf(path, sizeof path, "%s/scaling_max_freq", dir);
        uint32_t mx = segb_dynamic(b, path, 0644, SEG_A,
                                   layout_value(l, text, (struct binding){.kind = BK_MAX_FREQ, .pkg = (uint8_t)pkg, .cpu = (uint16_t)i}),
                                   SV_FREQ_MAX,
                                   segb_param(b, (struct seg_param){.a = p->cpuinfo_min_khz, .b = p->cpuinfo_max_khz,
                                                                    .related = follows ? cmax : SEG_NONE}, NULL));
        snprintf(text, sizeof text, "%lld\n", (long long)p->cpuinfo_min_khz);
        snprintf(path, sizeof path, "%s/scaling_min_freq", dir);
        uint32_t mn = segb_dynamic(b, path, 0644, SEG_A,
                                   layout_value(l, text, (struct binding){.kind = BK_MIN_FREQ, .pkg = (uint8_t)pkg, .cpu = (uint16_t)i}),
                                   SV_FREQ_MIN,
                                   segb_param(b, (struct seg_param){.a = p->cpuinfo_min_khz, .b = p->cpuinfo_max_khz,
                                                                    .related = mx}, NULL));
        if (follows) {
            segb_flag(b, mx, SEG_F_CEIL);
            segb_flag(b, mn, SEG_F_CEIL);
        }
        long long cur = !strcmp(gov0, "performance") ? p->cpuinfo_max_khz : p->cpuinfo_min_khz;
        snprintf(text, sizeof text, "%lld\n", cur);
        snprintf(path, sizeof path, "%s/scaling_cur_freq", dir);
        segb_dynamic(b, path, 0444, SEG_S,
                     layout_value(l, text, (struct binding){.kind = BK_CUR_FREQ, .pkg = (uint8_t)pkg,
                                                            .cpu = (uint16_t)i}),
                     SV_NONE, SEG_NONE);
        snprintf(path, sizeof path, "%s/scaling_setspeed", dir);
        segb_dynamic(b, path, 0644, SEG_A, layout_value(l, "<unsupported>\n", (struct binding){.kind = BK_STATIC}),
                     SV_SETSPEED, segb_param(b, (struct seg_param){.related = gov}, NULL));

        bool intel_hwp = hwp && (p->driver == PHYS_DRV_INTEL_PSTATE || p->driver == PHYS_DRV_INTEL_CPUFREQ);
        if (intel_hwp || p->driver == PHYS_DRV_AMD_PSTATE_EPP) {
            bool perf = !strcmp(gov0, "performance");
            stat_file(b, dir, "energy_performance_available_preferences", 0444,
                      perf && !intel_hwp ? "performance\n" : EPP_WORDS " \n");
            snprintf(path, sizeof path, "%s/energy_performance_preference", dir);
            /* intel_pstate takes raw 0..255 too; the EBUSY rule is active mode's (§5.2, §6.2). */
            bool active = p->driver != PHYS_DRV_INTEL_CPUFREQ;
            segb_dynamic(b, path, 0644, SEG_A,
                         layout_value(l, perf ? "performance\n" : "balance_performance\n",
                                      (struct binding){.kind = BK_EPP, .pkg = (uint8_t)pkg, .cpu = (uint16_t)i}),
                         SV_EPP, segb_param(b, (struct seg_param){.c = intel_hwp, .d = active, .related = gov},
                                            EPP_WORDS));
        }
        if (intel_hwp && p->base_khz > 0) {
            snprintf(text, sizeof text, "%lld\n", (long long)p->base_khz);
            stat_file(b, dir, "base_frequency", 0444, text);
        }
    }
    free(policy_of);
    free(cpus);
    if (minimal)
        return;
    if (intel) {
        const char *mode = p->driver == PHYS_DRV_INTEL_PSTATE ? "active\n" : "passive\n";
        segb_dynamic(b, CPU "/intel_pstate/status", 0644, SEG_A,
                     layout_value(l, mode, (struct binding){.kind = BK_STATIC}), SV_IGNORE, SEG_NONE);
        /* intel_pstate.c show_num_pstates / show_turbo_pct, in P-state ratios (100 MHz): min
         * (cpuinfo_min), max (base, non-turbo) and turbo (cpuinfo_max); min_perf_pct starts at
         * min·100/turbo (intel_pstate_init_limits); writes are clamped, never refused for range. */
        long long pmin = p->cpuinfo_min_khz / 100000, pturbo = p->cpuinfo_max_khz / 100000;
        long long pmax = p->base_khz > 0 ? p->base_khz / 100000 : pturbo;
        if (pturbo > 0 && pturbo >= pmin) {
            long long total = pturbo - pmin + 1, no_turbo = pmax - pmin + 1;
            snprintf(text, sizeof text, "%lld\n", total);
            segb_static(b, CPU "/intel_pstate/num_pstates", 0444, text, strlen(text));
            snprintf(text, sizeof text, "%lld\n", 100 - no_turbo * 100 / total);
            segb_static(b, CPU "/intel_pstate/turbo_pct", 0444, text, strlen(text));
            long long min_pct = pmin * 100 / pturbo;
            segb_dynamic(b, CPU "/intel_pstate/max_perf_pct", 0644, SEG_A,
                         layout_value(l, "100\n", (struct binding){.kind = BK_MAX_PERF_PCT}), SV_UW_CLAMP,
                         segb_param(b, (struct seg_param){.a = min_pct, .b = 100, .related = SEG_NONE}, NULL));
            snprintf(text, sizeof text, "%lld\n", min_pct);
            segb_dynamic(b, CPU "/intel_pstate/min_perf_pct", 0644, SEG_A,
                         layout_value(l, text, (struct binding){.kind = BK_MIN_PERF_PCT}), SV_UW_CLAMP,
                         segb_param(b, (struct seg_param){.a = min_pct, .b = 100, .related = SEG_NONE}, NULL));
        }
        if (hwp && p->driver == PHYS_DRV_INTEL_PSTATE)
            segb_dynamic(b, CPU "/intel_pstate/hwp_dynamic_boost", 0644, SEG_A,
                         layout_value(l, "0\n", (struct binding){.kind = BK_STATIC}), SV_UINT_CLAMP01, SEG_NONE);
    }
    if (p->driver == PHYS_DRV_AMD_PSTATE_EPP || p->driver == PHYS_DRV_AMD_PSTATE) {
        const char *mode = p->driver == PHYS_DRV_AMD_PSTATE_EPP ? "active\n" : "passive\n";
        segb_dynamic(b, CPU "/amd_pstate/status", 0644, SEG_A,
                     layout_value(l, mode, (struct binding){.kind = BK_STATIC}), SV_IGNORE, SEG_NONE);
    }
}

/* cpufreq_stats.c (6.x) cpufreq_stats_create_table: a policy with a frequency table gets stats/,
 * one state per distinct table frequency, in table order. Per policy: the table's k time lines
 * (SEG_V_LINE values) and its k² transition counts, SEG_COUNTS_PER_VALUE to a SEG_V_COUNTS value
 * (consecutive values: the views read them from the first; outside the ledger, resumed from the
 * snapshot: runtime/node_cfstats.c). */
void render_cpufreq_stats(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p)
{
    const struct yt_node *cf = yt_get(tree, "cpufreq");
    int k = p->freq_n;
    if (!cf || prof_bool(cf, "minimal", false) || p->driver != PHYS_DRV_ACPI_CPUFREQ || k < 1 ||
        k > SEG_CF_MAX_STATES)
        return;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < i; j++)
            if (p->freq_khz[i] == p->freq_khz[j])
                return; /* the kernel drops duplicates; no profile has any: render none rather than guess */
    uint32_t elapsed = SEG_NONE;
    for (uint32_t v = 0; v < l->nbinds && elapsed == SEG_NONE; v++)
        if (l->binds[v].kind == BK_ELAPSED)
            elapsed = v;
    struct cpuinfo_cpu *cpus = NULL;
    int ncpu = cpuinfo_cpus(tree, &cpus);
    if (ncpu < 0)
        abort();
    if (elapsed == SEG_NONE) {
        free(cpus);
        return;
    }
    char table[SEG_CF_MAX_STATES * 12] = "", dir[256], path[512];
    for (int i = 0; i < k; i++) {
        size_t used = strlen(table);
        snprintf(table + used, sizeof table - used, "%s%lld", i ? " " : "", (long long)p->freq_khz[i]);
    }
    struct seg_builder *b = l->b;
    uint32_t npol = l->nbinds; /* the policies are the scaling_cur_freq values rendered so far */
    for (uint32_t pv = 0; pv < npol; pv++) {
        if (l->binds[pv].kind != BK_CUR_FREQ || l->binds[pv].cpu >= ncpu)
            continue;
        uint16_t cpu = l->binds[pv].cpu;
        uint32_t first = SEG_NONE;
        for (int i = 0; i < k + SEG_CF_COUNT_VALUES(k); i++) {
            struct binding bind = {.kind = BK_CF_STAT, .zone = (uint8_t)(i >= k), .pkg = (uint8_t)k, .cpu = cpu};
            uint32_t v = i < k ? layout_line(l, bind) : layout_counts(l, bind);
            if (i == 0)
                first = v;
        }
        uint32_t param = segb_param(b, (struct seg_param){.a = elapsed, .b = first, .c = k, .related = SEG_NONE},
                                    table);
        snprintf(dir, sizeof dir, CPU "/cpufreq/policy%d/stats", cpus[cpu].id);
        segb_dir(b, dir, 0755);
        snprintf(path, sizeof path, "%s/time_in_state", dir);
        segb_dynamic(b, path, 0444, SEG_S, first, SEG_VIEW_CF_TIME, param);
        snprintf(path, sizeof path, "%s/total_trans", dir);
        segb_dynamic(b, path, 0444, SEG_S, first, SEG_VIEW_CF_TOTAL, param);
        snprintf(path, sizeof path, "%s/trans_table", dir);
        segb_dynamic(b, path, 0444, SEG_S, first, SEG_VIEW_CF_TRANS, param);
        snprintf(path, sizeof path, "%s/reset", dir);
        segb_dynamic(b, path, 0200, SEG_A, layout_value(l, "\n", (struct binding){.kind = BK_CF_RESET, .cpu = cpu}),
                     SV_TRIGGER, segb_param(b, (struct seg_param){.related = SEG_NONE}, NULL));
    }
    free(cpus);
}
