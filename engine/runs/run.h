/* run: one workload run on the engine's nodes: a trace's jobs submitted at start +
 * submitTimeOffsetSec, placed (placement.h) onto specific CPUs and GPUs, each node's load made
 * from the jobs on it, each job's progress at the throughput its resources give it, and the
 * nodes' energy split exactly between the jobs and idle.
 *
 * Owns: job and run state, the per-node load (run_node_load), progress, stall detection
 * (run.c), the energy split (run_energy.c). Never: HTTP, files (run_output.c writes them), the tick loop (the engine
 * calls in through engine_hooks and each node's load_hook), locks (runs.c holds one around
 * every call that is not a node hook).
 *
 * Tick protocol, each engine tick:
 *   run_before  (tick thread)  submit jobs whose time came, place what fits
 *   node hook   (node workers) per node: split the energy of the interval that just ended
 *               between the jobs that held the node over it and idle, advance those jobs,
 *               finish the ones whose work is done, then set the node's load for the next
 *               interval from the jobs on it now
 *   run_after   (tick thread)  account finished jobs, notice the end
 * The energy split, per zone and interval (delta = the counter's exact µJ increase):
 *   package k  a job's share = delta * (idle_frac * cpus_jk / cpus_k
 *                                       + (1 - idle_frac) * b_jk / Σ_j b_jk)
 *              idle_frac = the package's power at zero load / its power over the interval,
 *              cpus_jk = the CPUs job j holds on package k, b_jk = cpus_jk * the job's
 *              utilization of each (run_job_cpu_util): the package's power sums its own
 *              CPUs' (physics_cpu.h), so its dynamic part is shared by the jobs that keep
 *              those CPUs busy, and a job on another package gets none of it
 *   DRAM k     delta * cpus_jk / cpus_k
 *   GPU g      idle part (idle_w / power) to the job holding g; the rest shared by
 *              gpus_j * GPU utilization over the node's GPU jobs (the physics loads every GPU
 *              of a node alike)
 * Each share is rounded down to a µJ and idle gets delta - Σ shares, so per node
 * Σ jobs + idle = Σ counter deltas exactly, by construction. */
#ifndef HWEMU_RUN_H
#define HWEMU_RUN_H
#include "physics_cpu.h"
#include "physics_gpu.h"
#include "run_placer.h"
#include "trace.h"

#include <stdbool.h>
#include <stdint.h>

struct engine;
struct node;

/* elsewhere: on a sharded engine with a placer, the job's pod was bound to another shard's node:
 * that shard runs it (docs/kubernetes.md "Sharding"); an ended state here, like completed */
enum job_state { JS_PENDING = 0, JS_WAITING, JS_RUNNING, JS_COMPLETED, JS_STALLED, JS_ELSEWHERE, JS_NSTATES };
/* failed: a run directory the engine found with no usable state (runs.c lists it); suspended:
 * the engine stopped in the middle of the run, which resumes at its next start */
enum run_state { RUN_RUNNING = 0, RUN_COMPLETED, RUN_STALLED, RUN_STOPPED, RUN_FAILED, RUN_SUSPENDED, RUN_NSTATES };
enum energy_part { EP_CPU = 0, EP_DRAM, EP_GPU, EP_N };

extern const char *const job_state_names[JS_NSTATES];
extern const char *const run_state_names[RUN_NSTATES];
extern const char *const job_class_names[JOB_NCLASSES];

struct run_job {
    const struct trace_job *t;
    int index;
    int state;       /* enum job_state */
    int node;        /* engine node index, -1 */
    int *cpus;       /* logical CPUs held (t->cpus of them) */
    int gpus[PHYS_GPU_MAX], ngpus;
    int gang;        /* index into run.gangs, -1 */
    bool fresh;      /* placed this tick: held nothing over the interval that just ended */
    int slot;        /* its job cgroup slot on its node (run_cgroup.c), -1: none */
    uint64_t cgroup_cpu_ns; /* the CPU time its cgroup counted, when it was released */
    double cpu_left, gpu_left;
    int64_t submit_ns, start_ns, end_ns; /* emulated ns since the run's start; -1: not yet */
    uint64_t energy_uj[EP_N];
    const char *stall_reason;
    bool away_open;  /* elsewhere, and its pod there has not finished yet */
};

struct run_gang {
    const char *workload_id;
    int *jobs, n;
    int expected;    /* pods of its workload record, else n */
    int submitted;
    bool placed;
};

