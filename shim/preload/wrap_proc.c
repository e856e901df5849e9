/* wrap_proc: processes in emulated time (docs/time.md): fork (and vfork, made a fork: the child
 * must take over the slot its parent claimed for it, which a child sharing the parent's memory
 * cannot) hands the child a clock slot of its own before it exists, and the waits for a child
 * (wait, waitpid, wait3, wait4, waitid without WNOHANG) count the thread as waiting, so time
 * moves while a script's parent shell waits for a program that sleeps; a child keeps holding
 * time after its exit until its parent reaps it (the wait frees its slot), so time never moves
 * between one program of a script and the next; a child killed by its parent (kill, a signal
 * that ends it) holds time until it is reaped, so time does not move while it dies. Without
 * HWEMU_TIME=emulated every call goes to libc untouched. */
#include "emutime.h"
#include "emutimer.h"
#include "real.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT pid_t fork(void)
{
    if (!emutime_on())
        return REAL(fork)();
    int child_slot = emutime_fork_prepare();
    pid_t pid = REAL(fork)();
    if (pid == 0) {
        emutime_fork_child(child_slot);
        emutimer_fork_child();
    }
    else
        emutime_spawned(child_slot, pid < 0 ? -1 : 0, pid);
    return pid;
}

EXPORT pid_t vfork(void)
{
    return emutime_on() ? fork() : REAL(fork)();
}

/* kill: a child the signal ends holds time until it is reaped (emutime_kill). */
EXPORT int kill(pid_t pid, int sig)
{
    if (emutime_on())
        emutime_kill(pid, sig);
    return REAL(kill)(pid, sig);
}

/* A wait for a child. A blocking one counts the thread as waiting until a child is waitable,
 * seen without reaping it (waitid with WNOWAIT, the thread's slot BLOCKED meanwhile), and holds
 * time again (RUNNING) before the call reaps it (the same call with WNOHANG). The kernel's reap
 * comes after that, so the child's slot, which holds time until then, is never seen gone while
 * its parent's still says it waits: the engine frees the slot of a thread that no longer
 * exists, and would have moved time between the reap and the parent's return (docs/time.md
 * "Processes"). A child it reaps has its slot freed. type and id say which children (waitid's),
 * flags which changes of theirs (WEXITED, WSTOPPED, WCONTINUED, __WALL ...). Returns false when a
 * signal's handler ended the wait (errno EINTR, as the call's own wait would have); any other
 * error (ECHILD, EINVAL) is the call's to give. */
static bool until_waitable(idtype_t type, id_t id, int flags)
{
    siginfo_t si;
    int e = errno;
    /* a child waitable at once, or none to wait for (ECHILD: a handler reaped it already, as
     * bash's does before its own waitpid): the call does not wait, and the thread never counts
     * as waiting (with no other slot holding time, the engine would move it in that instant) */
    si.si_pid = 0;
    if (REAL(waitid)(type, id, &si, flags | WNOWAIT | WNOHANG) < 0 || si.si_pid != 0) {
        errno = e;
        return true;
    }
    emutime_wait_child_begin();
    int r = REAL(waitid)(type, id, &si, flags | WNOWAIT);
    bool intr = r < 0 && errno == EINTR;
    emutime_wait_child_end();
    errno = intr ? EINTR : e;
    return !intr;
}

/* waitpid's pid as waitid's type and id. */
static idtype_t pid_type(pid_t pid, id_t *id)
{
    if (pid < -1)
        return *id = (id_t)-pid, P_PGID;
    if (pid == 0)
        return *id = (id_t)getpgrp(), P_PGID;
    if (pid == -1)
        return *id = 0, P_ALL;
    return *id = (id_t)pid, P_PID;
}

/* waitpid's options as waitid's flags. */
static int pid_flags(int options)
{
    return WEXITED | (options & WUNTRACED ? WSTOPPED : 0) | (options & (WCONTINUED | __WALL | __WCLONE | __WNOTHREAD));
}

/* A wait of the waitpid kind (call's options: options | WNOHANG once a child is waitable, its
 * answer r_: the pid reaped, 0 when none was, -1): blocking ones wait as above, and again when
 * another thread reaped the child first. */
#define PID_WAIT(pid, options, call)                                                                                   \
    do {                                                                                                               \
        if (!emutime_on())                                                                                             \
            return call(options);                                                                                      \
        bool block_ = !((options) & WNOHANG);                                                                          \
        id_t id_;                                                                                                      \
        idtype_t type_ = pid_type(pid, &id_);                                                                          \
        for (;;) {                                                                                                     \
            if (block_ && !until_waitable(type_, id_, pid_flags(options)))                                             \
                return -1;                                                                                             \
            bool held_ = !block_ && emutime_reap_begin();                                                              \
            pid_t r_ = call((options) | WNOHANG);                                                                      \
            int e_ = errno;                                                                                            \
            if (r_ > 0)                                                                                                \
                emutime_reaped(r_);                                                                                    \
            emutime_reap_end(held_);                                                                                   \
            errno = e_;                                                                                                \
            if (r_ != 0 || !block_)                                                                                    \
                return r_;                                                                                             \
        }                                                                                                              \
    } while (0)

EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
#define CALL(o) REAL(waitpid)(pid, status, o)
    PID_WAIT(pid, options, CALL);
#undef CALL
}

EXPORT pid_t wait(int *status)
{
#define CALL(o) REAL(wait4)(-1, status, o, NULL)
    PID_WAIT(-1, 0, CALL);
#undef CALL
}

EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
#define CALL(o) REAL(wait4)(-1, status, o, ru)
    PID_WAIT(-1, options, CALL);
#undef CALL
}

EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
#define CALL(o) REAL(wait4)(pid, status, o, ru)
    PID_WAIT(pid, options, CALL);
#undef CALL
}

EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
    if (!emutime_on())
        return REAL(waitid)(type, id, info, options);
    bool block = !(options & WNOHANG), keep = options & WNOWAIT;
    siginfo_t own;
    siginfo_t *si = info ? info : &own;
    for (;;) {
        if (block && !until_waitable(type, id, options))
            return -1;
        bool held = !block && !keep && emutime_reap_begin();
        si->si_pid = 0;
        int r = REAL(waitid)(type, id, si, options | WNOHANG);
        int e = errno;
        if (r == 0 && si->si_pid > 0 && !keep) /* WNOWAIT reaps nothing */
            emutime_reaped(si->si_pid);
        emutime_reap_end(held);
        errno = e;
        if (r != 0 || si->si_pid > 0 || !block)
            return r;
    }
}
