/* seg_msr: reads and writes of /dev/cpu/<n>/msr registers; see seg_msr.h and segment.h. */
#include "seg_msr.h"

#include "seg_attr.h"
#include "seg_view_common.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

int seg_msr_cpu(const struct seg *s, uint32_t entry)
{
    if (entry >= s->n_entries || s->entries[entry].cls != SEG_M)
        return -1;
    const char *p = seg_path(s, entry);
    if (!p)
        return -1;
    int cpu = -1, end = 0;
    if (sscanf(p, "dev/cpu/%d/msr%n", &cpu, &end) != 1 || p[end])
        return -1;
    return cpu;
}

/* The register param of msr in entry's list (the CPU's, then the package's its END names), or
 * NULL. The list is untrusted: bounded by the param table, one continuation followed. */
static const struct seg_param *find_reg(const struct seg *s, uint32_t entry, uint32_t msr)
{
    if (entry >= s->n_entries)
        return NULL;
    const struct seg_entry *e = &s->entries[entry];
    if (e->cls != SEG_M || e->param == SEG_NONE)
        return NULL;
    uint32_t i = e->param;
    for (int list = 0; list < 2; list++) {
        for (; i < s->n_params && s->params[i].b != SEG_MSR_END; i++)
            if ((uint64_t)s->params[i].a == msr)
                return &s->params[i];
        if (i >= s->n_params || s->params[i].d != 1 || s->params[i].c < 0 || s->params[i].c > UINT32_MAX)
            return NULL;
        i = (uint32_t)s->params[i].c;
    }
    return NULL;
}

/* The i-th space-separated path of a LIMIT register's words, as an entry (SEG_NONE: "-" or
 * not in the segment). */
static uint32_t limit_entry(const struct seg *s, const struct seg_param *p, int i)
{
    if (p->words_off == SEG_NONE || p->words_off >= s->strings_size)
        return SEG_NONE;
    const char *w = s->strings + p->words_off;
    for (int k = 0; *w; k++) {
        while (*w == ' ')
            w++;
        size_t n = strcspn(w, " ");
        if (k == i)
            return n == 1 && *w == '-' ? SEG_NONE : seg_lookup(s, w, n);
        w += n;
    }
    return SEG_NONE;
}

/* The number a powercap file shows now (its slot when newer), 0 when absent. */
static uint64_t file_number(struct seg *s, uint32_t entry, int64_t now_ns)
{
    if (entry == SEG_NONE)
        return 0;
    char tmp[SEG_TEXT_MAX + 1];
    size_t n;
    const char *t = seg_read(s, entry, now_ns, tmp, &n);
    unsigned long long v = 0;
    for (size_t i = 0; t && i < n && t[i] >= '0' && t[i] <= '9'; i++)
        v = v * 10 + (unsigned)(t[i] - '0');
    return v;
}

/* Is the powercap limit file locked (its validator's c: rejectWrites)? */
static bool file_locked(const struct seg *s, uint32_t entry)
{
    if (entry == SEG_NONE)
        return false;
    const struct seg_entry *e = &s->entries[entry];
    return e->param != SEG_NONE && e->param < s->n_params && s->params[e->param].c != 0;
}

uint32_t msr_window_field(uint64_t us, uint64_t unit_us)
{
    if (!unit_us || us < unit_us)
        return 0;
    uint64_t v = us / unit_us;
    unsigned y = 63 - (unsigned)__builtin_clzll(v);
    if (y > 31)
        return 0x7F;
    unsigned z = (unsigned)((4 * (v - (UINT64_C(1) << y))) >> y);
    return y | z << 5;
}

uint64_t msr_window_us(uint32_t field, uint64_t unit_us)
{
    unsigned y = field & 0x1F, z = (field >> 5) & 3;
    return ((UINT64_C(1) << y) * (4 + z) * unit_us) / 4;
}

enum { L_PL1, L_W1, L_PL2, L_W2, L_EN };

static uint64_t limit_read(struct seg *s, const struct seg_param *p, int64_t now_ns)
{
    uint64_t unit_uw = p->c > 0 ? (uint64_t)p->c : 1, unit_us = p->d > 0 ? (uint64_t)p->d : 1;
    uint32_t pl1 = limit_entry(s, p, L_PL1), w1 = limit_entry(s, p, L_W1);
    uint32_t pl2 = limit_entry(s, p, L_PL2), w2 = limit_entry(s, p, L_W2), en = limit_entry(s, p, L_EN);
    uint64_t v = 0;
    if (pl1 != SEG_NONE) {
        bool on = en == SEG_NONE || file_number(s, en, now_ns) != 0;
        v |= (file_number(s, pl1, now_ns) / unit_uw) & 0x7FFF;
        v |= (uint64_t)on << 15 | (uint64_t)on << 16; /* enable, clamp */
        v |= (uint64_t)msr_window_field(file_number(s, w1, now_ns), unit_us) << 17;
    }
    if (pl2 != SEG_NONE) {
        v |= ((file_number(s, pl2, now_ns) / unit_uw) & 0x7FFF) << 32;
        v |= UINT64_C(3) << 47; /* enable, clamp */
        v |= (uint64_t)msr_window_field(file_number(s, w2, now_ns), unit_us) << 49;
    }
    if (file_locked(s, pl1))
        v |= UINT64_C(1) << 63;
    return v;
}

