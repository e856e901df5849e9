/* seg_clock: the emulated clock file's mapping, its readers and both sides' moves; see
 * seg_clock.h. libc only (the futex calls through syscall(2)); reading the time makes no
 * system call beyond the real clock's vDSO read. */
#include "seg_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int64_t seg_clock_real_ns(void)
{
    struct timespec ts;
    /* the raw system call's answer, never an interposed clock_gettime (the shim wraps it) */
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int seg_clock_path(const char *root, char *out, size_t len)
{
    int n = snprintf(out, len, "%s/%s", root, SEG_CLOCK_FILE);
    return n < 0 || (size_t)n >= len ? ENAMETOOLONG : 0;
}

static size_t file_size(uint32_t n_slots)
{
    return sizeof(struct seg_clock_header) + (size_t)n_slots * sizeof(struct seg_clock_slot);
}

static void bind(struct seg_clock *c, void *base, size_t size, uint32_t n_slots)
{
    c->h = base;
    c->slots = (struct seg_clock_slot *)((uint8_t *)base + sizeof(struct seg_clock_header));
    c->size = size;
    c->n_slots = n_slots;
}

int seg_clock_open(struct seg_clock *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot open the engine's clock %s: %s (%s)", path, strerror(e),
                 e == ENOENT ? "start the engine with --time emulated" : "is this the engine's root?");
        return e;
    }
    struct stat st;
    struct seg_clock_header h;
    if (fstat(fd, &st) || (size_t)st.st_size < sizeof h || pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
        memcmp(h.magic, SEG_CLOCK_MAGIC, 8) || h.version != SEG_CLOCK_VERSION || h.header_size != sizeof h ||
        h.slots_off != sizeof h || h.n_slots == 0 || h.n_slots > SEG_CLOCK_SLOTS ||
        (size_t)st.st_size < file_size(h.n_slots)) {
        snprintf(err, errlen, "%s is not a clock file of this hwemu (version %u expected): restart the engine with "
                 "--time emulated", path, SEG_CLOCK_VERSION);
        close(fd);
        return EINVAL;
    }
    size_t size = file_size(h.n_slots);
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (base == MAP_FAILED) {
        snprintf(err, errlen, "cannot map the engine's clock %s: %s", path, strerror(e));
        return e;
    }
    bind(c, base, size, h.n_slots);
    return 0;
}

void seg_clock_close(struct seg_clock *c)
{
    if (c->h)
        munmap(c->h, c->size);
    memset(c, 0, sizeof *c);
}

/* The pair of the current state, consistent (the seqlock). */
static uint32_t load_pairs(const struct seg_clock *c, int64_t *a, int64_t *b, double *rate)
{
    struct seg_clock_header *h = c->h;
    for (;;) {
        uint64_t s0 = atomic_load_explicit(&h->pub_seq, memory_order_acquire);
        uint32_t state = atomic_load_explicit(&h->state, memory_order_acquire);
        if (state == SEG_CLOCK_RATE)
            *a = h->base_emu, *b = h->base_real, *rate = h->rate;
        else if (state == SEG_CLOCK_STOPPED)
            *a = h->stop_emu, *b = h->stop_real, *rate = 1;
        else
            *a = atomic_load_explicit(&h->now_ns, memory_order_acquire), *b = 0, *rate = 0;
        atomic_thread_fence(memory_order_acquire);
        if (!(s0 & 1) && atomic_load_explicit(&h->pub_seq, memory_order_relaxed) == s0)
            return state;
    }
}

int64_t seg_clock_now(const struct seg_clock *c, int64_t real_ns)
{
    if (seg_clock_dead(c))
        return atomic_load(&c->dead_emu) + (real_ns - atomic_load(&c->dead_real));
    int64_t a, b;
    double rate;
    uint32_t state = load_pairs(c, &a, &b, &rate);
    if (state == SEG_CLOCK_STEPPED)
        return a;
    int64_t d = real_ns - b;
    return a + (rate == 1 ? d : (int64_t)((double)d * rate));
}

