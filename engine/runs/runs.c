/* runs: one run at a time on the engine; see runs.h. */
#include "runs.h"

#include "diag.h"
#include "engine.h"
#include "events.h"
#include "fault.h"
#include "faults.h"
#include "run.h"
#include "run_checkpoint.h"
#include "run_course.h"
#include "run_labels.h"
#include "run_files.h"
#include "run_output.h"
#include "trace.h"
#include "spec.h"
#include "ytree.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
    int dfd;                       /* the runs directory, held open (run_files.h) */
    double base_speed;
    struct run *active;            /* submitted or running */
    bool claimed;                  /* a submission is making claim_id's directory: others get EBUSY */
    char claim_id[64];
    struct run_output out;
    struct run_course course;      /* the active run's course.jsonl (run_course.h) */
    int64_t course_ns;             /* its interval (runs_set_course_interval; 0: the default) */
    bool announced;                /* the stalled-at-start jobs' events are out */
    int checkpoint_errors;
    int64_t checkpoint_mono;       /* CLOCK_MONOTONIC of the last periodic checkpoint */
    int64_t checkpoint_ns;         /* the least wall time between periodic checkpoints */
    int checkpoint_ended;          /* completed + stalled jobs in the last checkpoint */
    cJSON *resume_outputs;         /* the resumed run's outputs lengths, for the tap's files */
    int output_err;                /* the errno of jobs.jsonl's failure last said, 0 */
    struct runs_tap tap;
    const struct run_placer *placer; /* NULL: standalone placement (runs_set_placer) */
    struct run_label_map *labels;  /* per node: set at run time (run_labels.h); NULL until the first */
    struct faults *faults;         /* the fault schedule (faults.h): the spec's, the runs', the requests' */
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
    if (j->state == JS_ELSEWHERE) { /* another shard runs it: its line here says so, its events are that shard's */
        run_output_job(&m->out, e, r, j);
        return;
    }
    const char *node = j->node >= 0 ? e->nodes[j->node].name : ""; /* a job stalled before placement has none */
    const char *ev = j->state == JS_RUNNING ? "joulie.sim.job.started"
                     : j->state == JS_COMPLETED ? "joulie.sim.job.completed" : "joulie.sim.job.stalled";
    cJSON *attrs = job_attrs(r, j);
    if (m->tap.event && m->out.dir)
        m->tap.event(m->tap.ctx, m->out.dir, m->out.dfd, e->tick_wall, node, ev, attrs);
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
static void add_trace_faults(struct runs *m, const struct run *r);
static bool label_name_ok(const char *s, size_t n);

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
    struct runs_metrics x = {.run_id = r->id, .run_dir = m->out.dir, .run_dfd = m->out.dfd, .wall_ns = e->tick_wall,
                             .start_wall_ns = e->tick_wall - r->now_ns, .submitted = sub, .nnodes = r->nnodes,
                             .node_names = names, .completed = done, .running = run, .le = run_completion_le,
                             .buckets = b, .nle = RUN_COMPLETION_BUCKETS, .sum = r->completion_sum_s,
                             .count = (unsigned long long)r->count[JS_COMPLETED], .final = final};
    m->tap.metrics(m->tap.ctx, &x);
    free(done);
    free(run);
    free(names);
}

void runs_set_placer(struct runs *m, const struct run_placer *placer)
{
    lock_caller(m);
    m->placer = placer;
    if (m->active && !m->active->active) /* a run submitted or resumed before the first tick */
        m->active->placer = placer;
    pthread_mutex_unlock(&m->lock);
}

void runs_set_tap(struct runs *m, const struct runs_tap *tap)
{
    lock_caller(m);
    m->tap = tap ? *tap : (struct runs_tap){0};
    if (m->active && m->out.dir && m->tap.resume && m->active->resumed) {
        /* the resumed run's files of the tap are cut back to its checkpoint */
        char err[4400];
        if (m->tap.resume(m->tap.ctx, m->out.dir, m->out.dfd, m->resume_outputs, err, sizeof err))
            fprintf(stderr, "hwemu: run %s: %s\n", m->active->id, err);
    }
    pthread_mutex_unlock(&m->lock);
}

static void add_u64(cJSON *o, const char *k, uint64_t v)
{
    char t[32];
    snprintf(t, sizeof t, "%" PRIu64, v);
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    cJSON_AddStringToObject(o, k, t);
}

/* Writes r's state.json (run_checkpoint.h) with the lengths of its outputs: jobs.jsonl's whole
 * lines and the lines a full disk holds back, the tap's files, the resumes so far. suspended:
 * the engine stops here (not a periodic checkpoint a crash may follow). 0, or -1 with err. */
