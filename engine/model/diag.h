/* diag: the list of user-facing errors one load or validation produced.
 * Owns: the messages. Every message starts with a location ("file:line:col: ") when one is
 * known, then the subject (pool, profile, node), then what was wrong and what was expected.
 * Loaders collect every problem and report them together; nothing here prints unless asked.
 * A message over 600 characters (a long value echoed) keeps its first 360 and last 200, with
 * the count of those left out between; diag_print prints the first DIAG_PRINT_MAX messages. */
#ifndef HWEMU_DIAG_H
#define HWEMU_DIAG_H
#include <stdio.h>

struct diag {
    char **msgs;
    int count, cap;
};

struct yt_node;

/* A message at a node's location (node may be NULL: no location). */
void diag_at(struct diag *d, const struct yt_node *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A message with an explicit location string (or NULL). */
void diag_add(struct diag *d, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum { DIAG_PRINT_MAX = 100 };
void diag_print(const struct diag *d, FILE *out);
void diag_free(struct diag *d);

#endif
