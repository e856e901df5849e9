/* emu_dir: listings of emulated directories; see emu_dir.h. */
#include "emu_dir.h"

#include "emu_hide.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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
    uint32_t lo = 0, hi = s->n_entries;
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

void emu_dir_open(struct emu_listing *L, uint32_t dir, enum emu_root root)
{
    const struct seg *s = emu_seg();
    const char *p = seg_path(s, dir);
    L->dir = dir;
    L->root = root;
    L->dlen = strlen(p);
    L->lo = bound(s, p, L->dlen, false);
    L->hi = bound(s, p, L->dlen, true);
    L->host_base = s->n_entries + 3;
    L->overlay = root != EMU_ROOT_HOST_SYS && !emu_owned(s, dir);
    L->next = 0;
    L->host_tried = false;
    L->host_fd = -1;
}

void emu_dir_seek(struct emu_listing *L, int64_t pos)
{
    if (pos <= 0)
        L->next = 0;
    else if (pos <= (int64_t)L->hi + 2)
        L->next = (uint32_t)pos;
    else if (!L->overlay)
        L->next = L->hi + 2;
    else if (pos >= L->host_base && pos <= UINT32_MAX)
        L->next = (uint32_t)pos;
    else
        L->next = UINT32_MAX; /* past any host directory's end */
}

void emu_dir_close(struct emu_listing *L)
{
    if (L->host_fd >= 0) {
        int saved = errno;
        syscall(SYS_close, L->host_fd);
        errno = saved;
        L->host_fd = -1;
    }
}

/* The host's raw entry number k (counting from 0), or NULL at its end. */
static const struct dirent64 *host_entry(struct emu_listing *L, uint32_t k)
{
    int saved = errno;
    if (!L->host_tried) {
        L->host_tried = true;
        char path[PATH_MAX];
        if (emu_agent_path(L->dir, L->root, path, sizeof path) >= 0)
            /* -1: the host has no such directory, nothing to add */
            L->host_fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        L->host_at = L->buf_at = L->buf_len = 0;
    }
    if (L->host_fd >= 0 && L->host_at > k && syscall(SYS_lseek, L->host_fd, 0L, SEEK_SET) == 0)
        L->host_at = L->buf_at = L->buf_len = 0;
    const struct dirent64 *d = NULL;
    while (!d && L->host_fd >= 0 && L->host_at <= k) {
        if (L->buf_at == L->buf_len) {
            long n = syscall(SYS_getdents64, L->host_fd, L->buf, sizeof L->buf);
            if (n <= 0)
                break;
            L->buf_at = 0;
            L->buf_len = (uint32_t)n;
        }
        const struct dirent64 *r = (const struct dirent64 *)(L->buf + L->buf_at);
        L->buf_at += r->d_reclen;
        if (L->host_at++ == k)
            d = r;
    }
    errno = saved;
    return d;
}

static bool node_has(const struct seg *s, const struct emu_listing *L, const char *name)
{
    char path[SEG_PATH_MAX + NAME_MAX + 2];
    int n = snprintf(path, sizeof path, "%s/%s", seg_path(s, L->dir), name);
    if (n <= 0 || (size_t)n >= sizeof path)
        return false;
    if (seg_lookup(s, path, (size_t)n) != SEG_NONE)
        return true;
    uint32_t e; /* a slot's current name (a job's pid under /proc) */
    return (s->entries[L->dir].flags & SEG_F_SLOTS) && seg_resolve(s, path, (size_t)n, false, &e) == 0;
}

static uint64_t entry_ino(uint32_t e, enum emu_root root)
{
    struct stat st;
    emu_stat(e, root, &st);
    return st.st_ino;
}

/* ".." of the node's top directory is the host's root. */
static uint64_t parent_ino(const struct seg *s, const struct emu_listing *L)
{
    uint32_t p = s->entries[L->dir].parent;
    if (p < L->dir && s->entries[p].kind == SEG_DIR && strchr(seg_path(s, L->dir), '/'))
        return entry_ino(p, L->root);
    struct statx sx;
    int saved = errno;
    long rc = syscall(SYS_statx, AT_FDCWD, "/", 0, STATX_INO, &sx);
    errno = saved;
    return rc == 0 ? sx.stx_ino : 2;
}