static int write_state(struct runs *m, struct run *r, struct run_output *out, struct run_course *course,
                       bool suspended, char *err, size_t errlen)
{
    cJSON *o = run_checkpoint_json(r);
    line_file_flush(&out->jobs);
    line_file_flush(&course->f);
    /* what the outputs held at the last resume and nobody updates (a tap not attached yet) stays */
    cJSON *outs = m->resume_outputs ? cJSON_Duplicate(m->resume_outputs, true) : cJSON_CreateObject();
    cJSON_AddItemToObject(o, "outputs", outs);
    add_u64(outs, "jobs.jsonl", (uint64_t)out->jobs.len);
    add_u64(outs, "course.jsonl", (uint64_t)course->f.len); /* a line a full disk holds back is not kept */
    cJSON *wait = cJSON_AddArrayToObject(o, "waiting");
    for (int k = 0; k < out->jobs.npending; k++) {
        size_t n = strlen(out->jobs.pending[k]);
        char *line = strndup(out->jobs.pending[k], n ? n - 1 : 0); /* without its newline */
        cJSON_AddItemToArray(wait, cJSON_CreateString(line));
        free(line);
    }
    if (m->tap.checkpoint)
        m->tap.checkpoint(m->tap.ctx, out->dir, out->dfd, outs);
    cJSON_AddBoolToObject(o, "suspended", suspended);
    if (out->resumes)
        cJSON_AddItemReferenceToObject(o, "resumes", out->resumes);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    char *line = NULL;
    if (!text || asprintf(&line, "%s\n", text) < 0)
        abort();
    free(text);
    int rc = run_files_replace(out->dfd, out->dir, "state.json", line, strlen(line), err, errlen);
    free(line);
    if (!rc)
        m->checkpoint_ended = r->count[JS_COMPLETED] + r->count[JS_STALLED];
    return rc;
}

/* A checkpoint of the active run, its failure said once. */
static void checkpoint(struct runs *m)
{
    char err[4400];
    if (write_state(m, m->active, &m->out, &m->course, false, err, sizeof err)) {
        if (!m->checkpoint_errors++)
            fprintf(stderr, "hwemu: run %s: %s (the run resumes from its last checkpoint after a crash)\n",
                    m->active->id, err);
    } else if (m->checkpoint_errors) {
        fprintf(stderr, "hwemu: run %s: state.json written again after %d failure%s\n", m->active->id,
                m->checkpoint_errors, m->checkpoint_errors == 1 ? "" : "s");
        m->checkpoint_errors = 0;
    }
}

/* Lists an ended run (its final status, which it takes) among the past ones. */
static void add_past(struct runs *m, const char *id, cJSON *s, int state)
{
    m->past = realloc(m->past, sizeof *m->past * (size_t)(m->npast + 1));
    struct past *p = &m->past[m->npast++];
    snprintf(p->id, sizeof p->id, "%s", id);
    p->status = cJSON_PrintUnformatted(s);
    p->state = state;
    cJSON_Delete(s);
}

/* jobs.jsonl's lines held back by a failed write are tried again; a failure and the recovery
 * are said once each, on stderr and as an event. */
static void watch_output(struct runs *m)
{
    struct run_output *o = &m->out;
    if (!o->dir || !m->active)
        return;
    line_file_flush(&o->jobs);
    int e = o->jobs.err;
    if (e == m->output_err)
        return;
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "runId", m->active->id);
    cJSON_AddStringToObject(a, "file", o->jobs.path ? o->jobs.path : "jobs.jsonl");
    if (e) {
        fprintf(stderr, "hwemu: run %s: cannot write %s: %s; %d line%s wait%s and %s tried again at each tick "
                "(the file keeps whole lines only)\n", m->active->id, o->jobs.path, strerror(e), o->jobs.npending,
                o->jobs.npending == 1 ? "" : "s", o->jobs.npending == 1 ? "s" : "", o->jobs.npending == 1 ? "is" : "are");
        cJSON_AddStringToObject(a, "error", strerror(e));
        cJSON_AddNumberToObject(a, "linesWaiting", o->jobs.npending);
        events_emit(m->e->events, m->e->tick_wall, "", "joulie.sim.run.output_failed", a);
    } else {
        fprintf(stderr, "hwemu: run %s: %s is written again (every line waiting is in it)\n", m->active->id,
                o->jobs.path);
        events_emit(m->e->events, m->e->tick_wall, "", "joulie.sim.run.output_recovered", a);
    }
    m->output_err = e;
}

