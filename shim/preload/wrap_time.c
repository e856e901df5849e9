/* wrap_time: the clocks and the sleeps in emulated time (docs/time.md): clock_gettime of the
 * realtime, monotonic and boottime clocks (coarse, raw and alarm variants included),
 * gettimeofday, time, timespec_get(TIME_UTC), and clock_nanosleep, nanosleep, sleep and usleep
 * (glibc's sleep and usleep reach nanosleep internally, so each is wrapped itself). The CPU-time
 * clocks and every call of a process without HWEMU_TIME=emulated go to libc untouched. The timers
 * are wrap_timer.c's. The segment readers of the shim, fakesmi and the node's libraries read their
 * clock through clock_gettime too, so an agent's reads of a node's counters are at its emulated
 * now. */
#include "emutime.h"
#include "real.h"

#include <errno.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
    int64_t ns;
    if (!emutime_on() || !emutime_clock(id, &ns))
        return REAL(clock_gettime)(id, ts);
    *ts = emutime_ts_of(ns);
    return 0;
}

EXPORT int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    int64_t ns;
    if (!emutime_on() || !emutime_clock(CLOCK_REALTIME, &ns))
        return REAL(gettimeofday)(tv, tz);
    if (tz) { /* the time zone is the host's */
        struct timeval ignored;
        REAL(gettimeofday)(&ignored, tz);
    }
    *tv = (struct timeval){.tv_sec = ns / 1000000000, .tv_usec = ns % 1000000000 / 1000};
    return 0;
}

EXPORT time_t time(time_t *t)
{
    int64_t ns;
    if (!emutime_on() || !emutime_clock(CLOCK_REALTIME, &ns))
        return REAL(time)(t);
    time_t s = (time_t)(ns / 1000000000);
    if (t)
        *t = s;
    return s;
}

EXPORT int timespec_get(struct timespec *ts, int base)
{
    int64_t ns;
    if (!emutime_on() || base != TIME_UTC || !emutime_clock(CLOCK_REALTIME, &ns))
        return REAL(timespec_get)(ts, base);
    *ts = emutime_ts_of(ns);
    return base;
}

static bool bad_ts(const struct timespec *ts)
{
    return ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000 || ts->tv_sec < 0;
}

/* A relative sleep of req in emulated time: 0, or EINTR with what is left in *rem. */
static int sleep_rel(const struct timespec *req, struct timespec *rem)
{
    int64_t deadline = emutime_after(emutime_ns_of(req));
    int rc = emutime_sleep_until(deadline);
    if (rc == EINTR && rem) {
        int64_t left = deadline - emutime_mono();
        *rem = emutime_ts_of(left > 0 ? left : 0);
    }
    return rc;
}

EXPORT int clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem)
{
    int64_t now;
    if (!emutime_on() || !emutime_clock(id, &now))
        return REAL(clock_nanosleep)(id, flags, req, rem);
    if (bad_ts(req))
        return EINVAL;
    if (!(flags & TIMER_ABSTIME))
        return sleep_rel(req, rem);
    int64_t deadline;
    emutime_to_mono(id, emutime_ns_of(req), &deadline);
    return emutime_sleep_until(deadline); /* an absolute sleep leaves rem alone */
}

EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (!emutime_on())
        return REAL(nanosleep)(req, rem);
    if (bad_ts(req))
        return shim_fail(EINVAL);
    int rc = sleep_rel(req, rem);
    return rc ? shim_fail(rc) : 0;
}

EXPORT unsigned int sleep(unsigned int seconds)
{
    if (!emutime_on())
        return REAL(sleep)(seconds);
    struct timespec req = {.tv_sec = seconds}, rem = {0};
    if (sleep_rel(&req, &rem) == 0)
        return 0;
    return (unsigned)rem.tv_sec + (rem.tv_nsec >= 500000000); /* glibc rounds the rest */
}

EXPORT int usleep(useconds_t usec)
{
    if (!emutime_on())
        return REAL(usleep)(usec);
    struct timespec req = {.tv_sec = usec / 1000000, .tv_nsec = (long)(usec % 1000000) * 1000};
    int rc = sleep_rel(&req, NULL);
    return rc ? shim_fail(rc) : 0;
}
