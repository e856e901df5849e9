/* ipmi: the OpenIPMI device's descriptors and ioctls in the shim; see ipmi.h. */
#include "ipmi.h"

#include "emu.h"
#include "emu_ipmi.h"
#include "real.h"
#include "usermem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The open files are found by descriptor number in a two-level table: DIR_SIZE chunks of
 * CHUNK_SIZE numbers, a chunk mapped when a number in it is first opened, together the numbers
 * below 2^30 (EMU_FD_BASE, where the shim's own numbers begin). A file is a mapping of its own,
 * kept for the next open once closed (never unmapped, so a thread still holding one reads valid
 * memory). So there is no limit but the process's RLIMIT_NOFILE, as for the kernel's device. */
#define CHUNK_BITS 15
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define DIR_SIZE ((1u << 30) >> CHUNK_BITS)

struct ipmi_file {
    _Atomic int fd;         /* -1: closed */
    dev_t dev;              /* the eventfd's identity: a number closed behind our back (close_range, */
    ino_t ino;              /* exec) and reused by another file is not ours any more */
    int acc;                /* O_RDONLY, O_WRONLY or O_RDWR as opened */
    atomic_flag busy;       /* one ioctl at a time on this file */
    uint32_t entry;
    struct ipmi_file *next_free;
    struct ipmi_queue q;
};

typedef struct ipmi_file *_Atomic slot_t;
static slot_t *_Atomic dir[DIR_SIZE];
static _Atomic int nopen;
static struct ipmi_file *free_files; /* closed files for reuse, under free_lock */
static atomic_flag free_lock = ATOMIC_FLAG_INIT;

static slot_t *slot_of(int fd, bool make)
{
    if (fd < 0 || (unsigned)fd >= DIR_SIZE * CHUNK_SIZE)
        return NULL;
    slot_t *chunk = atomic_load_explicit(&dir[fd >> CHUNK_BITS], memory_order_acquire);
    if (!chunk && make) {
        void *m = mmap(NULL, sizeof(slot_t) * CHUNK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        slot_t *expected = NULL;
        if (atomic_compare_exchange_strong(&dir[fd >> CHUNK_BITS], &expected, (slot_t *)m)) {
            chunk = m;
        } else { /* another thread mapped it first */
            munmap(m, sizeof(slot_t) * CHUNK_SIZE);
            chunk = expected;
        }
    }
    return chunk ? &chunk[fd & (CHUNK_SIZE - 1)] : NULL;
}

static struct ipmi_file *file_new(void)
{
    while (atomic_flag_test_and_set_explicit(&free_lock, memory_order_acquire))
        ;
    struct ipmi_file *f = free_files;
    if (f)
        free_files = f->next_free;
    atomic_flag_clear_explicit(&free_lock, memory_order_release);
    if (f)
        return f;
    void *m = mmap(NULL, sizeof *f, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

static void file_free(struct ipmi_file *f)
{
    while (atomic_flag_test_and_set_explicit(&free_lock, memory_order_acquire))
        ;
    f->next_free = free_files;
    free_files = f;
    atomic_flag_clear_explicit(&free_lock, memory_order_release);
}

/* Takes f out of its slot (once: the thread that clears the slot frees it). */
static void forget(slot_t *slot, struct ipmi_file *f)
{
    struct ipmi_file *expected = f;
    if (atomic_compare_exchange_strong(slot, &expected, NULL)) {
        atomic_store(&f->fd, -1);
        atomic_fetch_sub(&nopen, 1);
        file_free(f);
    }
}

static struct ipmi_file *find(int fd)
{
    if (fd < 0 || !atomic_load_explicit(&nopen, memory_order_acquire))
        return NULL;
    slot_t *slot = slot_of(fd, false);
    struct ipmi_file *f = slot ? atomic_load_explicit(slot, memory_order_acquire) : NULL;
    if (!f || atomic_load(&f->fd) != fd)
        return NULL;
    struct stat st;
    if (REAL(fstat)(fd, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino)
        return f;
    forget(slot, f); /* stale: the number is another file's now */
    return NULL;
}

bool ipmi_is(int fd)
{
    return find(fd) != NULL;
}

int ipmi_open(uint32_t entry, int flags)
{
    int fd = eventfd(0, EFD_NONBLOCK | ((flags & O_CLOEXEC) ? EFD_CLOEXEC : 0));
    if (fd < 0)
        return -1;
    slot_t *slot = slot_of(fd, true);
    struct ipmi_file *f = slot ? file_new() : NULL;
    if (!f) {
        /* a number at 2^30 or above (an RLIMIT_NOFILE raised that far), or no memory: the
         * kernel's ipmi_open fails ENOMEM when it cannot allocate its file */
        REAL(close)(fd);
        return shim_fail(slot ? ENOMEM : EMFILE);
    }
    while (atomic_flag_test_and_set_explicit(&f->busy, memory_order_acquire))
        ; /* a thread still in an ioctl of this file's last life */
    f->entry = entry;
    f->acc = flags & O_ACCMODE;
    emu_ipmi_init(&f->q);
    struct stat st;
    if (REAL(fstat)(fd, &st) == 0) {
        f->dev = st.st_dev;
        f->ino = st.st_ino;
    }
    atomic_store(&f->fd, fd);
    atomic_flag_clear_explicit(&f->busy, memory_order_release);
    struct ipmi_file *old = atomic_exchange(slot, f);
    if (old) { /* the number's previous file was closed behind our back */
        atomic_store(&old->fd, -1);
        file_free(old);
    } else {
        atomic_fetch_add(&nopen, 1);
    }
    return fd;
}

void ipmi_close(int fd)
{
    struct ipmi_file *f = find(fd);
    if (f)
        forget(slot_of(fd, false), f);
}

int ipmi_rw_error(int fd, bool writing)
{
    struct ipmi_file *f = find(fd);
    if (!f)
        return 0;
    /* vfs_read/vfs_write: EBADF without the access the file was opened for, then EINVAL since
     * ipmi_devintf's file_operations have neither read nor write */
    if (f->acc == (writing ? O_RDONLY : O_WRONLY))
        return EBADF;
    return EINVAL;
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

/* The caller's memory, reached as the driver's copy_from_user/copy_to_user reach it: a bad
 * address is EFAULT, never a fault (usermem.h). */
static int copy_in(void *ctx, uint64_t addr, void *buf, size_t n)
{
    (void)ctx;
    return um_copy_in(buf, (const void *)(uintptr_t)addr, n);
}

static int copy_out(void *ctx, uint64_t addr, const void *buf, size_t n)
{
    (void)ctx;
    return um_copy_out((void *)(uintptr_t)addr, buf, n) == n ? 0 : EFAULT;
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
