/* http_runs: the run API; see http_runs.h. A body is collected up to HTTP_RUNS_MAX_BODY. */
#include "http_runs.h"

#include "arena.h"
#include "diag.h"
#include "fault.h"
#include "jsontext.h"
#include "report.h"
#include "run_labels.h"
#include "runs.h"
#include "trace_file.h"
#include "ytree.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HTTP_RUNS_MAX_BODY (512u << 20)
/* PUT /nodes/<n>/labels: RUN_LABELS_MAX labels of the longest key (317) and value (63) quoted
 * come to about 400 KB */
#define HTTP_LABELS_MAX_BODY (1u << 20)

static struct runs *the_runs;
static const char *trace_dir; /* --trace-dir: where tracePath may name files; NULL: tracePath is off */

void http_runs_set(struct runs *m)
{
    the_runs = m;
}

void http_runs_set_trace_dir(const char *dir)
{
    trace_dir = dir && *dir ? dir : NULL;
}

static bool labels_route(const char *url)
{
    size_t n = strlen(url);
    return !strncmp(url, "/nodes/", 7) && n > 14 && !strcmp(url + n - 7, "/labels") && !memchr(url + 7, '/', n - 14);
}

static bool faults_route(const char *url)
{
    return !strcmp(url, "/faults") || (!strncmp(url, "/faults/", 8) && url[8] && !strchr(url + 8, '/'));
}

/* GET /runs/<runId>/course and /jobs: at most this many lines an answer (the next asks from where
 * it stopped), from files of at most RUN_LINES_FILE_MAX bytes */
#define RUN_LINES_MAX 10000
#define RUN_LINES_FILE_MAX ((size_t)1 << 30)

const char *const http_runs_routes[] = {"POST /runs", "GET /runs", "GET /runs/<runId>", "POST /runs/<runId>/stop",
                                        "GET /runs/<runId>/course", "GET /runs/<runId>/jobs",
                                        "GET /runs/<runId>/report",
                                        "GET /nodes/<node>/labels", "PUT /nodes/<node>/labels", "POST /faults",
                                        "GET /faults", "GET /faults/<id>", "DELETE /faults/<id>", NULL};

bool http_runs_route(const char *url)
{
    return !strcmp(url, "/runs") || !strncmp(url, "/runs/", 6) || labels_route(url) || faults_route(url);
}

enum http_route_id http_runs_label(const char *url)
{
    if (!strcmp(url, "/runs") || !strncmp(url, "/runs/", 6))
        return HR_RUNS;
    return labels_route(url) ? HR_LABELS : faults_route(url) ? HR_FAULTS : HR_OTHER;
}

char *http_runs_metrics(void)
{
    return the_runs ? runs_metrics_text(the_runs) : NULL;
}

struct body {
    char *p;
    size_t len, cap;
    bool too_big;
};

/* Queues text[0..len) (malloc'd: freed here) as the answer. */
static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned code, const char *type, char *text, size_t len,
                                  const char *allow)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    if (allow)
        MHD_add_response_header(r, "Allow", allow);
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, cJSON *o, const char *allow)
{
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s)
        return MHD_NO;
    size_t n = strlen(s);
    char *b = realloc(s, n + 2);
    if (!b) {
        free(s);
        return MHD_NO;
    }
    b[n] = '\n';
    b[n + 1] = 0;
    return reply_text(c, code, "application/json", b, n + 1, allow);
}

static enum MHD_Result error(struct MHD_Connection *c, unsigned code, const char *msg, const char *allow)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", msg);
    return reply(c, code, o, allow);
}

/* A whole non-negative number of at most max in query parameter name (def when absent): 0, or -1
 * (then *v is untouched). */
static int query_count(struct MHD_Connection *c, const char *name, long def, long max, long *v)
{
    const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
    if (!s) {
        *v = def;
        return 0;
    }
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (!*s || *end || errno || x < 0 || x > max)
        return -1;
    *v = x;
    return 0;
}

