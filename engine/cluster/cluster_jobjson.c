/* cluster_jobjson: a group of trace jobs as a batch/v1 Job; see cluster_jobjson.h.
 * The pod follows the original simulator's (joulie-k8s/Joulie simulator, its pod injection):
 * container "work", requests cpu and memory, GPUs in requests and limits, restartPolicy Never,
 * the KWOK taint tolerated, performance pods kept off eco Nodes by a required node affinity, the
 * job's identity in sim.joulie.io annotations. Differences, said in docs/kubernetes.md: the pod
 * requests the whole CPUs the job holds (ceil of the trace's request), so that the scheduler's
 * count of a Node's free CPUs is the engine's; it selects the Nodes of the spec's cluster
 * (sim.joulie.io/cluster) instead of type=kwok and the vendor's PCI label (the GPU resource names
 * already keep a GPU pod on its vendor's Nodes). A group is the jobs of one workload that one pod
 * template can describe (same submit time, namespace, class, requests): an Indexed Job, whose
 * pod k runs the group's k-th job; a workload whose pods differ (a launcher and its workers)
 * makes one Job for each kind. */
#include "cluster_jobjson.h"

#include "run.h"
#include "trace.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cluster_job_name(const char *run_id, const char *job_id, char *buf, size_t cap)
{
    uint32_t h = 2166136261u; /* FNV-1a over "run/job" */
    for (const char *p = run_id; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    h = (h ^ '/') * 16777619u;
    for (const char *p = job_id; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    char id[40];
    size_t n = 0;
    for (const char *p = job_id; *p && n < 36; p++) {
        char c = (char)tolower((unsigned char)*p);
        if (!isalnum((unsigned char)c))
            c = '-';
        if (c == '-' && (n == 0 || id[n - 1] == '-'))
            continue; /* no leading or doubled dash */
        id[n++] = c;
    }
    while (n && id[n - 1] == '-')
        n--;
    id[n] = 0;
    snprintf(buf, cap, "sim-%s%s%08x", id, n ? "-" : "", h);
}

static const char *gpu_resource(int vendor)
{
    switch (vendor) {
    case GPU_REQ_NVIDIA: return "nvidia.com/gpu";
    case GPU_REQ_AMD: return "amd.com/gpu";
    case GPU_REQ_INTEL: return "gpu.intel.com/i915";
    default: return NULL;
    }
}

bool cluster_job_same_group(const struct trace_job *a, const struct trace_job *b)
{
    return *a->workload_id && !strcmp(a->workload_id, b->workload_id) && a->submit_s == b->submit_s &&
           !strcmp(a->ns, b->ns) && a->cls == b->cls && a->cpus == b->cpus && a->mem_mib == b->mem_mib &&
           a->gpus == b->gpus && a->gpu_vendor == b->gpu_vendor && !strcmp(a->workload_type, b->workload_type) &&
           !strcmp(a->pod_role, b->pod_role) && a->u_cpu == b->u_cpu && a->u_gpu == b->u_gpu;
}

/* labels and annotations: the same on the Job and its pod template (t: the first member) */
static void add_meta(cJSON *meta, const char *run_id, const int *index, const struct trace_job *const *members,
                     int n)
{
    const struct trace_job *t = members[0];
    cJSON *l = cJSON_AddObjectToObject(meta, "labels");
    cJSON_AddStringToObject(l, CLUSTER_POD_PART_OF_KEY, CLUSTER_POD_PART_OF);
    cJSON_AddStringToObject(l, CLUSTER_POD_RUN_KEY, run_id); /* run-<UTC time>-<n>: a valid label value */
    cJSON_AddStringToObject(l, "joulie.io/workload-class", job_class_names[t->cls]);
    cJSON *a = cJSON_AddObjectToObject(meta, "annotations");
    cJSON_AddStringToObject(a, "joulie.io/workload-class", job_class_names[t->cls]);
    /* the members' places in the trace and their ids, in completion-index order */
    size_t cap = (size_t)n * 12 + 1, len = 0;
    char *ix = malloc(cap);
    cJSON *ids = cJSON_CreateArray();
    if (!ix || !ids)
        abort();
    ix[0] = 0;
    for (int k = 0; k < n; k++) {
        len += (size_t)snprintf(ix + len, cap - len, "%s%d", k ? "," : "", index[k]);
        cJSON_AddItemToArray(ids, cJSON_CreateString(members[k]->id));
    }
    cJSON_AddStringToObject(a, CLUSTER_POD_INDICES_KEY, ix);
    char *idtext = cJSON_PrintUnformatted(ids);
    if (!idtext)
        abort();
    cJSON_AddStringToObject(a, "sim.joulie.io/jobIds", idtext);
    free(idtext);
    free(ix);
    cJSON_Delete(ids);
    if (n == 1) /* as the original's pods carry it */
        cJSON_AddStringToObject(a, "sim.joulie.io/jobId", t->id);
    cJSON_AddStringToObject(a, "sim.joulie.io/workloadId", t->workload_id);
    cJSON_AddStringToObject(a, "sim.joulie.io/workloadType", t->workload_type);
    cJSON_AddStringToObject(a, "sim.joulie.io/podRole", t->pod_role);
    char v[32];
    snprintf(v, sizeof v, "%.1f", t->u_cpu * 100);
    cJSON_AddStringToObject(a, "sim.joulie.io/cpu-util-pct", v);
    snprintf(v, sizeof v, "%.1f", t->u_gpu * 100);
    cJSON_AddStringToObject(a, "sim.joulie.io/gpu-util-pct", v);
}

cJSON *cluster_job_json(const char *run_id, const int *index, const struct trace_job *const *members, int n,
                        const char *cluster)
{
    const struct trace_job *t = members[0];
    char name[64], q[32];
    cluster_job_name(run_id, t->id, name, sizeof name);
    cJSON *job = cJSON_CreateObject();
    cJSON_AddStringToObject(job, "apiVersion", "batch/v1");
    cJSON_AddStringToObject(job, "kind", "Job");
    cJSON *meta = cJSON_AddObjectToObject(job, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", t->ns);
    add_meta(meta, run_id, index, members, n);
    cJSON *spec = cJSON_AddObjectToObject(job, "spec");
    cJSON_AddStringToObject(spec, "completionMode", "Indexed");
    cJSON_AddNumberToObject(spec, "completions", n);
    cJSON_AddNumberToObject(spec, "parallelism", n); /* every job of the group is submitted now */
    cJSON_AddNumberToObject(spec, "backoffLimit", 0); /* a job runs once, as in the trace */
    cJSON *tpl = cJSON_AddObjectToObject(spec, "template");
    add_meta(cJSON_AddObjectToObject(tpl, "metadata"), run_id, index, members, n);
    cJSON *ps = cJSON_AddObjectToObject(tpl, "spec");
    cJSON_AddStringToObject(ps, "restartPolicy", "Never");
    cJSON_AddNumberToObject(ps, "terminationGracePeriodSeconds", 0);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(ps, "nodeSelector"), "sim.joulie.io/cluster", cluster);
    cJSON *tol = cJSON_CreateObject();
    cJSON_AddStringToObject(tol, "key", "kwok.x-k8s.io/node");
    cJSON_AddStringToObject(tol, "operator", "Exists");
    cJSON_AddStringToObject(tol, "effect", "NoSchedule");
    cJSON *tols = cJSON_AddArrayToObject(ps, "tolerations");
    cJSON_AddItemToArray(tols, tol);
    const char *g = gpu_resource(t->gpu_vendor);
    if (t->gpus && g) {
        /* GPU Nodes are tainted with their resource's name (the profiles', as the GPU operators
         * do): a GPU pod tolerates it, as the ExtendedResourceToleration admission plugin would
         * make it, and a CPU pod stays off GPU Nodes */
        tol = cJSON_CreateObject();
        cJSON_AddStringToObject(tol, "key", g);
        cJSON_AddStringToObject(tol, "operator", "Exists");
        cJSON_AddStringToObject(tol, "effect", "NoSchedule");
        cJSON_AddItemToArray(tols, tol);
    }
    if (t->cls == JOB_PERFORMANCE) {
        cJSON *expr = cJSON_CreateObject();
        cJSON_AddStringToObject(expr, "key", "joulie.io/power-profile");
        cJSON_AddStringToObject(expr, "operator", "NotIn");
        cJSON_AddItemToArray(cJSON_AddArrayToObject(expr, "values"), cJSON_CreateString("eco"));
        cJSON *term = cJSON_CreateObject();
        cJSON_AddItemToArray(cJSON_AddArrayToObject(term, "matchExpressions"), expr);
        cJSON *req = cJSON_AddObjectToObject(
            cJSON_AddObjectToObject(cJSON_AddObjectToObject(ps, "affinity"), "nodeAffinity"),
            "requiredDuringSchedulingIgnoredDuringExecution");
        cJSON_AddItemToArray(cJSON_AddArrayToObject(req, "nodeSelectorTerms"), term);
    }
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", "work");
    cJSON_AddStringToObject(c, "image", "registry.k8s.io/pause:3.10"); /* KWOK runs no container */
    cJSON *res = cJSON_AddObjectToObject(c, "resources");
    cJSON *rq = cJSON_AddObjectToObject(res, "requests");
    snprintf(q, sizeof q, "%d", t->cpus);
    cJSON_AddStringToObject(rq, "cpu", q);
    snprintf(q, sizeof q, "%lldKi", (long long)ceil(t->mem_mib * 1024));
    cJSON_AddStringToObject(rq, "memory", q);
    if (t->gpus && g) { /* extended resources: requests and limits must be equal */
        snprintf(q, sizeof q, "%d", t->gpus);
        cJSON_AddStringToObject(rq, g, q);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(res, "limits"), g, q);
    }
    cJSON_AddItemToArray(cJSON_AddArrayToObject(ps, "containers"), c);
    return job;
}
