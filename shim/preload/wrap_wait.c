/* wrap_wait: the waits with timeouts in emulated time (docs/time.md): select, pselect, poll,
 * ppoll, epoll_wait, epoll_pwait, epoll_pwait2, the timed condition, mutex and semaphore waits
 * (pthread_cond_timedwait/clockwait, pthread_mutex_timedlock/clocklock, sem_timedwait/
 * clockwait). A wait of nothing but time (select or poll of no descriptor) is a sleep; a wait
 * for something else runs as real waits in slices until it is over or its emulated deadline
 * came (emutime_wait); a wait without a timeout counts the thread as waiting, so the engine
 * does not wait for it. Without HWEMU_TIME=emulated every call goes to libc untouched. */
#include "emutime.h"
#include "real.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>

#define EXPORT __attribute__((visibility("default")))

/* The real milliseconds poll-like calls wait until abs_real (INT64_MAX: -1, forever), rounded up. */
static int ms_until(int64_t abs_real)
{
    if (abs_real == INT64_MAX)
        return -1;
    int64_t d = abs_real - emutime_real_mono();
    if (d <= 0)
        return 0;
    d = (d + 999999) / 1000000;
    return d > INT_MAX ? INT_MAX : (int)d;
}

static struct timespec *ts_until(int64_t abs_real, struct timespec *ts)
{
    if (abs_real == INT64_MAX)
        return NULL;
    int64_t d = abs_real - emutime_real_mono();
    *ts = emutime_ts_of(d > 0 ? d : 0);
    return ts;
}

/* --- poll ---------------------------------------------------------------------------------- */

struct poll_ctx {
    struct pollfd *fds;
    nfds_t n;
    const sigset_t *mask;
    int rc, err;
};

static bool poll_op(void *p, int64_t abs_real)
{
    struct poll_ctx *c = p;
    struct timespec ts;
    c->rc = REAL(ppoll)(c->fds, c->n, ts_until(abs_real, &ts), c->mask);
    c->err = errno;
    return c->rc != 0;
}

static int poll_emulated(struct pollfd *fds, nfds_t n, int64_t rel_ns, const sigset_t *mask)
{
    int64_t deadline = emutime_after(rel_ns);
    if (n == 0 && !mask && deadline != INT64_MAX) { /* a sleep */
        int rc = emutime_sleep_until(deadline);
        return rc ? shim_fail(rc) : 0;
    }
    struct poll_ctx c = {fds, n, mask, 0, 0};
    int w = emutime_wait(deadline, poll_op, &c, mask, true);
    if (w != EMUTIME_DONE)
        return w == EMUTIME_SIGNAL ? shim_fail(EINTR) : 0;
    if (c.rc < 0)
        return shim_fail(c.err);
    return c.rc;
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    if (!emutime_on() || timeout_ms == 0)
        return REAL(poll)(fds, n, timeout_ms);
    return poll_emulated(fds, n, timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000, NULL);
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask)
{
    if (!emutime_on() || (timeout && !timeout->tv_sec && !timeout->tv_nsec))
        return REAL(ppoll)(fds, n, timeout, mask);
    if (timeout && (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000))
        return shim_fail(EINVAL);
    return poll_emulated(fds, n, timeout ? emutime_ns_of(timeout) : -1, mask);
}

/* --- select -------------------------------------------------------------------------------- */

struct select_ctx {
    int n;
    fd_set *sets[3], saved[3];
    const sigset_t *mask;
    int rc, err;
};

static bool select_op(void *p, int64_t abs_real)
{
    struct select_ctx *c = p;
    size_t bytes = ((size_t)c->n + 7) / 8;
    for (int k = 0; k < 3; k++) /* a slice that timed out cleared the sets: each slice waits on the caller's */
        if (c->sets[k])
            memcpy(c->sets[k], &c->saved[k], bytes);
    struct timespec ts;
    c->rc = REAL(pselect)(c->n, c->sets[0], c->sets[1], c->sets[2], ts_until(abs_real, &ts), c->mask);
    c->err = errno;
    return c->rc != 0;
}

