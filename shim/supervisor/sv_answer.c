/* sv_answer: the seccomp supervisor's answers, the second front end of the emulation core.
 *
 * The node's files are emu.c's (path translation, metadata, the agent's view of a path, open
 * rules), emu_read.c's (what read and lseek answer), emu_dir.c's (directory listings) and
 * segment.c / seg_attr.c's (content and store rules), exactly as the shim uses them; this file
 * applies them, and the sysfs semantics of the shim's wrap_file.c and wrap_stat.c, to system calls
 * instead of libc calls:
 *   path calls   open, openat, openat2, creat; stat, lstat, newfstatat, statx; access,
 *                faccessat, faccessat2; readlink, readlinkat; statfs; and the namespace calls
 *                sysfs refuses with EPERM (mkdir, rmdir, unlink, rename, symlink and their *at
 *                forms): an emulated path is answered here (results written into the caller's
 *                buffers), any other path gets CONTINUE and the kernel answers it
 *   fd calls     read, pread64, readv, preadv, preadv2; write, pwrite64, writev, pwritev,
 *                pwritev2; lseek; fstat, fstatfs; getdents64; dup, dup2, dup3, fcntl(F_DUPFD*);
 *                ioctl (the OpenIPMI ioctls of /dev/ipmi0, emu_ipmi.c; the kernel answers the rest);
 *                and copy_file_range, sendfile, splice (refused, so callers fall back to read):
 *                only descriptors in the window reach us (sv.h), only ours are answered
 *
 * Open files. An emulated open gets a placeholder injected into the caller
 * (SECCOMP_IOCTL_NOTIF_ADDFD with SEND: installed and returned atomically) at a free number of the
 * window: one end of a pipe of ours (the read end, holding one byte so that poll() says
 * readable; the write end for O_WRONLY, so that F_GETFL, which the kernel answers, says what was
 * opened). The agent holds a real kernel descriptor that survives fork, dup and exec like any
 * other; fstat, lseek and every read and write on it are answered here, so it looks like the
 * sysfs file it stands for. Its open file description is one struct desc here (what was
 * opened, the position, the content of the last show), found again from the pipe's inode
 * (pidfd_getfd and fstat), so a description shared by threads, dups and forked children has one
 * state, as in the kernel. We keep the pipe's other end: EPOLLERR or EPOLLHUP on it says the
 * agent's end is gone (every copy in every process closed), and the desc is forgotten then (at
 * once for files opened for writing, a few at a time for the others: sv.h). Placeholders are
 * made ahead, and our ends closed, by a thread of their own (sv_pool.c). Why
 * a pipe and not a memfd: on this machine a memfd costs 7 us to make and an inotify watch for
 * its end 8 us more, a pipe with an epoll registration 4 us; and Go, which registers every file
 * it opens with its netpoller, takes a pipe as pollable and a regular file as not, and then
 * undoes its O_NONBLOCK with two more fcntl calls. A copy that leaves the window (dup2 below it,
 * a shell redirecting the file to stdin) gets a memfd with the content shown at that moment.
 *   read, lseek, getdents64   emu_read.c's and emu_dir.c's answers, as the shim gives them
 *   write   one call is one store of at most 4096 bytes (seg_attr_store), the kernel's errno
 *           when refused, an event either way (with the agent's pid); /dev/ipmi0 has no write
 *           (EINVAL) and an MSR device takes whole registers (emu_msr_write)
 * What it must never do: block (no waiting on the engine or the target), act on target memory
 * without re-checking that the call is still pending, or answer a descriptor it does not own. */
#include "sv.h"

#include "emu_dir.h"
#include "emu_hide.h"
#include "emu_ipmi.h"
#include "emu_read.h"
#include "emu_status.h"
#include "seg_attr.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#define SV_HOST (-4097) /* locate(): relative to an emulated directory, but the host's name */

enum { SAY_WINDOW_FULL = 1, SAY_RLIMIT, SAY_PEEK, SAY_NOMEM, SAY_IPMI };

/* --- open file descriptions ------------------------------------------------------------------ */

struct desc {
    uint64_t ino;               /* the placeholder pipe's inode: what identifies the description */
    struct desc *next;          /* hash chain */
    int ours;                   /* our end of the pipe, in the lifetimes epoll set */
    uint32_t entry;
    enum emu_root root;
    int flags;                  /* the open flags */
    int64_t pos;                /* file position; for directories the listing's (emu_dir.h) */
    struct emu_show show;       /* the content of the last read at offset 0 */
    char *escaped;              /* O_WRONLY: what copies outside the window wrote (one page) */
    size_t nescaped;
    struct ipmi_queue *ipmi;    /* /dev/ipmi0 (class I): its message queue (emu_ipmi.h) */
};

#define BUCKETS 8192
static struct desc *buckets[BUCKETS];
static uint64_t nlive;
static struct desc **by_ours; /* indexed by the number of the end we keep */
static size_t nby_ours;

static bool set_ours(int fd, struct desc *d)
{
    if ((size_t)fd >= nby_ours) {
        size_t n = nby_ours ? nby_ours : 1024;
        while (n <= (size_t)fd)
            n *= 2;
        struct desc **t = realloc(by_ours, sizeof *t * n);
        if (!t)
            return false;
        memset(t + nby_ours, 0, sizeof *t * (n - nby_ours));
        by_ours = t;
        nby_ours = n;
    }
    by_ours[fd] = d;
    return true;
}

unsigned long long sv_open_count(void)
{
    return (unsigned long long)nlive;
}

static struct desc *desc_find(uint64_t ino)
{
    for (struct desc *d = buckets[ino % BUCKETS]; d; d = d->next)
        if (d->ino == ino)
            return d;
    return NULL;
}

static struct desc *desc_by_ours(int fd)
{
    return (size_t)fd < nby_ours ? by_ours[fd] : NULL;
}

static void store_escaped(struct desc *d);

/* Opened for writing: the agent gets the write end of the placeholder (sv_placeholder_make). */
static bool placeholder_writes(int flags)
{
    return (flags & O_ACCMODE) == O_WRONLY && !(flags & O_PATH);
}

static void desc_free(struct desc *d)
{
    if (d->nescaped)
        store_escaped(d);
    free(d->escaped);
    emu_show_release(&d->show);
    free(d->ipmi);
    for (struct desc **p = &buckets[d->ino % BUCKETS]; *p; p = &(*p)->next)
        if (*p == d) {
            *p = d->next;
            break;
        }
    by_ours[d->ours] = NULL;
    if (placeholder_writes(d->flags) || !sv_pool_discard(d->ours))
        close(d->ours); /* leaves the epoll set */
    nlive--;
    free(d);
}

