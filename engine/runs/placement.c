/* placement: the standalone policy; see placement.h.
 * Filter: a performance job never goes to an eco or draining node; the node must have the free
 * logical CPUs and, for a GPU job, the free GPUs of the requested vendor.
 * Score: (1 - (used + requested) / cores) * 100 * 0.7 + 15, plus 10 for a standard job on an eco
 * node, minus 0.3 * the mean CPU percent of the performance nodes for a standard job on a
 * performance node; clamped to 0..100. Best score wins, ties go to the name that sorts first. */
#include "placement.h"

#include "trace.h"

#include <string.h>

bool place_could_fit(const struct place_node *n, const struct place_request *r)
{
    if (r->cls == JOB_PERFORMANCE && n->eco)
        return false;
    if (r->cpus > n->total_cpus)
        return false;
    if (r->gpus && (n->gpu_vendor != r->gpu_vendor || r->gpus > n->total_gpus))
        return false;
    return true;
}

bool place_fits(const struct place_node *n, const struct place_request *r)
{
    if (r->cls == JOB_PERFORMANCE && (n->eco || n->draining))
        return false;
    if (r->cpus > n->free_cpus || (n->max_jobs && n->jobs >= n->max_jobs))
        return false;
    if (r->gpus && (n->gpu_vendor != r->gpu_vendor || r->gpus > n->free_gpus))
        return false;
    return true;
}

double place_score(const struct place_node *n, const struct place_request *r, double mean_perf_cpu_pct)
{
    int used = n->total_cpus - n->free_cpus;
    double s = (1.0 - (double)(used + r->cpus) / (n->total_cpus > 0 ? n->total_cpus : 1)) * 100 * 0.7 + 15;
    if (r->cls == JOB_STANDARD && n->eco)
        s += 10;
    if (r->cls == JOB_STANDARD && !n->eco && n->performance_node)
        s -= 0.3 * mean_perf_cpu_pct;
    return s < 0 ? 0 : s > 100 ? 100 : s;
}

int place_choose(const struct place_node *nodes, int n, const struct place_request *r, double mean_perf_cpu_pct)
{
    int best = -1;
    double best_s = -1;
    for (int i = 0; i < n; i++) {
        if (!place_fits(&nodes[i], r))
            continue;
        double s = place_score(&nodes[i], r, mean_perf_cpu_pct);
        if (best < 0 || s > best_s || (s == best_s && strcmp(nodes[i].name, nodes[best].name) < 0)) {
            best = i;
            best_s = s;
        }
    }
    return best;
}
