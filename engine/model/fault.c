/* fault: a fault's definition, its kinds and devices, parsed with file:line:col; see fault.h. */
#include "fault.h"

#include "arena.h"
#include "diag.h"
#include "profile_validate.h"
#include "ytree.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const fault_kind_names[FK_NKINDS] = {
    "gpu-lost",   "gpu-power-brake", "bmc-timeout",   "bmc-slow",    "redfish-unavailable",
    "hwmon-error", "write-refused",  "limit-ignored", "inlet-temp", "fan-failure", "rapl-freeze",
    "gpu-xid",    "gpu-ecc-corrected", "gpu-ecc-uncorrected", "limit-locked",
    "psu-loss",   "power-loss", "freq-stuck", "rapl-jump",
};
const char *const fault_device_names[FD_NDEVICES] = {"node", "package", "dram", "gpu", "bmc", "cooling"};

#define DEV(d) (1u << (d))
/* Per kind: the devices it can strike, the one it strikes when none is given, its number's key
 * with default and range (NULL: none), and whether it takes an errno. */
static const struct kind_info {
    unsigned devices;
    int device;
    const char *param;
    double def, lo, hi;
    int err; /* default errno; 0: no errno parameter */
} kinds[FK_NKINDS] = {
    [FK_GPU_LOST] = {DEV(FD_GPU), FD_GPU, NULL, 0, 0, 0, 0},
    [FK_GPU_POWER_BRAKE] = {DEV(FD_GPU), FD_GPU, "watts", NAN, 0, 10000, 0},
    [FK_BMC_TIMEOUT] = {DEV(FD_BMC), FD_BMC, "delayMs", 2000, 0, 120000, 0},
    [FK_BMC_SLOW] = {DEV(FD_BMC), FD_BMC, "delayMs", 2000, 0, 120000, 0},
    [FK_REDFISH_UNAVAILABLE] = {DEV(FD_BMC), FD_BMC, "retryAfterSec", 30, 1, 86400, 0},
    [FK_HWMON_ERROR] = {DEV(FD_NODE), FD_NODE, NULL, 0, 0, 0, EIO},
    [FK_WRITE_REFUSED] = {DEV(FD_NODE), FD_NODE, NULL, 0, 0, 0, ENODATA},
    [FK_LIMIT_IGNORED] = {DEV(FD_NODE) | DEV(FD_PACKAGE) | DEV(FD_GPU), FD_NODE, NULL, 0, 0, 0, 0},
    [FK_INLET_TEMP] = {DEV(FD_COOLING), FD_COOLING, "deltaC", 10, -40, 80, 0},
    [FK_FAN_FAILURE] = {DEV(FD_COOLING), FD_COOLING, "deltaC", 65, 0, 80, 0},
    [FK_RAPL_FREEZE] = {DEV(FD_PACKAGE) | DEV(FD_DRAM), FD_PACKAGE, NULL, 0, 0, 0, 0},
    [FK_GPU_XID] = {DEV(FD_GPU), FD_GPU, "xid", 13, 1, 999, 0},
    [FK_GPU_ECC_CORRECTED] = {DEV(FD_GPU), FD_GPU, "count", 1, 1, 1e9, 0},
    [FK_GPU_ECC_UNCORRECTED] = {DEV(FD_GPU), FD_GPU, "count", 1, 1, 1e9, 0},
    [FK_LIMIT_LOCKED] = {DEV(FD_PACKAGE), FD_PACKAGE, NULL, 0, 0, 0, 0},
    [FK_PSU_LOSS] = {DEV(FD_NODE), FD_NODE, "watts", 1000, 50, 100000, 0},
    [FK_POWER_LOSS] = {DEV(FD_NODE), FD_NODE, NULL, 0, 0, 0, EIO},
    [FK_FREQ_STUCK] = {DEV(FD_NODE) | DEV(FD_PACKAGE), FD_NODE, NULL, 0, 0, 0, 0},
    [FK_RAPL_JUMP] = {DEV(FD_PACKAGE) | DEV(FD_DRAM), FD_PACKAGE, "joules", 1000, 0.001, 1e9, 0},
};

