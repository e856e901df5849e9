/* run_output: what a run leaves in SIM_RUNS_DIR/<runId>/: trace.jsonl (the input as given),
 * jobs.jsonl (one line per job when it ends: completed or stalled, and at the run's end the
 * rest), summary.json (at the end; docs/runs.md "Outputs" lists the fields), faults.jsonl (a
 * line per start and end of a fault while the run went, when one did). Files are made and
 * written by run_files.h (no symbolic link followed, whole lines, summary.json replaced whole).
 * Never: run state changes, reporting write errors (runs.c reads jobs.err and says so). */
#ifndef HWEMU_RUN_OUTPUT_H
#define HWEMU_RUN_OUTPUT_H
#include "run_files.h"

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

struct cJSON;
struct engine;
struct run;
struct run_job;

struct run_output {
    char *dir;               /* the run's directory as messages name it; NULL: closed */
    int dfd;                 /* the run's directory, held open */
    struct line_file jobs;
    struct line_file faults; /* faults.jsonl, made at the first fault line */
    bool faults_made;
    struct cJSON *resumes;   /* [{"at", "fromSec", "after"}]: each resume of the run */
    int64_t course_interval_ns; /* course.jsonl's interval at the end, summary.json's courseIntervalSec (0: none) */
};

/* Makes the run's directory name in runs_dfd (exclusive) and writes trace.jsonl and an empty
 * jobs.jsonl. trace.jsonl keeps the trace source's permission bits mode (0644 at most; a 0600
 * trace gives a 0600 copy), and the directory is closed to the classes that cannot read the
 * source (0700 for a 0600 trace). 0; -1 with errno EEXIST when name is taken (nothing made); -1
 * with a message in err (nothing left behind). */
int run_output_open(struct run_output *o, int runs_dfd, const char *runs_dir, const char *name, const char *trace,
                    size_t len, unsigned mode, char *err, size_t errlen);
/* Continues a resumed run's outputs: jobs.jsonl cut back to jobs_len (the checkpoint's), the
 * lines that were waiting then queued again. 0, or -1 with a message. */
int run_output_reopen(struct run_output *o, int runs_dfd, const char *runs_dir, const char *name, off_t jobs_len,
                      const struct cJSON *waiting, char *err, size_t errlen);
/* A line of faults.jsonl (engine/runs/faults.c), made at the first one, so a run no fault
 * touched has none; a resumed run appends to it. */
void run_output_fault(struct run_output *o, const char *line);
void run_output_job(struct run_output *o, const struct engine *e, const struct run *r, const struct run_job *j);
/* The run's status object (GET /runs/<id>, summary.json's base). */
struct cJSON *run_status_json(const struct engine *e, const struct run *r);
/* Closes without a summary: the run is suspended (checkpointed) and resumes later. */
void run_output_suspend(struct run_output *o);
/* Writes the jobs not yet written, summary.json (replaced whole), closes. 0; -1 when summary.json
 * could not be written, 1 when it was but lines of jobs.jsonl were lost (it says how many); the
 * reason in err. */
int run_output_close(struct run_output *o, const struct engine *e, const struct run *r, char *err, size_t errlen);

#endif
