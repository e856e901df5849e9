/* Unit tests of engine/physics/physics_cpu.c: power models, governors, caps, temperature, energy counters
 * and the RAPL write arithmetic. Expected numbers come from the formulas of upstream §c
 * and sysfs §3.4 evaluated independently (the literals were computed outside this code,
 * the derivation is in the comment next to each), never from the module itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "physics_cpu.h"

#define MS 1000000LL
#define SEC 1000000000LL

static void assert_near(double got, double want, double tol)
{
    double d = got > want ? got - want : want - got;
    if (!(d <= tol))
        fail_msg("got %.17g, want %.17g (tolerance %g)", got, want, tol);
}

/* intel-xeon-2s-rapl (upstream a.1): 2 × Xeon 8260, intel_pstate active, powersave, RAPL PL1 165 W
 * over 999424 µs (max 165 W), PL2 198 W (max 413 W), DRAM energy unit 15300 nJ. */
static void intel_params(struct phys_cpu_params *p)
{
    memset(p, 0, sizeof *p);
    p->sockets = 2;
    p->dies_per_pkg = 1;
    p->cpus = 96;
    p->model = PHYS_MODEL_ANALYTIC;
    p->idle_pkg_w = 40;
    p->max_pkg_w = 165;
    p->alpha_util = 1.15;
    p->beta_freq = 1.35;
    p->knee = 0.7;
    p->freq_ramp_ms = 500;
    p->dram_w_per_socket = 8;
    p->platform_other_w = 0;
    p->rapl_floor_w = 0;
    p->ambient_init_c = 20;
    p->driver = PHYS_DRV_INTEL_PSTATE;
    p->governor = PHYS_GOV_POWERSAVE;
    p->boost = 1;
    p->cpuinfo_min_khz = 1000000;
    p->cpuinfo_max_khz = 3900000;
    p->base_khz = 2400000;
    for (int k = 0; k < 2; k++) {
        struct phys_pkg_params *pp = &p->pkg[k];
        pp->rapl_present = 1;
        pp->rapl_enabled = 1;
        pp->power_unit_uw = 125000;
        pp->pl[PHYS_PL1] = (struct phys_constraint){.present = 1, .limit_uw = 165000000,
                                                     .max_power_uw = 165000000, .time_window_us = 999424};
        pp->pl[PHYS_PL2] = (struct phys_constraint){.present = 1, .limit_uw = 198000000,
                                                     .max_power_uw = 413000000, .time_window_us = 976};
        pp->counter[PHYS_ZONE_PACKAGE].energy_unit_nj = 61035;
        pp->counter[PHYS_ZONE_DRAM].energy_unit_nj = 15300;
        pp->counter[PHYS_ZONE_CORE].energy_unit_nj = 61035;
    }
    p->psys.energy_unit_nj = 61035;
}

/* amd-epyc-2s-energy-only (a.3): 2 × EPYC 9654, acpi-cpufreq with table and boost, schedutil,
 * SPECpower 01203 node curve, energy-only RAPL (unit 15258 nJ), no limits. */
static void epyc_params(struct phys_cpu_params *p)
{
    static const double load[] = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
    static const double node_w[] = {128, 257, 300, 340, 378, 410, 442, 498, 577, 697, 817};
    memset(p, 0, sizeof *p);
    p->sockets = 2;
    p->cpus = 384;
    p->model = PHYS_MODEL_CURVE;
    p->idle_pkg_w = 40;
    p->max_pkg_w = 360;
    p->alpha_util = 1.15;
    p->beta_freq = 1.35;
    p->knee = 0.7;
    p->core_fraction = 0.7;
    p->freq_ramp_ms = 500;
    p->curve_n = 11;
    for (int i = 0; i < 11; i++) {
        p->curve_load_pct[i] = load[i];
        p->curve_node_w[i] = node_w[i];
    }
    p->dram_w_per_socket = 8;
    p->ambient_init_c = 20;
    p->driver = PHYS_DRV_ACPI_CPUFREQ;
    p->governor = PHYS_GOV_SCHEDUTIL;
    p->boost = 1;
    p->cpuinfo_min_khz = 1500000;
    p->cpuinfo_max_khz = 3707812;
    p->freq_n = 3;
    p->freq_khz[0] = 2400000;
    p->freq_khz[1] = 1900000;
    p->freq_khz[2] = 1500000;
    for (int k = 0; k < 2; k++) {
        p->pkg[k].counter[PHYS_ZONE_PACKAGE].energy_unit_nj = 15258;
        p->pkg[k].counter[PHYS_ZONE_CORE].energy_unit_nj = 15258;
    }
}

/* amd-epyc-2s-hsmp (a.4): 2 × EPYC 9655, amd-pstate-epp, performance, analytic 45..400 W,
 * HSMP cap 400 W (max 400 W) settling with τ = 1000 ms. */
static void hsmp_params(struct phys_cpu_params *p)
{
    epyc_params(p);
    p->model = PHYS_MODEL_ANALYTIC;
    p->idle_pkg_w = 45;
    p->max_pkg_w = 400;
    p->driver = PHYS_DRV_AMD_PSTATE_EPP;
    p->governor = PHYS_GOV_PERFORMANCE;
    p->cpuinfo_max_khz = 4500000;
    p->freq_n = 0;
    p->hsmp_settle_tau_ms = 1000;
    for (int k = 0; k < 2; k++) {
        p->pkg[k].hsmp_cap_default_uw = 400000000;
        p->pkg[k].hsmp_cap_max_uw = 400000000;
    }
}

/* What a write to every policy of a package does (the write path sets each CPU of the policy). */
#define SET_PKG(p, s, k, field, value)                                                                \
    do {                                                                                              \
        for (int i_ = 0; i_ < (s)->ncpus; i_++)                                                      \
            if (phys_cpu_pkg_of((p), (s), i_) == (k))                                                 \
                (s)->cpu[i_].field = (value);                                                         \
    } while (0)

/* The engine's tick: step to the tick, then begin the next interval. */
static void tick(const struct phys_cpu_params *p, struct phys_cpu_state *s, const struct phys_load *l,
                 double ambient, int64_t dt)
{
    phys_cpu_step(p, s, l, ambient, dt);
    phys_cpu_begin_interval(p, s, l);
}