struct run_node {
    int ncpus, npkgs, ngpus, gpu_vendor;
    int slots;                       /* job cgroup slots (the node's units), 0: no limit */
    const unsigned char *cpu_pkg;    /* package of each logical CPU (the profile's topology) */
    bool eco;
    unsigned char *cpu_used;
    int free_cpus, free_gpus;
    int gpu_job[PHYS_GPU_MAX];       /* job index holding GPU g, -1 */
    int *jobs, njobs, cap;           /* running jobs */
    int *done, ndone, done_cap;      /* finished in this tick's hook */
    bool started, ended;
    bool ended_counted;              /* ended, and counted in run.nodes_ended */
    bool rebase;                     /* resumed: the node's clock restarted; next hook only accounts */
    int64_t last_ns;                 /* node time at the last hook */
    uint64_t last_uj[2 * PHYS_MAX_PKGS + PHYS_GPU_MAX];
    uint64_t start_uj;               /* Σ counters when the run began on the node */
    uint64_t delta_uj;               /* Σ counter deltas since */
    uint64_t part_start_uj[EP_N], part_delta_uj[EP_N]; /* the same per part: packages, DRAM, GPUs */
    uint64_t idle_uj, class_uj[JOB_NCLASSES];
    uint64_t resume_gap_uj;          /* the counters' increase between a checkpoint and the restart
                                      * after a crash: work the run redid, owned by no job */
    /* the load before the run, restored at its end (run_node_restore_load): the node's load and
     * GPU load without the unused tails of their per-CPU and transfer arrays (a phys_load and a
     * phys_gpu_load are 6 KB whole, most of it room no node uses) */
    struct run_base_load {
        double cpu_util, memory_intensity, gpu_util, gpu_memory_intensity;
        int cpu_class, gpu_class, ncpu_util, nxfer;
        float *cpu_util_of;          /* ncpu_util of them, NULL: none */
        struct phys_gpu_xfer *xfer;  /* nxfer of them, NULL: none */
    } base;
    double cpu_util;                 /* of the interval begun last */
    int perf_jobs;
    uint64_t completed[JOB_NCLASSES];
};

struct run {
    char id[64];
    /* the run key (docs/kubernetes.md "Sharding"): what names the run's Jobs and labels their
     * pods, the same on every shard of one run; "" for an unsharded run without one: its id */
    char key[64];
    int shard_index, shard_count;    /* the engine's --shard (count 1: unsharded) */
    int away_open;                   /* elsewhere jobs whose pods have not finished */
    struct engine *e;
    struct trace trace;
    struct run_job *jobs;
    int njobs;
    struct run_gang *gangs;
    int ngangs;
    struct run_node *nodes;
    int nnodes;
    struct place_node *cands;        /* placement's view, refreshed each tick */
    unsigned char *hooked;           /* per node: its hook ran this tick (run_after reads only those) */
    double *it_node_w;               /* per node: the IT power of the interval it began last */
    double peak_w;                   /* the cluster's peak IT power (the PUE's load) */
    int nodes_ended;                 /* nodes whose last interval of the run is accounted */
    unsigned char **pool_cpu_pkg;    /* per pool: package of each logical CPU */
    int *queue, nqueue;              /* waiting jobs in submit order */
    int next_submit;
    int state;                       /* enum run_state */
    bool active;                     /* nodes are attached */
    bool resumed;                    /* from a checkpoint (run_checkpoint.h) */
    bool resume_crash;               /* ... that a crash left (not a suspension) */
    bool resume_tick;                /* the first tick after a resume is to come: it only attaches
                                      * the nodes and takes their counters (run_before) */
    bool rebase_tick;                /* this tick is that one */
    bool ending;                     /* the next tick detaches the nodes */
    int end_state;
    int64_t start_mono;              /* engine tick time of the first tick */
    int64_t now_ns;                  /* emulated ns since the start */
    int64_t last_submit_ns;
    double base_speed;               /* work units per core-second at full throughput */
    int count[JS_NSTATES];
    uint64_t submitted[JOB_NCLASSES];
    double completion_sum_s;
    uint64_t completion_bucket[16];  /* le run_completion_le[] and +Inf */
    double facility_j, it_j, pue_last, ambient_last;
    uint64_t ticks;
    double place_ns;                 /* time spent placing (placement cost) */
    uint64_t placements;
    /* where placement comes from: NULL the standalone policy (placement.c), else a layer
     * above's (run_placer.h: the pods the Kubernetes scheduler bound); set before the first tick */
    const struct run_placer *placer;
    /* hooks for the owner (runs.c): each job's start, end or stall, on the tick thread */
    void (*on_job)(void *ctx, struct run *r, struct run_job *j);
    void *ctx;
};

