/* kube_watch: list, then watch, relist on 410 and back off on failure; see kube_watch.h. */
#include "kube_watch.h"

#include "kube_client.h"
#include "kube_queue.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LIST_PAGE 500
#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000

struct kube_watch {
    struct kube_client *c;
    struct kube_queue *q;
    const char *tag;
    char *path, *query;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    atomic_bool stop;
    char rv[128];       /* the version the next watch starts from ("": list first) */
    bool relist;        /* the stream said the version expired */
    unsigned seed;
    struct {
        uint64_t lists, watches, events, bookmarks, expired, failures;
    } st; /* the thread's own counts (a debugger's view) */
};

static struct kube_event *new_event(enum kube_event_type t, const char *tag)
{
    struct kube_event *e = calloc(1, sizeof *e);
    if (!e)
        abort();
    e->type = t;
    e->watch = tag;
    return e;
}

static void trouble(struct kube_watch *w, const char *what, int retry_ms)
{
    struct kube_event *e = new_event(KUBE_EV_TROUBLE, w->tag);
    size_t n = strlen(what) + 64;
    e->message = malloc(n);
    if (!e->message)
        abort();
    if (retry_ms >= 0)
        snprintf(e->message, n, "%s; retrying in %.1f s", what, retry_ms / 1000.0);
    else
        snprintf(e->message, n, "%s", what);
    kube_queue_push(w->q, e);
}

/* Sleeps ms unless stopped: false when stopped. */
static bool pause_ms(struct kube_watch *w, int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L)
        until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&w->lock);
    while (!atomic_load(&w->stop))
        if (pthread_cond_timedwait(&w->cond, &w->lock, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&w->lock);
    return !atomic_load(&w->stop);
}

static char *url_of(const struct kube_watch *w, const char *extra)
{
    size_t n = strlen(w->path) + (w->query ? strlen(w->query) : 0) + strlen(extra) + 8;
    char *u = malloc(n);
    if (!u)
        abort();
    snprintf(u, n, "%s?%s%s%s", w->path, w->query ? w->query : "", w->query && *extra ? "&" : "", extra);
    return u;
}

/* Every page of the collection: 0 with a SYNC event queued and w->rv set; -1 with err. */
static int list_all(struct kube_watch *w, char *err, size_t errlen)
{
    cJSON *items = cJSON_CreateArray();
    char cont[4096] = "", *rv = NULL;
    for (;;) {
        char extra[4300];
        char *esc = *cont ? kube_escape(cont) : NULL;
        snprintf(extra, sizeof extra, "limit=%d%s%s", LIST_PAGE, esc ? "&continue=" : "", esc ? esc : "");
        free(esc);
        char *u = url_of(w, extra);
        cJSON *page = NULL;
        long st = kube_get(w->c, u, &page, err, errlen);
        free(u);
        if (st) {
            cJSON_Delete(items);
            free(rv);
            /* a continue token that expired mid-list: start the list again */
            return st == 410 && *cont ? list_all(w, err, errlen) : -1;
        }
        cJSON *pitems = cJSON_DetachItemFromObjectCaseSensitive(page, "items"), *it;
        while (cJSON_IsArray(pitems) && (it = cJSON_DetachItemFromArray(pitems, 0)))
            cJSON_AddItemToArray(items, it);
        cJSON_Delete(pitems);
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(page, "metadata");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(md, "continue");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
        free(rv);
        rv = cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
        snprintf(cont, sizeof cont, "%s", cJSON_IsString(c) ? c->valuestring : "");
        cJSON_Delete(page);
        if (!*cont)
            break;
    }
    if (!rv) {
        snprintf(err, errlen, "GET %s%s: the list has no metadata.resourceVersion", kube_client_server(w->c), w->path);
        cJSON_Delete(items);
        return -1;
    }
    snprintf(w->rv, sizeof w->rv, "%s", rv);
    free(rv);
    struct kube_event *e = new_event(KUBE_EV_SYNC, w->tag);
    e->object = items;
    kube_queue_push(w->q, e);
    w->st.lists++;
    return 0;
}