static void finish(struct runs *m)
{
    tap_metrics(m, true);
    struct run *r = m->active;
    if (r->placer)
        r->placer->end(r->placer->ctx, r);
    int dfd = m->out.dfd >= 0 ? dup(m->out.dfd) : -1;
    char err[4400];
    cJSON *resumes = m->out.resumes ? cJSON_Duplicate(m->out.resumes, true) : NULL;
    run_course_close(&m->course, m->e, r, true);
    m->out.course_interval_ns = m->course.interval_ns;
    int rc = run_output_close(&m->out, m->e, r, err, sizeof err);
    if (rc)
        fprintf(stderr, "hwemu: run %s: %s\n", r->id, err);
    if (rc < 0 && dfd >= 0) {
        /* state.json stays when summary.json could not be written: a restart resumes the run from
         * its last checkpoint and ends it again */
        fprintf(stderr, "hwemu: run %s: its state.json is kept: the next start on this runs directory resumes "
                "the run from its last checkpoint and writes summary.json\n", r->id);
        close(dfd);
        dfd = -1;
    }
    if (dfd >= 0) { /* an ended run is not resumed */
        unlinkat(dfd, "state.json", 0);
        close(dfd);
    }
    cJSON *s = run_status_json(m->e, r);
    if (resumes && cJSON_GetArraySize(resumes))
        cJSON_AddItemToObject(s, "resumes", resumes);
    else
        cJSON_Delete(resumes);
    add_past(m, r->id, s, r->state);
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
    if (!r) {
        faults_tick(m->faults, NULL, NULL);
        return;
    }
    uint64_t before_sub[JOB_NCLASSES];
    memcpy(before_sub, r->submitted, sizeof before_sub);
    run_before(r, e);
    faults_tick(m->faults, r, &m->out);
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
        bool rebase_tick = r->rebase_tick; /* a resume's first tick: the run's tick count stood still */
        run_after(r, e);
        if (r->ending && r->state != RUN_RUNNING) {
            finish(m);
        } else if (!rebase_tick) {
            watch_output(m);
            run_course_tick(&m->course, e, r);
            if (r->ticks % RUNS_METRICS_TICKS == 0)
                tap_metrics(m, false);
            /* for a restart after a crash (after the metrics: the checkpoint holds this tick's
             * lines); at high speeds no more often than every checkpoint_ns of wall time (a
             * checkpoint writes every job of the run) */
            int64_t wall = mono_now();
            if (r->ticks % RUN_CHECKPOINT_TICKS == 0 && m->out.dir && wall - m->checkpoint_mono >= m->checkpoint_ns) {
                m->checkpoint_mono = wall;
                checkpoint(m);
            }
        }
    }
    pthread_mutex_unlock(&m->lock);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A run directory the engine found with no usable state: listed as failed with why. */
static void add_failed(struct runs *m, const char *name, const char *why)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "runId", name);
    cJSON_AddStringToObject(s, "state", run_state_names[RUN_FAILED]);
    cJSON_AddStringToObject(s, "error", why);
    add_past(m, name, s, RUN_FAILED);
    fprintf(stderr, "hwemu: run %s/%s failed: %s\n", m->dir, name, why);
}

/* A run an earlier start ended (its summary.json): listed with the status it ended with, so that
 * GET /runs/<id> and its files answer across restarts. An unreadable summary lists it failed. */
static void add_ended(struct runs *m, const char *name)
{
    static const char *const keys[] = {"runId", "runKey", "shard", "state", "trace", "placement", "timeSec",
                                       "ticks", "jobs", "jobsByClass", "energyJoules", "resumes"};
    int rdfd = run_files_opendir(m->dfd, name);
    size_t len = 0;
    char *text = rdfd >= 0 ? run_files_read(rdfd, "summary.json", (size_t)1 << 30, &len) : NULL;
    int e = errno;
    if (rdfd >= 0)
        close(rdfd);
    cJSON *o = text ? cJSON_ParseWithLength(text, len) : NULL;
    bool read = text != NULL;
    free(text);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "state");
    int state = -1;
    for (int k = 0; cJSON_IsString(st) && k < RUN_NSTATES; k++)
        if (!strcmp(st->valuestring, run_state_names[k]))
            state = k;
    if (state < 0 || state == RUN_RUNNING) {
        char why[600];
        if (!o)
            snprintf(why, sizeof why, "its summary.json %s", read || !e ? "is not the JSON this engine writes"
                     : e == EINVAL ? "is not a regular file: refused" : strerror(e));
        else
            snprintf(why, sizeof why, "its summary.json has no state this engine writes for an ended run");
        cJSON_Delete(o);
        add_failed(m, name, why);
        return;
    }
    cJSON *s = cJSON_CreateObject();
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
        if (!strcmp(keys[k], "runId"))
            cJSON_AddStringToObject(s, "runId", name); /* the directory's name is the id */
        else if (v)
            cJSON_AddItemToObject(s, keys[k], cJSON_Duplicate(v, true));
    }
    cJSON_Delete(o);
    add_past(m, name, s, state);
}

static int past_by_id(const void *a, const void *b)
{
    return strcmp(((const struct past *)a)->id, ((const struct past *)b)->id);
}

