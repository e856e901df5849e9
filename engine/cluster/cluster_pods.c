/* cluster_pods: a run's jobs as Jobs and pods; see cluster_pods.h.
 * The tick thread (through the placer, with the runs' lock held) and this file's thread share:
 *   - a table per run whose pods are seen: per job (its index in the run's trace: the pod's
 *     completion index picks it from its Job's sim.joulie.io/job-indices), the engine node its pod is bound to (-1: none of the engine's, or
 *     not bound), the pod's namespace and name. A table is made by the first of the placer's
 *     calls for its run or the first pod of it the watch shows Pending or Running, whichever
 *     comes first: a run resumed after a restart finds its pods from the watch's first list,
 *     which comes before its first tick or after. It goes when its run ends (pl_end); the
 *     finished pods of runs that are gone never make one;
 *   - the list of requests to make: Job creations (the body built on the tick thread, while the
 *     trace is surely alive) and completion annotations.
 * Both under mu, held only to read or swap pointers: requests are made without it. A request the
 * API refuses or cannot answer is tried again with a backoff (0.5 s doubling to 30 s); a 409 on a
 * creation (the Job exists: a resumed run, or another shard made it) counts as done, a 404 on an
 * annotation (the pod is gone) too. */
#include "cluster_pods.h"

#include "cluster_jobjson.h"
#include "engine.h"
#include "kube_client.h"
#include "kube_config.h"
#include "kube_queue.h"
#include "kube_watch.h"
#include "run.h"
#include "run_placer.h"
#include "spec.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOOP_WAIT_MS 200
#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000
/* a job index of a pod's sim.joulie.io/job-indices above this is not one of ours (no table that large is made) */
#define TRACE_MAX_JOBS_INDEX 10000000

enum req_kind { REQ_CREATE, REQ_COMPLETE, REQ_DELETE, REQ_LIST };

struct req {
    struct req *next;
    enum req_kind kind;
    char run_id[64]; /* the run's key (run_key): what its Jobs and pods are labelled with */
    char *path;     /* POST (create), PATCH (complete), DELETE or GET (list) */
    cJSON *body;
    char what[128]; /* for messages: "Job sim-x-1234abcd (job x)" */
    int64_t due;    /* CLOCK_MONOTONIC ns */
    int backoff_ms;
};

/* A job whose pod another shard's node runs (a sharded engine): bound there, then finished. */
enum away { AWAY_NO = 0, AWAY_BOUND, AWAY_DONE };

struct pjob {
    int node;   /* engine node index its pod is bound to, -1 */
    int away;   /* enum away */
    bool done;  /* the job's work is done here: its pod is to be annotated complete */
    bool annotated; /* ... and that was asked for, for the pod named here */
    char *ns, *pod;
};

struct prun {
    struct prun *next;
    char id[64];       /* the run key */
    struct pjob *jobs;
    int n;
    int *first;        /* per job of the run: the first job of its group (its Job's name); NULL
                        * until the placer's first call gives the run */
    unsigned char *made; /* per group's first job: this engine asked for its Job (a resumed
                          * run asks again for its waiting jobs' Jobs: a stop may have come
                          * between a submission and its request; the API answers 409 if made) */
};

