/* http: the engine's HTTP API (libmicrohttpd), reading only the latest telemetry snapshot.
 *
 *   GET  /telemetry/<node>  JSON: node, per-package and per-GPU power, energy, limits,
 *                           frequency, temperature; Joulie's packagePowerWatts (node total, W,
 *                           GPUs included)
 *   POST /control/<node>    409: an emulated node's limits are written to its files
 *   GET  /                  the page (web.c; the text saying how to build it when it was not built)
 *   GET  /ui/NAME           the page's scripts and styles
 *   GET  /debug/nodes       every node with pool, profile, power, energy, caps, frequency,
 *                           temperature, the last agent write; paged, sorted, filtered (web.c)
 *   GET  /debug/cluster     the cluster at a glance: totals, per pool and profile (web.c)
 *   GET  /debug/history     the cluster's power per tick, the points after ?since= (web.c)
 *   GET  /debug/events      recent joulie.sim.* events (?node=NAME, ?after=N, ?limit=N)
 *   GET  /debug/energy      energy per node, package and GPU, J
 *   GET  /metrics           Prometheus text format 0.0.4
 *   GET  /exporters/...     per-node exporter formats (SIM_EXPORTERS; exporters.c)
 *   GET  /redfish/v1/...    Redfish: service root, Chassis per node, Power (redfish.c)
 *   GET  /healthz           ok
 * Unknown node: 404 with a JSON error. A known route with another method: 405 with Allow.
 * Unknown route: 404 with every route (route_table and the run API's). Before http_start (the
 * engine still rendering its nodes): 503 for every request. With --http-auth-file, every route
 * but /healthz answers 401 (with a Basic challenge) without the credentials. Never steps a node,
 * never blocks the tick loop (RCU reads). The routes (http_route) take no socket; the rest of this file is the
 * libmicrohttpd daemon around them: budget, timeouts, auth, TLS, the log's rate limit. */
#include "http.h"
#include "http_runs.h"
#include "http_stats.h"

#include "engine.h"
#include "events.h"
#include "exporters.h"
#include "otlp.h"
#include "redfish.h"
#include "web.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

struct http {
    struct MHD_Daemon *d;
    struct engine *e;
    const struct otlp *otlp;
    char *user, *pass;  /* basic auth (pass points into user's allocation); NULL: none */
    char *cert, *key;   /* PEM text for TLS; NULL: plain HTTP */
    bool tls;
    int fd;             /* the listen socket until the daemon takes it (-1 then) */
    atomic_bool ready;  /* set by http_start once e and otlp are: before, every request is a 503 */
    uint16_t port;      /* the port bound (the kernel's pick for :0) */
    char warning[160];  /* the connection budget cut to the descriptor limit: said by http_start */
    bool exposed;       /* listening beyond loopback: http_start warns */
    char url[300];
    pthread_mutex_t log_mu; /* mhd_log's rate limit */
    time_t log_last;
    unsigned long log_dropped;
    unsigned max;        /* the connection budget */
    atomic_uint open;    /* connections now open */
};

/* The routes, matched in this order (a path equal to path, or with prefix, starting with it):
 * http_route classifies a request by this table, and the 404 lists each row's shown with the run
 * API's (http_runs_routes), so a route cannot be served without being listed. docs/http-api.md
 * lists the same (tests/cli/test_first_use.sh compares the two). */
enum handler { H_TELEMETRY, H_CONTROL, H_PAGE, H_NODES, H_CLUSTER, H_HISTORY, H_EVENTS, H_ENERGY, H_METRICS,
               H_EXPORTERS, H_HEALTH, H_REDFISH, H_NONE };
static const struct route_row {
    const char *path;
    bool prefix;
    enum handler h;
    enum http_route_id label; /* joulie_sim_requests_total's route (http_stats.h) */
    const char *shown;        /* in the 404's list; NULL: another spelling of a listed route */
} route_table[] = {
    {"/telemetry/", true, H_TELEMETRY, HR_TELEMETRY, "GET /telemetry/<node>"},
    {"/control/", true, H_CONTROL, HR_CONTROL, "POST /control/<node>"},
    {"/", false, H_PAGE, HR_PAGE, "GET /"},
    {"/ui/", true, H_PAGE, HR_PAGE, "GET /ui/<file>"},
    {"/debug/nodes", false, H_NODES, HR_DEBUG_NODES, "GET /debug/nodes"},
    {"/debug/cluster", false, H_CLUSTER, HR_DEBUG_CLUSTER, "GET /debug/cluster"},
    {"/debug/history", false, H_HISTORY, HR_DEBUG_HISTORY, "GET /debug/history"},
    {"/debug/events", false, H_EVENTS, HR_DEBUG_EVENTS, "GET /debug/events"},
    {"/debug/energy", false, H_ENERGY, HR_DEBUG_ENERGY, "GET /debug/energy"},
    {"/metrics", false, H_METRICS, HR_METRICS, "GET /metrics"},
    {"/exporters/", true, H_EXPORTERS, HR_EXPORTERS, "GET /exporters/<format>/<node>/metrics"},
    {"/exporters", false, H_EXPORTERS, HR_EXPORTERS, "GET /exporters"},
    {"/healthz", false, H_HEALTH, HR_HEALTHZ, "GET /healthz"},
    {"/redfish/", true, H_REDFISH, HR_REDFISH, "GET /redfish/v1/..."},
    {"/redfish", false, H_REDFISH, HR_REDFISH, NULL},
};

static const struct route_row *route_of(const char *url)
{
    for (size_t i = 0; i < sizeof route_table / sizeof route_table[0]; i++) {
        const struct route_row *row = &route_table[i];
        if (row->prefix ? !strncmp(url, row->path, strlen(row->path)) : !strcmp(url, row->path))
            return row;
    }
    return NULL;
}

enum http_route_id http_route_of(const char *url)
{
    const struct route_row *row = route_of(url);
    return row ? row->label : http_runs_label(url);
}

struct buf {
    char *p;
    size_t len, cap;
};

static void vbprintf(struct buf *b, const char *fmt, va_list ap0) __attribute__((format(printf, 2, 0)));
static void vbprintf(struct buf *b, const char *fmt, va_list ap0)
{
    va_list ap;
    for (;;) {
        va_copy(ap, ap0);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np)
            return;
        b->p = np;
        b->cap = cap;
    }
}

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vbprintf(b, fmt, ap);
    va_end(ap);
}

