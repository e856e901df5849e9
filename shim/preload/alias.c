/* alias: emulated files behind low descriptor numbers; see alias.h. */
#include "alias.h"

#include "fdtable.h"
#include "real.h"
#include "stream.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_ALIASES 64

struct alias {
    _Atomic int fd;      /* the low number, -1 when free */
    int keep;            /* a private duplicate of the memfd, so a flush works after the
                          * program closed the number with glibc's internal close */
    uint32_t entry;
    enum emu_root root;
};

static struct alias aliases[MAX_ALIASES] = {[0 ... MAX_ALIASES - 1] = {.fd = -1, .keep = -1}};

static void store(struct alias *a)
{
    char buf[SEG_READ_MAX];
    ssize_t n = REAL(pread)(a->keep, buf, sizeof buf, 0);
    if (n <= 0)
        return;
    if (ftruncate(a->keep, 0) != 0)
        return;
    int err = emu_write(a->entry, buf, (size_t)n, getpid());
    if (err) {
        char path[512], msg[700];
        if (emu_agent_path(a->entry, a->root, path, sizeof path) < 0)
            snprintf(path, sizeof path, "(emulated file)");
        int len = snprintf(msg, sizeof msg, "hwemu-shim: %s: write error: %s\n", path, strerror(err));
        if (len > 0)
            (void)!REAL(write)(2, msg, (size_t)len);
    }
}

static struct alias *find(int fd)
{
    for (int i = 0; i < MAX_ALIASES; i++)
        if (atomic_load(&aliases[i].fd) == fd)
            return &aliases[i];
    return NULL;
}

static struct alias *claim(int fd)
{
    for (int i = 0; i < MAX_ALIASES; i++) {
        int free_fd = -1;
        if (atomic_compare_exchange_strong(&aliases[i].fd, &free_fd, fd))
            return &aliases[i];
    }
    return NULL;
}

/* The name carries what the exec'd program's shim needs: entry, root and access mode. */
static int new_memfd(uint32_t entry, enum emu_root root, int acc)
{
    char name[64];
    snprintf(name, sizeof name, "hwemu:%u:%d:%d", entry, (int)root, acc);
    return memfd_create(name, 0);
}

int alias_make(int fd, int newfd, int flags)
{
    struct emu_file *f = fdt_get(fd);
    if (!f)
        return shim_fail(EBADF);
    alias_flush(newfd);
    struct alias *a = claim(newfd);
    if (!a)
        return shim_fail(EMFILE);
    int m = new_memfd(f->entry, f->root, f->flags & O_ACCMODE);
    if (m < 0) {
        atomic_store(&a->fd, -1);
        return -1;
    }
    /* The memfd may land on newfd itself (dash closes the number before it dup2s onto it),
     * where dup3 would refuse to copy a descriptor onto itself. */
    if (m == newfd) {
        if (flags & O_CLOEXEC)
            REAL(fcntl)(m, F_SETFD, FD_CLOEXEC);
    } else if (REAL(dup3)(m, newfd, flags & O_CLOEXEC) < 0) {
        int e = errno;
        REAL(close)(m);
        atomic_store(&a->fd, -1);
        return shim_fail(e);
    }
    a->keep = REAL(fcntl)(m, F_DUPFD_CLOEXEC, 100);
    if (m != newfd)
        REAL(close)(m);
    a->entry = f->entry;
    a->root = f->root;
    int rc = fdt_dup(fd, 0, newfd, flags & O_CLOEXEC);
    if (rc >= 0)
        stream_std_attach(newfd);
    return rc;
}

void alias_flush(int fd)
{
    struct alias *a = find(fd);
    if (!a)
        return;
    int saved = errno;
    stream_std_detach(fd);
    store(a);
    if (a->keep >= 0)
        REAL(close)(a->keep);
    a->keep = -1;
    atomic_store(&a->fd, -1);
    errno = saved;
}

void alias_flush_all(void)
{
    for (int i = 0; i < MAX_ALIASES; i++)
        if (atomic_load(&aliases[i].fd) >= 0 && aliases[i].keep >= 0) {
            int saved = errno;
            store(&aliases[i]);
            errno = saved;
        }
}

void alias_adopt(void)
{
    if (!emu_seg())
        return;
    DIR *d = REAL(opendir)("/proc/self/fd");
    if (!d)
        return;
    struct dirent *e;
    int dfd = REAL(dirfd)(d);
    while ((e = REAL(readdir)(d))) {
        int fd = atoi(e->d_name);
        if (fd == dfd || e->d_name[0] == '.' || fd >= EMU_LOW_FDS)
            continue;
        char link[128], target[128];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = REAL(readlink)(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = 0;
        unsigned entry;
        int root, acc;
        if (sscanf(target, "/memfd:hwemu:%u:%d:%d", &entry, &root, &acc) != 3 || entry >= emu_seg()->n_entries)
            continue;
        struct alias *a = claim(fd);
        if (!a)
            break;
        a->entry = entry;
        a->root = (enum emu_root)root;
        a->keep = REAL(fcntl)(fd, F_DUPFD_CLOEXEC, 100);
        int emu = fdt_open(entry, (enum emu_root)root, acc & O_ACCMODE);
        if (emu >= 0) {
            if (fdt_dup(emu, 0, fd, false) >= 0)
                stream_std_attach(fd);
            fdt_close(emu);
        }
    }
    REAL(closedir)(d);
}
