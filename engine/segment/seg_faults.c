/* seg_faults: state/faults read and parsed; see seg_faults.h. */
#include "seg_faults.h"

#include <errno.h>
#include <string.h>

/* A number in base 10 or 16 at p (at most end): its value, p moved past it. */
static long number(const char **p, const char *end, int base)
{
    long v = 0;
    for (; *p < end; (*p)++) {
        char c = **p;
        int d = c >= '0' && c <= '9' ? c - '0' : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0 || v > 0x7ffffff)
            break;
        v = v * base + d;
    }
    return v;
}

bool seg_faults_parse(const char *text, size_t len, struct seg_faults *out)
{
    memset(out, 0, sizeof *out);
    const char *p = text, *end = text + len;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\n'))
            p++;
        const char *w = p;
        while (p < end && *p != '=' && *p != ' ' && *p != '\n')
            p++;
        size_t k = (size_t)(p - w);
        if (p >= end || *p != '=') {
            continue;
        }
        p++;
        if (k == 2 && !memcmp(w, "gl", 2)) {
            out->gpu_lost = (uint32_t)number(&p, end, 16);
        } else if (k == 3 && !memcmp(w, "bmc", 3) && p < end && (*p == 't' || *p == 's')) {
            out->bmc = *p++;
            out->bmc_ms = (int)number(&p, end, 10);
        } else if (k == 2 && !memcmp(w, "hw", 2)) {
            out->hwmon_err = (int)number(&p, end, 10);
        } else if (k == 2 && !memcmp(w, "wr", 2)) {
            out->write_err = (int)number(&p, end, 10);
        } else if (k == 2 && !memcmp(w, "lk", 2)) {
            out->pkg_locked = (uint32_t)number(&p, end, 16);
        } else if (k == 3 && !memcmp(w, "off", 3)) {
            out->off_err = (int)number(&p, end, 10);
        }
        while (p < end && *p != ' ' && *p != '\n')
            p++;
    }
    return out->gpu_lost || out->bmc || out->hwmon_err > 0 || out->write_err > 0 || out->pkg_locked || out->off_err > 0;
}

bool seg_faults_read(struct seg *s, struct seg_faults *out)
{
    memset(out, 0, sizeof *out);
    uint32_t e = seg_lookup(s, "state/faults", 12);
    if (e == SEG_NONE)
        return false;
    char tmp[SEG_TEXT_MAX];
    size_t len = 0;
    const char *t = seg_read(s, e, seg_now_ns(), tmp, &len);
    return t && seg_faults_parse(t, len, out);
}

int seg_faults_locked_errno(uint32_t locked, const char *path)
{
    const char *z = locked ? strstr(path, "intel-rapl:") : NULL;
    if (!z)
        return 0;
    const char *p = z + 11;
    long k = number(&p, p + 4, 10);
    if (p == z + 11 || *p != '/' || k >= 32 || !((locked >> k) & 1))
        return 0; /* not a package zone (a subzone "intel-rapl:0:0"), or not locked */
    const char *base = p + 1;
    if (strchr(base, '/'))
        return 0;
    size_t n = strlen(base);
    if (!strncmp(base, "constraint_", 11) &&
        ((n > 15 && !strcmp(base + n - 15, "_power_limit_uw")) || (n > 15 && !strcmp(base + n - 15, "_time_window_us"))))
        return ENODATA;
    return strcmp(base, "enabled") ? 0 : ENOSYS;
}
