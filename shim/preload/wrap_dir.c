/* wrap_dir: listing emulated directories (opendir and the DIR* calls, scandir, glob,
 * getdents64), as sysfs lists them: the listing itself, its order, d_type, d_ino and its
 * positions (the telldir/seekdir cookies, d_off and a directory descriptor's offset, all one
 * number) are emu_dir.c's, which the seccomp supervisor's getdents64 shares.
 *
 * Streams. An emulated DIR* is a slot of a slab mapped once with mmap, so an address inside
 * the slab is ours and any other DIR* is libc's, forwarded untouched. readdir never
 * allocates; opendir allocates only the slab. scandir builds its result with malloc, as glibc
 * does, since the caller frees it. glob runs libc's glob with GLOB_ALTDIRFUNC and callbacks
 * that go through this file for emulated paths.
 *
 * What it must never do: take a lock (a fork child would inherit it held), touch errno when a
 * call succeeds or passes through, or hand a slab address to libc's DIR functions. */
#include "emu.h"
#include "emu_dir.h"
#include "dirpath.h"
#include "fdtable.h"
#include "real.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

#define DIR_SLOTS 1024 /* emulated directory streams open at once */

/* An entry of a listing as struct dirent or struct dirent64 (the same layout on 64-bit). */
#define TO_DIRENT(fn, DIRENT)                                                                          \
    static void fn(const struct emu_dirent *e, struct DIRENT *d)                                   \
    {                                                                                              \
        d->d_ino = e->ino;                                                                         \
        d->d_off = e->off;                                                                         \
        size_t size = offsetof(struct DIRENT, d_name) + e->namelen + 1;                            \
        d->d_reclen = (unsigned short)((size + 7) & ~(size_t)7);                                   \
        d->d_type = e->type;                                                                       \
        memcpy(d->d_name, e->name, e->namelen);                                                    \
        d->d_name[e->namelen] = 0;                                                                 \
    }
TO_DIRENT(to_dirent, dirent)
TO_DIRENT(to_dirent64, dirent64)

/* --- emulated streams -------------------------------------------------------------------------- */

struct stream {
    _Atomic int busy;
    int fd;                     /* fdopendir's descriptor, or the one dirfd() opened; -1 none */
    union {
        struct dirent d;
        struct dirent64 d64;
    } out;
    struct emu_listing L;       /* last: its page for the host's entries is touched by overlays only */
};

static _Atomic(struct stream *) slab;

