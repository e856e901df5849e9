/* render_msr: the node's /dev/cpu/<n>/msr devices (segment.h "Devices", seg_msr.h), one per
 * logical CPU: each names its CPU's register list, which continues in its package's. The
 * registers are what the profile's facts and the physics imply; a value no fact gives is
 * marked assumed (docs/interfaces.md "MSR devices" lists them with their sources).
 *   Intel (vendorID GenuineIntel), per CPU:
 *     0x10  IA32_TIME_STAMP_COUNTER the node's elapsed time at the TSC's clock: the base
 *                                 frequency, MSR_PLATFORM_INFO's ratio x 100 MHz ("the ratio of
 *                                 the frequency that invariant TSC runs at", Intel SDM Vol. 4
 *                                 MSR_PLATFORM_INFO 15:8). A process that opens the device
 *                                 reads RDTSC at that rate too (shim/preload/tsctrap.c), so
 *                                 the register and the instruction agree and base x APERF/MPERF
 *                                 (turbostat's Bzy_MHz) is the running frequency
 *     0xE7  IA32_MPERF            the CPU's busy time at the TSC's clock (it counts in C0 only,
 *                                 at the TSC's rate), so MPERF/TSC is the node's busy share
 *     0xE8  IA32_APERF            the CPU's busy cycles at its running frequency (BK_CPU_CYCLES,
 *                                 runtime/node_cycles.c), so APERF/MPERF is the running/base ratio
 *     0x19C IA32_THERM_STATUS     the core's coretemp temperature below TjMax (100 °C, as
 *                                 render_coretemp assumes), PROCHOT (bit 0) while the package is
 *                                 throttled at TjMax (render_throttle.c) and its sticky log
 *                                 (bit 1): set while it is or since it was, until a write with
 *                                 bit 1 clear clears it (the package's cores share one log, as
 *                                 they share its throttling); 0x19B its interrupt register (0)
 *     0x3FD MSR_CORE_C6_RESIDENCY the idle time the core's threads share, in the share the
 *                                 cpuidle files give C6 (render_cpuidle), at the TSC's clock
 *                                 (residencies "count at the same frequency as the TSC");
 *                                 0x3FC/0x3FE (C3, C7: no such state on these Xeons) read 0
 *   Intel, per package:
 *     0x8B  IA32_BIOS_SIGN_ID     cpu.microcode in 63:32
 *     0x34  MSR_SMI_COUNT         0 (no system management interrupts are modelled)
 *     0xCE  MSR_PLATFORM_INFO     15:8 base ratio, 47:40 the lowest ratio (cpuinfo_min), of 100 MHz
 *     0xE2  PKG_CST_CONFIG_CONTROL package C-state limit C6 (2, assumed: the deepest state the
 *                                 residency registers count)
 *     0x1A0 IA32_MISC_ENABLE      0x850089: fast strings, TCC, performance monitoring, EIST,
 *                                 MONITOR/MWAIT, xTPR (assumed, a Xeon's firmware default)
 *     0x1A2 MSR_TEMPERATURE_TARGET TjMax 100 in 23:16
 *     0x1AD MSR_TURBO_RATIO_LIMIT every byte the top turbo ratio (cpuinfo_max: assumed, the
 *                                 profile gives no per-core-count limits)
 *     0x1B0 IA32_ENERGY_PERF_BIAS 6 (normal, the kernel's default)
 *     0x648-0x64C CONFIG_TDP     nominal = the base ratio, no other level, control and turbo
 *                                 activation 0 (assumed: the profile names no TDP levels)
 *     0x1A4 MISC_FEATURE_CONTROL 0 (every prefetcher on), 0x1AA MISC_PWR_MGMT 0, 0x1FC POWER_CTL 2 (C1E on), 0x1AE TURBO_RATIO_LIMIT1 group sizes
 *                                 1, 2, 4, 8, 12, 16, 20, 24 cores (assumed)
 *     with cpufreq.hwp: 0x770 PM_ENABLE 1, 0x771 HWP_CAPABILITIES (highest = top turbo ratio,
 *                                 guaranteed = base, efficient and lowest = cpuinfo_min),
 *                                 0x772/0x774 HWP_REQUEST(_PKG) min lowest, max highest, EPP
 *                                 0x80 (assumed: the policy's EPP is not followed), 0x773, 0x777 0
 *     0x198/0x199 PERF_STATUS/CTL the package's scaling_cur_freq as a ratio in 15:8
 *     0x1B1 PACKAGE_THERM_STATUS  the package temperature below TjMax, bits 0 and 1 as 0x19C's
 *                                 (a log of its own);
 *                                 0x1B2 its interrupt (0)
 *     0x60D/0x3F9 PKG C2/C6 RESIDENCY the idle time all the package's CPUs share (the least of
 *                                 theirs), split as the cores' C6 share (PC6) and the rest (PC2);
 *                                 PC3, PC7, PC8-10 and the interrupt response time limits
 *                                 0x60A-0x60C (not valid) read 0
 *     with a powercap package zone (any control type):
 *     0x606 MSR_RAPL_POWER_UNIT   PU = log2(1 W / powerUnitUW), ESU = log2(1 J / energyUnitNJ),
 *                                 TU = 10 (976 us, the unit render_powercap's windows use)
 *                                 (Intel SDM Vol. 3B §14.9.1)
 *     0x611 MSR_PKG_ENERGY_STATUS the package zone's energy counter (the energy_uj file's)
 *     0x619 MSR_DRAM_ENERGY_STATUS the dram sub-zone's counter, when the zone has one, else 0
 *     0x639 MSR_PP0_ENERGY_STATUS the core sub-zone's counter, when the zone has one, else 0
 *                                 (a server without a core zone: "Reads return 0", Haswell-E SDM)
 *     0x614 MSR_PKG_POWER_INFO    14:0 the long_term constraint's maxPowerUW (the kernel shows
 *                                 THERMAL_SPEC_POWER there), 46:32 the short_term one's
 *                                 (MAX_POWER), min power and max window 0 (not in the profile)
 *     0x610 MSR_PKG_POWER_LIMIT   composed from the constraint files, written through them
 *     0x613 MSR_PKG_PERF_STATUS   31:0 the time the package's RAPL limits held its power down, in
 *                                 the time unit (2^-TU s, TU = 10), wrapping at 32 bits (Intel
 *                                 SDM Vol. 3B §14.9.3): a line of the throttled ns
 *                                 (runtime/node_cycles.c; not a fault's cap: PROCHOT, a lost
 *                                 PSU's share); with the time counters only (else 0)
 *     0x601, 0x618, 0x61B, 0x61C, 0x638, 0x63A, 0x63B, 0x640-0x642 (DRAM limit, info and perf
 *                                 status, PP0/PP1 limits, policies, perf status, PP1 energy, the
 *                                 VR current limit) read 0: no DRAM limit (so no DRAM throttled
 *                                 time) or graphics domain is modelled
 *   AMD (AuthenticAMD), per CPU: 0x10, 0xE7/0xC00000E7 MPERF, 0xE8/0xC00000E8 APERF as above,
 *   at the TSC's clock of the reader (the host's RDTSC rate, seg_msr_tsc_khz: no profile gives
 *   an AMD node's TSC rate, and turbostat scales AMD's APERF/MPERF by the TSC it measures);
 *   per package: 0x8B, and with a powercap package zone:
 *     0xC0010299 RAPL_PWR_UNIT    ESU from energyUnitNJ, TU 10, PU 0 (AMD's registers report
 *                                 energy only: amd/amd_energy issue #9)
 *     0xC001029B PKG_ENERGY_STAT  the package zone's counter
 *     0xC001029A CORE_ENERGY_STAT the core sub-zone's counter divided by coresPerSocket: the
 *                                 physics models the package's core domain, not single cores,
 *                                 so each core shows an equal share (docs/interfaces.md)
 *   A hypervisor node (cpu.hypervisor) has the devices but no registers: every read is EIO, as
 *   these MSRs fault under KVM.
 * Never touches the physics; reads the builder only to find the files and values it refers to. */
