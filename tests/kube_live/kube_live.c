/* kube_live: engine/kube against a real kube-apiserver (run by tests/cli/test_kube_client.sh with
 * the test control plane's KUBECONFIG). Each check prints "ok NAME" or "FAIL NAME: why"; the exit
 * status is the number of failures. Expected values come from the objects this program creates
 * and from the API's documented answers (409 AlreadyExists, 404 NotFound, 401 without a valid
 * token, 410 Expired for a watch from a version etcd compacted). */
#include "kube_client.h"
#include "kube_config.h"
#include "kube_queue.h"
#include "kube_watch.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;

static void check(int cond, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(int cond, const char *name, const char *fmt, ...)
{
    if (cond) {
        printf("ok %s\n", name);
        return;
    }
    failures++;
    printf("FAIL %s: ", name);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The next event of type t (for name, when given) within secs; others are dropped. */
static struct kube_event *expect(struct kube_queue *q, enum kube_event_type t, const char *name, double secs)
{
    double end = now_s() + secs;
    while (now_s() < end) {
        struct kube_event *e = kube_queue_wait(q, 200);
        if (!e)
            continue;
        if (e->type == t && (!name || (kube_object_name(e->object) && !strcmp(kube_object_name(e->object), name))))
            return e;
        if (e->type == KUBE_EV_TROUBLE)
            printf("  (trouble: %s)\n", e->message);
        kube_event_free(e);
    }
    return NULL;
}

static cJSON *node(const char *name)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"hwemu-probe\":\"1\"}},"
             "\"status\":{\"capacity\":{\"cpu\":\"4\",\"nvidia.com/gpu\":\"2\"}}}",
             name);
    return cJSON_Parse(text);
}

