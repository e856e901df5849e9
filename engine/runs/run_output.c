/* run_output: a run's files and its status object; see run_output.h. */
#include "run_output.h"

#include "engine.h"
#include "run.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static int mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0755) && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

int run_output_open(struct run_output *o, const char *dir, const char *trace, size_t len, unsigned mode, char *err,
                    size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (mkdirs(dir)) {
        snprintf(err, errlen, "cannot create the run's directory %s: %s (set SIM_RUNS_DIR to a writable directory)",
                 dir, strerror(errno));
        return -1;
    }
    /* a trace others cannot read: nor can they enter the run's directory (its jobs.jsonl,
     * summary and events name the trace's jobs) */
    unsigned dmode = 0700 | (mode & 040 ? 050 : 0) | (mode & 04 ? 05 : 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 || fchmod(dfd, dmode)) {
        snprintf(err, errlen, "cannot set the mode of the run's directory %s: %s", dir, strerror(errno));
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    close(dfd);
    o->dir = strdup(dir);
    char p[4096];
    snprintf(p, sizeof p, "%s/trace.jsonl", dir);
    /* the copy has the source's mode (never writable by others) */
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 && !fchmod(fd, mode & 0644) ? fdopen(fd, "w") : NULL;
    if (!f && fd >= 0)
        close(fd);
    if (!f || fwrite(trace, 1, len, f) != len || fclose(f)) {
        snprintf(err, errlen, "cannot write %s: %s", p, strerror(errno));
        free(o->dir);
        return -1;
    }
    snprintf(p, sizeof p, "%s/jobs.jsonl", dir);
    o->jobs = fopen(p, "w");
    if (!o->jobs) {
        snprintf(err, errlen, "cannot write %s: %s", p, strerror(errno));
        free(o->dir);
        return -1;
    }
    return 0;
}

int run_output_reopen(struct run_output *o, const char *dir, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    char p[4096];
    snprintf(p, sizeof p, "%s/jobs.jsonl", dir);
    o->jobs = fopen(p, "a");
    if (!o->jobs) {
        snprintf(err, errlen, "cannot append to %s: %s", p, strerror(errno));
        return -1;
    }
    o->dir = strdup(dir);
    return 0;
}

void run_output_suspend(struct run_output *o)
{
    if (o->jobs && fclose(o->jobs) && !o->errors++)
        fprintf(stderr, "hwemu: cannot write %s/jobs.jsonl: %s\n", o->dir, strerror(errno));
    o->jobs = NULL;
    free(o->dir);
    o->dir = NULL;
}

static double secs(int64_t ns)
{
    return ns < 0 ? -1 : (double)ns / 1e9;
}

void run_output_job(struct run_output *o, const struct engine *e, const struct run *r, const struct run_job *j)
{
    if (!o->jobs)
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
    /* each line reaches the file as the job ends: a reader follows the run, and an engine
     * killed later loses none of the jobs that ended before */
    if (s && (fprintf(o->jobs, "%s\n", s) < 0 || fflush(o->jobs) != 0) && !o->errors++)
        fprintf(stderr, "hwemu: run %s: cannot write %s/jobs.jsonl: %s\n", r->id, o->dir, strerror(errno));
    free(s);
}

cJSON *run_status_json(const struct engine *e, const struct run *r)
{
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "runId", r->id);
    cJSON_AddStringToObject(x, "state", run_state_names[r->state]);
    cJSON_AddStringToObject(x, "trace", r->trace.path ? r->trace.path : "");
    cJSON_AddNumberToObject(x, "timeSec", (double)r->now_ns / 1e9);
    cJSON_AddNumberToObject(x, "ticks", (double)r->ticks);
    cJSON *js = cJSON_AddObjectToObject(x, "jobs");
    cJSON_AddNumberToObject(js, "total", r->njobs);
    for (int s = 0; s < JS_NSTATES; s++)
        cJSON_AddNumberToObject(js, job_state_names[s], r->count[s]);
    uint64_t cls[JOB_NCLASSES], idle, nodes;
    run_energy(r, cls, &idle, &nodes);
    cJSON *en = cJSON_AddObjectToObject(x, "energyJoules");
    for (int c = 0; c < JOB_NCLASSES; c++)
        cJSON_AddNumberToObject(en, job_class_names[c], (double)cls[c] / 1e6);
    cJSON_AddNumberToObject(en, "idle", (double)idle / 1e6);
    cJSON_AddNumberToObject(en, "nodes", (double)nodes / 1e6);
    (void)e;
    return x;
}

void run_output_close(struct run_output *o, const struct engine *e, const struct run *r)
{
    for (int k = 0; o->jobs && k < r->njobs; k++) /* what did not end: waiting, running at a stop */
        if (r->jobs[k].state != JS_COMPLETED && r->jobs[k].state != JS_STALLED)
            run_output_job(o, e, r, &r->jobs[k]);
    if (o->jobs && fclose(o->jobs) && !o->errors++)
        fprintf(stderr, "hwemu: run %s: cannot write %s/jobs.jsonl: %s\n", r->id, o->dir, strerror(errno));
    o->jobs = NULL;
    if (!o->dir)
        return;
    cJSON *x = run_status_json(e, r);
    int64_t makespan = 0;
    for (int k = 0; k < r->njobs; k++)
        if (r->jobs[k].end_ns > makespan)
            makespan = r->jobs[k].end_ns;
    cJSON_AddNumberToObject(x, "makespanSec", (double)makespan / 1e9);
    cJSON *bc = cJSON_AddObjectToObject(x, "jobsByClass");
    for (int c = 0; c < JOB_NCLASSES; c++) {
        cJSON *o2 = cJSON_AddObjectToObject(bc, job_class_names[c]);
        int n[JS_NSTATES] = {0};
        for (int k = 0; k < r->njobs; k++)
            if (r->jobs[k].t->cls == c)
                n[r->jobs[k].state]++;
        for (int s = 0; s < JS_NSTATES; s++)
            cJSON_AddNumberToObject(o2, job_state_names[s], n[s]);
    }
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
    char p[4096];
    snprintf(p, sizeof p, "%s/summary.json", o->dir);
    FILE *f = fopen(p, "w");
    if (!f || fprintf(f, "%s\n", s) < 0 || fclose(f))
        fprintf(stderr, "hwemu: run %s: cannot write %s: %s\n", r->id, p, strerror(errno));
    free(s);
    free(o->dir);
    o->dir = NULL;
}
