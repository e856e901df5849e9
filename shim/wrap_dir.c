/* wrap_dir: listing emulated directories (opendir and the DIR* calls, scandir, glob,
 * getdents64), as sysfs lists them.
 *
 * A listing is "." and "..", then the node's children of the directory in byte order (the
 * segment's entries are sorted by path, so the children of D are the entries inside the
 * "<D>/" range whose parent is D), with d_type DT_DIR/DT_REG/DT_LNK and d_ino as emu_stat
 * gives it. A directory reached through /sys that the node does not own (neither it nor an
 * ancestor carries SEG_F_OWNED: /sys, /sys/class, /sys/devices/system/cpu, ...) then goes on
 * with the host's entries of the same path, minus the names the node has; owned directories
 * and everything under /host-sys list the node's children only.
 *
 * Positions. One number says where a listing stands, so telldir/seekdir, d_off and the
 * descriptor offset that getdents64 uses are the same stable cookie:
 *     0               "." comes next
 *     1               ".." comes next
 *     2 + i           the node's entries are scanned from entry index i on
 *     host_base + k   the host's directory has given k entries (host_base = n_entries + 3)
 * The host's part is counted in raw entries of its stream, so a position is reached again by
 * rewinding the host stream and skipping k entries.
 *
 * Streams. An emulated DIR* is a slot of a slab mapped once with mmap, so an address inside
 * the slab is ours and any other DIR* is libc's, forwarded untouched. readdir never
 * allocates; opendir allocates only the slab and, for an overlay directory, the host's own
 * stream (libc's opendir). scandir builds its result with malloc, as glibc does, since the
 * caller frees it. glob runs libc's glob with GLOB_ALTDIRFUNC and callbacks that go through
 * this file for emulated paths.
 *
 * What it must never do: take a lock (a fork child would inherit it held), touch errno when a
 * call succeeds or passes through, or hand a slab address to libc's DIR functions. */
#include "emu.h"
#include "fdtable.h"
#include "real.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

#define DIR_SLOTS 1024 /* emulated directory streams open at once */

/* --- the listing of one directory ------------------------------------------------------------ */

struct listing {
    uint64_t ino;
    int64_t off;                /* the position after this entry */
    unsigned char type;
    size_t namelen;
    char name[NAME_MAX + 1];
};

struct lister {
    uint32_t dir;               /* the directory's entry */
    enum emu_root root;
    uint32_t lo, hi;            /* entries whose path starts with "<dir>/" */
    uint32_t host_base;
    bool overlay;               /* the host's entries follow the node's */
    uint32_t next;              /* the position (see the top of the file) */
    bool host_done;             /* the host's stream reached its end */
    DIR *host;                  /* the host's stream, libc's, positioned after host_at entries */
    uint32_t host_at;
    bool host_tried;
};

/* Where path stands against the prefix "<dir>/": <0 before, 0 inside, >0 after. */
static int prefix_cmp(const char *path, const char *dir, size_t dlen)
{
    int c = strncmp(path, dir, dlen);
    if (c)
        return c;
    return (int)(unsigned char)path[dlen] - '/';
}

