/* root: the root directory's creation and its ownership checks, and the removal of static files
 * no segment uses; see root.h. Never follows a symbolic link at the root itself, never changes
 * an existing directory's owner or mode. */
#include "root.h"
#include "segment.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *user_name(uid_t uid, char *buf, size_t len)
{
    struct passwd pw, *res = NULL;
    char tmp[1024];
    if (!getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) && res)
        snprintf(buf, len, "%u (%s)", (unsigned)uid, res->pw_name);
    else
        snprintf(buf, len, "%u", (unsigned)uid);
    return buf;
}

/* Every ancestor of the absolute path p (not p itself): owned by root or us, and not
 * writable by others unless sticky, so no one else can rename the root away and put another
 * in its place. Creates the missing ones (0755). */
static int check_ancestors(char *p, uid_t me, char *err, size_t errlen)
{
    for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        struct stat st;
        if (lstat(p, &st) && errno == ENOENT && !mkdir(p, 0755))
            lstat(p, &st);
        else if (lstat(p, &st)) {
            snprintf(err, errlen, "cannot create or read %s: %s", p, strerror(errno));
            *s = '/';
            return -1;
        }
        if (S_ISLNK(st.st_mode) && stat(p, &st)) { /* a link among the ancestors: judge its target */
            snprintf(err, errlen, "%s: %s", p, strerror(errno));
            *s = '/';
            return -1;
        }
        char who[300];
        const char *why = !S_ISDIR(st.st_mode)                              ? "is not a directory"
                          : st.st_uid != 0 && st.st_uid != me               ? "is owned by another user"
                          : (st.st_mode & 022) && !(st.st_mode & S_ISVTX)    ? "is writable by other users and not sticky"
                                                                            : NULL;
        if (why) {
            snprintf(err, errlen, "the root's parent %s %s (owner %s, mode %04o): another user could replace the "
                     "root; choose a --root (SIM_HWEMU_ROOT) under directories only you or root can change",
                     p, why, user_name(st.st_uid, who, sizeof who), (unsigned)(st.st_mode & 07777));
            *s = '/';
            return -1;
        }
        *s = '/';
    }
    return 0;
}

int root_prepare(const char *root, bool *shared, char *err, size_t errlen)
{
    char p[4096];
    *shared = false;
    if (!root || !*root) {
        snprintf(err, errlen, "the root is empty: set --root or SIM_HWEMU_ROOT to a directory");
        return -1;
    }
    if (root[0] == '/')
        snprintf(p, sizeof p, "%s", root);
    else {
        char cwd[2048];
        if (!getcwd(cwd, sizeof cwd)) {
            snprintf(err, errlen, "root %s: cannot read the working directory: %s", root, strerror(errno));
            return -1;
        }
        snprintf(p, sizeof p, "%s/%s", cwd, root);
    }
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = 0;
    uid_t me = geteuid();
    if (check_ancestors(p, me, err, errlen))
        return -1;
    if (mkdir(p, 0755) && errno != EEXIST) {
        snprintf(err, errlen, "cannot create the root %s: %s (set --root or SIM_HWEMU_ROOT to a writable directory)",
                 root, strerror(errno));
        return -1;
    }
    int fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "the root %s %s: the engine writes only into a real directory; give its real path "
                 "or choose another --root", root,
                 errno == ELOOP || errno == ENOTDIR ? "is a symbolic link or not a directory" : strerror(errno));
        return -1;
    }
    struct stat st;
    int rc = fstat(fd, &st);
    close(fd);
    if (rc) {
        snprintf(err, errlen, "the root %s: %s", root, strerror(errno));
        return -1;
    }
    char who[300], mine[300];
    if (st.st_uid != me) {
        snprintf(err, errlen, "the root %s is owned by user %s, not by this engine's user %s: whoever created it "
                 "could redirect the engine's writes; remove it (rm -rf %s) or choose another --root "
                 "(SIM_HWEMU_ROOT)", root, user_name(st.st_uid, who, sizeof who), user_name(me, mine, sizeof mine),
                 root);
        return -1;
    }
    if (st.st_mode & 022) {
        snprintf(err, errlen, "the root %s has mode %04o: other users can create files in it and redirect the "
                 "engine's writes; chmod go-w %s (to let agents of other users in, see docs/security.md: a group "
                 "and chmod 2750)", root, (unsigned)(st.st_mode & 07777), root);
        return -1;
    }
    *shared = (st.st_mode & S_ISGID) != 0;
    return 0;
}

