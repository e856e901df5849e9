/* wrap_file: opening emulated files and I/O on their descriptors, with sysfs semantics
 * (sysfs §1.2-1.4):
 *   open     a file without write permission opened for writing: EACCES (even for root);
 *            O_CREAT of a new name: EACCES; O_CREAT|O_EXCL of an existing one: EEXIST;
 *            a directory for writing: EISDIR; O_DIRECTORY on a file: ENOTDIR; O_TRUNC and
 *            O_APPEND accepted and ignored
 *   read,    emu_read.c's answers, shared with the supervisor: a read at offset 0 computes
 *   lseek    the content, later reads continue in it; SEEK_END is 4096 for an attribute
 *   write    one call is one store of at most 4096 bytes, answered with the kernel's errno;
 *            the offset is ignored; a zero-length write stores nothing
 *   others   copy_file_range/sendfile/splice from an emulated file: EXDEV/EINVAL so callers
 *            fall back to read (as cat does); mmap: ENODEV; ioctl: ENOTTY
 *   devices  /dev/cpu/<n>/msr: emu_msr_read / emu_msr_write at the offset (pwrite's, or the
 *            position), any multiple of 8 bytes; /dev/ipmi0: a real descriptor of ipmi.c's,
 *            its ioctls answered there, read and write EINVAL
 *   buffers  as the kernel copies them (usermem.h): a device read, an MSR write and an
 *            attribute write copy with process_vm_readv/writev, so a bad buffer is EFAULT; an
 *            emulated file's read checks only what access_ok checks and the first page
 * No allocation or lock on these paths, and no system call on an emulated file's read. */
#include "emu.h"
#include "alias.h"
#include "dirpath.h"
#include "emutimer.h"
#include "emu_read.h"
#include "fdtable.h"
#include "ipmi.h"
#include "procstatus.h"
#include "real.h"
#include "cpufault.h"
#include "usermem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static int emulated_open(uint32_t entry, enum emu_root root, int flags)
{
    int err = emu_open_check(entry, flags);
    if (!err && root == EMU_ROOT_DEV)
        err = emu_device_check(entry, (unsigned)geteuid());
    if (err)
        return shim_fail(err);
    if (emu_seg()->entries[entry].cls == SEG_I)
        return ipmi_open(entry, flags); /* a real descriptor: the tools select() on it */
    int fd = fdt_open(entry, root, flags);
    if (fd >= 0 && emu_is_msr(entry))
        cpufault_msr_opened(entry); /* RDTSC on the registers' clock from now on (tsctrap.c) */
    return fd;
}

/* The answer for (dirfd, path): -2 to pass through with pass's dirfd and path, else the
 * descriptor or -1 with errno. */
static int try_open(int dirfd, const char *path, int flags, struct at_pass *pass)
{
    uint32_t entry;
    enum emu_root root = EMU_ROOT_SYS;
    bool follow = !(flags & O_NOFOLLOW);
    int rc = dirpath_locate(dirfd, path, follow, &entry, &root, pass);
    if (rc == EMU_PASS)
        return procstatus_open(dirfd, path, flags); /* the host's, or its own status with the node's lines */
    if (rc == ENOENT && (flags & O_CREAT))
        return shim_fail(EACCES); /* kernfs directories cannot create */
    if (rc)
        return shim_fail(rc);
    if (!follow && emu_seg()->entries[entry].kind == SEG_LINK)
        return shim_fail(ELOOP);
    return emulated_open(entry, root, flags);
}

/* A call that passed through opened fd: the real directories of interest are remembered. */
static int opened(int fd, const struct at_pass *pass)
{
    if (fd >= 0)
        dirpath_opened(fd, pass->dirfd, pass->path);
    return fd;
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN_WRAPPER(name)                                                                             \
    EXPORT int name(const char *path, int flags, ...)                                              \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, flags);                                                                       \
        mode_t mode = mode_arg(flags, ap);                                                         \
        va_end(ap);                                                                                \
        struct at_pass pass;                                                                       \
        int fd = try_open(AT_FDCWD, path, flags, &pass);                                           \
        return fd != -2 ? fd : opened(REAL(name)(path, flags, mode), &pass);                       \
    }
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

