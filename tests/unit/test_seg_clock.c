/* Unit tests of engine/segment/seg_clock.c, the emulated clock's contract (seg_clock.h): the time
 * at each state (stepped, rate, stopped) and never back across them, the real deadline of an
 * emulated one, slots claimed, handed down with their token, refused to a wrong token and
 * freed, a wait woken by a publication, a header that is not a clock refused with the remedy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seg_clock.h"

static char root[128];

static int setup(void **state)
{
    snprintf(root, sizeof root, "/tmp/hwemu-seg-clock.%d", (int)getpid());
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", root, root);
    if (system(cmd))
        return -1;
    struct seg_clock *c = calloc(1, sizeof *c);
    char err[300];
    /* stepped at emulated 1000 s; realtime 1e18 ns later, boottime 5 s later */
    if (seg_clock_create(c, root, 16, false, true, 1000000000000, 7, 2, 1000000000000000000, 5000000000, err,
                         sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    seg_clock_close(*state);
    free(*state);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd) ? -1 : 0;
}

static void stepped_rate_stopped(void **state)
{
    struct seg_clock *c = *state;
    /* stepped: time stands still whatever the real clock does, until the engine stores a new now */
    assert_int_equal(seg_clock_now(c, 0), 1000000000000);
    assert_int_equal(seg_clock_now(c, 99999999999), 1000000000000);
    assert_int_equal(seg_clock_real_at(c, 2000000000000), INT64_MAX);
    seg_clock_publish(c, 1020000000000, true);
    assert_int_equal(seg_clock_now(c, 5), 1020000000000);
    /* rate 10 from (1020 s, real 50 s): real 51 s is emulated 1030 s; 1040 s comes at real 52 s */
    seg_clock_publish_rate(c, 1020000000000, 50000000000, 10);
    assert_int_equal(seg_clock_now(c, 51000000000), 1030000000000);
    assert_int_equal(seg_clock_real_at(c, 1040000000000), 52000000000 + 1);
    assert_int_equal(seg_clock_real_at(c, 10), 50000000000); /* past: now */
    /* stopped at (1030 s, real 51 s): wall rate from there */
    seg_clock_stop(c, 1030000000000, 51000000000);
    assert_int_equal(seg_clock_now(c, 53000000000), 1032000000000);
    assert_true(seg_clock_engine_gone(c));
    /* the offsets every party applies */
    assert_int_equal(c->h->realtime_off, 1000000000000000000);
    assert_int_equal(c->h->boottime_off, 5000000000);
    /* seg_clock_offset, by clock (seg_clock.h "Time"): the CPU-time clocks and TAI are never emulated */
    static const struct {
        clockid_t id;
        bool emulated;
        int64_t off;
    } want[] = {{CLOCK_REALTIME, true, 1000000000000000000},  {CLOCK_REALTIME_COARSE, true, 1000000000000000000},
                {CLOCK_REALTIME_ALARM, true, 1000000000000000000}, {CLOCK_MONOTONIC, true, 0},
                {CLOCK_MONOTONIC_COARSE, true, 0},              {CLOCK_MONOTONIC_RAW, true, 0},
                {CLOCK_BOOTTIME, true, 5000000000},             {CLOCK_BOOTTIME_ALARM, true, 5000000000},
                {CLOCK_PROCESS_CPUTIME_ID, false, 0},           {CLOCK_THREAD_CPUTIME_ID, false, 0},
                {CLOCK_TAI, false, 0}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int64_t off = -1;
        assert_int_equal(seg_clock_offset(c, want[i].id, &off), want[i].emulated);
        if (want[i].emulated)
            assert_int_equal(off, want[i].off);
    }
}

