/* nodeobject: Kubernetes Node objects for profiles and spec nodes; see nodeobject.h.
 * Label generation follows the original emulator: NFD PCI labels from the device class
 * whitelist (03, 0b40, 12), GFD labels for NVIDIA GPUs labelled "gfd", hostname last. */
#include "nodeobject.h"

#include "arena.h"
#include "k8s.h"
#include "profile.h"
#include "spec.h"
#include "ytree.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define NVIDIA_DRIVER_VERSION "590.48.01"

void kv_set(struct arena *a, struct kvlist *l, const char *k, const char *v)
{
    for (int i = 0; i < l->n; i++) {
        if (!strcmp(l->items[i].k, k)) {
            l->items[i].v = v;
            return;
        }
    }
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 16;
        struct kv *it = arena_alloc(a, sizeof *it * (size_t)cap);
        if (l->n)
            memcpy(it, l->items, sizeof *it * (size_t)l->n);
        l->items = it;
        l->cap = cap;
    }
    l->items[l->n++] = (struct kv){k, v};
}

const char *kv_get(const struct kvlist *l, const char *k)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].k, k))
            return l->items[i].v;
    return NULL;
}

static void kv_remove_prefix(struct kvlist *l, const char *prefix)
{
    size_t pl = strlen(prefix);
    int kept = 0;
    for (int i = 0; i < l->n; i++)
        if (strncmp(l->items[i].k, prefix, pl) != 0)
            l->items[kept++] = l->items[i];
    l->n = kept;
}

static void kv_remove(struct kvlist *l, const char *k)
{
    for (int i = 0; i < l->n; i++) {
        if (!strcmp(l->items[i].k, k)) {
            memmove(&l->items[i], &l->items[i + 1], sizeof *l->items * (size_t)(l->n - i - 1));
            l->n--;
            return;
        }
    }
}

static void map_into(struct arena *a, struct kvlist *l, const struct yt_node *map)
{
    for (int i = 0; map && map->kind == YT_MAP && i < map->n; i++)
        if (map->vals[i]->kind == YT_SCALAR)
            kv_set(a, l, map->keys[i]->text, map->vals[i]->text);
}

static int cmp_key(const void *x, const void *y)
{
    return strcmp(((const struct kv *)x)->k, ((const struct kv *)y)->k);
}

static void pci_label(struct arena *a, struct kvlist *l, const struct yt_node *dev)
{
    const char *cls = prof_str(dev, "class", ""), *ven = prof_str(dev, "vendor", "");
    if (strlen(cls) < 6 || strlen(ven) < 6)
        return;
    char c4[5], v4[5];
    for (int i = 0; i < 4; i++) {
        c4[i] = (char)tolower((unsigned char)cls[2 + i]);
        v4[i] = (char)tolower((unsigned char)ven[2 + i]);
    }
    c4[4] = v4[4] = 0;
    if (strncmp(c4, "03", 2) && strcmp(c4, "0b40") && strncmp(c4, "12", 2))
        return;
    kv_set(a, l, arena_printf(a, "feature.node.kubernetes.io/pci-%s_%s.present", c4, v4), "true");
}

static const char *dashed(struct arena *a, const char *s)
{
    char *out = arena_alloc(a, strlen(s) + 1), *o = out;
    bool space = false;
    for (; *s; s++) {
        if (isspace((unsigned char)*s)) {
            space = true;
            continue;
        }
        if (space && o != out)
            *o++ = '-';
        space = false;
        *o++ = *s;
    }
    *o = 0;
    return out;
}

