/* Unit tests of the segment's defences (engine/segment/segment.h "Trust" and "Resume",
 * docs/robustness.md): seg_check and seg_check_static refusing hostile headers, readers bounding
 * what they index and divide by, the zero page after a mapping, the read-only static pages and
 * static file, the SIGBUS guard on either file shrinking and growing back, a missing or foreign
 * static file, the event ring resynchronising, the resume rule, and the
 * creation of a segment (no symlink followed, no .tmp left when the space cannot be reserved). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seg_attr.h"
#include "seg_build.h"
#include "segment.h"
#include "seg_tmp.h"

static char path[256];
static struct seg w; /* the writer's (engine's) mapping, read-write whole */
static uint32_t v_ctr, e_ctr, e_name, e_limit;

static int build(void)
{
    struct seg_builder *b = segb_new();
    segb_static(b, "sys/class/powercap/intel-rapl:0/name", 0444, "package-0\n", 10);
    for (int i = 0; i < 400; i++) { /* static pages enough for a whole read-only page */
        char p[64];
        snprintf(p, sizeof p, "sys/devices/system/cpu/cpu%d/online", i);
        segb_static(b, p, 0444, "1\n", 2);
    }
    for (int i = 0; i < 160; i++) { /* snapshot values enough for a whole read-only page */
        char p[80];
        snprintf(p, sizeof p, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", i);
        segb_dynamic(b, p, 0444, SEG_S, segb_value_text(b, "1000000\n"), 0, SEG_NONE);
    }
    v_ctr = segb_value_counter(b, 61035, 32, false);
    uint32_t vl = segb_value_text(b, "165000000\n");
    segb_dynamic(b, "sys/class/powercap/intel-rapl:0/energy_uj", 0444, SEG_S, v_ctr, 0, SEG_NONE);
    segb_dynamic(b, "sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw", 0644, SEG_A, vl, 0, SEG_NONE);
    int rc = seg_tmp_write(b, path, &w);
    e_ctr = seg_lookup(&w, "sys/class/powercap/intel-rapl:0/energy_uj", 41);
    e_name = seg_lookup(&w, "sys/class/powercap/intel-rapl:0/name", 36);
    e_limit = seg_lookup(&w, "sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw", 60);
    return rc;
}

static int setup(void **st)
{
    (void)st;
    seg_tmp_path(path, sizeof path, "robust.seg");
    return build();
}

static int teardown(void **st)
{
    (void)st;
    seg_tmp_close(&w);
    return 0;
}

/* The static file mapped writable, as a hostile process that can write the root could map it. */
static uint8_t *static_rw(size_t *size, int *fd)
{
    char sp[300];
    assert_int_equal(seg_static_path(path, w.h->layout_hash, sp, sizeof sp), 0);
    *fd = open(sp, O_RDWR);
    assert_true(*fd >= 0);
    struct stat sb;
    assert_int_equal(fstat(*fd, &sb), 0);
    *size = (size_t)sb.st_size;
    uint8_t *m = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    assert_true(m != MAP_FAILED);
    return m;
}

/* Each hostile header field alone is refused with a message. */
static void test_check_refuses_hostile_headers(void **st)
{
    (void)st;
    struct seg_header keep = *w.h;
    char err[200];
#define REFUSED(stmt)                                                                                                \
    do {                                                                                                             \
        *w.h = keep;                                                                                                 \
        stmt;                                                                                                        \
        assert_int_equal(seg_check(&w, err, sizeof err), EINVAL);                                                    \
    } while (0)
    REFUSED(w.h->substep_ns = 0);
    REFUSED(w.h->substep_ns = -5);
    REFUSED(w.h->ring_cap = 3);
    REFUSED(w.h->ring_cap = 0);
    REFUSED(w.h->n_counters = w.h->n_values + 1);
    REFUSED(w.h->n_slots = 0xfffffff0u);
    REFUSED(w.h->values_off = 0xfffffff8u);
    REFUSED(w.h->journal_off = 0xfffffff8u);
    REFUSED(w.h->hwm_off += 4); /* misaligned: atomics live there */
    REFUSED(w.h->ledger_size = 8);
    REFUSED(w.h->file_size = 1);
    REFUSED(w.h->magic[0] = 'x');
    *w.h = keep;
    assert_int_equal(seg_check(&w, err, sizeof err), 0);
#undef REFUSED
}

/* The static file: each hostile field of its header alone, a node header whose counts or hash
 * are not the file's, and an entry pointing outside the tables are refused with a message. */
static void test_check_refuses_hostile_static(void **st)
{
    (void)st;
    size_t size;
    int fd;
    uint8_t *m = static_rw(&size, &fd);
    struct seg_static_header *sh = (struct seg_static_header *)m, keep = *sh;
    struct seg_header hkeep = *w.h;
    struct seg_entry *e0 = (struct seg_entry *)(m + sh->entries_off), ekeep = *e0;
    char err[200];
#define REFUSED(stmt)                                                                                                \
    do {                                                                                                             \
        *sh = keep;                                                                                                  \
        *w.h = hkeep;                                                                                                \
        *e0 = ekeep;                                                                                                 \
        stmt;                                                                                                        \
        err[0] = 0;                                                                                                  \
        assert_int_equal(seg_check_static(&w, m, size, err, sizeof err), EINVAL);                                    \
        assert_true(err[0] != 0);                                                                                    \
    } while (0)
    REFUSED(sh->magic[0] = 'x');
    REFUSED(sh->version = 1);
    REFUSED(sh->file_size = size + 1);
    REFUSED(sh->layout_hash ^= 1);
    REFUSED(w.h->layout_hash ^= 1);
    REFUSED(w.h->n_entries = 0xffffffffu);
    REFUSED(w.h->strings_size = 0);
    REFUSED(sh->n_entries = 0xffffffffu);
    REFUSED(sh->entries_off += 4);
    REFUSED(sh->params_off = 0xfffffff8u);
    REFUSED(sh->strings_size = 0);
    REFUSED(e0->parent = 0xfffffff0u);
    REFUSED(e0->value = w.h->n_values);
    REFUSED(e0->text_len = 0xffffffffu);
    REFUSED(m[sh->strings_off + sh->strings_size - 1] = 'x');
    *sh = keep;
    *w.h = hkeep;
    *e0 = ekeep;
    m[sh->strings_off + sh->strings_size - 1] = 0;
    assert_int_equal(seg_check_static(&w, m, size, err, sizeof err), 0);
#undef REFUSED
    munmap(m, size);
    close(fd);
}

/* A reader's counts are private: the shared header changing after the open moves nothing. */
static void test_reader_keeps_private_counts(void **st)
{
    (void)st;
    struct seg r;
    char err[256], tmp[SEG_TEXT_MAX];
    size_t len;
    assert_int_equal(seg_open(&r, path, err, sizeof err), 0);
    int64_t sub = w.h->substep_ns;
    uint32_t ne = w.h->n_entries, nv = w.h->n_values, rc = w.h->ring_cap;
    w.h->substep_ns = 0; /* would be a SIGFPE in a reader that divides by the shared value */
    w.h->n_entries = 0xffffffffu;
    w.h->n_values = 0xffffffffu;
    w.h->ring_cap = 0;
    assert_non_null(seg_read(&r, e_ctr, seg_now_ns(), tmp, &len));
    assert_true(len > 0 && tmp[len - 1] == '\n');
    assert_non_null(seg_read(&r, 0xfffffff0u, seg_now_ns(), tmp, &len));
    assert_int_equal(len, 0);
    assert_string_equal(seg_path(&r, 0xfffffff0u), "");
    seg_event_push(&r, 1, 0, "x", 1, 1, 1); /* the ring is indexed by the private capacity */
    w.h->substep_ns = sub;
    w.h->n_entries = ne;
    w.h->n_values = nv;
    w.h->ring_cap = rc;
    seg_close(&r);
}

/* Junk in the entry table and a string pool without its last NUL, written by another mapping
 * after the reader checked the file: reads and lookups stay in bounds. */
static void test_reader_bounds_shared_entries(void **st)
{
    (void)st;
    struct seg r;
    char err[256], tmp[SEG_TEXT_MAX];
    size_t len;
    assert_int_equal(seg_open(&r, path, err, sizeof err), 0);
    size_t size;
    int fd;
    uint8_t *m = static_rw(&size, &fd);
    const struct seg_static_header *sh = (const struct seg_static_header *)m;
    struct seg_entry *e = (struct seg_entry *)(m + sh->entries_off), keep[8];
    uint32_t n = w.n_entries < 8 ? w.n_entries : 8;
    memcpy(keep, e, sizeof keep[0] * n);
    char *strs = (char *)(m + sh->strings_off);
    char last = strs[w.strings_size - 1];
    for (uint32_t i = 0; i < n; i++) {
        e[i].path_off = 0xfffffff0u;
        e[i].text_off = 0xffffff00u;
        e[i].text_len = 0xffffffffu;
        e[i].value = 0x7ffffff0u;
        e[i].slot = 0x7ffffff0u;
        e[i].param = 0xfffffffeu;
        e[i].kind = SEG_FILE;
        e[i].cls = SEG_A;
    }
    /* everything after the pool made non-zero up to the end of the file: only the guard page
     * ends a string now */
    memset(strs + w.strings_size - 1, 'x', 1);
    for (uint32_t i = 0; i < n; i++) {
        assert_non_null(seg_read(&r, i, seg_now_ns(), tmp, &len));
        assert_true(len <= SEG_TEXT_MAX);
        assert_string_equal(seg_path(&r, i), "");
    }
    uint32_t ent;
    assert_int_equal(seg_lookup(&r, "zzz", 3), SEG_NONE);
    (void)seg_resolve(&r, "sys/class/powercap/intel-rapl:0/name", 36, true, &ent);
    bool changes;
    char out[SEG_TEXT_MAX];
    size_t olen;
    assert_int_equal(seg_attr_store(&r, 0xfffffff0u, "1\n", 2, 0, out, &olen, &changes), EIO);
    uint64_t seq;
    assert_false(seg_slot_load(&r, 0x7ffffff0u, &seq, out, &olen));
    memcpy(e, keep, sizeof keep[0] * n);
    strs[w.strings_size - 1] = last;
    munmap(m, size);
    close(fd);
    seg_close(&r);
}

/* A stray store at p in a forked reader: true when it was a SIGSEGV. */
static bool store_faults(volatile uint8_t *p)
{
    pid_t c = fork();
    if (c == 0) {
        signal(SIGSEGV, SIG_DFL); /* not the test harness's handler */
        *p = 1;
        _exit(0);
    }
    int status;
    waitpid(c, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

/* The snapshot copies and the whole static file are read-only in a reader's mapping: a stray
 * store is a SIGSEGV of the storing process, not a damaged segment. */
static void test_reader_static_pages_read_only(void **st)
{
    (void)st;
    struct seg r;
    char err[256];
    assert_int_equal(seg_open(&r, path, err, sizeof err), 0);
    long ps = sysconf(_SC_PAGESIZE);
    assert_true((uint64_t)w.h->slots_off >= 2 * (uint64_t)ps); /* a whole page of values (build) */
    assert_true(store_faults(r.base + ps));
    assert_true(store_faults((volatile uint8_t *)r.entries));
    assert_true(store_faults((volatile uint8_t *)r.strings + r.strings_size - 1));
    assert_false(store_faults(r.base + w.h->slots_off)); /* the slots are the agents' to write */
    seg_close(&r);
}

/* A file shrinking under a reader: EIO (a NULL read), no SIGBUS; grown back, it reads again. */
static void test_sigbus_guard(void **st)
{
    (void)st;
    struct seg r;
    char err[256], tmp[SEG_TEXT_MAX];
    size_t len;
    assert_int_equal(seg_open(&r, path, err, sizeof err), 0); /* installs the guard over cmocka's handler */
    assert_non_null(seg_read(&r, e_ctr, seg_now_ns(), tmp, &len));
    size_t size = w.size;
    uint8_t *save = malloc(size);
    memcpy(save, w.base, size);
    assert_int_equal(ftruncate(w.fd, 0), 0);
    assert_null(seg_read(&r, e_ctr, seg_now_ns(), tmp, &len)); /* the engine's page was lost: EIO */
    assert_int_equal(len, 0);
    assert_true(seg_faulted(&r));
    assert_null(seg_read(&r, e_name, seg_now_ns(), tmp, &len));
    /* the engine grows it back and rewrites it */
    assert_int_equal(ftruncate(w.fd, (off_t)size), 0);
    assert_int_equal(seg_revalidate(&w), 0);
    memcpy(w.base, save, size);
    free(save);
    const char *t = seg_read(&r, e_name, seg_now_ns(), tmp, &len);
    assert_non_null(t);
    assert_memory_equal(t, "package-0\n", 10);
    assert_false(seg_faulted(&r));
    seg_close(&r);
}

/* The static file shrinking under a reader: EIO too; grown back and rewritten, it reads again. */
static void test_sigbus_guard_static(void **st)
{
    (void)st;
    struct seg r;
    char err[256], tmp[SEG_TEXT_MAX];
    size_t len, size;
    int fd;
    assert_int_equal(seg_open(&r, path, err, sizeof err), 0);
    uint8_t *m = static_rw(&size, &fd);
    uint8_t *save = malloc(size);
    memcpy(save, m, size);
    munmap(m, size);
    assert_int_equal(ftruncate(fd, 0), 0);
    assert_null(seg_read(&r, e_name, seg_now_ns(), tmp, &len)); /* its text's page was lost */
    assert_true(seg_faulted(&r));
    assert_int_equal(pwrite(fd, save, size, 0), (ssize_t)size);
    free(save);
    const char *t = seg_read(&r, e_name, seg_now_ns(), tmp, &len);
    assert_non_null(t);
    assert_memory_equal(t, "package-0\n", 10);
    assert_false(seg_faulted(&r));
    close(fd);
    seg_close(&r);
}

/* A segment whose static file is missing, or is another layout's, is refused with a message
 * that names the static file. */
static void test_missing_or_foreign_static(void **st)
{
    (void)st;
    char sp[300], moved[320], err[600];
    struct seg r;
    assert_int_equal(seg_static_path(path, w.h->layout_hash, sp, sizeof sp), 0);
    snprintf(moved, sizeof moved, "%s.away", sp);
    assert_int_equal(rename(sp, moved), 0);
    assert_int_equal(seg_open(&r, path, err, sizeof err), ENOENT);
    assert_non_null(strstr(err, sp));
    assert_non_null(strstr(err, "the engine writes it when it starts"));
    assert_int_equal(rename(moved, sp), 0);
    uint64_t h = w.h->layout_hash;
    char other[300];
    w.h->layout_hash = h ^ 0x10; /* a header naming another layout's file, which is this one */
    assert_int_equal(seg_static_path(path, w.h->layout_hash, other, sizeof other), 0);
    assert_int_equal(link(sp, other), 0);
    assert_int_equal(seg_open(&r, path, err, sizeof err), EINVAL);
    assert_non_null(strstr(err, "another layout"));
    unlink(other);
    w.h->layout_hash = h;
    assert_int_equal(seg_open(&r, path, err, sizeof err), 0);
    seg_close(&r);
}

/* The engine's drain: a ring head behind the tail resynchronises, a head far ahead counts the
 * lost events and pops at most one ring's worth. */
static void test_ring_resync(void **st)
{
    (void)st;
    struct seg_event ev;
    uint64_t lost = 0, tail = 1000;
    atomic_store(&w.h->ring_head, 10);
    assert_false(seg_event_pop(&w, &tail, &ev, &lost));
    assert_int_equal(tail, 10);
    seg_event_push(&w, 1, 0, "a", 1, 1, 1);
    assert_true(seg_event_pop(&w, &tail, &ev, &lost));
    assert_int_equal(ev.entry, 1);
    atomic_store(&w.h->ring_head, UINT64_MAX - 3);
    int popped = 0;
    while (seg_event_pop(&w, &tail, &ev, &lost) && popped < 100000)
        popped++;
    assert_true(popped <= (int)w.ring_cap);
    assert_true(lost > 1000000);
    atomic_store(&w.h->ring_head, 0);
}

static struct seg_value counter(uint64_t start, uint64_t acc, uint64_t power_uw, uint32_t nsub)
{
    struct seg_value v;
    memset(&v, 0, sizeof v);
    v.type = SEG_V_COUNTER;
    v.wrap_bits = 32;
    v.nsub = nsub;
    v.ctr.start_uj = start;
    v.ctr.acc_uj = acc;
    v.ctr.power_uw = power_uw;
    v.ctr.unit_nj = 61035;
    v.ctr.t0_ns = 1000;
    return v;
}

/* segment.h "Resume", case by case (1 s tick, 1 ms substep: a step is 60 kJ). */
static void test_resume_rule(void **st)
{
    (void)st;
    const int64_t sub = 1000000, tick = 1000000000;
    const uint64_t step = 60000000000ull;
    /* the visible snapshot's horizon: ledger 1000 J at t0, 200 W for 1000 substeps -> +200 J */
    struct seg_value v = counter(0, 1000000000, 200000000, 1000);
    assert_int_equal(seg_counter_total(&v, sub, INT64_MAX, NULL), 1200000000);
    assert_int_equal(seg_resume_total(true, 1000000000, &v, 0, sub, tick), 1200000000);
    /* a hostile mark changes nothing when the snapshot is plausible */
    assert_int_equal(seg_resume_total(true, 1000000000, &v, UINT64_C(1) << 62, sub, tick), 1200000000);
    /* an implausible snapshot: the ledger, plus the mark by at most one step */
    struct seg_value bad = counter(0, 1000000000, UINT64_C(1) << 40, 1000);
    assert_int_equal(seg_resume_total(true, 1000000000, &bad, 1100000000, sub, tick), 1100000000);
    assert_int_equal(seg_resume_total(true, 1000000000, &bad, UINT64_C(1) << 62, sub, tick), 1000000000 + step);
    bad = counter(0, 1000000000, 200000000, 1000000); /* a horizon of 1000 s */
    assert_int_equal(seg_resume_total(true, 1000000000, &bad, 0, sub, tick), 1000000000);
    bad = counter(0, 1000000000 + 2 * step, 0, 0); /* far above the ledger */
    assert_int_equal(seg_resume_total(true, 1000000000, &bad, 0, sub, tick), 1000000000);
    bad.type = SEG_V_TEXT;
    assert_int_equal(seg_resume_total(true, 7, &bad, 9, sub, tick), 9);
    /* no ledger (killed before the first tick's): from zero, the same bounds */
    assert_int_equal(seg_resume_total(false, 0, NULL, UINT64_C(1) << 62, sub, tick), step);
    /* a ledger past SEG_TOTAL_MAX is capped: a node's sum of counters never wraps */
    assert_int_equal(seg_resume_total(true, UINT64_MAX, NULL, UINT64_MAX, sub, tick), SEG_TOTAL_MAX);
    /* a snapshot below the ledger (never written by an engine) is not believed */
    v = counter(0, 5, 0, 0);
    assert_int_equal(seg_resume_total(true, 1000, &v, 0, sub, tick), 1000);
    /* a reader's value never exceeds the horizon, whatever the time, and t0 in the future is 0 */
    v = counter(0, 1000000000, 200000000, 1000);
    assert_int_equal(seg_counter_total(&v, sub, INT64_MIN, NULL), 1000000000);
    assert_int_equal(seg_counter_total(&v, 0, INT64_MAX, NULL), 1000000000); /* substep 0: no division */
}

/* A file or symlink planted at the temporary name is never written through; a space that
 * cannot be reserved is an error with a message, and no .tmp is left. */
static void test_create_exclusive_and_reserved(void **st)
{
    (void)st;
    char p2[300], tmpname[340], victim[300], err[512];
    seg_tmp_path(p2, sizeof p2, "robust-b.seg");
    snprintf(tmpname, sizeof tmpname, "%s.tmp.%d", p2, (int)getpid());
    seg_tmp_path(victim, sizeof victim, "robust-victim");
    FILE *f = fopen(victim, "w");
    fputs("precious\n", f);
    fclose(f);
    assert_int_equal(symlink(victim, tmpname), 0);
    struct seg_builder *b = segb_new();
    segb_static(b, "cpuinfo", 0444, "x\n", 2);
    struct seg_image img;
    assert_int_equal(segb_image(b, "p", 0, 1000000000, &img, err, sizeof err), 0);
    segb_free(b);
    struct seg s;
    assert_int_equal(seg_image_write(&img, p2, "n", &s, err, sizeof err), 0);
    seg_close(&s);
    char buf[32] = {0};
    f = fopen(victim, "r");
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "precious\n");
    struct stat sb;
    assert_int_equal(lstat(tmpname, &sb), -1);
    unlink(p2);
    /* no room: a file-size limit below the segment's size stands in for a full filesystem */
    struct rlimit old, lim = {.rlim_cur = 4096, .rlim_max = RLIM_INFINITY};
    getrlimit(RLIMIT_FSIZE, &old);
    lim.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int rc = seg_image_write(&img, p2, "n", &s, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err, "cannot reserve"));
    assert_int_equal(lstat(tmpname, &sb), -1);
    assert_int_equal(lstat(p2, &sb), -1);
    seg_image_free(&img);
    unlink(victim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_refuses_hostile_headers),
        cmocka_unit_test(test_check_refuses_hostile_static),
        cmocka_unit_test(test_reader_keeps_private_counts),
        cmocka_unit_test(test_reader_bounds_shared_entries),
        cmocka_unit_test(test_reader_static_pages_read_only),
        cmocka_unit_test(test_sigbus_guard),
        cmocka_unit_test(test_sigbus_guard_static),
        cmocka_unit_test(test_missing_or_foreign_static),
        cmocka_unit_test(test_ring_resync),
        cmocka_unit_test(test_resume_rule),
        cmocka_unit_test(test_create_exclusive_and_reserved),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
