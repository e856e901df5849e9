/* seg_view_cpufreq: a table-driver policy's cpufreq/stats: time_in_state, total_trans and
 * trans_table from its stat counters, as drivers/cpufreq/cpufreq_stats.c prints them (seg_view.h
 * SEG_VIEW_CF_*; docs/whole-node.md "cpufreq/stats"). */
#include "seg_view_common.h"

struct cf_stats {
    int k;                                   /* table entries */
    int cur;                                 /* the running entry, -1: none */
    uint32_t khz[SEG_CF_MAX_STATES];
    uint64_t time_ns[SEG_CF_MAX_STATES];
    uint64_t trans[SEG_CF_MAX_STATES * SEG_CF_MAX_STATES];
};

/* The policy's lines under the latch: k time lines, then its k² transition counts packed in
 * SEG_V_COUNTS values, from param b. */
struct cf_lines {
    const struct seg_param *pa;
    int64_t now_ns, substep;
    struct cf_stats *st;
};

static void cf_lines_read(const struct seg_value *values, void *ctx)
{
    struct cf_lines *cl = ctx;
    const struct seg_param *pa = cl->pa;
    struct cf_stats *st = cl->st;
    int k = st->k;
    const struct seg_value *ev = &values[pa->a];
    struct line el = line_of(ev);
    int64_t t = capped_at_horizon(ev, cl->now_ns, cl->substep);
    uint64_t elapsed = line_at(&el, t, cl->substep);
    st->cur = -1;
    for (int i = 0; i < k; i++) {
        struct line l = line_of(&values[pa->b + i]);
        uint64_t v = line_at(&l, t, cl->substep);
        st->time_ns[i] = v < elapsed ? v : elapsed;
        if (l.rate)
            st->cur = i;
    }
    for (int i = 0; i < k * k; i++) {
        const struct seg_value *cv = &values[pa->b + k + i / SEG_COUNTS_PER_VALUE];
        uint32_t c = 0;
        if (cv->type == SEG_V_COUNTS)
            memcpy(&c, cv->text + (i % SEG_COUNTS_PER_VALUE) * 4, 4);
        st->trans[i] = c;
    }
}

/* The policy's table (words_off) and its lines at now_ns from one latch generation: false when
 * the param is bad. */
static bool cf_read(const struct seg *s, const struct seg_param *pa, int64_t now_ns, struct cf_stats *st)
{
    uint32_t nv = s->n_values;
    if (pa->c < 1 || pa->c > SEG_CF_MAX_STATES || pa->a < 0 || pa->a >= nv || pa->b < 0 ||
        pa->b + pa->c + SEG_CF_COUNT_VALUES(pa->c) > nv || pa->words_off >= s->strings_size)
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
    struct cf_lines cl = {.pa = pa, .now_ns = now_ns, .substep = s->substep_ns, .st = st};
    view_latched(s, cf_lines_read, &cl);
    return true;
}

/* "%9u": right-aligned in 9 columns, wider when it needs more. */
static char *put_u9(char *p, uint64_t v)
{
    int n = view_ndigits(v);
    for (; n < 9; n++)
        *p++ = ' ';
    return put_u(p, v);
}

size_t view_cpufreq_stats(const struct seg *s, int kind, const struct seg_param *pa, int64_t now_ns, char *buf,
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
            p = put_u(p, st.time_ns[i] / VIEW_TICK_NS);
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
