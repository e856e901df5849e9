/* node: a node's life in the engine: render or resume its segment, and each tick drain what
 * agents wrote, step the physics, publish. See node.h.
 *
 * Resume rules (Joulie emulate mode, "Restarts and recovery"; docs/sources.md): an existing segment is resumed when
 * it was rendered for the same node, profile and profile values (the layout hash covers the
 * entries and the profile tree); anything else stops the start with an error naming the node
 * and the remedy. On resume every counter continues from max(ledger, read high-water mark),
 * so no counter ever decreases, and no energy accrues for the time the engine was down; the
 * limits and settings agents wrote are read back from the segment, validated again and applied.
 * (Precisely: every counter resumes from seg_resume_total, segment.h "Resume": the horizon of
 * the last visible snapshot, which no read of it can exceed, bounded by the ledger.)
 *
 * Damage (docs/robustness.md): the engine's view of a segment is private. Its geometry, entries,
 * strings and params are the template image's; it never reads an index or a count from the
 * file. Each tick it compares the file's header with the image, and every 8th tick it fstat()s
 * the file. The static file a layout's nodes share (segment.h "Files") is checked by one of
 * them (struct node_static's checker): its bytes against the image every tick, its path and size
 * every 8th. What it finds, it reports (one stderr line per kind and node, and a
 * joulie.sim.segment.damaged event each time, naming the file) and repairs, and the node keeps
 * running from its private state:
 *   header or static file changed: rewritten from the image;
 *   static file deleted, replaced or shrunk: put back whole (readers that mapped the old one
 *     keep it: its content is the same);
 *   file shrunk (a SIGBUS the guard caught, or the fstat): grown back, its space reserved, mapped
 *     afresh and rewritten from the image; counters continue from the physics; when the cut
 *     reached the snapshot copies the settings agents wrote are lost with them, and the node
 *     goes back to the profile's (its physics too, so file and physics agree);
 *   file deleted or replaced: a new file is put at the path with the old one's dynamic part
 *     (snapshot, slots, marks, ledger), so counters and settings continue; agents that mapped
 *     the old file keep its last values until they open the node again.
 * At start, a segment whose header is not the template's (but names this node and profile) or
 * whose size is not the template's is damaged too: the node is rendered again, its counters
 * salvaged from the old file's ledger and snapshot read with the template's geometry when the
 * file is large enough (else they start at zero, said on stderr). */
#include "node.h"
#include "params.h"
#include "render.h"

#include "events.h"
#include "profile.h"
#include "seg_attr.h"
#include "ytree.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t fnv(uint64_t h, const char *s)
{
    return seg_hash_bytes(h, s, strlen(s) + 1);
}

static uint64_t hash_node(uint64_t h, const struct yt_node *n)
{
    if (!n)
        return fnv(h, "~");
    switch (n->kind) {
    case YT_SCALAR:
        return fnv(h, n->text);
    case YT_SEQ:
        h = fnv(h, "[");
        for (int i = 0; i < n->n; i++)
            h = hash_node(h, n->vals[i]);
        return fnv(h, "]");
    case YT_MAP:
        h = fnv(h, "{");
        for (int i = 0; i < n->n; i++)
            h = hash_node(fnv(h, n->keys[i]->text), n->vals[i]);
        return fnv(h, "}");
    }
    return h;
}

uint64_t node_tree_hash(const struct yt_node *tree)
{
    return hash_node(1469598103934665603ULL, tree);
}

/* --- agent writes into the physics -------------------------------------------------------- */

static int epp_value(const char *t)
{
    static const struct {
        const char *name;
        int v;
    } names[] = {{"performance", 0}, {"balance_performance", 128}, {"balance_power", 192}, {"power", 255},
                 {"default", 128}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strncmp(t, names[i].name, strlen(names[i].name)) && (t[strlen(names[i].name)] == '\n'))
            return names[i].v;
    return atoi(t);
}

static void apply_gpu(struct node *n, const struct binding *b, const char *text, long long v)
{
    if (b->pkg >= PHYS_GPU_MAX)
        return;
    struct phys_gpu *g = &n->gstate.g[b->pkg];
    int lo = 0, hi = 0;
    switch (b->zone) {
    case GS_LIMIT_MW:
        if (text[0] != '[') /* a token: the limit is not supported */
            g->limit_w = (double)v / 1000;
        break;
    case GS_CAP_UW: g->limit_w = (double)v / 1e6; break;
    case GS_INTEL_PL1_UW: g->limit_w = (double)v / 1e6; break;
    case GS_PERSISTENCE: g->persistence = v != 0; break;
    case GS_LOCK_GFX:
    case GS_LOCK_MEM:
        if (sscanf(text, "%d %d", &lo, &hi) != 2)
            lo = hi = 0; /* "none" */
        if (b->zone == GS_LOCK_GFX)
            g->lock_gfx_max = hi;
        else
            g->lock_mem_max = hi;
        break;
    default: break; /* the performance level is kept by its file; it changes no physics */
    }
}

/* A policy's setting goes to every CPU of the policy. */
#define SET_POLICY(n, b, field, value)                                                                \
    do {                                                                                              \
        int end_ = (n)->params.policy_span > 1 ? (n)->state.ncpus : (b)->cpu + 1;                     \
        for (int i_ = (b)->cpu; i_ < end_ && i_ < (n)->state.ncpus; i_++)                            \
            if ((n)->params.cpu_policy[i_] == (b)->cpu)                                               \
                (n)->state.cpu[i_].field = (value);                                                   \
    } while (0)

static void apply(struct node *n, const struct binding *b, const char *text)
{
    struct phys_pkg_state *k = &n->state.pkg[b->pkg < PHYS_MAX_PKGS ? b->pkg : 0];
    long long v = strtoll(text, NULL, 10);
    int32_t khz = v < 0 ? 0 : v > INT32_MAX ? INT32_MAX : (int32_t)v;
    switch (b->kind) {
    case BK_PL_LIMIT: k->pl_limit_uw[b->pl < PHYS_NPL ? b->pl : 0] = v; break;
    case BK_PL1_WINDOW: k->pl1_window_us = v; break;
    case BK_ZONE_ENABLED: k->rapl_enabled = v != 0; break;
    case BK_GOVERNOR: SET_POLICY(n, b, governor, params_governor_of(text)); break;
    case BK_MIN_FREQ: SET_POLICY(n, b, scaling_min_khz, khz); break;
    case BK_MAX_FREQ: SET_POLICY(n, b, scaling_max_khz, khz); break;
    case BK_EPP: SET_POLICY(n, b, epp, epp_value(text)); break;
    case BK_BOOST: n->state.boost = v != 0; break;
    case BK_NO_TURBO: n->state.boost = v == 0; break;
    case BK_MAX_PERF_PCT: n->state.max_perf_pct = (int32_t)(v < 0 ? 0 : v > 100 ? 100 : v); break;
    case BK_MIN_PERF_PCT: n->state.min_perf_pct = (int32_t)(v < 0 ? 0 : v > 100 ? 100 : v); break;
    case BK_HSMP_CAP: k->hsmp_cap_uw = v; break;
    case BK_GPU_SET: apply_gpu(n, b, text, v); break;
    case BK_CF_RESET: node_cfstats_reset(n, b->cpu); break;
    default: break;
    }
}

/* --- publication --------------------------------------------------------------------------- */


static void text_value(struct seg_value *v, const char *text)
{
    size_t n = strlen(text);
    if (n > sizeof v->text)
        n = sizeof v->text;
    memcpy(v->text, text, n);
    v->len = (uint8_t)n;
}

static void publish(struct node *n, struct node_change *ch, uint32_t nch, int64_t now_mono)
{
    struct seg *s = &n->seg;
    seg_publish_begin(s);
    for (int copy = 0; copy < 2; copy++) {
        struct seg_value *c = seg_writable_copy(s);
        for (uint32_t i = 0; i < nch; i++)
            c[ch[i].value] = ch[i].v;
        if (!copy)
            seg_publish_flip(s);
    }
    seg_publish_end(s, now_mono);
}