#define RUN_COMPLETION_BUCKETS 12
extern const double run_completion_le[RUN_COMPLETION_BUCKETS];

/* A run of trace t (taken over) on e's nodes, not yet started. Jobs that can never run (no
 * node could ever hold the request; a gang that cannot fit whole on the empty cluster or has
 * fewer job records than its workload's pods) are stalled from the start: judged against the
 * engine's nodes, or, on a sharded engine with a placer (the whole cluster places the jobs),
 * against every node of the spec. base_speed: work units per core-second
 * (SIM_BASE_SPEED_PER_CORE, 1). placer: as runs_set_placer's (NULL: standalone). */
struct run *run_create(struct engine *e, struct trace *t, const char *id, double base_speed,
                       const struct run_placer *placer);
/* What names the run's Jobs and labels their pods: its key, else its id. */
static inline const char *run_key(const struct run *r)
{
    return r->key[0] ? r->key : r->id;
}
/* Whether the run's engine is one shard of several. */
static inline bool run_sharded(const struct run *r)
{
    return r->shard_count > 1;
}
void run_free(struct run *r);
/* Engine hooks (engine_hooks): see the tick protocol above. */
void run_before(struct run *r, struct engine *e);
void run_after(struct run *r, struct engine *e);
/* Marks node i eco or not for placement from now on (a label set at run time); jobs already
 * on it stay. */
void run_set_eco(struct run *r, int i, bool eco);
/* "kubernetes" (the placer's name) or "standalone": what the outputs say placed the jobs. */
const char *run_placement_name(const struct run *r);
/* Ends the run at the next tick (state stopped). */
void run_stop(struct run *r);
/* What node i's load is from the jobs on it now: per CPU (phys_load.cpu_util_of, every CPU
 * of the node), each CPU a job holds at run_job_cpu_util of the job and every free CPU at 0;
 * cpu_util is their mean (= Σ requested · utilization / capacity, the original's per-node
 * figure, shown in telemetry and used by placement's score); the dominant class at ≥ 60 % of
 * the weight else mixed, request-weighted intensities (trace.h defaults). GPUs: one load for
 * every GPU of the node. The one place that turns jobs into physics load. */
void run_node_load(const struct run *r, int i, struct phys_load *load, struct phys_gpu_load *gload);
/* The utilization of each CPU job t holds: utilization · requested cores / held CPUs (a
 * request of 1.5 cores holds 2 CPUs at 0.75 of the job's utilization each), 0..1. Inline here:
 * the load (run.c) and the energy split (run_energy.c) both use it at every node's hook, and
 * neither file depends on the other for it. */
static inline double run_job_cpu_util(const struct trace_job *t)
{
    double u = t->cpus > 0 ? t->u_cpu * t->cpu_req / t->cpus : 0;
    return u < 0 ? 0 : u > 1 ? 1 : u;
}
/* CPU and GPU throughput multipliers of the original's model (0..1). */
double run_cpu_throughput(double f, double knee, int cls, double mem, double io);
double run_gpu_throughput(double ratio, int cls, double mem);
/* Job cgroups (run_cgroup.c, docs/interfaces.md "Job cgroups"): the job's cgroup directory as
 * the node shows it, relative to /sys/fs/cgroup ("" when the spec has none); on node i's
 * worker at every hook, the slots of the jobs that ended are released and the jobs that hold
 * none claim one (all released when the run ends). */
void run_cgroup_path(const struct run *r, const struct run_job *j, char *buf, size_t cap);
/* The pid of a job's process (its cgroup.procs and /proc/<pid> on its node): RUN_JOB_PID_BASE +
 * the job's index. The base is the kernel's PID_MAX_LIMIT on 64-bit (include/linux/threads.h:
 * 4 × 1024 × 1024): kernel.pid_max can never be set above it and a pid is always below pid_max,
 * so no real process (the agent, its threads, any host process) can ever have one of these. */
#define RUN_JOB_PID_BASE 4194304
int run_job_pid(const struct run_job *j);
void run_cgroup_sync(struct run *r, int i, struct node *nd);
/* Energy totals: per class and idle, and the nodes' counters, since the start (µJ). */
void run_energy(const struct run *r, uint64_t cls_uj[JOB_NCLASSES], uint64_t *idle_uj, uint64_t *nodes_uj);

/* Node i's load and GPU load back to what they were before the run (run_node.base). */
void run_node_restore_load(const struct run_node *rn, struct node *nd);

#endif
