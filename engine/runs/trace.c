/* trace: Joulie trace JSONL into jobs; see trace.h. Field defaults follow the original
 * simulator's loader (github.com/joulie-k8s/Joulie, simulator/cmd/simulator, trace loading and
 * workload profile defaults; docs/runs.md lists them). Where the original silently ignores a
 * malformed value, this loader reports it: a typo must not turn into a default. */
#include "trace.h"

#include "diag.h"
#include "fault.h"
#include "jsontext.h"
#include "physics_cpu.h"
#include "physics_gpu.h"
#include "profile_validate.h"
#include "ytree.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static double clamp01(double v)
{
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

bool trace_cpu_quantity(const char *t, double *cores)
{
    if (!t || !*t)
        return false;
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    if (end == t || errno || !isfinite(v) || v < 0)
        return false;
    if (!strcmp(end, "m"))
        v /= 1000;
    else if (*end)
        return false;
    *cores = v;
    return true;
}

bool trace_mem_quantity(const char *t, double *mib)
{
    static const struct {
        const char *suffix;
        double bytes;
    } units[] = {{"Ki", 1024.0},        {"Mi", 1048576.0},        {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
                 {"k", 1e3},            {"M", 1e6},               {"G", 1e9},           {"T", 1e12},
                 {"", 1}};
    if (!t || !*t)
        return false;
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    if (end == t || errno || !isfinite(v) || v < 0)
        return false;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].suffix)) {
            *mib = v * units[i].bytes / 1048576.0;
            return true;
        }
    return false;
}

struct ctx {
    struct trace *t;
    struct diag *d;
    const char *file;
    int line;
    int errors;
    int jobs_cap, wl_cap, faults_cap;
    bool quiet; /* messages never show the trace's values (trace_parse_quiet) */
};

/* A value for a message: itself, or in a quiet parse a placeholder (the reader of the message
 * may not be allowed to read the trace: docs/security.md "Traces named over HTTP"). */
static const char *val(const struct ctx *c, const char *s)
{
    return c->quiet ? "(not shown)" : s;
}

static void bad(struct ctx *c, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void bad(struct ctx *c, const char *field, const char *fmt, ...)
{
    char where[600], msg[600];
    snprintf(where, sizeof where, "%s:%d", c->file, c->line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_add(c->d, where, "%s: %s", field, msg);
    c->errors++;
}

static const char *json_kind(const cJSON *v)
{
    return !v ? "missing" : cJSON_IsString(v) ? "a string" : cJSON_IsNumber(v) ? "a number"
           : cJSON_IsBool(v) ? "a boolean" : cJSON_IsNull(v) ? "null" : cJSON_IsArray(v) ? "an array" : "an object";
}

/* An optional object member: NULL when absent or null; an error when it is not an object. */
static const cJSON *obj(struct ctx *c, const cJSON *o, const char *key, const char *field)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsObject(v)) {
        bad(c, field, "expected an object, found %s", json_kind(v));
        return NULL;
    }
    return v;
}

/* An optional number in [lo, hi]; def when absent. */
static double num(struct ctx *c, const cJSON *o, const char *key, const char *field, double def, double lo, double hi)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    if (!v || cJSON_IsNull(v))
        return def;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
        bad(c, field, "expected a number, found %s", json_kind(v));
        return def;
    }
    if (v->valuedouble < lo || v->valuedouble > hi) {
        if (c->quiet)
            bad(c, field, "out of range: expected %g..%g", lo, hi);
        else
            bad(c, field, "%g is out of range: expected %g..%g", v->valuedouble, lo, hi);
        return def;
    }
    return v->valuedouble;
}

static const char *str(struct ctx *c, const cJSON *o, const char *key, const char *field, const char *def)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    if (!v || cJSON_IsNull(v))
        return def;
    if (!cJSON_IsString(v)) {
        bad(c, field, "expected a string, found %s", json_kind(v));
        return def;
    }
    return arena_strdup(&c->t->arena, v->valuestring);
}

static bool boolean(struct ctx *c, const cJSON *o, const char *key, const char *field)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    if (!v || cJSON_IsNull(v))
        return false;
    if (!cJSON_IsBool(v)) {
        bad(c, field, "expected true or false, found %s", json_kind(v));
        return false;
    }
    return cJSON_IsTrue(v);
}

