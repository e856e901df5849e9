/* supervisor: the processes of `hwemu exec`'s seccomp route, the filter, and the notification
 * loop (supervisor.h has the design; sv_answer.c the answers).
 *
 *   P  hwemu exec           waits for the agent's status (sent by S over a pipe), forwards to
 *                           the agent the signals other processes send P (a terminal's go to
 *                           the whole process group already), exits as the agent did; reports
 *                           S's death and then kills the agent
 *   S  the supervisor       maps the node, forks C, receives the listener, answers until no
 *                           process uses the filter any more (POLLHUP once every supervised
 *                           process is reaped: S is a child subreaper, orphans come to it);
 *                           ignores the job-control and termination signals (it ends when its
 *                           agents end, or by SIGKILL)
 *   C  the agent            parent death signal SIGKILL (it does not outlive S), the caller's
 *                           signal dispositions and mask restored, installs the filter
 *                           (NEW_LISTENER | WAIT_KILLABLE_RECV), sends the listener to S
 *                           (SCM_RIGHTS), execs CMD
 *
 * The filter (libseccomp builds it, we load it: libseccomp 2.5 knows neither
 * WAIT_KILLABLE_RECV nor ADDFD): the file calls that name a path notify always (BPF cannot read
 * a string); the calls on a descriptor notify only when it is in the window (sv.h), and writes
 * also on the numbers below SV_LOW_FDS (a shell's redirections, sv.h); everything
 * else, and every other architecture (i386, x32), is allowed. no_new_privs is set only when the
 * kernel requires it (no CAP_SYS_ADMIN), so a root agent's set-uid helpers keep working.
 *
 * Go and signals. WAIT_KILLABLE_RECV (5.19) makes a received notification immune to non-fatal
 * signals: Go's SIGURG preemption every 10 ms cannot abort a call we are answering, and the
 * reply we write into its memory lands while it still waits. Before we receive it a signal can
 * still interrupt the call; the kernel then restarts it (SA_RESTART, which Go uses) as a new
 * notification, and RECV or SEND see ENOENT for the old one, which we skip. The loop parks in
 * poll on the listener, so the window before receipt is short; SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
 * (6.6) wakes both sides on the same CPU. HWEMU_SV_TRACE=1 prints one line per emulated call
 * and a summary at the end (=stats: the summary, with the time spent per kind of call); HWEMU_SV_SYNC=0 turns the same-CPU wake-ups off (for measurements).
 * What it must never do: exit while a supervised process could still make a call (their calls
 * would fail with ENOSYS), or swallow a failure: each is said on stderr, once. */
#include "supervisor.h"
#include "sv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <asm/prctl.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1
#endif

/* P <- S messages. */
struct sv_msg {
    int32_t kind, value;
};
enum { MSG_PID = 1, MSG_STATUS, MSG_FAILED };

/* The signals P, S and C change, with the caller's dispositions and mask (C restores them). */
static const int touched[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE, SIGUSR1,
                              SIGUSR2, SIGCHLD};
#define NTOUCHED (sizeof touched / sizeof touched[0])
static struct sigaction orig_act[NTOUCHED];
static sigset_t orig_mask;
/* What P forwards to the agent; S ignores these and the job-control stops. */
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

static void send_msg(int fd, int kind, int value)
{
    struct sv_msg m = {kind, value};
    while (write(fd, &m, sizeof m) < 0 && errno == EINTR)
        ;
}

/* --- the filter (in C) ------------------------------------------------------------------------- */

static const char *const path_calls[] = {"open", "openat", "openat2", "creat", "stat", "lstat", "newfstatat",
                                         "statx", "access", "faccessat", "faccessat2", "readlink", "readlinkat",
                                         "statfs", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename",
                                         "renameat", "renameat2", "symlink", "symlinkat"};