/* Resumes run directory name from its state.json: 0, or -1 with why in err. */
static int resume_one(struct runs *m, const char *name, char *err, size_t errlen)
{
    char dir[4400], path[4500];
    snprintf(dir, sizeof dir, "%s/%s", m->dir, name);
    snprintf(path, sizeof path, "%s/state.json", dir);
    int rdfd = run_files_opendir(m->dfd, name);
    if (rdfd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", dir,
                 errno == ELOOP || errno == ENOTDIR ? "a symbolic link or not a directory: refused" : strerror(errno));
        return -1;
    }
    size_t len;
    char *text = run_files_read(rdfd, "state.json", (size_t)1 << 30, &len);
    cJSON *o = text ? cJSON_ParseWithLength(text, len) : NULL;
    int e = errno;
    free(text);
    char *trace = o ? run_files_read(rdfd, "trace.jsonl", (size_t)1 << 36, &len) : NULL;
    int te = errno;
    close(rdfd);
    if (!o) {
        if (text || !e)
            snprintf(err, errlen, "%s is not the JSON this engine writes (remove it to list the run as failed, "
                     "or the whole directory)", path);
        else
            snprintf(err, errlen, "cannot read %s: %s", path, e == EINVAL ? "not a regular file: refused" : strerror(e));
        return -1;
    }
    if (!trace) {
        snprintf(err, errlen, "cannot read %s/trace.jsonl: %s", dir, te == EINVAL ? "not a regular file: refused"
                                                                                  : strerror(te));
        cJSON_Delete(o);
        return -1;
    }
    char label[4500];
    snprintf(label, sizeof label, "%s/trace.jsonl", dir);
    struct trace t;
    struct diag dg = {0};
    if (trace_parse(&t, label, trace, len, &dg)) {
        snprintf(err, errlen, "its trace.jsonl does not load (%d problem%s, first: %s)", dg.count,
                 dg.count == 1 ? "" : "s", dg.count ? dg.msgs[0] : "?");
        diag_free(&dg);
        free(trace);
        cJSON_Delete(o);
        return -1;
    }
    diag_free(&dg);
    free(trace);
    bool crash = !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "suspended"));
    /* no placer yet (runs_set_placer comes after the attach): the checkpoint gives every job's
     * state, stalls included */
    struct run *r = run_create(m->e, &t, name, m->base_speed, NULL);
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(o, "outputs");
    uint64_t jobs_len = 0;
    const cJSON *jl = cJSON_GetObjectItemCaseSensitive(outs, "jobs.jsonl");
    if (jl && cJSON_IsString(jl))
        jobs_len = strtoull(jl->valuestring, NULL, 10);
    /* a state.json of before course.jsonl: it starts empty */
    const cJSON *cl = cJSON_GetObjectItemCaseSensitive(outs, "course.jsonl");
    off_t course_len = cJSON_IsString(cl) ? (off_t)strtoull(cl->valuestring, NULL, 10) : 0;
    struct run_output out;
    if (run_checkpoint_apply(r, o, path, crash, err, errlen) ||
        /* a state.json of an engine before outputs were cut back: jobs.jsonl is kept as it is */
        run_output_reopen(&out, m->dfd, m->dir, name, outs ? (off_t)jobs_len : -1,
                          cJSON_GetObjectItemCaseSensitive(o, "waiting"), err, errlen)) {
        run_free(r);
        cJSON_Delete(o);
        return -1;
    }
    if (run_course_resume(&m->course, out.dfd, out.dir, m->e, m->course_ns, course_len, err, errlen)) {
        run_output_suspend(&out);
        run_free(r);
        cJSON_Delete(o);
        return -1;
    }
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(o, "resumes");
    cJSON_Delete(out.resumes);
    out.resumes = cJSON_IsArray(rs) ? cJSON_Duplicate(rs, true) : cJSON_CreateArray();
    cJSON *one = cJSON_CreateObject();
    char at[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON_AddStringToObject(one, "at", at);                         /* the wall clock of the restart */
    cJSON_AddNumberToObject(one, "fromSec", (double)r->now_ns / 1e9); /* the run's clock it goes on from */
    cJSON_AddStringToObject(one, "after", crash ? "crash" : "suspend");
    cJSON_AddItemToArray(out.resumes, one);
    cJSON_Delete(m->resume_outputs);
    m->resume_outputs = outs ? cJSON_Duplicate(outs, true) : NULL;
    cJSON_Delete(o);
    r->on_job = on_job;
    r->ctx = m;
    r->placer = m->placer;
    apply_labels(m, r);
    add_trace_faults(m, r);
    m->active = r;
    m->out = out;
    /* a checkpoint of before the first tick: the stalled-at-start jobs are still to be said */
    m->announced = r->ticks > 0;
    /* at once: the resume is counted, and a crash from here is not taken for a suspension */
    checkpoint(m);
    /* the engine's event log is not cut back (other events share it): the job events of the work
     * redone after a crash come again after this one */
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "runId", name);
    cJSON_AddNumberToObject(a, "fromSec", (double)r->now_ns / 1e9);
    cJSON_AddStringToObject(a, "after", crash ? "crash" : "suspend");
    cJSON_AddNumberToObject(a, "resumes", cJSON_GetArraySize(m->out.resumes));
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    events_emit(m->e->events, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, "", "joulie.sim.run.resumed", a);
    fprintf(stderr, "hwemu: run %s resumes at %.3f s after a %s (%d of %d jobs completed)\n", name,
            (double)r->now_ns / 1e9, crash ? "crash (the work since its last checkpoint is done again)" : "stop",
            r->count[JS_COMPLETED], r->njobs);
    return 0;
}

