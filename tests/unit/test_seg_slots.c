/* Unit tests of the segment's slot directories (segment.h "Slots"), the cgroup views
 * (seg_view.h SEG_VIEW_CG_*) and a job's process views (SEG_VIEW_PID_*, SEG_VIEW_TEMPLATE): a slot resolves by its current name only while present, its
 * placeholder is never a name an absent slot answers to, nested slots follow their own ids,
 * seg_entry_present sees an absent ancestor, and cpu.stat / cpuset / memory.stat texts follow
 * the published values, what readers get from a publication a kill cut short (segment.h
 * "Snapshot publication"), and views read while a slow engine publishes. Expected texts are computed by hand from the values published here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seg_build.h"
#include "seg_view.h"
#include "segment.h"
#include "seg_tmp.h"

static char path[256];

struct fx {
    struct seg s;
    uint32_t v_id[2], v_cid, v_el, v_busy[2], v_unit, v_mask, v_mem, v_pid, v_info, v_name;
    uint32_t e_stat, e_cpus, e_mem, e_root;
};

#define SCOPE "sys/fs/cgroup/system.slice/slurmstepd.scope"

static int setup(void **st)
{
    seg_tmp_path(path, sizeof path, "slots.seg");
    struct fx *f = calloc(1, sizeof *f);
    struct seg_builder *b = segb_new();
    f->v_el = segb_value_counter(b, 1000, 64, false);
    f->v_busy[0] = segb_value_counter(b, 1000, 64, false);
    f->v_busy[1] = segb_value_counter(b, 1000, 64, false);
    uint32_t rp = segb_param(b, (struct seg_param){.a = f->v_el, .b = f->v_busy[0], .c = 2, .related = SEG_NONE}, NULL);
    segb_dynamic(b, "sys/fs/cgroup/cpu.stat", 0444, SEG_S, f->v_el, SEG_VIEW_CG_CPU_STAT, rp);
    segb_dir(b, SCOPE, 0755);
    segb_static(b, SCOPE "/cgroup.procs", 0444, "", 0);
    char dir[256], leaf[300];
    for (uint32_t k = 0; k < 2; k++) {
        f->v_id[k] = segb_value_text(b, "");
        assert_int_not_equal(segb_slot_dir(b, SCOPE, k, f->v_id[k], "job_\x01", dir, sizeof dir), SEG_NONE);
        char p2[300];
        snprintf(p2, sizeof p2, "%s/cgroup.procs", dir);
        segb_static(b, p2, 0444, "", 0);
        if (k == 0) {
            f->v_unit = segb_value_counter(b, 1000, 64, false);
            f->v_mask = segb_value_text(b, "");
            f->v_mem = segb_value_text(b, "0\n");
            uint32_t up = segb_param(
                b, (struct seg_param){.a = f->v_el, .b = f->v_unit, .c = 1, .d = 1, .related = SEG_NONE}, NULL);
            snprintf(p2, sizeof p2, "%s/cpu.stat", dir);
            segb_dynamic(b, p2, 0444, SEG_S, f->v_unit, SEG_VIEW_CG_CPU_STAT, up);
            uint32_t mp = segb_param(b, (struct seg_param){.a = f->v_mask, .b = 1, .related = SEG_NONE}, NULL);
            snprintf(p2, sizeof p2, "%s/cpuset.cpus.effective", dir);
            segb_dynamic(b, p2, 0444, SEG_S, f->v_mask, SEG_VIEW_CG_CPUS, mp);
            uint32_t sp = segb_param(b, (struct seg_param){.a = f->v_mem, .related = SEG_NONE}, NULL);
            snprintf(p2, sizeof p2, "%s/memory.stat", dir);
            segb_dynamic(b, p2, 0444, SEG_S, f->v_mem, SEG_VIEW_CG_MEMORY_STAT, sp);
            /* a nested slot: the container of slot 0, named from its own id (twice) */
            f->v_cid = segb_value_text(b, "");
            assert_int_not_equal(segb_slot_dir(b, dir, 0, f->v_cid, "c-\x01\x01.scope", leaf, sizeof leaf), SEG_NONE);
            snprintf(p2, sizeof p2, "%s/cgroup.procs", leaf);
            segb_static(b, p2, 0444, "7\n", 2);
        }
    }
    /* a job's process (render_jobproc.c's layout): proc/<pid> over slot 0's values */
    f->v_pid = segb_value_text(b, "");
    f->v_info = segb_value_text(b, "");
    f->v_name = segb_value_text(b, "");
    assert_int_not_equal(segb_slot_dir(b, "proc", 0, f->v_pid, "\x01", dir, sizeof dir), SEG_NONE);
    uint32_t pv = segb_param(b, (struct seg_param){.a = f->v_el, .b = f->v_unit, .c = f->v_info, .d = f->v_mem,
                                                   .related = SEG_NONE}, "hwemu-job");
    static const char *const pfiles[] = {"stat", "status", "statm"};
    static const uint16_t pviews[] = {SEG_VIEW_PID_STAT, SEG_VIEW_PID_STATUS, SEG_VIEW_PID_STATM};
    for (int i = 0; i < 3; i++) {
        char p2[300];
        snprintf(p2, sizeof p2, "%s/%s", dir, pfiles[i]);
        segb_dynamic(b, p2, 0444, SEG_S, f->v_info, pviews[i], pv);
    }
    char tpl[64], p3[300];
    int tl = snprintf(tpl, sizeof tpl, "hwemu-job\x03\x01%u\x02\x03", f->v_name);
    uint32_t tp = segb_param(b, (struct seg_param){.a = tl, .b = 1, .related = SEG_NONE}, tpl);
    snprintf(p3, sizeof p3, "%s/cmdline", dir);
    segb_dynamic(b, p3, 0444, SEG_S, f->v_name, SEG_VIEW_TEMPLATE, tp);
    /* out of order: slot 3 before 2 is refused */
    struct seg_builder *bad = segb_new();
    uint32_t v = segb_value_text(bad, "");
    segb_dir(bad, "d", 0755);
    segb_slot_dir(bad, "d", 1, v, "x\x01", dir, sizeof dir);
    assert_int_equal(segb_errors(bad, NULL), 1);
    segb_free(bad);
    assert_int_equal(segb_errors(b, NULL), 0);
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

