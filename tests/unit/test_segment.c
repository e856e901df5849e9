/* Unit tests of engine/segment/segment.c and engine/segment/seg_build.c: layout, lookup, reads of static,
 * text and counter values, slots, events, and readers hammering while the engine publishes
 * (no torn value, no decrease). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seg_build.h"
#include "segment.h"
#include "seg_tmp.h"

static char path[256];

struct fixture {
    struct seg s;
    uint32_t v_text, v_ctr, v_limit;
};

/* The files every test here reads: static text, a counter, a text value, an A limit. */
static void add_files(struct seg_builder *b, struct fixture *f)
{
    segb_static(b, "sys/class/powercap/intel-rapl:0/name", 0444, "package-0\n", 10);
    f->v_ctr = segb_value_counter(b, 61035, 32, false);
    f->v_text = segb_value_text(b, "1000000\n");
    f->v_limit = segb_value_text(b, "165000000\n");
    segb_dynamic(b, "sys/class/powercap/intel-rapl:0/energy_uj", 0444, SEG_S, f->v_ctr, 0, SEG_NONE);
    segb_dynamic(b, "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq", 0444, SEG_S, f->v_text, 0, SEG_NONE);
    segb_dynamic(b, "sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw", 0644, SEG_A, f->v_limit, 0,
                 SEG_NONE);
    segb_static(b, "cpuinfo", 0444, "processor\t: 0\n", 14);
}

