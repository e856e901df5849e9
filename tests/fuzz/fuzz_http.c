/* fuzz_http: the engine's HTTP routes (engine/telemetry/http.c, http_route) on hostile
 * requests, without a socket. The input is "METHOD\nURL\nNODE-ARGUMENT": any bytes, split at
 * the first two newlines (a missing part is empty; NODE absent means no ?node= argument; NODE
 * is also the request's body, which POST /control reads its action from).
 * The engine serves one node of every builtin profile. Checked: no crash, a status code from
 * 200 to 599, a body (routes never answer with nothing) of the length said. */
#include "fuzz_engine.h"
#include "http.h"

#include <stdint.h>
#include <string.h>

static struct engine *eng;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    eng = fuzz_engine_start();
    return 0;
}

static const char *node_arg(void *ctx, const char *key)
{
    return !strcmp(key, "node") ? ctx : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *method = buf, *url = strchr(method, '\n'), *node = NULL;
    if (url) {
        *url++ = 0;
        if ((node = strchr(url, '\n')))
            *node++ = 0;
    } else {
        url = buf + size;
    }
    struct http_reply rep = {0};
    http_route(eng, NULL, method, url, node, node ? strlen(node) : 0, node_arg, node, &rep);
    if (rep.code < 200 || rep.code > 599 || !rep.body || !rep.type || strlen(rep.type) == 0)
        __builtin_trap();
    if (!rep.persistent)
        free(rep.body);
    free(buf);
    return 0;
}
