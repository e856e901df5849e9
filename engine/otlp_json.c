/* otlp_json: the OTLP/HTTP JSON bodies hwemu sends; see otlp.h.
 * Owns the mapping from the engine's telemetry to the OpenTelemetry hardware semantic
 * conventions (schema 1.37.0) and the JSON encoding rules of OTLP: lowerCamelCase keys, enums as
 * integers, every 64-bit integer (timestamps, asInt, intValue) as a decimal string, doubles as
 * numbers and never a non-finite one (such a point is left out). It never does I/O.
 *
 * One ResourceMetrics per node, identified the way Prometheus' OTLP receiver wants it:
 * service.name (job), service.instance.id = the node (instance), host.name, and the pool and
 * profile (target_info labels). A node with neither RAPL limits nor GPUs has nothing a real
 * collector could read (a VM), so it gets no resource at all; a host whose RAPL zones count
 * energy without limits is left out the same way unless it has GPUs. Components: CPU packages
 * (hw.type cpu), their DRAM zones (memory) and GPUs (gpu, with the GPU group's hw.vendor and
 * hw.model); the host's energy and power include the GPUs. */
#include "otlp.h"

#include "engine.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA_URL "https://opentelemetry.io/schemas/1.37.0"
#define SCOPE_NAME "hwemu"
#define SCOPE_VERSION "0.1.0"

static void add_u64_string(cJSON *o, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    cJSON_AddStringToObject(o, key, buf);
}

static void kv_str(cJSON *arr, const char *key, const char *val)
{
    cJSON *kv = cJSON_CreateObject(), *v = cJSON_CreateObject();
    cJSON_AddStringToObject(kv, "key", key);
    cJSON_AddStringToObject(v, "stringValue", val ? val : "");
    cJSON_AddItemToObject(kv, "value", v);
    cJSON_AddItemToArray(arr, kv);
}

/* An event attribute as an AnyValue: integers as intValue (a string), other numbers as
 * doubleValue, objects and arrays as their JSON text. */
static cJSON *any_value(const cJSON *j)
{
    cJSON *v = cJSON_CreateObject();
    if (cJSON_IsString(j)) {
        cJSON_AddStringToObject(v, "stringValue", j->valuestring);
    } else if (cJSON_IsBool(j)) {
        cJSON_AddBoolToObject(v, "boolValue", cJSON_IsTrue(j));
    } else if (cJSON_IsNumber(j) && isfinite(j->valuedouble)) {
        double d = j->valuedouble;
        if (d == floor(d) && fabs(d) < 9007199254740992.0) {
            char buf[32];
            snprintf(buf, sizeof buf, "%lld", (long long)d);
            cJSON_AddStringToObject(v, "intValue", buf);
        } else {
            cJSON_AddNumberToObject(v, "doubleValue", d);
        }
    } else {
        char *text = cJSON_PrintUnformatted(j);
        cJSON_AddStringToObject(v, "stringValue", text ? text : "");
        free(text);
    }
    return v;
}

static cJSON *resource(const struct otlp_resource *r, const char *node, const char *pool, const char *profile)
{
    cJSON *res = cJSON_CreateObject(), *attrs = cJSON_AddArrayToObject(res, "attributes");
    kv_str(attrs, "service.name", r->service_name);
    kv_str(attrs, "service.instance.id", node);
    kv_str(attrs, "host.name", node);
    /* OTEL_RESOURCE_ATTRIBUTES, except what identifies the node (keys stay unique) */
    for (int i = 0; i < r->nextra; i++) {
        const char *k = r->extra[i].key;
        if (strcmp(k, "service.instance.id") && strcmp(k, "host.name") && strcmp(k, "service.name") &&
            !(pool && !strcmp(k, "hwemu.pool")) && !(profile && !strcmp(k, "hwemu.profile")))
            kv_str(attrs, k, r->extra[i].value);
    }
    if (pool)
        kv_str(attrs, "hwemu.pool", pool);
    if (profile)
        kv_str(attrs, "hwemu.profile", profile);
    return res;
}

static cJSON *scope(void)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "name", SCOPE_NAME);
    cJSON_AddStringToObject(s, "version", SCOPE_VERSION);
    return s;
}

