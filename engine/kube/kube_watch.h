/* kube_watch: one thread that keeps a consumer up to date with a collection of the API (nodes,
 * or a namespace's pods with a field selector), the way client-go's reflector does.
 * Owns: the list (paged, limit 500) whose items go to the queue as one SYNC event, then a watch
 * from the list's resourceVersion with allowWatchBookmarks (bookmarks move the version on and are
 * not queued), a new watch from the last version when the server ends one (timeoutSeconds 5 to 10
 * min), a new list on 410 Gone (the version expired), and on any failure a TROUBLE event, then a
 * backoff (0.5 s doubling to 30 s, ±20 %) and a new list. Nothing here waits on the consumer:
 * events go to a kube_queue. */
#ifndef HWEMU_KUBE_WATCH_H
#define HWEMU_KUBE_WATCH_H
struct kube_client;
struct kube_queue;
struct kube_watch;

/* Starts watching path (a collection: /api/v1/nodes, /api/v1/namespaces/NS/pods) with query
 * (NULL, or query parameters already escaped: "fieldSelector=spec.nodeName%3Dx"). tag names the
 * watch in events and messages (kept, not copied). rv NULL: list first (a SYNC event); else watch
 * from that resourceVersion (a consumer that resumes), listing only if the server says it
 * expired. NULL when the thread cannot start. */
struct kube_watch *kube_watch_start(struct kube_client *c, const char *tag, const char *path, const char *query,
                                    const char *rv, struct kube_queue *q);
/* Ends the thread (a request in flight is cancelled within about a second) and frees w. */
void kube_watch_stop(struct kube_watch *w);

#endif
