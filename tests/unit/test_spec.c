/* Unit tests of engine/model/spec.c and engine/model/nodeobject.c: pool expansion, baseLoad merging,
 * overrides, and the Node object's labels and resources. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "diag.h"
#include "nodeobject.h"
#include "profiles_fixture.h"
#include "spec.h"
#include "ytree.h"


static const char spec_text[] =
    "apiVersion: sim.joulie.io/v1alpha1\nkind: ClusterSpec\nmetadata: {name: c1}\nspec:\n"
    "  defaults:\n    baseLoad: {cpuUtil: 0.5, gpuUtil: 0.25, memoryIntensity: 0.2, cpuClass: cpu.io_bound}\n"
    "  pools:\n"
    "  - {name: a, profile: intel-xeon-2s-rapl, count: 2, startIndex: 5, baseLoad: {cpuUtil: 0.75}}\n"
    "  - {name: g, prefix: gpu, profile: nvidia-h100-sxm-8gpu, count: 1, overrides: {gpus: {persistenceMode: disabled, "
    "limits: {defaultW: 500}}}}\n";

static void test_expand_and_baseload(void **st)
{
    struct cluster_spec s;
    struct diag d = {0};
    int rc = spec_load(&s, "mem.yaml", spec_text, sizeof spec_text - 1, &ps, &d);
    diag_print(&d, stderr);
    assert_int_equal(rc, 0);
    assert_int_equal(s.nnodes, 3);
    assert_string_equal(s.nodes[0].name, "a-5");
    assert_string_equal(s.nodes[1].name, "a-6");
    assert_string_equal(s.nodes[2].name, "gpu-0");
    assert_non_null(spec_find_node(&s, "gpu-0"));
    assert_null(spec_find_node(&s, "a-0"));
    const struct spec_pool *a = &s.pools[0];
    assert_true(a->base.cpu_util == 0.75);         /* the pool's field */
    assert_true(a->base.gpu_util == 0.25);         /* the defaults' field */
    assert_string_equal(a->base.cpu_class, "cpu.io_bound");
    assert_true(s.facility.ambient_c == 20 && s.facility.period_h == 24);
    /* overrides land in the pool's tree only, with a source naming the spec */
    const struct spec_pool *g = &s.pools[1];
    assert_string_equal(prof_str(g->tree, "gpus.persistenceMode", ""), "disabled");
    assert_true(prof_num(g->tree, "gpus.limits.defaultW", 0) == 500);
    assert_non_null(strstr(yt_path(g->tree, "gpus.limits.defaultW")->src, "cluster spec override at mem.yaml:9"));
    assert_true(prof_num(g->tree, "gpus.limits.maxW", 0) == 700);
    const struct profile *sxm = profiles_find(&ps, "nvidia-h100-sxm-8gpu");
    assert_string_not_equal(prof_str(sxm->tree, "gpus.persistenceMode", ""), "disabled");
    spec_free(&s);
}

static void test_node_object(void **st)
{
    struct cluster_spec s;
    struct diag d = {0};
    assert_int_equal(spec_load(&s, "mem.yaml", spec_text, sizeof spec_text - 1, &ps, &d), 0);
    struct arena a = {0};
    struct node_object o;
    nodeobject_for_spec_node(&a, &s, &s.nodes[2], &o);
    assert_string_equal(kv_get(&o.labels, "nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
    assert_string_equal(kv_get(&o.labels, "nvidia.com/cuda.driver-version.full"), "590.48.01");
    assert_string_equal(kv_get(&o.labels, "sim.joulie.io/pool"), "g");
    assert_string_equal(kv_get(&o.labels, "kubernetes.io/hostname"), "gpu-0");
    assert_string_equal(kv_get(&o.capacity, "nvidia.com/gpu"), "8");
    assert_string_equal(kv_get(&o.annotations, "sim.joulie.io/profile"), "nvidia-h100-sxm-8gpu");
    assert_string_equal(kv_get(&o.annotations, "kwok.x-k8s.io/node"), "fake");
    assert_int_equal(o.ntaints, 2); /* the profile's nvidia.com/gpu taint, then KWOK's */
    assert_string_equal(o.taints[0].key, "nvidia.com/gpu");
    assert_string_equal(o.taints[1].key, "kwok.x-k8s.io/node");
    arena_free(&a);
    spec_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand_and_baseload),
        cmocka_unit_test(test_node_object),
    };
    return cmocka_run_group_tests(tests, profiles_setup, profiles_teardown);
}