#include "params.h"
#include "profile.h"
#include "render.h"
#include "render_cpuinfo.h"
#include "seg_attr.h"
#include "seg_msr.h"
#include "ytree.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEV "sys/devices/virtual/powercap"
#define TIME_UNIT_US 976 /* 2^-10 s, as render_powercap's window validator uses */
#define TIME_UNIT_TU 10   /* MSR_RAPL_POWER_UNIT 19:16: the time unit is 2^-TU s */
#define TJMAX_C 100       /* render_coretemp's (assumed) */

/* The value bound to kind/zone/pkg (the first), or SEG_NONE. */
static uint32_t bound(const struct node_layout *l, uint8_t kind, int zone, int pkg)
{
    for (uint32_t v = 0; v < l->nbinds; v++)
        if (l->binds[v].kind == kind && (zone < 0 || l->binds[v].zone == zone) && l->binds[v].pkg == pkg)
            return v;
    return SEG_NONE;
}

static int log2_near(double x)
{
    return x > 0 ? (int)lround(log2(x)) : 0;
}

/* The package zone of the profile (the first zone named package-%d) and its directory for
 * package pkg, numbered as render_powercap numbers zones. */
static const struct yt_node *package_zone(const struct yt_node *tree, int pkg, int sockets, int dies, char *dir,
                                          size_t len)
{
    const struct yt_node *cts = yt_path(tree, "powercap.controlTypes");
    for (int t = 0; cts && cts->kind == YT_SEQ && t < cts->n; t++) {
        const char *ct = prof_str(cts->vals[t], "name", "intel-rapl");
        const struct yt_node *zones = yt_get(cts->vals[t], "zones");
        int index = 0;
        for (int zi = 0; zones && zones->kind == YT_SEQ && zi < zones->n; zi++) {
            const struct yt_node *z = zones->vals[zi];
            const char *repeat = prof_str(z, "repeat", "once");
            int n = !strcmp(repeat, "per-package") ? sockets : !strcmp(repeat, "per-die") ? sockets * dies : 1;
            bool pkgzone = !strncmp(prof_str(z, "nameFormat", ""), "package-", 8) && !strcmp(repeat, "per-package");
            if (pkgzone && pkg < n) {
                snprintf(dir, len, DEV "/%s/%s:%x", ct, ct, index + pkg);
                return z;
            }
            index += n;
        }
    }
    return NULL;
}

