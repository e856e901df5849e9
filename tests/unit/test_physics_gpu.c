/* Unit tests of engine/physics/physics_gpu.c: natural power (upstream c.7), the limit's
 * settling, held power and exact energy on the 1 ms grid, the NVML boxcar (c.8), clock locks
 * under smMaxByMem, and peer transfers sharing a receiver's link. Expected numbers are computed
 * by hand from the formulas (derivations next to each), never taken from the module. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "physics_gpu.h"

#define MS 1000000LL
#define SEC 1000000000LL

static void assert_near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.17g, want %.17g (tolerance %g)", got, want, tol);
}

/* nvidia-h100-sxm-8gpu: idle 69.6 W, natural maximum 700 W, limits 200-700 W, starting at 400 W,
 * tau 150 ms, NVML window 1 s; graphics 210-1980 MHz in 15 MHz steps, memory 2619 MHz. */
static void sxm(struct phys_gpu_params *p)
{
    memset(p, 0, sizeof *p);
    p->vendor = PHYS_GPU_NVIDIA;
    p->count = 8;
    p->idle_w = 69.6;
    p->natural_max_w = 700;
    p->min_w = 200;
    p->max_w = 700;
    p->default_w = 700;
    p->start_w = 400;
    p->tau_ns = 150 * MS;
    p->window_ns = SEC;
    p->gfx_min = 210;
    p->gfx_max = 1980;
    p->gfx_step = 15;
    p->gfx_idle = 345;
    p->mem_clk[0] = 2619;
    p->nmem = 1;
    p->mem_idle = 2619;
    p->persistence = true;
}

static void test_natural(void **st)
{
    struct phys_gpu_params p;
    sxm(&p);
    /* c.7, the "else" class at m = 0: wc 0.7, wm 0.3; D = 630.4;
     * 0.7 * (69.6 + 630.4) + 0.3 * (69.6 + 630.4 * 0.65) = 490 + 143.808 = 633.808 (the c.7 figure) */
    struct phys_gpu_load l = {.util = 1, .cls = PHYS_GPU_CLASS_OTHER};
    assert_near(phys_gpu_natural_w(&p, &l, 1), 633.808, 1e-9);
    assert_near(phys_gpu_natural_w(&p, &l, 0), 69.6, 1e-12);
    /* compute bound, m = 0.2: wc = 0.6*0.8 + 0.4*0.8 = 0.8, wm = 0.6*0.2 + 0.4*0.2 = 0.2 (sum 1);
     * 0.8 * 700 + 0.2 * (69.6 + 409.76) = 560 + 95.872 = 655.872 */
    l = (struct phys_gpu_load){.util = 1, .memory_intensity = 0.2, .cls = PHYS_GPU_CLASS_COMPUTE};
    assert_near(phys_gpu_natural_w(&p, &l, 1), 655.872, 1e-9);
}

static void test_settle_and_energy(void **st)
{
    struct phys_gpu_params p;
    sxm(&p);
    struct phys_gpu_state s;
    phys_gpu_init(&p, &s);
    struct phys_gpu_load l = {.util = 1, .memory_intensity = 0.2, .cls = PHYS_GPU_CLASS_COMPUTE};
    phys_gpu_begin_interval(&p, &s, &l, SEC);
    assert_near(s.g[0].power_w, 400, 1e-6); /* capped at the 400 W in force */
    assert_true(s.g[0].capped);
    phys_gpu_step(&p, &s, 20, SEC);
    assert_int_equal(s.g[0].acc_uj, 400000000); /* 1000 substeps of 400 W */
    /* the agent writes 300 W: the interval's held power is the mean of 300 + 100 exp(-t/0.15 s)
     * over 1 s = 300 + 100 * 0.15 * (1 - exp(-6.667)) = 314.98 W (16-slice midpoint: -0.11 W) */
    s.g[0].limit_w = 300;
    phys_gpu_begin_interval(&p, &s, &l, SEC);
    assert_near(s.g[0].power_w, 314.98, 0.2);
    assert_near(s.g[0].instant_w, 400, 1e-9); /* at the tick, the old limit still holds */
    uint64_t before = s.g[0].acc_uj, held = s.g[0].power_uw;
    phys_gpu_step(&p, &s, 20, 2 * SEC);
    assert_int_equal(s.g[0].acc_uj - before, held * 1000 / 1000); /* exactly the held power on the grid */
    /* 100 exp(-1 / 0.15) = 0.127 W from the target: within 0.5 W the limit is reached */
    assert_near(s.g[0].enforced_w, 300, 0);
    phys_gpu_begin_interval(&p, &s, &l, SEC);
    assert_near(s.g[0].power_w, 300, 1e-6);
    assert_near(s.g[0].instant_w, 300, 1e-9);
    /* under the limit the clock drops: f = 1980 * sqrt((300.13 - 69.6) / (655.872 - 69.6)) ~ 1241,
     * down to the 15 MHz grid from 210: 1230 */
    assert_in_range(s.g[0].gfx_mhz, 1215, 1245);
    assert_int_equal((s.g[0].gfx_mhz - 210) % 15, 0);
}

