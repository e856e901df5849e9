/* sv: what the supervisor's modules share (supervisor.c runs the processes and the loop,
 * sv_answer.c answers notifications, sv_target.c reaches into the supervised processes).
 * Internal to `hwemu exec`; nothing here is part of the shim library.
 *
 * The descriptor window. An emulated file opened by a supervised process is a placeholder (one
 * end of a pipe, sv_answer.c) injected at a number in [SV_FD_LO, SV_FD_HI), under the default
 * soft RLIMIT_NOFILE of 1024, where the kernel only hands out numbers to processes with 768
 * files open. The filter compares the
 * descriptor argument of read, write, lseek, fstat, getdents64, ... with the window, so I/O on
 * every other descriptor (sockets, pipes, logs, the host's files) never reaches the
 * supervisor; a descriptor in the window that is not ours gets CONTINUE. */
#ifndef HWEMU_SHIM_SV_H
#define HWEMU_SHIM_SV_H
#include "emu.h"

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define SV_FD_LO 768
#define SV_FD_HI 1024
#define SV_FD_MASK 0xffffff00u /* (fd & SV_FD_MASK) == SV_FD_LO  <=>  SV_FD_LO <= fd < SV_FD_HI */
/* A shell's redirection (`echo abc > constraint_0_power_limit_uw`, `exec 3>`) dup2()s an
 * emulated file's placeholder below the window, onto the numbers 0-9 a shell names, and writes
 * there; so write, pwrite64, writev, pwritev and pwritev2 on those numbers notify too, and the
 * write is a store refused with the kernel's errno (a_write in sv_answer.c), never a pipe's
 * success stored later. Any other descriptor there is answered CONTINUE: a write to stdout or
 * stderr costs one notification on this route (measured: static busybox dd writing 200,000
 * single bytes to /dev/null took 0.95 s supervised, 0.10 s not, 0.23 s of it the start: about
 * 3 us a write, 665 ns of it in the supervisor, on the 2-vCPU development VM under load). */
#define SV_LOW_FDS 10

/* An answer to one notification: a value (>= 0), a negated errno, or one of these. */
#define SV_CONTINUE INT64_MIN        /* the kernel runs the call as the agent made it */
#define SV_DONE (INT64_MIN + 1)      /* already answered (ADDFD with SEND), held, or the call is gone */
#define SV_NOT_TIME (INT64_MIN + 2)  /* sv_time_answer: not a call of emulated time */

/* The supervisor's state: one per process S. */
struct sv {
    int listener;               /* the seccomp notification fd */
    /* The ends of the placeholders we hold (sv_answer.c), in two epoll sets. lifetimes: those of
     * files opened for writing, watched by the loop (what escaped copies write is stored when
     * the last writer closes, at once). closings: those of files opened for reading, looked at
     * every 16 notifications only: forgetting a closed one frees memory and one of our
     * descriptors, nothing an agent sees, and watching them in the loop would wake the
     * supervisor at every close (measured: +9 us on the agent's next read). */
    int lifetimes;
    int closings;
    bool trace;                 /* HWEMU_SV_TRACE=1: one line per emulated call on stderr */
    bool stats;                 /* HWEMU_SV_TRACE=1 or =stats: counts and times at the end */
    uint64_t n_notif, n_continue, n_emulated;
};

/* One notification being answered. */
struct sv_call {
    struct sv *sv;
    uint64_t id;
    pid_t tid;                  /* the calling thread, in our pid namespace */
    int nr;
    uint64_t a[6];
};

/* --- sv_answer.c ------------------------------------------------------------------------------ */

/* Answers one notification: computes the answer and sends the reply. */
void sv_answer(struct sv *sv, const struct seccomp_notif *n);
/* Open file descriptions in the table (for the statistics). */
unsigned long long sv_open_count(void);
/* With HWEMU_SV_TRACE: the time spent answering each kind of call, on stderr. */
void sv_profile(void);
/* Forgets the descriptions opened for writing that no process holds any more (the lifetimes
 * descriptor is readable), storing what escaped copies wrote. */
void sv_reap(struct sv *sv);
/* The same for at most `most` of the descriptions opened for reading (the closings set). */
void sv_reap_closings(struct sv *sv, int most);
/* Sets up the description table and the lifetimes descriptor: 0 or an errno. */
int sv_answer_init(struct sv *sv);
/* At the end (no process uses the filter): the last lifetimes events, and what copies outside
 * the window wrote and nobody stored yet. */
