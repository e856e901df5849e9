/* wrap_stat: metadata of emulated paths and descriptors, synthesised from the segment with no
 * system call: the stat family (all generations: stat/lstat/fstat/fstatat, their 64-bit
 * twins, the old __xstat ABI, statx), statfs (sysfs and procfs magic), access, readlink,
 * realpath, the working directory, and the namespace calls sysfs refuses (sysfs §1.1,
 * §1.5): mkdir, rmdir, unlink, rename, symlink answer EPERM, truncate is accepted. */
#include "emu.h"
#include "dirpath.h"
#include "fdtable.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* Where the last locate of this thread sends a call that is not the node's (dirpath.h): the
 * caller's dirfd and path, or AT_FDCWD and the host's path for an emulated directory. */
static __thread struct at_pass tl_pass;
#define PFD (tl_pass.dirfd)
#define PP (tl_pass.path)

/* Where a (dirfd, path) pair lands: EMU_PASS (then PFD, PP), 0 with the entry, or an errno. */
static int locate(int dirfd, const char *path, bool follow, uint32_t *entry, enum emu_root *root)
{
    return dirpath_locate(dirfd, path, follow, entry, root, &tl_pass);
}

/* 0 with st filled, EMU_PASS, or -1 with errno. */
static int stat_path(int dirfd, const char *path, bool follow, struct stat *st)
{
    uint32_t e;
    enum emu_root root = EMU_ROOT_SYS;
    int rc = locate(dirfd, path, follow, &e, &root);
    if (rc == EMU_PASS)
        return EMU_PASS;
    if (rc)
        return shim_fail(rc);
    emu_stat(e, root, st);
    return 0;
}

static int stat_fd(int fd, struct stat *st)
{
    struct emu_file *f = fdt_get(fd);
    if (!f)
        return EMU_PASS;
    emu_stat(f->entry, f->root, st);
    return 0;
}

EXPORT int stat(const char *path, struct stat *st)
{
    int rc = stat_path(AT_FDCWD, path, true, st);
    return rc != EMU_PASS ? rc : REAL(stat)(PP, st);
}

EXPORT int lstat(const char *path, struct stat *st)
{
    int rc = stat_path(AT_FDCWD, path, false, st);
    return rc != EMU_PASS ? rc : REAL(lstat)(PP, st);
}

EXPORT int stat64(const char *path, struct stat64 *st)
{
    struct stat s;
    int rc = stat_path(AT_FDCWD, path, true, &s);
    if (rc == EMU_PASS)
        return REAL(stat64)(PP, st);
    if (!rc)
        emu_stat_to64(&s, st);
    return rc;
}

EXPORT int lstat64(const char *path, struct stat64 *st)
{
    struct stat s;
    int rc = stat_path(AT_FDCWD, path, false, &s);
    if (rc == EMU_PASS)
        return REAL(lstat64)(PP, st);
    if (!rc)
        emu_stat_to64(&s, st);
    return rc;
}

EXPORT int fstat(int fd, struct stat *st)
{
    int rc = stat_fd(fd, st);
    return rc != EMU_PASS ? rc : REAL(fstat)(fd, st);
}

EXPORT int fstat64(int fd, struct stat64 *st)
{
    struct stat s;
    int rc = stat_fd(fd, &s);
    if (rc == EMU_PASS)
        return REAL(fstat64)(fd, st);
    emu_stat_to64(&s, st);
    return 0;
}

/* fstatat with AT_EMPTY_PATH and an emulated fd stats the fd (coreutils does this). */
static int statat(int dirfd, const char *path, struct stat *st, int flags)
{
    if ((flags & AT_EMPTY_PATH) && path && !*path) {
        tl_pass.dirfd = dirfd;
        tl_pass.path = path;
        return stat_fd(dirfd, st);
    }
    return stat_path(dirfd, path, !(flags & AT_SYMLINK_NOFOLLOW), st);
}

EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    int rc = statat(dirfd, path, st, flags);
    return rc != EMU_PASS ? rc : REAL(fstatat)(PFD, PP, st, flags);
}

EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
    struct stat s;
    int rc = statat(dirfd, path, &s, flags);
    if (rc == EMU_PASS)
        return REAL(fstatat64)(PFD, PP, st, flags);
    if (!rc)
        emu_stat_to64(&s, st);
    return rc;
}

/* The pre-2.33 ABI: ver is _STAT_VER (1 on x86_64); struct stat is the same layout there. */
EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
    int rc = stat_path(AT_FDCWD, path, true, st);
    return rc != EMU_PASS ? rc : REAL(__xstat)(ver, PP, st);
}

EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
    int rc = stat_path(AT_FDCWD, path, false, st);
    return rc != EMU_PASS ? rc : REAL(__lxstat)(ver, PP, st);
}

EXPORT int __xstat64(int ver, const char *path, struct stat64 *st)
{
    struct stat s;
    int rc = stat_path(AT_FDCWD, path, true, &s);
    if (rc == EMU_PASS)
        return REAL(__xstat64)(ver, PP, st);
    if (!rc)
        emu_stat_to64(&s, st);
    return rc;
}

EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st)
{
    struct stat s;
    int rc = stat_path(AT_FDCWD, path, false, &s);
    if (rc == EMU_PASS)
        return REAL(__lxstat64)(ver, PP, st);
    if (!rc)
        emu_stat_to64(&s, st);
    return rc;
}

EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
    int rc = stat_fd(fd, st);
    return rc != EMU_PASS ? rc : REAL(__fxstat)(ver, fd, st);
}

EXPORT int __fxstat64(int ver, int fd, struct stat64 *st)
{
    struct stat s;
    if (stat_fd(fd, &s) == EMU_PASS)
        return REAL(__fxstat64)(ver, fd, st);
    emu_stat_to64(&s, st);
    return 0;
}

EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
    int rc = statat(dirfd, path, st, flags);
    return rc != EMU_PASS ? rc : REAL(__fxstatat)(ver, PFD, PP, st, flags);
}

EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
    struct stat s;
    int rc = statat(dirfd, path, &s, flags);
    if (rc == EMU_PASS)
        return REAL(__fxstatat64)(ver, PFD, PP, st, flags);
    if (!rc)
        emu_stat_to64(&s, st);
    return rc;
}

EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *sx)
{
    struct stat s;
    int rc = statat(dirfd, path, &s, flags);
    if (rc == EMU_PASS)
        return REAL(statx)(PFD, PP, flags, mask, sx);
    if (rc)
        return rc;
    emu_stat_to_statx(&s, sx);
    return 0;
}

/* --- statfs ---------------------------------------------------------------------------------- */

static int statfs_path(const char *path, struct statfs *sf)
{
    uint32_t e;
    enum emu_root root = EMU_ROOT_SYS;
    int rc = emu_path(path, true, &e, &root);
    if (rc == EMU_PASS)
        return EMU_PASS;
    if (rc)
        return shim_fail(rc);
    emu_statfs(root, sf);
    return 0;
}

EXPORT int statfs(const char *path, struct statfs *sf)
{
    int rc = statfs_path(path, sf);
    return rc != EMU_PASS ? rc : REAL(statfs)(path, sf);
}

EXPORT int statfs64(const char *path, struct statfs64 *sf)
{
    struct statfs s;
    int rc = statfs_path(path, &s);
    if (rc == EMU_PASS)
        return REAL(statfs64)(path, sf);
    if (!rc) {
        memset(sf, 0, sizeof *sf);
        sf->f_type = s.f_type;
        sf->f_bsize = s.f_bsize;
        sf->f_namelen = s.f_namelen;
        sf->f_frsize = s.f_frsize;
    }
    return rc;
}

EXPORT int fstatfs(int fd, struct statfs *sf)
{
    struct emu_file *f = fdt_get(fd);
    if (!f)
        return REAL(fstatfs)(fd, sf);
    emu_statfs(f->root, sf);
    return 0;
}

