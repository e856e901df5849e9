/* physics_gpu: the GPU model of physics_gpu.h. */
#include "physics_gpu.h"
#include "physics_energy.h"

#include <math.h>
#include <string.h>

#define SUBSTEP_NS 1000000LL /* the node's 1 ms grid */
#define TEMP_TAU_S 20.0
#define HELD_SLICES 16

static double clamp01(double x)
{
    return x < 0 ? 0 : x > 1 ? 1 : x;
}

double phys_gpu_natural_w(const struct phys_gpu_params *p, const struct phys_gpu_load *load, double u)
{
    u = clamp01(u);
    double m = clamp01(load->memory_intensity);
    double wc = 0.5, wm = 0.5;
    if (load->cls == PHYS_GPU_CLASS_COMPUTE)
        wc = 0.8, wm = 0.2;
    else if (load->cls == PHYS_GPU_CLASS_MEMORY)
        wc = 0.2, wm = 0.8;
    wc = clamp01(0.60 * wc + 0.40 * (1 - m));
    wm = clamp01(0.60 * wm + 0.40 * m);
    double sum = wc + wm;
    if (sum > 0)
        wc /= sum, wm /= sum;
    double d = p->natural_max_w > p->idle_w ? p->natural_max_w - p->idle_w : 0;
    return wc * (p->idle_w + d * pow(u, 1.02)) + wm * (p->idle_w + d * (0.35 * sqrt(u) + 0.30 * u));
}

int phys_gpu_gfx_ceiling(const struct phys_gpu_params *p, int mem_mhz)
{
    for (int k = 0; k < p->nmem; k++)
        if (p->mem_clk[k] == mem_mhz && p->mem_ceiling[k] > 0)
            return p->mem_ceiling[k];
    return p->gfx_max;
}

/* The supported memory clock a lock of [lo, hi] runs at: the highest one at or below hi (the
 * lowest supported when none is). */
static int locked_mem_clock(const struct phys_gpu_params *p, int hi)
{
    for (int k = 0; k < p->nmem; k++)
        if (p->mem_clk[k] <= hi)
            return p->mem_clk[k];
    return p->nmem ? p->mem_clk[p->nmem - 1] : hi;
}

static double target_of(const struct phys_gpu_params *p, const struct phys_gpu *g)
{
    if (p->vendor == PHYS_GPU_INTEL && g->limit_w <= 0) /* 0 turns PL1 off */
        return p->natural_max_w > p->max_w ? p->natural_max_w : p->max_w;
    double t = g->limit_w;
    if (g->limit_ignored)
        t = p->max_w;
    if (t < p->min_w)
        t = p->min_w;
    if (t > p->max_w)
        t = p->max_w;
    return t > 1e-3 ? t : 1e-3;
}

/* The limit settles exponentially and is reached once within SETTLED_W of its target (the
 * power controller holds the draw at the limit from there). */
#define SETTLED_W 0.5
static double settle(double from, double to, double tau_ns, double dt_ns)
{
    if (tau_ns <= 0)
        return to;
    double e = to + (from - to) * exp(-dt_ns / tau_ns);
    return fabs(e - to) < SETTLED_W ? to : e;
}

static void ring_push(struct phys_gpu *g, int64_t t, uint64_t uj)
{
    g->ring_head = (g->ring_head + 1) % PHYS_GPU_RING;
    g->ring_t[g->ring_head] = t;
    g->ring_uj[g->ring_head] = uj;
    if (g->ring_n < PHYS_GPU_RING)
        g->ring_n++;
}

/* Mean power over the window ending at the newest sample: the energy at (now - window) is
 * interpolated between the two samples around it (energy is linear between ticks). */
static double boxcar_w(const struct phys_gpu *g, int64_t window_ns)
{
    int64_t now = g->ring_t[g->ring_head];
    uint64_t e_now = g->ring_uj[g->ring_head];
    int64_t from = now - window_ns;
    int newer = g->ring_head;
    for (int k = 1; k < g->ring_n; k++) {
        int i = (g->ring_head - k + PHYS_GPU_RING) % PHYS_GPU_RING;
        if (g->ring_t[i] <= from) {
            double span = (double)(g->ring_t[newer] - g->ring_t[i]);
            double frac = span > 0 ? (double)(from - g->ring_t[i]) / span : 0;
            double e_from = (double)g->ring_uj[i] + frac * ((double)g->ring_uj[newer] - (double)g->ring_uj[i]);
            return ((double)e_now - e_from) / ((double)window_ns / 1e3);
        }
        newer = i;
    }
    /* Fewer samples than a window: the mean since the oldest one. */
    int64_t span = now - g->ring_t[newer];
    return span > 0 ? (double)(e_now - g->ring_uj[newer]) / ((double)span / 1e3) : g->power_w;
}

