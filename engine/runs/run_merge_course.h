/* run_merge_course: the shards' course.jsonl made the merged run's (docs/runs.md "Merging the
 * shards' runs"), for run_merge. Each shard's course has a line at each multiple of the interval
 * it reached (the first of its ticks at or after it: the shards' ticks need not meet) and one at
 * its own end; each counts every job of the trace (those of the others as `elsewhere` once placed)
 * and covers only its own nodes. The merged course has a line at each multiple of the interval a
 * shard reached and at each shard's end (with no interval known: at each time a shard's line has),
 * where
 *   - each shard contributes its last line at or before that time, a line before its last counted
 *     at the multiple it was written for (none yet: nothing used);
 *     a shard that has ended contributes its final energies and nothing else (no power, no caps,
 *     no throttling: its nodes' run is over);
 *   - powerWatts, energyJoules (each key) and each pool's figures are the shards' summed (a pool's
 *     energyJoules carried on like the cluster's, its other figures 0 once its shard ended);
 *   - jobs come from the merged jobs.jsonl (each job's line from the shard that ran it): running
 *     the completed jobs with startSec <= t < endSec, completed those with endSec <= t, stalled the
 *     most any shard's line counts (a job stalls on every shard; the merged lines have at most
 *     that many), waiting the rest of the trace's jobs; no `elsewhere`.
 * So the last line's energies and job counts are the merged summary.json's.
 * Never: read or write files (run_merge.c does). */
#ifndef HWEMU_RUN_MERGE_COURSE_H
#define HWEMU_RUN_MERGE_COURSE_H
#include <stddef.h>
#include <stdint.h>

/* texts[i], lens[i]: shard i's course.jsonl (shards in index order; dirs[i] as messages name its
 * directory); interval_ns: the courses' interval (summary.json's courseIntervalSec; 0: unknown,
 * the lines' own times); jobs: the merged jobs.jsonl. The merged course into *out (malloc'd): 0,
 * or -1 with what is wrong (file:line) in err. */
int run_merge_course(const char *const *texts, const size_t *lens, const char *const *dirs, int n,
                     int64_t interval_ns, const char *jobs, char **out, char *err, size_t errlen);

#endif