/* The constraint index of name in zone z, or -1. */
static int constraint_of(const struct yt_node *z, const char *name)
{
    const struct yt_node *cons = yt_get(z, "constraints");
    for (int i = 0; cons && cons->kind == YT_SEQ && i < cons->n; i++)
        if (!strcmp(prof_str(cons->vals[i], "name", ""), name))
            return i;
    return -1;
}

static long long constraint_num(const struct yt_node *z, int i, const char *key)
{
    const struct yt_node *cons = yt_get(z, "constraints");
    return i >= 0 && cons && cons->kind == YT_SEQ && i < cons->n ? prof_int(cons->vals[i], key, 0) : 0;
}

/* Appends the path dir/file to words when the builder has it, else "-". */
static void add_word(const struct node_layout *l, char *words, size_t len, const char *dir, int cons, const char *file)
{
    char path[600];
    if (cons >= 0)
        snprintf(path, sizeof path, "%s/constraint_%d_%s", dir, cons, file);
    else
        snprintf(path, sizeof path, "%s/%s", dir, file);
    size_t used = strlen(words);
    snprintf(words + used, len - used, "%s%s", used ? " " : "", segb_find(l->b, path) != SEG_NONE ? path : "-");
}


static void reg(struct seg_builder *b, uint32_t msr, int kind, long long c, long long d, const char *words)
{
    segb_param(b, (struct seg_param){.a = msr, .b = kind, .c = c, .d = d, .related = SEG_NONE}, words);
}

