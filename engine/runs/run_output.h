/* run_output: what a run leaves in SIM_RUNS_DIR/<runId>/: trace.jsonl (the input as given),
 * jobs.jsonl (one line per job when it ends: completed or stalled, and at the run's end the
 * rest), summary.json (at the end; docs/runs.md "Outputs" lists the fields).
 * Never: run state changes. Write errors are reported once to stderr and the run goes on. */
#ifndef HWEMU_RUN_OUTPUT_H
#define HWEMU_RUN_OUTPUT_H
#include <stddef.h>
#include <stdio.h>

struct cJSON;
struct engine;
struct run;
struct run_job;

struct run_output {
    char *dir;
    FILE *jobs;
    int errors;
};

/* Creates dir and writes trace.jsonl with the trace source's permission bits mode (0644 at most;
 * a 0600 trace gives a 0600 copy), the directory closed to the classes that cannot read the
 * source (0700 for a 0600 trace). 0, or -1 with a message in err. */
int run_output_open(struct run_output *o, const char *dir, const char *trace, size_t len, unsigned mode, char *err,
                    size_t errlen);
void run_output_job(struct run_output *o, const struct engine *e, const struct run *r, const struct run_job *j);
/* The run's status object (GET /runs/<id>, summary.json's base). */
struct cJSON *run_status_json(const struct engine *e, const struct run *r);
/* Continues a resumed run's outputs in dir (jobs.jsonl appended). 0, or -1 with a message. */
int run_output_reopen(struct run_output *o, const char *dir, char *err, size_t errlen);
/* Closes without a summary: the run is suspended (checkpointed) and resumes later. */
void run_output_suspend(struct run_output *o);
/* Writes the jobs not yet written, summary.json, closes. */
void run_output_close(struct run_output *o, const struct engine *e, const struct run *r);

#endif
