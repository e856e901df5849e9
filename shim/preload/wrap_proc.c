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

/* A wait for a child: the thread waits (unless WNOHANG); a child it reaps has its slot freed. */
#define CHILD_WAIT(options, call, reaped)                                                                              \
    do {                                                                                                               \
        if (!emutime_on())                                                                                             \
            return call;                                                                                               \
        bool block_ = !((options) & WNOHANG);                                                                          \
        if (block_)                                                                                                    \
            emutime_wait_child_begin();                                                                                \
        __typeof__(call) r_ = call;                                                                                    \
        int e_ = errno;                                                                                                \
        if (block_)                                                                                                    \
            emutime_wait_child_end();                                                                                  \
        if (r_ >= 0)                                                                                                   \
            emutime_reaped(reaped);                                                                                    \
        errno = e_;                                                                                                    \
        return r_;                                                                                                     \
    } while (0)

EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
    CHILD_WAIT(options, REAL(waitpid)(pid, status, options), r_);
}

EXPORT pid_t wait(int *status)
{
    CHILD_WAIT(0, REAL(wait)(status), r_);
}

EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
    CHILD_WAIT(options, REAL(wait3)(status, options, ru), r_);
}

EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
    CHILD_WAIT(options, REAL(wait4)(pid, status, options, ru), r_);
}

EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
    CHILD_WAIT(options, REAL(waitid)(type, id, info, options), (options & WNOWAIT) || !info ? 0 : info->si_pid);
}