#define OPENAT_WRAPPER(name)                                                                           \
    EXPORT int name(int dirfd, const char *path, int flags, ...)                                   \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, flags);                                                                       \
        mode_t mode = mode_arg(flags, ap);                                                         \
        va_end(ap);                                                                                \
        struct at_pass pass;                                                                       \
        int fd = try_open(dirfd, path, flags, &pass);                                              \
        return fd != -2 ? fd : opened(REAL(name)(pass.dirfd, pass.path, flags, mode), &pass);      \
    }
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

EXPORT int __open_2(const char *path, int flags)
{
    struct at_pass pass;
    int fd = try_open(AT_FDCWD, path, flags, &pass);
    return fd != -2 ? fd : opened(REAL(__open_2)(path, flags), &pass);
}

EXPORT int __open64_2(const char *path, int flags)
{
    struct at_pass pass;
    int fd = try_open(AT_FDCWD, path, flags, &pass);
    return fd != -2 ? fd : opened(REAL(__open64_2)(path, flags), &pass);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
    struct at_pass pass;
    int fd = try_open(dirfd, path, flags, &pass);
    return fd != -2 ? fd : opened(REAL(__openat_2)(pass.dirfd, pass.path, flags), &pass);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
    struct at_pass pass;
    int fd = try_open(dirfd, path, flags, &pass);
    return fd != -2 ? fd : opened(REAL(__openat64_2)(pass.dirfd, pass.path, flags), &pass);
}

EXPORT int creat(const char *path, mode_t mode)
{
    struct at_pass pass;
    int fd = try_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, &pass);
    return fd != -2 ? fd : opened(REAL(creat)(path, mode), &pass);
}

EXPORT int creat64(const char *path, mode_t mode)
{
    struct at_pass pass;
    int fd = try_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, &pass);
    return fd != -2 ? fd : opened(REAL(creat64)(path, mode), &pass);
}

/* --- reading -------------------------------------------------------------------------------- */

/* An MSR device's read: the register repeated over the count (emu_msr_read), copied as
 * msr_read's copy_to_user copies it: whole registers up to the first that cannot be written,
 * EFAULT when none could. */
static ssize_t msr_pread(struct emu_file *f, void *buf, size_t n, int64_t off)
{
    unsigned char reg[8];
    ssize_t k = emu_msr_read(f->entry, f->flags, off, n, reg);
    if (k <= 0)
        return k ? shim_fail((int)-k) : 0;
    size_t done = um_fill8(buf, (size_t)k, reg) / 8 * 8;
    return done ? (ssize_t)done : shim_fail(EFAULT);
}

/* read and pread on a description: emu_read.c's answer, copied to buf. The hot path (every
 * energy_uj poll): no system call, so only the kernel's access_ok and the first page are
 * checked (usermem.h); sysfs gives EFAULT when its copy fails, as here for those. */
static ssize_t file_pread(struct emu_file *f, void *buf, size_t n, int64_t off)
{
    if (emu_is_msr(f->entry))
        return msr_pread(f, buf, n, off);
    const char *bytes;
    ssize_t k = emu_read_at(&f->show, f->entry, f->flags, off, n, &bytes);
    if (k < 0)
        return shim_fail((int)-k);
    if (!um_cheap_ok(buf, n, (size_t)k))
        return shim_fail(EFAULT);
    memcpy(buf, bytes, (size_t)k);
    return k;
}

static ssize_t file_read(struct emu_file *f, void *buf, size_t n)
{
    ssize_t k = file_pread(f, buf, n, atomic_load(&f->pos));
    if (k > 0 && !emu_is_msr(f->entry))
        atomic_fetch_add(&f->pos, k);
    return k;
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    struct emu_file *f = fdt_get(fd);
    int e;
    if (!f && (e = ipmi_rw_error(fd, false)))
        return shim_fail(e);
    if (!f && emutimer_is_fd(fd)) /* a timerfd in emulated time (one load while there is none) */
        return emutimer_fd_read(fd, buf, n);
    return f ? file_read(f, buf, n) : REAL(read)(fd, buf, n);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    struct emu_file *f = fdt_get(fd);
    if (f && n > buflen)
        __builtin_trap(); /* what the fortified check does on overflow */
    int e;
    if (!f && (e = ipmi_rw_error(fd, false)))
        return shim_fail(e);
    if (!f && emutimer_is_fd(fd))
        return emutimer_fd_read(fd, buf, n);
    return f ? file_read(f, buf, n) : REAL(__read_chk)(fd, buf, n, buflen);
}

EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    struct emu_file *f = fdt_get(fd);
    int e;
    if (!f && (e = ipmi_rw_error(fd, false)))
        return shim_fail(off < 0 ? EINVAL : e);
    return f ? file_pread(f, buf, n, off) : REAL(pread)(fd, buf, n, off);
}

EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
    struct emu_file *f = fdt_get(fd);
    int e;
    if (!f && (e = ipmi_rw_error(fd, false)))
        return shim_fail(off < 0 ? EINVAL : e);
    return f ? file_pread(f, buf, n, off) : REAL(pread64)(fd, buf, n, off);
}

EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    struct emu_file *f = fdt_get(fd);
    if (f && n > buflen)
        __builtin_trap();
    int e;
    if (!f && (e = ipmi_rw_error(fd, false)))
        return shim_fail(off < 0 ? EINVAL : e);
    return f ? file_pread(f, buf, n, off) : REAL(__pread_chk)(fd, buf, n, off, buflen);
}

EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
    struct emu_file *f = fdt_get(fd);
    if (f && n > buflen)
        __builtin_trap();
    int e;
    if (!f && (e = ipmi_rw_error(fd, false)))
        return shim_fail(off < 0 ? EINVAL : e);
    return f ? file_pread(f, buf, n, off) : REAL(__pread64_chk)(fd, buf, n, off, buflen);
}

/* Each vector in turn, as do_loop_readv_writev calls a driver's read per vector: an MSR
 * device reads the same register into every one (msr_read never moves the position). */
static ssize_t emu_readv(struct emu_file *f, const struct iovec *iov, int cnt, int64_t off, bool positional)
{
    ssize_t total = 0;
    bool msr = emu_is_msr(f->entry);
    for (int i = 0; i < cnt; i++) {
        ssize_t k = positional ? file_pread(f, iov[i].iov_base, iov[i].iov_len, msr ? off : off + total)
                               : file_read(f, iov[i].iov_base, iov[i].iov_len);
        if (k < 0)
            return total ? total : k;
        total += k;
        if ((size_t)k < iov[i].iov_len)
            break;
    }
    return total;
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    struct emu_file *f = fdt_get(fd);
    int e;
    if (!f && (e = ipmi_rw_error(fd, false)))
        return shim_fail(e);
    return f ? emu_readv(f, iov, cnt, 0, false) : REAL(readv)(fd, iov, cnt);
}

EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    struct emu_file *f = fdt_get(fd);
    int e;
    if (!f && (e = ipmi_rw_error(fd, false)))
        return shim_fail(off < 0 ? EINVAL : e);
    return f ? emu_readv(f, iov, cnt, off, true) : REAL(preadv)(fd, iov, cnt, off);
}

EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    struct emu_file *f = fdt_get(fd);
    int e;
    if (!f && (e = ipmi_rw_error(fd, false)))
        return shim_fail(off < 0 ? EINVAL : e);
    return f ? emu_readv(f, iov, cnt, off, true) : REAL(preadv64)(fd, iov, cnt, off);
}

/* --- writing -------------------------------------------------------------------------------- */

/* off: a pwrite's offset, or -1 for the file position (only MSR devices look at it). */
static ssize_t emu_write_fd(struct emu_file *f, const void *buf, size_t n, int64_t off)
{
    int acc = f->flags & O_ACCMODE;
    if (acc == O_RDONLY)
        return shim_fail(EBADF);
    if (emu_is_msr(f->entry)) {
        if (off == -2)
            return shim_fail(EINVAL); /* a negative pwrite offset */
        if (n % 8)
            return shim_fail(EINVAL);
        /* msr_write copies one register at a time (copy_from_user: EFAULT at the first it
         * cannot read, after the ones written) */
        size_t done = 0;
        for (; done < n; done += 8) {
            unsigned char reg[8];
            if (um_copy_in(reg, (const char *)buf + done, 8))
                return done ? (ssize_t)done : shim_fail(EFAULT);
            ssize_t k = emu_msr_write(f->entry, off >= 0 ? off : atomic_load(&f->pos), reg, 8, getpid());
            if (k < 0)
                return done ? (ssize_t)done : shim_fail((int)-k);
        }
        return (ssize_t)n;
    }
    if (n == 0)
        return 0; /* kernfs: a zero-length write never reaches the store */
    size_t k = n > SEG_READ_MAX ? SEG_READ_MAX : n;
    char page[SEG_READ_MAX];
    if (um_copy_in(page, buf, k)) /* kernfs_fop_write_iter's copy_from_iter */
        return shim_fail(EFAULT);
    int err = emu_write(f->entry, page, k, getpid());
    if (err)
        return shim_fail(err);
    return (ssize_t)k;
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    struct emu_file *f = fdt_get(fd);
    int e;
    if (!f && (e = ipmi_rw_error(fd, true)))
        return shim_fail(e);
    return f ? emu_write_fd(f, buf, n, -1) : REAL(write)(fd, buf, n);
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    struct emu_file *f = fdt_get(fd);
    int e;
    if (!f && (e = ipmi_rw_error(fd, true)))
        return shim_fail(off < 0 ? EINVAL : e);
    return f ? emu_write_fd(f, buf, n, off < 0 ? -2 : off) : REAL(pwrite)(fd, buf, n, off);
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    struct emu_file *f = fdt_get(fd);
    int e;
    if (!f && (e = ipmi_rw_error(fd, true)))
        return shim_fail(off < 0 ? EINVAL : e);
    return f ? emu_write_fd(f, buf, n, off < 0 ? -2 : off) : REAL(pwrite64)(fd, buf, n, off);
}