static void gfd_labels(struct arena *a, struct kvlist *l, const struct yt_node *g)
{
    const char *exp = prof_str(g, "exposure", "whole");
    long long n = prof_int(g, "count", 0), m = prof_int(g, "migDevicesPerGPU", 0),
              r = prof_int(g, "timesliceReplicas", 0);
    const char *mig = prof_str(g, "migProfile", "");
    const char *product = dashed(a, prof_str(g, "product", ""));
    const char *count = arena_printf(a, "%lld", n), *replicas = "1", *sharing = "none", *strategy = "none";
    if (!strcmp(exp, "mig-single")) {
        product = arena_printf(a, "%s-MIG-%s", product, mig);
        count = arena_printf(a, "%lld", n * m);
        strategy = "single";
    } else if (!strcmp(exp, "mig-mixed")) {
        strategy = "mixed";
        kv_set(a, l, arena_printf(a, "nvidia.com/mig-%s.count", mig), arena_printf(a, "%lld", n * m));
    } else if (!strncmp(exp, "timeslice-", 10)) {
        replicas = arena_printf(a, "%lld", r);
        sharing = "time-slicing";
        if (!strcmp(exp, "timeslice-norename"))
            product = arena_printf(a, "%s-SHARED", product);
    }
    kv_set(a, l, "nvidia.com/gpu.product", product);
    kv_set(a, l, "nvidia.com/gpu.count", count);
    if (strcmp(exp, "dra"))
        kv_set(a, l, "nvidia.com/gpu.replicas", replicas);
    kv_set(a, l, "nvidia.com/gpu.present", "true");
    kv_set(a, l, "nvidia.com/gpu.mode", "compute");
    kv_set(a, l, "nvidia.com/gpu.sharing-strategy", sharing);
    kv_set(a, l, "nvidia.com/mig.strategy", strategy);
    const char *arch = prof_str(g, "architecture", "");
    if (*arch)
        kv_set(a, l, "nvidia.com/gpu.family", arch);
    const char *cc = prof_str(g, "computeCapability", "");
    const char *dot = strchr(cc, '.');
    if (dot) {
        kv_set(a, l, "nvidia.com/gpu.compute.major", arena_strndup(a, cc, (size_t)(dot - cc)));
        kv_set(a, l, "nvidia.com/gpu.compute.minor", arena_strdup(a, dot + 1));
    }
    long long mem = prof_int(g, "memoryMiB", 0);
    if (mem > 0)
        kv_set(a, l, "nvidia.com/gpu.memory", arena_printf(a, "%lld", mem));
    const struct yt_node *mc = yt_get(g, "migCapable");
    bool capable;
    if (mc && mc->src && yt_bool(mc, &capable))
        kv_set(a, l, "nvidia.com/mig.capable", capable ? "true" : "false");
    static const char *const prefixes[] = {"nvidia.com/cuda.driver-version.", "nvidia.com/cuda.driver."};
    static const char *const parts[2][3] = {{"major", "minor", "revision"}, {"major", "minor", "rev"}};
    kv_set(a, l, "nvidia.com/cuda.driver-version.full", NVIDIA_DRIVER_VERSION);
    for (int p = 0; p < 2; p++) {
        kv_set(a, l, arena_printf(a, "%s%s", prefixes[p], parts[p][0]), "590");
        kv_set(a, l, arena_printf(a, "%s%s", prefixes[p], parts[p][1]), "48");
        kv_set(a, l, arena_printf(a, "%s%s", prefixes[p], parts[p][2]), "01");
    }
}

/* Capacity and allocatable: cpu in cores (milli when fractional), memory in Ki. */
static long double parse_qty(const char *s, bool milli)
{
    long double v = 0;
    return k8s_quantity(s, milli, &v) ? v : 0;
}