static int64_t raw_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* One (TSC, ns) pair: the clock read between two RDTSCs, the tightest of 16 tries (a pair a
 * preemption split is wide), the TSC taken as their middle. */
static void tsc_pair(uint64_t *tsc, int64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t a = __rdtsc();
        int64_t t = raw_now();
        uint64_t b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = t;
        }
    }
}

uint64_t seg_msr_tsc_khz(void)
{
    static _Atomic uint64_t khz;
    uint64_t k = atomic_load_explicit(&khz, memory_order_relaxed);
    if (k)
        return k;
    uint64_t c0 = 0, c1 = 0; /* set by tsc_pair's first sample (zeroed for gcc -O3's flow analysis) */
    int64_t t0 = 0, t1 = 0;
    tsc_pair(&c0, &t0);
    do
        tsc_pair(&c1, &t1);
    while (t1 - t0 < 20000000);
    k = (uint64_t)((unsigned __int128)(c1 - c0) * 1000000 / (uint64_t)(t1 - t0));
    atomic_store_explicit(&khz, k ? k : 1, memory_order_relaxed);
    return k ? k : 1;
}

/* The time registers (segment.h "Devices": TIME, CYCLES, IDLE), read from one latch generation
 * as the seg_view.h views read their lines: every line at the elapsed counter's capped time. */
struct msr_lines {
    uint32_t elapsed, line, busy0; /* value indices */
    int64_t now_ns, substep;
    const char *cpus;              /* IDLE: the CPU positions, space-separated */
    uint64_t elapsed_ns, line_at;  /* out: the elapsed ns; TIME/CYCLES: the line; IDLE: the least idle ns */
};

static void lines_read(const struct seg_value *values, void *ctx)
{
    struct msr_lines *m = ctx;
    const struct seg_value *ev = &values[m->elapsed];
    struct line el = line_of(ev);
    int64_t t = capped_at_horizon(ev, m->now_ns, m->substep);
    m->elapsed_ns = line_at(&el, t, m->substep);
    if (!m->cpus) {
        struct line l = line_of(&values[m->line]);
        m->line_at = line_at(&l, t, m->substep);
        return;
    }
    uint64_t least = m->elapsed_ns;
    for (const char *w = m->cpus; *w;) {
        uint64_t i = 0;
        for (; *w >= '0' && *w <= '9'; w++)
            i = i * 10 + (uint64_t)(*w - '0');
        while (*w == ' ')
            w++;
        struct line b = line_of(&values[m->busy0 + i]);
        uint64_t busy = line_at(&b, t, m->substep);
        uint64_t idle = busy < m->elapsed_ns ? m->elapsed_ns - busy : 0;
        if (idle < least)
            least = idle;
    }
    m->line_at = least;
}

/* Whether the CPU positions in words are all lines after busy0 (the list is untrusted). */
static bool cpus_valid(const struct seg *s, const char *w, uint32_t busy0)
{
    for (; *w; w++) {
        if (*w == ' ')
            continue;
        uint64_t i = 0;
        for (; *w >= '0' && *w <= '9' && i < s->n_values; w++)
            i = i * 10 + (uint64_t)(*w - '0');
        if (i >= s->n_values - busy0 || (*w && *w != ' '))
            return false;
        if (!*w)
            break;
    }
    return true;
}

