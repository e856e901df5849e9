/* runs: one run at a time on the engine; see runs.h. */
#include "runs.h"

#include "diag.h"
#include "engine.h"
#include "events.h"
#include "run.h"
#include "run_checkpoint.h"
#include "run_labels.h"
#include "run_output.h"
#include "trace.h"
#include "spec.h"
#include "ytree.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct past {
    char id[64];
    char *status; /* its final status JSON */
    int state;
};

struct runs {
    struct engine *e;
    pthread_mutex_t lock;
    atomic_int readers_waiting;    /* callers queued for the lock: the tick lets them in first */
    char *dir;
    double base_speed;
    struct run *active;            /* submitted or running */
    struct run_output out;
    bool announced;                /* the stalled-at-start jobs' events are out */
    int checkpoint_errors;
    int64_t checkpoint_mono;       /* CLOCK_MONOTONIC of the last periodic checkpoint */
    struct runs_tap tap;
    struct run_label_map *labels;  /* per node: set at run time (run_labels.h); NULL until the first */
    struct past *past;
    int npast;
    unsigned seq;
    /* metrics over every run since the engine started */
    uint64_t submitted[JOB_NCLASSES];
    uint64_t *completed;           /* [node * JOB_NCLASSES + class] */
    uint64_t bucket[RUN_COMPLETION_BUCKETS + 1];
    double completion_sum;
    uint64_t completion_count;
};

static cJSON *job_attrs(const struct run *r, const struct run_job *j)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "runId", r->id);
    cJSON_AddStringToObject(a, "jobId", j->t->id);
    cJSON_AddStringToObject(a, "class", job_class_names[j->t->cls]);
    if (j->stall_reason)
        cJSON_AddStringToObject(a, "reason", j->stall_reason);
    if (j->state == JS_COMPLETED) {
        cJSON_AddNumberToObject(a, "durationSec", (double)(j->end_ns - j->start_ns) / 1e9);
        cJSON_AddNumberToObject(a, "energyJoules",
                                (double)(j->energy_uj[EP_CPU] + j->energy_uj[EP_DRAM] + j->energy_uj[EP_GPU]) / 1e6);
    }
    if (j->state == JS_RUNNING) {
        cJSON *c = cJSON_AddArrayToObject(a, "cpus");
        for (int k = 0; k < j->t->cpus; k++)
            cJSON_AddItemToArray(c, cJSON_CreateNumber(j->cpus[k]));
        cJSON *g = cJSON_AddArrayToObject(a, "gpus");
        for (int k = 0; k < j->ngpus; k++)
            cJSON_AddItemToArray(g, cJSON_CreateNumber(j->gpus[k]));
    }
    return a;
}

/* on the tick thread, with the lock held */
static void on_job(void *ctx, struct run *r, struct run_job *j)
{
    struct runs *m = ctx;
    struct engine *e = m->e;
    const char *node = j->node >= 0 ? e->nodes[j->node].name : ""; /* a job stalled before placement has none */
    const char *ev = j->state == JS_RUNNING ? "joulie.sim.job.started"
                     : j->state == JS_COMPLETED ? "joulie.sim.job.completed" : "joulie.sim.job.stalled";
    cJSON *attrs = job_attrs(r, j);
    if (m->tap.event && m->out.dir)
        m->tap.event(m->tap.ctx, m->out.dir, e->tick_wall, node, ev, attrs);
    events_emit(e->events, e->tick_wall, node, ev, attrs);
    if (j->state == JS_COMPLETED) {
        m->completed[j->node * JOB_NCLASSES + j->t->cls]++;
        double s = (double)(j->end_ns - j->submit_ns) / 1e9;
        int b = 0;
        while (b < RUN_COMPLETION_BUCKETS && s > run_completion_le[b])
            b++;
        m->bucket[b]++;
        m->completion_sum += s;
        m->completion_count++;
    }
    if (j->state == JS_COMPLETED || j->state == JS_STALLED)
        run_output_job(&m->out, e, r, j);
}

static void lock_caller(struct runs *m);

/* A new or resumed run sees the eco labels set at run time. */
static void apply_labels(struct runs *m, struct run *r)
{
    for (int i = 0; m->labels && i < r->nnodes; i++) {
        const struct run_label *l = run_labels_get(&m->labels[i], "joulie.io/power-profile");
        if (l)
            run_set_eco(r, i, l->value && !strcmp(l->value, "eco"));
    }
}

