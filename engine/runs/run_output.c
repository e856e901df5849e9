/* run_output: a run's files and its status object; see run_output.h. */
#include "run_output.h"

#include "engine.h"
#include "run.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int run_output_open(struct run_output *o, int runs_dfd, const char *runs_dir, const char *name, const char *trace,
                    size_t len, unsigned mode, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->dfd = -1;
    o->jobs.fd = -1;
    o->dfd = run_files_mkdir(runs_dfd, name);
    if (o->dfd < 0) {
        int e = errno;
        if (e != EEXIST)
            snprintf(err, errlen, "cannot create the run's directory %s/%s: %s (set SIM_RUNS_DIR to a writable "
                     "directory)", runs_dir, name, strerror(e));
        errno = e;
        return -1;
    }
    if (asprintf(&o->dir, "%s/%s", runs_dir, name) < 0)
        abort();
    /* a trace others cannot read: nor can they enter the run's directory (its jobs.jsonl,
     * summary and events name the trace's jobs) */
    unsigned dmode = 0700 | (mode & 040 ? 050 : 0) | (mode & 04 ? 05 : 0);
    if (fchmod(o->dfd, dmode)) {
        snprintf(err, errlen, "cannot set the mode of the run's directory %s: %s", o->dir, strerror(errno));
        close(o->dfd);
        unlinkat(runs_dfd, name, AT_REMOVEDIR);
        free(o->dir);
        memset(o, 0, sizeof *o);
        o->dfd = -1;
        return -1;
    }
    if (run_files_create(o->dfd, o->dir, "trace.jsonl", trace, len, mode & 0644, err, errlen) ||
        line_file_create(&o->jobs, o->dfd, o->dir, "jobs.jsonl", err, errlen)) {
        /* nothing left behind: a run that did not start has no directory */
        unlinkat(o->dfd, "trace.jsonl", 0);
        close(o->dfd);
        unlinkat(runs_dfd, name, AT_REMOVEDIR);
        free(o->dir);
        memset(o, 0, sizeof *o);
        o->dfd = -1;
        return -1;
    }
    o->resumes = cJSON_CreateArray();
    return 0;
}

int run_output_reopen(struct run_output *o, int runs_dfd, const char *runs_dir, const char *name, off_t jobs_len,
                      const cJSON *waiting, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->jobs.fd = -1;
    o->dfd = run_files_opendir(runs_dfd, name);
    if (o->dfd < 0) {
        snprintf(err, errlen, "cannot open %s/%s: %s", runs_dir, name,
                 errno == ELOOP || errno == ENOTDIR ? "a symbolic link or not a directory: refused" : strerror(errno));
        return -1;
    }
    if (asprintf(&o->dir, "%s/%s", runs_dir, name) < 0)
        abort();
    if (line_file_resume(&o->jobs, o->dfd, o->dir, "jobs.jsonl", jobs_len, err, errlen)) {
        close(o->dfd);
        free(o->dir);
        memset(o, 0, sizeof *o);
        o->dfd = -1;
        return -1;
    }
    const cJSON *w;
    cJSON_ArrayForEach(w, waiting) /* lines a full disk held back at the checkpoint */
        if (cJSON_IsString(w))
            line_file_put(&o->jobs, w->valuestring);
    return 0;
}

void run_output_fault(struct run_output *o, const char *line)
{
    if (!o->dir)
        return;
    if (!o->faults_made) {
        char err[512];
        if (line_file_resume(&o->faults, o->dfd, o->dir, "faults.jsonl", -1, err, sizeof err)) {
            fprintf(stderr, "hwemu: %s\n", err);
            return;
        }
        o->faults_made = true;
    }
    line_file_put(&o->faults, line);
}

static void close_faults(struct run_output *o)
{
    if (o->faults_made)
        line_file_close(&o->faults);
    o->faults_made = false;
}

void run_output_suspend(struct run_output *o)
{
    close_faults(o);
    line_file_close(&o->jobs);
    if (o->dfd >= 0)
        close(o->dfd);
    cJSON_Delete(o->resumes);
    free(o->dir);
    memset(o, 0, sizeof *o);
    o->dfd = -1;
    o->jobs.fd = -1;
}

