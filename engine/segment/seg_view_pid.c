/* seg_view_pid: a job's process as /proc/<pid> shows it: stat, status and statm from the unit's
 * CPU time and memory (seg_view.h SEG_VIEW_PID_*), and its texts with values in them, cmdline and
 * cgroup (SEG_VIEW_TEMPLATE); docs/interfaces.md "Jobs as processes". */
#include "seg_view_common.h"

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

/* What a process view reads under the latch (param a..d, seg_view.h SEG_VIEW_PID_*). */
struct proc_read {
    const struct seg_param *pa;
    int64_t now_ns, substep;
    uint64_t cpu_ns, rate;
    char info[SEG_TEXT_MAX + 1], mem[SEG_TEXT_MAX + 1];
};

static void proc_read(const struct seg_value *values, void *ctx)
{
    struct proc_read *r = ctx;
    const struct seg_param *pa = r->pa;
    const struct seg_value *ev = &values[pa->a];
    int64_t t = capped_at_horizon(ev, r->now_ns, r->substep);
    struct line u = line_of(&values[pa->b]);
    r->cpu_ns = line_at(&u, t, r->substep);
    r->rate = u.rate;
    const struct seg_value *iv = &values[pa->c], *mv = &values[pa->d];
    size_t il = iv->len < SEG_TEXT_MAX ? iv->len : SEG_TEXT_MAX, ml = mv->len < SEG_TEXT_MAX ? mv->len : SEG_TEXT_MAX;
    memcpy(r->info, iv->text, il);
    r->info[il] = 0;
    memcpy(r->mem, mv->text, ml);
    r->mem[ml] = 0;
}

/* Everything a process view shows, from one latch generation; false when the slot is free or the
 * param is bad. */
static bool proc_facts(const struct seg *s, const struct seg_param *pa, int64_t now_ns, struct proc_facts *f)
{
    uint32_t nv = s->n_values;
    if (pa->a < 0 || pa->a >= nv || pa->b < 0 || pa->b >= nv || pa->c < 0 || pa->c >= nv || pa->d < 0 ||
        pa->d >= nv || pa->words_off >= s->strings_size)
        return false;
    struct proc_read r = {.pa = pa, .now_ns = now_ns, .substep = s->substep_ns};
    view_latched(s, proc_read, &r);
    uint64_t cpu_ns = r.cpu_ns, rate = r.rate;
    uint64_t n[4];
    if (!info_numbers(r.info, n))
        return false;
    uint64_t bytes = 0;
    for (const char *c = r.mem; *c >= '0' && *c <= '9' && bytes < UINT64_MAX / 10; c++)
        bytes = bytes * 10 + (uint64_t)(*c - '0');
    f->pid = n[0];
    f->start = n[1];
    f->threads = n[2] ? n[2] : 1;
    f->cpu = n[3];
    f->usage_us = cpu_ns / 1000;
    f->user_us = f->usage_us / 10 * 9 + f->usage_us % 10 * 9 / 10; /* view_cg_cpu_stat's split */
    f->rss_pages = bytes / 4096;
    f->vsize = (bytes / 4096 + bytes / 4096 / 4) * 4096 + (16u << 20);
    f->running = rate > 0;
    f->comm = s->strings + pa->words_off;
    return true;
}

size_t view_pid_stat(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap)
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

size_t view_pid_status(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf,
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

size_t view_pid_statm(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf,
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

size_t view_template(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap)
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
        view_value_text(s, (uint32_t)v, text);
        size_t l = strlen(text);
        if (l && text[l - 1] == '\n')
            l--;
        memcpy(p, text, l);
        p += l;
    }
    return (size_t)(p - buf);
}
