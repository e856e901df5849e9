/* nodeobject: the Kubernetes v1 Node a spec node registers as, and its YAML.
 * Owns: label merging (profile labels with generated NFD/GFD labels, KWOK label, spec
 * defaults, pool labels, rack, cooling zone, sim.joulie.io/cluster and /pool, hostname last),
 * the sim.joulie.io/profile and KWOK annotations, taints, capacity and allocatable.
 * Output is a YAML stream fit for `kubectl apply -f -`: every value double-quoted, keys sorted,
 * so the same spec always renders the same bytes. */
#ifndef HWEMU_NODEOBJECT_H
#define HWEMU_NODEOBJECT_H
#include <stdio.h>

struct arena;
struct cluster_spec;
struct spec_node;
struct yt_node;

struct kv {
    const char *k, *v;
};

struct kvlist {
    struct kv *items;
    int n, cap;
};

struct taint {
    const char *key, *value, *effect;
};

struct node_object {
    const char *name;
    struct kvlist labels, annotations, capacity, allocatable;
    struct taint *taints;
    int ntaints;
};

void kv_set(struct arena *a, struct kvlist *l, const char *k, const char *v);
const char *kv_get(const struct kvlist *l, const char *k);

/* The Node a real machine of this profile registers as (no spec labels). */
void nodeobject_from_profile(struct arena *a, const char *profile_name, const struct yt_node *tree,
                             const char *node_name, struct node_object *o);
/* The Node of a spec node: the profile's, then the spec's labels, annotations and taints. */
void nodeobject_for_spec_node(struct arena *a, const struct cluster_spec *s, const struct spec_node *n,
                              struct node_object *o);
void nodeobject_write_yaml(FILE *out, const struct node_object *o);

#endif
