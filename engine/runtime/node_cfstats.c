/* node_cfstats: the cpufreq/stats lines of a node's table-driver policies at run time (the files
 * are engine/render/render_cpufreq.c's, their views seg_view.h SEG_VIEW_CF_*).
 *
 * Each policy is in one table entry: the one its driver resolves the policy's running frequency
 * to, CPUFREQ_RELATION_L (the lowest entry at or above it; above the table, in the boost range,
 * the top one). node.c hands over each policy's frequency when its scaling_cur_freq value moves
 * (node_cfstats_freq), so a steady policy costs nothing; a tick that finds a policy in another
 * entry than the last one counts one transition at the tick's grid boundary: the old entry's time line stops there, the new one's
 * starts (1 ms per substep), and the (old, new) count goes up by one. So a policy that stays in
 * its entry publishes nothing, and a transition publishes three values. Every time line is a
 * SEG_V_LINE (seg_view.h time units), open-ended like the busy lines (the view caps a time line
 * at the elapsed counter's horizon); the k² counts are packed SEG_COUNTS_PER_VALUE to a
 * SEG_V_COUNTS value (segment format 9). The engine keeps a policy's k times, its k² counts and
 * the substep its current entry became current. They are not in the ledger,
 * which the engine rewrites whole every tick (1,536 values on a 384-CPU node would cost every
 * tick): a restart resumes each from the snapshot the last engine left, at that snapshot's
 * elapsed horizon (the most a reader can have seen), each bounded by the elapsed time the
 * ledger resumed (the snapshot is agents' to write). A damaged segment rendered again starts
 * them at 0. A reset (cpufreq/stats/reset, drained by node.c) zeroes
 * the policy's lines at the next tick, its current entry counting again from there, as
 * cpufreq_stats.c's deferred reset shows them. Never: allocation on the tick path, reading the
 * segment. */
#include "node_internal.h"
#include "seg_view.h"

#include <stdlib.h>

void node_cfstats_init(struct node *n)
{
    n->ncfpol = 0;
    uint32_t ntime = 0, ncount = 0;
    for (int pass = 0; pass < 2; pass++) {
        int k = 0;
        for (uint32_t v = 0; v < n->nvalues; v++) {
            const struct binding *b = &n->binds[v];
            bool first = b->kind == BK_CF_STAT && (v == 0 || n->binds[v - 1].kind != BK_CF_STAT ||
                                                   n->binds[v - 1].cpu != b->cpu);
            if (!first || b->pkg < 1 || v + b->pkg + (uint32_t)SEG_CF_COUNT_VALUES(b->pkg) > n->nvalues)
                continue;
            if (pass == 0) {
                n->ncfpol++;
                continue;
            }
            n->cfpol[k++] = (struct node_cfpol){.v0 = v, .t = ntime, .c = ncount, .since = UINT64_MAX,
                                                .cpu = b->cpu, .k = b->pkg, .cur = -1, .next = -1, .all = true};
            ntime += b->pkg;
            ncount += (uint32_t)b->pkg * b->pkg;
        }
        if (!n->ncfpol)
            return;
        if (pass == 0)
            n->cfpol = calloc((size_t)n->ncfpol, sizeof *n->cfpol);
        if (!n->cfpol)
            abort();
    }
    n->cf_time = calloc(ntime, sizeof *n->cf_time);
    n->cf_count = calloc(ncount, sizeof *n->cf_count);
    n->cf_dirty = malloc((size_t)n->ncfpol * sizeof *n->cf_dirty);
    n->cf_of_cpu = calloc(PHYS_MAX_CPUS, sizeof *n->cf_of_cpu);
    if (!n->cf_time || !n->cf_count || !n->cf_dirty || !n->cf_of_cpu)
        abort();
    for (int i = 0; i < n->ncfpol; i++) {
        if (n->cfpol[i].cpu < PHYS_MAX_CPUS)
            n->cf_of_cpu[n->cfpol[i].cpu] = (uint16_t)(i + 1);
        n->cf_dirty[i] = i; /* the first tick publishes every line */
        n->cfpol[i].dirty = true;
    }
    n->ncf_dirty = n->ncfpol;
}

