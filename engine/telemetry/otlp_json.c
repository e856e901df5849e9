/* otlp_json: the OTLP/HTTP JSON bodies hwemu sends; see otlp.h.
 * Owns the mapping from the engine's telemetry to the OpenTelemetry hardware semantic
 * conventions (schema 1.37.0) and the JSON encoding rules of OTLP: lowerCamelCase keys, enums as
 * integers, every 64-bit integer (timestamps, asInt, intValue) as a decimal string, doubles as
 * numbers and never a non-finite one (such a point is left out). It never does I/O.
 *
 * The bodies are written straight into one growing buffer: a metrics batch of 1,000 nodes is
 * megabytes, and building it as a cJSON tree first cost most of the exporter's CPU time (the
 * allocations, and printing each number twice to find its shortest form). Energies are written
 * from their integer microjoules as exact decimals (123.456789), other doubles with %.17g
 * (the C locale: hwemu never calls setlocale).
 *
 * One ResourceMetrics per node, identified the way Prometheus' OTLP receiver wants it:
 * service.name (job), service.instance.id = the node (instance), host.name, and the pool and
 * profile (target_info labels). A node gets a resource only with something a real collector
 * could read: a powercap zone that counts energy, or a GPU (a VM has neither). Components: CPU
 * packages with a package zone (hw.type cpu), their DRAM zones (memory) and GPUs (gpu, with the
 * GPU group's hw.vendor and hw.model); the host's energy and power include the GPUs.
 *
 * Last, one ResourceMetrics for the facility: service.instance.id = the cluster's name,
 * hwemu.role = facility, no host.name. Its ambient is hw.temperature (hw.id ambient, and
 * <zone>_ambient per cooling zone with hw.sensor_location the zone); its IT power and energy
 * have no semantic convention (hw.host.* is one host, and hw.power/hw.energy are summed per
 * component), so they are hwemu.facility.it.power (W, gauge: every node's power summed, as
 * /metrics' joulie_sim_facility_it_power_watts) and hwemu.facility.it.energy (J, cumulative:
 * every node's platform counter and GPUs, so its rate is the IT power). */
#include "otlp.h"

#include "engine.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA_URL "https://opentelemetry.io/schemas/1.37.0"
#define SCOPE "{\"name\":\"hwemu\",\"version\":\"0.1.0\"}"
#define ZONE(z) (1u << (z))

/* --- a growing buffer and the JSON values written into it --- */

struct jb {
    char *p;
    size_t len, cap;
};

static char *room(struct jb *b, size_t n)
{
    if (b->len + n >= b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap <= b->len + n)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np)
            abort();
        b->p = np;
        b->cap = cap;
    }
    return b->p + b->len;
}

static void put(struct jb *b, const char *s, size_t n)
{
    memcpy(room(b, n), s, n);
    b->len += n;
}

#define PUT(b, lit) put(b, lit, sizeof lit - 1)

/* Before an array element or an object member: a comma unless it is the first. */
static void sep(struct jb *b)
{
    char c = b->len ? b->p[b->len - 1] : '[';
    if (c != '[' && c != '{')
        PUT(b, ",");
}

static void str(struct jb *b, const char *s)
{
    char *o = room(b, strlen(s) * 6 + 2), *start = o;
    *o++ = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            *o++ = '\\';
            *o++ = (char)*p;
        } else if (*p < 0x20) {
            o += sprintf(o, "\\u%04x", *p);
        } else {
            *o++ = (char)*p;
        }
    }
    *o++ = '"';
    b->len += (size_t)(o - start);
}

static void u64(struct jb *b, uint64_t v)
{
    char t[20];
    int i = 20;
    do
        t[--i] = (char)('0' + v % 10);
    while (v /= 10);
    put(b, t + i, (size_t)(20 - i));
}

/* A 64-bit integer as OTLP JSON wants it: a decimal string. */
static void u64s(struct jb *b, uint64_t v)
{
    PUT(b, "\"");
    u64(b, v);
    PUT(b, "\"");
}

/* Microjoules as joules, exactly: 123456789 -> 123.456789. */
static void joules(struct jb *b, uint64_t uj)
{
    char frac[8] = {'.'};
    u64(b, uj / 1000000);
    for (int i = 6, f = (int)(uj % 1000000); i >= 1; i--, f /= 10)
        frac[i] = (char)('0' + f % 10);
    put(b, frac, 7);
}

static void kv(struct jb *b, const char *key, const char *val)
{
    sep(b);
    PUT(b, "{\"key\":");
    str(b, key);
    PUT(b, ",\"value\":{\"stringValue\":");
    str(b, val ? val : "");
    PUT(b, "}}");
}

