/* sv_time: emulated time on the seccomp route (`hwemu exec --time emulated` of a statically
 * linked Go program; docs/time.md "Go agents"). The supervisor maps the root's clock
 * (seg_clock.h) and plays the preload shim's part for the threads of the processes it put in
 * emulated time (static Go programs; every other supervised process is left alone):
 *
 *   - the vDSO is hidden: at a process's first arch_prctl(ARCH_SET_FS) (Go's rt0_go calls
 *     runtime.settls before runtime.args reads the auxiliary vector) the AT_SYSINFO_EHDR entry
 *     of the auxiliary vector on its stack becomes AT_IGNORE, so the runtime finds no vDSO and
 *     reads its clocks with the clock_gettime system call; the process's main thread claims a
 *     slot there (it holds time from its start), and its descriptor table is sized for the window
 *     of emulated files while it has one thread (size_fd_table);
 *   - clock_gettime, gettimeofday and time of the emulated clocks are answered from the clock;
 *   - nanosleep and clock_nanosleep are held (the notification answered when emulated time
 *     reaches the deadline); epoll_wait, epoll_pwait and epoll_pwait2 with a timeout other than
 *     0 are held too, and answered with the events of the target's epoll instance (taken from a
 *     pidfd_getfd copy of it) when it has some, or 0 at the deadline;
 *   - a timed FUTEX_WAIT runs in the kernel with its timeout cut to one real slice (the thread's
 *     slot BLOCKED until the emulated deadline; Go's notetsleep loops on nanotime); an untimed
 *     one runs in the kernel, the slot BLOCKED with no deadline; a FUTEX_WAKE first marks
 *     RUNNING the threads whose last FUTEX_WAIT was on its word;
 *   - a clone(CLONE_THREAD) claims a slot (RUNNING) that the new thread adopts at its first
 *     notification; every notification of a thread with a slot marks it RUNNING.
 * The loop (supervisor.c) polls sv_time_fds() with sv_time_timeout() and calls sv_time_due(),
 * which answers the held calls that are due. A thread watching the clock's now_futex makes an
 * eventfd readable when emulated time reaches a held deadline, or the clock's state changes.
 * What it must never do: block the loop, leave a held notification unanswered once its deadline
 * came, let a thread run while its slot says it waits, or write into a target whose call is no
 * longer pending. */
#include "sv.h"

#include "seg_clock.h"
#include "supervisor.h"

#include <asm/prctl.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NO_DEADLINE INT64_MAX
#define SLICE_NS 1000000LL        /* a timed futex wait's real slice at --speed max (docs/time.md) */
#define WATCH_NS 100000000LL      /* the watcher's longest futex wait (it checks the engine's life) */
#define STACK_SCAN (512 * 1024)   /* how much of the top of a stack is searched for the auxv */
#define HELD_MAX 256
#define TIDS 4096
#define EVENTS_MAX 128

static struct seg_clock clk;
static bool on;
static const char *node_name = "";
static int efd = -1;                      /* readable when emulated time moved (the watcher) */
static _Atomic int64_t watch_deadline = NO_DEADLINE; /* the earliest held deadline */

/* The slot of each thread that waited or started here, by tid (open addressing). An entry whose
 * slot the engine freed or gave to another thread (the thread is gone) is free. */
static struct {
    pid_t tid, tgid;
    int slot;
    uint64_t wait_addr;   /* the futex word of its last FUTEX_WAIT (a FUTEX_WAKE on it wakes it) */
} tids[TIDS];
static unsigned tids_hi;  /* 1 + the highest entry used (the wakes' scan) */

/* Slots claimed at a clone(CLONE_THREAD) for the thread it makes, RUNNING until that thread's
 * first notification adopts it: time does not move while a new thread runs unseen. */
#define PENDING_MAX 64
static struct {
    pid_t tgid;
    int slot;
} pending[PENDING_MAX];
static int n_pending;