/* First entry index at or after which prefix_cmp is >= 0 (strict: > 0). */
static uint32_t bound(const struct seg *s, const char *dir, size_t dlen, bool strict)
{
    uint32_t lo = 0, hi = s->h->n_entries;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = prefix_cmp(seg_path(s, mid), dir, dlen);
        if (strict ? c <= 0 : c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void lister_init(struct lister *L, uint32_t dir, enum emu_root root)
{
    const struct seg *s = emu_seg();
    const char *p = seg_path(s, dir);
    size_t n = strlen(p);
    memset(L, 0, sizeof *L);
    L->dir = dir;
    L->root = root;
    L->lo = bound(s, p, n, false);
    L->hi = bound(s, p, n, true);
    L->host_base = s->h->n_entries + 3;
    L->overlay = root == EMU_ROOT_SYS && !emu_owned(s, dir);
}

/* Moves to a position from telldir, d_off or a descriptor offset; unknown ones mean the end. */
static void lister_seek(struct lister *L, int64_t pos)
{
    L->host_done = false;
    if (pos <= 0)
        L->next = 0;
    else if (pos < 2 || (pos - 2 <= (int64_t)L->hi))
        L->next = (uint32_t)pos;
    else if (L->overlay && pos >= L->host_base && pos <= UINT32_MAX)
        L->next = (uint32_t)pos;
    else if (L->overlay)
        L->next = L->host_base, L->host_done = true;
    else
        L->next = L->hi + 2;
}

static void lister_open_host(struct lister *L)
{
    if (L->host_tried)
        return;
    L->host_tried = true;
    char path[PATH_MAX];
    if (emu_agent_path(L->dir, L->root, path, sizeof path) < 0)
        return;
    int saved = errno;
    L->host = REAL(opendir)(path); /* NULL: the host has no such directory, nothing to add */
    L->host_at = 0;
    errno = saved;
}

static void lister_close_host(struct lister *L)
{
    if (L->host) {
        int saved = errno;
        REAL(closedir)(L->host);
        errno = saved;
        L->host = NULL;
    }
}

/* The host's entry number k (counting from 0), or NULL at its end. */
static struct dirent64 *host_entry(struct lister *L, uint32_t k)
{
    lister_open_host(L);
    if (!L->host)
        return NULL;
    if (L->host_at > k) {
        REAL(rewinddir)(L->host);
        L->host_at = 0;
    }
    for (; L->host_at < k; L->host_at++)
        if (!REAL(readdir64)(L->host))
            return NULL;
    struct dirent64 *d = REAL(readdir64)(L->host);
    if (d)
        L->host_at++;
    return d;
}

static bool node_has(const struct seg *s, const struct lister *L, const char *name)
{
    char path[SEG_PATH_MAX + NAME_MAX + 2];
    int n = snprintf(path, sizeof path, "%s/%s", seg_path(s, L->dir), name);
    return n > 0 && (size_t)n < sizeof path && seg_lookup(s, path, (size_t)n) != SEG_NONE;
}

static uint64_t entry_ino(uint32_t e, enum emu_root root)
{
    struct stat st;
    emu_stat(e, root, &st);
    return st.st_ino;
}

/* ".." of the node's top directory is the host's root. */
static uint64_t parent_ino(const struct seg *s, const struct lister *L)
{
    uint32_t p = s->entries[L->dir].parent;
    if (p < L->dir && s->entries[p].kind == SEG_DIR && strchr(seg_path(s, L->dir), '/'))
        return entry_ino(p, L->root);
    struct stat st;
    int saved = errno;
    uint64_t ino = REAL(stat)("/", &st) == 0 ? st.st_ino : 2;
    errno = saved;
    return ino;
}

static void set_name(struct listing *out, const char *name, size_t len)
{
    memcpy(out->name, name, len);
    out->name[len] = 0;
    out->namelen = len;
}

static unsigned char kind_type(uint8_t kind)
{
    return kind == SEG_DIR ? DT_DIR : kind == SEG_LINK ? DT_LNK : kind == SEG_FILE ? DT_REG : DT_UNKNOWN;
}

/* The next entry of the listing into out; false at its end (errno untouched). */
static bool lister_next(struct lister *L, struct listing *out)
{
    const struct seg *s = emu_seg();
    if (L->next == 0) {
        set_name(out, ".", 1);
        out->ino = entry_ino(L->dir, L->root);
        out->type = DT_DIR;
        out->off = L->next = 1;
        return true;
    }
    if (L->next == 1) {
        set_name(out, "..", 2);
        out->ino = parent_ino(s, L);
        out->type = DT_DIR;
        out->off = L->next = 2;
        return true;
    }
    if (L->next < L->host_base) {
        size_t dlen = strlen(seg_path(s, L->dir));
        for (uint32_t i = L->next - 2 < L->lo ? L->lo : L->next - 2; i < L->hi; i++) {
            const struct seg_entry *e = &s->entries[i];
            if (e->parent != L->dir || (e->flags & SEG_F_ABSENT))
                continue; /* not a child, or a name the node does not have */
            const char *name = seg_path(s, i) + dlen + 1;
            size_t len = strlen(name);
            if (len > NAME_MAX)
                continue;
            set_name(out, name, len);
            out->ino = entry_ino(i, L->root);
            out->type = kind_type(e->kind);
            out->off = L->next = i + 3;
            return true;
        }
        if (!L->overlay) {
            L->next = L->hi + 2;
            return false;
        }
        L->next = L->host_base;
    }
    while (!L->host_done) {
        struct dirent64 *d = host_entry(L, L->next - L->host_base);
        if (!d) {
            L->host_done = true;
            break;
        }
        L->next++;
        const char *name = d->d_name;
        if (!strcmp(name, ".") || !strcmp(name, "..") || node_has(s, L, name))
            continue;
        set_name(out, name, strnlen(name, NAME_MAX));
        out->ino = d->d_ino;
        out->type = d->d_type;
        out->off = L->next;
        return true;
    }
    return false;
}

static unsigned short rec_len(size_t name_off, size_t namelen)
{
    return (unsigned short)((name_off + namelen + 1 + 7) & ~(size_t)7);
}

static void to_dirent(const struct listing *l, struct dirent *d)
{
    d->d_ino = l->ino;
    d->d_off = l->off;
    d->d_reclen = rec_len(offsetof(struct dirent, d_name), l->namelen);
    d->d_type = l->type;
    memcpy(d->d_name, l->name, l->namelen + 1);
}

static void to_dirent64(const struct listing *l, struct dirent64 *d)
{
    d->d_ino = l->ino;
    d->d_off = l->off;
    d->d_reclen = rec_len(offsetof(struct dirent64, d_name), l->namelen);
    d->d_type = l->type;
    memcpy(d->d_name, l->name, l->namelen + 1);
}

/* --- emulated streams -------------------------------------------------------------------------- */

struct emu_dir {
    _Atomic int busy;
    int fd;                     /* fdopendir's descriptor, or the one dirfd() opened; -1 none */
    struct lister L;
    union {
        struct dirent d;
        struct dirent64 d64;
    } out;
};

static _Atomic(struct emu_dir *) slab;
static _Atomic uint32_t slab_hint;

static struct emu_dir *slab_get(void)
{
    struct emu_dir *p = atomic_load_explicit(&slab, memory_order_acquire);
    if (p)
        return p;
    size_t size = sizeof *p * DIR_SLOTS;
    void *m = REAL(mmap)(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    /* Two first callers race without a lock: the loser gives its mapping back. */
    struct emu_dir *none = NULL;
    if (!atomic_compare_exchange_strong(&slab, &none, (struct emu_dir *)m)) {
        munmap(m, size);
        return none;
    }
    return m;
}

/* The stream d when it is ours, else NULL. */
static struct emu_dir *mine(DIR *d)
{
    struct emu_dir *p = atomic_load_explicit(&slab, memory_order_acquire);
    uintptr_t a = (uintptr_t)d, b = (uintptr_t)p;
    if (!p || a < b || a >= b + sizeof *p * DIR_SLOTS || (a - b) % sizeof *p)
        return NULL;
    return (struct emu_dir *)d;
}

static DIR *stream_open(uint32_t dir, enum emu_root root, int fd, int64_t pos)
{
    struct emu_dir *slots = slab_get();
    if (!slots) {
        errno = ENOMEM;
        return NULL;
    }
    uint32_t start = atomic_load_explicit(&slab_hint, memory_order_relaxed);
    for (uint32_t i = 0; i < DIR_SLOTS; i++) {
        struct emu_dir *d = &slots[(start + i) % DIR_SLOTS];
        int zero = 0;
        if (atomic_load_explicit(&d->busy, memory_order_relaxed) ||
            !atomic_compare_exchange_strong(&d->busy, &zero, 1))
            continue;
        atomic_store_explicit(&slab_hint, (start + i + 1) % DIR_SLOTS, memory_order_relaxed);
        d->fd = fd;
        lister_init(&d->L, dir, root);
        lister_seek(&d->L, pos);
        if (d->L.overlay)
            lister_open_host(&d->L); /* here, so that readdir never allocates */
        return (DIR *)d;
    }
    errno = EMFILE;
    return NULL;
}

/* A stream with a descriptor keeps the descriptor's offset where the stream stands, as
 * reading a kernel DIR moves its descriptor (getdents64 and fdopendir then agree with it). */
static void stream_sync(struct emu_dir *d)
{
    struct emu_file *f = d->fd >= 0 ? fdt_get(d->fd) : NULL;
    if (f) {
        f->dir_next = d->L.next;
        f->dir_host_done = d->L.host_done;
        atomic_store(&f->pos, (int64_t)d->L.next);
    }
}

static DIR *dir_opendir(const char *path)
{
    uint32_t entry;
    enum emu_root root = EMU_ROOT_SYS;
    int rc = emu_path(path, true, &entry, &root);
    if (rc == EMU_PASS)
        return REAL(opendir)(path);
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
    struct emu_dir *d = mine(dp);
    if (!d)
        return REAL(readdir)(dp);
    struct listing l;
    if (!lister_next(&d->L, &l))
        return NULL;
    stream_sync(d);
    to_dirent(&l, &d->out.d);
    return &d->out.d;
}

static struct dirent64 *dir_readdir64(DIR *dp)
{
    struct emu_dir *d = mine(dp);
    if (!d)
        return REAL(readdir64)(dp);
    struct listing l;
    if (!lister_next(&d->L, &l))
        return NULL;
    stream_sync(d);
    to_dirent64(&l, &d->out.d64);
    return &d->out.d64;
}

static int dir_closedir(DIR *dp)
{
    struct emu_dir *d = mine(dp);
    if (!d)
        return REAL(closedir)(dp);
    lister_close_host(&d->L);
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
    struct emu_dir *d = mine(dp);
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
    struct emu_dir *d = mine(dp);
    if (!d) {
        REAL(rewinddir)(dp);
        return;
    }
    lister_seek(&d->L, 0);
    stream_sync(d);
}

EXPORT long telldir(DIR *dp)
{
    struct emu_dir *d = mine(dp);
    return d ? (long)d->L.next : REAL(telldir)(dp);
}

EXPORT void seekdir(DIR *dp, long pos)
{
    struct emu_dir *d = mine(dp);
    if (!d) {
        REAL(seekdir)(dp, pos);
        return;
    }
    lister_seek(&d->L, pos);
    stream_sync(d);
}

/* --- getdents64 -------------------------------------------------------------------------------- */

/* Records in the kernel's struct linux_dirent64 layout, which glibc's struct dirent64 shares. */
static ssize_t emu_getdents64(struct emu_file *f, void *buf, size_t n)
{
    if (emu_seg()->entries[f->entry].kind != SEG_DIR)
        return shim_fail(ENOTDIR);
    struct lister L;
    lister_init(&L, f->entry, f->root);
    int64_t pos = atomic_load(&f->pos);
    if (pos == (int64_t)f->dir_next) {
        L.next = f->dir_next;
        L.host_done = f->dir_host_done;
    } else {
        lister_seek(&L, pos); /* an lseek moved the descriptor */
    }
    size_t used = 0;
    const size_t name_off = offsetof(struct dirent64, d_name);
    for (;;) {
        uint32_t was = L.next;
        bool was_done = L.host_done;
        struct listing l;
        if (!lister_next(&L, &l))
            break;
        unsigned short reclen = rec_len(name_off, l.namelen);
        if (used + reclen > n) {
            L.next = was, L.host_done = was_done; /* it goes first in the next call */
            if (!used) {
                lister_close_host(&L);
                return shim_fail(EINVAL);
            }
            break;
        }
        char *r = (char *)buf + used;
        uint64_t ino = l.ino;
        int64_t off = l.off;
        memcpy(r + offsetof(struct dirent64, d_ino), &ino, sizeof ino);
        memcpy(r + offsetof(struct dirent64, d_off), &off, sizeof off);
        memcpy(r + offsetof(struct dirent64, d_reclen), &reclen, sizeof reclen);
        memcpy(r + offsetof(struct dirent64, d_type), &l.type, 1);
        memcpy(r + name_off, l.name, l.namelen);
        memset(r + name_off + l.namelen, 0, reclen - name_off - l.namelen);
        used += reclen;
    }
    lister_close_host(&L);
    f->dir_next = L.next;
    f->dir_host_done = L.host_done;
    atomic_store(&f->pos, (int64_t)L.next);
    return (ssize_t)used;
}

EXPORT ssize_t getdents64(int fd, void *buf, size_t n)
{
    struct emu_file *f = fdt_get(fd);
    return f ? emu_getdents64(f, buf, n) : REAL(getdents64)(fd, buf, n);
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
        struct lister L;                                                                           \
        lister_init(&L, entry, root);                                                              \
        struct DIRENT **v = NULL;                                                                  \
        size_t cnt = 0, cap = 0;                                                                   \
        struct listing l;                                                                          \
        struct DIRENT d;                                                                           \
        while (lister_next(&L, &l)) {                                                              \
            fill(&l, &d);                                                                          \
            if (sel && !sel(&d))                                                                   \
                continue;                                                                          \
            if (cnt == cap) {                                                                      \
                size_t ncap = cap ? cap * 2 : 16;                                                  \
                struct DIRENT **nv = realloc(v, ncap * sizeof *nv);                                \
                if (!nv)                                                                           \
                    goto nomem;                                                                    \
                v = nv, cap = ncap;                                                                \
            }                                                                                      \
            size_t size = offsetof(struct DIRENT, d_name) + l.namelen + 1;                         \
            if (!(v[cnt] = malloc(size)))                                                          \
                goto nomem;                                                                        \
            memcpy(v[cnt++], &d, size);                                                            \
        }                                                                                          \
        lister_close_host(&L);                                                                     \
        if (cmp && cnt > 1) {                                                                      \
            struct name##_order o = {cmp};                                                         \
            qsort_r(v, cnt, sizeof *v, name##_compare, &o);                                        \
        }                                                                                          \
        *list = v;                                                                                 \
        errno = saved;                                                                             \
        return (int)cnt;                                                                           \
    nomem:                                                                                         \
        lister_close_host(&L);                                                                     \
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

static int glob_stat(const char *restrict path, struct stat *restrict st)
{
    int rc = glob_emu_stat(path, true, st);
    return rc != EMU_PASS ? rc : REAL(stat)(path, st);
}

static int glob_lstat(const char *restrict path, struct stat *restrict st)
{
    int rc = glob_emu_stat(path, false, st);
    return rc != EMU_PASS ? rc : REAL(lstat)(path, st);
}

static int glob_stat64(const char *restrict path, struct stat64 *restrict st)
{
    struct stat s;
    int rc = glob_emu_stat(path, true, &s);
    if (rc == EMU_PASS)
        return REAL(stat64)(path, st);
    if (rc == 0)
        emu_stat_to64(&s, st);
    return rc;
}

static int glob_lstat64(const char *restrict path, struct stat64 *restrict st)
{
    struct stat s;
    int rc = glob_emu_stat(path, false, &s);
    if (rc == EMU_PASS)
        return REAL(lstat64)(path, st);
    if (rc == 0)
        emu_stat_to64(&s, st);
    return rc;
}

/* A caller that brings its own directory functions keeps them; otherwise libc's glob runs
 * with ours (every other flag as the caller gave it), and the flag is taken out of gl_flags
 * again so the caller sees what it asked for. */
EXPORT int glob(const char *pattern, int flags, int (*errfn)(const char *, int), glob_t *g)
{
    if ((flags & GLOB_ALTDIRFUNC) || !emu_seg())
        return REAL(glob)(pattern, flags, errfn, g);
    g->gl_opendir = glob_opendir;
    g->gl_readdir = glob_readdir;
    g->gl_closedir = glob_closedir;
    g->gl_stat = glob_stat;
    g->gl_lstat = glob_lstat;
    int rc = REAL(glob)(pattern, flags | GLOB_ALTDIRFUNC, errfn, g);
    g->gl_flags &= ~GLOB_ALTDIRFUNC;
    return rc;
}

EXPORT int glob64(const char *pattern, int flags, int (*errfn)(const char *, int), glob64_t *g)
{
    if ((flags & GLOB_ALTDIRFUNC) || !emu_seg())
        return REAL(glob64)(pattern, flags, errfn, g);
    g->gl_opendir = glob_opendir;
    g->gl_readdir = glob_readdir64;
    g->gl_closedir = glob_closedir;
    g->gl_stat = glob_stat64;
    g->gl_lstat = glob_lstat64;
    int rc = REAL(glob64)(pattern, flags | GLOB_ALTDIRFUNC, errfn, g);
    g->gl_flags &= ~GLOB_ALTDIRFUNC;
    return rc;
}