static void text(struct seg_value *v, const char *t, size_t len)
{
    memset(v, 0, sizeof *v);
    v->type = SEG_V_TEXT;
    memcpy(v->text, t, len);
    v->len = (uint8_t)len;
}

/* A time counter line: base ns at t0, rate ns per 1 ms substep, horizon nsub substeps. */
static void line(struct seg_value *v, uint64_t base_ns, uint64_t rate, int64_t t0, uint32_t nsub)
{
    memset(v, 0, sizeof *v);
    v->type = SEG_V_COUNTER;
    v->wrap_bits = 64;
    v->ctr.unit_nj = 1000;
    v->ctr.acc_uj = base_ns / 1000;
    v->ctr.rem_nj = (uint32_t)(base_ns % 1000);
    v->ctr.power_uw = rate;
    v->ctr.t0_ns = t0;
    v->nsub = nsub;
}

/* Publishes ids (NULL: leave) and the rest of the values at t0. */
static void publish(struct fx *f, const char *id0, const char *id1, const char *cid, int64_t t0)
{
    struct seg *s = &f->s;
    struct seg_value *c = seg_tmp_scratch(s);
    if (id0)
        text(&c[f->v_id[0]], id0, strlen(id0));
    if (id1)
        text(&c[f->v_id[1]], id1, strlen(id1));
    if (cid)
        text(&c[f->v_cid], cid, strlen(cid));
    line(&c[f->v_el], 10000000000ULL, 1000000, t0, 1000);       /* 10 s elapsed */
    line(&c[f->v_busy[0]], 4000000000ULL, 500000, t0, 1000);    /* CPU 0: 4 s, half busy */
    line(&c[f->v_busy[1]], 12000000000ULL, 1000000, t0, 1000);  /* CPU 1: above elapsed: capped */
    line(&c[f->v_unit], 25000000000ULL + 999, 2000000, t0, 1000); /* unit: 25 s on 2 CPUs, not capped */
    unsigned char mask[SEG_TEXT_MAX] = {0};
    mask[0] = 0x0f | 0x40; /* CPUs 0-3, 6 */
    mask[1] = 0x80;        /* CPU 15 */
    text(&c[f->v_mask], (const char *)mask, SEG_TEXT_MAX);
    text(&c[f->v_mem], "1000000\n", 8);
    seg_tmp_publish(s, c, t0);
}

