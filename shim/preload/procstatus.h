/* procstatus: the shim's front end of emu_status.h. An open of the process's own
 * /proc/<pid>/status (read-only) reads the host's file once and gives the caller a memfd
 * holding it with the node's Cpus_allowed, Cpus_allowed_list, Mems_allowed and
 * Mems_allowed_list lines: a real descriptor, so read, lseek, fstat, mmap, dup and fork behave
 * as on any file; the text is the one of the moment of the open (procfs makes it at the first
 * read), and fstat shows a regular memfd (procfs shows size 0). Any failure on the way (the
 * host's file cannot be read, no memfd) passes the open to libc, which gives the host's file.
 * What it must never do: answer for another process's status, or for a process that emulates
 * no node. */
#ifndef HWEMU_SHIM_PROCSTATUS_H
#define HWEMU_SHIM_PROCSTATUS_H
#include <stdbool.h>

/* Is (dirfd, path) the process's own status file, to be answered by procstatus_open? */
bool procstatus_is(int dirfd, const char *path);
/* The memfd for it (flags: the open's; O_CLOEXEC is kept), or -2 when libc must answer. */
int procstatus_open(int dirfd, const char *path, int flags);

#endif
