/* emutime_timers: the timers of tests/cli/test_emutime.sh, run under `hwemu exec --time emulated`
 * against an engine at --speed max. Each case prints "<name> <values>", times in emulated seconds
 * since the case began (read on CLOCK_MONOTONIC, which the shim answers with the engine's clock),
 * so the expected values are the timers' own settings: a timerfd read, poll, epoll and select wake
 * at its expiry; a non-blocking read before it is EAGAIN; an interval's read counts what expired;
 * timerfd_gettime is the time left; ITIMER_REAL ends a nanosleep with EINTR at its expiry and the
 * time left in rem; alarm ends pause; a POSIX timer's signals come at each interval with SI_TIMER
 * and the timer's value; a SIGEV_THREAD timer's function runs at its expiry (in a thread that
 * holds time from its start), before the 10 s the main thread waits for it. */
#include <errno.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static int64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double since(int64_t t0)
{
    return (double)(mono() - t0) / 1e9;
}

static void die(const char *what)
{
    printf("%s failed: %s\n", what, strerror(errno));
    exit(1);
}

static struct itimerspec its(double value, double interval)
{
    struct itimerspec v = {
        .it_value = {(time_t)value, (long)((value - (double)(time_t)value) * 1e9 + 0.5)},
        .it_interval = {(time_t)interval, (long)((interval - (double)(time_t)interval) * 1e9 + 0.5)},
    };
    return v;
}

static int tfd(clockid_t clock, int flags, double value, double interval, int abs)
{
    int fd = timerfd_create(clock, flags);
    if (fd < 0)
        die("timerfd_create");
    struct itimerspec v = its(value, interval);
    if (abs) {
        struct timespec now;
        clock_gettime(clock, &now);
        v.it_value.tv_sec += now.tv_sec;
        v.it_value.tv_nsec += now.tv_nsec;
        if (v.it_value.tv_nsec >= 1000000000)
            v.it_value.tv_sec++, v.it_value.tv_nsec -= 1000000000;
    }
    if (timerfd_settime(fd, abs ? TFD_TIMER_ABSTIME : 0, &v, NULL))
        die("timerfd_settime");
    return fd;
}

static volatile sig_atomic_t hits;
static volatile int64_t hit_at[8];
static volatile int hit_code[8], hit_value[8];

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    if (hits < 8) {
        hit_at[hits] = mono();
        hit_code[hits] = si->si_code;
        hit_value[hits] = si->si_value.sival_int;
    }
    hits++;
}

static sem_t thread_done;
static volatile int64_t thread_at;

static void on_timer_thread(union sigval v)
{
    (void)v;
    thread_at = mono();
    sem_post(&thread_done);
}

