/* wrap_stdio: FILE streams on emulated files.
 *
 * glibc's fopen opens, reads and writes through internal calls that no wrapper sees, so a
 * FILE on an emulated path must be built here: a cookie stream (stream.h) on the emulated
 * descriptor, whose reads, writes (one store each, refused with the kernel's errno from
 * fwrite, fflush or fclose), seeks and close behave exactly as the shim's calls on the
 * descriptor do, and whose fileno() is that descriptor.
 *
 * Opening goes through the shim's exported open with the flags fopen would use ("w" is
 * O_WRONLY|O_CREAT|O_TRUNC, "a" O_WRONLY|O_CREAT|O_APPEND, "+" O_RDWR, "x" O_EXCL, "e"
 * O_CLOEXEC), so every error is the one open(2) gives (EACCES, EISDIR, ENOENT, ...).
 *
 * freopen cannot turn a stream into another kind of stream in place: when the new path or
 * the old stream is emulated, the old stream is closed and a new FILE is returned, a
 * different pointer (stdin/stdout/stderr are pointed at it when they were the old stream).
 * Paths that are not the node's pass to libc untouched. What it must never do: call libc's
 * stdio on an emulated descriptor, or touch errno on a call that passes through. */
#include "emu.h"
#include "fdtable.h"
#include "procstatus.h"
#include "real.h"
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* open(2) flags of an fopen mode: 0, or EINVAL. Parsing stops at ",ccs=", as glibc's does. */
static int mode_flags(const char *mode, int *flags)
{
    int acc, extra;
    switch (mode[0]) {
    case 'r': acc = O_RDONLY, extra = 0; break;
    case 'w': acc = O_WRONLY, extra = O_CREAT | O_TRUNC; break;
    case 'a': acc = O_WRONLY, extra = O_CREAT | O_APPEND; break;
    default: return EINVAL;
    }
    for (const char *p = mode + 1; *p && *p != ','; p++) {
        if (*p == '+')
            acc = O_RDWR;
        else if (*p == 'x')
            extra |= O_EXCL;
        else if (*p == 'e')
            extra |= O_CLOEXEC;
    }
    *flags = acc | extra;
    return 0;
}

static FILE *emulated_fopen(const char *path, const char *mode)
{
    int flags;
    if (mode_flags(mode, &flags)) {
        errno = EINVAL;
        return NULL;
    }
    /* the shim's open: the node's answer for the path, with open(2)'s errors */
    int fd = open(path, flags, 0666);
    if (fd < 0)
        return NULL;
    FILE *fp = fdt_get(fd) ? stream_open(fd, mode) : REAL(fdopen)(fd, mode);
    if (!fp) {
        int saved = errno;
        close(fd);
        errno = saved;
    }
    return fp;
}

static bool is_emulated(const char *path)
{
    uint32_t entry;
    enum emu_root root;
    return emu_path(path, true, &entry, &root) != EMU_PASS || procstatus_is(AT_FDCWD, path);
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
    return is_emulated(path) ? emulated_fopen(path, mode) : REAL(fopen)(path, mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
    return is_emulated(path) ? emulated_fopen(path, mode) : REAL(fopen64)(path, mode);
}

/* A stream is ours when its descriptor is emulated: libc never gets an emulated number,
 * since fdopen on one comes here. */
static struct emu_file *stream_file(FILE *fp)
{
    return fp && fp->_fileno >= 0 ? fdt_get(fp->_fileno) : NULL;
}

/* freopen by closing and opening: the stream returned is a new one (see the top). */
static FILE *reopen(const char *path, const char *mode, FILE *old, bool emulated,
                    FILE *(*next_fopen)(const char *, const char *))
{
    FILE **std = old == stdin ? &stdin : old == stdout ? &stdout : old == stderr ? &stderr : NULL;
    int saved = errno;
    fclose(old); /* freopen ignores the old stream's close errors */
    errno = saved;
    FILE *fp = emulated ? emulated_fopen(path, mode) : next_fopen(path, mode);
    if (fp && std)
        *std = fp;
    return fp;
}

static FILE *do_freopen(const char *path, const char *mode, FILE *stream,
                        FILE *(*next_freopen)(const char *, const char *, FILE *),
                        FILE *(*next_fopen)(const char *, const char *))
{
    struct emu_file *f = stream_file(stream);
    if (path) {
        bool emulated = is_emulated(path);
        if (!emulated && !f)
            return next_freopen(path, mode, stream);
        return reopen(path, mode, stream, emulated, next_fopen);
    }
    if (!f)
        return next_freopen(path, mode, stream);
    /* freopen(NULL, mode): the same emulated file with another mode */
    char again[PATH_MAX];
    if (emu_agent_path(f->entry, f->root, again, sizeof again) < 0) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return reopen(again, mode, stream, true, next_fopen);
}

EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
    return do_freopen(path, mode, stream, REAL(freopen), REAL(fopen));
}

EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
    return do_freopen(path, mode, stream, REAL(freopen64), REAL(fopen64));
}

/* fdopen on an emulated descriptor: the stream owns the descriptor itself, so fclose closes
 * it, as POSIX has fdopen+fclose do (a dup would outlive the stream and leak). */
EXPORT FILE *fdopen(int fd, const char *mode)
{
    struct emu_file *f = fdt_get(fd);
    if (!f)
        return REAL(fdopen)(fd, mode);
    int flags;
    if (mode_flags(mode, &flags)) {
        errno = EINVAL;
        return NULL;
    }
    int have = f->flags & O_ACCMODE, want = flags & O_ACCMODE;
    if ((want != O_WRONLY && have == O_WRONLY) || (want != O_RDONLY && have == O_RDONLY)) {
        errno = EINVAL;
        return NULL;
    }
    return stream_open(fd, mode);
}