struct cluster_pods {
    struct engine *e;
    struct kube_client *kc;
    struct kube_queue *q;
    struct kube_watch *w;
    pthread_t thread;
    bool started;
    atomic_bool stop;
    struct run_placer placer;
    pthread_mutex_t mu;        /* guards what follows */
    struct prun *runs;         /* the tables, newest first */
    struct req *reqs;          /* to make, oldest first */
    struct req **reqs_tail;    /* where the next goes: a push is O(1) on the tick thread */
    bool sharded;              /* the engine is one shard of several (--shard) */
    /* this thread's own */
    char said_run[64];         /* the run whose start was said */
    bool troubled;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void req_free(struct req *r)
{
    if (!r)
        return;
    free(r->path);
    cJSON_Delete(r->body);
    free(r);
}

static void prun_free(struct prun *t)
{
    for (int k = 0; k < t->n; k++) {
        free(t->jobs[k].ns);
        free(t->jobs[k].pod);
    }
    free(t->jobs);
    free(t->first);
    free(t->made);
    free(t);
}

/* The groups of run r (cluster_job_same_group): jobs are in submit order, so a group's jobs
 * are among those of its first one's submit time. */
static void group(struct prun *t, const struct run *r)
{
    t->first = malloc(sizeof *t->first * (size_t)(r->njobs ? r->njobs : 1));
    t->made = calloc((size_t)(r->njobs ? r->njobs : 1), 1);
    if (!t->first || !t->made)
        abort();
    for (int k = 0; k < r->njobs; k++)
        t->first[k] = -1;
    for (int k = 0; k < r->njobs; k++) {
        if (t->first[k] >= 0)
            continue;
        t->first[k] = k;
        const struct trace_job *a = r->jobs[k].t;
        for (int m = k + 1; m < r->njobs && r->jobs[m].t->submit_s == a->submit_s; m++)
            if (t->first[m] < 0 && cluster_job_same_group(a, r->jobs[m].t))
                t->first[m] = k;
    }
}

/* The table of run id (mu held), made with room for n jobs when make; NULL when there is none. */
static struct prun *table(struct cluster_pods *p, const char *id, int n, bool make)
{
    struct prun *t = p->runs;
    while (t && strcmp(t->id, id))
        t = t->next;
    if (!t && !make)
        return NULL;
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t)
            abort();
        snprintf(t->id, sizeof t->id, "%s", id);
        t->next = p->runs;
        p->runs = t;
    }
    if (n > t->n) {
        t->jobs = realloc(t->jobs, sizeof *t->jobs * (size_t)n);
        if (!t->jobs)
            abort();
        for (int k = t->n; k < n; k++)
            t->jobs[k] = (struct pjob){.node = -1};
        t->n = n;
    }
    return t;
}

static void table_drop(struct cluster_pods *p, const char *id)
{
    for (struct prun **t = &p->runs; *t; t = &(*t)->next)
        if (!strcmp((*t)->id, id)) {
            struct prun *d = *t;
            *t = d->next;
            prun_free(d);
            return;
        }
}

/* with mu held */
static void push(struct cluster_pods *p, struct req *r)
{
    *p->reqs_tail = r;
    p->reqs_tail = &r->next;
}

/* ---- the placer (tick thread, runs' lock held) ------------------------------------------ */

/* The run's table, grouped (mu held). On a sharded engine, its first making asks for the run's
 * pods as they are now: another shard may have run some of them to their end before this
 * shard's run began, and the watch makes no table for a finished pod of a run it does not know
 * (nor shows that pod again). */
static struct prun *run_table(struct cluster_pods *p, const struct run *r)
{
    struct prun *t = table(p, run_key(r), r->njobs, true);
    if (t->first)
        return t;
    group(t, r);
    if (p->sharded) {
        struct req *q = calloc(1, sizeof *q);
        char *sel = NULL, *esc = NULL;
        if (!q || asprintf(&sel, "%s=%s", CLUSTER_POD_RUN_KEY, run_key(r)) < 0 || !(esc = kube_escape(sel)) ||
            asprintf(&q->path, "/api/v1/pods?labelSelector=%s", esc) < 0)
            abort();
        free(sel);
        free(esc);
        q->kind = REQ_LIST;
        snprintf(q->run_id, sizeof q->run_id, "%s", run_key(r));
        snprintf(q->what, sizeof q->what, "the pods of run key %s", run_key(r));
        push(p, q);
    }
    return t;
}