void node_rebase(struct node *n, int64_t now_mono)
{
    n->mono_origin = now_mono - n->state.now_ns;
    for (uint32_t v = 0; v <= n->nvalues; v++) { /* as at the open: nothing shown yet */
        n->shown[v] = -1;
        n->busy_shown[v] = UINT64_MAX;
    }
    n->freq_dirty = n->busy_dirty = true;
    node_cfstats_republish(n);
}

void node_wake(struct node *n, int64_t mono)
{
    if (mono < n->wake_mono)
        n->wake_mono = mono;
}

bool node_settling(const struct node *n)
{
    if (n->state.settling)
        return true;
    int ngpus = n->gparams.vendor == PHYS_GPU_NONE ? 0 : n->gparams.count;
    for (int k = 0; k < ngpus && k < PHYS_GPU_MAX; k++)
        if (n->gstate.g[k].enforced_w != n->gstate.g[k].target_w)
            return true;
    return false;
}

bool node_has_writes(const struct node *n)
{
    if (!n->seg.h)
        return false;
    return atomic_load_explicit(&n->seg.h->slot_writes, memory_order_acquire) != n->slot_writes_seen ||
           atomic_load_explicit(&n->seg.h->ring_head, memory_order_acquire) != n->ev_tail;
}

double node_power_w(const struct node *n)
{
    double w = n->params.platform_other_w;
    for (int k = 0; k < n->state.npkgs; k++)
        w += n->state.pkg[k].power_w + (double)n->state.pkg[k].energy[PHYS_ZONE_DRAM].power_uw / 1e6;
    int ngpus = n->gparams.vendor == PHYS_GPU_NONE ? 0 : n->gparams.count;
    for (int k = 0; k < ngpus && k < PHYS_GPU_MAX; k++)
        w += n->gstate.g[k].power_w;
    return w;
}

double node_power_avg_w(const struct node *n)
{
    double s = (double)(n->power.last_mono - n->power.since_mono) / 1e9;
    return s > 0 ? n->power.energy_j / s : n->power.current_w;
}

int64_t node_power_period_ms(const struct node *n)
{
    return (n->power.last_mono - n->power.since_mono) / 1000000;
}

/* One sample of the node's power at a tick (after the interval's power is decided). */
static void sample_power(struct node *n, int64_t now_mono, int64_t now_wall)
{
    struct node_power_stats *p = &n->power;
    double w = node_power_w(n);
    if (!p->since_mono) {
        p->since_mono = p->last_mono = now_mono;
        p->since_wall_ns = now_wall;
        p->min_w = p->max_w = w;
    } else {
        p->energy_j += p->held_w * (double)(now_mono - p->last_mono) / 1e9;
        p->last_mono = now_mono;
    }
    p->current_w = p->held_w = w;
    if (w < p->min_w)
        p->min_w = w;
    if (w > p->max_w)
        p->max_w = w;
}

/* A pm_counters file's text at wall time now_wall (render_platform.c). */
static void pm_text(const struct node *n, const struct binding *b, int64_t now_wall, char *t, size_t len)
{
    const struct phys_cpu_state *s = &n->state;
    long long us = (long long)(now_wall / 1000);
    double w = 0;
    uint64_t uj = 0;
    bool energy = false;
    switch (b->zone) {
    case PM_POWER: w = node_power_w(n); break;
    case PM_CPU_POWER:
        for (int k = 0; k < s->npkgs; k++)
            w += s->pkg[k].power_w;
        break;
    case PM_MEMORY_POWER:
        for (int k = 0; k < s->npkgs; k++)
            w += (double)s->pkg[k].energy[PHYS_ZONE_DRAM].power_uw / 1e6;
        break;
    case PM_ACCEL_POWER: w = b->pkg < PHYS_GPU_MAX ? n->gstate.g[b->pkg].power_w : 0; break;
    case PM_ENERGY: {
        energy = true;
        uj = phys_energy_total_uj(s, PHYS_ZONE_PSYS, 0);
        int ngpus = n->gparams.vendor == PHYS_GPU_NONE ? 0 : n->gparams.count;
        for (int k = 0; k < ngpus && k < PHYS_GPU_MAX; k++)
            uj += phys_gpu_total_uj(&n->gstate, k);
        break;
    }
    case PM_CPU_ENERGY:
        energy = true;
        for (int k = 0; k < s->npkgs; k++)
            uj += phys_energy_total_uj(s, PHYS_ZONE_PACKAGE, k);
        break;
    case PM_MEMORY_ENERGY:
        energy = true;
        for (int k = 0; k < s->npkgs; k++)
            uj += phys_energy_total_uj(s, PHYS_ZONE_DRAM, k);
        break;
    case PM_ACCEL_ENERGY:
        energy = true;
        uj = b->pkg < PHYS_GPU_MAX ? phys_gpu_total_uj(&n->gstate, b->pkg) : 0;
        break;
    case PM_FRESHNESS: { /* samples since startup at raw_scan_hz (b->pkg; 10 Hz on XC/EX blades) */
        long long hz = b->pkg ? b->pkg : 10;
        snprintf(t, len, "%lld\n", (long long)((now_wall - n->power.since_wall_ns) / (1000000000 / hz)));
        return;
    }
    case PM_STARTUP:
        snprintf(t, len, "%lld\n", (long long)(n->power.since_wall_ns / 1000));
        return;
    }
    if (energy)
        snprintf(t, len, "%llu J %lld us\n", (unsigned long long)(uj / 1000000), us);
    else
        snprintf(t, len, "%.0f W %lld us\n", w, us);
}

/* The node-wide values computed here: the elapsed-time counter (every tick), the load averages,
 * the memory share and the package temperatures (when the shown text moves). Fills v whole;
 * false when it shows what it showed. */
static bool fresh_value(struct node *n, const struct binding *b, uint32_t v, struct seg_value *out, int64_t until_ns)
{
    char text[SEG_TEXT_MAX];
    switch (b->kind) {
    case BK_ELAPSED: {
        int64_t grid = n->state.now_ns - n->state.carry_ns;
        *out = (struct seg_value){.type = SEG_V_COUNTER, .wrap_bits = 64};
        out->ctr.acc_uj = n->state.substeps * 1000;
        out->ctr.power_uw = 1000000;
        out->ctr.unit_nj = 1000;
        out->ctr.start_uj = n->cstart[v];
        out->ctr.t0_ns = n->mono_origin + grid;
        out->nsub = (uint32_t)((until_ns - grid) / PHYS_SUBSTEP_NS);
        return true;
    }
    case BK_LOADAVG: {
        /* fs/proc/loadavg.c: avenrun + FIXED_1/200, LOAD_INT, LOAD_FRAC; running/threads and the
         * last pid (threads assumed: 200 + 4 per CPU; pids follow /proc/stat processes) */
        unsigned long a[3];
        for (int m = 0; m < 3; m++)
            a[m] = (unsigned long)n->state.avenrun[m] + 2048 / 200;
        int running = n->state.nr_active > 0 ? n->state.nr_active : 1;
        long long pid = 1000 + (n->state.substeps + (uint64_t)n->cstart_elapsed_us / 1000) / 100;
        snprintf(text, sizeof text, "%lu.%02lu %lu.%02lu %lu.%02lu %d/%d %lld\n", a[0] >> 11,
                 ((a[0] & 2047) * 100) >> 11, a[1] >> 11, ((a[1] & 2047) * 100) >> 11, a[2] >> 11,
                 ((a[2] & 2047) * 100) >> 11, running, 200 + 4 * n->state.ncpus, pid % 4194304);
        if (!strcmp(text, n->loadavg_shown))
            return false;
        snprintf(n->loadavg_shown, sizeof n->loadavg_shown, "%s", text);
        break;
    }
    case BK_MEM_USED: {
        /* used share (ppm): 4 % idle, up to 84 % at memory intensity 1 (assumed) */
        double mi = n->load.memory_intensity > 0 ? (n->load.memory_intensity < 1 ? n->load.memory_intensity : 1) : 0;
        long long ppm = (long long)((0.04 + 0.80 * mi) * 1e6 + 0.5);
        if (n->shown[v] == ppm)
            return false;
        n->shown[v] = ppm;
        snprintf(text, sizeof text, "%lld\n", ppm);
        break;
    }
    case BK_PKG_TEMP: {
        /* coretemp: whole degrees; k10temp: 0.125 °C steps */
        int64_t step = b->zone ? 125 : 1000;
        double tc = n->state.pkg[b->pkg < PHYS_MAX_PKGS ? b->pkg : 0].temp_c;
        int64_t mc = tc > 0 ? (int64_t)(tc * 1000) / step * step : 0;
        if (n->shown[v] == mc)
            return false;
        n->shown[v] = mc;
        snprintf(text, sizeof text, "%lld\n", (long long)mc);
        break;
    }
    default:
        return false;
    }
    text_value(out, text);
    return true;
}

