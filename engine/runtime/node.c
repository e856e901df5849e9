/* node: a node's tick (node_tick): drain what agents wrote (slots validated again, events),
 * step the physics, begin the next interval at its load, publish the values that moved and
 * write the ledger; and the node's power statistics. The tick begins with the damage checks of
 * node_repair.c, applies the agents' settings with node_apply.c and publishes with
 * node_publish.c; opening and resuming the segment is node_open.c's (it calls the tick, never
 * the other way), the pool's template node_template.c's. See node.h. */
#include "node_internal.h"

#include "events.h"
#include "seg_attr.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void node_rebase(struct node *n, int64_t now_mono)
{
    n->mono_origin = now_mono - n->state.now_ns;
    for (uint32_t k = 0; k <= n->t->ix.nshown; k++) /* as at the open: nothing shown yet */
        n->shown[k] = -1;
    for (uint32_t i = 0; i <= n->nbusy; i++)
        n->busy_shown[i] = UINT64_MAX;
    n->freq_dirty = n->busy_dirty = true;
    node_cfstats_republish(n);
    node_cycles_republish(n);
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
    if (n->faults.inlet_c == 0)
        return false;
    /* under a cooling fault, a package or a GPU heating toward its throttle point: the tick it
     * gets there changes its power (apply_faults) */
    const double near = 0.5;
    for (int k = 0; k < n->state.npkgs && k < PHYS_MAX_PKGS; k++) {
        const struct phys_pkg_state *ps = &n->state.pkg[k];
        if (!isfinite(n->thermal[k].cap_w) && ps->temp_to_c >= NODE_TJMAX_C - near && ps->temp_c < NODE_TJMAX_C - near)
            return true;
    }
    const struct phys_gpu_params *gp = &n->gparams;
    for (int k = 0; k < ngpus && k < PHYS_GPU_MAX && gp->natural_max_w > 0; k++) {
        const struct phys_gpu *g = &n->gstate.g[k];
        double to = n->air_c + gp->thermal_rise_c * g->power_w / gp->natural_max_w;
        if (g->thermal_w == 0 && to >= NODE_GPU_MAX_OPERATING_C - near && g->temp_c < NODE_GPU_MAX_OPERATING_C - near)
            return true;
    }
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
    double w = n->state.powered_off ? 0 : n->params.platform_other_w;
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

/* One sample of the node's power at a tick (after the interval's power is decided), as its BMC
 * measures it: the power held over the interval that begins, with the BMC sensor's noise (a
 * share of the reading, sensors.bmcPowerNoisePct; docs/faults.md "Sensors"); its statistics are
 * those of the readings. */
static void sample_power(struct node *n, int64_t now_mono, int64_t now_wall)
{
    struct node_power_stats *p = &n->power;
    double truth = node_power_w(n);
    double w = truth * (1 + n->sensors.bmc_pct / 100 * node_sensor_noise(n, 0, UINT64_C(0x626d63)));
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

/* A pm_counters file's text at wall time now_wall (render_platform.c): an energy file the exact
 * integral, a power file a reading with the node's power noise (docs/faults.md "Sensors"). */
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
    else /* a power file is a measurement: the blade controller's noise, the BMC's share (ours) */
        snprintf(t, len, "%.0f W %lld us\n",
                 w * (1 + n->sensors.bmc_pct / 100 * node_sensor_noise(n, b->zone * 64 + b->pkg, UINT64_C(0x706d63))),
                 us);
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
        out->ctr.start_uj = node_cstart_of(n, v);
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
        if (*node_shown(n, v) == ppm)
            return false;
        *node_shown(n, v) = ppm;
        snprintf(text, sizeof text, "%lld\n", ppm);
        break;
    }
    case BK_THERMAL: {
        const struct node_thermal *th = &n->thermal[b->pkg < PHYS_MAX_PKGS ? b->pkg : 0];
        int64_t x = b->zone == TQ_ACTIVE ? th->active : b->zone == TQ_COUNT ? (int64_t)th->count
                    : b->zone == TQ_TOTAL_MS ? (int64_t)th->total_ms : (int64_t)th->max_ms;
        if (*node_shown(n, v) == x)
            return false;
        *node_shown(n, v) = x;
        snprintf(text, sizeof text, "%lld\n", (long long)x);
        break;
    }
    case BK_PKG_TEMP: {
        /* coretemp: whole degrees; k10temp: 0.125 °C steps */
        int64_t step = b->zone ? 125 : 1000;
        double tc = n->state.pkg[b->pkg < PHYS_MAX_PKGS ? b->pkg : 0].temp_c;
        int64_t mc = tc > 0 ? (int64_t)(tc * 1000) / step * step : 0;
        if (*node_shown(n, v) == mc)
            return false;
        *node_shown(n, v) = mc;
        snprintf(text, sizeof text, "%lld\n", (long long)mc);
        break;
    }
    default:
        return false;
    }
    node_text_value(out, text);
    return true;
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
        if (n->shown[i] == khz) /* the frequencies are node.shown's first entries */
            continue;
        n->shown[i] = khz;
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