/* The keys each object of a record may hold: what the original's loader reads and its workloadgen
 * writes (simulator/cmd/simulator and simulator/cmd/workloadgen; docs/runs.md "Trace format" lists
 * them). Any other key is refused, so that a typo (work.cpuUnit) cannot silently become a default.
 * podTemplate.requests names Kubernetes resources, an open set: there only a near miss of one the
 * loader reads (nvidia.com/gpus) is refused. podTemplate.affinity and a workload's
 * sharedIntensityProfile are not checked (not read). */
static const char *const job_keys[] = {"type", "schemaVersion", "jobId", "workloadId", "workloadType", "podRole",
                                       "gang", "submitTimeOffsetSec", "namespace", "intentClass", "podTemplate",
                                       "work", "sensitivity", "workloadClass", "workloadProfile", "tags", NULL};
static const char *const template_keys[] = {"affinity", "requests", NULL};
static const char *const request_keys[] = {"cpu", "memory", "nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915",
                                           "gpu.intel.com/xe", "gpu", NULL};
static const char *const work_keys[] = {"cpuUnits", "gpuUnits", NULL};
static const char *const cpu_gpu_keys[] = {"cpu", "gpu", NULL};
static const char *const profile_keys[] = {"cpuUtilization", "gpuUtilization", "memoryIntensity", "ioIntensity",
                                           "cpuFeedIntensityGpu", "gpuPeerTransfers", NULL}; /* the last hwemu's */
static const char *const workload_keys[] = {"type", "schemaVersion", "workloadId", "submitTimeOffsetSec", "namespace",
                                            "workloadType", "gang", "durationSec", "intentClass", "workloadClass",
                                            "sharedIntensityProfile", "pods", "tags", NULL};
static const char *const pod_keys[] = {"role", "replicas", "requests", "gang", "nodeClass", NULL};

/* Each key of object o (at field prefix, "" for the record) that keys does not list is an error
 * with the nearest listed key; in an open map (open) only a near miss is. */
static void known_keys(struct ctx *c, const cJSON *o, const char *prefix, const char *const *keys, bool open)
{
    const cJSON *k;
    cJSON_ArrayForEach(k, o)
    {
        size_t i = 0;
        while (keys[i] && strcmp(keys[i], k->string))
            i++;
        if (keys[i])
            continue;
        const char *near = closest_word(k->string, keys);
        if (open && !near)
            continue;
        char field[160], list[400] = "";
        snprintf(field, sizeof field, "%s%s%s", prefix, *prefix ? "." : "", c->quiet ? "(a key)" : k->string);
        for (i = 0; keys[i]; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", keys[i]);
        if (open) /* a resource name the loader does not read, so near one it does */
            bad(c, field, "unknown resource; did you mean \"%s\"? (the resources read are %s; others, far from "
                "these, are passed over)", near, list);
        else if (near)
            bad(c, field, "unknown key; did you mean \"%s\"? (expected one of: %s)", near, list);
        else
            bad(c, field, "unknown key (expected one of: %s)", list);
    }
}

static const char *const cpu_classes[] = {"cpu.compute_bound", "cpu.memory_bound", "cpu.io_bound", "cpu.mixed"};
static const char *const gpu_classes[] = {"gpu.compute_bound", "gpu.memory_bound", "gpu.bandwidth_bound", "gpu.mixed",
                                          "gpu.io_bound"};

/* performance when the affinity requires joulie.io/power-profile NotIn [eco] (or In without
 * eco), as the original's generator writes it. */
static bool affinity_performance(const cJSON *aff)
{
    const cJSON *na = cJSON_GetObjectItemCaseSensitive(aff, "nodeAffinity");
    const cJSON *req = na ? cJSON_GetObjectItemCaseSensitive(na, "requiredDuringSchedulingIgnoredDuringExecution")
                          : NULL;
    const cJSON *terms = req ? cJSON_GetObjectItemCaseSensitive(req, "nodeSelectorTerms") : NULL;
    const cJSON *term;
    cJSON_ArrayForEach(term, terms)
    {
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(term, "matchExpressions"))
        {
            const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "key");
            const cJSON *op = cJSON_GetObjectItemCaseSensitive(e, "operator");
            if (!cJSON_IsString(k) || strcmp(k->valuestring, "joulie.io/power-profile") || !cJSON_IsString(op))
                continue;
            bool eco = false;
            const cJSON *v;
            cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(e, "values"))
                eco |= cJSON_IsString(v) && !strcmp(v->valuestring, "eco");
            if ((!strcmp(op->valuestring, "NotIn") && eco) || (!strcmp(op->valuestring, "In") && !eco))
                return true;
        }
    }
    return false;
}

