/* profile_validate: schema walk and cross-field rules; see profile_validate.h. */
#include "profile_validate.h"

#include "cpu_vulns.h"
#include "diag.h"
#include "gpu_files.h"
#include "k8s.h"
#include "profile_get.h"
#include "profile_schema.h"
#include "provenance.h"
#include "ytree.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vctx {
    const char *subject;
    const struct yt_node *sources;
    struct diag *d;
    int errors;
};

#define VERR(c, at, ...)                                                                           \
    do {                                                                                           \
        char m_[768];                                                                              \
        snprintf(m_, sizeof m_, __VA_ARGS__);                                                      \
        diag_at((c)->d, (at), "%s: %s", (c)->subject, m_);                                         \
        (c)->errors++;                                                                             \
    } while (0)

static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    int row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int prev = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cur = row[j];
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = prev + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[lb];
}

const char *closest_word(const char *word, const char *const *candidates)
{
    const char *best = NULL;
    int bestd = 3;
    for (int i = 0; candidates[i]; i++) {
        int dist = edit_distance(word, candidates[i]);
        if (dist < bestd) {
            bestd = dist;
            best = candidates[i];
        }
    }
    return best;
}

static const char *closest_field(const char *word, const struct sfield *table)
{
    const char *names[128];
    int n = 0;
    for (const struct sfield *f = table; f->key && n < 127; f++)
        names[n++] = f->key;
    names[n] = NULL;
    return closest_word(word, names);
}

static bool word_ok(const char *words, const char *v)
{
    size_t vl = strlen(v);
    for (const char *w = words;;) {
        size_t l = strcspn(w, "|");
        if (l == vl && !strncmp(w, v, l))
            return true;
        if (!w[l])
            return false;
        w += l + 1;
    }
}

static void words_list(const char *words, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (const char *w = words; *w || w == words;) {
        size_t l = strcspn(w, "|");
        if (l) {
            int n = snprintf(buf + used, len - used, "%s%.*s", used ? ", " : "", (int)l, w);
            if (n < 0 || (size_t)n >= len - used)
                break;
            used += (size_t)n;
        }
        if (!w[l])
            break;
        w += l + 1;
    }
}

static bool scalar_nonzero(const struct yt_node *n)
{
    if (n->kind == YT_SEQ || n->kind == YT_MAP)
        return n->n > 0;
    if (yt_is_null(n))
        return false;
    const char *t = n->text;
    if (n->plain) {
        double v;
        bool b;
        if (yt_double(n, &v))
            return v != 0;
        if (yt_bool(n, &b))
            return b;
    }
    return t[0] != 0;
}

static bool scalar_is(const struct yt_node *n, enum sf_type t)
{
    long long i;
    double x;
    bool b;
    switch (t) {
    case SF_INT: return yt_int(n, &i);
    case SF_FLOAT: return yt_double(n, &x);
    case SF_BOOL: return yt_bool(n, &b);
    case SF_STR: return n->kind == YT_SCALAR && !yt_is_null(n);
    default: return false;
    }
}

static void check_source(struct vctx *c, const struct yt_node *n, const char *path, bool needed)
{
    if (n->src) {
        char why[512];
        const char *err = prov_check(n->src, c->sources, why, sizeof why);
        if (err)
            VERR(c, n, "%s: %s", path, err);
    } else if (needed) {
        VERR(c, n, "%s: this fact has no source; write it as {v: ..., src: \"kind:ref\"} or put a `src:` on "
             "the mapping above it", path);
    }
}

static void walk(struct vctx *c, const struct yt_node *map, const struct sfield *table, const char *path);

