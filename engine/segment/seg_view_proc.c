/* seg_view_proc: the node-wide /proc views computed at read time: /proc/stat, /proc/uptime and
 * /proc/meminfo (seg_view.h SEG_VIEW_PROC_*, where the formulas and their sources are). /proc/stat
 * is the hot one: the shim reads it through here within microseconds (bench/README.md). */
#include "seg_view_common.h"

#include <time.h>

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
    f[0] = b * 90 / VIEW_TICK_NS;
    f[2] = b * 7 / VIEW_TICK_NS;
    f[3] = (elapsed - busy) / VIEW_TICK_NS;
    f[5] = b * 1 / VIEW_TICK_NS;
    f[6] = b * 2 / VIEW_TICK_NS;
}

size_t view_proc_stat(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap)
{
    uint64_t busy[VIEW_MAX_CPUS], elapsed, rates;
    int64_t boot;
    int n = view_read_times(s, pa, now_ns, &elapsed, busy, &rates, &boot);
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
        busy_ticks += busy[i] / VIEW_TICK_NS;
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
    uint64_t el_ticks = elapsed / VIEW_TICK_NS, cpu_ticks = el_ticks * (uint64_t)n;
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
    memcpy(p, view_digits2 + 2 * (cs % 100), 2);
    return p + 2;
}

size_t view_proc_uptime(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap)
{
    uint64_t busy[VIEW_MAX_CPUS], elapsed, rates;
    int64_t boot;
    int n = view_read_times(s, pa, now_ns, &elapsed, busy, &rates, &boot);
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

size_t view_proc_meminfo(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap)
{
    if (cap < 4096 || pa->a <= 0 || pa->b < 0 || pa->b >= s->n_values)
        return 0;
    uint64_t total = (uint64_t)pa->a, used = 0;
    char text[SEG_TEXT_MAX + 1];
    view_value_text(s, (uint32_t)pa->b, text);
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
    /* fs/proc/meminfo.c's lines in its order; the HugePages_* lines are counts, the rest kB */
    const struct {
        const char *name;
        uint64_t v;
    } rows[] = {
        {"MemTotal", total},
        {"MemFree", free_kb},
        {"MemAvailable", avail},
        {"Buffers", buffers},
        {"Cached", cached},
        {"SwapCached", 0},
        {"Active", anon * 3 / 4 + cached / 2},
        {"Inactive", anon / 4 + cached / 2 + buffers},
        {"Active(anon)", anon * 3 / 4},
        {"Inactive(anon)", anon / 4},
        {"Active(file)", cached / 2},
        {"Inactive(file)", cached / 2 + buffers},
        {"Unevictable", 0},
        {"Mlocked", 0},
        {"SwapTotal", 0},
        {"SwapFree", 0},
        {"Zswap", 0},
        {"Zswapped", 0},
        {"Dirty", 0},
        {"Writeback", 0},
        {"AnonPages", anon},
        {"Mapped", mapped},
        {"Shmem", shmem},
        {"KReclaimable", sreclaim},
        {"Slab", slab},
        {"SReclaimable", sreclaim},
        {"SUnreclaim", sunreclaim},
        {"KernelStack", kstack},
        {"PageTables", ptables},
        {"SecPageTables", 0},
        {"NFS_Unstable", 0},
        {"Bounce", 0},
        {"WritebackTmp", 0},
        {"CommitLimit", total / 2},
        {"Committed_AS", anon + anon / 4},
        {"VmallocTotal", 34359738367ULL},
        {"VmallocUsed", 0},
        {"VmallocChunk", 0},
        {"Percpu", 0},
        {"HardwareCorrupted", 0},
        {"AnonHugePages", 0},
        {"ShmemHugePages", 0},
        {"ShmemPmdMapped", 0},
        {"FileHugePages", 0},
        {"FilePmdMapped", 0},
        {"Unaccepted", 0},
        {"HugePages_Total", 0},
        {"HugePages_Free", 0},
        {"HugePages_Rsvd", 0},
        {"HugePages_Surp", 0},
        {"Hugepagesize", 2048},
        {"Hugetlb", 0},
        {"DirectMap4k", total / 100},
        {"DirectMap2M", total - total / 100},
        {"DirectMap1G", 0}
    };
    char *p = buf;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        p = strncmp(rows[i].name, "HugePages_", 10) ? mem_field(p, rows[i].name, rows[i].v, 16, " kB\n")
                                                    : mem_field(p, rows[i].name, rows[i].v, 19, "\n");
    return (size_t)(p - buf);
}