/* select and pselect at rel_ns (< 0: none); *left gets the emulated time left (select's timeout). */
static int select_emulated(int n, fd_set *r, fd_set *w, fd_set *x, int64_t rel_ns, const sigset_t *mask,
                           int64_t *left)
{
    if (n < 0 || n > FD_SETSIZE)
        return REAL(pselect)(n, r, w, x, NULL, mask); /* the kernel's EINVAL */
    int64_t deadline = emutime_after(rel_ns);
    if (!r && !w && !x && !mask && deadline != INT64_MAX) { /* a sleep */
        int rc = emutime_sleep_until(deadline);
        *left = rc ? deadline - emutime_mono() : 0;
        return rc ? shim_fail(rc) : 0;
    }
    struct select_ctx c = {.n = n, .sets = {r, w, x}, .mask = mask};
    for (int k = 0; k < 3; k++)
        if (c.sets[k])
            memcpy(&c.saved[k], c.sets[k], ((size_t)n + 7) / 8);
    int res = emutime_wait(deadline, select_op, &c, mask, true);
    *left = deadline == INT64_MAX ? 0 : deadline - emutime_mono();
    if (*left < 0)
        *left = 0;
    if (res == EMUTIME_SIGNAL)
        return shim_fail(EINTR);
    if (res == EMUTIME_TIMEOUT) {
        for (int k = 0; k < 3; k++) /* nothing ready: the kernel clears every set */
            if (c.sets[k])
                memset(c.sets[k], 0, ((size_t)n + 7) / 8);
        return 0;
    }
    return c.rc < 0 ? shim_fail(c.err) : c.rc;
}

EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *x, struct timeval *timeout)
{
    if (!emutime_on() || (timeout && !timeout->tv_sec && !timeout->tv_usec))
        return REAL(select)(n, r, w, x, timeout);
    if (timeout && (timeout->tv_sec < 0 || timeout->tv_usec < 0))
        return shim_fail(EINVAL);
    int64_t rel = timeout ? (int64_t)timeout->tv_sec * 1000000000 + (int64_t)timeout->tv_usec * 1000 : -1, left;
    int rc = select_emulated(n, r, w, x, rel, NULL, &left);
    if (timeout) { /* Linux writes the time left back */
        int e = errno;
        timeout->tv_sec = left / 1000000000;
        timeout->tv_usec = left % 1000000000 / 1000;
        errno = e;
    }
    return rc;
}

EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *x, const struct timespec *timeout, const sigset_t *mask)
{
    if (!emutime_on() || (timeout && !timeout->tv_sec && !timeout->tv_nsec))
        return REAL(pselect)(n, r, w, x, timeout, mask);
    if (timeout && (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000))
        return shim_fail(EINVAL);
    int64_t left;
    return select_emulated(n, r, w, x, timeout ? emutime_ns_of(timeout) : -1, mask, &left);
}

/* --- epoll --------------------------------------------------------------------------------- */

struct epoll_ctx {
    int epfd, max;
    struct epoll_event *ev;
    const sigset_t *mask;
    int rc, err;
};

static bool epoll_op(void *p, int64_t abs_real)
{
    struct epoll_ctx *c = p;
    c->rc = REAL(epoll_pwait)(c->epfd, c->ev, c->max, ms_until(abs_real), c->mask);
    c->err = errno;
    return c->rc != 0;
}

static int epoll_emulated(int epfd, struct epoll_event *ev, int max, int64_t rel_ns, const sigset_t *mask)
{
    struct epoll_ctx c = {epfd, max, ev, mask, 0, 0};
    int w = emutime_wait(emutime_after(rel_ns), epoll_op, &c, mask, true);
    if (w != EMUTIME_DONE)
        return w == EMUTIME_SIGNAL ? shim_fail(EINTR) : 0;
    return c.rc < 0 ? shim_fail(c.err) : c.rc;
}

EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout_ms)
{
    if (!emutime_on() || timeout_ms == 0)
        return REAL(epoll_wait)(epfd, ev, max, timeout_ms);
    return epoll_emulated(epfd, ev, max, timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000, NULL);
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout_ms, const sigset_t *mask)
{
    if (!emutime_on() || timeout_ms == 0)
        return REAL(epoll_pwait)(epfd, ev, max, timeout_ms, mask);
    return epoll_emulated(epfd, ev, max, timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000, mask);
}

EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *timeout,
                        const sigset_t *mask)
{
    if (!emutime_on() || (timeout && !timeout->tv_sec && !timeout->tv_nsec))
        return REAL(epoll_pwait2)(epfd, ev, max, timeout, mask);
    if (timeout && (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000))
        return shim_fail(EINVAL);
    return epoll_emulated(epfd, ev, max, timeout ? emutime_ns_of(timeout) : -1, mask);
}