static void check_value(struct vctx *c, const struct sfield *f, const struct yt_node *v, const char *path)
{
    char p[512];
    switch (f->type) {
    case SF_OBJ:
        if (v->kind != YT_MAP) {
            VERR(c, v, "%s: expected %s, got a %s", path, sf_type_name(f->type), yt_kind_name(v->kind));
            return;
        }
        walk(c, v, f->sub, path);
        return;
    case SF_OBJLIST:
        if (v->kind != YT_SEQ) {
            VERR(c, v, "%s: expected %s, got a %s", path, sf_type_name(f->type), yt_kind_name(v->kind));
            return;
        }
        if (f->fact)
            check_source(c, v, path, v->n > 0);
        for (int i = 0; i < v->n; i++) {
            snprintf(p, sizeof p, "%s[%d]", path, i);
            if (v->vals[i]->kind != YT_MAP)
                VERR(c, v->vals[i], "%s: expected a mapping, got a %s", p, yt_kind_name(v->vals[i]->kind));
            else
                walk(c, v->vals[i], f->sub, p);
        }
        return;
    case SF_INTLIST:
    case SF_FLOATLIST:
        if (v->kind != YT_SEQ) {
            VERR(c, v, "%s: expected %s, got a %s", path, sf_type_name(f->type), yt_kind_name(v->kind));
            return;
        }
        for (int i = 0; i < v->n; i++)
            if (!scalar_is(v->vals[i], f->type == SF_INTLIST ? SF_INT : SF_FLOAT))
                VERR(c, v->vals[i], "%s[%d]: expected %s, got \"%s\"", path, i,
                     f->type == SF_INTLIST ? "an integer" : "a number",
                     v->vals[i]->kind == YT_SCALAR ? v->vals[i]->text : yt_kind_name(v->vals[i]->kind));
        if (f->fact)
            check_source(c, v, path, v->n > 0);
        return;
    case SF_STRMAP:
    case SF_INTMAP:
        if (v->kind != YT_MAP) {
            VERR(c, v, "%s: expected %s, got a %s", path, sf_type_name(f->type), yt_kind_name(v->kind));
            return;
        }
        for (int i = 0; i < v->n; i++)
            if (!scalar_is(v->vals[i], f->type == SF_INTMAP ? SF_INT : SF_STR))
                VERR(c, v->vals[i], "%s.%s: expected %s", path, v->keys[i]->text,
                     f->type == SF_INTMAP ? "an integer" : "a text value");
        return;
    case SF_LABELS:
        if (v->kind != YT_MAP) {
            VERR(c, v, "%s: expected %s, got a %s", path, sf_type_name(f->type), yt_kind_name(v->kind));
            return;
        }
        for (int i = 0; i < v->n; i++) {
            const struct yt_node *g = v->vals[i];
            snprintf(p, sizeof p, "%s.%s", path, v->keys[i]->text);
            if (g->kind != YT_MAP) {
                VERR(c, g, "%s: a label group is a mapping {src: \"kind:ref\", values: {key: value}}", p);
                continue;
            }
            for (int j = 0; j < g->n; j++)
                if (strcmp(g->keys[j]->text, "src") && strcmp(g->keys[j]->text, "values"))
                    VERR(c, g->keys[j], "%s: unknown key \"%s\" (expected src, values)", p, g->keys[j]->text);
            const struct yt_node *src = yt_get(g, "src"), *vals = yt_get(g, "values");
            if (vals && vals->kind != YT_MAP) {
                VERR(c, vals, "%s.values: expected a mapping of label keys to values", p);
                continue;
            }
            for (int j = 0; vals && j < vals->n; j++) {
                if (!vals->keys[j]->text[0])
                    VERR(c, vals->keys[j], "%s.values: a label key may not be empty", p);
                if (vals->vals[j]->kind != YT_SCALAR)
                    VERR(c, vals->vals[j], "%s.values.%s: a label value must be a text value", p,
                         vals->keys[j]->text);
                for (int k = 0; k < i; k++)
                    if (yt_get(yt_get(v->vals[k], "values"), vals->keys[j]->text))
                        VERR(c, vals->keys[j], "%s.values: label \"%s\" is also in group %s; a label belongs to one "
                             "group", p, vals->keys[j]->text, v->keys[k]->text);
            }
            if (!src || !yt_str(src)) {
                if (vals && vals->n)
                    VERR(c, g, "%s: this label group has no source; add src: \"kind:ref\"", p);
            } else {
                char why[512];
                const char *err = prov_check(src->text, c->sources, why, sizeof why);
                if (err)
                    VERR(c, src, "%s: %s", p, err);
            }
        }
        return;
    default:
        break;
    }
    /* Scalars. */
    if (!scalar_is(v, f->type)) {
        if (v->kind != YT_SCALAR)
            VERR(c, v, "%s: expected %s, got a %s", path, sf_type_name(f->type), yt_kind_name(v->kind));
        else if (yt_is_null(v))
            VERR(c, v, "%s: expected %s, got nothing", path, sf_type_name(f->type));
        else
            VERR(c, v, "%s: expected %s, got \"%s\"", path, sf_type_name(f->type), v->text);
        return;
    }
    if (f->words && !word_ok(f->words, v->text)) {
        char list[256];
        words_list(f->words, list, sizeof list);
        VERR(c, v, "%s: \"%s\" is not accepted here (expected one of: %s)", path, v->text, list);
    }
    if (f->fact)
        check_source(c, v, path, scalar_nonzero(v));
}

static void walk(struct vctx *c, const struct yt_node *map, const struct sfield *table, const char *path)
{
    char p[512];
    for (int i = 0; i < map->n; i++) {
        const char *k = map->keys[i]->text;
        snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", k);
        if (!*path && !strcmp(k, "sources"))
            continue;
        const struct sfield *f = sfield_find(table, k);
        if (!f) {
            char keys[1024];
            sfield_keys(table, keys, sizeof keys);
            const char *near = closest_field(k, table);
            if (near)
                VERR(c, map->keys[i], "%s: unknown key; did you mean \"%s\"? (expected one of: %s)", p, near, keys);
            else
                VERR(c, map->keys[i], "%s: unknown key (expected one of: %s)", p, keys);
            continue;
        }
        check_value(c, f, map->vals[i], p);
    }
}

/* --- cross-field rules --------------------------------------------------------------------- */

static const struct yt_node *at_or(const struct yt_node *tree, const char *path)
{
    const struct yt_node *n = yt_path(tree, path);
    return n ? n : tree;
}

static void need(struct vctx *c, const struct yt_node *tree, const char *path)
{
    if (!yt_path(tree, path)) {
        const char *dot = strrchr(path, '.');
        char parent[256];
        snprintf(parent, sizeof parent, "%.*s", dot ? (int)(dot - path) : 0, path);
        VERR(c, dot ? at_or(tree, parent) : tree, "%s: required but missing", path);
    }
}

