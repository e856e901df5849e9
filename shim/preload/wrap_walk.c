/* wrap_walk: nftw and ftw on the node's tree. glibc walks with internal calls no wrapper sees,
 * so a walk that starts at an emulated path is done here, with the shim's own (exported)
 * opendir/readdir/lstat/stat, in the order and with the type flags glibc gives: a directory
 * before its contents (after them with FTW_DEPTH), FTW_SL for a link under FTW_PHYS, FTW_D /
 * FTW_DP / FTW_F / FTW_NS, and a non-zero callback result stops the walk and is returned.
 * FTW_CHDIR is honoured with the shim's chdir (the emulated working directory): each
 * directory's contents are reported from inside it. Without FTW_PHYS a directory already walked
 * (the same device and inode, reached again through a link such as a device's `subsystem` or
 * `device`) is skipped without a report, as glibc's find_object/add_object do, so a walk of
 * the driver model's cycles ends as on the kernel's sysfs. A walk
 * starting anywhere else is glibc's. */
#include "emu.h"
#include "real.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

struct walk {
    int (*fn)(const char *, const struct stat *, int, struct FTW *);
    int (*fn64)(const char *, const struct stat64 *, int, struct FTW *);
    int (*old)(const char *, const struct stat *, int);
    int (*old64)(const char *, const struct stat64 *, int);
    int flags;
    /* the directories walked (without FTW_PHYS): an open-addressed set of dev/ino keys, 0 free */
    uint64_t *seen;
    size_t nseen, cap;
};

static uint64_t dir_key(const struct stat *st)
{
    uint64_t k = ((uint64_t)st->st_dev << 40 ^ (uint64_t)st->st_ino) + 1;
    return k ? k : 1; /* 0 marks a free slot */
}

/* Whether the directory was walked already; records it when not. -1 when out of memory. */
static int seen_before(struct walk *w, const struct stat *st)
{
    uint64_t k = dir_key(st);
    if (2 * (w->nseen + 1) > w->cap) { /* keep it at most half full */
        size_t cap = w->cap ? 2 * w->cap : 256;
        uint64_t *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < w->cap; i++)
            if (w->seen[i])
                for (size_t j = (size_t)(w->seen[i] * 0x9E3779B97F4A7C15ull) & (cap - 1);; j = (j + 1) & (cap - 1))
                    if (!t[j]) {
                        t[j] = w->seen[i];
                        break;
                    }
        free(w->seen);
        w->seen = t;
        w->cap = cap;
    }
    for (size_t j = (size_t)(k * 0x9E3779B97F4A7C15ull) & (w->cap - 1);; j = (j + 1) & (w->cap - 1)) {
        if (w->seen[j] == k)
            return 1;
        if (!w->seen[j]) {
            w->seen[j] = k;
            w->nseen++;
            return 0;
        }
    }
}

static int call(const struct walk *w, const char *path, const struct stat *st, int type, int base, int level)
{
    struct FTW f = {.base = base, .level = level};
    if (w->fn)
        return w->fn(path, st, type, &f);
    struct stat64 s64;
    emu_stat_to64(st, &s64);
    if (w->fn64)
        return w->fn64(path, &s64, type, &f);
    if (type == FTW_DP || type == FTW_SL || type == FTW_SLN)
        type = type == FTW_DP ? FTW_D : FTW_F; /* ftw knows fewer kinds */
    return w->old ? w->old(path, st, type) : w->old64(path, &s64, type);
}

