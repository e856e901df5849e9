/* Unit tests of engine/segment/seg_attr.c: each writable attribute refuses and normalises writes as
 * the kernel does (expected values from the kernel's formulas in sysfs §1.4-§6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seg_attr.h"
#include "seg_build.h"
#include "seg_tmp.h"

static char path[256];
static struct seg seg;

static int setup(void **st)
{
    seg_tmp_path(path, sizeof path, "attr.seg");
    struct seg_builder *b = segb_new();
    const char *z = "sys/devices/virtual/powercap/intel-rapl/intel-rapl:0/";
    char p[256];
#define F(name) (snprintf(p, sizeof p, "%s%s", z, name), p)
    uint32_t gov = segb_dynamic(b, "sys/devices/system/cpu/cpufreq/policy0/scaling_governor", 0644, SEG_A,
                                segb_value_text(b, "powersave\n"), SV_GOVERNOR,
                                segb_param(b, (struct seg_param){.related = SEG_NONE}, "performance powersave"));
    uint32_t mx = segb_dynamic(b, "sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq", 0644, SEG_A,
                               segb_value_text(b, "3900000\n"), SV_FREQ_MAX,
                               segb_param(b, (struct seg_param){.a = 1000000, .b = 3900000, .related = SEG_NONE}, NULL));
    segb_dynamic(b, "sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq", 0644, SEG_A,
                 segb_value_text(b, "1000000\n"), SV_FREQ_MIN,
                 segb_param(b, (struct seg_param){.a = 1000000, .b = 3900000, .related = mx}, NULL));
    segb_dynamic(b, "sys/devices/system/cpu/cpufreq/policy0/energy_performance_preference", 0644, SEG_A,
                 segb_value_text(b, "balance_performance\n"), SV_EPP,
                 segb_param(b, (struct seg_param){.c = 1, .d = 1, .related = gov},
                            "default performance balance_performance balance_power power"));
    segb_dynamic(b, F("constraint_0_power_limit_uw"), 0644, SEG_A, segb_value_text(b, "165000000\n"), SV_RAPL_LIMIT,
                 segb_param(b, (struct seg_param){.a = 125000, .b = 15, .related = SEG_NONE}, NULL));
    segb_dynamic(b, F("constraint_0_time_window_us"), 0644, SEG_A, segb_value_text(b, "999424\n"), SV_RAPL_WINDOW,
                 segb_param(b, (struct seg_param){.a = 976, .related = SEG_NONE}, NULL));
    segb_dynamic(b, F("intel-rapl:0:0/constraint_0_power_limit_uw"), 0644, SEG_A, segb_value_text(b, "0\n"),
                 SV_RAPL_LIMIT, segb_param(b, (struct seg_param){.a = 125000, .b = 15, .c = 1, .related = SEG_NONE}, NULL));
    segb_dynamic(b, F("enabled"), 0644, SEG_A, segb_value_text(b, "1\n"), SV_ZONE_ENABLED,
                 segb_param(b, (struct seg_param){.related = SEG_NONE}, NULL));
    segb_dynamic(b, "sys/devices/virtual/powercap/intel-rapl/enabled", 0644, SEG_A, segb_value_text(b, "1\n"),
                 SV_CT_ENABLED, SEG_NONE);
    segb_dynamic(b, "sys/devices/system/cpu/intel_pstate/no_turbo", 0644, SEG_A, segb_value_text(b, "0\n"),
                 SV_UINT_CLAMP01, SEG_NONE);
    segb_dynamic(b, "sys/devices/system/cpu/intel_pstate/status", 0644, SEG_A, segb_value_text(b, "active\n"),
                 SV_IGNORE, SEG_NONE);
    /* GPUs (engine/segment/gpu_files.h): an H100 SXM's NVML limit 200-700 W, one whose limit is a token,
     * its clock locks (graphics 210-1980 MHz, memory 2619 MHz only), a MI300X cap (0-750 W), a
     * W7900 cap pinned at 241 W, the amdgpu performance level, an i915 PL1 and its window. */
    segb_dynamic(b, "state/nvml/gpu0/power_limit_mw", 0644, SEG_A, segb_value_text(b, "400000\n"), SV_NVML_LIMIT,
                 segb_param(b, (struct seg_param){.a = 200000, .b = 700000, .related = SEG_NONE}, NULL));
    segb_dynamic(b, "state/nvml/gpu1/power_limit_mw", 0644, SEG_A, segb_value_text(b, "[N/A]\n"), SV_NVML_LIMIT,
                 segb_param(b, (struct seg_param){.a = 200000, .b = 700000, .c = 1, .related = SEG_NONE}, NULL));
    segb_dynamic(b, "state/nvml/gpu0/locked_gpu_clocks", 0644, SEG_A, segb_value_text(b, "none\n"), SV_NVML_CLOCKS,
                 segb_param(b, (struct seg_param){.a = 210, .b = 1980, .related = SEG_NONE}, NULL));
    segb_dynamic(b, "state/nvml/gpu0/locked_memory_clocks", 0644, SEG_A, segb_value_text(b, "none\n"),
                 SV_NVML_CLOCKS, segb_param(b, (struct seg_param){.a = 2619, .b = 2619, .related = SEG_NONE}, NULL));
    segb_dynamic(b, "amd/power1_cap", 0644, SEG_A, segb_value_text(b, "750000000\n"), SV_AMDGPU_CAP,
                 segb_param(b, (struct seg_param){.a = 0, .b = 750000000, .related = SEG_NONE}, NULL));
    segb_dynamic(b, "w7900/power1_cap", 0644, SEG_A, segb_value_text(b, "241000000\n"), SV_AMDGPU_CAP,
                 segb_param(b, (struct seg_param){.a = 241000000, .b = 241000000, .related = SEG_NONE}, NULL));
    segb_dynamic(b, "amd/power_dpm_force_performance_level", 0644, SEG_A, segb_value_text(b, "auto\n"),
                 SV_DPM_LEVEL, segb_param(b, (struct seg_param){.related = SEG_NONE}, NULL));
    segb_dynamic(b, "i915/power1_max", 0664, SEG_A, segb_value_text(b, "150000000\n"), SV_INTEL_PL1,
                 segb_param(b, (struct seg_param){.related = SEG_NONE}, NULL));
    segb_dynamic(b, "i915/power1_max_interval", 0664, SEG_A, segb_value_text(b, "1000\n"), SV_MAX_MS,
                 segb_param(b, (struct seg_param){.a = 256000, .related = SEG_NONE}, NULL));
    /* one attribute of every validator, and of none and one past the last (test_every_validator_stores) */
    for (int v = SV_NONE; v <= SV_COUNT; v++) {
        snprintf(p, sizeof p, "every/%d", v);
        segb_dynamic(b, p, 0644, SEG_A, segb_value_text(b, "0\n"), (uint16_t)v,
                     segb_param(b, (struct seg_param){.related = SEG_NONE}, NULL));
    }
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

