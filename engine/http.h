/* http: the engine's HTTP server (routes in http.c's header comment). */
#ifndef HWEMU_HTTP_H
#define HWEMU_HTTP_H
#include <stddef.h>

struct engine;
struct http;

/* Listens on addr ("host:port"); NULL with a message in err. */
struct http *http_start(struct engine *e, const char *addr, char *err, size_t errlen);
void http_stop(struct http *h);

#endif
