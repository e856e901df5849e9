/* embedded: the files built into the binary (every profiles/NAME.yaml, specs/smoke.yaml).
 * Owns: the lookup. The table itself is generated at build time by cmake/embed.cmake from the
 * source tree, so the binary needs no data files at run time. */
#ifndef HWEMU_EMBEDDED_H
#define HWEMU_EMBEDDED_H
#include <stddef.h>

struct embedded_file {
    const char *path; /* relative to the source tree, e.g. "profiles/vm-no-powercap.yaml" */
    const char *data; /* NUL-terminated */
    size_t len;
};

extern const struct embedded_file embedded_files[]; /* ends with a {NULL} entry */

const struct embedded_file *embedded_find(const char *path);

#endif