/* A vector write is gathered into one store, as the kernel copies it into one page. */
static ssize_t emu_writev(struct emu_file *f, const struct iovec *iov, int cnt)
{
    char page[SEG_READ_MAX];
    size_t used = 0, total = 0;
    for (int i = 0; i < cnt; i++) {
        total += iov[i].iov_len;
        size_t k = iov[i].iov_len < sizeof page - used ? iov[i].iov_len : sizeof page - used;
        if (um_copy_in(page + used, iov[i].iov_base, k))
            return shim_fail(EFAULT);
        used += k;
    }
    ssize_t rc = emu_write_fd(f, page, used, -1);
    return rc < 0 ? rc : (ssize_t)(total < (size_t)rc ? total : (size_t)rc);
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    struct emu_file *f = fdt_get(fd);
    int e;
    if (!f && (e = ipmi_rw_error(fd, true)))
        return shim_fail(e);
    return f ? emu_writev(f, iov, cnt) : REAL(writev)(fd, iov, cnt);
}

EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    struct emu_file *f = fdt_get(fd);
    int e;
    if (!f && (e = ipmi_rw_error(fd, true)))
        return shim_fail(off < 0 ? EINVAL : e);
    return f ? emu_writev(f, iov, cnt) : REAL(pwritev)(fd, iov, cnt, off);
}

EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    struct emu_file *f = fdt_get(fd);
    int e;
    if (!f && (e = ipmi_rw_error(fd, true)))
        return shim_fail(off < 0 ? EINVAL : e);
    return f ? emu_writev(f, iov, cnt) : REAL(pwritev64)(fd, iov, cnt, off);
}

/* --- position, lifetime ---------------------------------------------------------------------- */

static off64_t file_lseek(struct emu_file *f, off64_t off, int whence)
{
    int64_t pos = emu_read_seek(f->entry, f->root, f->flags, atomic_load(&f->pos), off, whence);
    if (pos < 0)
        return shim_fail((int)-pos);
    atomic_store(&f->pos, pos);
    return pos;
}

EXPORT off_t lseek(int fd, off_t off, int whence)
{
    struct emu_file *f = fdt_get(fd);
    return f ? (off_t)file_lseek(f, off, whence) : REAL(lseek)(fd, off, whence);
}

EXPORT off64_t lseek64(int fd, off64_t off, int whence)
{
    struct emu_file *f = fdt_get(fd);
    return f ? file_lseek(f, off, whence) : REAL(lseek64)(fd, off, whence);
}

EXPORT int close(int fd)
{
    if (ipmi_is(fd))
        ipmi_close(fd);
    if (fd >= EMU_FD_BASE)
        return fdt_close(fd);
    if (fdt_get(fd)) { /* a low number aliasing an emulated file: store what it holds */
        alias_flush(fd);
        fdt_close(fd);
    }
    dirpath_closed(fd);
    emutimer_fd_closed(fd);
    return REAL(close)(fd);
}

EXPORT int dup(int fd)
{
    if (fdt_get(fd))
        return fdt_dup(fd, EMU_FD_BASE, -1, false);
    int nfd = REAL(dup)(fd);
    if (nfd >= 0)
        dirpath_dup(fd, nfd);
    return nfd;
}

