/* kube_queue: the events watch threads hand to whoever consumes them (a glue thread, or a tick
 * that drains without waiting). Owns: the event type, the queue (a mutex-guarded FIFO with a
 * condition variable), and decoding one line of a watch stream into an event.
 * Never blocks a producer for long: a push takes the lock for a pointer swap. */
#ifndef HWEMU_KUBE_QUEUE_H
#define HWEMU_KUBE_QUEUE_H
#include <stddef.h>

struct cJSON;

enum kube_event_type {
    KUBE_EV_ADDED,
    KUBE_EV_MODIFIED,
    KUBE_EV_DELETED,
    KUBE_EV_BOOKMARK, /* decoded, never queued: the watch keeps its resourceVersion */
    KUBE_EV_ERROR,    /* an ERROR line of the stream (a Status; code 410: the version expired) */
    KUBE_EV_SYNC,     /* a (re)list: object is the array of every item there is now */
    KUBE_EV_TROUBLE,  /* the watch cannot list or watch; message says why and when it retries */
};

struct kube_event {
    struct kube_event *next;
    enum kube_event_type type;
    const char *watch;      /* the watch's tag ("nodes"), not owned */
    struct cJSON *object;   /* the object, the SYNC's item array, or the ERROR's Status */
    long code;              /* ERROR: the Status's code */
    char *message;          /* ERROR, TROUBLE: what went wrong */
};

extern const char *const kube_event_names[];

/* One line of a watch stream ({"type":"ADDED","object":{...}}) into ev (zeroed first): 0, or -1
 * with err when it is not a watch event. */
int kube_event_decode(const char *line, size_t len, struct kube_event *ev, char *err, size_t errlen);
void kube_event_free(struct kube_event *ev);
/* An object's metadata.name and metadata.resourceVersion, or NULL. */
const char *kube_object_name(const struct cJSON *obj);
const char *kube_object_rv(const struct cJSON *obj);

struct kube_queue;
struct kube_queue *kube_queue_new(void);
/* Frees the queue and every event still in it. */
void kube_queue_free(struct kube_queue *q);
/* Takes ownership of ev. */
void kube_queue_push(struct kube_queue *q, struct kube_event *ev);
/* The oldest event, or NULL at once when there is none (the caller frees it). */
struct kube_event *kube_queue_pop(struct kube_queue *q);
/* The oldest event, waiting up to timeout_ms for one; NULL on timeout or kube_queue_wake. */
struct kube_event *kube_queue_wait(struct kube_queue *q, int timeout_ms);
/* A waiter returns now (with NULL when the queue is empty). */
void kube_queue_wake(struct kube_queue *q);
size_t kube_queue_len(struct kube_queue *q);

#endif