static bool hexid(const char *s, int digits)
{
    if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || (int)strlen(s + 2) != digits)
        return false;
    for (const char *p = s + 2; *p; p++)
        if (!isxdigit((unsigned char)*p))
            return false;
    return true;
}

static void check_pci(struct vctx *c, const struct yt_node *dev, const char *path, bool required)
{
    const char *cls = yt_str(yt_get(dev, "class")), *ven = yt_str(yt_get(dev, "vendor"));
    const char *dv = yt_str(yt_get(dev, "device"));
    if (required && !cls)
        VERR(c, dev, "%s.class: required (\"0x\" and 6 hex digits, e.g. 0x030000)", path);
    if (required && !ven)
        VERR(c, dev, "%s.vendor: required (\"0x\" and 4 hex digits, e.g. 0x10de)", path);
    if (cls && *cls && !hexid(cls, 6))
        VERR(c, yt_get(dev, "class"), "%s.class: \"%s\" is not \"0x\" and 6 hex digits", path, cls);
    if (ven && *ven && !hexid(ven, 4))
        VERR(c, yt_get(dev, "vendor"), "%s.vendor: \"%s\" is not \"0x\" and 4 hex digits", path, ven);
    if (dv && *dv && !hexid(dv, 4))
        VERR(c, yt_get(dev, "device"), "%s.device: \"%s\" is not \"0x\" and 4 hex digits", path, dv);
}

/* uncore: one bus per socket ("0x36 0xae"), functions as "ss.f:dddd[:driver]" (render_uncore.c) */
static void check_uncore(struct vctx *c, const struct yt_node *t)
{
    const struct yt_node *u = yt_get(t, "uncore");
    if (!u)
        return;
    const char *buses = prof_str(u, "buses", ""), *fns = prof_str(u, "functions", "");
    int nb = 0;
    for (const char *b = buses + strspn(buses, " "); *b; b += strspn(b, " "), nb++) {
        char *end;
        long v = strtol(b, &end, 16);
        if (end == b || (*end && *end != ' ') || v < 0 || v > 0xff) {
            VERR(c, yt_get(u, "buses"), "uncore.buses: \"%s\" is not a list of bus numbers 0x00-0xff, one per "
                 "socket (e.g. \"0x36 0xae\")", buses);
            return;
        }
        b = end;
    }
    long long sockets = prof_int(t, "cpu.sockets", 1);
    if (nb != sockets)
        VERR(c, yt_get(u, "buses"), "uncore.buses: %d buses for %lld sockets: give one bus per socket", nb, sockets);
    if (!*fns)
        VERR(c, u, "uncore.functions: required (\"ss.f:dddd\" or \"ss.f:dddd:driver\", e.g. \"0a.2:2042:skx_uncore\")");
    for (const char *f = fns + strspn(fns, " "); *f; f += strspn(f, " ")) {
        size_t len = strcspn(f, " ");
        unsigned slot, func, dev;
        int used = 0;
        if (sscanf(f, "%2x.%1u:%4x%n", &slot, &func, &dev, &used) != 3 || slot > 0x1f || func > 7 ||
            used < 9 || ((size_t)used < len && (f[used] != ':' || len - (size_t)used > 31))) {
            VERR(c, yt_get(u, "functions"), "uncore.functions: \"%.*s\" is not \"ss.f:dddd\" or \"ss.f:dddd:driver\" "
                 "(device 00-1f, function 0-7, 4 hex digits of device id)", (int)len, f);
            break;
        }
        f += len;
    }
    static const char *const ids[][2] = {{"vendor", "4"}, {"class", "6"}, {"subsystemVendor", "4"},
                                         {"subsystemDevice", "4"}, {"revision", "2"}};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        const char *v = prof_str(u, ids[i][0], "");
        if (*v && !hexid(v, ids[i][1][0] - '0'))
            VERR(c, yt_get(u, ids[i][0]), "uncore.%s: \"%s\" is not \"0x\" and %s hex digits", ids[i][0], v, ids[i][1]);
    }
}

static int count_verbs(const char *fmt, bool *bad)
{
    int n = 0;
    for (const char *p = fmt; *p; p++) {
        if (*p != '%')
            continue;
        if (p[1] == '%') {
            p++;
        } else if (p[1] == 'd') {
            n++;
            p++;
        } else {
            *bad = true;
        }
    }
    return n;
}

