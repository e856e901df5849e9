/* seg_view: /proc/stat, /proc/uptime and /proc/meminfo computed at read time; see seg_view.h.
 * Speed matters (a 384-CPU /proc/stat within 20 us, bench/README.md): one pass over the values
 * under the latch, integer arithmetic only, and a two-digits-at-a-time decimal writer.
 * Trust (segment.h): counts and the substep are the reader's private copies, never the shared
 * header's, and a latch that never settles is given up after SEG_LATCH_TRIES. */
#include "seg_view.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define VIEW_MAX_CPUS 8192
#define TICK_NS 10000000ULL /* USER_HZ 100 */

int seg_view_of(const struct seg *s, uint32_t entry)
{
    if (entry >= s->n_entries)
        return SEG_VIEW_NONE;
    const struct seg_entry *e = &s->entries[entry];
    if (e->kind != SEG_FILE || e->cls != SEG_S || e->param >= s->n_params)
        return SEG_VIEW_NONE;
    return e->validator >= SEG_VIEW_PROC_STAT && e->validator <= SEG_VIEW_LAST ? e->validator : SEG_VIEW_NONE;
}

static const struct seg_param *param_of(const struct seg *s, uint32_t entry)
{
    return &s->params[s->entries[entry].param];
}

size_t seg_view_bound(const struct seg *s, uint32_t entry)
{
    int kind = seg_view_of(s, entry);
    if (kind == SEG_VIEW_PROC_STAT) {
        int64_t c = param_of(s, entry)->c;
        c = c < 0 ? 0 : c > VIEW_MAX_CPUS ? VIEW_MAX_CPUS : c;
        return (size_t)(c + 1) * 240 + 1024; /* 10 numbers of ≤ 20 digits per line, and the rest */
    }
    if (kind == SEG_VIEW_PROC_UPTIME)
        return 128;
    if (kind == SEG_VIEW_PROC_MEMINFO)
        return 4096;
    if (kind == SEG_VIEW_TEMP || kind == SEG_VIEW_IDLE)
        return 32;
    if (kind == SEG_VIEW_CG_CPU_STAT)
        return 256;
    if (kind == SEG_VIEW_CG_MEMORY_STAT)
        return 1024;
    if (kind == SEG_VIEW_CG_CPUS) { /* at most "N-M," per pair of CPUs */
        int64_t b = param_of(s, entry)->b;
        b = b < 0 ? 0 : b > 64 ? 64 : b;
        return (size_t)b * SEG_TEXT_MAX * 8 / 2 * 12 + 16;
    }
    if (kind == SEG_VIEW_PID_STAT || kind == SEG_VIEW_PID_STATM)
        return 1024;
    if (kind == SEG_VIEW_PID_STATUS)
        return 2048;
    if (kind == SEG_VIEW_TEMPLATE) { /* each marker (≥ 3 bytes) becomes at most a text value */
        const struct seg_param *pa = param_of(s, entry);
        return pa->a > 0 && pa->a < (int64_t)s->strings_size && pa->b >= 0 && pa->b <= pa->a
                   ? (size_t)pa->a + (size_t)pa->b * SEG_TEXT_MAX + 16
                   : 0;
    }
    if (kind == SEG_VIEW_CF_TIME || kind == SEG_VIEW_CF_TOTAL || kind == SEG_VIEW_CF_TRANS) {
        int64_t c = param_of(s, entry)->c;
        if (c < 1 || c > SEG_CF_MAX_STATES)
            return 0;
        if (kind == SEG_VIEW_CF_TOTAL)
            return 32;
        if (kind == SEG_VIEW_CF_TIME) /* "<10 digits> <20 digits>\n" per entry */
            return (size_t)c * 32 + 16;
        return (size_t)(c + 1) * (12 + (size_t)c * 21) + 64; /* ≥ 9 columns, a count may be wider */
    }
    if (kind == SEG_VIEW_CPUINFO) { /* each marker (≥ 3 bytes) becomes at most 24 */
        const struct seg_param *pa = param_of(s, entry);
        return pa->a > 0 && pa->a < (int64_t)s->strings_size && pa->b >= 0 && pa->b <= pa->a
                   ? (size_t)pa->a + (size_t)pa->b * 24 + 64
                   : 0;
    }
    return 0;
}

/* --- decimal writing ------------------------------------------------------------------------ */

static const char digits2[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                 "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

static int ndigits(uint64_t v)
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
    char *e = p + ndigits(v), *q = e;
    while (v > UINT32_MAX) {
        q -= 2;
        memcpy(q, digits2 + 2 * (v % 100), 2);
        v /= 100;
    }
    uint32_t w = (uint32_t)v; /* the rest in 32-bit arithmetic: cheaper divisions */
    while (w >= 100) {
        q -= 2;
        memcpy(q, digits2 + 2 * (w % 100), 2);
        w /= 100;
    }
    if (w >= 10) {
        q -= 2;
        memcpy(q, digits2 + 2 * w, 2);
    } else {
        *--q = (char)('0' + w);
    }
    return e;
}

static char *put_s(char *p, const char *t)
{
    size_t n = strlen(t);
    memcpy(p, t, n);
    return p + n;
}

/* --- time counters -------------------------------------------------------------------------- */

struct line {
    uint64_t base_ns; /* total ns at t0 (start + acc, in ns, plus rem) */
    uint64_t rate;    /* ns per substep */
    int64_t t0;
};

static struct line line_of(const struct seg_value *v)
{
    return (struct line){(v->ctr.start_uj + v->ctr.acc_uj) * 1000 + v->ctr.rem_nj, v->ctr.power_uw, v->ctr.t0_ns};
}

/* The time a view reads its lines at: now, or the elapsed line ev's freeze horizon if that is
 * earlier (a stopped engine's lines stand still there). */
