/* Unit tests of the part-to-part spread (params_spread in engine/render/params.c, power_scale in
 * engine/physics): the same node name gives the same factors, two names different ones; each
 * factor within 1 ± PARAMS_SPREAD and their deviations summing to zero over a node's packages
 * and over its GPUs; a package's power is its factor times the model's (uncapped, so the node's
 * total at equal loads is unchanged), a capped one still holds its cap, and a GPU's idle and
 * uncapped power follow its factor while a cap holds at the cap. Expected values are the
 * analytic model's own numbers (idle 40 W, max 165 W at full load, as test_physics_cpu.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "params.h"

static void assert_near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.17g, want %.17g (tolerance %g)", got, want, tol);
}

static void cpu_params(struct phys_cpu_params *p, int sockets)
{
    memset(p, 0, sizeof *p);
    p->sockets = sockets;
    p->cpus = 24 * sockets;
    p->model = PHYS_MODEL_ANALYTIC;
    p->idle_pkg_w = 40;
    p->max_pkg_w = 165;
    p->alpha_util = 1.15;
    p->beta_freq = 1.35;
    p->knee = 0.7;
    p->ambient_init_c = 20;
    p->driver = PHYS_DRV_INTEL_PSTATE;
    p->governor = PHYS_GOV_PERFORMANCE;
    p->boost = 1;
    p->cpuinfo_min_khz = 1000000;
    p->cpuinfo_max_khz = 3900000;
    p->base_khz = 2400000;
    for (int k = 0; k < sockets; k++)
        p->pkg[k].counter[PHYS_ZONE_PACKAGE].energy_unit_nj = 61035;
}

static void test_factors(void **st)
{
    (void)st;
    struct phys_cpu_params a, b, c;
    struct phys_gpu_params ga = {.vendor = PHYS_GPU_NVIDIA, .count = 8}, gb = ga, gc = ga;
    cpu_params(&a, 2);
    cpu_params(&b, 2);
    cpu_params(&c, 4);
    params_spread("clx-0", &a, &ga);
    params_spread("clx-0", &b, &gb);
    assert_memory_equal(&a, &b, sizeof a); /* deterministic */
    assert_memory_equal(&ga, &gb, sizeof ga);
    params_spread("clx-1", &c, &gc);
    assert_true(a.pkg[0].power_scale != 1 && a.pkg[0].power_scale != a.pkg[1].power_scale);
    assert_true(ga.power_scale[0] != gc.power_scale[0]); /* another node, other figures */
    double sum = 0;
    for (int k = 0; k < 2; k++) {
        assert_true(fabs(a.pkg[k].power_scale - 1) <= PARAMS_SPREAD);
        sum += a.pkg[k].power_scale - 1;
    }
    assert_near(sum, 0, 1e-15);
    sum = 0;
    for (int k = 0; k < 4; k++)
        sum += c.pkg[k].power_scale - 1;
    assert_near(sum, 0, 1e-15);
    sum = 0;
    for (int i = 0; i < 8; i++) {
        assert_true(fabs(ga.power_scale[i] - 1) <= PARAMS_SPREAD);
        sum += ga.power_scale[i] - 1;
    }
    assert_near(sum, 0, 1e-14);
    /* one package, one GPU: nothing to spread */
    struct phys_cpu_params one;
    struct phys_gpu_params g1 = {.vendor = PHYS_GPU_AMD, .count = 1};
    cpu_params(&one, 1);
    params_spread("vm-0", &one, &g1);
    assert_true(one.pkg[0].power_scale == 0 && g1.power_scale[0] == 0);
}

static void test_package_power(void **st)
{
    (void)st;
    struct phys_cpu_params p;
    struct phys_gpu_params g = {.vendor = PHYS_GPU_NONE};
    struct phys_cpu_state s;
    cpu_params(&p, 2);
    params_spread("genoa-0", &p, &g);
    struct phys_load full = {.cpu_util = 1, .cpu_class = PHYS_CLASS_COMPUTE_BOUND};
    phys_cpu_init(&p, &s);
    phys_cpu_begin_interval(&p, &s, &full);
    assert_near(s.pkg[0].power_w, 165 * p.pkg[0].power_scale, 1e-9);
    assert_near(s.pkg[1].power_w, 165 * p.pkg[1].power_scale, 1e-9);
    assert_near(s.pkg[0].power_w + s.pkg[1].power_w, 330, 1e-9); /* the node's total */
    /* a PL2 cap of 120 W (instant ceiling) holds on both packages, whichever factor */
    for (int k = 0; k < 2; k++) {
        p.pkg[k].rapl_present = 1;
        p.pkg[k].rapl_enabled = 1;
        p.pkg[k].pl[PHYS_PL2] = (struct phys_constraint){.present = 1, .limit_uw = 120000000,
                                                          .max_power_uw = 413000000, .time_window_us = 976};
    }
    phys_cpu_init(&p, &s);
    phys_cpu_begin_interval(&p, &s, &full);
    for (int k = 0; k < 2; k++) {
        assert_true(s.pkg[k].capped);
        assert_near(s.pkg[k].power_w, 120, 1e-9);
    }
    /* the leakier package reaches the cap at a lower frequency */
    int hi = p.pkg[0].power_scale > p.pkg[1].power_scale ? 0 : 1;
    assert_true(phys_cpu_cur_freq_khz(&p, &s, hi) < phys_cpu_cur_freq_khz(&p, &s, 1 - hi));
}

static void test_gpu_power(void **st)
{
    (void)st;
    struct phys_cpu_params p;
    cpu_params(&p, 1);
    struct phys_gpu_params g = {.vendor = PHYS_GPU_NVIDIA, .count = 2, .idle_w = 70, .natural_max_w = 700,
                                .min_w = 200, .max_w = 700, .default_w = 700, .start_w = 700,
                                .tau_ns = 1000000, .window_ns = 1000000000, .gfx_min = 345, .gfx_max = 1980,
                                .gfx_idle = 345, .ambient_init_c = 25};
    params_spread("sxm-0", &p, &g);
    struct phys_gpu_state s;
    phys_gpu_init(&g, &s);
    for (int i = 0; i < 2; i++)
        assert_near(s.g[i].power_w, 70 * g.power_scale[i], 1e-6);
    struct phys_gpu_load idle = {.util = 0};
    phys_gpu_begin_interval(&g, &s, &idle, 1000000000);
    for (int i = 0; i < 2; i++)
        assert_near(s.g[i].power_w, 70 * g.power_scale[i], 1e-6);
    assert_near(s.g[0].power_w + s.g[1].power_w, 140, 1e-5);
    /* capped at 300 W, both hold the cap */
    for (int i = 0; i < 2; i++)
        s.g[i].enforced_w = s.g[i].target_w = s.g[i].limit_w = 300;
    struct phys_gpu_load full = {.util = 1};
    phys_gpu_begin_interval(&g, &s, &full, 1000000000);
    for (int i = 0; i < 2; i++)
        assert_near(s.g[i].power_w, 300, 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factors),
        cmocka_unit_test(test_package_power),
        cmocka_unit_test(test_gpu_power),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