/* Energy counter value v's offset (node.seed_off), the array made at the first fault that moves
 * one (a node no power cycle or jump struck holds none: they all read 0). */
static uint64_t *seed_off_of(struct node *n, uint32_t v)
{
    if (!n->seed_off && !(n->seed_off = calloc(n->ncounters + 1, sizeof *n->seed_off)))
        abort();
    uint32_t k = v < n->nvalues ? n->t->ix.counter_of[v] : SEG_NONE;
    return &n->seed_off[k < n->ncounters ? k : n->ncounters];
}

/* The register seed an energy counter shows: its own (natural) moved by the node's offset for it
 * (node.seed_off). At the tick its power comes back the offset is set so that the register
 * counts from 0 from this publication's grid boundary (acc_uj, rem_nj there), as a machine's
 * that powers up (docs/faults.md power-loss): raw = seed + floor((acc·1000 + rem) / unit) is 0
 * there, mod 2^64 (and so mod the register's width). */
static uint64_t shown_seed(struct node *n, uint32_t v, uint64_t natural, uint64_t acc_uj, uint64_t rem_nj, uint64_t unit_nj)
{
    if (n->power_back)
        *seed_off_of(n, v) = (uint64_t)0 - natural - (uint64_t)(((unsigned __int128)acc_uj * 1000 + rem_nj) / (unit_nj ? unit_nj : 1));
    return natural + (n->seed_off ? *seed_off_of(n, v) : 0);
}

void node_counter_jump(struct node *n, uint32_t pkgs, bool dram, double uj)
{
    for (uint32_t v = 0; v < n->nvalues; v++) {
        const struct binding *b = &n->binds[v];
        if (b->kind != BK_ENERGY || b->pkg >= 32 || !((pkgs >> b->pkg) & 1) || b->pkg >= n->state.npkgs ||
            (dram ? b->zone != PHYS_ZONE_DRAM : b->zone != PHYS_ZONE_PACKAGE && b->zone != PHYS_ZONE_CORE))
            continue;
        uint64_t unit = n->state.pkg[b->pkg].energy[b->zone].unit_nj;
        *seed_off_of(n, v) += (uint64_t)llround(uj * 1000 / (double)(unit ? unit : 1));
    }
}

/* The power came back (power-loss ended): the node's time counters restart from 0 at this
 * tick's grid boundary as a booting machine's do: the elapsed counter (/proc/uptime, the TSC),
 * every CPU's busy line (/proc/stat, MPERF) and cycle line (APERF), the RAPL throttled time
 * (MSR_PKG_PERF_STATUS) and the thermal throttle counters (thermal_throttle/, the THERM_STATUS
 * logs); the energy counters restart in shown_seed. Every setting agents wrote goes back to the
 * profile's, what the firmware and the kernel set at boot (docs/faults.md power-loss): each
 * writable file shows its rendered text again and the physics takes it (the cpufreq/stats
 * reset files' among them, so the stats restart from 0). */