/* The S values of this tick, plus the A values in changes[0..*nch) already. */
static const struct seg_header *img_header(const struct node_template *t)
{
    return (const struct seg_header *)t->image.bytes;
}

/* The template's values: the private base of every value the engine computes (its type, unit
 * and register width never come from the file). */
static const struct seg_value *img_values(const struct node_template *t)
{
    return (const struct seg_value *)(t->image.bytes + img_header(t)->values_off[0]);
}

/* scaling_cur_freq, one value per policy, published only when the shown kHz moved: looked at
 * only in a tick where a running frequency or a package's cap ceiling moved (the physics says
 * so), or after nothing was shown. A fresh text value (nothing of the old one is kept),
 * formatted without stdio. */
static void collect_freq_values(struct node *n, struct node_change *ch, uint32_t *nch)
{
    if (!n->freq_dirty)
        return;
    n->freq_dirty = false;
    for (uint32_t i = 0; i < n->nfreq; i++) {
        uint32_t v = n->freq_values[i];
        const struct binding *b = &n->binds[v];
        int64_t khz = phys_cpu_cpu_freq_khz(&n->params, &n->state, b->cpu);
        if (n->shown[v] == khz)
            continue;
        n->shown[v] = khz;
        node_cfstats_freq(n, b->cpu, khz); /* its cpufreq/stats entry, on table drivers */
        struct node_change c = {.value = v, .v = {.type = SEG_V_TEXT}};
        char *e = c.v.text + sizeof c.v.text, *q = e;
        uint64_t u = khz > 0 ? (uint64_t)khz : 0;
        *--q = '\n';
        do
            *--q = (char)('0' + u % 10);
        while ((u /= 10) && q > c.v.text);
        c.v.len = (uint8_t)(e - q);
        memmove(c.v.text, q, c.v.len);
        ch[(*nch)++] = c;
    }
}

static void collect_s_values(struct node *n, struct node_change *ch, uint32_t *nch, int64_t until_ns, int64_t now_wall)
{
    const struct seg_value *cur = img_values(n->t);
    char text[SEG_TEXT_MAX];
    for (uint32_t i = 0; i < n->nsvalues; i++) {
        uint32_t v = n->svalues[i];
        const struct binding *b = &n->binds[v];
        /* values rebuilt whole or published on change: decided without reading the segment,
         * whose pages are cold when a worker steps thousands of nodes */
        if (b->kind == BK_PKG_TEMP || b->kind == BK_MEM_USED || b->kind == BK_LOADAVG || b->kind == BK_ELAPSED) {
            struct node_change c = {.value = v, .v = {.type = SEG_V_TEXT}};
            if (!fresh_value(n, b, v, &c.v, until_ns))
                continue;
            ch[(*nch)++] = c;
            continue;
        }
        struct node_change c = {.value = v, .v = cur[v]};
        switch (b->kind) {
        case BK_ENERGY: {
            struct phys_energy_pub pub;
            phys_energy_publish(&n->state, (enum phys_zone)b->zone, b->pkg, until_ns, &pub);
            c.v.ctr.acc_uj = pub.acc_uj;
            c.v.ctr.rem_nj = (uint32_t)pub.rem_nj;
            c.v.ctr.power_uw = pub.power_uw;
            c.v.ctr.unit_nj = (uint32_t)pub.unit_nj;
            c.v.ctr.seed_raw = (uint32_t)pub.seed_raw;
            c.v.ctr.start_uj = b->zone == PHYS_ZONE_PSYS ? n->state.psys.start_uj
                                                         : n->state.pkg[b->pkg].energy[b->zone].start_uj;
            c.v.ctr.t0_ns = n->mono_origin + pub.grid_ns;
            c.v.nsub = (uint32_t)((pub.until_ns - pub.grid_ns) / PHYS_SUBSTEP_NS);
            break;
        }
        case BK_CPUINFO_MAX:
            snprintf(text, sizeof text, "%lld\n", (long long)phys_cpu_cpuinfo_max_khz(&n->params, &n->state));
            text_value(&c.v, text);
            break;
        case BK_HSMP_POWER:
            snprintf(text, sizeof text, "%lld\n", (long long)(n->state.pkg[b->pkg].power_w * 1000) * 1000);
            text_value(&c.v, text);
            break;
        case BK_GPU:
            node_gpu_text(n, b, text, sizeof text);
            text_value(&c.v, text);
            break;
        case BK_PLATFORM:
            snprintf(text, sizeof text, "%.1f %.1f %.1f %.1f %lld\n", n->power.current_w, n->power.min_w,
                     n->power.max_w, node_power_avg_w(n), (long long)node_power_period_ms(n));
            text_value(&c.v, text);
            break;
        case BK_PM_COUNTER:
            pm_text(n, b, now_wall, text, sizeof text);
            text_value(&c.v, text);
            break;
        case BK_GPU_ENERGY: {
            const struct phys_gpu *g = &n->gstate.g[b->pkg < PHYS_GPU_MAX ? b->pkg : 0];
            int64_t grid = n->gstate.now_ns / PHYS_SUBSTEP_NS * PHYS_SUBSTEP_NS;
            c.v.ctr.acc_uj = g->acc_uj;
            c.v.ctr.rem_nj = (uint32_t)g->rem_nj;
            c.v.ctr.power_uw = g->power_uw;
            c.v.ctr.start_uj = (uint64_t)g->start_uj;
            /* the register continues from the energy before this start (a resume) */
            uint64_t seed = (uint64_t)((unsigned __int128)(uint64_t)g->start_uj * 1000 / (c.v.ctr.unit_nj ? c.v.ctr.unit_nj : 1000));
            c.v.ctr.seed_raw = (uint32_t)seed;
            c.v.ctr.seed_raw_hi = (uint32_t)(seed >> 32);
            c.v.ctr.t0_ns = n->mono_origin + grid;
            c.v.nsub = (uint32_t)((until_ns - grid) / PHYS_SUBSTEP_NS);
            break;
        }
        default:
            continue;
        }
        ch[(*nch)++] = c;
    }
}

/* The busy-time lines of the CPUs whose utilisation changed (seg_view.h): a line is republished
 * only when its CPU starts a new one, so a steady load publishes nothing here (and, when the
 * physics rebased no line, the lines are not looked at). */
static void collect_busy_lines(struct node *n, struct node_change *ch, uint32_t *nch)
{
    if (!n->busy_dirty)
        return;
    n->busy_dirty = false;
    const struct seg_value *cur = n->seg.copy[0];
    for (uint32_t i = 0; i < n->nbusy; i++) {
        const struct phys_core_state *cs = &n->state.cpu[i < PHYS_MAX_CPUS ? i : 0];
        if (n->busy_shown[i] == cs->busy_base_sub && n->busy_shown_rate[i] == cs->busy_rate_ns)
            continue;
        n->busy_shown[i] = cs->busy_base_sub;
        n->busy_shown_rate[i] = cs->busy_rate_ns;
        uint32_t v = n->busy_values[i];
        struct node_change c = {.value = v, .v = cur[v]};
        c.v.ctr.acc_uj = cs->busy_base_ns / 1000;
        c.v.ctr.rem_nj = (uint32_t)(cs->busy_base_ns % 1000);
        c.v.ctr.power_uw = cs->busy_rate_ns;
        c.v.ctr.start_uj = n->cstart[v];
        c.v.ctr.t0_ns = n->mono_origin + (int64_t)cs->busy_base_sub * PHYS_SUBSTEP_NS;
        c.v.nsub = UINT32_MAX;
        ch[(*nch)++] = c;
    }
}