/* GET /runs/<runId>/course and /jobs: the whole lines of the run's file from line `after` on
 * (0-based: the `next` of an earlier answer asks for only the newer ones), at most `limit`:
 * {"runId", "state", "after", "next", "total", "lines": [the lines as the file has them]}. A file
 * cut back by a resume (Restarts) answers a `total` below the caller's `after`: ask from 0. */
static enum MHD_Result run_lines(struct MHD_Connection *c, const char *id, const char *file)
{
    const char *state = runs_state(the_runs, id);
    if (!state)
        return error(c, 404, "no such run in this engine's runs directory (GET /runs lists them; a run of another "
                             "engine is read from its directory: hwemu report RUN_DIR)", NULL);
    long after, limit;
    if (query_count(c, "after", 0, 1L << 40, &after))
        return error(c, 400, "after: a whole number of lines, 0 or more (the next of the previous answer)", NULL);
    if (query_count(c, "limit", RUN_LINES_MAX, RUN_LINES_MAX, &limit) || limit == 0)
        return error(c, 400, "limit: a whole number of lines from 1 to 10000", NULL);
    size_t len = 0;
    char *text = runs_file_read(the_runs, id, file, RUN_LINES_FILE_MAX, &len);
    if (!text && errno != ENOENT) {
        char msg[512];
        snprintf(msg, sizeof msg, "cannot read %s of run %s: %s", file, id,
                 errno == EFBIG ? "larger than 1 GiB: read it from the run's directory" : strerror(errno));
        return error(c, 500, msg, NULL);
    }
    char *body = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&body, &size);
    if (!f)
        abort();
    long k = 0, next = after;
    bool first = true;
    for (size_t at = 0; text && at < len;) { /* whole lines only: a last line being written waits */
        const char *nl = memchr(text + at, '\n', len - at);
        if (!nl)
            break;
        if (k >= after && next - after < limit) {
            fputs(first ? "" : ",", f);
            fwrite(text + at, 1, (size_t)(nl - (text + at)), f);
            first = false;
            next++;
        }
        k++;
        at = (size_t)(nl - text) + 1;
    }
    free(text);
    if (fclose(f))
        abort();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "runId", id);
    cJSON_AddStringToObject(o, "state", state);
    cJSON_AddNumberToObject(o, "after", (double)after);
    cJSON_AddNumberToObject(o, "next", (double)(k < after ? k : next));
    cJSON_AddNumberToObject(o, "total", (double)k);
    char *head = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    char *out = NULL;
    int n = head ? asprintf(&out, "%.*s,\"lines\":[%s]}\n", (int)strlen(head) - 1, head, body) : -1;
    free(head);
    free(body);
    return n < 0 ? MHD_NO : reply_text(c, 200, "application/json", out, (size_t)n, NULL);
}

/* GET /runs/<runId>/report: the HTML `hwemu report <runs dir>/<runId>` writes (report.c), made
 * now from the run's directory; the run has to have ended (summary.json). */
static enum MHD_Result run_report(struct MHD_Connection *c, const char *id)
{
    const char *state = runs_state(the_runs, id);
    char msg[8400];
    if (!state)
        return error(c, 404, "no such run in this engine's runs directory (GET /runs lists them; for a run of "
                             "another engine: hwemu report RUN_DIR --out FILE.html)", NULL);
    if (!report_available())
        return error(c, 404, "this hwemu was built without the web page's chart library, which the report "
                             "embeds: configure with -DHWEMU_WEB_UI=ON (npm installed) and build again", NULL);
    if (strcmp(state, "completed") && strcmp(state, "stalled") && strcmp(state, "stopped")) {
        snprintf(msg, sizeof msg, "run %s is %s: a report is made from the summary.json a run writes at its end; "
                 "meanwhile GET /runs/%s/course has its course (the page draws it)", id, state, id);
        return error(c, 409, msg, NULL);
    }
    char dir[4200], err[8192];
    snprintf(dir, sizeof dir, "%s/%s", runs_path(the_runs), id);
    const char *dirs[] = {dir};
    size_t len = 0;
    char *html = report_html(dirs, 1, &len, err, sizeof err);
    if (!html) {
        snprintf(msg, sizeof msg, "the report of run %s cannot be made: %s", id, err);
        return error(c, 500, msg, NULL);
    }
    return reply_text(c, 200, "text/html; charset=utf-8", html, len, NULL);
}

