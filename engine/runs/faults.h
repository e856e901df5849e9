/* faults: the engine's fault schedule (docs/faults.md): the faults of the spec, of the active
 * run's trace and of the requests, each pending, active or ended; at each tick the ones whose
 * time came start (their nodes picked: names, pools, labels, a seeded fraction) and the ones
 * whose time is up, or that were cleared, end; every node's struck state (node.h node_faults)
 * is rebuilt from the active ones and the nodes whose state changed are woken. Each start and
 * end is a joulie.sim.fault.started|ended event per node struck, with the jobs of the active
 * run it touched, and a line of the run's faults.jsonl (atSec from the run's start: the same
 * spec, trace and faults at --speed max give the same lines).
 * Called by runs.c only, with its lock held (on the tick thread, or a caller's). Never: HTTP,
 * what a fault does to a node (engine/runtime applies node_faults). */
#ifndef HWEMU_FAULTS_H
#define HWEMU_FAULTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct engine;
struct fault_def;
struct run;
struct run_output;

struct faults;

/* What the schedule needs of its owner (runs.c): whether node i has label key=value now (the
 * spec's and the run-time ones), and an event to emit (the event log, and the run's tap). */
struct faults_host {
    void *ctx;
    bool (*has_label)(void *ctx, int node, const char *key, const char *value);
    void (*emit)(void *ctx, const char *node, const char *name, struct cJSON *attrs);
};

struct faults *faults_new(struct engine *e, const struct faults_host *host);
void faults_free(struct faults *fs);

enum fault_source { FS_SPEC = 0, FS_TRACE, FS_REQUEST };
/* Schedules a copy of f. source FS_TRACE: its atSec counts from the start of run run_id, and it
 * ends with that run. id: f's own, else "<source>-<n>"; written to id_out. 0; EEXIST an id
 * already scheduled; ENOMEM. */
int faults_add(struct faults *fs, const struct fault_def *f, int source, const char *run_id, char *id_out,
               size_t idlen);
/* Ends fault id at the next tick (a reset: a fault without durationSec lasts until this): 0;
 * ENOENT no such fault; EALREADY it has ended. */
int faults_clear(struct faults *fs, const char *id);
/* One tick: r the active run (NULL: none) and its outputs. On the tick thread, before the nodes
 * step (the runs' before hook, after run_before). */
void faults_tick(struct faults *fs, struct run *r, struct run_output *out);
/* Every fault (GET /faults), or one (NULL: none). */
struct cJSON *faults_list_json(struct faults *fs);
struct cJSON *faults_get_json(struct faults *fs, const char *id);

#endif