/* bprintf as http_stats_metrics prints (ctx: the struct buf) */
static void bprintf_ctx(void *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf_ctx(void *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vbprintf(ctx, fmt, ap);
    va_end(ap);
}

/* A route's answer, before it becomes an MHD response (so the routes run without a socket:
 * http_route, which the fuzz target drives). body is malloc'd (NULL: out of memory). */
static void reply_set(struct http_reply *r, unsigned code, const char *type, char *body, size_t len,
                      const char *allow)
{
    r->code = code;
    r->type = type;
    r->body = body;
    r->len = body ? len : 0;
    r->allow = allow;
    r->persistent = false;
    r->retry_after = 0;
}

/* A file embedded in the binary: served from where it is, never copied or freed. */
static void reply_static(struct http_reply *r, const struct web_file *f)
{
    r->code = 200;
    r->type = f->type;
    r->body = (char *)f->data;
    r->len = f->len;
    r->allow = NULL;
    r->persistent = true;
}

static void send_json(struct http_reply *r, unsigned code, cJSON *o)
{
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    size_t n = s ? strlen(s) : 0;
    char *body = s ? realloc(s, n + 2) : NULL;
    if (!body) {
        free(s);
        reply_set(r, code, "application/json", NULL, 0, NULL);
        return;
    }
    body[n] = '\n';
    body[n + 1] = 0;
    reply_set(r, code, "application/json", body, n + 1, NULL);
}

static void json_error(struct http_reply *r, unsigned code, const char *msg, const char *node, const char *allow)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", msg);
    if (node)
        cJSON_AddStringToObject(o, "node", node);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    reply_set(r, code, "application/json", s, s ? strlen(s) : 0, allow);
}

/* 404 for a path no route serves: {"error", "routes": every route, from the tables} */
static void route_not_found(struct http_reply *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", "no such route (routes: the list; docs/http-api.md describes each)");
    cJSON *list = cJSON_AddArrayToObject(o, "routes");
    for (size_t i = 0; i < sizeof route_table / sizeof route_table[0]; i++)
        if (route_table[i].shown)
            cJSON_AddItemToArray(list, cJSON_CreateString(route_table[i].shown));
    for (const char *const *run = http_runs_routes; *run; run++)
        cJSON_AddItemToArray(list, cJSON_CreateString(*run));
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    reply_set(r, 404, "application/json", s, s ? strlen(s) : 0, NULL);
}

static void rfc3339(int64_t wall_ns, char *out, size_t len)
{
    time_t sec = (time_t)(wall_ns / 1000000000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static cJSON *telemetry_json(const struct node_telemetry *t, int64_t wall_ns)
{
    char ts[64];
    rfc3339(wall_ns, ts, sizeof ts);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "node", t->name);
    cJSON_AddStringToObject(o, "ts", ts);
    cJSON_AddStringToObject(o, "profile", t->profile);
    cJSON_AddStringToObject(o, "pool", t->pool);
    cJSON_AddNumberToObject(o, "packagePowerWatts", round(t->node_power_w));
    cJSON_AddNumberToObject(o, "instantPackagePowerWatts", t->node_power_w);
    cJSON_AddNumberToObject(o, "nodePowerWatts", t->node_power_w);
    cJSON_AddNumberToObject(o, "energyJoules", (double)t->node_energy_uj / 1e6);
    cJSON_AddNumberToObject(o, "ambientC", t->ambient_c);
    cJSON *cpu = cJSON_AddObjectToObject(o, "cpu");
    cJSON_AddNumberToObject(cpu, "packagePowerWatts", t->cpu_power_w);
    cJSON_AddNumberToObject(cpu, "instantPowerWatts", t->cpu_power_w);
    cJSON_AddNumberToObject(cpu, "dramPowerWatts", t->dram_power_w);
    cJSON_AddNumberToObject(cpu, "utilization", t->cpu_util);
    cJSON_AddNumberToObject(cpu, "memoryIntensity", t->memory_intensity);
    cJSON_AddStringToObject(cpu, "workClass", t->cpu_class);
    cJSON_AddNumberToObject(cpu, "throttlePct", t->cpu_throttle_pct);
    /* the seed's 0..100 share of its throttle temperature range; ours the frequency the
     * packages lose to PROCHOT at TjMax (a cooling fault, docs/faults.md) */
    cJSON_AddNumberToObject(cpu, "thermalThrottlePct", t->cpu_thermal_throttle_pct);
    double temp = 0, cap = 0;
    bool capped = false;
    cJSON *pk = cJSON_AddArrayToObject(o, "packages");
    for (int k = 0; k < t->npkgs; k++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "index", k);
        cJSON_AddNumberToObject(p, "powerWatts", t->pkg_power_w[k]);
        cJSON_AddNumberToObject(p, "energyJoules", (double)t->pkg_energy_uj[k] / 1e6);
        cJSON_AddNumberToObject(p, "dramEnergyJoules", (double)t->dram_energy_uj[k] / 1e6);
        cJSON_AddNumberToObject(p, "frequencyKHz", (double)t->pkg_freq_khz[k]);
        cJSON_AddNumberToObject(p, "temperatureC", t->pkg_temp_c[k]);
        if (t->has_rapl_limits) {
            cJSON_AddNumberToObject(p, "pl1Watts", (double)t->pkg_pl1_uw[k] / 1e6);
            cJSON_AddNumberToObject(p, "pl2Watts", (double)t->pkg_pl2_uw[k] / 1e6);
        }
        cJSON_AddNumberToObject(p, "capWatts", t->pkg_cap_w[k]);
        cJSON_AddBoolToObject(p, "capped", t->pkg_capped[k]);
        cJSON_AddItemToArray(pk, p);
        temp = t->pkg_temp_c[k] > temp ? t->pkg_temp_c[k] : temp;
        cap += t->pkg_cap_w[k];
        capped = capped || t->pkg_capped[k];
    }
    cJSON_AddNumberToObject(cpu, "temperatureC", temp);
    cJSON_AddNumberToObject(cpu, "raplCapWatts", cap);
    cJSON_AddBoolToObject(cpu, "capSaturated", capped);
    /* the GPUs: the seed's gpu object (node-wide) and one entry per GPU */
    cJSON *gpu = cJSON_AddObjectToObject(o, "gpu");
    cJSON_AddBoolToObject(gpu, "present", t->ngpus > 0);
    cJSON_AddNumberToObject(gpu, "count", t->ngpus);
    if (t->ngpus) {
        cJSON_AddStringToObject(gpu, "vendor", t->gpu_vendor);
        cJSON_AddStringToObject(gpu, "product", t->gpu_product);
        cJSON_AddNumberToObject(gpu, "utilization", t->gpu_util);
    }
    cJSON_AddNumberToObject(gpu, "powerWattsTotal", t->gpu_power_total_w);
    double draw = 0;
    cJSON *gs = cJSON_AddArrayToObject(o, "gpus");
    for (int k = 0; k < t->ngpus; k++) {
        cJSON *g = cJSON_CreateObject();
        cJSON_AddNumberToObject(g, "index", k);
        cJSON_AddNumberToObject(g, "powerWatts", t->gpu_power_w[k]);
        cJSON_AddNumberToObject(g, "drawWatts", t->gpu_draw_w[k]);
        cJSON_AddNumberToObject(g, "limitWatts", t->gpu_limit_w[k]);
        cJSON_AddNumberToObject(g, "enforcedLimitWatts", t->gpu_enforced_w[k]);
        cJSON_AddNumberToObject(g, "temperatureC", t->gpu_temp_c[k]);
        cJSON_AddNumberToObject(g, "clockMHz", t->gpu_clock_mhz[k]);
        cJSON_AddNumberToObject(g, "memoryClockMHz", t->gpu_mem_clock_mhz[k]);
        cJSON_AddNumberToObject(g, "energyJoules", (double)t->gpu_energy_uj[k] / 1e6);
        cJSON_AddItemToArray(gs, g);
        draw += t->gpu_draw_w[k];
    }
    cJSON_AddNumberToObject(gpu, "avgPowerWattsTotal", draw);
    return o;
}