static struct stream *slab_get(void)
{
    struct stream *p = atomic_load_explicit(&slab, memory_order_acquire);
    if (p)
        return p;
    size_t size = sizeof *p * DIR_SLOTS;
    void *m = REAL(mmap)(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    /* Two first callers race without a lock: the loser gives its mapping back. */
    struct stream *none = NULL;
    if (!atomic_compare_exchange_strong(&slab, &none, (struct stream *)m)) {
        munmap(m, size);
        return none;
    }
    return m;
}

/* The stream d when it is ours, else NULL. */
static struct stream *mine(DIR *d)
{
    struct stream *p = atomic_load_explicit(&slab, memory_order_acquire);
    uintptr_t a = (uintptr_t)d, b = (uintptr_t)p;
    if (!p || a < b || a >= b + sizeof *p * DIR_SLOTS || (a - b) % sizeof *p)
        return NULL;
    return (struct stream *)d;
}

static DIR *stream_open(uint32_t dir, enum emu_root root, int fd, int64_t pos)
{
    struct stream *slots = slab_get();
    if (!slots) {
        errno = ENOMEM;
        return NULL;
    }
    /* The lowest free slot: a slot is larger than a page, and the pages in use stay those of
     * the most streams open at once. */
    for (uint32_t i = 0; i < DIR_SLOTS; i++) {
        struct stream *d = &slots[i];
        int zero = 0;
        if (atomic_load_explicit(&d->busy, memory_order_relaxed) ||
            !atomic_compare_exchange_strong(&d->busy, &zero, 1))
            continue;
        d->fd = fd;
        emu_dir_open(&d->L, dir, root);
        emu_dir_seek(&d->L, pos);
        return (DIR *)d;
    }
    errno = EMFILE;
    return NULL;
}

/* A stream with a descriptor keeps the descriptor's offset where the stream stands, as
 * reading a kernel DIR moves its descriptor (getdents64 and fdopendir then agree with it). */
static void stream_sync(struct stream *d)
{
    struct emu_file *f = d->fd >= 0 ? fdt_get(d->fd) : NULL;
    if (f)
        atomic_store(&f->pos, (int64_t)d->L.next);
}

static DIR *dir_opendir(const char *path)
{
    uint32_t entry;
    enum emu_root root = EMU_ROOT_SYS;
    struct at_pass pass;
    int rc = dirpath_locate(AT_FDCWD, path, true, &entry, &root, &pass);
    if (rc == EMU_PASS) {
        DIR *dp = REAL(opendir)(pass.path);
        if (dp) /* a real directory of interest: openat(dirfd(dp), ...) may name the node's files */
            dirpath_opened(REAL(dirfd)(dp), AT_FDCWD, pass.path);
        return dp;
    }
    if (rc) {
        errno = rc;
        return NULL;
    }
    if (emu_seg()->entries[entry].kind != SEG_DIR) {
        errno = ENOTDIR;
        return NULL;
    }
    return stream_open(entry, root, -1, 0);
}

static struct dirent *dir_readdir(DIR *dp)
{
    struct stream *d = mine(dp);
    if (!d)
        return REAL(readdir)(dp);
    struct emu_dirent e;
    if (!emu_dir_next(&d->L, &e))
        return NULL;
    stream_sync(d);
    to_dirent(&e, &d->out.d);
    return &d->out.d;
}

static struct dirent64 *dir_readdir64(DIR *dp)
{
    struct stream *d = mine(dp);
    if (!d)
        return REAL(readdir64)(dp);
    struct emu_dirent e;
    if (!emu_dir_next(&d->L, &e))
        return NULL;
    stream_sync(d);
    to_dirent64(&e, &d->out.d64);
    return &d->out.d64;
}

static int dir_closedir(DIR *dp)
{
    struct stream *d = mine(dp);
    if (!d) {
        dirpath_closed(REAL(dirfd)(dp));
        return REAL(closedir)(dp);
    }
    emu_dir_close(&d->L);
    if (d->fd >= 0) {
        /* the exported close: it drops an emulated number, or a low alias and its placeholder */
        int saved = errno;
        close(d->fd);
        errno = saved;
        d->fd = -1;
    }
    atomic_store_explicit(&d->busy, 0, memory_order_release);
    return 0;
}

EXPORT DIR *opendir(const char *path)
{
    return dir_opendir(path);
}

EXPORT DIR *fdopendir(int fd)
{
    struct emu_file *f = fdt_get(fd);
    if (!f)
        return REAL(fdopendir)(fd);
    if (f->flags & O_PATH) {
        errno = EBADF;
        return NULL;
    }
    if (emu_seg()->entries[f->entry].kind != SEG_DIR) {
        errno = ENOTDIR;
        return NULL;
    }
    /* The stream starts where the descriptor stands and owns it from now on (closedir). */
    DIR *dp = stream_open(f->entry, f->root, fd, atomic_load(&f->pos));
    if (dp)
        stream_sync(mine(dp));
    return dp;
}

EXPORT struct dirent *readdir(DIR *dp)
{
    return dir_readdir(dp);
}

EXPORT struct dirent64 *readdir64(DIR *dp)
{
    return dir_readdir64(dp);
}

/* The reentrant forms copy the entry the stream would return into the caller's buffer. */
EXPORT int readdir_r(DIR *dp, struct dirent *entry, struct dirent **result)
{
    if (!mine(dp))
        return REAL(readdir_r)(dp, entry, result);
    int saved = errno;
    errno = 0;
    struct dirent *d = dir_readdir(dp);
    int err = errno;
    errno = saved;
    if (!d) {
        *result = NULL;
        return err;
    }
    memcpy(entry, d, sizeof *entry);
    *result = entry;
    return 0;
}

EXPORT int readdir64_r(DIR *dp, struct dirent64 *entry, struct dirent64 **result)
{
    if (!mine(dp))
        return REAL(readdir64_r)(dp, entry, result);
    int saved = errno;
    errno = 0;
    struct dirent64 *d = dir_readdir64(dp);
    int err = errno;
    errno = saved;
    if (!d) {
        *result = NULL;
        return err;
    }
    memcpy(entry, d, sizeof *entry);
    *result = entry;
    return 0;
}

EXPORT int closedir(DIR *dp)
{
    return dir_closedir(dp);
}

EXPORT int dirfd(DIR *dp)
{
    struct stream *d = mine(dp);
    if (!d)
        return REAL(dirfd)(dp);
    if (d->fd < 0) {
        d->fd = fdt_open(d->L.dir, d->L.root, O_RDONLY | O_DIRECTORY);
        if (d->fd < 0)
            return -1;
        stream_sync(d);
    }
    return d->fd;
}

EXPORT void rewinddir(DIR *dp)
{
    struct stream *d = mine(dp);
    if (!d) {
        REAL(rewinddir)(dp);
        return;
    }
    emu_dir_seek(&d->L, 0);
    stream_sync(d);
}

EXPORT long telldir(DIR *dp)
{
    struct stream *d = mine(dp);
    return d ? (long)d->L.next : REAL(telldir)(dp);
}

EXPORT void seekdir(DIR *dp, long pos)
{
    struct stream *d = mine(dp);
    if (!d) {
        REAL(seekdir)(dp, pos);
        return;
    }
    emu_dir_seek(&d->L, pos);
    stream_sync(d);
}

/* --- getdents64 -------------------------------------------------------------------------------- */

EXPORT ssize_t getdents64(int fd, void *buf, size_t n)
{
    struct emu_file *f = fdt_get(fd);
    if (!f)
        return REAL(getdents64)(fd, buf, n);
    int64_t pos = atomic_load(&f->pos);
    ssize_t used = emu_dir_getdents64(f->entry, f->root, f->flags, &pos, buf, n);
    if (used < 0)
        return shim_fail((int)-used);
    atomic_store(&f->pos, pos);
    return used;
}

/* --- scandir ----------------------------------------------------------------------------------- */

/* Where a path to list lands: EMU_PASS, 0 with a directory entry, or an errno. */
static int locate_dir(const char *path, uint32_t *entry, enum emu_root *root)
{
    *root = EMU_ROOT_SYS;
    int rc = emu_path(path, true, entry, root);
    if (rc == 0 && emu_seg()->entries[*entry].kind != SEG_DIR)
        return ENOTDIR;
    return rc;
}

/* glibc's scandir, for the node's directories: the selector sees each entry, the kept ones
 * are copied with malloc (the caller frees each and the array), then sorted. */
#define SCANDIR_WRAPPER(name, DIRENT, fill)                                                            \
    struct name##_order {                                                                          \
        int (*cmp)(const struct DIRENT **, const struct DIRENT **);                                \
    };                                                                                             \
    static int name##_compare(const void *a, const void *b, void *arg)                             \
    {                                                                                              \
        const struct name##_order *o = arg;                                                        \
        return o->cmp((const struct DIRENT **)a, (const struct DIRENT **)b);                       \
    }                                                                                              \
    EXPORT int name(const char *path, struct DIRENT ***list, int (*sel)(const struct DIRENT *),   \
                    int (*cmp)(const struct DIRENT **, const struct DIRENT **))                    \
    {                                                                                              \
        uint32_t entry;                                                                            \
        enum emu_root root;                                                                        \
        int rc = locate_dir(path, &entry, &root);                                                  \
        if (rc == EMU_PASS)                                                                        \
            return REAL(name)(path, list, sel, cmp);                                               \
        if (rc)                                                                                    \
            return shim_fail(rc);                                                                  \
        int saved = errno;                                                                         \
        struct emu_listing L;                                                                      \
        emu_dir_open(&L, entry, root);                                                             \
        struct DIRENT **v = NULL;                                                                  \
        size_t cnt = 0, cap = 0;                                                                   \
        struct emu_dirent e;                                                                       \
        struct DIRENT d;                                                                           \
        while (emu_dir_next(&L, &e)) {                                                             \
            fill(&e, &d);                                                                          \
            if (sel && !sel(&d))                                                                   \
                continue;                                                                          \
            if (cnt == cap) {                                                                      \
                size_t ncap = cap ? cap * 2 : 16;                                                  \
                struct DIRENT **nv = realloc(v, ncap * sizeof *nv);                                \
                if (!nv)                                                                           \
                    goto nomem;                                                                    \
                v = nv, cap = ncap;                                                                \
            }                                                                                      \
            size_t size = offsetof(struct DIRENT, d_name) + e.namelen + 1;                         \
            if (!(v[cnt] = malloc(size)))                                                          \
                goto nomem;                                                                        \
            memcpy(v[cnt++], &d, size);                                                            \
        }                                                                                          \
        emu_dir_close(&L);                                                                         \
        if (cmp && cnt > 1) {                                                                      \
            struct name##_order o = {cmp};                                                         \
            qsort_r(v, cnt, sizeof *v, name##_compare, &o);                                        \
        }                                                                                          \
        *list = v;                                                                                 \
        errno = saved;                                                                             \
        return (int)cnt;                                                                           \
    nomem:                                                                                         \
        emu_dir_close(&L);                                                                         \
        while (cnt)                                                                                \
            free(v[--cnt]);                                                                        \
        free(v);                                                                                   \
        return shim_fail(ENOMEM);                                                                  \
    }
SCANDIR_WRAPPER(scandir, dirent, to_dirent)
SCANDIR_WRAPPER(scandir64, dirent64, to_dirent64)

/* --- glob -------------------------------------------------------------------------------------- */

/* libc's glob walks directories through these when GLOB_ALTDIRFUNC is set: emulated paths get
 * emulated streams and metadata, all others libc's. */
static void *glob_opendir(const char *path)
{
    return dir_opendir(path);
}

static struct dirent *glob_readdir(void *dp)
{
    return dir_readdir(dp);
}

static struct dirent64 *glob_readdir64(void *dp)
{
    return dir_readdir64(dp);
}

static void glob_closedir(void *dp)
{
    dir_closedir(dp);
}

/* 0 with st filled, EMU_PASS, or -1 with errno. */
static int glob_emu_stat(const char *path, bool follow, struct stat *st)
{
    uint32_t entry;
    enum emu_root root = EMU_ROOT_SYS;
    int rc = emu_path(path, follow, &entry, &root);
    if (rc == EMU_PASS)
        return EMU_PASS;
    if (rc)
        return shim_fail(rc);
    emu_stat(entry, root, st);
    return 0;
}

/* One stat callback per struct and link rule: the emulated entry's metadata (converted to the
 * caller's struct), libc's for any other path. */
static void stat_copy(const struct stat *s, struct stat *d)
{
    *d = *s;
}

#define GLOB_STAT(name, STAT, real, follow, convert)                                               \
    static int name(const char *restrict path, struct STAT *restrict st)                           \
    {                                                                                              \
        struct stat s;                                                                             \
        int rc = glob_emu_stat(path, follow, &s);                                                  \
        if (rc == EMU_PASS)                                                                        \
            return REAL(real)(path, st);                                                           \
        if (rc == 0)                                                                               \
            convert(&s, st);                                                                       \
        return rc;                                                                                 \
    }
GLOB_STAT(glob_stat, stat, stat, true, stat_copy)
GLOB_STAT(glob_lstat, stat, lstat, false, stat_copy)
GLOB_STAT(glob_stat64, stat64, stat64, true, emu_stat_to64)
GLOB_STAT(glob_lstat64, stat64, lstat64, false, emu_stat_to64)

/* A caller that brings its own directory functions keeps them; otherwise libc's glob runs
 * with ours (every other flag as the caller gave it), and the flag is taken out of gl_flags
 * again so the caller sees what it asked for. glob and glob64 differ only in their types. */
#define GLOB_WRAPPER(name, GLOB_T, readdir, stat, lstat)                                           \
    EXPORT int name(const char *pattern, int flags, int (*errfn)(const char *, int), GLOB_T *g)    \
    {                                                                                              \
        if ((flags & GLOB_ALTDIRFUNC) || !emu_seg())                                               \
            return REAL(name)(pattern, flags, errfn, g);                                           \
        g->gl_opendir = glob_opendir;                                                              \
        g->gl_readdir = readdir;                                                                   \
        g->gl_closedir = glob_closedir;                                                            \
        g->gl_stat = stat;                                                                         \
        g->gl_lstat = lstat;                                                                       \
        int rc = REAL(name)(pattern, flags | GLOB_ALTDIRFUNC, errfn, g);                           \
        g->gl_flags &= ~GLOB_ALTDIRFUNC;                                                           \
        return rc;                                                                                 \
    }
GLOB_WRAPPER(glob, glob_t, glob_readdir, glob_stat, glob_lstat)
GLOB_WRAPPER(glob64, glob64_t, glob_readdir64, glob_stat64, glob_lstat64)