/* Writes text to the attribute; returns the errno or 0 and the normalised text in out. */
static int w(const char *attr, const char *text, char *out)
{
    uint32_t e = seg_lookup(&seg, attr, strlen(attr));
    assert_int_not_equal(e, SEG_NONE);
    size_t n = 0;
    bool changes;
    int rc = seg_attr_store(&seg, e, text, strlen(text), 0, out, &n, &changes);
    out[rc ? 0 : n] = 0;
    if (!rc && changes)
        seg_slot_store(&seg, e, out, n, 0);
    return rc;
}

#define RAPL "sys/devices/virtual/powercap/intel-rapl/intel-rapl:0/"
#define POL "sys/devices/system/cpu/cpufreq/policy0/"

static void test_rapl_limit(void **st)
{
    char o[SEG_TEXT_MAX];
    assert_int_equal(w(RAPL "constraint_0_power_limit_uw", "100000000\n", o), 0);
    assert_string_equal(o, "100000000\n");
    assert_int_equal(w(RAPL "constraint_0_power_limit_uw", "100062499", o), 0);
    assert_string_equal(o, "100000000\n"); /* floored to the 125000 uW unit */
    assert_int_equal(w(RAPL "constraint_0_power_limit_uw", "4096000000", o), 0);
    assert_string_equal(o, "0\n");          /* raw 0x8000 masked to 15 bits: wraps (§3.4) */
    assert_int_equal(w(RAPL "constraint_0_power_limit_uw", "4095875000", o), 0);
    assert_string_equal(o, "4095875000\n"); /* raw 0x7fff: the largest that fits */
    assert_int_equal(w(RAPL "constraint_0_power_limit_uw", "124999", o), 0);
    assert_string_equal(o, "0\n");          /* below one unit */
    assert_int_equal(w(RAPL "constraint_0_power_limit_uw", "-5", o), EINVAL);
    assert_int_equal(w(RAPL "constraint_0_power_limit_uw", " 5", o), EINVAL);
    assert_int_equal(w(RAPL "constraint_0_power_limit_uw", "5 ", o), EINVAL);
    assert_int_equal(w(RAPL "constraint_0_power_limit_uw", "0x10", o), EINVAL);
    assert_int_equal(w(RAPL "constraint_0_power_limit_uw", "", o), EINVAL);
    assert_int_equal(w(RAPL "constraint_0_power_limit_uw", "5\n\n", o), EINVAL);
    assert_int_equal(w(RAPL "constraint_0_power_limit_uw", "+125000\n", o), 0);
    assert_int_equal(w(RAPL "intel-rapl:0:0/constraint_0_power_limit_uw", "5000000", o), ENODATA);
    assert_int_equal(w(RAPL "intel-rapl:0:0/constraint_0_power_limit_uw", "x", o), EINVAL);
}