static void slots(void **state)
{
    struct seg_clock *c = *state;
    int a = seg_clock_claim(c, 100, 101, "node-a", "agent");
    int b = seg_clock_claim(c, 200, 200, "node-b", "other");
    assert_true(a >= 0 && b >= 0 && a != b);
    assert_true(atomic_load(&c->h->slots_used) >= (uint32_t)(a > b ? a : b) + 1);
    assert_int_equal(atomic_load(&c->slots[a].state), SEG_SLOT_RUNNING);
    assert_string_equal(c->slots[a].node, "node-a");
    /* handed down: the right token takes it over, a wrong one or a free slot does not */
    uint32_t token = atomic_load(&c->slots[a].token);
    assert_false(seg_clock_adopt(c, a, token + 1, 300, 300, "exec"));
    assert_true(seg_clock_adopt(c, a, token, 300, 300, "exec"));
    assert_int_equal(atomic_load(&c->slots[a].pid), 300);
    assert_false(seg_clock_adopt(c, 16, token, 300, 300, "x")); /* out of range */
    /* blocked until a deadline, running again, freed */
    uint32_t seq = atomic_load(&c->slots[a].seq), engine_word = atomic_load(&c->h->agents_futex);
    seg_clock_block(c, a, 1234);
    assert_int_equal(atomic_load(&c->slots[a].state), SEG_SLOT_BLOCKED);
    assert_int_equal(atomic_load(&c->slots[a].deadline_ns), 1234);
    assert_true(atomic_load(&c->slots[a].seq) != seq);
    assert_true(atomic_load(&c->h->agents_futex) != engine_word); /* the engine was woken */
    seg_clock_run(c, a);
    assert_int_equal(atomic_load(&c->slots[a].state), SEG_SLOT_RUNNING);
    seg_clock_release(c, a);
    assert_int_equal(atomic_load(&c->slots[a].state), SEG_SLOT_FREE);
    assert_false(seg_clock_adopt(c, a, token, 300, 300, "late"));
    seg_clock_release(c, b);
    /* every slot taken: -1 */
    for (int i = 0; i < 16; i++)
        assert_true(seg_clock_claim(c, 1, 1, "n", "c") >= 0);
    assert_int_equal(seg_clock_claim(c, 1, 1, "n", "c"), -1);
}

static void *publisher(void *arg)
{
    usleep(20000);
    seg_clock_publish(arg, 5000000000000, true);
    return NULL;
}

static void wait_woken(void **state)
{
    struct seg_clock *c = *state;
    seg_clock_publish(c, 4000000000000, true);
    uint32_t seen = atomic_load(&c->h->now_futex);
    assert_int_equal(seg_clock_wait_now(c, seen + 1, 1000000), EAGAIN); /* it had moved */
    pthread_t t;
    pthread_create(&t, NULL, publisher, c);
    int e = seg_clock_wait_now(c, seen, 5000000000); /* woken by the publication, not the timeout */
    pthread_join(t, NULL);
    assert_true(e == 0 || e == EAGAIN);
    assert_int_equal(seg_clock_now(c, 0), 5000000000000);
    /* a tick that reaches no deadline leaves the sleepers alone */
    seen = atomic_load(&c->h->now_futex);
    seg_clock_publish(c, 5001000000000, false);
    assert_int_equal(atomic_load(&c->h->now_futex), seen);
    assert_int_equal(seg_clock_wait_now(c, seen, 1000000), ETIMEDOUT);
}

/* A move of time wakes the slots whose deadline it reaches, not the others; a change of state
 * wakes every slot */
static void wake_due_slots(void **state)
{
    struct seg_clock *c = *state;
    seg_clock_publish(c, 6000000000000, false);
    int due = seg_clock_claim(c, 1, 1, "n", "due"), later = seg_clock_claim(c, 1, 2, "n", "later");
    int running = seg_clock_claim(c, 1, 3, "n", "running");
    assert_true(due >= 0 && later >= 0 && running >= 0);
    seg_clock_block(c, due, 6001000000000);
    seg_clock_block(c, later, 6002000000000);
    uint32_t d = seg_clock_wake_seen(c, due), l = seg_clock_wake_seen(c, later), r = seg_clock_wake_seen(c, running);
    seg_clock_publish(c, 6001000000000, true);
    assert_int_equal(seg_clock_wake_seen(c, due), d + 1);
    assert_int_equal(seg_clock_wake_seen(c, later), l);
    assert_int_equal(seg_clock_wake_seen(c, running), r);
    assert_int_equal(seg_clock_wait_slot(c, later, l, 1000000), ETIMEDOUT); /* still asleep */
    assert_int_equal(seg_clock_wait_slot(c, due, d, 1000000), EAGAIN);      /* it had been woken */
    seg_clock_stop(c, 6001000000000, 0);
    assert_int_equal(seg_clock_wake_seen(c, later), l + 1);
    assert_int_equal(seg_clock_wake_seen(c, running), r + 1);
}