static void run_ticks(const struct phys_cpu_params *p, struct phys_cpu_state *s, const struct phys_load *l,
                      double ambient, int seconds)
{
    for (int i = 0; i < seconds; i++)
        tick(p, s, l, ambient, SEC);
}

/* ---- power models ---- */

static void test_analytic_formula(void **st)
{
    struct phys_cpu_params p;
    intel_params(&p);
    struct phys_load l = {.cpu_util = 0, .memory_intensity = 0, .cpu_class = PHYS_CLASS_MIXED};
    /* idle + (max - idle)·(u·a)^1.15·f^1.35, a = 1 - 0.30·mem */
    assert_near(phys_cpu_model_power_w(&p, &l, 1), 40, 1e-12);
    l.cpu_util = 1;
    assert_near(phys_cpu_model_power_w(&p, &l, 1), 165, 1e-12);
    /* upstream H20: 40 + 125·(1000000/3900000)^1.35 */
    assert_near(phys_cpu_model_power_w(&p, &l, 1000000.0 / 3900000.0), 59.905486367040034, 1e-11);
    /* 40 + 125·(2/3.9)^1.35 */
    assert_near(phys_cpu_model_power_w(&p, &l, 2.0 / 3.9), 90.74149838213913, 1e-11);
    l.cpu_util = 0.5; /* 40 + 125·0.5^1.15 */
    assert_near(phys_cpu_model_power_w(&p, &l, 1), 96.32815391317689, 1e-11);
    l.memory_intensity = 0.5; /* activity 0.85: 40 + 125·0.425^1.15 */
    assert_near(phys_cpu_model_power_w(&p, &l, 1), 86.72585775712156, 1e-11);

    /* the node at render: powersave at zero load runs at cpuinfo_min, idle power at that scale */
    struct phys_cpu_state s;
    phys_cpu_init(&p, &s);
    assert_int_equal(s.npkgs, 2);
    assert_near(s.pkg[0].power_w, 40, 1e-12);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 1000000);
    /* full load under performance: 165 W per package */
    struct phys_load full = {.cpu_util = 1, .memory_intensity = 0, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    p.governor = PHYS_GOV_PERFORMANCE;
    phys_cpu_init(&p, &s);
    phys_cpu_begin_interval(&p, &s, &full);
    assert_near(s.pkg[0].power_w, 165, 1e-12);
    assert_near(s.pkg[1].power_w, 165, 1e-12);
    assert_false(s.pkg[0].capped);
}

static void test_curve_epyc_9654(void **st)
{
    struct phys_cpu_params p;
    epyc_params(&p);
    struct phys_load l = {.cpu_util = 0, .memory_intensity = 0, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    /* at f = 1 the throughput multiplier is 1, so P = node curve(100·u) / 2 */
    assert_near(phys_cpu_model_power_w(&p, &l, 1), 128.0 / 2, 1e-12);
    l.cpu_util = 0.5;
    assert_near(phys_cpu_model_power_w(&p, &l, 1), 410.0 / 2, 1e-12);
    l.cpu_util = 1;
    assert_near(phys_cpu_model_power_w(&p, &l, 1), 817.0 / 2, 1e-12);
    l.cpu_util = 0.25; /* halfway between 300 and 340 */
    assert_near(phys_cpu_model_power_w(&p, &l, 1), 320.0 / 2, 1e-12);
    /* f = 0.5, compute-bound, mem 0: weights 0.8625/0.11/0.0275, scales 0.5, 0.835429 (below the
     * knee), 0.975 → multiplier 0.54996; curve(54.996) = 410 + 32·0.4996 → /2 = 212.99354 */
    l.cpu_util = 1;
    assert_near(phys_cpu_model_power_w(&p, &l, 0.5), 212.99354285714287, 1e-9);

    /* the node under performance runs at f = 1 (boost range), per package power as above */
    p.governor = PHYS_GOV_PERFORMANCE;
    struct phys_cpu_state s;
    phys_cpu_init(&p, &s);
    struct phys_load half = {.cpu_util = 0.5, .memory_intensity = 0, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    phys_cpu_begin_interval(&p, &s, &half);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 3707812);
    assert_near(s.pkg[0].power_w, 205, 1e-12);
    assert_near(s.pkg[1].power_w, 205, 1e-12);
}

/* ---- governors and cpufreq limits ---- */

static void test_governor_performance_vs_powersave(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state s;
    struct phys_load l = {.cpu_util = 0.5, .memory_intensity = 0, .cpu_class = PHYS_CLASS_MIXED};

    /* intel_pstate (setpolicy): powersave follows load, performance pins the ceiling */
    intel_params(&p);
    phys_cpu_init(&p, &s);
    run_ticks(&p, &s, &l, 20, 20); /* 20 ramp time constants */
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 2450000); /* 1e6 + 2.9e6·0.5 */
    l.cpu_util = 0;
    run_ticks(&p, &s, &l, 20, 20);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 1000000);
    l.cpu_util = 1;
    run_ticks(&p, &s, &l, 20, 20);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 1), 3900000);
    assert_near(s.pkg[1].power_w, 165, 1e-6);
    SET_PKG(&p, &s, 0, governor, PHYS_GOV_PERFORMANCE);
    l.cpu_util = 0;
    run_ticks(&p, &s, &l, 20, 20);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 3900000);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 1), 1000000);

    /* the ramp is first order with τ = 500 ms on a 1 ms Euler grid: after 500 ms from 1 GHz
     * toward 3.9 GHz, 3.9e6 - 2.9e6·(1 - 1/500)^500 */
    phys_cpu_init(&p, &s);
    l.cpu_util = 1;
    phys_cpu_begin_interval(&p, &s, &l);
    phys_cpu_step(&p, &s, &l, 20, 500 * MS);
    assert_near(s.pkg[0].freq_khz, 3900000 - 2900000 * 0.3675112548571586, 1e-3);

    /* acpi-cpufreq table driver: powersave pins the lowest entry even at full load; performance
     * reaches the boost range above the table; schedutil follows load */
    epyc_params(&p);
    p.governor = PHYS_GOV_POWERSAVE;
    phys_cpu_init(&p, &s);
    l.cpu_util = 1;
    run_ticks(&p, &s, &l, 20, 20);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 1500000);
    SET_PKG(&p, &s, 0, governor, PHYS_GOV_PERFORMANCE);
    SET_PKG(&p, &s, 1, governor, PHYS_GOV_SCHEDUTIL);
    l.cpu_util = 0.5;
    run_ticks(&p, &s, &l, 20, 20);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 3707812);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 1), 2603906); /* 1.5e6 + (3707812-1.5e6)/2 */
    assert_true(s.pkg[0].power_w > s.pkg[1].power_w);
    /* boost off: the ceiling is the table's top entry */
    s.boost = 0;
    run_ticks(&p, &s, &l, 20, 20);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 2400000);
}