/* Asks for the Job of the group whose first job is f (at most once a run and engine). */
static void request_group(struct cluster_pods *p, const struct run *r, int f)
{
    pthread_mutex_lock(&p->mu);
    struct prun *t = run_table(p, r);
    bool made = t->made[f];
    t->made[f] = 1;
    const int *first = t->first; /* set once; freed only by pl_end, on the tick thread as we are */
    pthread_mutex_unlock(&p->mu);
    if (made)
        return;
    const struct trace_job *ft = r->jobs[f].t;
    int n = 0, *index = malloc(sizeof *index * (size_t)r->njobs);
    const struct trace_job **members = malloc(sizeof *members * (size_t)r->njobs);
    if (!index || !members)
        abort();
    for (int m = f; m < r->njobs && r->jobs[m].t->submit_s == ft->submit_s; m++)
        if (first[m] == f) {
            index[n] = m;
            members[n++] = r->jobs[m].t;
        }
    struct req *q = calloc(1, sizeof *q);
    if (!q)
        abort();
    q->kind = REQ_CREATE;
    snprintf(q->run_id, sizeof q->run_id, "%s", run_key(r));
    q->body = cluster_job_json(run_key(r), index, members, n, p->e->spec.name);
    q->path = kube_path("batch/v1", ft->ns, "jobs", NULL);
    char name[64];
    cluster_job_name(run_key(r), ft->id, name, sizeof name);
    snprintf(q->what, sizeof q->what, "Job %s/%s (job %.48s%s)", ft->ns, name, ft->id, n > 1 ? " and its group" : "");
    free(index);
    free(members);
    pthread_mutex_lock(&p->mu);
    push(p, q);
    pthread_mutex_unlock(&p->mu);
    kube_queue_wake(p->q);
}

static void pl_submit(void *ctx, const struct run *r, const struct run_job *j)
{
    struct cluster_pods *p = ctx;
    pthread_mutex_lock(&p->mu);
    int f = run_table(p, r)->first[j->index];
    pthread_mutex_unlock(&p->mu);
    /* a group's Job is made with its first job; the others are submitted at the same time */
    request_group(p, r, f);
}

static int pl_bound(void *ctx, const struct run *r, const struct run_job *j)
{
    struct cluster_pods *p = ctx;
    int i = -1;
    pthread_mutex_lock(&p->mu);
    const struct prun *t = run_table(p, r);
    if (j->index < t->n) {
        const struct pjob *pj = &t->jobs[j->index];
        i = pj->node >= 0           ? pj->node
            : pj->away == AWAY_DONE ? RUN_PLACER_ELSEWHERE_DONE
            : pj->away              ? RUN_PLACER_ELSEWHERE
                                    : RUN_PLACER_NOT_BOUND;
    }
    int f = t->first[j->index];
    bool made = t->made[f];
    pthread_mutex_unlock(&p->mu);
    if (!made) /* a resumed run's waiting job */
        request_group(p, r, f);
    return i;
}

/* Asks for pod pj's annotation sim.joulie.io/complete (mu held; the pod known). */
static void annotate(struct cluster_pods *p, struct pjob *pj, const char *key)
{
    struct req *q = calloc(1, sizeof *q);
    if (!q)
        abort();
    q->kind = REQ_COMPLETE;
    snprintf(q->run_id, sizeof q->run_id, "%s", key);
    q->path = kube_path("v1", pj->ns, "pods", pj->pod);
    q->body = cJSON_CreateObject();
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(q->body, "metadata"), "annotations"),
                            CLUSTER_POD_COMPLETE_KEY, "true");
    snprintf(q->what, sizeof q->what, "pod %s/%.60s (run key %.40s)", pj->ns, pj->pod, key);
    push(p, q);
    pj->annotated = true;
}

/* The job's pod is annotated now, or as soon as the watch shows it: a job running when the
 * engine stopped may end at the restart's first ticks, before the watch's first list. */
static void pl_done(void *ctx, const struct run *r, const struct run_job *j)
{
    struct cluster_pods *p = ctx;
    pthread_mutex_lock(&p->mu);
    struct prun *t = run_table(p, r);
    struct pjob *pj = j->index < t->n ? &t->jobs[j->index] : NULL;
    if (pj) {
        pj->done = true;
        if (pj->pod)
            annotate(p, pj, run_key(r));
    }
    pthread_mutex_unlock(&p->mu);
    kube_queue_wake(p->q);
}