/* The processes in emulated time: those whose vDSO was hidden (a static program's first
 * arch_prctl). Other supervised processes (dynamically linked ones, under their own preload
 * shim) are left alone. */
#define OWNED_MAX 256
static pid_t owned[OWNED_MAX];
static int n_owned;

static bool is_owned(pid_t tgid)
{
    for (int k = 0; k < n_owned; k++)
        if (owned[k] == tgid)
            return true;
    return false;
}

static void own(pid_t tgid)
{
    if (is_owned(tgid))
        return;
    for (int k = 0; k < n_owned;) { /* forget the processes that are gone */
        char p[32];
        snprintf(p, sizeof p, "/proc/%d", (int)owned[k]);
        if (access(p, F_OK))
            owned[k] = owned[--n_owned];
        else
            k++;
    }
    if (n_owned < OWNED_MAX)
        owned[n_owned++] = tgid;
    else
        sv_say_once(26, "more than %d processes in emulated time: process %d lives in the host's time",
                    OWNED_MAX, (int)tgid);
}

/* The held notifications. */
static struct held {
    uint64_t id;
    pid_t tid;
    int nr;
    int slot;
    int64_t deadline;
    int epfd;             /* our copy of the target's epoll instance, or -1 (a sleep) */
    uint64_t events;      /* the target's events buffer */
    int maxevents;
} held[HELD_MAX];
static int n_held;

bool sv_time_on(void)
{
    return on;
}

static int64_t now_mono(void)
{
    return seg_clock_now(&clk, seg_clock_real_ns()); /* wall time from its death on, once found dead */
}

/* The emulated value of clock id, or false for the clocks that stay the host's. */
static bool clock_of(clockid_t id, int64_t *ns)
{
    int64_t off;
    if (!seg_clock_offset(&clk, id, &off))
        return false;
    *ns = now_mono() + off;
    return true;
}

/* --- the watcher: wakes the loop when emulated time moves ------------------------------------ */

static void *watch(void *arg)
{
    (void)arg;
    uint32_t state = 0;
    for (;;) {
        uint32_t seen = atomic_load_explicit(&clk.h->now_futex, memory_order_acquire);
        uint32_t st = atomic_load_explicit(&clk.h->state, memory_order_acquire) | (seg_clock_dead(&clk) ? 8u : 0u);
        /* due, or a new state (the loop computes its real timeouts again) */
        if (now_mono() >= atomic_load(&watch_deadline) || st != state) {
            state = st;
            uint64_t one = 1;
            if (write(efd, &one, sizeof one) < 0 && errno != EAGAIN)
                sv_say_once(20, "the clock watcher cannot wake the loop: %s", strerror(errno));
        }
        seg_clock_check_dead(&clk); /* a killed engine: time goes on in wall time */
        seg_clock_wait_now(&clk, seen, WATCH_NS);
    }
    return NULL;
}

int sv_time_init(void)
{
    const char *t = getenv("HWEMU_TIME");
    if (!t || strcmp(t, "emulated"))
        return 0;
    const char *root = getenv("HWEMU_ROOT"), *node = getenv("HWEMU_NODE");
    if (node)
        node_name = node;
    char path[PATH_MAX], err[512];
    if (!root || seg_clock_path(root, path, sizeof path)) {
        fprintf(stderr, "hwemu exec: --time emulated: HWEMU_ROOT is not set or too long\n");
        return EINVAL;
    }
    int e = seg_clock_open(&clk, path, err, sizeof err);
    if (e) {
        fprintf(stderr, "hwemu exec: --time emulated: %s\n", err);
        return e;
    }
    efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (efd < 0)
        return errno;
    on = true;
    emu_set_clock(now_mono); /* the node's counters are read at the emulated now */
    return 0;
}

int sv_time_start(void)
{
    if (!on)
        return 0;
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&th, &at, watch, NULL);
    pthread_attr_destroy(&at);
    return e;
}