static int walk(struct walk *w, char *path, size_t len, int level)
{
    struct stat st;
    bool phys = w->flags & FTW_PHYS;
    int base = (int)(strrchr(path, '/') && len > 1 ? strrchr(path, '/') - path + 1 : 0);
    if ((phys ? lstat(path, &st) : stat(path, &st)) != 0) {
        if (!phys && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            return call(w, path, &st, FTW_SLN, base, level);
        memset(&st, 0, sizeof st);
        return call(w, path, &st, FTW_NS, base, level);
    }
    if (S_ISLNK(st.st_mode))
        return call(w, path, &st, FTW_SL, base, level);
    if (!S_ISDIR(st.st_mode))
        return call(w, path, &st, FTW_F, base, level);
    int rc;
    if (!phys && (rc = seen_before(w, &st)) != 0) {
        if (rc < 0)
            errno = ENOMEM;
        return rc > 0 ? 0 : -1;
    }
    if (!(w->flags & FTW_DEPTH) && (rc = call(w, path, &st, FTW_D, base, level)))
        return rc;
    DIR *d = opendir(path);
    if (!d)
        return call(w, path, &st, FTW_DNR, base, level);
    if ((w->flags & FTW_CHDIR) && chdir(path) != 0) { /* the contents are reported from inside */
        closedir(d);
        return call(w, path, &st, FTW_DNR, base, level);
    }
    struct dirent *e;
    rc = 0;
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        size_t n = strlen(e->d_name);
        if (len + 1 + n >= PATH_MAX) {
            rc = -1;
            errno = ENAMETOOLONG;
            break;
        }
        size_t at = len;
        if (path[len - 1] != '/')
            path[at++] = '/';
        memcpy(path + at, e->d_name, n + 1);
        rc = walk(w, path, at + n, level + 1);
        path[len] = 0;
    }
    closedir(d);
    if (w->flags & FTW_CHDIR) { /* back to where this directory is reported from */
        char parent[PATH_MAX];
        size_t pl = base > 1 ? (size_t)base - 1 : (size_t)base;
        memcpy(parent, path, pl);
        parent[pl] = 0;
        if (pl && chdir(parent) != 0 && !rc)
            rc = -1;
    }
    if (!rc && (w->flags & FTW_DEPTH))
        rc = call(w, path, &st, FTW_DP, base, level);
    return rc;
}

/* -1 when the walk is not ours (start outside the node's tree), else its result. */
static int start(const char *dir, struct walk *w, bool *ours)
{
    uint32_t e;
    enum emu_root root;
    int rc = emu_path(dir, !(w->flags & FTW_PHYS), &e, &root);
    *ours = rc != EMU_PASS;
    if (!*ours)
        return -1;
    if (rc) {
        errno = rc;
        return -1;
    }
    char path[PATH_MAX];
    size_t n = strlen(dir);
    if (n >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, n + 1);
    char cwd[PATH_MAX];
    bool moved = (w->flags & FTW_CHDIR) && getcwd(cwd, sizeof cwd);
    int r = walk(w, path, n, 0);
    free(w->seen);
    if (moved) {
        int saved = errno;
        if (chdir(cwd) != 0)
            errno = saved;
    }
    return r;
}

EXPORT int nftw(const char *dir, int (*fn)(const char *, const struct stat *, int, struct FTW *), int nfd, int flags)
{
    struct walk w = {.fn = fn, .flags = flags};
    bool ours;
    int rc = start(dir, &w, &ours);
    return ours ? rc : REAL(nftw)(dir, fn, nfd, flags);
}

EXPORT int nftw64(const char *dir, int (*fn)(const char *, const struct stat64 *, int, struct FTW *), int nfd,
                  int flags)
{
    struct walk w = {.fn64 = fn, .flags = flags};
    bool ours;
    int rc = start(dir, &w, &ours);
    return ours ? rc : REAL(nftw64)(dir, fn, nfd, flags);
}

EXPORT int ftw(const char *dir, int (*fn)(const char *, const struct stat *, int), int nfd)
{
    struct walk w = {.old = fn};
    bool ours;
    int rc = start(dir, &w, &ours);
    return ours ? rc : REAL(ftw)(dir, fn, nfd);
}

EXPORT int ftw64(const char *dir, int (*fn)(const char *, const struct stat64 *, int), int nfd)
{
    struct walk w = {.old64 = fn};
    bool ours;
    int rc = start(dir, &w, &ours);
    return ours ? rc : REAL(ftw64)(dir, fn, nfd);
}
