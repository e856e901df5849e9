/* web: the engine's page (GET /) and the JSON routes it polls (docs/web.md is the contract).
 * Owns: the page's embedded files (engine/telemetry/web/, and the chart library the build
 * installs with npm ci, embedded by cmake/embed.cmake into the web_files table), the answer when
 * the page was not built, and the answers of /debug/cluster, /debug/history and /debug/nodes
 * (paged, sorted, filtered, with totals). Reads only a published snapshot and the history ring:
 * never steps a node, never holds what the tick needs. http.c routes requests here. */
#ifndef HWEMU_WEB_H
#define HWEMU_WEB_H
#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct engine;
struct telemetry;

struct web_file {
    const char *data;
    size_t len;
    const char *type; /* Content-Type */
};

/* The page's file at url ("/" is index.html; "/ui/NAME" the others): true with it in *f. */
bool web_file(const char *url, struct web_file *f);
/* Whether the page was built into this binary (HWEMU_WEB_UI). */
bool web_built(void);
/* What GET / answers when the page was not built: a short text saying how to build it. */
extern const char web_not_built_text[];

/* A request's query parameter by name, or NULL (http.c passes libmicrohttpd's lookup). */
typedef const char *web_arg_fn(void *ctx, const char *name);

/* GET /debug/cluster: the cluster at a glance, from snapshot t (NULL before the first). */
struct cJSON *web_cluster(const struct engine *e, const struct telemetry *t);
/* GET /debug/nodes: NULL with a message in err when a parameter is bad (a 400). */
struct cJSON *web_nodes(const struct telemetry *t, web_arg_fn *arg, void *ctx, char *err, size_t errlen);
/* GET /debug/history: NULL with a message in err when a parameter is bad (a 400). */
struct cJSON *web_history(const struct engine *e, web_arg_fn *arg, void *ctx, char *err, size_t errlen);

#endif
