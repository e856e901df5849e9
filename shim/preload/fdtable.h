/* fdtable: the open emulated files of this process.
 *
 * An emulated open gets a descriptor number the kernel never hands out (EMU_FD_BASE and up,
 * above the largest fs.nr_open), so opening, reading and closing an emulated file makes no
 * system call. dup2/dup3/F_DUPFD onto a low number registers that number too (the kernel's
 * number is held by a /dev/null placeholder so nothing else gets it). Each number points to a
 * refcounted open file description (entry, access mode, offset, the content shown since the
 * last read at offset 0), shared by dups and copied by fork with the process's memory.
 * Lock-free: numbers and descriptions are claimed with compare-and-swap in mmap'ed arrays;
 * a number leaves the table before its description is released. */
#ifndef HWEMU_SHIM_FDTABLE_H
#define HWEMU_SHIM_FDTABLE_H
#include "emu.h"
#include "emu_read.h"

#include <stdatomic.h>
#include <stdint.h>

#define EMU_FD_BASE (1 << 30)
#define EMU_FD_MAX 65536     /* emulated files open at once */
#define EMU_LOW_FDS 4096     /* low numbers that can alias an emulated description */

struct emu_file {
    _Atomic int refs;
    uint32_t entry;
    enum emu_root root;
    int flags;               /* open flags (O_ACCMODE, O_APPEND, ...) */
    _Atomic int64_t pos;     /* for directories the listing's position (emu_dir.h) */
    struct emu_show show;    /* the content of the last read at offset 0 */
};

/* A new description and its number; -1 with errno EMFILE when the table is full. */
int fdt_open(uint32_t entry, enum emu_root root, int flags);
/* The description of fd, or NULL when fd is not emulated. Async-signal-safe, no syscall. */
struct emu_file *fdt_get(int fd);
/* Drops fd: 0, or -1 with EBADF when fd is not emulated. */
int fdt_close(int fd);
/* A second number for fd's description: at or above minfd (F_DUPFD), or exactly newfd
 * (dup2; newfd may be a low number, see above). Returns the number or -1 with errno. */
int fdt_dup(int fd, int minfd, int newfd, bool cloexec);
bool fdt_is_emulated(int fd);

#endif