/* The pid the holder wrote into the lock file: it writes it right after taking the lock, so a
 * loser of a race may find the file still empty for a moment (0: none seen within 0.5 s). */
static long lock_holder(int fd)
{
    for (int tries = 0; tries < 50; tries++) {
        char buf[32];
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        if (n > 0) {
            buf[n] = 0;
            char *end;
            long pid = strtol(buf, &end, 10);
            if (pid > 0 && (*end == '\n' || !*end))
                return pid;
        }
        usleep(10000);
    }
    return 0;
}

int root_lock(const char *root, char *err, size_t errlen)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/.lock", root);
    /* no O_TRUNC: a loser must not wipe the holder's pid */
    int fd = open(p, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(err, errlen, "cannot open the root's lock file %s: %s%s", p, strerror(errno),
                 errno == ELOOP ? " (a symbolic link is there: remove it)" : "");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        snprintf(err, errlen, "the root's lock file %s is %s: refused; remove it and start again", p,
                 !S_ISREG(st.st_mode) ? "not a regular file" : "owned by another user");
        close(fd);
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        int e = errno;
        long pid = e == EWOULDBLOCK ? lock_holder(fd) : 0;
        char who[40] = "";
        if (pid)
            snprintf(who, sizeof who, " (pid %ld)", pid);
        if (e == EWOULDBLOCK)
            snprintf(err, errlen, "another engine%s serves %s: stop it or choose another --root (SIM_HWEMU_ROOT); "
                     "two engines on one root would tick the same segments", who, root);
        else
            snprintf(err, errlen, "cannot lock %s: %s", p, strerror(e));
        close(fd);
        return -1;
    }
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) || pwrite(fd, buf, (size_t)n, 0) != n) {
        snprintf(err, errlen, "cannot write the root's lock file %s: %s", p, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* "<16 hex>.static": true with its hash. */
static bool static_name(const char *name, uint64_t *hash)
{
    if (strlen(name) != 23 || strcmp(name + 16, ".static"))
        return false;
    uint64_t h = 0;
    for (int i = 0; i < 16; i++) {
        char c = name[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return false;
        h = h << 4 | (uint64_t)d;
    }
    *hash = h;
    return true;
}

static bool kept(const uint64_t *keep, int nkeep, uint64_t h)
{
    for (int i = 0; i < nkeep; i++)
        if (keep[i] == h)
            return true;
    return false;
}

int root_prune_static(const char *root, const uint64_t *keep, int nkeep)
{
    DIR *d = opendir(root);
    if (!d)
        return 0;
    uint64_t stale[64];
    int nstale = 0;
    struct dirent *de;
    uint64_t h;
    while ((de = readdir(d)) && nstale < 64)
        if (static_name(de->d_name, &h) && !kept(keep, nkeep, h))
            stale[nstale++] = h;
    /* only then the segments' headers: which layouts they still name */
    rewinddir(d);
    while (nstale && (de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".seg"))
            continue;
        int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct seg_header sh;
        if (fd < 0)
            continue;
        if (pread(fd, &sh, sizeof sh, 0) == (ssize_t)sizeof sh && !memcmp(sh.magic, SEG_MAGIC, 8))
            for (int i = 0; i < nstale; i++)
                if (stale[i] == sh.layout_hash)
                    stale[i--] = stale[--nstale];
        close(fd);
    }
    int removed = 0;
    char name[32];
    for (int i = 0; i < nstale; i++) {
        snprintf(name, sizeof name, "%016llx.static", (unsigned long long)stale[i]);
        removed += unlinkat(dirfd(d), name, 0) == 0;
    }
    closedir(d);
    return removed;
}
