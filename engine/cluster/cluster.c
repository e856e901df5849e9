/* cluster: registering and keeping the engine's Nodes; see cluster.h.
 * One thread: it drains the queue a watch on /api/v1/nodes fills (kube_watch.c) and makes every
 * request itself, so nothing else ever waits for the API. What it knows of each node:
 *   - exists / ever_seen: whether the Node is in the API now, and was at some point;
 *   - labels: the labels last seen on it (before the first sight: those hwemu renders), the
 *     baseline a change is measured from, so only what someone changed reaches the runs;
 *   - mm: the mismatch reported last (none, missing, another profile), so that an event is
 *     emitted once per change and not at every MODIFIED of a heartbeat;
 *   - create_due: when to create it (again), with a backoff per node when the API refuses. */
#include "cluster.h"

#include "arena.h"
#include "cluster_json.h"
#include "engine.h"
#include "events.h"
#include "kube_client.h"
#include "kube_config.h"
#include "kube_queue.h"
#include "kube_watch.h"
#include "nodeobject.h"
#include "run_labels.h"
#include "runs.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CREATE_BACKOFF_MIN_MS 500
#define CREATE_BACKOFF_MAX_MS 30000
#define LOOP_WAIT_MS 500

enum mismatch { MM_NONE, MM_MISSING, MM_PROFILE };
static const char *const mismatch_reasons[] = {"", "missing", "profile"};

struct cnode {
    const char *name;    /* the engine's */
    const char *profile; /* the spec's */
    cJSON *body;         /* the Node hwemu creates */
    cJSON *labels;       /* the labels last seen on it (NULL: never seen) */
    bool exists, ever_seen;
    unsigned sync_gen;   /* the SYNC it was last listed in */
    enum mismatch mm;
    char *mm_found;      /* MM_PROFILE: the profile the Node named ("" when none) */
    int64_t create_due;  /* CLOCK_MONOTONIC ns; 0: nothing to create */
    int backoff_ms;
};

struct cluster {
    struct engine *e;
    struct runs *runs;
    struct kube_client *kc;
    struct kube_queue *q;
    struct kube_watch *w;
    struct cnode *nodes;
    int n;
    pthread_t thread;
    bool started;
    atomic_bool stop;
    bool synced, troubled;
    unsigned sync_gen;
    int registered; /* created since the last progress line */
    char describe[1024];
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct cnode *find(struct cluster *c, const char *name)
{
    int i = name ? engine_find(c->e, name) : -1;
    return i >= 0 && i < c->n ? &c->nodes[i] : NULL;
}

/* joulie.sim.node.mismatch, once per change of what is wrong. */
static void set_mismatch(struct cluster *c, struct cnode *n, enum mismatch mm, const char *found)
{
    if (mm == n->mm && (mm != MM_PROFILE || !strcmp(found ? found : "", n->mm_found ? n->mm_found : "")))
        return;
    n->mm = mm;
    free(n->mm_found);
    n->mm_found = mm == MM_PROFILE ? strdup(found ? found : "") : NULL;
    if (mm == MM_NONE)
        return;
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "reason", mismatch_reasons[mm]);
    cJSON_AddStringToObject(a, "profile", n->profile);
    if (mm == MM_PROFILE)
        cJSON_AddStringToObject(a, "found", n->mm_found);
    else
        cJSON_AddStringToObject(a, "action", "created again");
    events_emit(c->e->events, wall_ns(), n->name, "joulie.sim.node.mismatch", a);
}

/* The labels that differ between was and now go to the runs in one request, all or nothing, as
 * a PUT /nodes/<n>/labels would (a removal as NULL). */
static void hand_labels(struct cluster *c, struct cnode *n, const cJSON *was, const cJSON *now)
{
    if (!c->runs)
        return;
    int cap = cJSON_GetArraySize(now) + cJSON_GetArraySize(was), k = 0;
    struct run_label_edit *ed = calloc((size_t)(cap ? cap : 1), sizeof *ed);
    if (!ed)
        abort();
    const cJSON *l;
    cJSON_ArrayForEach(l, now)
    {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(was, l->string);
        if (cJSON_IsString(l) && !(cJSON_IsString(o) && !strcmp(o->valuestring, l->valuestring)))
            ed[k++] = (struct run_label_edit){l->string, l->valuestring};
    }
    cJSON_ArrayForEach(l, was)
        if (!cJSON_GetObjectItemCaseSensitive(now, l->string))
            ed[k++] = (struct run_label_edit){l->string, NULL};
    char err[512];
    if (k && runs_set_labels(c->runs, n->name, ed, k, err, sizeof err))
        fprintf(stderr, "hwemu serve: kubernetes: Node %s: %d label change%s not taken: %s\n", n->name, k,
                k == 1 ? "" : "s", err);
    free(ed);
}

