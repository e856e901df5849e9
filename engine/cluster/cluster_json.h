/* cluster_json: a spec node's Node object (engine/model/nodeobject.c, the one `clusterspec
 * render-nodes` prints) as the JSON body the API server takes, and what hwemu reads back from a
 * Node: its profile annotation and its labels. */
#ifndef HWEMU_CLUSTER_JSON_H
#define HWEMU_CLUSTER_JSON_H

struct cJSON;
struct node_object;

#define CLUSTER_PROFILE_ANNOTATION "sim.joulie.io/profile"

/* {"apiVersion":"v1","kind":"Node","metadata":{name,labels,annotations},"spec":{"taints":[...]},
 * "status":{"capacity":{...},"allocatable":{...}}} (caller deletes). */
struct cJSON *cluster_node_json(const struct node_object *o);
/* The Node's sim.joulie.io/profile annotation, or NULL. */
const char *cluster_node_profile(const struct cJSON *node);
/* The Node's metadata.labels (an object), or NULL. */
const struct cJSON *cluster_node_labels(const struct cJSON *node);

#endif
