/* trace_file: a trace read only from beneath the operator's trace directory; see trace_file.h. */
#include "trace_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct out {
    char *p;
    size_t len, cap, max;
    unsigned mode;
};

/* Opens name in the directory at at without following a link, and only when it is a regular
 * file (or, with dir_ok, a directory): the type is looked at through an O_PATH descriptor
 * first, so a FIFO or device is never opened for reading. -1 with the status in *st. */
static int open_leaf(int at, const char *name, bool dir_ok, struct stat *sb, enum trace_file_status *st, int *err)
{
    int p = openat(at, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (p < 0 || fstat(p, sb)) {
        *err = errno;
        *st = errno == ENOENT ? TRACE_FILE_MISSING : errno == ELOOP ? TRACE_FILE_REFUSED : TRACE_FILE_ERROR;
        if (p >= 0)
            close(p);
        return -1;
    }
    close(p);
    if (S_ISLNK(sb->st_mode)) {
        *err = ELOOP;
        *st = TRACE_FILE_REFUSED;
        return -1;
    }
    if (!S_ISREG(sb->st_mode) && !(dir_ok && S_ISDIR(sb->st_mode))) {
        *err = 0;
        *st = TRACE_FILE_NOT_REGULAR;
        return -1;
    }
    /* O_NONBLOCK: had it become a FIFO since, the open returns at once (the fstat below says) */
    int fd = openat(at, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
                                   (S_ISDIR(sb->st_mode) ? O_DIRECTORY : 0));
    struct stat again;
    if (fd < 0 || fstat(fd, &again) || again.st_dev != sb->st_dev || again.st_ino != sb->st_ino) {
        *err = fd < 0 ? errno : EAGAIN;
        *st = fd < 0 && errno == ELOOP ? TRACE_FILE_REFUSED : TRACE_FILE_ERROR;
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Appends a regular file's bytes, at most o->max in all. */
static enum trace_file_status slurp(int fd, const struct stat *sb, struct out *o, int *err)
{
    if ((size_t)sb->st_size > o->max - o->len)
        return TRACE_FILE_TOO_BIG;
    o->mode &= (unsigned)sb->st_mode & 0777;
    for (;;) {
        if (o->cap - o->len < 65536 + 2) {
            size_t cap = o->cap ? o->cap * 2 : 1 << 16;
            while (cap - o->len < 65536 + 2)
                cap *= 2;
            char *p = realloc(o->p, cap);
            if (!p) {
                *err = ENOMEM;
                return TRACE_FILE_ERROR;
            }
            o->p = p;
            o->cap = cap;
        }
        ssize_t n = read(fd, o->p + o->len, 65536);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *err = errno;
            return TRACE_FILE_ERROR;
        }
        if (n == 0)
            break;
        o->len += (size_t)n;
        if (o->len > o->max) /* it grew while being read */
            return TRACE_FILE_TOO_BIG;
    }
    if (o->len && o->p[o->len - 1] != '\n')
        o->p[o->len++] = '\n'; /* files of a directory are concatenated line by line */
    o->p[o->len] = 0;
    return TRACE_FILE_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.jsonl of the directory fd, in name order, each a regular file opened like the leaf. */
static enum trace_file_status read_dir(int fd, struct out *o, char *bad, size_t badlen, int *err)
{
    int dfd = dup(fd);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        *err = errno;
        if (dfd >= 0)
            close(dfd);
        return TRACE_FILE_ERROR;
    }
    char **names = NULL;
    int n = 0, cap = 0;
    enum trace_file_status st = TRACE_FILE_OK;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l <= 6 || strcmp(de->d_name + l - 6, ".jsonl"))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **p = realloc(names, sizeof *names * (size_t)cap);
            if (!p) {
                st = TRACE_FILE_ERROR;
                *err = ENOMEM;
                break;
            }
            names = p;
        }
        if (!(names[n] = strdup(de->d_name))) {
            st = TRACE_FILE_ERROR;
            *err = ENOMEM;
            break;
        }
        n++;
    }
    closedir(d);
    if (!st && !n) {
        st = TRACE_FILE_NOT_REGULAR;
        *err = 0;
        snprintf(bad, badlen, "(no *.jsonl in it)");
    }
    if (names)
        qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        if (!st) {
            struct stat sb;
            int f = open_leaf(fd, names[i], false, &sb, &st, err);
            if (f >= 0) {
                st = slurp(f, &sb, o, err);
                close(f);
            }
            if (st)
                snprintf(bad, badlen, "%s", names[i]);
        }
        free(names[i]);
    }
    free(names);
    return st;
}

