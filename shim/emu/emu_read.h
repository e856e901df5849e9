/* emu_read: what read, pread and lseek answer on an open emulated file, for both front-ends
 * (the shim's read family and lseek in wrap_file.c, the seccomp supervisor's in sv_answer.c),
 * as sysfs and procfs answer them (sysfs §1.3):
 *   read    a read at offset 0, or the first read of the description, computes the content
 *           (a view into one of the process's static view buffers, the description keeps it
 *           until it is closed: 32 of SEG_VIEW_SMALL_TEXT, and 4 of SEG_VIEW_MAX_TEXT for a
 *           longer view, a many-CPU /proc/cpuinfo; with every buffer of the size taken a read
 *           fails ENOMEM, as seq_file does when it cannot allocate)
 *           (show, at the time of the call) and keeps it in the description; reads at other
 *           offsets continue in what was kept, then EOF; past its end EPERM (the kernel's
 *           quirk); a negative offset EINVAL; a directory EISDIR; a description opened
 *           O_WRONLY or O_PATH EBADF
 *   lseek   SEEK_SET, SEEK_CUR from the position, SEEK_END from 4096 for an attribute (the
 *           page sysfs reports as its size) and 0 for /proc/cpuinfo and directories; a result
 *           below 0 or past INT64_MAX, or another whence, EINVAL; O_PATH EBADF
 *   devices an MSR device (class M) answers as arch/x86/kernel/msr.c: the offset is the MSR
 *           address, 8 bytes a register, EINVAL for a count not a multiple of 8, EIO for a
 *           register the node lacks, and a read never moves the position (emu_is_msr); SEEK_END
 *           EINVAL. The IPMI device (class I) has no read (EINVAL) and lseek leaves it where it is.
 * Each front-end keeps its descriptions (offset, flags, the content kept) and copies the bytes
 * to the caller; this file decides what they are. What it must never do: allocate, lock, make a
 * system call (the clock is the vDSO's) or touch errno. */
#ifndef HWEMU_SHIM_EMU_READ_H
#define HWEMU_SHIM_EMU_READ_H
#include "emu.h"

#include <sys/types.h>

/* The content of a description's last show: static text in the segment, text, or for a view
 * (seg_view.h: /proc/stat, uptime, meminfo) one of the process's view buffers. */
struct emu_show {
    const char *content;        /* NULL until the first read */
    size_t len;
    int buf;                    /* view buffer held (index + 1), 0 none */
    char text[SEG_TEXT_MAX];
};

/* Gives back a description's view buffer (its last close). */
void emu_show_release(struct emu_show *sh);

/* A read of at most n bytes at offset off on a description of entry opened with flags: the
 * number of bytes, which *bytes points to, or -errno. */
ssize_t emu_read_at(struct emu_show *sh, uint32_t entry, int flags, int64_t off, size_t n, const char **bytes);
/* lseek(off, whence) on a description of entry at position pos: the new position, or -errno. */
int64_t emu_read_seek(uint32_t entry, enum emu_root root, int flags, int64_t pos, int64_t off, int whence);

#endif
