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
 * Unknown route: 404. Never steps a node, never blocks the tick loop (RCU reads). */
#include "http.h"
#include "http_runs.h"

#include "engine.h"
#include "events.h"
#include "exporters.h"
#include "otlp.h"
#include "redfish.h"
#include "web.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct http {
    struct MHD_Daemon *d;
    struct engine *e;
    const struct otlp *otlp;
};

enum route { R_TELEMETRY, R_CONTROL, R_DEBUG, R_METRICS, R_HEALTH, R_EXPORTERS, R_REDFISH, R_PAGE, R_OTHER, R_NROUTES };
static const char *const route_names[R_NROUTES] = {"telemetry", "control", "debug",   "metrics", "healthz",
                                                   "exporters", "redfish", "page",    "other"};
_Static_assert(R_NROUTES <= sizeof ((struct engine *)0)->requests / sizeof ((struct engine *)0)->requests[0],
               "engine.requests counts every route");

struct buf {
    char *p;
    size_t len, cap;
};

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
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

static enum MHD_Result respond(struct MHD_Connection *c, unsigned code, const char *type, char *body, size_t len,
                            const char *allow)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    if (allow)
        MHD_add_response_header(r, "Allow", allow);
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

/* A file embedded in the binary: served from where it is, never copied or freed. */
static enum MHD_Result respond_static(struct MHD_Connection *c, const struct web_file *f)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(f->len, (void *)f->data, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", f->type);
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static const char *query_arg(void *ctx, const char *name)
{
    return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result send_json(struct MHD_Connection *c, unsigned code, cJSON *o)
{
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s)
        return MHD_NO;
    size_t n = strlen(s);
    char *body = realloc(s, n + 2);
    if (!body) {
        free(s);
        return MHD_NO;
    }
    body[n] = '\n';
    body[n + 1] = 0;
    return respond(c, code, "application/json", body, n + 1, NULL);
}

static enum MHD_Result json_error(struct MHD_Connection *c, unsigned code, const char *msg, const char *node,
                                  const char *allow)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", msg);
    if (node)
        cJSON_AddStringToObject(o, "node", node);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s ? respond(c, code, "application/json", s, strlen(s), allow) : MHD_NO;
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
    bprintf(b, "# HELP joulie_sim_requests_total HTTP requests served, by route.\n"
               "# TYPE joulie_sim_requests_total counter\n");
    for (int r = 0; r < R_NROUTES; r++)
        bprintf(b, "joulie_sim_requests_total{route=\"%s\"} %llu\n", route_names[r],
                (unsigned long long)atomic_load(&e->requests[r]));
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

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state)
{
    struct http *h = cls;
    struct engine *e = h->e;
    if (http_runs_route(url)) /* the run API collects its own body (http_runs.c) */
        return http_runs_handle(c, url, method, upload, upload_size, state);
    if (!*state) { /* first call: headers only; a body (if any) follows */
        *state = (void *)1;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0; /* the routes take no body: discard it */
        return MHD_YES;
    }
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    enum route r = !strncmp(url, "/telemetry/", 11) ? R_TELEMETRY : !strncmp(url, "/control/", 9) ? R_CONTROL
                   : !strncmp(url, "/debug/", 7) ? R_DEBUG : !strcmp(url, "/metrics") ? R_METRICS
                   : !strcmp(url, "/healthz") ? R_HEALTH
                   : !strcmp(url, "/exporters") || !strncmp(url, "/exporters/", 11) ? R_EXPORTERS
                   : !strcmp(url, "/redfish") || !strncmp(url, "/redfish/", 9) ? R_REDFISH
                   : !strcmp(url, "/") || !strncmp(url, "/ui/", 4) ? R_PAGE : R_OTHER;
    atomic_fetch_add(&e->requests[r], 1);
    enum MHD_Result ret;
    rcu_read_lock();
    const struct telemetry *t = rcu_dereference(e->telemetry);
    if (r == R_TELEMETRY) {
        const char *name = url + 11;
        const struct node_telemetry *nt = find(t, name);
        if (!get)
            ret = json_error(c, 405, "method not allowed: use GET", NULL, "GET, HEAD");
        else if (!nt)
            ret = json_error(c, 404, "no such node in the cluster spec (see /debug/nodes)", name, NULL);
        else
            ret = send_json(c, 200, telemetry_json(nt, t->wall_ns));
    } else if (r == R_CONTROL) {
        const char *name = url + 9;
        if (strcmp(method, "POST"))
            ret = json_error(c, 405, "method not allowed: use POST", NULL, "POST");
        else if (!find(t, name))
            ret = json_error(c, 404, "no such node in the cluster spec (see /debug/nodes)", name, NULL);
        else {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddBoolToObject(o, "ok", false);
            cJSON_AddStringToObject(o, "result", "blocked");
            cJSON_AddStringToObject(o, "node", name);
            cJSON_AddStringToObject(o, "message", "the node is emulated: its limits are written to its files "
                                                  "(powercap, cpufreq) through the shim, not through /control");
            ret = send_json(c, 409, o);
        }
    } else if (r == R_EXPORTERS) {
        char *body = NULL;
        size_t len = 0;
        const char *type = NULL;
        unsigned code = get ? exporters_http(e, t, url + 10, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
                                             "node"), &body, &len, &type) : 405;
        ret = code == 405 ? json_error(c, 405, "method not allowed: use GET", NULL, "GET, HEAD")
              : body      ? respond(c, code, type, body, len, NULL) : MHD_NO;
    } else if (r == R_REDFISH) { /* redfish.c */
        char *body = NULL;
        size_t len = 0;
        unsigned code = get ? redfish_http(t, url, &body, &len) : 405;
        ret = code == 405 ? json_error(c, 405, "method not allowed: use GET", NULL, "GET, HEAD")
              : body      ? respond(c, code, "application/json", body, len, NULL) : MHD_NO;
    } else if (r == R_PAGE) {
        struct web_file f;
        if (!get)
            ret = json_error(c, 405, "method not allowed: use GET", NULL, "GET, HEAD");
        else if (web_file(url, &f))
            ret = respond_static(c, &f);
        else if (!strcmp(url, "/"))
            ret = respond(c, 404, "text/plain; charset=utf-8", strdup(web_not_built_text), strlen(web_not_built_text),
                          NULL);
        else
            ret = json_error(c, 404, "no such file of the page", NULL, NULL);
    } else if (r == R_METRICS || r == R_HEALTH || r == R_DEBUG) {
        if (!get) {
            ret = json_error(c, 405, "method not allowed: use GET", NULL, "GET, HEAD");
        } else if (r == R_HEALTH) {
            ret = respond(c, 200, "text/plain; charset=utf-8", strdup("ok\n"), 3, NULL);
        } else if (r == R_METRICS) {
            struct buf b = {0};
            metrics(e, h->otlp, t, &b);
            ret = b.p ? respond(c, 200, "text/plain; version=0.0.4; charset=utf-8", b.p, b.len, NULL) : MHD_NO;
        } else if (!strcmp(url, "/debug/nodes") || !strcmp(url, "/debug/history")) {
            char err[256];
            cJSON *o = !strcmp(url, "/debug/nodes") ? web_nodes(t, query_arg, c, err, sizeof err)
                                                    : web_history(e, query_arg, c, err, sizeof err);
            ret = o ? send_json(c, 200, o) : json_error(c, 400, err, NULL, NULL);
        } else if (!strcmp(url, "/debug/cluster")) {
            ret = send_json(c, 200, web_cluster(e, t));
        } else if (!strcmp(url, "/debug/energy")) {
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
            ret = send_json(c, 200, o);
        } else if (!strcmp(url, "/debug/events")) {
            const char *node = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "node");
            const char *after_s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "after");
            const char *limit_s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
            char *end = NULL;
            unsigned long long after = after_s ? strtoull(after_s, &end, 10) : 0;
            bool bad = after_s && (!*after_s || *end || *after_s == '-');
            unsigned long long limit = limit_s ? strtoull(limit_s, &end, 10) : 0;
            bad = bad || (limit_s && (!*limit_s || *end || *limit_s == '-'));
            if (bad) {
                ret = json_error(c, 400, "after and limit are whole numbers >= 0 (after: the count of an earlier "
                                         "answer, for only newer events)", NULL, NULL);
            } else {
                uint64_t total = 0;
                char *arr = events_recent_json(e->events, node, after, (size_t)limit, &total);
                struct buf b = {0};
                bprintf(&b, "{\"count\":%llu,\"events\":%s}\n", (unsigned long long)total, arr ? arr : "[]");
                free(arr);
                ret = b.p ? respond(c, 200, "application/json", b.p, b.len, NULL) : MHD_NO;
            }
        } else {
            ret = json_error(c, 404, "no such route (see the README: /telemetry, /control, /debug/nodes, "
                                     "/debug/cluster, /debug/history, /debug/events, /debug/energy, /metrics; "
                                     "the page at /)", NULL, NULL);
        }
    } else {
        ret = json_error(c, 404, "no such route (see the README: /telemetry, /control, /debug/nodes, /debug/cluster, "
                                 "/debug/history, /debug/events, /debug/energy, /metrics; the page at /)", NULL, NULL);
    }
    rcu_read_unlock();
    return ret;
}

