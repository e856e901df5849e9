/* Unit tests of segment.h "Turbo": a policy's cpuinfo_max_freq follows the turbo switch and its
 * scaling_max_freq / scaling_min_freq show no more than the maximum the moment a writer moves the
 * switch (no engine tick in between: nothing here has one). Expected values: intel_pstate with
 * no_turbo shows the base frequency as cpuinfo_max_freq (intel_pstate_update_limits_for_all,
 * sysfs-abi §5.3) and its verify clamps policy->max into it while the frequency QoS request stays
 * (cpufreq_set_policy, sysfs-abi §4.2); amd-pstate's boost off shows the nominal frequency
 * (amd_pstate_set_boost, sysfs-abi §6.2). The numbers are intel-xeon-2s-rapl's (3.9 GHz turbo, 2.4
 * GHz base, 1.0 GHz minimum) and amd-epyc-2s-hsmp's (4.5 GHz boost, 2.6 GHz base, 1.5 GHz). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "seg_attr.h"
#include "seg_build.h"
#include "seg_tmp.h"

static char path[256];
static struct seg seg;

/* One policy's cpuinfo_max_freq, scaling_max_freq and scaling_min_freq under dir, following switch
 * sw (c = 1: it holds no_turbo). */
static void policy(struct seg_builder *b, const char *dir, uint32_t sw, int64_t c, int64_t lo, int64_t hi,
                   int64_t base)
{
    char p[256], t[32];
    snprintf(t, sizeof t, "%lld\n", (long long)hi);
    snprintf(p, sizeof p, "%s/cpuinfo_max_freq", dir);
    uint32_t cmax = segb_dynamic(b, p, 0444, SEG_S, segb_value_text(b, t), SV_NONE,
                                 segb_param(b, (struct seg_param){.a = hi, .b = base, .c = c, .related = sw}, NULL));
    segb_flag(b, cmax, SEG_F_TURBO);
    snprintf(p, sizeof p, "%s/scaling_max_freq", dir);
    uint32_t mx = segb_dynamic(b, p, 0644, SEG_A, segb_value_text(b, t), SV_FREQ_MAX,
                               segb_param(b, (struct seg_param){.a = lo, .b = hi, .related = cmax}, NULL));
    segb_flag(b, mx, SEG_F_CEIL);
    snprintf(t, sizeof t, "%lld\n", (long long)lo);
    snprintf(p, sizeof p, "%s/scaling_min_freq", dir);
    uint32_t mn = segb_dynamic(b, p, 0644, SEG_A, segb_value_text(b, t), SV_FREQ_MIN,
                               segb_param(b, (struct seg_param){.a = lo, .b = hi, .related = mx}, NULL));
    segb_flag(b, mn, SEG_F_CEIL);
}

static int setup(void **st)
{
    seg_tmp_path(path, sizeof path, "turbo.seg");
    struct seg_builder *b = segb_new();
    uint32_t nt = segb_dynamic(b, "intel/no_turbo", 0644, SEG_A, segb_value_text(b, "0\n"), SV_UINT_CLAMP01, SEG_NONE);
    policy(b, "intel/policy0", nt, 1, 1000000, 3900000, 2400000);
    policy(b, "intel/policy1", nt, 1, 1000000, 3900000, 2400000);
    uint32_t boost = segb_dynamic(b, "amd/boost", 0644, SEG_A, segb_value_text(b, "1\n"), SV_BOOL01, SEG_NONE);
    policy(b, "amd/policy0", boost, 0, 1500000, 4500000, 2600000);
    /* two ceilings that name each other (a damaged static file could): a read stops after
     * SEG_CEIL_HOPS, it never loops. Builder ids are handed out in order: the two files after
     * their directory. */
    uint32_t dir = segb_dir(b, "loop", 0755);
    uint32_t x = segb_dynamic(b, "loop/x", 0644, SEG_A, segb_value_text(b, "5\n"), SV_FREQ_MAX,
                              segb_param(b, (struct seg_param){.a = 1, .b = 9, .related = dir + 2}, NULL));
    uint32_t y = segb_dynamic(b, "loop/y", 0644, SEG_A, segb_value_text(b, "7\n"), SV_FREQ_MAX,
                              segb_param(b, (struct seg_param){.a = 1, .b = 9, .related = dir + 1}, NULL));
    if (x != dir + 1 || y != dir + 2)
        return -1;
    segb_flag(b, x, SEG_F_CEIL);
    segb_flag(b, y, SEG_F_CEIL);
    char err[256];
    int rc = segb_write(b, path, "n", "p", 0, 1000000000, &seg, err, sizeof err);
    segb_free(b);
    return rc;
}