EXPORT int fstatfs64(int fd, struct statfs64 *sf)
{
    struct emu_file *f = fdt_get(fd);
    if (!f)
        return REAL(fstatfs64)(fd, sf);
    struct statfs s;
    emu_statfs(f->root, &s);
    memset(sf, 0, sizeof *sf);
    sf->f_type = s.f_type;
    sf->f_bsize = s.f_bsize;
    sf->f_namelen = s.f_namelen;
    sf->f_frsize = s.f_frsize;
    return 0;
}

/* --- access ---------------------------------------------------------------------------------- */

static int access_entry(uint32_t e, int mode)
{
    int rc = emu_access(e, mode, geteuid());
    return rc ? shim_fail(rc) : 0;
}

static int access_at(int dirfd, const char *path, int mode, int flags)
{
    uint32_t e;
    enum emu_root root = EMU_ROOT_SYS;
    int rc = locate(dirfd, path, !(flags & AT_SYMLINK_NOFOLLOW), &e, &root);
    if (rc == EMU_PASS)
        return EMU_PASS;
    if (rc)
        return shim_fail(rc);
    return mode == F_OK ? 0 : access_entry(e, mode);
}

EXPORT int access(const char *path, int mode)
{
    int rc = access_at(AT_FDCWD, path, mode, 0);
    return rc != EMU_PASS ? rc : REAL(access)(PP, mode);
}

EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
    int rc = access_at(dirfd, path, mode, flags);
    return rc != EMU_PASS ? rc : REAL(faccessat)(PFD, PP, mode, flags);
}

EXPORT int euidaccess(const char *path, int mode)
{
    int rc = access_at(AT_FDCWD, path, mode, 0);
    return rc != EMU_PASS ? rc : REAL(euidaccess)(PP, mode);
}

EXPORT int eaccess(const char *path, int mode)
{
    int rc = access_at(AT_FDCWD, path, mode, 0);
    return rc != EMU_PASS ? rc : REAL(eaccess)(PP, mode);
}

/* --- links and canonical paths --------------------------------------------------------------- */

static ssize_t readlink_at(int dirfd, const char *path, char *buf, size_t len)
{
    uint32_t e;
    enum emu_root root = EMU_ROOT_SYS;
    int rc = locate(dirfd, path, false, &e, &root);
    if (rc == EMU_PASS)
        return EMU_PASS;
    if (rc)
        return shim_fail(rc);
    const struct seg_entry *en = &emu_seg()->entries[e];
    if (en->kind != SEG_LINK)
        return shim_fail(EINVAL);
    size_t n = en->text_len < len ? en->text_len : len;
    memcpy(buf, emu_seg()->strings + en->text_off, n);
    return (ssize_t)n;
}

EXPORT ssize_t readlink(const char *path, char *buf, size_t len)
{
    ssize_t rc = readlink_at(AT_FDCWD, path, buf, len);
    return rc != EMU_PASS ? rc : REAL(readlink)(PP, buf, len);
}

EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t len)
{
    ssize_t rc = readlink_at(dirfd, path, buf, len);
    return rc != EMU_PASS ? rc : REAL(readlinkat)(PFD, PP, buf, len);
}

EXPORT ssize_t __readlink_chk(const char *path, char *buf, size_t len, size_t buflen)
{
    if (len > buflen)
        __builtin_trap();
    ssize_t rc = readlink_at(AT_FDCWD, path, buf, len);
    return rc != EMU_PASS ? rc : REAL(__readlink_chk)(PP, buf, len, buflen);
}

EXPORT ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t len, size_t buflen)
{
    if (len > buflen)
        __builtin_trap();
    ssize_t rc = readlink_at(dirfd, path, buf, len);
    return rc != EMU_PASS ? rc : REAL(__readlinkat_chk)(PFD, PP, buf, len, buflen);
}