static const struct {
    const char *name;
    int err;
} errnos[] = {
    {"EIO", EIO},         {"ENODATA", ENODATA},     {"EAGAIN", EAGAIN}, {"EPERM", EPERM},   {"EINVAL", EINVAL},
    {"EBUSY", EBUSY},     {"ENXIO", ENXIO},         {"ENODEV", ENODEV}, {"EACCES", EACCES}, {"ETIMEDOUT", ETIMEDOUT},
    {"EOPNOTSUPP", EOPNOTSUPP}, {"ENOSYS", ENOSYS},
};

int fault_errno(const char *name)
{
    for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
        if (!strcasecmp(name, errnos[i].name))
            return errnos[i].err;
    char *end;
    long v = strtol(name, &end, 10);
    if (*name && !*end)
        for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
            if (errnos[i].err == v)
                return (int)v;
    return 0;
}

const char *fault_errno_name(int err)
{
    for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
        if (errnos[i].err == err)
            return errnos[i].name;
    return NULL;
}

const char *fault_device_text(const struct fault_def *f, char *buf, unsigned len)
{
    if ((f->device == FD_GPU || f->device == FD_PACKAGE) && f->index >= 0)
        snprintf(buf, len, "%s%d", fault_device_names[f->device], f->index);
    else
        snprintf(buf, len, "%s", fault_device_names[f->device]);
    return buf;
}

struct fctx {
    struct diag *d;
    const char *where;
    int errors;
};

#define FERR(c, at, ...)                                                                           \
    do {                                                                                           \
        diag_at((c)->d, (at), __VA_ARGS__);                                                        \
        (c)->errors++;                                                                             \
    } while (0)

static const char *const fault_keys[] = {"id", "kind", "atSec", "durationSec", "nodes", "pools", "labels",
                                         "fraction", "seed", "device", "params", NULL};

static void list_words(const char *const *w, int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; (n < 0 ? w[i] != NULL : i < n) && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", w[i]);
}

static const char *scalar(struct fctx *c, const struct yt_node *n, const char *key)
{
    if (n->kind != YT_SCALAR || yt_is_null(n)) {
        FERR(c, n, "%s: %s: expected a text value, got %s", c->where, key,
             n->kind == YT_SCALAR ? "nothing" : yt_kind_name(n->kind));
        return NULL;
    }
    return n->text;
}

