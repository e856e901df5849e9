/* Unit tests of the cpufreq/stats views (seg_view.h SEG_VIEW_CF_*): time_in_state, total_trans
 * and trans_table of a three-entry table computed from published lines. The expected texts are
 * written by hand from drivers/cpufreq/cpufreq_stats.c (Linux 6.x) format strings:
 *   show_time_in_state  "%u %llu\n" per entry: kHz, nsec_to_clock_t(ns) = ns / 10^7 (USER_HZ 100)
 *   show_total_trans    "%u\n"
 *   show_trans_table    "   From  :    To\n", "         : ", "%9u " per entry, "\n", then per
 *                       row "*" for the current entry else " ", "%9u: ", "%9u " per count, "\n"
 * and from the values published here: K time lines, then the K² counts packed in SEG_V_COUNTS
 * values (segment format 9, seg_view.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seg_build.h"
#include "seg_view.h"
#include "segment.h"
#include "seg_tmp.h"

#define K 3
static char path[256];

struct fx {
    struct seg s;
    uint32_t v_el, v0;
};

static int setup(void **st)
{
    seg_tmp_path(path, sizeof path, "cfstats.seg");
    struct fx *f = calloc(1, sizeof *f);
    struct seg_builder *b = segb_new();
    f->v_el = segb_value_counter(b, 1000, 64, false);
    for (int i = 0; i < K + SEG_CF_COUNT_VALUES(K); i++) {
        uint32_t v = i < K ? segb_value_line(b) : segb_value_counts(b);
        if (i == 0)
            f->v0 = v;
    }
    uint32_t p = segb_param(b, (struct seg_param){.a = f->v_el, .b = f->v0, .c = K, .related = SEG_NONE},
                            "2400000 1900000 1500000");
    segb_dir(b, "stats", 0755);
    segb_dynamic(b, "stats/time_in_state", 0444, SEG_S, f->v0, SEG_VIEW_CF_TIME, p);
    segb_dynamic(b, "stats/total_trans", 0444, SEG_S, f->v0, SEG_VIEW_CF_TOTAL, p);
    segb_dynamic(b, "stats/trans_table", 0444, SEG_S, f->v0, SEG_VIEW_CF_TRANS, p);
    /* bad params: no entries, more than a page's worth, lines past the values */
    uint32_t p0 = segb_param(b, (struct seg_param){.a = f->v_el, .b = f->v0, .c = 0, .related = SEG_NONE}, "1");
    uint32_t p16 = segb_param(b, (struct seg_param){.a = f->v_el, .b = f->v0, .c = SEG_CF_MAX_STATES + 1,
                                                    .related = SEG_NONE}, "1");
    uint32_t pfar = segb_param(b, (struct seg_param){.a = f->v_el, .b = f->v0 + 1, .c = K, .related = SEG_NONE}, "1");
    segb_dynamic(b, "bad0", 0444, SEG_S, f->v0, SEG_VIEW_CF_TIME, p0);
    segb_dynamic(b, "bad16", 0444, SEG_S, f->v0, SEG_VIEW_CF_TRANS, p16);
    segb_dynamic(b, "badfar", 0444, SEG_S, f->v0, SEG_VIEW_CF_TOTAL, pfar);
    int rc = seg_tmp_write(b, path, &f->s);
    *st = f;
    return rc;
}

static int teardown(void **st)
{
    struct fx *f = *st;
    seg_tmp_close(&f->s);
    free(f);
    return 0;
}

/* A time line: base ns at t0, rate ns per 1 ms substep, horizon nsub substeps. */
static void line(struct seg_value *v, uint64_t base_ns, uint64_t rate, int64_t t0, uint32_t nsub)
{
    memset(v, 0, sizeof *v);
    v->type = SEG_V_LINE;
    v->wrap_bits = 64;
    v->ctr.unit_nj = 1000;
    v->ctr.acc_uj = base_ns / 1000;
    v->ctr.rem_nj = (uint32_t)(base_ns % 1000);
    v->ctr.power_uw = rate;
    v->ctr.t0_ns = t0;
    v->nsub = nsub;
}

