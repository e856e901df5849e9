/* sv_pool: the seccomp supervisor's placeholders (sv_answer.c says what they are), and a thread
 * of their own that makes them ahead and closes the ends of those no agent holds any more.
 *
 * Making a placeholder (pipe2, the byte, fstat, the epoll registration) costs about 11 us on
 * this machine, a third of an emulated open when done inside it. The supervisor's thread and
 * the agent take turns on one CPU (same-CPU wake-ups), so a second thread making them runs on
 * the other CPU while they work: the open only takes a ready one from a ring (no system call).
 * Closing our end of a placeholder the agent closed costs 7.5 us here (the pipe and its epoll
 * registration go): the supervisor's thread hands those ends over too.
 * Two rings, each with one producer and one consumer: ready placeholders (maker -> supervisor)
 * and ends to close (supervisor -> maker). The maker looks at them every millisecond while
 * calls come and every 50 ms once they stopped; nobody wakes it, because a wake-up from the
 * supervisor's thread (a futex) cost an open 100 to 200 us here. Placeholders for writing are
 * made and closed by the supervisor's thread (rare, and they differ).
 * What it must never do: block the supervisor's thread, hand out one placeholder twice, or close
 * a descriptor the supervisor's thread still uses. */
#include "sv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* For reading (and O_RDWR, O_PATH): the agent gets the read end, holding one byte so that
 * poll() says readable as sysfs does, and EPOLLERR on our write end says no reader is left.
 * For writing: the agent gets the write end (F_GETFL then says O_WRONLY, as it should), and
 * EPOLLHUP on our read end says no writer is left; what a copy that escaped the window writes
 * arrives there (EPOLLIN) and is kept for one store, so such a writer never blocks. */
int sv_placeholder_make(struct placeholder *ph, bool for_writing, int epfd)
{
    int p[2];
    struct stat st;
    if (pipe2(p, O_CLOEXEC) < 0)
        return errno;
    *ph = for_writing ? (struct placeholder){p[1], p[0], 0} : (struct placeholder){p[0], p[1], 0};
    /* a read placeholder reports its end once (EPOLLERR): it is forgotten then */
    struct epoll_event ev = {.events = for_writing ? EPOLLIN : EPOLLONESHOT, .data.fd = ph->keep};
    int prepared = for_writing ? fcntl(ph->keep, F_SETFL, O_NONBLOCK) : (write(p[1], "", 1) == 1 ? 0 : -1);
    if (prepared < 0 || fstat(p[0], &st) < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, ph->keep, &ev) < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return e ? e : EIO;
    }
    ph->ino = st.st_ino;
    return 0;
}

#define RING 64     /* ready placeholders; a power of two */
#define DISCARDS 256 /* ends to close; a power of two */
static struct placeholder ring[RING];
static _Atomic unsigned made, taken; /* counts; made - taken placeholders wait in the ring */
static int discards[DISCARDS];
static _Atomic unsigned discarded, closed; /* counts; discarded - closed ends wait */
static bool maker_runs;
static int ring_epfd;

static bool room_in_ring(void)
{
    return atomic_load_explicit(&made, memory_order_relaxed) - atomic_load_explicit(&taken, memory_order_acquire) <
           RING;
}

static bool ends_to_close(void)
{
    return atomic_load_explicit(&discarded, memory_order_acquire) != atomic_load_explicit(&closed, memory_order_relaxed);
}

static void *maker(void *arg)
{
    (void)arg;
    /* it runs when a CPU has nothing else to do: never in the agent's or the supervisor's way
     * (when no CPU is ever idle, the opens make their own and the supervisor closes its ends) */
    struct sched_param none = {0};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &none);
    for (unsigned quiet = 0;; quiet++) {
        while (ends_to_close()) {
            unsigned c = atomic_load_explicit(&closed, memory_order_relaxed);
            close(discards[c % DISCARDS]);
            atomic_store_explicit(&closed, c + 1, memory_order_release);
            quiet = 0;
        }
        while (room_in_ring()) {
            unsigned m = atomic_load_explicit(&made, memory_order_relaxed);
            if (sv_placeholder_make(&ring[m % RING], false, ring_epfd) != 0)
                break; /* out of descriptors or memory: the opens make their own (and say why
                        * they cannot); tried again next round */
            atomic_store_explicit(&made, m + 1, memory_order_release);
            quiet = 0;
        }
        /* every millisecond while calls come, every 50 once they stopped for 50 */
        struct timespec pause = {0, (quiet < 50 ? 1 : 50) * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

bool sv_pool_take(struct placeholder *ph)
{
    unsigned t = atomic_load_explicit(&taken, memory_order_relaxed);
    unsigned ready = atomic_load_explicit(&made, memory_order_acquire) - t;
    if (ready == 0)
        return false;
    *ph = ring[t % RING];
    atomic_store_explicit(&taken, t + 1, memory_order_release);
    return true;
}

bool sv_pool_discard(int fd)
{
    unsigned d = atomic_load_explicit(&discarded, memory_order_relaxed);
    unsigned waiting = d - atomic_load_explicit(&closed, memory_order_acquire);
    if (!maker_runs || waiting == DISCARDS)
        return false;
    discards[d % DISCARDS] = fd;
    atomic_store_explicit(&discarded, d + 1, memory_order_release);
    return true;
}

int sv_pool_start(int epfd)
{
    ring_epfd = epfd;
    /* the thread takes no signals: the supervisor's thread has them all (signalfd) */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, 64 * 1024);
    pthread_t t;
    int e = pthread_create(&t, &at, maker, NULL);
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    maker_runs = e == 0;
    return e;
}