/* The desc behind a target's descriptor, or NULL when it is not one of ours. */
static struct desc *fd_desc(const struct sv_call *c, int fd)
{
    if (fd < 0)
        return NULL;
    int d = sv_getfd(c->tid, fd);
    if (d >= 0) {
        struct stat st;
        int rc = fstat(d, &st);
        close(d);
        return rc == 0 && S_ISFIFO(st.st_mode) ? desc_find(st.st_ino) : NULL;
    }
    if (d != -ENOSYS)
        return NULL;
    char name[64];
    unsigned long long ino;
    if (sv_fd_path(c->tid, fd, name, sizeof name) < 0 || sscanf(name, "pipe:[%llu]", &ino) != 1)
        return NULL;
    return desc_find(ino);
}

int sv_answer_init(struct sv *sv)
{
    sv_target_init();
    sv->lifetimes = epoll_create1(EPOLL_CLOEXEC);
    sv->closings = epoll_create1(EPOLL_CLOEXEC);
    return sv->lifetimes < 0 || sv->closings < 0 ? errno : 0;
}

/* Forgets at most `most` descriptions of one set, those no process holds any more. */
static void reap_set(int set, int most)
{
    struct epoll_event ev[64];
    int n;
    while (most > 0 && (n = epoll_wait(set, ev, most < 64 ? most : 64, 0)) > 0)
        for (int i = 0; i < n; i++) {
            if (ev[i].events & EPOLLIN) {
                /* written through a copy that left the window (a shell's `echo 1 > file`): kept
                 * for one store when the last writer closes, as the shim does with its aliases */
                struct desc *d = desc_by_ours(ev[i].data.fd);
                char sink[SEG_READ_MAX];
                ssize_t k;
                while ((k = read(ev[i].data.fd, sink, sizeof sink)) > 0) {
                    if (d && !d->escaped)
                        d->escaped = malloc(SEG_READ_MAX);
                    size_t room = d && d->escaped ? SEG_READ_MAX - d->nescaped : 0;
                    size_t take = (size_t)k < room ? (size_t)k : room;
                    if (take) {
                        memcpy(d->escaped + d->nescaped, sink, take);
                        d->nescaped += take;
                    }
                }
            }
            if (!(ev[i].events & (EPOLLERR | EPOLLHUP)))
                continue;
            /* no reader (or writer) left: no process holds the description any more */
            struct desc *d = desc_by_ours(ev[i].data.fd);
            if (d)
                desc_free(d);
            else
                epoll_ctl(set, EPOLL_CTL_DEL, ev[i].data.fd, NULL);
        }
}

void sv_reap(struct sv *sv)
{
    reap_set(sv->lifetimes, INT_MAX);
}

void sv_reap_closings(struct sv *sv, int most)
{
    reap_set(sv->closings, most);
}

void sv_answer_fini(struct sv *sv)
{
    sv_reap(sv);
    sv_reap_closings(sv, INT_MAX);
    for (uint32_t b = 0; b < BUCKETS; b++)
        for (struct desc *d = buckets[b]; d; d = d->next)
            if (d->nescaped)
                store_escaped(d);
}

/* --- where a path lands ---------------------------------------------------------------------- */

struct loc {
    char path[PATH_MAX];        /* as the target gave it */
    char abs[PATH_MAX + 64];    /* joined to its directory; for SV_HOST the host's path */
    uint32_t entry;
    enum emu_root root;
};

static char trace_path[PATH_MAX]; /* the last path looked at, for HWEMU_SV_TRACE */

/* A host path the supervisor opens for the target (SV_HOST: a name under the node's /proc, opened
 * through its emulated descriptor): "/proc/self" and "/proc/thread-self" would be the supervisor's
 * own, so they become the target's "/proc/<tgid>" and "/proc/<tgid>/task/<tid>". false when the
 * result does not fit. */
static bool target_self(const struct sv_call *c, char *abs, size_t cap)
{
    const char *rest = NULL;
    bool thread = false;
    if (!strncmp(abs, "/proc/self", 10) && (abs[10] == 0 || abs[10] == '/'))
        rest = abs + 10;
    else if (!strncmp(abs, "/proc/thread-self", 17) && (abs[17] == 0 || abs[17] == '/'))
        rest = abs + 17, thread = true;
    if (!rest)
        return true;
    pid_t tgid = c->tid;
    if (sv_ids(c->tid, &tgid, NULL, NULL) < 0)
        tgid = c->tid;
    char out[PATH_MAX + 64];
    int n = thread ? snprintf(out, sizeof out, "/proc/%d/task/%d%s", (int)tgid, (int)c->tid, rest)
                   : snprintf(out, sizeof out, "/proc/%d%s", (int)tgid, rest);
    if (n < 0 || (size_t)n >= cap)
        return false;
    memcpy(abs, out, (size_t)n + 1);
    return true;
}

/* Where (dirfd, path) lands: EMU_PASS (the kernel answers it), SV_HOST (a name the node does
 * not have under one of its directories, opened through an emulated directory descriptor: the
 * host's L->abs), 0 with L->entry and L->root, or an errno. With empty_ok (AT_EMPTY_PATH) an
 * empty path names dirfd itself. Relative paths are taken against the target's working
 * directory or dirfd as the kernel sees them (/proc/<tid>/cwd, /proc/<tid>/fd/<dirfd>). */
