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
#include <stdint.h>

/* 0, with *shared set for a setgid root; -1 with what is wrong and the remedy in err. */
int root_prepare(const char *root, bool *shared, char *err, size_t errlen);

/* One engine per root: takes an exclusive flock on <root>/.lock (created with O_NOFOLLOW, a
 * regular file of the engine's user, else refused) and writes this process's pid into it. The
 * lock is the kernel's: it cannot be raced (two engines started at the same instant: one gets
 * it) and it goes with the process (kill -9 included), so a stale .lock file never blocks a
 * start. Returns the descriptor to keep open for the engine's life (closing it releases the
 * lock), or -1 with the holder's pid and the remedy in err. Call it before anything in the
 * root is touched. */
int root_lock(const char *root, char *err, size_t errlen);

/* Removes the static files (segment.h "Files": <hash>.static) of the root whose layout neither
 * one of keep[0..nkeep) nor any segment in the root names any longer (a profile's values
 * changed, a pool removed): readers that still map one keep it. Returns how many it removed. */
int root_prune_static(const char *root, const uint64_t *keep, int nkeep);

#endif
