/* procstatus: the shim's /proc/self/status; see procstatus.h. */
#include "procstatus.h"

#include "emu.h"
#include "emu_status.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The host path of the status file (dirfd, path) names, into host; false when it is not the
 * process's own. Only absolute and working-directory-relative names are recognised. */
static bool own_status(int dirfd, const char *path, char *host, size_t cap)
{
    if (!path || !emu_seg() || emu_ncpus() <= 0)
        return false;
    size_t n = strlen(path);
    if (n < 6 || memcmp(path + n - 6, "status", 6))
        return false; /* the cheap test every open takes */
    char buf[PATH_MAX];
    const char *abs = path;
    if (path[0] != '/' && (dirfd != AT_FDCWD || !(abs = emu_absolute(path, buf, sizeof buf))))
        return false;
    return emu_status_path(abs, getpid(), gettid(), host, cap);
}

bool procstatus_is(int dirfd, const char *path)
{
    char host[64];
    return own_status(dirfd, path, host, sizeof host);
}

int procstatus_open(int dirfd, const char *path, int flags)
{
    char host[64];
    if ((flags & (O_ACCMODE | O_PATH | O_DIRECTORY | O_CREAT)) != O_RDONLY || !own_status(dirfd, path, host, sizeof host))
        return -2;
    int saved = errno;
    char *text = malloc(2 * EMU_STATUS_MAX), *out = text + EMU_STATUS_MAX;
    int in = text ? REAL(open)(host, O_RDONLY | O_CLOEXEC) : -1;
    if (in < 0) {
        free(text);
        errno = saved;
        return -2;
    }
    size_t len = 0;
    ssize_t got;
    while (len < EMU_STATUS_MAX && (got = REAL(read)(in, text + len, EMU_STATUS_MAX - len)) > 0)
        len += (size_t)got;
    REAL(close)(in);
    size_t m = emu_status_filter(text, len, emu_ncpus(), emu_nnodes(), out, EMU_STATUS_MAX);
    int fd = m ? memfd_create("status", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0) : -1;
    if (fd >= 0 && (REAL(write)(fd, out, m) != (ssize_t)m || REAL(lseek)(fd, 0, SEEK_SET) != 0)) {
        REAL(close)(fd);
        fd = -1;
    }
    free(text);
    errno = saved;
    return fd >= 0 ? fd : -2;
}
