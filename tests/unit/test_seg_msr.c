/* Unit tests of engine/segment/seg_msr.c: the registers of an MSR device (segment.h "Devices"):
 * EIO for an address the list lacks, constants, energy counts (and a per-core share), the
 * PKG_POWER_LIMIT composed from its powercap files and written through their validators, the
 * lock bit, the window field encoding against the powercap window rounding (seg_attr.c), and a
 * CPU's list continuing in its package's with the time registers (TSC, MPERF, APERF, a C-state
 * residency over two CPUs) and a thermal status; a throttled-time line in RAPL time units
 * (PKG_PERF_STATUS, wrapping at 32 bits) and the thermal status logs, sticky until a write of 0
 * clears them (R/WC0). */
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
#include "seg_msr.h"
#include "seg_tmp.h"

#define ZONE "sys/devices/virtual/powercap/intel-rapl/intel-rapl:0"

static char path[256];

struct fixture {
    struct seg s;
    uint32_t ctr, msr, msr_locked, msr_cpu, msr_therm;
    uint32_t elapsed, busy0, busy1, cycles, temp; /* value indices */
    uint32_t thr, thr_wrap;                       /* throttled-time lines (ns) */
};

static uint32_t entry(struct fixture *f, const char *p)
{
    return seg_lookup(&f->s, p, strlen(p));
}

static void limit_file(struct seg_builder *b, const char *name, const char *text, int validator, long long unit,
                       int locked)
{
    char p[256];
    snprintf(p, sizeof p, ZONE "/%s", name);
    segb_dynamic(b, p, 0644, SEG_A, segb_value_text(b, text), (uint16_t)validator,
                 segb_param(b, (struct seg_param){.a = unit, .b = 15, .c = locked, .related = SEG_NONE}, NULL));
}

