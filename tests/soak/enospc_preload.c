/* enospc_preload: an LD_PRELOAD library that plays a full file system for the files under one
 * directory, without filling a real one (tests/cli/test_runs_disk.sh): while the file named by
 * ENOSPC_FLAG exists, a write(2) or pwrite(2) to a regular file whose path starts with
 * ENOSPC_UNDER writes half its bytes (at least one) and returns that short count, and the next
 * one to that file fails with ENOSPC, as a file system does when its last blocks go. Everything
 * else goes to libc. Build: gcc -shared -fPIC -O2 enospc_preload.c -o enospc.so -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static __thread int short_fd = -1; /* the fd whose last write was cut short: the next one fails */

static int full_for(int fd)
{
    const char *flag = getenv("ENOSPC_FLAG"), *under = getenv("ENOSPC_UNDER");
    struct stat st;
    if (!flag || !under || access(flag, F_OK) || fstat(fd, &st) || !S_ISREG(st.st_mode))
        return 0;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = 0;
    return !strncmp(path, under, strlen(under));
}

ssize_t write(int fd, const void *buf, size_t len)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (len && full_for(fd)) {
        if (short_fd == fd) {
            short_fd = -1;
            errno = ENOSPC;
            return -1;
        }
        short_fd = fd;
        return real(fd, buf, len > 1 ? len / 2 : 1);
    }
    return real(fd, buf, len);
}

static ssize_t pw(const char *name, int fd, const void *buf, size_t len, off_t off)
{
    ssize_t (*real)(int, const void *, size_t, off_t) = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, name);
    if (len && full_for(fd)) {
        if (short_fd == fd) {
            short_fd = -1;
            errno = ENOSPC;
            return -1;
        }
        short_fd = fd;
        return real(fd, buf, len > 1 ? len / 2 : 1, off);
    }
    return real(fd, buf, len, off);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
    return pw("pwrite", fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
    return pw("pwrite64", fd, buf, len, off);
}
