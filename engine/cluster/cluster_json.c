/* cluster_json: Node objects as API JSON and back; see cluster_json.h. */
#include "cluster_json.h"

#include "nodeobject.h"

#include <cjson/cJSON.h>

static cJSON *map_of(const struct kvlist *l)
{
    cJSON *m = cJSON_CreateObject();
    for (int i = 0; i < l->n; i++)
        cJSON_AddStringToObject(m, l->items[i].k, l->items[i].v);
    return m;
}

cJSON *cluster_node_json(const struct node_object *o)
{
    cJSON *n = cJSON_CreateObject();
    cJSON_AddStringToObject(n, "apiVersion", "v1");
    cJSON_AddStringToObject(n, "kind", "Node");
    cJSON *md = cJSON_AddObjectToObject(n, "metadata");
    cJSON_AddStringToObject(md, "name", o->name);
    cJSON_AddItemToObject(md, "labels", map_of(&o->labels));
    cJSON_AddItemToObject(md, "annotations", map_of(&o->annotations));
    cJSON *taints = cJSON_AddArrayToObject(cJSON_AddObjectToObject(n, "spec"), "taints");
    for (int i = 0; i < o->ntaints; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "key", o->taints[i].key);
        if (o->taints[i].value && *o->taints[i].value)
            cJSON_AddStringToObject(t, "value", o->taints[i].value);
        cJSON_AddStringToObject(t, "effect", o->taints[i].effect);
        cJSON_AddItemToArray(taints, t);
    }
    /* POST /api/v1/nodes keeps the status it is given: the scheduler sees capacity at once */
    cJSON *st = cJSON_AddObjectToObject(n, "status");
    cJSON_AddItemToObject(st, "capacity", map_of(&o->capacity));
    cJSON_AddItemToObject(st, "allocatable", map_of(&o->allocatable));
    return n;
}

static const cJSON *meta(const cJSON *node, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "metadata"), key);
}

const char *cluster_node_profile(const cJSON *node)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta(node, "annotations"), CLUSTER_PROFILE_ANNOTATION);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *cluster_node_labels(const cJSON *node)
{
    const cJSON *l = meta(node, "labels");
    return cJSON_IsObject(l) ? l : NULL;
}