static int setup(void **st)
{
    seg_tmp_path(path, sizeof path, "msr.seg");
    struct fixture *f = calloc(1, sizeof *f);
    struct seg_builder *b = segb_new();
    f->ctr = segb_value_counter(b, 61035, 32, false);
    segb_dynamic(b, ZONE "/energy_uj", 0400, SEG_S, f->ctr, SV_NONE, SEG_NONE);
    limit_file(b, "constraint_0_power_limit_uw", "165000000\n", SV_RAPL_LIMIT, 125000, 0);
    limit_file(b, "constraint_0_time_window_us", "999424\n", SV_RAPL_WINDOW, 976, 0);
    limit_file(b, "constraint_1_power_limit_uw", "198000000\n", SV_RAPL_LIMIT, 125000, 0);
    limit_file(b, "constraint_1_time_window_us", "976\n", SV_RAPL_WINDOW, 976, 0);
    segb_dynamic(b, ZONE "/enabled", 0644, SEG_A, segb_value_text(b, "1\n"), SV_ZONE_ENABLED,
                 segb_param(b, (struct seg_param){.related = SEG_NONE}, NULL));
    const char *words = ZONE "/constraint_0_power_limit_uw " ZONE "/constraint_0_time_window_us "
                        ZONE "/constraint_1_power_limit_uw " ZONE "/constraint_1_time_window_us " ZONE "/enabled";
    uint32_t first = segb_param(b, (struct seg_param){.a = 0x606, .b = SEG_MSR_CONST, .c = 0xA0E03,
                                                      .related = SEG_NONE}, NULL);
    segb_param(b, (struct seg_param){.a = 0x611, .b = SEG_MSR_ENERGY, .c = f->ctr, .d = 1, .related = SEG_NONE}, NULL);
    segb_param(b, (struct seg_param){.a = 0xC001029A, .b = SEG_MSR_ENERGY, .c = f->ctr, .d = 4, .related = SEG_NONE},
               NULL);
    segb_param(b, (struct seg_param){.a = 0x610, .b = SEG_MSR_LIMIT, .c = 125000, .d = 976, .related = SEG_NONE},
               words);
    segb_param(b, (struct seg_param){.b = SEG_MSR_END, .related = SEG_NONE}, NULL);
    segb_device(b, "dev/cpu/0/msr", 0600, SEG_M, first);
    /* a package whose PL1 is locked: the same limit register over a locked file */
    limit_file(b, "constraint_2_power_limit_uw", "100000000\n", SV_RAPL_LIMIT, 125000, 1);
    uint32_t locked = segb_param(b, (struct seg_param){.a = 0x610, .b = SEG_MSR_LIMIT, .c = 125000, .d = 976,
                                                       .related = SEG_NONE}, ZONE "/constraint_2_power_limit_uw - - - -");
    segb_param(b, (struct seg_param){.b = SEG_MSR_END, .related = SEG_NONE}, NULL);
    segb_device(b, "dev/cpu/1/msr", 0600, SEG_M, locked);
    /* CPU 2: its own registers at a 1 GHz clock (counts = ns), then CPU 0's list */
    f->elapsed = segb_value_counter(b, 1000, 64, false);
    f->busy0 = segb_value_counter(b, 1000, 64, false);
    f->busy1 = segb_value_counter(b, 1000, 64, false);
    f->cycles = segb_value_counter(b, 1000, 64, false);
    f->temp = segb_value_text(b, "45000\n");
    long long e = f->elapsed;
    uint32_t own = segb_param(b, (struct seg_param){.a = 0x10, .b = SEG_MSR_TIME, .c = e | (long long)f->elapsed << 32,
                                                    .d = 1000000, .related = SEG_NONE}, NULL);
    segb_param(b, (struct seg_param){.a = 0xE7, .b = SEG_MSR_TIME, .c = e | (long long)f->busy0 << 32, .d = 1000000,
                                     .related = SEG_NONE}, NULL);
    segb_param(b, (struct seg_param){.a = 0xE8, .b = SEG_MSR_CYCLES, .c = e | (long long)f->cycles << 32,
                                     .related = SEG_NONE}, NULL);
    segb_param(b, (struct seg_param){.a = 0x3FD, .b = SEG_MSR_IDLE, .c = e | (long long)f->busy0 << 32,
                                     .d = 1000000LL << 16 | 500, .related = SEG_NONE}, "0 1");
    segb_param(b, (struct seg_param){.a = 0x3F9, .b = SEG_MSR_IDLE, .c = e | (long long)f->busy0 << 32,
                                     .d = 1000000LL << 16 | 500, .related = SEG_NONE}, "0 999");
    segb_param(b, (struct seg_param){.a = 0x19C, .b = SEG_MSR_THERM, .c = f->temp, .d = 100 | 500 << 8,
                                     .related = SEG_NONE}, NULL);
    segb_param(b, (struct seg_param){.b = SEG_MSR_END, .c = first, .d = 1, .related = SEG_NONE}, NULL);
    segb_device(b, "dev/cpu/2/msr", 0600, SEG_M, own);
    /* CPU 3: the throttled time of two packages (2 s; 5e6 s, past 2^32 units of 2^-10 s) and two
     * thermal status registers with their logs: 0x19C throttled now (its first episode), 0x1B1
     * not (two episodes over), both logs never cleared */
    f->thr = segb_value_counter(b, 1000, 64, false);
    f->thr_wrap = segb_value_counter(b, 1000, 64, false);
    uint32_t on = segb_value_text(b, "1\n"), off = segb_value_text(b, "0\n");
    uint32_t one = segb_value_text(b, "1\n"), two = segb_value_text(b, "2\n");
    static const char *const logs[] = {"state/msr/package0/core_therm_log", "state/msr/package0/package_therm_log"};
    for (int i = 0; i < 2; i++)
        segb_dynamic(b, logs[i], 0600, SEG_A, segb_value_text(b, "0\n"), SV_UW_CLAMP,
                     segb_param(b, (struct seg_param){.a = 0, .b = UINT32_MAX, .related = SEG_NONE}, NULL));
    uint32_t therm = segb_param(b, (struct seg_param){.a = 0x613, .b = SEG_MSR_CYCLES, .c = e | (long long)f->thr << 32,
                                                      .d = 10, .related = SEG_NONE}, NULL);
    segb_param(b, (struct seg_param){.a = 0x61B, .b = SEG_MSR_CYCLES, .c = e | (long long)f->thr_wrap << 32, .d = 10,
                                     .related = SEG_NONE}, NULL);
    segb_param(b, (struct seg_param){.a = 0x19C, .b = SEG_MSR_THERM, .c = f->temp | (long long)(one + 1) << 32,
                                     .d = 100 | (long long)(on + 1) << 32, .related = SEG_NONE}, logs[0]);
    segb_param(b, (struct seg_param){.a = 0x1B1, .b = SEG_MSR_THERM, .c = f->temp | (long long)(two + 1) << 32,
                                     .d = 100 | (long long)(off + 1) << 32, .related = SEG_NONE}, logs[1]);
    segb_param(b, (struct seg_param){.b = SEG_MSR_END, .related = SEG_NONE}, NULL);
    segb_device(b, "dev/cpu/3/msr", 0600, SEG_M, therm);
    assert_int_equal(segb_errors(b, NULL), 0);
    int rc = seg_tmp_write(b, path, &f->s);
    f->msr = entry(f, "dev/cpu/0/msr");
    f->msr_locked = entry(f, "dev/cpu/1/msr");
    f->msr_cpu = entry(f, "dev/cpu/2/msr");
    f->msr_therm = entry(f, "dev/cpu/3/msr");
    /* the counter at 1 J (16384 units and a bit), held there */
    struct seg_value *scratch = seg_tmp_scratch(&f->s);
    struct seg_value *v = &scratch[f->ctr];
    v->ctr.acc_uj = 1000100;
    v->ctr.t0_ns = seg_now_ns();
    /* elapsed 10 ms; CPU 0 busy 4 ms, CPU 1 6 ms (in µs, seg_view.h units); 3000005 cycles;
     * every line stands still (rate 0) */
    static const uint64_t acc[6] = {10000, 4000, 6000, 3000, 2000000, 5000000000000};
    uint32_t vi[6] = {f->elapsed, f->busy0, f->busy1, f->cycles, f->thr, f->thr_wrap};
    for (int i = 0; i < 6; i++) {
        struct seg_value *c = &scratch[vi[i]];
        c->ctr.acc_uj = acc[i];
        c->ctr.rem_nj = i == 3 ? 5 : 0;
        c->ctr.t0_ns = seg_now_ns();
    }
    seg_tmp_publish(&f->s, scratch, seg_now_ns());
    *st = f;
    return rc;
}