void node_cfstats_free(struct node *n)
{
    free(n->cfpol);
    free(n->cf_time);
    free(n->cf_count);
    free(n->cf_dirty);
    free(n->cf_of_cpu);
    n->cf_dirty = NULL;
    n->cf_of_cpu = NULL;
    n->ncf_dirty = 0;
    n->cfpol = NULL;
    n->cf_time = NULL;
    n->cf_count = NULL;
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

static void mark(struct node *n, int i)
{
    if (!n->cfpol[i].dirty) {
        n->cfpol[i].dirty = true;
        n->cf_dirty[n->ncf_dirty++] = i;
    }
}

void node_cfstats_reset(struct node *n, uint16_t cpu)
{
    int i = cpu < PHYS_MAX_CPUS && n->cf_of_cpu ? n->cf_of_cpu[cpu] - 1 : -1;
    if (i >= 0) {
        n->cfpol[i].reset = true;
        mark(n, i);
    }
}

void node_cfstats_freq(struct node *n, uint16_t cpu, int64_t khz)
{
    int i = cpu < PHYS_MAX_CPUS && n->cf_of_cpu ? n->cf_of_cpu[cpu] - 1 : -1;
    if (i < 0)
        return;
    struct node_cfpol *pol = &n->cfpol[i];
    pol->next = (int8_t)entry_of(&n->params, pol->k, khz);
    if (pol->next != pol->cur)
        mark(n, i);
}

void node_cfstats_republish(struct node *n)
{
    for (int i = 0; i < n->ncfpol; i++) {
        n->cfpol[i].all = true;
        mark(n, i);
    }
}

void node_cfstats_forget_resets(struct node *n)
{
    for (int i = 0; i < n->ncfpol; i++)
        n->cfpol[i].reset = false;
}

/* Time line j of policy pol as it is now: its base, running from pol->since while it is the
 * current entry's. */
static void push_time(const struct node *n, const struct node_cfpol *pol, uint32_t j, uint64_t now_sub,
                      struct node_change *ch, uint32_t *nch)
{
    struct node_change c = {.value = pol->v0 + j, .v = {.type = SEG_V_LINE, .wrap_bits = 64}};
    uint64_t base = n->cf_time[pol->t + j];
    uint64_t since = (int)j == pol->cur ? pol->since : UINT64_MAX;
    c.v.ctr.acc_uj = base / 1000;
    c.v.ctr.rem_nj = (uint32_t)(base % 1000);
    c.v.ctr.unit_nj = 1000;
    c.v.ctr.power_uw = since != UINT64_MAX ? PHYS_SUBSTEP_NS : 0;
    c.v.ctr.t0_ns = n->mono_origin + (int64_t)(since != UINT64_MAX ? since : now_sub) * PHYS_SUBSTEP_NS;
    c.v.nsub = UINT32_MAX;
    ch[(*nch)++] = c;
}

/* The m-th counts value of policy pol: its counts m·SEG_COUNTS_PER_VALUE onwards (segment.h
 * SEG_V_COUNTS). */
static void push_counts(const struct node *n, const struct node_cfpol *pol, uint32_t m, struct node_change *ch,
                        uint32_t *nch)
{
    struct node_change c = {.value = pol->v0 + pol->k + m,
                            .v = {.type = SEG_V_COUNTS, .len = SEG_COUNTS_PER_VALUE * 4}};
    uint32_t cells = (uint32_t)pol->k * pol->k, from = m * SEG_COUNTS_PER_VALUE;
    for (uint32_t i = 0; i < SEG_COUNTS_PER_VALUE && from + i < cells; i++)
        memcpy(c.v.text + i * 4, &n->cf_count[pol->c + from + i], 4);
    ch[(*nch)++] = c;
}

void node_cfstats_collect(struct node *n, struct node_change *ch, uint32_t *nch)
{
    uint64_t now_sub = n->state.substeps;
    for (int d = 0; d < n->ncf_dirty; d++) {
        struct node_cfpol *pol = &n->cfpol[n->cf_dirty[d]];
        pol->dirty = false;
        uint32_t k = pol->k;
        int e = pol->next >= 0 ? pol->next : pol->cur;
        if (e < 0)
            e = entry_of(&n->params, (int)k, phys_cpu_cpu_freq_khz(&n->params, &n->state, pol->cpu));
        if (pol->reset) {
            memset(&n->cf_time[pol->t], 0, k * sizeof *n->cf_time);
            memset(&n->cf_count[pol->c], 0, k * k * sizeof *n->cf_count);
            pol->since = now_sub;
            pol->cur = (int8_t)e;
            pol->reset = false;
            pol->all = true;
        } else if (e != pol->cur) {
            if (pol->cur >= 0) {
                uint32_t from = (uint32_t)pol->cur, cell = from * k + (uint32_t)e;
                if (pol->since != UINT64_MAX && now_sub > pol->since)
                    n->cf_time[pol->t + from] += (now_sub - pol->since) * PHYS_SUBSTEP_NS;
                pol->since = UINT64_MAX;
                if (n->cf_count[pol->c + cell] < UINT32_MAX)
                    n->cf_count[pol->c + cell]++;
                if (!pol->all) {
                    push_time(n, pol, from, now_sub, ch, nch);
                    push_counts(n, pol, cell / SEG_COUNTS_PER_VALUE, ch, nch);
                }
            }
            pol->since = now_sub;
            pol->cur = (int8_t)e;
            if (!pol->all)
                push_time(n, pol, (uint32_t)e, now_sub, ch, nch);
        }
        if (pol->all) { /* the first tick (every line with its resumed start) and a reset */
            for (uint32_t j = 0; j < k; j++)
                push_time(n, pol, j, now_sub, ch, nch);
            for (uint32_t m = 0; m < (uint32_t)SEG_CF_COUNT_VALUES(k); m++)
                push_counts(n, pol, m, ch, nch);
            pol->all = false;
        }
    }
    n->ncf_dirty = 0;
}

/* a line of the old snapshot at time t, saturating at cap (its values are untrusted) */
static uint64_t old_line_at(const struct seg_value *v, int64_t t, uint64_t cap)
{
    if (v->type != SEG_V_LINE || v->ctr.acc_uj > cap / 1000)
        return v->type == SEG_V_LINE ? cap : 0;
    uint64_t ns = v->ctr.acc_uj * 1000 + (v->ctr.rem_nj < 1000 ? v->ctr.rem_nj : 999);
    uint64_t rate = v->ctr.power_uw < PHYS_SUBSTEP_NS ? v->ctr.power_uw : PHYS_SUBSTEP_NS;
    if (rate && t > v->ctr.t0_ns) {
        uint64_t steps = (uint64_t)(t - v->ctr.t0_ns) / PHYS_SUBSTEP_NS;
        if (steps > cap / PHYS_SUBSTEP_NS + 1)
            steps = cap / PHYS_SUBSTEP_NS + 1;
        ns += steps * rate;
    }
    return ns < cap ? ns : cap;
}

void node_cfstats_resume(struct node *n)
{
    if (!n->ncfpol)
        return;
    uint32_t el = SEG_NONE;
    for (uint32_t v = 0; v < n->nvalues && el == SEG_NONE; v++)
        if (n->binds[v].kind == BK_ELAPSED)
            el = v;
    struct seg_value e;
    if (el == SEG_NONE || !seg_value_load(&n->seg, el, &e) || e.type != SEG_V_COUNTER)
        return;
    /* the old snapshot's horizon, and the elapsed time the ledger resumed (ns) as the bound */
    int64_t horizon = e.ctr.t0_ns + (int64_t)(e.nsub < UINT32_MAX / 2 ? e.nsub : 0) * PHYS_SUBSTEP_NS;
    uint64_t cap = n->cstart_elapsed_us < UINT64_MAX / 1000 ? n->cstart_elapsed_us * 1000 : UINT64_MAX;
    for (int i = 0; i < n->ncfpol; i++) {
        const struct node_cfpol *pol = &n->cfpol[i];
        struct seg_value v;
        for (uint32_t j = 0; j < pol->k; j++)
            if (seg_value_load(&n->seg, pol->v0 + j, &v))
                n->cf_time[pol->t + j] = old_line_at(&v, horizon, cap);
        /* a count n was a line of n·1000 ns before format 9: bounded as that line was */
        uint64_t most = cap / 1000 < UINT32_MAX ? cap / 1000 : UINT32_MAX;
        for (uint32_t cell = 0; cell < (uint32_t)pol->k * pol->k; cell++) {
            uint32_t c = 0;
            if (seg_value_load(&n->seg, pol->v0 + pol->k + cell / SEG_COUNTS_PER_VALUE, &v) && v.type == SEG_V_COUNTS)
                memcpy(&c, v.text + (cell % SEG_COUNTS_PER_VALUE) * 4, 4);
            n->cf_count[pol->c + cell] = c < most ? c : (uint32_t)most;
        }
    }
}