static void gpu_request(struct ctx *c, const cJSON *req, struct trace_job *j)
{
    static const struct {
        const char *key;
        int vendor;
    } keys[] = {{"nvidia.com/gpu", GPU_REQ_NVIDIA}, {"amd.com/gpu", GPU_REQ_AMD},
                {"gpu.intel.com/i915", GPU_REQ_INTEL}, {"gpu.intel.com/xe", GPU_REQ_INTEL}, {"gpu", GPU_REQ_NVIDIA}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, keys[i].key);
        if (!v)
            continue;
        char field[64];
        snprintf(field, sizeof field, "podTemplate.requests.%s", keys[i].key);
        char *end = NULL;
        long n = cJSON_IsString(v) ? strtol(v->valuestring, &end, 10) : -1;
        if (!cJSON_IsString(v) || end == v->valuestring || *end || n < 0 || n > PHYS_GPU_MAX) {
            bad(c, field, "expected a whole number of GPUs as a string (\"0\"..\"%d\"), found %s%s%s%s", PHYS_GPU_MAX,
                json_kind(v), cJSON_IsString(v) ? " \"" : "", cJSON_IsString(v) ? val(c, v->valuestring) : "",
                cJSON_IsString(v) ? "\"" : "");
            return;
        }
        if (n == 0)
            continue;
        if (j->gpus) {
            bad(c, field, "a second GPU resource: a job requests GPUs of one vendor only");
            return;
        }
        j->gpus = (int)n;
        j->gpu_vendor = keys[i].vendor;
    }
}

static int class_index(const char *name, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

/* workloadProfile.gpuPeerTransfers: [{from, to, GBps}, ...], the job's GPU ordinals (as
 * baseLoad.gpuPeerTransfers names a node's GPUs). */
static void transfers(struct ctx *c, const cJSON *prof, struct trace_job *j)
{
    static const char field[] = "workloadProfile.gpuPeerTransfers";
    const cJSON *l = prof ? cJSON_GetObjectItemCaseSensitive(prof, "gpuPeerTransfers") : NULL;
    if (!l || cJSON_IsNull(l))
        return;
    if (!cJSON_IsArray(l)) {
        bad(c, field, "expected a list of {from, to, GBps}, found %s", json_kind(l));
        return;
    }
    int n = cJSON_GetArraySize(l);
    if (n > TRACE_MAX_XFER) {
        bad(c, field, "more than %d transfers (every ordered pair of 16 GPUs)", TRACE_MAX_XFER);
        return;
    }
    if (n && j->gpus < 2) {
        bad(c, field, "transfers between GPUs need a job of at least 2 GPUs (podTemplate.requests)");
        return;
    }
    struct trace_xfer *x = arena_alloc(&c->t->arena, sizeof *x * (size_t)(n ? n : 1));
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, l)
    {
        char f[96];
        snprintf(f, sizeof f, "%s[%d]", field, i);
        if (!cJSON_IsObject(e)) {
            bad(c, f, "expected {from, to, GBps}, found %s", json_kind(e));
            i++;
            continue;
        }
        static const char *const xfer_keys[] = {"from", "to", "GBps", NULL};
        known_keys(c, e, f, xfer_keys, false);
        const cJSON *from = cJSON_GetObjectItemCaseSensitive(e, "from"), *to = cJSON_GetObjectItemCaseSensitive(e, "to");
        int before = c->errors;
        double gbps = num(c, e, "GBps", f, 0, 0, 1e6);
        bool whole = cJSON_IsNumber(from) && cJSON_IsNumber(to) && from->valuedouble >= 0 && to->valuedouble >= 0 &&
                     from->valuedouble < j->gpus && to->valuedouble < j->gpus &&
                     from->valuedouble == floor(from->valuedouble) && to->valuedouble == floor(to->valuedouble);
        if (!whole || from->valuedouble == to->valuedouble)
            bad(c, f, "from and to must be two different GPUs of the job: whole numbers 0..%d", j->gpus - 1);
        else if (c->errors == before && !(gbps > 0))
            bad(c, f, "GBps must be a number above 0 (GB/s the transfer asks for)");
        else
            x[i] = (struct trace_xfer){(int)from->valuedouble, (int)to->valuedouble, gbps};
        i++;
    }
    j->xfer = x;
    j->nxfer = n;
}