static uint32_t reg_line(struct seg_builder *b, uint32_t msr, int kind, uint32_t elapsed, uint32_t line, long long d,
                         const char *words)
{
    return segb_param(b, (struct seg_param){.a = msr, .b = kind, .c = (long long)((uint64_t)line << 32 | elapsed), .d = d,
                                            .related = SEG_NONE}, words);
}

/* The hidden files of package k's thermal status logs (before any register list: each file's
 * validator is a param of its own): state/msr/package<k>/<scope>_therm_log holds the package's
 * episode count (BK_THERMAL TQ_COUNT, up to 2^32 - 1) at the log's last clear, which a write of the register
 * stores (seg_msr.c); scope core serves every core register of the package (whose throttling is
 * the package's), package IA32_PACKAGE_THERM_STATUS. None without the throttle values. */
static void therm_logs(struct node_layout *l, int k)
{
    if (bound(l, BK_THERMAL, TQ_ACTIVE, k) == SEG_NONE || bound(l, BK_THERMAL, TQ_COUNT, k) == SEG_NONE)
        return;
    static const char *const scopes[] = {"core", "package"};
    for (int i = 0; i < 2; i++) {
        char path[64];
        snprintf(path, sizeof path, "state/msr/package%d/%s_therm_log", k, scopes[i]);
        segb_dynamic(l->b, path, 0600, SEG_A, layout_value(l, "0\n", (struct binding){.kind = BK_STATIC}), SV_UW_CLAMP,
                     segb_param(l->b, (struct seg_param){.a = 0, .b = UINT32_MAX, .related = SEG_NONE}, NULL));
    }
}

/* A THERM_STATUS register of package k's temperature value temp: PROCHOT from its throttle value
 * TQ_ACTIVE (none: never), its sticky log (bit 1) from its episode count TQ_COUNT and the log file
 * of scope (therm_logs); see seg_msr.c therm_read. */
static void therm(struct node_layout *l, uint32_t msr, int k, const char *scope, uint32_t temp, long long d)
{
    uint32_t active = bound(l, BK_THERMAL, TQ_ACTIVE, k), count = bound(l, BK_THERMAL, TQ_COUNT, k);
    long long on = active != SEG_NONE ? (long long)active + 1 : 0;
    long long c = temp;
    char path[64] = "";
    snprintf(path, sizeof path, "state/msr/package%d/%s_therm_log", k, scope);
    if (active != SEG_NONE && count != SEG_NONE && segb_find(l->b, path) != SEG_NONE)
        c |= (long long)((uint64_t)(count + 1) << 32);
    else
        path[0] = 0;
    segb_param(l->b, (struct seg_param){.a = msr, .b = SEG_MSR_THERM, .c = c, .d = d | on << 32, .related = SEG_NONE},
               *path ? path : NULL);
}

/* The list's END, continuing in list next (SEG_NONE: none). */
static uint32_t end(struct seg_builder *b, uint32_t next)
{
    return segb_param(b, (struct seg_param){.b = SEG_MSR_END, .c = next != SEG_NONE ? next : 0, .d = next != SEG_NONE,
                                            .related = SEG_NONE}, NULL);
}

struct msr_node {
    const struct node_layout *l;
    const struct yt_node *tree;
    const struct phys_cpu_params *p;
    struct cpuinfo_cpu *cpus;
    int ncpu;
    bool intel;
    long long base_khz, c6_permille;
    long long tsc_khz;          /* the clock of TSC, MPERF and the residencies; 0: the reader's RDTSC */
    uint32_t elapsed, busy0;   /* value indices, SEG_NONE: no /proc/stat counters */
};

/* The positions of the CPUs of socket k (and core c when c >= 0), space-separated, into w. */
static void positions(const struct msr_node *m, int k, int c, char *w, size_t len)
{
    size_t used = 0;
    w[0] = 0;
    for (int i = 0; i < m->ncpu && used + 12 < len; i++)
        if (m->cpus[i].socket == k && (c < 0 || m->cpus[i].core == c))
            used += (size_t)snprintf(w + used, len - used, "%s%d", used ? " " : "", i);
}

