/* runs: the engine's workload runs, one at a time: submission (a trace's text or path), the
 * engine hooks that drive the active run, its outputs, stop, status, and the run metrics and
 * events (docs/runs.md). Thread-safe: HTTP threads call in while the tick thread runs; the lock
 * is held from each tick's start to its end, so a status read sees a whole tick.
 * Never: HTTP (engine/telemetry/http_runs.c), the tick loop itself. */
#ifndef HWEMU_RUNS_H
#define HWEMU_RUNS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cJSON;
struct diag;
struct engine;
struct runs;

/* What a run's job metrics are now (for the run's OTLP files, engine/telemetry/run_otlp.c). */
struct runs_metrics {
    const char *run_id, *run_dir;
    int run_dfd;                           /* the run's directory, open: files are opened relative to it */
    int64_t wall_ns, start_wall_ns;
    const unsigned long long *submitted;   /* [class] */
    int nnodes;
    const char *const *node_names;
    const unsigned long long *completed;   /* [node * 2 + class] */
    const unsigned long long *running;     /* [node] */
    const double *le;                      /* bucket bounds, nle of them, then +Inf */
    const unsigned long long *buckets;     /* nle + 1 counts (not cumulative) */
    int nle;
    double sum;
    unsigned long long count;
    bool final;                            /* the run ended or was suspended: the last call for it */
};
/* A layer above may watch the runs: every job event (as it goes to the event log; attrs valid
 * during the call) and the run's metrics every RUNS_METRICS_TICKS ticks and at its end. Files it
 * writes in the run's directory take part in the run's checkpoints: at each, checkpoint writes
 * what it holds and adds each file's length to outputs ({"otlp/logs.jsonl": "<bytes>"}); when a
 * run resumes, resume cuts them back to those lengths (outputs NULL: a state.json without
 * lengths, leave them), so a resumed run's files hold each line once. Called on the tick thread,
 * or with the runs' lock held. */
#define RUNS_METRICS_TICKS 60
struct runs_tap {
    void *ctx;
    void (*event)(void *ctx, const char *run_dir, int run_dfd, int64_t wall_ns, const char *node, const char *name,
                  const struct cJSON *attrs);
    void (*metrics)(void *ctx, const struct runs_metrics *m);
    void (*checkpoint)(void *ctx, const char *run_dir, int run_dfd, struct cJSON *outputs);
    int (*resume)(void *ctx, const char *run_dir, int run_dfd, const struct cJSON *outputs, char *err, size_t errlen);
};
void runs_set_tap(struct runs *m, const struct runs_tap *tap);

/* Placement from now on: a placer (run_placer.h; set by engine/cluster with a cluster
 * configured) or NULL for the standalone policy. A run submitted or resumed but not yet ticked
 * takes it too; a run already going keeps its own. Call before engine_run, or with no run. */
struct run_placer;
void runs_set_placer(struct runs *m, const struct run_placer *placer);

/* Installs the engine hooks and resumes the runs directory's suspended run (the latest). runs_dir
 * NULL: <root>/runs; it is held to the root's rules (run_files.h). base_speed:
 * SIM_BASE_SPEED_PER_CORE. checkpoint_ns: the least wall time between periodic checkpoints
 * (SIM_RUN_CHECKPOINT_INTERVAL; 0: RUN_CHECKPOINT_MIN_WALL_S). NULL with the reason in err. */
struct runs *runs_attach(struct engine *e, const char *runs_dir, double base_speed, int64_t checkpoint_ns, char *err,
                         size_t errlen);
/* Suspends an active run (checkpoint; it resumes at the next start) or, when its state cannot be
 * written, ends it as stopped; removes the hooks. Call with no tick running. True when a run was
 * suspended. */
bool runs_detach(struct runs *m);
/* A new run of the trace text (label names it in messages and the status). mode: the source's
 * permission bits, which the run's copy of the trace keeps (run_output.h); quiet: messages never
 * show the trace's values (trace_parse_quiet). key: the run key that names its Jobs (run.h;
 * docs/kubernetes.md "Sharding"), checked by runs_key_check; NULL: on a sharded engine a hash
 * of the trace, the spec's name and the work rate, else none (the run id names them). 0 with
 * its id; EBUSY while another is active (id: that one); EINVAL with the problems in d (a bad
 * key too); EIO when the output directory cannot be written (message in d). It starts at the
 * next tick. */
int runs_submit(struct runs *m, const char *label, const char *text, size_t len, unsigned mode, bool quiet,
                const char *key, char *id, size_t idlen, struct diag *d);