static int64_t capped_at_horizon(const struct seg_value *ev, int64_t now_ns, int64_t substep)
{
    int64_t horizon = ev->ctr.t0_ns + (int64_t)ev->nsub * substep;
    return now_ns < horizon ? now_ns : horizon;
}

static uint64_t line_at(const struct line *l, int64_t t, int64_t substep)
{
    int64_t n = t > l->t0 ? (t - l->t0) / substep : 0;
    return l->base_ns + (uint64_t)n * l->rate;
}

/* Elapsed ns E, every CPU's busy ns into busy[], their summed rates and the boot time (monotonic
 * ns), all from one latch generation. Returns the CPU count, or -1 when the param is bad. */
static int read_times(const struct seg *s, const struct seg_param *pa, int64_t now_ns, uint64_t *elapsed,
                      uint64_t *busy, uint64_t *rates, int64_t *boot_mono)
{
    uint32_t nv = s->n_values;
    if (pa->a < 0 || pa->a >= nv || pa->b < 0 || pa->c < 0 || pa->c > VIEW_MAX_CPUS || pa->b + pa->c > nv)
        return -1;
    int n = (int)pa->c;
    int64_t substep = s->substep_ns;
    for (int tries = 0; tries < SEG_LATCH_TRIES; tries++) {
        uint64_t g = atomic_load_explicit(&s->h->gen, memory_order_acquire);
        const struct seg_value *copy = s->copy[g & 1];
        const struct seg_value *ev = &copy[pa->a];
        struct line el = line_of(ev);
        int64_t t = capped_at_horizon(ev, now_ns, substep);
        *elapsed = line_at(&el, t, substep);
        *boot_mono = el.t0 - (int64_t)el.base_ns;
        uint64_t sum = 0;
        for (int i = 0; i < n; i++) {
            struct line b = line_of(&copy[pa->b + i]);
            uint64_t v = line_at(&b, t, substep);
            busy[i] = v < *elapsed ? v : *elapsed;
            sum += b.rate;
        }
        *rates = sum;
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->h->gen, memory_order_relaxed) == g)
            break;
    }
    return n; /* settled, or the last copy of a generation that never did */
}

static char *put_cpu_fields(char *p, const uint64_t f[10])
{
    for (int k = 0; k < 10; k++) {
        if (f[k] == 0) { /* most columns of a busy server's line */
            memcpy(p, " 0", 2);
            p += 2;
            continue;
        }
        *p++ = ' ';
        p = put_u(p, f[k]);
    }
    *p++ = '\n';
    return p;
}

/* user nice system idle iowait irq softirq steal guest guest_nice of one CPU. */
static void cpu_fields(uint64_t busy, uint64_t elapsed, uint64_t f[10])
{
    uint64_t b = busy / 100;
    memset(f, 0, sizeof(uint64_t) * 10);
    f[0] = b * 90 / TICK_NS;
    f[2] = b * 7 / TICK_NS;
    f[3] = (elapsed - busy) / TICK_NS;
    f[5] = b * 1 / TICK_NS;
    f[6] = b * 2 / TICK_NS;
}

static size_t render_stat(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap)
{
    uint64_t busy[VIEW_MAX_CPUS], elapsed, rates;
    int64_t boot;
    int n = read_times(s, pa, now_ns, &elapsed, busy, &rates, &boot);
    if (n < 0 || cap < (size_t)(n + 1) * 240 + 1024)
        return 0;
    /* the cpu line goes first but sums every CPU: leave room for it, then move it in place */
    char *p = buf + 256;
    uint64_t sum[10] = {0}, f[10], busy_ticks = 0;
    const char *prev = NULL; /* the previous CPU's columns, reused when its busy time is the same */
    size_t prev_len = 0;
    for (int i = 0; i < n; i++) {
        memcpy(p, "cpu", 3);
        p = put_u(p + 3, (uint64_t)i);
        if (i > 0 && busy[i] == busy[i - 1]) {
            memmove(p, prev, prev_len); /* the same numbers: copy them rather than format them */
            prev = p;
            p += prev_len;
        } else {
            cpu_fields(busy[i], elapsed, f);
            char *at = p;
            p = put_cpu_fields(p, f);
            prev = at;
            prev_len = (size_t)(p - at);
        }
        /* the non-zero columns one by one (a vector sum of f would stall on its scalar stores) */
        sum[0] += f[0];
        sum[2] += f[2];
        sum[3] += f[3];
        sum[5] += f[5];
        sum[6] += f[6];
        busy_ticks += busy[i] / TICK_NS;
    }
    char head[256], *h = head;
    h = put_s(h, "cpu ");
    h = put_cpu_fields(h, sum);
    size_t hl = (size_t)(h - head);
    char *start = buf + 256 - hl;
    memcpy(start, head, hl);

    /* Derived counters (assumed rates, monotonic in the ticks): a timer interrupt every 4 ms per
     * CPU (HZ 250) plus 20 device interrupts per busy tick; 40 context switches per busy tick and
     * 2 per idle CPU tick; 10 forks per second after 1000 at boot; softirqs half the interrupts,
     * split TIMER 60 %, SCHED 25 %, RCU 15 %. */
    uint64_t el_ticks = elapsed / TICK_NS, cpu_ticks = el_ticks * (uint64_t)n;
    uint64_t intr = cpu_ticks * 5 / 2 + busy_ticks * 20;
    uint64_t ctxt = busy_ticks * 40 + (cpu_ticks - (busy_ticks < cpu_ticks ? busy_ticks : cpu_ticks)) * 2;
    uint64_t processes = 1000 + elapsed / 100000000ULL;
    uint64_t running = (rates + 500000) / 1000000;
    struct timespec rt, mono;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    int64_t off = ((int64_t)rt.tv_sec - (int64_t)mono.tv_sec) * 1000000000LL + (rt.tv_nsec - mono.tv_nsec);
    int64_t btime = (off + boot) / 1000000000LL;
    p = put_s(p, "intr ");
    p = put_u(p, intr);
    for (int k = 0; k < 16; k++)
        p = put_s(p, " 0"); /* the legacy IRQs: no device model behind them */
    p = put_s(p, "\nctxt ");
    p = put_u(p, ctxt);
    p = put_s(p, "\nbtime ");
    p = put_u(p, btime > 0 ? (uint64_t)btime : 0);
    p = put_s(p, "\nprocesses ");
    p = put_u(p, processes);
    p = put_s(p, "\nprocs_running ");
    p = put_u(p, running ? running : 1);
    p = put_s(p, "\nprocs_blocked 0\nsoftirq ");
    uint64_t soft = intr / 2, timer = soft * 60 / 100, sched = soft * 25 / 100, rcu = soft - timer - sched;
    uint64_t parts[10] = {0, timer, 0, 0, 0, 0, 0, sched, 0, rcu};
    p = put_u(p, soft);
    for (int k = 0; k < 10; k++) {
        *p++ = ' ';
        p = put_u(p, parts[k]);
    }
    *p++ = '\n';
    size_t len = (size_t)(p - start);
    memmove(buf, start, len);
    return len;
}