static double secs(int64_t ns)
{
    return ns < 0 ? -1 : (double)ns / 1e9;
}

/* A sharded run's outputs say which shard wrote them ("1/3") and what placed the jobs; an
 * unsharded run's say neither (as before shards ran runs: docs/runs.md "Repeatability"). */
static void add_shard(cJSON *x, const struct run *r, bool placement)
{
    if (!run_sharded(r))
        return;
    char sh[32];
    snprintf(sh, sizeof sh, "%d/%d", r->shard_index, r->shard_count);
    cJSON_AddStringToObject(x, "shard", sh);
    if (placement)
        cJSON_AddStringToObject(x, "placement", run_placement_name(r));
}

/* The job states a status counts: "elsewhere" only on a sharded engine. */
static int nstates(const struct run *r)
{
    return run_sharded(r) ? JS_NSTATES : JS_ELSEWHERE;
}

void run_output_job(struct run_output *o, const struct engine *e, const struct run *r, const struct run_job *j)
{
    if (!o->dir)
        return;
    const struct trace_job *t = j->t;
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "jobId", t->id);
    if (*t->workload_id)
        cJSON_AddStringToObject(x, "workloadId", t->workload_id);
    cJSON_AddStringToObject(x, "class", job_class_names[t->cls]);
    cJSON_AddStringToObject(x, "state", job_state_names[j->state]);
    if (j->stall_reason)
        cJSON_AddStringToObject(x, "stallReason", j->stall_reason);
    if (j->node >= 0)
        cJSON_AddStringToObject(x, "node", e->nodes[j->node].name);
    else
        cJSON_AddNullToObject(x, "node");
    add_shard(x, r, true);
    char cg[160];
    run_cgroup_path(r, j, cg, sizeof cg);
    if (*cg) { /* where the job's cgroup was, and the CPU time its cpu.stat counted */
        cJSON_AddStringToObject(x, "cgroup", cg);
        cJSON_AddNumberToObject(x, "cgroupCpuSeconds", (double)j->cgroup_cpu_ns / 1e9);
        cJSON_AddNumberToObject(x, "pid", run_job_pid(j)); /* its process, /proc/<pid> of the node */
    }
    cJSON *cpus = cJSON_AddArrayToObject(x, "cpus");
    for (int k = 0; j->cpus && k < t->cpus; k++)
        cJSON_AddItemToArray(cpus, cJSON_CreateNumber(j->cpus[k]));
    cJSON *gpus = cJSON_AddArrayToObject(x, "gpus");
    for (int k = 0; k < j->ngpus; k++)
        cJSON_AddItemToArray(gpus, cJSON_CreateNumber(j->gpus[k]));
    cJSON_AddNumberToObject(x, "submitSec", t->submit_s);
    cJSON_AddNumberToObject(x, "queuedSec", secs(j->submit_ns));
    cJSON_AddNumberToObject(x, "startSec", secs(j->start_ns));
    cJSON_AddNumberToObject(x, "endSec", secs(j->end_ns));
    cJSON *en = cJSON_AddObjectToObject(x, "energyJoules");
    cJSON_AddNumberToObject(en, "cpu", (double)j->energy_uj[EP_CPU] / 1e6);
    cJSON_AddNumberToObject(en, "dram", (double)j->energy_uj[EP_DRAM] / 1e6);
    cJSON_AddNumberToObject(en, "gpu", (double)j->energy_uj[EP_GPU] / 1e6);
    cJSON *eu = cJSON_AddObjectToObject(x, "energyMicrojoules");
    cJSON_AddNumberToObject(eu, "cpu", (double)j->energy_uj[EP_CPU]);
    cJSON_AddNumberToObject(eu, "dram", (double)j->energy_uj[EP_DRAM]);
    cJSON_AddNumberToObject(eu, "gpu", (double)j->energy_uj[EP_GPU]);
    cJSON *w = cJSON_AddObjectToObject(x, "work");
    cJSON_AddNumberToObject(w, "cpuUnits", t->cpu_units);
    cJSON_AddNumberToObject(w, "cpuUnitsDone", t->cpu_units - (j->cpu_left > 0 ? j->cpu_left : 0));
    cJSON_AddNumberToObject(w, "gpuUnits", t->gpus ? t->gpu_units : 0);
    cJSON_AddNumberToObject(w, "gpuUnitsDone", t->gpus ? t->gpu_units - (j->gpu_left > 0 ? j->gpu_left : 0) : 0);
    char *s = cJSON_PrintUnformatted(x);
    cJSON_Delete(x);
    /* each line reaches the file as the job ends (a reader follows the run), whole or not at
     * all; one a full disk held back waits for the next write (runs.c reports it) */
    if (s)
        line_file_put(&o->jobs, s);
    free(s);
}

