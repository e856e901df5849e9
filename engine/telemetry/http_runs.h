/* http_runs: the run API (docs/runs.md "Run API"), routed from http.c:
 *   POST /runs                 body: the trace JSONL, or {"tracePath": "..."}  -> 201 {"runId"}
 *                              400 with the first 100 problems of an invalid trace; 409 while a run
 *                              is active; tracePath only inside --trace-dir (403 otherwise, 404
 *                              missing, 400 not a regular file, 413 over TRACE_FILE_MAX)
 *   GET  /runs                 every run's status
 *   GET  /runs/<runId>         state running|completed|stalled|stopped, time, jobs by state,
 *                              energy by class so far
 *   POST /runs/<runId>/stop    stops it at the next tick (200 with its status)
 *   GET  /runs/<runId>/course  course.jsonl's and jobs.jsonl's whole lines from ?after=N (at most
 *   GET  /runs/<runId>/jobs    ?limit=, 10,000): {"runId","state","after","next","total","lines"}
 *   GET  /runs/<runId>/report  the HTML `hwemu report` writes of the run's directory (report.c),
 *                              made on request; 409 until the run has ended
 *   POST /faults               body: one fault (docs/faults.md)            -> 201 with its status
 *                              400 with the problems (file "request", line:col), 409 id taken
 *   GET  /faults[/<id>]        every fault (pending, active, ended) or one
 *   DELETE /faults/<id>        clears it at the next tick (a reset): 200, 404, 409 already ended
 * Never: run state itself (engine/runs/runs.h owns it). */
#ifndef HWEMU_HTTP_RUNS_H
#define HWEMU_HTTP_RUNS_H
#include "http_stats.h"

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

struct runs;

/* The engine's runs (NULL: the routes answer 503). Set before the server starts. */
void http_runs_set(struct runs *m);
/* The directory POST /runs {"tracePath"} may read from (--trace-dir, SIM_TRACE_DIR; NULL or
 * "": tracePath answers 403 saying how to allow it). Set before the server starts. */
void http_runs_set_trace_dir(const char *dir);
/* The run API's routes as the 404 lists them ("POST /runs", ...; NULL-terminated): what
 * http_runs_route takes and http_runs_handle answers. */
extern const char *const http_runs_routes[];
/* Whether url is a run route. */
bool http_runs_route(const char *url);
/* Its route label (http_stats.h): runs, labels or faults; other for a path it does not take. */
enum http_route_id http_runs_label(const char *url);
/* Handles a run route: the MHD access handler's arguments (it keeps its own *state). */
enum MHD_Result http_runs_handle(struct MHD_Connection *c, const char *url, const char *method, const char *upload,
                                 size_t *upload_size, void **state);
/* Frees the state of a run request that ended before its last call (a client that left
 * mid-body): from the server's completion notice. */
void http_runs_abandon(void *state);
/* The run metrics' Prometheus text for /metrics (malloc'd; NULL: none). */
char *http_runs_metrics(void);

#endif
