/* Unit tests of engine/model/duration.c: Go-style durations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "duration.h"

static void test_valid(void **st)
{
    int64_t ns = -1;
    assert_true(duration_parse("1s", &ns));
    assert_int_equal(ns, 1000000000);
    assert_true(duration_parse("250ms", &ns));
    assert_int_equal(ns, 250000000);
    assert_true(duration_parse("1m30s", &ns));
    assert_int_equal(ns, 90000000000LL);
    assert_true(duration_parse("1.5h", &ns));
    assert_int_equal(ns, 5400000000000LL);
    assert_true(duration_parse("10us", &ns));
    assert_int_equal(ns, 10000);
    assert_true(duration_parse("10\xc2\xb5s", &ns));
    assert_int_equal(ns, 10000);
    assert_true(duration_parse("0", &ns));
    assert_int_equal(ns, 0);
}

static void test_invalid(void **st)
{
    int64_t ns = 7;
    const char *bad[] = {"", "1", "s", "1x", "-1s", "1s2", "1 s", "9999999999h", NULL};
    for (int i = 0; bad[i]; i++)
        assert_false(duration_parse(bad[i], &ns));
    assert_int_equal(ns, 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_valid), cmocka_unit_test(test_invalid)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
