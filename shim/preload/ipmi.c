/* ipmi: the OpenIPMI device's descriptors and ioctls in the shim; see ipmi.h. */
#include "ipmi.h"

#include "emu.h"
#include "emu_ipmi.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILES 16   /* IPMI descriptors open at once (a tool opens one) */

struct ipmi_file {
    _Atomic int fd;         /* -1: free */
    dev_t dev;              /* the eventfd's identity: a number closed behind our back (close_range, */
    ino_t ino;              /* exec) and reused by another file is not ours any more */
    atomic_flag busy;       /* one ioctl at a time on this file */
    uint32_t entry;
    struct ipmi_queue q;
};

static struct ipmi_file files[FILES];
static _Atomic int nopen;
static _Atomic int initialised;

static void init_once(void)
{
    int expected = 0;
    if (atomic_load(&initialised) == 2 || !atomic_compare_exchange_strong(&initialised, &expected, 1)) {
        while (atomic_load(&initialised) != 2)
            ;
        return;
    }
    for (int i = 0; i < FILES; i++)
        atomic_store(&files[i].fd, -1);
    atomic_store(&initialised, 2);
}

static struct ipmi_file *find(int fd)
{
    if (fd < 0 || !atomic_load_explicit(&nopen, memory_order_acquire))
        return NULL;
    for (int i = 0; i < FILES; i++) {
        if (atomic_load(&files[i].fd) != fd)
            continue;
        struct stat st;
        if (REAL(fstat)(fd, &st) == 0 && st.st_dev == files[i].dev && st.st_ino == files[i].ino)
            return &files[i];
        int expected = fd; /* stale: the number is another file's now */
        if (atomic_compare_exchange_strong(&files[i].fd, &expected, -1))
            atomic_fetch_sub(&nopen, 1);
        return NULL;
    }
    return NULL;
}

bool ipmi_is(int fd)
{
    return find(fd) != NULL;
}

int ipmi_open(uint32_t entry, int flags)
{
    init_once();
    int fd = eventfd(0, EFD_NONBLOCK | ((flags & O_CLOEXEC) ? EFD_CLOEXEC : 0));
    if (fd < 0)
        return -1;
    for (int i = 0; i < FILES; i++) {
        struct ipmi_file *f = &files[i];
        int expected = -1;
        if (!atomic_compare_exchange_strong(&f->fd, &expected, -2)) /* -2: being filled */
            continue;
        f->entry = entry;
        emu_ipmi_init(&f->q);
        struct stat st;
        if (REAL(fstat)(fd, &st) == 0) {
            f->dev = st.st_dev;
            f->ino = st.st_ino;
        }
        atomic_flag_clear(&f->busy);
        atomic_store(&f->fd, fd);
        atomic_fetch_add(&nopen, 1);
        return fd;
    }
    REAL(close)(fd);
    errno = EMFILE;
    return -1;
}

void ipmi_close(int fd)
{
    struct ipmi_file *f = find(fd);
    if (f) {
        atomic_store(&f->fd, -1);
        atomic_fetch_sub(&nopen, 1);
    }
}

/* The descriptor is readable while a message waits (ipmi_poll). */
static void set_readable(int fd, bool on)
{
    uint64_t v = 1;
    if (on) {
        if (REAL(write)(fd, &v, sizeof v) < 0)
            return; /* a full counter: it is readable anyway */
    } else if (REAL(read)(fd, &v, sizeof v) < 0) {
        return; /* already clear */
    }
}

/* The caller's memory is ours: the arguments are copied in and out as they are (a NULL address
 * is EFAULT, the driver's copy_from_user; any other bad one faults as in libc). */
static int copy_in(void *ctx, uint64_t addr, void *buf, size_t n)
{
    if (!addr)
        return EFAULT;
    memcpy(buf, (const void *)(uintptr_t)addr, n);
    return 0;
}

static int copy_out(void *ctx, uint64_t addr, const void *buf, size_t n)
{
    if (!addr)
        return EFAULT;
    memcpy((void *)(uintptr_t)addr, buf, n);
    return 0;
}

static const struct emu_ipmi_io in_process = {copy_in, copy_out, NULL, NULL};

int ipmi_ioctl(int fd, unsigned long req, void *arg)
{
    struct ipmi_file *f = find(fd);
    if (!f)
        return shim_fail(EBADF);
    while (atomic_flag_test_and_set_explicit(&f->busy, memory_order_acquire))
        ;
    unsigned before = f->q.count;
    int err = emu_ipmi_ioctl(&f->q, emu_seg(), req, (uint64_t)(uintptr_t)arg, &in_process);
    if (!before && f->q.count)
        set_readable(fd, true);
    else if (before && !f->q.count)
        set_readable(fd, false);
    atomic_flag_clear_explicit(&f->busy, memory_order_release);
    if (err == EMU_IPMI_NOT_OURS)
        return REAL(ioctl)(fd, req, arg);
    return err ? shim_fail(err) : 0;
}