/* phys_gpu_total_uj_back: the total k grid boundaries before the end of a step is the total of
 * the same state stepped k boundaries less (the held power is exact nanojoules per boundary). */
static void test_energy_back(void **st)
{
    struct phys_gpu_params p;
    sxm(&p);
    struct phys_gpu_state a, b;
    phys_gpu_init(&p, &a);
    struct phys_gpu_load l = {.util = 0.63, .memory_intensity = 0.4, .cls = PHYS_GPU_CLASS_MEMORY};
    a.g[1].limit_w = 333; /* GPU 1 settling toward its limit */
    phys_gpu_begin_interval(&p, &a, &l, SEC);
    int64_t t = 3 * SEC + 777777; /* off the grid */
    phys_gpu_step(&p, &a, 20, t);
    phys_gpu_begin_interval(&p, &a, &l, SEC);
    const uint64_t backs[] = {0, 1, 500, 999, 1000};
    for (size_t x = 0; x < sizeof backs / sizeof backs[0]; x++) {
        memcpy(&b, &a, sizeof a);
        t += SEC;
        phys_gpu_step(&p, &a, 20, t);
        phys_gpu_step(&p, &b, 20, t - (int64_t)backs[x] * 1000000);
        for (int g = 0; g < p.count; g++)
            assert_int_equal(phys_gpu_total_uj_back(&a, g, backs[x]), phys_gpu_total_uj(&b, g));
        phys_gpu_begin_interval(&p, &a, &l, SEC);
    }
}

static void test_boxcar(void **st)
{
    struct phys_gpu_params p;
    sxm(&p);
    p.tau_ns = 0;
    struct phys_gpu_state s;
    phys_gpu_init(&p, &s);
    struct phys_gpu_load l = {.util = 1, .memory_intensity = 0.2, .cls = PHYS_GPU_CLASS_COMPUTE};
    /* 200 ms ticks at 400 W after an idle history: the 1 s mean after one tick is
     * 0.8 * 69.6 + 0.2 * 400 = 135.68 W, after five ticks 400 W */
    for (int k = 1; k <= 5; k++) {
        phys_gpu_begin_interval(&p, &s, &l, 200 * MS);
        phys_gpu_step(&p, &s, 20, k * 200 * MS);
        if (k == 1)
            assert_near(s.g[0].draw_w, 135.68, 0.01);
    }
    assert_near(s.g[0].draw_w, 400, 0.01);
}