/* The runs directory at the start: the latest run the engine left in the middle (a state.json and
 * no summary.json) continues; an ended one (summary.json) is listed as it ended; a run directory
 * with neither, or whose state cannot be used, is listed as failed. */
static void resume(struct runs *m)
{
    int fd = dup(m->dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    char **names = NULL;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, "run-", 4))
            continue;
        struct stat st;
        if (fstatat(m->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode)) {
            add_failed(m, de->d_name, "not a directory (a symbolic link?): refused, never followed");
            continue;
        }
        char p[4400];
        snprintf(p, sizeof p, "%s/summary.json", de->d_name);
        if (!fstatat(m->dfd, p, &st, AT_SYMLINK_NOFOLLOW)) {
            add_ended(m, de->d_name); /* it ended */
            continue;
        }
        snprintf(p, sizeof p, "%s/state.json", de->d_name);
        if (fstatat(m->dfd, p, &st, AT_SYMLINK_NOFOLLOW)) {
            add_failed(m, de->d_name, "no state.json and no summary.json: the engine that ran it stopped before "
                                      "its first checkpoint, or they were removed; its other files stay");
            continue;
        }
        names = realloc(names, sizeof *names * (size_t)(n + 1));
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = n - 1; i >= 0; i--) {
        char err[8192];
        if (i < n - 1 || m->active) {
            snprintf(err, sizeof err, "suspended, but run %s is later: only the latest suspended run resumes "
                     "(remove that one's state.json to resume this one instead)", m->active ? m->active->id
                                                                                         : names[n - 1]);
            add_failed(m, names[i], err);
        } else if (resume_one(m, names[i], err, sizeof err)) {
            char why[8300];
            snprintf(why, sizeof why, "cannot resume: %s", err);
            add_failed(m, names[i], why);
        }
        free(names[i]);
    }
    free(names);
    if (m->npast > 1) /* listed oldest first, as their names (their start times) sort */
        qsort(m->past, (size_t)m->npast, sizeof *m->past, past_by_id);
}

static void spec_labels(const struct runs *m, int i, const struct yt_node *maps[2]);

/* The fault schedule's view of a node's labels: the run-time ones over the spec's. */
static bool node_has_label(void *ctx, int i, const char *key, const char *value)
{
    struct runs *m = ctx;
    const struct run_label *l = m->labels ? run_labels_get(&m->labels[i], key) : NULL;
    if (l)
        return l->value && !strcmp(l->value, value);
    const struct yt_node *maps[2];
    spec_labels(m, i, maps);
    for (int k = 1; k >= 0; k--) {
        const struct yt_node *v = maps[k] ? yt_get(maps[k], key) : NULL;
        if (v)
            return yt_str(v) && !strcmp(yt_str(v), value);
    }
    return false;
}

/* A fault's event: to the event log and, during a run, the run's tap (as a job's). */
static void fault_event(void *ctx, const char *node, const char *name, cJSON *attrs)
{
    struct runs *m = ctx;
    if (m->active && m->tap.event && m->out.dir)
        m->tap.event(m->tap.ctx, m->out.dir, m->out.dfd, m->e->tick_wall, node, name, attrs);
    events_emit(m->e->events, m->e->tick_wall, node, name, attrs);
}

/* The faults of run r's trace, scheduled from its start (the lock held). */
static void add_trace_faults(struct runs *m, const struct run *r)
{
    for (int k = 0; k < r->trace.nfaults; k++) {
        char id[FAULT_ID_MAX];
        if (faults_add(m->faults, &r->trace.faults[k], FS_TRACE, r->id, id, sizeof id))
            fprintf(stderr, "hwemu: run %s: %s:%d: fault id \"%s\" is already scheduled: that fault is left out\n",
                    r->id, r->trace.path, r->trace.faults[k].line, r->trace.faults[k].id);
    }
}