static void tap_metrics(struct runs *m, bool final)
{
    const struct run *r = m->active;
    if (!m->tap.metrics || !m->out.dir || !r)
        return;
    struct engine *e = m->e;
    unsigned long long sub[JOB_NCLASSES], *done = calloc((size_t)r->nnodes * JOB_NCLASSES + 1, sizeof *done);
    unsigned long long *run = calloc((size_t)r->nnodes + 1, sizeof *run), b[RUN_COMPLETION_BUCKETS + 1];
    const char **names = calloc((size_t)r->nnodes + 1, sizeof *names);
    if (!done || !run || !names)
        abort();
    for (int c = 0; c < JOB_NCLASSES; c++)
        sub[c] = r->submitted[c];
    for (int i = 0; i < r->nnodes; i++) {
        names[i] = e->nodes[i].name;
        for (int c = 0; c < JOB_NCLASSES; c++)
            done[i * JOB_NCLASSES + c] = r->nodes[i].completed[c];
        run[i] = (unsigned long long)r->nodes[i].njobs;
    }
    for (int k = 0; k <= RUN_COMPLETION_BUCKETS; k++)
        b[k] = r->completion_bucket[k];
    struct runs_metrics x = {.run_id = r->id, .run_dir = m->out.dir, .wall_ns = e->tick_wall,
                             .start_wall_ns = e->tick_wall - r->now_ns, .submitted = sub, .nnodes = r->nnodes,
                             .node_names = names, .completed = done, .running = run, .le = run_completion_le,
                             .buckets = b, .nle = RUN_COMPLETION_BUCKETS, .sum = r->completion_sum_s,
                             .count = (unsigned long long)r->count[JS_COMPLETED], .final = final};
    m->tap.metrics(m->tap.ctx, &x);
    free(done);
    free(run);
    free(names);
}

void runs_set_tap(struct runs *m, const struct runs_tap *tap)
{
    lock_caller(m);
    m->tap = tap ? *tap : (struct runs_tap){0};
    pthread_mutex_unlock(&m->lock);
}

static void finish(struct runs *m)
{
    tap_metrics(m, true);
    struct run *r = m->active;
    if (m->out.dir) { /* an ended run is not resumed */
        char p[4200];
        snprintf(p, sizeof p, "%s/state.json", m->out.dir);
        unlink(p);
    }
    run_output_close(&m->out, m->e, r);
    cJSON *s = run_status_json(m->e, r);
    m->past = realloc(m->past, sizeof *m->past * (size_t)(m->npast + 1));
    struct past *p = &m->past[m->npast++];
    snprintf(p->id, sizeof p->id, "%s", r->id);
    p->status = cJSON_PrintUnformatted(s);
    p->state = r->state;
    cJSON_Delete(s);
    run_free(r);
    m->active = NULL;
}

/* The lock for callers other than the tick: at --speed max the tick takes the lock back at once,
 * so callers announce themselves and the tick yields to them (before()). */
static void lock_caller(struct runs *m)
{
    atomic_fetch_add(&m->readers_waiting, 1);
    pthread_mutex_lock(&m->lock);
    atomic_fetch_sub(&m->readers_waiting, 1);
}

static int64_t mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void before(void *ctx, struct engine *e)
{
    struct runs *m = ctx;
    while (atomic_load(&m->readers_waiting) > 0)
        sched_yield();
    pthread_mutex_lock(&m->lock); /* held until after(): a status read sees whole ticks */
    struct run *r = m->active;
    if (!r)
        return;
    uint64_t before_sub[JOB_NCLASSES];
    memcpy(before_sub, r->submitted, sizeof before_sub);
    run_before(r, e);
    if (!m->announced) {
        m->announced = true;
        for (int k = 0; k < r->njobs; k++)
            if (r->jobs[k].state == JS_STALLED)
                on_job(m, r, &r->jobs[k]);
    }
    for (int c = 0; c < JOB_NCLASSES; c++)
        m->submitted[c] += r->submitted[c] - before_sub[c];
}

