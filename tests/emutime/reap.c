/* emutime_reap: children reaped under `hwemu exec --time emulated` against an engine at --speed
 * max (tests/cli/test_emutime.sh A): nobody sleeps, so emulated time must never move. Each child
 * runs 30 ms of real time (past the engine's 20 ms before it checks that an out-of-step thread
 * still exists) and exits; the parent reaps it with a blocking waitpid ("waitpid"), or waits in
 * sigsuspend and reaps it with waitpid(WNOHANG) in its SIGCHLD handler, which then runs 2 ms more
 * ("handler", as bash reaps), or reaps it in the handler while it runs and then finds no child to
 * wait for in its own blocking waitpid ("reaped-first", 20 N quick children). Prints "<mode> moved <k> of <n>": how many fork..reap spans saw the
 * emulated CLOCK_MONOTONIC move (expected 0: before the fix, a reap in the handler let the engine
 * run on in nearly every span, the child's slot freed while the parent's said it waits; a waitpid
 * that found no child counted as a wait for an instant, in which the engine could move time).
 * Usage: emutime_reap N */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* the host's clock (a raw system call: the shim answers clock_gettime with the engine's) */
static long long real_ns(void)
{
    struct timespec t;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long emulated_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void spin(long long ns)
{
    long long s = real_ns();
    while (real_ns() - s < ns)
        ;
}

static volatile sig_atomic_t reaped;

static void on_child(int sig)
{
    (void)sig;
    int st;
    if (waitpid(-1, &st, WNOHANG) > 0)
        reaped = 1;
    spin(2000000);
}

/* mode 0: a blocking waitpid; 1: sigsuspend, the handler reaps; 2: the handler reaps while the
 * parent runs, then the parent's blocking waitpid finds no child (ECHILD, as bash's does) */
static void run(const char *mode, int n, int how)
{
    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);
    int moved = 0;
    for (int i = 0; i < n; i++) {
        long long a = emulated_ns();
        reaped = 0;
        pid_t p = fork();
        if (p == 0) {
            spin(how == 2 ? 0 : 30000000);
            _exit(0);
        }
        if (how == 1) {
            while (!reaped)
                sigsuspend(&old);
        } else if (how == 2) {
            int st;
            sigprocmask(SIG_SETMASK, &old, NULL);
            while (!reaped)
                ;
            waitpid(p, &st, 0);
            sigprocmask(SIG_BLOCK, &chld, NULL);
        } else {
            int st;
            sigprocmask(SIG_SETMASK, &old, NULL);
            waitpid(p, &st, 0);
            sigprocmask(SIG_BLOCK, &chld, NULL);
        }
        moved += emulated_ns() != a;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("%s moved %d of %d\n", mode, moved, n);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    run("waitpid", n, 0);
    struct sigaction sa = {.sa_handler = on_child};
    sigaction(SIGCHLD, &sa, NULL);
    run("handler", n, 1);
    run("reaped-first", 20 * n, 2);
    return 0;
}