/* "%lu.%02lu" of ns, truncated to hundredths as fs/proc/uptime.c prints. */
static char *put_centi(char *p, uint64_t ns)
{
    uint64_t cs = ns / 10000000ULL;
    p = put_u(p, cs / 100);
    *p++ = '.';
    memcpy(p, digits2 + 2 * (cs % 100), 2);
    return p + 2;
}

static size_t render_uptime(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap)
{
    uint64_t busy[VIEW_MAX_CPUS], elapsed, rates;
    int64_t boot;
    int n = read_times(s, pa, now_ns, &elapsed, busy, &rates, &boot);
    if (n < 0 || cap < 128)
        return 0;
    uint64_t idle = 0;
    for (int i = 0; i < n; i++)
        idle += elapsed - busy[i];
    char *p = put_centi(buf, elapsed);
    *p++ = ' ';
    p = put_centi(p, idle);
    *p++ = '\n';
    return (size_t)(p - buf);
}

/* The text of value v (v < s->n_values) NUL-terminated in text, from one latch generation
 * (seg_value_load). */
static void value_text(const struct seg *s, uint32_t v, char text[SEG_TEXT_MAX + 1])
{
    struct seg_value sv = {0};
    seg_value_load(s, v, &sv);
    size_t l = sv.len < SEG_TEXT_MAX ? sv.len : SEG_TEXT_MAX;
    memcpy(text, sv.text, l);
    text[l] = 0;
}

/* One meminfo line as the kernel prints it (fs/proc/meminfo.c): the name and colon padded to
 * min_col columns, the value right-aligned to end at column 24 where the name leaves room,
 * then unit: the kB lines (show_val_kb, width 8 after 16 columns) and the HugePages counts
 * (%5lu after 19). */
static char *mem_field(char *p, const char *name, uint64_t v, size_t min_col, const char *unit)
{
    size_t n = strlen(name);
    memcpy(p, name, n);
    p += n;
    *p++ = ':';
    char num[24], *e = put_u(num, v);
    size_t d = (size_t)(e - num);
    size_t to = d < 24 ? 24 - d : 0;
    for (size_t col = n + 1; col < (to > min_col ? to : min_col); col++)
        *p++ = ' ';
    memcpy(p, num, d);
    p += d;
    return put_s(p, unit);
}

static char *mem_line(char *p, const char *name, uint64_t kb)
{
    return mem_field(p, name, kb, 16, " kB\n");
}

static char *mem_count(char *p, const char *name, uint64_t v)
{
    return mem_field(p, name, v, 19, "\n");
}

