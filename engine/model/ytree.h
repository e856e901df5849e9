/* ytree: a YAML document as a plain tree that remembers where every node was written.
 * Owns: parsing (libyaml) into nodes allocated in a caller's arena, scalar conversion, and
 * lookup helpers. Every node carries file, line and column (1-based) so that every later
 * error can point at the text the user wrote. Duplicate mapping keys, non-scalar keys,
 * recursive aliases and absurd nesting are parse errors. Never prints. */
#ifndef HWEMU_YTREE_H
#define HWEMU_YTREE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct arena;
struct diag;

enum yt_kind { YT_SCALAR, YT_MAP, YT_SEQ };

struct yt_node {
    enum yt_kind kind;
    const char *file;
    int line, col;
    const char *text;        /* YT_SCALAR: the text as written (unescaped) */
    bool plain;              /* YT_SCALAR: unquoted, so it may be a number, bool or null */
    int n;                   /* YT_MAP: pairs; YT_SEQ: items */
    struct yt_node **keys;   /* YT_MAP: scalar key nodes */
    struct yt_node **vals;   /* YT_MAP: values; YT_SEQ: items */
    const char *src;         /* provenance of a profile fact (profile.c), else NULL */
};

/* Parses the first document of buf. Returns its root, or NULL with errors in d (a syntax
 * error, or more than one document). An empty document gives NULL and no error. */
struct yt_node *yt_parse(struct arena *a, const char *file, const char *buf, size_t len,
                         struct diag *d, bool *empty);

struct yt_node *yt_get(const struct yt_node *map, const char *key);
/* Dotted path through maps ("cpu.sockets"); NULL when any step is missing or not a map. */
struct yt_node *yt_path(const struct yt_node *root, const char *dotted);
struct yt_node *yt_clone(struct arena *a, const struct yt_node *n);
struct yt_node *yt_new_map(struct arena *a, const struct yt_node *where);
/* Sets key to val, replacing an existing value in place or appending. _put keeps the given
 * key node (and so its location); _set makes one at val's location. */
void yt_map_set(struct arena *a, struct yt_node *map, const char *key, struct yt_node *val);
void yt_map_put(struct arena *a, struct yt_node *map, struct yt_node *key, struct yt_node *val);
void yt_map_remove(struct yt_node *map, const char *key);

const char *yt_kind_name(enum yt_kind k);
bool yt_is_null(const struct yt_node *n);
/* Scalar conversions: true on success. Integers accept [-+]digits and 0x hex. */
bool yt_int(const struct yt_node *n, long long *out);
bool yt_double(const struct yt_node *n, double *out);
bool yt_bool(const struct yt_node *n, bool *out);
/* The text of a scalar, or NULL for anything else. */
const char *yt_str(const struct yt_node *n);

#endif
