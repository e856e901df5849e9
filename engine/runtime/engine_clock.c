/* engine_clock: the engine's side of the emulated clock; see engine_clock.h and docs/time.md. */
#include "engine_clock.h"

#include "engine.h"
#include "events.h"
#include "seg_clock.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* How long the engine sleeps on the agents' futex before it looks at the slots again (threads
 * gone, the wall bound, a stop). */
#define CLOCK_POLL_NS 20000000LL
/* An agent out of step this long is checked for being alive (one tgkill per such slot). */
#define CLOCK_ALIVE_CHECK_NS 20000000LL

struct engine_clock {
    struct seg_clock c;
    int64_t now;             /* the emulated now last published */
    int64_t earliest;        /* the earliest agent deadline at the last look (INT64_MAX: none) */
    bool started;            /* the first serve (wait_agents) is done */
    /* per slot, private: the seq last seen out of step and since when (real ns), and the seq
     * at which the slot was let go (valid when let_go_set) */
    uint32_t *seen_seq, *let_go_seq;
    int64_t *since;
    bool *let_go_set;
};

static int64_t real_ns(void)
{
    return seg_clock_real_ns();
}

int engine_clock_start(struct engine *e, char *err, size_t errlen)
{
    if (!e->cfg.time_emulated)
        return 0;
    struct engine_clock *k = calloc(1, sizeof *k);
    if (!k)
        abort();
    struct timespec b, m;
    clock_gettime(CLOCK_BOOTTIME, &b);
    clock_gettime(CLOCK_MONOTONIC, &m);
    int64_t boot_off = ((int64_t)b.tv_sec - m.tv_sec) * 1000000000 + (b.tv_nsec - m.tv_nsec);
    bool max = e->cfg.speed == ENGINE_SPEED_MAX;
    double rate = e->cfg.speed > 1 ? e->cfg.speed : 1;
    if (seg_clock_create(&k->c, e->cfg.root, SEG_CLOCK_SLOTS, e->root_shared, max, e->tick_mono, e->real_last,
                         rate, e->wall_minus_mono, boot_off, err, errlen)) {
        free(k);
        return -1;
    }
    k->seen_seq = calloc(SEG_CLOCK_SLOTS, sizeof *k->seen_seq);
    k->let_go_seq = calloc(SEG_CLOCK_SLOTS, sizeof *k->let_go_seq);
    k->since = calloc(SEG_CLOCK_SLOTS, sizeof *k->since);
    k->let_go_set = calloc(SEG_CLOCK_SLOTS, sizeof *k->let_go_set);
    if (!k->seen_seq || !k->let_go_seq || !k->since || !k->let_go_set)
        abort();
    k->now = e->tick_mono;
    k->earliest = INT64_MIN; /* no look yet: the first tick wakes every agent */
    e->clock = k;
    return 0;
}

/* name as printable ASCII (at most cap - 1 bytes of the agent-written field of n bytes) */
static void ascii(char *out, size_t cap, const char *in, size_t n)
{
    size_t j = 0;
    for (size_t i = 0; i < n && in[i] && j + 1 < cap; i++)
        out[j++] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
    out[j] = 0;
}

static void let_go_event(struct engine *e, const struct seg_clock_slot *s, uint32_t state, int64_t since_ns,
                         int64_t deadline)
{
    char node[sizeof s->node + 1], comm[sizeof s->comm + 1];
    ascii(node, sizeof node, s->node, sizeof s->node);
    ascii(comm, sizeof comm, s->comm, sizeof s->comm);
    cJSON *a = cJSON_CreateObject();
    cJSON_AddNumberToObject(a, "pid", atomic_load(&s->pid));
    cJSON_AddNumberToObject(a, "tid", atomic_load(&s->tid));
    cJSON_AddStringToObject(a, "comm", comm);
    cJSON_AddStringToObject(a, "state", state == SEG_SLOT_BLOCKED ? "woken" : "running");
    if (state == SEG_SLOT_BLOCKED)
        cJSON_AddNumberToObject(a, "deadlineEmulatedSeconds", (double)(deadline - e->tick_mono) / 1e9);
    cJSON_AddNumberToObject(a, "wallSeconds", (double)since_ns / 1e9);
    cJSON_AddStringToObject(a, "what", "the agent neither waited on time nor exited within the wall bound "
                                       "(--agent-wait): emulated time goes on without it until it waits again");
    events_emit(e->events, e->clock->now + e->wall_minus_mono, node[0] ? node : NULL, "joulie.sim.time.agent_late",
                a);
}

/* One look at every slot: true when every agent is in step (FREE, BLOCKED past now, gone or let
 * go), with the earliest deadline of the waiting ones in *next and their count in *joined. Before
 * the first move of time no agent is let go: the start waits for them all (a fleet of agents
 * starting at once on a loaded machine can take longer than the bound), at most
 * ENGINE_WAIT_AGENTS_NS. */
