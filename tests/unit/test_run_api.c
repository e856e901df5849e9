/* Unit tests of what the run API leans on (issue 25 items 2, 3 and 10):
 * - run_labels: all or nothing at the limit, the last of a key given twice wins, a removal kept
 *   only when it hides a spec label, compaction after drops keeps the order and the index, the
 *   JSON (spec default, pool over it, run-time over both), and a map filled to the limit with
 *   keys that collide in the index's low bits still finding every key;
 * - jsontext: \u0000 escapes (an escaped backslash before u0000 is not one) and UTF-8 by RFC
 *   3629's table (overlongs C0/C1/E0 80, surrogates ED A0, F4 90 past U+10FFFF, truncations);
 * - trace_file: "..", absolute paths outside, links (leaf and directory), FIFOs (never blocks),
 *   the size limit, a directory's *.jsonl in name order, the mode of what was read, and the
 *   messages never holding the file's bytes;
 * - trace_parse_quiet: the values the loud parse quotes are "(not shown)". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "diag.h"
#include "jsontext.h"
#include "run_labels.h"
#include "trace.h"
#include "trace_file.h"
#include "ytree.h"

static struct yt_node *yaml(struct arena *a, const char *text)
{
    struct diag d = {0};
    bool empty;
    struct yt_node *n = yt_parse(a, "t.yaml", text, strlen(text), &d, &empty);
    assert_non_null(n);
    diag_free(&d);
    return n;
}

static char *labels_json(const struct run_label_map *m, const struct yt_node *const spec[2])
{
    cJSON *o = cJSON_CreateObject();
    run_labels_json(m, spec, o);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static void test_labels_apply(void **st)
{
    (void)st;
    struct arena a = {0};
    const struct yt_node *spec[2] = {yaml(&a, "{managed: 'true', zone: a}"), yaml(&a, "{zone: b, rack: r1}")};
    struct run_label_map m = {0};
    int would;
    struct run_label_edit e1[] = {{"x", "1"}, {"y", "2"}, {"x", "3"}, {"zone", NULL}};
    assert_int_equal(run_labels_apply(&m, e1, 4, spec, 8, &would), 0);
    assert_int_equal(m.n, 3); /* x, y, and zone's removal (it hides the spec's) */
    assert_string_equal(run_labels_get(&m, "x")->value, "3");
    assert_null(run_labels_get(&m, "zone")->value);
    char *s = labels_json(&m, spec);
    assert_string_equal(s, "{\"managed\":\"true\",\"rack\":\"r1\",\"x\":\"3\",\"y\":\"2\"}");
    free(s);
    /* a removal of a run-time key that hides nothing leaves the map; order and index stay */
    struct run_label_edit e2[] = {{"x", NULL}, {"z", "4"}};
    assert_int_equal(run_labels_apply(&m, e2, 2, spec, 8, &would), 0);
    assert_int_equal(m.n, 3);
    assert_null(run_labels_get(&m, "x"));
    assert_string_equal(m.v[0].key, "y");
    assert_string_equal(m.v[2].key, "z");
    assert_string_equal(run_labels_get(&m, "z")->value, "4");
    /* past the limit: nothing changes, *would says the count */
    struct run_label_edit e3[] = {{"y", "5"}, {"p", "1"}, {"q", "1"}};
    assert_int_equal(run_labels_apply(&m, e3, 3, spec, 4, &would), E2BIG);
    assert_int_equal(would, 5);
    assert_string_equal(run_labels_get(&m, "y")->value, "2");
    assert_null(run_labels_get(&m, "p"));
    /* at the limit with a drop and an add in one request: fits */
    struct run_label_edit e4[] = {{"z", NULL}, {"p", "1"}, {"q", "1"}};
    assert_int_equal(run_labels_apply(&m, e4, 3, spec, 4, &would), 0);
    assert_int_equal(m.n, 4);
    run_labels_free(&m);
    arena_free(&a);
}

