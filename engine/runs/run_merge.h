/* run_merge: the run directories of every shard of one sharded run (docs/kubernetes.md
 * "Sharding") made one run directory, as one engine would have written it (docs/runs.md
 * "Merging the shards' outputs"):
 *   trace.jsonl         the trace (byte for byte the same on every shard, else refused)
 *   jobs.jsonl          one line a job, in the trace's submit order: the line of the shard that
 *                       completed it (exactly one shard; two is refused), or, for a job stalled
 *                       on every shard (judged against the whole spec, the same everywhere), the
 *                       first shard's; a job completed on none and not stalled everywhere is
 *                       refused (the run did not end whole)
 *   summary.json        the cluster's: nodes the disjoint union in the spec's order, energies,
 *                       facility, placement attempts and mean power summed over the shards,
 *                       times and makespan the longest, job counts from the merged lines, and
 *                       "shards": each shard's run id, state, time and jobs completed
 *   otlp/logs.jsonl     every shard's job events in time order, the stalled events once
 *   otlp/metrics.jsonl  every shard's metrics lines, shard after shard (each names its shard's
 *                       run id: hwemu.run.id)
 *   course.jsonl        when every shard has one: the shards' lines on their shared times,
 *                       summed, jobs by state from the merged jobs.jsonl (run_merge_course.h)
 * Refused, with which directories and why: run directories of different run keys or traces,
 * of unsharded or standalone-placed runs, of runs that did not end (no summary.json, or a state
 * other than completed or stalled), a shard given twice or missing, a node in two shards.
 * Never: change the input directories, write into an existing directory. */
#ifndef HWEMU_RUN_MERGE_H
#define HWEMU_RUN_MERGE_H
#include <stddef.h>

/* One shard's run directory read into memory (NULL text: the file is absent). */
struct run_merge_in {
    const char *dir;                 /* as messages name it */
    const char *trace, *jobs, *summary, *logs, *metrics, *course;
    size_t trace_len, jobs_len, summary_len, logs_len, metrics_len, course_len;
};

/* The merged run: the files' texts (logs and metrics NULL when no shard had them, course when
 * one had none) and figures for the command's line. */
struct run_merge_out {
    char *trace, *jobs, *summary, *logs, *metrics, *course;
    size_t trace_len;
    char key[64];
    int shards, jobs_total, completed, stalled, nodes;
    int *completed_on;               /* per shard index: jobs it completed */
    double energy_j;                 /* the nodes' energy, summed */
};

/* Merges the n shards' run directories (in any order): 0, or -1 with the reason in err (what is
 * wrong, which directories, what to do). */
int run_merge(const struct run_merge_in *in, int n, struct run_merge_out *out, char *err, size_t errlen);
void run_merge_free(struct run_merge_out *out);
/* Reads the run directories dirs[0..n), merges them and writes the merged run into out_dir (made
 * here; an existing path is refused): 0, or -1 with the reason in err. The figures in *out. */
int run_merge_dirs(const char *const *dirs, int n, const char *out_dir, struct run_merge_out *out, char *err,
                   size_t errlen);

#endif