static void metrics_seed_extra(const struct engine *e, const struct telemetry *t, struct buf *b);
static void metrics_gpu(const struct telemetry *t, struct buf *b);

static void metrics(const struct engine *e, const struct otlp *otlp, const struct telemetry *t, struct buf *b)
{
    bprintf(b, "# HELP joulie_sim_emulate_tick_duration_seconds Time one tick took to step every node.\n"
               "# TYPE joulie_sim_emulate_tick_duration_seconds histogram\n");
    uint64_t cum = 0;
    for (int i = 0; i < TICK_BUCKETS; i++) {
        cum += atomic_load(&e->tick_bucket[i]);
        bprintf(b, "joulie_sim_emulate_tick_duration_seconds_bucket{le=\"%g\"} %llu\n", tick_bucket_le[i],
                (unsigned long long)cum);
    }
    cum += atomic_load(&e->tick_bucket[TICK_BUCKETS]);
    bprintf(b, "joulie_sim_emulate_tick_duration_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    bprintf(b, "joulie_sim_emulate_tick_duration_seconds_sum %.9f\n", (double)atomic_load(&e->tick_sum_ns) / 1e9);
    bprintf(b, "joulie_sim_emulate_tick_duration_seconds_count %llu\n", (unsigned long long)cum);
    bprintf(b, "# HELP joulie_sim_emulate_tick_overruns_total Ticks that were due before the previous one ended.\n"
               "# TYPE joulie_sim_emulate_tick_overruns_total counter\n"
               "joulie_sim_emulate_tick_overruns_total %llu\n", (unsigned long long)atomic_load(&e->overruns));
    bprintf(b, "# HELP joulie_sim_emulate_nodes Emulated nodes.\n# TYPE joulie_sim_emulate_nodes gauge\n"
               "joulie_sim_emulate_nodes %d\n", e->nnodes);
    http_stats_metrics(e, bprintf_ctx, b); /* requests and /control (http_stats.c) */
    bprintf(b, "# HELP joulie_sim_events_total joulie.sim.* events emitted.\n# TYPE joulie_sim_events_total counter\n"
               "joulie_sim_events_total %llu\n", (unsigned long long)events_total(e->events));
    bprintf(b, "# HELP joulie_sim_otlp_dropped_batches_total OTLP batches dropped while the collector was behind or down.\n"
               "# TYPE joulie_sim_otlp_dropped_batches_total counter\n"
               "joulie_sim_otlp_dropped_batches_total %llu\n", (unsigned long long)otlp_dropped_batches(otlp));
    char *runs = http_runs_metrics(); /* the run metrics (http_runs.c) */
    if (runs)
        bprintf(b, "%s", runs);
    free(runs);
    if (!t)
        return;
    bprintf(b, "# HELP joulie_sim_node_power_watts Node power: packages, DRAM, GPUs and the rest of the platform.\n"
               "# TYPE joulie_sim_node_power_watts gauge\n");
    for (int i = 0; i < t->n; i++)
        bprintf(b, "joulie_sim_node_power_watts{node=\"%s\"} %.6f\n", t->nodes[i].name, t->nodes[i].node_power_w);
    bprintf(b, "# HELP joulie_sim_node_energy_joules_total Energy the node's packages, DRAM and GPUs used.\n"
               "# TYPE joulie_sim_node_energy_joules_total counter\n");
    for (int i = 0; i < t->n; i++)
        bprintf(b, "joulie_sim_node_energy_joules_total{node=\"%s\"} %.6f\n", t->nodes[i].name,
                (double)t->nodes[i].node_energy_uj / 1e6);
    bprintf(b, "# HELP joulie_sim_node_package_power_watts CPU package power.\n"
               "# TYPE joulie_sim_node_package_power_watts gauge\n");
    for (int i = 0; i < t->n; i++)
        for (int k = 0; k < t->nodes[i].npkgs; k++)
            bprintf(b, "joulie_sim_node_package_power_watts{node=\"%s\",package=\"%d\"} %.6f\n", t->nodes[i].name, k,
                    t->nodes[i].pkg_power_w[k]);
    bprintf(b, "# HELP joulie_sim_node_rapl_cap_watts RAPL PL1 limit summed over the packages (0: no RAPL).\n"
               "# TYPE joulie_sim_node_rapl_cap_watts gauge\n");
    for (int i = 0; i < t->n; i++) {
        double cap = 0;
        for (int k = 0; t->nodes[i].has_rapl_limits && k < t->nodes[i].npkgs; k++)
            cap += (double)t->nodes[i].pkg_pl1_uw[k] / 1e6;
        bprintf(b, "joulie_sim_node_rapl_cap_watts{node=\"%s\"} %.6f\n", t->nodes[i].name, cap);
    }
    bprintf(b, "# HELP joulie_sim_node_cpu_frequency_hertz Running CPU frequency of package 0.\n"
               "# TYPE joulie_sim_node_cpu_frequency_hertz gauge\n");
    for (int i = 0; i < t->n; i++)
        bprintf(b, "joulie_sim_node_cpu_frequency_hertz{node=\"%s\"} %lld\n", t->nodes[i].name,
                (long long)t->nodes[i].pkg_freq_khz[0] * 1000);
    bprintf(b, "# HELP joulie_sim_node_cpu_util CPU utilization the node runs at.\n"
               "# TYPE joulie_sim_node_cpu_util gauge\n");
    for (int i = 0; i < t->n; i++)
        bprintf(b, "joulie_sim_node_cpu_util{node=\"%s\"} %.6f\n", t->nodes[i].name, t->nodes[i].cpu_util);
    metrics_gpu(t, b);
    metrics_seed_extra(e, t, b);
}

/* One value of GPU k of a node for metrics_gpu. */
enum gpu_metric { GM_POWER, GM_ENERGY, GM_CAP, GM_TEMP, GM_FREQ, GM_COUNT };

static double gpu_metric(const struct node_telemetry *n, int k, int m)
{
    switch (m) {
    case GM_POWER: return n->gpu_power_w[k];
    case GM_ENERGY: return (double)n->gpu_energy_uj[k] / 1e6;
    case GM_CAP: return n->gpu_enforced_w[k];
    case GM_TEMP: return n->gpu_temp_c[k];
    default: return n->gpu_clock_mhz[k] * 1e6;
    }
}

/* Per-GPU series (labels node and gpu, the index) and the GPU utilization of each GPU node; no
 * family at all when the cluster has no GPU. */
static void metrics_gpu(const struct telemetry *t, struct buf *b)
{
    static const char *const fams[GM_COUNT][3] = {
        {"joulie_sim_node_gpu_power_watts", "gauge", "GPU power (held over the tick, as its energy counter runs)."},
        {"joulie_sim_node_gpu_energy_joules_total", "counter", "Energy the GPU used."},
        {"joulie_sim_node_gpu_cap_watts", "gauge", "GPU power limit in force."},
        {"joulie_sim_node_gpu_temperature_celsius", "gauge", "GPU temperature."},
        {"joulie_sim_node_gpu_frequency_hertz", "gauge", "GPU graphics clock."},
    };
    int any = 0;
    for (int i = 0; i < t->n; i++)
        any += t->nodes[i].ngpus;
    if (!any)
        return;
    for (int m = 0; m < GM_COUNT; m++) {
        bprintf(b, "# HELP %s %s\n# TYPE %s %s\n", fams[m][0], fams[m][2], fams[m][0], fams[m][1]);
        for (int i = 0; i < t->n; i++)
            for (int k = 0; k < t->nodes[i].ngpus; k++)
                bprintf(b, "%s{node=\"%s\",gpu=\"%d\"} %.6f\n", fams[m][0], t->nodes[i].name, k,
                        gpu_metric(&t->nodes[i], k, m));
    }
    bprintf(b, "# HELP joulie_sim_node_gpu_util GPU utilization the node's GPUs run at.\n"
               "# TYPE joulie_sim_node_gpu_util gauge\n");
    for (int i = 0; i < t->n; i++)
        if (t->nodes[i].ngpus)
            bprintf(b, "joulie_sim_node_gpu_util{node=\"%s\"} %.6f\n", t->nodes[i].name, t->nodes[i].gpu_util);
}

/* The seed's metrics the engine computes truthfully: the effective cap (only where every package
 * has one in force), the frequency scale, the facility's ambient (the spec's sinusoid, without a
 * cooling zone's offset) and IT power (every node's power). */
static void metrics_seed_extra(const struct engine *e, const struct telemetry *t, struct buf *b)
{
    bprintf(b, "# HELP joulie_sim_node_cap_watts Package power caps in force, summed over the packages.\n"
               "# TYPE joulie_sim_node_cap_watts gauge\n");
    for (int i = 0; i < t->n; i++) {
        const struct node_telemetry *n = &t->nodes[i];
        double cap = 0;
        int k = 0;
        while (k < n->npkgs && n->pkg_cap_w[k] > 0)
            cap += n->pkg_cap_w[k++];
        if (n->npkgs && k == n->npkgs)
            bprintf(b, "joulie_sim_node_cap_watts{node=\"%s\"} %.6f\n", n->name, cap);
    }
    bprintf(b, "# HELP joulie_sim_node_throttle_pct Frequency throttle of the node's CPUs: 100 x (1 - (1 - dvfs/100) x "
               "(1 - thermal/100)), dvfs the throttle its cpufreq limits impose (100 x (1 - the mean frequency "
               "ceiling of its CPUs over the hardware maximum)), thermal the frequency its packages lose to "
               "thermal throttling.\n"
               "# TYPE joulie_sim_node_throttle_pct gauge\n");
    for (int i = 0; i < t->n; i++) {
        const struct node_telemetry *n = &t->nodes[i];
        double keep = (1 - n->cpu_throttle_pct / 100) * (1 - n->cpu_thermal_throttle_pct / 100);
        bprintf(b, "joulie_sim_node_throttle_pct{node=\"%s\"} %.6f\n", n->name, 100 * (1 - keep));
    }
    bprintf(b, "# HELP joulie_sim_node_freq_scale Running frequency of package 0 over the hardware maximum.\n"
               "# TYPE joulie_sim_node_freq_scale gauge\n");
    for (int i = 0; i < t->n; i++) {
        int64_t max = e->nodes[i].params.cpuinfo_max_khz;
        if (max > 0)
            bprintf(b, "joulie_sim_node_freq_scale{node=\"%s\"} %.6f\n", t->nodes[i].name,
                    (double)t->nodes[i].pkg_freq_khz[0] / (double)max);
    }
    double it = 0;
    for (int i = 0; i < t->n; i++)
        it += t->nodes[i].node_power_w;
    bprintf(b, "# HELP joulie_sim_facility_ambient_temp_celsius Facility ambient temperature (before cooling-zone "
               "offsets).\n# TYPE joulie_sim_facility_ambient_temp_celsius gauge\n"
               "joulie_sim_facility_ambient_temp_celsius %.6f\n", t->ambient_c);
    bprintf(b, "# HELP joulie_sim_facility_it_power_watts IT power: every node's power summed.\n"
               "# TYPE joulie_sim_facility_it_power_watts gauge\njoulie_sim_facility_it_power_watts %.6f\n", it);
}

static const struct node_telemetry *find(const struct telemetry *t, const char *name)
{
    for (int i = 0; t && i < t->n; i++)
        if (!strcmp(t->nodes[i].name, name))
            return &t->nodes[i];
    return NULL;
}

void http_route(struct engine *e, const struct otlp *otlp, const char *method, const char *url,
                const char *req_body, size_t req_len, http_arg_fn *arg, void *arg_ctx, struct http_reply *rep)
{
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    const struct route_row *row = route_of(url);
    enum handler h = row ? row->h : H_NONE;
    rcu_read_lock();
    const struct telemetry *t = rcu_dereference(e->telemetry);
    if (h == H_NONE) {
        route_not_found(rep);
    } else if (h == H_TELEMETRY) {
        const char *name = url + 11;
        const struct node_telemetry *nt = find(t, name);
        if (!get)
            json_error(rep, 405, "method not allowed: use GET", NULL, "GET, HEAD");
        else if (!nt)
            json_error(rep, 404, "no such node in the cluster spec (see /debug/nodes)", name, NULL);
        else
            send_json(rep, 200, telemetry_json(nt, t->wall_ns));
    } else if (h == H_CONTROL) {
        const char *name = url + 9;
        const struct node_telemetry *nt = find(t, name);
        if (strcmp(method, "POST"))
            json_error(rep, 405, "method not allowed: use POST", NULL, "POST");
        else if (!nt)
            json_error(rep, 404, "no such node in the cluster spec (see /debug/nodes)", name, NULL);
        else {
            /* the seed's action, counted as blocked (joulie_sim_controls_total, _control_actions_total) */
            http_stats_control(e, (int)(nt - t->nodes), http_control_action_of(req_body, req_len));
            cJSON *o = cJSON_CreateObject();
            cJSON_AddBoolToObject(o, "ok", false);
            cJSON_AddStringToObject(o, "result", "blocked");
            cJSON_AddStringToObject(o, "node", name);
            cJSON_AddStringToObject(o, "message", "the node is emulated: its limits are written to its files "
                                                  "(powercap, cpufreq) through the shim, not through /control");
            send_json(rep, 409, o);
        }
    } else if (h == H_EXPORTERS) {
        char *body = NULL;
        size_t len = 0;
        const char *type = NULL;
        unsigned code = get ? exporters_http(e, t, url + 10, arg(arg_ctx, "node"), &body, &len, &type) : 405;
        if (code == 405)
            json_error(rep, 405, "method not allowed: use GET", NULL, "GET, HEAD");
        else
            reply_set(rep, code, type, body, len, NULL);
    } else if (h == H_REDFISH) { /* redfish.c */
        char *body = NULL;
        size_t len = 0;
        int retry = 0;
        unsigned code = get ? redfish_http(t, url, &body, &len, &retry) : 405;
        if (code == 0) { /* a node without power: its BMC does not answer (no body: the connection
                          * closes with nothing sent, the client sees an empty reply) */
            reply_set(rep, 503, "application/json", NULL, 0, NULL);
        } else if (code == 405) {
            json_error(rep, 405, "method not allowed: use GET", NULL, "GET, HEAD");
        } else {
            reply_set(rep, code, "application/json", body, len, NULL);
            rep->retry_after = retry;
        }
    } else if (h == H_PAGE) {
        struct web_file f;
        if (!get)
            json_error(rep, 405, "method not allowed: use GET", NULL, "GET, HEAD");
        else if (web_file(url, &f))
            reply_static(rep, &f);
        else if (!strcmp(url, "/"))
            reply_set(rep, 404, "text/plain; charset=utf-8", strdup(web_not_built_text), strlen(web_not_built_text),
                      NULL);
        else
            json_error(rep, 404, "no such file of the page", NULL, NULL);
    } else if (!get) { /* the rest: GET only */
        json_error(rep, 405, "method not allowed: use GET", NULL, "GET, HEAD");
    } else {
        if (h == H_HEALTH) {
            reply_set(rep, 200, "text/plain; charset=utf-8", strdup("ok\n"), 3, NULL);
        } else if (h == H_METRICS) {
            struct buf b = {0};
            metrics(e, otlp, t, &b);
            reply_set(rep, 200, "text/plain; version=0.0.4; charset=utf-8", b.p, b.len, NULL);
        } else if (h == H_NODES || h == H_HISTORY) {
            char err[256];
            cJSON *o = h == H_NODES ? web_nodes(t, arg, arg_ctx, err, sizeof err)
                                    : web_history(e, arg, arg_ctx, err, sizeof err);
            if (o)
                send_json(rep, 200, o);
            else
                json_error(rep, 400, err, NULL, NULL);
        } else if (h == H_CLUSTER) {
            send_json(rep, 200, web_cluster(e, t));
        } else if (h == H_ENERGY) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "count", t ? t->n : 0);
            cJSON *arr = cJSON_AddArrayToObject(o, "nodes");
            for (int i = 0; t && i < t->n; i++) {
                const struct node_telemetry *nt = &t->nodes[i];
                cJSON *n = cJSON_CreateObject();
                cJSON_AddStringToObject(n, "node", nt->name);
                cJSON_AddNumberToObject(n, "energyJoules", (double)nt->node_energy_uj / 1e6);
                cJSON *pk = cJSON_AddArrayToObject(n, "packages");
                for (int k = 0; k < nt->npkgs; k++) {
                    cJSON *p = cJSON_CreateObject();
                    cJSON_AddNumberToObject(p, "index", k);
                    cJSON_AddNumberToObject(p, "energyJoules", (double)nt->pkg_energy_uj[k] / 1e6);
                    cJSON_AddNumberToObject(p, "dramEnergyJoules", (double)nt->dram_energy_uj[k] / 1e6);
                    cJSON_AddItemToArray(pk, p);
                }
                cJSON *gs = cJSON_AddArrayToObject(n, "gpus");
                for (int k = 0; k < nt->ngpus; k++) {
                    cJSON *g = cJSON_CreateObject();
                    cJSON_AddNumberToObject(g, "index", k);
                    cJSON_AddNumberToObject(g, "energyJoules", (double)nt->gpu_energy_uj[k] / 1e6);
                    cJSON_AddItemToArray(gs, g);
                }
                cJSON_AddItemToArray(arr, n);
            }
            send_json(rep, 200, o);
        } else { /* H_EVENTS */
            const char *node = arg(arg_ctx, "node");
            const char *after_s = arg(arg_ctx, "after");
            const char *limit_s = arg(arg_ctx, "limit");
            char *end = NULL;
            unsigned long long after = after_s ? strtoull(after_s, &end, 10) : 0;
            bool bad = after_s && (!*after_s || *end || *after_s == '-');
            unsigned long long limit = limit_s ? strtoull(limit_s, &end, 10) : 0;
            bad = bad || (limit_s && (!*limit_s || *end || *limit_s == '-'));
            if (bad) {
                json_error(rep, 400, "after and limit are whole numbers >= 0 (after: the count of an earlier "
                                         "answer, for only newer events)", NULL, NULL);
            } else {
                uint64_t total = 0;
                char *arr = events_recent_json(e->events, node, after, (size_t)limit, &total);
                struct buf b = {0};
                bprintf(&b, "{\"count\":%llu,\"events\":%s}\n", (unsigned long long)total, arr ? arr : "[]");
                free(arr);
                reply_set(rep, 200, "application/json", b.p, b.len, NULL);
            }
        }
    }
    rcu_read_unlock();
}