static void check_zone(struct vctx *c, const struct yt_node *z, const char *path, bool top)
{
    char p[512];
    const char *repeat = prof_str(z, "repeat", "");
    const char *fmt = prof_str(z, "nameFormat", "");
    if (top && !*repeat)
        VERR(c, z, "%s.repeat: a top-level zone needs repeat: per-package, per-die or once", path);
    if (!top && *repeat)
        VERR(c, yt_get(z, "repeat"), "%s.repeat: a child zone repeats with its parent; remove repeat", path);
    if (!*fmt) {
        VERR(c, z, "%s.nameFormat: required (the content of the zone's name file, e.g. package-%%d)", path);
    } else {
        bool bad = false;
        int verbs = count_verbs(fmt, &bad);
        int want = !strcmp(repeat, "per-package") ? 1 : !strcmp(repeat, "per-die") ? 2 : 0;
        if (bad)
            VERR(c, yt_get(z, "nameFormat"), "%s.nameFormat: only %%d and %%%% may follow a %%", path);
        else if (verbs != want)
            VERR(c, yt_get(z, "nameFormat"), "%s.nameFormat: \"%s\" has %d %%d, but repeat \"%s\" fills %d", path,
                 fmt, verbs, *repeat ? repeat : "(child)", want);
    }
    long long en = prof_int(z, "enabled", 0);
    if (en != 0 && en != 1)
        VERR(c, yt_get(z, "enabled"), "%s.enabled: must be 0 or 1", path);
    if (prof_int(z, "energyUnitNJ", 0) <= 0 && !yt_get(z, "maxEnergyRangeUJ"))
        VERR(c, z, "%s.energyUnitNJ: must be > 0 (or give maxEnergyRangeUJ)", path);
    if (prof_int(z, "powerUnitUW", 0) < 0)
        VERR(c, yt_get(z, "powerUnitUW"), "%s.powerUnitUW: must be >= 0", path);
    long long bits = prof_int(z, "limitBits", 0);
    if (yt_get(z, "limitBits") && (bits < 1 || bits > 32))
        VERR(c, yt_get(z, "limitBits"), "%s.limitBits: must be between 1 and 32", path);
    const struct yt_node *cons = yt_get(z, "constraints");
    for (int i = 0; cons && cons->kind == YT_SEQ && i < cons->n; i++) {
        const struct yt_node *k = cons->vals[i];
        snprintf(p, sizeof p, "%s.constraints[%d]", path, i);
        if (!*prof_str(k, "name", ""))
            VERR(c, k, "%s.name: required (long_term, short_term, peak_power, ...)", p);
        for (const char *f = "powerLimitUW\0maxPowerUW\0timeWindowUS\0"; *f; f += strlen(f) + 1)
            if (prof_int(k, f, 0) < 0)
                VERR(c, yt_get(k, f), "%s.%s: must be >= 0", p, f);
    }
    const struct yt_node *extra = yt_get(z, "extraFiles");
    for (int i = 0; extra && extra->kind == YT_MAP && i < extra->n; i++)
        if (strchr(extra->keys[i]->text, '/') || !extra->keys[i]->text[0])
            VERR(c, extra->keys[i], "%s.extraFiles: \"%s\" must be a plain file name", path, extra->keys[i]->text);
    const struct yt_node *kids = yt_get(z, "children");
    for (int i = 0; kids && kids->kind == YT_SEQ && i < kids->n; i++) {
        snprintf(p, sizeof p, "%s.children[%d]", path, i);
        if (kids->vals[i]->kind == YT_MAP)
            check_zone(c, kids->vals[i], p, false);
    }
}

