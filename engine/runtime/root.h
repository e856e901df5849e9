/* root: prepares the engine's root directory (segments, events.jsonl) and refuses one that
 * another user could use to redirect the engine's writes (docs/security.md).
 *
 * Accepted: a directory (not a symbolic link) owned by the engine's user, writable by nobody
 * else (no group or other write bit), under ancestors that are each owned by root or by that
 * user and that others cannot write into unless sticky (/tmp, /dev/shm). A missing root is
 * created (mode 0755, ancestors too). A setgid root (chmod 2750, a group of agents) is the
 * documented way to let agents of other users in: its segments are made group read-write. */
#ifndef HWEMU_ROOT_H
#define HWEMU_ROOT_H
#include <stdbool.h>
#include <stddef.h>

/* 0, with *shared set for a setgid root; -1 with what is wrong and the remedy in err. */
int root_prepare(const char *root, bool *shared, char *err, size_t errlen);

#endif