static int res(struct fx *f, const char *p, uint32_t *e)
{
    return seg_resolve(&f->s, p, strlen(p), true, e);
}

static void test_names_and_presence(void **st)
{
    struct fx *f = *st;
    uint32_t e, e2;
    publish(f, "", "", "", 1000);
    /* absent: by no name, the placeholder included, nor anything under it */
    assert_int_equal(res(f, SCOPE "/job_", &e), ENOENT);
    assert_int_equal(res(f, SCOPE "/\x01" "0", &e), ENOENT);
    assert_int_equal(res(f, SCOPE "/\x01" "0/cgroup.procs", &e), ENOENT);
    assert_int_equal(res(f, SCOPE "/cgroup.procs", &e), 0);

    publish(f, "4217", "", NULL, 1000);
    assert_int_equal(res(f, SCOPE "/job_4217", &e), 0);
    assert_true(f->s.entries[e].flags & SEG_F_SLOT);
    char name[SEG_SLOT_NAME_MAX + 1];
    assert_int_equal(seg_slot_name(&f->s, e, name, sizeof name), 8);
    assert_string_equal(name, "job_4217");
    assert_int_equal(res(f, SCOPE "/job_4217/cgroup.procs", &e2), 0);
    assert_int_equal(f->s.entries[e2].parent, e);
    assert_int_equal(res(f, SCOPE "/job_4217/../job_4217/./cgroup.procs", &e2), 0);
    assert_int_equal(res(f, SCOPE "/job_4218", &e), ENOENT);
    assert_int_equal(res(f, SCOPE "/job_421", &e), ENOENT);
    assert_int_equal(res(f, SCOPE "/job_4217x/cgroup.procs", &e), ENOENT);
    /* the nested container is absent while its own id is empty */
    assert_int_equal(res(f, SCOPE "/job_4217/c-.scope", &e), ENOENT);

    /* a new id in the same slot: the old name is gone at once, the new one resolves */
    publish(f, "99", "4217", "ab", 1000);
    assert_int_equal(res(f, SCOPE "/job_99/cgroup.procs", &e), 0);
    assert_int_equal(res(f, SCOPE "/job_4217", &e2), 0); /* now slot 1 */
    assert_int_not_equal(e, e2);
    assert_int_equal(res(f, SCOPE "/job_99/c-abab.scope/cgroup.procs", &e), 0);
    size_t len;
    char tmp[SEG_TEXT_MAX];
    const char *t = seg_read(&f->s, e, 1000, tmp, &len);
    assert_true(len == 2 && !memcmp(t, "7\n", 2));
    assert_true(seg_entry_present(&f->s, e));

    /* the parent slot goes: its nested child is gone with it, whatever its own id */
    publish(f, "", NULL, NULL, 1000);
    assert_false(seg_entry_present(&f->s, e));
    assert_int_equal(res(f, SCOPE "/job_99/c-abab.scope/cgroup.procs", &e2), ENOENT);
    assert_int_equal(res(f, SCOPE "/\x01" "0/\x01" "0/cgroup.procs", &e2), ENOENT);

    /* a slash in an id is not a name: the slot counts as absent */
    publish(f, "a/b", NULL, NULL, 1000);
    assert_int_equal(res(f, SCOPE "/job_a", &e), ENOENT);
    e = seg_lookup(&f->s, SCOPE "/\x01" "0", strlen(SCOPE) + 3);
    assert_int_not_equal(e, SEG_NONE);
    assert_int_equal(seg_slot_name(&f->s, e, name, sizeof name), 0);
}