static void job_record(struct ctx *c, const cJSON *r, int seq)
{
    struct trace *t = c->t;
    struct trace_job j = {.line = c->line, .seq = seq};
    char cores[32];
    int before = c->errors;
    known_keys(c, r, "", job_keys, false);
    j.id = str(c, r, "jobId", "jobId", NULL);
    if (!j.id || !*j.id) {
        if (c->errors == before)
            bad(c, "jobId", "missing: every job record needs a non-empty jobId");
        return;
    }
    j.workload_id = str(c, r, "workloadId", "workloadId", "");
    j.workload_type = str(c, r, "workloadType", "workloadType", "");
    j.pod_role = str(c, r, "podRole", "podRole", "");
    j.gang = boolean(c, r, "gang", "gang");
    if (j.gang && !*j.workload_id)
        bad(c, "workloadId", "missing: a gang job (gang: true) needs the workloadId its gang shares");
    j.submit_s = num(c, r, "submitTimeOffsetSec", "submitTimeOffsetSec", 0, 0, 1e9);
    const char *ns = str(c, r, "namespace", "namespace", NULL);
    j.ns = ns && *ns ? ns : "default";
    const cJSON *tpl = obj(c, r, "podTemplate", "podTemplate");
    const cJSON *req = obj(c, tpl, "requests", "podTemplate.requests");
    known_keys(c, tpl, "podTemplate", template_keys, false);
    known_keys(c, req, "podTemplate.requests", request_keys, true);
    const cJSON *aff = obj(c, tpl, "affinity", "podTemplate.affinity");
    const char *intent = str(c, r, "intentClass", "intentClass", NULL);
    if (intent && *intent) {
        if (!strcmp(intent, "performance"))
            j.cls = JOB_PERFORMANCE;
        else if (!strcmp(intent, "standard"))
            j.cls = JOB_STANDARD;
        else
            bad(c, "intentClass", "\"%s\" is not a class: expected performance or standard", val(c, intent));
    } else {
        j.cls = aff && affinity_performance(aff) ? JOB_PERFORMANCE : JOB_STANDARD;
    }
    j.cpu_req = 1;
    j.mem_mib = 64;
    const cJSON *v = req ? cJSON_GetObjectItemCaseSensitive(req, "cpu") : NULL;
    if (v && !(cJSON_IsString(v) ? trace_cpu_quantity(v->valuestring, &j.cpu_req)
                                  : cJSON_IsNumber(v) && v->valuedouble >= 0 && (j.cpu_req = v->valuedouble, 1)))
        bad(c, "podTemplate.requests.cpu", "expected a CPU quantity such as \"2\", \"1.5\" or \"500m\", found %s%s%s%s",
            json_kind(v), cJSON_IsString(v) ? " \"" : "", cJSON_IsString(v) ? val(c, v->valuestring) : "",
            cJSON_IsString(v) ? "\"" : "");
    if (j.cpu_req > 4096)
        bad(c, "podTemplate.requests.cpu", "%s cores is more than any node has (at most 4096)",
            c->quiet ? "the number of" : (snprintf(cores, sizeof cores, "%g", j.cpu_req), cores));
    v = req ? cJSON_GetObjectItemCaseSensitive(req, "memory") : NULL;
    if (v && !(cJSON_IsString(v) && trace_mem_quantity(v->valuestring, &j.mem_mib)))
        bad(c, "podTemplate.requests.memory", "expected a memory quantity such as \"64Mi\" or \"4Gi\", found %s%s%s%s",
            json_kind(v), cJSON_IsString(v) ? " \"" : "", cJSON_IsString(v) ? val(c, v->valuestring) : "",
            cJSON_IsString(v) ? "\"" : "");
    j.cpus = j.cpu_req <= 1 ? 1 : (int)ceil(j.cpu_req - 1e-9);
    if (req)
        gpu_request(c, req, &j);
    const cJSON *work = obj(c, r, "work", "work");
    known_keys(c, work, "work", work_keys, false);
    j.cpu_units = num(c, work, "cpuUnits", "work.cpuUnits", 1000, 0, 1e18);
    j.gpu_units = num(c, work, "gpuUnits", "work.gpuUnits", 0, 0, 1e18);
    if (j.cpu_units <= 0) /* the original: only a positive cpuUnits replaces the default */
        j.cpu_units = 1000;
    const cJSON *sens = obj(c, r, "sensitivity", "sensitivity");
    known_keys(c, sens, "sensitivity", cpu_gpu_keys, false);
    j.sens_cpu = clamp01(num(c, sens, "cpu", "sensitivity.cpu", 1, -1e9, 1e9));
    j.sens_gpu = clamp01(num(c, sens, "gpu", "sensitivity.gpu", 1, -1e9, 1e9));
    const cJSON *wc = obj(c, r, "workloadClass", "workloadClass");
    known_keys(c, wc, "workloadClass", cpu_gpu_keys, false);
    j.cpu_class_name = str(c, wc, "cpu", "workloadClass.cpu", "cpu.mixed");
    j.gpu_class_name = str(c, wc, "gpu", "workloadClass.gpu", "gpu.mixed");
    int ci = class_index(j.cpu_class_name, cpu_classes, 4);
    int gi = class_index(j.gpu_class_name, gpu_classes, 5);
    if (ci < 0)
        bad(c, "workloadClass.cpu", "\"%s\" is not a CPU work class: expected cpu.compute_bound, cpu.memory_bound, "
            "cpu.io_bound or cpu.mixed", val(c, j.cpu_class_name));
    if (gi < 0)
        bad(c, "workloadClass.gpu", "\"%s\" is not a GPU work class: expected gpu.compute_bound, gpu.memory_bound, "
            "gpu.bandwidth_bound, gpu.io_bound or gpu.mixed", val(c, j.gpu_class_name));
    j.cpu_class = ci < 0 ? PHYS_CLASS_MIXED : ci;
    j.gpu_class = gi == 0 ? PHYS_GPU_CLASS_COMPUTE : gi == 1 || gi == 2 ? PHYS_GPU_CLASS_MEMORY : PHYS_GPU_CLASS_OTHER;
    /* profile defaults by class (the original's workload profile defaults) */
    j.u_cpu = ci == 0 ? 0.95 : ci == 1 ? 0.60 : ci == 2 ? 0.20 : 0.65;
    j.u_gpu = !j.gpus ? 0 : gi == 0 ? 0.95 : gi == 1 || gi == 2 ? 0.70 : 0.80;
    j.mem_int = ci == 1 || gi == 1 || gi == 2 ? 0.85 : ci == 2 ? 0.20 : 0.45;
    j.io_int = ci == 2 ? 0.85 : 0.10;
    j.feed = j.gpus ? 0.45 : 0;
    const cJSON *prof = obj(c, r, "workloadProfile", "workloadProfile");
    known_keys(c, prof, "workloadProfile", profile_keys, false);
    j.u_cpu = clamp01(num(c, prof, "cpuUtilization", "workloadProfile.cpuUtilization", j.u_cpu, -1e9, 1e9));
    j.u_gpu = clamp01(num(c, prof, "gpuUtilization", "workloadProfile.gpuUtilization", j.u_gpu, -1e9, 1e9));
    j.mem_int = clamp01(num(c, prof, "memoryIntensity", "workloadProfile.memoryIntensity", j.mem_int, -1e9, 1e9));
    j.io_int = clamp01(num(c, prof, "ioIntensity", "workloadProfile.ioIntensity", j.io_int, -1e9, 1e9));
    j.feed = clamp01(num(c, prof, "cpuFeedIntensityGpu", "workloadProfile.cpuFeedIntensityGpu", j.feed, -1e9, 1e9));
    transfers(c, prof, &j);
    if (c->errors != before)
        return;
    if (t->njobs == c->jobs_cap) {
        c->jobs_cap = c->jobs_cap ? c->jobs_cap * 2 : 256;
        t->jobs = realloc(t->jobs, sizeof *t->jobs * (size_t)c->jobs_cap);
        if (!t->jobs)
            abort();
    }
    t->jobs[t->njobs++] = j;
}