static int locate(const struct sv_call *c, int dirfd, uint64_t upath, bool follow, bool empty_ok, struct loc *L)
{
    L->root = EMU_ROOT_SYS;
    trace_path[0] = 0;
    if (!upath && empty_ok)
        L->path[0] = 0; /* 6.11: a NULL path with AT_EMPTY_PATH */
    else {
        ssize_t n = sv_peek_str(c->tid, upath, L->path, sizeof L->path);
        if (n < 0) {
            if (n == -EPERM)
                sv_say_once(SAY_PEEK, "cannot read the memory of pid %d (%s): its calls go to the host", (int)c->tid,
                            strerror(EPERM));
            return EMU_PASS; /* EFAULT, ENAMETOOLONG: the kernel gives the same answer */
        }
    }
    snprintf(trace_path, sizeof trace_path, "%s", L->path);
    if (L->path[0] == '/')
        return emu_path(L->path, follow, &L->entry, &L->root);
    /* Our descriptors are in the window: any other dirfd is the kernel's (glibc's fstat is
     * newfstatat(fd, "", AT_EMPTY_PATH), so this is a common case worth answering at once). */
    bool window = dirfd >= SV_FD_LO && dirfd < SV_FD_HI;
    struct desc *d = window ? fd_desc(c, dirfd) : NULL;
    if (!L->path[0]) {
        if (!empty_ok || !d)
            return EMU_PASS; /* ENOENT, the working directory, or not ours */
        L->entry = d->entry;
        L->root = d->root;
        return 0;
    }
    char base[PATH_MAX];
    if (!d && sv_fd_path(c->tid, dirfd == AT_FDCWD ? -1 : dirfd, base, sizeof base) < 0)
        return EMU_PASS;
    if (d) {
        L->root = d->root;
        int rc = emu_path_at(d->entry, d->root, L->path, follow, &L->entry);
        if (rc != EMU_PASS)
            return rc;
        int k = emu_agent_path(d->entry, d->root, L->abs, sizeof L->abs);
        if (k < 0 || (size_t)snprintf(L->abs + k, sizeof L->abs - (size_t)k, "/%s", L->path) >= sizeof L->abs - (size_t)k)
            return ENAMETOOLONG;
        return target_self(c, L->abs, sizeof L->abs) ? SV_HOST : ENAMETOOLONG;
    }
    if (base[0] != '/')
        return EMU_PASS; /* not a directory (a socket, a pipe): the kernel says ENOTDIR */
    int k = snprintf(L->abs, sizeof L->abs, "%s/%s", strcmp(base, "/") ? base : "", L->path);
    if (k < 0 || (size_t)k >= sizeof L->abs)
        return EMU_PASS;
    snprintf(trace_path, sizeof trace_path, "%s", L->abs);
    return emu_path(L->abs, follow, &L->entry, &L->root);
}

/* --- helpers ---------------------------------------------------------------------------------- */

/* Writes a result into the target's buffer: 0, -EFAULT, or SV_DONE when the call is gone. */
static int64_t put(const struct sv_call *c, uint64_t addr, const void *p, size_t n)
{
    if (!sv_valid(c))
        return SV_DONE;
    struct iovec r = {(void *)(uintptr_t)addr, n};
    return sv_pokev(c->tid, &r, 1, p, n) == (ssize_t)n ? 0 : -EFAULT;
}

/* The iovec array a readv/writev call passes (remote addresses): its count or -errno. */
static int peek_iov(const struct sv_call *c, uint64_t addr, uint64_t cnt, struct iovec *iov)
{
    if (cnt > IOV_MAX)
        return -EINVAL;
    if (!cnt)
        return 0;
    ssize_t n = sv_peek(c->tid, addr, iov, sizeof *iov * cnt);
    return n == (ssize_t)(sizeof *iov * cnt) ? (int)cnt : -EFAULT;
}

static size_t iov_total(const struct iovec *iov, int cnt)
{
    size_t t = 0;
    for (int i = 0; i < cnt; i++)
        t += iov[i].iov_len;
    return t;
}

static const struct seg_entry *ent(uint32_t e)
{
    return &emu_seg()->entries[e];
}

/* --- open ------------------------------------------------------------------------------------- */

/* The description is installed in the caller and the call answered with its number: one end of
 * a placeholder pipe (make_placeholder) at a free number of the window. */
