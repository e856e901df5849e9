/* duration: parser for Go-style durations; see duration.h. */
#include "duration.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool duration_parse(const char *s, int64_t *ns)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
    if (!s || !*s)
        return false;
    if (!strcmp(s, "0")) {
        *ns = 0;
        return true;
    }
    double total = 0;
    const char *p = s;
    while (*p) {
        char *end;
        if (!(*p >= '0' && *p <= '9') && *p != '.')
            return false;
        double v = strtod(p, &end);
        if (end == p)
            return false;
        p = end;
        int best = -1;
        size_t bestlen = 0;
        for (int i = 0; i < (int)(sizeof units / sizeof units[0]); i++) {
            size_t l = strlen(units[i].unit);
            if (!strncmp(p, units[i].unit, l) && l > bestlen) {
                best = i;
                bestlen = l;
            }
        }
        if (best < 0)
            return false;
        total += v * units[best].scale;
        p += bestlen;
    }
    if (!isfinite(total) || total > 9.2e18)
        return false;
    *ns = (int64_t)llround(total);
    return true;
}