static int teardown(void **st)
{
    seg_close(&seg);
    seg_tmp_clean();
    return 0;
}

static uint32_t entry(const char *p)
{
    uint32_t e = seg_lookup(&seg, p, strlen(p));
    assert_int_not_equal(e, SEG_NONE);
    return e;
}

/* What a reader sees now, without the newline. */
static const char *rd(const char *p)
{
    static char out[SEG_TEXT_MAX + 1];
    char tmp[SEG_TEXT_MAX];
    size_t n;
    const char *t = seg_read(&seg, entry(p), 0, tmp, &n);
    assert_non_null(t);
    memcpy(out, t, n);
    out[n && out[n - 1] == '\n' ? n - 1 : n] = 0;
    return out;
}

/* A write as the shim makes it (seg_attr_write): 0 or the errno. */
static int wr(const char *p, const char *text)
{
    return seg_attr_write(&seg, entry(p), text, strlen(text), 1);
}

static void test_no_turbo_at_the_write(void **st)
{
    assert_string_equal(rd("intel/policy0/cpuinfo_max_freq"), "3900000");
    assert_string_equal(rd("intel/policy0/scaling_max_freq"), "3900000");
    assert_int_equal(wr("intel/no_turbo", "1\n"), 0);
    for (int p = 0; p < 2; p++) { /* every policy, at once */
        char d[64];
        snprintf(d, sizeof d, "intel/policy%d/cpuinfo_max_freq", p);
        assert_string_equal(rd(d), "2400000");
        snprintf(d, sizeof d, "intel/policy%d/scaling_max_freq", p);
        assert_string_equal(rd(d), "2400000");
    }
    assert_string_equal(rd("intel/policy0/scaling_min_freq"), "1000000");
    /* a request above the base while turbo is off shows the base and is kept */
    assert_int_equal(wr("intel/policy0/scaling_max_freq", "3000000"), 0);
    assert_string_equal(rd("intel/policy0/scaling_max_freq"), "2400000");
    char tmp[SEG_TEXT_MAX];
    size_t n;
    const char *t = seg_read_stored(&seg, entry("intel/policy0/scaling_max_freq"), 0, tmp, &n);
    assert_true(t && n == 8 && !memcmp(t, "3000000\n", 8));
    assert_int_equal(wr("intel/policy1/scaling_min_freq", "3500000"), 0);
    assert_string_equal(rd("intel/policy1/scaling_min_freq"), "2400000");
    /* turbo back on: the maximum, and the request, show again */
    assert_int_equal(wr("intel/no_turbo", "0"), 0);
    assert_string_equal(rd("intel/policy0/cpuinfo_max_freq"), "3900000");
    assert_string_equal(rd("intel/policy0/scaling_max_freq"), "3000000");
    assert_string_equal(rd("intel/policy1/scaling_max_freq"), "3900000");
    /* no_turbo takes any number, clamped to 1 (sysfs-abi §5.1): 5 turns turbo off */
    assert_int_equal(wr("intel/no_turbo", "5"), 0);
    assert_string_equal(rd("intel/policy1/cpuinfo_max_freq"), "2400000");
    assert_int_equal(wr("intel/no_turbo", "0"), 0);
}

static void test_amd_boost_at_the_write(void **st)
{
    assert_string_equal(rd("amd/policy0/cpuinfo_max_freq"), "4500000");
    assert_int_equal(wr("amd/boost", "0"), 0);
    assert_string_equal(rd("amd/policy0/cpuinfo_max_freq"), "2600000");
    assert_string_equal(rd("amd/policy0/scaling_max_freq"), "2600000");
    assert_string_equal(rd("amd/policy0/scaling_min_freq"), "1500000");
    assert_int_equal(wr("amd/boost", "on"), 0); /* kstrtobool */
    assert_string_equal(rd("amd/policy0/cpuinfo_max_freq"), "4500000");
    assert_string_equal(rd("amd/policy0/scaling_max_freq"), "4500000");
}

static void test_ceiling_loop_ends(void **st)
{
    assert_string_equal(rd("loop/x"), "5");
    assert_string_equal(rd("loop/y"), "5");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_turbo_at_the_write),
        cmocka_unit_test(test_amd_boost_at_the_write),
        cmocka_unit_test(test_ceiling_loop_ends),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