/* The RAPL registers of package k (zone z in dir). */
static void rapl_regs(struct node_layout *l, const struct msr_node *m, int k, const struct yt_node *z, const char *dir)
{
    struct seg_builder *b = l->b;
    long long unit_nj = prof_int(z, "energyUnitNJ", 0), unit_uw = prof_int(z, "powerUnitUW", 0);
    int esu = log2_near(1e9 / (double)(unit_nj > 0 ? unit_nj : 1000)) & 0x1F;
    int pu = unit_uw > 0 ? log2_near(1e6 / (double)unit_uw) & 0xF : 0;
    uint32_t pkg_ctr = bound(l, BK_ENERGY, PHYS_ZONE_PACKAGE, k), core = bound(l, BK_ENERGY, PHYS_ZONE_CORE, k);
    if (!m->intel) {
        reg(b, MSR_AMD_RAPL_POWER_UNIT, SEG_MSR_CONST, esu << 8 | 10 << 16, 0, NULL);
        reg(b, MSR_AMD_PKG_ENERGY_STATUS, SEG_MSR_ENERGY, pkg_ctr, 1, NULL);
        long long cores = prof_int(m->tree, "cpu.coresPerSocket", 1);
        if (core != SEG_NONE)
            reg(b, MSR_AMD_CORE_ENERGY_STATUS, SEG_MSR_ENERGY, core, cores > 1 ? cores : 1, NULL);
        return;
    }
    reg(b, MSR_RAPL_POWER_UNIT, SEG_MSR_CONST, pu | esu << 8 | TIME_UNIT_TU << 16, 0, NULL);
    reg(b, MSR_PKG_ENERGY_STATUS, SEG_MSR_ENERGY, pkg_ctr, 1, NULL);
    uint32_t dram = bound(l, BK_ENERGY, PHYS_ZONE_DRAM, k);
    if (dram != SEG_NONE)
        reg(b, MSR_DRAM_ENERGY_STATUS, SEG_MSR_ENERGY, dram, 1, NULL);
    else
        reg(b, MSR_DRAM_ENERGY_STATUS, SEG_MSR_CONST, 0, 0, NULL);
    if (core != SEG_NONE)
        reg(b, MSR_PP0_ENERGY_STATUS, SEG_MSR_ENERGY, core, 1, NULL);
    else
        reg(b, MSR_PP0_ENERGY_STATUS, SEG_MSR_CONST, 0, 0, NULL);
    /* the time the package's RAPL limits held it down, in the time unit (TU, 2^-10 s), 32 bits
     * (Intel SDM Vol. 3B §14.9.3 "Package RAPL Domain"): its throttle-time line
     * (runtime/node_cycles.c) in ns, shown in units of 2^-TU s */
    if (m->elapsed != SEG_NONE)
        reg_line(b, MSR_PKG_PERF_STATUS, SEG_MSR_CYCLES, m->elapsed,
                 layout_counter_ex(l, 1000, 64, false, (struct binding){.kind = BK_CPU_CYCLES, .zone = 1, .pkg = (uint8_t)k}),
                 TIME_UNIT_TU, NULL);
    else
        reg(b, MSR_PKG_PERF_STATUS, SEG_MSR_CONST, 0, 0, NULL);
    static const uint32_t zero[] = {MSR_VR_CURRENT_CONFIG, MSR_DRAM_POWER_LIMIT, MSR_DRAM_PERF_STATUS, MSR_DRAM_POWER_INFO,
                                    MSR_PP0_POWER_LIMIT, MSR_PP0_POLICY,       MSR_PP0_PERF_STATUS,  MSR_PP1_POWER_LIMIT,
                                    MSR_PP1_ENERGY_STATUS, MSR_PP1_POLICY};
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
        reg(b, zero[i], SEG_MSR_CONST, 0, 0, NULL);
    int pl1 = constraint_of(z, "long_term"), pl2 = constraint_of(z, "short_term");
    if (unit_uw > 0 && pl1 >= 0) {
        long long tdp = constraint_num(z, pl1, "maxPowerUW") / unit_uw;
        long long mx = constraint_num(z, pl2, "maxPowerUW") / unit_uw;
        reg(b, MSR_PKG_POWER_INFO, SEG_MSR_CONST, (tdp & 0x7FFF) | (mx & 0x7FFF) << 32, 0, NULL);
        char words[3200] = "";
        add_word(l, words, sizeof words, dir, pl1, "power_limit_uw");
        add_word(l, words, sizeof words, dir, pl1, "time_window_us");
        add_word(l, words, sizeof words, dir, pl2, "power_limit_uw");
        add_word(l, words, sizeof words, dir, pl2, "time_window_us");
        add_word(l, words, sizeof words, dir, -1, "enabled");
        reg(b, MSR_PKG_POWER_LIMIT, SEG_MSR_LIMIT, unit_uw, TIME_UNIT_US, words);
    }
}

