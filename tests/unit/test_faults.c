/* Unit tests of the faults' pieces that no program sees whole: a fault parsed from YAML and from
 * JSON read as YAML (engine/model/fault.c: defaults, devices, parameters, every error with its
 * line and column), state/faults written by the engine (engine/runtime/node.c node_faults_text)
 * and read back by the segment's readers (engine/segment/seg_faults.c), whatever the mix of
 * faults, and which stores a locked package refuses. The faults as tools see them are
 * tests/cli/test_faults.sh's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "arena.h"
#include "diag.h"
#include "fault.h"
#include "node.h"
#include "seg_faults.h"
#include "ytree.h"

/* Parses text as one fault: the result, with the messages in *d. */
static bool parse(const char *text, struct fault_def *f, struct arena *a, struct diag *d)
{
    bool empty = false;
    struct yt_node *root = yt_parse(a, "t.yaml", text, strlen(text), d, &empty);
    assert_non_null(root);
    return fault_parse(f, a, root, "fault", NULL, d);
}

static bool has(const struct diag *d, const char *s)
{
    for (int i = 0; i < d->count; i++)
        if (strstr(d->msgs[i], s))
            return true;
    return false;
}

static void test_defaults(void **st)
{
    struct arena a = {0};
    struct diag d = {0};
    struct fault_def f;
    assert_true(parse("{kind: bmc-timeout, nodes: n-0}", &f, &a, &d));
    assert_int_equal(f.kind, FK_BMC_TIMEOUT);
    assert_int_equal(f.device, FD_BMC); /* the kind's device */
    assert_true(f.value == 2000);       /* delayMs' default */
    assert_false(f.has_at);
    assert_false(f.has_duration);       /* until cleared */
    assert_int_equal(f.nnodes, 1);      /* one name is a list of one */
    assert_true(f.fraction == 1);
    assert_true(parse("{kind: hwmon-error}", &f, &a, &d));
    assert_int_equal(f.err, EIO);
    assert_true(parse("{kind: write-refused}", &f, &a, &d));
    assert_int_equal(f.err, ENODATA);
    assert_true(parse("{kind: gpu-power-brake}", &f, &a, &d));
    assert_true(isnan(f.value)); /* the GPU's minimum limit */
    assert_int_equal(f.index, -1);  /* every GPU */
    assert_int_equal(d.count, 0);
    diag_free(&d);
    arena_free(&a);
}

static void test_json_record(void **st)
{
    struct arena a = {0};
    struct diag d = {0};
    struct fault_def f;
    assert_true(parse("{\"id\":\"x.1\",\"kind\":\"gpu-lost\",\"device\":\"gpu3\",\"atSec\":10,\"durationSec\":2.5,"
                      "\"pools\":[\"p\",\"q\"],\"labels\":{\"rack\":\"r1\"},\"fraction\":0.5,\"seed\":7}",
                      &f, &a, &d));
    assert_string_equal(f.id, "x.1");
    assert_int_equal(f.device, FD_GPU);
    assert_int_equal(f.index, 3);
    assert_true(f.has_at && f.at_s == 10 && f.has_duration && f.duration_s == 2.5);
    assert_int_equal(f.npools, 2);
    assert_string_equal(f.label_keys[0], "rack");
    assert_string_equal(f.label_values[0], "r1");
    assert_true(f.fraction == 0.5);
    assert_int_equal((int)f.seed, 7);
    assert_true(parse("{\"kind\":\"hwmon-error\",\"params\":{\"errno\":\"enodata\"}}", &f, &a, &d));
    assert_int_equal(f.err, ENODATA);
    assert_true(parse("{\"kind\":\"write-refused\",\"params\":{\"errno\":\"16\"}}", &f, &a, &d));
    assert_int_equal(f.err, EBUSY);
    char dev[32];
    f = (struct fault_def){.device = FD_PACKAGE, .index = 1};
    assert_string_equal(fault_device_text(&f, dev, sizeof dev), "package1");
    assert_int_equal(d.count, 0);
    diag_free(&d);
    arena_free(&a);
}