/* --- events --------------------------------------------------------------------------------- */

static const char *errno_type(int e)
{
    switch (e) {
    case EINVAL: return "einval";
    case ENODATA: return "enodata";
    case EBUSY: return "ebusy";
    case ENOSYS: return "enosys";
    case ERANGE: return "erange";
    case EACCES: return "eacces";
    case EIO: return "eio";
    case EPERM: return "eperm";
    default: return "error";
    }
}

static char *trimmed(const char *t, size_t len, char *buf, size_t cap)
{
    while (len && (t[len - 1] == '\n' || t[len - 1] == ' '))
        len--;
    if (len >= cap)
        len = cap - 1;
    memcpy(buf, t, len);
    buf[len] = 0;
    return buf;
}

static void drain_events(struct node *n, int64_t now_mono, int64_t now_wall, struct event_log *log)
{
    struct seg_event ev;
    uint64_t lost_before = n->ev_lost;
    /* at most one ring's worth a tick: agents writing as fast as they can never stall it */
    for (uint32_t k = 0; k < n->seg.ring_cap && seg_event_pop(&n->seg, &n->ev_tail, &ev, &n->ev_lost); k++) {
        if (!log || ev.entry >= n->seg.n_entries)
            continue;
        char written[SEG_TEXT_MAX + 1], eff[SEG_TEXT_MAX + 1], out[SEG_TEXT_MAX];
        cJSON *a = cJSON_CreateObject();
        cJSON_AddStringToObject(a, "file", seg_path(&n->seg, ev.entry));
        cJSON_AddStringToObject(a, "written", trimmed(ev.text, ev.len, written, sizeof written));
        cJSON_AddNumberToObject(a, "pid", ev.pid);
        const char *name = "joulie.sim.write.accepted";
        if (ev.err) {
            name = "joulie.sim.write.rejected";
            cJSON_AddStringToObject(a, "error.type", errno_type(ev.err));
        } else {
            size_t olen;
            bool changes;
            if (!seg_attr_store(&n->seg, ev.entry, ev.text, ev.len, now_mono, out, &olen, &changes)) {
                out[olen < SEG_TEXT_MAX ? olen : SEG_TEXT_MAX - 1] = 0;
                char clamped[SEG_TEXT_MAX];
                const struct seg_entry *en = &n->seg.entries[ev.entry];
                size_t c = en->value < n->nvalues ? node_gpu_effective(n, &n->binds[en->value], out, clamped,
                                                                       sizeof clamped) : 0;
                if (c)
                    memcpy(out, clamped, olen = c);
                trimmed(out, changes ? olen : 0, eff, sizeof eff);
                if (changes && strcmp(eff, written))
                    name = "joulie.sim.write.normalized";
                cJSON_AddStringToObject(a, "effective", changes ? eff : written);
            }
        }
        int64_t ago = now_mono - ev.time_ns;
        n->last_write = (struct node_write_note){.wall_ns = now_wall - (ago > 0 ? ago : 0), .event = name,
                                                 .file = seg_path(&n->seg, ev.entry),
                                                 .error = ev.err ? errno_type(ev.err) : NULL};
        snprintf(n->last_write.value, sizeof n->last_write.value, "%s", written);
        events_emit(log, n->last_write.wall_ns, n->name, name, a);
    }
    if (log && n->ev_lost > lost_before) {
        cJSON *a = cJSON_CreateObject();
        cJSON_AddNumberToObject(a, "lost", (double)(n->ev_lost - lost_before));
        events_emit(log, now_wall, n->name, "joulie.sim.write.events_lost", a);
    }
}

/* Agent writes since the last tick: validated again (the slot is untrusted), applied, and
 * queued as A values of the next publication. */
static void drain_slots(struct node *n, struct node_change *ch, uint32_t *nch, int64_t now_mono, int64_t now_wall,
                        struct event_log *log)
{
    uint64_t writes = atomic_load_explicit(&n->seg.h->slot_writes, memory_order_acquire);
    if (writes == n->slot_writes_seen)
        return; /* nobody wrote since the last drain */
    n->slot_writes_seen = writes;
    for (uint32_t i = 0; i < n->seg.n_slots; i++) {
        uint64_t seq;
        size_t len;
        char text[SEG_TEXT_MAX];
        if (!seg_slot_load(&n->seg, i, &seq, text, &len))
            continue;
        if (seq < n->slot_applied[i])
            n->slot_applied[i] = seq; /* the slot was reset (a repaired segment): follow it */
        if (seq <= n->slot_applied[i])
            continue;
        n->slot_applied[i] = seq;
        uint32_t e = n->slot_entry[i];
        uint32_t v = n->seg.entries[e].value;
        char out[SEG_TEXT_MAX];
        size_t olen;
        bool changes;
        int rc = seg_attr_store(&n->seg, e, text, len, now_mono, out, &olen, &changes);
        struct node_change c = {.value = v, .v = n->seg.copy[n->seg.pub_gen & 1][v]};
        c.v.type = img_values(n->t)[v].type; /* the text may be the agent's; the kind is ours */
        if (rc || !changes) {
            /* Only a tampered slot gets here: the writer's store validated it. Put it back. */
            if (log) {
                cJSON *a = cJSON_CreateObject();
                cJSON_AddStringToObject(a, "file", seg_path(&n->seg, e));
                cJSON_AddStringToObject(a, "reason", "the slot held a value the attribute refuses");
                events_emit(log, now_wall, n->name, "joulie.sim.write.reverted", a);
            }
        } else {
            out[olen < SEG_TEXT_MAX ? olen : SEG_TEXT_MAX - 1] = 0;
            apply(n, &n->binds[v], out);
            char clamped[SEG_TEXT_MAX];
            size_t eff = node_gpu_effective(n, &n->binds[v], out, clamped, sizeof clamped);
            if (eff)
                memcpy(out, clamped, olen = eff);
            size_t l = olen < sizeof c.v.a.text ? olen : sizeof c.v.a.text;
            memcpy(c.v.a.text, out, l);
            c.v.len = (uint8_t)l;
        }
        c.v.a.applied = seq;
        ch[(*nch)++] = c;
    }
}

/* Persistence mode off: an idle GPU drops the limit agents wrote back to its default, as the
 * driver does when it unloads with no client (Joulie emulate mode). The file reads the default from
 * this tick on, whatever a slot held. */
static void reset_idle_limits(struct node *n, struct node_change *ch, uint32_t *nch, int64_t now_wall,
                              struct event_log *log)
{
    if (n->gparams.vendor != PHYS_GPU_NVIDIA || n->gload.util > 0)
        return;
    for (int i = 0; i < n->gparams.count; i++) {
        struct phys_gpu *g = &n->gstate.g[i];
        uint32_t e = n->gpu_limit_entry[i];
        if (g->persistence || e == SEG_NONE || fabs(g->limit_w - n->gparams.default_w) < 1e-9)
            continue;
        char old[SEG_TEXT_MAX], text[SEG_TEXT_MAX];
        size_t len;
        const char *t = seg_read(&n->seg, e, seg_now_ns(), old, &len);
        char was[SEG_TEXT_MAX + 1];
        trimmed(t ? t : "", t ? len : 0, was, sizeof was);
        g->limit_w = n->gparams.default_w;
        uint32_t v = n->seg.entries[e].value, slot = n->seg.entries[e].slot;
        struct node_change c = {.value = v, .v = img_values(n->t)[v]};
        int l = snprintf(text, sizeof text, "%lld\n", llround(g->limit_w * 1000));
        memcpy(c.v.a.text, text, (size_t)l);
        c.v.len = (uint8_t)l;
        uint64_t seq;
        char st[SEG_TEXT_MAX];
        if (slot != SEG_NONE && seg_slot_load(&n->seg, slot, &seq, st, &len)) {
            c.v.a.applied = seq;
            n->slot_applied[slot] = seq;
        }
        ch[(*nch)++] = c;
        if (log) {
            cJSON *a = cJSON_CreateObject();
            cJSON_AddStringToObject(a, "file", seg_path(&n->seg, e));
            cJSON_AddNumberToObject(a, "gpu", i);
            cJSON_AddStringToObject(a, "from", was);
            cJSON_AddStringToObject(a, "to", trimmed(text, (size_t)l, was, sizeof was));
            cJSON_AddStringToObject(a, "reason", "persistence mode is disabled and the GPU is idle");
            events_emit(log, now_wall, n->name, "joulie.sim.cap.reset", a);
        }
    }
}

