/* spec: the cluster spec (apiVersion sim.joulie.io/v1alpha1, kind ClusterSpec).
 * Owns: parsing and validating a spec against the loaded profiles, and expanding its pools
 * into nodes. A spec is rejected whole: every problem is listed with file:line:col, the pool
 * and what was expected; nothing is half-loaded.
 *
 *   metadata.name                      the cluster, label sim.joulie.io/cluster
 *   spec.defaults  kwok (default true), labels, baseLoad
 *   spec.facility  ambientC (20), amplitudeC (0), periodH (24), coolingZones [{name, offsetC}]
 *   spec.jobCgroups manager (slurm | kubernetes | none; slurm), maxJobsPerNode (32, 1..512): the
 *                  cgroup v2 tree a node shows for the jobs of a workload run (render_cgroup.c)
 *   spec.pools[]   name, profile, count, prefix (= name), startIndex (0), rack, coolingZone,
 *                  labels, baseLoad (overrides the defaults field by field), overrides
 *   spec.sensors   noise (true): sensors measure with the noise real ones have (false: exact,
 *                  for tests that compare a reading with the truth; docs/faults.md "Sensors")
 *   spec.faults[]  the fault schedule the engine starts with (fault.h, docs/faults.md); its nodes
 *                  and pools must be the spec's
 * Pool p yields nodes <prefix>-<startIndex> ... <prefix>-<startIndex+count-1>. */
#ifndef HWEMU_SPEC_H
#define HWEMU_SPEC_H
#include "arena.h"

#include <stdbool.h>

struct diag;
struct fault_def;
struct profile;
struct profile_set;
struct yt_node;

#define SPEC_MAX_XFER 32
/* A steady peer transfer between two GPUs of a node (baseLoad.gpuPeerTransfers). */
struct gpu_transfer {
    int from, to;     /* GPU indices */
    double gbps;      /* GB/s asked for */
};

struct base_load {
    double cpu_util, gpu_util, memory_intensity; /* 0..1 */
    const char *cpu_class, *gpu_class;
    struct gpu_transfer xfer[SPEC_MAX_XFER];
    int nxfer;
};

struct cooling_zone {
    const char *name;
    double offset_c;
};

struct facility {
    double ambient_c, amplitude_c, period_h;
    struct cooling_zone *zones;
    int nzones;
};

struct spec_pool {
    const char *name, *prefix, *rack, *cooling_zone;
    long long count, start_index;
    const struct profile *profile;
    const struct yt_node *tree;    /* the profile's facts with this pool's overrides */
    const struct yt_node *labels;  /* the pool's own labels (mapping) or NULL */
    struct base_load base;
};

/* The jobs' cgroup tree (docs/interfaces.md "Job cgroups"). */
enum cgroup_manager { CG_SLURM = 0, CG_KUBERNETES, CG_NONE };
#define CG_MAX_JOBS_DEFAULT 32
#define CG_MAX_JOBS_LIMIT 512
struct job_cgroups {
    int manager;   /* enum cgroup_manager */
    int max_jobs;  /* job slots per node: min(this, the node's logical CPUs) */
};
extern const char *const cgroup_manager_names[3];

struct spec_node {
    const char *name;
    int pool;                      /* index into pools */
};

struct cluster_spec {
    struct arena arena;
    const char *file, *name;
    bool kwok;
    const struct yt_node *default_labels;
    struct base_load base;
    struct facility facility;
    struct job_cgroups cgroups;
    struct spec_pool *pools;
    int npools;
    struct spec_node *nodes;
    int nnodes;
    bool sensor_noise;             /* spec.sensors.noise (default true): measurements with noise */
    struct fault_def *faults;      /* spec.faults, in the spec's order */
    int nfaults;
};

/* 0 on success; -1 with every problem in d. `file` names the spec in messages. */
int spec_load(struct cluster_spec *s, const char *file, const char *text, size_t len,
              struct profile_set *profiles, struct diag *d);
void spec_free(struct cluster_spec *s);
const struct spec_node *spec_find_node(const struct cluster_spec *s, const char *name);
/* Keeps only shard index of count (docs/kubernetes.md "Sharding"): the k-th node of the spec, in
 * its order, belongs to shard k mod count. Pools stay (one may have no node here). The number
 * of nodes the whole spec had is returned. */
int spec_keep_shard(struct cluster_spec *s, int index, int count);

#endif
