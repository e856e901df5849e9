/* arena: bump allocator for parse trees and everything hung off them.
 * Owns: blocks of memory freed all at once by arena_free(). Never frees single objects.
 * Allocation failure aborts with a message: the CLI and engine cannot continue without memory. */
#ifndef HWEMU_ARENA_H
#define HWEMU_ARENA_H
#include <stddef.h>

struct arena_block;
struct arena {
    struct arena_block *head;
};

void *arena_alloc(struct arena *a, size_t size);           /* zeroed, 16-byte aligned */
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void arena_free(struct arena *a);

#endif