/* --- slots -------------------------------------------------------------------------------------- */

static bool slot_is(int i, pid_t tid)
{
    return atomic_load_explicit(&clk.slots[i].tid, memory_order_relaxed) == tid &&
           atomic_load_explicit(&clk.slots[i].state, memory_order_acquire) != SEG_SLOT_FREE;
}

static void comm_of(pid_t tid, char *comm, size_t cap)
{
    char p[64];
    comm[0] = 0;
    snprintf(p, sizeof p, "/proc/%d/comm", (int)tid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, comm, cap - 1);
        comm[n > 0 ? n : 0] = 0;
        comm[strcspn(comm, "\n")] = 0;
        close(fd);
    }
}

/* The entry of tid (-1), or where it would go (free_at; TIDS when the table is full). */
static int entry_of(pid_t tid, unsigned *free_at)
{
    unsigned h = (unsigned)tid % TIDS;
    *free_at = TIDS;
    for (unsigned k = 0; k < TIDS; k++) {
        unsigned j = (h + k) % TIDS;
        if (tids[j].tid == tid && tids[j].slot >= 0 && slot_is(tids[j].slot, tid))
            return (int)j;
        bool empty = tids[j].tid == 0 || tids[j].slot < 0 || !slot_is(tids[j].slot, tids[j].tid);
        if (empty && *free_at == TIDS)
            *free_at = j;
        if (tids[j].tid == 0)
            break;
    }
    return -1;
}

static void enter(unsigned j, pid_t tid, pid_t tgid, int slot)
{
    tids[j].tid = tid;
    tids[j].tgid = tgid;
    tids[j].slot = slot;
    tids[j].wait_addr = 0;
    if (j + 1 > tids_hi)
        tids_hi = j + 1;
}

/* A slot for tgid's thread tid (RUNNING): its index, or -1 when every slot is taken. */
static int claim(pid_t tgid, pid_t tid)
{
    char comm[32];
    comm_of(tid, comm, sizeof comm);
    int i = seg_clock_claim(&clk, tgid, tid, node_name, comm);
    if (i < 0)
        sv_say_once(21, "every slot of the clock is taken: thread %d runs without one (time may move while it "
                    "runs)", (int)tid);
    return i;
}

enum { LOOK, ADOPT, CLAIM };
/* The slot of tid (LOOK); else with ADOPT one a clone of its process left pending, with CLAIM that
 * or a new one when its process is in emulated time; -1 when none. */
static int slot_of(pid_t tid, int how)
{
    unsigned free_at;
    int j = entry_of(tid, &free_at);
    if (j >= 0)
        return tids[j].slot;
    if (how == LOOK || free_at == TIDS)
        return -1;
    pid_t tgid = tid;
    sv_ids(tid, &tgid, NULL, NULL);
    if (!is_owned(tgid))
        return -1;
    int i = -1;
    for (int k = 0; k < n_pending && i < 0; k++)
        if (pending[k].tgid == tgid && tgid != tid) {
            char comm[32];
            comm_of(tid, comm, sizeof comm);
            i = pending[k].slot;
            pending[k] = pending[--n_pending];
            if (!seg_clock_adopt(&clk, i, atomic_load(&clk.slots[i].token), tgid, tid, comm))
                i = -1; /* the engine freed it (its creator is gone) */
        }
    if (i < 0 && how == CLAIM)
        i = claim(tgid, tid);
    if (i >= 0)
        enter(free_at, tid, tgid, i);
    return i;
}

void sv_time_running(pid_t tid)
{
    /* a thread of a process with pending slots may be new: it adopts one */
    int i = slot_of(tid, n_pending > 0 ? ADOPT : LOOK);
    if (i >= 0 && atomic_load_explicit(&clk.slots[i].state, memory_order_acquire) == SEG_SLOT_BLOCKED)
        seg_clock_run(&clk, i);
}

