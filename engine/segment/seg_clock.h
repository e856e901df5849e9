/* seg_clock: the emulated clock an engine shares with the agents of its root (docs/time.md).
 *
 * This is the contract between an engine started with `--time emulated` (it makes the file and
 * is the only party that moves time) and the agents run by `hwemu exec --time emulated` (they
 * read time from it and say when they wait). libc only, like the segment: the shim links it.
 *
 * File: <root>/clock, made afresh by each engine start (a new file renamed over the old one, so
 * an agent of a dead engine keeps the old file, marked stopped), mapped MAP_SHARED read-write by
 * every party:
 *
 *   struct seg_clock_header                 one page: version, mode, the published now, offsets
 *   struct seg_clock_slot  slots[n_slots]   one per agent thread that has waited on time
 *
 * Time. The emulated clock is the engine's emulated CLOCK_MONOTONIC (the time the segment's
 * counter lines are written in, segment.h "Counters"); the other clocks are offsets of it, fixed
 * at the engine's start:
 *     CLOCK_REALTIME = mono + realtime_off      CLOCK_BOOTTIME = mono + boottime_off
 * (the coarse and raw variants follow their clock; the CPU-time clocks are never emulated).
 * The agents' mono at real CLOCK_MONOTONIC r (seg_clock_now) depends on the header's state:
 *   SEG_CLOCK_STEPPED  (--speed max) now_ns: time stands still until the engine stores a new
 *                      now (seg_clock_publish), which it does only when every agent waits;
 *   SEG_CLOCK_RATE     (--speed 1 or N) base_emu + (r - base_real) * rate, the pair published
 *                      under the seqlock pub_seq at every tick (the engine's own formula for its
 *                      next tick's time, so agents and ticks agree at each tick);
 *   SEG_CLOCK_STOPPED  (the engine stopped or died) stop_emu + (r - stop_real): time goes on at
 *                      wall rate from where it stood, and nobody waits for the engine.
 * The clock never goes back for a reader: a state change publishes its pair so that the new
 * formula starts from the old one's value.
 *
 * Slots and the protocol (at SEG_CLOCK_STEPPED; the other states never wait on each other). An
 * agent process claims a FREE slot for its main thread when it starts (CAS FREE -> RUNNING, then
 * raises slots_used), another thread the first time it waits on time; a thread frees its slot
 * when it exits. A process holds time from its start: a fork claims the child's slot before the
 * child exists, an exec or a spawn hands the slot down to the new program (HWEMU_CLOCK_SLOT
 * "index:token" in its environment, the token the slot's), and a child that exits keeps its slot
 * (RUNNING) until its parent, waiting for it (deadline SEG_CLOCK_WAIT_CHILD), reaps it and frees
 * it, so time never moves between one program of a script and the next. To wait until emulated time D it
 *   1. stores deadline_ns = D, then state = BLOCKED (release), bumps seq, and wakes the engine
 *      (bump agents_futex, FUTEX_WAKE);
 *   2. while now_ns < D: FUTEX_WAIT on its slot's wake word (loaded before now_ns; with a real
 *      timeout, to notice a dead engine); a signal, or the file descriptors of a poll becoming
 *      ready, end the wait early (a thread without a slot waits on now_futex instead);
 *   3. stores state = RUNNING, running from its wake-up time until its next wait.
 * The engine publishes a new now (now_ns; then, when it reaches some agent's deadline, it bumps
 * and FUTEX_WAKEs the wake word of each BLOCKED slot whose deadline came, and now_futex; at a
 * change of state, every slot's word: so a move of time wakes only the agents it is due for,
 * not every agent of the root), then waits until
 * every slot is FREE or BLOCKED with a deadline after now (the agent is "in step"); only then does
 * it move time on, to the earliest deadline before its next tick, or to that tick. A slot that
 * stays out of step (RUNNING, or due and not yet woken) with the same seq for the engine's wall
 * bound is let go (an event says so): the engine moves on without it until its seq moves again.
 * A slot whose thread no longer exists is freed by the engine.
 *
 * Joining. A process that claims a slot of its own (not one handed down) may do so while the
 * engine, having found every agent in step, moves time: it would start at the old now and see
 * time jump under it. So the engine stores moving = 1 before it looks at the slots, back to 0
 * when it does not move time or once the new now is published; a joining agent, after its claim,
 * waits while moving is 1 (counted in joining, which the engine wakes with FUTEX_WAKE on moving).
 * Both sides store, fence (seq_cst) and then read, so either the engine's look sees the new slot
 * RUNNING, or the agent sees moving and starts at the new now.
 *
 * Trust: everything in the file but its header's geometry, which the engine keeps privately, is
 * written by agents. The engine bounds slot indexes by its own n_slots, reads states and
 * deadlines as numbers (an unknown state is out of step), and copies names as printable ASCII.
 * A hostile agent can at worst hold time for the wall bound at each of its moves.
 */