static int teardown(void **st)
{
    struct fixture *f = *st;
    seg_tmp_close(&f->s);
    free(f);
    return 0;
}

static void test_reads(void **st)
{
    struct fixture *f = *st;
    uint64_t v = 0;
    int64_t now = seg_now_ns();
    assert_int_equal(seg_msr_cpu(&f->s, f->msr), 0);
    assert_int_equal(seg_msr_cpu(&f->s, entry(f, ZONE "/enabled")), -1);
    assert_int_equal(seg_msr_read(&f->s, f->msr, 0x613, now, &v), EIO);
    assert_int_equal(seg_msr_read(&f->s, entry(f, ZONE "/enabled"), 0x606, now, &v), EIO); /* not a device */
    assert_int_equal(seg_msr_read(&f->s, f->msr, 0x606, now, &v), 0);
    assert_int_equal(v, 0xA0E03);
    /* 1000100 uJ / 61.035 uJ = 16385 counts; the energy_uj file shows 16385 * 61035 / 1000 */
    assert_int_equal(seg_msr_read(&f->s, f->msr, 0x611, now, &v), 0);
    assert_int_equal(v, 16385);
    char tmp[SEG_TEXT_MAX];
    size_t n;
    const char *t = seg_read(&f->s, entry(f, ZONE "/energy_uj"), now, tmp, &n);
    assert_int_equal(strtoull(t, NULL, 10), 16385ull * 61035 / 1000);
    assert_int_equal(seg_msr_read(&f->s, f->msr, 0xC001029A, now, &v), 0);
    assert_int_equal(v, 16385 / 4);
    /* PL1 1320 units enabled+clamp, window 2^10 units; PL2 1584 enabled+clamp, window 2^0 */
    assert_int_equal(seg_msr_read(&f->s, f->msr, 0x610, now, &v), 0);
    assert_int_equal(v, 0x0001863000158528ull);
}

