/* node_template: what every node of a pool shares, built once per pool at the start: the
 * physics parameters (render/params.c), the rendered image with the bindings of its values
 * (render/render.c) under a layout hash that covers the profile's values, and the static file
 * of its layout, shared by the templates with the same hash. See node.h "struct node_template". */
#include "node_internal.h"
#include "params.h"
#include "render.h"

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

int node_template_build(struct node_template *t, const char *profile, const struct yt_node *tree, double ambient_c,
                        int64_t tick_ns, const struct job_cgroups *cg, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->profile = profile;
    params_cpu(tree, ambient_c, &t->params);
    params_gpu(tree, ambient_c, &t->gparams);
    t->gpu_product = prof_str(tree, "gpus.product", "");
    struct node_layout l = {.b = segb_new()};
    render_node(&l, tree, profile, &t->params, &t->gparams, cg);
    uint64_t extra = fnv(tree_hash(tree), profile);
    int rc = segb_image(l.b, profile, extra, tick_ns, &t->image, err, errlen);
    segb_free(l.b);
    t->binds = l.binds;
    t->nbinds = l.nbinds;
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
    seg_image_free(&t->image);
    free(t->binds);
    memset(t, 0, sizeof *t);
}