struct http *http_start(struct engine *e, const struct otlp *otlp, const char *addr, char *err, size_t errlen)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    if (!colon || !colon[1] || (size_t)(colon - addr) >= sizeof host) {
        snprintf(err, errlen, "listen address \"%s\" is not host:port (e.g. 127.0.0.1:18080)", addr);
        return NULL;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = 0;
    if (host[0] == '[') { /* [::1]:18080 */
        memmove(host, host + 1, strlen(host));
        host[strcspn(host, "]")] = 0;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai;
    int gai = getaddrinfo(*host ? host : NULL, colon + 1, &hints, &ai);
    if (gai) {
        snprintf(err, errlen, "listen address \"%s\": %s", addr, gai_strerror(gai));
        return NULL;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    uint16_t port = (uint16_t)atoi(colon + 1);
    struct http *h = calloc(1, sizeof *h);
    if (!h)
        abort();
    h->e = e;
    h->otlp = otlp;
    struct MHD_Daemon *d = MHD_start_daemon(flags, port, NULL, NULL, handle, h, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                                            MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
                                            MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!d) {
        snprintf(err, errlen, "cannot listen on %s (in use, or not an address of this host?); choose another with "
                 "--addr or SIM_ADDR", addr);
        free(h);
        return NULL;
    }
    h->d = d;
    return h;
}

void http_stop(struct http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    free(h);
}