cJSON *run_status_json(const struct engine *e, const struct run *r)
{
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "runId", r->id);
    if (r->key[0])
        cJSON_AddStringToObject(x, "runKey", r->key);
    add_shard(x, r, false);
    cJSON_AddStringToObject(x, "state", run_state_names[r->state]);
    cJSON_AddStringToObject(x, "trace", r->trace.path ? r->trace.path : "");
    cJSON_AddStringToObject(x, "placement", run_placement_name(r)); /* standalone or kubernetes */
    cJSON_AddNumberToObject(x, "timeSec", (double)r->now_ns / 1e9);
    cJSON_AddNumberToObject(x, "ticks", (double)r->ticks);
    cJSON *js = cJSON_AddObjectToObject(x, "jobs");
    cJSON_AddNumberToObject(js, "total", r->njobs);
    for (int s = 0; s < nstates(r); s++)
        cJSON_AddNumberToObject(js, job_state_names[s], r->count[s]);
    /* the same counts by class: what a policy reads of the queue (its performance jobs waiting) */
    int n[JOB_NCLASSES][JS_NSTATES] = {{0}};
    for (int k = 0; k < r->njobs; k++)
        if ((unsigned)r->jobs[k].t->cls < JOB_NCLASSES && (unsigned)r->jobs[k].state < JS_NSTATES)
            n[r->jobs[k].t->cls][r->jobs[k].state]++;
    cJSON *bc = cJSON_AddObjectToObject(x, "jobsByClass");
    for (int c = 0; c < JOB_NCLASSES; c++) {
        cJSON *o2 = cJSON_AddObjectToObject(bc, job_class_names[c]);
        for (int s = 0; s < nstates(r); s++)
            cJSON_AddNumberToObject(o2, job_state_names[s], n[c][s]);
    }
    uint64_t cls[JOB_NCLASSES], idle, nodes;
    run_energy(r, cls, &idle, &nodes);
    cJSON *en = cJSON_AddObjectToObject(x, "energyJoules");
    for (int c = 0; c < JOB_NCLASSES; c++)
        cJSON_AddNumberToObject(en, job_class_names[c], (double)cls[c] / 1e6);
    cJSON_AddNumberToObject(en, "idle", (double)idle / 1e6);
    cJSON_AddNumberToObject(en, "nodes", (double)nodes / 1e6);
    uint64_t gap = 0;
    for (int i = 0; i < r->nnodes; i++)
        gap += r->nodes[i].resume_gap_uj;
    /* the counters' increase over work redone after a crash (docs/runs.md "Restarts") */
    cJSON_AddNumberToObject(en, "resumeGap", (double)gap / 1e6);
    (void)e;
    return x;
}

