/* tracegen: synthetic Joulie traces, after the original's generator (github.com/joulie-k8s/Joulie
 * simulator/cmd/workloadgen): its default mode (workload families, hourly arrival shape,
 * bursts and dips, gangs) and its diurnal mode (a day-shaped rate with bursts, CPU and GPU
 * categories), with its flags and defaults. The same options and seed give the same bytes.
 * The shapes the original's documentation does not pin down are ours and named in docs/runs.md.
 * Never: files (the caller gives the stream), clocks (the seed comes in). */
#ifndef HWEMU_TRACEGEN_H
#define HWEMU_TRACEGEN_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct tracegen_opts {
    int jobs;                      /* default mode: logical workloads (50) */
    const char *ns;                /* "default" */
    double mean_inter_arrival_sec; /* 5 */
    uint64_t seed;
    double perf_ratio;             /* 0.30 */
    double compute_bound_perf_boost; /* 3.5 */
    bool no_affinity_only;         /* false: no job gets a performance affinity */
    double gpu_ratio;              /* 0.80 */
    int gpu_request;               /* 1: GPUs per GPU pod at least */
    double cpu_work_rate_per_core, gpu_work_rate_per_gpu; /* 1, 1 */
    bool emit_workload_records;    /* true */
    double burst_day_probability;  /* 0.25 */
    double burst_mean_jobs;        /* 8 */
    double burst_multiplier;       /* 2 */
    double dip_day_probability;    /* 0.30 */
    double dip_multiplier;         /* 0.08 */
    double time_scale;             /* 1: offsets and durations divided by it */
    bool diurnal;                  /* mode diurnal */
    double sim_hours;              /* 48 */
    double work_scale;             /* 1 */
    double base_speed_per_core;    /* 2 */
    int diurnal_burst_min, diurnal_burst_max; /* 20, 80 */
    double diurnal_peak_rate;      /* 80 jobs per minute */
    int min_gpu_request;           /* 0 */
    double amd_gpu_ratio;          /* 0 */
};

void tracegen_defaults(struct tracegen_opts *o);
/* Writes the trace; returns the number of job records, -1 on a write error. */
long tracegen_write(const struct tracegen_opts *o, FILE *out);

#endif