static int setup(void **st)
{
    seg_tmp_path(path, sizeof path, "seg.seg");
    struct fixture *f = calloc(1, sizeof *f);
    struct seg_builder *b = segb_new();
    add_files(b, f);
    segb_dir(b, "sys/class/powercap/intel-rapl:0", 0755); /* a directory given again: harmless */
    assert_int_equal(segb_errors(b, NULL), 0);
    char err[256];
    int rc = segb_write(b, path, "n-0", "p", 42, 1000000000, &f->s, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s\n", err);
    segb_free(b);
    *st = f;
    return rc;
}

static void test_builder_refuses_clashes(void **st)
{
    struct fixture f2;
    struct seg_builder *b = segb_new();
    add_files(b, &f2);
    segb_static(b, "cpuinfo", 0444, "x", 1); /* a file given twice is an error */
    segb_static(b, "cpuinfo/x", 0444, "x", 1); /* under a file */
    const char *why;
    assert_int_equal(segb_errors(b, &why), 2);
    assert_string_equal(why, "cpuinfo: defined twice");
    char err[256];
    struct seg s;
    assert_int_equal(segb_write(b, "/tmp/unused.seg", "n", "p", 0, 1, &s, err, sizeof err), EINVAL);
    assert_non_null(strstr(err, "the rendered tree is inconsistent: cpuinfo: defined twice (2 problems)"));
    segb_free(b);
}

static int teardown(void **st)
{
    struct fixture *f = *st;
    seg_close(&f->s);
    seg_tmp_clean();
    free(f);
    return 0;
}

static void test_lookup_and_layout(void **st)
{
    struct fixture *f = *st;
    struct seg s2;
    char err[256];
    assert_int_equal(seg_open(&s2, path, err, sizeof err), 0);
    assert_string_equal(s2.h->node, "n-0");
    uint32_t e = seg_lookup(&s2, "sys/class/powercap/intel-rapl:0/name", 36);
    assert_int_not_equal(e, SEG_NONE);
    assert_string_equal(seg_path(&s2, e), "sys/class/powercap/intel-rapl:0/name");
    /* every directory on the way is an entry, and a prefix is not a match */
    uint32_t d = seg_lookup(&s2, "sys/class/powercap", 18);
    assert_int_not_equal(d, SEG_NONE);
    assert_int_equal(s2.entries[d].kind, SEG_DIR);
    assert_int_equal(s2.entries[e].parent, seg_lookup(&s2, "sys/class/powercap/intel-rapl:0", 31));
    assert_int_equal(seg_lookup(&s2, "sys/class/power", 15), SEG_NONE);
    assert_int_equal(seg_lookup(&s2, "sys/class/powercap/intel-rapl:0/name/x", 38), SEG_NONE);
    /* lookups take a length, so a path need not be NUL-terminated there */
    assert_int_not_equal(seg_lookup(&s2, "cpuinfoXYZ", 7), SEG_NONE);
    char tmp[SEG_TEXT_MAX];
    size_t len;
    const char *t = seg_read(&s2, e, seg_now_ns(), tmp, &len);
    assert_int_equal(len, 10);
    assert_memory_equal(t, "package-0\n", 10);
    seg_close(&s2);
    (void)f;
}

static void test_damaged_segment_is_refused(void **st)
{
    char p2[300], err[256];
    snprintf(p2, sizeof p2, "%s.bad", path);
    FILE *fp = fopen(p2, "w");
    char junk[4096] = "HWEMUSEG";
    fwrite(junk, 1, sizeof junk, fp);
    fclose(fp);
    struct seg s;
    assert_int_equal(seg_open(&s, p2, err, sizeof err), 22);
    assert_non_null(strstr(err, "version or header size"));
    /* a whole segment of format 9 (two snapshot copies): refused, both formats named */
    struct fixture *f = *st;
    struct seg_header h9 = *f->s.h;
    h9.version = 9;
    fp = fopen(p2, "w");
    fwrite(&h9, 1, sizeof h9, fp);
    fwrite(f->s.base + sizeof h9, 1, f->s.size - sizeof h9, fp);
    fclose(fp);
    assert_int_equal(seg_open(&s, p2, err, sizeof err), 22);
    assert_non_null(strstr(err, "format 9, "));
    assert_non_null(strstr(err, "this hwemu reads format 11"));
    unlink(p2);
    assert_int_equal(seg_open(&s, "/nonexistent/x.seg", err, sizeof err), 2);
    assert_non_null(strstr(err, "cannot open the segment"));
}

static uint32_t entry(struct fixture *f, const char *p)
{
    return seg_lookup(&f->s, p, strlen(p));
}

static void publish_counter(struct seg *s, uint32_t v, uint64_t acc_uj, uint64_t power_uw, uint32_t seed_raw,
                            int64_t t0, uint32_t nsub)
{
    struct seg_value c = s->values[v];
    c.ctr.acc_uj = acc_uj;
    c.ctr.rem_nj = 0;
    c.ctr.power_uw = power_uw;
    c.ctr.seed_raw = seed_raw;
    c.ctr.start_uj = 1000;
    c.ctr.t0_ns = t0;
    c.nsub = nsub;
    seg_publish_begin(s);
    seg_publish_value(s, v, &c);
    seg_publish_end(s, t0);
}

static void test_counter_reads(void **st)
{
    struct fixture *f = *st;
    uint32_t e = entry(f, "sys/class/powercap/intel-rapl:0/energy_uj");
    int64_t t0 = 1000000000000LL;
    /* 1 W held (1e6 nJ per 1 ms substep), horizon 1000 substeps, unit 61035 nJ */
    publish_counter(&f->s, f->v_ctr, 6103500, 1000000, 0, t0, 1000);
    char tmp[SEG_TEXT_MAX];
    size_t len;
    const char *t = seg_read(&f->s, e, t0, tmp, &len);
    assert_int_equal(len, strlen("6103500\n"));
    assert_memory_equal(t, "6103500\n", len);                   /* raw 100000 */
    t = seg_read(&f->s, e, t0 + 500000000 + 999999, tmp, &len); /* 500.999 ms: substep 500 */
    assert_memory_equal(t, "6603498\n", len);                   /* raw 108192 */
    t = seg_read(&f->s, e, t0 - 5, tmp, &len);                  /* before t0: t0's value */
    assert_memory_equal(t, "6103500\n", len);
    t = seg_read(&f->s, e, t0 + 5000000000LL, tmp, &len);       /* past the horizon: frozen */
    assert_memory_equal(t, "7103497\n", len);                   /* raw 116384 */
    assert_int_equal(atomic_load(&f->s.hwm[f->v_ctr]), 1000 + 7103500);
    /* the file shows the low 32 bits of the register count, times the unit */
    publish_counter(&f->s, f->v_ctr, 366, 0, 4294967295u, t0, 1000);
    t = seg_read(&f->s, e, t0, tmp, &len);
    assert_memory_equal(t, "244\n", len);                       /* raw 2^32 + 4 wraps to 4 */
}

static void test_slot_overrides_snapshot(void **st)
{
    struct fixture *f = *st;
    uint32_t e = entry(f, "sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw");
    char tmp[SEG_TEXT_MAX];
    size_t len;
    const char *t = seg_read(&f->s, e, 0, tmp, &len);
    assert_int_equal(len, 10);
    assert_memory_equal(t, "165000000\n", 10);
    seg_slot_store(&f->s, e, "100000000\n", 10, 5);
    t = seg_read(&f->s, e, 0, tmp, &len);
    assert_memory_equal(t, "100000000\n", 10);
    uint64_t seq;
    char text[SEG_TEXT_MAX];
    assert_true(seg_slot_load(&f->s, f->s.entries[e].slot, &seq, text, &len));
    assert_int_equal(seq, 2);
    /* once the engine applied it, the snapshot is what shows */
    struct seg_value lim = f->s.values[f->v_limit];
    memcpy(lim.a.text, "100000000\n", 10);
    lim.len = 10;
    lim.a.applied = seq;
    seg_publish_begin(&f->s);
    seg_publish_value(&f->s, f->v_limit, &lim);
    seg_publish_end(&f->s, 0);
    t = seg_read(&f->s, e, 0, tmp, &len);
    assert_memory_equal(t, "100000000\n", 10);
}

static void test_events(void **st)
{
    struct fixture *f = *st;
    uint64_t tail = atomic_load(&f->s.h->ring_head), lost = 0;
    struct seg_event ev;
    assert_false(seg_event_pop(&f->s, &tail, &ev, &lost));
    seg_event_push(&f->s, 3, 0, "5\n", 2, 7, 99);
    seg_event_push(&f->s, 4, 61, "x\n", 2, 8, 99);
    assert_true(seg_event_pop(&f->s, &tail, &ev, &lost));
    assert_int_equal(ev.entry, 3);
    assert_int_equal(ev.err, 0);
    assert_true(seg_event_pop(&f->s, &tail, &ev, &lost));
    assert_int_equal(ev.err, 61);
    assert_false(seg_event_pop(&f->s, &tail, &ev, &lost));
    /* producers lapping the ring are counted, not silently lost */
    for (uint32_t i = 0; i < f->s.ring_cap + 10; i++)
        seg_event_push(&f->s, i, 0, "", 0, i, 1);
    int got = 0;
    while (seg_event_pop(&f->s, &tail, &ev, &lost))
        got++;
    assert_int_equal(got, (int)f->s.ring_cap);
    assert_int_equal(lost, 10);
}

static uint64_t ledger_total(const struct seg *s, uint64_t *seq)
{
    uint64_t t[4] = {0}, q = 0;
    if (!seg_ledger_read(s, &q, t))
        return UINT64_MAX;
    if (seq)
        *seq = q;
    return t[0];
}

static void test_ledger_survives_a_torn_write(void **st)
{
    struct fixture *f = *st;
    assert_int_equal(f->s.n_counters, 1);
    assert_int_equal(ledger_total(&f->s, NULL), UINT64_MAX); /* never written */
    uint64_t a = 111, b = 222, seq;
    seg_ledger_write(&f->s, 1, &a, 10);
    assert_int_equal(ledger_total(&f->s, NULL), 111);
    seg_ledger_write(&f->s, 2, &b, 20);
    ledger_total(&f->s, &seq);
    assert_int_equal(seq, 2);
    /* A kill while copy 3 is written: its sequence is 0 while the totals change. */
    struct seg_ledger *l3 = f->s.ledger[3 & 1];
    l3->seq = 0;
    l3->total_uj[0] = 999;
    assert_int_equal(ledger_total(&f->s, NULL), 222);
    /* A kill after the totals but with the old checksum: caught by the checksum. */
    l3->seq = 3;
    assert_int_equal(ledger_total(&f->s, NULL), 222);
    seg_ledger_write(&f->s, 3, &a, 30);
    ledger_total(&f->s, &seq);
    assert_int_equal(seq, 3);
}

/* --- hammer: readers against a publishing engine ----------------------------------------- */

struct hammer {
    struct fixture *f;
    _Atomic int stop;
    _Atomic long reads, torn, decreases;
};

static void *reader(void *arg)
{
    struct hammer *h = arg;
    uint32_t ec = entry(h->f, "sys/class/powercap/intel-rapl:0/energy_uj");
    uint32_t et = entry(h->f, "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq");
    uint64_t last = 0;
    char tmp[SEG_TEXT_MAX];
    size_t len;
    while (!atomic_load(&h->stop)) {
        const char *t = seg_read(&h->f->s, ec, seg_now_ns(), tmp, &len);
        uint64_t uj = strtoull(t, NULL, 10);
        if (uj < last)
            atomic_fetch_add(&h->decreases, 1);
        last = uj;
        t = seg_read(&h->f->s, et, 0, tmp, &len);
        /* the publisher writes texts of one repeated digit: a mix means a torn read */
        for (size_t i = 1; i + 1 < len; i++)
            if (t[i] != t[0])
                atomic_fetch_add(&h->torn, 1);
        if (len != 41 || t[len - 1] != '\n')
            atomic_fetch_add(&h->torn, 1);
        atomic_fetch_add(&h->reads, 1);
    }
    return NULL;
}

static void test_hammer(void **st)
{
    struct fixture *f = *st;
    struct hammer h = {.f = f};
    /* start from a text of the right shape */
    publish_counter(&f->s, f->v_ctr, 0, 0, 0, seg_now_ns(), 1000);
    struct seg_value tv = f->s.values[f->v_text];
    memset(tv.text, '0', 40);
    tv.text[40] = '\n';
    tv.len = 41;
    seg_publish_begin(&f->s);
    seg_publish_value(&f->s, f->v_text, &tv);
    seg_publish_end(&f->s, 0);
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, reader, &h);
    uint64_t acc = 0;
    int64_t start = seg_now_ns(), t0 = start;
    long publications = 0;
    /* Intervals of 2 ms with a changing power, published back to back: every read races a
     * publication, and each interval starts exactly where the previous one ends. */
    while (seg_now_ns() - start < 400000000) {
        uint64_t power = 1000000 + (uint64_t)(publications % 7) * 250000;
        char digit = (char)('0' + publications % 10);
        struct seg_value cv = f->s.values[f->v_ctr], xv = f->s.values[f->v_text];
        cv.ctr.acc_uj = acc;
        cv.ctr.power_uw = power;
        cv.ctr.t0_ns = t0;
        cv.nsub = 2;
        memset(xv.text, digit, 40);
        seg_publish_begin(&f->s);
        seg_publish_value(&f->s, f->v_ctr, &cv);
        seg_publish_value(&f->s, f->v_text, &xv);
        seg_publish_end(&f->s, t0);
        publications++;
        while (seg_now_ns() < t0 + 2000000)
            ;
        acc += power * 2 / 1000; /* two substeps at the held power */
        t0 += 2000000;
    }
    atomic_store(&h.stop, 1);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    fprintf(stderr, "hammer: %ld publications, %ld reads, %ld torn, %ld decreases\n", publications,
            (long)h.reads, (long)h.torn, (long)h.decreases);
    assert_true(h.reads > 1000);
    assert_int_equal(h.torn, 0);
    assert_int_equal(h.decreases, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_and_layout),
        cmocka_unit_test(test_builder_refuses_clashes),
        cmocka_unit_test(test_damaged_segment_is_refused),
        cmocka_unit_test(test_counter_reads),
        cmocka_unit_test(test_slot_overrides_snapshot),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_ledger_survives_a_torn_write),
        cmocka_unit_test(test_hammer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
