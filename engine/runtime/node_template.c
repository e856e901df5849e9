/* node_template: what every node of a pool shares, built once per pool at the start: the
 * physics parameters (render/params.c), the rendered image with the bindings of its values
 * (render/render.c) under a layout hash that covers the profile's values, and the static file
 * of its layout, shared by the templates with the same hash, and the lookups by kind its nodes
 * share (node_template.ix). See node.h "struct node_template". */
#include "node_internal.h"
#include "params.h"
#include "render.h"
#include "seg_view.h"

#include "profile.h"
#include "ytree.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv(uint64_t h, const char *s)
{
    return seg_hash_bytes(h, s, strlen(s) + 1);
}

static uint64_t hash_node(uint64_t h, const struct yt_node *n)
{
    if (!n)
        return fnv(h, "~");
    switch (n->kind) {
    case YT_SCALAR:
        return fnv(h, n->text);
    case YT_SEQ:
        h = fnv(h, "[");
        for (int i = 0; i < n->n; i++)
            h = hash_node(h, n->vals[i]);
        return fnv(h, "]");
    case YT_MAP:
        h = fnv(h, "{");
        for (int i = 0; i < n->n; i++)
            h = hash_node(fnv(h, n->keys[i]->text), n->vals[i]);
        return fnv(h, "}");
    }
    return h;
}

/* A stable hash of a profile tree's values (keys, values, order), for the layout hash. */
static uint64_t tree_hash(const struct yt_node *tree)
{
    return hash_node(1469598103934665603ULL, tree);
}

/* The template's lookups by kind (node_template.ix) from its bindings and its image's entries:
 * what every node's tick used to build for itself at its open. Each array has a spare entry. */
static void index_build(struct node_template *t)
{
    struct node_index *ix = &t->ix;
    const struct seg_header *h = (const struct seg_header *)t->image.bytes;
    const struct seg_static_header *sh = (const struct seg_static_header *)t->image.st_bytes;
    const struct seg_entry *entries = (const struct seg_entry *)(t->image.st_bytes + sh->entries_off);
    uint32_t nv = t->nbinds;
    ix->counters = calloc(nv + 1, sizeof *ix->counters);
    ix->svalues = calloc(nv + 1, sizeof *ix->svalues);
    ix->freq_values = calloc(nv + 1, sizeof *ix->freq_values);
    ix->busy_values = calloc(nv + 1, sizeof *ix->busy_values);
    ix->counter_of = malloc((nv + 1) * sizeof *ix->counter_of);
    ix->shown_of = malloc((nv + 1) * sizeof *ix->shown_of);
    ix->slot_entry = calloc(h->n_slots + 1, sizeof *ix->slot_entry);
    if (!ix->counters || !ix->svalues || !ix->freq_values || !ix->busy_values || !ix->counter_of || !ix->shown_of ||
        !ix->slot_entry)
        abort();
    for (uint32_t v = 0; v < nv; v++) {
        uint8_t k = t->binds[v].kind;
        ix->counter_of[v] = ix->shown_of[v] = SEG_NONE;
        if (k == BK_ENERGY || k == BK_ENERGY_KEPT || k == BK_GPU_ENERGY || k == BK_ELAPSED || k == BK_CPU_BUSY ||
            k == BK_UNIT_CPU || k == BK_CPU_CYCLES) {
            ix->counter_of[v] = ix->ncounters;
            ix->counters[ix->ncounters++] = v;
        }
        if (k == BK_CUR_FREQ) {
            ix->shown_of[v] = ix->nfreq;
            ix->freq_values[ix->nfreq++] = v;
        }
        if (k == BK_ENERGY || k == BK_HSMP_POWER || k == BK_GPU ||
            k == BK_GPU_ENERGY || k == BK_PLATFORM || k == BK_FAULTS || k == BK_PM_COUNTER || k == BK_ELAPSED || k == BK_LOADAVG ||
            k == BK_MEM_USED || k == BK_PKG_TEMP || k == BK_THERMAL)
            ix->svalues[ix->nsvalues++] = v;
        if (k == BK_CPU_BUSY && t->binds[v].cpu == ix->nbusy)
            ix->busy_values[ix->nbusy++] = v; /* by CPU index (render_proc makes them in order) */
        if (k >= BK_UNIT_FIRST && k <= BK_UNIT_LAST && t->binds[v].cpu >= ix->nunits)
            ix->nunits = t->binds[v].cpu + 1u;
        ix->ncyc += k == BK_CPU_CYCLES;
        ix->ncf += k == BK_CF_STAT && t->binds[v].zone == 0; /* a time line: one per policy entry */
        ix->ncfc += k == BK_CF_STAT && t->binds[v].zone == 1;
    }
    ix->nshown = ix->nfreq; /* the frequencies first, in their order, then the values below */
    for (uint32_t v = 0; v < nv; v++)
        if (t->binds[v].kind == BK_MEM_USED || t->binds[v].kind == BK_PKG_TEMP || t->binds[v].kind == BK_THERMAL)
            ix->shown_of[v] = ix->nshown++;
    ix->counter_of[nv] = ix->shown_of[nv] = SEG_NONE;
    ix->unit_vals = node_unit_vals_build(t->binds, nv, ix->nunits);
    ix->cyc_lines = node_cyc_lines_build(t->binds, nv, ix->ncyc);
    for (uint32_t i = 0; i < sh->n_entries; i++) {
        uint32_t slot = entries[i].slot, v = entries[i].value;
        if (slot != SEG_NONE && slot < h->n_slots && v < nv)
            ix->slot_entry[slot] = i;
    }
}