static void test_cpu_list(void **st)
{
    struct fixture *f = *st;
    uint64_t v = 0;
    int64_t now = seg_now_ns();
    /* the package's registers through the continuation; an address neither list has: EIO */
    assert_int_equal(seg_msr_read(&f->s, f->msr_cpu, 0x606, now, &v), 0);
    assert_int_equal(v, 0xA0E03);
    assert_int_equal(seg_msr_read(&f->s, f->msr_cpu, 0x613, now, &v), EIO);
    /* CPU 0's list has no continuation: CPU 2's own registers are not in it */
    assert_int_equal(seg_msr_read(&f->s, f->msr, 0x10, now, &v), EIO);
    assert_int_equal(seg_msr_read(&f->s, f->msr_cpu, 0x10, now, &v), 0);
    assert_int_equal(v, 10000000);
    assert_int_equal(seg_msr_read(&f->s, f->msr_cpu, 0xE7, now, &v), 0);
    assert_int_equal(v, 4000000);
    assert_int_equal(seg_msr_read(&f->s, f->msr_cpu, 0xE8, now, &v), 0);
    assert_int_equal(v, 3000005);
    /* idle 6 ms and 4 ms: the least, 4 ms, half of it in the state */
    assert_int_equal(seg_msr_read(&f->s, f->msr_cpu, 0x3FD, now, &v), 0);
    assert_int_equal(v, 2000000);
    /* a CPU position past the values: EIO, not a read out of bounds */
    assert_int_equal(seg_msr_read(&f->s, f->msr_cpu, 0x3F9, now, &v), EIO);
    /* 45 °C less a 0.5 °C spread: 44 °C, 56 below TjMax 100, valid, resolution 1 */
    assert_int_equal(seg_msr_read(&f->s, f->msr_cpu, 0x19C, now, &v), 0);
    assert_int_equal(v, 0x88380000u);
}

static void test_limit_write(void **st)
{
    struct fixture *f = *st;
    uint64_t v = 0;
    /* PL1 150 W (1200 units), window 2^3 units (7808 us); PL2 unchanged */
    uint64_t w = 0x0001863000000000ull | 1200 | 1u << 15 | 1u << 16 | 3u << 17;
    assert_int_equal(seg_msr_write(&f->s, f->msr, 0x610, w, 42), 0);
    char tmp[SEG_TEXT_MAX];
    size_t n;
    const char *t = seg_read(&f->s, entry(f, ZONE "/constraint_0_power_limit_uw"), seg_now_ns(), tmp, &n);
    assert_int_equal(strtoull(t, NULL, 10), 150000000);
    t = seg_read(&f->s, entry(f, ZONE "/constraint_0_time_window_us"), seg_now_ns(), tmp, &n);
    assert_int_equal(strtoull(t, NULL, 10), 7808);
    assert_int_equal(seg_msr_read(&f->s, f->msr, 0x610, seg_now_ns(), &v), 0);
    assert_int_equal(v, w);
    /* read-only registers fault */
    assert_int_equal(seg_msr_write(&f->s, f->msr, 0x611, 0, 42), EIO);
    assert_int_equal(seg_msr_write(&f->s, f->msr, 0x606, 0, 42), EIO);
    /* locked: bit 63 reads 1 and a write is ignored without a fault */
    assert_int_equal(seg_msr_read(&f->s, f->msr_locked, 0x610, seg_now_ns(), &v), 0);
    assert_true(v >> 63);
    assert_int_equal(v & 0x7FFF, 800);
    assert_int_equal(seg_msr_write(&f->s, f->msr_locked, 0x610, 400, 42), 0);
    t = seg_read(&f->s, entry(f, ZONE "/constraint_2_power_limit_uw"), seg_now_ns(), tmp, &n);
    assert_int_equal(strtoull(t, NULL, 10), 100000000);
}

