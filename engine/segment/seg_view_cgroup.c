/* seg_view_cgroup: a cgroup v2 directory's views: cpu.stat from the busy or CPU-time counters,
 * memory.stat from memory.current, cpuset.cpus(.effective) from a CPU mask (seg_view.h
 * SEG_VIEW_CG_*; docs/interfaces.md "Job cgroups"). */
#include "seg_view_common.h"

/* The summed ns of a cpu.stat's time counters (param a..d, seg_view.h SEG_VIEW_CG_CPU_STAT). */
struct cg_time {
    const struct seg_param *pa;
    int64_t now_ns, substep;
    uint64_t total;
};

static void cg_time_read(const struct seg_value *values, void *ctx)
{
    struct cg_time *ct = ctx;
    const struct seg_param *pa = ct->pa;
    const struct seg_value *ev = &values[pa->a];
    struct line el = line_of(ev);
    int64_t t = capped_at_horizon(ev, ct->now_ns, ct->substep);
    uint64_t elapsed = line_at(&el, t, ct->substep), total = 0;
    for (int64_t i = 0; i < pa->c; i++) {
        struct line b = line_of(&values[pa->b + i]);
        uint64_t v = line_at(&b, t, ct->substep);
        total += pa->d || v < elapsed ? v : elapsed;
    }
    ct->total = total;
}

size_t view_cg_cpu_stat(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap)
{
    uint32_t nv = s->n_values;
    if (cap < 256 || pa->a < 0 || pa->a >= nv || pa->b < 0 || pa->c < 0 || pa->c > VIEW_MAX_CPUS || pa->b + pa->c > nv)
        return 0;
    struct cg_time ct = {.pa = pa, .now_ns = now_ns, .substep = s->substep_ns};
    view_latched(s, cg_time_read, &ct);
    uint64_t total = ct.total;
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

size_t view_cg_memory_stat(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap)
{
    if (cap < 1024 || pa->a < 0 || pa->a >= s->n_values)
        return 0;
    int64_t cur = view_value_number(s, (uint32_t)pa->a);
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

/* A CPU mask: the b text values from a as raw bytes (seg_view.h SEG_VIEW_CG_CPUS). */
struct cg_mask {
    const struct seg_param *pa;
    unsigned char mask[64 * SEG_TEXT_MAX];
};

static void cg_mask_read(const struct seg_value *values, void *ctx)
{
    struct cg_mask *cm = ctx;
    for (int64_t i = 0; i < cm->pa->b; i++) {
        const struct seg_value *v = &values[cm->pa->a + i];
        memset(cm->mask + i * SEG_TEXT_MAX, 0, SEG_TEXT_MAX);
        memcpy(cm->mask + i * SEG_TEXT_MAX, v->text, v->len < SEG_TEXT_MAX ? v->len : SEG_TEXT_MAX);
    }
}

size_t view_cg_cpus(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap)
{
    if (pa->a < 0 || pa->b < 0 || pa->b > 64 || pa->a + pa->b > s->n_values ||
        cap < (size_t)pa->b * SEG_TEXT_MAX * 8 / 2 * 12 + 16)
        return 0;
    struct cg_mask cm = {.pa = pa};
    view_latched(s, cg_mask_read, &cm);
    const unsigned char *mask = cm.mask;
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