static void pl_end(void *ctx, const struct run *r)
{
    struct cluster_pods *p = ctx;
    /* A run that ended (not one suspended, which resumes with its pods) takes away the Jobs of
     * the groups that did not complete whole: a stalled job's Pending pod, a stopped run's
     * running ones. Completed Jobs stay, as Kubernetes keeps them, for whoever reads the cluster.
     * On a shard, a job another shard runs (elsewhere) is that shard's business: a group is taken
     * away here only for a job of it that is neither completed here nor elsewhere. */
    bool ended = r->state != RUN_RUNNING && r->state != RUN_SUSPENDED;
    pthread_mutex_lock(&p->mu);
    const int *first = run_table(p, r)->first;
    for (int k = 0; ended && k < r->next_submit; k++) { /* submitted: in submit order, so the first ones */
        const struct run_job *j = &r->jobs[k];
        bool whole = true; /* every job of its group (k first) completed, here or on another shard */
        for (int m = k; first[k] == k && m < r->next_submit && r->jobs[m].t->submit_s == j->t->submit_s; m++)
            whole &= first[m] != k || r->jobs[m].state == JS_COMPLETED || r->jobs[m].state == JS_ELSEWHERE;
        if (first[k] != k || whole)
            continue;
        char name[64];
        cluster_job_name(run_key(r), j->t->id, name, sizeof name);
        struct req *q = calloc(1, sizeof *q);
        if (!q)
            abort();
        q->kind = REQ_DELETE;
        snprintf(q->run_id, sizeof q->run_id, "%s", run_key(r));
        char *base = kube_path("batch/v1", j->t->ns, "jobs", name);
        if (!base || asprintf(&q->path, "%s?propagationPolicy=Background", base) < 0)
            abort();
        free(base);
        snprintf(q->what, sizeof q->what, "Job %s/%s (job %.48s, %s)", j->t->ns, name, j->t->id,
                 job_state_names[j->state]);
        push(p, q);
    }
    table_drop(p, run_key(r));
    /* Jobs of it not yet made are not made: nothing would run them (completions still go out) */
    for (struct req **t = &p->reqs; *t;) {
        if ((*t)->kind == REQ_CREATE && !strcmp((*t)->run_id, run_key(r))) {
            struct req *d = *t;
            *t = d->next;
            req_free(d);
        } else {
            t = &(*t)->next;
        }
    }
    p->reqs_tail = &p->reqs;
    while (*p->reqs_tail)
        p->reqs_tail = &(*p->reqs_tail)->next;
    pthread_mutex_unlock(&p->mu);
}

/* ---- the thread ---------------------------------------------------------------------------- */

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A pod's state into the table (mu held). gone: deleted. */
static void on_pod(struct cluster_pods *p, const cJSON *pod, bool gone)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(meta, "labels"),
                                                        CLUSTER_POD_RUN_KEY);
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
    const cJSON *ixs = cJSON_GetObjectItemCaseSensitive(ann, CLUSTER_POD_INDICES_KEY);
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(ann, CLUSTER_POD_COMPLETION_INDEX_KEY);
    const char *name = kube_object_name(pod), *ns = str_at(pod, "metadata", "namespace");
    if (!cJSON_IsString(run) || !cJSON_IsString(ixs) || !name || !ns)
        return; /* not hwemu's */
    /* the completion index-th of the group's indices (0 before the controller says: a group of one) */
    char *end;
    long c = cJSON_IsString(ci) ? strtol(ci->valuestring, &end, 10) : 0;
    if (c < 0 || (cJSON_IsString(ci) && *end))
        return;
    const char *s = ixs->valuestring;
    for (; c > 0 && s; c--) {
        const char *comma = strchr(s, ',');
        s = comma ? comma + 1 : NULL;
    }
    if (!s)
        return;
    long k = strtol(s, &end, 10);
    if (end == s || (*end && *end != ',') || k < 0 || k >= TRACE_MAX_JOBS_INDEX)
        return;
    const char *phase = str_at(pod, "status", "phase");
    bool live = !gone && phase && (!strcmp(phase, "Pending") || !strcmp(phase, "Running"));
    bool finished = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
    struct prun *t = table(p, run->valuestring, (int)k + 1, live); /* a finished pod of an unknown run: none */
    if (!t)
        return;
    struct pjob *pj = &t->jobs[k];
    bool deleting = str_at(pod, "metadata", "deletionTimestamp") != NULL;
    if (gone || deleting) { /* the Job controller may make another: its events will say where */
        if (pj->pod && !strcmp(pj->pod, name)) {
            if (pj->away) /* its Job was taken away there: nothing runs it any more */
                pj->away = AWAY_DONE;
            free(pj->pod);
            free(pj->ns);
            pj->pod = pj->ns = NULL;
            pj->node = -1;
        }
        return;
    }
    if (!pj->pod || strcmp(pj->pod, name)) {
        free(pj->pod);
        free(pj->ns);
        pj->pod = strdup(name);
        pj->ns = strdup(ns);
        if (!pj->pod || !pj->ns)
            abort();
        pj->node = -1;
        pj->away = AWAY_NO;
        pj->annotated = false;
    }
    if (pj->done && !pj->annotated && !finished) /* its job ended before its pod was seen */
        annotate(p, pj, t->id);
    /* A pod's binding and its end never go back (a list on a sharded engine may be answered
     * after newer watch events were seen): an older state of the same pod changes nothing. */
    const char *node = str_at(pod, "spec", "nodeName");
    if (!node)
        return;
    pj->node = engine_find(p->e, node); /* a node of another shard: -1, not ours to run */
    if (pj->node < 0 && p->sharded)
        pj->away = finished || pj->away == AWAY_DONE ? AWAY_DONE : AWAY_BOUND;
}

