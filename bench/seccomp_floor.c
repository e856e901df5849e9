/* seccomp_floor: what the kernel alone costs for the calls hwemu exec's seccomp supervisor
 * answers, with a supervisor that does no work at all: the floor under the supervisor's figures
 * on this machine. A child installs a filter and hands the listener to its parent, which answers
 * from a fixed answer, with same-CPU wake-ups (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) as the real
 * supervisor asks for. Prints the median nanoseconds per operation over BATCHES batches of N:
 *   trip   getppid, answered with a value: one notification round trip
 *   orc    open + read + close of a path as the supervisor serves an emulated file: the open
 *          answered by installing a descriptor in the window (SECCOMP_IOCTL_NOTIF_ADDFD with
 *          SEND|SETFD, from a pipe made once), the read answered with a value, the close not
 *          intercepted
 * Usage: seccomp_floor trip|orc [BATCHES] [N] */
#define _GNU_SOURCE
#include "bench_time.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1
#endif
#define SLOT 800 /* in the supervisor's descriptor window (shim/supervisor/sv.h) */

static int install_filter(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_read, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SLOT, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

static void send_fd(int sock, int fd)
{
    char byte = 0, cbuf[CMSG_SPACE(sizeof fd)];
    struct iovec io = {&byte, 1};
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof fd);
    memcpy(CMSG_DATA(h), &fd, sizeof fd);
    if (sendmsg(sock, &m, 0) < 0)
        perror("sendmsg");
}

static int recv_fd(int sock)
{
    char byte, cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec io = {&byte, 1};
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    if (recvmsg(sock, &m, 0) <= 0 || !CMSG_FIRSTHDR(&m))
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
    return fd;
}

/* The child: the measured calls. */
static int agent(int sock, const char *mode, int batches, int per)
{
    int listener = install_filter();
    if (listener < 0) {
        perror("seccomp");
        return 1;
    }
    send_fd(sock, listener);
    close(listener);
    double *ns = malloc(sizeof *ns * (size_t)batches);
    char buf[64];
    bool trip = !strcmp(mode, "trip");
    for (int b = -1; b < batches; b++) { /* batch -1 warms up */
        double t0 = bench_now_ns();
        for (int i = 0; i < per; i++) {
            if (trip) {
                if (syscall(SYS_getppid) != 42)
                    return 1;
                continue;
            }
            int fd = openat(AT_FDCWD, "/sys/class/powercap/intel-rapl:0/energy_uj", O_RDONLY);
            if (fd != SLOT || read(fd, buf, sizeof buf) != 7) {
                fprintf(stderr, "seccomp_floor: unexpected answer (fd %d)\n", fd);
                return 1;
            }
            close(fd);
        }
        if (b >= 0)
            ns[b] = (bench_now_ns() - t0) / per;
    }
    qsort(ns, (size_t)batches, sizeof *ns, bench_cmp_double);
    printf("%.0f\n", ns[batches / 2]);
    return 0;
}

/* The parent: answers without looking, until the child is gone. */
static void supervise(int listener, int give)
{
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
    struct seccomp_notif req;
    for (;;) {
        struct pollfd pf = {listener, POLLIN, 0};
        if (poll(&pf, 1, -1) < 0 && errno != EINTR)
            return;
        if (!(pf.revents & POLLIN))
            return; /* POLLHUP: no process uses the filter */
        memset(&req, 0, sizeof req);
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
            continue;
        if (req.data.nr == SYS_openat) {
            struct seccomp_notif_addfd a = {.id = req.id,
                                            .flags = SECCOMP_ADDFD_FLAG_SEND | SECCOMP_ADDFD_FLAG_SETFD,
                                            .srcfd = (uint32_t)give,
                                            .newfd = SLOT};
            ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
            continue;
        }
        struct seccomp_notif_resp r = {.id = req.id, .val = req.data.nr == SYS_read ? 7 : 42};
        ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "trip") && strcmp(argv[1], "orc"))) {
        fprintf(stderr, "usage: seccomp_floor trip|orc [BATCHES] [N]\n");
        return 2;
    }
    int batches = argc > 2 ? atoi(argv[2]) : 21, per = argc > 3 ? atoi(argv[3]) : 2000;
    int sp[2], pipefd[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0 || pipe(pipefd) < 0) {
        perror("seccomp_floor");
        return 1;
    }
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        int rc = agent(sp[1], argv[1], batches < 1 ? 1 : batches, per < 1 ? 1 : per);
        fflush(stdout);
        _exit(rc);
    }
    int listener = recv_fd(sp[0]);
    if (listener >= 0)
        supervise(listener, pipefd[0]);
    int st = 1;
    waitpid(child, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
