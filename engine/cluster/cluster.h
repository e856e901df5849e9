/* cluster: the engine's nodes as Kubernetes Nodes (docs/kubernetes.md "The Nodes hwemu
 * registers"). Owns: one thread that registers every node of the engine (of its shard) as the
 * Node `clusterspec render-nodes` prints, creates again a Node that is deleted, emits
 * joulie.sim.node.mismatch into the engine's event log once per change when a Node of that name
 * is missing or names another profile, and hands label changes made on those Nodes to the runs
 * (as PUT /nodes/<n>/labels does). It reads the API through a watch (engine/kube) and never
 * holds anything the tick waits for: the tick loop knows nothing of it.
 * Prints its progress and the API's failures on stderr, prefixed "hwemu serve: kubernetes:". */
#ifndef HWEMU_CLUSTER_H
#define HWEMU_CLUSTER_H
#include <stddef.h>

struct engine;
struct runs;
struct cluster;

#define CLUSTER_INCLUSTER "incluster"

/* kubeconfig: a kubeconfig's path, or CLUSTER_INCLUSTER for a pod's service account. Starts the
 * thread and returns at once (the API may be down: the thread retries). NULL with err when the
 * config cannot be read. runs may be NULL (labels then reach nothing). Attach after the OTLP
 * sink is set on the event log, detach before it is removed. */
struct cluster *cluster_attach(struct engine *e, struct runs *runs, const char *kubeconfig, char *err,
                               size_t errlen);
/* Where it registers, for the start line: "https://127.0.0.1:6443 (kubeconfig FILE, context C,
 * token)". */
const char *cluster_describe(const struct cluster *c);
/* Stops the thread (requests in flight are abandoned) and frees everything. NULL: nothing. */
void cluster_detach(struct cluster *c);

#endif