static void test_labels_many(void **st)
{
    (void)st;
    const struct yt_node *spec[2] = {NULL, NULL};
    struct run_label_map m = {0};
    static char keys[RUN_LABELS_MAX][16];
    struct run_label_edit *e = calloc(RUN_LABELS_MAX, sizeof *e);
    for (int i = 0; i < RUN_LABELS_MAX; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        e[i] = (struct run_label_edit){keys[i], "v"};
    }
    int would;
    /* in pieces, so that the index grows and is rebuilt between requests */
    for (int at = 0; at < RUN_LABELS_MAX; at += 100) {
        int n = RUN_LABELS_MAX - at < 100 ? RUN_LABELS_MAX - at : 100;
        assert_int_equal(run_labels_apply(&m, e + at, n, spec, RUN_LABELS_MAX, &would), 0);
    }
    assert_int_equal(m.n, RUN_LABELS_MAX);
    for (int i = 0; i < RUN_LABELS_MAX; i++)
        assert_non_null(run_labels_get(&m, keys[i]));
    assert_null(run_labels_get(&m, "k1024"));
    /* remove every other one: compaction and a rebuilt index */
    for (int i = 0; i < RUN_LABELS_MAX; i++)
        e[i].value = i % 2 ? NULL : "w";
    assert_int_equal(run_labels_apply(&m, e, RUN_LABELS_MAX, spec, RUN_LABELS_MAX, &would), 0);
    assert_int_equal(m.n, RUN_LABELS_MAX / 2);
    for (int i = 0; i < RUN_LABELS_MAX; i++)
        if (i % 2)
            assert_null(run_labels_get(&m, keys[i]));
        else
            assert_string_equal(run_labels_get(&m, keys[i])->value, "w");
    free(e);
    run_labels_free(&m);
}

static void test_jsontext(void **st)
{
    (void)st;
    assert_int_equal(jsontext_nul_escape("{\"a\\u0000b\":1}", 14), 3);
    assert_int_equal(jsontext_nul_escape("{\"a\\\\u0000\":1}", 14), -1); /* "\\" then u0000 */
    assert_int_equal(jsontext_nul_escape("{\"a\\u00001\":1}", 14), 3);
    assert_int_equal(jsontext_nul_escape("\\u000", 5), -1);
    const struct {
        const char *s;
        long bad;
    } u[] = {
        {"caf\xc3\xa9", -1},         {"\xe2\x82\xac", -1},     {"\xf0\x9f\x98\x80", -1}, {"\xf4\x8f\xbf\xbf", -1},
        {"a\xff", 1},                {"\xc0\xaf", 0},          {"\xc1\xbf", 0},          {"\xe0\x80\xaf", 0},
        {"\xed\xa0\x80", 0},         {"\xf4\x90\x80\x80", 0},  {"\xf5\x80\x80\x80", 0},  {"ab\xc3", 2},
        {"\xe2\x82", 0},             {"\xe2\x28\xa1", 0},      {"\x80", 0},
    };
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        assert_int_equal(jsontext_bad_utf8(u[i].s, strlen(u[i].s)), u[i].bad);
}

static void put(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    fchmod(fd, mode);
    close(fd);
}