/* A metric with an empty point list: a cumulative monotonic Sum or a Gauge. */
static cJSON *metric(cJSON *metrics, const char *name, const char *unit, const char *desc, bool sum)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", name);
    cJSON_AddStringToObject(m, "description", desc);
    cJSON_AddStringToObject(m, "unit", unit);
    cJSON *body = cJSON_AddObjectToObject(m, sum ? "sum" : "gauge");
    cJSON *points = cJSON_AddArrayToObject(body, "dataPoints");
    if (sum) {
        cJSON_AddNumberToObject(body, "aggregationTemporality", 2); /* CUMULATIVE */
        cJSON_AddBoolToObject(body, "isMonotonic", 1);
    }
    cJSON_AddItemToArray(metrics, m);
    return points;
}

struct point_ctx {
    uint64_t start_ns, time_ns;
};

/* A data point with its component attributes (hw.id, then optional hw.type, hw.parent,
 * hw.name, hw.sensor_location: NULL leaves one out). */
static cJSON *point(cJSON *points, const struct point_ctx *c, bool sum, const char *id, const char *type,
                    const char *parent, const char *name, const char *location)
{
    cJSON *p = cJSON_CreateObject(), *attrs = cJSON_AddArrayToObject(p, "attributes");
    kv_str(attrs, "hw.id", id);
    if (type)
        kv_str(attrs, "hw.type", type);
    if (parent)
        kv_str(attrs, "hw.parent", parent);
    if (name)
        kv_str(attrs, "hw.name", name);
    if (location)
        kv_str(attrs, "hw.sensor_location", location);
    if (sum)
        add_u64_string(p, "startTimeUnixNano", c->start_ns);
    add_u64_string(p, "timeUnixNano", c->time_ns);
    cJSON_AddItemToArray(points, p);
    return p;
}

static void as_double(cJSON *points, cJSON *p, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(p, "asDouble", v);
    else /* not representable in OTLP JSON: leave the point out */
        cJSON_DeleteItemFromArray(points, cJSON_GetArraySize(points) - 1);
}

/* A data point of GPU k: hw.id gpu<k>, hw.type gpu, the vendor's name and the product. */
static cJSON *gpu_point(cJSON *points, const struct point_ctx *c, bool sum, const struct node_telemetry *n, int k)
{
    static const char *const vendors[][2] = {{"nvidia", "NVIDIA"}, {"amd", "AMD"}, {"intel", "Intel"}};
    const char *vendor = n->gpu_vendor;
    for (size_t v = 0; v < sizeof vendors / sizeof vendors[0]; v++)
        if (!strcmp(vendor, vendors[v][0]))
            vendor = vendors[v][1];
    char id[32];
    snprintf(id, sizeof id, "gpu%d", k);
    cJSON *p = point(points, c, sum, id, "gpu", NULL, NULL, NULL), *attrs = cJSON_GetObjectItem(p, "attributes");
    kv_str(attrs, "hw.vendor", vendor);
    kv_str(attrs, "hw.model", n->gpu_product);
    return p;
}