/* The connection's query arguments, for http_route. */
static const char *mhd_arg(void *ctx, const char *key)
{
    return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

/* Constant-time comparison of the credentials (a wrong guess takes as long as a near miss). */
static bool same(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char d = la != lb;
    for (size_t i = 0; i < la && i < lb; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return !d;
}

static bool authorized(const struct http *h, struct MHD_Connection *c)
{
    char *pass = NULL;
    char *user = MHD_basic_auth_get_username_password(c, &pass);
    bool ok = user && pass && ((int)same(user, h->user) & (int)same(pass, h->pass)); /* both compared, always */
    MHD_free(user);
    MHD_free(pass);
    return ok;
}

static enum MHD_Result queue(struct MHD_Connection *c, const struct http_reply *rep, bool challenge)
{

    struct MHD_Response *r = MHD_create_response_from_buffer(
        rep->len, rep->body, rep->persistent ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_FREE);
    if (!r) {
        if (!rep->persistent)
            free(rep->body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", rep->type);
    if (rep->persistent) /* the page's files: embedded in the binary */
        MHD_add_response_header(r, "Cache-Control", "no-cache");
    if (rep->allow)
        MHD_add_response_header(r, "Allow", rep->allow);
    if (rep->retry_after > 0) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", rep->retry_after);
        MHD_add_response_header(r, "Retry-After", ra);
    }
    enum MHD_Result ret = challenge ? MHD_queue_basic_auth_fail_response(c, "hwemu", r)
                                    : MHD_queue_response(c, rep->code, r);
    MHD_destroy_response(r);
    return ret;
}

/* The request's Content-Length headers: how many, and whether they disagree (RFC 9110 section
 * 8.6 allows a repeated identical value; anything else is an invalid framing). */
struct clen {
    int n;
    bool conflict;
    const char *first;
};

static enum MHD_Result count_clen(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    struct clen *cl = cls;
    if (strcasecmp(key, "Content-Length"))
        return MHD_YES;
    if (!cl->n++)
        cl->first = value;
    else if (strcmp(cl->first, value ? value : ""))
        cl->conflict = true;
    /* "42, 43" in one field: a list that is not one value repeated */
    for (const char *p = value ? strchr(value, ',') : NULL; p; p = strchr(p + 1, ','))
        cl->conflict = true;
    return MHD_YES;
}

/* Leaves an escape sequence that decodes to NUL undecoded: "%00" would cut the URL short
 * ("/telemetry/intel-0%00junk" answering for intel-0), so the path stays as sent and names
 * nothing. Every other %HH is decoded as libmicrohttpd does. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    if (strstr(s, "%00"))
        return strlen(s);
    return MHD_http_unescape(s);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A POST /control's body, kept to read the seed's action from (its first CONTROL_BODY_MAX bytes;
 * the rest is read and dropped). The request's state points at it with the low bit set (heap
 * pointers are aligned): that tells it from the run API's body and from (void *)1, "headers
 * seen, nothing kept". */
#define CONTROL_BODY_MAX 4096
struct control_body {
    size_t len;
    char p[CONTROL_BODY_MAX];
};

static struct control_body *control_body_of(void *state)
{
    uintptr_t v = (uintptr_t)state;
    return v != 1 && (v & 1) ? (struct control_body *)(v & ~(uintptr_t)1) : NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state)
{
    struct http *h = cls;
    struct http_reply rep = {0};
    if (!atomic_load(&h->ready)) { /* bound before the engine started: it is rendering its nodes */
        json_error(&rep, 503, "the engine is starting (rendering or resuming its nodes): retry in a moment", NULL,
                   NULL);
        return rep.body ? queue(c, &rep, false) : MHD_NO;
    }
    int64_t t0 = mono_ns();
    if (!*state) { /* RFC 9112 section 6.3: conflicting Content-Length headers are an unrecoverable
                    * framing error, answered 400 and the connection closed */
        struct clen cl = {0};
        MHD_get_connection_values(c, MHD_HEADER_KIND, count_clen, &cl);
        if (cl.conflict) {
            json_error(&rep, 400, "conflicting Content-Length headers: the request's length is ambiguous "
                       "(RFC 9112 section 6.3); send one", NULL, NULL);
            if (!rep.body)
                return MHD_NO;
            struct MHD_Response *r = MHD_create_response_from_buffer(rep.len, rep.body, MHD_RESPMEM_MUST_FREE);
            if (!r) {
                free(rep.body);
                return MHD_NO;
            }
            MHD_add_response_header(r, "Content-Type", rep.type);
            MHD_add_response_header(r, "Connection", "close");
            enum MHD_Result ret = MHD_queue_response(c, 400, r);
            MHD_destroy_response(r);
            http_stats_observe(h->e, http_route_of(url), method, 400, mono_ns() - t0);
            return ret;
        }
    }
    /* checked on the first call, with the headers, before any body is read: /healthz stays open
     * (liveness probes carry no credentials); every other route, the run API's too, needs them */
    if (!*state && h->user && strcmp(url, "/healthz") && !authorized(h, c)) {
        json_error(&rep, 401, "authentication required (HTTP basic auth; see --http-auth-file)", NULL, NULL);
        if (!rep.body)
            return MHD_NO;
        enum MHD_Result ret = queue(c, &rep, true);
        http_stats_observe(h->e, http_route_of(url), method, 401, mono_ns() - t0);
        return ret;
    }
    if (http_runs_route(url)) { /* the run API collects its own body (http_runs.c) */
        enum MHD_Result ret = http_runs_handle(c, url, method, upload, upload_size, state);
        /* counted at the call that queued its answer */
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
        if (ci && ci->http_status)
            http_stats_observe(h->e, http_route_of(url), method, ci->http_status, mono_ns() - t0);
        return ret;
    }
    if (!*state) { /* first call: headers only; a body (if any) follows */
        struct control_body *cb = !strncmp(url, "/control/", 9) && !strcmp(method, "POST") ? malloc(sizeof *cb) : NULL;
        if (cb)
            cb->len = 0;
        *state = cb ? (void *)((uintptr_t)cb | 1) : (void *)1;
        return MHD_YES;
    }
    struct control_body *cb = control_body_of(*state);
    if (*upload_size) { /* the other routes take no body: discarded */
        size_t n = cb && *upload_size < CONTROL_BODY_MAX - cb->len ? *upload_size : cb ? CONTROL_BODY_MAX - cb->len : 0;
        if (n)
            memcpy(cb->p + cb->len, upload, n);
        if (cb)
            cb->len += n;
        *upload_size = 0;
        return MHD_YES;
    }
    http_route(h->e, h->otlp, method, url, cb ? cb->p : NULL, cb ? cb->len : 0, mhd_arg, c, &rep);
    free(cb);
    *state = (void *)1;
    if (!rep.body)
        return MHD_NO;
    unsigned code = rep.code;
    enum MHD_Result ret = queue(c, &rep, false);
    http_stats_observe(h->e, http_route_of(url), method, code, mono_ns() - t0);
    return ret;
}

/* libmicrohttpd's own messages (a client that reset or timed out, a failed accept): at most
 * one line a minute with the count of those left out, so slow or hostile clients cannot fill
 * the log. */
__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct http *h = cls;
    time_t now = time(NULL);
    pthread_mutex_lock(&h->log_mu);
    if (now - h->log_last >= 60) {
        char msg[512];
        vsnprintf(msg, sizeof msg, fmt, ap);
        msg[strcspn(msg, "\n")] = 0;
        if (h->log_dropped)
            fprintf(stderr, "hwemu serve: http: %s (%lu similar messages left out in the last minute)\n", msg,
                    h->log_dropped);
        else
            fprintf(stderr, "hwemu serve: http: %s (further ones at most once a minute)\n", msg);
        h->log_last = now;
        h->log_dropped = 0;
    } else {
        h->log_dropped++;
    }
    pthread_mutex_unlock(&h->log_mu);
}

/* The budget: a connection past it is closed as soon as it is accepted (the client sees the
 * close at once rather than waiting in the listen backlog). */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    struct http *h = cls;
    return atomic_load(&h->open) < h->max ? MHD_YES : MHD_NO;
}

/* A request that ends without its last call (the client went away mid-body, a timeout): the
 * run API's collected body, or a /control body, is freed here; the other routes keep no state
 * (*state is 1). */
static void on_completed(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    if (control_body_of(*state))
        free(control_body_of(*state));
    else if (*state && *state != (void *)1)
        http_runs_abandon(*state);
    *state = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct http *h = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        atomic_fetch_add(&h->open, 1);
    else if (code == MHD_CONNECTION_NOTIFY_CLOSED)
        atomic_fetch_sub(&h->open, 1);
}

int http_parse_addr(const char *addr, char *host, size_t hostlen, unsigned *port, char *err, size_t errlen)
{
    const char *colon = addr ? strrchr(addr, ':') : NULL;
    if (!colon || !colon[1] || (size_t)(colon - addr) >= hostlen) {
        snprintf(err, errlen, "listen address \"%.200s\" is not host:port (e.g. 127.0.0.1:18080)", addr ? addr : "");
        return -1;
    }
    unsigned long p = 0;
    for (const char *d = colon + 1; *d; d++) {
        if (*d < '0' || *d > '9' || (p = p * 10 + (unsigned long)(*d - '0')) > 65535) {
            snprintf(err, errlen, "listen address \"%.200s\": the port must be a number from 0 to 65535 (0: "
                     "the kernel picks one, printed at start)", addr);
            return -1;
        }
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = 0;
    if (host[0] == '[') { /* [::1]:18080 */
        size_t n = strcspn(host + 1, "]");
        if (host[1 + n] != ']' || host[2 + n]) {
            snprintf(err, errlen, "listen address \"%.200s\": an IPv6 host goes in brackets, as [::1]:18080", addr);
            return -1;
        }
        memmove(host, host + 1, n);
        host[n] = 0;
    }
    *port = (unsigned)p;
    return 0;
}

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

/* The whole of a small file (a certificate, a key, the credentials), NUL-terminated; NULL with errno. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *p = malloc(cap);
    while (p) {
        size_t n = fread(p + len, 1, cap - len - 1, f);
        len += n;
        if (len + 1 < cap || n == 0)
            break;
        if (cap >= (1u << 20)) { /* no certificate chain is that long */
            free(p);
            p = NULL;
            errno = EFBIG;
            break;
        }
        char *np = realloc(p, cap *= 2);
        if (!np)
            free(p);
        p = np;
    }
    if (p)
        p[len] = 0;
    fclose(f);
    return p;
}

