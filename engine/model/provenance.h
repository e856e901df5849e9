/* provenance: the grammar of a profile fact's source ("kind:ref").
 * Owns: checking one provenance string against the profile's `sources` map.
 *   assumed:<reason>                       reason non-blank
 *   published|corpus|measured:<id>[#loc]   id names a source of that same kind
 *   derived:<id>[#loc]                     id names a source of any kind
 * id has no blanks; a '#' must be followed by a non-blank location. */
#ifndef HWEMU_PROVENANCE_H
#define HWEMU_PROVENANCE_H
#include <stddef.h>

struct yt_node;

/* NULL when src is well formed and cites an existing source; otherwise why not, written into
 * buf (which is returned). */
const char *prov_check(const char *src, const struct yt_node *sources, char *buf, size_t len);
/* Source kinds a `sources` entry may have. */
int prov_source_kind_ok(const char *kind);

#endif