/* A thread of tgid made a new thread (clone with CLONE_THREAD): a slot RUNNING for it. */
static int64_t a_clone(const struct sv_call *c)
{
    unsigned free_at;
    int j = entry_of(c->tid, &free_at);
    pid_t tgid = j >= 0 ? tids[j].tgid : c->tid;
    if (j < 0)
        sv_ids(c->tid, &tgid, NULL, NULL);
    if (!is_owned(tgid))
        return SV_CONTINUE;
    if (n_pending == PENDING_MAX) {
        sv_say_once(25, "more than %d threads made at once: a new thread of %d runs unseen until its first wait",
                    PENDING_MAX, (int)tgid);
        return SV_CONTINUE;
    }
    int i = claim(tgid, c->tid);
    if (i >= 0)
        pending[n_pending++] = (typeof(pending[0])){tgid, i};
    return SV_CONTINUE;
}

/* A FUTEX_WAKE on addr by a thread of tgid: the threads of tgid whose last FUTEX_WAIT was on addr
 * are RUNNING before the wake reaches them (a woken thread runs before its next notification). */
static void wake_waiters(pid_t tgid, uint64_t addr)
{
    for (unsigned j = 0; j < tids_hi; j++)
        if (tids[j].wait_addr == addr && tids[j].tgid == tgid && tids[j].slot >= 0 &&
            slot_is(tids[j].slot, tids[j].tid)) {
            tids[j].wait_addr = 0;
            if (atomic_load_explicit(&clk.slots[tids[j].slot].state, memory_order_acquire) == SEG_SLOT_BLOCKED)
                seg_clock_run(&clk, tids[j].slot);
        }
}

/* --- the vDSO ------------------------------------------------------------------------------------ */

/* Hides the vDSO from the process of tid: the AT_SYSINFO_EHDR entry of the auxiliary vector on
 * its stack becomes AT_IGNORE. 1 when done (or already done), 0 when it failed, -1 for a
 * dynamically linked program (AT_BASE, the loader's address, is set: the loader has read the
 * vector already, and the preload shim is the route to its time). */
static int hide_vdso(pid_t tid)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/auxv", (int)tid);
    Elf64_auxv_t aux[64];
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, aux, sizeof aux) : -1;
    if (fd >= 0)
        close(fd);
    if (n < (ssize_t)sizeof aux[0])
        return 0;
    size_t na = (size_t)n / sizeof aux[0], vd = na;
    for (size_t k = 0; k < na; k++) {
        if (aux[k].a_type == AT_SYSINFO_EHDR)
            vd = k;
        if (aux[k].a_type == AT_BASE && aux[k].a_un.a_val)
            return -1;
    }
    if (vd == na)
        return 1; /* no vDSO */
    snprintf(p, sizeof p, "/proc/%d/maps", (int)tid);
    FILE *m = fopen(p, "re");
    unsigned long lo = 0, hi = 0;
    char line[512];
    while (m && fgets(line, sizeof line, m))
        if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
            break;
    if (m)
        fclose(m);
    if (hi <= lo)
        return 0;
    size_t len = hi - lo > STACK_SCAN ? STACK_SCAN : hi - lo;
    char *buf = malloc(len);
    if (!buf)
        return 0;
    int done = 0;
    ssize_t got = sv_peek(tid, hi - len, buf, len);
    if (got == (ssize_t)len) {
        /* the vector as the kernel saved it, up to AT_NULL, is on the stack word for word */
        char *at = memmem(buf, len, aux, (size_t)n);
        if (at && ((uintptr_t)(at - buf) & 7) == 0) {
            uint64_t ignore = AT_IGNORE;
            struct iovec r = {(void *)(uintptr_t)(hi - len + (uint64_t)(at - buf) + vd * sizeof aux[0]),
                              sizeof ignore};
            done = sv_pokev(tid, &r, 1, &ignore, sizeof ignore) == sizeof ignore;
        } else {
            aux[vd].a_type = AT_IGNORE; /* already hidden? */
            done = memmem(buf, len, aux, (size_t)n) != NULL;
        }
    }
    free(buf);
    return done;
}