static int time_read(struct seg *s, const struct seg_param *p, int64_t now_ns, uint64_t *val)
{
    uint32_t nv = s->n_values, elapsed = (uint32_t)((uint64_t)p->c & 0xFFFFFFFFu), line = (uint32_t)((uint64_t)p->c >> 32);
    if (p->c < 0 || elapsed >= nv || line >= nv || p->d < 0)
        return EIO;
    struct msr_lines m = {.elapsed = elapsed, .line = line, .busy0 = line, .now_ns = now_ns,
                          .substep = s->substep_ns > 0 ? s->substep_ns : 1000000};
    uint64_t khz = (uint64_t)p->d, share = 1000;
    if (p->b == SEG_MSR_IDLE) {
        if (p->words_off == SEG_NONE || p->words_off >= s->strings_size ||
            !memchr(s->strings + p->words_off, 0, s->strings_size - p->words_off) ||
            !cpus_valid(s, s->strings + p->words_off, line))
            return EIO;
        m.cpus = s->strings + p->words_off;
        khz = (uint64_t)p->d >> 16;
        share = (uint64_t)p->d & 0xFFFF;
    }
    if (khz == 0)
        khz = seg_msr_tsc_khz(); /* the TSC's clock: the reader's RDTSC rate */
    if (!view_latched(s, lines_read, &m))
        return EIO; /* a value the killed engine left torn (segment.h "Snapshot publication") */
    if (p->b == SEG_MSR_CYCLES) /* d > 0: a line of ns in units of 2^-d s, 32 bits (PERF_STATUS) */
        *val = p->d > 0 && p->d < 32 ? (uint64_t)(((unsigned __int128)m.line_at << p->d) / 1000000000u) & 0xFFFFFFFFu
                                     : m.line_at;
    else if (p->b == SEG_MSR_TIME) /* a busy line capped at the elapsed time, as the views cap it */
        *val = (uint64_t)((unsigned __int128)(m.line_at < m.elapsed_ns ? m.line_at : m.elapsed_ns) * khz / 1000000);
    else
        *val = (uint64_t)((unsigned __int128)m.line_at * khz * share / 1000 / 1000000);
    return 0;
}

uint64_t seg_msr_tsc_clock_khz(const struct seg *s, uint32_t entry)
{
    const struct seg_param *p = find_reg(s, entry, MSR_IA32_TSC);
    return p && p->b == SEG_MSR_TIME && p->d > 0 ? (uint64_t)p->d : 0;
}

/* The entry of a THERM register's log file (its words), or SEG_NONE. */
static uint32_t therm_log_entry(const struct seg *s, const struct seg_param *p)
{
    if (p->words_off == SEG_NONE || p->words_off >= s->strings_size)
        return SEG_NONE;
    const char *w = s->strings + p->words_off, *end = memchr(w, 0, s->strings_size - p->words_off);
    return end && end > w ? seg_lookup(s, w, (size_t)(end - w)) : SEG_NONE;
}

/* The package's throttle episodes so far (c >> 32: 1 + its BK_THERMAL count value), and whether
 * it is throttled now (d >> 32: 1 + its active value); false without them. */
static bool therm_state(const struct seg *s, const struct seg_param *p, uint64_t *count, bool *active)
{
    uint64_t a = (uint64_t)p->d >> 32, k = (uint64_t)p->c >> 32;
    *active = a > 0 && a - 1 < s->n_values && view_value_number(s, (uint32_t)(a - 1)) > 0;
    *count = k > 0 && k - 1 < s->n_values ? (uint64_t)view_value_number(s, (uint32_t)(k - 1)) : 0;
    return k > 0 && k - 1 < s->n_values;
}

/* IA32_THERM_STATUS / IA32_PACKAGE_THERM_STATUS (Intel SDM Vol. 3B §15.8.5.2, faults.md §3.5). */
static uint64_t therm_read(struct seg *s, const struct seg_param *p, int64_t now_ns)
{
    int64_t tjmax = p->d & 0xFF, spread_mc = (p->d >> 8) & 0xFFFF;
    int64_t mc = view_value_number(s, (uint32_t)(p->c & 0xFFFFFFFF)) - spread_mc;
    int64_t c = mc > 0 ? mc / 1000 : 0;
    int64_t below = tjmax - c;
    below = below < 0 ? 0 : below > 0x7F ? 0x7F : below;
    /* PROCHOT (TCC) active, bit 0, while the package is throttled at TjMax; its log, bit 1, is
     * sticky: set while it is and since it was, until software writes it 0 (R/WC0). The log file
     * holds the episodes there had been when it was last cleared (less one still going then), so
     * the log is set when more have begun since. Without a log file: set while active. */
    uint64_t count;
    bool active;
    uint64_t hot = 0;
    if (therm_state(s, p, &count, &active)) {
        hot = active ? 1 : 0;
        if (active || count > file_number(s, therm_log_entry(s, p), now_ns))
            hot |= 2;
    } else if (active) {
        hot = 3;
    }
    return UINT64_C(1) << 31 | UINT64_C(1) << 27 | (uint64_t)below << 16 | hot;
}