static size_t render_meminfo(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap)
{
    (void)now_ns;
    if (cap < 4096 || pa->a <= 0 || pa->b < 0 || pa->b >= s->n_values)
        return 0;
    uint64_t total = (uint64_t)pa->a, used = 0;
    char text[SEG_TEXT_MAX + 1];
    value_text(s, (uint32_t)pa->b, text);
    uint64_t ppm = 0;
    for (const char *c = text; *c >= '0' && *c <= '9' && ppm <= 1000000; c++)
        ppm = ppm * 10 + (uint64_t)(*c - '0');
    used = ppm >= 1000000 ? total : total / 1000000 * ppm + total % 1000000 * ppm / 1000000;
    /* The split of what is not application memory (assumed, typical of an idle server's
     * meminfo): page cache 6 % of the total minus what the applications took beyond 80 %, slab
     * 1 %, kernel stacks and page tables small; no swap (a server without swap). */
    uint64_t cached = total * 6 / 100, slab = total / 100, anon = used;
    uint64_t room = total - used;
    if (cached > room / 2)
        cached = room / 2;
    if (slab > room / 4)
        slab = room / 4;
    uint64_t buffers = cached / 50, kstack = 16 * 1024 + total / 50000, ptables = anon / 500 + 4096;
    uint64_t sreclaim = slab / 2, sunreclaim = slab - sreclaim;
    uint64_t nonfree = anon + cached + buffers + slab + kstack + ptables;
    uint64_t free_kb = total > nonfree ? total - nonfree : 0;
    uint64_t avail = free_kb + cached + buffers + sreclaim;
    uint64_t shmem = cached / 20, mapped = cached / 4;
    char *p = buf;
    p = mem_line(p, "MemTotal", total);
    p = mem_line(p, "MemFree", free_kb);
    p = mem_line(p, "MemAvailable", avail);
    p = mem_line(p, "Buffers", buffers);
    p = mem_line(p, "Cached", cached);
    p = mem_line(p, "SwapCached", 0);
    p = mem_line(p, "Active", anon * 3 / 4 + cached / 2);
    p = mem_line(p, "Inactive", anon / 4 + cached / 2 + buffers);
    p = mem_line(p, "Active(anon)", anon * 3 / 4);
    p = mem_line(p, "Inactive(anon)", anon / 4);
    p = mem_line(p, "Active(file)", cached / 2);
    p = mem_line(p, "Inactive(file)", cached / 2 + buffers);
    p = mem_line(p, "Unevictable", 0);
    p = mem_line(p, "Mlocked", 0);
    p = mem_line(p, "SwapTotal", 0);
    p = mem_line(p, "SwapFree", 0);
    p = mem_line(p, "Zswap", 0);
    p = mem_line(p, "Zswapped", 0);
    p = mem_line(p, "Dirty", 0);
    p = mem_line(p, "Writeback", 0);
    p = mem_line(p, "AnonPages", anon);
    p = mem_line(p, "Mapped", mapped);
    p = mem_line(p, "Shmem", shmem);
    p = mem_line(p, "KReclaimable", sreclaim);
    p = mem_line(p, "Slab", slab);
    p = mem_line(p, "SReclaimable", sreclaim);
    p = mem_line(p, "SUnreclaim", sunreclaim);
    p = mem_line(p, "KernelStack", kstack);
    p = mem_line(p, "PageTables", ptables);
    p = mem_line(p, "SecPageTables", 0);
    p = mem_line(p, "NFS_Unstable", 0);
    p = mem_line(p, "Bounce", 0);
    p = mem_line(p, "WritebackTmp", 0);
    p = mem_line(p, "CommitLimit", total / 2);
    p = mem_line(p, "Committed_AS", anon + anon / 4);
    p = mem_line(p, "VmallocTotal", 34359738367ULL);
    p = mem_line(p, "VmallocUsed", 0);
    p = mem_line(p, "VmallocChunk", 0);
    p = mem_line(p, "Percpu", 0);
    p = mem_line(p, "HardwareCorrupted", 0);
    p = mem_line(p, "AnonHugePages", 0);
    p = mem_line(p, "ShmemHugePages", 0);
    p = mem_line(p, "ShmemPmdMapped", 0);
    p = mem_line(p, "FileHugePages", 0);
    p = mem_line(p, "FilePmdMapped", 0);
    p = mem_line(p, "Unaccepted", 0);
    p = mem_count(p, "HugePages_Total", 0);
    p = mem_count(p, "HugePages_Free", 0);
    p = mem_count(p, "HugePages_Rsvd", 0);
    p = mem_count(p, "HugePages_Surp", 0);
    p = mem_line(p, "Hugepagesize", 2048);
    p = mem_line(p, "Hugetlb", 0);
    p = mem_line(p, "DirectMap4k", total / 100);
    p = mem_line(p, "DirectMap2M", total - total / 100);
    p = mem_line(p, "DirectMap1G", 0);
    return (size_t)(p - buf);
}

/* The decimal number at the start of a text value. */
static int64_t value_number(const struct seg *s, uint32_t v)
{
    char text[SEG_TEXT_MAX + 1];
    value_text(s, v, text);
    int64_t n = 0;
    bool neg = text[0] == '-';
    for (const char *c = text + neg; *c >= '0' && *c <= '9' && n < INT64_MAX / 10; c++)
        n = n * 10 + (*c - '0');
    return neg ? -n : n;
}

static size_t render_temp(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap)
{
    if (cap < 32 || pa->a < 0 || pa->a >= s->n_values || pa->c <= 0)
        return 0;
    int64_t t = value_number(s, (uint32_t)pa->a) - pa->b;
    t = t > 0 ? t / pa->c * pa->c : 0;
    char *p = put_u(buf, (uint64_t)t);
    *p++ = '\n';
    return (size_t)(p - buf);
}

/* Whether time counter v (v < n_values) adds nothing per substep now: its CPU is idle. Reads the
 * one field from the settled copy, not the whole value. */
static bool line_stands_still(const struct seg *s, uint32_t v)
{
    uint64_t rate = 0;
    uint8_t type = 0;
    for (int tries = 0; tries < SEG_LATCH_TRIES; tries++) {
        uint64_t g = atomic_load_explicit(&s->h->gen, memory_order_acquire);
        const struct seg_value *c = &s->copy[g & 1][v];
        type = c->type;
        rate = c->ctr.power_uw;
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->h->gen, memory_order_relaxed) == g)
            break;
    }
    return type == SEG_V_COUNTER && rate == 0;
}

static size_t render_cpuinfo(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap)
{
    if (pa->words_off >= s->strings_size || pa->a <= 0 || (uint64_t)pa->a > s->strings_size - pa->words_off ||
        pa->b < 0 || pa->b > pa->a || cap < (size_t)pa->a + (size_t)pa->b * 24 + 64)
        return 0;
    const char *t = s->strings + pa->words_off, *end = t + pa->a;
    char *p = buf;
    while (t < end) {
        const char *m = memchr(t, '\x01', (size_t)(end - t));
        size_t run = (size_t)((m ? m : end) - t);
        memcpy(p, t, run);
        p += run;
        if (!m)
            break;
        /* "\x01cur\x02", or "\x01cur\x03min\x03busy\x02": min while busy's line stands still */
        uint64_t v[3] = {0, 0, 0};
        int nv = 0;
        for (t = m + 1; nv < 3; nv++) {
            for (; t < end && *t >= '0' && *t <= '9'; t++)
                v[nv] = v[nv] * 10 + (uint64_t)(*t - '0');
            if (t >= end || *t != '\x03')
                break;
            t++;
        }
        if (t < end && *t == '\x02')
            t++;
        uint64_t shown = nv == 2 && v[2] < s->n_values && line_stands_still(s, (uint32_t)v[2]) ? v[1] : v[0];
        int64_t khz = shown < s->n_values ? value_number(s, (uint32_t)shown) : 0;
        if (khz < 0)
            khz = 0;
        p = put_u(p, (uint64_t)khz / 1000);
        *p++ = '.';
        uint64_t frac = (uint64_t)khz % 1000;
        *p++ = (char)('0' + frac / 100);
        *p++ = (char)('0' + frac / 10 % 10);
        *p++ = (char)('0' + frac % 10);
    }
    return (size_t)(p - buf);
}