/* Sizes the descriptor table of c's process for the window of emulated files (sv.h) now, while
 * it has one thread: /dev/null installed at the window's last number, close-on-exec. Else the
 * first emulated open grows it once the Go runtime has started its threads, and growing a table
 * that threads share waits for an RCU grace period (the kernel's expand_fdtable), measured at 5
 * to 316 ms under load, which at --speed N the agent sees as N times that in emulated time
 * (docs/time.md "Go agents"). Best effort: a lower RLIMIT_NOFILE leaves the table as it is. */
static void size_fd_table(const struct sv_call *c)
{
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct seccomp_notif_addfd a = {.id = c->id, .flags = SECCOMP_ADDFD_FLAG_SETFD, .srcfd = (uint32_t)fd,
                                    .newfd = SV_FD_HI - 1, .newfd_flags = O_CLOEXEC};
    if (ioctl(c->sv->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0 && errno != EBADF && errno != EMFILE &&
        errno != ENOENT)
        sv_say_once(27, "cannot size the descriptor table of process %d: %s (its first emulated open may be slow)",
                    (int)c->tid, strerror(errno));
    close(fd);
}

static int64_t a_settls(const struct sv_call *c)
{
    if (c->a[0] != ARCH_SET_FS)
        return SV_CONTINUE;
    pid_t tgid = c->tid;
    sv_ids(c->tid, &tgid, NULL, NULL);
    if (tgid != c->tid)
        return SV_CONTINUE; /* not a process's first thread: its runtime has read the vector */
    /* a static program that is not Go (static glibc) read the vector before any call of ours:
     * its clocks stay the vDSO's, so none of its time is emulated, and its vector is left as it
     * is (docs/time.md "Go agents") */
    char exe[64], why[PATH_MAX + 100];
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)c->tid);
    if (!sv_time_fits(exe, why, sizeof why))
        return SV_CONTINUE;
    int h = hide_vdso(c->tid);
    if (h < 0)
        return SV_CONTINUE;
    own(c->tid);
    size_fd_table(c);
    if (!h)
        sv_say_once(22, "cannot hide the vDSO of process %d (its auxiliary vector was not found on its stack): "
                    "it reads the host's clocks", (int)c->tid);
    unsigned free_at;
    if (entry_of(c->tid, &free_at) < 0 && free_at < TIDS) {
        int i = claim(c->tid, c->tid);
        if (i >= 0) {
            enter(free_at, c->tid, c->tid, i);
            seg_clock_join(&clk, 1000000000LL); /* it starts at the time the engine is moving to */
        }
    }
    return SV_CONTINUE;
}

/* --- the clocks ---------------------------------------------------------------------------------- */

/* Writes n bytes into the target at addr when its call is still pending: 0, -EFAULT, SV_DONE. */
static int64_t put(const struct sv_call *c, uint64_t addr, const void *p, size_t n)
{
    struct iovec r = {(void *)(uintptr_t)addr, n};
    if (!sv_valid(c))
        return SV_DONE;
    return sv_pokev(c->tid, &r, 1, p, n) == (ssize_t)n ? 0 : -EFAULT;
}

static int64_t a_clock_gettime(const struct sv_call *c)
{
    int64_t ns;
    if (!clock_of((clockid_t)c->a[0], &ns))
        return SV_CONTINUE;
    struct timespec ts = {ns / 1000000000, ns % 1000000000};
    return put(c, c->a[1], &ts, sizeof ts);
}

static int64_t a_gettimeofday(const struct sv_call *c)
{
    int64_t ns = 0;
    clock_of(CLOCK_REALTIME, &ns); /* always emulated */
    struct timeval tv = {ns / 1000000000, ns % 1000000000 / 1000};
    struct timezone tz;
    struct timeval host;
    gettimeofday(&host, &tz); /* the time zone is the host's */
    int64_t r = c->a[0] ? put(c, c->a[0], &tv, sizeof tv) : 0;
    if (!r && c->a[1])
        r = put(c, c->a[1], &tz, sizeof tz);
    return r;
}

