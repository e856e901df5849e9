/* cli_run_show: what `hwemu run` shows a person: the progress line on a terminal (emulated time,
 * jobs by state, energy so far, time left) and the readable summary at the end. cli_run.c
 * prints the JSON (--json) itself. */
#ifndef HWEMU_CLI_RUN_SHOW_H
#define HWEMU_CLI_RUN_SHOW_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct cJSON;
struct runs;

struct run_show {
    bool on;            /* stderr is a terminal */
    bool shown;         /* a line is on it, to be erased */
    int64_t t0, last;   /* CLOCK_MONOTONIC of the start and of the last line */
};

/* Starts the progress: shown only when stderr is a terminal. */
void run_show_start(struct run_show *s);
/* After a tick: the line rewritten in place, at most every 100 ms of wall time. */
void run_show_tick(struct run_show *s, struct runs *m);
/* Erases the line (the summary says the rest). */
void run_show_end(struct run_show *s);
/* The readable summary of run id on out: its summary.json in runs_dir/<id> when there is
 * one (a run that ended), else status (its status object: a suspended run). */
void run_show_summary(FILE *out, const char *runs_dir, const char *id, const struct cJSON *status);

#endif