/* realpath of an emulated path: its entry's path with the agent's prefix, links resolved. */
static char *emu_realpath(const char *path, char *resolved, bool *handled)
{
    uint32_t e;
    enum emu_root root = EMU_ROOT_SYS;
    int rc = emu_path(path, true, &e, &root);
    *handled = rc != EMU_PASS;
    if (!*handled)
        return NULL;
    if (rc) {
        shim_fail(rc);
        return NULL;
    }
    char buf[PATH_MAX];
    if (emu_agent_path(e, root, buf, sizeof buf) < 0) {
        shim_fail(ENAMETOOLONG);
        return NULL;
    }
    char *out = resolved ? resolved : malloc(strlen(buf) + 1);
    if (!out) {
        shim_fail(ENOMEM);
        return NULL;
    }
    strcpy(out, buf);
    return out;
}

EXPORT char *realpath(const char *path, char *resolved)
{
    bool handled;
    char *r = emu_realpath(path, resolved, &handled);
    return handled ? r : REAL(realpath)(path, resolved);
}

EXPORT char *__realpath_chk(const char *path, char *resolved, size_t buflen)
{
    bool handled;
    if (resolved && buflen < PATH_MAX)
        __builtin_trap();
    char *r = emu_realpath(path, resolved, &handled);
    return handled ? r : REAL(__realpath_chk)(path, resolved, buflen);
}

EXPORT char *canonicalize_file_name(const char *path)
{
    bool handled;
    char *r = emu_realpath(path, NULL, &handled);
    return handled ? r : REAL(canonicalize_file_name)(path);
}

/* --- extended attributes: sysfs files have none ---------------------------------------------- */

static ssize_t xattr_path(const char *path, bool follow, bool list)
{
    uint32_t e;
    enum emu_root root = EMU_ROOT_SYS;
    int rc = emu_path(path, follow, &e, &root);
    if (rc == EMU_PASS)
        return EMU_PASS;
    if (rc)
        return shim_fail(rc);
    return list ? 0 : shim_fail(ENODATA);
}

EXPORT ssize_t getxattr(const char *path, const char *name, void *v, size_t n)
{
    ssize_t rc = xattr_path(path, true, false);
    return rc != EMU_PASS ? rc : REAL(getxattr)(path, name, v, n);
}

EXPORT ssize_t lgetxattr(const char *path, const char *name, void *v, size_t n)
{
    ssize_t rc = xattr_path(path, false, false);
    return rc != EMU_PASS ? rc : REAL(lgetxattr)(path, name, v, n);
}

EXPORT ssize_t fgetxattr(int fd, const char *name, void *v, size_t n)
{
    return fdt_get(fd) ? shim_fail(ENODATA) : REAL(fgetxattr)(fd, name, v, n);
}

EXPORT ssize_t listxattr(const char *path, char *list, size_t n)
{
    ssize_t rc = xattr_path(path, true, true);
    return rc != EMU_PASS ? rc : REAL(listxattr)(path, list, n);
}

EXPORT ssize_t llistxattr(const char *path, char *list, size_t n)
{
    ssize_t rc = xattr_path(path, false, true);
    return rc != EMU_PASS ? rc : REAL(llistxattr)(path, list, n);
}

EXPORT ssize_t flistxattr(int fd, char *list, size_t n)
{
    return fdt_get(fd) ? 0 : REAL(flistxattr)(fd, list, n);
}

/* --- working directory ----------------------------------------------------------------------- */

/* Hands an emulated working directory to exec'd children (emu.h): the directory and the
 * kernel's cwd it was entered from. */
static void emulated_cwd_env(const char *dir)
{
    char base[PATH_MAX];
    if (!getcwd(base, sizeof base)) /* libc's: the kernel's cwd, which the emulated chdir left */
        return;
    setenv("HWEMU_CWD_BASE", base, 1);
    setenv("HWEMU_CWD", dir, 1);
}

