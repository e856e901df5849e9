/* http: the engine's HTTP server (routes in http.c's header comment). */
#ifndef HWEMU_HTTP_H
#define HWEMU_HTTP_H
#include <stddef.h>

struct engine;
struct http;
struct otlp;

/* Listens on addr ("host:port") for the engine's routes; otlp (NULL: none) is the exporter whose
 * drop count /metrics shows. NULL with a message in err. */
struct http *http_start(struct engine *e, const struct otlp *otlp, const char *addr, char *err, size_t errlen);
void http_stop(struct http *h);

#endif
