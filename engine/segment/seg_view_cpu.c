/* seg_view_cpu: the views of one CPU's files: a core's or CCD's hwmon temperature under its
 * package's (SEG_VIEW_TEMP), /proc/cpuinfo with each CPU's running frequency (SEG_VIEW_CPUINFO) and
 * a cpuidle state's usage and time (SEG_VIEW_IDLE); seg_view.h gives each one's param and sources. */
#include "seg_view_common.h"

size_t view_cpu_temp(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap)
{
    if (cap < 32 || pa->a < 0 || pa->a >= s->n_values || pa->c <= 0)
        return 0;
    int64_t t = view_value_number(s, (uint32_t)pa->a) - pa->b;
    t = t > 0 ? t / pa->c * pa->c : 0;
    char *p = put_u(buf, (uint64_t)t);
    *p++ = '\n';
    return (size_t)(p - buf);
}

struct rate_of {
    uint32_t v;
    uint8_t type;
    uint64_t rate;
};

static void rate_read(const struct seg_value *values, void *ctx)
{
    struct rate_of *r = ctx;
    r->type = values[r->v].type;
    r->rate = values[r->v].ctr.power_uw;
}

/* Whether time counter v (v < n_values) adds nothing per substep now: its CPU is idle. Reads the
 * one field of the published value, not the whole value. */
static bool line_stands_still(const struct seg *s, uint32_t v)
{
    struct rate_of r = {.v = v};
    view_latched(s, rate_read, &r);
    return r.type == SEG_V_COUNTER && r.rate == 0;
}

size_t view_cpuinfo(const struct seg *s, const struct seg_param *pa, char *buf, size_t cap)
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
        int64_t khz = shown < s->n_values ? view_value_number(s, (uint32_t)shown) : 0;
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

size_t view_cpuidle(const struct seg *s, const struct seg_param *pa, int64_t now_ns, char *buf, size_t cap)
{
    uint64_t busy, elapsed, rates;
    int64_t boot;
    /* the times of one CPU: the elapsed counter and this CPU's busy counter as a one-CPU view */
    struct seg_param one = {.a = pa->a, .b = pa->b, .c = 1};
    if (cap < 32 || pa->c < 0 || pa->c > 1000 || pa->d < 0 || view_read_times(s, &one, now_ns, &elapsed, &busy, &rates, &boot) != 1)
        return 0;
    uint64_t us = (elapsed - busy) / 1000 / 1000 * (uint64_t)pa->c + (elapsed - busy) / 1000 % 1000 * (uint64_t)pa->c / 1000;
    char *p = put_u(buf, pa->d ? us / (uint64_t)pa->d : us);
    *p++ = '\n';
    return (size_t)(p - buf);
}