static void present(struct cluster *c, struct cnode *n, const cJSON *node)
{
    n->exists = true;
    n->create_due = 0;
    n->backoff_ms = 0;
    const char *p = cluster_node_profile(node);
    set_mismatch(c, n, p && !strcmp(p, n->profile) ? MM_NONE : MM_PROFILE, p);
    const cJSON *now = cluster_node_labels(node);
    cJSON *empty = cJSON_CreateObject();
    const cJSON *was = n->labels ? n->labels : cluster_node_labels(n->body);
    hand_labels(c, n, was ? was : empty, now ? now : empty);
    cJSON_Delete(n->labels);
    n->labels = cJSON_Duplicate(now ? now : empty, true);
    cJSON_Delete(empty);
    n->ever_seen = true;
}

static void absent(struct cluster *c, struct cnode *n)
{
    bool was = n->exists;
    n->exists = false;
    if (n->ever_seen && was)
        set_mismatch(c, n, MM_MISSING, NULL);
    if (!n->create_due)
        n->create_due = mono_ns();
}

static void on_sync(struct cluster *c, const cJSON *items)
{
    c->sync_gen++;
    int have = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, items)
    {
        struct cnode *n = find(c, kube_object_name(it));
        if (n) {
            n->sync_gen = c->sync_gen;
            present(c, n, it);
            have++;
        }
    }
    for (int i = 0; i < c->n; i++)
        if (c->nodes[i].sync_gen != c->sync_gen)
            absent(c, &c->nodes[i]);
    if (!c->synced)
        fprintf(stderr, "hwemu serve: kubernetes: %d of the engine's %d Nodes exist%s\n", have, c->n,
                have < c->n ? "; creating the others" : "");
    else if (c->troubled)
        fprintf(stderr, "hwemu serve: kubernetes: the API answers again (%d of %d Nodes exist)\n", have, c->n);
    c->synced = true;
    c->troubled = false;
}

static void on_event(struct cluster *c, struct kube_event *ev)
{
    switch (ev->type) {
    case KUBE_EV_SYNC: on_sync(c, ev->object); break;
    case KUBE_EV_ADDED:
    case KUBE_EV_MODIFIED: {
        struct cnode *n = find(c, kube_object_name(ev->object));
        if (n)
            present(c, n, ev->object);
        break;
    }
    case KUBE_EV_DELETED: {
        struct cnode *n = find(c, kube_object_name(ev->object));
        if (n)
            absent(c, n);
        break;
    }
    case KUBE_EV_TROUBLE:
        fprintf(stderr, "hwemu serve: kubernetes: %s (the engine runs on)\n", ev->message);
        c->troubled = true;
        break;
    default: break;
    }
}

static void create_due(struct cluster *c)
{
    int64_t now = mono_ns();
    char *path = kube_path("v1", NULL, "nodes", NULL);
    /* a refusal for every node (RBAC, an admission webhook) is said once per pass, not per node */
    int failed = 0, first_backoff = 0;
    char first[1100] = "";
    for (int i = 0; i < c->n && !atomic_load(&c->stop); i++) {
        struct cnode *n = &c->nodes[i];
        if (!n->create_due || n->create_due > now || n->exists)
            continue;
        char err[1024];
        cJSON *made = NULL;
        long st = kube_create(c->kc, path, n->body, &made, err, sizeof err);
        if (st == 0 || st == 409) { /* 409: it exists already; the watch will show it */
            n->create_due = 0;
            n->backoff_ms = 0;
            if (st == 0 && n->ever_seen)
                fprintf(stderr, "hwemu serve: kubernetes: Node %s was deleted: created again\n", n->name);
            else if (st == 0)
                c->registered++;
            if (made) /* known to exist from now, whenever the watch tells */
                present(c, n, made);
            cJSON_Delete(made);
            continue;
        }
        if (kube_client_aborted(c->kc))
            break;
        n->backoff_ms = n->backoff_ms ? n->backoff_ms * 2 : CREATE_BACKOFF_MIN_MS;
        if (n->backoff_ms > CREATE_BACKOFF_MAX_MS)
            n->backoff_ms = CREATE_BACKOFF_MAX_MS;
        n->create_due = now + (int64_t)n->backoff_ms * 1000000;
        if (!failed++) {
            snprintf(first, sizeof first, "Node %s: %s", n->name, err);
            first_backoff = n->backoff_ms;
        }
    }
    free(path);
    if (failed == 1)
        fprintf(stderr, "hwemu serve: kubernetes: %s; retrying in %.1f s\n", first, first_backoff / 1000.0);
    else if (failed)
        fprintf(stderr, "hwemu serve: kubernetes: %s; and %d other Nodes could not be created; retrying in %.1f s "
                "(each Node backs off from 0.5 s to 30 s)\n", first, failed - 1, first_backoff / 1000.0);
    if (c->registered) {
        fprintf(stderr, "hwemu serve: kubernetes: registered %d Node%s\n", c->registered,
                c->registered == 1 ? "" : "s");
        c->registered = 0;
    }
}

