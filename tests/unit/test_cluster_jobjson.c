/* Unit tests of engine/cluster/cluster_jobjson.c: a trace job (read by the real trace loader) as
 * the batch/v1 Job hwemu creates. Expected values: Kubernetes' rules for names (a DNS-1123 label:
 * [a-z0-9-], alphanumeric at both ends; a Job's name at most 63 characters, since the Job
 * controller copies it into the batch.kubernetes.io/job-name label), for extended resources
 * (requests equal to limits), and the original simulator's pods (github.com/joulie-k8s/Joulie
 * simulator, its pod injection: the KWOK toleration, performance pods' joulie.io/power-profile
 * NotIn [eco]). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_jobjson.h"
#include "diag.h"
#include "trace.h"

#include <cjson/cJSON.h>

static const char trace_text[] =
    "{\"type\":\"job\",\"jobId\":\"Perf_GPU.job/1\",\"namespace\":\"ml\",\"intentClass\":\"performance\","
    "\"podTemplate\":{\"requests\":{\"cpu\":\"1.5\",\"memory\":\"4Gi\",\"nvidia.com/gpu\":\"2\"}},\"work\":{\"cpuUnits\":5}}\n"
    "{\"type\":\"job\",\"jobId\":\"std\",\"podTemplate\":{\"requests\":{\"cpu\":\"500m\"}}}\n"
    "{\"type\":\"job\",\"jobId\":\"amd\",\"podTemplate\":{\"requests\":{\"amd.com/gpu\":\"1\"}}}\n"
    /* a workload's two identical trials and its controller, which differs: two groups */
    "{\"type\":\"job\",\"jobId\":\"w-trial-1\",\"workloadId\":\"w\",\"submitTimeOffsetSec\":3,\"podTemplate\":{\"requests\":{\"cpu\":\"4\"}}}\n"
    "{\"type\":\"job\",\"jobId\":\"w-ctl\",\"workloadId\":\"w\",\"submitTimeOffsetSec\":3,\"podTemplate\":{\"requests\":{\"cpu\":\"1\"}}}\n"
    "{\"type\":\"job\",\"jobId\":\"w-trial-2\",\"workloadId\":\"w\",\"submitTimeOffsetSec\":3,\"podTemplate\":{\"requests\":{\"cpu\":\"4\"}}}\n"
    /* the same requests without a workload: never grouped */
    "{\"type\":\"job\",\"jobId\":\"lone-1\",\"submitTimeOffsetSec\":3,\"podTemplate\":{\"requests\":{\"cpu\":\"4\"}}}\n"
    "{\"type\":\"job\",\"jobId\":\"lone-2\",\"submitTimeOffsetSec\":3,\"podTemplate\":{\"requests\":{\"cpu\":\"4\"}}}\n";

static struct trace tr;

static int setup(void **state)
{
    struct diag d = {0};
    assert_int_equal(trace_parse(&tr, "t.jsonl", trace_text, strlen(trace_text), &d), 0);
    diag_free(&d);
    return 0;
}

static int teardown(void **state)
{
    trace_free(&tr);
    return 0;
}

static const struct trace_job *job(const char *id)
{
    for (int k = 0; k < tr.njobs; k++)
        if (!strcmp(tr.jobs[k].id, id))
            return &tr.jobs[k];
    fail_msg("no job %s", id);
    return NULL;
}

static const cJSON *at(const cJSON *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save, *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
        o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(k)) : cJSON_GetObjectItemCaseSensitive(o, k);
    return o;
}