static void workload_record(struct ctx *c, const cJSON *r)
{
    struct trace_workload w = {.line = c->line};
    int before = c->errors;
    known_keys(c, r, "", workload_keys, false);
    w.id = str(c, r, "workloadId", "workloadId", NULL);
    if (!w.id || !*w.id) {
        if (c->errors == before)
            bad(c, "workloadId", "missing: every workload record needs a non-empty workloadId");
        return;
    }
    w.gang = boolean(c, r, "gang", "gang");
    const cJSON *pods = cJSON_GetObjectItemCaseSensitive(r, "pods");
    cJSON *p;
    if (pods && !cJSON_IsArray(pods) && !cJSON_IsNull(pods))
        bad(c, "pods", "expected an array of {role, replicas, requests}, found %s", json_kind(pods));
    int i = 0;
    const cJSON *arr = cJSON_IsArray(pods) ? pods : NULL;
    cJSON_ArrayForEach(p, arr)
    {
        char field[64];
        snprintf(field, sizeof field, "pods[%d].replicas", i++);
        if (!cJSON_IsObject(p)) {
            bad(c, field + 0, "expected the pod group to be an object, found %s", json_kind(p));
            continue;
        }
        char at[32];
        snprintf(at, sizeof at, "pods[%d]", i - 1);
        known_keys(c, p, at, pod_keys, false);
        w.pods += (int)num(c, p, "replicas", field, 1, 0, 100000);
    }
    if (c->errors != before)
        return;
    if (c->t->nworkloads == c->wl_cap) {
        c->wl_cap = c->wl_cap ? c->wl_cap * 2 : 64;
        c->t->workloads = realloc(c->t->workloads, sizeof *c->t->workloads * (size_t)c->wl_cap);
        if (!c->t->workloads)
            abort();
    }
    c->t->workloads[c->t->nworkloads++] = w;
}