/* GPU i's spread factor (1 without one) and its idle power. */
static double gpu_scale(const struct phys_gpu_params *p, int i)
{
    return p->power_scale[i] > 0 ? p->power_scale[i] : 1;
}

void phys_gpu_init(const struct phys_gpu_params *p, struct phys_gpu_state *s)
{
    int n = p->count > 0 ? (p->count < PHYS_GPU_MAX ? p->count : PHYS_GPU_MAX) : 0;
    memset(s->g, 0, sizeof s->g[0] * (size_t)n); /* the GPUs past count are not touched (physics_gpu.h) */
    s->now_ns = 0;
    for (int i = 0; i < n; i++) {
        struct phys_gpu *g = &s->g[i];
        g->limit_w = p->start_w;
        g->persistence = p->persistence;
        g->enforced_w = target_of(p, g);
        g->target_w = g->enforced_w;
        double idle_w = p->idle_w * gpu_scale(p, i);
        g->power_w = g->instant_w = g->avg_amd_w = g->draw_w = idle_w;
        g->power_uw = (uint64_t)llround(idle_w * 1e6);
        g->temp_c = p->ambient_init_c;
        g->gfx_mhz = p->gfx_idle;
        g->mem_mhz = p->mem_idle;
        /* As if the GPU had drawn its idle power for a whole window before the start (c.8). */
        g->ring_t[0] = -p->window_ns;
        g->ring_uj[0] = 0;
        g->ring_n = 1;
        ring_push(g, 0, (uint64_t)llround(idle_w * (double)p->window_ns / 1e3));
    }
}

void phys_gpu_step(const struct phys_gpu_params *p, struct phys_gpu_state *s, double ambient_c, int64_t now_ns)
{
    int64_t dt = now_ns - s->now_ns;
    if (dt <= 0)
        return;
    int64_t boundaries = now_ns / SUBSTEP_NS - s->now_ns / SUBSTEP_NS;
    double dt_s = (double)dt / 1e9;
    for (int i = 0; i < p->count && i < PHYS_GPU_MAX; i++) {
        struct phys_gpu *g = &s->g[i];
        uint64_t nj = g->rem_nj + (uint64_t)boundaries * g->power_uw;
        g->acc_uj += nj / 1000;
        g->rem_nj = nj % 1000;
        g->enforced_w = settle(g->enforced_w, g->target_w, (double)p->tau_ns, (double)dt);
        double w = p->window_ns > 0 ? (double)p->window_ns : 1e9;
        double a = (double)dt / w;
        g->avg_amd_w += (g->power_w - g->avg_amd_w) * (a < 1 ? a : 1);
        double hot = ambient_c + (p->natural_max_w > 0 ? p->thermal_rise_c * g->power_w / p->natural_max_w : 0);
        g->temp_c += (hot - g->temp_c) * (1 - exp(-dt_s / TEMP_TAU_S));
        g->rx_bytes += g->rx_gbps * 1e9 * dt_s;
        g->tx_bytes += g->tx_gbps * 1e9 * dt_s;
        /* the ring's energy origin is one idle window before init (see phys_gpu_init) */
        ring_push(g, now_ns / SUBSTEP_NS * SUBSTEP_NS,
                  g->acc_uj + (uint64_t)llround(p->idle_w * gpu_scale(p, i) * (double)p->window_ns / 1e3));
        g->draw_w = boxcar_w(g, p->window_ns > 0 ? p->window_ns : 1000000000LL);
    }
    s->now_ns = now_ns;
}

/* Peer transfers of the interval: each receiver's inbound demand shares its link. */
static void transfers(const struct phys_gpu_params *p, struct phys_gpu_state *s, const struct phys_gpu_load *load)
{
    double demand_in[PHYS_GPU_MAX] = {0};
    for (int i = 0; i < p->count && i < PHYS_GPU_MAX; i++)
        s->g[i].rx_gbps = s->g[i].tx_gbps = 0;
    for (int k = 0; k < load->nxfer; k++) {
        const struct phys_gpu_xfer *x = &load->xfer[k];
        if (x->from >= 0 && x->from < p->count && x->to >= 0 && x->to < p->count && x->from != x->to && x->gbps > 0)
            demand_in[x->to] += x->gbps;
    }
    for (int k = 0; k < load->nxfer; k++) {
        const struct phys_gpu_xfer *x = &load->xfer[k];
        if (x->from < 0 || x->from >= p->count || x->to < 0 || x->to >= p->count || x->from == x->to || x->gbps <= 0)
            continue;
        double link = p->peer_link_gbps > 0 ? p->peer_link_gbps : demand_in[x->to];
        if (p->receiver_gate && p->gfx_max > 0)
            link *= (double)s->g[x->to].gfx_mhz / p->gfx_max;
        double rate = demand_in[x->to] > link ? x->gbps * link / demand_in[x->to] : x->gbps;
        s->g[x->to].rx_gbps += rate;
        s->g[x->from].tx_gbps += rate;
    }
}

