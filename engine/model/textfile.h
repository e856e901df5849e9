/* textfile: read a whole (small) text file for the loaders.
 * Owns: the read loop and its size limit; errors name the path and the reason. */
#ifndef HWEMU_TEXTFILE_H
#define HWEMU_TEXTFILE_H
#include <stddef.h>

struct diag;

enum { TEXTFILE_MAX = 16 * 1024 * 1024 };

/* malloc'd, NUL-terminated contents, or NULL with a message in d. */
char *textfile_read(const char *path, size_t *len, struct diag *d);

#endif