static void resources(struct arena *a, const struct yt_node *t, struct node_object *o)
{
    long long cpu = prof_int(t, "node.capacity.cpu", 0), memki = prof_int(t, "node.capacity.memoryKi", 0);
    kv_set(a, &o->capacity, "cpu", arena_printf(a, "%lld", cpu));
    kv_set(a, &o->capacity, "memory", arena_printf(a, "%lldKi", memki));
    kv_set(a, &o->capacity, "pods", "110");
    const struct yt_node *g = yt_get(t, "gpus");
    if (g) {
        const char *vendor = prof_str(g, "vendor", ""), *exp = prof_str(g, "exposure", "whole");
        long long n = prof_int(g, "count", 0), m = prof_int(g, "migDevicesPerGPU", 0),
                  r = prof_int(g, "timesliceReplicas", 0);
        const char *key = NULL;
        long long v = 0;
        if (!strcmp(exp, "whole")) {
            /* Intel's device plugin names the resource after the kernel driver */
            key = !strcmp(vendor, "nvidia") ? "nvidia.com/gpu"
                : !strcmp(vendor, "intel")  ? arena_printf(a, "gpu.intel.com/%s", prof_str(g, "intel.driver", "i915"))
                                            : "amd.com/gpu";
            v = n;
        } else if (!strcmp(exp, "mig-single")) {
            key = "nvidia.com/gpu", v = n * m;
        } else if (!strcmp(exp, "mig-mixed")) {
            key = arena_printf(a, "nvidia.com/mig-%s", prof_str(g, "migProfile", "")), v = n * m;
        } else if (!strcmp(exp, "timeslice-rename")) {
            key = "nvidia.com/gpu.shared", v = n * r;
        } else if (!strcmp(exp, "timeslice-norename")) {
            key = "nvidia.com/gpu", v = n * r;
        }
        if (key)
            kv_set(a, &o->capacity, key, arena_printf(a, "%lld", v));
    }
    const struct yt_node *ext = yt_path(t, "node.extendedResources");
    map_into(a, &o->capacity, ext);
    for (int i = 0; i < o->capacity.n; i++)
        kv_set(a, &o->allocatable, o->capacity.items[i].k, o->capacity.items[i].v);
    const char *rc = prof_str(t, "node.reserved.cpu", ""), *rm = prof_str(t, "node.reserved.memory", "");
    if (*rc) {
        long long milli = cpu * 1000 - (long long)(parse_qty(rc, true) + 0.5L);
        kv_set(a, &o->allocatable, "cpu", milli % 1000 ? arena_printf(a, "%lldm", milli)
                                                       : arena_printf(a, "%lld", milli / 1000));
    }
    if (*rm) {
        long long bytes = memki * 1024 - (long long)(parse_qty(rm, false) + 0.5L);
        kv_set(a, &o->allocatable, "memory", bytes % 1024 ? arena_printf(a, "%lld", bytes)
                                                          : arena_printf(a, "%lldKi", bytes / 1024));
    }
}

void nodeobject_from_profile(struct arena *a, const char *profile_name, const struct yt_node *t,
                             const char *node_name, struct node_object *o)
{
    memset(o, 0, sizeof *o);
    o->name = node_name;
    /* 1. listed label groups, in sorted group order */
    const struct yt_node *groups = yt_path(t, "node.labels");
    if (groups && groups->kind == YT_MAP) {
        const char **names = arena_alloc(a, sizeof *names * (size_t)(groups->n + 1));
        for (int i = 0; i < groups->n; i++)
            names[i] = groups->keys[i]->text;
        for (int i = 1; i < groups->n; i++)
            for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
                const char *x = names[j];
                names[j] = names[j - 1];
                names[j - 1] = x;
            }
        for (int i = 0; i < groups->n; i++)
            map_into(a, &o->labels, yt_get(yt_get(groups, names[i]), "values"));
    }
    /* 2. NFD PCI labels */
    const struct yt_node *pci = yt_get(t, "pci");
    for (int i = 0; pci && pci->kind == YT_SEQ && i < pci->n; i++)
        pci_label(a, &o->labels, pci->vals[i]);
    const struct yt_node *g = yt_get(t, "gpus");
    if (yt_get(g, "pci"))
        pci_label(a, &o->labels, yt_get(g, "pci"));
    /* 3. GFD */
    if (g && !strcmp(prof_str(g, "labeller", ""), "gfd"))
        gfd_labels(a, &o->labels, g);
    /* 4. a node without NFD has no NFD labels at all */
    if (!strcmp(prof_str(t, "node.nfd", ""), "absent"))
        kv_remove_prefix(&o->labels, "feature.node.kubernetes.io/");
    /* 5. hostname */
    kv_set(a, &o->labels, "kubernetes.io/hostname", node_name);

    kv_set(a, &o->annotations, "sim.joulie.io/profile", profile_name);
    const struct yt_node *taints = yt_path(t, "node.taints");
    int nt = taints && taints->kind == YT_SEQ ? taints->n : 0;
    o->taints = arena_alloc(a, sizeof *o->taints * (size_t)(nt + 1));
    for (int i = 0; i < nt; i++)
        o->taints[o->ntaints++] = (struct taint){prof_str(taints->vals[i], "key", ""),
                                                 prof_str(taints->vals[i], "value", ""),
                                                 prof_str(taints->vals[i], "effect", "NoSchedule")};
    resources(a, t, o);
}

