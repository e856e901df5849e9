/* http: the engine's HTTP server (routes in http.c's header comment).
 *
 * Connection budget: at most max_connections at once (beyond it a new connection is closed at
 * once, never queued), each closed after timeout_s without traffic, served by two epoll
 * threads, so slow or half-open clients cost a descriptor each and cannot hold /metrics or
 * /healthz. libmicrohttpd's per-connection messages go to stderr at most once a minute.
 * Optional basic auth (every route but /healthz) and TLS (GnuTLS through libmicrohttpd). */
#ifndef HWEMU_HTTP_H
#define HWEMU_HTTP_H
#include <stdbool.h>
#include <stddef.h>

struct engine;
struct http;
struct otlp;

#define HTTP_DEFAULT_MAX_CONNECTIONS 4096u
#define HTTP_DEFAULT_TIMEOUT_S 15u

struct http_config {
    const char *addr;          /* "host:port", "[v6]:port"; port 0: the kernel picks (http_url says which) */
    const char *auth_file;     /* NULL: no auth; else its first line is user:password */
    const char *tls_cert, *tls_key; /* PEM files; both or neither */
    unsigned max_connections;  /* 0: HTTP_DEFAULT_MAX_CONNECTIONS */
    unsigned timeout_s;        /* idle seconds before a connection is closed; 0: HTTP_DEFAULT_TIMEOUT_S */
};

/* Splits "host:port" (port a decimal 0..65535, an IPv6 host in brackets); -1 with a message. */
int http_parse_addr(const char *addr, char *host, size_t hostlen, unsigned *port, char *err, size_t errlen);

/* Listens for the engine's routes; otlp (NULL: none) is the exporter whose drop count /metrics
 * shows. NULL with a message in err. A listen address other than loopback gets a warning. */
struct http *http_start(struct engine *e, const struct otlp *otlp, const struct http_config *cfg, char *err,
                        size_t errlen);
/* "http://127.0.0.1:18080": the address really bound (with the kernel's port for :0). */
const char *http_url(const struct http *h);
void http_stop(struct http *h);

/* One request through the routes, without a socket (the MHD handler and the fuzz target).
 * arg(arg_ctx, key) gives a query argument or NULL. The reply's body is malloc'd, and the
 * caller frees it (NULL: out of memory), unless persistent: then it is a file embedded in the
 * binary (the page), never freed. */
struct http_reply {
    unsigned code;
    const char *type, *allow;
    char *body;
    size_t len;
    bool persistent;
    int retry_after; /* > 0: a Retry-After header (a Redfish service that is unavailable) */
};
typedef const char *http_arg_fn(void *arg_ctx, const char *key);
void http_route(struct engine *e, const struct otlp *otlp, const char *method, const char *url, http_arg_fn *arg,
                void *arg_ctx, struct http_reply *rep);

#endif
