/* http_stats: the HTTP API's request and control counters and their exposition; see http_stats.h.
 * Names, labels, types and buckets are the seed simulator's (simulator/cmd/simulator/main.go,
 * the "Simulator Metrics" page: docs/telemetry.md "/metrics"); the label values of route,
 * method, status and action come from fixed tables, so a client cannot make new series. */
#include "http_stats.h"

#include "engine.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <string.h>

static const char *const route_names[HR_COUNT] = {
    "telemetry", "control", "debug_nodes", "debug_cluster", "debug_history", "debug_events", "debug_energy",
    "metrics", "healthz", "exporters", "redfish", "page", "runs", "labels", "faults", "other"};

/* The methods a label names; any other token is "other". */
enum { M_GET, M_HEAD, M_POST, M_PUT, M_DELETE, M_PATCH, M_OPTIONS, M_OTHER, M_COUNT };
static const char *const method_names[M_COUNT] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS",
                                                  "other"};

/* Every status the routes answer (http.c, http_runs.c, exporters.c, redfish.c, web.c); another
 * one would be counted as "other". */
static const unsigned statuses[] = {200, 201, 400, 401, 403, 404, 405, 409, 413, 500, 503};
#define S_COUNT (sizeof statuses / sizeof statuses[0] + 1)

/* prometheus.DefBuckets (client_golang prometheus/histogram.go), the seed's buckets, in ns */
static const int64_t bucket_ns[] = {5000000, 10000000, 25000000, 50000000, 100000000, 250000000, 500000000,
                                    1000000000, 2500000000, 5000000000, 10000000000};
static const char *const bucket_le[] = {"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10"};
#define B_COUNT (sizeof bucket_ns / sizeof bucket_ns[0])
_Static_assert(sizeof bucket_le / sizeof bucket_le[0] == B_COUNT, "one le per bucket");

/* engine.http_stats: the request counts [route][method][status], then per route and method the
 * histogram: B_COUNT + 1 bucket counts (the last +Inf, not cumulative), the sum in ns, the count */
#define REQS (HR_COUNT * M_COUNT * S_COUNT)
#define HIST_W (B_COUNT + 3)
_Static_assert(REQS + HR_COUNT * M_COUNT * HIST_W <= ENGINE_HTTP_STATS, "engine.http_stats holds every count");

static const char *const action_names[HC_COUNT] = {"rapl.set_power_cap_watts", "dvfs.set_throttle_pct",
                                                   "gpu.set_power_cap_watts", "other"};