static cJSON *node_metrics(const struct node_telemetry *n, const struct point_ctx *c)
{
    cJSON *metrics = cJSON_CreateArray(), *pts;
    char id[32], parent[32], name[32], loc[32];

    pts = metric(metrics, "hw.host.energy", "J", "Energy consumed by the host's RAPL zones (packages and DRAM) and "
                 "GPUs.", true);
    add_u64_string(point(pts, c, true, "host", NULL, NULL, NULL, NULL), "asInt", n->node_energy_uj / 1000000);
    pts = metric(metrics, "hw.host.power", "W", "Instantaneous power of the whole host.", false);
    as_double(pts, point(pts, c, false, "host", NULL, NULL, NULL, NULL), n->node_power_w);
    pts = metric(metrics, "hw.host.ambient_temperature", "Cel", "Ambient (inlet) temperature of the host.", false);
    as_double(pts, point(pts, c, false, "host", NULL, NULL, NULL, NULL), n->ambient_c);

    cJSON *energy = metric(metrics, "hw.energy", "J", "Energy consumed by the component.", true);
    cJSON *power = metric(metrics, "hw.power", "W", "Instantaneous power consumed by the component.", false);
    for (int k = 0; k < n->npkgs; k++) {
        snprintf(id, sizeof id, "cpu%d", k);
        snprintf(name, sizeof name, "package-%d", k);
        as_double(energy, point(energy, c, true, id, "cpu", NULL, name, NULL), (double)n->pkg_energy_uj[k] / 1e6);
        as_double(power, point(power, c, false, id, "cpu", NULL, name, NULL), n->pkg_power_w[k]);
    }
    for (int k = 0; k < n->npkgs; k++) {
        if (!n->dram_energy_uj[k] && !(n->pkg_dram_power_w[k] > 0))
            continue; /* no DRAM zone on this package */
        snprintf(id, sizeof id, "memory%d", k);
        snprintf(parent, sizeof parent, "cpu%d", k);
        snprintf(name, sizeof name, "dram-%d", k);
        as_double(energy, point(energy, c, true, id, "memory", parent, name, NULL),
                  (double)n->dram_energy_uj[k] / 1e6);
        as_double(power, point(power, c, false, id, "memory", parent, name, NULL), n->pkg_dram_power_w[k]);
    }
    for (int k = 0; k < n->ngpus; k++) {
        as_double(energy, gpu_point(energy, c, true, n, k), (double)n->gpu_energy_uj[k] / 1e6);
        as_double(power, gpu_point(power, c, false, n, k), n->gpu_power_w[k]);
    }

    pts = metric(metrics, "hw.temperature", "Cel", "Temperature of the CPU package or GPU.", false);
    for (int k = 0; k < n->npkgs; k++) {
        snprintf(id, sizeof id, "cpu%d_temperature", k);
        snprintf(parent, sizeof parent, "cpu%d", k);
        snprintf(loc, sizeof loc, "CPU%d", k);
        as_double(pts, point(pts, c, false, id, "temperature", parent, NULL, loc), n->pkg_temp_c[k]);
    }
    for (int k = 0; k < n->ngpus; k++) {
        snprintf(id, sizeof id, "gpu%d_temperature", k);
        snprintf(parent, sizeof parent, "gpu%d", k);
        snprintf(loc, sizeof loc, "GPU%d", k);
        as_double(pts, point(pts, c, false, id, "temperature", parent, NULL, loc), n->gpu_temp_c[k]);
    }
    pts = metric(metrics, "hw.cpu.speed", "Hz", "Current frequency of the CPU package.", false);
    for (int k = 0; k < n->npkgs; k++) {
        snprintf(id, sizeof id, "cpu%d", k);
        char hz[32];
        snprintf(hz, sizeof hz, "%" PRId64, n->pkg_freq_khz[k] * 1000);
        cJSON_AddStringToObject(point(pts, c, false, id, NULL, NULL, NULL, NULL), "asInt", hz);
    }
    return metrics;
}

char *otlp_metrics_json(const struct telemetry *t, const struct otlp_resource *r, int64_t start_wall_ns)
{
    struct point_ctx c = {.start_ns = (uint64_t)start_wall_ns, .time_ns = (uint64_t)t->wall_ns};
    if (c.start_ns > c.time_ns)
        c.start_ns = c.time_ns;
    cJSON *req = cJSON_CreateObject(), *rms = cJSON_AddArrayToObject(req, "resourceMetrics");
    int count = 0;
    for (int i = 0; i < t->n; i++) {
        const struct node_telemetry *n = &t->nodes[i];
        if (!n->ngpus && (!n->has_rapl || !n->npkgs))
            continue; /* a VM: nothing a real collector could read */
        cJSON *rm = cJSON_CreateObject();
        cJSON_AddItemToObject(rm, "resource", resource(r, n->name, n->pool, n->profile));
        cJSON *sms = cJSON_AddArrayToObject(rm, "scopeMetrics"), *sm = cJSON_CreateObject();
        cJSON_AddItemToObject(sm, "scope", scope());
        cJSON_AddItemToObject(sm, "metrics", node_metrics(n, &c));
        cJSON_AddStringToObject(sm, "schemaUrl", SCHEMA_URL);
        cJSON_AddItemToArray(sms, sm);
        cJSON_AddStringToObject(rm, "schemaUrl", SCHEMA_URL);
        cJSON_AddItemToArray(rms, rm);
        count++;
    }
    char *out = count ? cJSON_PrintUnformatted(req) : NULL;
    cJSON_Delete(req);
    return out;
}

