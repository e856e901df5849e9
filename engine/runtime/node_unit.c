/* node_unit: a node's job cgroup slots at run time (docs/interfaces.md "Job cgroups"; the
 * files are engine/render/render_cgroup.c's, the slot contract segment.h "Slots").
 *
 * A slot a job holds publishes, every tick, its CPU time as a time counter line (seg_view.h
 * units): at the tick's grid boundary the sum of its CPUs' busy ns since it was claimed, rising
 * by the sum of their busy rates per substep, frozen at the publication's horizon; so cpu.stat
 * shows exactly the CPUs' busy time that /proc/stat shows on their cpuN lines (the job holds
 * them alone). Its id, CPU mask, memory and process texts are published when they change; a
 * released slot publishes an empty id (its directory is gone) in the same publication.
 * The counter goes to the ledger like the busy counters (at the horizon), so a restart resumes
 * it where no reader was ahead; a job that claims the slot the resumed segment showed under
 * its id continues from there, any other job starts at 0. The values each slot publishes are the
 * template's (node_unit_vals_build); a node's slots are allocated when a job first claims one
 * (or the resumed segment showed one held), so a node that never runs a job holds none. Never:
 * allocation on the tick path but that first claim's, anything about runs or placement (the
 * run's load hook calls in). */
#include "node_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node_unit_vals *node_unit_vals_build(const struct binding *binds, uint32_t nv, uint32_t nunits)
{
    if (!nunits)
        return NULL;
    struct node_unit_vals *uv = calloc(nunits, sizeof *uv);
    if (!uv)
        abort();
    for (uint32_t k = 0; k < nunits; k++) {
        struct node_unit_vals *u = &uv[k];
        u->v_id = u->v_cid = u->v_cpu = u->v_mem = u->v_mem_max = u->v_weight = u->v_procs = SEG_NONE;
        u->v_pid = u->v_proc = u->v_name = SEG_NONE;
        u->v_mask[0] = u->v_mask[1] = SEG_NONE;
    }
    for (uint32_t v = 0; v < nv; v++) {
        const struct binding *b = &binds[v];
        if (b->kind < BK_UNIT_FIRST || b->kind > BK_UNIT_LAST || b->cpu >= nunits)
            continue;
        struct node_unit_vals *u = &uv[b->cpu];
        switch (b->kind) {
        case BK_UNIT_ID: *(b->zone ? &u->v_cid : &u->v_id) = v; break;
        case BK_UNIT_CPU: u->v_cpu = v; break;
        case BK_UNIT_MASK:
            if (b->pkg < 2) {
                u->v_mask[b->pkg] = v;
                u->nmask = u->nmask > b->pkg + 1 ? u->nmask : b->pkg + 1;
            }
            break;
        case BK_UNIT_MEM: u->v_mem = v; break;
        case BK_UNIT_MEM_MAX: u->v_mem_max = v; break;
        case BK_UNIT_WEIGHT: u->v_weight = v; break;
        case BK_UNIT_PROCS: u->v_procs = v; break;
        case BK_UNIT_PID: u->v_pid = v; break;
        case BK_UNIT_PROC: u->v_proc = v; break;
        case BK_UNIT_NAME: u->v_name = v; break;
        default: break;
        }
    }
    return uv;
}

void node_units_init(struct node *n)
{
    n->nunits = (int)n->t->ix.nunits;
    n->units = NULL; /* made when a job claims a slot or a resumed one showed a job (units_made) */
}

/* The node's slots, made now when none was needed before. */
static struct node_unit *units_made(struct node *n)
{
    if (!n->units && n->nunits && !(n->units = calloc((size_t)n->nunits, sizeof *n->units)))
        abort();
    return n->units;
}

void node_units_salvage(struct node *n)
{
    const struct node_unit_vals *uv = n->t->ix.unit_vals;
    for (int k = 0; k < n->nunits; k++) {
        struct seg_value v;
        if (uv[k].v_id == SEG_NONE || !seg_value_load(&n->seg, uv[k].v_id, &v) || v.type != SEG_V_TEXT || !v.len)
            continue;
        struct node_unit *u = &units_made(n)[k];
        size_t l = v.len < SEG_TEXT_MAX ? v.len : SEG_TEXT_MAX;
        memcpy(u->salvaged, v.text, l);
        u->salvaged[l] = 0;
        if (strlen(u->salvaged) != l)
            u->salvaged[0] = 0; /* a NUL inside: not an id the engine wrote */
    }
}