static void http_free(struct http *h)
{
    free(h->user);
    free(h->cert);
    free(h->key);
    pthread_mutex_destroy(&h->log_mu);
    free(h);
}

/* Credentials "user:password" on the file's first line. */
static int load_auth(struct http *h, const char *path, char *err, size_t errlen)
{
    char *s = slurp(path);
    if (!s) {
        snprintf(err, errlen, "--http-auth-file %s: %s", path, strerror(errno));
        return -1;
    }
    s[strcspn(s, "\r\n")] = 0;
    char *colon = strchr(s, ':');
    if (!colon || colon == s || !colon[1]) {
        snprintf(err, errlen, "--http-auth-file %s: the first line must be user:password (both non-empty)", path);
        free(s);
        return -1;
    }
    *colon = 0;
    h->user = s;
    h->pass = colon + 1;
    return 0;
}

/* Binds and listens on addr as libmicrohttpd would (address reuse, an IPv6 socket for IPv6 only,
 * the longest backlog): the socket with the address bound in *bound, or -1 with a message. */
static int listen_on(const char *addr, const char *host, unsigned port, struct sockaddr_storage *bound, char *err,
                     size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai;
    int gai = getaddrinfo(*host ? host : NULL, "0", &hints, &ai);
    if (gai) {
        snprintf(err, errlen, "listen address \"%s\": %s", addr, gai_strerror(gai));
        return -1;
    }
    if (ai->ai_family == AF_INET)
        ((struct sockaddr_in *)ai->ai_addr)->sin_port = htons((uint16_t)port);
    else if (ai->ai_family == AF_INET6)
        ((struct sockaddr_in6 *)ai->ai_addr)->sin6_port = htons((uint16_t)port);
    socklen_t blen = sizeof *bound;
    int one = 1, fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        (ai->ai_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one)) ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, SOMAXCONN) ||
        getsockname(fd, (struct sockaddr *)bound, &blen)) {
        int errnum = errno;
        snprintf(err, errlen, "cannot listen on %s: %s%s; choose another with --addr or SIM_ADDR", addr,
                 strerror(errnum), errnum == EADDRINUSE ? " (another program, or another hwemu serve, has it)"
                                   : errnum == EADDRNOTAVAIL ? " (not an address of this host)" : "");
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

struct http *http_listen(const struct http_config *cfg, char *err, size_t errlen)
{
    char host[256];
    unsigned port;
    if (http_parse_addr(cfg->addr, host, sizeof host, &port, err, errlen))
        return NULL;
    struct http *h = calloc(1, sizeof *h);
    if (!h)
        abort();
    pthread_mutex_init(&h->log_mu, NULL);
    h->log_last = -60;
    h->fd = -1;
    h->tls = cfg->tls_cert || cfg->tls_key;
    if (cfg->auth_file && load_auth(h, cfg->auth_file, err, errlen))
        goto fail;
    if (h->tls) {
        if (!cfg->tls_cert || !cfg->tls_key) {
            snprintf(err, errlen, "TLS needs both --tls-cert and --tls-key (PEM files)");
            goto fail;
        }
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            snprintf(err, errlen, "this libmicrohttpd has no TLS support (Debian's is built with GnuTLS)");
            goto fail;
        }
        if (!(h->cert = slurp(cfg->tls_cert)) || !(h->key = slurp(cfg->tls_key))) {
            snprintf(err, errlen, "%s: %s", h->cert ? cfg->tls_key : cfg->tls_cert, strerror(errno));
            goto fail;
        }
    }
    unsigned max = cfg->max_connections ? cfg->max_connections : HTTP_DEFAULT_MAX_CONNECTIONS;
    /* every connection is a descriptor: make room for the budget above what the engine holds */
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)max + 256) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)max + 256 ? (rlim_t)max + 256 : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
        if (rl.rlim_cur < (rlim_t)max + 256) {
            unsigned fit = rl.rlim_cur > 512 ? (unsigned)(rl.rlim_cur - 256) : 256;
            snprintf(h->warning, sizeof h->warning, "the descriptor limit (ulimit -n %llu) holds %u HTTP "
                     "connections, not %u; raise ulimit -n for more", (unsigned long long)rl.rlim_cur, fit, max);
            max = fit;
        }
    }
    h->max = max;
    struct sockaddr_storage bound;
    if ((h->fd = listen_on(cfg->addr, host, port, &bound, err, errlen)) < 0)
        goto fail;
    h->port = ntohs(bound.ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)&bound)->sin6_port
                                                : ((const struct sockaddr_in *)&bound)->sin_port);
    snprintf(h->url, sizeof h->url, "%s://%s%s%s:%u", h->tls ? "https" : "http", strchr(host, ':') ? "[" : "",
             *host ? host : "0.0.0.0", strchr(host, ':') ? "]" : "", h->port);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (bound.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (h->tls)
        flags |= MHD_USE_TLS;
    struct MHD_OptionItem tls_opts[] = {
        {h->tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, h->cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, h->key},
        {MHD_OPTION_END, 0, NULL}};
    h->d = MHD_start_daemon(
        flags, h->port, accept_policy, h, handle, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
        MHD_OPTION_LISTEN_SOCKET, h->fd, MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_CONNECTION_LIMIT, max + 16,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_CONNECTION_TIMEOUT,
        cfg->timeout_s ? cfg->timeout_s : HTTP_DEFAULT_TIMEOUT_S, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
        MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
    h->fd = -1; /* the daemon's, started or not: MHD_stop_daemon closes it, a failed start has */
    if (!h->d) {
        snprintf(err, errlen, h->tls ? "cannot serve %s: the certificate and key are not a PEM pair GnuTLS can use "
                 "(check --tls-cert and --tls-key)" : "cannot serve %s", h->url);
        goto fail;
    }
    h->exposed = !is_loopback((const struct sockaddr *)&bound);
    return h;
fail:
    http_stop(h);
    return NULL;
}

void http_start(struct http *h, struct engine *e, const struct otlp *otlp)
{
    h->e = e;
    h->otlp = otlp;
    atomic_store(&h->ready, true); /* after both: a handler that sees it sees them */
    if (*h->warning) /* warnings once the engine is up, not for a start that fails */
        fprintf(stderr, "hwemu serve: warning: %s\n", h->warning);
    if (h->exposed)
        fprintf(stderr, "hwemu serve: warning: %s is reachable from other hosts%s%s; the default 127.0.0.1 keeps "
                "the API on this machine\n", h->url, h->user ? "" : ", with no authentication (--http-auth-file)",
                h->tls ? "" : ", in clear text (--tls-cert/--tls-key)");
}

const char *http_url(const struct http *h)
{
    return h->url;
}

void http_stop(struct http *h)
{
    if (!h)
        return;
    if (h->d)
        MHD_stop_daemon(h->d);
    if (h->fd >= 0)
        close(h->fd);
    http_free(h);
}
