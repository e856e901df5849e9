/* emutime: the shim's side of the emulated clock; see emutime.h, seg_clock.h and docs/time.md.
 * A process holds a slot for its main thread from its start (its own, or the one its parent
 * handed down through fork, exec or spawn); another thread claims one the first time it waits
 * on time. A thread frees its slot at its exit (a thread-specific key's destructor), the main
 * thread at the process's exit (the shim's destructor), first handing RUNNING back to a parent
 * that waits for it. */
#include "emutime.h"

#include "real.h"
#include "seg_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How long one real slice of a wait on descriptors or locks lasts at --speed max: the most an
 * agent waiting on both takes to notice that time reached its deadline. */
#define SLICE_NS 1000000LL
/* How long a wait on the clock's futex lasts before the engine is checked for being alive. */
#define ALIVE_NS 1000000000LL

static struct seg_clock clk;
static bool on;
static const char *node_name;
static pthread_key_t slot_key;
static __thread int slot = -1;
/* the parent's slot and pid, when the parent is an agent of the clock (its slot waits for us) */
static int parent_slot = -1;
static pid_t parent_pid;
/* the slots this process claimed for its children, freed when it reaps them (a child that exits
 * keeps holding time until then: its parent has not seen it end yet) */
#define CHILDREN 256
static _Atomic pid_t child_pid[CHILDREN];
static int child_slot_of[CHILDREN];

static void child_add(pid_t pid, int i)
{
    for (int k = 0; k < CHILDREN; k++) {
        pid_t free_pid = 0;
        if (atomic_compare_exchange_strong(&child_pid[k], &free_pid, pid)) {
            child_slot_of[k] = i;
            return;
        }
    }
    /* a full table: the engine frees the slot once the child is gone */
}

/* Children reaped by a signal's handler while this thread's slot said it waits (bash reaps in its
 * SIGCHLD handler, which may run inside any wait): their slots hold time until the handler is over
 * and the thread is back in its wait (release_deferred). */
#define DEFERRED 16
static __thread struct {
    int slot;
    pid_t tid;
} deferred[DEFERRED];
static __thread int n_deferred;
/* the deadline of this thread's wait that a reap in a handler interrupted (emutime_reap_begin) */
static __thread int64_t reap_deadline;
static __thread bool reap_held;
/* between emutime_wait_child_begin and _end: a wait for a child, which the kernel may restart
 * unseen after a handler */
static __thread bool in_child_wait;

static void release_child(int i, pid_t pid)
{
    if (atomic_load(&clk.slots[i].pid) == pid) /* still the child's (not taken over by another) */
        seg_clock_release(&clk, i);
}

static void release_deferred(void)
{
    for (; n_deferred > 0; n_deferred--) {
        int i = deferred[n_deferred - 1].slot;
        if (atomic_load(&clk.slots[i].tid) == deferred[n_deferred - 1].tid)
            seg_clock_release(&clk, i);
    }
}

/* Slot i, this thread's, RUNNING again at the end of a wait. */
static void run_self(int i)
{
    if (atomic_load(&clk.slots[i].state) != SEG_SLOT_RUNNING)
        seg_clock_run(&clk, i);
    release_deferred();
}

bool emutime_on(void)
{
    return on;
}

int64_t emutime_real_mono(void)
{
    struct timespec ts;
    REAL(clock_gettime)(CLOCK_MONOTONIC, &ts);
    return emutime_ns_of(&ts);
}

int64_t emutime_mono(void)
{
    return seg_clock_now(&clk, emutime_real_mono()); /* wall time from its death on, once found dead */
}

int64_t emutime_after(int64_t rel_ns)
{
    if (rel_ns < 0)
        return INT64_MAX;
    int64_t now = emutime_mono();
    return rel_ns > INT64_MAX - now ? INT64_MAX : now + rel_ns;
}

bool emutime_clock(clockid_t id, int64_t *ns)
{
    int64_t off;
    if (!seg_clock_offset(&clk, id, &off))
        return false; /* the CPU-time clocks, CLOCK_TAI, dynamic clocks: the host's */
    *ns = emutime_mono() + off;
    return true;
}