#ifndef HWEMU_SEG_CLOCK_H
#define HWEMU_SEG_CLOCK_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SEG_CLOCK_MAGIC "HWEMUCLK"
#define SEG_CLOCK_VERSION 3u /* 2: a slot of 128 bytes with its own wake word; 3: moving, joining */
#define SEG_CLOCK_FILE "clock"
#define SEG_CLOCK_SLOTS 8192 /* agent threads per root */
/* A slot's deadline while its thread waits for a child process (waitpid): past every other (the
 * child's own slot, kept until the parent reaps it, holds time meanwhile). */
#define SEG_CLOCK_WAIT_CHILD (INT64_MAX - 1)

enum seg_clock_state { SEG_CLOCK_STEPPED = 1, SEG_CLOCK_RATE = 2, SEG_CLOCK_STOPPED = 3 };
enum seg_clock_slot_state { SEG_SLOT_FREE = 0, SEG_SLOT_RUNNING = 1, SEG_SLOT_BLOCKED = 2 };

struct seg_clock_header {
    char magic[8];              /* SEG_CLOCK_MAGIC */
    uint32_t version;           /* SEG_CLOCK_VERSION */
    uint32_t header_size;       /* sizeof(struct seg_clock_header) */
    uint32_t n_slots, slots_off;
    uint32_t engine_pid;
    _Atomic uint32_t state;     /* enum seg_clock_state */
    int64_t realtime_off, boottime_off;
    _Atomic int64_t now_ns;     /* STEPPED: the emulated now */
    _Atomic uint32_t now_futex; /* bumped after every store of now or state: agents without a slot wait on it */
    _Atomic uint32_t agents_futex; /* bumped by an agent's every move: the engine waits on it */
    _Atomic uint64_t pub_seq;   /* seqlock over the pairs below: odd while the engine writes */
    int64_t base_emu, base_real; /* RATE */
    double rate;                /* RATE: emulated ns per real ns */
    int64_t stop_emu, stop_real; /* STOPPED */
    _Atomic int64_t alive_real; /* real CLOCK_MONOTONIC of the engine's last sign of life */
    _Atomic uint32_t slots_used; /* 1 + the highest slot index ever claimed */
    uint32_t pad;
    _Atomic uint64_t wakeups;   /* agent waits that ended at a deadline (for /metrics and benchmarks) */
    _Atomic uint32_t moving;    /* STEPPED: 1 from the engine's look at the slots until the time it
                                 * moves to is published (a joining agent waits for 0) */
    _Atomic uint32_t joining;   /* agents waiting for moving to clear (the engine wakes them) */
    uint8_t reserved[4096 - 144];
};

struct seg_clock_slot {
    _Atomic uint32_t state;     /* enum seg_clock_slot_state */
    _Atomic uint32_t seq;       /* bumped at every state change */
    _Atomic int64_t deadline_ns; /* BLOCKED: emulated mono the thread waits for */
    _Atomic int32_t pid, tid;
    _Atomic uint32_t token;     /* handed down with the slot to a program exec'd or spawned (HWEMU_CLOCK_SLOT) */
    _Atomic uint32_t wake;      /* bumped by the engine when the slot's deadline comes: its thread waits on it */
    char node[64];              /* HWEMU_NODE, for the engine's events (not NUL-terminated when full) */
    char comm[16];              /* the program's name */
    uint8_t reserved[16];
};

_Static_assert(sizeof(struct seg_clock_header) == 4096, "the clock header is one page");
_Static_assert(sizeof(struct seg_clock_slot) == 128, "a clock slot is two cache lines");

/* A mapped clock file. Geometry private (from a checked header). */
struct seg_clock {
    struct seg_clock_header *h;
    struct seg_clock_slot *slots;
    size_t size;
    uint32_t n_slots;
    /* agent side, this mapping's own: the engine found gone without stopping the clock
     * (seg_clock_check_dead); time goes on in wall time from dead_emu at real dead_real */
    _Atomic bool dead;
    _Atomic int64_t dead_emu, dead_real;
};

/* --- any party ----------------------------------------------------------------------------- */

/* <root>/clock into out: 0, or ENAMETOOLONG. */
int seg_clock_path(const char *root, char *out, size_t len);
/* Maps an existing clock file read-write and checks its header: 0, or an errno with what is
 * wrong and what to do in err. */
int seg_clock_open(struct seg_clock *c, const char *path, char *err, size_t errlen);
void seg_clock_close(struct seg_clock *c);
/* The emulated CLOCK_MONOTONIC at real CLOCK_MONOTONIC real_ns (see "Time" above; for a mapping
 * that found its engine dead, wall time from then on). No system call, no lock. */
int64_t seg_clock_now(const struct seg_clock *c, int64_t real_ns);
/* Clock id's offset from the emulated CLOCK_MONOTONIC (see "Time" above: realtime's and
 * boottime's, 0 for monotonic; the coarse, raw and alarm variants as their clock): true, or false
 * for the clocks that are never emulated (the CPU-time clocks, CLOCK_TAI, dynamic clocks). */
