/* spec: cluster spec parsing, validation and pool expansion; see spec.h. */
#include "spec.h"

#include "diag.h"
#include "fault.h"
#include "profile.h"
#include "k8s.h"
#include "profile_validate.h"
#include "ytree.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sctx {
    struct cluster_spec *s;
    struct profile_set *ps;
    struct diag *d;
    int errors;
};

#define SERR(c, at, ...)                                                                           \
    do {                                                                                           \
        diag_at((c)->d, (at), __VA_ARGS__);                                                        \
        (c)->errors++;                                                                             \
    } while (0)

static const char *const top_keys[] = {"apiVersion", "kind", "metadata", "spec", NULL};
static const char *const metadata_keys[] = {"name", "labels", "annotations", NULL};
static const char *const spec_keys[] = {"defaults", "facility", "jobCgroups", "pools", "sensors", "faults", NULL};
static const char *const sensors_keys[] = {"noise", NULL};
static const char *const cgroups_keys[] = {"manager", "maxJobsPerNode", NULL};
const char *const cgroup_manager_names[3] = {"slurm", "kubernetes", "none"};
static const char *const defaults_keys[] = {"kwok", "labels", "baseLoad", NULL};
static const char *const facility_keys[] = {"ambientC", "amplitudeC", "periodH", "coolingZones", NULL};
static const char *const zone_keys[] = {"name", "offsetC", NULL};
static const char *const pool_keys[] = {"name", "profile", "count", "prefix", "startIndex", "rack",
                                        "coolingZone", "labels", "baseLoad", "overrides", NULL};
static const char *const baseload_keys[] = {"cpuUtil", "gpuUtil", "memoryIntensity", "cpuClass", "gpuClass",
                                            "gpuPeerTransfers", NULL};
static const char *const transfer_keys[] = {"from", "to", "GBps", NULL};
static const char *const cpu_classes[] = {"cpu.compute_bound", "cpu.memory_bound", "cpu.io_bound", "cpu.mixed", NULL};
static const char *const gpu_classes[] = {"gpu.compute_bound", "gpu.memory_bound", "gpu.bandwidth_bound",
                                          "gpu.mixed", NULL};

static void load_faults(struct sctx *c, const struct yt_node *n);

static void join(const char *const *words, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; words[i]; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", words[i]);
        if (n < 0 || (size_t)n >= len - used)
            return;
        used += (size_t)n;
    }
}

/* Unknown keys of a mapping, with a suggestion. `where` is the subject ("pool gpu"). */
static void check_keys(struct sctx *c, const struct yt_node *map, const char *const *known, const char *where,
                       const char *path)
{
    for (int i = 0; i < map->n; i++) {
        const char *k = map->keys[i]->text;
        bool ok = false;
        for (int j = 0; known[j]; j++)
            if (!strcmp(k, known[j]))
                ok = true;
        if (ok)
            continue;
        char list[512];
        join(known, list, sizeof list);
        const char *near = closest_word(k, known);
        if (near)
            SERR(c, map->keys[i], "%s: %s%s%s: unknown field; did you mean \"%s\"? (expected one of: %s)", where,
                 path, *path ? "." : "", k, near, list);
        else
            SERR(c, map->keys[i], "%s: %s%s%s: unknown field (expected one of: %s)", where, path, *path ? "." : "",
                 k, list);
    }
}

static const struct yt_node *want_map(struct sctx *c, const struct yt_node *n, const char *where, const char *path)
{
    if (!n || yt_is_null(n))
        return NULL;
    if (n->kind != YT_MAP) {
        SERR(c, n, "%s: %s: expected a mapping, got a %s", where, path, yt_kind_name(n->kind));
        return NULL;
    }
    return n;
}

static bool get_num(struct sctx *c, const struct yt_node *map, const char *key, const char *where, double *out)
{
    const struct yt_node *n = yt_get(map, key);
    if (!n)
        return false;
    if (!yt_double(n, out)) {
        SERR(c, n, "%s: %s: expected a number, got %s%s%s", where, key, n->kind == YT_SCALAR ? "\"" : "a ",
             n->kind == YT_SCALAR ? n->text : yt_kind_name(n->kind), n->kind == YT_SCALAR ? "\"" : "");
        return false;
    }
    return true;
}

