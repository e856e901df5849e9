/* runs: the engine's workload runs, one at a time: submission (a trace's text or path), the
 * engine hooks that drive the active run, its outputs, stop, status, and the run metrics and
 * events (docs/runs.md). Thread-safe: HTTP threads call in while the tick thread runs; the lock
 * is held from each tick's start to its end, so a status read sees a whole tick.
 * Never: HTTP (engine/telemetry/http_runs.c), the tick loop itself. */
#ifndef HWEMU_RUNS_H
#define HWEMU_RUNS_H
#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct diag;
struct engine;
struct runs;

/* Installs the engine hooks. runs_dir NULL: <root>/runs. base_speed: SIM_BASE_SPEED_PER_CORE. */
struct runs *runs_attach(struct engine *e, const char *runs_dir, double base_speed);
/* Ends an active run as stopped (outputs written), removes the hooks. Call with no tick running. */
void runs_detach(struct runs *m);
/* A new run of the trace text (label names it in messages and the status). 0 with its id;
 * EBUSY while another is active (id: that one); EINVAL with the problems in d; EIO when the
 * output directory cannot be written (message in d). It starts at the next tick. */
int runs_submit(struct runs *m, const char *label, const char *text, size_t len, char *id, size_t idlen,
                struct diag *d);
/* The same from a file or directory of *.jsonl. */
int runs_submit_path(struct runs *m, const char *path, char *id, size_t idlen, struct diag *d);
/* Stops the run at the next tick: 0; ENOENT no such run; EALREADY it has ended. */
int runs_stop(struct runs *m, const char *id);
/* Status objects (caller deletes): every run, and one (NULL: no such run). */
struct cJSON *runs_list_json(struct runs *m);
struct cJSON *runs_get_json(struct runs *m, const char *id);
/* The active (or submitted, or resumed) run's id into id: false when there is none. */
bool runs_active_id(struct runs *m, char *id, size_t idlen);
/* True while a run is submitted or active. */
bool runs_busy(struct runs *m);
/* The state of the run (its enum run_state name), or NULL. */
const char *runs_state(struct runs *m, const char *id);
/* Prometheus text of the run metrics (malloc'd). */
char *runs_metrics_text(struct runs *m);

#endif
