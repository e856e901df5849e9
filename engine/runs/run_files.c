/* run_files: safe opening and whole-line, whole-file writing of a run's files; see run_files.h. */
#include "run_files.h"

#include "root.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* s with every from replaced by to, into out. */
static void replace_all(const char *s, const char *from, const char *to, char *out, size_t cap)
{
    size_t n = 0, lf = strlen(from), lt = strlen(to);
    while (*s && n + 1 < cap) {
        if (!strncmp(s, from, lf) && n + lt < cap) {
            memcpy(out + n, to, lt);
            n += lt;
            s += lf;
        } else {
            out[n++] = *s++;
        }
    }
    out[n] = 0;
}

int run_files_dir(const char *path, char *err, size_t errlen)
{
    bool shared;
    char why[4200], a[4400], b[4400];
    if (root_prepare(path, &shared, why, sizeof why)) {
        /* root_prepare speaks of the root and its options: say which directory this is */
        replace_all(why, "--root (SIM_HWEMU_ROOT)", "--runs-dir (SIM_RUNS_DIR)", a, sizeof a);
        replace_all(a, "another --root", "another --runs-dir", b, sizeof b);
        replace_all(b, "the root's parent", "its parent", a, sizeof a);
        replace_all(a, "the root", "the runs directory", b, sizeof b);
        snprintf(err, errlen, "runs directory (--runs-dir, SIM_RUNS_DIR; default <root>/runs): %s", b);
        return -1;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        snprintf(err, errlen, "runs directory %s: %s", path, strerror(errno));
    return fd;
}

int run_files_mkdir(int dfd, const char *name)
{
    if (mkdirat(dfd, name, 0755))
        return -1;
    return run_files_opendir(dfd, name);
}

int run_files_opendir(int dfd, const char *name)
{
    return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

char *run_files_read(int dfd, const char *name, size_t max, size_t *len)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat st;
    int e = 0;
    if (fstat(fd, &st))
        e = errno;
    else if (!S_ISREG(st.st_mode))
        e = EINVAL;
    else if ((size_t)st.st_size > max)
        e = EFBIG;
    if (e) {
        close(fd);
        errno = e;
        return NULL;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        abort();
    for (;;) {
        ssize_t got = read(fd, buf + n, cap - 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            e = errno;
            free(buf);
            close(fd);
            errno = e;
            return NULL;
        }
        if (got == 0 || (n += (size_t)got) == cap - 1)
            break;
    }
    close(fd);
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

/* Writes all of text to fd: 0, or -1 with errno (ENOSPC for a short write that stopped). */
static int write_all(int fd, const char *text, size_t len, off_t at)
{
    size_t done = 0;
    while (done < len) {
        ssize_t w = pwrite(fd, text + done, len - done, at + (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return -1;
        }
        done += (size_t)w;
    }
    return 0;
}

int run_files_create(int dfd, const char *shown, const char *name, const char *text, size_t len, unsigned mode,
                     char *err, size_t errlen)
{
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    /* the mode set after the create: the umask must not widen nor narrow it */
    if (fd < 0 || fchmod(fd, mode) || write_all(fd, text, len, 0) || close(fd)) {
        int e = errno;
        snprintf(err, errlen, "cannot write %s/%s: %s", shown, name, strerror(e));
        if (fd >= 0) {
            close(fd);
            unlinkat(dfd, name, 0);
        }
        return -1;
    }
    return 0;
}

int run_files_replace(int dfd, const char *shown, const char *name, const char *text, size_t len, char *err,
                      size_t errlen)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    /* a .tmp left by an engine that died while writing (or planted) is removed, never written through */
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST && !unlinkat(dfd, tmp, 0))
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    const char *step = "create";
    int rc = fd < 0 ? -1 : 0;
    if (!rc && write_all(fd, text, len, 0))
        rc = -1, step = "write";
    if (!rc && fsync(fd))
        rc = -1, step = "sync";
    int e = errno;
    if (fd >= 0 && close(fd) && !rc)
        rc = -1, step = "write", e = errno;
    if (!rc && renameat(dfd, tmp, dfd, name))
        rc = -1, step = "rename", e = errno;
    if (rc) {
        if (fd >= 0)
            unlinkat(dfd, tmp, 0);
        snprintf(err, errlen, "cannot %s %s/%s: %s (its previous version, if any, is kept)", step, shown,
                 !strcmp(step, "rename") || !strcmp(step, "create") ? tmp : name, strerror(e));
        return -1;
    }
    fsync(dfd); /* the rename itself, for a power cut; a kill -9 needs only the rename */
    return 0;
}

static void lf_init(struct line_file *lf, const char *shown, const char *name)
{
    memset(lf, 0, sizeof *lf);
    lf->fd = -1;
    if (asprintf(&lf->path, "%s/%s", shown, name) < 0)
        abort();
}

int line_file_create(struct line_file *lf, int dfd, const char *shown, const char *name, char *err, size_t errlen)
{
    lf_init(lf, shown, name);
    lf->fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (lf->fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", lf->path, strerror(errno));
        free(lf->path);
        lf->path = NULL;
        return -1;
    }
    return 0;
}

int line_file_resume(struct line_file *lf, int dfd, const char *shown, const char *name, off_t len, char *err,
                     size_t errlen)
{
    lf_init(lf, shown, name);
    lf->fd = openat(dfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (lf->fd < 0 && errno == ENOENT && len <= 0)
        lf->fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    struct stat st;
    const char *why = NULL;
    if (lf->fd < 0)
        why = errno == ELOOP ? "it is a symbolic link: refused" : strerror(errno);
    else if (fstat(lf->fd, &st) || !S_ISREG(st.st_mode))
        why = "not a regular file: refused";
    else if (len < 0) /* keep it as it is */
        len = st.st_size;
    else if (st.st_size < len)
        why = "shorter than the checkpoint says (it was cut by someone else)";
    if (!why && ftruncate(lf->fd, len))
        why = strerror(errno);
    if (why) {
        snprintf(err, errlen, "cannot continue %s: %s", lf->path, why);
        if (lf->fd >= 0)
            close(lf->fd);
        free(lf->path);
        lf->path = NULL;
        lf->fd = -1;
        return -1;
    }
    lf->len = len;
    return 0;
}

bool line_file_flush(struct line_file *lf)
{
    int k = 0;
    for (; lf->fd >= 0 && k < lf->npending; k++) {
        size_t n = strlen(lf->pending[k]);
        if (write_all(lf->fd, lf->pending[k], n, lf->len)) {
            lf->err = errno;
            lf->failures++;
            /* never a spliced line: what a short write left of this one goes (cutting back
             * needs no space) */
            if (ftruncate(lf->fd, lf->len)) {
                /* nothing else to do: the next write at lf->len overwrites it */
            }
            break;
        }
        lf->len += (off_t)n;
        free(lf->pending[k]);
    }
    if (k) {
        memmove(lf->pending, lf->pending + k, sizeof *lf->pending * (size_t)(lf->npending - k));
        lf->npending -= k;
    }
    if (!lf->npending)
        lf->err = 0;
    return lf->npending == 0;
}

bool line_file_put(struct line_file *lf, const char *text)
{
    if (lf->npending == lf->cap) {
        lf->cap = lf->cap ? lf->cap * 2 : 8;
        lf->pending = realloc(lf->pending, sizeof *lf->pending * (size_t)lf->cap);
        if (!lf->pending)
            abort();
    }
    char *line;
    if (asprintf(&line, "%s\n", text) < 0)
        abort();
    lf->pending[lf->npending++] = line;
    return line_file_flush(lf);
}

int line_file_close(struct line_file *lf)
{
    line_file_flush(lf);
    int lost = lf->npending;
    for (int k = 0; k < lf->npending; k++)
        free(lf->pending[k]);
    free(lf->pending);
    if (lf->fd >= 0)
        close(lf->fd);
    free(lf->path);
    memset(lf, 0, sizeof *lf);
    lf->fd = -1;
    return lost;
}