static int64_t a_time(const struct sv_call *c)
{
    int64_t ns = 0;
    clock_of(CLOCK_REALTIME, &ns); /* always emulated */
    int64_t s = ns / 1000000000, r = c->a[0] ? put(c, c->a[0], &s, sizeof s) : 0;
    return r ? r : s;
}

/* --- waits --------------------------------------------------------------------------------------- */

static void set_watch(void)
{
    int64_t m = NO_DEADLINE;
    for (int k = 0; k < n_held; k++)
        if (held[k].deadline < m)
            m = held[k].deadline;
    /* The watcher loads now_futex before it compares: the engine's publication of a time that
     * reaches a held deadline (the slot is BLOCKED until it, so the engine wakes now_futex)
     * comes after, and wakes it. */
    atomic_store(&watch_deadline, m);
}

/* Holds the call until emulated time deadline (or, with epfd, events): SV_DONE, or an answer
 * when it cannot be held. */
static int64_t hold(const struct sv_call *c, int64_t deadline, int epfd, uint64_t events, int maxevents)
{
    int i = slot_of(c->tid, CLAIM);
    /* a held epoll wait whose instance this thread made ready runs before this one waits */
    sv_time_due(c->sv);
    if (n_held == HELD_MAX || i < 0) {
        if (i >= 0)
            sv_say_once(23, "more than %d waits held at once: thread %d waits in the host's time", HELD_MAX,
                        (int)c->tid);
        if (epfd >= 0)
            close(epfd);
        return SV_CONTINUE;
    }
    held[n_held++] = (struct held){c->id, c->tid, c->nr, i, deadline, epfd, events, maxevents};
    if (c->sv->trace)
        fprintf(stderr, "hwemu-sv: %d syscall %d held at emulated %lld until %lld (real %lld)\n", (int)c->tid, c->nr,
                (long long)now_mono(), (long long)deadline, (long long)seg_clock_real_ns());
    seg_clock_block(&clk, i, deadline);
    set_watch();
    return SV_DONE;
}

static int64_t rel_deadline(const struct timespec *ts)
{
    int64_t now = now_mono(), rel = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
    return rel > INT64_MAX - 1 - now ? NO_DEADLINE - 1 : now + rel;
}

static int64_t a_sleep(const struct sv_call *c, clockid_t id, int flags, uint64_t ureq)
{
    int64_t now_id;
    if (!clock_of(id, &now_id))
        return SV_CONTINUE;
    struct timespec ts;
    if (sv_peek(c->tid, ureq, &ts, sizeof ts) != sizeof ts)
        return -EFAULT;
    if (ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000 || ts.tv_sec < 0)
        return -EINVAL;
    int64_t d;
    if (flags & TIMER_ABSTIME) {
        int64_t t = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        d = t - (now_id - now_mono());
    } else {
        d = rel_deadline(&ts);
    }
    if (d <= now_mono())
        return sv_valid(c) ? 0 : SV_DONE;
    return hold(c, d, -1, 0, 0);
}

/* Copies up to maxevents ready events of our copy of the epoll instance into the target: their
 * count (0 when none), -errno, or SV_DONE. */
static int64_t take_events(const struct sv_call *c, int epfd, uint64_t uevents, int maxevents)
{
    struct epoll_event ev[EVENTS_MAX];
    int n = epoll_wait(epfd, ev, maxevents < EVENTS_MAX ? maxevents : EVENTS_MAX, 0);
    if (n <= 0)
        return n < 0 ? -errno : 0;
    int64_t r = put(c, uevents, ev, (size_t)n * sizeof ev[0]);
    if (r == SV_DONE)
        sv_say_once(24, "thread %d left its epoll wait as %d events came: they are lost to it", (int)c->tid, n);
    return r ? r : n;
}