bool seg_clock_offset(const struct seg_clock *c, clockid_t id, int64_t *off);
/* The real CLOCK_MONOTONIC at which emulated time reaches emu_ns at RATE or STOPPED, or once
 * dead (a real sleep's deadline); INT64_MAX at STEPPED (only the engine moves time). */
int64_t seg_clock_real_at(const struct seg_clock *c, int64_t emu_ns);
/* Real CLOCK_MONOTONIC in ns. */
int64_t seg_clock_real_ns(void);

/* --- agent side ---------------------------------------------------------------------------- */

/* Claims a free slot for thread tid of pid (node and comm copied for the engine's events): its
 * index, or -1 when every slot is taken. */
int seg_clock_claim(struct seg_clock *c, pid_t pid, pid_t tid, const char *node, const char *comm);
/* Takes over slot i handed down with token (HWEMU_CLOCK_SLOT) for thread tid of pid: true, or
 * false when i is out of range, free, or another's (the token differs). */
bool seg_clock_adopt(struct seg_clock *c, int i, uint32_t token, pid_t pid, pid_t tid, const char *comm);
/* Frees slot i (its thread exits) and wakes the engine. */
void seg_clock_release(struct seg_clock *c, int i);
/* Step 1 of a wait: slot i is BLOCKED until deadline_ns; the engine is woken. */
void seg_clock_block(struct seg_clock *c, int i, int64_t deadline_ns);
/* Step 3: slot i RUNNING again (a deadline reached, a signal, a descriptor ready). */
void seg_clock_run(struct seg_clock *c, int i);
/* Step 2's wait of a thread without a slot: sleeps until now_futex moves from seen or timeout_ns
 * of real time pass (a signal ends it too): 0, or the futex call's errno (EAGAIN: it had moved;
 * ETIMEDOUT; EINTR). */
int seg_clock_wait_now(struct seg_clock *c, uint32_t seen, int64_t timeout_ns);
/* Step 2's wait of slot i's thread: the same on the slot's wake word (seen loaded with
 * seg_clock_wake_seen before the thread last looked at the time). */
uint32_t seg_clock_wake_seen(const struct seg_clock *c, int i);
int seg_clock_wait_slot(struct seg_clock *c, int i, uint32_t seen, int64_t timeout_ns);
/* After a claim of a slot of its own: waits while the engine moves time (Joining), at most
 * timeout_ns of real time (a dead engine), so that the agent starts at the time moved to. */
void seg_clock_join(struct seg_clock *c, int64_t timeout_ns);
/* Is the engine that made the file gone (its pid no longer exists, or it stopped)? */
bool seg_clock_engine_gone(const struct seg_clock *c);
/* Has the engine died without stopping the clock (kill -9)? The first call that finds it so
 * marks this mapping dead: from then on seg_clock_now and seg_clock_real_at go on in wall time
 * from where time stood, as STOPPED would (one kill(2) a call until then). */
bool seg_clock_check_dead(struct seg_clock *c);
/* Was this mapping marked dead (no system call)? */
bool seg_clock_dead(const struct seg_clock *c);

/* --- engine side --------------------------------------------------------------------------- */

/* Makes <root>/clock afresh (mode 0660 when group_shared, else 0600) with n_slots slots, in
 * state STEPPED at emu_ns when stepped, else RATE at base (emu_ns, real_ns) and rate, and maps
 * it (renamed into place only then: an agent never sees it in another state first): 0, or an
 * errno with the message. */
int seg_clock_create(struct seg_clock *c, const char *root, uint32_t n_slots, bool group_shared, bool stepped,
                     int64_t emu_ns, int64_t real_ns, double rate, int64_t realtime_off, int64_t boottime_off,
                     char *err, size_t errlen);
/* STEPPED at now_ns; with wake, the agents whose deadline came (BLOCKED until now_ns or before)
 * and those without a slot are woken to look at it (the engine wakes them when some deadline
 * came: a tick that reaches none leaves them asleep); the others sleep on. */
void seg_clock_publish(struct seg_clock *c, int64_t now_ns, bool wake);
/* RATE: emulated emu_ns at real real_ns, rate emulated per real ns; waiting agents are woken
 * (they compute their real deadline again). */
void seg_clock_publish_rate(struct seg_clock *c, int64_t emu_ns, int64_t real_ns, double rate);
/* STOPPED from (emu_ns, real_ns): every agent is woken and goes on in wall time. */
void seg_clock_stop(struct seg_clock *c, int64_t emu_ns, int64_t real_ns);
/* moving (Joining): set before the engine looks at the slots, cleared when time does not move
 * or after the new now is published (waking the joining agents). */
void seg_clock_moving(struct seg_clock *c, bool moving);
/* The engine's wait for agents: sleeps until agents_futex moves from seen or timeout_ns pass. */
void seg_clock_wait_agents(struct seg_clock *c, uint32_t seen, int64_t timeout_ns);

#endif
