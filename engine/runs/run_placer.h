/* run_placer: the hook through which a layer above (engine/cluster: Kubernetes) places a run's
 * jobs instead of the standalone policy (placement.c). The runs layer knows nothing of
 * Kubernetes: it says when each job is submitted and when its work is done, and asks, each tick,
 * on which of the engine's nodes each waiting job has been bound (on a sharded engine: or whether
 * another shard's node runs it, and whether that has finished). Without a placer (the default),
 * placement is placement.c's.
 * Every call is made on the tick thread with the runs' lock held: an implementation must answer
 * from memory at once (its own lock, briefly), never wait for a network. */
#ifndef HWEMU_RUN_PLACER_H
#define HWEMU_RUN_PLACER_H

struct run;
struct run_job;

/* What bound answers besides an engine node's index. */
#define RUN_PLACER_NOT_BOUND (-1)
#define RUN_PLACER_ELSEWHERE (-2)
#define RUN_PLACER_ELSEWHERE_DONE (-3)

struct run_placer {
    const char *name; /* what the outputs say: "placement": "kubernetes" */
    void *ctx;
    /* job j's submit time came (also for a job stalled from the start: its pod is still made,
     * and stays Pending, as the scheduler finds no node for it) */
    void (*submit)(void *ctx, const struct run *r, const struct run_job *j);
    /* the engine node j is bound to now: its index; RUN_PLACER_NOT_BOUND while it is not bound
     * (pending); on a sharded engine (--shard), RUN_PLACER_ELSEWHERE when it is bound to a node
     * of another shard, RUN_PLACER_ELSEWHERE_DONE once its pod there has finished (or is gone) */
    int (*bound)(void *ctx, const struct run *r, const struct run_job *j);
    /* j's work is done (its pod may complete) */
    void (*done)(void *ctx, const struct run *r, const struct run_job *j);
    /* the run ended (completed, stalled, stopped) or was suspended: forget it */
    void (*end)(void *ctx, const struct run *r);
};

#endif
