/* run_otlp: the run's OTLP files; see run_otlp.h. Files are opened per run directory and closed
 * at the run's last metrics call. A write error is reported once per run on stderr. */
#include "run_otlp.h"

#include "otlp.h"
#include "runs.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct writer {
    char *dir;
    FILE *logs, *metrics;
    int errors;
};

static struct writer w; /* the tap runs on the tick thread only */

static FILE *open_in(const char *run_dir, const char *name)
{
    if (!w.dir || strcmp(w.dir, run_dir)) {
        if (w.logs)
            fclose(w.logs);
        if (w.metrics)
            fclose(w.metrics);
        free(w.dir);
        w = (struct writer){.dir = strdup(run_dir)};
    }
    FILE **f = !strcmp(name, "logs.jsonl") ? &w.logs : &w.metrics;
    if (!*f) {
        char p[4400];
        snprintf(p, sizeof p, "%s/otlp", run_dir);
        mkdir(p, 0755);
        snprintf(p, sizeof p, "%s/otlp/%s", run_dir, name);
        *f = fopen(p, "a");
        if (!*f && !w.errors++)
            fprintf(stderr, "hwemu: cannot write %s: %s\n", p, strerror(errno));
    }
    return *f;
}

static void line(FILE *f, char *text)
{
    if (f && text && (fputs(text, f) == EOF || fputc('\n', f) == EOF) && !w.errors++)
        fprintf(stderr, "hwemu: cannot write %s/otlp: %s\n", w.dir, strerror(errno));
    free(text);
}

static const struct otlp_resource resource = {.service_name = "hwemu"};

static void on_event(void *ctx, const char *run_dir, int64_t wall_ns, const char *node, const char *name,
                     const cJSON *attrs)
{
    (void)ctx;
    struct otlp_log one = {.node = (char *)(node && *node ? node : "cluster"), .wall_ns = wall_ns,
                           .record = otlp_log_record(wall_ns, name, attrs)};
    line(open_in(run_dir, "logs.jsonl"), otlp_logs_json(&one, 1, &resource));
    cJSON_Delete(one.record);
}

static void u64(cJSON *o, const char *k, unsigned long long v)
{
    char t[32];
    snprintf(t, sizeof t, "%llu", v);
    cJSON_AddStringToObject(o, k, t);
}

static void attr(cJSON *arr, const char *k, const char *v)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "key", k);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(a, "value"), "stringValue", v);
    cJSON_AddItemToArray(arr, a);
}

static cJSON *point(cJSON *points, const struct runs_metrics *m, unsigned long long v)
{
    cJSON *p = cJSON_CreateObject();
    u64(p, "startTimeUnixNano", (unsigned long long)m->start_wall_ns);
    u64(p, "timeUnixNano", (unsigned long long)m->wall_ns);
    u64(p, "asInt", v);
    cJSON_AddArrayToObject(p, "attributes");
    cJSON_AddItemToArray(points, p);
    return cJSON_GetObjectItem(p, "attributes");
}

static cJSON *metric(cJSON *list, const char *name, const char *desc, const char *unit, const char *kind)
{
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", name);
    cJSON_AddStringToObject(x, "description", desc);
    cJSON_AddStringToObject(x, "unit", unit);
    cJSON *body = cJSON_AddObjectToObject(x, kind);
    if (strcmp(kind, "gauge")) {
        cJSON_AddNumberToObject(body, "aggregationTemporality", 2); /* CUMULATIVE */
        if (!strcmp(kind, "sum"))
            cJSON_AddBoolToObject(body, "isMonotonic", true);
    }
    cJSON_AddItemToArray(list, x);
    return cJSON_AddArrayToObject(body, "dataPoints");
}

static void on_metrics(void *ctx, const struct runs_metrics *m)
{
    (void)ctx;
    static const char *const cls[2] = {"standard", "performance"};
    cJSON *o = cJSON_CreateObject();
    cJSON *rm = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "resourceMetrics"), rm);
    cJSON *ra = cJSON_AddArrayToObject(cJSON_AddObjectToObject(rm, "resource"), "attributes");
    attr(ra, "service.name", resource.service_name);
    attr(ra, "hwemu.run.id", m->run_id);
    cJSON *sm = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(rm, "scopeMetrics"), sm);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(sm, "scope"), "name", "hwemu");
    cJSON *list = cJSON_AddArrayToObject(sm, "metrics");
    cJSON *pts = metric(list, "joulie_sim_job_submitted_total", "Jobs submitted by the run, by class.", "1", "sum");
    for (int c = 0; c < 2; c++)
        attr(point(pts, m, m->submitted[c]), "class", cls[c]);
    pts = metric(list, "joulie_sim_job_completed_total", "Jobs completed, by class and node.", "1", "sum");
    for (int i = 0; i < m->nnodes; i++)
        for (int c = 0; c < 2; c++)
            if (m->completed[i * 2 + c]) {
                cJSON *a = point(pts, m, m->completed[i * 2 + c]);
                attr(a, "class", cls[c]);
                attr(a, "node", m->node_names[i]);
            }
    pts = metric(list, "joulie_sim_node_running_pods", "Jobs of the run on the node.", "1", "gauge");
    for (int i = 0; i < m->nnodes; i++) {
        cJSON *a = point(pts, m, m->running[i]);
        cJSON_DeleteItemFromObject(cJSON_GetArrayItem(pts, cJSON_GetArraySize(pts) - 1), "startTimeUnixNano");
        attr(a, "node", m->node_names[i]);
    }
    pts = metric(list, "joulie_sim_job_completion_seconds", "Emulated time from a job's submission to its completion.",
                 "s", "histogram");
    cJSON *h = cJSON_CreateObject();
    u64(h, "startTimeUnixNano", (unsigned long long)m->start_wall_ns);
    u64(h, "timeUnixNano", (unsigned long long)m->wall_ns);
    u64(h, "count", m->count);
    cJSON_AddNumberToObject(h, "sum", m->sum);
    cJSON *bc = cJSON_AddArrayToObject(h, "bucketCounts"), *eb = cJSON_AddArrayToObject(h, "explicitBounds");
    for (int k = 0; k <= m->nle; k++) {
        char t[32];
        snprintf(t, sizeof t, "%llu", m->buckets[k]);
        cJSON_AddItemToArray(bc, cJSON_CreateString(t));
        if (k < m->nle)
            cJSON_AddItemToArray(eb, cJSON_CreateNumber(m->le[k]));
    }
    cJSON_AddArrayToObject(h, "attributes");
    cJSON_AddItemToArray(pts, h);
    line(open_in(m->run_dir, "metrics.jsonl"), cJSON_PrintUnformatted(o));
    cJSON_Delete(o);
    if (m->final) { /* the run's last call: close its files */
        if (w.logs)
            fclose(w.logs);
        if (w.metrics)
            fclose(w.metrics);
        free(w.dir);
        w = (struct writer){0};
    }
}

void run_otlp_attach(struct runs *m)
{
    runs_set_tap(m, &(struct runs_tap){.event = on_event, .metrics = on_metrics});
}

void run_otlp_close(void)
{
    if (w.logs)
        fclose(w.logs);
    if (w.metrics)
        fclose(w.metrics);
    free(w.dir);
    w = (struct writer){0};
}