/* Package k's list: its first param, or SEG_NONE when it has no registers. */
static uint32_t package_list(struct node_layout *l, const struct msr_node *m, int k)
{
    struct seg_builder *b = l->b;
    int sockets = m->p->sockets > 0 ? m->p->sockets : 1, dies = m->p->dies_per_pkg > 0 ? m->p->dies_per_pkg : 1;
    char dir[512], w[4096];
    const struct yt_node *z = package_zone(m->tree, k, sockets, dies, dir, sizeof dir);
    uint32_t first = segb_param(b, (struct seg_param){.a = MSR_IA32_UCODE_REV, .b = SEG_MSR_CONST,
                                                      .c = (long long)(strtoull(prof_str(m->tree, "cpu.microcode", "0"), NULL, 0) << 32),
                                                      .related = SEG_NONE}, NULL);
    if (m->intel) {
        long long base = m->base_khz / 100000, low = m->p->cpuinfo_min_khz / 100000, top = m->p->cpuinfo_max_khz / 100000;
        reg(b, MSR_PLATFORM_INFO, SEG_MSR_CONST, (base & 0xFF) << 8 | (low & 0xFF) << 40, 0, NULL);
        reg(b, MSR_PKG_CST_CONFIG_CONTROL, SEG_MSR_CONST, 2, 0, NULL);
        reg(b, MSR_SMI_COUNT, SEG_MSR_CONST, 0, 0, NULL);
        reg(b, MSR_IA32_MISC_ENABLE, SEG_MSR_CONST, 0x850089, 0, NULL);
        reg(b, MSR_TEMPERATURE_TARGET, SEG_MSR_CONST, TJMAX_C << 16, 0, NULL);
        reg(b, MSR_TURBO_RATIO_LIMIT, SEG_MSR_CONST, (long long)((top & 0xFF) * UINT64_C(0x0101010101010101)), 0, NULL);
        reg(b, MSR_IA32_ENERGY_PERF_BIAS, SEG_MSR_CONST, 6, 0, NULL);
        reg(b, MSR_MISC_PWR_MGMT, SEG_MSR_CONST, 0, 0, NULL);
        reg(b, MSR_MISC_FEATURE_CONTROL, SEG_MSR_CONST, 0, 0, NULL);
        reg(b, MSR_TURBO_RATIO_LIMIT1, SEG_MSR_CONST, (long long)UINT64_C(0x1814100C08040201), 0, NULL);
        reg(b, MSR_POWER_CTL, SEG_MSR_CONST, 2, 0, NULL);
        reg(b, MSR_CONFIG_TDP_NOMINAL, SEG_MSR_CONST, base & 0xFF, 0, NULL);
        reg(b, MSR_CONFIG_TDP_LEVEL_1, SEG_MSR_CONST, 0, 0, NULL);
        reg(b, MSR_CONFIG_TDP_LEVEL_2, SEG_MSR_CONST, 0, 0, NULL);
        reg(b, MSR_CONFIG_TDP_CONTROL, SEG_MSR_CONST, 0, 0, NULL);
        reg(b, MSR_TURBO_ACTIVATION_RATIO, SEG_MSR_CONST, 0, 0, NULL);
        if (prof_bool(yt_get(m->tree, "cpufreq"), "hwp", false)) { /* render_cpufreq's HWP */
            reg(b, MSR_PM_ENABLE, SEG_MSR_CONST, 1, 0, NULL);
            reg(b, MSR_HWP_CAPABILITIES, SEG_MSR_CONST, (top & 0xFF) | (base & 0xFF) << 8 | (low & 0xFF) << 16 | (low & 0xFF) << 24,
                0, NULL);
            long long req = (low & 0xFF) | (top & 0xFF) << 8 | 0x80LL << 24;
            reg(b, MSR_HWP_REQUEST_PKG, SEG_MSR_CONST, req, 0, NULL);
            reg(b, MSR_HWP_REQUEST, SEG_MSR_CONST, req, 0, NULL);
            reg(b, MSR_HWP_INTERRUPT, SEG_MSR_CONST, 0, 0, NULL);
            reg(b, MSR_HWP_STATUS, SEG_MSR_CONST, 0, 0, NULL);
        }
        uint32_t freq = bound(l, BK_CUR_FREQ, -1, k);
        if (freq != SEG_NONE) {
            reg(b, MSR_IA32_PERF_STATUS, SEG_MSR_RATIO, freq, 100000, NULL);
            reg(b, MSR_IA32_PERF_CTL, SEG_MSR_RATIO, freq, 100000, NULL);
        }
        uint32_t temp = bound(l, BK_PKG_TEMP, -1, k);
        if (temp != SEG_NONE)
            therm(l, MSR_IA32_PACKAGE_THERM_STATUS, k, "package", temp, TJMAX_C);
        reg(b, MSR_IA32_PACKAGE_THERM_INTERRUPT, SEG_MSR_CONST, 0, 0, NULL);
        if (m->elapsed != SEG_NONE) {
            positions(m, k, -1, w, sizeof w);
            reg_line(b, MSR_PKG_C2_RESIDENCY, SEG_MSR_IDLE, m->elapsed, m->busy0, m->tsc_khz << 16 | (1000 - m->c6_permille), w);
            reg_line(b, MSR_PKG_C6_RESIDENCY, SEG_MSR_IDLE, m->elapsed, m->busy0, m->tsc_khz << 16 | m->c6_permille, w);
            static const uint32_t zero[] = {MSR_PKG_C3_RESIDENCY, MSR_PKG_C7_RESIDENCY, MSR_PKG_C8_RESIDENCY,
                                            MSR_PKG_C9_RESIDENCY, MSR_PKG_C10_RESIDENCY, MSR_PKGC3_IRTL,
                                            MSR_PKGC6_IRTL,       MSR_PKGC7_IRTL};
            for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
                reg(b, zero[i], SEG_MSR_CONST, 0, 0, NULL);
        }
    }
    if (z && bound(l, BK_ENERGY, PHYS_ZONE_PACKAGE, k) != SEG_NONE)
        rapl_regs(l, m, k, z, dir);
    end(b, SEG_NONE);
    return first;
}

