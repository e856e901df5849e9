/* cluster_pods: runs through the real scheduler (docs/kubernetes.md "Runs through the
 * scheduler"). Owns: the run placer (engine/runs/run_placer.h) that, with a cluster configured,
 * replaces the standalone placement: each job, at its submit time, becomes a batch/v1 Job
 * (cluster_jobjson.h) whose one pod the Kubernetes scheduler binds; a watch on those pods says
 * which of the engine's nodes each job is bound to; when the job's work is done its pod is
 * annotated sim.joulie.io/complete: "true" (KWOK's Stage then completes it). One thread of its
 * own does every request; the tick only reads and writes a table under a short lock. */
#ifndef HWEMU_CLUSTER_PODS_H
#define HWEMU_CLUSTER_PODS_H
#include <stddef.h>

struct engine;
struct run_placer;
struct cluster_pods;

/* kubeconfig as cluster_attach's. Starts the watch and the thread; returns at once. NULL with
 * err when the config cannot be read. */
struct cluster_pods *cluster_pods_attach(struct engine *e, const char *kubeconfig, char *err, size_t errlen);
/* The placer to give runs_set_placer; valid until cluster_pods_detach. */
const struct run_placer *cluster_pods_placer(struct cluster_pods *p);
/* Stops the thread (requests in flight abandoned) and frees it. Call after runs_detach (which
 * tells the placer that the active run is suspended). NULL: nothing. */
void cluster_pods_detach(struct cluster_pods *p);

#endif