static bool get_int(struct sctx *c, const struct yt_node *map, const char *key, const char *where, long long *out)
{
    const struct yt_node *n = yt_get(map, key);
    if (!n)
        return false;
    if (!yt_int(n, out)) {
        SERR(c, n, "%s: %s: expected a whole number, got %s%s%s", where, key, n->kind == YT_SCALAR ? "\"" : "a ",
             n->kind == YT_SCALAR ? n->text : yt_kind_name(n->kind), n->kind == YT_SCALAR ? "\"" : "");
        return false;
    }
    return true;
}

static const char *get_str(struct sctx *c, const struct yt_node *map, const char *key, const char *where)
{
    const struct yt_node *n = yt_get(map, key);
    if (!n)
        return NULL;
    if (n->kind != YT_SCALAR || yt_is_null(n)) {
        SERR(c, n, "%s: %s: expected a text value, got %s", where, key,
             n->kind == YT_SCALAR ? "nothing" : yt_kind_name(n->kind));
        return NULL;
    }
    return n->text;
}

static bool dns_label(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
            return false;
    return true;
}

static void check_labels(struct sctx *c, const struct yt_node *labels, const char *where)
{
    for (int i = 0; labels && i < labels->n; i++) {
        const struct yt_node *k = labels->keys[i], *v = labels->vals[i];
        const char *why = k8s_label_key_problem(k->text);
        if (why)
            SERR(c, k, "%s: label key \"%s\" %s", where, k->text, why);
        if (v->kind != YT_SCALAR) {
            SERR(c, v, "%s: label %s: the value must be a text value, not a %s", where, k->text, yt_kind_name(v->kind));
            continue;
        }
        why = k8s_label_value_problem(v->text);
        if (why)
            SERR(c, v, "%s: label %s: value \"%s\" %s", where, k->text, v->text, why);
    }
}

/* baseLoad.gpuPeerTransfers: [{from: 0, to: 1, GBps: 50}, ...]; a pool's list replaces the
 * defaults' whole. GPU indices are checked against each pool's profile (load_pool). */
static void load_transfers(struct sctx *c, const struct yt_node *m, struct base_load *b, const char *where)
{
    const struct yt_node *l = yt_get(m, "gpuPeerTransfers");
    if (!l)
        return;
    if (l->kind != YT_SEQ) {
        SERR(c, l, "%s: baseLoad.gpuPeerTransfers: expected a list of {from, to, GBps}", where);
        return;
    }
    if (l->n > SPEC_MAX_XFER)
        SERR(c, l, "%s: baseLoad.gpuPeerTransfers: %d transfers; at most %d", where, l->n, SPEC_MAX_XFER);
    b->nxfer = 0;
    for (int i = 0; i < l->n && i < SPEC_MAX_XFER; i++) {
        const struct yt_node *t = l->vals[i];
        char sub[160];
        snprintf(sub, sizeof sub, "%s: baseLoad.gpuPeerTransfers[%d]", where, i);
        const struct yt_node *tm = want_map(c, t, sub, "transfer");
        if (!tm)
            continue;
        check_keys(c, tm, transfer_keys, sub, "transfer");
        double from = -1, to = -1, gbps = 0;
        if (!yt_get(tm, "from") || !yt_get(tm, "to") || !yt_get(tm, "GBps")) {
            SERR(c, t, "%s: needs from, to (GPU indices) and GBps", sub);
            continue;
        }
        if (!(get_num(c, tm, "from", sub, &from) & get_num(c, tm, "to", sub, &to) & get_num(c, tm, "GBps", sub, &gbps)))
            continue;
        /* bounded before the casts (a double past int's range makes (int) undefined); an index
         * past the profile's GPUs is reported against them below */
        if (!(from >= 0 && from < 1e6 && to >= 0 && to < 1e6) || from != (int)from || to != (int)to || from == to ||
            !(gbps > 0)) {
            SERR(c, t, "%s: from and to must be two different GPU indices (0, 1, ...) and GBps > 0", sub);
            continue;
        }
        b->xfer[b->nxfer++] = (struct gpu_transfer){(int)from, (int)to, gbps};
    }
}