bool seg_clock_offset(const struct seg_clock *c, clockid_t id, int64_t *off)
{
    switch (id) {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_REALTIME_ALARM:
        *off = c->h->realtime_off;
        return true;
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_MONOTONIC_RAW:
        *off = 0;
        return true;
    case CLOCK_BOOTTIME:
    case CLOCK_BOOTTIME_ALARM:
        *off = c->h->boottime_off;
        return true;
    default:
        return false;
    }
}

int64_t seg_clock_real_at(const struct seg_clock *c, int64_t emu_ns)
{
    int64_t a, b;
    double rate;
    uint32_t state = load_pairs(c, &a, &b, &rate);
    if (seg_clock_dead(c))
        a = atomic_load(&c->dead_emu), b = atomic_load(&c->dead_real), rate = 1, state = SEG_CLOCK_STOPPED;
    if (state == SEG_CLOCK_STEPPED || rate <= 0)
        return INT64_MAX;
    if (emu_ns <= a)
        return b;
    double d = (double)(emu_ns - a) / rate;
    return d > 9e18 - (double)b ? INT64_MAX : b + (int64_t)d + 1; /* the first real ns at or past it */
}

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    /* shared (no FUTEX_PRIVATE_FLAG): the word is in a file every party maps */
    return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

static int futex_wait(_Atomic uint32_t *word, uint32_t seen, int64_t timeout_ns)
{
    struct timespec ts = {.tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000};
    return futex(word, FUTEX_WAIT, seen, timeout_ns < 0 ? NULL : &ts) ? errno : 0;
}

static void futex_bump_wake(_Atomic uint32_t *word)
{
    atomic_fetch_add_explicit(word, 1, memory_order_release);
    futex(word, FUTEX_WAKE, INT32_MAX, NULL);
}

/* --- agent side ---------------------------------------------------------------------------- */

int seg_clock_claim(struct seg_clock *c, pid_t pid, pid_t tid, const char *node, const char *comm)
{
    for (uint32_t i = 0; i < c->n_slots; i++) {
        struct seg_clock_slot *s = &c->slots[i];
        uint32_t free_state = SEG_SLOT_FREE;
        if (atomic_load_explicit(&s->state, memory_order_relaxed) != SEG_SLOT_FREE ||
            !atomic_compare_exchange_strong(&s->state, &free_state, SEG_SLOT_RUNNING))
            continue;
        atomic_store(&s->pid, pid);
        atomic_store(&s->tid, tid);
        strncpy(s->node, node ? node : "", sizeof s->node);
        strncpy(s->comm, comm ? comm : "", sizeof s->comm);
        uint32_t seq = atomic_fetch_add(&s->seq, 1) + 1;
        atomic_store(&s->token, (seq * 2654435761u) ^ (uint32_t)pid ^ (i << 20) ^ 0x5bd1e995u);
        uint32_t used = atomic_load(&c->h->slots_used);
        while (used < i + 1 && !atomic_compare_exchange_weak(&c->h->slots_used, &used, i + 1))
            ;
        return (int)i;
    }
    return -1;
}

void seg_clock_join(struct seg_clock *c, int64_t timeout_ns)
{
    struct seg_clock_header *h = c->h;
    atomic_thread_fence(memory_order_seq_cst); /* the claim stored before moving is read */
    if (!atomic_load(&h->moving))
        return;
    atomic_fetch_add(&h->joining, 1);
    int64_t end = seg_clock_real_ns() + timeout_ns;
    while (atomic_load(&h->moving) && atomic_load(&h->state) == SEG_CLOCK_STEPPED && seg_clock_real_ns() < end)
        futex_wait(&h->moving, 1, 10000000LL);
    atomic_fetch_sub(&h->joining, 1);
}

bool seg_clock_adopt(struct seg_clock *c, int i, uint32_t token, pid_t pid, pid_t tid, const char *comm)
{
    if (i < 0 || (uint32_t)i >= c->n_slots)
        return false;
    struct seg_clock_slot *s = &c->slots[i];
    if (atomic_load(&s->state) == SEG_SLOT_FREE || atomic_load(&s->token) != token)
        return false;
    atomic_store(&s->pid, pid);
    atomic_store(&s->tid, tid);
    strncpy(s->comm, comm ? comm : "", sizeof s->comm);
    return true;
}