void phys_gpu_begin_interval(const struct phys_gpu_params *p, struct phys_gpu_state *s,
                             const struct phys_gpu_load *load, int64_t interval_ns)
{
    double u = clamp01(load->util);
    double natural = phys_gpu_natural_w(p, load, u);
    for (int i = 0; i < p->count && i < PHYS_GPU_MAX; i++) {
        struct phys_gpu *g = &s->g[i];
        int mem = p->nmem ? p->mem_clk[0] : p->mem_idle;
        if (g->lock_mem_max > 0)
            mem = locked_mem_clock(p, g->lock_mem_max);
        int fceil = p->gfx_max;
        if (g->lock_gfx_max > 0 && g->lock_gfx_max < fceil)
            fceil = g->lock_gfx_max;
        int memceil = phys_gpu_gfx_ceiling(p, mem);
        if (memceil > 0 && memceil < fceil)
            fceil = memceil;
        double ratio = p->gfx_max > 0 && fceil > 0 ? (double)fceil / p->gfx_max : 1;
        double sc = gpu_scale(p, i), idle_w = p->idle_w * sc;
        double pclock = sc * (p->idle_w + (natural - p->idle_w) * ratio * ratio);
        g->target_w = target_of(p, g);
        if (g->brake_w > 0 && g->brake_w < g->target_w) /* the brake acts at once */
            g->target_w = g->enforced_w = g->brake_w;
        double th = g->thermal_w > 0 ? g->thermal_w : HUGE_VAL;
        /* The held power: the mean, over the interval, of what the settling limit allows. */
        double sum = 0, span = interval_ns > 0 ? (double)interval_ns : 1e9;
        for (int k = 0; k < HELD_SLICES; k++) {
            double e = settle(g->enforced_w, g->target_w, (double)p->tau_ns, span * (k + 0.5) / HELD_SLICES);
            e = e < th ? e : th;
            double pw = pclock < e ? pclock : e;
            sum += pw > idle_w ? pw : idle_w;
        }
        g->power_uw = (uint64_t)llround(sum / HELD_SLICES * 1e6);
        g->power_w = (double)g->power_uw / 1e6;
        double lim = g->enforced_w < th ? g->enforced_w : th;
        double now_p = pclock < lim ? pclock : lim;
        g->instant_w = now_p > idle_w ? now_p : idle_w;
        if (g->powered_off) {
            g->power_uw = 0;
            g->power_w = g->instant_w = 0;
        }
        g->capped = u > 0 && lim < pclock;
        g->thermal_capped = th < g->enforced_w && th < (u > 0 ? pclock : idle_w + 1e-9);
        if (u <= 0) {
            g->gfx_mhz = p->gfx_idle;
            g->mem_mhz = g->lock_mem_max > 0 ? mem : p->mem_idle;
        } else {
            int f = fceil;
            if (g->capped && pclock > idle_w) {
                double r = (lim - idle_w) / (pclock - idle_w);
                f = (int)(fceil * sqrt(r > 0 ? r : 0));
                if (p->gfx_step > 0)
                    f -= (f - p->gfx_min) % p->gfx_step;
            }
            if (f < p->gfx_min)
                f = p->gfx_min;
            g->gfx_mhz = f;
            g->mem_mhz = mem;
        }
    }
    transfers(p, s, load);
}

uint64_t phys_gpu_total_uj(const struct phys_gpu_state *s, int i)
{
    return (uint64_t)s->g[i].start_uj + s->g[i].acc_uj;
}

uint64_t phys_gpu_total_uj_back(const struct phys_gpu_state *s, int i, uint64_t back)
{
    const struct phys_gpu *g = &s->g[i];
    return (uint64_t)g->start_uj + phys_energy_back(g->acc_uj, g->rem_nj, g->power_uw, back);
}