/* What the process learns about the machine by a system call: answered as the node (sv_answer.c). */
static const char *const machine_calls[] = {"sched_getaffinity"};
static const struct {
    const char *name;
    unsigned arg;  /* which argument is the descriptor */
    int cmd;       /* fcntl: the one command (argument 1) that notifies, else -1 */
} fd_calls[] = {
    {"read", 0, -1},       {"pread64", 0, -1},    {"readv", 0, -1},      {"preadv", 0, -1},
    {"preadv2", 0, -1},    {"write", 0, -1},      {"pwrite64", 0, -1},   {"writev", 0, -1},
    {"pwritev", 0, -1},    {"pwritev2", 0, -1},   {"lseek", 0, -1},      {"fstat", 0, -1},
    {"fstatfs", 0, -1},    {"getdents64", 0, -1}, {"dup", 0, -1},        {"dup2", 0, -1},
    {"dup3", 0, -1},       {"copy_file_range", 0, -1}, {"copy_file_range", 2, -1},
    {"sendfile", 1, -1},   {"splice", 0, -1},     {"splice", 2, -1},     {"ioctl", 0, -1},
    /* not F_GETFL/F_SETFL: Go calls both on every file it opens, the kernel answers them */
    {"fcntl", 0, F_DUPFD}, {"fcntl", 0, F_DUPFD_CLOEXEC},
};
/* Writes that also notify on the numbers a shell redirects (sv.h, SV_LOW_FDS). */
static const char *const low_write_calls[] = {"write", "pwrite64", "writev", "pwritev", "pwritev2"};

/* Under --time emulated (sv_time.c): the clocks, the sleeps, FUTEX_WAIT (private or not), epoll
 * waits with a timeout other than 0 (the runtime's polls without a timeout stay in the kernel), and
 * the arch_prctl(ARCH_SET_FS) at which the vDSO is hidden. */
static int time_rules(scmp_filter_ctx ctx)
{
    static const char *const always[] = {"clock_gettime", "gettimeofday", "time", "nanosleep", "clock_nanosleep",
                                         "epoll_pwait2"};
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof always / sizeof always[0]; i++) {
        int nr = seccomp_syscall_resolve_name(always[i]);
        if (nr != __NR_SCMP_ERROR && nr >= 0)
            rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
    }
    if (!rc)
        rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(arch_prctl), 1, SCMP_A0(SCMP_CMP_EQ, ARCH_SET_FS));
    if (!rc)
        rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(futex), 1,
                              SCMP_A1(SCMP_CMP_MASKED_EQ, FUTEX_CMD_MASK & 0xffffffffu, FUTEX_WAIT));
    if (!rc)
        rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(futex), 1,
                              SCMP_A1(SCMP_CMP_MASKED_EQ, FUTEX_CMD_MASK & 0xffffffffu, FUTEX_WAKE));
    if (!rc)
        rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    if (!rc)
        rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(epoll_wait), 1, SCMP_A3(SCMP_CMP_NE, 0));
    if (!rc)
        rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(epoll_pwait), 1, SCMP_A3(SCMP_CMP_NE, 0));
    return rc;
}