int main(void)
{
    const char *path = getenv("KUBECONFIG");
    struct kube_config cfg;
    char err[2048];
    if (!path || kube_config_load(&cfg, path, err, sizeof err)) {
        printf("FAIL config: %s\n", path ? err : "KUBECONFIG is not set");
        return 1;
    }
    struct kube_client *c = kube_client_new(&cfg, err, sizeof err);
    if (!c) {
        printf("FAIL client: %s\n", err);
        return 1;
    }
    struct kube_queue *q = kube_queue_new();
    struct kube_watch *w = kube_watch_start(c, "nodes", "/api/v1/nodes", "labelSelector=hwemu-probe%3D1", NULL, q);
    struct kube_event *e = expect(q, KUBE_EV_SYNC, NULL, 20);
    check(e && cJSON_GetArraySize(e->object) == 0, "list-first", "no SYNC of 0 items in 20 s");
    kube_event_free(e);

    /* create, then the same again: 409 with the API's message and the URL */
    cJSON *n = node("probe-0"), *out = NULL;
    long st = kube_create(c, "/api/v1/nodes", n, &out, err, sizeof err);
    check(st == 0 && kube_object_name(out) && !strcmp(kube_object_name(out), "probe-0"), "create", "%ld %s", st, err);
    cJSON_Delete(out);
    st = kube_create(c, "/api/v1/nodes", n, NULL, err, sizeof err);
    char want[512];
    snprintf(want, sizeof want, "POST %s/api/v1/nodes: 409 Conflict: nodes \"probe-0\" already exists", cfg.server);
    check(st == 409 && !strcmp(err, want), "create-conflict", "%ld \"%s\"", st, err);
    cJSON_Delete(n);
    e = expect(q, KUBE_EV_ADDED, "probe-0", 10);
    check(e != NULL, "watch-added", "no ADDED for probe-0");
    kube_event_free(e);

    /* merge patch, strategic merge patch, JSON patch: each seen by GET and by the watch */
    cJSON *p = cJSON_Parse("{\"metadata\":{\"labels\":{\"joulie.io/power-profile\":\"eco\"}}}");
    st = kube_patch(c, "/api/v1/nodes/probe-0", KUBE_PATCH_MERGE, p, NULL, err, sizeof err);
    cJSON_Delete(p);
    /* the controllers modify a new Node too (taints, annotations): the MODIFIED with the label */
    bool lab = false;
    double until = now_s() + 10;
    while (!lab && now_s() < until && (e = expect(q, KUBE_EV_MODIFIED, "probe-0", until - now_s()))) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(e->object, "metadata"), "labels"),
            "joulie.io/power-profile");
        lab = cJSON_IsString(v) && !strcmp(v->valuestring, "eco");
        kube_event_free(e);
    }
    check(st == 0 && lab, "merge-patch-watched", "%ld %s", st, err);
    p = cJSON_Parse("{\"spec\":{\"taints\":[{\"key\":\"probe\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]}}");
    st = kube_patch(c, "/api/v1/nodes/probe-0", KUBE_PATCH_STRATEGIC, p, NULL, err, sizeof err);
    cJSON_Delete(p);
    check(st == 0, "strategic-patch", "%ld %s", st, err);
    p = cJSON_Parse("[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"a\":\"b\"}}]");
    st = kube_patch(c, "/api/v1/nodes/probe-0", KUBE_PATCH_JSON, p, NULL, err, sizeof err);
    cJSON_Delete(p);
    check(st == 0, "json-patch", "%ld %s", st, err);
    out = NULL;
    st = kube_get(c, "/api/v1/nodes/probe-0", &out, err, sizeof err);
    char *text = out ? cJSON_PrintUnformatted(out) : NULL;
    check(st == 0 && text && strstr(text, "\"key\":\"probe\"") && strstr(text, "\"a\":\"b\"") &&
              strstr(text, "\"nvidia.com/gpu\":\"2\""),
          "get", "%ld %s", st, text ? text : err);
    free(text);

    /* PUT the object back with one more label: the controllers change the Node too, so a 409
     * (the resourceVersion moved on) means get it again and retry, as every client does */
    int conflicts = 0;
    for (int i = 0; i < 10; i++) {
        cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(out, "metadata"), "labels"),
                                "put", "yes");
        st = kube_replace(c, "/api/v1/nodes/probe-0", out, NULL, err, sizeof err);
        cJSON_Delete(out);
        out = NULL;
        if (st != 409 || !strstr(err, "the object has been modified"))
            break;
        conflicts++;
        kube_get(c, "/api/v1/nodes/probe-0", &out, err, sizeof err);
    }
    check(st == 0, "replace", "%ld %s (after %d conflicts)", st, err, conflicts);
    cJSON_Delete(out);

    /* 404 with the message */
    st = kube_get(c, "/api/v1/nodes/nope", NULL, err, sizeof err);
    check(st == 404 && strstr(err, "404 Not Found: nodes \"nope\" not found"), "not-found", "%ld %s", st, err);

    /* a Job and a watch of pods by field selector (what runs through the scheduler will use) */
    char *jobs = kube_path("batch/v1", kube_client_namespace(c), "jobs", NULL);
    cJSON *job = cJSON_Parse(
        "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"probe-job\"},\"spec\":{\"template\":"
        "{\"spec\":{\"restartPolicy\":\"Never\",\"nodeName\":\"probe-0\",\"containers\":[{\"name\":\"c\",\"image\":"
        "\"none\"}]}}}}");
    struct kube_queue *pq = kube_queue_new();
    char *pods = kube_path("v1", kube_client_namespace(c), "pods", NULL);
    char *sel = kube_escape("spec.nodeName=probe-0");
    char query[256];
    snprintf(query, sizeof query, "fieldSelector=%s", sel);
    struct kube_watch *pw = kube_watch_start(c, "pods", pods, query, NULL, pq);
    e = expect(pq, KUBE_EV_SYNC, NULL, 20);
    kube_event_free(e);
    st = kube_create(c, jobs, job, NULL, err, sizeof err);
    check(st == 0, "create-job", "%ld %s", st, err);
    e = expect(pq, KUBE_EV_ADDED, NULL, 30);
    check(e != NULL, "watch-pods-by-node", "no pod on probe-0 seen in 30 s");
    kube_event_free(e);
    kube_watch_stop(pw);
    kube_queue_free(pq);
    char *jobpath = kube_path("batch/v1", kube_client_namespace(c), "jobs", "probe-job");
    char del[600];
    snprintf(del, sizeof del, "%s?propagationPolicy=Background", jobpath);
    st = kube_delete(c, del, err, sizeof err);
    check(st == 0, "delete-job", "%ld %s", st, err);
    free(jobs), free(pods), free(sel), free(jobpath);
    cJSON_Delete(job);

    st = kube_delete(c, "/api/v1/nodes/probe-0", err, sizeof err);
    check(st == 0, "delete", "%ld %s", st, err);
    e = expect(q, KUBE_EV_DELETED, "probe-0", 10);
    check(e != NULL, "watch-deleted", "no DELETED for probe-0");
    kube_event_free(e);
    kube_watch_stop(w);

    /* A watch from a version etcd has compacted away: 410 Expired, so a new list (seen as a SYNC,
     * which a watch started from a version never sends otherwise). Events, because kube-apiserver
     * keeps no watch cache for them (its default sizes: events 0), so the watch reaches etcd,
     * which test_kube_client.sh compacted before this ran; a cached resource would replay its
     * history from the cache instead. */
    struct kube_queue *q2 = kube_queue_new();
    char *events = kube_path("v1", kube_client_namespace(c), "events", NULL);
    struct kube_watch *w2 = kube_watch_start(c, "events", events, NULL, "1", q2);
    free(events);
    e = expect(q2, KUBE_EV_SYNC, NULL, 20);
    check(e != NULL, "relist-on-410", "no SYNC after a watch of events from resourceVersion 1");
    kube_event_free(e);
    /* abort: the watch's stream ends within about a second */
    double t0 = now_s();
    kube_client_abort(c);
    kube_watch_stop(w2);
    check(now_s() - t0 < 3, "abort", "stopping took %.1f s", now_s() - t0);
    kube_queue_free(q2);
    st = kube_get(c, "/api/v1/nodes", NULL, err, sizeof err);
    check(st == -1 && strstr(err, "aborted"), "aborted-refuses", "%ld %s", st, err);
    kube_client_free(c);

    /* a wrong token: 401 with the hint */
    free(cfg.token);
    cfg.token = strdup("wrong");
    c = kube_client_new(&cfg, err, sizeof err);
    st = kube_get(c, "/api/v1/nodes", NULL, err, sizeof err);
    check(st == 401 && strstr(err, "401 Unauthorized") && strstr(err, "credentials were refused"), "unauthorized",
          "%ld %s", st, err);
    kube_client_free(c);
    /* a server certificate another CA signed */
    const char *other = getenv("KUBE_LIVE_OTHER_CA");
    if (other) {
        free(cfg.ca_pem);
        cfg.ca_pem = NULL;
        cfg.ca_file = strdup(other);
        c = kube_client_new(&cfg, err, sizeof err);
        st = kube_get(c, "/api/v1/nodes", NULL, err, sizeof err);
        check(st == -1 && strstr(err, "certificate"), "wrong-ca", "%ld %s", st, err);
        kube_client_free(c);
    }
    /* nothing listens */
    free(cfg.server);
    cfg.server = strdup("https://127.0.0.1:1");
    c = kube_client_new(&cfg, err, sizeof err);
    st = kube_get(c, "/api/v1/nodes", NULL, err, sizeof err);
    check(st == -1 && strstr(err, "GET https://127.0.0.1:1/api/v1/nodes: ") && strstr(err, "is the API server running"),
          "unreachable", "%ld %s", st, err);
    kube_client_free(c);
    kube_config_free(&cfg);
    kube_queue_free(q);
    printf("%d failure%s\n", failures, failures == 1 ? "" : "s");
    return failures;
}