static void check_node_cpu(struct vctx *c, const struct yt_node *t)
{
    need(c, t, "node.capacity.cpu");
    need(c, t, "node.capacity.memoryKi");
    need(c, t, "cpu.vendorID");
    need(c, t, "cpu.modelName");
    long long cap = prof_int(t, "node.capacity.cpu", 0), mem = prof_int(t, "node.capacity.memoryKi", 0);
    if (yt_path(t, "node.capacity.cpu") && cap <= 0)
        VERR(c, yt_path(t, "node.capacity.cpu"), "node.capacity.cpu: must be > 0");
    if (yt_path(t, "node.capacity.memoryKi") && mem <= 0)
        VERR(c, yt_path(t, "node.capacity.memoryKi"), "node.capacity.memoryKi: must be > 0");
    const char *rc = prof_str(t, "node.reserved.cpu", ""), *rm = prof_str(t, "node.reserved.memory", "");
    long double q;
    if (*rc && (!k8s_quantity(rc, true, &q) || q > (long double)cap * 1000.0L))
        VERR(c, yt_path(t, "node.reserved.cpu"), "node.reserved.cpu: \"%s\" is not a CPU quantity within the "
             "capacity of %lld (e.g. \"1\" or \"500m\")", rc, cap);
    if (*rm && (!k8s_quantity(rm, false, &q) || q > (long double)mem * 1024.0L))
        VERR(c, yt_path(t, "node.reserved.memory"), "node.reserved.memory: \"%s\" is not a memory quantity within "
             "the capacity (e.g. \"4Gi\")", rm);
    const struct yt_node *taints = yt_path(t, "node.taints");
    for (int i = 0; taints && taints->kind == YT_SEQ && i < taints->n; i++)
        if (!*prof_str(taints->vals[i], "key", ""))
            VERR(c, taints->vals[i], "node.taints[%d].key: required", i);
    const struct yt_node *ext = yt_path(t, "node.extendedResources");
    for (int i = 0; ext && ext->kind == YT_MAP && i < ext->n; i++) {
        const char *k = ext->keys[i]->text;
        if (!strncmp(k, "nvidia.com/", 11) || !strncmp(k, "amd.com/", 8) || !strncmp(k, "gpu.intel.com/", 14))
            VERR(c, ext->keys[i], "node.extendedResources.%s: GPU resources come from gpus.exposure, not from here", k);
        if (prof_int(ext, k, 0) < 0)
            VERR(c, ext->vals[i], "node.extendedResources.%s: must be >= 0", k);
    }
    const struct yt_node *pci = yt_get(t, "pci");
    for (int i = 0; pci && pci->kind == YT_SEQ && i < pci->n; i++) {
        char p[64];
        snprintf(p, sizeof p, "pci[%d]", i);
        check_pci(c, pci->vals[i], p, true);
    }
    check_uncore(c, t);
    if (!yt_get(t, "cpu"))
        return;
    const char *verbatim = prof_str(t, "cpu.cpuinfoVerbatim", "");
    long long s = prof_int(t, "cpu.sockets", 0), k = prof_int(t, "cpu.coresPerSocket", 0),
              th = prof_int(t, "cpu.threadsPerCore", 0);
    if (!*verbatim) {
        need(c, t, "cpu.sockets");
        need(c, t, "cpu.coresPerSocket");
        need(c, t, "cpu.threadsPerCore");
        if ((yt_path(t, "cpu.sockets") && s < 1) || (yt_path(t, "cpu.coresPerSocket") && k < 1) ||
            (yt_path(t, "cpu.threadsPerCore") && th < 1))
            VERR(c, yt_get(t, "cpu"), "cpu: sockets, coresPerSocket and threadsPerCore must each be >= 1");
        else if (s * k * th > 8192)
            VERR(c, yt_get(t, "cpu"), "cpu: %lld logical CPUs; Linux supports at most 8192", s * k * th);
        else if (s > 0 && k > 0 && th > 0 && cap > 0 && s * k * th != cap)
            VERR(c, yt_get(t, "cpu"), "cpu: sockets x coresPerSocket x threadsPerCore = %lld x %lld x %lld = %lld, "
                 "but node.capacity.cpu is %lld; they must agree", s, k, th, s * k * th, cap);
    }
    if (prof_int(t, "cpu.diesPerPackage", 0) < 0)
        VERR(c, yt_path(t, "cpu.diesPerPackage"), "cpu.diesPerPackage: must be >= 0");
    if (prof_bool(t, "cpu.oneSocketPerVCPU", false) && (k != 1 || th != 1))
        VERR(c, yt_path(t, "cpu.oneSocketPerVCPU"), "cpu.oneSocketPerVCPU: needs coresPerSocket 1 and threadsPerCore 1");
    /* /proc/cpuinfo's numbers (render_cpuinfo.h): what the kernel's formats can print */
    static const struct {
        const char *path;
        long long max;
    } cpuinfo_ints[] = {{"cpu.cpuidLevel", 0x7fffffff}, {"cpu.tscKHz", 0xffffffffLL}, {"cpu.tlbSize", 0x7fffffff},
                        {"cpu.physAddrBits", 64}, {"cpu.virtAddrBits", 64}};
    for (size_t i = 0; i < sizeof cpuinfo_ints / sizeof cpuinfo_ints[0]; i++) {
        long long v = prof_int(t, cpuinfo_ints[i].path, 0);
        if (yt_path(t, cpuinfo_ints[i].path) && (v < 0 || v > cpuinfo_ints[i].max))
            VERR(c, yt_path(t, cpuinfo_ints[i].path), "%s: %lld is outside 0..%lld", cpuinfo_ints[i].path, v,
                 cpuinfo_ints[i].max);
    }
    const char *mc = prof_str(t, "cpu.microcode", "");
    if (*mc && (strncmp(mc, "0x", 2) || !mc[2] || strspn(mc + 2, "0123456789abcdef") != strlen(mc + 2)))
        VERR(c, yt_path(t, "cpu.microcode"), "cpu.microcode: \"%s\" is not a revision as the kernel prints it "
             "(0x and lowercase hex digits, e.g. 0xa10110d)", mc);
}

/* cpu.vulnerabilities against cpu.bugs (cpu_vulns.h): a text only for a bug the line names (the
 * kernel prints "Not affected" for the others), one line each, and once the map is given, a text
 * for every bug it reports. */
static void check_vulns(struct vctx *c, const struct yt_node *t)
{
    const struct yt_node *map = yt_path(t, "cpu.vulnerabilities");
    if (!map)
        return;
    const char *bugs = prof_str(t, "cpu.bugs", "");
    for (int i = 0; i < cpu_vulns_n; i++) {
        const struct cpu_vuln *v = &cpu_vulns[i];
        const struct yt_node *n = yt_get(map, v->file);
        const char *text = prof_str(map, v->file, "");
        bool affected = cpu_vuln_affected(v, bugs);
        if (n && !affected)
            VERR(c, n, "cpu.vulnerabilities.%s: cpu.bugs does not name %s, so the kernel prints \"Not affected\" "
                 "here (arch/x86/kernel/cpu/bugs.c cpu_show_common); remove the text or add %s to cpu.bugs",
                 v->file, v->bug, v->bug);
        else if (n && (!*text || strpbrk(text, "\r\n")))
            VERR(c, n, "cpu.vulnerabilities.%s: must be one non-empty line (the kernel prints one line)", v->file);
        else if (!n && affected)
            VERR(c, map, "cpu.vulnerabilities.%s: required, since cpu.bugs names %s: the text a machine of this "
                 "model prints there (e.g. \"Mitigation: ...\")", v->file, v->bug);
    }
}

