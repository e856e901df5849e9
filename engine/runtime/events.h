/* events: the engine's event log (joulie.sim.* events).
 * Owns: events.jsonl (one JSON object per line: time, node, event, attributes) and the recent
 * events /debug/events shows. Thread-safe: tick workers emit concurrently. A write failure is
 * counted and reported once on stderr; events are never silently dropped from the count. */
#ifndef HWEMU_EVENTS_H
#define HWEMU_EVENTS_H
#include <stdint.h>
#include <stdio.h>

struct cJSON;
struct event_log;

/* path NULL: no file, memory only. NULL with a message in err when the file cannot be opened. */
struct event_log *events_open(const char *path, char *err, size_t errlen);
void events_close(struct event_log *l);
/* Takes ownership of attrs (a cJSON object, may be NULL). wall_ns is CLOCK_REALTIME. */
void events_emit(struct event_log *l, int64_t wall_ns, const char *node, const char *name, struct cJSON *attrs);
/* The most recent events (oldest first; node NULL: every node's) as a JSON array text; caller
 * frees. Events are numbered 0, 1, ... in emission order: only those numbered `after` and up are
 * given, at most the newest `limit` of them (0: no limit beyond the RECENT kept). *total, when
 * not NULL, gets the number emitted so far (the `after` that asks for only newer ones). */
char *events_recent_json(struct event_log *l, const char *node, uint64_t after, size_t limit, uint64_t *total);
uint64_t events_total(struct event_log *l);
uint64_t events_write_errors(struct event_log *l);
/* Also hands every event to fn (the OTLP exporter), from the emitting thread, outside the log's
 * lock; attrs is only valid during the call. fn NULL removes it. Set it before events are
 * emitted concurrently, and remove it only when no thread emits. */
typedef void events_sink_fn(void *ctx, int64_t wall_ns, const char *node, const char *name,
                            const struct cJSON *attrs);
void events_set_sink(struct event_log *l, events_sink_fn *fn, void *ctx);

#endif
