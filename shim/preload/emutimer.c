/* emutimer: the emulated timers of a process; see emutimer.h and docs/time.md "Timers".
 * One table under one lock (held with every signal blocked, so that a handler calling alarm or
 * timer_settime never finds it taken by its own thread); the earliest expiry the waits wake for
 * is kept beside it for lock-free reads. A timer's state is its emulated CLOCK_MONOTONIC expiry
 * (0: disarmed) and interval: what timer_gettime shows, how many expirations a timerfd read
 * returns and how many a signal overran are all computed from them and the emulated now. */
#include "emutimer.h"

#include "emutime.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

enum kind { T_FREE, T_FD, T_POSIX, T_ITIMER };

struct timer {
    enum kind kind;
    clockid_t clock;
    int64_t expiry, interval; /* emulated CLOCK_MONOTONIC; expiry 0: disarmed */
    bool hosted;              /* the real timer is armed at the expiry's wall time: it fires, not the waits */
    bool readable;            /* T_FD: fired, its descriptor readable until a read */
    int fd;                   /* T_FD */
    timer_t id;               /* T_POSIX */
    int notify, signo, overrun; /* T_POSIX: sigev_notify, sigev_signo, the last signal's overrun */
    pid_t tid;                /* T_POSIX: SIGEV_THREAD_ID's thread */
    union sigval value;       /* T_POSIX */
    void (*fn)(union sigval); /* T_POSIX: SIGEV_THREAD's function */
};

/* [0] is ITIMER_REAL, the rest timerfds and POSIX timers */
static struct timer tab[1 + EMUTIMER_MAX];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int64_t next_expiry = INT64_MAX;
/* fd + 1 of each T_FD entry (0: none), for the lock-free look of every read and close */
static _Atomic int fd_plus1[1 + EMUTIMER_MAX];
static _Atomic int n_fds;

static void take(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, old);
    pthread_mutex_lock(&lock);
}