/* PKG_PERF_STATUS: a line of ns in units of 2^-10 s, modulo 2^32. */
static void test_throttled_time(void **st)
{
    struct fixture *f = *st;
    uint64_t v = 0;
    assert_int_equal(seg_msr_read(&f->s, f->msr_therm, 0x613, seg_now_ns(), &v), 0);
    assert_int_equal(v, 2048); /* 2 s */
    assert_int_equal(seg_msr_read(&f->s, f->msr_therm, 0x61B, seg_now_ns(), &v), 0);
    assert_int_equal(v, (5000000ull * 1024) & 0xFFFFFFFFu);
}

/* The thermal logs (bit 1): set while PROCHOT is (bit 0) and since; a write of 1 leaves them, a
 * write of 0 clears them unless PROCHOT still holds; the log files take the episodes ended. */
static void test_therm_log(void **st)
{
    struct fixture *f = *st;
    uint64_t v = 0;
    char tmp[SEG_TEXT_MAX];
    size_t n;
    assert_int_equal(seg_msr_read(&f->s, f->msr_therm, 0x19C, seg_now_ns(), &v), 0);
    assert_int_equal(v & 3, 3);
    assert_int_equal(seg_msr_read(&f->s, f->msr_therm, 0x1B1, seg_now_ns(), &v), 0);
    assert_int_equal(v & 3, 2);
    assert_int_equal(v >> 16 & 0x7F, 55); /* the readout is untouched: 45 °C, 55 below TjMax */
    /* a write of 1 to the log: nothing changes */
    assert_int_equal(seg_msr_write(&f->s, f->msr_therm, 0x1B1, 2, 42), 0);
    assert_int_equal(seg_msr_read(&f->s, f->msr_therm, 0x1B1, seg_now_ns(), &v), 0);
    assert_int_equal(v & 3, 2);
    /* a write of 0 while PROCHOT holds: the episode going on is not over, the log stays set */
    assert_int_equal(seg_msr_write(&f->s, f->msr_therm, 0x19C, 0, 42), 0);
    assert_int_equal(seg_msr_read(&f->s, f->msr_therm, 0x19C, seg_now_ns(), &v), 0);
    assert_int_equal(v & 3, 3);
    const char *t = seg_read(&f->s, entry(f, "state/msr/package0/core_therm_log"), seg_now_ns(), tmp, &n);
    assert_int_equal(strtoull(t, NULL, 10), 0);
    /* a write of 0 after two episodes: cleared, the package's log apart from the cores' */
    assert_int_equal(seg_msr_write(&f->s, f->msr_therm, 0x1B1, 0, 42), 0);
    assert_int_equal(seg_msr_read(&f->s, f->msr_therm, 0x1B1, seg_now_ns(), &v), 0);
    assert_int_equal(v & 3, 0);
    t = seg_read(&f->s, entry(f, "state/msr/package0/package_therm_log"), seg_now_ns(), tmp, &n);
    assert_int_equal(strtoull(t, NULL, 10), 2);
    assert_int_equal(seg_msr_read(&f->s, f->msr_therm, 0x19C, seg_now_ns(), &v), 0);
    assert_int_equal(v & 3, 3);
}

/* Every window the powercap file can show encodes to a field that decodes to it again. */
static void test_window_field(void **st)
{
    (void)st;
    for (uint64_t us = 1; us < 5000000000ull; us = us * 3 / 2 + 7) {
        uint64_t shown = rapl_window_readback(us, 976);
        assert_int_equal(msr_window_us(msr_window_field(shown, 976), 976), shown);
    }
    assert_int_equal(msr_window_field(999424, 976), 10);
    assert_int_equal(msr_window_us(10, 976), 999424);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_throttled_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_therm_log, setup, teardown),
        cmocka_unit_test(test_window_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
