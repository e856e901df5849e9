/* node_cycles: the busy-cycle lines of a node's CPUs (BK_CPU_CYCLES zone 0, what IA32_APERF shows:
 * engine/render/render_msr.c, segment.h "Devices" CYCLES), and the lines of the time each package
 * spends throttled by its RAPL limits (zone 1, what MSR_PKG_PERF_STATUS shows: ns, at 1 ms a
 * substep while the interval's power is set by a limit an agent or the firmware wrote, never by a
 * fault's cap: PROCHOT and a lost PSU's share are no RAPL limit). A CPU's line counts the cycles it runs
 * while busy: its busy ns per substep (the physics' busy line) times its running frequency (the
 * kHz its scaling_cur_freq shows, held over the tick as that file holds it) / 10^6. Like a busy
 * line it is open-ended and republished only when its rate changes (a new utilisation or
 * frequency), rebased at that tick's grid boundary so it never goes back: cycles at substep s ≥
 * base_sub are base + rate·(s - base_sub). Units as the time counters (seg_view.h): acc_uj
 * thousands of cycles, rem_nj the rest, power_uw cycles per substep; the ledger holds the
 * thousands at the freeze horizon, and a restart continues from them (node_open.c's
 * resume_counters, like a busy counter). Never: allocation on the tick path, reading the segment. */
#include "node_internal.h"

#include <stdlib.h>

struct node_cyc_line *node_cyc_lines_build(const struct binding *binds, uint32_t nv, uint32_t ncyc)
{
    if (!ncyc)
        return NULL;
    struct node_cyc_line *l = calloc(ncyc, sizeof *l);
    if (!l)
        abort();
    uint32_t k = 0;
    for (uint32_t v = 0; v < nv && k < ncyc; v++)
        if (binds[v].kind == BK_CPU_CYCLES)
            l[k++] = (struct node_cyc_line){.v = v, .cpu = binds[v].cpu,
                                            .pkg = binds[v].zone == 1 ? (int16_t)binds[v].pkg : -1};
    return l;
}

void node_cycles_init(struct node *n)
{
    n->ncyc = n->t->ix.ncyc;
    if (!n->ncyc)
        return;
    n->cyc = calloc(n->ncyc, sizeof *n->cyc);
    if (!n->cyc)
        abort();
    for (uint32_t k = 0; k < n->ncyc; k++)
        n->cyc[k].rate = UINT64_MAX;
}

void node_cycles_free(struct node *n)
{
    free(n->cyc);
    n->cyc = NULL;
    n->ncyc = 0;
}

void node_cycles_republish(struct node *n)
{
    for (uint32_t k = 0; k < n->ncyc; k++)
        n->cyc[k].shown = false;
}

/* Cycles of line c at substep sub. */
static uint64_t cycles_at(const struct node_cyc *c, uint64_t sub)
{
    uint64_t rate = c->rate == UINT64_MAX ? 0 : c->rate;
    return c->base + (sub > c->base_sub ? sub - c->base_sub : 0) * rate;
}

uint64_t node_cycles_total(const struct node *n, uint32_t k, uint32_t v, uint64_t until_sub)
{
    if (k < n->ncyc && n->t->ix.cyc_lines[k].v == v)
        return node_cstart_of(n, v) + cycles_at(&n->cyc[k], until_sub) / 1000;
    return node_cstart_of(n, v);
}

bool node_rapl_throttled(const struct node *n, int k)
{
    if (k < 0 || k >= n->state.npkgs || k >= PHYS_MAX_PKGS || n->state.powered_off)
        return false;
    const struct phys_pkg_state *ps = &n->state.pkg[k];
    return ps->capped && !(ps->fault_cap_w > 0 && ps->cap_w >= ps->fault_cap_w);
}

void node_cycles_power_back(struct node *n)
{
    for (uint32_t k = 0; k < n->ncyc; k++) {
        struct node_cyc *c = &n->cyc[k];
        *node_cstart(n, n->t->ix.cyc_lines[k].v) = 0;
        c->base = 0;
        c->base_sub = n->state.substeps;
        c->shown = false;
    }
}

void node_cycles_collect(struct node *n, struct node_change *ch, uint32_t *nch)
{
    const struct seg_value *cur = n->seg.values; /* the engine's own: it is their only writer */
    uint64_t s = n->state.substeps;
    const struct node_cyc_line *l = n->t->ix.cyc_lines;
    for (uint32_t k = 0; k < n->ncyc; k++) {
        struct node_cyc *c = &n->cyc[k];
        int cpu = l[k].cpu < PHYS_MAX_CPUS ? l[k].cpu : 0;
        int64_t khz = phys_cpu_cpu_freq_khz(&n->params, &n->state, cpu);
        uint64_t rate = l[k].pkg >= 0 ? (node_rapl_throttled(n, l[k].pkg) ? (uint64_t)PHYS_SUBSTEP_NS : 0)
                                    : (uint64_t)n->state.cpu[cpu].busy_rate_ns * (uint64_t)(khz > 0 ? khz : 0) / 1000000;
        if (rate != c->rate) {
            c->base = cycles_at(c, s);
            c->base_sub = s;
            c->rate = rate;
            c->shown = false;
        }
        if (c->shown)
            continue;
        c->shown = true;
        struct node_change x = {.value = l[k].v, .v = cur[l[k].v]};
        x.v.ctr.acc_uj = c->base / 1000;
        x.v.ctr.rem_nj = (uint32_t)(c->base % 1000);
        x.v.ctr.power_uw = c->rate;
        x.v.ctr.start_uj = node_cstart_of(n, l[k].v);
        x.v.ctr.t0_ns = n->mono_origin + (int64_t)c->base_sub * PHYS_SUBSTEP_NS;
        x.v.nsub = UINT32_MAX;
        ch[(*nch)++] = x;
    }
}