/* --- resources --- */

/* "resource": service.name, service.instance.id = instance, host.name = instance on a host,
 * OTEL_RESOURCE_ATTRIBUTES except the keys the resource sets itself, then own (key, value
 * pairs, NULL-terminated; may be NULL). */
static void resource(struct jb *b, const struct otlp_resource *r, const char *instance, bool host,
                     const char *const *own)
{
    PUT(b, "\"resource\":{\"attributes\":[");
    kv(b, "service.name", r->service_name);
    kv(b, "service.instance.id", instance);
    if (host)
        kv(b, "host.name", instance);
    for (int i = 0; i < r->nextra; i++) {
        const char *k = r->extra[i].key;
        bool mine = !strcmp(k, "service.instance.id") || !strcmp(k, "host.name") || !strcmp(k, "service.name");
        for (int j = 0; own && own[j] && !mine; j += 2)
            mine = !strcmp(k, own[j]);
        if (!mine)
            kv(b, k, r->extra[i].value);
    }
    for (int j = 0; own && own[j]; j += 2)
        kv(b, own[j], own[j + 1]);
    PUT(b, "]}");
}

/* A ResourceMetrics up to its metrics array; close it with resource_metrics_end. */
static void resource_metrics(struct jb *b, const struct otlp_resource *r, const char *instance, bool host,
                             const char *const *own)
{
    sep(b);
    PUT(b, "{");
    resource(b, r, instance, host, own);
    PUT(b, ",\"scopeMetrics\":[{\"scope\":" SCOPE ",\"metrics\":[");
}

static void resource_metrics_end(struct jb *b)
{
    PUT(b, "],\"schemaUrl\":\"" SCHEMA_URL "\"}],\"schemaUrl\":\"" SCHEMA_URL "\"}");
}

/* --- metrics and points --- */

struct point_ctx {
    uint64_t start_ns, time_ns;
};

/* A metric being written: it opens at its first point (a metric without points is left out)
 * and is closed by metric_end. */
struct metric {
    struct jb *b;
    const struct point_ctx *c;
    const char *name, *unit, *desc;
    bool sum, open; /* sum: a cumulative monotonic Sum, else a Gauge */
};

static struct metric metric(struct jb *b, const struct point_ctx *c, const char *name, const char *unit,
                            const char *desc, bool sum)
{
    return (struct metric){.b = b, .c = c, .name = name, .unit = unit, .desc = desc, .sum = sum};
}

static void metric_end(struct metric *m)
{
    if (m->open)
        PUT(m->b, "]}}");
}

/* A data point's component attributes; NULL leaves one out. */
struct comp {
    const char *id, *type, *parent, *name, *location, *vendor, *model;
};

/* A data point up to its value. */
static void point(struct metric *m, const struct comp *a)
{
    struct jb *b = m->b;
    if (!m->open) {
        sep(b);
        PUT(b, "{\"name\":");
        str(b, m->name);
        PUT(b, ",\"description\":");
        str(b, m->desc);
        PUT(b, ",\"unit\":");
        str(b, m->unit);
        if (m->sum)
            PUT(b, ",\"sum\":{\"aggregationTemporality\":2,\"isMonotonic\":true,\"dataPoints\":["); /* CUMULATIVE */
        else
            PUT(b, ",\"gauge\":{\"dataPoints\":[");
        m->open = true;
    }
    sep(b);
    PUT(b, "{\"attributes\":[");
    static const char *const keys[] = {"hw.id", "hw.type", "hw.parent", "hw.name", "hw.sensor_location",
                                       "hw.vendor", "hw.model"};
    const char *const vals[] = {a->id, a->type, a->parent, a->name, a->location, a->vendor, a->model};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (vals[i])
            kv(b, keys[i], vals[i]);
    PUT(b, "]");
    if (m->sum) {
        PUT(b, ",\"startTimeUnixNano\":");
        u64s(b, m->c->start_ns);
    }
    PUT(b, ",\"timeUnixNano\":");
    u64s(b, m->c->time_ns);
}

static void point_double(struct metric *m, const struct comp *a, double v)
{
    if (!isfinite(v))
        return; /* not representable in OTLP JSON: no point */
    point(m, a);
    snprintf(room(m->b, 40), 40, ",\"asDouble\":%.17g}", v);
    m->b->len += strlen(m->b->p + m->b->len);
}

static void point_joules(struct metric *m, const struct comp *a, uint64_t uj)
{
    point(m, a);
    PUT(m->b, ",\"asDouble\":");
    joules(m->b, uj);
    PUT(m->b, "}");
}