/* Builds the filter's BPF with libseccomp. 0, or an errno with a message. */
static int build_filter(struct sock_fprog *prog, char *err, size_t len)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        snprintf(err, len, "seccomp_init failed");
        return ENOMEM;
    }
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
    for (size_t i = 0; !rc && i < sizeof path_calls / sizeof path_calls[0]; i++) {
        int nr = seccomp_syscall_resolve_name(path_calls[i]);
        if (nr != __NR_SCMP_ERROR && nr >= 0)
            rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
    }
    for (size_t i = 0; !rc && i < sizeof machine_calls / sizeof machine_calls[0]; i++) {
        int nr = seccomp_syscall_resolve_name(machine_calls[i]);
        if (nr != __NR_SCMP_ERROR && nr >= 0)
            rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
    }
    for (size_t i = 0; !rc && i < sizeof fd_calls / sizeof fd_calls[0]; i++) {
        int nr = seccomp_syscall_resolve_name(fd_calls[i].name);
        if (nr == __NR_SCMP_ERROR || nr < 0)
            continue;
        struct scmp_arg_cmp fd = SCMP_CMP(fd_calls[i].arg, SCMP_CMP_MASKED_EQ, SV_FD_MASK, SV_FD_LO);
        if (fd_calls[i].cmd >= 0)
            rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 2, fd,
                                  SCMP_CMP(1, SCMP_CMP_EQ, (scmp_datum_t)fd_calls[i].cmd, 0));
        else
            rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 1, fd);
    }
    for (size_t i = 0; !rc && i < sizeof low_write_calls / sizeof low_write_calls[0]; i++) {
        int nr = seccomp_syscall_resolve_name(low_write_calls[i]);
        if (nr != __NR_SCMP_ERROR && nr >= 0)
            rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 1, SCMP_A0(SCMP_CMP_LT, SV_LOW_FDS));
    }
    const char *t = getenv("HWEMU_TIME");
    if (!rc && t && !strcmp(t, "emulated"))
        rc = time_rules(ctx);
    int mfd = -1;
    if (!rc && (mfd = memfd_create("hwemu-bpf", MFD_CLOEXEC)) < 0)
        rc = -errno;
    if (!rc)
        rc = seccomp_export_bpf(ctx, mfd);
    seccomp_release(ctx);
    if (rc) {
        snprintf(err, len, "building the filter with libseccomp: %s", strerror(-rc));
        if (mfd >= 0)
            close(mfd);
        return -rc;
    }
    off_t size = lseek(mfd, 0, SEEK_END);
    struct sock_filter *f = size > 0 ? malloc((size_t)size) : NULL;
    if (!f || pread(mfd, f, (size_t)size, 0) != size) {
        snprintf(err, len, "reading the exported filter back");
        close(mfd);
        free(f);
        return EIO;
    }
    close(mfd);
    prog->len = (unsigned short)((size_t)size / sizeof *f);
    prog->filter = f;
    return 0;
}

/* Loads the filter: the listener, or -1 with a message. */
static int load_filter(char *err, size_t len)
{
    struct sock_fprog prog;
    if (build_filter(&prog, err, len))
        return -1;
    unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    int fd = -1;
    for (int tries = 0; tries < 4; tries++) {
        fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
        if (fd >= 0)
            break;
        if (errno == EACCES && !prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)) {
            prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); /* unprivileged: the kernel insists */
        } else if (errno == EINVAL && (flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)) {
            flags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV; /* before 5.19 */
            fprintf(stderr, "hwemu exec: this kernel lacks SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19): signals "
                    "may restart the agent's emulated calls\n");
        } else {
            break;
        }
    }
    int e = errno;
    free(prog.filter);
    if (fd < 0)
        snprintf(err, len, "installing the seccomp filter: %s%s", strerror(e),
                 e == EBUSY ? " (another seccomp supervisor already listens on this process: hwemu exec cannot "
                              "nest under one; try --intercept=preload)" : "");
    return fd;
}

/* --- C: the agent ----------------------------------------------------------------------------- */

static void restore_signals(void)
{
    for (size_t i = 0; i < NTOUCHED; i++)
        sigaction(touched[i], &orig_act[i], NULL);
    sigprocmask(SIG_SETMASK, &orig_mask, NULL);
}

static __attribute__((noreturn)) void agent_main(char *const argv[], int sock, pid_t sv)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != sv)
        _exit(1); /* the supervisor is already gone */
    restore_signals();
    char err[512] = "";
    int lfd = load_filter(err, sizeof err);
    if (lfd < 0) {
        while (send(sock, err, strlen(err) + 1, 0) < 0 && errno == EINTR)
            ;
        _exit(1);
    }
    char one = 0;
    struct iovec iov = {&one, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &lfd, sizeof lfd);
    while (sendmsg(sock, &mh, 0) < 0) {
        if (errno != EINTR)
            _exit(1);
    }
    close(lfd);
    close(sock);
    execvp(argv[0], argv);
    int e = errno;
    fprintf(stderr, "hwemu exec: %s: %s\n", argv[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
}

/* The listener from C, or -1 with C's message (or none when C died before sending). */
static int recv_listener(int sock, char *err, size_t len)
{
    char data[512];
    struct iovec iov = {data, sizeof data};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    ssize_t n;
    while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    err[0] = 0;
    if (n <= 0)
        return -1;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
        int fd;
        memcpy(&fd, CMSG_DATA(cm), sizeof fd);
        return fd;
    }
    snprintf(err, len, "%.*s", (int)n, data);
    return -1;
}

