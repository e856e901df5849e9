/* seg_view_common: what the view families share, private to engine/segment: the decimal writer,
 * the time counters read as lines, the one latch read every view takes its values under, a text
 * value's text and number, the CPU times of /proc/stat, and each family's entry point for the
 * dispatcher (seg_view.c). The views themselves are in seg_view_proc.c, seg_view_cpu.c,
 * seg_view_cgroup.c, seg_view_pid.c and seg_view_cpufreq.c; the contract is seg_view.h.
 *
 * Everything here is static inline: /proc/stat (a 384-CPU one within 20 us, bench/README.md)
 * runs these in its inner loop, and a family file that includes this header calls nothing in
 * another view file (only the dispatcher calls into the families). seg_msr.c reads the MSR
 * registers of time (TSC, MPERF, APERF, residencies) with the same latch and line helpers, so a
 * register and /proc/stat show one busy time. */
#ifndef HWEMU_SEG_VIEW_COMMON_H
#define HWEMU_SEG_VIEW_COMMON_H
#include "seg_view.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define VIEW_MAX_CPUS 8192
#define VIEW_TICK_NS 10000000ULL /* USER_HZ 100 */

/* --- decimal writing ------------------------------------------------------------------------ */

static const char view_digits2[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                      "8081828384858687888990919293949596979899";

static inline int view_ndigits(uint64_t v)
{
    int n = 1;
    while (v >= 10000) {
        v /= 10000;
        n += 4;
    }
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* v in decimal at p, written back to front in place (two digits a step); the end. */
static inline char *put_u(char *p, uint64_t v)
{
    if (v < 10) {
        *p = (char)('0' + v);
        return p + 1;
    }
    char *e = p + view_ndigits(v), *q = e;
    while (v > UINT32_MAX) {
        q -= 2;
        memcpy(q, view_digits2 + 2 * (v % 100), 2);
        v /= 100;
    }
    uint32_t w = (uint32_t)v; /* the rest in 32-bit arithmetic: cheaper divisions */
    while (w >= 100) {
        q -= 2;
        memcpy(q, view_digits2 + 2 * (w % 100), 2);
        w /= 100;
    }
    if (w >= 10) {
        q -= 2;
        memcpy(q, view_digits2 + 2 * w, 2);
    } else {
        *--q = (char)('0' + w);
    }
    return e;
}

/* " v": a space, then v in decimal. */
static inline char *put_sp(char *p, uint64_t v)
{
    *p++ = ' ';
    return put_u(p, v);
}

static inline char *put_s(char *p, const char *t)
{
    size_t n = strlen(t);
    memcpy(p, t, n);
    return p + n;
}

/* --- the latch ------------------------------------------------------------------------------ */

/* Calls read(values, ctx) with the snapshot's values from one publication: while the generation
 * is even and stays so (segment.h "Snapshot publication"). A generation that stays odd for
 * SEG_LATCH_TRIES loads (a publication under way, an engine killed during one) or never settles
 * (an agent storing into it) goes to seg_values_read: a wait of at most SEG_PUBLISH_WAIT_NS for
 * one publication, then the values as they stand, each whole. read only reads the values and writes ctx, so a read that is not kept is
 * harmless: it is read again. false when a value stayed torn (seg_values_torn: the view's
 * dispatcher answers EIO then). Inlined with a constant read, the caller's loop over its
 * counters is compiled in place, no call. */
static inline bool view_latched(const struct seg *s, void (*read)(const struct seg_value *values, void *ctx),
                                void *ctx)
{
    for (int tries = 0; tries < SEG_LATCH_TRIES; tries++) {
        uint64_t g = atomic_load_explicit(&s->h->gen, memory_order_acquire);
        if (g & 1)
            continue;
        read(s->values, ctx);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->h->gen, memory_order_relaxed) == g)
            return true;
    }
    return seg_values_read(s, read, ctx);
}

/* --- time counters -------------------------------------------------------------------------- */

struct line {
    uint64_t base_ns; /* total ns at t0 (start + acc, in ns, plus rem) */
    uint64_t rate;    /* ns per substep */
    int64_t t0;
};

static inline struct line line_of(const struct seg_value *v)
{
    return (struct line){(v->ctr.start_uj + v->ctr.acc_uj) * 1000 + v->ctr.rem_nj, v->ctr.power_uw, v->ctr.t0_ns};
}

/* The time a view reads its lines at: now, or the elapsed line ev's freeze horizon if that is
 * earlier (a stopped engine's lines stand still there). */
static inline int64_t capped_at_horizon(const struct seg_value *ev, int64_t now_ns, int64_t substep)
{
    int64_t horizon = ev->ctr.t0_ns + (int64_t)ev->nsub * substep;
    return now_ns < horizon ? now_ns : horizon;
}

static inline uint64_t line_at(const struct line *l, int64_t t, int64_t substep)
{
    int64_t n = t > l->t0 ? (t - l->t0) / substep : 0;
    return l->base_ns + (uint64_t)n * l->rate;
}