static void node_power_back(struct node *n, struct node_change *ch, uint32_t *nch)
{
    for (uint32_t i = 0; i < n->seg.n_slots; i++) {
        uint32_t e = n->slot_entry[i], v = n->seg.entries[e].value;
        if (v >= n->nvalues)
            continue;
        struct node_change c = {.value = v, .v = node_img_values(n->t)[v]};
        uint64_t seq;
        size_t len;
        char st[SEG_TEXT_MAX], text[SEG_TEXT_MAX + 1];
        if (seg_slot_load(&n->seg, i, &seq, st, &len)) {
            c.v.a.applied = seq;
            node_slot_applied(n)[i] = seq;
        }
        size_t l = c.v.len < sizeof c.v.a.text ? c.v.len : sizeof c.v.a.text;
        memcpy(text, c.v.a.text, l);
        text[l] = 0;
        node_apply(n, &n->binds[v], text);
        ch[(*nch)++] = c;
    }
    n->freq_dirty = true; /* the cpufreq limits moved */
    node_cycles_power_back(n);
    for (int k = 0; k < PHYS_MAX_PKGS; k++)
        n->thermal[k].count = n->thermal[k].total_ms = n->thermal[k].max_ms = 0;
    for (uint32_t v = 0; v < n->nvalues; v++) {
        const struct binding *b = &n->binds[v];
        if (b->kind == BK_ELAPSED) {
            *node_cstart(n, v) = (uint64_t)0 - n->state.substeps * 1000;
            n->cstart_elapsed_us = *node_cstart(n, v);
        } else if (b->kind == BK_CPU_BUSY && b->cpu < n->state.ncpus) {
            *node_cstart(n, v) = (uint64_t)0 - phys_cpu_busy_ns(&n->state, b->cpu, n->state.substeps) / 1000;
        }
    }
    for (uint32_t i = 0; i < n->nbusy; i++)
        n->busy_shown[i] = UINT64_MAX; /* every busy line again, from its new start */
    n->busy_dirty = true;
}