static void test_scaling_max_clamp(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state s;
    struct phys_load l = {.cpu_util = 1, .memory_intensity = 0, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    intel_params(&p);
    p.governor = PHYS_GOV_PERFORMANCE;
    phys_cpu_init(&p, &s);
    run_ticks(&p, &s, &l, 20, 5);
    assert_near(s.pkg[0].power_w, 165, 1e-9);
    SET_PKG(&p, &s, 0, scaling_max_khz, 2000000);
    run_ticks(&p, &s, &l, 20, 20);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 2000000);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 1), 3900000);
    assert_near(s.pkg[0].power_w, 90.74149838213913, 1e-6); /* 40 + 125·(2/3.9)^1.35 */
    assert_near(s.pkg[1].power_w, 165, 1e-9);
    /* a max below cpuinfo_min clamps to cpuinfo_min; a min above max is lowered to max */
    SET_PKG(&p, &s, 0, scaling_max_khz, 1);
    SET_PKG(&p, &s, 0, scaling_min_khz, 3000000);
    run_ticks(&p, &s, &l, 20, 20);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 1000000);

    /* intel_pstate no_turbo: cpuinfo_max shows the base frequency and caps the ceiling */
    phys_cpu_init(&p, &s);
    s.boost = 0;
    assert_int_equal(phys_cpu_cpuinfo_max_khz(&p, &s), 2400000);
    run_ticks(&p, &s, &l, 20, 20);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 2400000);
    assert_true(s.pkg[0].power_w < 165);

    /* table driver: a max between entries resolves down to the entry below */
    epyc_params(&p);
    p.governor = PHYS_GOV_PERFORMANCE;
    phys_cpu_init(&p, &s);
    SET_PKG(&p, &s, 0, scaling_max_khz, 2000000);
    run_ticks(&p, &s, &l, 20, 20);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 1900000);
    assert_true(s.pkg[0].power_w < s.pkg[1].power_w);
}

/* ---- caps ---- */