int seg_msr_read(struct seg *s, uint32_t entry, uint32_t msr, int64_t now_ns, uint64_t *val)
{
    const struct seg_param *p = find_reg(s, entry, msr);
    if (!p)
        return EIO;
    switch (p->b) {
    case SEG_MSR_CONST:
        *val = (uint64_t)p->c;
        return 0;
    case SEG_MSR_ENERGY: {
        uint64_t raw = seg_counter_raw(s, (uint32_t)p->c, now_ns, NULL, NULL);
        *val = (raw / (uint64_t)(p->d > 1 ? p->d : 1)) & 0xFFFFFFFFu;
        return 0;
    }
    case SEG_MSR_RATIO: {
        struct seg_value v;
        if (p->c < 0 || p->c > UINT32_MAX || p->d <= 0 || !seg_value_load(s, (uint32_t)p->c, &v) ||
            v.type != SEG_V_TEXT)
            return EIO;
        uint64_t khz = 0;
        for (size_t i = 0; i < v.len && i < sizeof v.text && v.text[i] >= '0' && v.text[i] <= '9'; i++)
            khz = khz * 10 + (unsigned)(v.text[i] - '0');
        *val = ((khz / (uint64_t)p->d) & 0xFF) << 8;
        return 0;
    }
    case SEG_MSR_LIMIT:
        *val = limit_read(s, p, now_ns);
        return 0;
    case SEG_MSR_TIME:
    case SEG_MSR_CYCLES:
    case SEG_MSR_IDLE:
        return time_read(s, p, now_ns, val);
    case SEG_MSR_THERM:
        if (p->c < 0 || (p->c & 0xFFFFFFFF) >= s->n_values)
            return EIO;
        *val = therm_read(s, p, now_ns);
        return 0;
    default:
        return EIO;
    }
}

/* Stores a decimal number through a powercap file as a write of it would, when it changes what
 * the file shows (a field the register write leaves as it was is no store and no event). */
static int store_number(struct seg *s, uint32_t entry, uint64_t v, int pid)
{
    if (file_number(s, entry, seg_now_ns()) == v)
        return 0;
    char text[32];
    int n = snprintf(text, sizeof text, "%llu", (unsigned long long)v);
    return seg_attr_write(s, entry, text, (size_t)n, pid);
}

/* A write of a THERM_STATUS register: its log bits are R/WC0, a 0 clears, a 1 is ignored, and the
 * status bits are read-only (a write leaves them). Bit 1 written 0 clears the thermal log: the
 * log file takes the episodes that have ended by now. */
static int therm_write(struct seg *s, const struct seg_param *p, uint64_t val, int pid)
{
    uint64_t count;
    bool active;
    uint32_t e = therm_log_entry(s, p);
    if ((val & 2) || e == SEG_NONE || !therm_state(s, p, &count, &active))
        return 0;
    uint64_t ended = count > 0 && active ? count - 1 : count;
    return store_number(s, e, ended, pid) ? EIO : 0;
}

int seg_msr_write(struct seg *s, uint32_t entry, uint32_t msr, uint64_t val, int pid)
{
    const struct seg_param *p = find_reg(s, entry, msr);
    if (p && p->b == SEG_MSR_THERM)
        return therm_write(s, p, val, pid);
    if (!p || p->b != SEG_MSR_LIMIT)
        return EIO; /* WRMSR of a read-only or unimplemented register: #GP */
    int64_t now = seg_now_ns();
    if (limit_read(s, p, now) >> 63)
        return 0; /* locked: the write is ignored, without a fault */
    uint64_t unit_uw = p->c > 0 ? (uint64_t)p->c : 1, unit_us = p->d > 0 ? (uint64_t)p->d : 1;
    uint32_t pl1 = limit_entry(s, p, L_PL1), w1 = limit_entry(s, p, L_W1);
    uint32_t pl2 = limit_entry(s, p, L_PL2), w2 = limit_entry(s, p, L_W2), en = limit_entry(s, p, L_EN);
    int err = 0, e;
    /* In the register's order; the first refusal is the answer, the other fields still land as
     * each file's store decides (the kernel's powercap writes the fields one by one too). */
    if (pl1 != SEG_NONE && (e = store_number(s, pl1, (val & 0x7FFF) * unit_uw, pid)) && !err)
        err = e;
    if (w1 != SEG_NONE && (e = store_number(s, w1, msr_window_us((uint32_t)(val >> 17) & 0x7F, unit_us), pid)) &&
        !err)
        err = e;
    if (en != SEG_NONE && (e = store_number(s, en, (val >> 15) & 1, pid)) && !err && e != ENOSYS)
        err = e;
    if (pl2 != SEG_NONE && (e = store_number(s, pl2, ((val >> 32) & 0x7FFF) * unit_uw, pid)) && !err)
        err = e;
    if (w2 != SEG_NONE && (e = store_number(s, w2, msr_window_us((uint32_t)(val >> 49) & 0x7F, unit_us), pid)) &&
        !err)
        err = e;
    return err ? EIO : 0;
}