static int64_t a_epoll(const struct sv_call *c, int64_t timeout_ns)
{
    int epfd = (int)c->a[0], maxevents = (int)c->a[2];
    if (timeout_ns == 0 || maxevents <= 0)
        return SV_CONTINUE;
    int copy = sv_getfd(c->tid, epfd);
    if (copy < 0)
        return SV_CONTINUE; /* not an epoll descriptor of its, or unreachable: the kernel says */
    int64_t d = timeout_ns < 0 ? NO_DEADLINE : now_mono() + timeout_ns;
    int64_t r = take_events(c, copy, c->a[1], maxevents);
    if (r != 0 || d <= now_mono()) {
        close(copy);
        return r == -EINVAL ? SV_CONTINUE : r;
    }
    return hold(c, d, copy, c->a[1], maxevents);
}

static int64_t a_futex(struct sv *sv, const struct sv_call *c)
{
    int op = (int)c->a[1] & FUTEX_CMD_MASK;
    unsigned free_at;
    if (op == FUTEX_WAKE) {
        int j = entry_of(c->tid, &free_at);
        pid_t tgid = j >= 0 ? tids[j].tgid : c->tid;
        if (j < 0)
            sv_ids(c->tid, &tgid, NULL, NULL);
        wake_waiters(tgid, c->a[0]);
        return SV_CONTINUE;
    }
    if (op != FUTEX_WAIT)
        return SV_CONTINUE;
    int i = slot_of(c->tid, CLAIM);
    if (i < 0)
        return SV_CONTINUE;
    int j = entry_of(c->tid, &free_at);
    if (j >= 0)
        tids[j].wait_addr = c->a[0];
    /* a held epoll wait whose instance another thread made ready runs before this one waits */
    sv_time_due(sv);
    if (!c->a[3]) {
        seg_clock_block(&clk, i, NO_DEADLINE);
        return SV_CONTINUE;
    }
    struct timespec ts;
    if (sv_peek(c->tid, c->a[3], &ts, sizeof ts) != sizeof ts || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000 ||
        ts.tv_sec < 0)
        return SV_CONTINUE; /* the kernel's EFAULT or EINVAL */
    int64_t d = rel_deadline(&ts);
    /* the real wait: until the deadline's real time at --speed N (or once the engine stopped),
     * one slice at --speed max, where only the engine moves time */
    int64_t at = seg_clock_real_at(&clk, d), real = at == INT64_MAX ? SLICE_NS : at - seg_clock_real_ns();
    if (real < 0)
        real = 0;
    if ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec != real) {
        struct timespec cut = {real / 1000000000, real % 1000000000};
        int64_t r = put(c, c->a[3], &cut, sizeof cut);
        if (r)
            return r == SV_DONE ? SV_DONE : SV_CONTINUE;
    }
    seg_clock_block(&clk, i, d);
    return SV_CONTINUE;
}

/* Is the calling thread's process in emulated time? */
static bool caller_owned(const struct sv_call *c)
{
    unsigned free_at;
    if (entry_of(c->tid, &free_at) >= 0)
        return true;
    pid_t tgid = c->tid;
    return sv_ids(c->tid, &tgid, NULL, NULL) == 0 && is_owned(tgid);
}