/* The S values of this tick, plus the A values in changes[0..*nch) already. */
static void collect_s_values(struct node *n, struct node_change *ch, uint32_t *nch, int64_t until_ns, int64_t now_wall)
{
    const struct seg_value *cur = node_img_values(n->t);
    char text[SEG_TEXT_MAX];
    for (uint32_t i = 0; i < n->nsvalues; i++) {
        uint32_t v = n->svalues[i];
        const struct binding *b = &n->binds[v];
        /* values rebuilt whole or published on change: decided without reading the segment,
         * whose pages are cold when a worker steps thousands of nodes */
        if (b->kind == BK_PKG_TEMP || b->kind == BK_MEM_USED || b->kind == BK_LOADAVG || b->kind == BK_ELAPSED ||
            b->kind == BK_THERMAL) {
            struct node_change c = {.value = v, .v = {.type = SEG_V_TEXT}};
            if (!fresh_value(n, b, v, &c.v, until_ns))
                continue;
            ch[(*nch)++] = c;
            continue;
        }
        /* a frozen RAPL counter (docs/faults.md rapl-freeze): its last line runs to its horizon,
         * the next tick's time, and stands there; the first publication after the fault puts the
         * truth back (the counter jumps up to it, never down) */
        if (b->kind == BK_ENERGY && b->pkg < 32 &&
            (((n->faults.rapl_frozen_pkg >> b->pkg) & 1 && (b->zone == PHYS_ZONE_PACKAGE || b->zone == PHYS_ZONE_CORE)) ||
             ((n->faults.rapl_frozen_dram >> b->pkg) & 1 && b->zone == PHYS_ZONE_DRAM)))
            continue;
        struct node_change c = {.value = v, .v = cur[v]};
        switch (b->kind) {
        case BK_ENERGY: {
            struct phys_energy_pub pub;
            phys_energy_publish(&n->state, (enum phys_zone)b->zone, b->pkg, until_ns, &pub);
            c.v.ctr.acc_uj = pub.acc_uj;
            c.v.ctr.rem_nj = (uint32_t)pub.rem_nj;
            c.v.ctr.power_uw = pub.power_uw;
            c.v.ctr.unit_nj = (uint32_t)pub.unit_nj;
            uint64_t seed = shown_seed(n, v, (uint64_t)pub.seed_raw, pub.acc_uj, pub.rem_nj, pub.unit_nj);
            c.v.ctr.seed_raw = (uint32_t)seed;
            c.v.ctr.seed_raw_hi = (uint32_t)(seed >> 32);
            c.v.ctr.start_uj = b->zone == PHYS_ZONE_PSYS ? n->state.psys.start_uj
                                                         : n->state.pkg[b->pkg].energy[b->zone].start_uj;
            c.v.ctr.t0_ns = n->mono_origin + pub.grid_ns;
            c.v.nsub = (uint32_t)((pub.until_ns - pub.grid_ns) / PHYS_SUBSTEP_NS);
            break;
        }
        case BK_HSMP_POWER: {
            /* the socket's power as the SMU reports it: with the socket sensor's noise
             * (sensors.socketPowerNoiseW; docs/faults.md "Sensors") */
            double w = n->state.pkg[b->pkg].power_w;
            if (w > 0)
                w += n->sensors.socket_w * node_sensor_noise(n, b->pkg, UINT64_C(0x68736d70));
            snprintf(text, sizeof text, "%lld\n", (long long)((w > 0 ? w : 0) * 1000) * 1000);
            node_text_value(&c.v, text);
            break;
        }
        case BK_GPU:
            node_gpu_text(n, b, text, sizeof text);
            node_text_value(&c.v, text);
            break;
        case BK_PLATFORM:
            snprintf(text, sizeof text, "%.1f %.1f %.1f %.1f %lld\n", n->power.current_w, n->power.min_w,
                     n->power.max_w, node_power_avg_w(n), (long long)node_power_period_ms(n));
            node_text_value(&c.v, text);
            break;
        case BK_FAULTS:
            node_faults_text(&n->faults, text, sizeof text);
            node_text_value(&c.v, text);
            break;
        case BK_PM_COUNTER:
            pm_text(n, b, now_wall, text, sizeof text);
            node_text_value(&c.v, text);
            break;
        case BK_GPU_ENERGY: {
            const struct phys_gpu *g = &n->gstate.g[b->pkg < PHYS_GPU_MAX ? b->pkg : 0];
            int64_t grid = n->gstate.now_ns / PHYS_SUBSTEP_NS * PHYS_SUBSTEP_NS;
            c.v.ctr.acc_uj = g->acc_uj;
            c.v.ctr.rem_nj = (uint32_t)g->rem_nj;
            c.v.ctr.power_uw = g->power_uw;
            c.v.ctr.start_uj = (uint64_t)g->start_uj;
            /* the register continues from the energy before this start (a resume) */
            uint64_t unit = c.v.ctr.unit_nj ? c.v.ctr.unit_nj : 1000;
            uint64_t seed = shown_seed(n, v, (uint64_t)((unsigned __int128)(uint64_t)g->start_uj * 1000 / unit), g->acc_uj,
                                       g->rem_nj, unit);
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
    const struct seg_value *cur = n->seg.values; /* the engine's own: it is their only writer */
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
        c.v.ctr.start_uj = node_cstart_of(n, v);
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
    uint64_t *applied = node_slot_applied(n);
    for (uint32_t i = 0; i < n->seg.n_slots; i++) {
        uint64_t seq;
        size_t len;
        char text[SEG_TEXT_MAX];
        if (!seg_slot_load(&n->seg, i, &seq, text, &len))
            continue;
        if (seq < applied[i])
            applied[i] = seq; /* the slot was reset (a repaired segment): follow it */
        if (seq <= applied[i])
            continue;
        applied[i] = seq;
        uint32_t e = n->slot_entry[i];
        uint32_t v = n->seg.entries[e].value;
        char out[SEG_TEXT_MAX];
        size_t olen;
        bool changes;
        int rc = seg_attr_store(&n->seg, e, text, len, now_mono, out, &olen, &changes);
        struct node_change c = {.value = v, .v = *seg_value_at(&n->seg, v)}; /* a quiet value: the template's until published */
        c.v.type = node_img_values(n->t)[v].type; /* the text may be the agent's; the kind is ours */
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
            node_apply(n, &n->binds[v], out);
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
        struct node_change c = {.value = v, .v = node_img_values(n->t)[v]};
        int l = snprintf(text, sizeof text, "%lld\n", llround(g->limit_w * 1000));
        memcpy(c.v.a.text, text, (size_t)l);
        c.v.len = (uint8_t)l;
        uint64_t seq;
        char st[SEG_TEXT_MAX];
        if (slot != SEG_NONE && seg_slot_load(&n->seg, slot, &seq, st, &len)) {
            c.v.a.applied = seq;
            node_slot_applied(n)[slot] = seq;
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
    uint32_t line = 0; /* the busy-cycle lines are in value order, as the counters */
    uint64_t *totals = malloc(sizeof *totals * (n->ncounters + 1u)); /* freed below, as node_tick's ch */
    if (!totals)
        return;
    for (uint32_t k = 0; k < n->ncounters; k++) {
        uint32_t v = n->counters[k];
        const struct binding *b = &n->binds[v];
        if (b->kind == BK_ELAPSED)
            totals[k] = n->cstart[k] + until_sub * 1000;
        else if (b->kind == BK_CPU_BUSY)
            totals[k] = n->cstart[k] + phys_cpu_busy_ns(&n->state, b->cpu, until_sub) / 1000;
        else if (b->kind == BK_UNIT_CPU)
            totals[k] = node_unit_total_us(n, v, until_sub);
        else if (b->kind == BK_CPU_CYCLES)
            totals[k] = node_cycles_total(n, line++, v, until_sub);
        else
            totals[k] = b->kind == BK_GPU_ENERGY ? phys_gpu_total_uj(&n->gstate, b->pkg)
                                                 : phys_energy_total_uj(&n->state, (enum phys_zone)b->zone, b->pkg);
    }
    seg_ledger_write(&n->seg, ++n->ledger_seq, totals, now_wall);
    free(totals);
}

void node_faults_text(const struct node_faults *f, char *buf, size_t len)
{
    char t[2 * SEG_TEXT_MAX] = "";
    int u = 0;
    if (f->gpu_lost)
        u += snprintf(t + u, sizeof t - (size_t)u, "gl=%x ", (unsigned)f->gpu_lost);
    if (f->bmc)
        u += snprintf(t + u, sizeof t - (size_t)u, "bmc=%c%d ", f->bmc, f->bmc_delay_ms);
    if (f->hwmon_err > 0)
        u += snprintf(t + u, sizeof t - (size_t)u, "hw=%d ", f->hwmon_err);
    if (f->write_err > 0)
        u += snprintf(t + u, sizeof t - (size_t)u, "wr=%d ", f->write_err);
    if (f->pkg_locked)
        u += snprintf(t + u, sizeof t - (size_t)u, "lk=%x ", (unsigned)f->pkg_locked);
    if (f->off_err > 0)
        u += snprintf(t + u, sizeof t - (size_t)u, "off=%d ", f->off_err);
    if (u > 0)
        t[u - 1] = 0; /* the last space */
    snprintf(buf, len, "%s\n", t);
}

/* The faults' inputs to the physics of the interval that begins now (node_faults). */
static void apply_faults(struct node *n, double ambient_c)
{
    const struct node_faults *f = &n->faults;
    /* A package that reached TjMax (100 °C, render_coretemp.c's crit; within half a degree,
     * what coretemp shows as 99 or 100) is held there by PROCHOT: its power at most what keeps it
     * there in this air, the steady state of the physics' thermal model (ambient + c_per_w * P),
     * until its load would no longer take it there (account_throttle). Only under a cooling
     * fault: healthy nodes never get near. */
    double cpw = n->params.thermal_c_per_w > 0 ? n->params.thermal_c_per_w : 0.125;
    double hot = f->inlet_c != 0 ? (NODE_TJMAX_C - ambient_c) / cpw : INFINITY;
    /* A lost PSU (psu-loss): the node must stay within what the others deliver. Ours, as a node
     * manager does it: the GPUs braked to their minimum (psu-loss sets the brake), the rest of
     * the platform and DRAM as they draw, the packages sharing what is left. */
    double share = INFINITY;
    if (f->psu_w > 0 && n->state.npkgs > 0) {
        double gpus = n->gparams.vendor == PHYS_GPU_NONE ? 0 : n->gparams.count * n->gparams.min_w;
        share = (f->psu_w - gpus - n->params.platform_other_w - n->params.dram_w_per_socket * n->state.npkgs) /
                n->state.npkgs;
    }
    for (int k = 0; k < n->state.npkgs && k < PHYS_MAX_PKGS; k++) {
        struct node_thermal *th = &n->thermal[k];
        bool reached = th->active || n->state.pkg[k].temp_c >= NODE_TJMAX_C - 0.5;
        th->cap_w = reached ? hot : INFINITY;
        double cap = th->cap_w < share ? th->cap_w : share;
        n->state.pkg[k].limits_ignored = (f->pkg_limits_ignored >> k) & 1;
        n->state.pkg[k].fault_cap_w = isfinite(cap) ? (cap > 1 ? cap : 1) : 0;
    }
    /* A GPU that reached its maximum operating temperature (within half a degree) has its clocks
     * capped by the driver: its power at most what keeps it there in this air, the steady state
     * of the GPU's thermal model (ambient + thermalRiseC x P / naturalMaxW), while its load would
     * take it past. Only under a cooling fault, as the CPUs'. */
    const struct phys_gpu_params *gp = &n->gparams;
    n->air_c = ambient_c;
    double gcap = f->inlet_c != 0 && gp->thermal_rise_c > 0 && gp->natural_max_w > 0
                      ? (NODE_GPU_MAX_OPERATING_C - ambient_c) * gp->natural_max_w / gp->thermal_rise_c
                      : INFINITY;
    /* a stuck frequency (freq-stuck): each CPU of the package stays at the frequency it ran at
     * when the fault began */
    for (int i = 0; i < n->state.ncpus; i++) {
        struct phys_core_state *c = &n->state.cpu[i];
        int k = phys_cpu_pkg_of(&n->params, &n->state, i);
        bool stuck = k < 32 && ((f->freq_stuck >> k) & 1);
        c->stuck_khz = !stuck ? 0 : c->stuck_khz ? c->stuck_khz : (uint32_t)(c->freq_khz > 1 ? c->freq_khz : 1);
    }
    /* a node that lost its power draws nothing (power-loss) */
    n->state.powered_off = f->off_err > 0;
    for (int g = 0; g < n->gparams.count && g < PHYS_GPU_MAX; g++) {
        const struct phys_gpu *pg = &n->gstate.g[g];
        n->gstate.g[g].powered_off = f->off_err > 0;
        bool reached = pg->thermal_capped || pg->temp_c >= NODE_GPU_MAX_OPERATING_C - 0.5;
        n->gstate.g[g].thermal_w = isfinite(gcap) && reached ? (gcap > 0.001 ? gcap : 0.001) : 0;
        n->gstate.g[g].limit_ignored = (f->gpu_limits_ignored >> g) & 1;
        n->gstate.g[g].brake_w = !((f->gpu_brake >> g) & 1) ? 0
                                 : f->gpu_brake_w[g] > 0   ? f->gpu_brake_w[g]
                                                           : n->gparams.min_w;
    }
}

/* The packages' thermal throttling of the interval that begins now: PROCHOT is asserted while
 * the package would pass TjMax uncapped and the cap that keeps it there is the one in force
 * (a lower RAPL limit or a lost PSU's share keeps it cooler). Episodes as Linux's
 * therm_throt_process counts them (faults.md §3.3): a rising edge counts one, a falling edge
 * adds its length in ms to the total and raises the maximum. */
static void account_throttle(struct node *n)
{
    double pct = 0;
    for (int k = 0; k < n->state.npkgs && k < PHYS_MAX_PKGS; k++) {
        struct node_thermal *th = &n->thermal[k];
        const struct phys_pkg_state *ps = &n->state.pkg[k];
        bool on = isfinite(th->cap_w) && ps->natural_w > th->cap_w && ps->cap_w >= th->cap_w - 1e-9;
        if (on && !th->active) {
            th->count++;
            th->since_ns = n->state.now_ns;
        } else if (!on && th->active) {
            uint64_t ms = (uint64_t)((n->state.now_ns - th->since_ns) / 1000000);
            th->total_ms += ms;
            th->max_ms = ms > th->max_ms ? ms : th->max_ms;
        }
        th->active = on;
        if (on && ps->uncapped_khz > 0 && ps->scale_eff < ps->uncapped_khz)
            pct += 100 * (1 - ps->scale_eff / ps->uncapped_khz);
    }
    n->thermal_pct = n->state.npkgs > 0 ? pct / n->state.npkgs : 0;
}

void node_tick(struct node *n, int64_t now_mono, int64_t until_mono, int64_t now_wall, double ambient_c,
               struct event_log *log)
{
    node_check_health(n, now_wall, log);
    ambient_c += n->faults.inlet_c;
    int64_t dt = (now_mono - n->mono_origin) - n->state.now_ns;
    n->freq_dirty |= phys_cpu_step(&n->params, &n->state, &n->load, ambient_c, dt);
    phys_gpu_step(&n->gparams, &n->gstate, ambient_c, n->state.now_ns);
    uint32_t cap = n->nvalues + 2 * n->seg.n_slots; /* the drain's and a power-up's settings too */
    struct node_change *ch = malloc(sizeof *ch * (cap ? cap : 1));
    if (!ch)
        return;
    uint32_t nch = 0;
    drain_slots(n, ch, &nch, now_mono, now_wall, log);
    drain_events(n, now_mono, now_wall, log);
    reset_idle_limits(n, ch, &nch, now_wall, log);
    if (n->load_hook)
        n->load_hook(n->load_ctx, n);
    apply_faults(n, ambient_c);
    n->gpu_lost_held = n->faults.gpu_lost;
    n->off_held = n->faults.off_err > 0;
    n->power_back = n->was_off && !n->off_held;
    n->was_off = n->off_held;
    if (n->power_back)
        node_power_back(n, ch, &nch);
    unsigned began = phys_cpu_begin_interval(&n->params, &n->state, &n->load);
    n->freq_dirty |= (began & PHYS_BEGAN_FREQ_CEILING) != 0;
    n->busy_dirty |= (began & PHYS_BEGAN_BUSY_LINES) != 0;
    account_throttle(n);
    phys_gpu_begin_interval(&n->gparams, &n->gstate, &n->gload, n->tick_ns);
    sample_power(n, now_mono, now_wall);
    /* the freeze horizon of every line of this publication; time counters reach the ledger at it
     * (write_ledger) */
    n->horizon_ns = until_mono > now_mono ? until_mono - n->mono_origin : n->state.now_ns;
    collect_s_values(n, ch, &nch, n->horizon_ns, now_wall);
    collect_freq_values(n, ch, &nch);
    collect_busy_lines(n, ch, &nch);
    node_cycles_collect(n, ch, &nch);
    node_cfstats_collect(n, ch, &nch);
    node_units_collect(n, ch, &nch, n->horizon_ns);
    node_publish(n, ch, nch, now_mono);
    free(ch);
    write_ledger(n, now_wall);
}