/* The CPU times of /proc/stat, /proc/uptime and cpuidle: a = the elapsed counter, b .. b+n-1 the
 * CPUs' busy counters (param a, b, c of SEG_VIEW_PROC_STAT in seg_view.h). */
struct view_times {
    const struct seg_param *pa;
    int64_t now_ns, substep;
    int n;
    uint64_t elapsed, rates, *busy; /* busy[n], each capped at the elapsed time */
    int64_t boot_mono;
};

static inline void view_times_read(const struct seg_value *values, void *ctx)
{
    struct view_times *vt = ctx;
    const struct seg_value *ev = &values[vt->pa->a], *bv = &values[vt->pa->b];
    int64_t substep = vt->substep; /* locals: the stores to busy[] may alias ctx */
    int n = vt->n;
    uint64_t *busy = vt->busy;
    struct line el = line_of(ev);
    int64_t t = capped_at_horizon(ev, vt->now_ns, substep);
    uint64_t elapsed = line_at(&el, t, substep), sum = 0;
    for (int i = 0; i < n; i++) {
        struct line b = line_of(&bv[i]);
        uint64_t v = line_at(&b, t, substep);
        busy[i] = v < elapsed ? v : elapsed;
        sum += b.rate;
    }
    vt->elapsed = elapsed;
    vt->rates = sum;
    vt->boot_mono = el.t0 - (int64_t)el.base_ns;
}

/* Elapsed ns E, every CPU's busy ns into busy[], their summed rates and the boot time (monotonic
 * ns), all from one latch generation. Returns the CPU count, or -1 when the param is bad. */
static inline int view_read_times(const struct seg *s, const struct seg_param *pa, int64_t now_ns, uint64_t *elapsed,
                                  uint64_t *busy, uint64_t *rates, int64_t *boot_mono)
{
    uint32_t nv = s->n_values;
    if (pa->a < 0 || pa->a >= nv || pa->b < 0 || pa->c < 0 || pa->c > VIEW_MAX_CPUS || pa->b + pa->c > nv)
        return -1;
    struct view_times vt = {.pa = pa, .now_ns = now_ns, .substep = s->substep_ns, .n = (int)pa->c, .busy = busy};
    view_latched(s, view_times_read, &vt); /* one publication, or the values as they stand */
    *elapsed = vt.elapsed;
    *rates = vt.rates;
    *boot_mono = vt.boot_mono;
    return vt.n;
}

/* --- text values ---------------------------------------------------------------------------- */

/* The text of value v (v < s->n_values) NUL-terminated in text, whole (seg_value_load). */
static inline void view_value_text(const struct seg *s, uint32_t v, char text[SEG_TEXT_MAX + 1])
{
    struct seg_value sv = {0};
    seg_value_load(s, v, &sv);
    size_t l = sv.len < SEG_TEXT_MAX ? sv.len : SEG_TEXT_MAX;
    memcpy(text, sv.text, l);
    text[l] = 0;
}

/* The decimal number at the start of a text value. */
static inline int64_t view_value_number(const struct seg *s, uint32_t v)
{
    char text[SEG_TEXT_MAX + 1];
    view_value_text(s, v, text);
    int64_t n = 0;
    bool neg = text[0] == '-';
    for (const char *c = text + neg; *c >= '0' && *c <= '9' && n < INT64_MAX / 10; c++)
        n = n * 10 + (*c - '0');
    return neg ? -n : n;
}

/* --- the families, for the dispatcher (seg_view.c) ------------------------------------------ */
/* Each writes the view's text for param pa into buf (cap bytes) and returns its length, 0 when
 * cap is below the view's bound or pa is bad. */

/* seg_view_proc.c: /proc/stat, /proc/uptime, /proc/meminfo */
size_t view_proc_stat(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap);
size_t view_proc_uptime(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap);
size_t view_proc_meminfo(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap);
/* seg_view_cpu.c: a core's temperature, /proc/cpuinfo's running frequencies, cpuidle times */
size_t view_cpu_temp(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap);
size_t view_cpuinfo(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap);
size_t view_cpuidle(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap);
/* seg_view_cgroup.c: a cgroup's cpu.stat, memory.stat, cpuset.cpus(.effective) */
size_t view_cg_cpu_stat(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap);
size_t view_cg_memory_stat(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap);
size_t view_cg_cpus(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap);
/* seg_view_pid.c: a job's process: /proc/<pid>/stat, status, statm, and its texts (template) */
size_t view_pid_stat(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap);
size_t view_pid_status(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap);
size_t view_pid_statm(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap);
size_t view_template(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap);
/* seg_view_cpufreq.c: cpufreq/stats time_in_state, total_trans, trans_table (kind: which) */
size_t view_cpufreq_stats(const struct seg *s, int kind, const struct seg_param *pa, int64_t now_ns, char *buf,
                          size_t cap);

#endif
