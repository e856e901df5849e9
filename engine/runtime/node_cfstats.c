/* node_cfstats: the cpufreq/stats lines of a node's table-driver policies at run time (the files
 * are engine/render/render_cpufreq.c's, their views seg_view.h SEG_VIEW_CF_*).
 *
 * Each policy is in one table entry: the one its driver resolves the policy's running frequency
 * to, CPUFREQ_RELATION_L (the lowest entry at or above it; above the table, in the boost range,
 * the top one). A tick that finds a policy in another entry than the last one counts one
 * transition at the tick's grid boundary: the old entry's time line stops there, the new one's
 * starts (1 ms per substep), and the (old, new) count goes up by one. So a policy that stays in
 * its entry publishes nothing, and a transition publishes three values. Every line is a time
 * counter (seg_view.h units, a count n as n·1000 ns), open-ended like the busy lines (the view
 * caps it at the elapsed counter's horizon), and goes to the ledger at the horizon, so a restart
 * resumes it where no reader was ahead. A reset (cpufreq/stats/reset, drained by node.c) zeroes
 * the policy's lines at the next tick, its current entry counting again from there, as
 * cpufreq_stats.c's deferred reset shows them. Never: allocation on the tick path, reading the
 * segment. */
#include "node.h"

#include <stdlib.h>

void node_cfstats_init(struct node *n)
{
    n->ncfpol = 0;
    for (uint32_t v = 0; v < n->nvalues; v++) {
        const struct binding *b = &n->binds[v];
        bool first = b->kind == BK_CF_STAT && (v == 0 || n->binds[v - 1].kind != BK_CF_STAT ||
                                               n->binds[v - 1].cpu != b->cpu);
        if (first && b->pkg >= 1 && v + (uint32_t)b->pkg * (b->pkg + 1u) <= n->nvalues)
            n->ncfpol++;
    }
    if (!n->ncfpol)
        return;
    n->cfpol = calloc((size_t)n->ncfpol, sizeof *n->cfpol);
    n->cf_base = calloc(n->nvalues + 1, sizeof *n->cf_base);
    n->cf_since = malloc((n->nvalues + 1) * sizeof *n->cf_since);
    if (!n->cfpol || !n->cf_base || !n->cf_since)
        abort();
    for (uint32_t v = 0; v <= n->nvalues; v++)
        n->cf_since[v] = UINT64_MAX;
    int k = 0;
    for (uint32_t v = 0; v < n->nvalues; v++) {
        const struct binding *b = &n->binds[v];
        bool first = b->kind == BK_CF_STAT && (v == 0 || n->binds[v - 1].kind != BK_CF_STAT ||
                                               n->binds[v - 1].cpu != b->cpu);
        if (first && b->pkg >= 1 && v + (uint32_t)b->pkg * (b->pkg + 1u) <= n->nvalues)
            n->cfpol[k++] = (struct node_cfpol){.v0 = v, .cpu = b->cpu, .k = b->pkg, .cur = -1, .all = true};
    }
}

void node_cfstats_free(struct node *n)
{
    free(n->cfpol);
    free(n->cf_base);
    free(n->cf_since);
    n->cfpol = NULL;
    n->cf_base = NULL;
    n->cf_since = NULL;
    n->ncfpol = 0;
}

/* The table entry of a running frequency (CPUFREQ_RELATION_L over the whole table). */
static int entry_of(const struct phys_cpu_params *p, int k, int64_t khz)
{
    int best = -1, top = 0;
    for (int i = 0; i < k && i < p->freq_n; i++) {
        if (p->freq_khz[i] > p->freq_khz[top])
            top = i;
        if (p->freq_khz[i] >= khz && (best < 0 || p->freq_khz[i] < p->freq_khz[best]))
            best = i;
    }
    return best >= 0 ? best : top;
}

void node_cfstats_reset(struct node *n, uint16_t cpu)
{
    for (int i = 0; i < n->ncfpol; i++)
        if (n->cfpol[i].cpu == cpu)
            n->cfpol[i].reset = true;
}

void node_cfstats_forget_resets(struct node *n)
{
    for (int i = 0; i < n->ncfpol; i++)
        n->cfpol[i].reset = false;
}

/* One line as it is now: its base, running from cf_since[v] when that is not UINT64_MAX. */
static void push(const struct node *n, uint32_t v, uint64_t now_sub, struct node_change *ch, uint32_t *nch)
{
    struct node_change c = {.value = v, .v = {.type = SEG_V_COUNTER, .wrap_bits = 64}};
    uint64_t base = n->cf_base[v], since = n->cf_since[v];
    c.v.ctr.acc_uj = base / 1000;
    c.v.ctr.rem_nj = (uint32_t)(base % 1000);
    c.v.ctr.unit_nj = 1000;
    c.v.ctr.power_uw = since != UINT64_MAX ? PHYS_SUBSTEP_NS : 0;
    c.v.ctr.start_uj = n->cstart[v];
    c.v.ctr.t0_ns = n->mono_origin + (int64_t)(since != UINT64_MAX ? since : now_sub) * PHYS_SUBSTEP_NS;
    c.v.nsub = UINT32_MAX;
    ch[(*nch)++] = c;
}

void node_cfstats_collect(struct node *n, struct node_change *ch, uint32_t *nch)
{
    uint64_t now_sub = n->state.substeps;
    for (int i = 0; i < n->ncfpol; i++) {
        struct node_cfpol *pol = &n->cfpol[i];
        uint32_t k = pol->k, cells = k + k * k;
        int e = entry_of(&n->params, (int)k, phys_cpu_cpu_freq_khz(&n->params, &n->state, pol->cpu));
        if (pol->reset) {
            for (uint32_t j = 0; j < cells; j++) {
                n->cf_base[pol->v0 + j] = 0;
                n->cstart[pol->v0 + j] = 0;
                n->cf_since[pol->v0 + j] = UINT64_MAX;
            }
            n->cf_since[pol->v0 + (uint32_t)e] = now_sub;
            pol->cur = e;
            pol->reset = false;
            pol->all = true;
        } else if (e != pol->cur) {
            uint32_t to = pol->v0 + (uint32_t)e;
            if (pol->cur >= 0) {
                uint32_t from = pol->v0 + (uint32_t)pol->cur;
                uint32_t cell = pol->v0 + k + (uint32_t)pol->cur * k + (uint32_t)e;
                if (now_sub > n->cf_since[from])
                    n->cf_base[from] += (now_sub - n->cf_since[from]) * PHYS_SUBSTEP_NS;
                n->cf_since[from] = UINT64_MAX;
                n->cf_base[cell] += 1000;
                if (!pol->all) {
                    push(n, from, now_sub, ch, nch);
                    push(n, cell, now_sub, ch, nch);
                }
            }
            n->cf_since[to] = now_sub;
            pol->cur = e;
            if (!pol->all)
                push(n, to, now_sub, ch, nch);
        }
        if (pol->all) { /* the first tick (every line with its resumed start) and a reset */
            for (uint32_t j = 0; j < cells; j++)
                push(n, pol->v0 + j, now_sub, ch, nch);
            pol->all = false;
        }
    }
}

uint64_t node_cfstats_total_us(const struct node *n, uint32_t v, uint64_t until_sub)
{
    if (!n->cf_base)
        return n->cstart[v];
    uint64_t ns = n->cf_base[v], since = n->cf_since[v];
    if (since != UINT64_MAX && until_sub > since)
        ns += (until_sub - since) * PHYS_SUBSTEP_NS;
    return n->cstart[v] + ns / 1000;
}