static size_t render_idle(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap)
{
    uint64_t busy, elapsed, rates;
    int64_t boot;
    /* the times of one CPU: the elapsed counter and this CPU's busy counter as a one-CPU view */
    struct seg_param one = {.a = pa->a, .b = pa->b, .c = 1};
    if (cap < 32 || pa->c < 0 || pa->c > 1000 || pa->d < 0 || read_times(s, &one, now_ns, &elapsed, &busy, &rates, &boot) != 1)
        return 0;
    uint64_t us = (elapsed - busy) / 1000 / 1000 * (uint64_t)pa->c + (elapsed - busy) / 1000 % 1000 * (uint64_t)pa->c / 1000;
    char *p = put_u(buf, pa->d ? us / (uint64_t)pa->d : us);
    *p++ = '\n';
    return (size_t)(p - buf);
}

/* --- cgroup views ---------------------------------------------------------------------------- */

static size_t render_cg_cpu_stat(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf,
                                 size_t cap)
{
    uint32_t nv = s->n_values;
    if (cap < 256 || pa->a < 0 || pa->a >= nv || pa->b < 0 || pa->c < 0 || pa->c > VIEW_MAX_CPUS || pa->b + pa->c > nv)
        return 0;
    int64_t substep = s->substep_ns;
    uint64_t total = 0;
    for (int tries = 0; tries < SEG_LATCH_TRIES; tries++) {
        uint64_t g = atomic_load_explicit(&s->h->gen, memory_order_acquire);
        const struct seg_value *copy = s->copy[g & 1];
        const struct seg_value *ev = &copy[pa->a];
        struct line el = line_of(ev);
        int64_t t = capped_at_horizon(ev, now_ns, substep);
        uint64_t elapsed = line_at(&el, t, substep);
        total = 0;
        for (int64_t i = 0; i < pa->c; i++) {
            struct line b = line_of(&copy[pa->b + i]);
            uint64_t v = line_at(&b, t, substep);
            total += pa->d || v < elapsed ? v : elapsed;
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->h->gen, memory_order_relaxed) == g)
            break;
    }
    uint64_t usage = total / 1000, user = usage / 10 * 9 + usage % 10 * 9 / 10;
    char *p = put_s(buf, "usage_usec ");
    p = put_u(p, usage);
    p = put_s(p, "\nuser_usec ");
    p = put_u(p, user);
    p = put_s(p, "\nsystem_usec ");
    p = put_u(p, usage - user);
    p = put_s(p, "\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\nnr_bursts 0\nburst_usec 0\n");
    return (size_t)(p - buf);
}

static size_t render_cg_memory_stat(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap)
{
    if (cap < 1024 || pa->a < 0 || pa->a >= s->n_values)
        return 0;
    int64_t cur = value_number(s, (uint32_t)pa->a);
    uint64_t m = cur > 0 ? (uint64_t)cur : 0;
    uint64_t anon = m / 100 * 94, file = m / 100 * 4, kernel = m - anon - file;
    uint64_t stack = kernel / 8, ptables = kernel / 4, slab = kernel - stack - ptables;
    /* mm/memcontrol.c memory_stats[] order (Documentation/admin-guide/cgroup-v2.rst, memory.stat) */
    const struct {
        const char *k;
        uint64_t v;
    } rows[] = {{"anon", anon},
                {"file", file},
                {"kernel", kernel},
                {"kernel_stack", stack},
                {"pagetables", ptables},
                {"percpu", 0},
                {"sock", 0},
                {"vmalloc", 0},
                {"shmem", 0},
                {"file_mapped", file / 2},
                {"file_dirty", 0},
                {"file_writeback", 0},
                {"swapcached", 0},
                {"anon_thp", 0},
                {"file_thp", 0},
                {"shmem_thp", 0},
                {"inactive_anon", anon / 4},
                {"active_anon", anon - anon / 4},
                {"inactive_file", file / 2},
                {"active_file", file - file / 2},
                {"unevictable", 0},
                {"slab_reclaimable", slab / 2},
                {"slab_unreclaimable", slab - slab / 2},
                {"slab", slab},
                {"workingset_refault_anon", 0},
                {"workingset_refault_file", 0},
                {"workingset_activate_anon", 0},
                {"workingset_activate_file", 0},
                {"workingset_restore_anon", 0},
                {"workingset_restore_file", 0},
                {"workingset_nodereclaim", 0},
                {"pgfault", anon / 4096},
                {"pgmajfault", 0},
                {"pgrefill", 0},
                {"pgscan", 0},
                {"pgsteal", 0},
                {"pgactivate", 0},
                {"pgdeactivate", 0},
                {"pglazyfree", 0},
                {"pglazyfreed", 0},
                {"thp_fault_alloc", 0},
                {"thp_collapse_alloc", 0}};
    char *p = buf;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        p = put_s(p, rows[i].k);
        *p++ = ' ';
        p = put_u(p, rows[i].v);
        *p++ = '\n';
    }
    return (size_t)(p - buf);
}

