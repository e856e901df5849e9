/* sv_target: the supervisor's reach into a supervised process: its memory (process_vm_readv and
 * process_vm_writev, which need ptrace-level access: same uid, and under Yama an ancestor,
 * which the supervisor is), its descriptors (pidfd_getfd through a pidfd per calling thread,
 * about 1 us; /proc/<tid>/fd when there is no pidfd for a thread, before 6.9, about 6 us), its
 * working directory (/proc/<tid>/cwd), and the replies to its notifications.
 *
 * Every value read from a target is untrusted and may change under us (another thread can
 * rewrite a path after the kernel sent the notification): callers check sv_valid() after
 * reading and before acting, and the kernel's CONTINUE runs with the target's own arguments.
 * What it must never do: block on the target (every call here returns at once), or write into
 * a target whose call is no longer pending. */
#include "sv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <fcntl.h>
#include <unistd.h>

#define CHUNK 4096 /* reads of target strings stop at 4 KiB boundaries: a page may be unmapped */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* 6.9: a pidfd for a thread, not only a process */
#endif

ssize_t sv_peek(pid_t tid, uint64_t addr, void *buf, size_t len)
{
    struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
    ssize_t n = process_vm_readv(tid, &l, 1, &r, 1, 0);
    return n < 0 ? -errno : n;
}

ssize_t sv_peekv(pid_t tid, const struct iovec *riov, int cnt, void *buf, size_t len)
{
    struct iovec l = {buf, len};
    ssize_t n = process_vm_readv(tid, &l, 1, riov, (unsigned long)cnt, 0);
    return n < 0 ? -errno : n;
}

ssize_t sv_pokev(pid_t tid, const struct iovec *riov, int cnt, const void *buf, size_t len)
{
    struct iovec l = {(void *)buf, len};
    ssize_t n = process_vm_writev(tid, &l, 1, riov, (unsigned long)cnt, 0);
    return n < 0 ? -errno : n;
}

ssize_t sv_peek_str(pid_t tid, uint64_t addr, char *buf, size_t cap)
{
    size_t got = 0;
    while (got + 1 < cap) {
        size_t want = CHUNK - ((addr + got) & (CHUNK - 1));
        if (want > cap - 1 - got)
            want = cap - 1 - got;
        ssize_t n = sv_peek(tid, addr + got, buf + got, want);
        if (n <= 0)
            return n < 0 ? n : -EFAULT;
        char *z = memchr(buf + got, 0, (size_t)n);
        if (z)
            return z - buf;
        got += (size_t)n;
    }
    return -ENAMETOOLONG;
}

bool sv_valid(const struct sv_call *c)
{
    uint64_t id = c->id;
    return ioctl(c->sv->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

void sv_reply(const struct sv_call *c, int64_t answer)
{
    if (answer == SV_DONE)
        return;
    struct seccomp_notif_resp r = {.id = c->id};
    if (answer == SV_CONTINUE) {
        r.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        c->sv->n_continue++;
    } else if (answer < 0) {
        r.error = (int32_t)answer;
    } else {
        r.val = answer;
    }
    if (ioctl(c->sv->listener, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0 && errno != ENOENT)
        sv_say_once(0, "SECCOMP_IOCTL_NOTIF_SEND failed: %s", strerror(errno));
}

ssize_t sv_fd_path(pid_t tid, int fd, char *buf, size_t len)
{
    char p[64];
    if (fd < 0)
        snprintf(p, sizeof p, "/proc/%d/cwd", (int)tid);
    else
        snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)tid, fd);
    ssize_t n = readlink(p, buf, len - 1);
    if (n < 0)
        return -errno;
    buf[n] = 0;
    return n;
}

/* pidfds of the threads that called, by tid: a pidfd names one task for good, so a tid reused
 * by a new thread only costs a failed pidfd_getfd (ESRCH) and a fresh pidfd. */
#define PIDFD_SLOTS 256
static struct {
    pid_t tid;
    int fd;
} pidfds[PIDFD_SLOTS];

void sv_target_init(void)
{
    for (int i = 0; i < PIDFD_SLOTS; i++)
        pidfds[i].fd = -1;
}

static int pidfd_of(pid_t tid, bool fresh)
{
    unsigned h = (unsigned)tid % PIDFD_SLOTS;
    if (!fresh && pidfds[h].tid == tid && pidfds[h].fd >= 0)
        return pidfds[h].fd;
    if (pidfds[h].fd >= 0)
        close(pidfds[h].fd);
    int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
    if (fd < 0 && errno == EINVAL)
        fd = (int)syscall(SYS_pidfd_open, tid, 0); /* before 6.9: thread-group leaders only */
    pidfds[h].tid = tid;
    pidfds[h].fd = fd;
    return fd;
}

int sv_getfd(pid_t tid, int fd)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int p = pidfd_of(tid, attempt > 0);
        if (p < 0)
            return -ENOSYS;
        int d = (int)syscall(SYS_pidfd_getfd, p, fd, 0);
        if (d >= 0)
            return d;
        if (errno != ESRCH)
            return errno == EBADF ? -EBADF : -ENOSYS;
    }
    return -ENOSYS;
}

int sv_free_slot(pid_t tid, int from)
{
    /* A rotating start spreads the numbers over the window, so the first probe is nearly
     * always free even for a process that keeps a few dozen emulated files open. */
    static unsigned next;
    const unsigned n = SV_FD_HI - SV_FD_LO;
    bool procfs = false;
    char p[64];
    for (unsigned i = 0; i < n; i++) {
        int fd = SV_FD_LO + (int)((next + i) % n);
        if (fd < from)
            continue;
        if (!procfs) {
            int d = sv_getfd(tid, fd);
            if (d >= 0) {
                close(d);
                continue;
            }
            if (d == -EBADF) {
                next = (unsigned)(fd - SV_FD_LO + 1);
                return fd;
            }
            procfs = true; /* no pidfd for this thread: ask /proc */
        }
        snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)tid, fd);
        if (faccessat(AT_FDCWD, p, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
            next = (unsigned)(fd - SV_FD_LO + 1);
            return fd;
        }
    }
    return -1;
}

int sv_ids(pid_t tid, pid_t *tgid, uid_t *ruid, uid_t *euid)
{
    char p[64], buf[2048];
    snprintf(p, sizeof p, "/proc/%d/status", (int)tid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int e = errno;
    close(fd);
    if (n <= 0)
        return n < 0 ? -e : -EIO;
    buf[n] = 0;
    const char *t = strstr(buf, "\nTgid:"), *u = strstr(buf, "\nUid:");
    if (!t || !u)
        return -EIO;
    unsigned long r = 0, eu = 0;
    if (sscanf(u + 5, "%lu %lu", &r, &eu) != 2)
        return -EIO;
    if (tgid)
        *tgid = (pid_t)strtol(t + 6, NULL, 10);
    if (ruid)
        *ruid = (uid_t)r;
    if (euid)
        *euid = (uid_t)eu;
    return 0;
}

void sv_say_once(unsigned key, const char *fmt, ...)
{
    static uint32_t said;
    if (key < 32) {
        if (said & (1u << key))
            return;
        said |= 1u << key;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "hwemu exec: seccomp supervisor: %s\n", msg);
}