static void after(void *ctx, struct engine *e)
{
    struct runs *m = ctx;
    struct run *r = m->active;
    if (r) {
        run_after(r, e);
        if (r->ending && r->state != RUN_RUNNING) {
            finish(m);
        } else {
            /* for a restart after a crash; at high speeds no more often than every
             * RUN_CHECKPOINT_MIN_WALL_S of wall time (a checkpoint writes every job of the run) */
            int64_t wall = mono_now();
            if (r->ticks % RUN_CHECKPOINT_TICKS == 0 && m->out.dir &&
                wall - m->checkpoint_mono >= RUN_CHECKPOINT_MIN_WALL_S * 1000000000LL) {
                m->checkpoint_mono = wall;
                char err[4400];
                if (run_checkpoint_write(r, m->out.dir, err, sizeof err) && !m->checkpoint_errors++)
                    fprintf(stderr, "hwemu: run %s: %s\n", r->id, err);
            }
            if (r->ticks % RUNS_METRICS_TICKS == 0)
                tap_metrics(m, false);
        }
    }
    pthread_mutex_unlock(&m->lock);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A run the engine stopped in the middle of (a state.json and no summary.json), the latest by
 * name, continues. */
static void resume(struct runs *m)
{
    DIR *d = opendir(m->dir);
    if (!d)
        return;
    char **names = NULL;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        char p[4400];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s/state.json", m->dir, de->d_name);
        if (de->d_name[0] == '.' || stat(p, &st))
            continue;
        snprintf(p, sizeof p, "%s/%s/summary.json", m->dir, de->d_name);
        if (!stat(p, &st))
            continue;
        names = realloc(names, sizeof *names * (size_t)(n + 1));
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        if (i == n - 1) {
            char dir[4400], path[4500], err[4600];
            snprintf(dir, sizeof dir, "%s/%s", m->dir, names[i]);
            snprintf(path, sizeof path, "%s/trace.jsonl", dir);
            struct trace t;
            struct diag dg = {0};
            if (trace_load(&t, path, NULL, NULL, &dg)) {
                fprintf(stderr, "hwemu: cannot resume run %s: its trace.jsonl does not load:\n", names[i]);
                diag_print(&dg, stderr);
            } else {
                struct run *r = run_create(m->e, &t, names[i], m->base_speed);
                if (run_checkpoint_apply(r, dir, err, sizeof err) || run_output_reopen(&m->out, dir, err, sizeof err)) {
                    fprintf(stderr, "hwemu: cannot resume run %s: %s\n", names[i], err);
                    run_free(r);
                } else {
                    r->on_job = on_job;
                    r->ctx = m;
                    apply_labels(m, r);
                    m->active = r;
                    m->announced = true;
                    fprintf(stderr, "hwemu: run %s resumes at %.3f s (%d of %d jobs completed)\n", names[i],
                            (double)r->now_ns / 1e9, r->count[JS_COMPLETED], r->njobs);
                }
            }
            diag_free(&dg);
        }
        free(names[i]);
    }
    free(names);
}

struct runs *runs_attach(struct engine *e, const char *runs_dir, double base_speed)
{
    struct runs *m = calloc(1, sizeof *m);
    if (!m)
        abort();
    m->e = e;
    pthread_mutex_init(&m->lock, NULL);
    if (runs_dir && *runs_dir)
        m->dir = strdup(runs_dir);
    else if (asprintf(&m->dir, "%s/runs", e->cfg.root) < 0)
        abort();
    m->base_speed = base_speed;
    m->completed = calloc((size_t)(e->nnodes ? e->nnodes : 1) * JOB_NCLASSES, sizeof *m->completed);
    e->hooks = (struct engine_hooks){.ctx = m, .before = before, .after = after};
    resume(m);
    return m;
}