/* --- S: the supervisor ------------------------------------------------------------------------ */

static void say_status(const char *who, int st, char *buf, size_t len)
{
    if (WIFEXITED(st))
        snprintf(buf, len, "%s exited with status %d", who, WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(buf, len, "%s was killed by signal %d (%s)", who, WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(buf, len, "%s stopped", who);
}

static int agent_pidfd = -1; /* S's handle on the agent until it is reaped (a pid may be reused) */

/* Reaps every child that ended (the agent, and orphans handed to us as subreaper); the agent's
 * status goes to P. Returns true once the agent is reaped. */
static bool reap_children(pid_t agent, int to_p, bool agent_done)
{
    int st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0)
        if (p == agent) {
            send_msg(to_p, MSG_STATUS, st);
            agent_done = true;
            if (agent_pidfd >= 0)
                close(agent_pidfd);
            agent_pidfd = -1;
        }
    return agent_done;
}

static __attribute__((noreturn)) void fatal(const char *what)
{
    sv_say_once(31, "%s: %s; stopping the agent (its calls would fail with ENOSYS)", what, strerror(errno));
    if (agent_pidfd >= 0)
        syscall(SYS_pidfd_send_signal, agent_pidfd, SIGKILL, NULL, 0);
    _exit(70);
}

static __attribute__((noreturn)) void serve(struct sv *sv, pid_t agent, int to_p, int sigfd)
{
    struct seccomp_notif_sizes sz = {0};
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
        fatal("SECCOMP_GET_NOTIF_SIZES");
    size_t nsize = sz.seccomp_notif > sizeof(struct seccomp_notif) ? sz.seccomp_notif : sizeof(struct seccomp_notif);
    struct seccomp_notif *req = malloc(nsize);
    if (!req)
        fatal("allocating the notification buffer");
    struct pollfd pf[3 + SV_TIME_FDS] = {{sv->listener, POLLIN, 0}, {sv->lifetimes, POLLIN, 0}, {sigfd, POLLIN, 0}};
    bool agent_done = false;
    for (;;) {
        /* under --time emulated, the held calls' descriptors and deadlines too (sv_time.c) */
        int nt = sv_time_fds(pf + 3, SV_TIME_FDS);
        int64_t wait_ns = sv_time_timeout();
        struct timespec ts = {wait_ns / 1000000000, wait_ns % 1000000000};
        int pr = ppoll(pf, 3 + (nfds_t)nt, wait_ns < 0 ? NULL : &ts, NULL);
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            fatal("poll");
        }
        bool due = pr == 0 && nt;
        for (int k = 3; k < 3 + nt; k++)
            due |= pf[k].revents != 0;
        if (due)
            sv_time_due(sv);
        /* One notification, then whatever else this round brought: with calls coming back to
         * back, the listener is readable at every round, and the rest must not starve. */
        if (pf[0].revents & POLLIN) {
            memset(req, 0, nsize);
            if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0)
                sv_answer(sv, req);
            else if (errno != EINTR && errno != ENOENT) /* ENOENT: interrupted, it comes again */
                fatal("SECCOMP_IOCTL_NOTIF_RECV");
            /* read placeholders the agents closed: forgotten a few at a time (sv.h says why);
             * an open is at least one notification, so this keeps pace with any agent */
            if ((sv->n_notif & 15) == 0)
                sv_reap_closings(sv, 16);
        }
        if (pf[2].revents) {
            struct signalfd_siginfo si;
            while (read(sigfd, &si, sizeof si) > 0)
                ;
            agent_done = reap_children(agent, to_p, agent_done);
        }
        if (pf[1].revents)
            sv_reap(sv);
        if ((pf[0].revents & (POLLHUP | POLLERR | POLLNVAL)) && !(pf[0].revents & POLLIN))
            break; /* no process uses the filter any more */
    }
    sv_answer_fini(sv);
    agent_done = reap_children(agent, to_p, agent_done);
    if (!agent_done) {
        int st;
        if (waitpid(agent, &st, 0) == agent)
            send_msg(to_p, MSG_STATUS, st);
    }
    if (sv->stats)
        fprintf(stderr, "hwemu-sv: %llu notifications, %llu continued, %llu emulated opens, %llu still open\n",
                (unsigned long long)sv->n_notif, (unsigned long long)sv->n_continue,
                (unsigned long long)sv->n_emulated, (unsigned long long)sv_open_count());
    if (sv->stats)
        sv_profile();
    _exit(0);
}