static void test_views(void **st)
{
    struct fx *f = *st;
    publish(f, "1", "", "", 1000);
    char buf[4096];
    uint32_t e;
    /* 5 ms after t0: elapsed 10.005 s; CPU 0 4 s + 5 × 0.5 ms; CPU 1 capped at elapsed */
    int64_t now = 1000 + 5 * 1000000 + 10;
    assert_int_equal(res(f, "sys/fs/cgroup/cpu.stat", &e), 0);
    size_t n = seg_view_render(&f->s, e, now, buf, sizeof buf);
    buf[n] = 0;
    /* usage = (4002500000 + 10005000000) ns = 14007500 us; user = floor(0.9 usage) */
    assert_string_equal(buf, "usage_usec 14007500\nuser_usec 12606750\nsystem_usec 1400750\nnr_periods 0\n"
                             "nr_throttled 0\nthrottled_usec 0\nnr_bursts 0\nburst_usec 0\n");
    assert_int_equal(res(f, SCOPE "/job_1/cpu.stat", &e), 0);
    n = seg_view_render(&f->s, e, now, buf, sizeof buf);
    buf[n] = 0;
    /* the unit's own line, above the elapsed time (two CPUs): 25 s + 999 ns + 5 × 2 ms */
    assert_non_null(strstr(buf, "usage_usec 25010000\nuser_usec 22509000\nsystem_usec 2501000\n"));
    /* frozen at the horizon (1000 substeps) */
    n = seg_view_render(&f->s, e, 1000 + 5000 * 1000000LL, buf, sizeof buf);
    buf[n] = 0;
    assert_non_null(strstr(buf, "usage_usec 27000000\n"));
    assert_int_equal(res(f, SCOPE "/job_1/cpuset.cpus.effective", &e), 0);
    n = seg_view_render(&f->s, e, now, buf, sizeof buf);
    buf[n] = 0;
    assert_string_equal(buf, "0-3,6,15\n");
    assert_int_equal(res(f, SCOPE "/job_1/memory.stat", &e), 0);
    n = seg_view_render(&f->s, e, now, buf, sizeof buf);
    buf[n] = 0;
    /* 1000000 bytes: anon 94 %, file 4 %, kernel the rest */
    assert_true(!strncmp(buf, "anon 940000\nfile 40000\nkernel 20000\n", 36));
    assert_true(n <= seg_view_bound(&f->s, e));
}

/* Publishes the process values (pid "" = the slot is free) over publish()'s lines. */
static void publish_proc(struct fx *f, const char *pid, const char *info, const char *name, int64_t t0)
{
    struct seg *s = &f->s;
    struct seg_value *c = seg_tmp_scratch(s);
    text(&c[f->v_pid], pid, strlen(pid));
    text(&c[f->v_info], info, strlen(info));
    text(&c[f->v_name], name, strlen(name));
    seg_tmp_publish(s, c, t0);
}

static size_t show(struct fx *f, const char *p, int64_t now, char *buf, size_t cap)
{
    uint32_t e;
    assert_int_equal(res(f, p, &e), 0);
    size_t n = seg_view_render(&f->s, e, now, buf, cap);
    assert_true(n <= seg_view_bound(&f->s, e));
    buf[n] = 0;
    return n;
}