/* {"tracePath": "..."} and nothing that makes it a trace record */
static const char *trace_path_of(const char *p, size_t len, cJSON **holder)
{
    size_t k = 0;
    while (k < len && strchr(" \t\r\n", p[k]))
        k++;
    if (k == len || p[k] != '{')
        return NULL;
    cJSON *o = cJSON_ParseWithLength(p, len);
    const cJSON *tp = o ? cJSON_GetObjectItemCaseSensitive(o, "tracePath") : NULL;
    if (!cJSON_IsString(tp) || cJSON_GetObjectItemCaseSensitive(o, "type")) {
        cJSON_Delete(o);
        return NULL;
    }
    *holder = o;
    return tp->valuestring;
}

/* The trace's problems, the first DIAG_PRINT_MAX of them as the CLI prints them, then how
 * many more: a trace with 100,000 problems answers a few KB, not 10 MB. */
static void add_problems(cJSON *o, const struct diag *d)
{
    cJSON *pr = cJSON_AddArrayToObject(o, "problems");
    for (int i = 0; i < d->count && i < DIAG_PRINT_MAX; i++)
        cJSON_AddItemToArray(pr, cJSON_CreateString(d->msgs[i]));
    if (d->count > DIAG_PRINT_MAX) {
        char more[64];
        snprintf(more, sizeof more, "... and %d more", d->count - DIAG_PRINT_MAX);
        cJSON_AddItemToArray(pr, cJSON_CreateString(more));
    }
    cJSON_AddNumberToObject(o, "problemCount", d->count);
}

static enum MHD_Result submit(struct MHD_Connection *c, struct body *b)
{
    if (b->too_big)
        return error(c, 413, "the trace is larger than 512 MiB: pass {\"tracePath\": \"...\"} instead", NULL);
    if (!b->len)
        return error(c, 400, "empty body: send the trace JSONL, or {\"tracePath\": \"<file or directory>\"}", NULL);
    /* ?key=K: the run key every shard of a sharded run is given (docs/kubernetes.md "Sharding") */
    const char *key = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "key");
    char kerr[256];
    if (key && runs_key_check(key, kerr, sizeof kerr))
        return error(c, 400, kerr, NULL);
    struct diag d = {0};
    char id[64] = "";
    cJSON *holder = NULL;
    const char *path = trace_path_of(b->p, b->len, &holder);
    int rc;
    if (path) {
        /* only beneath the operator's trace directory, regular files, bounded; the messages
         * about its content never show it (the client may not be allowed to read the file) */
        char *text = NULL, err[1024];
        size_t len = 0;
        unsigned mode = 0;
        enum trace_file_status st = trace_file_read(trace_dir, path, TRACE_FILE_MAX, &text, &len, &mode, err,
                                                    sizeof err);
        if (st != TRACE_FILE_OK) {
            cJSON_Delete(holder);
            return error(c, st == TRACE_FILE_REFUSED ? 403 : st == TRACE_FILE_MISSING ? 404
                            : st == TRACE_FILE_TOO_BIG ? 413 : 400, err, NULL);
        }
        rc = runs_submit(the_runs, path, text, len, mode, true, key, id, sizeof id, &d);
        free(text);
    } else {
        rc = runs_submit(the_runs, "request body", b->p, b->len, 0644, false, key, id, sizeof id, &d);
    }
    cJSON_Delete(holder);
    cJSON *o = cJSON_CreateObject();
    unsigned code = 201;
    if (rc == 0) {
        cJSON_AddStringToObject(o, "runId", id);
        cJSON_AddStringToObject(o, "state", "running");
        cJSON *st = runs_get_json(the_runs, id); /* a run key (given, or a sharded engine's) */
        const cJSON *rk = cJSON_GetObjectItemCaseSensitive(st, "runKey");
        if (cJSON_IsString(rk))
            cJSON_AddStringToObject(o, "runKey", rk->valuestring);
        cJSON_Delete(st);
    } else if (rc == EBUSY) {
        code = 409;
        char msg[256];
        snprintf(msg, sizeof msg, "run %s is active: one run at a time; stop it (POST /runs/%s/stop) or wait for "
                 "it to end", id, id);
        cJSON_AddStringToObject(o, "error", msg);
        cJSON_AddStringToObject(o, "runId", id);
    } else {
        code = rc == EIO ? 500 : 400;
        cJSON_AddStringToObject(o, "error", rc == EIO ? "the run's outputs cannot be written"
                                                      : "the trace is invalid; nothing was started");
        add_problems(o, &d);
    }
    diag_free(&d);
    return reply(c, code, o, NULL);
}

