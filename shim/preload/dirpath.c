/* dirpath: real directory descriptors' paths and (dirfd, path) resolution; see dirpath.h.
 *
 * The table: for each low descriptor number a word (generation << 16 | slot + 1, 0 = not
 * known), and a few hundred path slots. A slot is claimed with compare-and-swap, written, then
 * published in the number's word; releasing it bumps its generation, so a reader that copied a
 * path from a slot released meanwhile sees the generation change and drops the copy. */
#include "dirpath.h"

#include "fdtable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define DP_FDS 4096   /* descriptor numbers tracked */
#define DP_SLOTS 256  /* real directories of interest open at once */
#define DP_PATH 512   /* longest path kept */

struct dp_slot {
    _Atomic uint32_t gen;  /* low 16 bits published with the number */
    _Atomic int used;
    char path[DP_PATH];
};

static _Atomic uint32_t dp_map[DP_FDS];
static struct dp_slot dp_slots[DP_SLOTS];

/* Can a directory at abs hold the node's files (or lead to them)? "/" and the four roots. */
static bool interesting(const char *abs)
{
    const char *p = abs;
    while (*p == '/')
        p++;
    if (!*p)
        return true;
    static const char *const roots[] = {"sys", "host-sys", "proc", "dev"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        size_t n = strlen(roots[i]);
        if (!strncmp(p, roots[i], n) && (p[n] == 0 || p[n] == '/'))
            return true;
    }
    return false;
}

static void release(uint32_t word)
{
    uint32_t k = (word & 0xffff) - 1;
    if (k >= DP_SLOTS)
        return;
    atomic_fetch_add(&dp_slots[k].gen, 1);
    atomic_store(&dp_slots[k].used, 0);
}

void dirpath_closed(int fd)
{
    if (fd < 0 || fd >= DP_FDS)
        return;
    if (!atomic_load_explicit(&dp_map[fd], memory_order_relaxed))
        return; /* the common case: nothing known, no store */
    uint32_t old = atomic_exchange(&dp_map[fd], 0);
    if (old)
        release(old);
}

/* Remembers abs for fd (forgetting what fd had). */
static void remember(int fd, const char *abs, size_t len)
{
    dirpath_closed(fd);
    if (len >= DP_PATH)
        return;
    for (uint32_t k = 0; k < DP_SLOTS; k++) {
        int zero = 0;
        if (atomic_load_explicit(&dp_slots[k].used, memory_order_relaxed) ||
            !atomic_compare_exchange_strong(&dp_slots[k].used, &zero, 1))
            continue;
        memcpy(dp_slots[k].path, abs, len);
        dp_slots[k].path[len] = 0;
        uint32_t gen = atomic_load(&dp_slots[k].gen) & 0xffff;
        uint32_t old = atomic_exchange(&dp_map[fd], gen << 16 | (k + 1));
        if (old)
            release(old);
        return;
    }
}

/* The path of a remembered real descriptor into buf: its length, or -1 when fd is not known. */
static int known_path(int fd, char *buf, size_t len)
{
    if (fd < 0 || fd >= DP_FDS)
        return -1;
    uint32_t w = atomic_load_explicit(&dp_map[fd], memory_order_acquire);
    uint32_t k = (w & 0xffff) - 1;
    if (!w || k >= DP_SLOTS)
        return -1;
    size_t n = strnlen(dp_slots[k].path, DP_PATH - 1);
    if (n >= len)
        return -1;
    memcpy(buf, dp_slots[k].path, n);
    buf[n] = 0;
    atomic_thread_fence(memory_order_acquire);
    if ((atomic_load(&dp_slots[k].gen) & 0xffff) != w >> 16 || atomic_load(&dp_map[fd]) != w)
        return -1; /* released while we copied */
    return (int)n;
}

void dirpath_dup(int fd, int newfd)
{
    char p[DP_PATH];
    int n = known_path(fd, p, sizeof p);
    if (n < 0)
        dirpath_closed(newfd);
    else
        remember(newfd, p, (size_t)n);
}

/* "<base>/<rel>" into buf (no doubled slash after "/"): its length, or -1 when it does not fit. */
static int join(const char *base, const char *rel, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s/%s", strcmp(base, "/") ? base : "", rel);
    return n > 0 && (size_t)n < len ? n : -1;
}

void dirpath_opened(int fd, int dirfd, const char *path)
{
    if (fd < 0 || fd >= DP_FDS)
        return;
    if (!path) {
        dirpath_closed(fd);
        return;
    }
    char base[DP_PATH], abs[DP_PATH];
    const char *a = NULL;
    if (path[0] == '/')
        a = path;
    else if (dirfd == AT_FDCWD)
        a = emu_absolute(path, abs, sizeof abs);
    else if (known_path(dirfd, base, sizeof base) >= 0 && join(base, path, abs, sizeof abs) >= 0)
        a = abs;
    if (!a || !interesting(a)) {
        dirpath_closed(fd);
        return;
    }
    remember(fd, a, strlen(a));
}

int dirpath_locate(int dirfd, const char *path, bool follow, uint32_t *entry, enum emu_root *root,
                   struct at_pass *pass)
{
    pass->dirfd = dirfd;
    pass->path = path;
    if (!path)
        return EMU_PASS;
    if (path[0] == '/')
        return emu_path(path, follow, entry, root);
    if (dirfd == AT_FDCWD) {
        int rc = emu_path(path, follow, entry, root);
        if (rc == EMU_PASS && emu_cwd_emulated() && emu_absolute(path, pass->buf, sizeof pass->buf)) {
            /* the kernel's cwd is elsewhere: the host's file of the emulated cwd's path */
            pass->path = pass->buf;
        }
        return rc;
    }
    struct emu_file *d = fdt_get(dirfd);
    if (d) {
        *root = d->root;
        int rc = emu_path_at(d->entry, d->root, path, follow, entry);
        if (rc != EMU_PASS)
            return rc;
        /* not the node's: the host's file of the same path */
        char dir[PATH_MAX];
        if (emu_agent_path(d->entry, d->root, dir, sizeof dir) < 0 || join(dir, path, pass->buf, sizeof pass->buf) < 0)
            return ENAMETOOLONG;
        pass->dirfd = AT_FDCWD;
        pass->path = pass->buf;
        return EMU_PASS;
    }
    if (!path[0])
        return EMU_PASS;
    char base[DP_PATH];
    if (known_path(dirfd, base, sizeof base) < 0 || join(base, path, pass->buf, sizeof pass->buf) < 0)
        return EMU_PASS;
    /* the kernel resolves a name the node does not have against the real descriptor itself */
    return emu_path(pass->buf, follow, entry, root);
}