static bool in_step(struct engine *e, int64_t *next, int *joined)
{
    struct engine_clock *k = e->clock;
    uint32_t used = atomic_load(&k->c.h->slots_used);
    if (used > k->c.n_slots)
        used = k->c.n_slots;
    int64_t now_real = 0, bound = e->cfg.agent_wait_ns > 0 ? e->cfg.agent_wait_ns : ENGINE_AGENT_WAIT_NS;
    bool all = true;
    *next = INT64_MAX;
    *joined = 0;
    for (uint32_t i = 0; i < used; i++) {
        struct seg_clock_slot *s = &k->c.slots[i];
        uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (st == SEG_SLOT_FREE)
            continue;
        int64_t dl = atomic_load_explicit(&s->deadline_ns, memory_order_relaxed);
        ++*joined;
        if (st == SEG_SLOT_BLOCKED && dl > k->now) {
            if (dl < *next)
                *next = dl;
            continue;
        }
        if (k->let_go_set[i] && k->let_go_seq[i] == seq)
            continue;
        k->let_go_set[i] = false;
        if (!now_real)
            now_real = real_ns();
        if (seq != k->seen_seq[i] || !k->since[i]) {
            k->seen_seq[i] = seq;
            k->since[i] = now_real;
        }
        int64_t out = now_real - k->since[i];
        if (out > CLOCK_ALIVE_CHECK_NS) {
            pid_t pid = atomic_load(&s->pid), tid = atomic_load(&s->tid);
            if (pid <= 0 || tid <= 0 || (syscall(SYS_tgkill, pid, tid, 0) != 0 && errno == ESRCH)) {
                /* its thread is gone: the slot is free again (unless it was claimed meanwhile) */
                uint32_t expect = st;
                if (atomic_load(&s->seq) == seq && atomic_compare_exchange_strong(&s->state, &expect, SEG_SLOT_FREE))
                    atomic_fetch_add(&s->seq, 1);
                --*joined;
                continue;
            }
        }
        if (out > bound && k->started) { /* the start's wait is bounded as a whole (wait_agents) */
            let_go_event(e, s, st, out, dl);
            k->let_go_set[i] = true;
            k->let_go_seq[i] = seq;
            continue;
        }
        all = false;
    }
    return all;
}

void engine_clock_serve(struct engine *e, int64_t before)
{
    struct engine_clock *k = e->clock;
    if (!k || e->cfg.speed != ENGINE_SPEED_MAX)
        return;
    int64_t start = real_ns();
    while (!e->stop) {
        uint32_t seen = atomic_load_explicit(&k->c.h->agents_futex, memory_order_acquire);
        atomic_store_explicit(&k->c.h->alive_real, real_ns(), memory_order_relaxed);
        seg_clock_moving(&k->c, true); /* an agent joining from here waits for the time moved to */
        int64_t next;
        int joined;
        bool all = in_step(e, &next, &joined);
        if (!k->started && joined < e->cfg.wait_agents) {
            if (real_ns() - start > ENGINE_WAIT_AGENTS_NS) { /* said, and time goes on */
                cJSON *a = cJSON_CreateObject();
                cJSON_AddNumberToObject(a, "expected", e->cfg.wait_agents);
                cJSON_AddNumberToObject(a, "joined", joined);
                events_emit(e->events, k->now + e->wall_minus_mono, NULL, "joulie.sim.time.agents_missing", a);
                k->started = true;
            }
            all = false;
        } else if (all) {
            k->started = true;
        } else if (!k->started && real_ns() - start > ENGINE_WAIT_AGENTS_NS) {
            k->started = true; /* the agents that are still starting are let go from here */
        }
        if (!all) {
            seg_clock_moving(&k->c, false);
            seg_clock_wait_agents(&k->c, seen, CLOCK_POLL_NS);
            continue;
        }
        k->earliest = next;
        if (next >= before)
            return; /* moving stays set until the tick's time is published (engine_clock_ticked) */
        k->now = next; /* the earliest deadline before the tick: time moves there, and its agents wake */
        seg_clock_publish(&k->c, next, true);
    }
}

void engine_clock_ticked(struct engine *e)
{
    struct engine_clock *k = e->clock;
    if (!k)
        return;
    k->now = e->tick_mono;
    if (e->cfg.speed == ENGINE_SPEED_MAX) { /* the agents sleep on unless a deadline came */
        seg_clock_publish(&k->c, k->now, k->now >= k->earliest);
        seg_clock_moving(&k->c, false);
    } else
        seg_clock_publish_rate(&k->c, e->tick_mono, e->real_last, e->cfg.speed > 1 ? e->cfg.speed : 1);
}

uint64_t engine_clock_wakeups(const struct engine *e)
{
    return e->clock ? atomic_load(&e->clock->c.h->wakeups) : 0;
}

void engine_clock_stop(struct engine *e)
{
    struct engine_clock *k = e->clock;
    if (!k)
        return;
    int64_t r = real_ns(), now = e->cfg.speed == ENGINE_SPEED_MAX ? k->now : seg_clock_now(&k->c, r);
    seg_clock_stop(&k->c, now, r);
    seg_clock_close(&k->c);
    free(k->seen_seq);
    free(k->let_go_seq);
    free(k->since);
    free(k->let_go_set);
    free(k);
    e->clock = NULL;
}