EXPORT int chdir(const char *path)
{
    uint32_t e;
    enum emu_root root = EMU_ROOT_SYS;
    int rc = locate(AT_FDCWD, path, true, &e, &root);
    if (rc == EMU_PASS) {
        rc = REAL(chdir)(PP); /* from an emulated cwd: the host's directory of that path */
        char buf[PATH_MAX];
        if (!rc && getcwd(buf, sizeof buf)) {
            emu_set_cwd(buf, false);
            unsetenv("HWEMU_CWD");
            unsetenv("HWEMU_CWD_BASE");
        }
        return rc;
    }
    if (rc)
        return shim_fail(rc);
    if (emu_seg()->entries[e].kind != SEG_DIR)
        return shim_fail(ENOTDIR);
    char buf[PATH_MAX];
    if (emu_agent_path(e, root, buf, sizeof buf) < 0)
        return shim_fail(ENAMETOOLONG);
    /* The kernel's cwd stays where it was (the emulated directory may not exist on the host);
     * relative names are resolved against the emulated one, here and in exec'd children. */
    emu_set_cwd(buf, true);
    emulated_cwd_env(buf);
    return 0;
}

EXPORT int fchdir(int fd)
{
    struct emu_file *f = fdt_get(fd);
    if (!f) {
        int rc = REAL(fchdir)(fd);
        char buf[PATH_MAX];
        if (!rc && getcwd(buf, sizeof buf)) {
            emu_set_cwd(buf, false);
            unsetenv("HWEMU_CWD");
            unsetenv("HWEMU_CWD_BASE");
        }
        return rc;
    }
    if (emu_seg()->entries[f->entry].kind != SEG_DIR)
        return shim_fail(ENOTDIR);
    char buf[PATH_MAX];
    if (emu_agent_path(f->entry, f->root, buf, sizeof buf) < 0)
        return shim_fail(ENAMETOOLONG);
    emu_set_cwd(buf, true);
    emulated_cwd_env(buf);
    return 0;
}

/* --- the namespace --------------------------------------------------------------------------- */

/* EPERM when path is (or would be created in) the node's tree, EMU_PASS otherwise. */
static int refuse(int dirfd, const char *path)
{
    uint32_t e;
    enum emu_root root = EMU_ROOT_SYS;
    int rc = locate(dirfd, path, false, &e, &root);
    if (rc == EMU_PASS)
        return EMU_PASS;
    return shim_fail(rc == ENOENT || rc == 0 ? EPERM : rc);
}

EXPORT int mkdir(const char *path, mode_t mode)
{
    int rc = refuse(AT_FDCWD, path);
    return rc != EMU_PASS ? rc : REAL(mkdir)(PP, mode);
}

EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
    int rc = refuse(dirfd, path);
    return rc != EMU_PASS ? rc : REAL(mkdirat)(PFD, PP, mode);
}

EXPORT int rmdir(const char *path)
{
    int rc = refuse(AT_FDCWD, path);
    return rc != EMU_PASS ? rc : REAL(rmdir)(path);
}

EXPORT int unlink(const char *path)
{
    int rc = refuse(AT_FDCWD, path);
    return rc != EMU_PASS ? rc : REAL(unlink)(path);
}

EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
    int rc = refuse(dirfd, path);
    return rc != EMU_PASS ? rc : REAL(unlinkat)(PFD, PP, flags);
}

EXPORT int rename(const char *from, const char *to)
{
    int rc = refuse(AT_FDCWD, from);
    if (rc == EMU_PASS)
        rc = refuse(AT_FDCWD, to);
    return rc != EMU_PASS ? rc : REAL(rename)(from, to);
}

EXPORT int renameat(int fd1, const char *from, int fd2, const char *to)
{
    int rc = refuse(fd1, from);
    if (rc == EMU_PASS)
        rc = refuse(fd2, to);
    return rc != EMU_PASS ? rc : REAL(renameat)(fd1, from, fd2, to);
}

EXPORT int symlink(const char *target, const char *path)
{
    int rc = refuse(AT_FDCWD, path);
    return rc != EMU_PASS ? rc : REAL(symlink)(target, path);
}

EXPORT int truncate(const char *path, off_t len)
{
    uint32_t e;
    enum emu_root root = EMU_ROOT_SYS;
    int rc = emu_path(path, true, &e, &root);
    if (rc == EMU_PASS)
        return REAL(truncate)(path, len);
    return rc ? shim_fail(rc) : 0; /* sysfs takes a truncate and keeps its page */
}