/* Σ of the unit's CPUs' busy ns at substep sub (this engine's physics). */
static uint64_t busy_sum(const struct node *n, const struct node_unit *u, uint64_t sub, uint64_t *rate)
{
    uint64_t sum = 0, r = 0;
    for (int w = 0; w < PHYS_MAX_CPUS / 64; w++)
        for (uint64_t m = u->mask[w]; m; m &= m - 1) {
            int c = w * 64 + __builtin_ctzll(m);
            if (c >= n->state.ncpus)
                continue;
            sum += phys_cpu_busy_ns(&n->state, c, sub);
            r += n->state.cpu[c].busy_rate_ns;
        }
    if (rate)
        *rate = r;
    return sum;
}

static void text_of(struct seg_value *out, const char *t, size_t len)
{
    memset(out, 0, sizeof *out);
    out->type = SEG_V_TEXT;
    if (len > SEG_TEXT_MAX)
        len = SEG_TEXT_MAX;
    memcpy(out->text, t, len);
    out->len = (uint8_t)len;
}

int node_unit_claim(struct node *n, const struct node_unit_info *info, bool *continued)
{
    *continued = false;
    if (!units_made(n))
        return -1;
    int pick = -1;
    for (int k = 0; k < n->nunits && pick < 0; k++) /* the slot that showed this id before a restart */
        if (!n->units[k].used && n->units[k].salvaged[0] && !strcmp(n->units[k].salvaged, info->id))
            pick = k, *continued = true;
    for (int k = 0; k < n->nunits && pick < 0; k++) /* else a free one nobody may come back to */
        if (!n->units[k].used && !n->units[k].salvaged[0])
            pick = k;
    for (int k = 0; k < n->nunits && pick < 0; k++)
        if (!n->units[k].used)
            pick = k;
    if (pick < 0)
        return -1;
    struct node_unit *u = &n->units[pick];
    u->used = true;
    u->dirty = true;
    n->units_quiet = false;
    u->salvaged[0] = 0;
    snprintf(u->id, sizeof u->id, "%s", info->id);
    snprintf(u->cid, sizeof u->cid, "%s", info->cid ? info->cid : "");
    memset(u->mask, 0, sizeof u->mask);
    for (int i = 0; i < info->ncpus; i++)
        if (info->cpus[i] >= 0 && info->cpus[i] < PHYS_MAX_CPUS)
            u->mask[info->cpus[i] / 64] |= 1ull << (info->cpus[i] % 64);
    u->mem = info->mem;
    u->mem_max = info->mem_max;
    u->weight = info->weight;
    u->pid = info->pid;
    snprintf(u->name, sizeof u->name, "%s", info->name ? info->name : "");
    /* its process started now: the node's elapsed time (its boot) in USER_HZ ticks */
    u->start_ticks = (n->cstart_elapsed_us + n->state.substeps * 1000) / 10000;
    u->threads = 0;
    u->first_cpu = -1;
    for (int i = 0; i < info->ncpus; i++)
        if (info->cpus[i] >= 0 && info->cpus[i] < PHYS_MAX_CPUS) {
            u->threads++;
            if (u->first_cpu < 0 || info->cpus[i] < u->first_cpu)
                u->first_cpu = info->cpus[i];
        }
    u->origin_ns = busy_sum(n, u, n->state.substeps, NULL);
    uint32_t v_cpu = n->t->ix.unit_vals[pick].v_cpu;
    if (!*continued && v_cpu != SEG_NONE)
        *node_cstart(n, v_cpu) = 0; /* a new job's CPU time starts at 0 */
    return pick;
}

uint64_t node_unit_cpu_ns(const struct node *n, int k)
{
    if (k < 0 || k >= n->nunits || !n->units || !n->units[k].used)
        return 0;
    const struct node_unit *u = &n->units[k];
    uint32_t v_cpu = n->t->ix.unit_vals[k].v_cpu;
    uint64_t now = busy_sum(n, u, n->state.substeps, NULL);
    return (v_cpu != SEG_NONE ? node_cstart_of(n, v_cpu) * 1000 : 0) + (now > u->origin_ns ? now - u->origin_ns : 0);
}

void node_unit_release(struct node *n, int k)
{
    if (k < 0 || k >= n->nunits || !n->units || !n->units[k].used)
        return;
    struct node_unit *u = &n->units[k];
    uint32_t v_cpu = n->t->ix.unit_vals[k].v_cpu;
    if (v_cpu != SEG_NONE) /* the ledger keeps the job's last total (nobody continues it) */
        *node_cstart(n, v_cpu) = node_unit_cpu_ns(n, k) / 1000;
    u->used = false;
    u->dirty = true;
    n->units_quiet = false;
    u->id[0] = u->cid[0] = 0;
}