static int by_submit(const void *a, const void *b)
{
    const struct trace_job *x = a, *y = b;
    if (x->submit_s != y->submit_s)
        return x->submit_s < y->submit_s ? -1 : 1;
    return x->seq - y->seq;
}

static int by_id(const void *a, const void *b)
{
    return strcmp((*(const struct trace_job *const *)a)->id, (*(const struct trace_job *const *)b)->id);
}

/* Every node of a record's tree on line (a JSON line parsed as YAML is its line 1). */
static void at_line(struct yt_node *n, int line)
{
    n->line = line;
    for (int i = 0; i < n->n; i++) {
        if (n->kind == YT_MAP)
            at_line(n->keys[i], line);
        at_line(n->vals[i], line);
    }
}

/* A type: fault record (fault.h), parsed again as YAML so that its messages carry a column. */
static void fault_record(struct ctx *c, const char *line, size_t n)
{
    struct trace *t = c->t;
    struct diag fd = {0};
    bool empty = false;
    struct yt_node *root = yt_parse(&t->arena, c->file, line, n, &fd, &empty);
    if (root)
        at_line(root, c->line);
    if (t->nfaults == c->faults_cap) {
        c->faults_cap = c->faults_cap ? c->faults_cap * 2 : 8;
        t->faults = realloc(t->faults, sizeof *t->faults * (size_t)c->faults_cap);
        if (!t->faults)
            abort();
    }
    static const char *const ignore[] = {"type", "schemaVersion", NULL};
    if (root && fault_parse(&t->faults[t->nfaults], &t->arena, root, "fault", ignore, &fd)) {
        t->nfaults++;
    } else if (c->quiet) { /* the messages show values: only where */
        bad(c, "fault", "an invalid fault record (%d problems; validate the trace with `hwemu trace validate` where "
            "it can be read)", fd.count ? fd.count : 1);
    } else {
        for (int i = 0; i < fd.count; i++)
            diag_add(c->d, NULL, "%s", fd.msgs[i]);
        c->errors += fd.count ? fd.count : 1;
    }
    diag_free(&fd);
}