static void *run(void *arg)
{
    struct cluster *c = arg;
    while (!atomic_load(&c->stop)) {
        struct kube_event *ev = kube_queue_wait(c->q, LOOP_WAIT_MS);
        for (; ev && !atomic_load(&c->stop); ev = kube_queue_pop(c->q)) {
            on_event(c, ev);
            kube_event_free(ev);
        }
        kube_event_free(ev);
        if (c->synced && !atomic_load(&c->stop))
            create_due(c);
    }
    return NULL;
}

struct cluster *cluster_attach(struct engine *e, struct runs *runs, const char *kubeconfig, char *err,
                               size_t errlen)
{
    struct kube_config cfg;
    int rc = !strcmp(kubeconfig, CLUSTER_INCLUSTER) ? kube_config_incluster(&cfg, NULL, err, errlen)
                                                   : kube_config_load(&cfg, kubeconfig, err, errlen);
    if (rc) {
        kube_config_free(&cfg);
        return NULL;
    }
    struct kube_client *kc = kube_client_new(&cfg, err, errlen);
    if (!kc) {
        kube_config_free(&cfg);
        return NULL;
    }
    struct cluster *c = calloc(1, sizeof *c);
    if (!c)
        abort();
    snprintf(c->describe, sizeof c->describe, "%s (%s%s, context %s, %s)", cfg.server,
             strcmp(kubeconfig, CLUSTER_INCLUSTER) ? "kubeconfig " : "", cfg.source, cfg.context ? cfg.context : "-",
             kube_config_auth_kind(&cfg));
    kube_config_free(&cfg);
    c->e = e;
    c->runs = runs;
    c->kc = kc;
    c->q = kube_queue_new();
    c->n = e->nnodes;
    c->nodes = calloc((size_t)(c->n ? c->n : 1), sizeof *c->nodes);
    if (!c->nodes)
        abort();
    for (int i = 0; i < c->n; i++) {
        struct arena a = {0};
        struct node_object o;
        nodeobject_for_spec_node(&a, &e->spec, &e->spec.nodes[i], &o);
        c->nodes[i].name = e->spec.nodes[i].name;
        c->nodes[i].profile = e->spec.pools[e->spec.nodes[i].pool].profile->name;
        c->nodes[i].body = cluster_node_json(&o);
        arena_free(&a);
    }
    c->w = kube_watch_start(kc, "nodes", "/api/v1/nodes", NULL, NULL, c->q);
    if (!c->w || pthread_create(&c->thread, NULL, run, c)) {
        snprintf(err, errlen, "cannot start the Kubernetes threads");
        cluster_detach(c);
        return NULL;
    }
    c->started = true;
    return c;
}

const char *cluster_describe(const struct cluster *c)
{
    return c->describe;
}

void cluster_detach(struct cluster *c)
{
    if (!c)
        return;
    atomic_store(&c->stop, true);
    kube_client_abort(c->kc); /* a request in flight ends now, whatever the server does */
    kube_queue_wake(c->q);
    if (c->started)
        pthread_join(c->thread, NULL);
    kube_watch_stop(c->w);
    kube_queue_free(c->q);
    kube_client_free(c->kc);
    for (int i = 0; i < c->n; i++) {
        cJSON_Delete(c->nodes[i].body);
        cJSON_Delete(c->nodes[i].labels);
        free(c->nodes[i].mm_found);
    }
    free(c->nodes);
    free(c);
}