/* Time counters go to the ledger at the freeze horizon: the most any reader can have seen, so
 * a restart resumes them where no reader was ahead. */
static void write_ledger(struct node *n, int64_t now_wall)
{
    /* the freeze horizon of this tick's publication (the elapsed counter's nsub) */
    int64_t h = n->horizon_ns > n->state.now_ns ? n->horizon_ns : n->state.now_ns;
    uint64_t until_sub = (uint64_t)((h - (n->state.now_ns - n->state.carry_ns)) / PHYS_SUBSTEP_NS) + n->state.substeps;
    for (uint32_t k = 0; k < n->ncounters; k++) {
        uint32_t v = n->counters[k];
        const struct binding *b = &n->binds[v];
        if (b->kind == BK_ELAPSED)
            n->totals[k] = n->cstart[v] + until_sub * 1000;
        else if (b->kind == BK_CPU_BUSY)
            n->totals[k] = n->cstart[v] + phys_cpu_busy_ns(&n->state, b->cpu, until_sub) / 1000;
        else if (b->kind == BK_UNIT_CPU)
            n->totals[k] = node_unit_total_us(n, v, until_sub);
        else
            n->totals[k] = b->kind == BK_GPU_ENERGY ? phys_gpu_total_uj(&n->gstate, b->pkg)
                                                    : phys_energy_total_uj(&n->state, (enum phys_zone)b->zone, b->pkg);
    }
    seg_ledger_write(&n->seg, ++n->ledger_seq, n->totals, now_wall);
}

/* --- damage: checks and repairs (see the top of this file) ------------------------------ */

enum damage { DMG_HEADER = 1, DMG_STATIC = 2, DMG_SHRUNK = 4, DMG_DELETED = 8, DMG_AT_START = 16 };

static const char *damage_name(unsigned kind)
{
    switch (kind) {
    case DMG_HEADER: return "header";
    case DMG_STATIC: return "static";
    case DMG_SHRUNK: return "truncated";
    case DMG_DELETED: return "deleted";
    default: return "unreadable";
    }
}

/* One report of a damage found and what was done about file (the node's segment, or the static
 * file it shares, reported by the node that checks it): an event each time (when the log is at
 * hand), one stderr line per kind. */
static void report_file(struct node *n, unsigned kind, const char *file, const char *what, const char *action,
                        int64_t now_wall, struct event_log *log)
{
    n->damaged++;
    if (!(n->damage_said & kind)) {
        n->damage_said |= kind;
        fprintf(stderr, "hwemu serve: node %s: %s %s: %s; %s (docs/robustness.md)\n", n->name,
                file == n->path ? "segment" : "static file", file, what, action);
    }
    if (!log) {
        snprintf(n->pending, sizeof n->pending, "%s|%s|%s", damage_name(kind), what, action);
        return;
    }
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "file", file);
    cJSON_AddStringToObject(a, "damage", damage_name(kind));
    cJSON_AddStringToObject(a, "what", what);
    cJSON_AddStringToObject(a, "action", action);
    events_emit(log, now_wall, n->name, "joulie.sim.segment.damaged", a);
}

static void report(struct node *n, unsigned kind, const char *what, const char *action, int64_t now_wall,
                   struct event_log *log)
{
    report_file(n, kind, n->path, what, action, now_wall, log);
}

static void emit_pending(struct node *n, int64_t now_wall, struct event_log *log)
{
    char *what = strchr(n->pending, '|'), *action = what ? strchr(what + 1, '|') : NULL;
    if (!log || !action)
        return;
    *what++ = 0;
    *action++ = 0;
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "file", n->path);
    cJSON_AddStringToObject(a, "damage", n->pending);
    cJSON_AddStringToObject(a, "what", what);
    cJSON_AddStringToObject(a, "action", action);
    events_emit(log, now_wall, n->name, "joulie.sim.segment.damaged", a);
    n->pending[0] = 0;
}

/* The header the file must have: the template's, with this node's name. Only the part before
 * the first field agents or the engine change at run time (slot_writes) is compared. */
static void expected_header(const struct node *n, struct seg_header *h)
{
    memcpy(h, img_header(n->t), sizeof *h);
    memset(h->node, 0, sizeof h->node);
    snprintf(h->node, sizeof h->node, "%s", n->name);
}

#define HEADER_STATIC offsetof(struct seg_header, slot_writes)

/* Writes the header's static fields back from the image. */
static void restore_header(struct node *n)
{
    struct seg_header h;
    expected_header(n, &h);
    memcpy(n->seg.base, &h, HEADER_STATIC);
    n->seg.h->substep_ns = h.substep_ns;
    n->seg.h->tick_ns = n->tick_ns;
    n->seg.h->engine_pid = (uint32_t)getpid();
}

static void resume_writes(struct node *n);
static void publish_identity(struct node *n);

/* The file shrank: grow it back, reserve its space, map it afresh and rewrite what was lost. */
static void repair_shrunk(struct node *n, off_t had, int64_t now_wall, struct event_log *log)
{
    struct seg *s = &n->seg;
    char what[160];
    snprintf(what, sizeof what, "the file shrank to %lld of %zu bytes", (long long)had, s->size);
    int rc = ftruncate(s->fd, (off_t)s->size) ? errno : posix_fallocate(s->fd, 0, (off_t)s->size);
    if (!rc)
        rc = seg_revalidate(s);
    if (rc) {
        char action[200];
        snprintf(action, sizeof action, "cannot restore it (%s): its readers get EIO until there is room on the "
                 "root's filesystem; the node runs on from the engine's state", strerror(rc));
        report(n, DMG_SHRUNK, what, action, now_wall, log);
        return;
    }
    bool values_lost = had < (off_t)s->static_end;
    if (values_lost) {
        /* the snapshot copies are gone with the agents' settings: back to the template's */
        memcpy(s->base, n->t->image.bytes, n->t->image.used);
        atomic_store(&s->h->gen, s->pub_gen);
    }
    restore_header(n);
    /* what the lost pages held: the slots, marks and ring restart empty; the ledger is
     * written again at the end of this tick */
    for (uint32_t i = 0; i < s->n_slots; i++)
        n->slot_applied[i] = 0;
    n->ev_tail = atomic_load(&s->h->ring_head);
    n->slot_writes_seen = (uint64_t)-1;
    if (values_lost) {
        resume_writes(n); /* the profile's settings into the physics; its energy goes on */
        publish_identity(n);
    }
    report(n, DMG_SHRUNK, what,
           values_lost ? "grown back and rewritten from the engine's state; counters continue; the settings agents "
                         "wrote went back to the profile's"
                       : "grown back and rewritten from the engine's state; counters and settings continue",
           now_wall, log);
}

/* The file was deleted or replaced: put a new one at the path carrying the old one's state. */
static void repair_deleted(struct node *n, const char *how, int64_t now_wall, struct event_log *log)
{
    struct seg fresh;
    char err[600];
    int rc = seg_image_write(&n->t->image, n->path, n->name, &fresh, err, sizeof err);
    if (rc) {
        char action[700];
        snprintf(action, sizeof action, "cannot put a new one in place (%s); the node runs on in the old file, "
                 "which new agents cannot open", err);
        report(n, DMG_DELETED, how, action, now_wall, log);
        return;
    }
    struct seg *cur = &n->seg;
    uint32_t from = img_header(n->t)->values_off[0];
    memcpy(fresh.base + from, cur->base + from, cur->size - from);
    fresh.h->tick_ns = n->tick_ns;
    atomic_store(&fresh.h->gen, cur->pub_gen);
    atomic_store(&fresh.h->ring_head, atomic_load(&cur->h->ring_head));
    atomic_store(&fresh.h->slot_writes, atomic_load(&cur->h->slot_writes));
    atomic_store(&fresh.h->heartbeat_ns, atomic_load(&cur->h->heartbeat_ns));
    /* The new file takes the old one's addresses (HTTP threads may be reading them): nothing
     * is unmapped, every pointer stays valid. */
    if (mmap(cur->base, cur->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fresh.fd, 0) == MAP_FAILED) {
        seg_close(&fresh);
        report(n, DMG_DELETED, how, "cannot map the new file; the node runs on in the old one", now_wall, log);
        return;
    }
    munmap(fresh.base, fresh.map_size);
    close(cur->fd);
    cur->fd = fresh.fd;
    report(n, DMG_DELETED, how,
           "put a new file in place with the node's state (counters and settings continue); agents that had the "
           "old one open keep its last values until they open the node again",
           now_wall, log);
}