/* CPU position i's list, continuing in its package's (pkg_list). */
static uint32_t cpu_list(struct node_layout *l, const struct msr_node *m, int i, uint32_t pkg_list)
{
    struct seg_builder *b = l->b;
    uint32_t first = SEG_NONE;
    if (m->elapsed != SEG_NONE) {
        uint32_t cyc = layout_counter_ex(l, 1000, 64, false,
                                         (struct binding){.kind = BK_CPU_CYCLES, .cpu = (uint16_t)i});
        first = reg_line(b, MSR_IA32_TSC, SEG_MSR_TIME, m->elapsed, m->elapsed, m->tsc_khz, NULL);
        reg_line(b, MSR_IA32_MPERF, SEG_MSR_TIME, m->elapsed, m->busy0 + (uint32_t)i, m->tsc_khz, NULL);
        reg_line(b, MSR_IA32_APERF, SEG_MSR_CYCLES, m->elapsed, cyc, 0, NULL);
        if (!m->intel) {
            reg_line(b, MSR_AMD_MPERF_RO, SEG_MSR_TIME, m->elapsed, m->busy0 + (uint32_t)i, 0, NULL);
            reg_line(b, MSR_AMD_APERF_RO, SEG_MSR_CYCLES, m->elapsed, cyc, 0, NULL);
        } else {
            char w[64];
            int k = m->cpus[i].socket;
            positions(m, k, m->cpus[i].core, w, sizeof w);
            reg_line(b, MSR_CORE_C6_RESIDENCY, SEG_MSR_IDLE, m->elapsed, m->busy0, m->tsc_khz << 16 | m->c6_permille, w);
            reg(b, MSR_CORE_C3_RESIDENCY, SEG_MSR_CONST, 0, 0, NULL);
            reg(b, MSR_CORE_C7_RESIDENCY, SEG_MSR_CONST, 0, 0, NULL);
            uint32_t temp = bound(l, BK_PKG_TEMP, -1, k);
            int core = m->cpus[i].core;
            if (temp != SEG_NONE) /* render_coretemp's spread of core c below its package */
                therm(l, MSR_IA32_THERM_STATUS, k, "core", temp, TJMAX_C | (long long)(core * 7 % 5 * 500) << 8);
            reg(b, MSR_IA32_THERM_INTERRUPT, SEG_MSR_CONST, 0, 0, NULL);
        }
    }
    uint32_t e = end(b, pkg_list);
    return first != SEG_NONE ? first : e;
}