static void test_pl1_settles_to_limit(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state s;
    struct phys_load l = {.cpu_util = 1, .memory_intensity = 0, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    intel_params(&p);
    p.governor = PHYS_GOV_PERFORMANCE;
    phys_cpu_init(&p, &s);
    phys_cpu_begin_interval(&p, &s, &l);
    assert_near(s.pkg[0].power_w, 165, 1e-12);

    uint64_t lim;
    assert_int_equal(phys_rapl_limit_normalise(120000000, 125000, 15, &lim), 0);
    s.pkg[0].pl_limit_uw[PHYS_PL1] = (int64_t)lim;
    phys_cpu_begin_interval(&p, &s, &l); /* the write takes effect from the tick */
    assert_near(s.pkg[0].power_w, 165, 1e-12); /* PL1 has not settled yet */
    assert_near(s.pkg[0].requested_cap_w, 120, 1e-12);

    double prev = 165;
    for (int i = 1; i <= 5; i++) {
        tick(&p, &s, &l, 20, SEC);
        if (i == 1) /* 120 + 45·(1 - 0.001/0.999424)^1000 */
            assert_near(s.pkg[0].pl1_settled_w, 136.53675116097074, 1e-9);
        assert_true(s.pkg[0].power_w < prev);
        assert_true(s.pkg[0].power_w <= 198);
        assert_true(s.pkg[0].capped);
        prev = s.pkg[0].power_w;
    }
    /* five windows: 120 + 45·(1 - 0.001/0.999424)^5000, within 1 % of the limit */
    assert_near(s.pkg[0].power_w, 120.30157886445825, 1e-9);
    assert_true(s.pkg[0].power_w - 120 < 1.2);
    for (int i = 0; i < 10; i++)
        tick(&p, &s, &l, 20, SEC);
    assert_near(s.pkg[0].power_w, 120, 0.01);
    assert_near(s.pkg[1].power_w, 165, 1e-12); /* the other package is unaffected */
    /* the frequency shown is what the cap forces: 3.9 GHz·((120-40)/125)^(1/1.35) */
    assert_near((double)phys_cpu_cur_freq_khz(&p, &s, 0), 2802168.3106502756, 300);

    /* disabling the zone stops enforcement */
    s.pkg[0].rapl_enabled = 0;
    phys_cpu_begin_interval(&p, &s, &l);
    assert_near(s.pkg[0].power_w, 165, 1e-12);
    assert_false(s.pkg[0].capped);
}

static void test_pl2_instant_ceiling_and_floor(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state s;
    struct phys_load l = {.cpu_util = 1, .memory_intensity = 0, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    intel_params(&p);
    p.governor = PHYS_GOV_PERFORMANCE;
    phys_cpu_init(&p, &s);
    s.pkg[0].pl_limit_uw[PHYS_PL2] = 100000000;
    phys_cpu_begin_interval(&p, &s, &l);
    assert_near(s.pkg[0].power_w, 100, 1e-12); /* no settling: the next interval is at PL2 */
    for (int i = 0; i < 5; i++) {
        tick(&p, &s, &l, 20, SEC);
        assert_true(s.pkg[0].power_w <= 100);
    }
    /* PL2 above its max power is enforced at the max */
    s.pkg[0].pl_limit_uw[PHYS_PL2] = 500000000;
    s.pkg[0].pl_limit_uw[PHYS_PL1] = 500000000;
    p.pkg[0].pl[PHYS_PL1].max_power_uw = 0;
    p.pkg[0].pl[PHYS_PL2].max_power_uw = 150000000;
    phys_cpu_begin_interval(&p, &s, &l);
    assert_near(s.pkg[0].power_w, 150, 1e-12);

    /* a cap below what cpuinfo_min draws: power stays at P(1, 1/3.9) = 59.905 W (upstream H20)
     * and the frequency shows cpuinfo_min */
    intel_params(&p);
    p.governor = PHYS_GOV_PERFORMANCE;
    phys_cpu_init(&p, &s);
    s.pkg[0].pl_limit_uw[PHYS_PL2] = 10000000;
    phys_cpu_begin_interval(&p, &s, &l);
    assert_near(s.pkg[0].power_w, 59.905486367040034, 1e-11);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 1000000);
    /* floorW above that: the floor */
    p.rapl_floor_w = 70;
    phys_cpu_begin_interval(&p, &s, &l);
    assert_near(s.pkg[0].power_w, 70, 1e-12);
    /* a disabled constraint is not enforced */
    p.pkg[0].pl[PHYS_PL2].reject = PHYS_REJECT_DISABLED;
    phys_cpu_begin_interval(&p, &s, &l);
    assert_near(s.pkg[0].power_w, 165, 1e-12);
    /* a locked one is */
    p.pkg[0].pl[PHYS_PL2].reject = PHYS_REJECT_LOCKED;
    phys_cpu_begin_interval(&p, &s, &l);
    assert_near(s.pkg[0].power_w, 70, 1e-12);
}

static void test_hsmp_cap(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state s;
    struct phys_load l = {.cpu_util = 1, .memory_intensity = 0, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    hsmp_params(&p);
    phys_cpu_init(&p, &s);
    phys_cpu_begin_interval(&p, &s, &l);
    assert_near(s.pkg[0].power_w, 400, 1e-12);
    s.pkg[0].hsmp_cap_uw = 300000000;
    run_ticks(&p, &s, &l, 20, 1);
    /* τ = 1 s: 300 + 100·(1 - 0.001)^1000 */
    assert_near(s.pkg[0].power_w, 300 + 100 * 0.36769542477096373, 1e-9);
    run_ticks(&p, &s, &l, 20, 9);
    assert_near(s.pkg[0].power_w, 300, 0.01);
    assert_near(s.pkg[1].power_w, 400, 1e-12);
    /* above cap_max the hardware holds cap_max */
    s.pkg[0].hsmp_cap_uw = 900000000;
    run_ticks(&p, &s, &l, 20, 20);
    assert_near(s.pkg[0].hsmp_settled_w, 400, 1e-6);
    /* the curve model solves the forced frequency by bisection */
    epyc_params(&p);
    p.governor = PHYS_GOV_PERFORMANCE;
    for (int k = 0; k < 2; k++)
        p.pkg[k].hsmp_cap_default_uw = p.pkg[k].hsmp_cap_max_uw = 300000000;
    phys_cpu_init(&p, &s);
    phys_cpu_begin_interval(&p, &s, &l);
    assert_near(s.pkg[0].power_w, 300, 1e-12);
    assert_true(s.pkg[0].capped);
    assert_true(s.pkg[0].scale_eff < 1);
    struct phys_load at = l;
    assert_true(phys_cpu_model_power_w(&p, &at, s.pkg[0].scale_eff) <= 300);
    assert_true(phys_cpu_cur_freq_khz(&p, &s, 0) < 3707812);
}

/* ---- temperature ---- */

static void test_temperature(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state s;
    struct phys_load idle = {.cpu_util = 0, .cpu_class = PHYS_CLASS_MIXED}, full = {.cpu_util = 1, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    intel_params(&p);
    p.governor = PHYS_GOV_PERFORMANCE;
    phys_cpu_init(&p, &s);
    assert_near(s.pkg[0].temp_c, 20 + 0.125 * 40, 1e-12); /* steady state at idle */
    phys_cpu_begin_interval(&p, &s, &full);
    run_ticks(&p, &s, &full, 20, 1);
    double t1 = s.pkg[0].temp_c;
    assert_true(t1 > 25);
    run_ticks(&p, &s, &full, 20, 60); /* 15 time constants of 4 s */
    assert_true(s.pkg[0].temp_c > t1);
    assert_near(s.pkg[0].temp_c, 20 + 0.125 * 165, 1e-4);
    /* ambient +10 °C: the package follows */
    run_ticks(&p, &s, &full, 30, 60);
    assert_near(s.pkg[0].temp_c, 30 + 0.125 * 165, 1e-4);
    /* back to idle: it cools */
    run_ticks(&p, &s, &idle, 30, 60);
    assert_near(s.pkg[0].temp_c, 30 + 0.125 * 40, 1e-4);
    /* a profile's own constants */
    p.thermal_c_per_w = 0.2;
    p.thermal_tau_s = 1;
    phys_cpu_init(&p, &s);
    run_ticks(&p, &s, &full, 20, 20);
    assert_near(s.pkg[0].temp_c, 20 + 0.2 * 165, 1e-4);
}

/* The closed form against the substep law itself, x += (target - x)·h/τ run here one substep at a
 * time (upstream's Euler step): within 1e-9 °C all along, on the target exactly once the gap is
 * under 1e-9 °C, and the same bits however the time is cut, across a change of target. */
static void test_temperature_closed_form(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state s, c;
    struct phys_load full = {.cpu_util = 1, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    intel_params(&p);
    p.governor = PHYS_GOV_PERFORMANCE;
    phys_cpu_init(&p, &s);
    phys_cpu_begin_interval(&p, &s, &full);
    const double a = 1e-3 / 4.0, target = 20 + 0.125 * s.pkg[0].power_w;
    double x = s.pkg[0].temp_c;
    assert_true(target - x > 10);
    int64_t sub = 0, lengths[] = {1, 999, 1000, 7000, 30000, 50000}; /* to 89 s: 3e-9 °C left */
    for (unsigned i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        phys_cpu_step(&p, &s, &full, 20, lengths[i] * MS);
        for (int64_t k = 0; k < lengths[i]; k++)
            x += (target - x) * a;
        sub += lengths[i];
        assert_near(s.pkg[0].temp_c, x, 1e-9);
        assert_true(s.pkg[0].temp_c < target);
    }
    phys_cpu_step(&p, &s, &full, 20, 10000 * MS); /* 99 s: under 1e-9 °C from about 94 s */
    assert_true(s.pkg[0].temp_c == target);
    assert_true(s.pkg[0].temp_on_sub > (uint64_t)sub && s.pkg[0].temp_on_sub <= (uint64_t)sub + 10000);

    /* a new ambient mid-way: one call of 3 s against 3000 calls of 1 ms, both after the change */
    phys_cpu_init(&p, &s);
    phys_cpu_begin_interval(&p, &s, &full);
    phys_cpu_step(&p, &s, &full, 20, 2 * SEC);
    memcpy(&c, &s, sizeof s);
    phys_cpu_step(&p, &s, &full, 35, 3 * SEC);
    for (int i = 0; i < 3000; i++)
        phys_cpu_step(&p, &c, &full, 35, MS);
    assert_memory_equal(&s, &c, sizeof s);
    assert_true(s.pkg[0].temp_to_c == 35 + 0.125 * s.pkg[0].power_w);
}

/* ---- energy ---- */

static void test_energy_exact_and_monotone(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state s;
    struct phys_load l = {.cpu_util = 1, .memory_intensity = 0, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    intel_params(&p);
    p.governor = PHYS_GOV_PERFORMANCE;
    p.core_fraction = 0.7;
    p.platform_other_w = 12.5;
    phys_cpu_init(&p, &s);
    phys_cpu_begin_interval(&p, &s, &l);
    phys_cpu_step(&p, &s, &l, 20, SEC);
    /* 165 W for 1 s = 165 J exactly; DRAM 8 J; core 0.7·165 J; psys 12.5 + 2·(165 + 8) J */
    assert_int_equal(phys_energy_total_uj(&s, PHYS_ZONE_PACKAGE, 0), 165000000);
    assert_int_equal(phys_energy_total_uj(&s, PHYS_ZONE_DRAM, 1), 8000000);
    assert_int_equal(phys_energy_total_uj(&s, PHYS_ZONE_CORE, 0), 115500000);
    assert_int_equal(phys_energy_total_uj(&s, PHYS_ZONE_PSYS, 0), 358500000);
    /* kernel view: raw = floor(165e9 nJ / 61035) = 2703366 counts, shown ·61035/1000 */
    assert_int_equal(phys_energy_uj_at(&s, PHYS_ZONE_PACKAGE, 0), 164999943);
    /* DRAM unit 15300: floor(8e9/15300) = 522875 counts → 7999987 µJ */
    assert_int_equal(phys_energy_uj_at(&s, PHYS_ZONE_DRAM, 0), 7999987);

    /* a power that is not a whole number of µJ per substep loses nothing over many substeps:
     * 0.1234567 W = 123457 µW (rounded) → 123457 nJ per ms → 123457000 nJ in 1000 s */
    p.dram_w_per_socket = 0.1234567;
    phys_cpu_init(&p, &s);
    for (int i = 0; i < 1000; i++)
        tick(&p, &s, &l, 20, SEC);
    assert_int_equal(phys_energy_total_uj(&s, PHYS_ZONE_DRAM, 0), 123457000);

    /* monotone through changing loads and caps, read at every ms */
    phys_cpu_init(&p, &s);
    uint64_t prev[PHYS_NZONES] = {0};
    for (int t = 0; t < 4000; t++) {
        if (t % 250 == 0) {
            l.cpu_util = (t / 250) % 3 * 0.5;
            s.pkg[0].pl_limit_uw[PHYS_PL1] = (t / 250) % 2 ? 80000000 : 165000000;
            phys_cpu_begin_interval(&p, &s, &l);
        }
        phys_cpu_step(&p, &s, &l, 20, MS);
        for (int z = 0; z < PHYS_NZONES; z++) {
            uint64_t v = phys_energy_uj_at(&s, (enum phys_zone)z, 0);
            assert_true(v >= prev[z]);
            prev[z] = v;
        }
    }
}

static void test_energy_wrap(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state s;
    struct phys_load l = {.cpu_util = 1, .memory_intensity = 0, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    intel_params(&p);
    p.governor = PHYS_GOV_PERFORMANCE;
    /* start 1 J below the range 262143328850 (upstream H04) */
    p.pkg[0].counter[PHYS_ZONE_PACKAGE].start_uj = 262143328850 - 1000000;
    phys_cpu_init(&p, &s);
    /* seed = ceil(262142328850·1000/61035) = 4294950911 counts, shown 262142328852 (the smallest
     * count at or above the start) */
    uint64_t old = phys_energy_uj_at(&s, PHYS_ZONE_PACKAGE, 0);
    assert_int_equal(old, 262142328852);
    phys_cpu_begin_interval(&p, &s, &l);
    uint64_t prev = old;
    bool wrapped = false;
    for (int i = 0; i < 1000; i++) {
        phys_cpu_step(&p, &s, &l, 20, MS);
        uint64_t v = phys_energy_uj_at(&s, PHYS_ZONE_PACKAGE, 0);
        assert_true(v <= 262143328850);
        if (v < prev)
            wrapped = true;
        prev = v;
    }
    assert_true(wrapped);
    /* (4294950911 + floor(165e9/61035)) mod 2^32 = 2686981 counts → 163999885 µJ */
    uint64_t now = phys_energy_uj_at(&s, PHYS_ZONE_PACKAGE, 0);
    assert_int_equal(now, 163999885);
    /* an agent's correction new - old + range is the emulated 165 J within two counts */
    uint64_t corrected = now + 262143328850 - old;
    assert_true(corrected <= 165000000 && 165000000 - corrected <= 2 * 61);
    assert_int_equal(phys_energy_total_uj(&s, PHYS_ZONE_PACKAGE, 0), 262142328850 + 165000000);

    /* a missing unit is recovered from max_energy_range_uj: round(65712999613·1000/(2^32-1)) */
    p.pkg[0].counter[PHYS_ZONE_DRAM].energy_unit_nj = 0;
    p.pkg[0].counter[PHYS_ZONE_DRAM].max_energy_range_uj = 65712999613;
    phys_cpu_init(&p, &s);
    assert_int_equal(s.pkg[0].energy[PHYS_ZONE_DRAM].unit_nj, 15300);
}

static void test_split_invariance(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state a, b, c;
    struct phys_load l = {.cpu_util = 0.7, .memory_intensity = 0.3, .cpu_class = PHYS_CLASS_MEMORY_BOUND};
    intel_params(&p);
    p.core_fraction = 0.3;
    p.platform_other_w = 3.3;
    phys_cpu_init(&p, &a);
    /* a state in motion: PL1 settling, frequency ramping, temperature moving */
    a.pkg[0].pl_limit_uw[PHYS_PL1] = 70000000;
    SET_PKG(&p, &a, 1, governor, PHYS_GOV_PERFORMANCE);
    phys_cpu_begin_interval(&p, &a, &l);
    phys_cpu_step(&p, &a, &l, 25, 123456); /* off the grid */
    memcpy(&b, &a, sizeof a);
    memcpy(&c, &a, sizeof a);

    phys_cpu_step(&p, &a, &l, 25, SEC);
    for (int i = 0; i < 1000; i++)
        phys_cpu_step(&p, &b, &l, 25, MS);
    assert_memory_equal(&a, &b, sizeof a);

    /* uneven cuts, including pieces shorter than a substep and a zero dt */
    int64_t left = SEC, cut = 1;
    while (left > 0) {
        int64_t d = cut < left ? cut : left;
        phys_cpu_step(&p, &c, &l, 25, d);
        phys_cpu_step(&p, &c, &l, 25, 0);
        left -= d;
        cut = cut * 7 % 3000017 + 1;
    }
    assert_memory_equal(&a, &c, sizeof a);
    assert_int_equal(a.carry_ns, 123456);
    assert_int_equal(a.substeps, 1000);

    /* negative dt changes nothing */
    memcpy(&b, &a, sizeof a);
    phys_cpu_step(&p, &b, &l, 25, -5 * MS);
    assert_memory_equal(&a, &b, sizeof a);
}

static void test_read_between_ticks(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state s, t;
    struct phys_load l = {.cpu_util = 0.8, .memory_intensity = 0, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    intel_params(&p);
    p.core_fraction = 0.45;
    p.platform_other_w = 7.77;
    /* a few ticks off the grid, with PL1 of package 0 settling */
    for (int pass = 0; pass < 2; pass++) {
        phys_cpu_init(&p, &s);
        s.pkg[0].pl_limit_uw[PHYS_PL1] = 60000000;
        phys_cpu_begin_interval(&p, &s, &l);
        for (int i = 0; i < 3; i++)
            tick(&p, &s, &l, 20, SEC + 437 * 1000);
        /* second pass: package 1's counter starts so that it wraps 60 J after publication */
        uint64_t used = phys_energy_total_uj(&s, PHYS_ZONE_PACKAGE, 1);
        p.pkg[1].counter[PHYS_ZONE_PACKAGE].start_uj = (int64_t)(262143328850 - used - 60000000);
    }
    assert_true(s.carry_ns != 0);
    assert_true(s.pkg[1].power_w * 1.5 > 60); /* enough to cross the wrap within the reads */

    for (int z = 0; z < PHYS_NZONES; z++) {
        for (int k = 0; k < 2; k++) {
            struct phys_energy_pub pub;
            phys_energy_publish(&s, (enum phys_zone)z, k, INT64_MAX, &pub);
            uint64_t prev = phys_energy_uj_at(&s, (enum phys_zone)z, k);
            assert_int_equal(phys_energy_pub_uj_at(&pub, s.now_ns), prev);
            bool wrapped = false;
            /* reads at arbitrary times over the next 1.5 s, against a copy stepped there */
            memcpy(&t, &s, sizeof s);
            const int64_t inc = 37 * 1000 + 13;
            for (int64_t dt = 0; dt <= 1500 * MS; dt += inc) {
                if (dt)
                    phys_cpu_step(&p, &t, &l, 20, inc);
                uint64_t want = phys_energy_uj_at(&t, (enum phys_zone)z, k);
                uint64_t got = phys_energy_pub_uj_at(&pub, s.now_ns + dt);
                assert_int_equal(got, want);
                if (got < prev)
                    wrapped = true; /* only the 32-bit register may go back */
                prev = got;
            }
            assert_true(!wrapped || (z == PHYS_ZONE_PACKAGE && k == 1));
            if (z == PHYS_ZONE_PACKAGE && k == 1)
                assert_true(wrapped);
        }
    }

    /* the freeze horizon: reads past until_ns read the value at until_ns */
    struct phys_energy_pub pub;
    phys_energy_publish(&s, PHYS_ZONE_PACKAGE, 0, s.now_ns + 250 * MS, &pub);
    uint64_t at = phys_energy_pub_uj_at(&pub, s.now_ns + 250 * MS);
    assert_int_equal(phys_energy_pub_uj_at(&pub, s.now_ns + 5 * SEC), at);
    assert_true(at > phys_energy_pub_uj_at(&pub, s.now_ns + 100 * MS));
    /* before the grid point: the value at publication */
    assert_int_equal(phys_energy_pub_uj_at(&pub, 0), phys_energy_uj_at(&s, PHYS_ZONE_PACKAGE, 0));
}

/* settling (physics_cpu.h) is true until every frequency, PL1 and HSMP lane is at its fixed
 * point; from there, any number of one-second ticks and one long step give the same bits (what
 * --speed max batches rely on to skip a node's steps: docs/runs.md). Before it, they differ. */
static void test_settled_holds_every_bit(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state s, a, b;
    struct phys_load l = {.cpu_util = 0.6, .memory_intensity = 0.3, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    intel_params(&p);
    phys_cpu_init(&p, &s);
    s.pkg[0].pl_limit_uw[PHYS_PL1] = 90000000; /* PL1 settles over its ~1 s window, freqs ramp */
    phys_cpu_begin_interval(&p, &s, &l);
    tick(&p, &s, &l, 22, SEC);
    assert_true(s.settling);
    memcpy(&a, &s, sizeof s);
    memcpy(&b, &s, sizeof s);
    for (int i = 0; i < 5; i++)
        tick(&p, &a, &l, 22, SEC);
    tick(&p, &b, &l, 22, 5 * SEC);
    /* in motion, a long step holds the first second's power for all five: not the same energy */
    assert_true(phys_energy_total_uj(&a, PHYS_ZONE_PACKAGE, 0) != phys_energy_total_uj(&b, PHYS_ZONE_PACKAGE, 0));
    int n = 1;
    while (s.settling && n < 600)
        tick(&p, &s, &l, 22, SEC), n++;
    assert_false(s.settling);
    memcpy(&a, &s, sizeof s);
    memcpy(&b, &s, sizeof s);
    for (int i = 0; i < 300; i++)
        tick(&p, &a, &l, 22, SEC);
    tick(&p, &b, &l, 22, 300 * SEC);
    assert_false(a.settling);
    assert_memory_equal(&a, &b, sizeof a);
}

/* phys_energy_total_uj_back: the total k substeps before the end of a step is the total of the
 * same state stepped k substeps less, for every zone (carry off the grid included). */
static void test_energy_back(void **st)
{
    struct phys_cpu_params p;
    struct phys_cpu_state a, b;
    struct phys_load l = {.cpu_util = 0.37, .memory_intensity = 0.2, .cpu_class = PHYS_CLASS_MIXED};
    intel_params(&p);
    p.core_fraction = 0.4;
    p.platform_other_w = 5.5;
    phys_cpu_init(&p, &a);
    tick(&p, &a, &l, 20, 7 * SEC + 123457);
    const uint64_t backs[] = {0, 1, 2, 333, 999, 1000};
    for (size_t x = 0; x < sizeof backs / sizeof backs[0]; x++) {
        memcpy(&b, &a, sizeof a);
        phys_cpu_step(&p, &a, &l, 20, SEC);
        phys_cpu_step(&p, &b, &l, 20, SEC - (int64_t)backs[x] * MS);
        for (int z = 0; z < PHYS_NZONES; z++)
            for (int k = 0; k < (z == PHYS_ZONE_PSYS ? 1 : 2); k++)
                assert_int_equal(phys_energy_total_uj_back(&a, (enum phys_zone)z, k, backs[x]),
                                 phys_energy_total_uj(&b, (enum phys_zone)z, k));
        phys_cpu_begin_interval(&p, &a, &l);
    }
}

/* ---- RAPL write arithmetic, from sysfs-abi §3.4 ---- */

static void test_limit_normalise(void **st)
{
    uint64_t v = 77;
    /* raw = floor(uw / 125000) & (2^bits - 1); value = raw·125000 */
    assert_int_equal(phys_rapl_limit_normalise(4096125000ULL, 125000, 15, &v), 0);
    assert_int_equal(v, 125000); /* 32769 & 0x7FFF = 1 */
    assert_int_equal(phys_rapl_limit_normalise(4096000000ULL, 125000, 15, &v), 0);
    assert_int_equal(v, 0); /* 32768 & 0x7FFF = 0: the kernel's example */
    assert_int_equal(phys_rapl_limit_normalise(4095875000ULL, 125000, 15, &v), 0);
    assert_int_equal(v, 4095875000ULL); /* 32767, the largest */
    assert_int_equal(phys_rapl_limit_normalise(165000001, 125000, 15, &v), 0);
    assert_int_equal(v, 165000000);
    assert_int_equal(phys_rapl_limit_normalise(120062500, 125000, 15, &v), 0);
    assert_int_equal(v, 120000000);
    assert_int_equal(phys_rapl_limit_normalise(124999, 125000, 15, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(phys_rapl_limit_normalise(4096125000ULL, 125000, 18, &v), 0);
    assert_int_equal(v, 4096125000ULL); /* TPMI: 32769 fits 18 bits */
    assert_int_equal(phys_rapl_limit_normalise(1024000000, 125000, 13, &v), 0);
    assert_int_equal(v, 0); /* PL4: 8192 & 0x1FFF */
    assert_int_equal(phys_rapl_limit_normalise(12345, 0, 15, &v), 0);
    assert_int_equal(v, 12345);
    v = 77;
    assert_int_equal(phys_rapl_limit_normalise(1, 125000, 0, &v), -EINVAL);
    assert_int_equal(phys_rapl_limit_normalise(1, 125000, 64, &v), -EINVAL);
    assert_int_equal(v, 77);

    assert_int_equal(phys_rapl_default_limit_bits(PHYS_PL1, false), 15);
    assert_int_equal(phys_rapl_default_limit_bits(PHYS_PL2, false), 15);
    assert_int_equal(phys_rapl_default_limit_bits(PHYS_PL1, true), 17);
    assert_int_equal(phys_rapl_default_limit_bits(PHYS_PL4, false), 13);
}

static void test_window_and_range(void **st)
{
    /* 2^Y·(4+F)·976/4 with v = us/976, Y = floor(log2 v), F = floor(4(v - 2^Y)/2^Y) */
    assert_int_equal(phys_rapl_window_normalise(100, 976), 976);
    assert_int_equal(phys_rapl_window_normalise(976, 976), 976);
    assert_int_equal(phys_rapl_window_normalise(2500, 976), 1952);
    /* the PL2 default 2440 is raw (1,1), but a write of 2440 gives v = 2, so (1,0) */
    assert_int_equal(phys_rapl_window_normalise(2440, 976), 1952);
    assert_int_equal(phys_rapl_window_normalise(2928, 976), 2928); /* v = 3: (1,2) → 2·6·976/4 */
    assert_int_equal(phys_rapl_window_normalise(3904, 976), 3904); /* v = 4: (2,0) */
    assert_int_equal(phys_rapl_window_normalise(1000000, 976), 999424);
    assert_int_equal(phys_rapl_window_normalise(8000000, 976), 7995392);
    assert_int_equal(phys_rapl_window_normalise(28000000, 976), 27983872);
    assert_int_equal(phys_rapl_window_normalise(64000000, 976), 63963136);
    assert_int_equal(phys_rapl_window_normalise(12345, 0), 12345);
    /* Y > 31 → raw 0x7F: 2^31·7·976/4 */
    assert_int_equal(phys_rapl_window_normalise(INT64_MAX, 976), 3667902070784LL);

    /* floor((2^32 - 1)·unit/1000) */
    assert_int_equal(phys_rapl_max_energy_range_uj(61035), 262143328850ULL);
    assert_int_equal(phys_rapl_max_energy_range_uj(15300), 65712999613ULL);
    assert_int_equal(phys_rapl_max_energy_range_uj(15258), 65532610987ULL);
    assert_int_equal(phys_rapl_max_energy_range_uj(30517), 131069516941ULL);
    assert_int_equal(phys_rapl_max_energy_range_uj(1000000000), 4294967295000000ULL);
}

/* ---- per-CPU frequency (issue 14) ---- */

/* intel_params at full load, performance, no caps in the way (PL1/PL2 far above): throttling k
 * of a package's 48 CPUs to cpuinfo_min lowers its power by k/48 of the difference between the
 * model at full and at minimum frequency (the package power is the CPU-weighted sum), and the
 * other package does not move. Expected: analytic c.2 with u = 1, a = 1 (memory 0):
 * P(f) = 40 + 125·f^1.35; f = 1 at 3.9 GHz, f = 1/3.9 at 1.0 GHz. */
static void test_per_cpu_throttle_proportional(void **st)
{
    (void)st;
    struct phys_cpu_params p;
    struct phys_cpu_state s;
    intel_params(&p);
    p.governor = PHYS_GOV_PERFORMANCE;
    p.freq_ramp_ms = 0;
    for (int k = 0; k < 2; k++) {
        p.pkg[k].pl[PHYS_PL1].limit_uw = p.pkg[k].pl[PHYS_PL1].max_power_uw = 400000000;
        p.pkg[k].pl[PHYS_PL2].limit_uw = 400000000;
    }
    struct phys_load l = {.cpu_util = 1, .cpu_class = PHYS_CLASS_MIXED};
    phys_cpu_init(&p, &s);
    run_ticks(&p, &s, &l, 20, 2);
    const double full = 40 + 125.0, low = 40 + 125 * 0.15924389093632027; /* (1/3.9)^1.35 */
    assert_near(s.pkg[0].power_w, full, 1e-9);
    /* one CPU of package 0 (CPU index 0: the contiguous split puts 0..47 on package 0) */
    s.cpu[0].scaling_max_khz = 1000000;
    run_ticks(&p, &s, &l, 20, 1);
    assert_near(s.pkg[0].power_w, full - (full - low) / 48, 1e-9);
    assert_near(s.pkg[1].power_w, full, 1e-9);
    assert_int_equal(phys_cpu_cpu_freq_khz(&p, &s, 0), 1000000);
    assert_int_equal(phys_cpu_cpu_freq_khz(&p, &s, 1), 3900000);
    /* all of package 0 */
    SET_PKG(&p, &s, 0, scaling_max_khz, 1000000);
    run_ticks(&p, &s, &l, 20, 1);
    assert_near(s.pkg[0].power_w, low, 1e-9);
    assert_near(s.pkg[1].power_w, full, 1e-9);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 0), 1000000);
    assert_int_equal(phys_cpu_cur_freq_khz(&p, &s, 1), 3900000);
}

/* The same writes in two orders give the same bytes: each CPU keeps its own limits. */
static void test_per_cpu_write_order(void **st)
{
    (void)st;
    struct phys_cpu_params p;
    intel_params(&p);
    struct phys_load l = {.cpu_util = 0.7, .memory_intensity = 0.2, .cpu_class = PHYS_CLASS_MIXED};
    static struct phys_cpu_state a, b;
    phys_cpu_init(&p, &a);
    phys_cpu_init(&p, &b);
    for (int i = 0; i < 30; i++)
        a.cpu[i].scaling_max_khz = 1500000;
    a.cpu[60].scaling_max_khz = 3900000;
    for (int i = 29; i >= 0; i--)
        b.cpu[i].scaling_max_khz = 1500000;
    b.cpu[60].scaling_max_khz = 3900000;
    run_ticks(&p, &a, &l, 20, 3);
    run_ticks(&p, &b, &l, 20, 3);
    assert_memory_equal(&a, &b, sizeof a);
    assert_true(a.pkg[0].power_w < a.pkg[1].power_w);
}

/* CPU time: busy ns is utilisation × elapsed exactly, per CPU; a change of utilisation starts a
 * new line without moving what was accumulated; load averages follow calc_load (kernel). */
static void test_cpu_time_and_loadavg(void **st)
{
    (void)st;
    struct phys_cpu_params p;
    static struct phys_cpu_state s;
    intel_params(&p);
    static struct phys_load l;
    memset(&l, 0, sizeof l);
    l.cpu_util = 0.25;
    l.ncpu_util = 2;
    l.cpu_util_of[0] = 1.0f;
    l.cpu_util_of[1] = 0.5f;
    phys_cpu_init(&p, &s);
    phys_cpu_begin_interval(&p, &s, &l);
    run_ticks(&p, &s, &l, 20, 10);
    assert_int_equal(phys_cpu_busy_ns(&s, 0, s.substeps), 10 * SEC);
    assert_int_equal(phys_cpu_busy_ns(&s, 1, s.substeps), 5 * SEC);
    assert_int_equal(phys_cpu_busy_ns(&s, 2, s.substeps), 10 * SEC / 4);
    /* running tasks: 1 + 0.5 + 94 × 0.25 = 25 → after the two 5 s samples from 0:
     * calc_load(0, 1884, 25·2048) = (51200·164 + 2047)/2048 = 4100, then
     * (4100·1884 + 51200·164 + 2047)/2048 = 7872 (EXP_1; 11-bit fixed point) */
    assert_int_equal(s.nr_active, 25);
    assert_int_equal(s.avenrun[0], 7872);
    l.cpu_util_of[0] = 0;
    phys_cpu_begin_interval(&p, &s, &l);
    run_ticks(&p, &s, &l, 20, 5);
    assert_int_equal(phys_cpu_busy_ns(&s, 0, s.substeps), 10 * SEC);
    assert_int_equal(s.nr_active, 24);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_analytic_formula),
        cmocka_unit_test(test_curve_epyc_9654),
        cmocka_unit_test(test_governor_performance_vs_powersave),
        cmocka_unit_test(test_scaling_max_clamp),
        cmocka_unit_test(test_pl1_settles_to_limit),
        cmocka_unit_test(test_pl2_instant_ceiling_and_floor),
        cmocka_unit_test(test_hsmp_cap),
        cmocka_unit_test(test_temperature),
        cmocka_unit_test(test_temperature_closed_form),
        cmocka_unit_test(test_energy_exact_and_monotone),
        cmocka_unit_test(test_energy_wrap),
        cmocka_unit_test(test_split_invariance),
        cmocka_unit_test(test_read_between_ticks),
        cmocka_unit_test(test_settled_holds_every_bit),
        cmocka_unit_test(test_energy_back),
        cmocka_unit_test(test_limit_normalise),
        cmocka_unit_test(test_window_and_range),
        cmocka_unit_test(test_per_cpu_throttle_proportional),
        cmocka_unit_test(test_per_cpu_write_order),
        cmocka_unit_test(test_cpu_time_and_loadavg),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