/* The static file this node checks for every node that shares it (node.h "struct node_static"):
 * on file ticks (or at once after a SIGBUS in it) whether it is still at its path and whole,
 * and every tick its bytes against the image. */
static void check_static(struct node *n, bool file_tick, int64_t now_wall, struct event_log *log)
{
    struct node_static *st = n->t->st;
    struct seg_static_file *f = &st->f;
    const struct seg_image *img = &n->t->image;
    if (file_tick || seg_guard_faulted(f->guard)) {
        struct stat fs, ps;
        char err[600], action[700];
        if (fstat(f->fd, &fs) == 0 && (fs.st_nlink == 0 || stat(st->path, &ps) != 0 || ps.st_ino != fs.st_ino ||
                                       ps.st_dev != fs.st_dev)) {
            struct seg_static_file fresh;
            if (seg_static_put(img, st->path, &fresh, err, sizeof err)) {
                snprintf(action, sizeof action, "cannot put a new one in place (%s): agents that start now cannot "
                         "open their nodes; the running ones keep theirs", err);
            } else {
                seg_static_close(f);
                *f = fresh;
                snprintf(action, sizeof action, "put a new one in place; agents that had the old one keep it");
            }
            report_file(n, DMG_DELETED, st->path, "the file was deleted or replaced", action, now_wall, log);
            return;
        }
        if (seg_guard_faulted(f->guard) || (fstat(f->fd, &fs) == 0 && fs.st_size < (off_t)f->size)) {
            int rc = seg_static_restore(img, f);
            if (rc)
                snprintf(action, sizeof action, "cannot grow it back (%s): its readers get EIO until there is room on "
                         "the root's filesystem", strerror(rc));
            else
                snprintf(action, sizeof action, "grown back and rewritten from the template");
            report_file(n, DMG_SHRUNK, st->path, "the file shrank", action, now_wall, log);
            return;
        }
    }
    /* the whole file: one per layout, so a damage that every node of the layout would show
     * lasts at most one tick (about 0.1 ms per MB) */
    if (memcmp(f->base, img->st_bytes, f->size) && !seg_guard_faulted(f->guard)) {
        memcpy(f->base, img->st_bytes, f->size);
        char what[160];
        snprintf(what, sizeof what, "its entries, strings or parameters were changed (every node of profile %s with "
                 "these values shares it)", n->profile);
        report_file(n, DMG_STATIC, st->path, what, "rewritten from the template; the engine never used them",
                    now_wall, log);
    }
}

static void check_health(struct node *n, int64_t now_wall, struct event_log *log)
{
    struct seg *s = &n->seg;
    if (n->pending[0])
        emit_pending(n, now_wall, log);
    /* the file: every 8th tick, or at once when the guard caught a SIGBUS in it */
    bool file_tick = (n->ticks++ & 7) == 0;
    if (seg_faulted(s) || file_tick) {
        struct stat st, ps;
        if (fstat(s->fd, &st) == 0) {
            if (st.st_nlink == 0)
                repair_deleted(n, "the file was deleted under the running engine", now_wall, log);
            else if (stat(n->path, &ps) != 0 || ps.st_ino != st.st_ino || ps.st_dev != st.st_dev)
                repair_deleted(n, "another file was put at its path", now_wall, log);
            else if (st.st_size < (off_t)s->size || seg_faulted(s))
                repair_shrunk(n, st.st_size, now_wall, log);
        }
    }
    struct seg_header h;
    expected_header(n, &h);
    if (memcmp(s->base, &h, HEADER_STATIC) || s->h->substep_ns != h.substep_ns) {
        restore_header(n);
        report(n, DMG_HEADER, "its header was changed", "rewritten from the template; the engine never used it",
               now_wall, log);
    }
    if (n->t->st && n->t->st->checker == n)
        check_static(n, file_tick, now_wall, log);
}

void node_tick(struct node *n, int64_t now_mono, int64_t until_mono, int64_t now_wall, double ambient_c,
               struct event_log *log)
{
    check_health(n, now_wall, log);
    int64_t dt = (now_mono - n->mono_origin) - n->state.now_ns;
    n->freq_dirty |= phys_cpu_step(&n->params, &n->state, &n->load, ambient_c, dt);
    phys_gpu_step(&n->gparams, &n->gstate, ambient_c, n->state.now_ns);
    uint32_t cap = n->nvalues + n->seg.n_slots;
    struct node_change *ch = malloc(sizeof *ch * (cap ? cap : 1));
    if (!ch)
        return;
    uint32_t nch = 0;
    drain_slots(n, ch, &nch, now_mono, now_wall, log);
    drain_events(n, now_mono, now_wall, log);
    reset_idle_limits(n, ch, &nch, now_wall, log);
    if (n->load_hook)
        n->load_hook(n->load_ctx, n);
    unsigned began = phys_cpu_begin_interval(&n->params, &n->state, &n->load);
    n->freq_dirty |= (began & PHYS_BEGAN_FREQ_CEILING) != 0;
    n->busy_dirty |= (began & PHYS_BEGAN_BUSY_LINES) != 0;
    phys_gpu_begin_interval(&n->gparams, &n->gstate, &n->gload, n->tick_ns);
    sample_power(n, now_mono, now_wall);
    /* the freeze horizon of every line of this publication; time counters reach the ledger at it
     * (write_ledger) */
    n->horizon_ns = until_mono > now_mono ? until_mono - n->mono_origin : n->state.now_ns;
    collect_s_values(n, ch, &nch, n->horizon_ns, now_wall);
    collect_freq_values(n, ch, &nch);
    collect_busy_lines(n, ch, &nch);
    node_cfstats_collect(n, ch, &nch);
    node_units_collect(n, ch, &nch, n->horizon_ns);
    publish(n, ch, nch, now_mono);
    free(ch);
    write_ledger(n, now_wall);
}

/* --- open / resume ------------------------------------------------------------------------- */

/* The values that name this node's hardware (GPU UUIDs, serials): the template's texts are
 * the pool's, so each node publishes its own once. */
static void publish_identity(struct node *n)
{
    struct node_change *ch = malloc(sizeof *ch * (n->nvalues ? n->nvalues : 1));
    if (!ch)
        abort();
    uint32_t nch = 0;
    char text[SEG_TEXT_MAX];
    for (uint32_t v = 0; v < n->nvalues; v++) {
        if (n->binds[v].kind != BK_GPU_IDENT || !node_gpu_text(n, &n->binds[v], text, sizeof text))
            continue;
        struct node_change c = {.value = v, .v = img_values(n->t)[v]};
        text_value(&c.v, text);
        ch[nch++] = c;
    }
    if (nch)
        publish(n, ch, nch, seg_now_ns());
    free(ch);
}

/* Every counter's resumed total from segment from (mapped and bound with the template's
 * geometry) into out[ncounters]: segment.h "Resume". The node's ledger sequence continues from
 * the newest copy found: restarted at 1, its first writes would be older than the copies the
 * dead engine left, and a later restart would read those stale totals as the newest. */