static void test_errors(void **st)
{
    struct arena a = {0};
    struct diag d = {0};
    struct fault_def f;
    assert_false(parse("{kind: gpu-lots}", &f, &a, &d));
    assert_true(has(&d, "t.yaml:1:8: fault: kind: unknown kind \"gpu-lots\"; did you mean \"gpu-lost\"?"));
    assert_false(parse("{kind: bmc-slow, device: gpu1}", &f, &a, &d));
    assert_true(has(&d, "t.yaml:1:26: fault: device: bmc-slow cannot strike gpu (expected bmc)"));
    assert_false(parse("{kind: bmc-slow, params: {delayMs: 999999}}", &f, &a, &d));
    assert_true(has(&d, "fault: params.delayMs: 999999 is out of range (expected 0 to 120000)"));
    assert_false(parse("{kind: bmc-slow, params: {errno: EIO}}", &f, &a, &d));
    assert_true(has(&d, "fault: params.errno: unknown parameter of bmc-slow (expected delayMs)"));
    assert_false(parse("{kind: gpu-lost, params: {x: 1}}", &f, &a, &d));
    assert_true(has(&d, "fault: params.x: gpu-lost takes no parameters"));
    assert_true(parse("{kind: gpu-lost, device: gpu}", &f, &a, &d) && f.index == -1);
    assert_false(parse("{kind: gpu-lost, atSec: -1, durationSec: 0, fraction: 2, seed: -3, id: 'a b'}", &f, &a, &d));
    assert_true(has(&d, "fault: atSec: -1 is out of range"));
    assert_true(has(&d, "fault: durationSec: 0 is out of range"));
    assert_true(has(&d, "fault: fraction: 2 is out of range"));
    assert_true(has(&d, "fault: seed: expected a whole number 0 or above"));
    assert_true(has(&d, "fault: id: \"a b\" is not an id"));
    assert_false(parse("{knd: gpu-lost}", &f, &a, &d));
    assert_true(has(&d, "fault: knd: unknown field; did you mean \"kind\"?"));
    assert_true(has(&d, "fault: kind: required"));
    assert_false(parse("[1, 2]", &f, &a, &d));
    assert_true(has(&d, "fault: expected a mapping"));
    diag_free(&d);
    arena_free(&a);
}

/* What the engine writes, the readers read back: every mix of faults fits a value. */
static void test_state_text(void **st)
{
    char t[SEG_TEXT_MAX];
    struct seg_faults r;
    struct node_faults none = {0};
    node_faults_text(&none, t, sizeof t);
    assert_string_equal(t, "\n");
    assert_false(seg_faults_parse(t, strlen(t), &r));
    struct node_faults all = {.gpu_lost = 0xffff, .bmc = 't', .bmc_delay_ms = 120000, .hwmon_err = ETIMEDOUT,
                              .write_err = EOPNOTSUPP, .pkg_locked = 3, .inlet_c = 10, .redfish_retry_s = 5};
    node_faults_text(&all, t, sizeof t);
    assert_string_equal(t, "gl=ffff bmc=t120000 hw=110 wr=95 lk=3\n");
    assert_true(seg_faults_parse(t, strlen(t), &r));
    assert_int_equal(r.gpu_lost, 0xffff);
    assert_int_equal(r.bmc, 't');
    assert_int_equal(r.bmc_ms, 120000);
    assert_int_equal(r.hwmon_err, ETIMEDOUT);
    assert_int_equal(r.write_err, EOPNOTSUPP);
    assert_int_equal(r.pkg_locked, 3);
    /* what a reader does not understand is no fault */
    assert_false(seg_faults_parse("zz=1 bmc=x5 gl", 14, &r));
    assert_true(seg_faults_parse("bmc=s50", 7, &r) && r.bmc == 's' && r.bmc_ms == 50);
}

static void test_locked(void **st)
{
    const char *z = "sys/devices/virtual/powercap/intel-rapl/intel-rapl:";
    char p[160];
    snprintf(p, sizeof p, "%s1/constraint_0_power_limit_uw", z);
    assert_int_equal(seg_faults_locked_errno(2, p), ENODATA);
    assert_int_equal(seg_faults_locked_errno(1, p), 0); /* package 0 locked, not 1 */
    snprintf(p, sizeof p, "%s1/constraint_1_time_window_us", z);
    assert_int_equal(seg_faults_locked_errno(2, p), ENODATA);
    snprintf(p, sizeof p, "%s1/enabled", z);
    assert_int_equal(seg_faults_locked_errno(2, p), ENOSYS);
    snprintf(p, sizeof p, "%s1/intel-rapl:1:0/constraint_0_power_limit_uw", z); /* a subzone */
    assert_int_equal(seg_faults_locked_errno(2, p), 0);
    snprintf(p, sizeof p, "%s1/constraint_0_name", z);
    assert_int_equal(seg_faults_locked_errno(2, p), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults), cmocka_unit_test(test_json_record), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_state_text), cmocka_unit_test(test_locked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
