/* run: a workload run's state, placement calls, load and progress; see run.h. The split of the
 * nodes' energy between the jobs is run_energy.c's.
 * Progress (the original's per-tick job advance, github.com/joulie-k8s/Joulie
 * simulator/cmd/simulator advanceJobProgress, with this engine's frequencies and GPU limits):
 *   f        = the running frequency of the job's packages / cpuinfo_max_freq (lowered by a
 *              RAPL cap and by cpufreq limits, physics_cpu.h)
 *   cpuMul   = run_cpu_throughput(f, knee, class, memory, io)
 *   impact   = clamp(0.60 U + 0.25 (1 - M) + 0.15 (1 - I));  eff = 1 - impact (1 - cpuMul)
 *   eff      = 1 - S_cpu (1 - eff)
 *   cpu work -= requested cores * base speed * eff * dt
 *   r        = the GPU's power / its natural power at the node's GPU load when its limit holds
 *              it down, else 1; gpuMul = run_gpu_throughput(r, class, memory), averaged over
 *              the job's GPUs
 *   feed     = 1 - (1 - cpuMul) F S_cpu;  capImpact = 1 - (1 - enforced / max limit) S_gpu
 *   gpu work -= max(0.1, gpus) * base speed * gpuMul * feed * capImpact * dt
 * A job is done when both are <= 0. */
#include "run.h"
#include "run_energy.h"

#include "engine.h"
#include "node.h"
#include "placement.h"
#include "render_cpuinfo.h"
#include "spec.h"
#include "ytree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const job_state_names[JS_NSTATES] = {"pending", "waiting", "running", "completed", "stalled",
                                                 "elsewhere"};
const char *const run_state_names[RUN_NSTATES] = {"running", "completed", "stalled", "stopped", "failed", "suspended"};
const char *const job_class_names[JOB_NCLASSES] = {"standard", "performance"};
const double run_completion_le[RUN_COMPLETION_BUCKETS] = {10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200,
                                                          21600, 86400};

static double node_it_w(const struct node *nd);

