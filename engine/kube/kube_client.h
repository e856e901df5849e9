/* kube_client: requests to a Kubernetes API server over libcurl, bodies as cJSON.
 * Owns: the TLS and credentials of a kube_config applied to every request (the token file read
 * again each time, so a rotated service-account token is picked up), GET/POST/PUT/PATCH (merge,
 * strategic merge, JSON patch)/DELETE, a streamed GET that hands each line of the body to a
 * callback (what a watch reads), and the error text of a failed request: method, URL, HTTP
 * status and the API's Status message ("POST https://127.0.0.1:6443/api/v1/nodes: 409 Conflict:
 * nodes \"a\" already exists"). Thread-safe: any thread may call; connections and TLS sessions
 * are shared between them. kube_client_abort makes every request in flight end at once (for a
 * shutdown that must not wait for a server that does not answer). */
#ifndef HWEMU_KUBE_CLIENT_H
#define HWEMU_KUBE_CLIENT_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct kube_config;
struct kube_client;

enum kube_patch { KUBE_PATCH_MERGE, KUBE_PATCH_STRATEGIC, KUBE_PATCH_JSON };

/* A client for cfg (copied). NULL with err when a file it names cannot be read. */
struct kube_client *kube_client_new(const struct kube_config *cfg, char *err, size_t errlen);
void kube_client_free(struct kube_client *c);
/* Every request in flight fails now with "aborted", and every later one at once. */
void kube_client_abort(struct kube_client *c);
bool kube_client_aborted(const struct kube_client *c);
const char *kube_client_server(const struct kube_client *c);
/* The config's namespace (the context's, or the pod's). */
const char *kube_client_namespace(const struct kube_client *c);

/* One request. path starts with '/' (and may hold a query). body NULL: none. Returns the HTTP
 * status (0: no answer: connection, TLS or timeout, told in err); *out (may be NULL) gets the
 * parsed JSON of a 2xx answer (NULL when empty). A status outside 2xx fills err with the method,
 * URL, status and the API's Status message. A request gives up after 30 s. */
long kube_request(struct kube_client *c, const char *method, const char *path, const char *content_type,
                  const char *body, struct cJSON **out, char *err, size_t errlen);
/* The same for the usual verbs: 2xx gives 0; otherwise the status (-1: no answer) with err. */
long kube_get(struct kube_client *c, const char *path, struct cJSON **out, char *err, size_t errlen);
long kube_create(struct kube_client *c, const char *path, const struct cJSON *obj, struct cJSON **out, char *err,
                 size_t errlen);
long kube_replace(struct kube_client *c, const char *path, const struct cJSON *obj, struct cJSON **out, char *err,
                  size_t errlen);
long kube_patch(struct kube_client *c, const char *path, enum kube_patch kind, const struct cJSON *patch,
                struct cJSON **out, char *err, size_t errlen);
long kube_delete(struct kube_client *c, const char *path, char *err, size_t errlen);

/* A streamed GET (a watch): line(ctx, text, len) for each '\n'-terminated line of a 2xx body as
 * it arrives (text NUL-terminated, without the '\n'); a non-zero return ends the stream. Ends
 * when the server closes it, on abort, when *cancel (may be NULL) becomes true (checked about
 * once a second), or after idle_s seconds without a byte. Returns the HTTP
 * status; 0 with err for no answer or an error mid-stream; a status outside 2xx with err. */
long kube_stream(struct kube_client *c, const char *path, int (*line)(void *ctx, const char *text, size_t len),
                 void *ctx, long idle_s, const atomic_bool *cancel, char *err, size_t errlen);

/* The path of a resource: api "v1" gives /api/v1, any other (batch/v1) /apis/<api>; namespace
 * NULL: cluster-scoped; name NULL: the collection. Query values: kube_escape. malloc'd. */
char *kube_path(const char *api, const char *namespace, const char *resource, const char *name);
/* s escaped for a URL's query or path (malloc'd). */
char *kube_escape(const char *s);

#endif