static void salvage_totals(struct node *n, const struct seg *from, uint64_t *out)
{
    uint64_t *led = calloc(from->n_counters + 1, sizeof *led), seq = 0;
    if (!led)
        abort();
    bool have = seg_ledger_read(from, &seq, led);
    n->ledger_seq = have && seq < (UINT64_MAX >> 1) ? seq : 0;
    uint64_t gen = atomic_load(&from->h->gen);
    for (uint32_t k = 0; k < n->ncounters; k++) {
        uint32_t v = n->counters[k];
        struct seg_value vis;
        memcpy(&vis, &from->copy[gen & 1][v], sizeof vis);
        uint64_t hwm = atomic_load(&from->hwm[v]);
        out[k] = seg_resume_total(have && k < from->n_counters, have ? led[k] : 0, &vis, hwm, from->substep_ns,
                                  n->tick_ns);
    }
    free(led);
}

static void resume_counters(struct node *n, struct phys_cpu_params *p, const uint64_t *totals)
{
    for (uint32_t k = 0; k < n->ncounters; k++) {
        const struct binding *b = &n->binds[n->counters[k]];
        if (b->kind == BK_GPU_ENERGY) {
            n->gstate.g[b->pkg < PHYS_GPU_MAX ? b->pkg : 0].start_uj = (int64_t)totals[k];
            continue;
        }
        if (b->kind == BK_ELAPSED || b->kind == BK_CPU_BUSY || b->kind == BK_UNIT_CPU) {
            /* time counters: the ledger holds them at their horizon (write_ledger), and the
             * busy lines' open-ended nsub makes seg_resume_total keep the ledger's value */
            n->cstart[n->counters[k]] = totals[k];
            if (b->kind == BK_ELAPSED)
                n->cstart_elapsed_us = totals[k];
            continue;
        }
        struct phys_counter *c = b->zone == PHYS_ZONE_PSYS ? &p->psys : &p->pkg[b->pkg].counter[b->zone];
        c->start_uj = (int64_t)totals[k];
    }
}

static void resume_writes(struct node *n)
{
    /* Every A value as a reader sees it now (slot if newer) goes into the physics, validated
     * again first: the file is untrusted. What the attribute refuses stays the profile's. */
    int64_t now = seg_now_ns(); /* one instant for the whole node (a clock read costs as much as a slot) */
    for (uint32_t i = 0; i < n->seg.n_slots; i++) {
        uint32_t e = n->slot_entry[i];
        char tmp[SEG_TEXT_MAX + 1], out[SEG_TEXT_MAX + 1];
        size_t len, olen = 0;
        bool changes = false;
        const char *t = seg_read(&n->seg, e, now, tmp, &len);
        uint32_t v = n->seg.entries[e].value;
        const struct seg_value *dflt = &img_values(n->t)[v];
        if (t && len == dflt->len && !memcmp(t, dflt->a.text, len)) {
            memcpy(out, t, len); /* the profile's own text (most of them): nothing to check */
            out[len] = 0;
            apply(n, &n->binds[v], out);
        } else if (t && !seg_attr_store(&n->seg, e, t, len, now, out, &olen, &changes) && changes) {
            out[olen < SEG_TEXT_MAX ? olen : SEG_TEXT_MAX] = 0;
            apply(n, &n->binds[v], out);
        }
        uint64_t seq;
        char st[SEG_TEXT_MAX];
        n->slot_applied[i] = seg_slot_load(&n->seg, i, &seq, st, &len) ? seq : 0;
    }
}

int node_template_build(struct node_template *t, const char *profile, const struct yt_node *tree, double ambient_c,
                        int64_t tick_ns, const struct job_cgroups *cg, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->profile = profile;
    params_cpu(tree, ambient_c, &t->params);
    params_gpu(tree, ambient_c, &t->gparams);
    t->gpu_product = prof_str(tree, "gpus.product", "");
    struct node_layout l = {.b = segb_new()};
    render_node(&l, tree, profile, &t->params, &t->gparams, cg);
    uint64_t extra = fnv(node_tree_hash(tree), profile);
    int rc = segb_image(l.b, profile, extra, tick_ns, &t->image, err, errlen);
    segb_free(l.b);
    t->binds = l.binds;
    t->nbinds = l.nbinds;
    return rc;
}

int node_static_put(struct node_template *templates, int n, int t, const char *root, char *err, size_t errlen)
{
    struct node_template *me = &templates[t];
    for (int q = 0; q < n; q++)
        if (q != t && templates[q].owns_st && templates[q].image.layout_hash == me->image.layout_hash) {
            me->st = templates[q].st;
            return 0;
        }
    struct node_static *st = calloc(1, sizeof *st);
    size_t plen = strlen(root) + 40;
    char *path = malloc(plen);
    if (!st || !path)
        abort();
    seg_static_path_in(root, strlen(root), me->image.layout_hash, path, plen);
    int rc = seg_static_put(&me->image, path, &st->f, err, errlen);
    if (rc) {
        free(path);
        free(st);
        return rc;
    }
    st->path = path;
    me->st = st;
    me->owns_st = true;
    return 0;
}

void node_template_free(struct node_template *t)
{
    if (t->owns_st) {
        seg_static_close(&t->st->f);
        free(t->st->path);
        free(t->st);
    }
    seg_image_free(&t->image);
    free(t->binds);
    memset(t, 0, sizeof *t);
}

/* The engine's view of its mapped segment: the template's geometry, and the template's
 * entries, strings and params (private memory) in place of the file's. */
static void adopt(struct node *n)
{
    seg_bind(&n->seg, img_header(n->t));
    seg_bind_static(&n->seg, n->t->image.st_bytes);
    if (n->seg.guard < 0)
        seg_guard_register(&n->seg);
}

/* An existing segment at n->path. Returns 0 (mapped and adopted: resume it), a positive errno
 * with err set (the start stops: a file of another node or profile, or of another hwemu
 * build), or -1 when it is damaged (why says how; *salvaged when its counters could be read
 * with the template's geometry into n->totals). */
static int open_existing(struct node *n, char *err, size_t errlen, char *why, size_t whylen, bool *salvaged)
{
    const struct seg_header *ih = img_header(n->t);
    const char *path = n->path, *name = n->name;
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "node %s: cannot open its segment %s: %s%s", name, path, strerror(e),
                 e == ELOOP ? " (it is a symbolic link, which the engine never follows: remove it)" : "");
        return e;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "node %s: %s is not a regular file; remove it and start again", name, path);
        return EINVAL;
    }
    if (st.st_size < (off_t)sizeof(struct seg_header)) {
        close(fd);
        snprintf(why, whylen, "the file has %lld bytes, too few for a segment", (long long)st.st_size);
        return -1;
    }
    int rc = seg_map(&n->seg, fd, (size_t)st.st_size, true);
    if (rc) {
        close(fd);
        snprintf(err, errlen, "node %s: cannot map its segment %s: %s", name, path, strerror(rc));
        return rc;
    }
    n->seg.fd = fd;
    n->seg.h = (struct seg_header *)n->seg.base;
    seg_guard_register(&n->seg);
    const struct seg_header *h = n->seg.h;
    struct seg_header want;
    expected_header(n, &want);
    if (memcmp(h->magic, SEG_MAGIC, 8)) {
        snprintf(why, whylen, "its header is not an hwemu segment's");
    } else if (h->version != SEG_VERSION || h->header_size != sizeof *h) {
        snprintf(err, errlen, "node %s: %s is a segment of another hwemu build (format %u); make sure no agent "
                 "uses it, remove it and start again: the node is rendered fresh, its counters back at zero",
                 name, path, h->version);
        seg_close(&n->seg);
        return EINVAL;
    } else if (strncmp(h->node, name, sizeof h->node) || strncmp(h->profile, n->t->profile, sizeof h->profile) ||
               h->layout_hash != n->t->image.layout_hash) {
        snprintf(err, errlen,
                 "node %s: %s was rendered for node %.64s, profile %.64s%s; make sure no agent uses node %s, remove "
                 "%s and start again: the node is rendered fresh, its counters back at zero",
                 name, path, h->node, h->profile,
                 strncmp(h->profile, n->t->profile, sizeof h->profile) ? "" : " with other profile values", name,
                 path);
        seg_close(&n->seg);
        return EEXIST;
    } else if ((size_t)st.st_size != ih->file_size || memcmp(h, &want, HEADER_STATIC) ||
               h->substep_ns != ih->substep_ns) {
        snprintf(why, whylen, "its size or section table is not the template's (%lld bytes, %zu expected)",
                 (long long)st.st_size, (size_t)ih->file_size);
    } else {
        adopt(n); /* its static part is compared chunk by chunk from the first tick on */
        return 0;
    }
    /* damaged: what can be read with the template's geometry is salvaged */
    if ((size_t)st.st_size >= ih->file_size && !seg_faulted(&n->seg)) {
        seg_bind(&n->seg, ih);
        salvage_totals(n, &n->seg, n->totals);
        *salvaged = !seg_faulted(&n->seg);
    }
    seg_close(&n->seg);
    return -1;
}