bool emutime_to_mono(clockid_t id, int64_t t, int64_t *mono)
{
    int64_t now_id, now = emutime_mono();
    if (!emutime_clock(id, &now_id))
        return false;
    *mono = t - (now_id - now);
    return true;
}

static void release_slot(void *value)
{
    (void)value;
    emutime_release_thread();
}

void emutime_release_thread(void)
{
    if (on && slot >= 0) {
        seg_clock_release(&clk, slot);
        slot = -1;
        pthread_setspecific(slot_key, NULL);
    }
}

/* "index:token" of HWEMU_CLOCK_SLOT / "index:pid" of HWEMU_CLOCK_PARENT */
static bool stepped(void);
static bool stepped_now(void)
{
    return stepped();
}

static bool two_numbers(const char *v, long *a, unsigned long *b)
{
    char *end;
    if (!v)
        return false;
    *a = strtol(v, &end, 10);
    if (*end != ':')
        return false;
    *b = strtoul(end + 1, &end, 10);
    return !*end;
}

static void say_and_exit(const char *what)
{
    char msg[1400];
    int n = snprintf(msg, sizeof msg, "hwemu-shim: --time emulated: %s\n", what);
    if (n > 0 && REAL(write)(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1) < 0)
        _exit(1);
    _exit(1);
}

void emutime_init(void)
{
    const char *mode = getenv("HWEMU_TIME");
    if (!mode || strcmp(mode, "emulated"))
        return;
    const char *root = getenv("HWEMU_ROOT");
    char path[PATH_MAX], err[1100];
    if (seg_clock_path(root && *root ? root : "/dev/shm/hwemu", path, sizeof path))
        say_and_exit("HWEMU_ROOT is too long");
    if (seg_clock_open(&clk, path, err, sizeof err))
        say_and_exit(err);
    node_name = getenv("HWEMU_NODE");
    pthread_key_create(&slot_key, release_slot);
    on = true;
    /* the slot a parent handed down (exec, spawn), else one of our own: held from here on */
    extern char *program_invocation_short_name;
    long i;
    unsigned long v;
    if (two_numbers(getenv("HWEMU_CLOCK_SLOT"), &i, &v) &&
        seg_clock_adopt(&clk, (int)i, (uint32_t)v, getpid(), gettid(), program_invocation_short_name))
        slot = (int)i;
    if (two_numbers(getenv("HWEMU_CLOCK_PARENT"), &i, &v) && (pid_t)v == getppid())
        parent_slot = (int)i, parent_pid = (pid_t)v;
    unsetenv("HWEMU_CLOCK_SLOT");
    unsetenv("HWEMU_CLOCK_PARENT");
    if (slot < 0 && atomic_load(&clk.h->state) == SEG_CLOCK_STEPPED) {
        slot = seg_clock_claim(&clk, getpid(), gettid(), node_name, program_invocation_short_name);
        if (slot >= 0) /* a time being moved to is the one we start at (seg_clock.h "Joining") */
            seg_clock_join(&clk, ALIVE_NS);
    }
    if (slot >= 0)
        pthread_setspecific(slot_key, (void *)1);
}

int emutime_fork_prepare(void)
{
    if (!on || slot < 0) /* a thread outside the protocol starts children outside it */
        return -1;
    extern char *program_invocation_short_name;
    return seg_clock_claim(&clk, getpid(), gettid(), node_name, program_invocation_short_name);
}

void emutime_fork_child(int child_slot)
{
    if (!on)
        return;
    parent_slot = slot;
    parent_pid = getppid();
    slot = child_slot;
    n_deferred = 0;
    reap_held = in_child_wait = false;
    for (int k = 0; k < CHILDREN; k++) /* the parent's children are not ours */
        atomic_store(&child_pid[k], 0);
    if (slot >= 0) {
        atomic_store(&clk.slots[slot].pid, getpid());
        atomic_store(&clk.slots[slot].tid, gettid());
    }
}

