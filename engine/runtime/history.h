/* history: the cluster's power over time, one point per tick, for the engine's page.
 * Owns: a fixed ring of the last HISTORY_POINTS cluster totals. The tick thread pushes the totals
 * of each snapshot it publishes (computed from that snapshot, never by stepping a node); HTTP
 * copies points out. A short mutex guards the ring: the tick thread holds it for one store, a
 * reader for one copy of at most the ring (never while it builds an answer). */
#ifndef HWEMU_HISTORY_H
#define HWEMU_HISTORY_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define HISTORY_POINTS 3600 /* one hour at the default 1 s tick */

/* The cluster at one tick: every node summed. */
struct cluster_totals {
    int nodes;
    double power_w;     /* node power: packages, DRAM, GPUs and the rest of the platform */
    double cpu_w;       /* CPU packages */
    double dram_w;      /* DRAM zones */
    double gpu_w;       /* GPUs */
    double other_w;     /* the rest of the platform (the profiles' dram.otherW) */
    double energy_j;    /* packages, DRAM and GPUs, as joulie_sim_node_energy_joules_total sums */
    double ambient_c;   /* the facility's, before cooling-zone offsets */
    int capped;         /* nodes with a package cap or a GPU limit holding the power down */
};

struct history_point {
    uint64_t seq; /* 1 for the first snapshot published, +1 for each one after */
    int64_t wall_ns;
    struct cluster_totals t;
};

struct history {
    pthread_mutex_t mu;
    struct history_point p[HISTORY_POINTS];
    uint64_t pushed; /* points ever pushed; the newest is p[(pushed - 1) % HISTORY_POINTS] */
};

void history_init(struct history *h);
void history_destroy(struct history *h);
void history_push(struct history *h, int64_t wall_ns, const struct cluster_totals *t);
/* Copies the points with seq > since, oldest first, at most max of the newest of them, into out;
 * returns how many. */
size_t history_since(struct history *h, uint64_t since, struct history_point *out, size_t max);

#endif