static void point_int(struct metric *m, const struct comp *a, uint64_t v)
{
    point(m, a);
    PUT(m->b, ",\"asInt\":");
    u64s(m->b, v);
    PUT(m->b, "}");
}

/* The hw.energy (energy) or hw.power points of a node's components: CPU packages, DRAM zones,
 * GPUs. */
static void components(struct metric *m, const struct node_telemetry *n, bool energy)
{
    static const char *const vendors[][2] = {{"nvidia", "NVIDIA"}, {"amd", "AMD"}, {"intel", "Intel"}};
    char id[32], parent[32], name[32];
    for (int k = 0; k < n->npkgs; k++) {
        if (!(n->pkg_zones[k] & ZONE(PHYS_ZONE_PACKAGE)))
            continue;
        snprintf(id, sizeof id, "cpu%d", k);
        snprintf(name, sizeof name, "package-%d", k);
        struct comp a = {.id = id, .type = "cpu", .name = name};
        energy ? point_joules(m, &a, n->pkg_energy_uj[k]) : point_double(m, &a, n->pkg_power_w[k]);
    }
    for (int k = 0; k < n->npkgs; k++) {
        if (!(n->pkg_zones[k] & ZONE(PHYS_ZONE_DRAM)))
            continue;
        snprintf(id, sizeof id, "memory%d", k);
        snprintf(parent, sizeof parent, "cpu%d", k);
        snprintf(name, sizeof name, "dram-%d", k);
        struct comp a = {.id = id, .type = "memory", .parent = parent, .name = name};
        energy ? point_joules(m, &a, n->dram_energy_uj[k]) : point_double(m, &a, n->pkg_dram_power_w[k]);
    }
    const char *vendor = n->gpu_vendor;
    for (size_t v = 0; v < sizeof vendors / sizeof vendors[0]; v++)
        if (!strcmp(vendor, vendors[v][0]))
            vendor = vendors[v][1];
    for (int k = 0; k < n->ngpus; k++) {
        snprintf(id, sizeof id, "gpu%d", k);
        struct comp a = {.id = id, .type = "gpu", .vendor = vendor, .model = n->gpu_product};
        energy ? point_joules(m, &a, n->gpu_energy_uj[k]) : point_double(m, &a, n->gpu_power_w[k]);
    }
}

static void node_metrics(struct jb *b, const struct node_telemetry *n, const struct point_ctx *c)
{
    char id[32], parent[32], loc[32];
    const struct comp host = {.id = "host"};
    struct metric m = metric(b, c, "hw.host.energy", "J",
                             "Energy consumed by the host's RAPL zones (packages and DRAM) and GPUs.", true);
    point_int(&m, &host, n->node_energy_uj / 1000000);
    metric_end(&m);
    m = metric(b, c, "hw.host.power", "W", "Instantaneous power of the whole host.", false);
    point_double(&m, &host, n->node_power_w);
    metric_end(&m);
    m = metric(b, c, "hw.host.ambient_temperature", "Cel", "Ambient (inlet) temperature of the host.", false);
    point_double(&m, &host, n->ambient_c);
    metric_end(&m);

    m = metric(b, c, "hw.energy", "J", "Energy consumed by the component.", true);
    components(&m, n, true);
    metric_end(&m);
    m = metric(b, c, "hw.power", "W", "Instantaneous power consumed by the component.", false);
    components(&m, n, false);
    metric_end(&m);

    m = metric(b, c, "hw.temperature", "Cel", "Temperature of the CPU package or GPU.", false);
    for (int k = 0; k < n->npkgs; k++) {
        if (!(n->pkg_zones[k] & ZONE(PHYS_ZONE_PACKAGE)))
            continue;
        snprintf(id, sizeof id, "cpu%d_temperature", k);
        snprintf(parent, sizeof parent, "cpu%d", k);
        snprintf(loc, sizeof loc, "CPU%d", k);
        point_double(&m, &(struct comp){.id = id, .type = "temperature", .parent = parent, .location = loc},
                     n->pkg_temp_c[k]);
    }
    for (int k = 0; k < n->ngpus; k++) {
        snprintf(id, sizeof id, "gpu%d_temperature", k);
        snprintf(parent, sizeof parent, "gpu%d", k);
        snprintf(loc, sizeof loc, "GPU%d", k);
        point_double(&m, &(struct comp){.id = id, .type = "temperature", .parent = parent, .location = loc},
                     n->gpu_temp_c[k]);
    }
    metric_end(&m);
    m = metric(b, c, "hw.cpu.speed", "Hz", "Current frequency of the CPU package.", false);
    for (int k = 0; k < n->npkgs; k++) {
        if (!(n->pkg_zones[k] & ZONE(PHYS_ZONE_PACKAGE)))
            continue;
        snprintf(id, sizeof id, "cpu%d", k);
        point_int(&m, &(struct comp){.id = id}, (uint64_t)n->pkg_freq_khz[k] * 1000);
    }
    metric_end(&m);
}