static __attribute__((noreturn)) void supervisor_main(char *const argv[], int to_p)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    struct sv sv = {.listener = -1, .lifetimes = -1, .closings = -1};
    const char *t = getenv("HWEMU_SV_TRACE");
    sv.stats = t && *t && strcmp(t, "0");
    sv.trace = sv.stats && strcmp(t, "stats");
    if (emu_init() != 0) {
        fprintf(stderr, "hwemu exec: the seccomp supervisor cannot map the node's segment\n");
        send_msg(to_p, MSG_FAILED, 1);
        _exit(1);
    }
    int e = sv_answer_init(&sv);
    if (!e && (e = sv_time_init()) != 0) {
        send_msg(to_p, MSG_FAILED, 1);
        _exit(1);
    }
    int sp[2];
    if (e || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
        fprintf(stderr, "hwemu exec: the seccomp supervisor cannot start: %s\n", strerror(e ? e : errno));
        send_msg(to_p, MSG_FAILED, 1);
        _exit(1);
    }
    pid_t self = getpid(), agent = fork();
    if (agent < 0) {
        fprintf(stderr, "hwemu exec: fork: %s\n", strerror(errno));
        send_msg(to_p, MSG_FAILED, 1);
        _exit(1);
    }
    if (agent == 0) {
        close(sp[0]);
        close(to_p);
        agent_main(argv, sp[1], self);
    }
    close(sp[1]);
    agent_pidfd = (int)syscall(SYS_pidfd_open, agent, 0);
    send_msg(to_p, MSG_PID, agent);
    /* One descriptor per open emulated file: the supervisor takes what the hard limit allows
     * (after the fork: the agent keeps the caller's limits). */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    /* S ends when its agents end: signals meant for them (a terminal's Ctrl-C, a kill of the
     * process group) must not stop it first. */
    struct sigaction ign = {.sa_handler = SIG_IGN};
    for (size_t i = 0; i < NTOUCHED; i++)
        if (touched[i] != SIGCHLD)
            sigaction(touched[i], &ign, NULL);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_SETMASK, &chld, NULL);
    int sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
    char err[512];
    sv.listener = recv_listener(sp[0], err, sizeof err);
    close(sp[0]);
    if (sv.listener < 0 || sigfd < 0) {
        int st = 0;
        waitpid(agent, &st, 0);
        if (err[0])
            fprintf(stderr, "hwemu exec: cannot supervise %s: %s\n", argv[0], err);
        else if (sigfd < 0)
            fprintf(stderr, "hwemu exec: signalfd: %s\n", strerror(errno));
        else {
            char why[200];
            say_status("the agent", st, why, sizeof why);
            fprintf(stderr, "hwemu exec: %s before it could be supervised\n", why);
        }
        send_msg(to_p, MSG_FAILED, 1);
        _exit(1);
    }
    /* S keeps stderr (for its reports) but not the caller's stdin and stdout, so that a caller
     * reading the agent's output sees its end when the agent's processes end. */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        close(null);
    }
    const char *sync = getenv("HWEMU_SV_SYNC");
    if (!(sync && !strcmp(sync, "0")))
        ioctl(sv.listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP); /* 6.6+ */
    if ((e = sv_time_start()) != 0) {
        errno = e;
        fatal("starting the clock's watcher thread");
    }
    if ((e = sv_pool_start(sv.closings)) != 0)
        fprintf(stderr, "hwemu exec: the seccomp supervisor cannot start its placeholder thread (%s): emulated "
                "opens make their own, about 11 us slower\n", strerror(e));
    serve(&sv, agent, to_p, sigfd);
}

/* --- P: hwemu exec ------------------------------------------------------------------------------ */