/* --- locks, conditions, semaphores ----------------------------------------------------------- */

/* Each slice is a real wait to an absolute CLOCK_MONOTONIC time; rc is the call's error number
 * (the semaphores' errno), ETIMEDOUT when the slice ran out. */
enum lock_kind { LK_COND, LK_MUTEX, LK_SEM };
struct lock_ctx {
    enum lock_kind kind;
    void *obj;
    pthread_mutex_t *mutex;
    int rc;
};

static bool lock_op(void *p, int64_t abs_real)
{
    struct lock_ctx *c = p;
    struct timespec ts = emutime_ts_of(abs_real == INT64_MAX ? INT64_MAX / 2 : abs_real);
    switch (c->kind) {
    case LK_COND: c->rc = REAL(pthread_cond_clockwait)(c->obj, c->mutex, CLOCK_MONOTONIC, &ts); break;
    case LK_MUTEX: c->rc = REAL(pthread_mutex_clocklock)(c->obj, CLOCK_MONOTONIC, &ts); break;
    case LK_SEM: c->rc = REAL(sem_clockwait)(c->obj, CLOCK_MONOTONIC, &ts) ? errno : 0; break;
    }
    return c->rc != ETIMEDOUT;
}

/* The emulated deadline of abstime on clock id: false when the clock stays real or abstime is
 * invalid (the caller then leaves it to libc, which answers EINVAL). */
static bool lock_deadline(clockid_t id, const struct timespec *abstime, int64_t *deadline)
{
    if (!emutime_on() || !abstime || abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000)
        return false;
    return emutime_to_mono(id, emutime_ns_of(abstime), deadline);
}

/* A timer's handler ends a semaphore's wait (EINTR); the condition and mutex waits go on, as
 * glibc's do. */
static int lock_emulated(enum lock_kind kind, void *obj, pthread_mutex_t *mutex, int64_t deadline)
{
    struct lock_ctx c = {kind, obj, mutex, 0};
    int w = emutime_wait(deadline, lock_op, &c, NULL, kind == LK_SEM);
    return w == EMUTIME_DONE ? c.rc : w == EMUTIME_SIGNAL ? EINTR : ETIMEDOUT;
}

/* glibc's condition variable keeps its clock in bit 1 of __wrefs (nptl/pthread_cond_common.c:
 * "Bit 1 is the clock ID (0 == CLOCK_REALTIME, 1 == CLOCK_MONOTONIC)"). */
static clockid_t cond_clock(const pthread_cond_t *cond)
{
    return (cond->__data.__wrefs & 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *abstime)
{
    int64_t deadline;
    if (!lock_deadline(cond_clock(cond), abstime, &deadline))
        return REAL(pthread_cond_timedwait)(cond, mutex, abstime);
    return lock_emulated(LK_COND, cond, mutex, deadline);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t id,
                                  const struct timespec *abstime)
{
    int64_t deadline;
    if (!lock_deadline(id, abstime, &deadline))
        return REAL(pthread_cond_clockwait)(cond, mutex, id, abstime);
    return lock_emulated(LK_COND, cond, mutex, deadline);
}

EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
    int64_t deadline;
    if (!lock_deadline(CLOCK_REALTIME, abstime, &deadline))
        return REAL(pthread_mutex_timedlock)(m, abstime);
    return lock_emulated(LK_MUTEX, m, NULL, deadline);
}

EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t id, const struct timespec *abstime)
{
    int64_t deadline;
    if (!lock_deadline(id, abstime, &deadline))
        return REAL(pthread_mutex_clocklock)(m, id, abstime);
    return lock_emulated(LK_MUTEX, m, NULL, deadline);
}

EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
    int64_t deadline;
    if (!lock_deadline(CLOCK_REALTIME, abstime, &deadline))
        return REAL(sem_timedwait)(s, abstime);
    int rc = lock_emulated(LK_SEM, s, NULL, deadline);
    return rc ? shim_fail(rc) : 0;
}

EXPORT int sem_clockwait(sem_t *s, clockid_t id, const struct timespec *abstime)
{
    int64_t deadline;
    if (!lock_deadline(id, abstime, &deadline))
        return REAL(sem_clockwait)(s, id, abstime);
    int rc = lock_emulated(LK_SEM, s, NULL, deadline);
    return rc ? shim_fail(rc) : 0;
}