static void index_free(struct node_index *ix)
{
    uint32_t *arrays[] = {ix->counters, ix->svalues, ix->freq_values, ix->busy_values, ix->counter_of, ix->shown_of,
                          ix->slot_entry};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(ix->unit_vals);
    free(ix->cyc_lines);
    memset(ix, 0, sizeof *ix);
}

size_t node_private_bytes(const struct node_template *t)
{
    const struct node_index *ix = &t->ix;
    const struct node *n = NULL;
    size_t b = sizeof *n + 64;                                          /* the node and its path */
    b += (node_img_header(t)->n_slots + 1u) * sizeof *n->slot_applied;  /* node_open's arrays */
    b += (ix->ncounters + 1u) * sizeof *n->cstart;
    b += (ix->nshown + 1u) * sizeof *n->shown;
    b += (ix->ncounters + 1u) * sizeof *n->seed_off;                    /* power-loss, rapl-jump */
    b += (ix->nbusy + 1u) * (sizeof *n->busy_shown + sizeof *n->busy_shown_rate);
    b += ix->nunits * sizeof *n->units + ix->ncyc * sizeof *n->cyc;     /* node_unit.c, node_cycles.c */
    if (ix->ncf)                                                        /* node_cfstats.c */
        b += ix->ncf * (sizeof *n->cf_time + sizeof *n->cfpol + sizeof *n->cf_dirty) +
             ix->ncfc * SEG_COUNTS_PER_VALUE * sizeof *n->cf_count + PHYS_MAX_CPUS * sizeof *n->cf_of_cpu;
    return b;
}

size_t node_resident_bytes(const struct node_template *t)
{
    const struct node_index *ix = &t->ix;
    const struct node *n = NULL;
    size_t b = node_private_bytes(t);
    int cpus = t->params.cpus < 0 ? 0 : t->params.cpus > PHYS_MAX_CPUS ? PHYS_MAX_CPUS : t->params.cpus;
    int gpus = t->gparams.count < 0 ? 0 : t->gparams.count > PHYS_GPU_MAX ? PHYS_GPU_MAX : t->gparams.count;
    b -= (size_t)(PHYS_MAX_CPUS - cpus) * sizeof n->state.cpu[0] + (size_t)(PHYS_GPU_MAX - gpus) * sizeof n->gstate.g[0];
    b -= (node_img_header(t)->n_slots + 1u) * sizeof *n->slot_applied + (ix->ncounters + 1u) * sizeof *n->seed_off;
    return b;
}

int node_template_build(struct node_template *t, const char *profile, const struct yt_node *tree, double ambient_c,
                        int64_t tick_ns, const struct job_cgroups *cg, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->profile = profile;
    params_cpu(tree, ambient_c, &t->params);
    params_gpu(tree, ambient_c, &t->gparams);
    params_sensors(tree, &t->sensors);
    t->gpu_product = prof_str(tree, "gpus.product", "");
    /* Twice (segment.h "Quiet values"): the first rendering counts the quiet values, the second
     * gives them the last indices, so they fill pages of their own that a node's file leaves as
     * holes. Rendering is deterministic: the second makes the same values in the same order. */
    struct node_layout l = {.b = segb_new()};
    render_node(&l, tree, profile, &t->params, &t->gparams, cg);
    uint32_t first_quiet = segb_live_count(l.b);
    segb_free(l.b);
    free(l.binds);
    l = (struct node_layout){.b = segb_new()};
    segb_quiet_split(l.b, first_quiet);
    render_node(&l, tree, profile, &t->params, &t->gparams, cg);
    uint64_t extra = fnv(tree_hash(tree), profile);
    int rc = segb_image(l.b, profile, extra, tick_ns, &t->image, err, errlen);
    segb_free(l.b);
    t->binds = l.binds;
    t->nbinds = l.nbinds;
    if (!rc)
        index_build(t);
    return rc;
}

int node_static_put(struct node_template *templates, int n, int t, const char *root, char *err, size_t errlen)
{
    struct node_template *me = &templates[t];
    for (int q = 0; q < n; q++)
        if (q != t && templates[q].owns_st && templates[q].image.layout_hash == me->image.layout_hash) {
            me->st = templates[q].st;
            return 0;
        }
    struct node_static *st = calloc(1, sizeof *st);
    size_t plen = strlen(root) + 40;
    char *path = malloc(plen);
    if (!st || !path)
        abort();
    seg_static_path_in(root, strlen(root), me->image.layout_hash, path, plen);
    int rc = seg_static_put(&me->image, path, &st->f, err, errlen);
    if (rc) {
        free(path);
        free(st);
        return rc;
    }
    st->path = path;
    me->st = st;
    me->owns_st = true;
    return 0;
}

void node_template_free(struct node_template *t)
{
    if (t->owns_st) {
        seg_static_close(&t->st->f);
        free(t->st->path);
        free(t->st);
    }
    index_free(&t->ix);
    seg_image_free(&t->image);
    free(t->binds);
    memset(t, 0, sizeof *t);
}
