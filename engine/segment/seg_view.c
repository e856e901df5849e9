/* seg_view: which entries are views, how long each view's text can be, and the dispatch of a read
 * to the family that computes it (see seg_view.h for every view; seg_view_common.h for what the
 * families share): /proc/stat, uptime and meminfo in seg_view_proc.c; a CPU's temperature,
 * cpuinfo frequencies and cpuidle times in seg_view_cpu.c; cgroups in seg_view_cgroup.c; a job's
 * process in seg_view_pid.c; cpufreq/stats in seg_view_cpufreq.c.
 * Speed matters (a 384-CPU /proc/stat within 20 us, bench/README.md): one pass over the values
 * of one publication (view_latched), integer arithmetic only, and a two-digits-at-a-time
 * decimal writer. Trust (segment.h): counts and the substep are the reader's private copies,
 * never the shared header's, and a publication that does not end is waited for at most
 * SEG_PUBLISH_WAIT_NS (seg_values_read). A value an engine killed mid-store left torn makes every view answer EIO
 * (SEG_VIEW_EIO) until an engine starts on the file. */
#include "seg_view_common.h"

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

size_t seg_view_render(const struct seg *s, uint32_t entry, int64_t now_ns, char *buf, size_t cap)
{
    int kind = seg_view_of(s, entry);
    if (kind == SEG_VIEW_NONE)
        return 0;
    if (seg_values_torn(s))
        return SEG_VIEW_EIO;
    const struct seg_param *pa = param_of(s, entry);
    switch (kind) {
    case SEG_VIEW_PROC_STAT: return view_proc_stat(s, pa, now_ns, buf, cap);
    case SEG_VIEW_PROC_UPTIME: return view_proc_uptime(s, pa, now_ns, buf, cap);
    case SEG_VIEW_PROC_MEMINFO: return view_proc_meminfo(s, pa, buf, cap);
    case SEG_VIEW_TEMP: return view_cpu_temp(s, pa, buf, cap);
    case SEG_VIEW_CPUINFO: return view_cpuinfo(s, pa, buf, cap);
    case SEG_VIEW_IDLE: return view_cpuidle(s, pa, now_ns, buf, cap);
    case SEG_VIEW_CG_CPU_STAT: return view_cg_cpu_stat(s, pa, now_ns, buf, cap);
    case SEG_VIEW_CG_MEMORY_STAT: return view_cg_memory_stat(s, pa, buf, cap);
    case SEG_VIEW_CG_CPUS: return view_cg_cpus(s, pa, buf, cap);
    case SEG_VIEW_PID_STAT: return view_pid_stat(s, pa, now_ns, buf, cap);
    case SEG_VIEW_PID_STATUS: return view_pid_status(s, pa, now_ns, buf, cap);
    case SEG_VIEW_PID_STATM: return view_pid_statm(s, pa, now_ns, buf, cap);
    case SEG_VIEW_TEMPLATE: return view_template(s, pa, buf, cap);
    case SEG_VIEW_CF_TIME:
    case SEG_VIEW_CF_TOTAL:
    case SEG_VIEW_CF_TRANS: return view_cpufreq_stats(s, kind, pa, now_ns, buf, cap);
    default: return 0;
    }
}
