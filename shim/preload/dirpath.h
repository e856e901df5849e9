/* dirpath: where a (dirfd, path) pair of an *at call lands, for descriptors of both kinds.
 *
 * Owns: the paths of the host's (real) directory descriptors that can hold the node's files,
 * and the joining of a relative path to a descriptor.
 *  - A real descriptor the shim opened (open/openat/opendir passing through) for "/" or a path
 *    under /sys, /host-sys, /proc or /dev is remembered with its absolute path, so
 *    openat(fd, "cpuinfo") on a descriptor of the host's /proc is the node's /proc/cpuinfo
 *    (lscpu opens /proc and /sys/devices/system/cpu and then names files relative to them; so do
 *    systemd's libudev and chase(), walking from "/"). close, dup, dup2, dup3, F_DUPFD and
 *    closedir keep the table right; a descriptor the shim never saw opened is the host's.
 *  - An emulated directory descriptor joins the path to its directory; a name the node does not
 *    have there (a directory the node shares with the host: /sys/class, /sys/bus/pci/devices'
 *    parent, ...) is the host's path of the same name, which the call then takes with AT_FDCWD
 *    (the kernel never saw the emulated number).
 * What it must never do: allocate, lock, or make a system call (the table is static memory,
 * claimed with compare-and-swap). */
#ifndef HWEMU_SHIM_DIRPATH_H
#define HWEMU_SHIM_DIRPATH_H
#include "emu.h"

#include <limits.h>

/* Where an *at call goes when it is not the node's: `dirfd` and `path` to hand to libc, which
 * are the caller's own or AT_FDCWD with the host's absolute path in buf. */
struct at_pass {
    int dirfd;
    const char *path;
    char buf[PATH_MAX];
};

/* Where (dirfd, path) lands: 0 with the entry and root, an errno, or EMU_PASS with pass filled.
 * follow: resolve a final link. A NULL path passes. */
int dirpath_locate(int dirfd, const char *path, bool follow, uint32_t *entry, enum emu_root *root,
                   struct at_pass *pass);

/* A real descriptor fd was opened for (dirfd, path) by a call that passed through: remember its
 * path when it can hold the node's files, else forget whatever fd held before. */
void dirpath_opened(int fd, int dirfd, const char *path);
/* fd is closed (or replaced by dup2). */
void dirpath_closed(int fd);
/* newfd is a duplicate of fd. */
void dirpath_dup(int fd, int newfd);

#endif