cJSON *otlp_log_record(int64_t wall_ns, const char *name, const cJSON *attrs)
{
    cJSON *rec = cJSON_CreateObject();
    add_u64_string(rec, "timeUnixNano", (uint64_t)wall_ns);
    add_u64_string(rec, "observedTimeUnixNano", (uint64_t)wall_ns);
    bool warn = strstr(name, "rejected") || strstr(name, "reverted") || strstr(name, "lost");
    cJSON_AddNumberToObject(rec, "severityNumber", warn ? 13 : 9); /* WARN, INFO */
    cJSON_AddStringToObject(rec, "severityText", warn ? "WARN" : "INFO");
    cJSON_AddStringToObject(rec, "eventName", name);
    cJSON *body = cJSON_AddObjectToObject(rec, "body");
    cJSON_AddStringToObject(body, "stringValue", name);
    cJSON *arr = cJSON_AddArrayToObject(rec, "attributes");
    const cJSON *a;
    cJSON_ArrayForEach(a, attrs)
    {
        if (!a->string)
            continue;
        cJSON *kv = cJSON_CreateObject();
        cJSON_AddStringToObject(kv, "key", a->string);
        cJSON_AddItemToObject(kv, "value", any_value(a));
        cJSON_AddItemToArray(arr, kv);
    }
    return rec;
}

char *otlp_logs_json(const struct otlp_log *logs, int n, const struct otlp_resource *r)
{
    cJSON *req = cJSON_CreateObject(), *rls = cJSON_AddArrayToObject(req, "resourceLogs");
    char *done = calloc((size_t)(n ? n : 1), 1);
    if (!done)
        abort();
    for (int i = 0; i < n; i++) {
        if (done[i])
            continue;
        cJSON *rl = cJSON_CreateObject();
        cJSON_AddItemToObject(rl, "resource", resource(r, logs[i].node, NULL, NULL));
        cJSON *sls = cJSON_AddArrayToObject(rl, "scopeLogs"), *sl = cJSON_CreateObject();
        cJSON_AddItemToObject(sl, "scope", scope());
        cJSON *recs = cJSON_AddArrayToObject(sl, "logRecords");
        for (int j = i; j < n; j++) {
            if (done[j] || strcmp(logs[j].node, logs[i].node))
                continue;
            cJSON_AddItemToArray(recs, cJSON_Duplicate(logs[j].record, 1));
            done[j] = 1;
        }
        cJSON_AddStringToObject(sl, "schemaUrl", SCHEMA_URL);
        cJSON_AddItemToArray(sls, sl);
        cJSON_AddItemToArray(rls, rl);
    }
    free(done);
    char *out = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    return out;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Trimmed and percent-decoded copy of [s, e). */
static char *decode(const char *s, const char *e)
{
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    char *out = malloc((size_t)(e - s) + 1), *o = out;
    if (!out)
        abort();
    for (; s < e; s++) {
        int h, l;
        if (*s == '%' && e - s >= 3 && (h = hexval(s[1])) >= 0 && (l = hexval(s[2])) >= 0) {
            *o++ = (char)(h * 16 + l);
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
    return out;
}

int otlp_parse_kv_list(const char *s, struct otlp_kv **out, int *n)
{
    while (s && *s) {
        const char *end = strchr(s, ','), *eq;
        if (!end)
            end = s + strlen(s);
        eq = memchr(s, '=', (size_t)(end - s));
        char *key = eq ? decode(s, eq) : NULL;
        if (!eq || !*key) {
            bool blank = true;
            for (const char *p = s; p < end; p++)
                if (*p != ' ' && *p != '\t')
                    blank = false;
            free(key);
            if (!blank)
                return -1;
        } else {
            struct otlp_kv *nk = realloc(*out, sizeof **out * (size_t)(*n + 1));
            if (!nk)
                abort();
            *out = nk;
            nk[*n].key = key;
            nk[*n].value = decode(eq + 1, end);
            (*n)++;
        }
        s = *end ? end + 1 : end;
    }
    return 0;
}

void otlp_free_kv(struct otlp_kv *kv, int n)
{
    for (int i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);
}
