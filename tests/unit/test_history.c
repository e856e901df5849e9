/* The cluster history ring (engine/runtime/history.c): points numbered from 1 in push order, a
 * reader asking for the points after `since` gets exactly those still kept, oldest first, and at
 * most `max` of the newest; the ring keeps the last HISTORY_POINTS across wrap-around. Expected
 * values: the pushes the test makes (point k carries power k). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "history.h"

static struct history *h;
static struct history_point out[HISTORY_POINTS];

static int setup(void **st)
{
    h = malloc(sizeof *h);
    history_init(h);
    return 0;
}

static int teardown(void **st)
{
    history_destroy(h);
    free(h);
    return 0;
}

static void push(int k)
{
    struct cluster_totals t = {.nodes = 1, .power_w = k};
    history_push(h, (int64_t)k * 1000000000, &t);
}

static void test_empty_and_first(void **st)
{
    assert_int_equal(history_since(h, 0, out, HISTORY_POINTS), 0);
    push(1);
    push(2);
    push(3);
    assert_int_equal(history_since(h, 0, out, HISTORY_POINTS), 3);
    assert_int_equal(out[0].seq, 1);
    assert_true(out[2].t.power_w == 3);
    assert_int_equal(history_since(h, 2, out, HISTORY_POINTS), 1); /* only the third */
    assert_int_equal(out[0].seq, 3);
    assert_int_equal(history_since(h, 3, out, HISTORY_POINTS), 0); /* nothing newer */
    assert_int_equal(history_since(h, 99, out, HISTORY_POINTS), 0); /* a later engine's seq */
    assert_int_equal(history_since(h, 0, out, 2), 2);              /* the newest two */
    assert_int_equal(out[0].seq, 2);
}

static void test_wrap(void **st)
{
    for (int k = 4; k <= HISTORY_POINTS + 10; k++)
        push(k);
    size_t n = history_since(h, 0, out, HISTORY_POINTS);
    assert_int_equal(n, HISTORY_POINTS);
    assert_int_equal(out[0].seq, 11); /* 1..10 were overwritten */
    assert_int_equal(out[n - 1].seq, HISTORY_POINTS + 10);
    for (size_t i = 0; i < n; i++)
        assert_true(out[i].t.power_w == (double)out[i].seq);
    assert_int_equal(history_since(h, HISTORY_POINTS + 5, out, HISTORY_POINTS), 5);
    assert_int_equal(out[0].seq, HISTORY_POINTS + 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_empty_and_first), cmocka_unit_test(test_wrap)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