/* GET or PUT /nodes/<node>/labels; PUT's body: {"key": "value" or null, ...}. The body is
 * parsed and checked without the runs' lock; the map is changed in one go under it. */
static enum MHD_Result labels(struct MHD_Connection *c, const char *url, const char *method, struct body *b)
{
    char node[256];
    snprintf(node, sizeof node, "%.*s", (int)(strlen(url) - 14), url + 7);
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), put = !strcmp(method, "PUT");
    if (!get && !put)
        return error(c, 405, "method not allowed: GET shows the node's labels, PUT sets some", "GET, HEAD, PUT");
    if (put) {
        char msg[512];
        if (b->too_big) {
            snprintf(msg, sizeof msg, "the labels are larger than %u KiB: a node holds at most %d run-time labels",
                     HTTP_LABELS_MAX_BODY >> 10, RUN_LABELS_MAX);
            return error(c, 413, msg, NULL);
        }
        /* cJSON would cut "a\u0000b" to the key "a" */
        if (jsontext_nul_escape(b->p, b->len) >= 0 || (b->len && memchr(b->p, 0, b->len)))
            return error(c, 400, "a label key or value holds NUL (\\u0000): labels cannot contain it", NULL);
        cJSON *o = b->len ? cJSON_ParseWithLength(b->p, b->len) : NULL;
        if (!o || !cJSON_IsObject(o)) {
            cJSON_Delete(o);
            return error(c, 400, "the body must be a JSON object of labels: {\"key\": \"value\"} (null removes a key)",
                         NULL);
        }
        int n = cJSON_GetArraySize(o);
        if (n > RUN_LABELS_MAX) {
            cJSON_Delete(o);
            snprintf(msg, sizeof msg, "%d labels in one request: a node holds at most %d run-time labels", n,
                     RUN_LABELS_MAX);
            return error(c, 413, msg, NULL);
        }
        struct run_label_edit *ed = calloc((size_t)(n ? n : 1), sizeof *ed);
        if (!ed) {
            cJSON_Delete(o);
            return MHD_NO;
        }
        cJSON *v;
        int k = 0;
        bool typed = true;
        cJSON_ArrayForEach(v, o) {
            typed = typed && (cJSON_IsString(v) || cJSON_IsNull(v));
            ed[k++] = (struct run_label_edit){v->string, cJSON_IsString(v) ? v->valuestring : NULL};
        }
        int rc = typed ? runs_set_labels(the_runs, node, ed, k, msg, sizeof msg) : EINVAL;
        free(ed);
        cJSON_Delete(o);
        if (!typed)
            return error(c, 400, "every label value must be a string, or null to remove the key", NULL);
        if (rc == ENOENT)
            return error(c, 404, "no such node in the cluster spec (see /debug/nodes)", NULL);
        if (rc)
            return error(c, rc == E2BIG ? 413 : 400, msg, NULL);
    }
    cJSON *o = runs_node_labels_json(the_runs, node);
    return o ? reply(c, 200, o, NULL) : error(c, 404, "no such node in the cluster spec (see /debug/nodes)", NULL);
}

