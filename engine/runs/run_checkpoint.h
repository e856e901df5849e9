/* run_checkpoint: a run's state as the JSON of <run dir>/state.json, so that an engine restart
 * resumes the run where it was: the jobs (state, node, CPUs, GPUs, work left, times, energy),
 * each node's counter readings and energy split so far, the run's clock and totals. runs.c adds
 * its outputs' lengths and writes it (run_files.h: replaced whole) as soon as the run is
 * submitted, when the engine stops, every RUN_CHECKPOINT_TICKS ticks but no more often than
 * every RUN_CHECKPOINT_MIN_WALL_S of wall time (SIM_RUN_CHECKPOINT_INTERVAL; at --speed max 300
 * ticks pass in a fraction of a second), and before a status shows a job ended that the last
 * checkpoint does not have; the run's trace.jsonl is the other half.
 * Never: decide when to write, files, touch the engine. */
#ifndef HWEMU_RUN_CHECKPOINT_H
#define HWEMU_RUN_CHECKPOINT_H
#include <stdbool.h>
#include <stddef.h>

#define RUN_CHECKPOINT_TICKS 300
#define RUN_CHECKPOINT_MIN_WALL_S 30

struct run;

struct cJSON;

/* r's state (caller deletes). */
struct cJSON *run_checkpoint_json(const struct run *r);
/* Applies state o (read from path, named in messages) to r, a run just created from the same
 * trace on the same cluster: 0, or -1 with a message in err (r is then unusable). crash: the
 * engine that wrote it died after it (not a suspension): the counters' increase between it and
 * the restart is energy of work the run redoes, owned by no job (run.h resume_gap_uj). */
int run_checkpoint_apply(struct run *r, const struct cJSON *o, const char *path, bool crash, char *err,
                         size_t errlen);

#endif