static void check_powercap(struct vctx *c, const struct yt_node *t)
{
    const struct yt_node *ct = yt_path(t, "powercap.controlTypes");
    if (yt_get(t, "powercap") && !ct)
        VERR(c, yt_get(t, "powercap"), "powercap.controlTypes: required when powercap is present (remove powercap "
             "for a node without it)");
    for (int i = 0; ct && ct->kind == YT_SEQ && i < ct->n; i++) {
        const struct yt_node *x = ct->vals[i];
        const char *name = prof_str(x, "name", "");
        if (!*name)
            VERR(c, x, "powercap.controlTypes[%d].name: required (intel-rapl or intel-rapl-mmio)", i);
        for (int j = 0; j < i; j++)
            if (*name && !strcmp(name, prof_str(ct->vals[j], "name", "")))
                VERR(c, yt_get(x, "name"), "powercap.controlTypes[%d].name: %s is listed twice", i, name);
        const struct yt_node *zones = yt_get(x, "zones");
        for (int j = 0; zones && zones->kind == YT_SEQ && j < zones->n; j++) {
            char p[128];
            snprintf(p, sizeof p, "powercap.controlTypes[%d].zones[%d]", i, j);
            if (zones->vals[j]->kind == YT_MAP)
                check_zone(c, zones->vals[j], p, true);
        }
    }
}

static bool in_list(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        size_t l = strcspn(p, " ");
        if (l == wl && l && !strncmp(p, word, l))
            return true;
        p += l;
    }
    return false;
}

static void check_cpufreq(struct vctx *c, const struct yt_node *t)
{
    const struct yt_node *cf = yt_get(t, "cpufreq");
    if (!cf || cf->kind != YT_MAP)
        return;
    need(c, t, "cpufreq.driver");
    if (prof_bool(cf, "minimal", false))
        return;
    need(c, t, "cpufreq.governor");
    need(c, t, "cpufreq.availableGovernors");
    need(c, t, "cpufreq.cpuinfoMinKHz");
    need(c, t, "cpufreq.cpuinfoMaxKHz");
    const char *gov = prof_str(cf, "governor", ""), *avail = prof_str(cf, "availableGovernors", "");
    if (*gov && *avail && !in_list(avail, gov))
        VERR(c, yt_get(cf, "governor"), "cpufreq.governor: \"%s\" is not among availableGovernors \"%s\"", gov, avail);
    long long lo = prof_int(cf, "cpuinfoMinKHz", 0), hi = prof_int(cf, "cpuinfoMaxKHz", 0);
    if (yt_get(cf, "cpuinfoMinKHz") && yt_get(cf, "cpuinfoMaxKHz") && !(lo > 0 && lo <= hi))
        VERR(c, yt_get(cf, "cpuinfoMinKHz"), "cpufreq: need 0 < cpuinfoMinKHz (%lld) <= cpuinfoMaxKHz (%lld)", lo, hi);
    const struct yt_node *tab = yt_get(cf, "availableKHz");
    for (int i = 0; tab && tab->kind == YT_SEQ && i < tab->n; i++) {
        long long f;
        if (yt_int(tab->vals[i], &f) && (f < lo || f > hi))
            VERR(c, tab->vals[i], "cpufreq.availableKHz[%d]: %lld is outside [%lld, %lld]", i, f, lo, hi);
    }
    long long boost = prof_int(cf, "boost", 0);
    if (boost != 0 && boost != 1)
        VERR(c, yt_get(cf, "boost"), "cpufreq.boost: must be 0 or 1");
    long long lat = prof_int(cf, "transitionLatencyNS", 0);
    if (yt_get(cf, "transitionLatencyNS") && (lat < 0 || lat > 4294967295LL))
        VERR(c, yt_get(cf, "transitionLatencyNS"),
             "cpufreq.transitionLatencyNS: %lld is not an unsigned 32-bit count of ns (the kernel's %%u)", lat);
}

static void check_hsmp(struct vctx *c, const struct yt_node *t)
{
    const struct yt_node *h = yt_get(t, "hsmp");
    if (!h || h->kind != YT_MAP)
        return;
    need(c, t, "hsmp.layout");
    need(c, t, "hsmp.capMaxUW");
    need(c, t, "hsmp.capDefaultUW");
    long long mx = prof_int(h, "capMaxUW", 0), df = prof_int(h, "capDefaultUW", 0);
    if (yt_get(h, "capMaxUW") && yt_get(h, "capDefaultUW") && !(df > 0 && df <= mx))
        VERR(c, yt_get(h, "capDefaultUW"), "hsmp: need 0 < capDefaultUW (%lld) <= capMaxUW (%lld)", df, mx);
}

/* crayPmCounters (docs/interfaces.md): raw_scan_hz is a sample rate, 1..255 Hz (10 on XC and EX
 * blades); the file format version a positive integer. */
static void check_cray(struct vctx *c, const struct yt_node *t)
{
    const struct yt_node *p = yt_get(t, "crayPmCounters");
    if (!p || p->kind != YT_MAP)
        return;
    long long hz = prof_int(p, "rawScanHz", 10), v = prof_int(p, "version", 3);
    if (hz < 1 || hz > 255)
        VERR(c, yt_get(p, "rawScanHz"), "crayPmCounters.rawScanHz: must be 1..255 Hz, not %lld", hz);
    if (v < 1)
        VERR(c, yt_get(p, "version"), "crayPmCounters.version: must be a positive integer, not %lld", v);
}