static const char *str(const cJSON *o, const char *path)
{
    const cJSON *v = at(o, path);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void dns_label(const char *s)
{
    size_t n = strlen(s);
    assert_true(n > 0 && n <= 63);
    for (size_t i = 0; i < n; i++)
        assert_true((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-');
    assert_true(s[0] != '-' && s[n - 1] != '-');
}

static void test_names(void **state)
{
    char a[64], b[64], c[64], d[64];
    cluster_job_name("run-1", "Perf_GPU.job/1", a, sizeof a);
    assert_int_equal(strncmp(a, "sim-perf-gpu-job-1-", 19), 0);
    dns_label(a);
    cluster_job_name("run-1", "perf-gpu-job-1", b, sizeof b); /* reads alike once lowercase: another hash */
    dns_label(b);
    assert_string_not_equal(a, b);
    cluster_job_name("run-2", "Perf_GPU.job/1", c, sizeof c); /* another run: another Job */
    assert_string_not_equal(a, c);
    cluster_job_name("run-1", "---", d, sizeof d); /* nothing usable: the hash alone */
    dns_label(d);
    assert_int_equal(strlen(d), 12);
    char longid[200];
    memset(longid, 'x', sizeof longid - 1);
    longid[sizeof longid - 1] = 0;
    cluster_job_name("run-1", longid, d, sizeof d);
    dns_label(d);
    assert_int_equal(strlen(d), 4 + 36 + 1 + 8);
}

/* the Job of one trace job */
static cJSON *one(const char *run, int index, const char *id, const char *cluster)
{
    const struct trace_job *m[1] = {job(id)};
    return cluster_job_json(run, &index, m, 1, cluster);
}

static void test_performance_gpu_job(void **state)
{
    cJSON *j = one("run-20261202T090000Z-1", 0, "Perf_GPU.job/1", "kuberuns");
    assert_string_equal(str(j, "apiVersion"), "batch/v1");
    assert_string_equal(str(j, "kind"), "Job");
    assert_string_equal(str(j, "metadata.namespace"), "ml");
    dns_label(str(j, "metadata.name"));
    assert_int_equal(at(j, "spec.completions")->valueint, 1);
    assert_string_equal(str(j, "spec.completionMode"), "Indexed");
    assert_int_equal(at(j, "spec.backoffLimit")->valueint, 0);
    const cJSON *t = at(j, "spec.template");
    const cJSON *labels = at(t, "metadata.labels");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(labels, "sim.joulie.io/run")->valuestring, "run-20261202T090000Z-1");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(labels, "joulie.io/workload-class")->valuestring, "performance");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(labels, "app.kubernetes.io/part-of")->valuestring,
                        "joulie-sim-workload");
    const cJSON *ann = at(t, "metadata.annotations");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ann, "joulie.io/workload-class")->valuestring, "performance");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ann, "sim.joulie.io/jobId")->valuestring, "Perf_GPU.job/1");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ann, "sim.joulie.io/job-indices")->valuestring, "0");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ann, "sim.joulie.io/jobIds")->valuestring, "[\"Perf_GPU.job/1\"]");
    const cJSON *ps = at(t, "spec");
    assert_string_equal(str(ps, "restartPolicy"), "Never");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(at(ps, "nodeSelector"), "sim.joulie.io/cluster")->valuestring,
                        "kuberuns");
    /* 1.5 cores hold 2 CPUs: the pod asks for 2; 4Gi = 4194304Ki; GPUs in requests and limits */
    const cJSON *rq = at(ps, "containers.0.resources.requests");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(rq, "cpu")->valuestring, "2");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(rq, "memory")->valuestring, "4194304Ki");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(rq, "nvidia.com/gpu")->valuestring, "2");
    assert_string_equal(
        cJSON_GetObjectItemCaseSensitive(at(ps, "containers.0.resources.limits"), "nvidia.com/gpu")->valuestring, "2");
    /* KWOK's taint and the GPU Nodes' tolerated */
    assert_int_equal(cJSON_GetArraySize(at(ps, "tolerations")), 2);
    assert_string_equal(str(ps, "tolerations.0.key"), "kwok.x-k8s.io/node");
    assert_string_equal(str(ps, "tolerations.0.effect"), "NoSchedule");
    assert_string_equal(str(ps, "tolerations.1.key"), "nvidia.com/gpu");
    const cJSON *e = at(ps, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0."
                            "matchExpressions.0");
    assert_non_null(e);
    assert_string_equal(str(e, "key"), "joulie.io/power-profile");
    assert_string_equal(str(e, "operator"), "NotIn");
    assert_string_equal(str(e, "values.0"), "eco");
    assert_int_equal(cJSON_GetArraySize(at(e, "values")), 1);
    cJSON_Delete(j);
}

static void test_standard_and_amd(void **state)
{
    cJSON *j = one("r", 1, "std", "c");
    const cJSON *ps = at(j, "spec.template.spec");
    assert_null(at(ps, "affinity"));   /* a standard job may go to eco nodes */
    assert_int_equal(cJSON_GetArraySize(at(ps, "tolerations")), 1);
    assert_null(at(ps, "containers.0.resources.limits"));
    assert_string_equal(str(ps, "containers.0.resources.requests.cpu"), "1"); /* 500m holds one CPU */
    assert_string_equal(str(ps, "containers.0.resources.requests.memory"), "65536Ki"); /* the 64Mi default */
    assert_string_equal(str(j, "metadata.namespace"), "default");
    cJSON_Delete(j);
    j = one("r", 2, "amd", "c");
    ps = at(j, "spec.template.spec");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(at(ps, "containers.0.resources.requests"), "amd.com/gpu")->valuestring,
                        "1");
    assert_string_equal(str(ps, "tolerations.1.key"), "amd.com/gpu");
    cJSON_Delete(j);
}

static void test_groups(void **state)
{
    const struct trace_job *t1 = job("w-trial-1"), *t2 = job("w-trial-2"), *ctl = job("w-ctl");
    assert_true(cluster_job_same_group(t1, t2));
    assert_false(cluster_job_same_group(t1, ctl)); /* other requests */
    assert_false(cluster_job_same_group(job("lone-1"), job("lone-2"))); /* no workload */
    assert_false(cluster_job_same_group(t1, job("std")));
    const struct trace_job *m[2] = {t1, t2};
    int ix[2] = {5, 7};
    cJSON *j = cluster_job_json("r", ix, m, 2, "c");
    assert_int_equal(at(j, "spec.completions")->valueint, 2);
    assert_int_equal(at(j, "spec.parallelism")->valueint, 2);
    const cJSON *ann = at(j, "spec.template.metadata.annotations");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ann, "sim.joulie.io/job-indices")->valuestring, "5,7");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ann, "sim.joulie.io/jobIds")->valuestring,
                        "[\"w-trial-1\",\"w-trial-2\"]");
    assert_null(cJSON_GetObjectItemCaseSensitive(ann, "sim.joulie.io/jobId")); /* no one job's */
    char name[64];
    cluster_job_name("r", "w-trial-1", name, sizeof name);
    assert_string_equal(str(j, "metadata.name"), name);
    cJSON_Delete(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_performance_gpu_job),
        cmocka_unit_test(test_standard_and_amd),
        cmocka_unit_test(test_groups),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