/* The same from a file or directory of *.jsonl (its mode kept, messages with values). */
int runs_submit_path(struct runs *m, const char *path, const char *key, char *id, size_t idlen, struct diag *d);
/* Whether key can be a run key (a Kubernetes label value, not empty): 0, or EINVAL with a message. */
int runs_key_check(const char *key, char *err, size_t errlen);
/* Stops the run at the next tick: 0; ENOENT no such run; EALREADY it has ended. */
int runs_stop(struct runs *m, const char *id);
/* Status objects (caller deletes): every run, and one (NULL: no such run). A run directory the
 * engine found at its start with no usable state is listed as failed, with the reason. Before a
 * status shows a job ended that the last checkpoint does not hold, a checkpoint is written, so
 * the counts of completed and stalled jobs a reader saw never go back after a crash. */
struct cJSON *runs_list_json(struct runs *m);
struct cJSON *runs_get_json(struct runs *m, const char *id);
/* The active (or submitted, or resumed) run's id into id: false when there is none. */
bool runs_active_id(struct runs *m, char *id, size_t idlen);
/* True while a run is submitted or active. */
bool runs_busy(struct runs *m);
/* Where the active run is (for a progress line): false when there is none. Reads nothing from
 * disk and writes no checkpoint (unlike runs_get_json). */
struct runs_progress {
    double time_s;                 /* emulated time since the run's start */
    int total, waiting, running, completed, stalled; /* waiting: pending or queued; completed: or elsewhere */
    double energy_j;               /* the nodes' energy so far */
};
bool runs_progress(struct runs *m, struct runs_progress *p);
/* The emulated time between the lines of a run's course.jsonl (SIM_RUN_COURSE_INTERVAL; 0: 60 s),
 * for the active run too (run_course.h). */
void runs_set_course_interval(struct runs *m, int64_t interval_ns);
/* The runs directory (SIM_RUNS_DIR or <root>/runs): a run's outputs are in <it>/<runId>/. */
const char *runs_path(const struct runs *m);
/* A file of run id's directory (course.jsonl, jobs.jsonl: what GET /runs/<runId>/course and
 * /jobs page through), whole, NUL-terminated, malloc'd, at most max bytes, opened as run_files.h
 * opens a run's files (never through a symbolic link); NULL with errno: ESRCH no such run (of
 * this engine), else run_files_read's. Read while the run writes it: the last line may be half
 * written (take whole lines only). */
char *runs_file_read(struct runs *m, const char *id, const char *name, size_t max, size_t *len);
/* The state of the run (its enum run_state name), or NULL. */
const char *runs_state(struct runs *m, const char *id);
/* Sets a node's labels at run time (PUT /nodes/<node>/labels), all or none: an edit's value
 * NULL removes the key (a spec label included). Only joulie.io/power-profile (eco or not)
 * changes placement, from the next tick on. 0; ENOENT no such node; EINVAL a key or value that
 * is not a Kubernetes label; E2BIG more than RUN_LABELS_MAX labels in the request or on the node
 * (run_labels.h). Messages in err. Linear in the node's labels and the request. */
struct run_label_edit;
int runs_set_labels(struct runs *m, const char *node, const struct run_label_edit *edits, int n, char *err,
                    size_t errlen);
/* Whether key and value (NULL: removal) make a Kubernetes label: 0, or EINVAL with a message. */
int runs_label_check(const char *key, const char *value, char *err, size_t errlen);
/* The node's labels now (the spec's, with the run-time ones over them), or NULL: no such node. */
struct cJSON *runs_node_labels_json(struct runs *m, const char *node);
/* The fault schedule (faults.h, docs/faults.md). runs_fault_add schedules a request's fault
 * (its atSec from the engine's first tick; none: the next tick): 0 with its id; EEXIST an id
 * already scheduled, EINVAL a node or pool the engine does not have (the message in err). runs_fault_clear ends one at the next tick: 0, ENOENT, EALREADY ended.
 * runs_faults_json: every fault (id NULL) or one (NULL: no such fault); caller deletes. */
struct fault_def;
int runs_fault_add(struct runs *m, const struct fault_def *f, char *id, size_t idlen, char *err, size_t errlen);
int runs_fault_clear(struct runs *m, const char *id);
struct cJSON *runs_faults_json(struct runs *m, const char *id);
/* Prometheus text of the run metrics (malloc'd). */
char *runs_metrics_text(struct runs *m);

#endif