enum trace_file_status trace_file_read(const char *dir, const char *name, size_t max, char **text, size_t *len,
                                       unsigned *mode, char *err, size_t errlen)
{
    *text = NULL;
    *len = 0;
    if (!dir || !*dir) {
        snprintf(err, errlen, "tracePath is off: the engine reads trace files only from a directory its operator "
                 "allows (hwemu serve --trace-dir DIR, or SIM_TRACE_DIR); put the trace there, or send the trace "
                 "JSONL itself as the body");
        return TRACE_FILE_REFUSED;
    }
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    const char *rel = name;
    if (name[0] == '/') { /* an absolute name is accepted when it is under the directory as written */
        if (strncmp(name, dir, dl) || name[dl] != '/') {
            snprintf(err, errlen, "tracePath %s is not inside the trace directory %.*s: name a file there (a path "
                     "relative to it)", name, (int)dl, dir);
            return TRACE_FILE_REFUSED;
        }
        rel = name + dl + 1;
    }
    char path[4096];
    if (snprintf(path, sizeof path, "%s", rel) >= (int)sizeof path) {
        snprintf(err, errlen, "tracePath is longer than %zu bytes", sizeof path - 1);
        return TRACE_FILE_REFUSED;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* the operator's own choice: followed */
    if (fd < 0) {
        snprintf(err, errlen, "the trace directory %.*s cannot be opened: %s", (int)dl, dir, strerror(errno));
        return TRACE_FILE_ERROR;
    }
    /* every component but the last: a real directory (O_NOFOLLOW), never ".." */
    char *comp[512];
    int nc = 0;
    for (char *save = NULL, *c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (!strcmp(c, "."))
            continue;
        if (!strcmp(c, "..") || nc == 512) {
            close(fd);
            snprintf(err, errlen, "tracePath %s %s: name a file inside the trace directory %.*s", name,
                     nc == 512 ? "has too many components" : "climbs out with \"..\"", (int)dl, dir);
            return TRACE_FILE_REFUSED;
        }
        comp[nc++] = c;
    }
    if (!nc) {
        close(fd);
        snprintf(err, errlen, "tracePath %s names the trace directory itself: name a file in it", name);
        return TRACE_FILE_NOT_REGULAR;
    }
    for (int i = 0; i < nc - 1; i++) {
        int next = openat(fd, comp[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(fd);
        if (next < 0) {
            snprintf(err, errlen, "tracePath %s: %s %s", name, comp[i],
                     e == ELOOP || e == ENOTDIR ? "is a symbolic link or not a directory: refused (no link under the "
                                                  "trace directory is followed)"
                                                : strerror(e));
            return e == ELOOP || e == ENOTDIR ? TRACE_FILE_REFUSED : e == ENOENT ? TRACE_FILE_MISSING : TRACE_FILE_ERROR;
        }
        fd = next;
    }
    struct stat sb;
    enum trace_file_status st;
    int e = 0;
    int leaf = open_leaf(fd, comp[nc - 1], true, &sb, &st, &e);
    close(fd);
    struct out o = {.max = max, .mode = 0777};
    char bad[300] = "";
    if (leaf >= 0) {
        st = S_ISDIR(sb.st_mode) ? read_dir(leaf, &o, bad, sizeof bad, &e) : slurp(leaf, &sb, &o, &e);
        close(leaf);
    }
    if (st == TRACE_FILE_OK) {
        *text = o.p;
        *len = o.len;
        *mode = o.mode;
        return st;
    }
    free(o.p);
    const char *sep = *bad ? "/" : "";
    switch (st) {
    case TRACE_FILE_REFUSED:
        snprintf(err, errlen, "tracePath %s%s%s is a symbolic link: refused (no link under the trace directory is "
                 "followed)", name, sep, bad);
        break;
    case TRACE_FILE_MISSING:
        snprintf(err, errlen, "tracePath %s: no such file in the trace directory %.*s", name, (int)dl, dir);
        break;
    case TRACE_FILE_NOT_REGULAR:
        snprintf(err, errlen, "tracePath %s%s%s is not a regular file (a FIFO, device or socket is never read), or a "
                 "directory without *.jsonl", name, sep, bad);
        break;
    case TRACE_FILE_TOO_BIG:
        snprintf(err, errlen, "tracePath %s%s%s: the trace is larger than %zu MiB, the limit of a trace named over "
                 "HTTP: split it, or run it with hwemu run --trace", name, sep, bad, max >> 20);
        break;
    default:
        snprintf(err, errlen, "tracePath %s%s%s cannot be read: %s", name, sep, bad, strerror(e ? e : EIO));
    }
    return st;
}
