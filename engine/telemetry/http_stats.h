/* http_stats: what the HTTP API counts about itself, the seed simulator's request and control
 * metrics (docs/telemetry.md "/metrics"):
 *   joulie_sim_requests_total{route,method,status}      counter
 *   joulie_sim_request_duration_seconds{route,method}    histogram, the Go client's DefBuckets
 *   joulie_sim_controls_total{node,action}               counter
 *   joulie_sim_control_actions_total{node,action,result} counter (result: blocked)
 * Every count is an atomic add into fixed arrays (struct engine's http_stats, struct node's
 * controls): a request allocates nothing for them and takes no lock. */
#ifndef HWEMU_HTTP_STATS_H
#define HWEMU_HTTP_STATS_H
#include <stddef.h>
#include <stdint.h>

struct engine;

/* The route label of a request, by its path (the seed's names where the seed has the route):
 * http_route_of (http.c) reads it from the route table, the run API's from http_runs_label. */
enum http_route_id {
    HR_TELEMETRY, HR_CONTROL, HR_DEBUG_NODES, HR_DEBUG_CLUSTER, HR_DEBUG_HISTORY, HR_DEBUG_EVENTS,
    HR_DEBUG_ENERGY, HR_METRICS, HR_HEALTHZ, HR_EXPORTERS, HR_REDFISH, HR_PAGE, HR_RUNS, HR_LABELS, HR_FAULTS, HR_OTHER,
    HR_COUNT
};
enum http_route_id http_route_of(const char *url);

/* One answered request: its route, method (any token), the status sent and the time it took,
 * from the request's last part (its headers, or the end of its body) to its answer queued. */
void http_stats_observe(struct engine *e, enum http_route_id route, const char *method, unsigned status,
                        int64_t ns);

/* The /control actions the seed knows, and every other body (an unknown action, no action, not
 * JSON): the action label of a POST /control. */
enum http_control_action { HC_RAPL_CAP, HC_DVFS_THROTTLE, HC_GPU_CAP, HC_OTHER, HC_COUNT };
enum http_control_action http_control_action_of(const char *body, size_t len);
/* A POST /control to node i answered 409 (blocked): counts it under its action. */
void http_stats_control(struct engine *e, int node, enum http_control_action a);

/* The four families in Prometheus text, through out (a printf into the scrape's text). */
typedef void http_printf_fn(void *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void http_stats_metrics(const struct engine *e, http_printf_fn *out, void *ctx);

#endif