static void facility_metrics(struct jb *b, const struct telemetry *t, const struct point_ctx *c)
{
    struct metric m = metric(b, c, "hw.temperature", "Cel",
                             "Ambient temperature of the facility, and of each cooling zone (with its offset).", false);
    point_double(&m, &(struct comp){.id = "ambient", .type = "temperature", .location = "facility"}, t->ambient_c);
    for (int z = 0; z < t->facility->nzones; z++) {
        const struct cooling_zone *cz = &t->facility->zones[z];
        char id[256];
        snprintf(id, sizeof id, "%s_ambient", cz->name);
        point_double(&m, &(struct comp){.id = id, .type = "temperature", .location = cz->name},
                     t->ambient_c + cz->offset_c);
    }
    metric_end(&m);
    double it_w = 0;
    uint64_t it_uj = 0;
    for (int i = 0; i < t->n; i++) {
        const struct node_telemetry *n = &t->nodes[i];
        it_w += n->node_power_w;
        it_uj += n->platform_energy_uj;
        for (int k = 0; k < n->ngpus; k++)
            it_uj += n->gpu_energy_uj[k];
    }
    m = metric(b, c, "hwemu.facility.it.power", "W", "IT power of the facility: every node's power summed.", false);
    point_double(&m, &(struct comp){0}, it_w);
    metric_end(&m);
    m = metric(b, c, "hwemu.facility.it.energy", "J",
               "IT energy of the facility: every node's platform and GPUs (its rate is the IT power).", true);
    point_joules(&m, &(struct comp){0}, it_uj);
    metric_end(&m);
}

char *otlp_metrics_json(const struct telemetry *t, const struct otlp_resource *r, int64_t start_wall_ns)
{
    if (!t->n)
        return NULL; /* nothing to send: an empty envelope is not */
    struct point_ctx c = {.start_ns = (uint64_t)start_wall_ns, .time_ns = (uint64_t)t->wall_ns};
    if (c.start_ns > c.time_ns)
        c.start_ns = c.time_ns;
    struct jb b = {0};
    PUT(&b, "{\"resourceMetrics\":[");
    for (int i = 0; i < t->n; i++) {
        const struct node_telemetry *n = &t->nodes[i];
        if (!n->ngpus && !n->has_energy_zones)
            continue; /* a VM: nothing a real collector could read */
        resource_metrics(&b, r, n->name, true,
                         (const char *const[]){"hwemu.pool", n->pool, "hwemu.profile", n->profile, NULL});
        node_metrics(&b, n, &c);
        resource_metrics_end(&b);
    }
    resource_metrics(&b, r, t->cluster, false, (const char *const[]){"hwemu.role", "facility", NULL});
    facility_metrics(&b, t, &c);
    resource_metrics_end(&b);
    put(&b, "]}", 3); /* with its NUL */
    return b.p;
}

/* --- logs: a LogRecord is built as a cJSON object when the event happens (otlp_event) --- */

static void add_u64_string(cJSON *o, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    cJSON_AddStringToObject(o, key, buf);
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
        cJSON *item = cJSON_CreateObject();
        cJSON_AddStringToObject(item, "key", a->string);
        cJSON_AddItemToObject(item, "value", any_value(a));
        cJSON_AddItemToArray(arr, item);
    }
    return rec;
}

char *otlp_logs_json(const struct otlp_log *logs, int n, const struct otlp_resource *r)
{
    struct jb b = {0};
    char *done = calloc((size_t)(n ? n : 1), 1);
    if (!done)
        abort();
    PUT(&b, "{\"resourceLogs\":[");
    for (int i = 0; i < n; i++) {
        if (done[i])
            continue;
        sep(&b);
        PUT(&b, "{");
        resource(&b, r, logs[i].node, true, NULL);
        PUT(&b, ",\"scopeLogs\":[{\"scope\":" SCOPE ",\"logRecords\":[");
        for (int j = i; j < n; j++) {
            if (done[j] || strcmp(logs[j].node, logs[i].node))
                continue;
            char *rec = cJSON_PrintUnformatted(logs[j].record);
            if (!rec)
                abort();
            sep(&b);
            put(&b, rec, strlen(rec));
            free(rec);
            done[j] = 1;
        }
        PUT(&b, "],\"schemaUrl\":\"" SCHEMA_URL "\"}]}");
    }
    free(done);
    put(&b, "]}", 3); /* with its NUL */
    return b.p;
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
