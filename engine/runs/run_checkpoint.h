/* run_checkpoint: a run's state in <run dir>/state.json, so that an engine restart resumes the
 * run where it was: the jobs (state, node, CPUs, GPUs, work left, times, energy), each node's
 * counter readings and energy split so far, the run's clock and totals. Written atomically
 * (a temporary file renamed over the old one) when the engine stops and every
 * RUN_CHECKPOINT_TICKS ticks, but no more often than every RUN_CHECKPOINT_MIN_WALL_S of wall time
 * (at --speed max 300 ticks pass in a fraction of a second); the run's trace.jsonl is the other half.
 * Never: decide when to write (runs.c does), touch the engine. */
#ifndef HWEMU_RUN_CHECKPOINT_H
#define HWEMU_RUN_CHECKPOINT_H
#include <stddef.h>

#define RUN_CHECKPOINT_TICKS 300
#define RUN_CHECKPOINT_MIN_WALL_S 30

struct run;

/* 0, or -1 with a message in err. */
int run_checkpoint_write(const struct run *r, const char *dir, char *err, size_t errlen);
/* Applies dir/state.json to r, a run just created from the same trace on the same cluster:
 * 0, or -1 with a message in err (r is then unusable). */
int run_checkpoint_apply(struct run *r, const char *dir, char *err, size_t errlen);

#endif