static void test_trace_file(void **st)
{
    (void)st;
    char dir[] = "/tmp/hwemu-tf.XXXXXX", p[512], err[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/td", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/td/sub", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/secret", dir);
    put(p, "SECRET-LINE\n", 0600);
    snprintf(p, sizeof p, "%s/td/a.jsonl", dir);
    put(p, "{\"n\":1}", 0640);
    snprintf(p, sizeof p, "%s/td/sub/2.jsonl", dir);
    put(p, "two\n", 0644);
    snprintf(p, sizeof p, "%s/td/sub/1.jsonl", dir);
    put(p, "one", 0600);
    char link[512], target[512];
    snprintf(link, sizeof link, "%s/td/link.jsonl", dir);
    snprintf(target, sizeof target, "%s/secret", dir);
    assert_int_equal(symlink(target, link), 0);
    snprintf(link, sizeof link, "%s/td/up", dir);
    assert_int_equal(symlink(dir, link), 0);
    snprintf(p, sizeof p, "%s/td/fifo.jsonl", dir);
    assert_int_equal(mkfifo(p, 0644), 0);
    char td[512];
    snprintf(td, sizeof td, "%s/td", dir);
    char *text;
    size_t len;
    unsigned mode;
    assert_int_equal(trace_file_read(td, "a.jsonl", 1 << 20, &text, &len, &mode, err, sizeof err), TRACE_FILE_OK);
    assert_string_equal(text, "{\"n\":1}\n");
    assert_int_equal(mode, 0640);
    free(text);
    assert_int_equal(trace_file_read(td, "sub", 1 << 20, &text, &len, &mode, err, sizeof err), TRACE_FILE_OK);
    assert_string_equal(text, "one\ntwo\n"); /* name order */
    assert_int_equal(mode, 0600);           /* both files' bits ANDed */
    free(text);
    char abs[600];
    snprintf(abs, sizeof abs, "%s/./sub/1.jsonl", td);
    assert_int_equal(trace_file_read(td, abs, 1 << 20, &text, &len, &mode, err, sizeof err), TRACE_FILE_OK);
    free(text);
    const struct {
        const char *name;
        enum trace_file_status st;
    } no[] = {{"../secret", TRACE_FILE_REFUSED},       {"sub/../../secret", TRACE_FILE_REFUSED},
              {"link.jsonl", TRACE_FILE_REFUSED},      {"up/secret", TRACE_FILE_REFUSED},
              {"/etc/passwd", TRACE_FILE_REFUSED},     {"fifo.jsonl", TRACE_FILE_NOT_REGULAR},
              {"nope.jsonl", TRACE_FILE_MISSING},      {".", TRACE_FILE_NOT_REGULAR}};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        assert_int_equal(trace_file_read(td, no[i].name, 1 << 20, &text, &len, &mode, err, sizeof err), no[i].st);
        assert_null(text);
        assert_null(strstr(err, "SECRET"));
    }
    assert_int_equal(trace_file_read(td, "a.jsonl", 4, &text, &len, &mode, err, sizeof err), TRACE_FILE_TOO_BIG);
    assert_int_equal(trace_file_read(NULL, "a.jsonl", 1 << 20, &text, &len, &mode, err, sizeof err),
                     TRACE_FILE_REFUSED);
    assert_non_null(strstr(err, "--trace-dir"));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_trace_quiet(void **st)
{
    (void)st;
    const char *t = "{\"type\":\"job\",\"jobId\":\"a\",\"intentClass\":\"MARKER1\",\"submitTimeOffsetSec\":-7,"
                    "\"podTemplate\":{\"requests\":{\"cpu\":\"MARKER2\",\"memory\":\"MARKER3\"}},"
                    "\"workloadClass\":{\"cpu\":\"MARKER4\"}}\n";
    struct trace tr;
    struct diag loud = {0}, quiet = {0};
    assert_int_equal(trace_parse(&tr, "t.jsonl", t, strlen(t), &loud), -1);
    assert_int_equal(trace_parse_quiet(&tr, "t.jsonl", t, strlen(t), &quiet), -1);
    assert_int_equal(loud.count, quiet.count);
    assert_true(loud.count >= 5);
    int marked = 0;
    for (int i = 0; i < loud.count; i++) {
        marked += strstr(loud.msgs[i], "MARKER") != NULL || strstr(loud.msgs[i], "-7") != NULL;
        assert_null(strstr(quiet.msgs[i], "MARKER"));
        assert_null(strstr(quiet.msgs[i], "-7"));
        assert_int_equal(strncmp(quiet.msgs[i], "t.jsonl:1: ", 11), 0);
    }
    assert_int_equal(marked, loud.count); /* every loud message quoted a value: each was hidden */
    diag_free(&loud);
    diag_free(&quiet);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labels_apply), cmocka_unit_test(test_labels_many), cmocka_unit_test(test_jsontext),
        cmocka_unit_test(test_trace_file),   cmocka_unit_test(test_trace_quiet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
