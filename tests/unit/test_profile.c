/* Unit tests of engine/model/profile.c: builtins, provenance resolution and the extends merge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "profile.h"
#include "ytree.h"

static char dir[] = "/tmp/hwemu-test-profile-XXXXXX";

static void write_file(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_builtins_load(void **st)
{
    struct profile_set ps = {0};
    struct diag d = {0};
    assert_int_equal(profiles_load(&ps, NULL, &d), 0);
    assert_int_equal(d.count, 0);
    const char *names[] = {"intel-xeon-2s-rapl", "intel-xeon-6530-2s-rapl", "amd-epyc-2s-energy-only",
                           "amd-epyc-9534-2s-energy-only", "amd-epyc-2s-hsmp", "vm-no-powercap",
                           "intel-xeon6-2s-tpmi", "nvidia-h100-nvl-8gpu", "nvidia-h100-sxm-8gpu",
                           "nvidia-h100-sxm-4gpu", "nvidia-l40s-4gpu", "amd-instinct-mi300x-8gpu",
                           "amd-radeon-pro-w7900-4gpu", "intel-flex-170-4gpu", "amd-epyc-7763-2s-energy-only", NULL};
    for (int i = 0; names[i]; i++) {
        const struct profile *p = profiles_find(&ps, names[i]);
        assert_non_null(p);
        assert_true(p->builtin);
    }
    /* A GPU profile keeps its host's CPU block. */
    const struct profile *sxm = profiles_find(&ps, "nvidia-h100-sxm-8gpu");
    assert_int_equal(prof_int(sxm->tree, "cpu.coresPerSocket", 0), 24);
    assert_string_equal(prof_str(sxm->tree, "gpus.vendor", ""), "nvidia");
    assert_string_equal(yt_path(sxm->tree, "cpu.coresPerSocket")->src, "corpus:corpus#cpuinfo");
    assert_int_equal(prof_int(profiles_find(&ps, "intel-xeon6-2s-tpmi")->tree, "cpu.sockets", 0), 2);
    profiles_free(&ps);
}

static void test_provenance_and_merge(void **st)
{
    write_file("parent-box.yaml",
               "schemaVersion: 1\nname: parent-box\ndescription: parent\n"
               "sources:\n  a: {kind: published, ref: sheet A}\n  b: {kind: corpus, ref: capture B}\n"
               "node:\n  labels:\n    g: {src: 'assumed:x', values: {k1: v1, k2: v2}}\n"
               "  capacity: {src: 'published:a', cpu: 4, memoryKi: 1000}\n"
               "cpu:\n  src: 'corpus:b'\n  vendorID: GenuineIntel\n  modelName: {v: P, src: 'published:a#p1'}\n"
               "  sockets: 1\n  coresPerSocket: 2\n  threadsPerCore: 2\n"
               "cpufreq:\n  src: 'published:a'\n  driver: acpi-cpufreq\n  governor: schedutil\n"
               "  availableGovernors: 'performance schedutil'\n  cpuinfoMinKHz: 1000\n  cpuinfoMaxKHz: 3000\n"
               "  availableKHz: [3000, 2000, 1000]\n");
    write_file("child-box.yaml",
               "schemaVersion: 1\nname: child-box\nextends: parent-box\ndescription: child\n"
               "sources:\n  a: {kind: published, ref: sheet A2}\n"
               "node:\n  labels:\n    g: {src: 'assumed:y', values: {k3: v3}}\n"
               "cpufreq:\n  governor: {v: performance, src: 'derived:b'}\n"
               "  availableKHz: {v: [3000], src: 'published:a'}\n");
    struct profile_set ps = {0};
    struct diag d = {0};
    int rc = profiles_load(&ps, dir, &d);
    diag_print(&d, stderr);
    assert_int_equal(rc, 0);
    const struct profile *c = profiles_find(&ps, "child-box");
    assert_non_null(c);
    assert_string_equal(c->extends, "parent-box");
    const struct yt_node *t = c->tree;
    /* values: child wins, parent kept, sources resolved per file */
    assert_string_equal(prof_str(t, "cpufreq.governor", ""), "performance");
    assert_string_equal(yt_path(t, "cpufreq.governor")->src, "derived:b");
    assert_string_equal(prof_str(t, "cpufreq.driver", ""), "acpi-cpufreq");
    assert_string_equal(yt_path(t, "cpufreq.driver")->src, "published:a");
    assert_string_equal(yt_path(t, "cpu.modelName")->src, "published:a#p1"); /* {v, src} beats mapping src */
    assert_string_equal(yt_path(t, "cpu.vendorID")->src, "corpus:b");
    /* lists are replaced whole */
    assert_int_equal(yt_path(t, "cpufreq.availableKHz")->n, 1);
    /* a source entry and a label group are replaced whole */
    assert_string_equal(prof_str(t, "sources.a.ref", ""), "sheet A2");
    assert_string_equal(prof_str(t, "sources.b.ref", ""), "capture B");
    assert_null(yt_path(t, "node.labels.g.values.k1"));
    assert_string_equal(prof_str(t, "node.labels.g.values.k3", ""), "v3");
    /* the header is never inherited */
    assert_null(yt_get(t, "name"));
    assert_string_equal(c->description, "child");
    profiles_free(&ps);
    diag_free(&d);
}

static int setup(void **st)
{
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins_load),
        cmocka_unit_test(test_provenance_and_merge),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
