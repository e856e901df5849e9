/* render_msr: the node's /dev/cpu/<n>/msr devices (segment.h "Devices", seg_msr.h), one per
 * logical CPU, each naming its package's register list. The registers are what the profile's
 * facts imply, never invented:
 *   Intel (vendorID GenuineIntel) with a powercap package zone (any control type):
 *     0x606 MSR_RAPL_POWER_UNIT   PU = log2(1 W / powerUnitUW), ESU = log2(1 J / energyUnitNJ),
 *                                 TU = 10 (976 us, the unit render_powercap's windows use)
 *                                 (Intel SDM Vol. 3B §14.9.1)
 *     0x611 MSR_PKG_ENERGY_STATUS the package zone's energy counter (the energy_uj file's)
 *     0x619 MSR_DRAM_ENERGY_STATUS the dram sub-zone's counter, when the zone has one
 *     0x614 MSR_PKG_POWER_INFO    14:0 the long_term constraint's maxPowerUW (the kernel shows
 *                                 THERMAL_SPEC_POWER there), 46:32 the short_term one's
 *                                 (MAX_POWER), min power and max window 0 (not in the profile)
 *     0x610 MSR_PKG_POWER_LIMIT   composed from the constraint files, written through them
 *     0x198 IA32_PERF_STATUS      the package's running frequency (its scaling_cur_freq value)
 *                                 as a ratio of 100 MHz in bits 15:8, when cpufreq is rendered
 *   AMD (AuthenticAMD) with a powercap package zone:
 *     0xC0010299 RAPL_PWR_UNIT    ESU from energyUnitNJ, TU 10, PU 0 (AMD's registers report
 *                                 energy only: amd/amd_energy issue #9)
 *     0xC001029B PKG_ENERGY_STAT  the package zone's counter
 *     0xC001029A CORE_ENERGY_STAT the core sub-zone's counter divided by coresPerSocket: the
 *                                 physics models the package's core domain, not single cores,
 *                                 so each core shows an equal share (docs/interfaces.md)
 *   A hypervisor node (cpu.hypervisor) or one without a package zone has the devices but no
 *   registers: every read is EIO, as RAPL MSRs fault under KVM.
 * Never touches the physics; reads the builder only to find the files it refers to. */
#include "params.h"
#include "profile.h"
#include "render.h"
#include "render_cpuinfo.h"
#include "seg_msr.h"
#include "ytree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEV "sys/devices/virtual/powercap"
#define TIME_UNIT_US 976 /* 2^-10 s, as render_powercap's window validator uses */

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

void render_msr(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p)
{
    struct cpuinfo_cpu *cpus = NULL;
    int ncpu = cpuinfo_cpus(tree, &cpus);
    if (ncpu <= 0) {
        free(cpus);
        return;
    }
    struct seg_builder *b = l->b;
    segb_dir(b, "dev/cpu", 0755);
    int sockets = p->sockets > 0 ? p->sockets : 1, dies = p->dies_per_pkg > 0 ? p->dies_per_pkg : 1;
    bool intel = !strcmp(prof_str(tree, "cpu.vendorID", ""), "GenuineIntel");
    bool amd = !strcmp(prof_str(tree, "cpu.vendorID", ""), "AuthenticAMD");
    bool hyper = prof_bool(tree, "cpu.hypervisor", false);
    long long cores = prof_int(tree, "cpu.coresPerSocket", 1);
    uint32_t list[PHYS_MAX_PKGS];
    for (int k = 0; k < sockets && k < PHYS_MAX_PKGS; k++) {
        char dir[512];
        const struct yt_node *z = hyper ? NULL : package_zone(tree, k, sockets, dies, dir, sizeof dir);
        /* Registers, then the END that closes the list; the list starts at the first of them. */
        list[k] = SEG_NONE;
        uint32_t pkg_ctr = bound(l, BK_ENERGY, PHYS_ZONE_PACKAGE, k);
        if (z && pkg_ctr != SEG_NONE && (intel || amd)) {
            long long unit_nj = prof_int(z, "energyUnitNJ", 0), unit_uw = prof_int(z, "powerUnitUW", 0);
            int esu = log2_near(1e9 / (double)(unit_nj > 0 ? unit_nj : 1000)) & 0x1F;
            int pu = unit_uw > 0 ? log2_near(1e6 / (double)unit_uw) & 0xF : 0;
            uint32_t at = segb_param(b, (struct seg_param){.a = intel ? MSR_RAPL_POWER_UNIT : MSR_AMD_RAPL_POWER_UNIT,
                                                           .b = SEG_MSR_CONST,
                                                           .c = (intel ? pu : 0) | esu << 8 | 10 << 16,
                                                           .related = SEG_NONE}, NULL);
            list[k] = at;
            if (intel) {
                reg(b, MSR_PKG_ENERGY_STATUS, SEG_MSR_ENERGY, pkg_ctr, 1, NULL);
                uint32_t dram = bound(l, BK_ENERGY, PHYS_ZONE_DRAM, k);
                if (dram != SEG_NONE)
                    reg(b, MSR_DRAM_ENERGY_STATUS, SEG_MSR_ENERGY, dram, 1, NULL);
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
                uint32_t freq = bound(l, BK_CUR_FREQ, -1, k);
                if (freq != SEG_NONE)
                    reg(b, MSR_IA32_PERF_STATUS, SEG_MSR_RATIO, freq, 100000, NULL);
            } else {
                reg(b, MSR_AMD_PKG_ENERGY_STATUS, SEG_MSR_ENERGY, pkg_ctr, 1, NULL);
                uint32_t core = bound(l, BK_ENERGY, PHYS_ZONE_CORE, k);
                if (core != SEG_NONE)
                    reg(b, MSR_AMD_CORE_ENERGY_STATUS, SEG_MSR_ENERGY, core, cores > 1 ? cores : 1, NULL);
            }
        }
        uint32_t end = segb_param(b, (struct seg_param){.b = SEG_MSR_END, .related = SEG_NONE}, NULL);
        if (list[k] == SEG_NONE)
            list[k] = end; /* an empty list: every address is EIO */
    }
    for (int i = 0; i < ncpu; i++) {
        char path[64];
        int k = cpus[i].socket < PHYS_MAX_PKGS && cpus[i].socket < sockets ? cpus[i].socket : 0;
        snprintf(path, sizeof path, "dev/cpu/%d/msr", cpus[i].id);
        segb_device(b, path, 0600, SEG_M, list[k]);
    }
    free(cpus);
}
