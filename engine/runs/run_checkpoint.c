/* run_checkpoint: write and apply state.json; see run_checkpoint.h. 64-bit counters are
 * written as decimal strings (a JSON number is a double), doubles with cJSON's round-trip
 * precision, so a resumed run continues with exactly the numbers it stopped with. */
#include "run_checkpoint.h"

#include "engine.h"
#include "run.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_u64(cJSON *a, uint64_t v)
{
    char t[32];
    snprintf(t, sizeof t, "%" PRIu64, v);
    cJSON_AddItemToArray(a, cJSON_CreateString(t));
}

static cJSON *u64s(const uint64_t *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        add_u64(a, v[i]);
    return a;
}

cJSON *run_checkpoint_json(const struct run *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "runId", r->id);
    if (r->key[0]) /* the Jobs' names go on with it */
        cJSON_AddStringToObject(o, "runKey", r->key);
    cJSON_AddNumberToObject(o, "version", 1);
    cJSON_AddNumberToObject(o, "nodes", r->nnodes);
    cJSON_AddNumberToObject(o, "jobCount", r->njobs);
    cJSON_AddItemToObject(o, "nowNs", u64s((const uint64_t *)&r->now_ns, 1));
    cJSON_AddItemToObject(o, "ticks", u64s(&r->ticks, 1));
    cJSON_AddNumberToObject(o, "nextSubmit", r->next_submit);
    cJSON_AddItemToObject(o, "submitted", u64s(r->submitted, JOB_NCLASSES));
    cJSON_AddItemToObject(o, "completionBuckets", u64s(r->completion_bucket, RUN_COMPLETION_BUCKETS + 1));
    cJSON_AddNumberToObject(o, "completionSumSec", r->completion_sum_s);
    cJSON_AddNumberToObject(o, "itJoules", r->it_j);
    cJSON_AddNumberToObject(o, "facilityJoules", r->facility_j);
    cJSON_AddNumberToObject(o, "placeNs", r->place_ns);
    cJSON_AddItemToObject(o, "placements", u64s(&r->placements, 1));
    cJSON *jobs = cJSON_AddArrayToObject(o, "jobs");
    for (int k = 0; k < r->njobs; k++) {
        const struct run_job *j = &r->jobs[k];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "id", j->t->id);
        cJSON_AddNumberToObject(x, "state", j->state);
        cJSON_AddNumberToObject(x, "node", j->node);
        cJSON_AddBoolToObject(x, "fresh", j->fresh);
        cJSON_AddNumberToObject(x, "cpuLeft", j->cpu_left);
        cJSON_AddNumberToObject(x, "gpuLeft", j->gpu_left);
        int64_t t3[3] = {j->submit_ns, j->start_ns, j->end_ns};
        cJSON *t = cJSON_AddArrayToObject(x, "times");
        for (int i = 0; i < 3; i++) {
            char s[32];
            snprintf(s, sizeof s, "%" PRId64, t3[i]);
            cJSON_AddItemToArray(t, cJSON_CreateString(s));
        }
        cJSON_AddItemToObject(x, "energy", u64s(j->energy_uj, EP_N));
        if (j->cpus) {
            cJSON *c = cJSON_AddArrayToObject(x, "cpus");
            for (int i = 0; i < j->t->cpus; i++)
                cJSON_AddItemToArray(c, cJSON_CreateNumber(j->cpus[i]));
            cJSON *g = cJSON_AddArrayToObject(x, "gpus");
            for (int i = 0; i < j->ngpus; i++)
                cJSON_AddItemToArray(g, cJSON_CreateNumber(j->gpus[i]));
        }
        cJSON_AddItemToArray(jobs, x);
    }
    cJSON *nodes = cJSON_AddArrayToObject(o, "nodeState");
    for (int i = 0; i < r->nnodes; i++) {
        const struct run_node *n = &r->nodes[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "node", r->e->nodes[i].name);
        cJSON_AddBoolToObject(x, "started", n->started);
        cJSON_AddItemToObject(x, "last", u64s(n->last_uj, 2 * PHYS_MAX_PKGS + PHYS_GPU_MAX));
        cJSON_AddItemToObject(x, "start", u64s(&n->start_uj, 1));
        cJSON_AddItemToObject(x, "delta", u64s(&n->delta_uj, 1));
        cJSON_AddItemToObject(x, "partStart", u64s(n->part_start_uj, EP_N));
        cJSON_AddItemToObject(x, "partDelta", u64s(n->part_delta_uj, EP_N));
        cJSON_AddItemToObject(x, "idle", u64s(&n->idle_uj, 1));
        cJSON_AddItemToObject(x, "class", u64s(n->class_uj, JOB_NCLASSES));
        cJSON_AddItemToObject(x, "completed", u64s(n->completed, JOB_NCLASSES));
        cJSON_AddItemToObject(x, "resumeGap", u64s(&n->resume_gap_uj, 1));
        cJSON_AddItemToArray(nodes, x);
    }
    return o;
}

