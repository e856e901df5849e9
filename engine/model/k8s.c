/* k8s: label and quantity syntax; see k8s.h. */
#include "k8s.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *k8s_label_value_problem(const char *v)
{
    size_t n = strlen(v);
    if (n == 0)
        return NULL;
    if (n > 63)
        return "is longer than 63 characters";
    if (!isalnum((unsigned char)v[0]) || !isalnum((unsigned char)v[n - 1]))
        return "must start and end with a letter or digit";
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)v[i]) && !strchr("-_.", v[i]))
            return "may hold only letters, digits, '-', '_' and '.'";
    return NULL;
}

const char *k8s_label_key_problem(const char *key)
{
    const char *slash = strchr(key, '/');
    const char *name = slash ? slash + 1 : key;
    if (slash) {
        size_t pl = (size_t)(slash - key);
        if (pl == 0 || pl > 253)
            return "has an empty or over-long prefix before '/'";
        for (size_t i = 0; i < pl; i++)
            if (!(islower((unsigned char)key[i]) || isdigit((unsigned char)key[i]) || key[i] == '-' || key[i] == '.'))
                return "has a prefix that is not a lower-case DNS name";
    }
    if (!*name)
        return "has an empty name";
    if (strchr(name, '/'))
        return "has more than one '/'";
    return k8s_label_value_problem(name);
}

bool k8s_quantity(const char *s, bool milli, long double *out)
{
    char *end;
    long double v = strtold(s, &end);
    if (end == s || v < 0)
        return false;
    static const struct {
        const char *sfx;
        long double mul;
    } sfx[] = {{"Ki", 1024.0L}, {"Mi", 1048576.0L}, {"Gi", 1073741824.0L}, {"Ti", 1099511627776.0L},
               {"k", 1e3L},     {"M", 1e6L},        {"G", 1e9L},           {"T", 1e12L},
               {"m", 1e-3L},    {"", 1.0L}};
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        if (!strcmp(end, sfx[i].sfx)) {
            *out = v * sfx[i].mul * (milli ? 1000.0L : 1.0L);
            return true;
        }
    }
    return false;
}