static unsigned char kind_type(uint8_t kind, enum emu_root root)
{
    if (kind == SEG_FILE)
        return root == EMU_ROOT_DEV ? DT_CHR : DT_REG; /* emu_stat's character devices */
    return kind == SEG_DIR ? DT_DIR : kind == SEG_LINK ? DT_LNK : DT_UNKNOWN;
}

/* A host entry the listing leaves out: one the node has, or in /dev one of a device class the
 * node alone answers for (emu_hide.h). */
static bool host_hidden(const struct seg *s, const struct emu_listing *L, const char *name)
{
    if (L->root == EMU_ROOT_DEV && L->dlen == 3 && emu_dev_class(name, strlen(name)))
        return true;
    return node_has(s, L, name);
}

bool emu_dir_next(struct emu_listing *L, struct emu_dirent *out)
{
    const struct seg *s = emu_seg();
    if (L->next == 0) {
        L->next = 1;
        *out = (struct emu_dirent){entry_ino(L->dir, L->root), L->next, DT_DIR, ".", 1};
        return true;
    }
    if (L->next == 1) {
        L->next = 2;
        *out = (struct emu_dirent){parent_ino(s, L), L->next, DT_DIR, "..", 2};
        return true;
    }
    if (L->next < L->host_base) {
        for (uint32_t i = L->next - 2 < L->lo ? L->lo : L->next - 2; i < L->hi; i++) {
            const struct seg_entry *e = &s->entries[i];
            if (e->parent != L->dir || (e->flags & SEG_F_ABSENT))
                continue; /* not a child, or a name the node does not have */
            const char *name = seg_path(s, i) + L->dlen + 1;
            size_t len;
            if (e->flags & SEG_F_SLOT) { /* listed by its current name; absent: not at all */
                len = seg_slot_name(s, i, L->slot_name, sizeof L->slot_name);
                if (!len)
                    continue;
                name = L->slot_name;
            } else {
                len = strlen(name);
            }
            if (len > NAME_MAX)
                continue;
            L->next = i + 3;
            *out = (struct emu_dirent){entry_ino(i, L->root), L->next, kind_type(e->kind, L->root), name, len};
            return true;
        }
        if (!L->overlay) {
            L->next = L->hi + 2;
            return false;
        }
        L->next = L->host_base;
    }
    const struct dirent64 *d;
    while ((d = host_entry(L, L->next - L->host_base))) {
        L->next++;
        const char *name = d->d_name;
        if (!strcmp(name, ".") || !strcmp(name, "..") || host_hidden(s, L, name))
            continue;
        *out = (struct emu_dirent){d->d_ino, L->next, d->d_type, name, strnlen(name, NAME_MAX)};
        return true;
    }
    return false;
}

ssize_t emu_dir_getdents64(uint32_t dir, enum emu_root root, int flags, int64_t *pos, void *buf, size_t n)
{
    if (flags & O_PATH)
        return -EBADF;
    if (emu_seg()->entries[dir].kind != SEG_DIR)
        return -ENOTDIR;
    struct emu_listing L;
    emu_dir_open(&L, dir, root);
    emu_dir_seek(&L, *pos);
    const size_t name_off = offsetof(struct dirent64, d_name);
    size_t used = 0;
    bool full = false;
    for (;;) {
        uint32_t was = L.next;
        struct emu_dirent e;
        if (!emu_dir_next(&L, &e))
            break;
        unsigned short reclen = (unsigned short)((name_off + e.namelen + 1 + 7) & ~(size_t)7);
        if (used + reclen > n) {
            L.next = was; /* it goes first in the next call */
            full = true;
            break;
        }
        char *r = (char *)buf + used;
        memcpy(r + offsetof(struct dirent64, d_ino), &e.ino, sizeof e.ino);
        memcpy(r + offsetof(struct dirent64, d_off), &e.off, sizeof e.off);
        memcpy(r + offsetof(struct dirent64, d_reclen), &reclen, sizeof reclen);
        memcpy(r + offsetof(struct dirent64, d_type), &e.type, 1);
        memcpy(r + name_off, e.name, e.namelen);
        memset(r + name_off + e.namelen, 0, reclen - name_off - e.namelen);
        used += reclen;
    }
    emu_dir_close(&L);
    if (full && !used)
        return -EINVAL;
    *pos = L.next;
    return (ssize_t)used;
}