void emutime_spawned(int child_slot, int rc, pid_t child)
{
    if (child_slot < 0)
        return;
    if (rc) {
        seg_clock_release(&clk, child_slot);
        return;
    }
    atomic_store(&clk.slots[child_slot].pid, child);
    atomic_store(&clk.slots[child_slot].tid, child);
    child_add(child, child_slot);
}

void emutime_reaped(pid_t pid)
{
    if (!on || pid <= 0)
        return;
    for (int k = 0; k < CHILDREN; k++)
        if (atomic_load(&child_pid[k]) == pid) {
            int i = child_slot_of[k];
            atomic_store(&child_pid[k], 0);
            /* A thread whose slot is BLOCKED reaps from a handler that interrupted its wait: freed
             * now, the child's slot would let time move while the handler runs. It holds time
             * instead, made this thread's (the engine frees the slot of a thread that no longer
             * exists), until the thread is back in its wait; in a wait for a child, which the
             * kernel may restart unseen, it stays the child's, its seq moved: the engine frees it
             * after its grace (20 ms), by when the handler is over. */
            if (slot >= 0 && reap_held && n_deferred < DEFERRED && atomic_load(&clk.slots[i].pid) == pid) {
                pid_t holder = in_child_wait ? pid : gettid();
                if (!in_child_wait) {
                    atomic_store(&clk.slots[i].pid, getpid());
                    atomic_store(&clk.slots[i].tid, holder);
                }
                seg_clock_run(&clk, i);
                deferred[n_deferred].slot = i;
                deferred[n_deferred++].tid = holder;
                return;
            }
            release_child(i, pid);
            return;
        }
}

bool emutime_reap_begin(void)
{
    if (!on || slot < 0 || atomic_load(&clk.slots[slot].state) != SEG_SLOT_BLOCKED)
        return false;
    reap_deadline = atomic_load(&clk.slots[slot].deadline_ns);
    reap_held = true;
    seg_clock_run(&clk, slot);
    return true;
}

void emutime_reap_end(bool held)
{
    if (!held)
        return;
    reap_held = false;
    seg_clock_block(&clk, slot, reap_deadline);
}

/* Does sig end process pid now (neither blocked, ignored nor caught there, and its default action
 * ends a process)? Read from the kernel's /proc/<pid>/status (the real file, not the shim's). */
static bool ends_process(pid_t pid, int sig)
{
    if (sig == SIGKILL)
        return true;
    switch (sig) { /* default actions that do not end a process */
    case SIGCHLD:
    case SIGCONT:
    case SIGURG:
    case SIGWINCH:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
        return false;
    }
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = REAL(open)(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = REAL(read)(fd, buf, sizeof buf - 1);
    REAL(close)(fd);
    if (n <= 0)
        return false;
    buf[n] = 0;
    static const char *const fields[] = {"\nSigBlk:", "\nSigIgn:", "\nSigCgt:"};
    for (size_t k = 0; k < sizeof fields / sizeof *fields; k++) {
        const char *f = strstr(buf, fields[k]);
        if (!f || (strtoull(f + strlen(fields[k]), NULL, 16) >> (sig - 1)) & 1)
            return false;
    }
    return true;
}

void emutime_kill(pid_t pid, int sig)
{
    if (!on || sig <= 0 || sig >= 65 || pid == -1 || !stepped())
        return;
    pid_t group = pid == 0 ? getpgrp() : pid < 0 ? -pid : 0;
    for (int k = 0; k < CHILDREN; k++) {
        pid_t c = atomic_load(&child_pid[k]);
        if (!c || (group ? getpgid(c) != group : c != pid) || !ends_process(c, sig))
            continue;
        int i = child_slot_of[k];
        if (atomic_load(&clk.slots[i].pid) == c) /* it holds time until its parent reaps it */
            seg_clock_run(&clk, i);
    }
}

char **emutime_exec_env(char *const env[], int child_slot)
{
    int i = child_slot >= 0 ? child_slot : slot;
    if (!on || i < 0)
        return NULL;
    size_t n = 0;
    while (env && env[n])
        n++;
    char **out = malloc((n + 3) * sizeof *out);
    static __thread char slot_var[64], parent_var[64];
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t j = 0; j < n; j++)
        if (strncmp(env[j], "HWEMU_CLOCK_SLOT=", 17) && strncmp(env[j], "HWEMU_CLOCK_PARENT=", 19))
            out[k++] = env[j];
    snprintf(slot_var, sizeof slot_var, "HWEMU_CLOCK_SLOT=%d:%u", i, atomic_load(&clk.slots[i].token));
    out[k++] = slot_var;
    int pslot = child_slot >= 0 ? slot : parent_slot;
    pid_t ppid = child_slot >= 0 ? getpid() : parent_pid;
    if (pslot >= 0) {
        snprintf(parent_var, sizeof parent_var, "HWEMU_CLOCK_PARENT=%d:%d", pslot, (int)ppid);
        out[k++] = parent_var;
    }
    out[k] = NULL;
    return out;
}