static void check_gpus(struct vctx *c, const struct yt_node *t)
{
    const struct yt_node *g = yt_get(t, "gpus");
    if (!g || g->kind != YT_MAP)
        return;
    need(c, t, "gpus.vendor");
    need(c, t, "gpus.count");
    need(c, t, "gpus.product");
    need(c, t, "gpus.limits.maxW");
    need(c, t, "gpus.exposure");
    need(c, t, "gpus.labeller");
    const char *vendor = prof_str(g, "vendor", "");
    long long count = prof_int(g, "count", 0);
    if (yt_get(g, "count") && count < 1)
        VERR(c, yt_get(g, "count"), "gpus.count: must be >= 1");
    double mn = prof_num(g, "limits.minW", 0), mx = prof_num(g, "limits.maxW", 0), df = prof_num(g, "limits.defaultW", mx);
    if (yt_path(g, "limits") && !(mn >= 0 && mn <= df && df <= mx && mx > 0))
        VERR(c, yt_path(g, "limits"), "gpus.limits: need 0 <= minW (%g) <= defaultW (%g) <= maxW (%g) and maxW > 0",
             mn, df, mx);
    const struct yt_node *cur = yt_path(g, "limits.currentW");
    double cw;
    if (cur && cur->src && yt_double(cur, &cw) && (cw < mn || cw > mx))
        VERR(c, cur, "gpus.limits.currentW: %g is outside [minW %g, maxW %g]", cw, mn, mx);
    if (yt_get(g, "pci"))
        check_pci(c, yt_get(g, "pci"), "gpus.pci", false);
    if (!strcmp(vendor, "amd") && !yt_path(g, "pci.vendor"))
        VERR(c, g, "gpus.pci.vendor: required for AMD GPUs (0x1002)");
    const char *exp = prof_str(g, "exposure", "");
    if (*vendor && strcmp(vendor, "nvidia") && *exp && strcmp(exp, "whole") && strcmp(exp, "dra"))
        VERR(c, yt_get(g, "exposure"), "gpus.exposure: %s GPUs offer only whole or dra, not %s", vendor, exp);
    if (!strncmp(exp, "mig-", 4) && (!*prof_str(g, "migProfile", "") || prof_int(g, "migDevicesPerGPU", 0) < 1))
        VERR(c, yt_get(g, "exposure"), "gpus.exposure %s needs migProfile and migDevicesPerGPU >= 1", exp);
    if (!strncmp(exp, "timeslice-", 10) && prof_int(g, "timesliceReplicas", 0) < 1)
        VERR(c, yt_get(g, "exposure"), "gpus.exposure %s needs timesliceReplicas >= 1", exp);
    if (!strcmp(prof_str(g, "labeller", ""), "gfd") && strcmp(vendor, "nvidia"))
        VERR(c, yt_get(g, "labeller"), "gpus.labeller: gfd labels exist only for NVIDIA GPUs; use listed");
    if (yt_get(g, "fieldSupport") && strcmp(vendor, "nvidia"))
        VERR(c, yt_get(g, "fieldSupport"), "gpus.fieldSupport: only NVIDIA GPUs have nvidia-smi fields");
    if (yt_get(g, "persistenceMode") && *prof_str(g, "persistenceMode", "") && strcmp(vendor, "nvidia"))
        VERR(c, yt_get(g, "persistenceMode"), "gpus.persistenceMode: only NVIDIA GPUs have persistence mode");
    const struct yt_node *sd = yt_get(g, "secondaryDies");
    if (sd && strcmp(vendor, "amd"))
        VERR(c, sd, "gpus.secondaryDies: only AMD GPUs have secondary dies");
    for (int i = 0; sd && sd->kind == YT_SEQ && i < sd->n; i++) {
        long long v;
        if (yt_int(sd->vals[i], &v) && (v < 1 || v >= count))
            VERR(c, sd->vals[i], "gpus.secondaryDies[%d]: %lld is outside [1, count)", i, v);
    }
    if (count > GPU_MAX)
        VERR(c, yt_get(g, "count"), "gpus.count: %lld GPUs; a node holds at most %d", count, GPU_MAX);
    if (yt_get(g, "intel") && strcmp(vendor, "intel"))
        VERR(c, yt_get(g, "intel"), "gpus.intel: only Intel GPUs have an i915/xe driver choice");
    if (yt_get(g, "clocks") && !strcmp(vendor, "intel"))
        VERR(c, yt_get(g, "clocks"), "gpus.clocks: only NVIDIA and AMD GPUs show clocks here (nvidia-smi, pp_dpm_*)");
    if (yt_path(g, "clocks.supported") && strcmp(vendor, "nvidia"))
        VERR(c, yt_path(g, "clocks.supported"), "gpus.clocks.supported: the supported-clocks table is NVIDIA's");
    long long gmin = prof_int(g, "clocks.graphicsMinMHz", 0), gmax = prof_int(g, "clocks.graphicsMaxMHz", 0);
    if (yt_path(g, "clocks") && !(gmin > 0 && gmin <= gmax))
        VERR(c, yt_path(g, "clocks"), "gpus.clocks: need 0 < graphicsMinMHz (%lld) <= graphicsMaxMHz (%lld)", gmin, gmax);
    const struct yt_node *sm = yt_path(g, "clocks.supported.smMaxByMem");
    for (int i = 0; sm && sm->kind == YT_SEQ && i < sm->n; i++) {
        long long ceil = prof_int(sm->vals[i], "maxGraphicsMHz", 0);
        if (ceil < gmin || ceil > gmax)
            VERR(c, sm->vals[i], "gpus.clocks.supported.smMaxByMem[%d].maxGraphicsMHz: %lld is outside the graphics "
                 "clocks [%lld, %lld]", i, ceil, gmin, gmax);
    }
    const struct yt_node *fs = yt_get(g, "fieldSupport");
    static const char *const fs_fields[] = {"power.limit", "power.min_limit", "power.max_limit",
                                            "power.default_limit", NULL};
    for (int i = 0; fs && fs->kind == YT_MAP && i < fs->n; i++) {
        int k = 0;
        while (fs_fields[k] && strcmp(fs_fields[k], fs->keys[i]->text))
            k++;
        if (!fs_fields[k])
            VERR(c, fs->keys[i], "gpus.fieldSupport: \"%s\" is not a field the emulator can hold a token for "
                 "(power.limit, power.min_limit, power.max_limit, power.default_limit)", fs->keys[i]->text);
    }
    const struct yt_node *tools = yt_get(g, "tools");
    for (int i = 0; tools && tools->kind == YT_SEQ && i < tools->n; i++) {
        const char *name = prof_str(tools->vals[i], "name", ""), *var = prof_str(tools->vals[i], "variant", "");
        const char *want = !strcmp(name, "nvidia-smi") ? "nvidia" : "amd";
        const char *variants = !strcmp(name, "nvidia-smi") ? "default" : !strcmp(name, "rocm-smi")
                                   ? "current|legacy-agent-contract" : "7.1|7.2";
        if (*name && *vendor && strcmp(want, vendor))
            VERR(c, tools->vals[i], "gpus.tools[%d]: %s does not drive %s GPUs", i, name, vendor);
        if (*name && !word_ok(variants, var))
            VERR(c, tools->vals[i], "gpus.tools[%d].variant: \"%s\" is not a variant of %s", i, var, name);
        for (int j = 0; j < i; j++)
            if (!strcmp(name, prof_str(tools->vals[j], "name", "")))
                VERR(c, tools->vals[i], "gpus.tools[%d]: %s is listed twice", i, name);
    }
}

