/* emutimer: the timers of a process in emulated time (docs/time.md "Timers"): timerfds, POSIX
 * timers (timer_create) and ITIMER_REAL (setitimer, alarm) on the realtime, monotonic and boottime
 * clocks, each with an emulated expiry. Every timer is backed by a real one of its kind (the
 * kernel's checks and errors, its descriptor, its signal delivery): at --speed max (a stepped
 * clock) the real one stays disarmed and the process's waits wake at the earliest expiry and fire
 * it (emutimer_next, emutimer_fire; a SIGEV_THREAD function is started by the shim, in a thread
 * holding time from its start); at --speed N, or once the engine stopped, the real one is
 * armed at the wall time emulated time reaches the expiry ("hosted"), so it fires while the
 * process runs too. The wrappers are wrap_timer.c; wrap_file.c's read and close call the timerfd
 * part. Nothing here runs in a process without HWEMU_TIME=emulated. */
#ifndef HWEMU_SHIM_EMUTIMER_H
#define HWEMU_SHIM_EMUTIMER_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

/* Timers per process (timerfds and POSIX timers together; ITIMER_REAL has its own). */
#define EMUTIMER_MAX 64

/* The constructor's part, after emutime_init: the waits of emutime.c wake for these timers. */
void emutimer_init(void);
/* Can a timer on clock id run in emulated time (realtime, monotonic, boottime, their _ALARM)? */
bool emutimer_clock_ok(clockid_t id);
/* The earliest emulated CLOCK_MONOTONIC expiry the process's waits must wake for (INT64_MAX:
 * none). No lock, no system call. */
int64_t emutimer_next(void);
/* Fires every timer due at the emulated now: a timerfd made readable, a timer's signal sent
 * (to the calling thread when it does not block it, or when mask, the wait's signal mask, does
 * not; else to the process). True when a handler ran in the calling thread (its wait ends with
 * EINTR, as a real one would). */
bool emutimer_fire(const sigset_t *mask);
/* fork, in the child: its POSIX timers and ITIMER_REAL are not inherited (timerfds are). */
void emutimer_fork_child(void);

/* timerfd: fd, made by the real timerfd_create on clock, is emulated from now on. */
void emutimer_fd_add(int fd, clockid_t clock);
/* Is fd an emulated timerfd? False at once (one load) while the process has none. */
bool emutimer_is_fd(int fd);
/* timerfd_settime, timerfd_gettime: 0 or an errno. */
int emutimer_fd_settime(int fd, int flags, const struct itimerspec *v, struct itimerspec *old);
int emutimer_fd_gettime(int fd, struct itimerspec *cur);
/* read of an emulated timerfd: 8 (the expirations since the last read into buf), or -1 with
 * errno (EINVAL: n < 8; EAGAIN: none yet and O_NONBLOCK; EINTR). */
ssize_t emutimer_fd_read(int fd, void *buf, size_t n);
/* fd closed (or replaced by dup2/dup3): no longer a timer. */
void emutimer_fd_closed(int fd);

/* POSIX timers: id, made by the real timer_create on clock with sev (NULL: SIGALRM), is emulated. */
void emutimer_posix_add(timer_t id, clockid_t clock, const struct sigevent *sev);
bool emutimer_is_posix(timer_t id);
/* timer_settime, timer_gettime: 0 or an errno. */
int emutimer_posix_settime(timer_t id, int flags, const struct itimerspec *v, struct itimerspec *old);
int emutimer_posix_gettime(timer_t id, struct itimerspec *cur);
/* timer_getoverrun: the extra expirations at the last signal. */
int emutimer_posix_overrun(timer_t id);
void emutimer_posix_delete(timer_t id);

/* ITIMER_REAL (setitimer, getitimer, alarm): 0 or an errno. */
int emutimer_itimer_set(const struct itimerval *v, struct itimerval *old);
void emutimer_itimer_get(struct itimerval *cur);

#endif