static bool number(struct fctx *c, const struct yt_node *n, const char *key, double lo, double hi, double *out)
{
    double v;
    if (n->kind != YT_SCALAR || !yt_double(n, &v) || !isfinite(v)) {
        FERR(c, n, "%s: %s: expected a number, got %s%s%s", c->where, key, n->kind == YT_SCALAR ? "\"" : "a ",
             n->kind == YT_SCALAR ? n->text : yt_kind_name(n->kind), n->kind == YT_SCALAR ? "\"" : "");
        return false;
    }
    if (v < lo || v > hi) {
        FERR(c, n, "%s: %s: %g is out of range (expected %g to %g)", c->where, key, v, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

/* A list of names (or one name) into *out. */
static int names(struct fctx *c, struct arena *a, const struct yt_node *n, const char *key, const char ***out)
{
    const struct yt_node *one[1] = {n};
    const struct yt_node *const *items = one;
    int k = 1;
    if (n->kind == YT_SEQ) {
        items = (const struct yt_node *const *)n->vals;
        k = n->n;
    }
    *out = arena_alloc(a, sizeof **out * (size_t)(k ? k : 1));
    int got = 0;
    for (int i = 0; i < k; i++) {
        const char *s = scalar(c, items[i], key);
        if (s)
            (*out)[got++] = arena_strdup(a, s);
    }
    return got;
}

static bool parse_device(struct fctx *c, struct fault_def *f, const struct yt_node *n)
{
    const char *s = scalar(c, n, "device");
    if (!s)
        return false;
    for (int d = 0; d < FD_NDEVICES; d++) {
        size_t l = strlen(fault_device_names[d]);
        if (strncmp(s, fault_device_names[d], l))
            continue;
        const char *rest = s + l;
        if (!*rest) {
            f->device = d;
            f->index = -1;
            return true;
        }
        char *end;
        long i = strtol(rest, &end, 10);
        if ((d == FD_GPU || d == FD_PACKAGE) && rest[0] >= '0' && rest[0] <= '9' && !*end && i < 64) {
            f->device = d;
            f->index = (int)i;
            return true;
        }
    }
    FERR(c, n, "%s: device: \"%s\" is not a device (expected node, package, package<N>, dram, gpu, gpu<N>, bmc "
               "or cooling)", c->where, s);
    return false;
}

static void parse_params(struct fctx *c, struct fault_def *f, const struct yt_node *p, const struct kind_info *k)
{
    if (!p || yt_is_null(p))
        return;
    if (p->kind != YT_MAP) {
        FERR(c, p, "%s: params: expected a mapping, got a %s", c->where, yt_kind_name(p->kind));
        return;
    }
    for (int i = 0; i < p->n; i++) {
        const char *key = p->keys[i]->text;
        const struct yt_node *v = p->vals[i];
        if (k->param && !strcmp(key, k->param)) {
            char path[64];
            snprintf(path, sizeof path, "params.%s", key);
            number(c, v, path, k->lo, k->hi, &f->value);
        } else if (k->err && !strcmp(key, "errno")) {
            const char *s = scalar(c, v, "errno");
            if (s && !(f->err = fault_errno(s))) {
                char list[256];
                size_t used = 0;
                for (size_t e = 0; e < sizeof errnos / sizeof errnos[0]; e++)
                    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", e ? ", " : "", errnos[e].name);
                FERR(c, v, "%s: params.errno: \"%s\" is not an errno hwemu knows (expected one of: %s)", c->where, s,
                     list);
            }
        } else {
            const char *want = k->param ? k->param : k->err ? "errno" : NULL;
            if (want)
                FERR(c, p->keys[i], "%s: params.%s: unknown parameter of %s (expected %s)", c->where, key,
                     fault_kind_names[f->kind], want);
            else
                FERR(c, p->keys[i], "%s: params.%s: %s takes no parameters", c->where, key, fault_kind_names[f->kind]);
        }
    }
}

bool fault_parse(struct fault_def *f, struct arena *a, const struct yt_node *map, const char *where,
                 const char *const *ignore, struct diag *d)
{
    struct fctx c = {.d = d, .where = where};
    memset(f, 0, sizeof *f);
    f->kind = -1;
    f->index = -1;
    f->fraction = 1;
    f->value = NAN;
    if (!map || map->kind != YT_MAP) {
        FERR(&c, map, "%s: expected a mapping (kind, device, nodes, atSec, durationSec, params), got %s", where,
             map ? yt_kind_name(map->kind) : "nothing");
        return false;
    }
    f->file = map->file;
    f->line = map->line;
    for (int i = 0; i < map->n; i++) {
        const char *k = map->keys[i]->text;
        bool known = false;
        for (int j = 0; fault_keys[j] && !known; j++)
            known = !strcmp(k, fault_keys[j]);
        for (int j = 0; ignore && ignore[j] && !known; j++)
            known = !strcmp(k, ignore[j]);
        if (known)
            continue;
        char list[256];
        list_words(fault_keys, -1, list, sizeof list);
        const char *near = closest_word(k, fault_keys);
        if (near)
            FERR(&c, map->keys[i], "%s: %s: unknown field; did you mean \"%s\"? (expected one of: %s)", where, k, near,
                 list);
        else
            FERR(&c, map->keys[i], "%s: %s: unknown field (expected one of: %s)", where, k, list);
    }
    const struct yt_node *n;
    if ((n = yt_get(map, "id"))) {
        const char *s = scalar(&c, n, "id");
        size_t l = s ? strlen(s) : 0;
        bool ok = l > 0 && l < FAULT_ID_MAX;
        for (size_t i = 0; ok && i < l; i++)
            ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
                 s[i] == '-' || s[i] == '_' || s[i] == '.';
        if (s && !ok)
            FERR(&c, n, "%s: id: \"%s\" is not an id (expected 1 to %d letters, digits, '-', '_' or '.')", where, s,
                 FAULT_ID_MAX - 1);
        else if (s)
            memcpy(f->id, s, l + 1);
    }
    if (!(n = yt_get(map, "kind"))) {
        char list[512];
        list_words(fault_kind_names, FK_NKINDS, list, sizeof list);
        FERR(&c, map, "%s: kind: required (one of: %s)", where, list);
    } else {
        const char *s = scalar(&c, n, "kind");
        for (int k = 0; s && k < FK_NKINDS; k++)
            if (!strcmp(s, fault_kind_names[k]))
                f->kind = k;
        if (s && f->kind < 0) {
            char list[512];
            list_words(fault_kind_names, FK_NKINDS, list, sizeof list);
            const char *names[FK_NKINDS + 1] = {0}; /* closest_word wants a NULL-terminated list */
            memcpy(names, fault_kind_names, sizeof fault_kind_names);
            const char *near = closest_word(s, names);
            if (near)
                FERR(&c, n, "%s: kind: unknown kind \"%s\"; did you mean \"%s\"? (expected one of: %s)", where, s, near,
                     list);
            else
                FERR(&c, n, "%s: kind: unknown kind \"%s\" (expected one of: %s)", where, s, list);
        }
    }
    if ((n = yt_get(map, "atSec")))
        f->has_at = number(&c, n, "atSec", 0, 1e9, &f->at_s);
    if ((n = yt_get(map, "durationSec")) && !yt_is_null(n))
        f->has_duration = number(&c, n, "durationSec", 0.001, 1e9, &f->duration_s);
    if ((n = yt_get(map, "nodes")))
        f->nnodes = names(&c, a, n, "nodes", &f->nodes);
    if ((n = yt_get(map, "pools")))
        f->npools = names(&c, a, n, "pools", &f->pools);
    if ((n = yt_get(map, "labels")) && !yt_is_null(n)) {
        if (n->kind != YT_MAP) {
            FERR(&c, n, "%s: labels: expected a mapping of label to value, got a %s", where, yt_kind_name(n->kind));
        } else {
            f->label_keys = arena_alloc(a, sizeof *f->label_keys * (size_t)(n->n ? n->n : 1));
            f->label_values = arena_alloc(a, sizeof *f->label_values * (size_t)(n->n ? n->n : 1));
            for (int i = 0; i < n->n; i++) {
                const char *v = scalar(&c, n->vals[i], n->keys[i]->text);
                if (!v)
                    continue;
                f->label_keys[f->nlabels] = arena_strdup(a, n->keys[i]->text);
                f->label_values[f->nlabels++] = arena_strdup(a, v);
            }
        }
    }
    if ((n = yt_get(map, "fraction")))
        number(&c, n, "fraction", 0, 1, &f->fraction);
    if ((n = yt_get(map, "seed"))) {
        long long s;
        if (!yt_int(n, &s) || s < 0)
            FERR(&c, n, "%s: seed: expected a whole number 0 or above, got \"%s\"", where,
                 n->kind == YT_SCALAR ? n->text : yt_kind_name(n->kind));
        else
            f->seed = (uint64_t)s;
    }
    if (f->kind < 0)
        return false;
    const struct kind_info *k = &kinds[f->kind];
    f->device = k->device;
    f->err = 0;
    if ((n = yt_get(map, "device")) && parse_device(&c, f, n) && !(k->devices & DEV(f->device))) {
        char list[128] = "";
        size_t used = 0;
        for (int dv = 0; dv < FD_NDEVICES; dv++)
            if (k->devices & DEV(dv))
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s%s", used ? ", " : "",
                                         fault_device_names[dv], dv == FD_GPU || dv == FD_PACKAGE ? "[N]" : "");
        FERR(&c, n, "%s: device: %s cannot strike %s (expected %s)", where, fault_kind_names[f->kind],
             fault_device_names[f->device], list);
    }
    parse_params(&c, f, yt_get(map, "params"), k);
    if (k->err && !f->err)
        f->err = k->err;
    if (k->param && isnan(f->value))
        f->value = k->def;
    return c.errors == 0;
}
