/* kube_queue: watch events, their decoding and the FIFO between threads; see kube_queue.h. */
#include "kube_queue.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const kube_event_names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "SYNC", "TROUBLE"};

struct kube_queue {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct kube_event *head, *tail;
    size_t len;
    bool woken;
};

static const cJSON *meta_str(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), key);
    return cJSON_IsString(v) ? v : NULL;
}

const char *kube_object_name(const cJSON *obj)
{
    const cJSON *v = meta_str(obj, "name");
    return v ? v->valuestring : NULL;
}

const char *kube_object_rv(const cJSON *obj)
{
    const cJSON *v = meta_str(obj, "resourceVersion");
    return v ? v->valuestring : NULL;
}

int kube_event_decode(const char *line, size_t len, struct kube_event *ev, char *err, size_t errlen)
{
    memset(ev, 0, sizeof *ev);
    cJSON *j = cJSON_ParseWithLength(line, len);
    if (!cJSON_IsObject(j)) {
        snprintf(err, errlen, "a watch line that is not a JSON object: %.120s", line);
        cJSON_Delete(j);
        return -1;
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
    cJSON *obj = cJSON_DetachItemFromObjectCaseSensitive(j, "object");
    static const enum kube_event_type types[] = {KUBE_EV_ADDED, KUBE_EV_MODIFIED, KUBE_EV_DELETED, KUBE_EV_BOOKMARK,
                                                 KUBE_EV_ERROR};
    int t = -1;
    for (int i = 0; cJSON_IsString(type) && i < 5; i++)
        if (!strcmp(type->valuestring, kube_event_names[types[i]]))
            t = (int)types[i];
    if (t < 0 || !cJSON_IsObject(obj)) {
        snprintf(err, errlen, "a watch event %s: %.120s",
                 t < 0 ? "of no known type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR)" : "without an object", line);
        cJSON_Delete(obj);
        cJSON_Delete(j);
        return -1;
    }
    cJSON_Delete(j);
    ev->type = (enum kube_event_type)t;
    ev->object = obj;
    if (ev->type == KUBE_EV_ERROR) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(obj, "message");
        ev->code = cJSON_IsNumber(code) ? (long)code->valuedouble : 0;
        ev->message = strdup(cJSON_IsString(msg) ? msg->valuestring : "(an ERROR event without a message)");
        if (!ev->message)
            abort();
    } else if (!kube_object_rv(obj) && ev->type == KUBE_EV_BOOKMARK) {
        snprintf(err, errlen, "a BOOKMARK without metadata.resourceVersion: %.120s", line);
        cJSON_Delete(obj);
        ev->object = NULL;
        return -1;
    }
    return 0;
}

void kube_event_free(struct kube_event *ev)
{
    if (!ev)
        return;
    cJSON_Delete(ev->object);
    free(ev->message);
    free(ev);
}

struct kube_queue *kube_queue_new(void)
{
    struct kube_queue *q = calloc(1, sizeof *q);
    if (!q)
        abort();
    pthread_mutex_init(&q->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->cond, &ca);
    pthread_condattr_destroy(&ca);
    return q;
}

void kube_queue_free(struct kube_queue *q)
{
    if (!q)
        return;
    for (struct kube_event *e = q->head, *n; e; e = n) {
        n = e->next;
        kube_event_free(e);
    }
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

void kube_queue_push(struct kube_queue *q, struct kube_event *ev)
{
    ev->next = NULL;
    pthread_mutex_lock(&q->lock);
    if (q->tail)
        q->tail->next = ev;
    else
        q->head = ev;
    q->tail = ev;
    q->len++;
    pthread_cond_signal(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

static struct kube_event *take(struct kube_queue *q)
{
    struct kube_event *e = q->head;
    if (e) {
        q->head = e->next;
        if (!q->head)
            q->tail = NULL;
        q->len--;
        e->next = NULL;
    }
    return e;
}

struct kube_event *kube_queue_pop(struct kube_queue *q)
{
    pthread_mutex_lock(&q->lock);
    struct kube_event *e = take(q);
    pthread_mutex_unlock(&q->lock);
    return e;
}

struct kube_event *kube_queue_wait(struct kube_queue *q, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L)
        until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&q->lock);
    while (!q->head && !q->woken)
        if (pthread_cond_timedwait(&q->cond, &q->lock, &until) == ETIMEDOUT)
            break;
    q->woken = false;
    struct kube_event *e = take(q);
    pthread_mutex_unlock(&q->lock);
    return e;
}

void kube_queue_wake(struct kube_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->woken = true;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

size_t kube_queue_len(struct kube_queue *q)
{
    pthread_mutex_lock(&q->lock);
    size_t n = q->len;
    pthread_mutex_unlock(&q->lock);
    return n;
}