void sv_answer_fini(struct sv *sv);

/* --- sv_pool.c -------------------------------------------------------------------------------- */

/* A placeholder: a pipe, the end the agent gets, the end we keep (registered in an epoll set),
 * the pipe's inode (what identifies the description). */
struct placeholder {
    int give, keep;
    uint64_t ino;
};

/* Makes one, its kept end registered in epfd: 0 or an errno. */
int sv_placeholder_make(struct placeholder *ph, bool for_writing, int epfd);
/* Starts the thread that makes read placeholders ahead (registered in epfd): 0 or an errno. */
int sv_pool_start(int epfd);
/* Takes a ready read placeholder: false when none is ready (the caller makes one). */
bool sv_pool_take(struct placeholder *ph);
/* Hands over our end of a read placeholder to be closed by the thread: false when it cannot
 * take it (the caller closes it). */
bool sv_pool_discard(int fd);

/* --- sv_target.c ------------------------------------------------------------------------------ */

/* Copies len bytes from the target at addr: the number copied, or -errno. */
ssize_t sv_peek(pid_t tid, uint64_t addr, void *buf, size_t len);
/* Copies from the target's iovec array (remote addresses) into buf: count or -errno. */
ssize_t sv_peekv(pid_t tid, const struct iovec *riov, int cnt, void *buf, size_t len);
/* Copies buf into the target's iovecs (or one buffer): count or -errno. */
ssize_t sv_pokev(pid_t tid, const struct iovec *riov, int cnt, const void *buf, size_t len);
/* A NUL-terminated string of the target (a path): its length, or -errno (ENAMETOOLONG when it
 * does not fit cap - 1). */
ssize_t sv_peek_str(pid_t tid, uint64_t addr, char *buf, size_t cap);
/* Is the notification still pending (the target still blocked in this very call)? Checked
 * after reading the target's memory and before acting on or writing to it (TOCTOU). */
bool sv_valid(const struct sv_call *c);
/* Sends the reply for an answer (value, -errno or SV_CONTINUE). ENOENT (the call is gone: the
 * target was killed, or a signal interrupted it before we received it) is not an error. */
void sv_reply(const struct sv_call *c, int64_t answer);
/* readlink of /proc/<tid>/fd/<fd> or /proc/<tid>/cwd (fd < 0): its length, or -errno. */
ssize_t sv_fd_path(pid_t tid, int fd, char *buf, size_t len);
/* A copy of the target's descriptor fd (the same open file description, close-on-exec), or
 * -EBADF when fd is not open there, or -ENOSYS when no pidfd can reach the thread (then ask
 * /proc). */
int sv_getfd(pid_t tid, int fd);
/* A free number in the descriptor window of tid's table, at least from; -1 when none is. */
int sv_free_slot(pid_t tid, int from);
void sv_target_init(void);
/* The thread's process id and its real and effective uid: 0 or -errno. */
int sv_ids(pid_t tid, pid_t *tgid, uid_t *ruid, uid_t *euid);

/* --- sv_time.c ---------------------------------------------------------------------------------- */

struct pollfd;
/* With HWEMU_TIME=emulated: maps the root's clock: 0 or an errno (said on stderr). Without it,
 * nothing (sv_time_on() is false). */
int sv_time_init(void);
/* Starts the clock's watcher thread, after the agent was forked (a thread starting while the
 * supervisor forks can leave a lock taken in the child: seen under ASan): 0 or an errno. */
int sv_time_start(void);
bool sv_time_on(void);
/* A notification of a thread with a slot: the thread runs (its slot RUNNING). */
void sv_time_running(pid_t tid);
/* The answer to a call of emulated time (SV_DONE when held), or SV_NOT_TIME. */
int64_t sv_time_answer(struct sv *sv, const struct sv_call *c);
/* The descriptors the loop polls for the held calls (at most cap): their count. */
#define SV_TIME_FDS 257 /* the watcher and every held wait (sv_time.c HELD_MAX) */
int sv_time_fds(struct pollfd *pf, int cap);
/* The real ns until the earliest held deadline at --speed N (-1: none, or only the watcher). */
int64_t sv_time_timeout(void);
/* Answers the held calls whose deadline came or whose epoll instance has events. */
void sv_time_due(struct sv *sv);

/* Says msg on stderr the first time key (an index below 32) is used. */
void sv_say_once(unsigned key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