static void test_smmax_by_mem(void **st)
{
    /* an L40S-like table: memory 9001/5001/810/405 MHz, graphics up to 2520, but at most 1500
     * under 810 MHz and 645 under 405 MHz */
    struct phys_gpu_params p;
    sxm(&p);
    p.gfx_max = 2520;
    p.nmem = 4;
    int mem[] = {9001, 5001, 810, 405}, ceil[] = {0, 0, 1500, 645};
    memcpy(p.mem_clk, mem, sizeof mem);
    memcpy(p.mem_ceiling, ceil, sizeof ceil);
    p.max_w = p.default_w = p.start_w = p.natural_max_w = 350;
    p.idle_w = 36.3;
    struct phys_gpu_state s;
    phys_gpu_init(&p, &s);
    assert_int_equal(phys_gpu_gfx_ceiling(&p, 810), 1500);
    assert_int_equal(phys_gpu_gfx_ceiling(&p, 9001), 2520);
    struct phys_gpu_load l = {.util = 1, .cls = PHYS_GPU_CLASS_OTHER};
    phys_gpu_begin_interval(&p, &s, &l, SEC);
    double full = s.g[0].power_w;
    s.g[0].lock_mem_max = 810;
    phys_gpu_begin_interval(&p, &s, &l, SEC);
    assert_int_equal(s.g[0].gfx_mhz, 1500);
    assert_int_equal(s.g[0].mem_mhz, 810);
    /* dynamic power scales with (1500/2520)^2 */
    double natural = phys_gpu_natural_w(&p, &l, 1);
    assert_near(s.g[0].power_w, 36.3 + (natural - 36.3) * (1500.0 / 2520) * (1500.0 / 2520), 1e-5);
    assert_true(s.g[0].power_w < full);
    s.g[0].lock_mem_max = 600; /* between supported clocks: the one below, 405 */
    phys_gpu_begin_interval(&p, &s, &l, SEC);
    assert_int_equal(s.g[0].mem_mhz, 405);
    assert_int_equal(s.g[0].gfx_mhz, 645);
}

static void test_transfers(void **st)
{
    struct phys_gpu_params p;
    sxm(&p);
    p.peer_link_gbps = 450;
    struct phys_gpu_state s;
    phys_gpu_init(&p, &s);
    /* GPUs 0 and 2 each send 500 GB/s to GPU 1, whose link takes 450: 225 each; 3 -> 4 at 100 */
    struct phys_gpu_load l = {.util = 1, .nxfer = 3,
                              .xfer = {{0, 1, 500}, {2, 1, 500}, {3, 4, 100}}};
    phys_gpu_begin_interval(&p, &s, &l, SEC);
    phys_gpu_step(&p, &s, 20, 2 * SEC);
    assert_near(s.g[1].rx_bytes, 450e9 * 2, 1);
    assert_near(s.g[0].tx_bytes, 225e9 * 2, 1);
    assert_near(s.g[2].tx_bytes, 225e9 * 2, 1);
    assert_near(s.g[4].rx_bytes, 100e9 * 2, 1);
    assert_near(s.g[1].tx_bytes, 0, 0);
    /* the receiver gate: GPU 1 idles at 345 of 1980 MHz... under load it runs at its capped clock */
    p.receiver_gate = true;
    phys_gpu_begin_interval(&p, &s, &l, SEC);
    assert_near(s.g[1].rx_gbps, 450.0 * s.g[1].gfx_mhz / 1980, 1e-9);
}

static void test_intel_limit_off(void **st)
{
    struct phys_gpu_params p;
    memset(&p, 0, sizeof p);
    p.vendor = PHYS_GPU_INTEL;
    p.count = 1;
    p.idle_w = 30;
    p.natural_max_w = 150;
    p.min_w = 40;
    p.max_w = p.default_w = p.start_w = 150;
    p.window_ns = SEC;
    struct phys_gpu_state s;
    phys_gpu_init(&p, &s);
    struct phys_gpu_load l = {.util = 1, .cls = PHYS_GPU_CLASS_OTHER};
    s.g[0].limit_w = 10; /* below the floor: the hardware holds 40 W */
    phys_gpu_begin_interval(&p, &s, &l, SEC);
    assert_near(s.g[0].power_w, 40, 1e-6);
    s.g[0].limit_w = 0; /* off: the natural power */
    phys_gpu_begin_interval(&p, &s, &l, SEC);
    assert_near(s.g[0].power_w, phys_gpu_natural_w(&p, &l, 1), 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_natural),     cmocka_unit_test(test_settle_and_energy),
        cmocka_unit_test(test_energy_back),  cmocka_unit_test(test_boxcar),      cmocka_unit_test(test_smmax_by_mem),
        cmocka_unit_test(test_transfers),   cmocka_unit_test(test_intel_limit_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
