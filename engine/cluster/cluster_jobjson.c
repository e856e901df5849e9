/* cluster_jobjson: a trace job as a batch/v1 Job; see cluster_jobjson.h.
 * The pod follows the original simulator's (joulie-k8s/Joulie simulator, its pod injection):
 * container "work", requests cpu and memory, GPUs in requests and limits, restartPolicy Never,
 * the KWOK taint tolerated, performance pods kept off eco Nodes by a required node affinity, the
 * job's identity in sim.joulie.io annotations. Differences, said in docs/kubernetes.md: the pod
 * requests the whole CPUs the job holds (ceil of the trace's request), so that the scheduler's
 * count of a Node's free CPUs is the engine's; it selects the Nodes of the spec's cluster
 * (sim.joulie.io/cluster) instead of type=kwok and the vendor's PCI label (the GPU resource names
 * already keep a GPU pod on its vendor's Nodes); and it sits in a Job of its own. */
#include "cluster_jobjson.h"

#include "run.h"
#include "trace.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
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

/* labels and annotations: the same on the Job and its pod template */
static void add_meta(cJSON *meta, const char *run_id, int index, const struct trace_job *t)
{
    char k[16];
    snprintf(k, sizeof k, "%d", index);
    cJSON *l = cJSON_AddObjectToObject(meta, "labels");
    cJSON_AddStringToObject(l, CLUSTER_POD_PART_OF_KEY, CLUSTER_POD_PART_OF);
    cJSON_AddStringToObject(l, CLUSTER_POD_RUN_KEY, run_id); /* run-<UTC time>-<n>: a valid label value */
    cJSON_AddStringToObject(l, CLUSTER_POD_INDEX_KEY, k);
    cJSON_AddStringToObject(l, "joulie.io/workload-class", job_class_names[t->cls]);
    cJSON *a = cJSON_AddObjectToObject(meta, "annotations");
    cJSON_AddStringToObject(a, "joulie.io/workload-class", job_class_names[t->cls]);
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

cJSON *cluster_job_json(const char *run_id, int index, const struct trace_job *t, const char *cluster)
{
    char name[64], q[32];
    cluster_job_name(run_id, t->id, name, sizeof name);
    cJSON *job = cJSON_CreateObject();
    cJSON_AddStringToObject(job, "apiVersion", "batch/v1");
    cJSON_AddStringToObject(job, "kind", "Job");
    cJSON *meta = cJSON_AddObjectToObject(job, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", t->ns);
    add_meta(meta, run_id, index, t);
    cJSON *spec = cJSON_AddObjectToObject(job, "spec");
    cJSON_AddNumberToObject(spec, "completions", 1);
    cJSON_AddNumberToObject(spec, "parallelism", 1);
    cJSON_AddNumberToObject(spec, "backoffLimit", 0); /* a job runs once, as in the trace */
    cJSON *tpl = cJSON_AddObjectToObject(spec, "template");
    add_meta(cJSON_AddObjectToObject(tpl, "metadata"), run_id, index, t);
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