/* ---- apply ------------------------------------------------------------------------------ */

static bool get_u64s(const cJSON *a, uint64_t *out, int n)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return false;
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, a)
    {
        if (!cJSON_IsString(v))
            return false;
        char *end;
        errno = 0;
        out[i++] = strtoull(v->valuestring, &end, 10);
        if (*end || errno)
            return false;
    }
    return true;
}

static double num(const cJSON *o, const char *k, bool *ok)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v))
        *ok = false;
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

int run_checkpoint_apply(struct run *r, const cJSON *o, const char *path, bool crash, char *err, size_t errlen)
{
    bool ok = o != NULL;
    const char *why = "not the JSON this engine writes";
    if (ok && ((int)num(o, "version", &ok) != 1 || (int)num(o, "nodes", &ok) != r->nnodes ||
               (int)num(o, "jobCount", &ok) != r->njobs)) {
        ok = false;
        why = "written for another cluster spec or trace (node or job count differs)";
    }
    uint64_t now = 0;
    ok = ok && get_u64s(cJSON_GetObjectItem(o, "nowNs"), &now, 1) && get_u64s(cJSON_GetObjectItem(o, "ticks"), &r->ticks, 1) &&
         get_u64s(cJSON_GetObjectItem(o, "submitted"), r->submitted, JOB_NCLASSES) &&
         get_u64s(cJSON_GetObjectItem(o, "completionBuckets"), r->completion_bucket, RUN_COMPLETION_BUCKETS + 1) &&
         get_u64s(cJSON_GetObjectItem(o, "placements"), &r->placements, 1);
    if (ok) {
        r->now_ns = (int64_t)now;
        r->next_submit = (int)num(o, "nextSubmit", &ok);
        r->completion_sum_s = num(o, "completionSumSec", &ok);
        r->it_j = num(o, "itJoules", &ok);
        r->facility_j = num(o, "facilityJoules", &ok);
        r->place_ns = num(o, "placeNs", &ok);
    }
    const cJSON *jobs = cJSON_GetObjectItem(o, "jobs");
    cJSON *x;
    if (ok && (!cJSON_IsArray(jobs) || cJSON_GetArraySize(jobs) != r->njobs))
        ok = false;
    int k = 0;
    memset(r->count, 0, sizeof r->count);
    r->away_open = 0;
    r->nqueue = 0;
    const cJSON *job_list = ok ? jobs : NULL;
    cJSON_ArrayForEach(x, job_list)
    {
        struct run_job *j = &r->jobs[k++];
        const cJSON *id = cJSON_GetObjectItem(x, "id");
        if (!cJSON_IsString(id) || strcmp(id->valuestring, j->t->id)) {
            ok = false;
            why = "written for another trace (job ids differ)";
            break;
        }
        j->state = (int)num(x, "state", &ok);
        j->node = (int)num(x, "node", &ok);
        j->fresh = cJSON_IsTrue(cJSON_GetObjectItem(x, "fresh"));
        j->cpu_left = num(x, "cpuLeft", &ok);
        j->gpu_left = num(x, "gpuLeft", &ok);
        uint64_t t3[3];
        const cJSON *tv = cJSON_GetObjectItem(x, "times");
        cJSON *e;
        int ti = 0;
        cJSON_ArrayForEach(e, tv) if (ti < 3 && cJSON_IsString(e)) t3[ti++] = (uint64_t)strtoll(e->valuestring, NULL, 10);
        ok = ok && ti == 3 && get_u64s(cJSON_GetObjectItem(x, "energy"), j->energy_uj, EP_N);
        if (!ok || j->state < 0 || j->state >= JS_NSTATES || j->node < -1 || j->node >= r->nnodes) {
            ok = false;
            break;
        }
        j->submit_ns = (int64_t)t3[0], j->start_ns = (int64_t)t3[1], j->end_ns = (int64_t)t3[2];
        r->count[j->state]++;
        if (j->state == JS_WAITING)
            r->queue[r->nqueue++] = j->index;
        j->away_open = j->state == JS_ELSEWHERE; /* the placer says again whether its pod finished */
        r->away_open += j->away_open;
        const cJSON *cpus = cJSON_GetObjectItem(x, "cpus");
        if (!cpus)
            continue;
        struct run_node *n = j->node >= 0 ? &r->nodes[j->node] : NULL;
        if (!n || cJSON_GetArraySize(cpus) != j->t->cpus) {
            ok = false;
            break;
        }
        free(j->cpus);
        j->cpus = malloc(sizeof *j->cpus * (size_t)j->t->cpus);
        int c = 0;
        cJSON_ArrayForEach(e, cpus) j->cpus[c++] = (int)e->valuedouble;
        j->ngpus = 0;
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(x, "gpus")) if (j->ngpus < PHYS_GPU_MAX) j->gpus[j->ngpus++] = (int)e->valuedouble;
        for (c = 0; c < j->t->cpus; c++)
            if (j->cpus[c] < 0 || j->cpus[c] >= n->ncpus)
                ok = false;
        for (c = 0; c < j->ngpus; c++)
            if (j->gpus[c] < 0 || j->gpus[c] >= n->ngpus)
                ok = false;
        if (!ok)
            break;
        if (j->state == JS_RUNNING) { /* what it holds */
            for (c = 0; c < j->t->cpus; c++)
                n->cpu_used[j->cpus[c]] = 1;
            n->free_cpus -= j->t->cpus;
            for (c = 0; c < j->ngpus; c++)
                n->gpu_job[j->gpus[c]] = j->index;
            n->free_gpus -= j->ngpus;
            if (n->njobs == n->cap) {
                n->cap = n->cap ? n->cap * 2 : 8;
                n->jobs = realloc(n->jobs, sizeof *n->jobs * (size_t)n->cap);
            }
            n->jobs[n->njobs++] = j->index;
            n->perf_jobs += j->t->cls == JOB_PERFORMANCE;
        }
    }
    for (int g = 0; ok && g < r->ngangs; g++) {
        struct run_gang *G = &r->gangs[g];
        G->submitted = 0;
        G->placed = false;
        for (int m = 0; m < G->n; m++) {
            int s = r->jobs[G->jobs[m]].state;
            G->submitted += s != JS_PENDING && s != JS_STALLED;
            G->placed |= s == JS_RUNNING || s == JS_COMPLETED || s == JS_ELSEWHERE;
        }
    }
    const cJSON *nodes = cJSON_GetObjectItem(o, "nodeState");
    if (ok && (!cJSON_IsArray(nodes) || cJSON_GetArraySize(nodes) != r->nnodes))
        ok = false;
    int i = 0;
    const cJSON *node_list = ok ? nodes : NULL;
    cJSON_ArrayForEach(x, node_list)
    {
        struct run_node *n = &r->nodes[i];
        const cJSON *name = cJSON_GetObjectItem(x, "node");
        if (!cJSON_IsString(name) || strcmp(name->valuestring, r->e->nodes[i].name)) {
            ok = false;
            why = "written for another cluster spec (node names differ)";
            break;
        }
        i++;
        n->started = cJSON_IsTrue(cJSON_GetObjectItem(x, "started"));
        n->rebase = n->started;
        ok = get_u64s(cJSON_GetObjectItem(x, "last"), n->last_uj, 2 * PHYS_MAX_PKGS + PHYS_GPU_MAX) &&
             get_u64s(cJSON_GetObjectItem(x, "start"), &n->start_uj, 1) &&
             get_u64s(cJSON_GetObjectItem(x, "delta"), &n->delta_uj, 1) &&
             get_u64s(cJSON_GetObjectItem(x, "partStart"), n->part_start_uj, EP_N) &&
             get_u64s(cJSON_GetObjectItem(x, "partDelta"), n->part_delta_uj, EP_N) &&
             get_u64s(cJSON_GetObjectItem(x, "idle"), &n->idle_uj, 1) &&
             get_u64s(cJSON_GetObjectItem(x, "class"), n->class_uj, JOB_NCLASSES) &&
             get_u64s(cJSON_GetObjectItem(x, "completed"), n->completed, JOB_NCLASSES);
        /* absent in a state.json of an engine before resume gaps were kept */
        if (ok && cJSON_GetObjectItem(x, "resumeGap"))
            ok = get_u64s(cJSON_GetObjectItem(x, "resumeGap"), &n->resume_gap_uj, 1);
        if (!ok)
            break;
    }
    if (!ok) {
        snprintf(err, errlen, "%s: %s; remove it (the run's other files stay) to start afresh", path, why);
        return -1;
    }
    const cJSON *key = cJSON_GetObjectItem(o, "runKey");
    if (cJSON_IsString(key))
        snprintf(r->key, sizeof r->key, "%s", key->valuestring);
    r->resumed = true;
    r->resume_crash = crash;
    r->resume_tick = r->ticks > 0; /* a state of before the first tick is a fresh start */
    return 0;
}
