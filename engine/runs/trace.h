/* trace: a Joulie workload trace (JSON Lines) read into jobs, with every field's default.
 *
 * Owns: the record format (schema v1 and v2, `type: job`, `type: workload` and `type: fault`
 * records (a fault as engine/model/fault.h reads it, its atSec from the run's start); the
 * fields, their types and defaults are documented in docs/runs.md "Trace format"), its
 * validation with file:line messages naming the field and what was expected, and the order
 * jobs are submitted in (stable by submitTimeOffsetSec).
 * Never: placement, time, physics or I/O other than reading the trace itself. A trace with any
 * error yields no jobs at all (nothing is half-started). */
#ifndef HWEMU_TRACE_H
#define HWEMU_TRACE_H
#include "arena.h"

#include <stdbool.h>
#include <stddef.h>

struct diag;
struct fault_def;

enum job_class { JOB_STANDARD = 0, JOB_PERFORMANCE = 1, JOB_NCLASSES = 2 };
/* What a GPU request asks for; the key names the vendor (nvidia.com/gpu, amd.com/gpu,
 * gpu.intel.com/i915 or gpu.intel.com/xe; the bare key gpu means nvidia.com/gpu). */
enum gpu_req { GPU_REQ_NONE = 0, GPU_REQ_NVIDIA, GPU_REQ_AMD, GPU_REQ_INTEL };

struct trace_job {
    const char *id, *workload_id, *workload_type, *pod_role, *ns;
    int line;              /* where it was read */
    int seq;               /* position in the file (ties of submit time keep it) */
    bool gang;
    double submit_s;       /* submitTimeOffsetSec, >= 0 */
    int cls;               /* enum job_class */
    double cpu_req;        /* requests.cpu in cores (Kubernetes quantity), default 1 */
    int cpus;              /* logical CPUs held: ceil(cpu_req), at least 1 */
    double mem_mib;        /* requests.memory, default 64 */
    int gpus, gpu_vendor;  /* count and enum gpu_req */
    double cpu_units, gpu_units;
    double sens_cpu, sens_gpu;   /* 0..1, default 1 */
    int cpu_class;         /* enum phys_cpu_class (physics_cpu.h) */
    int gpu_class;         /* enum phys_gpu_class (physics_gpu.h) */
    const char *cpu_class_name, *gpu_class_name;
    double u_cpu, u_gpu, mem_int, io_int, feed; /* workloadProfile, defaults by class */
};

struct trace_workload {
    const char *id;
    int line;
    bool gang;
    int pods; /* Σ pods[].replicas */
};

struct trace {
    struct arena arena;    /* every string and array */
    const char *path;
    struct trace_job *jobs; /* in submit order */
    int njobs;
    struct trace_workload *workloads;
    int nworkloads;
    struct fault_def *faults; /* type: fault records, in the file's order */
    int nfaults;
    int ignored;           /* records of other types */
    unsigned mode;         /* permission bits of the file(s) read (several: ANDed); 0644 for text */
};

/* Parses text (the whole JSONL; file names the messages). 0, or -1 with every problem in d and
 * t empty. */
int trace_parse(struct trace *t, const char *file, const char *text, size_t len, struct diag *d);
/* The same, with messages that never show a value of the trace (file:line: field: what only):
 * for a trace whose reader of the messages may not read the file (POST /runs tracePath). */
int trace_parse_quiet(struct trace *t, const char *file, const char *text, size_t len, struct diag *d);
/* Reads a file, or every *.jsonl of a directory in name order, and parses it. On success the
 * raw bytes are returned in *raw (malloc'd; NULL raw: not wanted). */
int trace_load(struct trace *t, const char *path, char **raw, size_t *rawlen, struct diag *d);
void trace_free(struct trace *t);
/* The workload record of id, or NULL. */
const struct trace_workload *trace_workload_find(const struct trace *t, const char *id);
/* Kubernetes quantities: "1", "500m", "1.5" cores; "64Mi", "4Gi", "1G", "1048576" bytes as MiB.
 * false when text is not one. */
bool trace_cpu_quantity(const char *text, double *cores);
bool trace_mem_quantity(const char *text, double *mib);

#endif