int64_t sv_time_answer(struct sv *sv, const struct sv_call *c)
{
    const uint64_t *a = c->a;
    if (c->nr == SYS_arch_prctl)
        return a_settls(c);
    switch (c->nr) {
    case SYS_clock_gettime:
    case SYS_gettimeofday:
    case SYS_time:
    case SYS_nanosleep:
    case SYS_clock_nanosleep:
    case SYS_futex:
    case SYS_clone:
    case SYS_epoll_wait:
    case SYS_epoll_pwait:
    case SYS_epoll_pwait2:
        if (!caller_owned(c))
            return SV_CONTINUE; /* a dynamically linked program: its own shim's, or the host's */
        break;
    default: return SV_NOT_TIME;
    }
    switch (c->nr) {
    case SYS_clock_gettime: return a_clock_gettime(c);
    case SYS_gettimeofday: return a_gettimeofday(c);
    case SYS_time: return a_time(c);
    case SYS_nanosleep: return a_sleep(c, CLOCK_MONOTONIC, 0, a[0]);
    case SYS_clock_nanosleep: return a_sleep(c, (clockid_t)a[0], (int)a[1], a[2]);
    case SYS_futex: return a_futex(sv, c);
    case SYS_clone: return a_clone(c);
    case SYS_epoll_wait:
    case SYS_epoll_pwait: {
        int ms = (int)a[3];
        return a_epoll(c, ms < 0 ? -1 : (int64_t)ms * 1000000);
    }
    case SYS_epoll_pwait2: {
        if (!a[3])
            return a_epoll(c, -1);
        struct timespec ts;
        if (sv_peek(c->tid, a[3], &ts, sizeof ts) != sizeof ts || ts.tv_sec < 0 || ts.tv_nsec < 0 ||
            ts.tv_nsec >= 1000000000)
            return SV_CONTINUE;
        return a_epoll(c, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
    }
    default: return SV_NOT_TIME;
    }
}

/* --- the loop's side ------------------------------------------------------------------------------ */

int sv_time_fds(struct pollfd *pf, int cap)
{
    int n = 0;
    if (!on)
        return 0;
    pf[n++] = (struct pollfd){efd, POLLIN, 0};
    for (int k = 0; k < n_held && n < cap; k++)
        if (held[k].epfd >= 0)
            pf[n++] = (struct pollfd){held[k].epfd, POLLIN, 0};
    return n;
}

int64_t sv_time_timeout(void)
{
    int64_t r = -1, now = seg_clock_real_ns();
    for (int k = 0; k < n_held; k++) {
        if (held[k].deadline == NO_DEADLINE)
            continue;
        int64_t at = seg_clock_real_at(&clk, held[k].deadline);
        if (at == INT64_MAX)
            continue;
        int64_t left = at > now ? at - now : 0;
        if (r < 0 || left < r)
            r = left;
    }
    return r;
}

static void finish(struct sv *sv, int k, int64_t answer)
{
    struct held h = held[k];
    held[k] = held[--n_held];
    if (h.epfd >= 0)
        close(h.epfd);
    struct sv_call c = {.sv = sv, .id = h.id, .tid = h.tid, .nr = h.nr};
    if (slot_is(h.slot, h.tid))
        seg_clock_run(&clk, h.slot);
    if (sv->trace)
        fprintf(stderr, "hwemu-sv: %d syscall %d held until %lld -> %lld at emulated %lld (real %lld)\n", (int)h.tid,
                h.nr, (long long)h.deadline, (long long)answer, (long long)now_mono(), (long long)seg_clock_real_ns());
    sv_reply(&c, answer);
}

void sv_time_due(struct sv *sv)
{
    if (!on)
        return;
    uint64_t v;
    while (read(efd, &v, sizeof v) > 0)
        ;
    int64_t now = now_mono();
    for (int k = 0; k < n_held;) {
        struct held *h = &held[k];
        struct sv_call c = {.sv = sv, .id = h->id, .tid = h->tid, .nr = h->nr};
        int64_t r = 0;
        bool end = false;
        if (!sv_valid(&c)) {
            end = true, r = SV_DONE; /* killed */
        } else if (h->epfd >= 0 && (r = take_events(&c, h->epfd, h->events, h->maxevents)) != 0) {
            end = true;
        } else if (now >= h->deadline) {
            end = true, r = 0;
        }
        if (end)
            finish(sv, k, r);
        else
            k++;
    }
    set_watch();
}