/* One line of the watch stream. */
static int on_line(void *ctx, const char *text, size_t len)
{
    struct kube_watch *w = ctx;
    struct kube_event ev;
    char err[256];
    if (kube_event_decode(text, len, &ev, err, sizeof err)) {
        trouble(w, err, -1);
        return 0; /* one bad line is reported, the stream goes on */
    }
    if (ev.type == KUBE_EV_ERROR) {
        if (ev.code == 410)
            w->relist = true, w->st.expired++;
        else {
            char msg[600];
            snprintf(msg, sizeof msg, "watch %s: ERROR %ld: %s", w->path, ev.code, ev.message);
            w->relist = true;
            w->st.failures++;
            trouble(w, msg, -1);
        }
        cJSON_Delete(ev.object);
        free(ev.message);
        return 1; /* the server ends the stream after an ERROR anyway */
    }
    const char *rv = kube_object_rv(ev.object);
    if (rv)
        snprintf(w->rv, sizeof w->rv, "%s", rv);
    if (ev.type == KUBE_EV_BOOKMARK) {
        w->st.bookmarks++;
        cJSON_Delete(ev.object);
        return 0;
    }
    struct kube_event *e = new_event(ev.type, w->tag);
    e->object = ev.object;
    kube_queue_push(w->q, e);
    w->st.events++;
    return 0;
}

static int next_backoff(struct kube_watch *w, int cur)
{
    int b = cur ? cur * 2 : BACKOFF_MIN_MS;
    if (b > BACKOFF_MAX_MS)
        b = BACKOFF_MAX_MS;
    /* ±20 %: many engines restarted together do not all come back in the same instant */
    int jitter = b / 5;
    return b - jitter + (int)(rand_r(&w->seed) % (unsigned)(2 * jitter + 1));
}

static void *run(void *arg)
{
    struct kube_watch *w = arg;
    int backoff = 0;
    char err[1024];
    while (!atomic_load(&w->stop)) {
        if (!*w->rv || w->relist) {
            w->relist = false;
            if (list_all(w, err, sizeof err)) {
                if (atomic_load(&w->stop))
                    break;
                w->st.failures++;
                backoff = next_backoff(w, backoff);
                trouble(w, err, backoff);
                w->rv[0] = 0;
                if (!pause_ms(w, backoff))
                    break;
                continue;
            }
        }
        /* the server ends the watch after timeoutSeconds; spread so watches do not renew together */
        int timeout = 300 + (int)(rand_r(&w->seed) % 300);
        char extra[256];
        char *rv = kube_escape(w->rv);
        snprintf(extra, sizeof extra, "watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%d", rv,
                 timeout);
        free(rv);
        char *u = url_of(w, extra);
        w->st.watches++;
        long st = kube_stream(w->c, u, on_line, w, timeout + 60, &w->stop, err, sizeof err);
        free(u);
        if (atomic_load(&w->stop))
            break;
        if (st == 410) {
            w->relist = true, w->st.expired++;
            continue;
        }
        if (st >= 200 && st <= 299) {
            backoff = 0; /* a watch ran to its end (or to an ERROR event handled above) */
            continue;
        }
        w->st.failures++;
        backoff = next_backoff(w, backoff);
        trouble(w, err, backoff);
        w->relist = true; /* after an outage, a fresh list tells the consumer what it missed */
        if (!pause_ms(w, backoff))
            break;
    }
    return NULL;
}

struct kube_watch *kube_watch_start(struct kube_client *c, const char *tag, const char *path, const char *query,
                                    const char *rv, struct kube_queue *q)
{
    struct kube_watch *w = calloc(1, sizeof *w);
    if (!w)
        abort();
    w->c = c;
    w->q = q;
    w->tag = tag;
    w->path = strdup(path);
    w->query = query && *query ? strdup(query) : NULL;
    if (!w->path || (query && *query && !w->query))
        abort();
    if (rv)
        snprintf(w->rv, sizeof w->rv, "%s", rv);
    w->seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)w;
    pthread_mutex_init(&w->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&w->thread, NULL, run, w)) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->lock);
        free(w->path);
        free(w->query);
        free(w);
        return NULL;
    }
    return w;
}

void kube_watch_stop(struct kube_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    atomic_store(&w->stop, true);
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    free(w->path);
    free(w->query);
    free(w);
}
