/* embedded: the files built into the binary (every profiles/NAME.yaml, specs/smoke.yaml; the
 * telemetry layer's web page has a table of its own, web_files, made the same way).
 * Owns: the lookup. The tables themselves are generated at build time by cmake/embed.cmake, so
 * the binary needs no data files at run time. */
#ifndef HWEMU_EMBEDDED_H
#define HWEMU_EMBEDDED_H
#include <stddef.h>

struct embedded_file {
    const char *path; /* relative to the source tree, e.g. "profiles/vm-no-powercap.yaml" */
    const char *data; /* NUL-terminated */
    size_t len;
};

extern const struct embedded_file embedded_files[]; /* ends with a {NULL} entry */

/* The entry of embedded_files named path, or NULL. */
const struct embedded_file *embedded_find(const char *path);
/* The same in another generated table (one that ends with a {NULL} entry). */
const struct embedded_file *embedded_find_in(const struct embedded_file *table, const char *path);

#endif