static void load_base(struct sctx *c, const struct yt_node *n, struct base_load *b, const char *where)
{
    const struct yt_node *m = want_map(c, n, where, "baseLoad");
    if (!m)
        return;
    check_keys(c, m, baseload_keys, where, "baseLoad");
    load_transfers(c, m, b, where);
    double *dst[] = {&b->cpu_util, &b->gpu_util, &b->memory_intensity};
    for (int i = 0; i < 3; i++) {
        double v;
        if (get_num(c, m, baseload_keys[i], where, &v)) {
            if (v < 0 || v > 1)
                SERR(c, yt_get(m, baseload_keys[i]), "%s: baseLoad.%s: %g is outside 0..1 (a fraction, 1.0 = full)",
                     where, baseload_keys[i], v);
            else
                *dst[i] = v;
        }
    }
    const char *const *classes[] = {cpu_classes, gpu_classes};
    const char **cdst[] = {&b->cpu_class, &b->gpu_class};
    for (int i = 0; i < 2; i++) {
        const char *key = baseload_keys[3 + i];
        const char *v = get_str(c, m, key, where);
        if (!v)
            continue;
        bool ok = false;
        for (int j = 0; classes[i][j]; j++)
            if (!strcmp(v, classes[i][j]))
                ok = true;
        if (ok) {
            *cdst[i] = v;
            continue;
        }
        char list[256];
        join(classes[i], list, sizeof list);
        const char *near = closest_word(v, classes[i]);
        SERR(c, yt_get(m, key), "%s: baseLoad.%s: unknown class \"%s\"%s%s%s (expected one of: %s)", where, key, v,
             near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "", list);
    }
}

static void load_cgroups(struct sctx *c, const struct yt_node *n)
{
    struct job_cgroups *g = &c->s->cgroups;
    g->manager = CG_SLURM;
    g->max_jobs = CG_MAX_JOBS_DEFAULT;
    const struct yt_node *m = want_map(c, n, "spec", "jobCgroups");
    if (!m)
        return;
    check_keys(c, m, cgroups_keys, "spec", "jobCgroups");
    const char *mgr = get_str(c, m, "manager", "spec.jobCgroups");
    if (mgr) {
        int k = 0;
        while (k < 3 && strcmp(mgr, cgroup_manager_names[k]))
            k++;
        if (k == 3)
            SERR(c, yt_get(m, "manager"), "spec.jobCgroups: manager: unknown manager \"%s\" (expected one of: slurm, "
                 "kubernetes, none)", mgr);
        else
            g->manager = k;
    }
    long long mj;
    if (get_int(c, m, "maxJobsPerNode", "spec.jobCgroups", &mj)) {
        if (mj < 1 || mj > CG_MAX_JOBS_LIMIT)
            SERR(c, yt_get(m, "maxJobsPerNode"), "spec.jobCgroups: maxJobsPerNode: %lld is out of range (expected "
                 "1..%d job cgroups a node can show at once)", mj, CG_MAX_JOBS_LIMIT);
        else
            g->max_jobs = (int)mj;
    }
}

static void load_facility(struct sctx *c, const struct yt_node *n)
{
    struct facility *f = &c->s->facility;
    f->ambient_c = 20;
    f->amplitude_c = 0;
    f->period_h = 24;
    const struct yt_node *m = want_map(c, n, "spec", "facility");
    if (!m)
        return;
    check_keys(c, m, facility_keys, "spec", "facility");
    get_num(c, m, "ambientC", "spec.facility", &f->ambient_c);
    get_num(c, m, "amplitudeC", "spec.facility", &f->amplitude_c);
    if (get_num(c, m, "periodH", "spec.facility", &f->period_h) && f->period_h <= 0)
        SERR(c, yt_get(m, "periodH"), "spec.facility: periodH must be > 0 (hours of one ambient cycle)");
    if (f->amplitude_c < 0)
        SERR(c, yt_get(m, "amplitudeC"), "spec.facility: amplitudeC must be >= 0");
    const struct yt_node *zs = yt_get(m, "coolingZones");
    if (!zs || yt_is_null(zs))
        return;
    if (zs->kind != YT_SEQ) {
        SERR(c, zs, "spec.facility: coolingZones: expected a list of {name, offsetC}");
        return;
    }
    f->zones = arena_alloc(&c->s->arena, sizeof *f->zones * (size_t)(zs->n ? zs->n : 1));
    for (int i = 0; i < zs->n; i++) {
        char where[64];
        snprintf(where, sizeof where, "spec.facility.coolingZones[%d]", i);
        const struct yt_node *z = zs->vals[i];
        if (z->kind != YT_MAP) {
            SERR(c, z, "%s: expected a mapping {name, offsetC}", where);
            continue;
        }
        check_keys(c, z, zone_keys, where, "");
        const char *name = get_str(c, z, "name", where);
        if (!yt_get(z, "name"))
            SERR(c, z, "%s: name: required", where);
        struct cooling_zone *cz = &f->zones[f->nzones];
        cz->name = name;
        get_num(c, z, "offsetC", where, &cz->offset_c);
        if (!name)
            continue;
        for (int j = 0; j < f->nzones; j++)
            if (!strcmp(f->zones[j].name, name))
                SERR(c, yt_get(z, "name"), "%s: cooling zone \"%s\" is defined twice", where, name);
        f->nzones++;
    }
}