/* Everything node_open allocates for a node besides its segment: freed by a failed open and by
 * node_close alike (one list, so a new array cannot be left out of either). */
static void free_arrays(struct node *n)
{
    void **arrays[] = {(void **)&n->path,     (void **)&n->slot_entry, (void **)&n->slot_applied,
                       (void **)&n->totals,   (void **)&n->counters,   (void **)&n->svalues,
                       (void **)&n->freq_values, (void **)&n->shown, (void **)&n->busy_shown,
                       (void **)&n->busy_shown_rate, (void **)&n->cstart, (void **)&n->busy_values,
                       (void **)&n->units};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        free(*arrays[i]);
        *arrays[i] = NULL;
    }
    node_cfstats_free(n);
}

int node_open(struct node *n, const struct node_template *t, const char *root, const char *name,
              const struct phys_load *load, const struct phys_gpu_load *gload, int64_t tick_ns, char *err,
              size_t errlen)
{
    /* n is zeroed memory (node.h): not cleared again, so that the pages of what this node does
     * not use (CPUs and GPUs past its own) are never touched */
    n->seg.fd = -1;
    n->seg.guard = -1;
    n->t = t;
    n->name = name;
    n->profile = t->profile;
    n->gpu_product = t->gpu_product;
    n->tick_ns = tick_ns;
    n->load = *load;
    n->gload = *gload;
    n->params = t->params;
    n->gparams = t->gparams;
    params_spread(name, &n->params, &n->gparams); /* two packages or GPUs are not identical */
    n->binds = t->binds;
    n->nvalues = t->nbinds;
    uint32_t nslots = img_header(t)->n_slots;
    n->slot_entry = calloc(nslots + 1, sizeof *n->slot_entry);
    n->slot_applied = calloc(nslots + 1, sizeof *n->slot_applied);
    n->totals = calloc(n->nvalues + 1, sizeof *n->totals);
    n->counters = calloc(n->nvalues + 1, sizeof *n->counters);
    n->svalues = calloc(n->nvalues + 1, sizeof *n->svalues);
    n->freq_values = calloc(n->nvalues + 1, sizeof *n->freq_values);
    n->shown = malloc((n->nvalues + 1) * sizeof *n->shown);
    n->busy_shown = malloc((n->nvalues + 1) * sizeof *n->busy_shown);
    n->busy_shown_rate = calloc(n->nvalues + 1, sizeof *n->busy_shown_rate);
    n->cstart = calloc(n->nvalues + 1, sizeof *n->cstart);
    n->busy_values = calloc(n->nvalues + 1, sizeof *n->busy_values);
    size_t plen = strlen(root) + strlen(name) + 6;
    n->path = malloc(plen);
    if (!n->slot_entry || !n->slot_applied || !n->totals || !n->counters || !n->svalues || !n->freq_values ||
        !n->shown || !n->busy_shown || !n->busy_shown_rate || !n->cstart || !n->busy_values || !n->path)
        abort();
    snprintf(n->path, plen, "%s/%s.seg", root, name);
    for (uint32_t v = 0; v < n->nvalues; v++) {
        uint8_t k = n->binds[v].kind;
        if (k == BK_ENERGY || k == BK_ENERGY_KEPT || k == BK_GPU_ENERGY || k == BK_ELAPSED || k == BK_CPU_BUSY ||
            k == BK_UNIT_CPU)
            n->counters[n->ncounters++] = v;
        if (k == BK_CUR_FREQ)
            n->freq_values[n->nfreq++] = v;
        if (k == BK_ENERGY || k == BK_CPUINFO_MAX || k == BK_HSMP_POWER || k == BK_GPU ||
            k == BK_GPU_ENERGY || k == BK_PLATFORM || k == BK_PM_COUNTER || k == BK_ELAPSED || k == BK_LOADAVG ||
            k == BK_MEM_USED || k == BK_PKG_TEMP)
            n->svalues[n->nsvalues++] = v;
        if (k == BK_CPU_BUSY && n->binds[v].cpu == n->nbusy)
            n->busy_values[n->nbusy++] = v; /* by CPU index (render_proc makes them in order) */
    }
    node_units_init(n);
    node_cfstats_init(n);
    for (uint32_t v = 0; v <= n->nvalues; v++) {
        n->shown[v] = -1; /* nothing shown yet: the first tick publishes every value */
        n->busy_shown[v] = UINT64_MAX;
    }
    n->freq_dirty = n->busy_dirty = true;
    seg_guard_install();
    int rc;
    bool salvaged = false;
    char why[200] = "";
    struct stat st;
    if (lstat(n->path, &st) == 0) {
        rc = open_existing(n, err, errlen, why, sizeof why, &salvaged);
        if (rc == 0) {
            n->resumed = true;
            salvage_totals(n, &n->seg, n->totals);
            node_units_salvage(n); /* which job each cgroup slot showed */
        } else if (rc < 0) {
            rc = seg_image_write(&t->image, n->path, name, &n->seg, err, errlen);
            if (!rc) {
                adopt(n);
                n->resumed = salvaged;
                report(n, DMG_AT_START, why,
                       salvaged ? "rendered again; its counters continue from what its ledger and snapshot held"
                                : "rendered again; nothing could be salvaged: its counters start at zero",
                       0, NULL);
            }
        }
    } else {
        rc = seg_image_write(&t->image, n->path, name, &n->seg, err, errlen);
        if (!rc)
            adopt(n);
    }
    if (rc) {
        if (n->seg.base)
            seg_close(&n->seg);
        free_arrays(n);
        return rc;
    }
    n->seg.h->tick_ns = tick_ns;
    n->seg.h->engine_pid = (uint32_t)getpid();
    for (int i = 0; i < PHYS_GPU_MAX; i++)
        n->gpu_limit_entry[i] = SEG_NONE;
    n->slot_writes_seen = (uint64_t)-1; /* drain once at the start */
    for (uint32_t i = 0; i < n->seg.n_entries; i++) {
        uint32_t slot = n->seg.entries[i].slot, v = n->seg.entries[i].value;
        if (slot == SEG_NONE || slot >= n->seg.n_slots || v >= n->nvalues)
            continue;
        n->slot_entry[slot] = i;
        const struct binding *b = &n->binds[v];
        if (b->kind == BK_GPU_SET && b->zone == GS_LIMIT_MW && b->pkg < PHYS_GPU_MAX)
            n->gpu_limit_entry[b->pkg] = i;
    }
    phys_gpu_init(&n->gparams, &n->gstate);
    if (n->resumed)
        resume_counters(n, &n->params, n->totals);
    if (n->resumed)
        node_cfstats_resume(n); /* from the snapshot it left, bounded by the elapsed time resumed */
    phys_cpu_init(&n->params, &n->state);
    if (n->resumed && !salvaged)
        resume_writes(n);
    node_cfstats_forget_resets(n); /* a reset acts once, at the tick after its write */
    n->ev_tail = atomic_load(&n->seg.h->ring_head);
    if (t->st && !t->st->checker)
        t->st->checker = n;
    n->mono_origin = seg_now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* The start's lines stand still until the engine's first tick: the nodes opened last may
     * open less than a tick before it, and no reader may see past what it will publish. */
    node_tick(n, n->mono_origin, n->mono_origin, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec,
              n->params.ambient_init_c, NULL);
    publish_identity(n);
    return 0;
}

void node_close(struct node *n)
{
    if (!n->seg.base)
        return; /* never opened */
    if (n->t->st && n->t->st->checker == n)
        n->t->st->checker = NULL;
    seg_close(&n->seg);
    free_arrays(n); /* seg_close cleared the segment: a second node_close does nothing */
}
