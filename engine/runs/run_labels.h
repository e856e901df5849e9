/* run_labels: one node's labels set at run time (PUT /nodes/<node>/labels), over the spec's.
 * Owns: the map (insertion order kept, a hash index over it), applying one request's edits all
 * or nothing in time linear in the map and the request, its size limit, and the node's labels as
 * JSON (the spec's default and pool labels with the run-time ones over them) in linear time.
 * Never: locking (runs.c holds its lock around a call), HTTP, label syntax (runs.c checks it).
 * Limits: Kubernetes bounds a label's key (an optional DNS-subdomain prefix of at most 253
 * characters, '/', a name of at most 63) and value (at most 63), not how many labels an object
 * has; hwemu keeps at most RUN_LABELS_MAX run-time labels a node (docs/http-api.md "Labels"). */
#ifndef HWEMU_RUN_LABELS_H
#define HWEMU_RUN_LABELS_H
#include <stdbool.h>
#include <stdint.h>

struct cJSON;
struct yt_node;

enum { RUN_LABELS_MAX = 1024 };

struct run_label {
    char *key, *value; /* value NULL: removed at run time (kept only to hide a spec label) */
};

struct run_label_map {
    struct run_label *v;
    int n, cap;
    uint32_t *slot;  /* open addressing: index + 1 into v, 0 empty */
    uint32_t nslots; /* a power of two, at least twice n */
};

/* One label of a request: value NULL removes the key. */
struct run_label_edit {
    const char *key, *value;
};

/* The run-time entry of key, or NULL when none was set. */
const struct run_label *run_labels_get(const struct run_label_map *m, const char *key);
/* Applies edits[0..n) in order (a key given twice: its first place, its last value), all or none. spec[0..2) are
 * the node's spec label maps (default and pool; NULL: none): a removal of a key they hold is
 * kept so that it hides theirs, one of another key drops the entry. 0; E2BIG (nothing changed)
 * when the map would hold more than max entries, *would the count it would have had. */
int run_labels_apply(struct run_label_map *m, const struct run_label_edit *edits, int n,
                     const struct yt_node *const spec[2], int max, int *would);
/* Adds the node's labels to obj: the spec's (pool over default) with the run-time ones over
 * them, removed ones left out. */
void run_labels_json(const struct run_label_map *m, const struct yt_node *const spec[2], struct cJSON *obj);
void run_labels_free(struct run_label_map *m);

#endif
