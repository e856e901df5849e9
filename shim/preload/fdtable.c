/* fdtable: emulated descriptors; see fdtable.h.
 * Two arrays, mapped on first use and never freed: numbers -> description index (+1, 0 =
 * free), and the descriptions. Both are claimed with compare-and-swap, so open, dup and close
 * from any thread, or from a signal handler, never take a lock. */
#include "fdtable.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static _Atomic uint32_t *fd_slots;      /* EMU_FD_MAX: description index + 1 */
static _Atomic uint32_t low_slots[EMU_LOW_FDS];
static struct emu_file *files;          /* EMU_FD_MAX descriptions */
static _Atomic int mapped;              /* 0 no, 1 mapping, 2 yes, 3 failed */
static _Atomic uint32_t fd_hint, file_hint;

static int map_tables(void)
{
    int st = atomic_load_explicit(&mapped, memory_order_acquire);
    if (st == 2)
        return 0;
    int expected = 0;
    if (st == 0 && atomic_compare_exchange_strong(&mapped, &expected, 1)) {
        void *a = mmap(NULL, sizeof *fd_slots * EMU_FD_MAX, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        void *b = mmap(NULL, sizeof *files * EMU_FD_MAX, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (a == MAP_FAILED || b == MAP_FAILED) {
            atomic_store(&mapped, 3);
            return -1;
        }
        fd_slots = a;
        files = b;
        atomic_store_explicit(&mapped, 2, memory_order_release);
        return 0;
    }
    while ((st = atomic_load(&mapped)) == 1)
        ;
    return st == 2 ? 0 : -1;
}

static int claim_file(void)
{
    uint32_t start = atomic_load_explicit(&file_hint, memory_order_relaxed);
    for (uint32_t i = 0; i < EMU_FD_MAX; i++) {
        uint32_t k = (start + i) % EMU_FD_MAX;
        int zero = 0;
        if (atomic_load_explicit(&files[k].refs, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&files[k].refs, &zero, 1)) {
            atomic_store_explicit(&file_hint, k + 1, memory_order_relaxed);
            return (int)k;
        }
    }
    return -1;
}

static void release_file(uint32_t k)
{
    struct emu_show held = files[k].show; /* the last holder gives its view buffer back */
    if (atomic_fetch_sub_explicit(&files[k].refs, 1, memory_order_acq_rel) == 1)
        emu_show_release(&held);
}

/* A free high number for description k, at or above minfd; -1 when none. */
static int claim_number(uint32_t k, int minfd)
{
    uint32_t from = minfd > EMU_FD_BASE ? (uint32_t)(minfd - EMU_FD_BASE) : 0;
    uint32_t start = atomic_load_explicit(&fd_hint, memory_order_relaxed);
    if (start < from)
        start = from;
    for (uint32_t i = 0; i < EMU_FD_MAX; i++) {
        uint32_t n = start + i;
        if (n >= EMU_FD_MAX)
            n = from + (n - EMU_FD_MAX) % (EMU_FD_MAX - from ? EMU_FD_MAX - from : 1);
        uint32_t zero = 0;
        if (n < EMU_FD_MAX && atomic_compare_exchange_strong(&fd_slots[n], &zero, k + 1)) {
            atomic_store_explicit(&fd_hint, n + 1, memory_order_relaxed);
            return EMU_FD_BASE + (int)n;
        }
    }
    return -1;
}

int fdt_open(uint32_t entry, enum emu_root root, int flags)
{
    if (map_tables()) {
        errno = ENOMEM;
        return -1;
    }
    int k = claim_file();
    if (k < 0) {
        errno = EMFILE;
        return -1;
    }
    struct emu_file *f = &files[k];
    f->entry = entry;
    f->root = root;
    f->flags = flags;
    atomic_store(&f->pos, 0);
    f->show.content = NULL;
    f->show.buf = 0;
    int fd = claim_number((uint32_t)k, 0);
    if (fd < 0) {
        release_file((uint32_t)k);
        errno = EMFILE;
        return -1;
    }
    return fd;
}

static _Atomic uint32_t *slot_of(int fd)
{
    if (fd >= EMU_FD_BASE && fd - EMU_FD_BASE < EMU_FD_MAX)
        return atomic_load_explicit(&mapped, memory_order_acquire) == 2 ? &fd_slots[fd - EMU_FD_BASE] : NULL;
    if (fd >= 0 && fd < EMU_LOW_FDS)
        return &low_slots[fd];
    return NULL;
}

struct emu_file *fdt_get(int fd)
{
    _Atomic uint32_t *slot = slot_of(fd);
    if (!slot)
        return NULL;
    uint32_t v = atomic_load_explicit(slot, memory_order_acquire);
    return v ? &files[v - 1] : NULL;
}

bool fdt_is_emulated(int fd)
{
    return fdt_get(fd) != NULL;
}

int fdt_close(int fd)
{
    _Atomic uint32_t *slot = slot_of(fd);
    uint32_t v = slot ? atomic_exchange_explicit(slot, 0, memory_order_acq_rel) : 0;
    if (!v) {
        errno = EBADF;
        return -1;
    }
    release_file(v - 1);
    return 0;
}

int fdt_dup(int fd, int minfd, int newfd, bool cloexec)
{
    _Atomic uint32_t *slot = slot_of(fd);
    uint32_t v = slot ? atomic_load(slot) : 0;
    if (!v) {
        errno = EBADF;
        return -1;
    }
    (void)cloexec; /* emulated numbers do not survive exec in any case */
    atomic_fetch_add(&files[v - 1].refs, 1);
    if (newfd < 0) {
        int n = claim_number(v - 1, minfd);
        if (n < 0) {
            release_file(v - 1);
            errno = EMFILE;
        }
        return n;
    }
    _Atomic uint32_t *target = slot_of(newfd);
    if (!target) {
        release_file(v - 1);
        errno = EBADF;
        return -1;
    }
    uint32_t old = atomic_exchange(target, v);
    if (old)
        release_file(old - 1);
    return newfd;
}