static void check_physics(struct vctx *c, const struct yt_node *t)
{
    const char *model = prof_str(t, "physics.cpu.model", "");
    const struct yt_node *lp = yt_path(t, "physics.cpu.curveLoadPct"), *w = yt_path(t, "physics.cpu.curveNodeW");
    if (!strcmp(model, "catalog-curve")) {
        if (!lp || !w || lp->kind != YT_SEQ || w->kind != YT_SEQ || lp->n < 2 || lp->n != w->n) {
            VERR(c, at_or(t, "physics.cpu"), "physics.cpu: model catalog-curve needs curveLoadPct and curveNodeW, "
                 "two lists of the same length (at least 2 points)");
            return;
        }
        double prev = -1;
        for (int i = 0; i < lp->n; i++) {
            double x;
            if (yt_double(lp->vals[i], &x) && (x < 0 || x > 100 || x <= prev))
                VERR(c, lp->vals[i], "physics.cpu.curveLoadPct[%d]: load levels must rise within 0..100", i);
            prev = x;
        }
    } else if (t && yt_get(t, "cpu") && (prof_num(t, "physics.cpu.maxPkgW", 0) < prof_num(t, "physics.cpu.idlePkgW", 0))) {
        VERR(c, at_or(t, "physics.cpu.maxPkgW"), "physics.cpu: maxPkgW must be >= idlePkgW");
    }
}

/* sensors (docs/faults.md "Sensors"): a noise bound is a measurement's error, never negative and
 * never larger than a reading could be wrong and still be a reading (ours: 100 W, 20 %). */
static void check_sensors(struct vctx *c, const struct yt_node *t)
{
    static const struct {
        const char *key;
        double max;
        const char *unit;
    } bound[] = {{"gpuPowerNoiseW", 100, "W"}, {"socketPowerNoiseW", 100, "W"}, {"bmcPowerNoisePct", 20, "%"}};
    const struct yt_node *s = yt_get(t, "sensors");
    if (!s || s->kind != YT_MAP)
        return;
    for (size_t i = 0; i < sizeof bound / sizeof bound[0]; i++) {
        double v = prof_num(s, bound[i].key, 0);
        if (v < 0 || v > bound[i].max)
            VERR(c, yt_get(s, bound[i].key), "sensors.%s: must be 0..%g %s, not %g", bound[i].key, bound[i].max,
                 bound[i].unit, v);
    }
}

int profile_validate(const struct yt_node *tree, const char *subject, struct diag *d)
{
    struct vctx c = {.subject = subject, .sources = yt_get(tree, "sources"), .d = d};
    walk(&c, tree, profile_schema, "");
    if (c.errors)
        return -1; /* types are wrong: the cross checks would only repeat the noise */
    check_node_cpu(&c, tree);
    check_vulns(&c, tree);
    check_powercap(&c, tree);
    check_cpufreq(&c, tree);
    check_hsmp(&c, tree);
    check_cray(&c, tree);
    check_gpus(&c, tree);
    check_physics(&c, tree);
    check_sensors(&c, tree);
    return c.errors ? -1 : 0;
}
