/* placement: which node a job goes to. One policy today (the original's standalone placement,
 * github.com/joulie-k8s/Joulie simulator/cmd/simulator/standalone.go findNodeForJob, which
 * approximates its scheduler extender); the interface is candidates in, choice out, so another
 * policy (or a Kubernetes route) replaces this file without touching the run.
 * Never: time, state, allocation of CPUs or GPUs (the run does that), I/O. */
#ifndef HWEMU_PLACEMENT_H
#define HWEMU_PLACEMENT_H
#include <stdbool.h>

/* A node as placement sees it. */
struct place_node {
    const char *name;
    int total_cpus, free_cpus;
    int total_gpus, free_gpus;
    int gpu_vendor;       /* enum gpu_req of the node's GPUs, GPU_REQ_NONE without */
    bool eco;             /* labelled joulie.io/power-profile: eco */
    bool draining;        /* must take no performance job */
    double cpu_pct;       /* CPU utilization now, percent */
    bool performance_node;/* runs performance jobs now (for the standard-on-performance penalty) */
    int max_jobs, jobs;   /* at most max_jobs jobs at once (its job cgroup slots; 0: no limit), jobs now */
};

struct place_request {
    int cpus, gpus, gpu_vendor, cls; /* enum job_class */
};

/* Whether node n could take the request at all, ignoring what is in use. */
bool place_could_fit(const struct place_node *n, const struct place_request *r);
/* Whether node n can take the request now. */
bool place_fits(const struct place_node *n, const struct place_request *r);
/* The score of n for r (0..100), for a node that fits. mean_perf_cpu_pct: mean CPU percent of
 * the non-eco nodes running performance jobs. */
double place_score(const struct place_node *n, const struct place_request *r, double mean_perf_cpu_pct);
/* The best node: highest score, ties to the lowest name; -1 when none fits. */
int place_choose(const struct place_node *nodes, int n, const struct place_request *r, double mean_perf_cpu_pct);

#endif
