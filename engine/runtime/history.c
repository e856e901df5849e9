/* history: the ring of cluster totals; see history.h. */
#include "history.h"

#include <string.h>

void history_init(struct history *h)
{
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->mu, NULL);
}

void history_destroy(struct history *h)
{
    pthread_mutex_destroy(&h->mu);
}

void history_push(struct history *h, int64_t wall_ns, const struct cluster_totals *t)
{
    pthread_mutex_lock(&h->mu);
    h->p[h->pushed % HISTORY_POINTS] = (struct history_point){.seq = h->pushed + 1, .wall_ns = wall_ns, .t = *t};
    h->pushed++;
    pthread_mutex_unlock(&h->mu);
}

size_t history_since(struct history *h, uint64_t since, struct history_point *out, size_t max)
{
    pthread_mutex_lock(&h->mu);
    uint64_t kept = h->pushed < HISTORY_POINTS ? h->pushed : HISTORY_POINTS;
    uint64_t first = h->pushed - kept; /* index of the oldest point kept */
    /* seq is the index + 1: skip the points at or before since */
    uint64_t lo = since > first ? since : first;
    if (lo > h->pushed)
        lo = h->pushed;
    if (h->pushed - lo > max)
        lo = h->pushed - max;
    size_t n = 0;
    for (uint64_t i = lo; i < h->pushed; i++)
        out[n++] = h->p[i % HISTORY_POINTS];
    pthread_mutex_unlock(&h->mu);
    return n;
}