static size_t render_cg_cpus(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap)
{
    if (pa->a < 0 || pa->b < 0 || pa->b > 64 || pa->a + pa->b > s->n_values ||
        cap < (size_t)pa->b * SEG_TEXT_MAX * 8 / 2 * 12 + 16)
        return 0;
    unsigned char mask[64 * SEG_TEXT_MAX];
    for (int tries = 0; tries < SEG_LATCH_TRIES; tries++) {
        uint64_t g = atomic_load_explicit(&s->h->gen, memory_order_acquire);
        for (int64_t i = 0; i < pa->b; i++) {
            const struct seg_value *v = &s->copy[g & 1][pa->a + i];
            memset(mask + i * SEG_TEXT_MAX, 0, SEG_TEXT_MAX);
            memcpy(mask + i * SEG_TEXT_MAX, v->text, v->len < SEG_TEXT_MAX ? v->len : SEG_TEXT_MAX);
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->h->gen, memory_order_relaxed) == g)
            break;
    }
    int n = (int)pa->b * SEG_TEXT_MAX * 8;
    char *p = buf;
    for (int c = 0; c < n;) {
        if (!(mask[c / 8] >> (c % 8) & 1)) {
            c++;
            continue;
        }
        int e = c;
        while (e + 1 < n && (mask[(e + 1) / 8] >> ((e + 1) % 8) & 1))
            e++;
        if (p != buf)
            *p++ = ',';
        p = put_u(p, (uint64_t)c);
        if (e > c) {
            *p++ = '-';
            p = put_u(p, (uint64_t)e);
        }
        c = e + 1;
    }
    *p++ = '\n';
    return (size_t)(p - buf);
}

/* --- a job's process (/proc/<pid>) ----------------------------------------------------------- */

struct proc_facts {
    uint64_t pid, start, threads, cpu; /* the info text's four numbers */
    uint64_t usage_us, user_us;        /* as the unit's cpu.stat shows them */
    uint64_t rss_pages, vsize;         /* memory */
    bool running;                      /* its CPUs are busy now */
    const char *comm;
};

/* The four numbers of a "<pid> <start> <threads> <cpu>" text; false when it is empty. */
static bool info_numbers(const char *t, uint64_t out[4])
{
    for (int k = 0; k < 4; k++) {
        while (*t == ' ')
            t++;
        if (*t < '0' || *t > '9')
            return false;
        uint64_t v = 0;
        for (; *t >= '0' && *t <= '9' && v < UINT64_MAX / 10; t++)
            v = v * 10 + (uint64_t)(*t - '0');
        out[k] = v;
    }
    return true;
}

/* Everything a process view shows, from one latch generation; false when the slot is free or the
 * param is bad. */
static bool proc_facts(const struct seg *s, const struct seg_param *pa, int64_t now_ns, struct proc_facts *f)
{
    uint32_t nv = s->n_values;
    if (pa->a < 0 || pa->a >= nv || pa->b < 0 || pa->b >= nv || pa->c < 0 || pa->c >= nv || pa->d < 0 ||
        pa->d >= nv || pa->words_off >= s->strings_size)
        return false;
    int64_t substep = s->substep_ns;
    char info[SEG_TEXT_MAX + 1], mem[SEG_TEXT_MAX + 1];
    uint64_t cpu_ns = 0, rate = 0;
    for (int tries = 0; tries < SEG_LATCH_TRIES; tries++) {
        uint64_t g = atomic_load_explicit(&s->h->gen, memory_order_acquire);
        const struct seg_value *copy = s->copy[g & 1];
        const struct seg_value *ev = &copy[pa->a];
        int64_t t = capped_at_horizon(ev, now_ns, substep);
        struct line u = line_of(&copy[pa->b]);
        cpu_ns = line_at(&u, t, substep);
        rate = u.rate;
        const struct seg_value *iv = &copy[pa->c], *mv = &copy[pa->d];
        size_t il = iv->len < SEG_TEXT_MAX ? iv->len : SEG_TEXT_MAX, ml = mv->len < SEG_TEXT_MAX ? mv->len : SEG_TEXT_MAX;
        memcpy(info, iv->text, il);
        info[il] = 0;
        memcpy(mem, mv->text, ml);
        mem[ml] = 0;
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->h->gen, memory_order_relaxed) == g)
            break;
    }
    uint64_t n[4];
    if (!info_numbers(info, n))
        return false;
    uint64_t bytes = 0;
    for (const char *c = mem; *c >= '0' && *c <= '9' && bytes < UINT64_MAX / 10; c++)
        bytes = bytes * 10 + (uint64_t)(*c - '0');
    f->pid = n[0];
    f->start = n[1];
    f->threads = n[2] ? n[2] : 1;
    f->cpu = n[3];
    f->usage_us = cpu_ns / 1000;
    f->user_us = f->usage_us / 10 * 9 + f->usage_us % 10 * 9 / 10; /* render_cg_cpu_stat's split */
    f->rss_pages = bytes / 4096;
    f->vsize = (bytes / 4096 + bytes / 4096 / 4) * 4096 + (16u << 20);
    f->running = rate > 0;
    f->comm = s->strings + pa->words_off;
    return true;
}

static char *put_sp(char *p, uint64_t v)
{
    *p++ = ' ';
    return put_u(p, v);
}

static size_t render_pid_stat(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap)
{
    struct proc_facts f;
    if (cap < 1024 || !proc_facts(s, pa, now_ns, &f))
        return 0;
    /* fs/proc/array.c do_task_stat: 52 fields */
    char *p = put_u(buf, f.pid);
    p = put_s(p, " (");
    p = put_s(p, f.comm);
    p = put_s(p, f.running ? ") R" : ") S");
    p = put_s(p, " 1");                 /* ppid: the job's step daemon is not shown; init */
    p = put_sp(p, f.pid);               /* pgrp */
    p = put_sp(p, f.pid);               /* session */
    p = put_s(p, " 0 -1 4194304 0 0 0 0"); /* tty_nr tpgid flags (PF_RANDOMIZE) minflt cminflt majflt cmajflt */
    p = put_sp(p, f.user_us / 10000);   /* utime */
    p = put_sp(p, (f.usage_us - f.user_us) / 10000); /* stime */
    p = put_s(p, " 0 0 20 0");          /* cutime cstime priority nice */
    p = put_sp(p, f.threads);
    p = put_s(p, " 0");                 /* itrealvalue */
    p = put_sp(p, f.start);
    p = put_sp(p, f.vsize);
    p = put_sp(p, f.rss_pages);
    p = put_s(p, " 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17"); /* rsslim ... cnswap exit_signal */
    p = put_sp(p, f.cpu);               /* processor */
    p = put_s(p, " 0 0 0 0 0 0 0 0 0 0 0 0 0\n"); /* rt_priority policy blkio guest cguest, addresses, exit_code */
    return (size_t)(p - buf);
}