static void on_event(struct cluster_pods *p, struct kube_event *ev)
{
    const cJSON *it;
    switch (ev->type) {
    case KUBE_EV_SYNC:
        pthread_mutex_lock(&p->mu);
        cJSON_ArrayForEach(it, ev->object)
            on_pod(p, it, false);
        pthread_mutex_unlock(&p->mu);
        if (p->troubled)
            fprintf(stderr, "hwemu serve: kubernetes: the pods watch answers again\n");
        p->troubled = false;
        break;
    case KUBE_EV_ADDED:
    case KUBE_EV_MODIFIED:
    case KUBE_EV_DELETED:
        pthread_mutex_lock(&p->mu);
        on_pod(p, ev->object, ev->type == KUBE_EV_DELETED);
        pthread_mutex_unlock(&p->mu);
        break;
    case KUBE_EV_TROUBLE:
        fprintf(stderr, "hwemu serve: kubernetes: %s (jobs wait for their pods meanwhile)\n", ev->message);
        p->troubled = true;
        break;
    default: break;
    }
}

/* Makes every request that is due; what fails goes back with a backoff. */
static void make_requests(struct cluster_pods *p)
{
    pthread_mutex_lock(&p->mu);
    struct req *list = p->reqs;
    p->reqs = NULL;
    p->reqs_tail = &p->reqs;
    pthread_mutex_unlock(&p->mu);
    struct req *again = NULL, **tail = &again;
    int64_t now = mono_ns();
    int failed = 0;
    char first[1400] = "";
    int first_backoff = 0;
    while (list) {
        struct req *r = list;
        list = r->next;
        r->next = NULL;
        if (atomic_load(&p->stop) || r->due > now) {
            *tail = r;
            tail = &r->next;
            continue;
        }
        char err[1024];
        cJSON *pods = NULL;
        long st = r->kind == REQ_CREATE   ? kube_create(p->kc, r->path, r->body, NULL, err, sizeof err)
                  : r->kind == REQ_DELETE ? kube_delete(p->kc, r->path, err, sizeof err)
                  : r->kind == REQ_LIST   ? kube_get(p->kc, r->path, &pods, err, sizeof err)
                                          : kube_patch(p->kc, r->path, KUBE_PATCH_MERGE, r->body, NULL, err, sizeof err);
        if (st == 0 && pods) { /* the run's pods as they are now, into its table */
            const cJSON *it;
            pthread_mutex_lock(&p->mu);
            cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(pods, "items"))
                on_pod(p, it, false);
            pthread_mutex_unlock(&p->mu);
        }
        cJSON_Delete(pods);
        if (st == 0 || (r->kind == REQ_CREATE && st == 409) || (r->kind != REQ_CREATE && st == 404)) {
            if (r->kind == REQ_CREATE) {
                if (strcmp(p->said_run, r->run_id)) {
                    snprintf(p->said_run, sizeof p->said_run, "%s", r->run_id);
                    fprintf(stderr, "hwemu serve: kubernetes: run %s: each job becomes a batch/v1 Job at its submit "
                            "time; the cluster's scheduler places their pods\n", r->run_id);
                }
            }
            req_free(r);
            continue;
        }
        if (kube_client_aborted(p->kc)) {
            req_free(r);
            continue;
        }
        r->backoff_ms = r->backoff_ms ? r->backoff_ms * 2 : BACKOFF_MIN_MS;
        if (r->backoff_ms > BACKOFF_MAX_MS)
            r->backoff_ms = BACKOFF_MAX_MS;
        r->due = now + (int64_t)r->backoff_ms * 1000000;
        if (!failed++) {
            snprintf(first, sizeof first, "%s: %s", r->what, err);
            first_backoff = r->backoff_ms;
        }
        *tail = r;
        tail = &r->next;
    }
    if (failed) /* one line a pass, not one a request */
        fprintf(stderr, "hwemu serve: kubernetes: %s%s; retrying in %.1f s (the job waits meanwhile)\n", first,
                failed > 1 ? " (and other requests)" : "", first_backoff / 1000.0);
    pthread_mutex_lock(&p->mu);
    if (again) { /* before what the tick added meanwhile */
        *tail = p->reqs;
        if (!p->reqs)
            p->reqs_tail = tail;
        p->reqs = again;
    }
    pthread_mutex_unlock(&p->mu);
}

