/* wrap_timer: the timers and the signal waits in emulated time (docs/time.md "Timers"):
 * timerfd_create/settime/gettime, timer_create/settime/gettime/getoverrun/delete, setitimer and
 * getitimer (ITIMER_REAL), alarm, on the realtime, monotonic and boottime clocks (emutimer.c keeps
 * them); pause and sigsuspend, waits for a signal that count the thread as waiting and wake for
 * the process's timers. The CPU-time clocks and timers (ITIMER_VIRTUAL, ITIMER_PROF,
 * CLOCK_PROCESS_CPUTIME_ID...) and every call of a process without HWEMU_TIME=emulated go to libc
 * untouched. The real call is always made first where it creates something (a timerfd, a timer),
 * so the kernel's checks and errors are the answer's. */
#include "emutime.h"
#include "emutimer.h"
#include "real.h"
#include "tsctrap.h"

#include <errno.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* --- timerfd ------------------------------------------------------------------------------------ */

EXPORT int timerfd_create(clockid_t clock, int flags)
{
    int fd = REAL(timerfd_create)(clock, flags);
    if (fd >= 0 && emutime_on() && emutimer_clock_ok(clock))
        emutimer_fd_add(fd, clock);
    return fd;
}

EXPORT int timerfd_settime(int fd, int flags, const struct itimerspec *v, struct itimerspec *old)
{
    if (!emutime_on() || !emutimer_is_fd(fd))
        return REAL(timerfd_settime)(fd, flags, v, old);
    int rc = emutimer_fd_settime(fd, flags, v, old);
    return rc ? shim_fail(rc) : 0;
}

EXPORT int timerfd_gettime(int fd, struct itimerspec *cur)
{
    if (!emutime_on() || !emutimer_is_fd(fd))
        return REAL(timerfd_gettime)(fd, cur);
    int rc = emutimer_fd_gettime(fd, cur);
    return rc ? shim_fail(rc) : 0;
}

/* --- POSIX timers -------------------------------------------------------------------------------- */

/* A SIGEV_THREAD timer is created with the calling thread's RDTSC the host's (tsctrap.c): glibc
 * starts its timers' helper thread inside the call, with every signal blocked, and the threads it
 * starts for each expiry inherit its RDTSC mode; a faulting RDTSC there could not be answered. */
EXPORT int timer_create(clockid_t clock, struct sigevent *restrict sev, timer_t *restrict id)
{
    bool tsc = sev && sev->sigev_notify == SIGEV_THREAD && tsc_exec_begin();
    int rc = REAL(timer_create)(clock, sev, id);
    tsc_exec_end(tsc);
    if (rc == 0 && emutime_on() && emutimer_clock_ok(clock))
        emutimer_posix_add(*id, clock, sev);
    return rc;
}

EXPORT int timer_settime(timer_t id, int flags, const struct itimerspec *restrict v, struct itimerspec *restrict old)
{
    if (!emutime_on() || !emutimer_is_posix(id))
        return REAL(timer_settime)(id, flags, v, old);
    int rc = emutimer_posix_settime(id, flags, v, old);
    return rc ? shim_fail(rc) : 0;
}

EXPORT int timer_gettime(timer_t id, struct itimerspec *cur)
{
    if (!emutime_on() || !emutimer_is_posix(id))
        return REAL(timer_gettime)(id, cur);
    int rc = emutimer_posix_gettime(id, cur);
    return rc ? shim_fail(rc) : 0;
}

EXPORT int timer_getoverrun(timer_t id)
{
    if (!emutime_on() || !emutimer_is_posix(id))
        return REAL(timer_getoverrun)(id);
    return emutimer_posix_overrun(id);
}

EXPORT int timer_delete(timer_t id)
{
    if (emutime_on())
        emutimer_posix_delete(id);
    return REAL(timer_delete)(id);
}

/* --- ITIMER_REAL and alarm ------------------------------------------------------------------------ */

EXPORT int setitimer(__itimer_which_t which, const struct itimerval *v, struct itimerval *old)
{
    if (!emutime_on() || which != ITIMER_REAL || !v)
        return REAL(setitimer)(which, v, old);
    int rc = emutimer_itimer_set(v, old);
    return rc ? shim_fail(rc) : 0;
}

EXPORT int getitimer(__itimer_which_t which, struct itimerval *cur)
{
    if (!emutime_on() || which != ITIMER_REAL || !cur)
        return REAL(getitimer)(which, cur);
    emutimer_itimer_get(cur);
    return 0;
}

/* glibc's alarm: setitimer(ITIMER_REAL) of seconds, the old value's seconds rounded to the
 * nearest, and at least 1 while any time was left (misc/alarm.c) */
EXPORT unsigned int alarm(unsigned int seconds)
{
    if (!emutime_on())
        return REAL(alarm)(seconds);
    struct itimerval v = {.it_value = {.tv_sec = seconds}}, old;
    if (emutimer_itimer_set(&v, &old))
        return 0;
    unsigned int left = (unsigned int)old.it_value.tv_sec;
    if (old.it_value.tv_usec >= 500000 || (left == 0 && old.it_value.tv_usec > 0))
        left++;
    return left;
}

/* --- waits for a signal --------------------------------------------------------------------------- */

struct sig_ctx {
    const sigset_t *mask;
};

/* one real wait for a signal (ppoll without descriptors: a sigsuspend with a timeout) */
static bool sig_op(void *p, int64_t abs_real)
{
    struct sig_ctx *c = p;
    struct timespec ts, *tp = NULL;
    if (abs_real != INT64_MAX) {
        int64_t d = abs_real - emutime_real_mono();
        ts = emutime_ts_of(d > 0 ? d : 0);
        tp = &ts;
    }
    return REAL(ppoll)(NULL, 0, tp, c->mask) < 0; /* only a signal ends it (EINTR) */
}

/* pause and sigsuspend: -1 and EINTR once a handler ran */
static int sig_wait(const sigset_t *mask)
{
    struct sig_ctx c = {mask};
    emutime_wait(INT64_MAX, sig_op, &c, mask, true);
    return shim_fail(EINTR);
}

EXPORT int pause(void)
{
    if (!emutime_on())
        return REAL(pause)();
    return sig_wait(NULL);
}

EXPORT int sigsuspend(const sigset_t *mask)
{
    if (!emutime_on())
        return REAL(sigsuspend)(mask);
    return sig_wait(mask);
}