static void test_rapl_window(void **st)
{
    char o[SEG_TEXT_MAX];
    const char *cases[][2] = {{"1000000", "999424\n"}, {"2500", "1952\n"}, {"100", "976\n"},
                              {"28000000", "27983872\n"}, {"976", "976\n"}, {"8000000", "7995392\n"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(w(RAPL "constraint_0_time_window_us", cases[i][0], o), 0);
        assert_string_equal(o, cases[i][1]);
    }
    assert_int_equal(rapl_window_readback(2440, 976), 1952); /* 2440 / 976 = 2 in integers: (Y,F) = (1,0) */
    assert_int_equal(rapl_window_readback(2928, 976), 2928); /* v = 3: (Y,F) = (1,2), 2 * 6 * 976 / 4 */
}

static void test_enabled(void **st)
{
    char o[SEG_TEXT_MAX];
    assert_int_equal(w(RAPL "enabled", "0\n", o), 0);
    assert_string_equal(o, "0\n");
    assert_int_equal(w(RAPL "enabled", "on", o), 0);
    assert_string_equal(o, "1\n");
    assert_int_equal(w(RAPL "enabled", "maybe", o), EINVAL);
    assert_int_equal(w("sys/devices/virtual/powercap/intel-rapl/enabled", "1", o), ENOSYS);
    assert_int_equal(w("sys/devices/virtual/powercap/intel-rapl/enabled", "x", o), EINVAL);
}

static void test_cpufreq(void **st)
{
    char o[SEG_TEXT_MAX];
    assert_int_equal(w(POL "scaling_max_freq", "99999999", o), 0);
    assert_string_equal(o, "3900000\n"); /* clamped to cpuinfo_max (§4.2) */
    assert_int_equal(w(POL "scaling_max_freq", "0x1e8480", o), 0);
    assert_string_equal(o, "2000000\n"); /* kstrtoul base 0 takes hex */
    assert_int_equal(w(POL "scaling_min_freq", "3000000", o), 0);
    assert_string_equal(o, "2000000\n"); /* above max: reads back equal to max */
    assert_int_equal(w(POL "scaling_min_freq", "0", o), 0);
    assert_string_equal(o, "1000000\n");
    assert_int_equal(w(POL "scaling_min_freq", "abc", o), EINVAL);
    assert_int_equal(w(POL "scaling_min_freq", "99999999999999999999999", o), ERANGE);
    assert_int_equal(w(POL "scaling_governor", "PERFORMANCE\n", o), 0);
    assert_string_equal(o, "performance\n");
    assert_int_equal(w(POL "scaling_governor", "ondemand", o), EINVAL);
    /* EPP under the performance governor: only performance is taken (§5.2) */
    assert_int_equal(w(POL "energy_performance_preference", "power", o), EBUSY);
    assert_int_equal(w(POL "energy_performance_preference", "performance", o), 0);
    assert_int_equal(w(POL "energy_performance_preference", "0", o), 0);
    assert_int_equal(w(POL "scaling_governor", "powersave", o), 0);
    assert_int_equal(w(POL "energy_performance_preference", "balance_power\n", o), 0);
    assert_string_equal(o, "balance_power\n");
    assert_int_equal(w(POL "energy_performance_preference", "128", o), 0);
    assert_string_equal(o, "128\n");
    assert_int_equal(w(POL "energy_performance_preference", "256", o), EINVAL);
    /* intel_pstate parses raw values with kstrtouint: past 2^32-1 it is ERANGE, not EINVAL */
    assert_int_equal(w(POL "energy_performance_preference", "4294967295", o), EINVAL);
    assert_int_equal(w(POL "energy_performance_preference", "4294967296", o), ERANGE);
    assert_int_equal(w(POL "energy_performance_preference", "18446744073709551616", o), ERANGE);
    assert_int_equal(w(POL "energy_performance_preference", "fast", o), EINVAL);
}

static void test_intel_pstate_globals(void **st)
{
    char o[SEG_TEXT_MAX];
    assert_int_equal(w("sys/devices/system/cpu/intel_pstate/no_turbo", "5", o), 0);
    assert_string_equal(o, "1\n");
    assert_int_equal(w("sys/devices/system/cpu/intel_pstate/no_turbo", "0\n", o), 0);
    assert_string_equal(o, "0\n");
    assert_int_equal(w("sys/devices/system/cpu/intel_pstate/no_turbo", "x", o), EINVAL);
    assert_int_equal(w("sys/devices/system/cpu/intel_pstate/status", "passive", o), 0);
    uint32_t e = seg_lookup(&seg, "sys/devices/system/cpu/intel_pstate/status", 42);
    char tmp[SEG_TEXT_MAX];
    size_t n;
    assert_memory_equal(seg_read(&seg, e, 0, tmp, &n), "active\n", 7); /* taken, changes nothing */
}

static void test_nvml(void **st)
{
    char o[SEG_TEXT_MAX];
    assert_int_equal(w("state/nvml/gpu0/power_limit_mw", "300000\n", o), 0);
    assert_string_equal(o, "300000\n");
    assert_int_equal(w("state/nvml/gpu0/power_limit_mw", "700000", o), 0);
    assert_int_equal(w("state/nvml/gpu0/power_limit_mw", "199999", o), EINVAL); /* below min */
    assert_int_equal(w("state/nvml/gpu0/power_limit_mw", "700001", o), EINVAL); /* above max */
    assert_int_equal(w("state/nvml/gpu0/power_limit_mw", "300 W", o), EINVAL);
    assert_int_equal(w("state/nvml/gpu1/power_limit_mw", "300000", o), EOPNOTSUPP);
    /* -lgc 0,2100 on a 1980 MHz GPU reads back "(gpuClkMin 0, gpuClkMax 1980)" (tools §1.13) */
    assert_int_equal(w("state/nvml/gpu0/locked_gpu_clocks", "0,2100", o), 0);
    assert_string_equal(o, "0 1980\n");
    assert_int_equal(w("state/nvml/gpu0/locked_gpu_clocks", "1740", o), 0);
    assert_string_equal(o, "1740 1740\n");
    assert_int_equal(w("state/nvml/gpu0/locked_gpu_clocks", "1500 1200", o), EINVAL);
    assert_int_equal(w("state/nvml/gpu0/locked_gpu_clocks", "100 200", o), EINVAL); /* below every clock */
    assert_int_equal(w("state/nvml/gpu0/locked_gpu_clocks", "fast", o), EINVAL);
    assert_int_equal(w("state/nvml/gpu0/locked_gpu_clocks", "none\n", o), 0);
    assert_string_equal(o, "none\n");
    assert_int_equal(w("state/nvml/gpu0/locked_memory_clocks", "2619,2619", o), 0);
    assert_string_equal(o, "2619 2619\n");
}

static void test_amdgpu(void **st)
{
    char o[SEG_TEXT_MAX];
    assert_int_equal(w("amd/power1_cap", "300500000\n", o), 0);
    assert_string_equal(o, "300000000\n"); /* whole watts, truncated (§9.1) */
    assert_int_equal(w("amd/power1_cap", "750999999", o), 0);
    assert_string_equal(o, "750000000\n");
    assert_int_equal(w("amd/power1_cap", "751000000", o), EINVAL);
    assert_int_equal(w("amd/power1_cap", "4294967296", o), ERANGE); /* past kstrtou32 */
    assert_int_equal(w("amd/power1_cap", "x", o), EINVAL);
    assert_int_equal(w("w7900/power1_cap", "200000000", o), EINVAL);
    assert_int_equal(w("w7900/power1_cap", "241900000", o), 0);
    assert_string_equal(o, "241000000\n");
    assert_int_equal(w("w7900/power1_cap", "0", o), EINVAL); /* 0 is refused when the minimum is above it */
    assert_int_equal(w("amd/power_dpm_force_performance_level", "highXYZ", o), 0);
    assert_string_equal(o, "high\n"); /* matched by prefix (§9.2) */
    assert_int_equal(w("amd/power_dpm_force_performance_level", "profile_exit", o), EINVAL);
    assert_int_equal(w("amd/power_dpm_force_performance_level", "profile_peak", o), 0);
    assert_int_equal(w("amd/power_dpm_force_performance_level", "profile_exit", o), 0);
    assert_string_equal(o, "auto\n");
    assert_int_equal(w("amd/power_dpm_force_performance_level", "turbo", o), EINVAL);
}

static void test_i915(void **st)
{
    char o[SEG_TEXT_MAX];
    assert_int_equal(w("i915/power1_max", "100000000", o), 0);
    assert_string_equal(o, "100000000\n");
    assert_int_equal(w("i915/power1_max", "100060000", o), 0);
    assert_string_equal(o, "100000000\n"); /* 1/8 W units, to nearest (§10.1) */
    assert_int_equal(w("i915/power1_max", "100070000", o), 0);
    assert_string_equal(o, "100125000\n");
    assert_int_equal(w("i915/power1_max", "900000000", o), 0); /* out of the hardware's range: taken */
    assert_int_equal(w("i915/power1_max", "0", o), 0);
    assert_string_equal(o, "0\n");
    assert_int_equal(w("i915/power1_max", "-1", o), EINVAL);
    /* only 0 turns the limit off (i915's PL1_DISABLE): a small value is one 1/8 W step */
    assert_int_equal(w("i915/power1_max", "1", o), 0);
    assert_string_equal(o, "125000\n");
    assert_int_equal(w("i915/power1_max", "62499", o), 0);
    assert_string_equal(o, "125000\n");
    assert_int_equal(w("i915/power1_max", "62500", o), 0);
    assert_string_equal(o, "125000\n");
    /* 2^64-1 must not wrap to a small value: it saturates at the last whole step */
    assert_int_equal(w("i915/power1_max", "18446744073709551615", o), 0);
    assert_string_equal(o, "18446744073709500000\n");
    assert_int_equal(w("i915/power1_max", "0xffffffffffffffff", o), 0);
    assert_string_equal(o, "18446744073709500000\n");
    assert_int_equal(w("i915/power1_max_interval", "256001", o), EINVAL);
    assert_int_equal(w("i915/power1_max_interval", "0x100", o), 0);
    assert_string_equal(o, "256\n");
}

/* Every validator of seg_attr.h has its store function in seg_attr.c's table: a write to an
 * attribute of each is decided by it (taken or refused with a parser's errno), never answered EIO,
 * which is the answer of an attribute without a store (§1.2): SV_NONE, and a number past the last. */
static void test_every_validator_stores(void **st)
{
    char p[32], out[SEG_TEXT_MAX + 1];
    for (int v = SV_NONE; v <= SV_COUNT; v++) {
        snprintf(p, sizeof p, "every/%d", v);
        uint32_t e = seg_lookup(&seg, p, strlen(p));
        assert_int_not_equal(e, SEG_NONE);
        size_t n = 0;
        bool changes;
        int rc = seg_attr_store(&seg, e, "1\n", 2, 0, out, &n, &changes);
        if (v == SV_NONE || v == SV_COUNT)
            assert_int_equal(rc, EIO);
        else if (rc == EIO)
            fail_msg("validator %d has no store in seg_attr.c", v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rapl_limit), cmocka_unit_test(test_rapl_window), cmocka_unit_test(test_enabled),
        cmocka_unit_test(test_nvml), cmocka_unit_test(test_amdgpu), cmocka_unit_test(test_i915),
        cmocka_unit_test(test_cpufreq), cmocka_unit_test(test_intel_pstate_globals),
        cmocka_unit_test(test_every_validator_stores),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