int main(void)
{
    int64_t t0;
    uint64_t n;

    /* a blocking read wakes at the expiry: 2.5 s, one expiration */
    t0 = mono();
    int fd = tfd(CLOCK_MONOTONIC, TFD_CLOEXEC, 2.5, 0, 0);
    if (read(fd, &n, sizeof n) != sizeof n)
        die("read");
    printf("timerfd-read %.3f %llu\n", since(t0), (unsigned long long)n);
    close(fd);

    /* non-blocking: EAGAIN before the expiry; an interval of 1 s read after 3.5 s: 3 expirations */
    t0 = mono();
    fd = tfd(CLOCK_BOOTTIME, TFD_NONBLOCK, 1, 1, 0);
    ssize_t r = read(fd, &n, sizeof n);
    printf("timerfd-nonblock %zd %s\n", r, r < 0 && errno == EAGAIN ? "EAGAIN" : "other");
    struct timespec req = {3, 500000000};
    nanosleep(&req, NULL);
    r = read(fd, &n, sizeof n);
    printf("timerfd-interval %.3f %llu\n", since(t0), r == sizeof n ? (unsigned long long)n : 0ULL);
    /* the time left to the next expiry (at 4 s) and the interval */
    struct itimerspec cur;
    timerfd_gettime(fd, &cur);
    printf("timerfd-gettime %.3f %.3f\n", (double)cur.it_value.tv_sec + cur.it_value.tv_nsec / 1e9,
           (double)cur.it_interval.tv_sec + cur.it_interval.tv_nsec / 1e9);
    close(fd);

    /* poll with a timeout of 10 s wakes at the timer's 3 s */
    t0 = mono();
    fd = tfd(CLOCK_MONOTONIC, 0, 3, 0, 0);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int rc = poll(&p, 1, 10000);
    printf("timerfd-poll %.3f %d\n", since(t0), rc);
    close(fd);

    /* epoll_wait without a timeout on a CLOCK_REALTIME timer at an absolute time 1.5 s ahead */
    t0 = mono();
    fd = tfd(CLOCK_REALTIME, 0, 1.5, 0, 1);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    rc = epoll_wait(ep, &ev, 1, -1);
    printf("timerfd-epoll %.3f %d\n", since(t0), rc);
    close(ep);
    close(fd);

    /* select of a pipe that stays empty and the timer (2 s), timeout 10 s: the timer only */
    t0 = mono();
    int pipefd[2];
    if (pipe(pipefd))
        die("pipe");
    fd = tfd(CLOCK_MONOTONIC, 0, 2, 0, 0);
    fd_set rs;
    FD_ZERO(&rs);
    FD_SET(pipefd[0], &rs);
    FD_SET(fd, &rs);
    struct timeval tv = {10, 0};
    rc = select((fd > pipefd[0] ? fd : pipefd[0]) + 1, &rs, NULL, NULL, &tv);
    printf("timerfd-select %.3f %d %d\n", since(t0), rc, FD_ISSET(fd, &rs) && !FD_ISSET(pipefd[0], &rs));
    close(fd);

    struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);

    /* ITIMER_REAL of 2.5 s ends a sleep of 10 s: EINTR, 7.5 s left, the handler at 2.5 s */
    t0 = mono();
    hits = 0;
    struct itimerval iv = {.it_value = {2, 500000}};
    setitimer(ITIMER_REAL, &iv, NULL);
    req = (struct timespec){10, 0};
    struct timespec rem = {0};
    rc = nanosleep(&req, &rem);
    printf("setitimer-sleep %.3f %d %s %.3f %.3f\n", since(t0), (int)hits, rc < 0 && errno == EINTR ? "EINTR" : "other",
           (double)(hit_at[0] - t0) / 1e9, (double)rem.tv_sec + rem.tv_nsec / 1e9);

    /* alarm(3) and pause(); getitimer before it: 3 s left */
    t0 = mono();
    hits = 0;
    alarm(3);
    getitimer(ITIMER_REAL, &iv);
    double left = (double)iv.it_value.tv_sec + iv.it_value.tv_usec / 1e6;
    rc = pause();
    printf("alarm-pause %.3f %d %s %.3f\n", since(t0), (int)hits, rc < 0 && errno == EINTR ? "EINTR" : "other", left);

    /* a POSIX timer, SIGUSR1 carrying 42 every 1.5 s from 1.5 s: three signals waited for with
     * sigsuspend, SI_TIMER each, at 1.5, 3 and 4.5 s */
    t0 = mono();
    hits = 0;
    struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1, .sigev_value.sival_int = 42};
    timer_t tid;
    if (timer_create(CLOCK_MONOTONIC, &sev, &tid))
        die("timer_create");
    struct itimerspec v = its(1.5, 1.5);
    timer_settime(tid, 0, &v, NULL);
    sigset_t block, none;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, &none);
    while (hits < 3)
        sigsuspend(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    timer_gettime(tid, &cur);
    printf("timer-signal %.3f %.3f %.3f %d %d %.3f\n", (double)(hit_at[0] - t0) / 1e9, (double)(hit_at[1] - t0) / 1e9,
           (double)(hit_at[2] - t0) / 1e9, hit_code[0] == SI_TIMER && hit_code[1] == SI_TIMER && hit_code[2] == SI_TIMER,
           hit_value[0] == 42 && hit_value[2] == 42, (double)cur.it_value.tv_sec + cur.it_value.tv_nsec / 1e9);
    timer_delete(tid);

    /* SIGEV_THREAD at 2 s, waited for with sem_timedwait of 10 s */
    t0 = mono();
    sem_init(&thread_done, 0, 0);
    struct sigevent tev = {.sigev_notify = SIGEV_THREAD, .sigev_notify_function = on_timer_thread};
    if (timer_create(CLOCK_MONOTONIC, &tev, &tid))
        die("timer_create");
    v = its(2, 0);
    timer_settime(tid, 0, &v, NULL);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 10;
    rc = sem_timedwait(&thread_done, &dl);
    printf("timer-thread %d %.3f\n", rc == 0, (double)(thread_at - t0) / 1e9);
    timer_delete(tid);
    return 0;
}