struct runs *runs_attach(struct engine *e, const char *runs_dir, double base_speed, int64_t checkpoint_ns, char *err,
                         size_t errlen)
{
    char *dir = NULL;
    if (runs_dir && *runs_dir)
        dir = strdup(runs_dir);
    else if (asprintf(&dir, "%s/runs", e->cfg.root) < 0)
        abort();
    int dfd = run_files_dir(dir, err, errlen);
    if (dfd < 0) {
        free(dir);
        return NULL;
    }
    struct runs *m = calloc(1, sizeof *m);
    if (!m)
        abort();
    m->e = e;
    pthread_mutex_init(&m->lock, NULL);
    m->dir = dir;
    m->dfd = dfd;
    m->out.dfd = -1;
    m->course.f.fd = -1;
    m->base_speed = base_speed;
    m->checkpoint_ns = checkpoint_ns > 0 ? checkpoint_ns : RUN_CHECKPOINT_MIN_WALL_S * 1000000000LL;
    m->checkpoint_mono = mono_now();
    m->completed = calloc((size_t)(e->nnodes ? e->nnodes : 1) * JOB_NCLASSES, sizeof *m->completed);
    const struct faults_host host = {.ctx = m, .has_label = node_has_label, .emit = fault_event};
    m->faults = faults_new(e, &host);
    if (!m->faults)
        abort();
    for (int k = 0; k < e->spec.nfaults; k++) {
        char id[FAULT_ID_MAX];
        faults_add(m->faults, &e->spec.faults[k], FS_SPEC, NULL, id, sizeof id); /* ids unique: spec.c checked */
    }
    e->hooks = (struct engine_hooks){.ctx = m, .before = before, .after = after};
    resume(m);
    return m;
}