/* Joining (seg_clock.h): an agent that claims a slot while the engine moves time waits until
 * the new now is published, then starts at it; with the engine not moving it does not wait. */
struct joiner {
    struct seg_clock *c;
    int64_t started_at; /* the emulated now the joiner saw once joined */
};
static void *join_thread(void *arg)
{
    struct joiner *j = arg;
    int i = seg_clock_claim(j->c, 1, 9, "n", "joiner");
    assert_true(i >= 0);
    seg_clock_join(j->c, 5000000000LL);
    j->started_at = seg_clock_now(j->c, seg_clock_real_ns());
    return NULL;
}
static void join_waits_for_move(void **state)
{
    struct seg_clock *c = *state;
    seg_clock_publish(c, 7000000000000, false);
    int64_t t0 = seg_clock_real_ns();
    seg_clock_join(c, 5000000000LL); /* not moving: at once */
    assert_true(seg_clock_real_ns() - t0 < 1000000000LL);
    seg_clock_moving(c, true);
    struct joiner j = {.c = c};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, join_thread, &j), 0);
    while (!atomic_load(&c->h->joining)) /* the joiner waits for the move */
        usleep(1000);
    seg_clock_publish(c, 7001000000000, false); /* the tick's time, no deadline reached */
    seg_clock_moving(c, false);
    pthread_join(th, NULL);
    assert_int_equal(j.started_at, 7001000000000);
    assert_int_equal(atomic_load(&c->h->joining), 0);
}

/* An engine killed without stopping the clock: the first look that finds it gone marks the
 * mapping dead, and time goes on in wall time from where it stood (as at STOPPED) */
static void dead_engine(void **state)
{
    struct seg_clock *c = *state;
    seg_clock_publish(c, 9000000000000, false);
    assert_false(seg_clock_check_dead(c)); /* the engine is this process: alive */
    assert_false(seg_clock_dead(c));
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    assert_true(p > 0);
    waitpid(p, NULL, 0);
    c->h->engine_pid = (uint32_t)p; /* a pid that no longer exists */
    assert_true(seg_clock_check_dead(c));
    assert_true(seg_clock_dead(c));
    int64_t r0 = seg_clock_real_ns();
    int64_t t0 = seg_clock_now(c, r0);
    assert_true(t0 >= 9000000000000 && t0 < 9000000000000 + 1000000000);
    assert_int_equal(seg_clock_now(c, r0 + 2000000000), t0 + 2000000000);
    assert_int_equal(seg_clock_real_at(c, t0 + 3000000000), r0 + 3000000000 + 1);
}

static void not_a_clock(void **state)
{
    (void)state;
    char p[200], err[400];
    snprintf(p, sizeof p, "%s/bad", root);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    for (int i = 0; i < 8192; i++)
        fputc('x', f);
    fclose(f);
    struct seg_clock c;
    assert_int_equal(seg_clock_open(&c, p, err, sizeof err), EINVAL);
    assert_non_null(strstr(err, "restart the engine with --time emulated"));
    snprintf(p, sizeof p, "%s/none", root);
    assert_int_equal(seg_clock_open(&c, p, err, sizeof err), ENOENT);
    assert_non_null(strstr(err, "start the engine with --time emulated"));
    /* the real one opens */
    assert_int_equal(seg_clock_path(root, p, sizeof p), 0);
    assert_int_equal(seg_clock_open(&c, p, err, sizeof err), 0);
    assert_int_equal(c.n_slots, 16);
    seg_clock_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(stepped_rate_stopped, setup, teardown),
        cmocka_unit_test_setup_teardown(slots, setup, teardown),
        cmocka_unit_test_setup_teardown(wait_woken, setup, teardown),
        cmocka_unit_test_setup_teardown(wake_due_slots, setup, teardown),
        cmocka_unit_test_setup_teardown(join_waits_for_move, setup, teardown),
        cmocka_unit_test_setup_teardown(dead_engine, setup, teardown),
        cmocka_unit_test_setup_teardown(not_a_clock, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
