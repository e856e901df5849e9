/* otlp: the OTLP/HTTP JSON push of `hwemu serve` (metrics to /v1/metrics, events to /v1/logs).
 * Owns: the exporter configuration read from the standard OTEL_* variables, one background
 * thread that every export interval reads the latest RCU-published telemetry snapshot, turns it
 * into an ExportMetricsServiceRequest, and POSTs it with libcurl; the queue of pending batches
 * (at most OTLP_MAX_PENDING, oldest dropped and counted); retries with exponential backoff and
 * jitter on the retryable answers only (429, 502, 503, 504, no answer), honouring Retry-After.
 * It must never block or slow the tick loop: the tick thread never calls into this module, the
 * exporter reads the snapshot under rcu_read_lock like an HTTP request does and runs at nice 19
 * (a waking tick worker preempts it), and the event sink (called by tick workers) pushes a small
 * record onto a lock-free list, bounded in size, so a worker never waits for the exporter. The
 * request bodies are built in otlp_json.c. */
#ifndef HWEMU_OTLP_H
#define HWEMU_OTLP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct engine;
struct otlp;
struct telemetry;

#define OTLP_MAX_PENDING 16 /* batches per signal kept while the collector does not take them */

/* Reads the OTEL_* variables. Returns NULL with err empty when no endpoint is set (no thread,
 * nothing to do), NULL with a message naming the variable when a value does not parse, or a
 * running exporter reading *snapshot (an RCU pointer) every interval. start_wall_ns is the
 * startTimeUnixNano of every cumulative stream. */
struct otlp *otlp_start(struct telemetry **snapshot, int64_t start_wall_ns, char *err, size_t errlen);
/* Stops the thread (one last attempt at what is pending when the collector was answering) and
 * frees everything. NULL is fine. */
void otlp_stop(struct otlp *o);
/* Whether events are pushed (a logs endpoint is set). */
bool otlp_logs_enabled(const struct otlp *o);
/* Event sink (see events_set_sink): queues one log record. Thread-safe, never blocks on I/O. */
void otlp_event(void *o, int64_t wall_ns, const char *node, const char *name, const struct cJSON *attrs);
/* For a started engine: otlp_start on its snapshot, and its events sent to the exporter when a
 * logs endpoint is set. Same returns as otlp_start. */
struct otlp *otlp_attach(struct engine *e, char *err, size_t errlen);
/* Stops sending the engine's events, then otlp_stop. Call while no tick runs. */
void otlp_detach(struct engine *e, struct otlp *o);
/* Batches dropped (queue full, or a record queue overflow) since the start; 0 for NULL. */
uint64_t otlp_dropped_batches(const struct otlp *o);

/* --- otlp_json.c: the request bodies (internal to otlp.c, and for tests) --- */

struct otlp_kv {
    char *key, *value;
};

struct otlp_resource {
    const char *service_name;
    const struct otlp_kv *extra; /* OTEL_RESOURCE_ATTRIBUTES without service.name */
    int nextra;
};

/* The ExportMetricsServiceRequest for a snapshot: one ResourceMetrics per node that has
 * something a real collector could measure (a powercap zone counting energy, or GPUs), then one
 * for the facility. Caller frees. NULL for a cluster without nodes (an empty envelope is not
 * sent). */
char *otlp_metrics_json(const struct telemetry *t, const struct otlp_resource *r, int64_t start_wall_ns);

/* One pending log record. */
struct otlp_log {
    char *node;
    int64_t wall_ns;
    struct cJSON *record; /* a LogRecord object */
};
/* A LogRecord for an event: body = its name, attributes = its attributes. */
struct cJSON *otlp_log_record(int64_t wall_ns, const char *name, const struct cJSON *attrs);
/* The ExportLogsServiceRequest for n records (grouped into one resource per node). Caller frees. */
char *otlp_logs_json(const struct otlp_log *logs, int n, const struct otlp_resource *r);

/* "k=v,k2=v2" (W3C baggage-like, percent-decoded, blanks trimmed) into *out (appended). Returns
 * -1 on an entry without '='. */
int otlp_parse_kv_list(const char *s, struct otlp_kv **out, int *n);
void otlp_free_kv(struct otlp_kv *kv, int n);

#endif