int sv_exec(char *const argv[])
{
    sigprocmask(SIG_SETMASK, NULL, &orig_mask);
    for (size_t i = 0; i < NTOUCHED; i++)
        sigaction(touched[i], NULL, &orig_act[i]);
    sigset_t fwd;
    sigemptyset(&fwd);
    for (size_t i = 0; i < NFORWARDED; i++)
        sigaddset(&fwd, forwarded[i]);
    int pp[2];
    if (pipe2(pp, O_CLOEXEC) < 0) {
        fprintf(stderr, "hwemu exec: pipe: %s\n", strerror(errno));
        return 1;
    }
    sigprocmask(SIG_BLOCK, &fwd, NULL); /* from now on they wait in the signalfd */
    fflush(NULL);
    pid_t s = fork();
    if (s < 0) {
        fprintf(stderr, "hwemu exec: fork: %s\n", strerror(errno));
        return 1;
    }
    if (s == 0) {
        close(pp[0]);
        supervisor_main(argv, pp[1]);
    }
    close(pp[1]);
    int sigfd = signalfd(-1, &fwd, SFD_CLOEXEC);
    pid_t agent = 0;
    int apfd = -1, status = 0, outcome = 0; /* 1 status, 2 failed, 3 S died */
    int pending[NFORWARDED + 1], npending = 0;
    while (!outcome) {
        struct pollfd pf[2] = {{pp[0], POLLIN, 0}, {sigfd, POLLIN, 0}};
        if (poll(pf, sigfd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pf[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sigfd, &si, sizeof si) == sizeof si && si.ssi_code != SI_KERNEL) {
                /* sent by a process to P (kill, timeout, a test harness): the agent's to hear.
                 * A terminal's signals (SI_KERNEL) reached the agent's process group already. */
                if (agent > 0) {
                    if (apfd < 0 || syscall(SYS_pidfd_send_signal, apfd, (int)si.ssi_signo, NULL, 0) < 0)
                        kill(agent, (int)si.ssi_signo);
                } else if (npending < (int)NFORWARDED + 1) {
                    pending[npending++] = (int)si.ssi_signo;
                }
            }
        }
        if (pf[0].revents & (POLLIN | POLLHUP)) {
            struct sv_msg m;
            ssize_t n = read(pp[0], &m, sizeof m);
            if (n < 0 && errno == EINTR)
                continue;
            if (n != sizeof m) {
                outcome = 3;
            } else if (m.kind == MSG_PID) {
                agent = m.value;
                apfd = (int)syscall(SYS_pidfd_open, agent, 0);
                for (int i = 0; i < npending && apfd >= 0; i++)
                    syscall(SYS_pidfd_send_signal, apfd, pending[i], NULL, 0);
            } else if (m.kind == MSG_STATUS) {
                status = m.value;
                outcome = 1;
            } else {
                outcome = 2;
            }
        }
    }
    close(pp[0]);
    if (sigfd >= 0)
        close(sigfd);
    if (outcome != 1) {
        if (outcome == 3 || !outcome) {
            int st = 0;
            char why[200] = "the seccomp supervisor is gone";
            if (waitpid(s, &st, 0) == s)
                say_status("the seccomp supervisor", st, why, sizeof why);
            fprintf(stderr, "hwemu exec: %s while %s ran; %s was stopped\n", why, argv[0], argv[0]);
        } else {
            waitpid(s, NULL, 0);
        }
        if (agent > 0 && (apfd < 0 || syscall(SYS_pidfd_send_signal, apfd, SIGKILL, NULL, 0) < 0))
            kill(agent, SIGKILL);
        if (apfd >= 0)
            close(apfd);
        sigprocmask(SIG_SETMASK, &orig_mask, NULL);
        return 1;
    }
    if (apfd >= 0)
        close(apfd);
    if (WIFEXITED(status)) {
        sigprocmask(SIG_SETMASK, &orig_mask, NULL);
        return WEXITSTATUS(status);
    }
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    /* Die the way the agent died, so a shell sees what it would have seen (no core of ours). */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    fflush(NULL);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    sigprocmask(SIG_SETMASK, &orig_mask, NULL);
    return 128 + sig;
}