int run_output_close(struct run_output *o, const struct engine *e, const struct run *r, char *err, size_t errlen)
{
    if (!o->dir)
        return 0;
    for (int k = 0; k < r->njobs; k++) /* what did not end: waiting, running at a stop */
        if (r->jobs[k].state != JS_COMPLETED && r->jobs[k].state != JS_STALLED && r->jobs[k].state != JS_ELSEWHERE)
            run_output_job(o, e, r, &r->jobs[k]);
    uint64_t failures = o->jobs.failures;
    int last_err = o->jobs.err;
    int lost = line_file_close(&o->jobs);
    close_faults(o);
    cJSON *x = run_status_json(e, r);
    if (o->resumes && cJSON_GetArraySize(o->resumes))
        cJSON_AddItemReferenceToObject(x, "resumes", o->resumes);
    if (failures) { /* a full disk held lines back: said here, so a count never hides a loss */
        cJSON *pr = cJSON_AddObjectToObject(cJSON_AddObjectToObject(x, "outputProblems"), "jobs.jsonl");
        cJSON_AddNumberToObject(pr, "failedWrites", (double)failures);
        cJSON_AddNumberToObject(pr, "linesLost", lost);
        if (lost)
            cJSON_AddStringToObject(pr, "lastError", strerror(last_err));
    }
    int64_t makespan = 0;
    for (int k = 0; k < r->njobs; k++)
        if (r->jobs[k].end_ns > makespan)
            makespan = r->jobs[k].end_ns;
    cJSON_AddNumberToObject(x, "makespanSec", (double)makespan / 1e9);
    if (o->course_interval_ns > 0) /* the grid of course.jsonl's lines (runs merge puts shards' on it) */
        cJSON_AddNumberToObject(x, "courseIntervalSec", (double)o->course_interval_ns / 1e9);
    cJSON *nodes = cJSON_AddArrayToObject(x, "nodes");
    for (int i = 0; i < r->nnodes; i++) {
        const struct run_node *n = &r->nodes[i];
        cJSON *o2 = cJSON_CreateObject();
        cJSON_AddStringToObject(o2, "node", e->nodes[i].name);
        cJSON_AddNumberToObject(o2, "counterStartMicrojoules", (double)n->start_uj);
        cJSON_AddNumberToObject(o2, "counterDeltaMicrojoules", (double)n->delta_uj);
        static const char *const parts[EP_N] = {"package", "dram", "gpu"};
        for (int k = 0; k < EP_N; k++) {
            char key[64];
            snprintf(key, sizeof key, "%sStartMicrojoules", parts[k]);
            cJSON_AddNumberToObject(o2, key, (double)n->part_start_uj[k]);
            snprintf(key, sizeof key, "%sDeltaMicrojoules", parts[k]);
            cJSON_AddNumberToObject(o2, key, (double)n->part_delta_uj[k]);
        }
        cJSON_AddNumberToObject(o2, "idleMicrojoules", (double)n->idle_uj);
        cJSON_AddNumberToObject(o2, "resumeGapMicrojoules", (double)n->resume_gap_uj);
        for (int c = 0; c < JOB_NCLASSES; c++) {
            char k[64];
            snprintf(k, sizeof k, "%sMicrojoules", job_class_names[c]);
            cJSON_AddNumberToObject(o2, k, (double)n->class_uj[c]);
        }
        cJSON_AddNumberToObject(o2, "energyJoules", (double)n->delta_uj / 1e6);
        cJSON_AddItemToArray(nodes, o2);
    }
    double span = (double)r->now_ns / 1e9;
    uint64_t cls[JOB_NCLASSES], idle, tot;
    run_energy(r, cls, &idle, &tot);
    cJSON *fac = cJSON_AddObjectToObject(x, "facility");
    cJSON_AddNumberToObject(fac, "itEnergyJoules", r->it_j);
    cJSON_AddNumberToObject(fac, "energyJoules", r->facility_j);
    cJSON_AddNumberToObject(fac, "pue", r->it_j > 0 ? r->facility_j / r->it_j : 0);
    cJSON_AddNumberToObject(x, "meanPowerWatts", span > 0 ? (double)tot / 1e6 / span : 0);
    int placed = 0;
    for (int k = 0; k < r->njobs; k++)
        placed += r->jobs[k].start_ns >= 0;
    /* the placement phase's time (submission, queue scan, choice) per job placed */
    cJSON_AddNumberToObject(x, "placementMicrosecondsPerPlacedJob", placed ? r->place_ns / 1e3 / placed : 0);
    cJSON_AddNumberToObject(x, "placementAttempts", (double)r->placements);
    char *s = cJSON_Print(x);
    cJSON_Delete(x);
    int rc = 0;
    char *text = NULL;
    if (!s || asprintf(&text, "%s\n", s) < 0)
        abort();
    if (run_files_replace(o->dfd, o->dir, "summary.json", text, strlen(text), err, errlen))
        rc = -1;
    else if (lost) {
        snprintf(err, errlen, "%d line%s of %s/jobs.jsonl could not be written (%s); summary.json says so", lost,
                 lost == 1 ? "" : "s", o->dir, strerror(last_err));
        rc = 1;
    }
    free(text);
    free(s);
    run_output_suspend(o);
    return rc;
}