static char *status_kb(char *p, const char *name, uint64_t kb)
{
    p = put_s(p, name);
    char num[24];
    char *e = put_u(num, kb);
    for (size_t w = (size_t)(e - num); w < 8; w++)
        *p++ = ' ';
    memcpy(p, num, (size_t)(e - num));
    p += e - num;
    return put_s(p, " kB\n");
}

static size_t render_pid_status(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf,
                                size_t cap)
{
    struct proc_facts f;
    if (cap < 2048 || !proc_facts(s, pa, now_ns, &f))
        return 0;
    uint64_t rss = f.rss_pages * 4, vm = f.vsize / 1024, anon = rss * 94 / 100, file = rss - anon;
    /* fs/proc/array.c proc_pid_status and task_mem (fs/proc/task_mmu.c), in their order */
    char *p = put_s(buf, "Name:\t");
    p = put_s(p, f.comm);
    p = put_s(p, "\nUmask:\t0022\nState:\t");
    p = put_s(p, f.running ? "R (running)" : "S (sleeping)");
    p = put_s(p, "\nTgid:\t");
    p = put_u(p, f.pid);
    p = put_s(p, "\nNgid:\t0\nPid:\t");
    p = put_u(p, f.pid);
    p = put_s(p, "\nPPid:\t1\nTracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t64\nGroups:\t\nNStgid:\t");
    p = put_u(p, f.pid);
    p = put_s(p, "\nNSpid:\t");
    p = put_u(p, f.pid);
    p = put_s(p, "\nNSpgid:\t");
    p = put_u(p, f.pid);
    p = put_s(p, "\nNSsid:\t");
    p = put_u(p, f.pid);
    p = put_s(p, "\nKthread:\t0\n");
    p = status_kb(p, "VmPeak:\t", vm);
    p = status_kb(p, "VmSize:\t", vm);
    p = status_kb(p, "VmLck:\t", 0);
    p = status_kb(p, "VmPin:\t", 0);
    p = status_kb(p, "VmHWM:\t", rss);
    p = status_kb(p, "VmRSS:\t", rss);
    p = status_kb(p, "RssAnon:\t", anon);
    p = status_kb(p, "RssFile:\t", file);
    p = status_kb(p, "RssShmem:\t", 0);
    p = status_kb(p, "VmData:\t", anon);
    p = status_kb(p, "VmStk:\t", 132);
    p = status_kb(p, "VmExe:\t", 4);
    p = status_kb(p, "VmLib:\t", file);
    p = status_kb(p, "VmPTE:\t", rss / 512 + 4);
    p = status_kb(p, "VmSwap:\t", 0);
    p = put_s(p, "HugetlbPages:\t       0 kB\nCoreDumping:\t0\nTHP_enabled:\t1\nThreads:\t");
    p = put_u(p, f.threads);
    p = put_s(p, "\nSigQ:\t0/0\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n"
                 "SigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\nCapInh:\t0000000000000000\n"
                 "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\n"
                 "CapAmb:\t0000000000000000\nNoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n"
                 "voluntary_ctxt_switches:\t0\nnonvoluntary_ctxt_switches:\t0\n");
    return (size_t)(p - buf);
}

static size_t render_pid_statm(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf,
                               size_t cap)
{
    struct proc_facts f;
    if (cap < 1024 || !proc_facts(s, pa, now_ns, &f))
        return 0;
    /* fs/proc/array.c proc_pid_statm: size resident shared text lib data dt, in pages */
    uint64_t size = f.vsize / 4096, shared = f.rss_pages - f.rss_pages * 94 / 100;
    char *p = put_u(buf, size);
    p = put_sp(p, f.rss_pages);
    p = put_sp(p, shared);
    p = put_s(p, " 1 0");
    p = put_sp(p, f.rss_pages - shared);
    p = put_s(p, " 0\n");
    return (size_t)(p - buf);
}

static size_t render_template(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap)
{
    if (pa->words_off >= s->strings_size || pa->a <= 0 || (uint64_t)pa->a > s->strings_size - pa->words_off ||
        pa->b < 0 || pa->b > pa->a || cap < (size_t)pa->a + (size_t)pa->b * SEG_TEXT_MAX + 16)
        return 0;
    const char *t = s->strings + pa->words_off, *end = t + pa->a;
    char *p = buf;
    int markers = 0;
    while (t < end) {
        char c = *t++;
        if (c == '\x03') {
            *p++ = 0;
            continue;
        }
        if (c != '\x01' || markers == pa->b) {
            *p++ = c;
            continue;
        }
        markers++;
        uint64_t v = 0;
        for (; t < end && *t >= '0' && *t <= '9' && v < UINT32_MAX; t++)
            v = v * 10 + (uint64_t)(*t - '0');
        if (t < end && *t == '\x02')
            t++;
        if (v >= s->n_values)
            continue;
        char text[SEG_TEXT_MAX + 1];
        value_text(s, (uint32_t)v, text);
        size_t l = strlen(text);
        if (l && text[l - 1] == '\n')
            l--;
        memcpy(p, text, l);
        p += l;
    }
    return (size_t)(p - buf);
}

/* --- cpufreq/stats ---------------------------------------------------------------------------- */

struct cf_stats {
    int k;                                   /* table entries */
    int cur;                                 /* the running entry, -1: none */
    uint32_t khz[SEG_CF_MAX_STATES];
    uint64_t time_ns[SEG_CF_MAX_STATES];
    uint64_t trans[SEG_CF_MAX_STATES * SEG_CF_MAX_STATES];
};

/* The policy's table (words_off) and its lines at now_ns from one latch generation: false when
 * the param is bad. */
