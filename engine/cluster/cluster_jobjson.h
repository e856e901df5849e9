/* cluster_jobjson: a group of a run's trace jobs as the batch/v1 Job (one pod a job) the
 * Kubernetes scheduler places, as the original simulator makes its pods (docs/kubernetes.md "Runs through the
 * scheduler"): requests of the CPUs the job holds, its memory and its GPUs (in requests and
 * limits, under the vendor's resource name), its class in joulie.io/workload-class, for a
 * performance job the required node affinity joulie.io/power-profile NotIn [eco], the KWOK
 * taint tolerated, only the spec's cluster's Nodes selected. Pure: no I/O, no state. */
#ifndef HWEMU_CLUSTER_JOBJSON_H
#define HWEMU_CLUSTER_JOBJSON_H
#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct trace_job;

/* What hwemu puts on its Jobs and their pods: the pods watch selects the part-of label; the
 * run's label and the group's indices annotation (the members' places in the run's trace, in
 * completion-index order) with the pod's completion index (the Job controller's annotation, an
 * Indexed Job's) find the job a pod belongs to. */
#define CLUSTER_POD_PART_OF_KEY "app.kubernetes.io/part-of"
#define CLUSTER_POD_PART_OF "joulie-sim-workload"
#define CLUSTER_POD_RUN_KEY "sim.joulie.io/run"
#define CLUSTER_POD_INDICES_KEY "sim.joulie.io/job-indices"
#define CLUSTER_POD_COMPLETION_INDEX_KEY "batch.kubernetes.io/job-completion-index"
#define CLUSTER_POD_COMPLETE_KEY "sim.joulie.io/complete"

/* The Job's name: "sim-" + the job id made a DNS label (lowercase, [a-z0-9-], at most 36
 * characters) + "-" + 8 hex digits of a hash of the run id and job id, so that two runs, or two
 * job ids that read alike once made lowercase, never share a Job, and the name is at most 49
 * characters (the Job controller puts it in a label, at most 63). */
void cluster_job_name(const char *run_id, const char *job_id, char *buf, size_t cap);
/* Whether trace jobs a and b make one group, one Job: the same workload (not ""), submit time,
 * namespace, class and requests (a Job has one pod template). */
bool cluster_job_same_group(const struct trace_job *a, const struct trace_job *b);
/* The Indexed Job of the n jobs of a group (members, their indices in the run's trace: index)
 * of run run_id, on the spec's cluster (label sim.joulie.io/cluster of its Nodes): completions
 * and parallelism n, pod k is members[k]. Named after members[0]. Caller deletes. */
struct cJSON *cluster_job_json(const char *run_id, const int *index, const struct trace_job *const *members, int n,
                               const char *cluster);

#endif
