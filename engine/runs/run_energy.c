/* run_energy: the exact split of every node's energy between a run's jobs and idle (the rule:
 * run.h "The energy split", docs/runs.md "Energy"): where a node's counting begins, each
 * interval's counter deltas shared by weights from the powers the interval held, and the run's
 * totals. Called from the node hook (run.c) on the node's worker. */
#include "run_energy.h"

#include "node.h"

#include <stdlib.h>
#include <string.h>

static double clamp01(double v)
{
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* The run begins on node n: its counters now are where its counting starts, per part. */
void run_energy_begin(struct run_node *n, const struct node *nd)
{
    for (int k = 0; k < n->npkgs; k++) {
        n->last_uj[2 * k] = phys_energy_total_uj_back(&nd->state, PHYS_ZONE_PACKAGE, k, 0);
        n->last_uj[2 * k + 1] = phys_energy_total_uj_back(&nd->state, PHYS_ZONE_DRAM, k, 0);
        n->part_start_uj[EP_CPU] += n->last_uj[2 * k];
        n->part_start_uj[EP_DRAM] += n->last_uj[2 * k + 1];
    }
    for (int g = 0; g < n->ngpus; g++) {
        n->last_uj[2 * PHYS_MAX_PKGS + g] = phys_gpu_total_uj_back(&nd->gstate, g, 0);
        n->part_start_uj[EP_GPU] += n->last_uj[2 * PHYS_MAX_PKGS + g];
    }
    n->start_uj = n->part_start_uj[EP_CPU] + n->part_start_uj[EP_DRAM] + n->part_start_uj[EP_GPU];
}

void run_energy_resume_gap(struct run_node *n, const struct node *nd)
{
    int nz = 2 * PHYS_MAX_PKGS + PHYS_GPU_MAX;
    for (int z = 0; z < nz; z++) {
        if (z < 2 * PHYS_MAX_PKGS ? z >= 2 * n->npkgs : z >= 2 * PHYS_MAX_PKGS + n->ngpus)
            continue;
        uint64_t now = z < 2 * PHYS_MAX_PKGS
                           ? phys_energy_total_uj_back(&nd->state, z & 1 ? PHYS_ZONE_DRAM : PHYS_ZONE_PACKAGE, z / 2, 0)
                           : phys_gpu_total_uj_back(&nd->gstate, z - 2 * PHYS_MAX_PKGS, 0);
        uint64_t d = now - n->last_uj[z];
        n->last_uj[z] = now;
        n->delta_uj += d;
        n->part_delta_uj[z >= 2 * PHYS_MAX_PKGS ? EP_GPU : (z & 1) ? EP_DRAM : EP_CPU] += d;
        n->resume_gap_uj += d;
    }
}

/* Shares of delta by weights w (Σ w <= 1 up to rounding): floor each, never more than delta. */
static uint64_t split(uint64_t delta, const double *w, int n, uint64_t *out)
{
    uint64_t sum = 0;
    int big = -1;
    for (int k = 0; k < n; k++) {
        double v = (double)delta * (w[k] > 0 ? w[k] : 0);
        out[k] = v >= (double)delta ? delta : (uint64_t)v;
        sum += out[k];
        if (big < 0 || out[k] > out[big])
            big = k;
    }
    while (sum > delta && big >= 0) { /* rounding of the weights: take it back from the largest */
        uint64_t ex = sum - delta;
        uint64_t take = ex < out[big] ? ex : out[big];
        out[big] -= take;
        sum -= take;
    }
    return sum;
}

/* The energy of the interval since the last hook, split between the jobs that held the node
 * (docs/runs.md "Energy"), one split per tick of it: ticks is 1 but where the node did not step
 * for several ticks (--speed max batches), over which its powers held; each of those ticks is
 * split as its own step would have split it, so the shares are those of --batch 1 to the bit. */
void run_energy_account(struct run *r, int i, struct node *nd, int64_t ticks, int64_t tick_ns)
{
    struct run_node *n = &r->nodes[i];
    int m = n->njobs;
    int *jobs = n->jobs;
    int nz = 2 * n->npkgs + n->ngpus;
    double *w = calloc((size_t)(m ? m : 1) * (size_t)(nz ? nz : 1), sizeof *w); /* [zone][job] */
    uint64_t *sh = calloc((size_t)(m ? m : 1), sizeof *sh);
    /* who held what over the interval: the jobs on the node that are not fresh; a job's busy
     * CPU-share of package k is the CPUs it holds there times its utilization of each */
    double gu_sum = 0, busy_sum[PHYS_MAX_PKGS] = {0};
    double *busy = calloc((size_t)(m ? m : 1) * PHYS_MAX_PKGS, sizeof *busy); /* [job][pkg] */
    int *held = calloc((size_t)(m ? m : 1) * PHYS_MAX_PKGS, sizeof *held);
    for (int k = 0; k < m; k++) {
        const struct run_job *j = &r->jobs[jobs[k]];
        if (j->fresh)
            continue;
        double u = run_job_cpu_util(j->t);
        for (int c = 0; c < j->t->cpus; c++)
            held[k * PHYS_MAX_PKGS + n->cpu_pkg[j->cpus[c]]]++;
        for (int p = 0; p < n->npkgs; p++) {
            busy[k * PHYS_MAX_PKGS + p] = held[k * PHYS_MAX_PKGS + p] * u;
            busy_sum[p] += busy[k * PHYS_MAX_PKGS + p];
        }
        gu_sum += j->t->gpus * j->t->u_gpu;
    }
    int cpus_in[PHYS_MAX_PKGS] = {0};
    for (int c = 0; c < n->ncpus; c++)
        cpus_in[n->cpu_pkg[c]]++;
    struct phys_load zero = {.cpu_util = 0, .memory_intensity = 0, .cpu_class = PHYS_CLASS_MIXED};
    for (int z = 0; z < nz; z++) { /* each counter's weights, from the powers the interval held */
        int pkg = z < 2 * n->npkgs ? z / 2 : -1;
        bool dram = pkg >= 0 && (z & 1);
        int gpu = pkg < 0 ? z - 2 * n->npkgs : -1;
        int cpus_k = pkg >= 0 && cpus_in[pkg] > 0 ? cpus_in[pkg] : 1;
        double idle_frac = 1;
        if (pkg >= 0 && !dram) {
            const struct phys_pkg_state *ps = &nd->state.pkg[pkg];
            double idle_w = phys_cpu_model_power_w(&nd->params, &zero, ps->scale_eff > 0 ? ps->scale_eff : 1);
            idle_frac = ps->power_w > 0 ? clamp01(idle_w / ps->power_w) : 1;
            if (busy_sum[pkg] <= 0)
                idle_frac = 1;
        } else if (gpu >= 0) {
            const struct phys_gpu *g = &nd->gstate.g[gpu];
            idle_frac = g->power_w > 0 ? clamp01(nd->gparams.idle_w / g->power_w) : 1;
            if (gu_sum <= 0)
                idle_frac = 1;
        }
        for (int k = 0; k < m; k++) {
            const struct run_job *j = &r->jobs[jobs[k]];
            double *wk = &w[z * m + k];
            if (j->fresh)
                continue;
            if (pkg >= 0) {
                int h = held[k * PHYS_MAX_PKGS + pkg];
                double dyn = busy_sum[pkg] > 0 ? busy[k * PHYS_MAX_PKGS + pkg] / busy_sum[pkg] : 0;
                *wk = dram ? (double)h / cpus_k : idle_frac * h / cpus_k + (1 - idle_frac) * dyn;
            } else {
                bool holds = n->gpu_job[gpu] == j->index;
                *wk = (holds ? idle_frac : 0) + (gu_sum > 0 ? (1 - idle_frac) * j->t->gpus * j->t->u_gpu / gu_sum : 0);
            }
        }
    }
    int64_t end_sub = nd->state.now_ns / PHYS_SUBSTEP_NS;
    for (int z = 0; z < nz; z++) {
        int slot = z < 2 * n->npkgs ? z : 2 * PHYS_MAX_PKGS + (z - 2 * n->npkgs);
        int pkg = z < 2 * n->npkgs ? z / 2 : -1;
        bool dram = pkg >= 0 && (z & 1);
        int part = pkg < 0 ? EP_GPU : dram ? EP_DRAM : EP_CPU;
        bool shared = false; /* a counter no job has a share of goes to idle whole: one delta */
        for (int k = 0; k < m && !shared; k++)
            shared = w[z * m + k] > 0;
        /* at a held power the ticks' increases take two or three values: each value is split once
         * and its shares counted as many times as it came (integer sums: the same as one by one) */
        uint64_t dv[4];
        int64_t dc[4];
        int ndv = 0;
        for (int64_t t = shared ? ticks - 1 : 0; t >= -1; t--) { /* the interval's ticks, oldest first */
            uint64_t delta = 0;
            if (t >= 0) {
                uint64_t back = (uint64_t)(end_sub - (nd->state.now_ns - t * tick_ns) / PHYS_SUBSTEP_NS);
                uint64_t now = pkg < 0 ? phys_gpu_total_uj_back(&nd->gstate, z - 2 * n->npkgs, back)
                                       : phys_energy_total_uj_back(&nd->state, dram ? PHYS_ZONE_DRAM : PHYS_ZONE_PACKAGE,
                                                                   pkg, back);
                delta = now - n->last_uj[slot];
                n->last_uj[slot] = now;
                n->delta_uj += delta;
                n->part_delta_uj[part] += delta;
                int v = 0;
                while (v < ndv && dv[v] != delta)
                    v++;
                if (v < ndv) {
                    dc[v]++;
                    continue;
                }
                if (ndv < 4) {
                    dv[ndv] = delta;
                    dc[ndv++] = 1;
                    continue;
                }
            }
            for (int v = 0; v < ndv; v++) { /* at the end, or a fifth value: split what was counted */
                if (!dv[v])
                    continue;
                uint64_t given = split(dv[v], &w[z * m], m, sh);
                for (int k = 0; k < m; k++) {
                    struct run_job *j = &r->jobs[jobs[k]];
                    j->energy_uj[part] += sh[k] * (uint64_t)dc[v];
                    n->class_uj[j->t->cls] += sh[k] * (uint64_t)dc[v];
                }
                n->idle_uj += (dv[v] - given) * (uint64_t)dc[v];
            }
            ndv = 0;
            if (t >= 0) {
                dv[0] = delta;
                dc[0] = 1;
                ndv = 1;
            }
        }
    }
    free(w);
    free(sh);
    free(busy);
    free(held);
}

void run_energy(const struct run *r, uint64_t cls_uj[JOB_NCLASSES], uint64_t *idle_uj, uint64_t *nodes_uj)
{
    memset(cls_uj, 0, sizeof(uint64_t) * JOB_NCLASSES);
    *idle_uj = *nodes_uj = 0;
    for (int i = 0; i < r->nnodes; i++) {
        for (int c = 0; c < JOB_NCLASSES; c++)
            cls_uj[c] += r->nodes[i].class_uj[c];
        *idle_uj += r->nodes[i].idle_uj;
        *nodes_uj += r->nodes[i].delta_uj;
    }
}
