/* Unit tests of engine/model/ytree.c: locations, scalar conversions, and parse errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "arena.h"
#include "diag.h"
#include "ytree.h"

static struct yt_node *parse(struct arena *a, struct diag *d, const char *text)
{
    return yt_parse(a, "t.yaml", text, strlen(text), d, NULL);
}

static void test_locations(void **st)
{
    struct arena a = {0};
    struct diag d = {0};
    struct yt_node *r = parse(&a, &d, "a: 1\nb:\n  c: [x, 'y']\n");
    assert_non_null(r);
    struct yt_node *c = yt_path(r, "b.c");
    assert_non_null(c);
    assert_int_equal(c->kind, YT_SEQ);
    assert_int_equal(c->line, 3);
    assert_int_equal(c->col, 6);
    assert_true(c->vals[0]->plain);
    assert_false(c->vals[1]->plain);
    assert_string_equal(c->vals[1]->text, "y");
    assert_int_equal(d.count, 0);
    arena_free(&a);
}

static void test_scalars(void **st)
{
    struct arena a = {0};
    struct diag d = {0};
    struct yt_node *r = parse(&a, &d, "i: -42\nh: 0x1a\nf: 1.5\nb: true\ns: '7'\nn: ~\nbad: 12abc\n");
    long long i;
    double f;
    bool b;
    assert_true(yt_int(yt_get(r, "i"), &i));
    assert_int_equal(i, -42);
    assert_true(yt_int(yt_get(r, "h"), &i));
    assert_int_equal(i, 26);
    assert_true(yt_double(yt_get(r, "f"), &f));
    assert_true(f == 1.5);
    assert_true(yt_bool(yt_get(r, "b"), &b) && b);
    assert_false(yt_int(yt_get(r, "s"), &i)); /* quoted: text, not a number */
    assert_true(yt_is_null(yt_get(r, "n")));
    assert_false(yt_int(yt_get(r, "bad"), &i));
    assert_false(yt_double(yt_get(r, "bad"), &f));
    arena_free(&a);
}

static void test_duplicate_key(void **st)
{
    struct arena a = {0};
    struct diag d = {0};
    assert_null(parse(&a, &d, "x: 1\ny: 2\nx: 3\n"));
    assert_int_equal(d.count, 1);
    assert_string_equal(d.msgs[0], "t.yaml:3:1: duplicate key \"x\" (first at line 1); remove one of them");
    diag_free(&d);
    arena_free(&a);
}

static void test_syntax_error_and_second_document(void **st)
{
    struct arena a = {0};
    struct diag d = {0};
    assert_null(parse(&a, &d, "a: [1, 2\n"));
    assert_int_equal(d.count, 1);
    assert_non_null(strstr(d.msgs[0], "t.yaml:2:1: YAML syntax error"));
    diag_free(&d);
    assert_null(parse(&a, &d, "a: 1\n---\nb: 2\n"));
    assert_int_equal(d.count, 1);
    assert_string_equal(d.msgs[0], "t.yaml:3:1: a second YAML document starts here; this file must hold exactly one");
    diag_free(&d);
    arena_free(&a);
}

static void test_alias_bomb_is_refused(void **st)
{
    /* Nine levels of nine-fold aliases would expand to 387 million nodes. */
    char text[2048] = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i <= 9; i++) {
        char line[160];
        snprintf(line, sizeof line, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i,
                 i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
        strcat(text, line);
    }
    struct arena a = {0};
    struct diag d = {0};
    assert_null(parse(&a, &d, text));
    assert_int_equal(d.count, 1);
    assert_non_null(strstr(d.msgs[0], "recursive alias"));
    diag_free(&d);
    arena_free(&a);
}

/* Found by fuzz_spec: an empty collection before any other child (no child stack yet). */
static void test_empty_collections(void **st)
{
    struct arena a = {0};
    struct diag d = {0};
    struct yt_node *r = parse(&a, &d, "[]");
    assert_non_null(r);
    assert_int_equal(r->kind, YT_SEQ);
    assert_int_equal(r->n, 0);
    r = parse(&a, &d, "[[[[[[[[[]]]]]]]]]");
    assert_non_null(r);
    assert_int_equal(r->vals[0]->n, 1);
    r = parse(&a, &d, "{}");
    assert_non_null(r);
    assert_int_equal(r->kind, YT_MAP);
    assert_int_equal(d.count, 0);
    assert_null(parse(&a, &d, "[[[[[[[[[]{T{"));
    assert_int_equal(d.count, 1);
    assert_non_null(strstr(d.msgs[0], "YAML syntax error"));
    diag_free(&d);
    arena_free(&a);
}

/* Deep nesting fails at the first level past the limit, with the limit's message. */
static void test_depth_limit(void **st)
{
    struct arena a = {0};
    struct diag d = {0};
    char text[300];
    memset(text, '[', 65);
    memset(text + 65, ']', 65);
    text[130] = 0;
    assert_non_null(parse(&a, &d, text)); /* 65 levels: the root and 64 below it */
    memset(text, '[', 66);
    memset(text + 66, ']', 66);
    text[132] = 0;
    assert_null(parse(&a, &d, text));
    assert_int_equal(d.count, 1);
    assert_non_null(strstr(d.msgs[0], "t.yaml:1:66: the document nests deeper than 64 levels"));
    diag_free(&d);
    arena_free(&a);
}

static void test_map_edit(void **st)
{
    struct arena a = {0};
    struct diag d = {0};
    struct yt_node *r = parse(&a, &d, "a: 1\nb: 2\n");
    yt_map_set(&a, r, "c", yt_get(r, "a"));
    yt_map_remove(r, "a");
    assert_int_equal(r->n, 2);
    assert_string_equal(r->keys[0]->text, "b");
    assert_string_equal(yt_str(yt_get(r, "c")), "1");
    struct yt_node *copy = yt_clone(&a, r);
    yt_map_set(&a, copy, "b", yt_get(r, "c"));
    assert_string_equal(yt_str(yt_get(r, "b")), "2"); /* the clone is deep */
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_locations),
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_duplicate_key),
        cmocka_unit_test(test_syntax_error_and_second_document),
        cmocka_unit_test(test_alias_bomb_is_refused),
        cmocka_unit_test(test_empty_collections),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_map_edit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