static void give(const sigset_t *old)
{
    pthread_mutex_unlock(&lock);
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* under the lock, after every change */
static void recompute(void)
{
    int64_t n = INT64_MAX;
    for (size_t k = 0; k < sizeof tab / sizeof *tab; k++) {
        const struct timer *t = &tab[k];
        if (t->kind != T_FREE && t->expiry && !t->hosted && !t->readable && t->expiry < n)
            n = t->expiry;
    }
    atomic_store_explicit(&next_expiry, n, memory_order_release);
}

static int64_t add_sat(int64_t a, int64_t b)
{
    return b > INT64_MAX - a ? INT64_MAX : a + b;
}

void emutimer_init(void)
{
    if (emutime_on())
        emutime_timers(emutimer_next, emutimer_fire);
}

bool emutimer_clock_ok(clockid_t id)
{
    switch (id) {
    case CLOCK_REALTIME:
    case CLOCK_MONOTONIC:
    case CLOCK_BOOTTIME:
    case CLOCK_REALTIME_ALARM:
    case CLOCK_BOOTTIME_ALARM:
        return true;
    default:
        return false;
    }
}

int64_t emutimer_next(void)
{
    return atomic_load_explicit(&next_expiry, memory_order_acquire);
}

/* --- the real timer behind each one ----------------------------------------------------------- */

/* The real timer of t: disarmed, or (hosted) armed at the wall time of its expiry with the wall
 * length of its interval; fire_now: armed to fire at once (what makes a timerfd readable). */
static void arm_real(const struct timer *t, bool fire_now)
{
    struct itimerspec r = {0};
    if (fire_now) {
        r.it_value.tv_nsec = 1;
    } else if (t->hosted && t->expiry) {
        int64_t at = emutime_real_at(t->expiry), rel = at == INT64_MAX ? INT64_MAX / 2 : at - emutime_real_mono();
        r.it_value = emutime_ts_of(rel < 1 ? 1 : rel);
        if (t->interval) {
            int64_t iv = emutime_real_at(add_sat(t->expiry, t->interval)) - at;
            r.it_interval = emutime_ts_of(iv < 1 ? 1 : iv);
        }
    }
    switch (t->kind) {
    case T_FD: REAL(timerfd_settime)(t->fd, 0, &r, NULL); break;
    case T_POSIX: REAL(timer_settime)(t->id, 0, &r, NULL); break;
    case T_ITIMER: {
        struct itimerval v = {
            .it_value = {r.it_value.tv_sec, (r.it_value.tv_nsec + 999) / 1000},
            .it_interval = {r.it_interval.tv_sec, (r.it_interval.tv_nsec + 999) / 1000},
        };
        REAL(setitimer)(ITIMER_REAL, &v, NULL);
        break;
    }
    case T_FREE: break;
    }
}

/* How many times t expired by now (its expiry not moved). */
static int64_t expirations(const struct timer *t, int64_t now)
{
    if (!t->expiry || now < t->expiry)
        return 0;
    return t->interval ? 1 + (now - t->expiry) / t->interval : 1;
}

/* The time left to the next expiry and the interval (timer_gettime's answer). */
static void remaining(const struct timer *t, int64_t now, struct itimerspec *cur)
{
    int64_t left = 0;
    if (t->expiry && now < t->expiry)
        left = t->expiry - now;
    else if (t->expiry && t->interval)
        left = t->interval - (now - t->expiry) % t->interval;
    cur->it_value = emutime_ts_of(left);
    cur->it_interval = emutime_ts_of(t->interval);
}

static bool bad_ts(const struct timespec *ts)
{
    return ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000;
}

/* timerfd_settime and timer_settime on t (under the lock): 0 or an errno. */
static int settime(struct timer *t, bool abs, const struct itimerspec *v, struct itimerspec *old)
{
    if (bad_ts(&v->it_value) || bad_ts(&v->it_interval))
        return EINVAL;
    int64_t now = emutime_mono();
    if (old)
        remaining(t, now, old);
    int64_t value = emutime_ns_of(&v->it_value), expiry = 0;
    if (value && abs)
        emutime_to_mono(t->clock, value, &expiry);
    else if (value)
        expiry = add_sat(now, value);
    if (value && expiry < 1) /* an absolute time before the clock's start: due now */
        expiry = 1;
    t->expiry = expiry;
    t->interval = value ? emutime_ns_of(&v->it_interval) : 0;
    t->readable = false;
    t->overrun = 0;
    t->hosted = expiry && !emutime_stepped();
    arm_real(t, false);
    recompute();
    return 0;
}

/* --- firing ------------------------------------------------------------------------------------- */

struct action {
    enum { A_READABLE, A_SIGNAL, A_THREAD } what;
    struct timer t; /* a copy: what to fire */
    siginfo_t si;
};

/* Sends a's signal (see emutimer_fire): true when a handler ran in the calling thread. */
static bool send_signal(const struct action *a, const sigset_t *mask)
{
    int sig = a->si.si_signo;
    pid_t pid = getpid(), me = gettid(), to = a->t.tid;
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    bool open_here = !sigismember(&cur, sig);
    if (!to && (open_here || (mask && !sigismember(mask, sig))))
        to = me;
    struct sigaction sa;
    bool handled = REAL(sigaction)(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
    siginfo_t si = a->si;
    long rc = to ? REAL(syscall)(SYS_rt_tgsigqueueinfo, pid, to, sig, &si)
                 : REAL(syscall)(SYS_rt_sigqueueinfo, pid, sig, &si);
    if (rc != 0 && a->si.si_code == SI_KERNEL) /* SI_KERNEL is taken from the main thread only: kill() */
        REAL(syscall)(SYS_kill, pid, sig);
    return to == me && open_here && handled;
}

/* SIGEV_THREAD: the function runs in a new thread that holds a slot of the clock from its start
 * (the firing thread waits for that), so time does not move before the function has run up to
 * its first wait. The thread has default attributes, detached. */
struct notify {
    void (*fn)(union sigval);
    union sigval value;
    sem_t started;
};

static void *notify_main(void *p)
{
    struct notify *n = p;
    void (*fn)(union sigval) = n->fn;
    union sigval value = n->value;
    emutime_hold();
    sem_post(&n->started); /* n is the firing thread's: not touched after this */
    fn(value);
    return NULL;
}

static void notify_thread(const struct timer *t)
{
    struct notify n = {.fn = t->fn, .value = t->value};
    pthread_attr_t attr;
    pthread_t th;
    sem_init(&n.started, 0, 0);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (t->fn && pthread_create(&th, &attr, notify_main, &n) == 0)
        while (sem_wait(&n.started) && errno == EINTR)
            ;
    pthread_attr_destroy(&attr);
    sem_destroy(&n.started);
}

bool emutimer_fire(const sigset_t *mask)
{
    struct action acts[1 + EMUTIMER_MAX];
    int n = 0;
    sigset_t old;
    take(&old);
    int64_t now = emutime_mono();
    for (size_t k = 0; k < sizeof tab / sizeof *tab; k++) {
        struct timer *t = &tab[k];
        if (t->kind == T_FREE || t->hosted || t->readable || !t->expiry || now < t->expiry)
            continue;
        int64_t count = expirations(t, now);
        struct action *a = &acts[n];
        memset(a, 0, sizeof *a);
        if (t->kind == T_FD) { /* the read counts the expirations */
            t->readable = true;
            a->what = A_READABLE;
            a->t = *t;
            n++;
            continue;
        }
        t->expiry = t->interval ? add_sat(t->expiry, count * t->interval) : 0;
        a->t = *t;
        a->si.si_signo = t->kind == T_ITIMER ? SIGALRM : t->signo;
        if (t->kind == T_ITIMER) {
            a->what = A_SIGNAL;
            a->si.si_code = SI_KERNEL; /* what the kernel's ITIMER_REAL sends */
            n++;
            continue;
        }
        t->overrun = count - 1 > INT_MAX ? INT_MAX : (int)(count - 1);
        if (t->notify == SIGEV_NONE)
            continue;
        if (t->notify == SIGEV_THREAD) {
            a->what = A_THREAD;
            n++;
            continue;
        }
        a->what = A_SIGNAL;
        a->si.si_code = SI_TIMER;
        a->si.si_timerid = (int)(intptr_t)t->id;
        a->si.si_overrun = t->overrun;
        a->si.si_value = t->value;
        n++;
    }
    recompute();
    give(&old);
    bool ran = false;
    for (int k = 0; k < n; k++) {
        struct action *a = &acts[k];
        if (a->what == A_SIGNAL) {
            ran |= send_signal(a, mask);
        } else if (a->what == A_THREAD) {
            notify_thread(&a->t);
        } else { /* readable before the wait looks at it again: the real timerfd fired */
            arm_real(&a->t, true);
            struct pollfd p = {.fd = a->t.fd, .events = POLLIN};
            REAL(poll)(&p, 1, 1000);
        }
    }
    return ran;
}

void emutimer_fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    for (size_t k = 0; k < sizeof tab / sizeof *tab; k++)
        if (tab[k].kind == T_POSIX || tab[k].kind == T_ITIMER)
            tab[k].kind = T_FREE;
    recompute();
}

/* A free entry (under the lock), or NULL: said once, the timer then runs in the host's time. */
static struct timer *entry_new(enum kind kind, clockid_t clock)
{
    for (size_t k = 1; k < sizeof tab / sizeof *tab; k++)
        if (tab[k].kind == T_FREE) {
            memset(&tab[k], 0, sizeof tab[k]);
            tab[k].kind = kind;
            tab[k].clock = clock;
            return &tab[k];
        }
    static _Atomic bool said;
    static const char msg[] = "hwemu-shim: --time emulated: more timers than the shim keeps (64 timerfds and "
                              "POSIX timers per process); this one runs in the host's time\n";
    if (!atomic_exchange(&said, true) && REAL(write)(2, msg, sizeof msg - 1) < 0)
        return NULL;
    return NULL;
}

/* --- settime and gettime of a timerfd or a POSIX timer ------------------------------------------ */

/* The timerfd fd or the POSIX timer id (under the lock). */
static struct timer *find(enum kind kind, int fd, timer_t id)
{
    for (size_t k = 1; k < sizeof tab / sizeof *tab; k++)
        if (tab[k].kind == kind && (kind == T_FD ? tab[k].fd == fd : tab[k].id == id))
            return &tab[k];
    return NULL;
}

/* timerfd_settime, timer_settime: 0 or an errno (missing: the one of a timer the shim does not know) */
static int set_of(enum kind kind, int fd, timer_t id, bool abs, const struct itimerspec *v, struct itimerspec *old,
                  int missing)
{
    if (!v)
        return EFAULT;
    sigset_t mask;
    take(&mask);
    struct timer *t = find(kind, fd, id);
    int rc = t ? settime(t, abs, v, old) : missing;
    give(&mask);
    return rc;
}

static int get_of(enum kind kind, int fd, timer_t id, struct itimerspec *cur, int missing)
{
    sigset_t mask;
    take(&mask);
    struct timer *t = find(kind, fd, id);
    if (t)
        remaining(t, emutime_mono(), cur);
    give(&mask);
    return t ? 0 : missing;
}

/* --- timerfd ------------------------------------------------------------------------------------ */

void emutimer_fd_add(int fd, clockid_t clock)
{
    sigset_t old;
    take(&old);
    struct timer *t = find(T_FD, fd, NULL); /* a stale entry of a number closed behind the shim's back */
    if (!t && (t = entry_new(T_FD, clock)))
        atomic_fetch_add(&n_fds, 1);
    if (t) {
        memset(t, 0, sizeof *t);
        t->kind = T_FD;
        t->clock = clock;
        t->fd = fd;
        atomic_store(&fd_plus1[t - tab], fd + 1);
    }
    give(&old);
}

bool emutimer_is_fd(int fd)
{
    if (!atomic_load_explicit(&n_fds, memory_order_relaxed))
        return false;
    for (size_t k = 1; k < sizeof tab / sizeof *tab; k++)
        if (atomic_load_explicit(&fd_plus1[k], memory_order_relaxed) == fd + 1)
            return true;
    return false;
}

void emutimer_fd_closed(int fd)
{
    if (!emutimer_is_fd(fd))
        return;
    sigset_t old;
    take(&old);
    struct timer *t = find(T_FD, fd, NULL);
    if (t) {
        t->kind = T_FREE;
        atomic_store(&fd_plus1[t - tab], 0);
        atomic_fetch_sub(&n_fds, 1);
        recompute();
    }
    give(&old);
}

int emutimer_fd_settime(int fd, int flags, const struct itimerspec *v, struct itimerspec *old)
{
    if (flags & ~(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET)) /* the kernel looks at them first */
        return EINVAL;
    return set_of(T_FD, fd, NULL, flags & TFD_TIMER_ABSTIME, v, old, EBADF);
}

int emutimer_fd_gettime(int fd, struct itimerspec *cur)
{
    return get_of(T_FD, fd, NULL, cur, EBADF);
}

ssize_t emutimer_fd_read(int fd, void *buf, size_t n)
{
    if (n < sizeof(uint64_t))
        return shim_fail(EINVAL);
    for (;;) {
        sigset_t mask;
        take(&mask);
        struct timer *t = find(T_FD, fd, NULL);
        if (!t) {
            give(&mask);
            return REAL(read)(fd, buf, n);
        }
        int64_t now = emutime_mono(), count = expirations(t, now), deadline = t->expiry ? t->expiry : INT64_MAX;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (!count && t->hosted && t->expiry && REAL(poll)(&p, 1, 0) == 1)
            count = 1; /* the kernel fired it a hair before the engine's time got there (its tick came late) */
        if (count) {
            t->expiry = t->interval ? add_sat(t->expiry, count * t->interval) : 0;
            t->readable = false;
            arm_real(t, false); /* not readable until the next expiry (its wall time when hosted) */
            recompute();
        }
        give(&mask);
        if (count) {
            uint64_t c = (uint64_t)count;
            memcpy(buf, &c, sizeof c);
            return sizeof c;
        }
        int fl = REAL(fcntl)(fd, F_GETFL);
        if (fl < 0)
            return -1;
        if (fl & O_NONBLOCK)
            return shim_fail(EAGAIN);
        if (emutime_sleep_until(deadline) == EINTR)
            return shim_fail(EINTR);
    }
}

/* --- POSIX timers --------------------------------------------------------------------------------- */

void emutimer_posix_add(timer_t id, clockid_t clock, const struct sigevent *sev)
{
    sigset_t old;
    take(&old);
    struct timer *t = find(T_POSIX, -1, id);
    if (!t)
        t = entry_new(T_POSIX, clock);
    if (t) {
        memset(t, 0, sizeof *t);
        t->kind = T_POSIX;
        t->clock = clock;
        t->id = id;
        if (sev) {
            t->notify = sev->sigev_notify;
            t->signo = sev->sigev_signo;
            t->value = sev->sigev_value;
            t->tid = sev->sigev_notify == SIGEV_THREAD_ID ? sev->_sigev_un._tid : 0;
            t->fn = sev->sigev_notify == SIGEV_THREAD ? sev->sigev_notify_function : NULL;
        } else { /* the kernel's default: SIGALRM carrying the timer's id */
            t->notify = SIGEV_SIGNAL;
            t->signo = SIGALRM;
            t->value.sival_int = (int)(intptr_t)id;
        }
    }
    give(&old);
}

bool emutimer_is_posix(timer_t id)
{
    sigset_t old;
    take(&old);
    bool is = find(T_POSIX, -1, id) != NULL;
    give(&old);
    return is;
}

int emutimer_posix_settime(timer_t id, int flags, const struct itimerspec *v, struct itimerspec *old)
{
    return set_of(T_POSIX, -1, id, flags & TIMER_ABSTIME, v, old, EINVAL);
}

int emutimer_posix_gettime(timer_t id, struct itimerspec *cur)
{
    return get_of(T_POSIX, -1, id, cur, EINVAL);
}

int emutimer_posix_overrun(timer_t id)
{
    sigset_t mask;
    take(&mask);
    struct timer *t = find(T_POSIX, -1, id);
    int n = t ? (t->hosted ? REAL(timer_getoverrun)(id) : t->overrun) : -1;
    give(&mask);
    return n;
}

void emutimer_posix_delete(timer_t id)
{
    sigset_t mask;
    take(&mask);
    struct timer *t = find(T_POSIX, -1, id);
    if (t) {
        t->kind = T_FREE;
        recompute();
    }
    give(&mask);
}

/* --- ITIMER_REAL ---------------------------------------------------------------------------------- */

/* ns as a timeval rounded up to the microsecond, as the kernel's getitimer does */
static struct timeval tv_up(struct timespec ts)
{
    struct timeval tv = {ts.tv_sec, (ts.tv_nsec + 999) / 1000};
    if (tv.tv_usec == 1000000)
        tv.tv_sec++, tv.tv_usec = 0;
    return tv;
}

int emutimer_itimer_set(const struct itimerval *v, struct itimerval *old)
{
    if (v->it_value.tv_sec < 0 || v->it_value.tv_usec < 0 || v->it_value.tv_usec >= 1000000 ||
        v->it_interval.tv_sec < 0 || v->it_interval.tv_usec < 0 || v->it_interval.tv_usec >= 1000000)
        return EINVAL;
    struct itimerspec ts = {
        .it_value = {v->it_value.tv_sec, v->it_value.tv_usec * 1000},
        .it_interval = {v->it_interval.tv_sec, v->it_interval.tv_usec * 1000},
    }, was;
    sigset_t mask;
    take(&mask);
    struct timer *t = &tab[0];
    if (t->kind != T_ITIMER) {
        memset(t, 0, sizeof *t);
        t->kind = T_ITIMER;
        t->clock = CLOCK_MONOTONIC;
    }
    int rc = settime(t, false, &ts, &was);
    give(&mask);
    if (old && !rc)
        *old = (struct itimerval){.it_interval = tv_up(was.it_interval), .it_value = tv_up(was.it_value)};
    return rc;
}

void emutimer_itimer_get(struct itimerval *cur)
{
    struct itimerspec ts = {0};
    sigset_t mask;
    take(&mask);
    if (tab[0].kind == T_ITIMER)
        remaining(&tab[0], emutime_mono(), &ts);
    give(&mask);
    *cur = (struct itimerval){.it_interval = tv_up(ts.it_interval), .it_value = tv_up(ts.it_value)};
}