const struct trace_workload *trace_workload_find(const struct trace *t, const char *id)
{
    for (int i = 0; i < t->nworkloads; i++)
        if (!strcmp(t->workloads[i].id, id))
            return &t->workloads[i];
    return NULL;
}

static int parse(struct trace *t, const char *file, const char *text, size_t len, struct diag *d, bool quiet)
{
    memset(t, 0, sizeof *t);
    t->path = arena_strdup(&t->arena, file);
    t->mode = 0644;
    struct ctx c = {.t = t, .d = d, .file = file, .quiet = quiet};
    const char *p = text, *end = text + len;
    int seq = 0;
    char *line = NULL;
    size_t line_cap = 0;
    while (p < end) {
        c.line++;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        if (n + 1 > line_cap) {
            line_cap = n + 1;
            line = realloc(line, line_cap);
            if (!line)
                abort();
        }
        memcpy(line, p, n);
        line[n] = 0;
        p = nl ? nl + 1 : end;
        size_t k = strspn(line, " \t\r");
        if (!line[k])
            continue;
        /* what cJSON would pass on: bytes that are not UTF-8 (they would reach events.jsonl and
         * jobs.jsonl) and \u0000 (it would cut a jobId short) */
        long bad_at = jsontext_bad_utf8(line, n);
        if (bad_at >= 0) {
            bad(&c, "record", "byte %ld is not UTF-8: a trace is UTF-8 text (RFC 8259 section 8.1)", bad_at + 1);
            continue;
        }
        const char *z = memchr(line, 0, n);
        if (z) {
            bad(&c, "record", "byte %ld is NUL: a trace is JSON text, which has none", (long)(z - line) + 1);
            continue;
        }
        if ((bad_at = jsontext_nul_escape(line, n)) >= 0) {
            bad(&c, "record", "a string holds \\u0000 (NUL) at column %ld: job ids and names cannot contain NUL",
                bad_at + 1);
            continue;
        }
        const char *jend = NULL;
        cJSON *r = cJSON_ParseWithOpts(line, &jend, 0);
        if (!r || *(jend + strspn(jend, " \t\r"))) {
            size_t at = r ? (size_t)(jend - line) : (size_t)(cJSON_GetErrorPtr() - line);
            bad(&c, "record", "not one JSON value (error near column %zu): each line of a trace is one JSON object",
                at + 1);
            cJSON_Delete(r);
            continue;
        }
        if (!cJSON_IsObject(r)) {
            bad(&c, "record", "expected a JSON object, found %s", json_kind(r));
            cJSON_Delete(r);
            continue;
        }
        const cJSON *ty = cJSON_GetObjectItemCaseSensitive(r, "type");
        const cJSON *sv = cJSON_GetObjectItemCaseSensitive(r, "schemaVersion");
        if (sv && !(cJSON_IsString(sv) && (!strcmp(sv->valuestring, "v1") || !strcmp(sv->valuestring, "v2"))))
            bad(&c, "schemaVersion", "expected \"v1\" or \"v2\", found %s%s%s%s", json_kind(sv),
                cJSON_IsString(sv) ? " \"" : "", cJSON_IsString(sv) ? val(&c, sv->valuestring) : "",
                cJSON_IsString(sv) ? "\"" : "");
        else if (ty && !cJSON_IsString(ty))
            bad(&c, "type", "expected a string (\"job\", \"workload\" or \"fault\"), found %s", json_kind(ty));
        else if (ty && !strcmp(ty->valuestring, "job"))
            job_record(&c, r, seq++);
        else if (ty && !strcmp(ty->valuestring, "workload"))
            workload_record(&c, r);
        else if (ty && !strcmp(ty->valuestring, "fault"))
            fault_record(&c, line, n);
        else
            t->ignored++; /* the original ignores records of other types, and untyped ones */
        cJSON_Delete(r);
    }
    free(line);
    if (!c.errors && t->njobs > 1) { /* duplicate jobIds */
        const struct trace_job **ix = malloc(sizeof *ix * (size_t)t->njobs);
        for (int i = 0; i < t->njobs; i++)
            ix[i] = &t->jobs[i];
        qsort(ix, (size_t)t->njobs, sizeof *ix, by_id);
        for (int i = 1; i < t->njobs; i++)
            if (!strcmp(ix[i]->id, ix[i - 1]->id)) {
                const struct trace_job *a = ix[i]->line < ix[i - 1]->line ? ix[i] : ix[i - 1];
                const struct trace_job *b = a == ix[i] ? ix[i - 1] : ix[i];
                c.line = b->line;
                bad(&c, "jobId", "\"%s\" was already used at line %d: jobIds must be unique", val(&c, b->id), a->line);
            }
        free(ix);
    }
    if (!c.errors && !t->njobs) {
        c.line = c.line ? c.line : 1;
        diag_add(d, file, "no job records (type: job): a trace needs at least one job");
        c.errors++;
    }
    if (c.errors) {
        trace_free(t);
        return -1;
    }
    qsort(t->jobs, (size_t)t->njobs, sizeof *t->jobs, by_submit);
    return 0;
}