void emutime_exit(void)
{
    if (!on)
        return;
    /* a child of an agent keeps its slot until its parent reaps it (emutime_reaped) */
    if (parent_slot >= 0 && getppid() == parent_pid && slot >= 0 && pthread_getspecific(slot_key))
        return;
    emutime_release_thread();
}

void emutime_wait_child_begin(void)
{
    in_child_wait = true;
    if (on && slot >= 0 && stepped_now())
        seg_clock_block(&clk, slot, SEG_CLOCK_WAIT_CHILD);
}

void emutime_wait_child_end(void)
{
    in_child_wait = false;
    if (on && slot >= 0)
        run_self(slot);
}

/* The calling thread's slot, claimed on its first wait: -1 when every slot is taken (the thread
 * then waits in the clock's time without the engine knowing: said once). */
static int my_slot(void)
{
    if (slot >= 0)
        return slot;
    extern char *program_invocation_short_name;
    slot = seg_clock_claim(&clk, getpid(), gettid(), node_name, program_invocation_short_name);
    if (slot >= 0) {
        pthread_setspecific(slot_key, (void *)1);
    } else {
        static _Atomic bool said;
        if (!atomic_exchange(&said, true)) {
            static const char msg[] = "hwemu-shim: --time emulated: every slot of the engine's clock is taken; "
                                      "this thread's waits do not hold the engine's time\n";
            if (REAL(write)(2, msg, sizeof msg - 1) < 0)
                return -1;
        }
    }
    return slot;
}

void emutime_hold(void)
{
    if (on && stepped())
        my_slot();
}

/* Is the clock stepped by a live engine (the protocol applies)? */
static bool stepped(void)
{
    return !seg_clock_dead(&clk) && atomic_load_explicit(&clk.h->state, memory_order_acquire) == SEG_CLOCK_STEPPED;
}

bool emutime_stepped(void)
{
    return stepped();
}

int64_t emutime_real_at(int64_t deadline)
{
    return seg_clock_real_at(&clk, deadline);
}

/* The process's timers, given by emutimer.c (emutime_timers): none until then. */
static int64_t no_timer(void)
{
    return INT64_MAX;
}
static bool no_fire(const sigset_t *mask)
{
    (void)mask;
    return false;
}
static emutime_timers_next *timers_next = no_timer;
static emutime_timers_fire *timers_fire = no_fire;

void emutime_timers(emutime_timers_next *next, emutime_timers_fire *fire)
{
    timers_next = next;
    timers_fire = fire;
}

/* Both waits below wake at the earlier of their deadline and the process's next timer (the
 * thread's slot blocked until then): at a timer's expiry the thread fires it while its slot,
 * due, holds time, and waits again unless a handler ran in it. */