static int64_t inject(const struct sv_call *c, uint32_t entry, enum emu_root root, int flags)
{
    struct placeholder ph;
    struct desc *d = calloc(1, sizeof *d);
    if (d && emu_seg()->entries[entry].cls == SEG_I) { /* /dev/ipmi0: its message queue */
        if ((d->ipmi = malloc(sizeof *d->ipmi)))
            emu_ipmi_init(d->ipmi);
        else {
            free(d);
            d = NULL;
        }
    }
    int e = d ? 0 : ENOMEM;
    bool for_writing = placeholder_writes(flags);
    if (!e && (for_writing || !sv_pool_take(&ph)))
        e = sv_placeholder_make(&ph, for_writing, for_writing ? c->sv->lifetimes : c->sv->closings);
    if (e || !set_ours(ph.keep, d)) {
        if (!e) {
            close(ph.give);
            close(ph.keep);
        }
        if (d)
            free(d->ipmi);
        free(d);
        sv_say_once(SAY_NOMEM, "cannot make a descriptor: %s", strerror(e ? e : ENOMEM));
        return -(e == EMFILE || e == ENFILE ? e : ENOMEM);
    }
    if (d->ipmi) { /* readable exactly while an answer waits (ipmi_poll): not the pool's one byte */
        char byte;
        if (read(ph.give, &byte, 1) != 1)
            sv_say_once(SAY_IPMI, "an IPMI placeholder had no byte to take: select() may not wait");
    }
    d->ino = ph.ino;
    d->ours = ph.keep;
    d->entry = entry;
    d->root = root;
    d->flags = flags;
    d->next = buckets[d->ino % BUCKETS];
    buckets[d->ino % BUCKETS] = d;
    nlive++;
    int slot = sv_free_slot(c->tid, SV_FD_LO);
    struct seccomp_notif_addfd a = {.id = c->id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (uint32_t)ph.give,
                                    .newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0};
    if (slot >= 0) {
        a.flags |= SECCOMP_ADDFD_FLAG_SETFD;
        a.newfd = (uint32_t)slot;
    } else {
        sv_say_once(SAY_WINDOW_FULL, "pid %d holds %d files in the window %d..%d: its further emulated files "
                    "are not readable", (int)c->tid, SV_FD_HI - SV_FD_LO, SV_FD_LO, SV_FD_HI - 1);
    }
    int fd = ioctl(c->sv->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
    if (fd < 0 && errno == EBADF && slot >= 0) {
        sv_say_once(SAY_RLIMIT, "pid %d's RLIMIT_NOFILE is below %d: its emulated files are not readable",
                    (int)c->tid, SV_FD_HI);
        a.flags &= ~(uint32_t)SECCOMP_ADDFD_FLAG_SETFD;
        a.newfd = 0;
        fd = ioctl(c->sv->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
    }
    e = errno;
    close(ph.give); /* the target holds the only copy of its end now */
    if (fd < 0) {
        desc_free(d); /* our end goes, and with it the pipe */
        return e == ENOENT ? SV_DONE : -e;
    }
    c->sv->n_emulated++;
    if (c->sv->trace) {
        char ap[PATH_MAX];
        fprintf(stderr, "hwemu-sv: %d open %s -> %d\n", (int)c->tid,
                emu_agent_path(entry, root, ap, sizeof ap) < 0 ? "?" : ap, fd);
    }
    return SV_DONE;
}

/* A file the host has, named through an emulated directory descriptor: opened here, installed
 * there (the kernel cannot resolve a name relative to our placeholder). */
static int64_t host_open(const struct sv_call *c, const struct loc *L, int flags, unsigned mode)
{
    if (!sv_valid(c))
        return SV_DONE;
    int fd = open(L->abs, flags | O_CLOEXEC, mode);
    if (fd < 0)
        return -errno;
    struct seccomp_notif_addfd a = {.id = c->id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (uint32_t)fd,
                                    .newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0};
    int r = ioctl(c->sv->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
    int e = errno;
    close(fd);
    return r < 0 && e != ENOENT ? -e : SV_DONE;
}

/* The target's own /proc/<pid>/status opened read-only (emu_status.h): the host's text of the
 * target's file with the node's CPU and memory-node lines, in a memfd installed in the target
 * (a real file: every later call on it is the kernel's). SV_CONTINUE for any other path, or
 * when the text cannot be made (the host's file then). */
static int64_t status_open(const struct sv_call *c, const struct loc *L, int flags)
{
    const char *abs = L->path[0] == '/' ? L->path : L->abs;
    size_t n = strlen(abs);
    if ((flags & (O_ACCMODE | O_PATH | O_DIRECTORY | O_CREAT)) != O_RDONLY || n < 7 || strcmp(abs + n - 7, "/status") ||
        emu_ncpus() <= 0)
        return SV_CONTINUE;
    pid_t tgid = c->tid;
    char host[64];
    if (sv_ids(c->tid, &tgid, NULL, NULL) < 0 || !emu_status_path(abs, tgid, c->tid, host, sizeof host))
        return SV_CONTINUE;
    static char text[EMU_STATUS_MAX], out[EMU_STATUS_MAX];
    int in = open(host, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return SV_CONTINUE;
    size_t len = 0;
    ssize_t got;
    while (len < sizeof text && (got = read(in, text + len, sizeof text - len)) > 0)
        len += (size_t)got;
    close(in);
    size_t m = emu_status_filter(text, len, emu_ncpus(), emu_nnodes(), out, sizeof out);
    int fd = m ? memfd_create("status", MFD_CLOEXEC) : -1;
    int64_t r = SV_CONTINUE;
    if (fd >= 0 && pwrite(fd, out, m, 0) == (ssize_t)m && sv_valid(c)) {
        struct seccomp_notif_addfd a = {.id = c->id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (uint32_t)fd,
                                        .newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0};
        if (ioctl(c->sv->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) >= 0 || errno == ENOENT)
            r = SV_DONE;
    }
    if (fd >= 0)
        close(fd);
    return r;
}

/* A GPU vendor's management library opened by path on a node that has it (ld.so searching for
 * libnvidia-ml.so.1 or librocm_smi64.so.7, a dlopen naming the host's copy or AMD's
 * /opt/rocm/lib/libamd_smi.so): the node's, the path `hwemu exec` put in HWEMU_NVML (NVIDIA
 * nodes), HWEMU_AMDSMI or HWEMU_ROCMSMI (AMD GPU nodes; not Debian's librocm_smi64.so.1), as
 * the shim's dlopen gives it (emu_hide.h emu_lib_node_var). SV_CONTINUE for any other path. */
static int64_t node_library_open(const struct sv_call *c, struct loc *L, int flags)
{
    const char *abs = L->path[0] == '/' ? L->path : L->abs, *var = emu_lib_node_var(abs);
    const char *mine = var ? getenv(var) : NULL;
    if ((flags & (O_ACCMODE | O_CREAT | O_PATH)) != O_RDONLY || !mine || mine[0] != '/' || strlen(mine) >= sizeof L->abs ||
        (!strcmp(var, "HWEMU_NVML") && !emu_lib_nvml(emu_seg(), abs)))
        return SV_CONTINUE;
    strcpy(L->abs, mine);
    return host_open(c, L, flags, 0);
}

/* The shim's rules at open (emu_open_check), and ELOOP for a link under O_NOFOLLOW. */
static int64_t a_open(const struct sv_call *c, int dirfd, uint64_t upath, int flags, unsigned mode)
{
    struct loc L;
    L.abs[0] = 0;
    bool follow = !(flags & O_NOFOLLOW);
    int rc = locate(c, dirfd, upath, follow, false, &L);
    int64_t r;
    if (rc == EMU_PASS && (r = node_library_open(c, &L, flags)) != SV_CONTINUE)
        return r;
    if (rc == EMU_PASS)
        return status_open(c, &L, flags);
    if (rc == SV_HOST)
        return host_open(c, &L, flags, mode);
    if (rc == ENOENT && (flags & O_CREAT))
        return -EACCES; /* kernfs directories cannot create */
    if (rc)
        return -rc;
    const struct seg_entry *e = ent(L.entry);
    if (flags & O_PATH) {
        if ((flags & O_DIRECTORY) && e->kind != SEG_DIR)
            return -ENOTDIR;
    } else {
        if (!follow && e->kind == SEG_LINK)
            return -ELOOP;
        int err = emu_open_check(L.entry, flags);
        if (err)
            return -err;
        if (L.root == EMU_ROOT_DEV) {
            uid_t ruid = 0, euid = 0;
            if (sv_ids(c->tid, NULL, &ruid, &euid) < 0)
                return sv_valid(c) ? -EACCES : SV_DONE;
            if ((err = emu_device_check(L.entry, (unsigned)euid)))
                return -err;
        }
    }
    if (!sv_valid(c))
        return SV_DONE; /* the path we read may not have been this call's */
    return inject(c, L.entry, L.root, flags);
}

static int64_t a_openat2(const struct sv_call *c)
{
    struct {
        uint64_t flags, mode, resolve;
    } how;
    if (c->a[3] < sizeof how || sv_peek(c->tid, c->a[2], &how, sizeof how) != sizeof how)
        return SV_CONTINUE; /* the kernel's EINVAL or EFAULT */
    return a_open(c, (int)c->a[0], c->a[1], (int)how.flags, (unsigned)how.mode);
}

/* --- metadata --------------------------------------------------------------------------------- */

enum stat_form { F_STAT, F_STATX };

/* stat, lstat, newfstatat, statx (form F_STATX) and, through AT_EMPTY_PATH, fstat. */
static int64_t a_stat(const struct sv_call *c, int dirfd, uint64_t upath, uint64_t ubuf, int flags, enum stat_form form)
{
    struct loc L;
    struct stat st;
    int rc = locate(c, dirfd, upath, !(flags & AT_SYMLINK_NOFOLLOW), flags & AT_EMPTY_PATH, &L);
    if (rc == EMU_PASS)
        return SV_CONTINUE;
    if (rc == SV_HOST) {
        if (fstatat(AT_FDCWD, L.abs, &st, flags & AT_SYMLINK_NOFOLLOW) < 0)
            return -errno;
    } else if (rc) {
        return -rc;
    } else {
        emu_stat(L.entry, L.root, &st);
    }
    if (form == F_STATX) {
        struct statx sx;
        emu_stat_to_statx(&st, &sx);
        return put(c, ubuf, &sx, sizeof sx);
    }
    return put(c, ubuf, &st, sizeof st);
}

static int64_t a_fstat(const struct sv_call *c, int fd, uint64_t ubuf)
{
    struct desc *d = fd_desc(c, fd);
    if (!d)
        return SV_CONTINUE;
    struct stat st;
    emu_stat(d->entry, d->root, &st);
    return put(c, ubuf, &st, sizeof st);
}

static int64_t put_statfs(const struct sv_call *c, enum emu_root root, uint64_t ubuf)
{
    struct statfs sf;
    emu_statfs(root, &sf);
    return put(c, ubuf, &sf, sizeof sf);
}

static int64_t a_statfs(const struct sv_call *c, uint64_t upath, uint64_t ubuf)
{
    struct loc L;
    int rc = locate(c, AT_FDCWD, upath, true, false, &L);
    if (rc == EMU_PASS || rc == SV_HOST) /* (no SV_HOST without a directory descriptor) */
        return SV_CONTINUE;
    return rc ? -rc : put_statfs(c, L.root, ubuf);
}

static int64_t a_fstatfs(const struct sv_call *c, int fd, uint64_t ubuf)
{
    struct desc *d = fd_desc(c, fd);
    return d ? put_statfs(c, d->root, ubuf) : SV_CONTINUE;
}

/* wrap_stat.c's access: the kernel's permission check, with the caller's real uid (its
 * effective one with AT_EACCESS); root may read and write anything, and execute files with
 * an execute bit; others are "others" of the root-owned files. */
static int64_t a_access(const struct sv_call *c, int dirfd, uint64_t upath, int mode, int flags)
{
    struct loc L;
    int rc = locate(c, dirfd, upath, !(flags & AT_SYMLINK_NOFOLLOW), flags & AT_EMPTY_PATH, &L);
    if (rc == EMU_PASS)
        return SV_CONTINUE;
    if (rc == SV_HOST)
        return faccessat(AT_FDCWD, L.abs, mode, flags & (AT_EACCESS | AT_SYMLINK_NOFOLLOW)) < 0 ? -errno : 0;
    if (rc)
        return -rc;
    if (mode == F_OK)
        return 0;
    uid_t ruid = 0, euid = 0;
    if (sv_ids(c->tid, NULL, &ruid, &euid) < 0)
        return sv_valid(c) ? -EACCES : SV_DONE;
    return -emu_access(L.entry, mode, (flags & AT_EACCESS) ? euid : ruid);
}

static int64_t a_readlink(const struct sv_call *c, int dirfd, uint64_t upath, uint64_t ubuf, int64_t size)
{
    struct loc L;
    int rc = locate(c, dirfd, upath, false, false, &L);
    if (rc == EMU_PASS)
        return SV_CONTINUE;
    if (size <= 0)
        return -EINVAL;
    char buf[PATH_MAX];
    const char *text;
    size_t len;
    if (rc == SV_HOST) {
        ssize_t n = readlink(L.abs, buf, sizeof buf);
        if (n < 0)
            return -errno;
        text = buf;
        len = (size_t)n;
    } else if (rc) {
        return -rc;
    } else {
        const struct seg_entry *e = ent(L.entry);
        if (e->kind != SEG_LINK)
            return -EINVAL;
        text = emu_seg()->strings + e->text_off;
        len = e->text_len;
    }
    if (len > (uint64_t)size)
        len = (size_t)size;
    int64_t r = put(c, ubuf, text, len);
    return r ? r : (int64_t)len;
}

/* The namespace calls sysfs refuses (wrap_stat.c's refuse): EPERM for a path in the node's tree,
 * existing or not; the kernel answers any other path. */
static int64_t a_refuse_path(const struct sv_call *c, int dirfd, uint64_t upath)
{
    struct loc L;
    int rc = locate(c, dirfd, upath, false, false, &L);
    if (rc == EMU_PASS)
        return SV_CONTINUE;
    return rc == 0 || rc == ENOENT || rc == SV_HOST ? -EPERM : -rc;
}

static int64_t a_rename(const struct sv_call *c, int fd1, uint64_t p1, int fd2, uint64_t p2)
{
    int64_t r = a_refuse_path(c, fd1, p1);
    return r == SV_CONTINUE ? a_refuse_path(c, fd2, p2) : r;
}

/* --- reading and writing ------------------------------------------------------------------------ */

/* An MSR device's read (emu_msr_read) into each vector in turn, as do_loop_readv_writev calls
 * msr_read per vector: the register repeated, whole registers up to the first that cannot be
 * written (EFAULT when none could), a vector whose length is not a multiple of 8 EINVAL. */
static int64_t msr_read(const struct sv_call *c, struct desc *d, const struct iovec *riov, int cnt, int64_t off)
{
    static unsigned char page[4096];
    int64_t total = 0;
    for (int i = 0; i < cnt; i++) {
        unsigned char reg[8];
        ssize_t k = emu_msr_read(d->entry, d->flags, off, riov[i].iov_len, reg);
        if (k < 0)
            return total ? total : k;
        if (k == 0)
            continue;
        for (size_t j = 0; j < sizeof page; j += 8)
            memcpy(page + j, reg, 8);
        size_t done = 0;
        while (done < (size_t)k) {
            size_t want = (size_t)k - done < sizeof page ? (size_t)k - done : sizeof page;
            struct iovec to = {(char *)riov[i].iov_base + done, want};
            if (!sv_valid(c))
                return SV_DONE;
            ssize_t got = sv_pokev(c->tid, &to, 1, page, want);
            done += got > 0 ? (size_t)got / 8 * 8 : 0;
            if (got < (ssize_t)want)
                break;
        }
        total += (int64_t)done;
        if (done < (size_t)k)
            return total ? total : -EFAULT;
    }
    return total;
}

/* read/readv (positional false: at the file position, which moves) and pread64/preadv/preadv2
 * (at off): emu_read.c's answer, written into the caller's buffers; an MSR device's is
 * msr_read's, and never moves the position. */
static int64_t a_read(const struct sv_call *c, int fd, const struct iovec *riov, int cnt, bool positional, int64_t off)
{
    struct desc *d = fd_desc(c, fd);
    if (!d)
        return SV_CONTINUE;
    if (emu_is_msr(d->entry))
        return msr_read(c, d, riov, cnt, positional ? off : d->pos);
    const char *bytes;
    ssize_t k = emu_read_at(&d->show, d->entry, d->flags, positional ? off : d->pos, iov_total(riov, cnt), &bytes);
    if (k <= 0)
        return k;
    if (!sv_valid(c))
        return SV_DONE;
    k = sv_pokev(c->tid, riov, cnt, bytes, (size_t)k);
    if (k <= 0)
        return -EFAULT;
    if (!positional)
        d->pos += k;
    return k;
}

static int store(const struct sv_call *c, uint32_t entry, const char *buf, size_t len)
{
    pid_t tgid = c->tid;
    sv_ids(c->tid, &tgid, NULL, NULL);
    return emu_write(entry, buf, len, tgid);
}

/* The writer is long gone: a refusal is said on stderr (and is an event), as the shim says it. */
static void store_escaped(struct desc *d)
{
    int err = emu_write(d->entry, d->escaped, d->nescaped, 0);
    char ap[PATH_MAX];
    if (err && emu_agent_path(d->entry, d->root, ap, sizeof ap) >= 0)
        fprintf(stderr, "hwemu exec: %s: write error: %s\n", ap, strerror(err));
    d->nescaped = 0;
}

/* write/pwrite64/writev/pwritev/pwritev2: one store of at most a page, the offset ignored; an MSR
 * device writes its registers at off (-1: the position). */
static int64_t a_write(const struct sv_call *c, int fd, const struct iovec *riov, int cnt, int64_t off)
{
    struct desc *d = fd_desc(c, fd);
    if (!d)
        return SV_CONTINUE;
    if ((d->flags & O_PATH) || (d->flags & O_ACCMODE) == O_RDONLY)
        return -EBADF;
    if (ent(d->entry)->cls == SEG_I)
        return -EINVAL; /* ipmi_devintf has no write: vfs_write's answer, before the buffer is looked at */
    size_t total = iov_total(riov, cnt);
    if (!total)
        return 0; /* kernfs: a zero-length write never reaches the store */
    char page[SEG_READ_MAX];
    ssize_t got = sv_peekv(c->tid, riov, cnt, page, total < sizeof page ? total : sizeof page);
    if (got <= 0)
        return -EFAULT;
    if (!sv_valid(c))
        return SV_DONE;
    if (emu_is_msr(d->entry)) {
        pid_t tgid = c->tid;
        sv_ids(c->tid, &tgid, NULL, NULL);
        if (off < -1)
            return -EINVAL;
        return emu_msr_write(d->entry, off >= 0 ? off : d->pos, page, (size_t)got, tgid);
    }
    int err = store(c, d->entry, page, (size_t)got);
    if (c->sv->trace)
        fprintf(stderr, "hwemu-sv: %d write %.*s -> %s\n", (int)c->tid, (int)strnlen(page, (size_t)got), page,
                err ? strerror(err) : "ok");
    return err ? -err : got;
}

static int64_t a_lseek(const struct sv_call *c, int fd, int64_t off, int whence)
{
    struct desc *d = fd_desc(c, fd);
    if (!d)
        return SV_CONTINUE;
    int64_t pos = emu_read_seek(d->entry, d->root, d->flags, d->pos, off, whence);
    if (pos >= 0)
        d->pos = pos;
    return pos;
}

/* copy_file_range, sendfile and splice from or to an emulated file are refused as sysfs
 * refuses them, so callers (Go's io.Copy, cat) fall back to read and write. */
static int64_t a_refuse(const struct sv_call *c, int fd1, int fd2, int err)
{
    if ((fd1 >= SV_FD_LO && fd1 < SV_FD_HI && fd_desc(c, fd1)) || (fd2 >= SV_FD_LO && fd2 < SV_FD_HI && fd_desc(c, fd2)))
        return -err;
    return SV_CONTINUE;
}

/* Installs a copy of the target's descriptor fd (the same description) at slot and answers the
 * call with it. */
static int64_t install_copy(const struct sv_call *c, int fd, int slot, bool cloexec)
{
    int dfd = sv_getfd(c->tid, fd);
    if (dfd < 0)
        return SV_CONTINUE;
    int64_t r = SV_CONTINUE;
    if (sv_valid(c)) {
        struct seccomp_notif_addfd a = {.id = c->id, .flags = SECCOMP_ADDFD_FLAG_SEND | SECCOMP_ADDFD_FLAG_SETFD,
                                        .srcfd = (uint32_t)dfd, .newfd = (uint32_t)slot,
                                        .newfd_flags = cloexec ? O_CLOEXEC : 0};
        if (ioctl(c->sv->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) >= 0 || errno == ENOENT)
            r = SV_DONE;
    }
    close(dfd);
    return r;
}

/* dup and fcntl(F_DUPFD, F_DUPFD_CLOEXEC) of an emulated descriptor: the copy goes into the
 * window too, so reads through it are still answered here. */
static int64_t a_dup(const struct sv_call *c, int fd, int minfd, bool cloexec)
{
    if (minfd >= SV_FD_HI || !fd_desc(c, fd))
        return SV_CONTINUE;
    int slot = sv_free_slot(c->tid, minfd);
    return slot < 0 ? SV_CONTINUE : install_copy(c, fd, slot, cloexec);
}

/* dup2/dup3 of an emulated descriptor onto newfd: inside the window, the same description; below
 * it (a shell redirecting a file to stdin), a memfd with the content shown now, which the
 * kernel reads from without us (a copy there could not be answered). A write-only one stays
 * the pipe: what is written through it is stored once its last writer closes (sv_reap). */
static int64_t a_dup2(const struct sv_call *c, int fd, int newfd, int flags)
{
    struct desc *d = fd_desc(c, fd);
    if (!d || fd == newfd || newfd < 0)
        return SV_CONTINUE;
    bool cloexec = flags & O_CLOEXEC;
    if (newfd >= SV_FD_LO && newfd < SV_FD_HI)
        return install_copy(c, fd, newfd, cloexec);
    if ((d->flags & O_ACCMODE) == O_WRONLY || (d->flags & O_PATH) || ent(d->entry)->kind != SEG_FILE)
        return SV_CONTINUE;
    int m = memfd_create("hwemu-sv-copy", MFD_CLOEXEC);
    if (m < 0)
        return SV_CONTINUE;
    char tmp[SEG_TEXT_MAX];
    size_t len;
    const char *t = seg_read(emu_seg(), d->entry, seg_now_ns(), tmp, &len);
    int64_t r = SV_CONTINUE;
    if (t && pwrite(m, t, len, 0) == (ssize_t)len && sv_valid(c)) {
        struct seccomp_notif_addfd a = {.id = c->id, .flags = SECCOMP_ADDFD_FLAG_SEND | SECCOMP_ADDFD_FLAG_SETFD,
                                        .srcfd = (uint32_t)m, .newfd = (uint32_t)newfd,
                                        .newfd_flags = cloexec ? O_CLOEXEC : 0};
        if (ioctl(c->sv->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) >= 0 || errno == ENOENT)
            r = SV_DONE;
    }
    close(m);
    return r;
}

/* getdents64: emu_dir.c's listing, written into the caller's buffer. */
static int64_t a_getdents64(const struct sv_call *c, int fd, uint64_t ubuf, uint64_t count)
{
    struct desc *d = fd_desc(c, fd);
    if (!d)
        return SV_CONTINUE;
    static char buf[65536] __attribute__((aligned(8)));
    int64_t pos = d->pos;
    ssize_t used = emu_dir_getdents64(d->entry, d->root, d->flags, &pos, buf, count < sizeof buf ? (size_t)count : sizeof buf);
    if (used > 0) {
        int64_t rc = put(c, ubuf, buf, (size_t)used);
        if (rc)
            return rc;
    }
    if (used >= 0)
        d->pos = pos;
    return used;
}

/* --- the machine ------------------------------------------------------------------------------------ */

/* sched_getaffinity(2) of the caller (pid 0, or its own thread or process id): every CPU of the
 * node, as the kernel copies it: len below the cpumask size (nr_cpu_ids bits rounded up to a
 * long) or not a multiple of a long EINVAL, else the mask and the cpumask size as the result.
 * Another process's affinity is the host's. */
static int64_t a_getaffinity(const struct sv_call *c, pid_t pid, uint64_t len, uint64_t addr)
{
    int n = emu_ncpus();
    pid_t tgid = c->tid;
    sv_ids(c->tid, &tgid, NULL, NULL);
    if (n <= 0 || (pid != 0 && pid != c->tid && pid != tgid))
        return SV_CONTINUE;
    size_t need = ((size_t)n + 63) / 64 * 8;
    if (len < need || len % sizeof(long))
        return -EINVAL;
    unsigned char mask[1024] = {0};
    if (need > sizeof mask)
        return SV_CONTINUE;
    for (int i = 0; i < n; i++)
        mask[i / 8] |= (unsigned char)(1u << (i % 8));
    if (!sv_valid(c))
        return SV_DONE;
    struct iovec to = {(void *)(uintptr_t)addr, need};
    return sv_pokev(c->tid, &to, 1, mask, need) == (ssize_t)need ? (int64_t)need : -EFAULT;
}

/* --- ioctl: /dev/ipmi0 ----------------------------------------------------------------------------- */

/* The target's memory, for emu_ipmi_ioctl: a copy that fails is EFAULT while the call stands,
 * EMU_IPMI_GONE once it does not (put's SV_DONE). */
static int ipmi_in(void *ctx, uint64_t addr, void *buf, size_t n)
{
    const struct sv_call *c = ctx;
    if (sv_peek(c->tid, addr, buf, n) == (ssize_t)n)
        return 0;
    return sv_valid(c) ? EFAULT : EMU_IPMI_GONE;
}

static int ipmi_out(void *ctx, uint64_t addr, const void *buf, size_t n)
{
    int64_t w = put(ctx, addr, buf, n);
    return w == SV_DONE ? EMU_IPMI_GONE : (int)-w;
}

static bool ipmi_valid(void *ctx)
{
    return sv_valid(ctx);
}

/* The OpenIPMI ioctls on an emulated /dev/ipmi0: emu_ipmi_ioctl's answers, the arguments
 * copied from and to the target. Its placeholder pipe holds a byte exactly while an answer
 * waits, so poll() and select() say what ipmi_poll says. Any other ioctl (FIOCLEX, FIONBIO, the
 * generic ones; else the pipe's ENOTTY, as the shim's), and the ioctls of other files, reach the
 * kernel. */
static int64_t a_ioctl(const struct sv_call *c, int fd, unsigned long req, uint64_t arg)
{
    struct desc *d = fd_desc(c, fd);
    struct ipmi_queue *q = d ? d->ipmi : NULL;
    if (!q)
        return SV_CONTINUE; /* not /dev/ipmi0: the kernel answers on the placeholder, as before */
    const struct emu_ipmi_io io = {ipmi_in, ipmi_out, ipmi_valid, (void *)c};
    unsigned before = q->count;
    int err = emu_ipmi_ioctl(q, emu_seg(), req, arg, &io);
    if (!before && q->count && write(d->ours, "", 1) != 1)
        sv_say_once(SAY_IPMI, "cannot make an IPMI descriptor readable: %s", strerror(errno));
    if (before && !q->count) { /* empty: take the byte back through a copy of the target's end */
        int dfd = sv_getfd(c->tid, fd);
        char byte;
        if (dfd >= 0) {
            if (read(dfd, &byte, 1) != 1)
                sv_say_once(SAY_IPMI, "cannot clear an IPMI descriptor's readiness");
            close(dfd);
        }
    }
    if (err == EMU_IPMI_NOT_OURS)
        return SV_CONTINUE;
    if (err == EMU_IPMI_GONE)
        return SV_DONE;
    return -err;
}

/* --- dispatch ------------------------------------------------------------------------------------- */

static int64_t answer(const struct sv_call *c)
{
    const uint64_t *a = c->a;
    struct iovec one = {(void *)(uintptr_t)a[1], (size_t)a[2]}, iov[IOV_MAX];
    int n;
    switch (c->nr) {
#ifdef SYS_open
    case SYS_open: return a_open(c, AT_FDCWD, a[0], (int)a[1], (unsigned)a[2]);
#endif
#ifdef SYS_creat
    case SYS_creat: return a_open(c, AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, (unsigned)a[1]);
#endif
    case SYS_openat: return a_open(c, (int)a[0], a[1], (int)a[2], (unsigned)a[3]);
#ifdef SYS_openat2
    case SYS_openat2: return a_openat2(c);
#endif
#ifdef SYS_stat
    case SYS_stat: return a_stat(c, AT_FDCWD, a[0], a[1], 0, F_STAT);
#endif
#ifdef SYS_lstat
    case SYS_lstat: return a_stat(c, AT_FDCWD, a[0], a[1], AT_SYMLINK_NOFOLLOW, F_STAT);
#endif
#ifdef SYS_newfstatat
    case SYS_newfstatat: return a_stat(c, (int)a[0], a[1], a[2], (int)a[3], F_STAT);
#endif
    case SYS_statx: return a_stat(c, (int)a[0], a[1], a[4], (int)a[2], F_STATX);
    case SYS_fstat: return a_fstat(c, (int)a[0], a[1]);
    case SYS_statfs: return a_statfs(c, a[0], a[1]);
    case SYS_fstatfs: return a_fstatfs(c, (int)a[0], a[1]);
#ifdef SYS_access
    case SYS_access: return a_access(c, AT_FDCWD, a[0], (int)a[1], 0);
#endif
    case SYS_faccessat: return a_access(c, (int)a[0], a[1], (int)a[2], 0);
#ifdef SYS_faccessat2
    case SYS_faccessat2: return a_access(c, (int)a[0], a[1], (int)a[2], (int)a[3]);
#endif
#ifdef SYS_readlink
    case SYS_readlink: return a_readlink(c, AT_FDCWD, a[0], a[1], (int64_t)(int)a[2]);
#endif
    case SYS_readlinkat: return a_readlink(c, (int)a[0], a[1], a[2], (int64_t)(int)a[3]);
#ifdef SYS_mkdir
    case SYS_mkdir:
#endif
#ifdef SYS_rmdir
    case SYS_rmdir:
#endif
#ifdef SYS_unlink
    case SYS_unlink:
#endif
#if defined(SYS_mkdir) || defined(SYS_rmdir) || defined(SYS_unlink)
        return a_refuse_path(c, AT_FDCWD, a[0]);
#endif
    case SYS_mkdirat:
    case SYS_unlinkat: return a_refuse_path(c, (int)a[0], a[1]);
#ifdef SYS_symlink
    case SYS_symlink: return a_refuse_path(c, AT_FDCWD, a[1]);
#endif
    case SYS_symlinkat: return a_refuse_path(c, (int)a[1], a[2]);
#ifdef SYS_rename
    case SYS_rename: return a_rename(c, AT_FDCWD, a[0], AT_FDCWD, a[1]);
#endif
    case SYS_renameat:
    case SYS_renameat2: return a_rename(c, (int)a[0], a[1], (int)a[2], a[3]);
    case SYS_read: return a_read(c, (int)a[0], &one, 1, false, 0);
    case SYS_pread64: return a_read(c, (int)a[0], &one, 1, true, (int64_t)a[3]);
    case SYS_readv:
    case SYS_preadv:
    case SYS_preadv2:
        if (!fd_desc(c, (int)a[0]))
            return SV_CONTINUE;
        if ((n = peek_iov(c, a[1], a[2], iov)) < 0)
            return n;
        if (c->nr == SYS_readv || (c->nr == SYS_preadv2 && (int64_t)a[3] == -1))
            return a_read(c, (int)a[0], iov, n, false, 0);
        return a_read(c, (int)a[0], iov, n, true, (int64_t)a[3]);
    case SYS_write: return a_write(c, (int)a[0], &one, 1, -1);
    case SYS_pwrite64: return a_write(c, (int)a[0], &one, 1, (int64_t)a[3] < 0 ? -2 : (int64_t)a[3]);
    case SYS_writev:
    case SYS_pwritev:
    case SYS_pwritev2:
        if (!fd_desc(c, (int)a[0]))
            return SV_CONTINUE;
        if ((n = peek_iov(c, a[1], a[2], iov)) < 0)
            return n;
        return a_write(c, (int)a[0], iov, n,
                       c->nr == SYS_writev ? -1 : (int64_t)a[3] < 0 ? (c->nr == SYS_pwritev2 && (int64_t)a[3] == -1 ? -1 : -2)
                                                                    : (int64_t)a[3]);
    case SYS_lseek: return a_lseek(c, (int)a[0], (int64_t)a[1], (int)a[2]);
    case SYS_ioctl: return a_ioctl(c, (int)a[0], (unsigned long)a[1], a[2]);
    case SYS_getdents64: return a_getdents64(c, (int)a[0], a[1], a[2]);
    case SYS_dup: return a_dup(c, (int)a[0], 0, false);
#ifdef SYS_dup2
    case SYS_dup2: return a_dup2(c, (int)a[0], (int)a[1], 0);
#endif
    case SYS_dup3: return a_dup2(c, (int)a[0], (int)a[1], (int)a[2]);
    case SYS_fcntl: /* the filter sends F_DUPFD and F_DUPFD_CLOEXEC only */
        if ((int)a[1] == F_DUPFD || (int)a[1] == F_DUPFD_CLOEXEC)
            return a_dup(c, (int)a[0], (int)a[2], (int)a[1] == F_DUPFD_CLOEXEC);
        return SV_CONTINUE;
    case SYS_copy_file_range: return a_refuse(c, (int)a[0], (int)a[2], EXDEV);
    case SYS_sendfile: return a_refuse(c, (int)a[1], -1, EINVAL);
    case SYS_splice: return a_refuse(c, (int)a[0], (int)a[2], EINVAL);
    case SYS_sched_getaffinity: return a_getaffinity(c, (pid_t)a[0], a[1], a[2]);
    default: return SV_CONTINUE;
    }
}

static int64_t prof_ns[512], prof_n[512];

void sv_profile(void)
{
    for (int i = 0; i < 512; i++)
        if (prof_n[i])
            fprintf(stderr, "hwemu-sv: syscall %d: %lld calls, %.0f ns each in the supervisor\n", i,
                    (long long)prof_n[i], (double)prof_ns[i] / (double)prof_n[i]);
}

void sv_answer(struct sv *sv, const struct seccomp_notif *n)
{
    struct sv_call c = {.sv = sv, .id = n->id, .tid = (pid_t)n->pid, .nr = n->data.nr};
    memcpy(c.a, n->data.args, sizeof c.a);
    sv->n_notif++;
    int64_t t0 = sv->stats ? seg_now_ns() : 0;
    int64_t r = SV_NOT_TIME;
    if (sv_time_on()) {
        sv_time_running(c.tid);
        r = sv_time_answer(sv, &c);
    }
    if (r == SV_NOT_TIME)
        r = answer(&c);
    int64_t took = sv->stats ? seg_now_ns() - t0 : 0;
    if (sv->stats && c.nr >= 0 && c.nr < 512) {
        prof_ns[c.nr] += took;
        prof_n[c.nr]++;
    }
    if (sv->trace && took > 1000000) /* a slow answer (the caller waited for it: at --speed N, N times in emulated time) */
        fprintf(stderr, "hwemu-sv: %d syscall %d took %.1f ms in the supervisor (real %lld)\n", (int)c.tid, c.nr,
                (double)took / 1e6, (long long)(t0 + took));
    if (sv->trace && r != SV_CONTINUE && r != SV_DONE)
        fprintf(stderr, "hwemu-sv: %d syscall %d %s -> %lld%s%s\n", (int)c.tid, c.nr, trace_path, (long long)r,
                r < 0 ? " " : "", r < 0 ? strerror((int)-r) : "");
    trace_path[0] = 0;
    sv_reply(&c, r);
}