int trace_parse(struct trace *t, const char *file, const char *text, size_t len, struct diag *d)
{
    return parse(t, file, text, len, d, false);
}

int trace_parse_quiet(struct trace *t, const char *file, const char *text, size_t len, struct diag *d)
{
    return parse(t, file, text, len, d, true);
}

static char *read_all(const char *path, size_t *len, unsigned *mode, struct diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        diag_add(d, path, "cannot read the trace: %s", strerror(errno));
        return NULL;
    }
    struct stat sb;
    if (!fstat(fileno(f), &sb))
        *mode &= (unsigned)sb.st_mode & 0777;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 4096 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        if (!buf)
            abort();
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    bool err = ferror(f);
    fclose(f);
    if (err) {
        diag_add(d, path, "cannot read the trace: %s", strerror(EIO));
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int trace_load(struct trace *t, const char *path, char **raw, size_t *rawlen, struct diag *d)
{
    memset(t, 0, sizeof *t);
    DIR *dir = opendir(path);
    char *text = NULL;
    size_t len = 0;
    unsigned mode = 0777; /* ANDed with every file's */
    if (dir) { /* every *.jsonl, concatenated in name order */
        char **names = NULL;
        int n = 0;
        struct dirent *de;
        while ((de = readdir(dir))) {
            size_t l = strlen(de->d_name);
            if (l > 6 && !strcmp(de->d_name + l - 6, ".jsonl")) {
                names = realloc(names, sizeof *names * (size_t)(n + 1));
                names[n++] = strdup(de->d_name);
            }
        }
        closedir(dir);
        qsort(names, (size_t)n, sizeof *names, by_name);
        if (!n) {
            diag_add(d, path, "the directory has no *.jsonl trace files");
            free(names);
            return -1;
        }
        /* one file: its own name in messages; several: parse each for messages, then all together */
        int rc = 0;
        for (int i = 0; i < n; i++) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", path, names[i]);
            size_t l;
            char *part = read_all(p, &l, &mode, d);
            struct trace one;
            if (!part || trace_parse(&one, p, part, l, d)) {
                rc = -1;
            } else {
                trace_free(&one);
                text = realloc(text, len + l + 2);
                memcpy(text + len, part, l);
                len += l;
                if (l && part[l - 1] != '\n')
                    text[len++] = '\n';
                text[len] = 0;
            }
            free(part);
            free(names[i]);
        }
        free(names);
        if (!rc)
            rc = trace_parse(t, path, text, len, d);
        t->mode = mode;
        if (rc || !raw)
            free(text);
        else
            *raw = text, *rawlen = len;
        return rc;
    }
    text = read_all(path, &len, &mode, d);
    if (!text)
        return -1;
    int rc = trace_parse(t, path, text, len, d);
    t->mode = mode;
    if (rc || !raw)
        free(text);
    else
        *raw = text, *rawlen = len;
    return rc;
}

void trace_free(struct trace *t)
{
    free(t->jobs);
    free(t->workloads);
    free(t->faults);
    arena_free(&t->arena);
    memset(t, 0, sizeof *t);
}