/* POST /faults: one fault (docs/faults.md) as a JSON object, read as YAML so that its problems
 * say line and column; 201 with its id and state, 400 with the problems. */
static enum MHD_Result fault_post(struct MHD_Connection *c, struct body *b)
{
    if (b->too_big)
        return error(c, 413, "the fault is larger than 1 MiB", NULL);
    if (!b->len || jsontext_nul_escape(b->p, b->len) >= 0 || memchr(b->p, 0, b->len))
        return error(c, 400, "the body must be one fault as a JSON object: {\"kind\": \"gpu-lost\", \"nodes\": "
                             "[\"node-0\"], \"device\": \"gpu0\"} (docs/faults.md)", NULL);
    cJSON *probe = cJSON_ParseWithLength(b->p, b->len);
    bool object = cJSON_IsObject(probe);
    cJSON_Delete(probe);
    if (!object)
        return error(c, 400, "the body must be one fault as a JSON object: {\"kind\": \"gpu-lost\", \"nodes\": "
                             "[\"node-0\"], \"device\": \"gpu0\"} (docs/faults.md)", NULL);
    struct arena a = {0};
    struct diag d = {0};
    bool empty = false;
    struct fault_def f;
    struct yt_node *root = yt_parse(&a, "request", b->p, b->len, &d, &empty);
    unsigned code = 201;
    cJSON *o = cJSON_CreateObject();
    char id[FAULT_ID_MAX] = "", msg[512] = "";
    if (!root || !fault_parse(&f, &a, root, "fault", NULL, &d)) {
        code = 400;
        cJSON_AddStringToObject(o, "error", "the fault is invalid; nothing was scheduled");
        add_problems(o, &d);
    } else {
        int rc = runs_fault_add(the_runs, &f, id, sizeof id, msg, sizeof msg);
        if (rc) {
            code = rc == EEXIST ? 409 : rc == EINVAL ? 400 : 500;
            cJSON_AddStringToObject(o, "error", rc == ENOMEM ? "out of memory" : msg);
        } else {
            cJSON_Delete(o);
            o = runs_faults_json(the_runs, id);
        }
    }
    diag_free(&d);
    arena_free(&a);
    return reply(c, code, o ? o : cJSON_CreateObject(), NULL);
}

/* /faults and /faults/<id> */
static enum MHD_Result faults(struct MHD_Connection *c, const char *url, const char *method, struct body *b)
{
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (!url[7]) {
        if (!strcmp(method, "POST"))
            return fault_post(c, b);
        if (get)
            return reply(c, 200, runs_faults_json(the_runs, NULL), NULL);
        return error(c, 405, "method not allowed: GET lists the faults, POST schedules one", "GET, HEAD, POST");
    }
    const char *id = url + 8;
    if (get) {
        cJSON *o = runs_faults_json(the_runs, id);
        return o ? reply(c, 200, o, NULL) : error(c, 404, "no such fault (GET /faults lists them)", NULL);
    }
    if (strcmp(method, "DELETE"))
        return error(c, 405, "method not allowed: GET shows the fault, DELETE clears it", "GET, HEAD, DELETE");
    int rc = runs_fault_clear(the_runs, id);
    if (rc == ENOENT)
        return error(c, 404, "no such fault (GET /faults lists them)", NULL);
    if (rc == EALREADY)
        return error(c, 409, "the fault has already ended or been cleared", NULL);
    cJSON *o = runs_faults_json(the_runs, id);
    if (o)
        cJSON_AddStringToObject(o, "clearing", "at the next tick");
    return o ? reply(c, 200, o, NULL) : error(c, 404, "no such fault", NULL);
}

