/* diag: collected error messages; see diag.h. */
#include "diag.h"

#include "ytree.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void push(struct diag *d, char *msg)
{
    if (!msg)
        return;
    if (d->count == d->cap) {
        int cap = d->cap ? d->cap * 2 : 8;
        char **m = realloc(d->msgs, sizeof *m * (size_t)cap);
        if (!m) {
            free(msg);
            return;
        }
        d->msgs = m;
        d->cap = cap;
    }
    d->msgs[d->count++] = msg;
}

/* A message longer than this echoes a long value: its middle is cut, so the place it starts
 * with and the remedy it ends with stay whole. */
enum { DIAG_MAX_LEN = 600, DIAG_HEAD = 360, DIAG_TAIL = 200 };

static char *shorten(char *msg)
{
    size_t n = msg ? strlen(msg) : 0;
    if (n <= DIAG_MAX_LEN)
        return msg;
    char *s = NULL;
    if (asprintf(&s, "%.*s...(%zu characters left out)...%s", DIAG_HEAD, msg, n - DIAG_HEAD - DIAG_TAIL,
                 msg + n - DIAG_TAIL) < 0)
        return msg;
    free(msg);
    return s;
}

__attribute__((format(printf, 3, 0))) static void vadd(struct diag *d, const char *where, const char *fmt, va_list ap)
{
    char *body = NULL, *msg = NULL;
    if (vasprintf(&body, fmt, ap) < 0)
        return;
    body = shorten(body);
    if (where) {
        if (asprintf(&msg, "%s: %s", where, body) < 0)
            msg = NULL;
        free(body);
    } else {
        msg = body;
    }
    push(d, msg);
}

void diag_add(struct diag *d, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd(d, where, fmt, ap);
    va_end(ap);
}

void diag_at(struct diag *d, const struct yt_node *at, const char *fmt, ...)
{
    char where[512];
    const char *w = NULL;
    if (at && at->file) {
        snprintf(where, sizeof where, "%s:%d:%d", at->file, at->line, at->col);
        w = where;
    }
    va_list ap;
    va_start(ap, fmt);
    vadd(d, w, fmt, ap);
    va_end(ap);
}

void diag_print(const struct diag *d, FILE *out)
{
    for (int i = 0; i < d->count && i < DIAG_PRINT_MAX; i++)
        fprintf(out, "%s\n", d->msgs[i]);
    if (d->count > DIAG_PRINT_MAX)
        fprintf(out, "(%d more problems not shown: fix the ones above first)\n", d->count - DIAG_PRINT_MAX);
}

void diag_free(struct diag *d)
{
    for (int i = 0; i < d->count; i++)
        free(d->msgs[i]);
    free(d->msgs);
    memset(d, 0, sizeof *d);
}