static void *run(void *arg)
{
    struct cluster_pods *p = arg;
    while (!atomic_load(&p->stop)) {
        struct kube_event *ev = kube_queue_wait(p->q, LOOP_WAIT_MS);
        for (; ev && !atomic_load(&p->stop); ev = kube_queue_pop(p->q)) {
            on_event(p, ev);
            kube_event_free(ev);
        }
        kube_event_free(ev);
        if (!atomic_load(&p->stop))
            make_requests(p);
    }
    return NULL;
}

struct cluster_pods *cluster_pods_attach(struct engine *e, const char *kubeconfig, char *err, size_t errlen)
{
    struct kube_config cfg;
    int rc = !strcmp(kubeconfig, "incluster") ? kube_config_incluster(&cfg, NULL, err, errlen)
                                              : kube_config_load(&cfg, kubeconfig, err, errlen);
    if (rc) {
        kube_config_free(&cfg);
        return NULL;
    }
    struct kube_client *kc = kube_client_new(&cfg, err, errlen);
    kube_config_free(&cfg);
    if (!kc)
        return NULL;
    struct cluster_pods *p = calloc(1, sizeof *p);
    if (!p)
        abort();
    p->e = e;
    p->kc = kc;
    p->q = kube_queue_new();
    pthread_mutex_init(&p->mu, NULL);
    p->reqs_tail = &p->reqs;
    p->placer = (struct run_placer){.name = "kubernetes", .ctx = p, .submit = pl_submit, .bound = pl_bound,
                                    .done = pl_done, .end = pl_end};
    p->sharded = e->cfg.shard_count > 1;
    char *sel = kube_escape(CLUSTER_POD_PART_OF_KEY "=" CLUSTER_POD_PART_OF), *query = NULL;
    if (!sel || asprintf(&query, "labelSelector=%s", sel) < 0)
        abort();
    free(sel);
    p->w = kube_watch_start(kc, "pods", "/api/v1/pods", query, NULL, p->q);
    free(query);
    if (!p->w || pthread_create(&p->thread, NULL, run, p)) {
        snprintf(err, errlen, "cannot start the Kubernetes pods threads");
        cluster_pods_detach(p);
        return NULL;
    }
    p->started = true;
    return p;
}

const struct run_placer *cluster_pods_placer(struct cluster_pods *p)
{
    return &p->placer;
}

void cluster_pods_detach(struct cluster_pods *p)
{
    if (!p)
        return;
    atomic_store(&p->stop, true);
    kube_client_abort(p->kc);
    kube_queue_wake(p->q);
    if (p->started)
        pthread_join(p->thread, NULL);
    kube_watch_stop(p->w);
    kube_queue_free(p->q);
    kube_client_free(p->kc);
    while (p->reqs) {
        struct req *r = p->reqs;
        p->reqs = r->next;
        req_free(r);
    }
    while (p->runs) {
        struct prun *t = p->runs;
        p->runs = t->next;
        prun_free(t);
    }
    pthread_mutex_destroy(&p->mu);
    free(p);
}