void nodeobject_for_spec_node(struct arena *a, const struct cluster_spec *s, const struct spec_node *n,
                              struct node_object *o)
{
    const struct spec_pool *p = &s->pools[n->pool];
    nodeobject_from_profile(a, p->profile->name, p->tree, n->name, o);
    if (s->kwok) {
        kv_set(a, &o->labels, "type", "kwok");
        kv_set(a, &o->annotations, "kwok.x-k8s.io/node", "fake");
        struct taint *t = arena_alloc(a, sizeof *t * (size_t)(o->ntaints + 1));
        if (o->ntaints)
            memcpy(t, o->taints, sizeof *t * (size_t)o->ntaints);
        t[o->ntaints++] = (struct taint){"kwok.x-k8s.io/node", "fake", "NoSchedule"};
        o->taints = t;
    }
    map_into(a, &o->labels, s->default_labels);
    map_into(a, &o->labels, p->labels);
    if (p->rack)
        kv_set(a, &o->labels, "joulie.io/rack", p->rack);
    if (p->cooling_zone)
        kv_set(a, &o->labels, "joulie.io/cooling-zone", p->cooling_zone);
    kv_set(a, &o->labels, "sim.joulie.io/cluster", s->name);
    kv_set(a, &o->labels, "sim.joulie.io/pool", p->name);
    kv_remove(&o->labels, "kubernetes.io/hostname");
    kv_set(a, &o->labels, "kubernetes.io/hostname", n->name);
}

static void put_quoted(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\x%02x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

static void put_map(FILE *out, const char *indent, const char *name, struct kvlist *l)
{
    if (!l->n) {
        fprintf(out, "%s%s: {}\n", indent, name);
        return;
    }
    qsort(l->items, (size_t)l->n, sizeof *l->items, cmp_key);
    fprintf(out, "%s%s:\n", indent, name);
    for (int i = 0; i < l->n; i++) {
        fprintf(out, "%s  ", indent);
        put_quoted(out, l->items[i].k);
        fputs(": ", out);
        put_quoted(out, l->items[i].v);
        fputc('\n', out);
    }
}

void nodeobject_write_yaml(FILE *out, const struct node_object *o)
{
    struct node_object c = *o; /* put_map sorts in place; the caller's order is not promised */
    fputs("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: ", out);
    put_quoted(out, o->name);
    fputc('\n', out);
    put_map(out, "  ", "labels", &c.labels);
    put_map(out, "  ", "annotations", &c.annotations);
    fputs("spec:\n", out);
    if (!o->ntaints) {
        fputs("  taints: []\n", out);
    } else {
        fputs("  taints:\n", out);
        for (int i = 0; i < o->ntaints; i++) {
            fputs("  - key: ", out);
            put_quoted(out, o->taints[i].key);
            if (o->taints[i].value && *o->taints[i].value) {
                fputs("\n    value: ", out);
                put_quoted(out, o->taints[i].value);
            }
            fputs("\n    effect: ", out);
            put_quoted(out, o->taints[i].effect);
            fputc('\n', out);
        }
    }
    fputs("status:\n", out);
    put_map(out, "  ", "capacity", &c.capacity);
    put_map(out, "  ", "allocatable", &c.allocatable);
}