void seg_clock_release(struct seg_clock *c, int i)
{
    if (i < 0 || (uint32_t)i >= c->n_slots)
        return;
    struct seg_clock_slot *s = &c->slots[i];
    atomic_store(&s->tid, 0);
    atomic_fetch_add(&s->seq, 1);
    atomic_store_explicit(&s->state, SEG_SLOT_FREE, memory_order_release);
    futex_bump_wake(&c->h->agents_futex);
}

void seg_clock_block(struct seg_clock *c, int i, int64_t deadline_ns)
{
    struct seg_clock_slot *s = &c->slots[i];
    atomic_store_explicit(&s->deadline_ns, deadline_ns, memory_order_relaxed);
    atomic_store_explicit(&s->state, SEG_SLOT_BLOCKED, memory_order_release);
    atomic_fetch_add_explicit(&s->seq, 1, memory_order_release);
    futex_bump_wake(&c->h->agents_futex);
    /* BLOCKED stored before the thread reads the time: the engine, which stores the time before
     * it reads the states (wake_slots), then either sees it BLOCKED or was seen by it */
    atomic_thread_fence(memory_order_seq_cst);
}

void seg_clock_run(struct seg_clock *c, int i)
{
    struct seg_clock_slot *s = &c->slots[i];
    atomic_store_explicit(&s->state, SEG_SLOT_RUNNING, memory_order_release);
    atomic_fetch_add_explicit(&s->seq, 1, memory_order_release);
}

int seg_clock_wait_now(struct seg_clock *c, uint32_t seen, int64_t timeout_ns)
{
    return futex_wait(&c->h->now_futex, seen, timeout_ns);
}

uint32_t seg_clock_wake_seen(const struct seg_clock *c, int i)
{
    return atomic_load_explicit(&c->slots[i].wake, memory_order_acquire);
}

int seg_clock_wait_slot(struct seg_clock *c, int i, uint32_t seen, int64_t timeout_ns)
{
    return futex_wait(&c->slots[i].wake, seen, timeout_ns);
}

bool seg_clock_engine_gone(const struct seg_clock *c)
{
    if (atomic_load(&c->h->state) == SEG_CLOCK_STOPPED)
        return true;
    pid_t pid = (pid_t)c->h->engine_pid;
    return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

bool seg_clock_dead(const struct seg_clock *c)
{
    return atomic_load_explicit(&c->dead, memory_order_acquire);
}

bool seg_clock_check_dead(struct seg_clock *c)
{
    if (seg_clock_dead(c))
        return true;
    if (atomic_load(&c->h->state) == SEG_CLOCK_STOPPED || !seg_clock_engine_gone(c))
        return false;
    int64_t r = seg_clock_real_ns();
    atomic_store(&c->dead_emu, seg_clock_now(c, r));
    atomic_store(&c->dead_real, r);
    atomic_store_explicit(&c->dead, true, memory_order_release);
    return true;
}

/* --- engine side --------------------------------------------------------------------------- */

int seg_clock_create(struct seg_clock *c, const char *root, uint32_t n_slots, bool group_shared, bool stepped,
                     int64_t emu_ns, int64_t real_ns, double rate, int64_t realtime_off, int64_t boottime_off,
                     char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    char path[4096], tmp[4200];
    if (seg_clock_path(root, path, sizeof path)) {
        snprintf(err, errlen, "the root's path %s is too long for its clock file", root);
        return ENAMETOOLONG;
    }
    snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
    size_t size = file_size(n_slots);
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, group_shared ? 0660 : 0600);
    int e = fd < 0 ? errno : 0;
    if (!e && (group_shared && fchmod(fd, 0660)))
        e = errno;
    if (!e && (e = posix_fallocate(fd, 0, (off_t)size)) == 0) {
        void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED)
            e = errno;
        else
            bind(c, base, size, n_slots);
    }
    if (!e) {
        struct seg_clock_header *h = c->h;
        memcpy(h->magic, SEG_CLOCK_MAGIC, 8);
        h->version = SEG_CLOCK_VERSION;
        h->header_size = sizeof *h;
        h->n_slots = n_slots;
        h->slots_off = sizeof *h;
        h->engine_pid = (uint32_t)getpid();
        h->realtime_off = realtime_off;
        h->boottime_off = boottime_off;
        h->base_emu = emu_ns;
        h->base_real = real_ns;
        h->rate = rate;
        atomic_store(&h->now_ns, emu_ns);
        atomic_store(&h->alive_real, real_ns);
        atomic_store(&h->state, stepped ? SEG_CLOCK_STEPPED : SEG_CLOCK_RATE);
        if (rename(tmp, path))
            e = errno;
    }
    if (fd >= 0)
        close(fd);
    if (e) {
        unlink(tmp);
        seg_clock_close(c);
        snprintf(err, errlen, "cannot make the emulated clock %s: %s (is the root writable and not full?)", path,
                 strerror(e));
    }
    return e;
}