static double clamp01(double v)
{
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double run_cpu_throughput(double f, double knee, int cls, double mem, double io)
{
    f = clamp01(f);
    if (knee <= 0)
        knee = 0.7;
    double compute = f;
    double memory = f >= knee ? 1 - 0.12 * (1 - f) : 1 - 0.12 * (1 - knee) - 0.45 * (knee - f) / (knee > 0.1 ? knee : 0.1);
    double iot = 1 - 0.05 * (1 - f);
    static const double base[4][3] = {{0.75, 0.20, 0.05}, {0.20, 0.75, 0.05}, {0.10, 0.10, 0.80}, {0.45, 0.35, 0.20}};
    const double *b = base[cls & 3];
    double wc = 0.55 * b[0] + 0.45 * (1 - (mem > io ? mem : io));
    double wm = 0.55 * b[1] + 0.45 * mem;
    double wi = 0.55 * b[2] + 0.45 * io;
    double sum = wc + wm + wi;
    if (sum <= 0)
        return f;
    return clamp01((wc * compute + wm * memory + wi * iot) / sum);
}

double run_gpu_throughput(double r, int cls, double mem)
{
    r = clamp01(r);
    if (r >= 1)
        return 1;
    double wc0 = cls == PHYS_GPU_CLASS_COMPUTE ? 0.8 : cls == PHYS_GPU_CLASS_MEMORY ? 0.2 : 0.5;
    double wc = 0.6 * wc0 + 0.4 * (1 - mem), wm = 0.6 * (1 - wc0) + 0.4 * mem;
    double compute = r, memory = 1 - 0.2 * pow(1 - r, 1.1);
    return clamp01((wc * compute + wm * memory) / (wc + wm));
}

/* ---- creation and stall checks ---------------------------------------------------------- */

static const char *pool_label(const struct engine *e, int pool, const char *key)
{
    const struct spec_pool *p = &e->spec.pools[pool];
    const struct yt_node *v = p->labels ? yt_get(p->labels, key) : NULL;
    if (!v && e->spec.default_labels)
        v = yt_get(e->spec.default_labels, key);
    return v ? yt_str(v) : NULL;
}

static const char *label_of(const struct engine *e, int node, const char *key)
{
    return pool_label(e, e->spec.nodes[node].pool, key);
}

static const int vendor_map[] = {GPU_REQ_NONE, GPU_REQ_NVIDIA, GPU_REQ_AMD, GPU_REQ_INTEL};

/* Every node of the whole spec as placement sees it empty, for the stall checks of a sharded
 * engine whose jobs the cluster places on any shard's node: the pools keep their whole counts
 * (spec_keep_shard), and each pool's template (built on every shard) has its nodes' CPUs and
 * GPUs. No job cgroup slot limit: a slot only delays a job, as the scheduler does not count
 * them. Its count in n. */
static struct place_node *spec_cands(const struct engine *e, int *n)
{
    int total = 0;
    for (int p = 0; p < e->spec.npools; p++)
        total += (int)e->spec.pools[p].count;
    struct place_node *c = calloc((size_t)(total ? total : 1), sizeof *c);
    if (!c)
        abort();
    int k = 0;
    for (int p = 0; p < e->spec.npools; p++) {
        const struct spec_pool *pool = &e->spec.pools[p];
        const struct node_template *t = &e->templates[p];
        int cpus = t->params.cpus > 0 ? t->params.cpus : 1;
        int gpus = t->gparams.vendor == PHYS_GPU_NONE ? 0 : t->gparams.count;
        const char *pp = pool_label(e, p, "joulie.io/power-profile");
        for (long long m = 0; m < pool->count; m++)
            c[k++] = (struct place_node){.name = pool->prefix, .total_cpus = cpus, .free_cpus = cpus,
                                         .total_gpus = gpus, .free_gpus = gpus,
                                         .gpu_vendor = vendor_map[t->gparams.vendor & 3],
                                         .eco = pp && !strcmp(pp, "eco")};
    }
    *n = k;
    return c;
}

static struct place_request request_of(const struct trace_job *t)
{
    return (struct place_request){.cpus = t->cpus, .gpus = t->gpus, .gpu_vendor = t->gpu_vendor, .cls = t->cls};
}

static void refresh_cands(struct run *r)
{
    for (int i = 0; i < r->nnodes; i++) {
        struct place_node *c = &r->cands[i];
        const struct run_node *n = &r->nodes[i];
        c->free_cpus = n->free_cpus;
        c->free_gpus = n->free_gpus;
        c->jobs = n->njobs;
        c->cpu_pct = n->cpu_util * 100;
        c->performance_node = n->perf_jobs > 0;
    }
}

/* Places the gang (or one job) on the candidates c (nc of them) as if from empty, for the
 * feasibility check; restores. */
static bool fits_empty(struct run *r, struct place_node *c, int nc, const int *jobs, int n)
{
    bool ok = true;
    int *where = malloc(sizeof *where * (size_t)n);
    int k = 0;
    for (; k < n; k++) {
        struct place_request q = request_of(r->jobs[jobs[k]].t);
        int i = place_choose(c, nc, &q, 0);
        if (i < 0) {
            ok = false;
            break;
        }
        c[i].free_cpus -= q.cpus;
        c[i].free_gpus -= q.gpus;
        c[i].jobs++;
        where[k] = i;
    }
    while (k-- > 0) {
        const struct trace_job *t = r->jobs[jobs[k]].t;
        c[where[k]].free_cpus += t->cpus;
        c[where[k]].free_gpus += t->gpus;
        c[where[k]].jobs--;
    }
    free(where);
    return ok;
}

static void stall(struct run *r, struct run_job *j, const char *why)
{
    if (j->state == JS_STALLED)
        return;
    r->count[j->state]--;
    j->state = JS_STALLED;
    r->count[JS_STALLED]++;
    j->stall_reason = why;
    if (r->on_job)
        r->on_job(r->ctx, r, j);
}

struct run *run_create(struct engine *e, struct trace *t, const char *id, double base_speed,
                       const struct run_placer *placer)
{
    struct run *r = calloc(1, sizeof *r);
    if (!r)
        abort();
    snprintf(r->id, sizeof r->id, "%s", id);
    r->placer = placer;
    r->shard_index = e->cfg.shard_count > 1 ? e->cfg.shard_index : 0;
    r->shard_count = e->cfg.shard_count > 1 ? e->cfg.shard_count : 1;
    r->e = e;
    r->trace = *t;
    memset(t, 0, sizeof *t);
    r->base_speed = base_speed > 0 ? base_speed : 1;
    r->njobs = r->trace.njobs;
    r->jobs = calloc((size_t)r->njobs, sizeof *r->jobs);
    r->queue = malloc(sizeof *r->queue * (size_t)r->njobs);
    r->nnodes = e->nnodes;
    r->nodes = calloc((size_t)(r->nnodes ? r->nnodes : 1), sizeof *r->nodes);
    r->cands = calloc((size_t)(r->nnodes ? r->nnodes : 1), sizeof *r->cands);
    if (!r->jobs || !r->queue || !r->nodes || !r->cands)
        abort();
    r->hooked = calloc((size_t)(r->nnodes ? r->nnodes : 1), 1);
    r->it_node_w = calloc((size_t)(r->nnodes ? r->nnodes : 1), sizeof *r->it_node_w);
    if (!r->hooked || !r->it_node_w)
        abort();
    for (int i = 0; i < r->nnodes; i++) {
        const struct node *nd = &e->nodes[i];
        r->it_node_w[i] = node_it_w(nd);
        r->peak_w += nd->params.max_pkg_w * nd->state.npkgs;
        r->peak_w += nd->gparams.vendor != PHYS_GPU_NONE ? nd->gparams.max_w * nd->gparams.count : 0;
    }
    r->pool_cpu_pkg = calloc((size_t)(e->spec.npools ? e->spec.npools : 1), sizeof *r->pool_cpu_pkg);
    for (int i = 0; i < r->nnodes; i++) {
        const struct node *n = &e->nodes[i];
        struct run_node *rn = &r->nodes[i];
        rn->ncpus = n->params.cpus > 0 ? n->params.cpus : 1;
        rn->npkgs = n->state.npkgs > 0 ? n->state.npkgs : 1;
        int pool = e->spec.nodes[i].pool;
        if (!r->pool_cpu_pkg[pool]) { /* the package of each logical CPU, as /proc/cpuinfo numbers them */
            unsigned char *m = calloc((size_t)rn->ncpus, 1);
            for (int c = 0; c < rn->ncpus; c++) {
                int sock = -1;
                cpuinfo_cpu_topology(e->spec.pools[pool].tree, c, &sock, NULL, NULL);
                m[c] = (unsigned char)(sock < 0 ? 0 : sock >= rn->npkgs ? rn->npkgs - 1 : sock);
            }
            r->pool_cpu_pkg[pool] = m;
        }
        rn->cpu_pkg = r->pool_cpu_pkg[pool];
        rn->ngpus = n->gparams.vendor == PHYS_GPU_NONE ? 0 : n->gparams.count;
        rn->gpu_vendor = vendor_map[n->gparams.vendor & 3];
        const char *pp = label_of(e, i, "joulie.io/power-profile");
        rn->eco = pp && !strcmp(pp, "eco");
        rn->cpu_used = calloc((size_t)rn->ncpus, 1);
        rn->free_cpus = rn->ncpus;
        rn->free_gpus = rn->ngpus;
        for (int g = 0; g < PHYS_GPU_MAX; g++)
            rn->gpu_job[g] = -1;
        rn->slots = n->nunits;
        r->cands[i] = (struct place_node){.name = n->name, .total_cpus = rn->ncpus, .free_cpus = rn->ncpus,
                                          .total_gpus = rn->ngpus, .free_gpus = rn->ngpus,
                                          .gpu_vendor = rn->gpu_vendor, .eco = rn->eco,
                                          .max_jobs = rn->slots};
    }
    for (int k = 0; k < r->njobs; k++) {
        struct run_job *j = &r->jobs[k];
        j->t = &r->trace.jobs[k];
        j->index = k;
        j->node = -1;
        j->slot = -1;
        j->gang = -1;
        j->cpu_left = j->t->cpu_units;
        j->gpu_left = j->t->gpus ? j->t->gpu_units : 0;
        j->submit_ns = j->start_ns = j->end_ns = -1;
        r->count[JS_PENDING]++;
        int64_t s = (int64_t)(j->t->submit_s * 1e9);
        if (s > r->last_submit_ns)
            r->last_submit_ns = s;
    }
    /* gangs: jobs with gang true grouped by workloadId */
    for (int k = 0; k < r->njobs; k++) {
        struct run_job *j = &r->jobs[k];
        if (!j->t->gang)
            continue;
        int g = 0;
        for (; g < r->ngangs; g++)
            if (!strcmp(r->gangs[g].workload_id, j->t->workload_id))
                break;
        if (g == r->ngangs) {
            r->gangs = realloc(r->gangs, sizeof *r->gangs * (size_t)(r->ngangs + 1));
            r->gangs[g] = (struct run_gang){.workload_id = j->t->workload_id};
            r->ngangs++;
        }
        struct run_gang *G = &r->gangs[g];
        G->jobs = realloc(G->jobs, sizeof *G->jobs * (size_t)(G->n + 1));
        G->jobs[G->n++] = k;
        j->gang = g;
    }
    /* judged against the nodes that may run the jobs: this engine's, or with a placer on a
     * sharded engine every shard's (a shard without GPU nodes must not stall the GPU jobs) */
    int nc = r->nnodes;
    struct place_node *whole = placer && run_sharded(r) ? spec_cands(e, &nc) : NULL;
    struct place_node *c = whole ? whole : r->cands;
    for (int g = 0; g < r->ngangs; g++) {
        struct run_gang *G = &r->gangs[g];
        const struct trace_workload *w = trace_workload_find(&r->trace, G->workload_id);
        G->expected = w && w->pods > 0 ? w->pods : G->n;
        const char *why = NULL;
        if (G->n < G->expected)
            why = "its gang can never run whole: the workload record lists more pods than the trace has job records";
        else if (!fits_empty(r, c, nc, G->jobs, G->n))
            why = "its gang can never run whole: no placement of all its pods fits the cluster even when empty";
        for (int k = 0; why && k < G->n; k++)
            stall(r, &r->jobs[G->jobs[k]], why);
    }
    for (int k = 0; k < r->njobs; k++) {
        struct run_job *j = &r->jobs[k];
        if (j->state == JS_STALLED || j->gang >= 0)
            continue;
        struct place_request q = request_of(j->t);
        bool any = false;
        for (int i = 0; i < nc && !any; i++)
            any = place_could_fit(&c[i], &q);
        if (!any)
            stall(r, j, j->t->gpus ? "no node can ever hold its request (logical CPUs, GPUs of its vendor, or a "
                                     "performance job and only eco nodes)"
                                   : "no node can ever hold its request (logical CPUs, or a performance job and "
                                     "only eco nodes)");
    }
    free(whole);
    return r;
}

void run_free(struct run *r)
{
    if (!r)
        return;
    for (int k = 0; k < r->njobs; k++)
        free(r->jobs[k].cpus);
    for (int g = 0; g < r->ngangs; g++)
        free(r->gangs[g].jobs);
    for (int i = 0; i < r->nnodes; i++) {
        free(r->nodes[i].cpu_used);
        free(r->nodes[i].base.cpu_util_of);
        free(r->nodes[i].base.xfer);
        free(r->nodes[i].jobs);
        free(r->nodes[i].done);
    }
    for (int p = 0; r->pool_cpu_pkg && p < r->e->spec.npools; p++)
        free(r->pool_cpu_pkg[p]);
    free(r->pool_cpu_pkg);
    free(r->gangs);
    free(r->hooked);
    free(r->it_node_w);
    free(r->nodes);
    free(r->cands);
    free(r->jobs);
    free(r->queue);
    trace_free(&r->trace);
    free(r);
}

static void node_hook(void *ctx, struct node *nd);

/* ---- placement ------------------------------------------------------------------------- */

static void hold(struct run *r, struct run_job *j, int i)
{
    struct run_node *n = &r->nodes[i];
    const struct trace_job *t = j->t;
    j->cpus = malloc(sizeof *j->cpus * (size_t)t->cpus);
    int got = 0;
    /* the first package with room for all of them, else the lowest free CPUs */
    for (int k = 0; k < n->npkgs && !got; k++) {
        int free_here = 0;
        for (int c = 0; c < n->ncpus; c++)
            free_here += !n->cpu_used[c] && n->cpu_pkg[c] == k;
        if (free_here < t->cpus)
            continue;
        for (int c = 0; c < n->ncpus && got < t->cpus; c++)
            if (!n->cpu_used[c] && n->cpu_pkg[c] == k)
                n->cpu_used[c] = 1, j->cpus[got++] = c;
    }
    for (int c = 0; c < n->ncpus && got < t->cpus; c++)
        if (!n->cpu_used[c])
            n->cpu_used[c] = 1, j->cpus[got++] = c;
    n->free_cpus -= t->cpus;
    j->ngpus = 0;
    for (int g = 0; g < n->ngpus && j->ngpus < t->gpus; g++)
        if (n->gpu_job[g] < 0)
            n->gpu_job[g] = j->index, j->gpus[j->ngpus++] = g;
    n->free_gpus -= t->gpus;
    if (n->njobs == n->cap) {
        n->cap = n->cap ? n->cap * 2 : 8;
        n->jobs = realloc(n->jobs, sizeof *n->jobs * (size_t)n->cap);
    }
    n->jobs[n->njobs++] = j->index;
    if (t->cls == JOB_PERFORMANCE)
        n->perf_jobs++;
    j->node = i;
    j->fresh = true;
    node_wake(&r->e->nodes[i], r->e->tick_mono); /* its load changes from this tick */
    j->start_ns = r->now_ns;
    r->count[j->state]--;
    j->state = JS_RUNNING;
    r->count[JS_RUNNING]++;
    r->cands[i].free_cpus = n->free_cpus;
    r->cands[i].free_gpus = n->free_gpus;
    r->cands[i].jobs = n->njobs;
    r->cands[i].performance_node = n->perf_jobs > 0;
    if (r->on_job)
        r->on_job(r->ctx, r, j);
}

static void release(struct run *r, struct run_job *j)
{
    struct run_node *n = &r->nodes[j->node];
    for (int k = 0; k < j->t->cpus; k++)
        n->cpu_used[j->cpus[k]] = 0;
    n->free_cpus += j->t->cpus;
    for (int k = 0; k < j->ngpus; k++)
        n->gpu_job[j->gpus[k]] = -1;
    n->free_gpus += j->ngpus;
    if (j->t->cls == JOB_PERFORMANCE)
        n->perf_jobs--;
    for (int k = 0; k < n->njobs; k++)
        if (n->jobs[k] == j->index) {
            n->jobs[k] = n->jobs[--n->njobs];
            break;
        }
}

static double mean_perf_pct(const struct run *r)
{
    double sum = 0;
    int n = 0;
    for (int i = 0; i < r->nnodes; i++)
        if (!r->nodes[i].eco && r->nodes[i].perf_jobs > 0)
            sum += r->nodes[i].cpu_util * 100, n++;
    return n ? sum / n : 0;
}

/* A gang: all of it or nothing. */
static bool place_gang(struct run *r, struct run_gang *G, double mp)
{
    int *where = malloc(sizeof *where * (size_t)G->n);
    int k = 0;
    for (; k < G->n; k++) {
        struct place_request q = request_of(r->jobs[G->jobs[k]].t);
        int i = place_choose(r->cands, r->nnodes, &q, mp);
        if (i < 0)
            break;
        r->cands[i].free_cpus -= q.cpus;
        r->cands[i].free_gpus -= q.gpus;
        r->cands[i].jobs++;
        where[k] = i;
    }
    bool ok = k == G->n;
    for (int m = 0; m < k; m++) { /* undo the tentative counts; hold() sets them for real */
        const struct trace_job *t = r->jobs[G->jobs[m]].t;
        r->cands[where[m]].free_cpus += t->cpus;
        r->cands[where[m]].free_gpus += t->gpus;
        r->cands[where[m]].jobs--;
    }
    for (int m = 0; ok && m < G->n; m++)
        hold(r, &r->jobs[G->jobs[m]], where[m]);
    G->placed = ok;
    free(where);
    return ok;
}

/* Whether node i has room for t now, in the engine's terms: the CPUs it holds (ceil of the
 * request), the GPUs of its vendor, a job cgroup slot. The scheduler counts the same CPUs and
 * GPUs (the pod requests what the job holds, a Node's allocatable is at most its logical CPUs,
 * and a job's pod completes only after the engine has released the job), so a bound pod's
 * job fits, but for the slots: the scheduler allows a Node's `pods` (110) while the engine runs
 * at most spec.jobCgroups.maxJobsPerNode jobs on it; a job past them waits here, its pod
 * Running, until a slot frees. */
static bool room_for(const struct run *r, int i, const struct trace_job *t)
{
    const struct place_node *c = &r->cands[i];
    if (t->cpus > c->free_cpus || (c->max_jobs && c->jobs >= c->max_jobs))
        return false;
    return !t->gpus || (c->gpu_vendor == t->gpu_vendor && t->gpus <= c->free_gpus);
}

/* Job j's pod was bound to another shard's node (RUN_PLACER_ELSEWHERE, or _DONE when its pod
 * there has finished): that shard runs it; here it ends as elsewhere, and the run waits for its
 * pod to finish before it ends, so that every shard's run spans the whole run. */
static void go_elsewhere(struct run *r, struct run_job *j, int b)
{
    r->count[j->state]--;
    j->state = JS_ELSEWHERE;
    r->count[JS_ELSEWHERE]++;
    j->away_open = b != RUN_PLACER_ELSEWHERE_DONE;
    r->away_open += j->away_open;
    if (r->on_job)
        r->on_job(r->ctx, r, j);
}

/* The elsewhere jobs whose pods have finished since (a placer on a sharded engine). */
static void close_away(struct run *r)
{
    for (int k = 0; r->away_open > 0 && k < r->njobs; k++) {
        struct run_job *j = &r->jobs[k];
        if (j->state == JS_ELSEWHERE && j->away_open &&
            r->placer->bound(r->placer->ctx, r, j) == RUN_PLACER_ELSEWHERE_DONE) {
            j->away_open = false;
            r->away_open--;
        }
    }
}

/* Placement by a placer (run_placer.h): a waiting job starts on the node its pod is bound to; a
 * gang starts when every pod of it is bound and every one fits (the original's rule: a gang's
 * jobs advance only when all of them run). Eco and draining marks are the scheduler's business
 * here (the pods' affinity): a pod bound before its node became eco still runs there. On a
 * sharded engine, a job bound to another shard's node is elsewhere (go_elsewhere); a gang's
 * members bound elsewhere count as running for its start (each shard starts its own members
 * once every pod of the gang is bound). */
static void place_bound(struct run *r)
{
    refresh_cands(r);
    int kept = 0;
    for (int q = 0; q < r->nqueue; q++) {
        struct run_job *j = &r->jobs[r->queue[q]];
        if (j->state != JS_WAITING)
            continue; /* started with its gang */
        bool placed = false;
        if (j->gang >= 0) {
            struct run_gang *G = &r->gangs[j->gang];
            int *where = malloc(sizeof *where * (size_t)G->n);
            int k = 0;
            for (; G->submitted == G->n && k < G->n; k++) {
                const struct run_job *g = &r->jobs[G->jobs[k]];
                int i = r->placer->bound(r->placer->ctx, r, g);
                where[k] = i;
                if (i <= RUN_PLACER_ELSEWHERE)
                    continue; /* another shard runs it */
                if (i < 0 || i >= r->nnodes || !room_for(r, i, g->t))
                    break;
                r->cands[i].free_cpus -= g->t->cpus; /* tentative: the next member sees it taken */
                r->cands[i].free_gpus -= g->t->gpus;
                r->cands[i].jobs++;
            }
            placed = G->submitted == G->n && k == G->n;
            for (int m = 0; m < k; m++) {
                if (where[m] < 0)
                    continue;
                const struct trace_job *t = r->jobs[G->jobs[m]].t;
                r->cands[where[m]].free_cpus += t->cpus;
                r->cands[where[m]].free_gpus += t->gpus;
                r->cands[where[m]].jobs--;
            }
            for (int m = 0; placed && m < G->n; m++) {
                if (where[m] >= 0)
                    hold(r, &r->jobs[G->jobs[m]], where[m]);
                else
                    go_elsewhere(r, &r->jobs[G->jobs[m]], where[m]);
            }
            G->placed = placed;
            free(where);
        } else {
            int i = r->placer->bound(r->placer->ctx, r, j);
            if (i >= 0 && i < r->nnodes && room_for(r, i, j->t)) {
                hold(r, j, i);
                placed = true;
            } else if (i <= RUN_PLACER_ELSEWHERE) {
                go_elsewhere(r, j, i);
                placed = true;
            }
        }
        r->placements++;
        if (!placed)
            r->queue[kept++] = j->index;
    }
    r->nqueue = kept;
}

const char *run_placement_name(const struct run *r)
{
    return r->placer ? r->placer->name : "standalone";
}

/* rn->base from the node's load now (run_node.base). */
static void save_load(struct run_node *rn, const struct node *nd)
{
    struct run_base_load *b = &rn->base;
    int nc = nd->load.ncpu_util > 0 ? (nd->load.ncpu_util < PHYS_MAX_CPUS ? nd->load.ncpu_util : PHYS_MAX_CPUS) : 0;
    int nx = nd->gload.nxfer > 0 ? (nd->gload.nxfer < PHYS_GPU_MAX_XFER ? nd->gload.nxfer : PHYS_GPU_MAX_XFER) : 0;
    *b = (struct run_base_load){.cpu_util = nd->load.cpu_util, .memory_intensity = nd->load.memory_intensity,
                                .gpu_util = nd->gload.util, .gpu_memory_intensity = nd->gload.memory_intensity,
                                .cpu_class = nd->load.cpu_class, .gpu_class = nd->gload.cls, .ncpu_util = nc,
                                .nxfer = nx};
    if (nc && !(b->cpu_util_of = malloc((size_t)nc * sizeof *b->cpu_util_of)))
        abort();
    if (nx && !(b->xfer = malloc((size_t)nx * sizeof *b->xfer)))
        abort();
    if (nc)
        memcpy(b->cpu_util_of, nd->load.cpu_util_of, (size_t)nc * sizeof *b->cpu_util_of);
    if (nx)
        memcpy(b->xfer, nd->gload.xfer, (size_t)nx * sizeof *b->xfer);
}

void run_node_restore_load(const struct run_node *rn, struct node *nd)
{
    const struct run_base_load *b = &rn->base;
    nd->load.cpu_util = b->cpu_util;
    nd->load.memory_intensity = b->memory_intensity;
    nd->load.cpu_class = b->cpu_class;
    nd->load.ncpu_util = b->ncpu_util; /* the physics reads no entry past it */
    if (b->ncpu_util)
        memcpy(nd->load.cpu_util_of, b->cpu_util_of, (size_t)b->ncpu_util * sizeof *b->cpu_util_of);
    nd->gload.util = b->gpu_util;
    nd->gload.memory_intensity = b->gpu_memory_intensity;
    nd->gload.cls = b->gpu_class;
    nd->gload.nxfer = b->nxfer; /* nor past this */
    if (b->nxfer)
        memcpy(nd->gload.xfer, b->xfer, (size_t)b->nxfer * sizeof *b->xfer);
}

void run_before(struct run *r, struct engine *e)
{
    if (!r->active) { /* the first tick: attach every node */
        r->active = true;
        r->start_mono = e->tick_mono - r->now_ns; /* a resumed run continues its clock */
        for (int i = 0; i < r->nnodes; i++) {
            struct run_node *rn = &r->nodes[i];
            save_load(rn, &e->nodes[i]);
            e->nodes[i].load_ctx = r;
            e->nodes[i].load_hook = node_hook;
            node_wake(&e->nodes[i], e->tick_mono);
        }
    }
    r->now_ns = e->tick_mono - r->start_mono;
    if (r->resume_tick) {
        /* a resumed run's first tick takes the counters where the restart left them and no more:
         * the run's clock stands at the checkpoint's time, and jobs are submitted and placed at
         * the next tick, as they would have been after the checkpoint's tick */
        r->resume_tick = false;
        r->rebase_tick = true;
        return;
    }
    r->ticks++;
    if (r->ending) { /* every node's last interval is accounted at this tick */
        for (int i = 0; i < r->nnodes; i++)
            node_wake(&e->nodes[i], e->tick_mono);
        return;
    }
    int64_t t0 = mono_ns();
    while (r->next_submit < r->njobs && (int64_t)(r->jobs[r->next_submit].t->submit_s * 1e9) <= r->now_ns) {
        struct run_job *j = &r->jobs[r->next_submit++];
        if (r->placer) /* its pod is made now, a stalled job's too (it stays Pending) */
            r->placer->submit(r->placer->ctx, r, j);
        if (j->state == JS_STALLED)
            continue;
        r->count[j->state]--;
        j->state = JS_WAITING;
        r->count[JS_WAITING]++;
        j->submit_ns = r->now_ns;
        r->submitted[j->t->cls]++;
        r->queue[r->nqueue++] = j->index;
        if (j->gang >= 0)
            r->gangs[j->gang].submitted++;
    }
    if (r->placer && r->away_open)
        close_away(r);
    if (!r->nqueue)
        return;
    if (r->placer) {
        place_bound(r);
        r->place_ns += (double)(mono_ns() - t0);
        return;
    }
    refresh_cands(r);
    double mp = mean_perf_pct(r);
    /* the most any node has free, to skip hopeless requests without a scan */
    int max_cpus = 0, max_gpus[4] = {0};
    for (int i = 0; i < r->nnodes; i++) {
        if (r->cands[i].free_cpus > max_cpus)
            max_cpus = r->cands[i].free_cpus;
        if (r->cands[i].free_gpus > max_gpus[r->cands[i].gpu_vendor & 3])
            max_gpus[r->cands[i].gpu_vendor & 3] = r->cands[i].free_gpus;
    }
    int kept = 0;
    for (int q = 0; q < r->nqueue; q++) {
        struct run_job *j = &r->jobs[r->queue[q]];
        if (j->state != JS_WAITING)
            continue; /* placed with its gang */
        const struct trace_job *t = j->t;
        bool placed = false;
        if (t->cpus <= max_cpus && t->gpus <= max_gpus[t->gpu_vendor & 3]) {
            if (j->gang >= 0) {
                struct run_gang *G = &r->gangs[j->gang];
                if (G->submitted == G->n)
                    placed = place_gang(r, G, mp);
            } else {
                struct place_request rq = request_of(t);
                int i = place_choose(r->cands, r->nnodes, &rq, mp);
                if (i >= 0) {
                    hold(r, j, i);
                    placed = true;
                }
            }
            r->placements++;
        }
        if (placed) { /* the maxima may have dropped */
            max_cpus = 0;
            memset(max_gpus, 0, sizeof max_gpus);
            for (int i = 0; i < r->nnodes; i++) {
                if (r->cands[i].free_cpus > max_cpus)
                    max_cpus = r->cands[i].free_cpus;
                if (r->cands[i].free_gpus > max_gpus[r->cands[i].gpu_vendor & 3])
                    max_gpus[r->cands[i].gpu_vendor & 3] = r->cands[i].free_gpus;
            }
        } else {
            r->queue[kept++] = j->index;
        }
    }
    r->nqueue = kept;
    r->place_ns += (double)(mono_ns() - t0);
}

/* ---- per node: progress, load (node workers; the energy: run_energy.c) ------------------- */

void run_node_load(const struct run *r, int i, struct phys_load *load, struct phys_gpu_load *gload)
{
    const struct run_node *n = &r->nodes[i];
    double cu = 0, creq = 0, mem = 0, cw[4] = {0};
    double gu = 0, greq = 0, gmem = 0, gw[3] = {0};
    for (int k = 0; k < n->njobs; k++) {
        const struct trace_job *t = r->jobs[n->jobs[k]].t;
        cu += t->cpu_req * t->u_cpu;
        creq += t->cpu_req;
        mem += t->cpu_req * t->mem_int;
        cw[t->cpu_class & 3] += t->cpu_req;
        if (t->gpus) {
            gu += t->gpus * t->u_gpu;
            greq += t->gpus;
            gmem += t->gpus * t->mem_int;
            gw[t->gpu_class % 3] += t->gpus;
        }
    }
    memset(load, 0, sizeof *load);
    memset(gload, 0, sizeof *gload);
    /* each CPU a job holds runs at the job's utilization of it; every other CPU is idle */
    load->ncpu_util = n->ncpus < PHYS_MAX_CPUS ? n->ncpus : PHYS_MAX_CPUS;
    for (int k = 0; k < n->njobs; k++) {
        const struct run_job *j = &r->jobs[n->jobs[k]];
        float u = (float)run_job_cpu_util(j->t);
        for (int c = 0; c < j->t->cpus; c++)
            if (j->cpus[c] >= 0 && j->cpus[c] < load->ncpu_util)
                load->cpu_util_of[j->cpus[c]] = u;
    }
    load->cpu_util = clamp01(cu / n->ncpus); /* the mean of the CPUs' (telemetry, placement's score) */
    load->memory_intensity = creq > 0 ? mem / creq : 0;
    load->cpu_class = PHYS_CLASS_MIXED;
    for (int c = 0; c < 4 && creq > 0; c++)
        if (cw[c] >= 0.6 * creq)
            load->cpu_class = c;
    /* each job's peer transfers between the GPUs it holds (its ordinals to the node's indices);
     * a pair named twice sums (jobs hold disjoint GPUs, so every pair fits: PHYS_GPU_MAX_XFER) */
    for (int k = 0; k < n->njobs; k++) {
        const struct run_job *j = &r->jobs[n->jobs[k]];
        for (int x = 0; x < j->t->nxfer; x++) {
            const struct trace_xfer *tx = &j->t->xfer[x];
            if (tx->from >= j->ngpus || tx->to >= j->ngpus)
                continue;
            int from = j->gpus[tx->from], to = j->gpus[tx->to], m = 0;
            while (m < gload->nxfer && (gload->xfer[m].from != from || gload->xfer[m].to != to))
                m++;
            if (m == gload->nxfer && m < PHYS_GPU_MAX_XFER)
                gload->xfer[gload->nxfer++] = (struct phys_gpu_xfer){from, to, 0};
            if (m < gload->nxfer)
                gload->xfer[m].gbps += tx->gbps;
        }
    }
    gload->util = n->ngpus ? clamp01(gu / n->ngpus) : 0;
    gload->memory_intensity = greq > 0 ? gmem / greq : 0;
    gload->cls = PHYS_GPU_CLASS_OTHER;
    for (int c = 0; c < 3 && greq > 0; c++)
        if (gw[c] >= 0.6 * greq)
            gload->cls = c;
}

/* --speed max batches (engine.h batch_ticks): the node steps again two ticks before the tick the
 * job's work would run out at at the rates of the interval that just ended, and from there at
 * every tick, so that it ends at the tick it would end at if the node were stepped every tick.
 * Those rates hold while nothing on the node
 * changes: a change of its load (node_hook) or its limits (engine.c) steps it at the next tick,
 * which predicts again from the new interval's rates. A rate of 0 leaves it to the batch. */
static void wake_at_end(struct run *r, struct node *nd, const struct run_job *j, double cpu_rate, double gpu_rate)
{
    double s = 0;
    if (j->cpu_left > 0)
        s = cpu_rate > 0 ? j->cpu_left / cpu_rate : HUGE_VAL;
    if (j->gpu_left > 0) {
        double g = gpu_rate > 0 ? j->gpu_left / gpu_rate : HUGE_VAL;
        s = g > s ? g : s;
    }
    /* two ticks early (and a billionth of the wait, for rounding over a long one): the rates'
     * quotient can differ from their step-by-step subtraction in the last bits, and a job must
     * never run out inside ticks the node did not step */
    double early = 2.0 * (double)r->e->cfg.tick_ns + s;
    if (s < 1e9) /* beyond 30 years: the batch comes first anyway */
        node_wake(nd, r->e->tick_mono + (int64_t)ceil(s * 1e9 - early));
}

/* Each job's advance over the interval since the last hook: ticks steps of dt each (more than
 * one where the node held its rates over several ticks of a batch, as in run_energy_account),
 * each subtracted as its own step would have, so the work left is that of --batch 1 to the bit. */
static void progress(struct run *r, int i, struct node *nd, double dt, int64_t ticks)
{
    struct run_node *n = &r->nodes[i];
    const struct phys_cpu_params *p = &nd->params;
    double fmax = p->cpuinfo_max_khz > 0 ? (double)p->cpuinfo_max_khz : 1;
    double pkg_f[PHYS_MAX_PKGS] = {0}; /* each package's running frequency / cpuinfo_max, once a step */
    for (int k = 0; k < n->npkgs && k < PHYS_MAX_PKGS; k++)
        pkg_f[k] = (double)phys_cpu_cur_freq_khz(p, &nd->state, k) / fmax;
    for (int k = 0; k < n->njobs;) {
        struct run_job *j = &r->jobs[n->jobs[k]];
        if (j->fresh) {
            k++;
            continue;
        }
        const struct trace_job *t = j->t;
        double f = 0;
        for (int c = 0; c < t->cpus; c++)
            f += pkg_f[n->cpu_pkg[j->cpus[c]]];
        f /= t->cpus;
        double cpu_mul = run_cpu_throughput(f, p->knee, t->cpu_class, t->mem_int, t->io_int);
        double impact = clamp01(0.60 * t->u_cpu + 0.25 * (1 - t->mem_int) + 0.15 * (1 - t->io_int));
        double eff = 1 - impact * (1 - cpu_mul);
        eff = 1 - t->sens_cpu * (1 - eff);
        double cpu_rate = t->cpu_req * r->base_speed * eff, gpu_rate = 0; /* work units per second now */
        if (t->gpus && j->gpu_left > 0) {
            double gm = 0, cap = 0;
            for (int g = 0; g < j->ngpus; g++) {
                const struct phys_gpu *G = &nd->gstate.g[j->gpus[g]];
                double ratio = 1;
                if (G->capped) {
                    double nat = phys_gpu_natural_w(&nd->gparams, &nd->gload, nd->gload.util);
                    ratio = nat > 0 ? G->power_w / nat : 1;
                }
                gm += run_gpu_throughput(ratio, t->gpu_class, t->mem_int);
                cap += nd->gparams.max_w > 0 ? clamp01(G->enforced_w / nd->gparams.max_w) : 1;
            }
            gm /= j->ngpus ? j->ngpus : 1;
            cap /= j->ngpus ? j->ngpus : 1;
            double feed = 1 - (1 - cpu_mul) * t->feed * t->sens_cpu;
            double cap_impact = 1 - (1 - cap) * t->sens_gpu;
            gpu_rate = (t->gpus > 0.1 ? t->gpus : 0.1) * r->base_speed * gm * feed * cap_impact;
        }
        for (int g = 0; g < j->ngpus; g++)
            if ((nd->gpu_lost_held >> j->gpus[g]) & 1) /* its GPU was off the bus: it waited (docs/faults.md) */
                cpu_rate = gpu_rate = 0;
        if (nd->off_held) /* its node was without power: it waited (docs/faults.md power-loss) */
            cpu_rate = gpu_rate = 0;
        for (int64_t s = 0; s < ticks && (j->cpu_left > 0 || j->gpu_left > 0); s++) {
            j->cpu_left -= cpu_rate * dt;
            if (t->gpus && j->gpu_left > 0)
                j->gpu_left -= gpu_rate * dt;
        }
        if (j->cpu_left <= 0 && j->gpu_left <= 0) {
            j->end_ns = r->now_ns;
            release(r, j); /* moves the last job into slot k */
            if (n->ndone == n->done_cap) {
                n->done_cap = n->done_cap ? n->done_cap * 2 : 8;
                n->done = realloc(n->done, sizeof *n->done * (size_t)n->done_cap);
            }
            n->done[n->ndone++] = j->index;
            continue;
        }
        wake_at_end(r, nd, j, cpu_rate, gpu_rate);
        k++;
    }
}

static void node_hook(void *ctx, struct node *nd)
{
    struct run *r = ctx;
    int i = (int)(nd - r->e->nodes);
    struct run_node *n = &r->nodes[i];
    r->hooked[i] = 1;
    if (!n->started) { /* the run begins on this node now: count from here */
        n->started = true;
        run_energy_begin(n, nd);
        n->last_ns = nd->state.now_ns;
    } else if (n->rebase) { /* after a restart: the counters continued, the node's clock did not */
        n->rebase = false;
        n->last_ns = nd->state.now_ns;
        if (r->resume_crash) /* the work since the checkpoint is redone: its energy is no job's */
            run_energy_resume_gap(n, nd);
        else
            run_energy_account(r, i, nd, 1, 0);
    } else {
        /* at --speed max, a node of a batch that did not step for several ticks held its powers
         * and rates over them: each is accounted and progressed as a step of its own */
        int64_t span = nd->state.now_ns - n->last_ns, tick = r->e->cfg.tick_ns, ticks = 1;
        if (r->e->cfg.speed == ENGINE_SPEED_MAX && tick > 0 && span > tick && span % tick == 0)
            ticks = span / tick;
        double dt = (double)(span / ticks) / 1e9;
        run_energy_account(r, i, nd, ticks, span / ticks);
        n->last_ns = nd->state.now_ns;
        if (!r->ending)
            progress(r, i, nd, dt, ticks);
    }
    /* A job placed or ended now changes the node's load from now on: the rates of the coming
     * interval (the ones a job's end is predicted from) are known at the next tick. */
    bool changed = n->ndone > 0;
    for (int k = 0; k < n->njobs; k++) {
        changed |= r->jobs[n->jobs[k]].fresh;
        r->jobs[n->jobs[k]].fresh = false;
    }
    if (changed)
        node_wake(nd, r->e->tick_mono + 1);
    run_cgroup_sync(r, i, nd);
    if (r->ending) { /* the run's last interval is accounted: the node goes back to its load */
        run_node_restore_load(n, nd);
        nd->load_hook = NULL;
        nd->load_ctx = NULL;
        n->ended = true;
        n->cpu_util = 0;
        return;
    }
    run_node_load(r, i, &nd->load, &nd->gload);
    n->cpu_util = nd->load.cpu_util;
}

/* ---- the tick's end (tick thread) --------------------------------------------------------- */

static double pue_of(double ambient_c, double load)
{
    /* the original's facility model: PUE = 1.08 + 0.006 (T - 15) + 0.04 L + 0.015 L (T - 15) / 15 */
    double d = ambient_c - 15;
    double p = 1.08 + 0.006 * d + 0.04 * load + 0.015 * load * d / 15;
    return p < 1 ? 1 : p > 3 ? 3 : p;
}

/* The IT power node i draws over the interval it began last (packages, DRAM, GPUs). */
static double node_it_w(const struct node *nd)
{
    double w = 0;
    for (int k = 0; k < nd->state.npkgs; k++)
        w += nd->state.pkg[k].power_w + (double)nd->state.pkg[k].energy[PHYS_ZONE_DRAM].power_uw / 1e6;
    for (int g = 0; nd->gparams.vendor != PHYS_GPU_NONE && g < nd->gparams.count; g++)
        w += nd->gstate.g[g].power_w;
    return w;
}

void run_after(struct run *r, struct engine *e)
{
    /* only the nodes whose hook ran this tick changed (at --speed max in a batch, a few) */
    for (int i = 0; i < r->nnodes; i++) {
        if (!r->hooked[i])
            continue;
        r->hooked[i] = 0;
        struct run_node *n = &r->nodes[i];
        r->it_node_w[i] = node_it_w(&e->nodes[i]);
        if (n->ended && !n->ended_counted) {
            n->ended_counted = true;
            r->nodes_ended++;
        }
        for (int k = 0; k < n->ndone; k++) {
            struct run_job *j = &r->jobs[n->done[k]];
            r->count[JS_RUNNING]--;
            j->state = JS_COMPLETED;
            r->count[JS_COMPLETED]++;
            n->completed[j->t->cls]++;
            double s = (double)(j->end_ns - j->submit_ns) / 1e9;
            r->completion_sum_s += s;
            int b = 0;
            while (b < RUN_COMPLETION_BUCKETS && s > run_completion_le[b])
                b++;
            r->completion_bucket[b]++;
            if (r->placer) /* its pod may complete */
                r->placer->done(r->placer->ctx, r, j);
            if (r->on_job)
                r->on_job(r->ctx, r, j);
        }
        n->ndone = 0;
    }
    bool all_ended = r->nodes_ended == r->nnodes;
    /* facility: IT energy of the tick times the PUE at the facility's ambient and load */
    double it_w = 0, peak = r->peak_w;
    for (int i = 0; i < r->nnodes; i++)
        it_w += r->it_node_w[i];
    double amb = engine_ambient_c(e, -1, e->tick_wall);
    double pue = pue_of(amb, peak > 0 ? it_w / peak : 0);
    double dt = (double)e->cfg.tick_ns / 1e9;
    bool rebase_tick = r->rebase_tick; /* no interval of the run's clock begins at it */
    r->rebase_tick = false;
    if (!all_ended && !rebase_tick) { /* the interval just begun carries the run's load */
        r->it_j += it_w * dt;
        r->facility_j += it_w * dt * pue;
    }
    r->pue_last = pue;
    r->ambient_last = amb;
    if (r->ending) {
        if (all_ended)
            r->state = r->end_state;
        return;
    }
    /* ended here: completed, stalled, or run by another shard whose pod has finished there */
    if (r->count[JS_COMPLETED] + r->count[JS_STALLED] + r->count[JS_ELSEWHERE] == r->njobs && !r->away_open) {
        r->ending = true;
        r->end_state = r->count[JS_STALLED] ? RUN_STALLED : RUN_COMPLETED;
    }
}

void run_set_eco(struct run *r, int i, bool eco)
{
    if (i < 0 || i >= r->nnodes)
        return;
    r->nodes[i].eco = eco;
    r->cands[i].eco = eco;
}

void run_stop(struct run *r)
{
    if (r->ending)
        return;
    r->ending = true;
    r->end_state = RUN_STOPPED;
}