static void test_process_views(void **st)
{
    struct fx *f = *st;
    uint32_t e;
    publish(f, "1", "", "", 1000);
    publish_proc(f, "", "", "", 1000);
    assert_int_equal(res(f, "proc/4194304/stat", &e), ENOENT); /* a free slot: no process */
    publish_proc(f, "4194304", "4194304 120 2 4\n", "job-a", 1000);
    char buf[4096];
    int64_t now = 1000 + 5 * 1000000 + 10;
    /* the unit's CPU time 25.010000999 s (test_views): usage 25010000 us, user_usec 22509000,
     * system_usec 2501000, so utime 2250 and stime 250 ticks; memory 1000000 bytes: rss 244
     * pages, vsize (244 + 61) pages + 16 MiB = 18026496; running (rate 2 ms per substep) */
    show(f, "proc/4194304/stat", now, buf, sizeof buf);
    assert_string_equal(buf, "4194304 (hwemu-job) R 1 4194304 4194304 0 -1 4194304 0 0 0 0 2250 250 0 0 20 0 2 0 120 "
                             "18026496 244 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 4 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
    int fields = 0;
    for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
        fields++;
    assert_int_equal(fields, 52); /* fs/proc/array.c do_task_stat */
    /* frozen at the horizon: 27 s of CPU time, never more */
    show(f, "proc/4194304/stat", 1000 + 5000 * 1000000LL, buf, sizeof buf);
    assert_non_null(strstr(buf, " 2430 270 0 0 "));
    show(f, "proc/4194304/status", now, buf, sizeof buf);
    assert_non_null(strstr(buf, "Name:\thwemu-job\n"));
    assert_non_null(strstr(buf, "State:\tR (running)\nTgid:\t4194304\n"));
    assert_non_null(strstr(buf, "\nPid:\t4194304\nPPid:\t1\n"));
    assert_non_null(strstr(buf, "VmRSS:\t     976 kB\nRssAnon:\t     917 kB\nRssFile:\t      59 kB\n"));
    assert_non_null(strstr(buf, "\nThreads:\t2\n"));
    /* statm: size resident shared text lib data dt; shared = 244 - 244 * 94 / 100 = 15 */
    show(f, "proc/4194304/statm", now, buf, sizeof buf);
    assert_string_equal(buf, "4401 244 15 1 0 229 0\n");
    size_t n = show(f, "proc/4194304/cmdline", now, buf, sizeof buf);
    assert_int_equal(n, 16);
    assert_memory_equal(buf, "hwemu-job\0job-a\0", 16);
    /* the slot freed: the process is gone by its pid */
    publish_proc(f, "", "", "", 1000);
    assert_int_equal(res(f, "proc/4194304/stat", &e), ENOENT);
}

/* An engine killed inside a value's store (segment.h "Snapshot publication"): the generation odd,
 * the journal holding the value's new text whole, its place half old and half new. A reader of
 * that value gets the journal's; the views cannot answer (SEG_VIEW_EIO) until an engine heals
 * the file (seg_journal_heal, which takes only a value of the template's type). And one killed
 * inside the journal's store: every value of the copy is whole, and the views answer with the
 * values as they stand. */
static void test_killed_mid_store(void **st)
{
    struct fx *f = *st;
    struct seg *s = &f->s;
    publish(f, "1", "", "", 1000);
    int64_t now = 1000 + 5 * 1000000 + 10;
    char buf[4096], before[4096];
    uint32_t e;
    assert_int_equal(res(f, "sys/fs/cgroup/cpu.stat", &e), 0);
    size_t n = seg_view_render(s, e, now, before, sizeof before);
    assert_true(n > 0 && n < sizeof before);
    before[n] = 0;
    struct seg_value *tmpl = seg_tmp_scratch(s); /* the values' types, as a template has them */

    uint32_t v = f->v_busy[0];
    struct seg_value old = s->values[v], nv = old, got;
    line(&nv, 5000000000ULL, 250000, 2000, 1000); /* CPU 0: 5 s at t0 + 1 us, a quarter busy */
    seg_publish_begin(s);
    struct seg_journal *j = s->journal;
    uint64_t q = atomic_load(&j->seq);
    assert_int_equal(q & 1, 0);
    atomic_store(&j->seq, q + 1);
    j->value = v;
    j->v = nv;
    atomic_store(&j->seq, q + 2);
    memcpy(&s->values[v], &nv, 24); /* killed here: acc_uj and power_uw new, t0_ns old */
    assert_memory_not_equal(&s->values[v], &nv, sizeof nv);
    assert_true(seg_value_load(s, v, &got));
    assert_memory_equal(&got, &nv, sizeof nv);
    assert_true(seg_values_torn(s));
    assert_int_equal(seg_view_render(s, e, now, buf, sizeof buf), SEG_VIEW_EIO);

    /* a journal of another type is not taken */
    struct seg_value keep = j->v;
    j->v.type = SEG_V_TEXT;
    seg_journal_heal(s, tmpl);
    assert_true(seg_values_torn(s));
    j->v = keep;
    /* the next engine's heal: the value whole in its place, the views answer */
    seg_journal_heal(s, tmpl);
    assert_memory_equal(&s->values[v], &nv, sizeof nv);
    assert_false(seg_values_torn(s));
    n = seg_view_render(s, e, now, buf, sizeof buf);
    assert_true(n > 0 && n < sizeof buf);
    buf[n] = 0;
    assert_string_not_equal(buf, before); /* the new busy line */
    seg_publish_end(s, now);

    /* killed inside the journal's store: the journal half written, every value whole */
    seg_publish_begin(s);
    q = atomic_load(&j->seq);
    atomic_store(&j->seq, q + 1);
    j->value = v;
    memset(&j->v, 0x5a, 40);
    assert_false(seg_values_torn(s));
    assert_true(seg_value_load(s, v, &got));
    assert_memory_equal(&got, &nv, sizeof nv);
    size_t n2 = seg_view_render(s, e, now, before, sizeof before);
    assert_int_equal(n2, n);
    before[n2] = 0;
    assert_string_equal(before, buf);
    seg_journal_heal(s, tmpl); /* nothing to put in place; the sequence goes on past the journal's */
    assert_int_equal(s->pub_jseq, q + 2);
    seg_publish_end(s, now);
    free(tmpl);
}

/* --- views against a publishing engine -------------------------------------------------------- */

struct view_hammer {
    struct fx *f;
    uint32_t e;
    _Atomic int stop;
    _Atomic long reads, decreases, errors;
};

static void *view_reader(void *arg)
{
    struct view_hammer *h = arg;
    char buf[4096];
    uint64_t last = 0;
    while (!atomic_load(&h->stop)) {
        size_t n = seg_view_render(&h->f->s, h->e, seg_now_ns(), buf, sizeof buf);
        if (n == 0 || n >= sizeof buf) {
            atomic_fetch_add(&h->errors, 1);
            continue;
        }
        buf[n] = 0;
        uint64_t usage = strtoull(buf + strlen("usage_usec "), NULL, 10);
        if (usage < last)
            atomic_fetch_add(&h->decreases, 1);
        last = usage;
        atomic_fetch_add(&h->reads, 1);
    }
    return NULL;
}

/* A cgroup's cpu.stat read while the engine publishes every 30 ms, each publication paused after
 * the busy lines for longer than a reader waits (SEG_PUBLISH_WAIT_NS: a stopped engine, for the
 * readers, which then read the values as they stand) with the elapsed line last, as
 * node_publish orders it: the busy rates change at every publication, so an old line read past
 * its horizon would show more than the next read. Expected: usage never goes back, and every
 * read answers. */
static void test_views_hammer(void **st)
{
    struct fx *f = *st;
    struct seg *s = &f->s;
    struct view_hammer h = {.f = f};
    assert_int_equal(res(f, "sys/fs/cgroup/cpu.stat", &h.e), 0);
    const int64_t period = 30000000, pause = SEG_PUBLISH_WAIT_NS + 5000000;
    int64_t start = seg_now_ns(), t0 = start;
    uint64_t el = 10000000000ULL, b0 = 1000000000ULL, b1 = 2000000000ULL;
    pthread_t th[2];
    long publications = 0;
    for (;;) {
        uint64_t r0 = publications % 2 ? 900000 : 100000, r1 = publications % 3 ? 200000 : 800000;
        struct seg_value v0, v1, ve;
        line(&v0, b0, r0, t0, UINT32_MAX);
        line(&v1, b1, r1, t0, UINT32_MAX);
        line(&ve, el, 1000000, t0, (uint32_t)(period / 1000000));
        seg_publish_begin(s);
        seg_publish_value(s, f->v_busy[0], &v0);
        seg_publish_value(s, f->v_busy[1], &v1);
        for (int64_t until = seg_now_ns() + pause; seg_now_ns() < until;)
            ;
        seg_publish_value(s, f->v_el, &ve);
        seg_publish_end(s, t0);
        if (publications++ == 0)
            for (int i = 0; i < 2; i++)
                pthread_create(&th[i], NULL, view_reader, &h);
        /* enough of both, counted rather than timed (a loaded host gives the three threads
         * little CPU); 60 s of wall time at most, then the asserts below say which fell short */
        if ((publications >= 20 && atomic_load(&h.reads) > 100) || seg_now_ns() - start > 60000000000LL)
            break;
        while (seg_now_ns() < t0 + period)
            ;
        b0 += r0 * (uint64_t)(period / 1000000);
        b1 += r1 * (uint64_t)(period / 1000000);
        el += (uint64_t)period;
        t0 += period;
    }
    atomic_store(&h.stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_true(publications >= 20);
    assert_true(h.reads > 100);
    assert_int_equal(h.errors, 0);
    assert_int_equal(h.decreases, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_names_and_presence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_views, setup, teardown),
        cmocka_unit_test_setup_teardown(test_process_views, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_mid_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_views_hammer, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