void http_runs_abandon(void *state)
{
    struct body *b = state;
    free(b->p);
    free(b);
}

enum MHD_Result http_runs_handle(struct MHD_Connection *c, const char *url, const char *method, const char *upload,
                                 size_t *upload_size, void **state)
{
    struct body *b = *state;
    if (!b) {
        b = calloc(1, sizeof *b);
        if (!b)
            return MHD_NO;
        *state = b;
        return MHD_YES;
    }
    if (*upload_size) {
        size_t max = labels_route(url) || faults_route(url) ? HTTP_LABELS_MAX_BODY : HTTP_RUNS_MAX_BODY;
        if (!b->too_big && b->len + *upload_size <= max) {
            if (b->len + *upload_size + 1 > b->cap) {
                size_t cap = (b->len + *upload_size + 1) * 2;
                char *p = realloc(b->p, cap);
                if (!p)
                    return MHD_NO;
                b->p = p;
                b->cap = cap;
            }
            memcpy(b->p + b->len, upload, *upload_size);
            b->len += *upload_size;
            b->p[b->len] = 0;
        } else {
            b->too_big = true;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    enum MHD_Result ret;
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
    const char *rest = url[5] ? url + 6 : "";
    const char *slash = strchr(rest, '/');
    if (!the_runs) {
        ret = error(c, 503, "this engine has no run support", NULL);
    } else if (labels_route(url)) {
        ret = labels(c, url, method, b);
    } else if (faults_route(url)) {
        ret = faults(c, url, method, b);
    } else if (!*rest) { /* /runs */
        if (post)
            ret = submit(c, b);
        else if (get)
            ret = reply(c, 200, runs_list_json(the_runs), NULL);
        else
            ret = error(c, 405, "method not allowed: GET lists the runs, POST starts one", "GET, HEAD, POST");
    } else if (!slash) { /* /runs/<id> */
        cJSON *o = get ? runs_get_json(the_runs, rest) : NULL;
        ret = !get ? error(c, 405, "method not allowed: use GET (POST /runs/<runId>/stop stops a run)", "GET, HEAD")
              : o  ? reply(c, 200, o, NULL)
                   : error(c, 404, "no such run (GET /runs lists them)", NULL);
    } else if (!strcmp(slash, "/stop")) {
        char id[128];
        snprintf(id, sizeof id, "%.*s", (int)(slash - rest), rest);
        if (!post) {
            ret = error(c, 405, "method not allowed: use POST", "POST");
        } else {
            int rc = runs_stop(the_runs, id);
            if (rc == ENOENT)
                ret = error(c, 404, "no such run (GET /runs lists them)", NULL);
            else if (rc == EALREADY)
                ret = error(c, 409, "the run has already ended", NULL);
            else {
                cJSON *o = runs_get_json(the_runs, id);
                if (o)
                    cJSON_AddStringToObject(o, "stopping", "at the next tick");
                ret = o ? reply(c, 200, o, NULL) : error(c, 404, "no such run", NULL);
            }
        }
    } else if (!strcmp(slash, "/course") || !strcmp(slash, "/jobs") || !strcmp(slash, "/report")) {
        char id[128];
        snprintf(id, sizeof id, "%.*s", (int)(slash - rest), rest);
        if (!get)
            ret = error(c, 405, "method not allowed: use GET", "GET, HEAD");
        else if (!strcmp(slash, "/report"))
            ret = run_report(c, id);
        else
            ret = run_lines(c, id, !strcmp(slash, "/course") ? "course.jsonl" : "jobs.jsonl");
    } else {
        ret = error(c, 404, "no such route under /runs (POST /runs, GET /runs, GET /runs/<runId>, "
                            "POST /runs/<runId>/stop, GET /runs/<runId>/course, GET /runs/<runId>/jobs, "
                            "GET /runs/<runId>/report)", NULL);
    }
    free(b->p);
    free(b);
    *state = NULL;
    return ret;
}