void http_stats_observe(struct engine *e, enum http_route_id route, const char *method, unsigned status,
                        int64_t ns)
{
    unsigned r = route < HR_COUNT ? (unsigned)route : HR_OTHER, m = 0, s = 0;
    while (m < M_OTHER && strcmp(method, method_names[m]))
        m++;
    while (s < S_COUNT - 1 && statuses[s] != status)
        s++;
    atomic_fetch_add_explicit(&e->http_stats[(r * M_COUNT + m) * S_COUNT + s], 1, memory_order_relaxed);
    _Atomic uint64_t *h = &e->http_stats[REQS + (r * M_COUNT + m) * HIST_W];
    unsigned b = 0;
    while (b < B_COUNT && ns > bucket_ns[b])
        b++;
    atomic_fetch_add_explicit(&h[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h[B_COUNT + 1], (uint64_t)(ns > 0 ? ns : 0), memory_order_relaxed);
    atomic_fetch_add_explicit(&h[B_COUNT + 2], 1, memory_order_relaxed);
}

enum http_control_action http_control_action_of(const char *body, size_t len)
{
    enum http_control_action a = HC_OTHER;
    cJSON *o = body && len ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(o, "action");
    for (int i = 0; cJSON_IsString(act) && i < HC_OTHER; i++)
        if (!strcmp(act->valuestring, action_names[i]))
            a = (enum http_control_action)i;
    cJSON_Delete(o);
    return a;
}

void http_stats_control(struct engine *e, int node, enum http_control_action a)
{
    if (node >= 0 && node < e->nnodes && a < HC_COUNT)
        atomic_fetch_add_explicit(&e->nodes[node].controls[a], 1, memory_order_relaxed);
}

void http_stats_metrics(const struct engine *e, http_printf_fn *out, void *ctx)
{
    out(ctx, "# HELP joulie_sim_requests_total HTTP requests answered, by route, method and status.\n"
             "# TYPE joulie_sim_requests_total counter\n");
    for (unsigned r = 0; r < HR_COUNT; r++)
        for (unsigned m = 0; m < M_COUNT; m++)
            for (unsigned s = 0; s < S_COUNT; s++) {
                uint64_t v = atomic_load_explicit(&e->http_stats[(r * M_COUNT + m) * S_COUNT + s], memory_order_relaxed);
                if (!v)
                    continue;
                if (s < S_COUNT - 1)
                    out(ctx, "joulie_sim_requests_total{route=\"%s\",method=\"%s\",status=\"%u\"} %llu\n",
                        route_names[r], method_names[m], statuses[s], (unsigned long long)v);
                else
                    out(ctx, "joulie_sim_requests_total{route=\"%s\",method=\"%s\",status=\"other\"} %llu\n",
                        route_names[r], method_names[m], (unsigned long long)v);
            }
    out(ctx, "# HELP joulie_sim_request_duration_seconds Time to answer an HTTP request, from its last part to its "
             "answer queued.\n# TYPE joulie_sim_request_duration_seconds histogram\n");
    for (unsigned r = 0; r < HR_COUNT; r++)
        for (unsigned m = 0; m < M_COUNT; m++) {
            const _Atomic uint64_t *h = &e->http_stats[REQS + (r * M_COUNT + m) * HIST_W];
            uint64_t count = atomic_load_explicit(&h[B_COUNT + 2], memory_order_relaxed);
            if (!count)
                continue;
            uint64_t cum = 0;
            for (unsigned b = 0; b <= B_COUNT; b++) {
                cum += atomic_load_explicit(&h[b], memory_order_relaxed);
                out(ctx, "joulie_sim_request_duration_seconds_bucket{route=\"%s\",method=\"%s\",le=\"%s\"} %llu\n",
                    route_names[r], method_names[m], b < B_COUNT ? bucket_le[b] : "+Inf", (unsigned long long)cum);
            }
            /* the buckets were read one by one: the count is their total, so they agree */
            out(ctx, "joulie_sim_request_duration_seconds_sum{route=\"%s\",method=\"%s\"} %.9f\n", route_names[r],
                method_names[m], (double)atomic_load_explicit(&h[B_COUNT + 1], memory_order_relaxed) / 1e9);
            out(ctx, "joulie_sim_request_duration_seconds_count{route=\"%s\",method=\"%s\"} %llu\n", route_names[r],
                method_names[m], (unsigned long long)cum);
        }
    static const char *const fams[2][2] = {
        {"joulie_sim_controls_total", "Control actions received on POST /control/<node>, by node and action."},
        {"joulie_sim_control_actions_total", "Control action outcomes, by node, action and result (blocked: an "
                                             "emulated node's limits are written to its files, 409)."}};
    for (int f = 0; f < 2; f++) {
        out(ctx, "# HELP %s %s\n# TYPE %s counter\n", fams[f][0], fams[f][1], fams[f][0]);
        for (int i = 0; i < e->nnodes; i++)
            for (int a = 0; a < HC_COUNT; a++) {
                uint64_t v = atomic_load_explicit(&e->nodes[i].controls[a], memory_order_relaxed);
                if (v && f == 0)
                    out(ctx, "%s{node=\"%s\",action=\"%s\"} %llu\n", fams[f][0], e->nodes[i].name, action_names[a],
                        (unsigned long long)v);
                else if (v)
                    out(ctx, "%s{node=\"%s\",action=\"%s\",result=\"blocked\"} %llu\n", fams[f][0], e->nodes[i].name,
                        action_names[a], (unsigned long long)v);
            }
    }
}
