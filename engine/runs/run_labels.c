/* run_labels: a node's run-time label map; see run_labels.h. Every operation is linear in the
 * map, the spec's label maps and the request: the hash sets below are built per call (a few
 * thousand entries at most for the map, the spec's maps are what its author wrote). */
#include "run_labels.h"

#include "ytree.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static uint32_t pow2_above(uint32_t n)
{
    uint32_t c = 16;
    while (c < 2 * n + 2)
        c <<= 1;
    return c;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        abort(); /* bounded sizes: RUN_LABELS_MAX entries, or what the spec holds */
    return p;
}

/* A set of strings (pointers into someone else's memory): a slot array of a power of two. */
struct strset {
    const char **k;
    uint32_t cap;
};

static void strset_init(struct strset *s, uint32_t n)
{
    s->cap = pow2_above(n);
    s->k = xcalloc(s->cap, sizeof *s->k);
}

/* The slot of key: its own, or the empty one where it would go. */
static uint32_t strset_slot(const struct strset *s, const char *key)
{
    uint32_t i = hash(key) & (s->cap - 1);
    while (s->k[i] && strcmp(s->k[i], key))
        i = (i + 1) & (s->cap - 1);
    return i;
}

static bool strset_has(const struct strset *s, const char *key)
{
    return s->cap && s->k[strset_slot(s, key)];
}

static void strset_add(struct strset *s, const char *key)
{
    s->k[strset_slot(s, key)] = key;
}

/* The keys of the spec's label maps (both, or only the pool's: from = 1). */
static void spec_keys(struct strset *s, const struct yt_node *const spec[2], int from)
{
    uint32_t n = 0;
    for (int k = from; k < 2; k++)
        if (spec[k] && spec[k]->kind == YT_MAP)
            n += (uint32_t)spec[k]->n;
    strset_init(s, n);
    for (int k = from; k < 2; k++)
        for (int i = 0; spec[k] && spec[k]->kind == YT_MAP && i < spec[k]->n; i++)
            strset_add(s, spec[k]->keys[i]->text);
}

static void reindex(struct run_label_map *m)
{
    free(m->slot);
    m->nslots = pow2_above((uint32_t)m->cap);
    m->slot = xcalloc(m->nslots, sizeof *m->slot);
    for (int i = 0; i < m->n; i++) {
        uint32_t s = hash(m->v[i].key) & (m->nslots - 1);
        while (m->slot[s])
            s = (s + 1) & (m->nslots - 1);
        m->slot[s] = (uint32_t)i + 1;
    }
}

const struct run_label *run_labels_get(const struct run_label_map *m, const char *key)
{
    if (!m->nslots)
        return NULL;
    for (uint32_t s = hash(key) & (m->nslots - 1); m->slot[s]; s = (s + 1) & (m->nslots - 1))
        if (!strcmp(m->v[m->slot[s] - 1].key, key))
            return &m->v[m->slot[s] - 1];
    return NULL;
}

static char *xstrdup(const char *s)
{
    char *p = s ? strdup(s) : NULL;
    if (s && !p)
        abort();
    return p;
}

int run_labels_apply(struct run_label_map *m, const struct run_label_edit *edits, int n,
                     const struct yt_node *const spec[2], int max, int *would)
{
    /* the request's keys, each once at its first place with its last value: last[i] is the
     * edit whose value wins for the key first given by edit i, -1 for a later edit of a key */
    struct strset seen;
    strset_init(&seen, (uint32_t)n);
    int *last = xcalloc((size_t)n, sizeof *last);
    int *at = xcalloc(seen.cap, sizeof *at);
    for (int i = 0; i < n; i++) {
        uint32_t s = strset_slot(&seen, edits[i].key);
        if (seen.k[s]) {
            last[at[s]] = i;
            last[i] = -1;
        } else {
            seen.k[s] = edits[i].key;
            at[s] = i;
            last[i] = i;
        }
    }
    struct strset sp;
    spec_keys(&sp, spec, 0);
    /* the count the map would have: nothing changes when it is too many */
    int count = m->n, adds = 0;
    for (int i = 0; i < n; i++) {
        if (last[i] < 0)
            continue;
        const char *value = edits[last[i]].value;
        bool has = run_labels_get(m, edits[i].key) != NULL;
        bool keep = value || strset_has(&sp, edits[i].key);
        adds += !has && keep;
        count += !has && keep ? 1 : has && !keep ? -1 : 0;
    }
    *would = count;
    if (count > max) {
        free(sp.k), free(seen.k), free(last), free(at);
        return E2BIG;
    }
    if (m->n + adds > m->cap) { /* the dropped ones leave only after the loop */
        int cap = m->cap ? m->cap : 8;
        while (cap < m->n + adds)
            cap *= 2;
        struct run_label *v = realloc(m->v, sizeof *v * (size_t)cap);
        if (!v)
            abort();
        m->v = v;
        m->cap = cap;
    }
    /* a dropped entry keeps its key until the end: other keys' probes compare with it */
    bool *drop = xcalloc((size_t)m->cap, sizeof *drop), dropped = false;
    for (int i = 0; i < n; i++) {
        if (last[i] < 0)
            continue;
        const char *value = edits[last[i]].value;
        struct run_label *e = (struct run_label *)run_labels_get(m, edits[i].key);
        bool keep = value || strset_has(&sp, edits[i].key);
        if (e) {
            free(e->value);
            e->value = xstrdup(value);
            if (!keep) /* dropped below, with the index rebuilt once */
                drop[e - m->v] = dropped = true;
        } else if (keep) {
            m->v[m->n++] = (struct run_label){xstrdup(edits[i].key), xstrdup(value)};
            if ((uint32_t)m->n * 2 + 2 > m->nslots) {
                reindex(m);
            } else { /* room in the index: put it in */
                uint32_t s = hash(edits[i].key) & (m->nslots - 1);
                while (m->slot[s])
                    s = (s + 1) & (m->nslots - 1);
                m->slot[s] = (uint32_t)m->n;
            }
        }
    }
    if (dropped) {
        int k = 0;
        for (int i = 0; i < m->n; i++)
            if (drop[i])
                free(m->v[i].key), free(m->v[i].value);
            else
                m->v[k++] = m->v[i];
        m->n = k;
        reindex(m);
    }
    free(drop);
    free(sp.k), free(seen.k), free(last), free(at);
    return 0;
}

void run_labels_json(const struct run_label_map *m, const struct yt_node *const spec[2], cJSON *obj)
{
    struct strset pool;
    spec_keys(&pool, spec, 1);
    for (int k = 0; k < 2; k++)
        for (int i = 0; spec[k] && spec[k]->kind == YT_MAP && i < spec[k]->n; i++) {
            const char *key = spec[k]->keys[i]->text, *v = yt_str(spec[k]->vals[i]);
            if ((k == 0 && strset_has(&pool, key)) || run_labels_get(m, key))
                continue; /* the pool's or a run-time one comes instead */
            cJSON_AddStringToObject(obj, key, v ? v : "");
        }
    for (int i = 0; i < m->n; i++)
        if (m->v[i].value)
            cJSON_AddStringToObject(obj, m->v[i].key, m->v[i].value);
    free(pool.k);
}

void run_labels_free(struct run_label_map *m)
{
    for (int i = 0; i < m->n; i++)
        free(m->v[i].key), free(m->v[i].value);
    free(m->v);
    free(m->slot);
    *m = (struct run_label_map){0};
}
