/* run_otlp: the run's OTLP files; see run_otlp.h. Files are opened per run directory, relative to
 * its descriptor (no symbolic link followed, run_files.h), written whole lines only, and closed at
 * the run's last metrics call. A write error is reported once per run on stderr; a line a full
 * disk held back is written before the next one. */
#include "run_otlp.h"

#include "otlp.h"
#include "run_files.h"
#include "runs.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const names[2] = {"otlp/logs.jsonl", "otlp/metrics.jsonl"};

struct writer {
    char *dir;
    int dfd;                  /* the run's directory (runs.c owns it) */
    struct line_file f[2];    /* logs, metrics */
    bool open[2];
    bool resumed;             /* the run resumed: its files exist (created when not) */
    int errors;
};

static struct writer w; /* the tap runs on the tick thread, or under the runs' lock */

static void writer_close(void)
{
    for (int k = 0; k < 2; k++)
        if (w.open[k] && line_file_close(&w.f[k]) && !w.errors++)
            fprintf(stderr, "hwemu: cannot write %s/%s: lines lost\n", w.dir, names[k]);
    free(w.dir);
    w = (struct writer){.dfd = -1};
}

/* The writer for run_dir (a new run directory closes the last one's files). */
static void select_dir(const char *run_dir, int run_dfd)
{
    if (!w.dir || strcmp(w.dir, run_dir)) {
        writer_close();
        w.dir = strdup(run_dir);
        w.dfd = run_dfd;
    }
}

static struct line_file *open_in(const char *run_dir, int run_dfd, int k)
{
    select_dir(run_dir, run_dfd);
    if (!w.open[k]) {
        char err[4600];
        if (mkdirat(w.dfd, "otlp", 0755) && errno != EEXIST) {
            if (!w.errors++)
                fprintf(stderr, "hwemu: cannot create %s/otlp: %s\n", run_dir, strerror(errno));
            return NULL;
        }
        /* a run that goes on after a restart continues its files, cut back to its checkpoint */
        int rc = w.resumed ? line_file_resume(&w.f[k], w.dfd, w.dir, names[k], -1, err, sizeof err)
                           : line_file_create(&w.f[k], w.dfd, w.dir, names[k], err, sizeof err);
        if (rc) {
            if (!w.errors++)
                fprintf(stderr, "hwemu: %s\n", err);
            return NULL;
        }
        w.open[k] = true;
    }
    return &w.f[k];
}

static void line(struct line_file *f, char *text)
{
    if (f && text && !line_file_put(f, text) && !w.errors++)
        fprintf(stderr, "hwemu: cannot write %s: %s (whole lines only: it waits for the next write)\n", f->path,
                strerror(f->err));
    free(text);
}

/* runs.c's checkpoint: what is written and each file's length */
static void on_checkpoint(void *ctx, const char *run_dir, int run_dfd, cJSON *outputs)
{
    (void)ctx;
    (void)run_dfd;
    if (!w.dir || strcmp(w.dir, run_dir))
        return; /* nothing written for this run yet: its files are cut to nothing at a resume */
    for (int k = 0; k < 2; k++) {
        if (!w.open[k])
            continue;
        line_file_flush(&w.f[k]);
        char t[32];
        snprintf(t, sizeof t, "%" PRIu64, (uint64_t)w.f[k].len);
        cJSON_DeleteItemFromObjectCaseSensitive(outputs, names[k]);
        cJSON_AddStringToObject(outputs, names[k], t);
    }
}

/* runs.c's resume: the files cut back to the checkpoint's lengths (a file it does not name had
 * nothing written then) */
static int on_resume(void *ctx, const char *run_dir, int run_dfd, const cJSON *outputs, char *err, size_t errlen)
{
    (void)ctx;
    writer_close();
    w.dir = strdup(run_dir);
    w.dfd = run_dfd;
    w.resumed = true;
    if (!outputs) /* a state.json without lengths: the files are continued as they are */
        return 0;
    for (int k = 0; k < 2; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(outputs, names[k]);
        off_t len = cJSON_IsString(v) ? (off_t)strtoull(v->valuestring, NULL, 10) : 0;
        struct stat st;
        if (fstatat(run_dfd, names[k], &st, AT_SYMLINK_NOFOLLOW) && errno == ENOENT && !len)
            continue; /* nothing to cut: created at its first line */
        if (line_file_resume(&w.f[k], run_dfd, run_dir, names[k], len, err, errlen))
            return -1;
        w.open[k] = true;
    }
    return 0;
}

static const struct otlp_resource resource = {.service_name = "hwemu"};

static void on_event(void *ctx, const char *run_dir, int run_dfd, int64_t wall_ns, const char *node, const char *name,
                     const cJSON *attrs)
{
    (void)ctx;
    struct otlp_log one = {.node = (char *)(node && *node ? node : "cluster"), .wall_ns = wall_ns,
                           .record = otlp_log_record(wall_ns, name, attrs)};
    line(open_in(run_dir, run_dfd, 0), otlp_logs_json(&one, 1, &resource));
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
    line(open_in(m->run_dir, m->run_dfd, 1), cJSON_PrintUnformatted(o));
    cJSON_Delete(o);
    if (m->final) /* the run's last call: close its files */
        writer_close();
}

void run_otlp_attach(struct runs *m)
{
    runs_set_tap(m, &(struct runs_tap){.event = on_event, .metrics = on_metrics, .checkpoint = on_checkpoint,
                                       .resume = on_resume});
}

void run_otlp_close(void)
{
    writer_close();
}