uint64_t node_unit_total_us(const struct node *n, uint32_t v, uint64_t until_sub)
{
    int k = n->binds[v].cpu;
    if (n->units_quiet || k >= n->nunits || !n->units || !n->units[k].used) /* quiet: no slot's line to touch */
        return node_cstart_of(n, v);
    const struct node_unit *u = &n->units[k];
    uint64_t at = busy_sum(n, u, until_sub, NULL);
    return node_cstart_of(n, v) + (at > u->origin_ns ? at - u->origin_ns : 0) / 1000;
}

static void put(struct node_change *ch, uint32_t *nch, uint32_t v, const struct seg_value *x)
{
    if (v == SEG_NONE)
        return;
    ch[*nch].value = v;
    ch[*nch].v = *x;
    (*nch)++;
}

void node_units_collect(struct node *n, struct node_change *ch, uint32_t *nch, int64_t until_ns)
{
    char t[SEG_TEXT_MAX + 1];
    struct seg_value x;
    int64_t grid = n->state.now_ns - n->state.carry_ns;
    if (n->units_quiet)
        return; /* on a node without jobs, no pass over its slots each tick */
    bool quiet = true;
    for (int k = 0; k < n->nunits && n->units; k++) {
        struct node_unit *u = &n->units[k];
        const struct node_unit_vals *uv = &n->t->ix.unit_vals[k];
        quiet &= !u->used;
        if (u->used && uv->v_cpu != SEG_NONE) { /* the CPU-time line of this interval */
            uint64_t rate, ns = busy_sum(n, u, n->state.substeps, &rate);
            ns = ns > u->origin_ns ? ns - u->origin_ns : 0;
            memset(&x, 0, sizeof x);
            x.type = SEG_V_COUNTER;
            x.wrap_bits = 64;
            x.ctr.unit_nj = 1000;
            x.ctr.acc_uj = ns / 1000;
            x.ctr.rem_nj = (uint32_t)(ns % 1000);
            x.ctr.power_uw = rate;
            x.ctr.start_uj = node_cstart_of(n, uv->v_cpu);
            x.ctr.t0_ns = n->mono_origin + grid;
            x.nsub = (uint32_t)((until_ns - grid) / PHYS_SUBSTEP_NS);
            put(ch, nch, uv->v_cpu, &x);
        }
        if (!u->dirty)
            continue;
        u->dirty = false;
        /* the files under the slot first, its id last: all in this one publication */
        for (int w = 0; w < uv->nmask; w++) {
            memset(&x, 0, sizeof x);
            x.type = SEG_V_TEXT;
            x.len = SEG_TEXT_MAX;
            memcpy(x.text, (const unsigned char *)u->mask + w * SEG_TEXT_MAX,
                   sizeof u->mask - (size_t)w * SEG_TEXT_MAX < SEG_TEXT_MAX ? sizeof u->mask - (size_t)w * SEG_TEXT_MAX
                                                                          : SEG_TEXT_MAX);
            put(ch, nch, uv->v_mask[w], &x);
        }
        text_of(&x, t, (size_t)snprintf(t, sizeof t, "%llu\n", (unsigned long long)u->mem));
        put(ch, nch, uv->v_mem, &x);
        if (u->mem_max)
            text_of(&x, t, (size_t)snprintf(t, sizeof t, "%llu\n", (unsigned long long)u->mem_max));
        else
            text_of(&x, "max\n", 4);
        put(ch, nch, uv->v_mem_max, &x);
        text_of(&x, t, (size_t)snprintf(t, sizeof t, "%d\n", u->weight > 0 ? u->weight : 100));
        put(ch, nch, uv->v_weight, &x);
        if (u->used)
            text_of(&x, t, (size_t)snprintf(t, sizeof t, "%d\n", u->pid));
        else
            text_of(&x, "", 0);
        put(ch, nch, uv->v_procs, &x);
        /* the process: its texts, then its pid (the /proc slot's id) */
        text_of(&x, u->name, u->used ? strlen(u->name) : 0);
        put(ch, nch, uv->v_name, &x);
        if (u->used)
            text_of(&x, t, (size_t)snprintf(t, sizeof t, "%d %llu %d %d\n", u->pid, (unsigned long long)u->start_ticks,
                                            u->threads > 0 ? u->threads : 1, u->first_cpu > 0 ? u->first_cpu : 0));
        else
            text_of(&x, "", 0);
        put(ch, nch, uv->v_proc, &x);
        if (u->used)
            text_of(&x, t, (size_t)snprintf(t, sizeof t, "%d", u->pid));
        else
            text_of(&x, "", 0);
        put(ch, nch, uv->v_pid, &x);
        text_of(&x, u->cid, strlen(u->cid));
        put(ch, nch, uv->v_cid, &x);
        text_of(&x, u->id, strlen(u->id));
        put(ch, nch, uv->v_id, &x);
    }
    n->units_quiet = quiet; /* every dirty slot was published above */
}