EXPORT int dup2(int fd, int newfd)
{
    if (!fdt_get(fd)) {
        if (fdt_get(newfd)) { /* a real file replaces an emulated alias */
            alias_flush(newfd);
            fdt_close(newfd);
        }
        if (newfd >= EMU_FD_BASE)
            return shim_fail(EBADF);
        int rc = REAL(dup2)(fd, newfd);
        if (rc >= 0 && fd != newfd) {
            emutimer_fd_closed(newfd);
            dirpath_dup(fd, newfd);
        }
        return rc;
    }
    if (fd == newfd)
        return newfd;
    if (newfd >= EMU_FD_BASE)
        return fdt_dup(fd, 0, newfd, false);
    return alias_make(fd, newfd, 0);
}

EXPORT int dup3(int fd, int newfd, int flags)
{
    if (!fdt_get(fd)) {
        if (fdt_get(newfd)) {
            alias_flush(newfd);
            fdt_close(newfd);
        }
        if (newfd >= EMU_FD_BASE)
            return shim_fail(EBADF);
        int rc = REAL(dup3)(fd, newfd, flags);
        if (rc >= 0) {
            emutimer_fd_closed(newfd);
            dirpath_dup(fd, newfd);
        }
        return rc;
    }
    if (fd == newfd)
        return shim_fail(EINVAL);
    if (newfd >= EMU_FD_BASE)
        return fdt_dup(fd, 0, newfd, flags & O_CLOEXEC);
    return alias_make(fd, newfd, flags);
}

static int emu_fcntl(int fd, struct emu_file *f, int cmd, long arg)
{
    switch (cmd) {
    case F_DUPFD:
    case F_DUPFD_CLOEXEC:
        return fdt_dup(fd, arg > EMU_FD_BASE ? (int)arg : EMU_FD_BASE, -1, cmd == F_DUPFD_CLOEXEC);
    case F_GETFD:
        return 0;
    case F_SETFD:
        return 0;
    case F_GETFL:
        return f->flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY);
    case F_SETFL:
        f->flags = (f->flags & ~(O_APPEND | O_NONBLOCK)) | ((int)arg & (O_APPEND | O_NONBLOCK));
        return 0;
    default:
        return shim_fail(EINVAL);
    }
}

#define FCNTL_WRAPPER(name)                                                                            \
    EXPORT int name(int fd, int cmd, ...)                                                          \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, cmd);                                                                         \
        long arg = va_arg(ap, long);                                                               \
        va_end(ap);                                                                                \
        struct emu_file *f = fdt_get(fd);                                                          \
        if (f)                                                                                     \
            return emu_fcntl(fd, f, cmd, arg);                                                     \
        int rc = REAL(name)(fd, cmd, arg);                                                         \
        if (rc >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))                                 \
            dirpath_dup(fd, rc);                                                                   \
        return rc;                                                                                 \
    }
FCNTL_WRAPPER(fcntl)
FCNTL_WRAPPER(fcntl64)

/* --- what sysfs refuses ---------------------------------------------------------------------- */

EXPORT ssize_t copy_file_range(int in, off64_t *oin, int out, off64_t *oout, size_t n, unsigned flags)
{
    if (fdt_get(in) || fdt_get(out))
        return shim_fail(EXDEV);
    return REAL(copy_file_range)(in, oin, out, oout, n, flags);
}

EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
    if (fdt_get(in) || fdt_get(out))
        return shim_fail(EINVAL);
    return REAL(sendfile)(out, in, off, n);
}

EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t n)
{
    if (fdt_get(in) || fdt_get(out))
        return shim_fail(EINVAL);
    return REAL(sendfile64)(out, in, off, n);
}

EXPORT ssize_t splice(int in, off64_t *oin, int out, off64_t *oout, size_t n, unsigned flags)
{
    if (fdt_get(in) || fdt_get(out))
        return shim_fail(EINVAL);
    return REAL(splice)(in, oin, out, oout, n, flags);
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
    va_list ap;
    va_start(ap, req);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (fdt_get(fd))
        return shim_fail(ENOTTY);
    if (ipmi_is(fd))
        return ipmi_ioctl(fd, req, arg);
    return REAL(ioctl)(fd, req, arg);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!(flags & MAP_ANONYMOUS) && fdt_get(fd)) {
        shim_fail(ENODEV);
        return MAP_FAILED;
    }
    return REAL(mmap)(addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    if (!(flags & MAP_ANONYMOUS) && fdt_get(fd)) {
        shim_fail(ENODEV);
        return MAP_FAILED;
    }
    return REAL(mmap64)(addr, len, prot, flags, fd, off);
}