/* Wakes the threads of the slots in use: at STEPPED those BLOCKED until due_ns or before, else
 * (a change of state: every deadline means something else now) all of them. The slots' words are
 * the agents' to write too; the engine only adds to them and bounds its walk by n_slots. */
static void wake_slots(struct seg_clock *c, bool all, int64_t due_ns)
{
    atomic_thread_fence(memory_order_seq_cst); /* the time stored before the states are read */
    uint32_t used = atomic_load_explicit(&c->h->slots_used, memory_order_acquire);
    if (used > c->n_slots)
        used = c->n_slots;
    for (uint32_t i = 0; i < used; i++) {
        struct seg_clock_slot *s = &c->slots[i];
        if (!all && (atomic_load_explicit(&s->state, memory_order_acquire) != SEG_SLOT_BLOCKED ||
                     atomic_load_explicit(&s->deadline_ns, memory_order_relaxed) > due_ns))
            continue;
        futex_bump_wake(&s->wake);
    }
}

static void write_pairs(struct seg_clock *c, uint32_t state, int64_t a, int64_t b, double rate, bool wake)
{
    struct seg_clock_header *h = c->h;
    atomic_fetch_add_explicit(&h->pub_seq, 1, memory_order_acq_rel); /* odd */
    atomic_thread_fence(memory_order_release);
    if (state == SEG_CLOCK_RATE)
        h->base_emu = a, h->base_real = b, h->rate = rate;
    else if (state == SEG_CLOCK_STOPPED)
        h->stop_emu = a, h->stop_real = b;
    else
        atomic_store_explicit(&h->now_ns, a, memory_order_relaxed);
    atomic_store_explicit(&h->state, state, memory_order_release);
    atomic_fetch_add_explicit(&h->pub_seq, 1, memory_order_release); /* even */
    atomic_store_explicit(&h->alive_real, seg_clock_real_ns(), memory_order_relaxed);
    if (wake) {
        wake_slots(c, state != SEG_CLOCK_STEPPED, a);
        futex_bump_wake(&h->now_futex);
    }
}

void seg_clock_publish(struct seg_clock *c, int64_t now_ns, bool wake)
{
    write_pairs(c, SEG_CLOCK_STEPPED, now_ns, 0, 0, wake);
}

void seg_clock_publish_rate(struct seg_clock *c, int64_t emu_ns, int64_t real_ns, double rate)
{
    write_pairs(c, SEG_CLOCK_RATE, emu_ns, real_ns, rate, true);
}

void seg_clock_stop(struct seg_clock *c, int64_t emu_ns, int64_t real_ns)
{
    write_pairs(c, SEG_CLOCK_STOPPED, emu_ns, real_ns, 1, true);
}

void seg_clock_moving(struct seg_clock *c, bool moving)
{
    struct seg_clock_header *h = c->h;
    atomic_store(&h->moving, moving ? 1u : 0u);
    atomic_thread_fence(memory_order_seq_cst); /* moving stored before the slots (or joining) are read */
    if (!moving && atomic_load(&h->joining))
        futex(&h->moving, FUTEX_WAKE, INT32_MAX, NULL);
}

void seg_clock_wait_agents(struct seg_clock *c, uint32_t seen, int64_t timeout_ns)
{
    futex_wait(&c->h->agents_futex, seen, timeout_ns);
}
