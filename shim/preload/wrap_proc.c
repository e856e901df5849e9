/* wrap_proc: processes in emulated time (docs/time.md): fork (and vfork, made a fork: the child
 * must take over the slot its parent claimed for it, which a child sharing the parent's memory
 * cannot) hands the child a clock slot of its own before it exists, and the waits for a child
 * (wait, waitpid, wait3, wait4, waitid without WNOHANG) count the thread as waiting, so time
 * moves while a script's parent shell waits for a program that sleeps. Without HWEMU_TIME=
 * emulated every call goes to libc untouched. */
#include "emutime.h"
#include "real.h"

#include <errno.h>
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
    if (pid == 0)
        emutime_fork_child(child_slot);
    else
        emutime_spawned(child_slot, pid < 0 ? -1 : 0, pid);
    return pid;
}

EXPORT pid_t vfork(void)
{
    return emutime_on() ? fork() : REAL(fork)();
}

#define CHILD_WAIT(options, call)                                                                                      \
    do {                                                                                                               \
        if (!emutime_on() || ((options) & WNOHANG))                                                                    \
            return call;                                                                                               \
        emutime_wait_child_begin();                                                                                    \
        __typeof__(call) r_ = call;                                                                                    \
        int e_ = errno;                                                                                                \
        emutime_wait_child_end();                                                                                      \
        errno = e_;                                                                                                    \
        return r_;                                                                                                     \
    } while (0)

EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
    CHILD_WAIT(options, REAL(waitpid)(pid, status, options));
}

EXPORT pid_t wait(int *status)
{
    CHILD_WAIT(0, REAL(wait)(status));
}

EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
    CHILD_WAIT(options, REAL(wait3)(status, options, ru));
}

EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
    CHILD_WAIT(options, REAL(wait4)(pid, status, options, ru));
}

EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
    CHILD_WAIT(options, REAL(waitid)(type, id, info, options));
}