void render_msr(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p)
{
    struct msr_node m = {.l = l, .tree = tree, .p = p};
    m.ncpu = cpuinfo_cpus(tree, &m.cpus);
    if (m.ncpu <= 0) {
        free(m.cpus);
        return;
    }
    struct seg_builder *b = l->b;
    segb_dir(b, "dev/cpu", 0755);
    int sockets = p->sockets > 0 ? p->sockets : 1;
    m.intel = !strcmp(prof_str(tree, "cpu.vendorID", ""), "GenuineIntel");
    bool amd = !strcmp(prof_str(tree, "cpu.vendorID", ""), "AuthenticAMD");
    bool hyper = prof_bool(tree, "cpu.hypervisor", false);
    m.base_khz = p->base_khz > 0 ? p->base_khz : p->cpuinfo_max_khz;
    m.c6_permille = render_cpuidle_c6_permille(tree);
    m.tsc_khz = m.intel ? m.base_khz / 100000 * 100000 : 0; /* PLATFORM_INFO's ratio x 100 MHz */
    m.elapsed = bound(l, BK_ELAPSED, -1, 0);
    m.busy0 = bound(l, BK_CPU_BUSY, -1, 0);
    if (m.busy0 == SEG_NONE || render_proc_ncpus(p) < m.ncpu)
        m.elapsed = SEG_NONE; /* the registers of time need every CPU's busy counter */
    uint32_t list[PHYS_MAX_PKGS];
    for (int k = 0; k < sockets && k < PHYS_MAX_PKGS && m.intel && !hyper; k++)
        therm_logs(l, k);
    for (int k = 0; k < sockets && k < PHYS_MAX_PKGS; k++)
        list[k] = hyper || !(m.intel || amd) ? SEG_NONE : package_list(l, &m, k);
    for (int i = 0; i < m.ncpu; i++) {
        char path[64];
        int k = m.cpus[i].socket < PHYS_MAX_PKGS && m.cpus[i].socket < sockets ? m.cpus[i].socket : 0;
        uint32_t first = hyper || !(m.intel || amd) ? end(b, SEG_NONE) : cpu_list(l, &m, i, list[k]);
        snprintf(path, sizeof path, "dev/cpu/%d/msr", m.cpus[i].id);
        segb_device(b, path, 0600, SEG_M, first);
    }
    free(m.cpus);
}