static bool cf_read(const struct seg *s, const struct seg_param *pa, int64_t now_ns, struct cf_stats *st)
{
    uint32_t nv = s->n_values;
    if (pa->c < 1 || pa->c > SEG_CF_MAX_STATES || pa->a < 0 || pa->a >= nv || pa->b < 0 ||
        pa->b + pa->c + pa->c * pa->c > nv || pa->words_off >= s->strings_size)
        return false;
    int k = (int)pa->c;
    st->k = k;
    const char *w = s->strings + pa->words_off;
    for (int i = 0; i < k; i++) { /* the pool ends in a NUL and a zero page (segment.h "Trust") */
        while (*w == ' ')
            w++;
        uint64_t v = 0;
        while (*w >= '0' && *w <= '9' && v < UINT32_MAX)
            v = v * 10 + (uint64_t)(*w++ - '0');
        st->khz[i] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    }
    int64_t substep = s->substep_ns;
    for (int tries = 0; tries < SEG_LATCH_TRIES; tries++) {
        uint64_t g = atomic_load_explicit(&s->h->gen, memory_order_acquire);
        const struct seg_value *copy = s->copy[g & 1];
        const struct seg_value *ev = &copy[pa->a];
        struct line el = line_of(ev);
        int64_t t = capped_at_horizon(ev, now_ns, substep);
        uint64_t elapsed = line_at(&el, t, substep);
        st->cur = -1;
        for (int i = 0; i < k + k * k; i++) {
            struct line l = line_of(&copy[pa->b + i]);
            uint64_t v = line_at(&l, t, substep);
            if (i < k) {
                st->time_ns[i] = v < elapsed ? v : elapsed;
                if (l.rate)
                    st->cur = i;
            } else {
                st->trans[i - k] = v / 1000;
            }
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->h->gen, memory_order_relaxed) == g)
            break;
    }
    return true;
}

/* "%9u": right-aligned in 9 columns, wider when it needs more. */
static char *put_u9(char *p, uint64_t v)
{
    int n = ndigits(v);
    for (; n < 9; n++)
        *p++ = ' ';
    return put_u(p, v);
}

static size_t render_cf(const struct seg *s, int kind, const struct seg_param *pa, int64_t now_ns, char *buf,
                        size_t cap)
{
    struct cf_stats st;
    if (!cf_read(s, pa, now_ns, &st))
        return 0;
    size_t need = kind == SEG_VIEW_CF_TOTAL ? 32
                : kind == SEG_VIEW_CF_TIME  ? (size_t)st.k * 32 + 16
                                            : (size_t)(st.k + 1) * (12 + (size_t)st.k * 21) + 64;
    if (cap < need)
        return 0;
    char *p = buf;
    if (kind == SEG_VIEW_CF_TIME) {
        for (int i = 0; i < st.k; i++) {
            p = put_u(p, st.khz[i]);
            *p++ = ' ';
            p = put_u(p, st.time_ns[i] / TICK_NS);
            *p++ = '\n';
        }
    } else if (kind == SEG_VIEW_CF_TOTAL) {
        uint64_t sum = 0;
        for (int i = 0; i < st.k * st.k; i++)
            sum += st.trans[i];
        p = put_u(p, sum);
        *p++ = '\n';
    } else {
        p = put_s(p, "   From  :    To\n         : ");
        for (int j = 0; j < st.k; j++) {
            p = put_u9(p, st.khz[j]);
            *p++ = ' ';
        }
        *p++ = '\n';
        for (int i = 0; i < st.k; i++) {
            *p++ = i == st.cur ? '*' : ' ';
            p = put_u9(p, st.khz[i]);
            p = put_s(p, ": ");
            for (int j = 0; j < st.k; j++) {
                p = put_u9(p, st.trans[i * st.k + j]);
                *p++ = ' ';
            }
            *p++ = '\n';
        }
    }
    return (size_t)(p - buf);
}

size_t seg_view_render(const struct seg *s, uint32_t entry, int64_t now_ns, char *buf, size_t cap)
{
    switch (seg_view_of(s, entry)) {
    case SEG_VIEW_PROC_STAT: return render_stat(s, param_of(s, entry), now_ns, buf, cap);
    case SEG_VIEW_PROC_UPTIME: return render_uptime(s, param_of(s, entry), now_ns, buf, cap);
    case SEG_VIEW_PROC_MEMINFO: return render_meminfo(s, param_of(s, entry), now_ns, buf, cap);
    case SEG_VIEW_TEMP: return render_temp(s, param_of(s, entry), buf, cap);
    case SEG_VIEW_CPUINFO: return render_cpuinfo(s, param_of(s, entry), buf, cap);
    case SEG_VIEW_IDLE: return render_idle(s, param_of(s, entry), now_ns, buf, cap);
    case SEG_VIEW_CG_CPU_STAT: return render_cg_cpu_stat(s, param_of(s, entry), now_ns, buf, cap);
    case SEG_VIEW_CG_MEMORY_STAT: return render_cg_memory_stat(s, param_of(s, entry), buf, cap);
    case SEG_VIEW_CG_CPUS: return render_cg_cpus(s, param_of(s, entry), buf, cap);
    case SEG_VIEW_PID_STAT: return render_pid_stat(s, param_of(s, entry), now_ns, buf, cap);
    case SEG_VIEW_PID_STATUS: return render_pid_status(s, param_of(s, entry), now_ns, buf, cap);
    case SEG_VIEW_PID_STATM: return render_pid_statm(s, param_of(s, entry), now_ns, buf, cap);
    case SEG_VIEW_TEMPLATE: return render_template(s, param_of(s, entry), buf, cap);
    case SEG_VIEW_CF_TIME:
    case SEG_VIEW_CF_TOTAL:
    case SEG_VIEW_CF_TRANS: return render_cf(s, seg_view_of(s, entry), param_of(s, entry), now_ns, buf, cap);
    default: return 0;
    }
}