static const char *const *zone_names(struct sctx *c)
{
    const char **names = arena_alloc(&c->s->arena, sizeof *names * (size_t)(c->s->facility.nzones + 1));
    for (int i = 0; i < c->s->facility.nzones; i++)
        names[i] = c->s->facility.zones[i].name;
    return names;
}

static void load_pool(struct sctx *c, const struct yt_node *pn, int idx)
{
    struct cluster_spec *s = c->s;
    struct spec_pool *p = &s->pools[idx];
    char where[160];
    snprintf(where, sizeof where, "pool %d", idx);
    if (pn->kind != YT_MAP) {
        SERR(c, pn, "spec.pools[%d]: expected a mapping {name, profile, count, ...}, got a %s", idx,
             yt_kind_name(pn->kind));
        return;
    }
    p->name = get_str(c, pn, "name", where);
    if (p->name)
        snprintf(where, sizeof where, "pool %s", p->name);
    check_keys(c, pn, pool_keys, where, "");
    if (!yt_get(pn, "name"))
        SERR(c, pn, "spec.pools[%d]: name: required", idx);
    else if (p->name && !dns_label(p->name))
        SERR(c, yt_get(pn, "name"), "%s: name must be a lower-case DNS label (a-z, 0-9, '-', at most 63)", where);
    for (int i = 0; p->name && i < idx; i++)
        if (s->pools[i].name && !strcmp(s->pools[i].name, p->name))
            SERR(c, yt_get(pn, "name"), "%s: another pool has this name (spec.pools[%d])", where, i);

    p->prefix = get_str(c, pn, "prefix", where);
    if (p->prefix && !dns_label(p->prefix))
        SERR(c, yt_get(pn, "prefix"), "%s: prefix \"%s\" must be a lower-case DNS label (a-z, 0-9, '-')", where,
             p->prefix);
    if (!p->prefix)
        p->prefix = p->name;
    if (!yt_get(pn, "count"))
        SERR(c, pn, "%s: count: required (how many nodes this pool has)", where);
    else if (get_int(c, pn, "count", where, &p->count) && p->count < 0)
        SERR(c, yt_get(pn, "count"), "%s: count must be >= 0, got %lld", where, p->count);
    else if (p->count > 1000000)
        SERR(c, yt_get(pn, "count"), "%s: count %lld is more than one engine can hold (1000000)", where, p->count);
    if (get_int(c, pn, "startIndex", where, &p->start_index) && p->start_index < 0)
        SERR(c, yt_get(pn, "startIndex"), "%s: startIndex must be >= 0", where);
    else if (p->count > 0 && p->start_index > LLONG_MAX - (p->count - 1))
        SERR(c, yt_get(pn, "startIndex"), "%s: startIndex %lld with count %lld runs past the largest node number "
             "(%lld); choose a smaller startIndex", where, p->start_index, p->count, LLONG_MAX);
    p->rack = get_str(c, pn, "rack", where);
    if (p->rack && k8s_label_value_problem(p->rack))
        SERR(c, yt_get(pn, "rack"), "%s: rack \"%s\" %s (it becomes a label value)", where, p->rack,
             k8s_label_value_problem(p->rack));
    p->cooling_zone = get_str(c, pn, "coolingZone", where);
    if (p->cooling_zone) {
        bool found = false;
        for (int i = 0; i < s->facility.nzones; i++)
            if (!strcmp(s->facility.zones[i].name, p->cooling_zone))
                found = true;
        if (!found) {
            const char *near = closest_word(p->cooling_zone, zone_names(c));
            if (!s->facility.nzones)
                SERR(c, yt_get(pn, "coolingZone"), "%s: cooling zone \"%s\" is not defined: spec.facility has no "
                     "coolingZones", where, p->cooling_zone);
            else
                SERR(c, yt_get(pn, "coolingZone"), "%s: cooling zone \"%s\" is not in spec.facility.coolingZones%s%s%s",
                     where, p->cooling_zone, near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
        }
    }
    p->labels = want_map(c, yt_get(pn, "labels"), where, "labels");
    check_labels(c, p->labels, where);
    p->base = s->base;
    load_base(c, yt_get(pn, "baseLoad"), &p->base, where);

    const char *prof = get_str(c, pn, "profile", where);
    if (!yt_get(pn, "profile")) {
        SERR(c, pn, "%s: profile: required (see `hwemu profiles list`)", where);
        return;
    }
    if (!prof)
        return;
    p->profile = profiles_find(c->ps, prof);
    if (!p->profile) {
        const char *names[256];
        int n = 0;
        for (int i = 0; i < c->ps->n && n < 255; i++)
            names[n++] = c->ps->items[i].name;
        names[n] = NULL;
        const char *near = closest_word(prof, names);
        SERR(c, yt_get(pn, "profile"), "%s: unknown profile \"%s\"%s%s%s (see `hwemu profiles list`; local "
             "profiles come from --profiles-dir)", where, prof, near ? "; did you mean \"" : "", near ? near : "",
             near ? "\"?" : "");
        return;
    }
    const struct yt_node *ov = yt_get(pn, "overrides");
    if (ov && !yt_is_null(ov)) {
        char subject[200];
        snprintf(subject, sizeof subject, "%s: overrides of profile %s", where, p->profile->name);
        p->tree = profile_with_overrides(c->ps, p->profile, ov, subject, c->d);
        if (!p->tree)
            c->errors++;
    } else {
        p->tree = p->profile->tree;
    }
    /* The peer transfers name GPUs of this pool's profile; the defaults' transfers do not
     * concern a pool without GPUs. */
    long long ngpus = p->tree && yt_get(p->tree, "gpus") ? prof_int(p->tree, "gpus.count", 0) : 0;
    const struct yt_node *own = yt_path(pn, "baseLoad.gpuPeerTransfers");
    for (int i = 0; i < p->base.nxfer && (own || ngpus); i++)
        if (p->base.xfer[i].from >= ngpus || p->base.xfer[i].to >= ngpus)
            SERR(c, own ? own : pn, "%s: baseLoad.gpuPeerTransfers[%d]%s: GPU %d -> %d, but profile %s has %lld GPUs",
                 where, i, own ? "" : " (from spec.defaults)", p->base.xfer[i].from, p->base.xfer[i].to,
                 p->profile->name, ngpus);
}

static void expand(struct sctx *c, const struct yt_node *pools)
{
    struct cluster_spec *s = c->s;
    long long total = 0;
    for (int i = 0; i < s->npools; i++)
        total += s->pools[i].count;
    if (total > 1000000) {
        SERR(c, pools, "spec.pools: %lld nodes in all; one engine holds at most 1000000", total);
        return;
    }
    s->nodes = arena_alloc(&s->arena, sizeof *s->nodes * (size_t)(total ? total : 1));
    /* Names are checked for clashes with a hash set over the arena. */
    size_t cap = 16;
    while (cap < (size_t)total * 2)
        cap <<= 1;
    int *slots = calloc(cap, sizeof *slots);
    if (!slots) {
        SERR(c, pools, "out of memory expanding %lld nodes", total);
        return;
    }
    for (int i = 0; i < s->npools; i++) {
        struct spec_pool *p = &s->pools[i];
        for (long long k = 0; k < p->count; k++) {
            const char *name = arena_printf(&s->arena, "%s-%lld", p->prefix, p->start_index + k);
            unsigned long h = 5381;
            for (const char *q = name; *q; q++)
                h = h * 33 + (unsigned char)*q;
            size_t at = h & (cap - 1);
            bool dup = false;
            while (slots[at]) {
                const struct spec_node *o = &s->nodes[slots[at] - 1];
                if (!strcmp(o->name, name)) {
                    SERR(c, pools->vals[i], "pool %s: node name %s is also produced by pool %s; give one of them "
                         "another prefix or startIndex", p->name, name, s->pools[o->pool].name);
                    dup = true;
                    break;
                }
                at = (at + 1) & (cap - 1);
            }
            if (dup)
                break;
            if (strlen(name) > 63) {
                SERR(c, pools->vals[i], "pool %s: node name %s is longer than 63 characters; shorten the prefix",
                     p->name, name);
                break;
            }
            s->nodes[s->nnodes] = (struct spec_node){.name = name, .pool = i};
            slots[at] = ++s->nnodes;
        }
    }
    free(slots);
}

int spec_load(struct cluster_spec *s, const char *file, const char *text, size_t len,
              struct profile_set *profiles, struct diag *d)
{
    memset(s, 0, sizeof *s);
    struct sctx c = {.s = s, .ps = profiles, .d = d};
    s->file = arena_strdup(&s->arena, file);
    s->kwok = true;
    bool empty;
    int before = d->count;
    struct yt_node *root = yt_parse(&s->arena, file, text, len, d, &empty);
    if (!root) {
        if (empty)
            diag_add(d, file, "the file is empty; a cluster spec needs apiVersion, kind, metadata and spec");
        return -1;
    }
    if (root->kind != YT_MAP) {
        diag_at(d, root, "a cluster spec must be a mapping (apiVersion, kind, metadata, spec), not a %s",
                yt_kind_name(root->kind));
        return -1;
    }
    check_keys(&c, root, top_keys, "cluster spec", "");
    const char *api = get_str(&c, root, "apiVersion", "cluster spec");
    const char *kind = get_str(&c, root, "kind", "cluster spec");
    if (!yt_get(root, "apiVersion"))
        SERR(&c, root, "cluster spec: apiVersion: required; add `apiVersion: sim.joulie.io/v1alpha1`");
    else if (api && strcmp(api, "sim.joulie.io/v1alpha1"))
        SERR(&c, yt_get(root, "apiVersion"), "cluster spec: apiVersion \"%s\" is not supported (expected "
             "sim.joulie.io/v1alpha1)", api);
    if (!yt_get(root, "kind"))
        SERR(&c, root, "cluster spec: kind: required; add `kind: ClusterSpec`");
    else if (kind && strcmp(kind, "ClusterSpec"))
        SERR(&c, yt_get(root, "kind"), "cluster spec: kind \"%s\" is not ClusterSpec", kind);
    const struct yt_node *meta = want_map(&c, yt_get(root, "metadata"), "cluster spec", "metadata");
    if (meta) {
        check_keys(&c, meta, metadata_keys, "cluster spec", "metadata");
        s->name = get_str(&c, meta, "name", "cluster spec: metadata");
    }
    if (!s->name && !(meta && yt_get(meta, "name")))
        SERR(&c, meta ? meta : root, "cluster spec: metadata.name: required (it names the cluster, label "
             "sim.joulie.io/cluster)");
    else if (s->name && k8s_label_value_problem(s->name))
        SERR(&c, yt_get(meta, "name"), "cluster spec: metadata.name \"%s\" %s (it becomes a label value)", s->name,
             k8s_label_value_problem(s->name));

    const struct yt_node *spec = want_map(&c, yt_get(root, "spec"), "cluster spec", "spec");
    if (!spec) {
        const struct yt_node *sv = yt_get(root, "spec");
        if (!sv || yt_is_null(sv)) /* absent, or `spec:` with nothing (want_map says nothing then) */
            SERR(&c, sv ? sv : root, "cluster spec: spec: required (defaults, facility, pools)");
        return -1;
    }
    check_keys(&c, spec, spec_keys, "cluster spec", "spec");
    s->base = (struct base_load){.cpu_util = 0, .gpu_util = 0, .memory_intensity = 0,
                                 .cpu_class = "cpu.compute_bound", .gpu_class = "gpu.compute_bound"};
    const struct yt_node *defs = want_map(&c, yt_get(spec, "defaults"), "spec", "defaults");
    if (defs) {
        check_keys(&c, defs, defaults_keys, "spec", "defaults");
        const struct yt_node *kw = yt_get(defs, "kwok");
        if (kw && !yt_bool(kw, &s->kwok))
            SERR(&c, kw, "spec.defaults: kwok: expected true or false, got \"%s\"", yt_str(kw) ? kw->text : "a mapping");
        s->default_labels = want_map(&c, yt_get(defs, "labels"), "spec.defaults", "labels");
        check_labels(&c, s->default_labels, "spec.defaults");
        load_base(&c, yt_get(defs, "baseLoad"), &s->base, "spec.defaults");
    }
    load_facility(&c, yt_get(spec, "facility"));
    load_cgroups(&c, yt_get(spec, "jobCgroups"));
    const struct yt_node *pools = yt_get(spec, "pools");
    if (!pools || yt_is_null(pools)) {
        SERR(&c, spec, "spec.pools: required: a list of pools ({name, profile, count, ...})");
    } else if (pools->kind != YT_SEQ) {
        SERR(&c, pools, "spec.pools: expected a list of pools, got a %s", yt_kind_name(pools->kind));
    } else {
        s->pools = arena_alloc(&s->arena, sizeof *s->pools * (size_t)(pools->n ? pools->n : 1));
        s->npools = pools->n;
        for (int i = 0; i < pools->n; i++)
            load_pool(&c, pools->vals[i], i);
        if (!c.errors)
            expand(&c, pools);
    }
    s->sensor_noise = true;
    const struct yt_node *sens = want_map(&c, yt_get(spec, "sensors"), "spec", "sensors");
    if (sens) {
        check_keys(&c, sens, sensors_keys, "spec", "sensors");
        const struct yt_node *no = yt_get(sens, "noise");
        if (no && !yt_bool(no, &s->sensor_noise))
            SERR(&c, no, "spec.sensors: noise: expected true or false, got \"%s\"", yt_str(no) ? no->text : "a mapping");
    }
    load_faults(&c, yt_get(spec, "faults"));
    return c.errors || d->count > before ? -1 : 0;
}

/* spec.faults: each a fault (fault.h) whose nodes and pools are the spec's. */
static void load_faults(struct sctx *c, const struct yt_node *n)
{
    struct cluster_spec *s = c->s;
    if (!n || yt_is_null(n))
        return;
    if (n->kind != YT_SEQ) {
        SERR(c, n, "spec.faults: expected a list of faults ({kind, device, nodes, atSec, durationSec, params}), got a %s",
             yt_kind_name(n->kind));
        return;
    }
    s->faults = arena_alloc(&s->arena, sizeof *s->faults * (size_t)(n->n ? n->n : 1));
    for (int i = 0; i < n->n; i++) {
        char where[32];
        snprintf(where, sizeof where, "spec.faults[%d]", i);
        struct fault_def *f = &s->faults[s->nfaults];
        bool parsed = fault_parse(f, &s->arena, n->vals[i], where, NULL, c->d);
        if (!parsed)
            c->errors++;
        const struct yt_node *names = yt_get(n->vals[i], "nodes");
        for (int k = 0; k < f->nnodes; k++)
            if (!spec_find_node(s, f->nodes[k]))
                SERR(c, names && names->kind == YT_SEQ && k < names->n ? names->vals[k] : names,
                     "%s: nodes: no node \"%s\" in this spec (nodes are <prefix>-<index> of its pools)", where,
                     f->nodes[k]);
        const struct yt_node *pn = yt_get(n->vals[i], "pools");
        for (int k = 0; k < f->npools; k++) {
            bool found = false;
            for (int p = 0; p < s->npools && !found; p++)
                found = s->pools[p].name && !strcmp(s->pools[p].name, f->pools[k]);
            if (!found)
                SERR(c, pn && pn->kind == YT_SEQ && k < pn->n ? pn->vals[k] : pn,
                     "%s: pools: no pool \"%s\" in this spec", where, f->pools[k]);
        }
        for (int k = 0; k < s->nfaults; k++)
            if (f->id[0] && !strcmp(s->faults[k].id, f->id))
                SERR(c, yt_get(n->vals[i], "id"), "%s: id: \"%s\" was already used by spec.faults[%d]: ids are unique",
                     where, f->id, k);
        if (parsed)
            s->nfaults++;
    }
}

void spec_free(struct cluster_spec *s)
{
    arena_free(&s->arena);
    memset(s, 0, sizeof *s);
}

const struct spec_node *spec_find_node(const struct cluster_spec *s, const char *name)
{
    for (int i = 0; i < s->nnodes; i++)
        if (!strcmp(s->nodes[i].name, name))
            return &s->nodes[i];
    return NULL;
}

int spec_keep_shard(struct cluster_spec *s, int index, int count)
{
    int all = s->nnodes, kept = 0;
    if (count <= 1)
        return all;
    /* Round robin rather than blocks: pools come one after another in a spec, so every shard
     * gets its share of each pool (its load and tick cost alike), and a node's shard depends on
     * its place in the spec only, never on the number of nodes after it. */
    for (int k = 0; k < all; k++)
        if (k % count == index)
            s->nodes[kept++] = s->nodes[k];
    s->nnodes = kept;
    return all;
}