int emutime_sleep_until(int64_t deadline)
{
    for (;;) {
        int64_t tn = timers_next(), now = emutime_mono();
        if (now >= tn) {
            if (timers_fire(NULL))
                return EINTR;
            continue;
        }
        if (now >= deadline)
            return 0;
        int64_t eff = deadline < tn ? deadline : tn;
        if (!stepped()) {
            int64_t r = seg_clock_real_at(&clk, eff);
            struct timespec ts = emutime_ts_of(r == INT64_MAX ? emutime_real_mono() + ALIVE_NS : r);
            int rc = REAL(clock_nanosleep)(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
            if (rc == EINTR)
                return EINTR;
            continue; /* the pair may have moved: look again */
        }
        int i = my_slot();
        if (i < 0) { /* no slot: wait for time to come without holding it */
            uint32_t seen = atomic_load(&clk.h->now_futex);
            if (emutime_mono() < eff && seg_clock_wait_now(&clk, seen, ALIVE_NS) == EINTR)
                return EINTR;
            seg_clock_check_dead(&clk);
            continue;
        }
        seg_clock_block(&clk, i, eff);
        int rc = 0;
        for (;;) {
            release_deferred(); /* back in the wait after a handler's reap */
            uint32_t seen = seg_clock_wake_seen(&clk, i); /* before the time: a wake after it is seen */
            if (emutime_mono() >= eff || !stepped())
                break;
            int e = seg_clock_wait_slot(&clk, i, seen, ALIVE_NS);
            if (e == EINTR) {
                rc = EINTR;
                break;
            }
            if (e == ETIMEDOUT && seg_clock_check_dead(&clk))
                break;
        }
        run_self(i);
        if (rc)
            return rc;
        if (emutime_mono() >= eff)
            atomic_fetch_add_explicit(&clk.h->wakeups, 1, memory_order_relaxed);
    }
}

int emutime_wait(int64_t deadline, emutime_op *op, void *ctx, const sigset_t *mask, bool intr)
{
    for (;;) {
        int64_t tn = timers_next(), now = emutime_mono();
        if (now >= tn) {
            if (timers_fire(mask) && intr)
                return EMUTIME_SIGNAL;
            /* a timerfd it made readable, a signal left pending for the wait's mask: seen before
             * the thread waits again (a slice, not a look: epoll_pwait without a timeout does
             * not look at pending signals) */
            if (op(ctx, emutime_real_mono() + SLICE_NS))
                return EMUTIME_DONE;
            continue;
        }
        if (deadline != INT64_MAX && now >= deadline)
            return EMUTIME_TIMEOUT;
        int64_t eff = deadline < tn ? deadline : tn;
        if (!stepped() || eff == INT64_MAX) {
            /* wall or scaled time, or no deadline: one real wait to the deadline's real time,
             * the thread counted as waiting (past any deadline) meanwhile */
            int i = stepped() ? slot : -1;
            if (i >= 0)
                seg_clock_block(&clk, i, INT64_MAX);
            int64_t r = eff == INT64_MAX ? INT64_MAX : seg_clock_real_at(&clk, eff);
            if (r == INT64_MAX && eff != INT64_MAX) /* stepped since: look again */
                r = emutime_real_mono() + SLICE_NS;
            bool done = op(ctx, r);
            if (i >= 0)
                run_self(i);
            if (done)
                return EMUTIME_DONE;
            continue; /* timed out in real time: the emulated deadline decides */
        }
        /* ready at once (data waiting, a free lock): over without ever counting as waiting, so
         * time cannot move between the call and its answer */
        if (op(ctx, emutime_real_mono()))
            return EMUTIME_DONE;
        int i = my_slot();
        if (i >= 0)
            seg_clock_block(&clk, i, eff);
        bool done = false;
        int64_t checked = emutime_real_mono();
        while (stepped() && emutime_mono() < eff) {
            release_deferred(); /* back in the wait after a handler's reap */
            int64_t r = emutime_real_mono();
            if ((done = op(ctx, r + SLICE_NS)))
                break;
            if (r - checked > ALIVE_NS) {
                checked = r;
                seg_clock_check_dead(&clk);
            }
        }
        if (i >= 0)
            run_self(i);
        if (done)
            return EMUTIME_DONE;
        if (emutime_mono() >= eff)
            atomic_fetch_add_explicit(&clk.h->wakeups, 1, memory_order_relaxed);
    }
}