/* Entry 0 (2.4 GHz) current since t0 with 1.234567890 s before; entry 1 0.2 s, entry 2 none;
 * counts 0->1: 3, 1->0: 2, 2->1: 1 and cell (2, 2) = big (the kernel never counts a
 * self-transition; here it tests the column width). The elapsed line: 10 s, horizon 5 s. */
static void publish(struct fx *f, int64_t t0, uint32_t big)
{
    struct seg *s = &f->s;
    struct seg_value *c = seg_tmp_scratch(s);
    line(&c[f->v_el], 10000000000ULL, 1000000, t0, 5000);
    line(&c[f->v0 + 0], 1234567890ULL, 1000000, t0, UINT32_MAX);
    line(&c[f->v0 + 1], 200000000ULL, 0, t0, UINT32_MAX);
    line(&c[f->v0 + 2], 0, 0, t0, UINT32_MAX);
    uint32_t counts[K * K] = {0, 3, 0, 2, 0, 0, 0, 1, big};
    struct seg_value *cv = &c[f->v0 + K];
    memset(cv, 0, sizeof *cv);
    cv->type = SEG_V_COUNTS;
    cv->len = SEG_COUNTS_PER_VALUE * 4;
    memcpy(cv->text, counts, sizeof counts);
    seg_tmp_publish(s, c, t0);
}

static size_t show(struct fx *f, const char *p, int64_t now, char *buf, size_t cap)
{
    uint32_t e;
    assert_int_equal(seg_resolve(&f->s, p, strlen(p), true, &e), 0);
    size_t n = seg_view_render(&f->s, e, now, buf, cap);
    assert_true(n <= seg_view_bound(&f->s, e));
    buf[n] = 0;
    return n;
}

static void test_formats(void **st)
{
    struct fx *f = *st;
    char buf[4096];
    int64_t t0 = 1000000000;
    publish(f, t0, 0);
    /* 0.5 s later: entry 0 = 1.734567890 s = 173 ticks, entry 1 20, entry 2 0 */
    show(f, "stats/time_in_state", t0 + 500000000, buf, sizeof buf);
    assert_string_equal(buf, "2400000 173\n1900000 20\n1500000 0\n");
    show(f, "stats/total_trans", t0 + 500000000, buf, sizeof buf);
    assert_string_equal(buf, "6\n");
    show(f, "stats/trans_table", t0 + 500000000, buf, sizeof buf);
    assert_string_equal(buf, "   From  :    To\n"
                             "         :   2400000   1900000   1500000 \n"
                             "*  2400000:         0         3         0 \n"
                             "   1900000:         2         0         0 \n"
                             "   1500000:         0         1         0 \n");
    /* past the elapsed line's horizon (5 s) the current entry stands still: 1.23 + 5 s */
    show(f, "stats/time_in_state", t0 + 100000000000LL, buf, sizeof buf);
    assert_string_equal(buf, "2400000 623\n1900000 20\n1500000 0\n");
    /* a count wider than the column takes the room it needs, as %9u does */
    publish(f, t0, 1234567890);
    show(f, "stats/trans_table", t0, buf, sizeof buf);
    assert_non_null(strstr(buf, "   1500000:         0         1 1234567890 \n"));
    show(f, "stats/total_trans", t0, buf, sizeof buf);
    assert_string_equal(buf, "1234567896\n");
}

static void test_bad_params(void **st)
{
    struct fx *f = *st;
    char buf[4096];
    publish(f, 1000, 0);
    assert_int_equal(show(f, "bad0", 1000, buf, sizeof buf), 0);
    assert_int_equal(show(f, "bad16", 1000, buf, sizeof buf), 0);
    assert_int_equal(show(f, "badfar", 1000, buf, sizeof buf), 0);
    /* a buffer below the bound gets nothing rather than a cut text */
    uint32_t e;
    assert_int_equal(seg_resolve(&f->s, "stats/trans_table", 17, true, &e), 0);
    assert_int_equal(seg_view_render(&f->s, e, 1000, buf, 64), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_formats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_params, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
