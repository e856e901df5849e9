/* emutime: the shim's emulated time under `hwemu exec --time emulated` (HWEMU_TIME=emulated;
 * docs/time.md): the engine's clock file mapped at the start, the clocks read from it, and the
 * waits, each thread of the agent taking part in the engine's protocol (seg_clock.h) through a
 * slot of its own. The wrappers are wrap_time.c (clocks, sleeps) and wrap_wait.c (waits with
 * timeouts); without HWEMU_TIME every call goes to libc untouched. */
#ifndef HWEMU_SHIM_EMUTIME_H
#define HWEMU_SHIM_EMUTIME_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The constructor's part: maps <root>/clock when HWEMU_TIME is "emulated" (a process that
 * cannot is told why on stderr and exits 1: it must not run in the wrong time). */
void emutime_init(void);
/* Is time emulated in this process? */
bool emutime_on(void);
/* The real CLOCK_MONOTONIC (libc's, never the wrapper). */
int64_t emutime_real_mono(void);
/* The emulated CLOCK_MONOTONIC now. */
int64_t emutime_mono(void);
/* The emulated time of clock id into *ns: true, or false for a clock that stays real (the CPU
 * clocks, dynamic clocks: the caller asks libc). */
bool emutime_clock(clockid_t id, int64_t *ns);
/* The emulated CLOCK_MONOTONIC of an absolute time on clock id (false: a clock that stays real). */
bool emutime_to_mono(clockid_t id, int64_t t, int64_t *mono);
/* Is the clock stepped by a live engine (--speed max: time moves only while every agent waits)? */
bool emutime_stepped(void);
/* The real CLOCK_MONOTONIC at which emulated time reaches deadline (INT64_MAX when stepped). */
int64_t emutime_real_at(int64_t deadline);
/* The process's timers, for the waits below (emutimer.c gives them at the start): the earliest
 * emulated expiry to wake for (INT64_MAX: none), and the firing of the timers due (true: a
 * signal handler ran in the calling thread; mask: the wait's own signal mask, or NULL). */
typedef int64_t emutime_timers_next(void);
typedef bool emutime_timers_fire(const sigset_t *mask);
void emutime_timers(emutime_timers_next *next, emutime_timers_fire *fire);
/* Sleeps until emulated CLOCK_MONOTONIC reaches deadline: 0, or EINTR (a signal came first). The
 * process's timers due meanwhile fire. */
int emutime_sleep_until(int64_t deadline);
/* A wait on something else with an emulated deadline (INT64_MAX: none). op makes one real wait
 * that ends by the real CLOCK_MONOTONIC abs_real (INT64_MAX: none) and returns true when it is
 * over (ready, an error, a signal: its result in ctx) or false when it only timed out. The
 * process's emulated timers due meanwhile fire (mask: the wait's own signal mask, NULL: the
 * thread's); when one's handler ran in this thread, an interruptible wait (intr) ends. Returns
 * EMUTIME_DONE when op ended it, EMUTIME_TIMEOUT when the emulated deadline came first,
 * EMUTIME_SIGNAL when a timer's handler ended it. */
typedef bool emutime_op(void *ctx, int64_t abs_real);
enum { EMUTIME_TIMEOUT, EMUTIME_DONE, EMUTIME_SIGNAL };
int emutime_wait(int64_t deadline, emutime_op *op, void *ctx, const sigset_t *mask, bool intr);
/* The calling thread (a new one) holds time from here, as after its first wait (its slot). */
void emutime_hold(void);
/* The calling thread leaves the protocol (its exit). */
void emutime_release_thread(void);
/* The process's exit: its slot freed, unless its parent (an agent) frees it when it reaps it. */
void emutime_exit(void);
/* fork: the child's slot claimed by the parent before the child exists (-1: none); in the child,
 * emutime_fork_child takes it over. */
int emutime_fork_prepare(void);
void emutime_fork_child(int child_slot);
/* posix_spawn: rc its result, child the new pid: the child's slot gets the pid (or is freed). */
void emutime_spawned(int child_slot, int rc, pid_t child);
/* The environment an exec (child_slot -1: the caller's own slot) or a spawn (the slot claimed
 * for the child) hands down: env with HWEMU_CLOCK_SLOT and HWEMU_CLOCK_PARENT set; NULL when
 * time is not emulated (use env). Free the array only (its strings are env's or static). */
char **emutime_exec_env(char *const env[], int child_slot);
/* Before kill(pid, sig): a child of this process (or of its group, pid 0 or -pgid) that sig ends
 * holds time from here until its parent reaps it (its slot RUNNING), so time does not move
 * while it dies. */
void emutime_kill(pid_t pid, int sig);
/* A child reaped (a wait returned its pid): the slot claimed for it is freed; reaped between
 * emutime_reap_begin and _end that held (a handler inside a wait), it holds time until the
 * thread is back in its wait. */
void emutime_reaped(pid_t pid);
/* Around a reap that cannot block (WNOHANG) by a thread whose slot says it waits: a signal's
 * handler inside its wait (bash reaps in its SIGCHLD handler). The slot is RUNNING from before
 * the kernel reaps the child (whose slot holds time until then) and BLOCKED again, until the
 * same deadline, after it: begin returns whether it did so, for end. */
bool emutime_reap_begin(void);
void emutime_reap_end(bool held);
/* Around a wait for a child process (waitpid and the like): the thread counts as waiting. */
void emutime_wait_child_begin(void);
void emutime_wait_child_end(void);
/* Timespec helpers. */
static inline int64_t emutime_ns_of(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}
static inline struct timespec emutime_ts_of(int64_t ns)
{
    if (ns < 0)
        ns = 0;
    return (struct timespec){.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
}
/* deadline = now + rel, saturating (rel < 0: no deadline, INT64_MAX) */
int64_t emutime_after(int64_t rel_ns);

#endif