bool runs_detach(struct runs *m)
{
    if (!m)
        return false;
    bool suspended = false;
    if (m->active) {
        struct run *r = m->active;
        for (int i = 0; r->active && i < r->nnodes; i++) { /* no tick runs any more */
            struct node *nd = &m->e->nodes[i];
            if (nd->load_hook) {
                run_node_restore_load(&r->nodes[i], nd);
                nd->load_hook = NULL;
                nd->load_ctx = NULL;
            }
        }
        /* the engine stops: the run is suspended and the next start on this runs directory
         * resumes it; if its state cannot be kept, it ends as stopped with its outputs */
        char err[4400];
        if (m->out.dir && !write_state(m, r, &m->out, &m->course, true, err, sizeof err)) {
            fprintf(stderr, "hwemu: run %s suspended at %.3f s; a restart on this root resumes it\n", r->id,
                    (double)r->now_ns / 1e9);
            tap_metrics(m, true);
            run_course_close(&m->course, m->e, r, false);
            run_output_suspend(&m->out);
            if (r->placer)
                r->placer->end(r->placer->ctx, r);
            run_free(r);
            m->active = NULL;
            suspended = true;
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
    faults_free(m->faults);
    free(m->dir);
    cJSON_Delete(m->resume_outputs);
    if (m->dfd >= 0)
        close(m->dfd);
    pthread_mutex_destroy(&m->lock);
    free(m);
    return suspended;
}

/* Gives up a claim (the lock is not held). */
static void unclaim(struct runs *m)
{
    lock_caller(m);
    m->claimed = false;
    pthread_mutex_unlock(&m->lock);
}

/* The run key a sharded engine gives a run submitted without one: "t-" and 16 hex digits of an
 * FNV-1a 64 hash of the trace's bytes, the spec's name and the work rate, so that every shard
 * given the same trace, spec and options names the same Jobs (docs/kubernetes.md "Sharding"). */
static void default_key(const struct runs *m, const char *text, size_t len, char *key, size_t cap)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
    char more[512];
    int n = snprintf(more, sizeof more, "%c%s%c%.17g", 0, m->e->spec.name ? m->e->spec.name : "", 0, m->base_speed);
    for (int i = 0; i < n && i < (int)sizeof more - 1; i++)
        h = (h ^ (unsigned char)more[i]) * 1099511628211ull;
    snprintf(key, cap, "t-%016" PRIx64, h);
}

int runs_key_check(const char *key, char *err, size_t errlen)
{
    if (!label_name_ok(key, strlen(key))) {
        snprintf(err, errlen, "\"%.80s\" is not a run key: 1 to 63 characters of [A-Za-z0-9._-] starting and "
                 "ending alphanumeric (it labels the run's pods: sim.joulie.io/run)", key);
        return EINVAL;
    }
    return 0;
}

/* A submission that failed after its directory was made leaves nothing behind: its files, the
 * directory and the claim go. */
static void discard(struct runs *m, struct run_output *out, const char *rid)
{
    line_file_close(&out->jobs);
    unlinkat(out->dfd, "course.jsonl", 0);
    unlinkat(out->dfd, "jobs.jsonl", 0);
    unlinkat(out->dfd, "trace.jsonl", 0);
    run_output_suspend(out);
    unlinkat(m->dfd, rid, AT_REMOVEDIR);
    unclaim(m);
}

int runs_submit(struct runs *m, const char *label, const char *text, size_t len, unsigned mode, bool quiet,
                const char *key, char *id, size_t idlen, struct diag *d)
{
    char kerr[256];
    if (key && runs_key_check(key, kerr, sizeof kerr)) {
        diag_add(d, NULL, "%s", kerr);
        return EINVAL;
    }
    lock_caller(m);
    if (m->active || m->claimed) {
        snprintf(id, idlen, "%s", m->active ? m->active->id : m->claim_id);
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
    /* the run is decided here, under the lock, before anything is made on disk: a submission that
     * loses the race leaves nothing behind */
    lock_caller(m);
    if (m->active || m->claimed) {
        snprintf(id, idlen, "%s", m->active ? m->active->id : m->claim_id);
        pthread_mutex_unlock(&m->lock);
        trace_free(&t);
        return EBUSY;
    }
    m->claimed = true;
    unsigned seq = ++m->seq;
    snprintf(m->claim_id, sizeof m->claim_id, "run-%04d%02d%02dT%02d%02d%02dZ-%u", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, seq);
    pthread_mutex_unlock(&m->lock);
    char err[4400];
    struct run_output out;
    for (;;) { /* never an existing run's directory: mkdirat is exclusive */
        snprintf(rid, sizeof rid, "run-%04d%02d%02dT%02d%02d%02dZ-%u", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                 tm.tm_hour, tm.tm_min, tm.tm_sec, seq);
        if (!run_output_open(&out, m->dfd, m->dir, rid, text, len, mode, err, sizeof err))
            break;
        if (errno != EEXIST) {
            diag_add(d, NULL, "%s", err);
            trace_free(&t);
            unclaim(m);
            return EIO;
        }
        lock_caller(m);
        seq = ++m->seq;
        snprintf(m->claim_id, sizeof m->claim_id, "run-%04d%02d%02dT%02d%02d%02dZ-%u", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, seq);
        pthread_mutex_unlock(&m->lock);
    }
    struct run_course course;
    if (run_course_open(&course, out.dfd, out.dir, m->e, m->course_ns, err, sizeof err)) {
        diag_add(d, NULL, "%s", err);
        trace_free(&t);
        discard(m, &out, rid);
        return EIO;
    }
    struct run *r = run_create(m->e, &t, rid, m->base_speed, m->placer);
    if (key)
        snprintf(r->key, sizeof r->key, "%s", key);
    else if (run_sharded(r))
        default_key(m, text, len, r->key, sizeof r->key);
    /* the first checkpoint, before the run is announced: a crash from here on resumes it */
    lock_caller(m);
    cJSON_Delete(m->resume_outputs);
    m->resume_outputs = NULL;
    int rc = write_state(m, r, &out, &course, false, err, sizeof err);
    pthread_mutex_unlock(&m->lock);
    if (rc) {
        diag_add(d, NULL, "%s", err);
        run_course_close(&course, m->e, r, false);
        run_free(r);
        discard(m, &out, rid);
        return EIO;
    }
    lock_caller(m);
    r->on_job = on_job;
    r->ctx = m;
    r->placer = m->placer;
    apply_labels(m, r);
    add_trace_faults(m, r);
    m->active = r;
    m->out = out;
    m->course = course;
    m->announced = false;
    m->claimed = false;
    m->output_err = 0;
    m->checkpoint_errors = 0;
    m->checkpoint_mono = mono_now();
    snprintf(id, idlen, "%s", rid);
    pthread_mutex_unlock(&m->lock);
    return 0;
}

int runs_submit_path(struct runs *m, const char *path, const char *key, char *id, size_t idlen, struct diag *d)
{
    struct trace t;
    char *raw = NULL;
    size_t len = 0;
    if (trace_load(&t, path, &raw, &len, d))
        return EINVAL;
    unsigned mode = t.mode;
    trace_free(&t);
    int rc = runs_submit(m, path, raw, len, mode, false, key, id, idlen, d);
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

/* The active run's status (the lock held). What it shows of ended jobs is checkpointed first, so
 * that after a crash the run resumes with at least as many (GET /runs never goes back). */
static cJSON *active_status(struct runs *m)
{
    struct run *r = m->active;
    if (m->out.dir && r->count[JS_COMPLETED] + r->count[JS_STALLED] != m->checkpoint_ended)
        checkpoint(m);
    cJSON *s = run_status_json(m->e, r);
    if (m->out.resumes && cJSON_GetArraySize(m->out.resumes)) /* a copy: the caller prints it unlocked */
        cJSON_AddItemToObject(s, "resumes", cJSON_Duplicate(m->out.resumes, true));
    return s;
}

cJSON *runs_list_json(struct runs *m)
{
    lock_caller(m);
    cJSON *o = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(o, "runs");
    for (int i = 0; i < m->npast; i++)
        cJSON_AddItemToArray(a, cJSON_Parse(m->past[i].status));
    if (m->active)
        cJSON_AddItemToArray(a, active_status(m));
    pthread_mutex_unlock(&m->lock);
    return o;
}

cJSON *runs_get_json(struct runs *m, const char *id)
{
    lock_caller(m);
    cJSON *o = NULL;
    if (m->active && !strcmp(m->active->id, id))
        o = active_status(m);
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

bool runs_progress(struct runs *m, struct runs_progress *p)
{
    lock_caller(m);
    const struct run *r = m->active;
    if (r) {
        uint64_t cls[JOB_NCLASSES], idle, nodes;
        run_energy(r, cls, &idle, &nodes);
        *p = (struct runs_progress){.time_s = (double)r->now_ns / 1e9, .total = r->njobs,
                                    .waiting = r->count[JS_PENDING] + r->count[JS_WAITING],
                                    .running = r->count[JS_RUNNING],
                                    .completed = r->count[JS_COMPLETED] + r->count[JS_ELSEWHERE],
                                    .stalled = r->count[JS_STALLED], .energy_j = (double)nodes / 1e6};
    }
    pthread_mutex_unlock(&m->lock);
    return r != NULL;
}

void runs_set_course_interval(struct runs *m, int64_t interval_ns)
{
    lock_caller(m);
    m->course_ns = interval_ns;
    m->course.interval_ns = interval_ns > 0 ? interval_ns : RUN_COURSE_INTERVAL_S * 1000000000LL;
    pthread_mutex_unlock(&m->lock);
}

const char *runs_path(const struct runs *m)
{
    return m->dir;
}

char *runs_file_read(struct runs *m, const char *id, const char *name, size_t max, size_t *len)
{
    if (!runs_state(m, id)) { /* a run of this engine: its id is a name the engine made */
        errno = ESRCH;
        return NULL;
    }
    int dfd = run_files_opendir(m->dfd, id);
    if (dfd < 0)
        return NULL;
    char *text = run_files_read(dfd, name, max, len);
    int e = errno;
    close(dfd);
    errno = e;
    return text;
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
    tprintf(&t, "# HELP joulie_sim_run_placement_info What places the runs' jobs: standalone (hwemu's own policy) "
                "or kubernetes (the pods the cluster's scheduler binds).\n"
                "# TYPE joulie_sim_run_placement_info gauge\n"
                "joulie_sim_run_placement_info{placement=\"%s\"} 1\n", m->placer ? m->placer->name : "standalone");
    tprintf(&t, "# HELP joulie_sim_node_class_info The node's class: its hardware profile, 1.\n"
                "# TYPE joulie_sim_node_class_info gauge\n");
    for (int i = 0; i < e->nnodes; i++)
        tprintf(&t, "joulie_sim_node_class_info{node=\"%s\",class=\"%s\"} 1\n", e->nodes[i].name, e->nodes[i].profile);
    pthread_mutex_unlock(&m->lock);
    return t.p;
}

int runs_fault_add(struct runs *m, const struct fault_def *f, char *id, size_t idlen, char *err, size_t errlen)
{
    for (int k = 0; k < f->nnodes; k++)
        if (engine_find(m->e, f->nodes[k]) < 0) {
            snprintf(err, errlen, "nodes: no node \"%s\" in this engine (GET /debug/nodes lists them)", f->nodes[k]);
            return EINVAL;
        }
    for (int k = 0; k < f->npools; k++) {
        bool found = false;
        for (int p = 0; p < m->e->spec.npools && !found; p++)
            found = m->e->spec.pools[p].name && !strcmp(m->e->spec.pools[p].name, f->pools[k]);
        if (!found) {
            snprintf(err, errlen, "pools: no pool \"%s\" in this engine's spec", f->pools[k]);
            return EINVAL;
        }
    }
    lock_caller(m);
    int rc = faults_add(m->faults, f, FS_REQUEST, NULL, id, idlen);
    pthread_mutex_unlock(&m->lock);
    if (rc == EEXIST)
        snprintf(err, errlen, "id: \"%s\" is already scheduled (GET /faults lists them; give another id)", f->id);
    return rc;
}

int runs_fault_clear(struct runs *m, const char *id)
{
    lock_caller(m);
    int rc = faults_clear(m->faults, id);
    pthread_mutex_unlock(&m->lock);
    return rc;
}

cJSON *runs_faults_json(struct runs *m, const char *id)
{
    lock_caller(m);
    cJSON *o = id ? faults_get_json(m->faults, id) : faults_list_json(m->faults);
    pthread_mutex_unlock(&m->lock);
    return o;
}
