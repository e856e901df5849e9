/* emu_dir: the listing of an emulated directory, for both front-ends (the shim's directory
 * calls in wrap_dir.c: readdir and the DIR* calls, scandir, glob, getdents64; the seccomp
 * supervisor's getdents64 in sv_answer.c), as sysfs lists it.
 *
 * A listing is "." and "..", then the node's children of the directory in byte order (the
 * segment's entries are sorted by path, so the children of D are the entries inside the
 * "<D>/" range whose parent is D; names the node does not have, SEG_F_ABSENT, are not listed;
 * a slot directory, SEG_F_SLOT, is listed under its current name and not at all while absent:
 * segment.h "Slots"),
 * with d_type DT_DIR/DT_REG/DT_LNK (DT_CHR for a device) and d_ino as emu_stat gives it (".." of the node's top
 * directory is the host's "/"). A directory reached through /sys that the node does not own
 * (neither it nor an ancestor carries SEG_F_OWNED: /sys, /sys/class, /sys/devices/system/cpu,
 * ...), /proc itself (the node's files and jobs, then the host's processes) and /dev (the node's
 * devices, then the host's minus the device classes the node alone answers for, emu_hide.h),
 * then goes on with the host's entries of the same path, as the host gives them, minus
 * "." and ".." and the names the node has (a slot's by its current name); owned directories and everything under /host-sys
 * list the node's children only.
 *
 * Positions. One number says where a listing stands, so telldir/seekdir, d_off and the
 * descriptor offset that getdents64 uses are the same stable cookie:
 *     0               "." comes next
 *     1               ".." comes next
 *     2 + i           the node's entries are scanned from entry index i on
 *     host_base + k   the host's directory has given k entries (host_base = n_entries + 3)
 * The host's part is counted in raw entries of its directory, so a position is reached again by
 * rewinding the host's directory and skipping k entries. A position no listing gives is the end.
 *
 * The host's entries are read with raw system calls (openat, getdents64, lseek, close) into the
 * listing's own buffer, never with libc's directory functions: the shim wraps those, and a
 * libc DIR allocates and holds a lock a fork child could inherit held. What it must never do:
 * allocate, lock, touch errno, or make a system call for anything but the host's part of a
 * listing and the inode of the host's "/". */
#ifndef HWEMU_SHIM_EMU_DIR_H
#define HWEMU_SHIM_EMU_DIR_H
#include "emu.h"

#include <sys/types.h>

/* One entry of a listing. */
struct emu_dirent {
    uint64_t ino;
    int64_t off;                /* the position after it: its d_off */
    unsigned char type;         /* DT_* */
    const char *name;           /* NUL-terminated; valid until the next call on the listing */
    size_t namelen;
};

/* Where a listing stands. */
struct emu_listing {
    uint32_t dir;               /* the directory's entry */
    enum emu_root root;
    uint32_t lo, hi;            /* the entries whose path starts with "<dir>/" */
    uint32_t host_base;
    size_t dlen;                /* the length of the directory's path in the segment */
    bool overlay;               /* the host's entries follow the node's */
    uint32_t next;              /* the position */
    /* the host's directory, opened when its first entry is wanted; -1 when it has none */
    bool host_tried;
    int host_fd;
    uint32_t host_at;           /* raw entries taken from it */
    uint32_t buf_at, buf_len;   /* the records of buf not taken yet */
    char buf[4096] __attribute__((aligned(8)));
    char slot_name[SEG_SLOT_NAME_MAX + 1]; /* the current name of a slot directory just listed */
};

/* A listing of the directory entry dir, reached through root, at position 0. */
void emu_dir_open(struct emu_listing *L, uint32_t dir, enum emu_root root);
/* Moves to a position (telldir, d_off, a descriptor's offset); one no listing gives is the end. */
void emu_dir_seek(struct emu_listing *L, int64_t pos);
/* The next entry into out; false at the end. */
bool emu_dir_next(struct emu_listing *L, struct emu_dirent *out);
/* Closes the host's directory, if it was opened. */
void emu_dir_close(struct emu_listing *L);

/* getdents64 on a description of the entry dir opened with flags, at position *pos: fills buf
 * with up to n bytes of records in the kernel's struct linux_dirent64 layout (which glibc's
 * struct dirent64 shares) and moves *pos past them. Returns the bytes filled (0 at the end), or
 * -errno: EBADF (O_PATH), ENOTDIR, EINVAL (n cannot hold the next record). */
ssize_t emu_dir_getdents64(uint32_t dir, enum emu_root root, int flags, int64_t *pos, void *buf, size_t n);

#endif