void runs_detach(struct runs *m)
{
    if (!m)
        return;
    if (m->active) {
        struct run *r = m->active;
        for (int i = 0; r->active && i < r->nnodes; i++) { /* no tick runs any more */
            struct node *nd = &m->e->nodes[i];
            if (nd->load_hook) {
                nd->load = r->nodes[i].base;
                nd->gload = r->nodes[i].gbase;
                nd->load_hook = NULL;
                nd->load_ctx = NULL;
            }
        }
        /* the engine stops: the run is suspended and the next start on this runs directory
         * resumes it; if its state cannot be kept, it ends as stopped with its outputs */
        char err[4400];
        if (m->out.dir && !run_checkpoint_write(r, m->out.dir, err, sizeof err)) {
            fprintf(stderr, "hwemu: run %s suspended at %.3f s; a restart on this root resumes it\n", r->id,
                    (double)r->now_ns / 1e9);
            tap_metrics(m, true);
            run_output_suspend(&m->out);
            run_free(r);
            m->active = NULL;
        } else {
            if (m->out.dir)
                fprintf(stderr, "hwemu: run %s: %s; it ends as stopped\n", r->id, err);
            r->state = RUN_STOPPED;
            finish(m);
        }
    }
    m->e->hooks = (struct engine_hooks){0};
    for (int i = 0; m->labels && i < m->e->nnodes; i++)
        run_labels_free(&m->labels[i]);
    free(m->labels);
    for (int i = 0; i < m->npast; i++)
        free(m->past[i].status);
    free(m->past);
    free(m->completed);
    free(m->dir);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

int runs_submit(struct runs *m, const char *label, const char *text, size_t len, unsigned mode, bool quiet, char *id,
                size_t idlen, struct diag *d)
{
    lock_caller(m);
    if (m->active) {
        snprintf(id, idlen, "%s", m->active->id);
        pthread_mutex_unlock(&m->lock);
        return EBUSY;
    }
    pthread_mutex_unlock(&m->lock);
    struct trace t;
    if ((quiet ? trace_parse_quiet : trace_parse)(&t, label, text, len, d))
        return EINVAL;
    char rid[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    lock_caller(m);
    unsigned seq = ++m->seq;
    pthread_mutex_unlock(&m->lock);
    char dir[4096], err[4200];
    struct stat st;
    do { /* never an existing run's directory */
        snprintf(rid, sizeof rid, "run-%04d%02d%02dT%02d%02d%02dZ-%u", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                 tm.tm_hour, tm.tm_min, tm.tm_sec, seq++);
        snprintf(dir, sizeof dir, "%s/%s", m->dir, rid);
    } while (!stat(dir, &st));
    struct run *r = run_create(m->e, &t, rid, m->base_speed);
    struct run_output out;
    if (run_output_open(&out, dir, text, len, mode, err, sizeof err)) {
        diag_add(d, NULL, "%s", err);
        run_free(r);
        return EIO;
    }
    lock_caller(m);
    if (m->active) { /* another came first */
        snprintf(id, idlen, "%s", m->active->id);
        pthread_mutex_unlock(&m->lock);
        run_output_close(&out, m->e, r);
        run_free(r);
        return EBUSY;
    }
    r->on_job = on_job;
    r->ctx = m;
    apply_labels(m, r);
    m->active = r;
    m->out = out;
    m->announced = false;
    snprintf(id, idlen, "%s", rid);
    pthread_mutex_unlock(&m->lock);
    return 0;
}

int runs_submit_path(struct runs *m, const char *path, char *id, size_t idlen, struct diag *d)
{
    struct trace t;
    char *raw = NULL;
    size_t len = 0;
    if (trace_load(&t, path, &raw, &len, d))
        return EINVAL;
    unsigned mode = t.mode;
    trace_free(&t);
    int rc = runs_submit(m, path, raw, len, mode, false, id, idlen, d);
    free(raw);
    return rc;
}

int runs_stop(struct runs *m, const char *id)
{
    lock_caller(m);
    int rc = ENOENT;
    if (m->active && !strcmp(m->active->id, id)) {
        run_stop(m->active);
        rc = 0;
    } else {
        for (int i = 0; i < m->npast; i++)
            if (!strcmp(m->past[i].id, id))
                rc = EALREADY;
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

cJSON *runs_list_json(struct runs *m)
{
    lock_caller(m);
    cJSON *o = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(o, "runs");
    for (int i = 0; i < m->npast; i++)
        cJSON_AddItemToArray(a, cJSON_Parse(m->past[i].status));
    if (m->active)
        cJSON_AddItemToArray(a, run_status_json(m->e, m->active));
    pthread_mutex_unlock(&m->lock);
    return o;
}

cJSON *runs_get_json(struct runs *m, const char *id)
{
    lock_caller(m);
    cJSON *o = NULL;
    if (m->active && !strcmp(m->active->id, id))
        o = run_status_json(m->e, m->active);
    for (int i = 0; !o && i < m->npast; i++)
        if (!strcmp(m->past[i].id, id))
            o = cJSON_Parse(m->past[i].status);
    pthread_mutex_unlock(&m->lock);
    return o;
}

bool runs_active_id(struct runs *m, char *id, size_t idlen)
{
    lock_caller(m);
    bool b = m->active != NULL;
    if (b)
        snprintf(id, idlen, "%s", m->active->id);
    pthread_mutex_unlock(&m->lock);
    return b;
}

bool runs_busy(struct runs *m)
{
    lock_caller(m);
    bool b = m->active != NULL;
    pthread_mutex_unlock(&m->lock);
    return b;
}

const char *runs_state(struct runs *m, const char *id)
{
    lock_caller(m);
    const char *s = NULL;
    if (m->active && !strcmp(m->active->id, id))
        s = run_state_names[m->active->state];
    for (int i = 0; !s && i < m->npast; i++)
        if (!strcmp(m->past[i].id, id))
            s = run_state_names[m->past[i].state];
    pthread_mutex_unlock(&m->lock);
    return s;
}

/* Kubernetes label syntax: an optional DNS-subdomain prefix and '/', a name of at most 63
 * characters [A-Za-z0-9._-] starting and ending alphanumeric; values the same or empty. */
static bool label_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
            return false;
    return true;
}

static bool label_key_ok(const char *k)
{
    const char *slash = strchr(k, '/');
    if (!slash)
        return label_name_ok(k, strlen(k));
    size_t p = (size_t)(slash - k);
    if (p == 0 || p > 253)
        return false;
    for (size_t i = 0; i < p; i++)
        if (!isalnum((unsigned char)k[i]) && !strchr(".-", k[i]))
            return false;
    return label_name_ok(slash + 1, strlen(slash + 1));
}

int runs_label_check(const char *key, const char *value, char *err, size_t errlen)
{
    if (!label_key_ok(key)) {
        snprintf(err, errlen, "\"%s\" is not a label key: [prefix/]name, the name at most 63 characters of "
                 "[A-Za-z0-9._-] starting and ending alphanumeric", key);
        return EINVAL;
    }
    if (value && *value && !label_name_ok(value, strlen(value))) {
        snprintf(err, errlen, "label %s: \"%s\" is not a label value: at most 63 characters of [A-Za-z0-9._-] "
                 "starting and ending alphanumeric, or empty", key, value);
        return EINVAL;
    }
    return 0;
}

/* The node's spec label maps: the defaults and its pool's. */
static void spec_labels(const struct runs *m, int i, const struct yt_node *maps[2])
{
    const struct cluster_spec *sp = &m->e->spec;
    maps[0] = sp->default_labels;
    maps[1] = sp->pools[sp->nodes[i].pool].labels;
}

int runs_set_labels(struct runs *m, const char *node, const struct run_label_edit *edits, int n, char *err,
                    size_t errlen)
{
    int i = engine_find(m->e, node);
    if (i < 0)
        return ENOENT;
    if (n > RUN_LABELS_MAX) {
        snprintf(err, errlen, "%d labels in one request: a node holds at most %d run-time labels", n, RUN_LABELS_MAX);
        return E2BIG;
    }
    for (int k = 0; k < n; k++) /* all or nothing: every label checked first, without the lock */
        if (runs_label_check(edits[k].key, edits[k].value, err, errlen))
            return EINVAL;
    const struct yt_node *maps[2];
    spec_labels(m, i, maps);
    /* under the lock: linear in the node's labels and the request, both bounded by
     * RUN_LABELS_MAX (the tick waits for it at most that long) */
    lock_caller(m);
    if (!m->labels) {
        m->labels = calloc((size_t)m->e->nnodes, sizeof *m->labels);
        if (!m->labels)
            abort();
    }
    int would = 0;
    int rc = run_labels_apply(&m->labels[i], edits, n, maps, RUN_LABELS_MAX, &would);
    if (rc == E2BIG)
        snprintf(err, errlen, "node %s would hold %d run-time labels: at most %d (remove some with null first)",
                 node, would, RUN_LABELS_MAX);
    const struct run_label *eco = rc ? NULL : run_labels_get(&m->labels[i], "joulie.io/power-profile");
    for (int k = 0; !rc && m->active && k < n; k++)
        if (!strcmp(edits[k].key, "joulie.io/power-profile")) {
            run_set_eco(m->active, i, eco && eco->value && !strcmp(eco->value, "eco"));
            break;
        }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

cJSON *runs_node_labels_json(struct runs *m, const char *node)
{
    int i = engine_find(m->e, node);
    if (i < 0)
        return NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "node", node);
    cJSON *l = cJSON_AddObjectToObject(o, "labels");
    const struct yt_node *maps[2];
    spec_labels(m, i, maps);
    static const struct run_label_map none;
    lock_caller(m);
    run_labels_json(m->labels ? &m->labels[i] : &none, maps, l);
    pthread_mutex_unlock(&m->lock);
    return o;
}

struct text {
    char *p;
    size_t len, cap;
};

static void tprintf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tprintf(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->len + (size_t)n + 1 > t->cap) {
        t->cap = (t->len + (size_t)n + 1) * 2;
        t->p = realloc(t->p, t->cap);
        if (!t->p)
            abort();
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

char *runs_metrics_text(struct runs *m)
{
    struct text t = {0};
    tprintf(&t, "%s", "");
    lock_caller(m);
    struct engine *e = m->e;
    tprintf(&t, "# HELP joulie_sim_job_submitted_total Jobs submitted by workload runs, by class.\n"
                "# TYPE joulie_sim_job_submitted_total counter\n");
    for (int c = 0; c < JOB_NCLASSES; c++)
        tprintf(&t, "joulie_sim_job_submitted_total{class=\"%s\"} %llu\n", job_class_names[c],
                (unsigned long long)m->submitted[c]);
    tprintf(&t, "# HELP joulie_sim_job_completed_total Jobs completed, by class and node.\n"
                "# TYPE joulie_sim_job_completed_total counter\n");
    for (int i = 0; i < e->nnodes; i++)
        for (int c = 0; c < JOB_NCLASSES; c++)
            if (m->completed[i * JOB_NCLASSES + c])
                tprintf(&t, "joulie_sim_job_completed_total{class=\"%s\",node=\"%s\"} %llu\n", job_class_names[c],
                        e->nodes[i].name, (unsigned long long)m->completed[i * JOB_NCLASSES + c]);
    tprintf(&t, "# HELP joulie_sim_job_completion_seconds Emulated time from a job's submission to its completion.\n"
                "# TYPE joulie_sim_job_completion_seconds histogram\n");
    uint64_t cum = 0;
    for (int b = 0; b < RUN_COMPLETION_BUCKETS; b++) {
        cum += m->bucket[b];
        tprintf(&t, "joulie_sim_job_completion_seconds_bucket{le=\"%g\"} %llu\n", run_completion_le[b],
                (unsigned long long)cum);
    }
    cum += m->bucket[RUN_COMPLETION_BUCKETS];
    tprintf(&t, "joulie_sim_job_completion_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    tprintf(&t, "joulie_sim_job_completion_seconds_sum %.6f\njoulie_sim_job_completion_seconds_count %llu\n",
            m->completion_sum, (unsigned long long)m->completion_count);
    tprintf(&t, "# HELP joulie_sim_node_running_pods Jobs of the active run on the node.\n"
                "# TYPE joulie_sim_node_running_pods gauge\n");
    const struct run *r = m->active && m->active->active ? m->active : NULL;
    for (int i = 0; i < e->nnodes; i++)
        tprintf(&t, "joulie_sim_node_running_pods{node=\"%s\"} %d\n", e->nodes[i].name, r ? r->nodes[i].njobs : 0);
    tprintf(&t, "# HELP joulie_sim_node_class_info The node's class: its pool in the cluster spec.\n"
                "# TYPE joulie_sim_node_class_info gauge\n");
    for (int i = 0; i < e->nnodes; i++)
        tprintf(&t, "joulie_sim_node_class_info{node=\"%s\",class=\"%s\"} 1\n", e->nodes[i].name,
                e->spec.pools[e->spec.nodes[i].pool].name);
    pthread_mutex_unlock(&m->lock);
    return t.p;
}
