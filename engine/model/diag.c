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

static void vadd(struct diag *d, const char *where, const char *fmt, va_list ap)
{
    char *body = NULL, *msg = NULL;
    if (vasprintf(&body, fmt, ap) < 0)
        return;
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
    for (int i = 0; i < d->count; i++)
        fprintf(out, "%s\n", d->msgs[i]);
}

void diag_free(struct diag *d)
{
    for (int i = 0; i < d->count; i++)
        free(d->msgs[i]);
    free(d->msgs);
    memset(d, 0, sizeof *d);
}
