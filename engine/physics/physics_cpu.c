/* physics_cpu: CPU power, frequency, caps, temperature and energy of one node; see physics_cpu.h
 * for the time and interval contract. Section marks: c.N is "upstream c.N", §N.N is "sysfs §N.N" (docs/sources.md).
 *
 * Invariants:
 *  - Only grid boundaries change state (besides now_ns/carry_ns), so any cut of the same time into
 *    phys_cpu_step calls gives the same bytes.
 *  - Energy is integer arithmetic only: a zone adds its held power in µW as nJ per 1 ms substep,
 *    so nothing is lost to rounding however many substeps run, and a reader with the published
 *    integers computes the same value without running the physics.
 *  - Everything a substep needs that depends only on the call's inputs (governor target, settle
 *    targets, first-order factors) is computed once per call; the per-substep work is a handful of
 *    additions per package. */
#include "physics_cpu.h"
#include "physics_energy.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#define SUBSTEP_S 1e-3

/* ---- numbers ---- */

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static double clamp01(double v)
{
    return v > 0 ? (v < 1 ? v : 1) : 0; /* NaN → 0 */
}

/* exp and log of our own: libm is not linked into every consumer, and results must not depend on
 * which libm a host has. Accuracy is a few ulp, far below anything the model distinguishes. */
static const double LN2_HI = 6.93147180369123816490e-01; /* low bits zero: k·LN2_HI is exact */
static const double LN2_LO = 1.90821492927058770002e-10;

static double phys_log(double x) /* x > 0, finite */
{
    uint64_t bits;
    int adj = 0;
    if (x < 2.2250738585072014e-308) { /* subnormal: scale into the normal range */
        x *= 18014398509481984.0;      /* 2^54 */
        adj = -54;
    }
    memcpy(&bits, &x, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff) - 1023 + adj;
    bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    double m;
    memcpy(&m, &bits, sizeof m); /* [1, 2) */
    if (m > 1.4142135623730951) {
        m *= 0.5;
        e++;
    }
    /* ln m = 2·atanh(s), s = (m-1)/(m+1), |s| ≤ 0.1716: the series converges to 1e-17 in 12 terms */
    double sq = (m - 1) / (m + 1), z = sq * sq, sum = 0;
    for (int k = 12; k >= 1; k--)
        sum = z * (1.0 / (2 * k + 1) + sum);
    double lnm = 2 * sq + 2 * sq * sum;
    return e * LN2_HI + (lnm + e * LN2_LO);
}

static double phys_exp(double y)
{
    if (y != y)
        return y;
    if (y > 709.0)
        return HUGE_VAL;
    if (y < -745.0)
        return 0;
    double kf = y * 1.4426950408889634 + (y >= 0 ? 0.5 : -0.5);
    int k = (int)kf;
    double r = (y - k * LN2_HI) - k * LN2_LO; /* |r| ≤ 0.35 */
    double t = 1;
    for (int n = 17; n >= 1; n--)
        t = 1 + t * r / n;
    /* multiply by 2^k in two halves so that k near the ends of the range stays representable */
    int k1 = k / 2, k2 = k - k1;
    uint64_t b1 = (uint64_t)(k1 + 1023) << 52, b2 = (uint64_t)(k2 + 1023) << 52;
    double s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    return t * s1 * s2;
}

static double phys_pow(double x, double y) /* x ≥ 0 */
{
    if (!(x > 0))
        return y == 0 ? 1 : 0;
    if (x == 1 || y == 0)
        return 1;
    if (y == 1)
        return x;
    return phys_exp(y * phys_log(x));
}

/* Watts to whole µW for the integer energy path; round half up, never negative. */
static uint64_t watts_to_uw(double w)
{
    if (!(w > 0))
        return 0;
    double uw = w * 1e6 + 0.5;
    return uw >= 1e15 ? (uint64_t)1e15 : (uint64_t)uw; /* 1 GW: nothing real gets there */
}

/* ---- parameters with their defaults ---- */

static int npkgs_of(const struct phys_cpu_params *p)
{
    return p->sockets < 1 ? 1 : p->sockets > PHYS_MAX_PKGS ? PHYS_MAX_PKGS : p->sockets;
}

static bool setpolicy_driver(const struct phys_cpu_params *p)
{
    return p->driver == PHYS_DRV_INTEL_PSTATE || p->driver == PHYS_DRV_AMD_PSTATE_EPP;
}

static int freq_n(const struct phys_cpu_params *p)
{
    return p->freq_n < 0 ? 0 : p->freq_n > PHYS_MAX_FREQS ? PHYS_MAX_FREQS : p->freq_n;
}

/* Lowest frequency scale a package can run at: cpuinfo_min / cpuinfo_max, else 0.35 (c.4). */
static double min_scale(const struct phys_cpu_params *p)
{
    if (p->cpuinfo_min_khz > 0 && p->cpuinfo_max_khz > 0)
        return (double)p->cpuinfo_min_khz / (double)p->cpuinfo_max_khz;
    return 0.35;
}

static double thermal_c_per_w(const struct phys_cpu_params *p)
{
    return p->thermal_c_per_w > 0 ? p->thermal_c_per_w : 0.125; /* simulator: 8 W per °C */
}

static double thermal_tau_s(const struct phys_cpu_params *p)
{
    return p->thermal_tau_s > 0 ? p->thermal_tau_s : 4.0; /* simulator SIM_CPU_THERMAL_TAU_MS */
}

/* First-order factor per substep, as upstream: x += (target - x)·min(h/τ, 1); τ ≤ 0 jumps. */
static double settle_factor(double tau_s)
{
    return tau_s > SUBSTEP_S ? SUBSTEP_S / tau_s : 1.0;
}

/* ---- power models ---- */

/* c.2: P(u, f) = idle + (max - idle)·clamp01(u·a)^α·clamp01(f)^β, a = activity (ioIntensity 0). */
static double analytic_power(const struct phys_cpu_params *p, double util, double mem, double f)
{
    double alpha = p->alpha_util > 0 ? p->alpha_util : 1, beta = p->beta_freq > 0 ? p->beta_freq : 1;
    double a = clamp(1 - 0.30 * clamp01(mem), 0.35, 1);
    return p->idle_pkg_w + (p->max_pkg_w - p->idle_pkg_w) * phys_pow(clamp01(util * a), alpha) *
                               phys_pow(clamp01(f), beta);
}

/* c.2 closed-form inverse: the scale at which the package draws cap (u not multiplied by the
 * activity, as upstream). */
static double analytic_solve(const struct phys_cpu_params *p, double util, double cap, double ms)
{
    double alpha = p->alpha_util > 0 ? p->alpha_util : 1, beta = p->beta_freq > 0 ? p->beta_freq : 1;
    double u = clamp01(util);
    if (p->max_pkg_w <= p->idle_pkg_w || u == 0)
        return 1;
    double den = (p->max_pkg_w - p->idle_pkg_w) * phys_pow(u, alpha);
    if (den <= 0)
        return 1;
    double x = (cap - p->idle_pkg_w) / den;
    return x <= 0 ? ms : phys_pow(x, 1 / beta);
}

/* Node watts of the measured curve at load pct, linear between points, clamped to the ends. */
static double curve_node_w(const struct phys_cpu_params *p, double pct)
{
    int n = p->curve_n > PHYS_MAX_CURVE ? PHYS_MAX_CURVE : p->curve_n;
    if (n <= 0)
        return 0;
    if (pct <= p->curve_load_pct[0])
        return p->curve_node_w[0];
    if (pct >= p->curve_load_pct[n - 1])
        return p->curve_node_w[n - 1];
    for (int i = 0; i + 1 < n; i++) {
        double x0 = p->curve_load_pct[i], x1 = p->curve_load_pct[i + 1];
        if (pct <= x1) {
            if (x1 <= x0)
                return p->curve_node_w[i + 1];
            return p->curve_node_w[i] + (p->curve_node_w[i + 1] - p->curve_node_w[i]) * (pct - x0) / (x1 - x0);
        }
    }
    return p->curve_node_w[n - 1];
}

/* c.3 throughput multiplier: how much work per unit time the package does at scale f. */
static double throughput(const struct phys_cpu_params *p, double f, int cls, double mem)
{
    static const double weights[4][3] = {
        {0.75, 0.20, 0.05}, /* compute-bound */
        {0.20, 0.75, 0.05}, /* memory-bound */
        {0.10, 0.10, 0.80}, /* io-bound */
        {0.45, 0.35, 0.20}, /* other */
    };
    const double io = 0; /* hwemu never has I/O intensity */
    double k = p->knee > 0 ? p->knee : 0.7;
    f = clamp01(f);
    mem = clamp01(mem);
    double sc = f;
    double sm = f >= k ? 1 - 0.12 * (1 - f) : 1 - 0.12 * (1 - k) - 0.45 * (k - f) / (k > 0.1 ? k : 0.1);
    double si = 1 - 0.05 * (1 - f);
    int row = cls >= PHYS_CLASS_COMPUTE_BOUND && cls <= PHYS_CLASS_IO_BOUND ? cls : 3;
    double wc = clamp01(0.55 * weights[row][0] + 0.45 * (1 - (mem > io ? mem : io)));
    double wm = clamp01(0.55 * weights[row][1] + 0.45 * mem);
    double wi = clamp01(0.55 * weights[row][2] + 0.45 * io);
    double sum = wc + wm + wi;
    if (sum <= 0) {
        wc = weights[row][0];
        wm = weights[row][1];
        wi = weights[row][2];
        sum = 1;
    }
    return clamp01((wc * sc + wm * sm + wi * si) / sum);
}

/* c.3: the curve read at the load the package can actually retire at scale f, per package. */
static double curve_power(const struct phys_cpu_params *p, double util, double mem, int cls, double f)
{
    double u = clamp01(util);
    double a = 1 - 0.30 * clamp01(mem);
    if (cls == PHYS_CLASS_COMPUTE_BOUND)
        a += 0.08;
    else if (cls == PHYS_CLASS_IO_BOUND)
        a -= 0.12;
    a = clamp(a, 0.35, 1);
    if (curve_node_w(p, 100 * clamp01(u * a)) <= 0)
        return 0;
    double m = throughput(p, f, cls, mem);
    if (m <= 0)
        m = 0.01;
    return curve_node_w(p, 100 * clamp01(u * m)) / npkgs_of(p);
}

/* Package power if every CPU of it ran at utilisation util and scale f. */
static double model_w(const struct phys_cpu_params *p, double util, const struct phys_load *load, double f)
{
    if (p->model == PHYS_MODEL_CURVE)
        return curve_power(p, util, load->memory_intensity, load->cpu_class, f);
    return analytic_power(p, util, load->memory_intensity, f);
}

double phys_cpu_model_power_w(const struct phys_cpu_params *p, const struct phys_load *load, double f)
{
    return model_w(p, load->cpu_util, load, f);
}

/* c.3 inverse for the curve: 22 bisection steps on [ms, 1], keeping the last scale within cap. */
static double curve_solve(const struct phys_cpu_params *p, const struct phys_load *load, double util, double cap,
                          double ms)
{
    if (model_w(p, util, load, 1) <= cap)
        return 1;
    double lo = ms, hi = 1, best = ms;
    for (int i = 0; i < 22; i++) {
        double mid = (lo + hi) / 2;
        if (model_w(p, util, load, mid) <= cap) {
            best = mid;
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return best;
}

/* ---- governors and the running frequency (c.5) ---- */

int64_t phys_cpu_cpuinfo_max_khz(const struct phys_cpu_params *p, const struct phys_cpu_state *s)
{
    if (!s->boost && freq_n(p) == 0 && p->base_khz > 0 && p->base_khz < p->cpuinfo_max_khz)
        return p->base_khz;
    return p->cpuinfo_max_khz;
}

/* Table resolution: high → largest entry ≤ v (none: lowest entry); low → smallest entry ≥ v
 * (none: highest entry). Without a table v itself. */
static double resolve(const struct phys_cpu_params *p, double v, bool high)
{
    int n = freq_n(p);
    if (n == 0)
        return v;
    bool found = false;
    double best = 0, lowest = (double)p->freq_khz[0], highest = lowest;
    for (int i = 0; i < n; i++) {
        double e = (double)p->freq_khz[i];
        lowest = e < lowest ? e : lowest;
        highest = e > highest ? e : highest;
        if (high ? e <= v : e >= v) {
            if (!found || (high ? e > best : e < best))
                best = e;
            found = true;
        }
    }
    return found ? best : high ? lowest : highest;
}

struct freq_limits {
    double eff_min, ceiling;
};

/* The limits of CPU i's policy: its scaling_min/max resolved into the hardware range and table. */
static struct freq_limits freq_limits(const struct phys_cpu_params *p, const struct phys_cpu_state *s, int i)
{
    const struct phys_core_state *c = &s->cpu[i];
    double lo = (double)p->cpuinfo_min_khz, hi = (double)phys_cpu_cpuinfo_max_khz(p, s);
    double smax = (double)c->scaling_max_khz, smin = (double)c->scaling_min_khz;
    if (s->max_perf_pct > 0 && s->max_perf_pct < 100) /* intel_pstate's global limits */
        smax = smax < (double)p->cpuinfo_max_khz * s->max_perf_pct / 100 ? smax
                                                                         : (double)p->cpuinfo_max_khz * s->max_perf_pct / 100;
    if (s->min_perf_pct > 0 && (double)p->cpuinfo_max_khz * s->min_perf_pct / 100 > smin)
        smin = (double)p->cpuinfo_max_khz * s->min_perf_pct / 100;
    double eff_max = resolve(p, clamp(smax, lo, hi), true);
    double eff_min = resolve(p, clamp(smin, lo, hi), false);
    if (eff_min > eff_max)
        eff_min = eff_max;
    double ceiling = eff_max;
    int n = freq_n(p);
    if (n > 0 && s->boost && eff_max < (double)p->cpuinfo_max_khz) {
        double top = resolve(p, HUGE_VAL, true);
        if (eff_max >= top) /* boost range above P0, reachable only through the top entry */
            ceiling = (double)p->cpuinfo_max_khz;
    }
    return (struct freq_limits){eff_min, ceiling};
}

double phys_cpu_dvfs_throttle_pct(const struct phys_cpu_params *p, const struct phys_cpu_state *s)
{
    if (p->cpuinfo_max_khz <= 0 || s->ncpus <= 0)
        return 0;
    double sum = 0, ceiling = 0;
    const struct phys_core_state *prev = NULL;
    for (int i = 0; i < s->ncpus; i++) {
        const struct phys_core_state *c = &s->cpu[i];
        /* neighbours with the same limits (a policy's CPUs, usually every CPU) share the ceiling */
        if (!prev || c->scaling_min_khz != prev->scaling_min_khz || c->scaling_max_khz != prev->scaling_max_khz)
            ceiling = freq_limits(p, s, i).ceiling;
        prev = c;
        sum += ceiling;
    }
    double pct = 100 * (1 - sum / s->ncpus / (double)p->cpuinfo_max_khz);
    return pct > 0 ? pct : 0;
}

/* The frequency CPU i's governor asks for at utilisation util. */
static double freq_target(const struct phys_cpu_params *p, const struct phys_cpu_state *s, int i, double util)
{
    if (s->cpu[i].stuck_khz > 0)
        return s->cpu[i].stuck_khz;
    struct freq_limits l = freq_limits(p, s, i);
    int gov = s->cpu[i].governor;
    if (gov == PHYS_GOV_PERFORMANCE)
        return l.ceiling;
    if (gov == PHYS_GOV_POWERSAVE && !setpolicy_driver(p))
        return l.eff_min;
    return l.eff_min + (l.ceiling - l.eff_min) * clamp01(util);
}

int phys_cpu_pkg_of(const struct phys_cpu_params *p, const struct phys_cpu_state *s, int cpu)
{
    int k;
    if (p->cpu_pkg_n > 0 && cpu < p->cpu_pkg_n)
        k = p->cpu_pkg[cpu];
    else
        k = s->ncpus > 0 ? (int)((int64_t)cpu * s->npkgs / s->ncpus) : 0;
    return k < 0 ? 0 : k >= s->npkgs ? s->npkgs - 1 : k;
}

double phys_load_util(const struct phys_load *load, int cpu)
{
    if (cpu >= 0 && cpu < load->ncpu_util && cpu < PHYS_MAX_CPUS)
        return clamp01(load->cpu_util_of[cpu]);
    return clamp01(load->cpu_util);
}

uint64_t phys_cpu_busy_ns(const struct phys_cpu_state *s, int cpu, uint64_t sub)
{
    if (cpu < 0 || cpu >= s->ncpus)
        return 0;
    const struct phys_core_state *c = &s->cpu[cpu];
    uint64_t d = sub > c->busy_base_sub ? sub - c->busy_base_sub : 0;
    return c->busy_base_ns + d * c->busy_rate_ns;
}

int64_t phys_cpu_cpu_freq_khz(const struct phys_cpu_params *p, const struct phys_cpu_state *s, int cpu)
{
    if (cpu < 0 || cpu >= s->ncpus)
        return 0;
    const struct phys_pkg_state *ps = &s->pkg[phys_cpu_pkg_of(p, s, cpu)];
    double shown = s->cpu[cpu].freq_khz;
    if (ps->capped && p->cpuinfo_max_khz > 0) { /* c.6 */
        double f = ps->scale_eff * (double)p->cpuinfo_max_khz;
        if (f < shown)
            shown = f > (double)p->cpuinfo_min_khz ? f : (double)p->cpuinfo_min_khz;
    }
    return shown > 0 ? (int64_t)(shown + 0.5) : 0;
}

int64_t phys_cpu_cur_freq_khz(const struct phys_cpu_params *p, const struct phys_cpu_state *s, int pkg)
{
    if (pkg < 0 || pkg >= s->npkgs)
        return 0;
    int64_t sum = 0, n = 0;
    for (int i = 0; i < s->ncpus; i++)
        if (phys_cpu_pkg_of(p, s, i) == pkg) {
            sum += phys_cpu_cpu_freq_khz(p, s, i);
            n++;
        }
    return n ? (sum + n / 2) / n : 0;
}

/* ---- caps (c.4) ---- */

static bool pl_enforced(const struct phys_cpu_params *p, const struct phys_cpu_state *s, int pkg, int pl)
{
    const struct phys_pkg_params *pp = &p->pkg[pkg];
    return pp->rapl_present && s->pkg[pkg].rapl_enabled && pp->pl[pl].present &&
           pp->pl[pl].reject != PHYS_REJECT_DISABLED;
}

/* The power the hardware enforces for a limit: min(L, max_power) when a max is known. */
static double pl_target_w(const struct phys_cpu_params *p, const struct phys_cpu_state *s, int pkg, int pl)
{
    int64_t l = s->pkg[pkg].pl_limit_uw[pl], mx = p->pkg[pkg].pl[pl].max_power_uw;
    if (mx > 0 && l > mx)
        l = mx;
    return l > 0 ? (double)l / 1e6 : 0;
}

static double pl1_tau_s(const struct phys_cpu_params *p, const struct phys_cpu_state *s, int pkg)
{
    if (p->rapl_settle_tau_s > 0)
        return p->rapl_settle_tau_s;
    return (double)s->pkg[pkg].pl1_window_us / 1e6;
}

static bool hsmp_present(const struct phys_cpu_params *p, int pkg)
{
    return p->pkg[pkg].hsmp_cap_default_uw > 0 || p->pkg[pkg].hsmp_cap_max_uw > 0;
}

static double hsmp_target_w(const struct phys_cpu_params *p, const struct phys_cpu_state *s, int pkg)
{
    int64_t c = s->pkg[pkg].hsmp_cap_uw, mx = p->pkg[pkg].hsmp_cap_max_uw;
    if (mx > 0 && c > mx)
        c = mx;
    return c > 0 ? (double)c / 1e6 : 0;
}

/* ---- energy counters (c.9) ---- */

/* floor((acc·1000 + rem) / unit) without forming acc·1000, which could overflow. */
static uint64_t raw_count(uint64_t acc_uj, uint64_t rem_nj, uint64_t unit)
{
    uint64_t a = acc_uj / unit, b = acc_uj % unit;
    return a * 1000 + (b * 1000 + rem_nj) / unit;
}

static uint64_t counter_view(uint64_t acc_uj, uint64_t rem_nj, uint64_t unit, uint64_t seed)
{
    uint64_t raw = (seed + raw_count(acc_uj, rem_nj, unit)) & 0xffffffffULL;
    return raw * unit / 1000;
}

static void energy_init(struct phys_energy *e, const struct phys_counter *c)
{
    uint64_t unit = c->energy_unit_nj > 0 ? (uint64_t)c->energy_unit_nj : 0;
    if (!unit && c->max_energy_range_uj > 0) /* c.9 unit recovery: round(range·1000/(2^32-1)) */
        unit = ((uint64_t)c->max_energy_range_uj * 1000 + 2147483647ULL) / 4294967295ULL;
    if (!unit)
        unit = 1000;
    if (unit > 0xffffffffULL) /* keeps raw·unit below 2^64; real units are at most 1e9 (1 J) */
        unit = 0xffffffffULL;
    uint64_t start = c->start_uj > 0 ? (uint64_t)c->start_uj : 0;
    /* smallest raw count showing at least start: ceil(start·1000/unit) mod 2^32 */
    uint64_t a = start / unit, b = start % unit;
    uint64_t seed = (a * 1000 + (b * 1000 + unit - 1) / unit) & 0xffffffffULL;
    *e = (struct phys_energy){.unit_nj = unit, .seed_raw = seed, .start_uj = start};
}

/* n substeps at the held power: integer arithmetic, so adding n at once is exactly adding one
 * n times (the split invariance of the energy holds by construction). */
static void energy_add(struct phys_energy *e, uint64_t n)
{
    unsigned __int128 nj = (unsigned __int128)e->power_uw * n + e->rem_nj;
    e->acc_uj += (uint64_t)(nj / 1000);
    e->rem_nj = (uint64_t)(nj % 1000);
}

static const struct phys_energy *zone_energy(const struct phys_cpu_state *s, enum phys_zone zone, int pkg)
{
    if (zone == PHYS_ZONE_PSYS)
        return &s->psys;
    if ((int)zone < 0 || zone > PHYS_ZONE_CORE || pkg < 0 || pkg >= s->npkgs)
        return NULL;
    return &s->pkg[pkg].energy[zone];
}

uint64_t phys_energy_uj_at(const struct phys_cpu_state *s, enum phys_zone zone, int pkg)
{
    const struct phys_energy *e = zone_energy(s, zone, pkg);
    return e ? counter_view(e->acc_uj, e->rem_nj, e->unit_nj, e->seed_raw) : 0;
}

uint64_t phys_energy_total_uj(const struct phys_cpu_state *s, enum phys_zone zone, int pkg)
{
    const struct phys_energy *e = zone_energy(s, zone, pkg);
    return e ? e->start_uj + e->acc_uj : 0;
}

uint64_t phys_energy_total_uj_back(const struct phys_cpu_state *s, enum phys_zone zone, int pkg, uint64_t back)
{
    const struct phys_energy *e = zone_energy(s, zone, pkg);
    if (!e)
        return 0;
    return e->start_uj + phys_energy_back(e->acc_uj, e->rem_nj, e->power_uw, back);
}

void phys_energy_publish(const struct phys_cpu_state *s, enum phys_zone zone, int pkg, int64_t until_ns,
                         struct phys_energy_pub *out)
{
    const struct phys_energy *e = zone_energy(s, zone, pkg);
    struct phys_energy none = {.unit_nj = 1000};
    if (!e)
        e = &none;
    int64_t grid = s->now_ns - s->carry_ns;
    *out = (struct phys_energy_pub){
        .acc_uj = e->acc_uj,
        .rem_nj = e->rem_nj,
        .power_uw = e->power_uw,
        .unit_nj = e->unit_nj,
        .seed_raw = e->seed_raw,
        .grid_ns = grid,
        .until_ns = until_ns < grid ? grid : until_ns,
    };
}

uint64_t phys_energy_pub_uj_at(const struct phys_energy_pub *pub, int64_t t_ns)
{
    uint64_t unit = pub->unit_nj ? pub->unit_nj : 1000;
    if (t_ns > pub->until_ns)
        t_ns = pub->until_ns;
    uint64_t n = t_ns > pub->grid_ns ? (uint64_t)(t_ns - pub->grid_ns) / (uint64_t)PHYS_SUBSTEP_NS : 0;
    /* n·power stays far below 2^64 for any real horizon; saturate rather than wrap if not */
    uint64_t add = pub->power_uw && n > (UINT64_MAX - pub->rem_nj) / pub->power_uw
                       ? UINT64_MAX - pub->rem_nj
                       : n * pub->power_uw;
    uint64_t nj = pub->rem_nj + add;
    return counter_view(pub->acc_uj + nj / 1000, nj % 1000, unit, pub->seed_raw);
}

/* ---- RAPL write arithmetic (§3.4) ---- */

int phys_rapl_limit_normalise(uint64_t uw, int64_t power_unit_uw, int limit_bits, uint64_t *out)
{
    if (limit_bits < 1 || limit_bits > 63)
        return -EINVAL;
    if (power_unit_uw <= 0) {
        *out = uw;
        return 0;
    }
    uint64_t unit = (uint64_t)power_unit_uw;
    uint64_t raw = (uw / unit) & ((1ULL << limit_bits) - 1);
    *out = raw * unit;
    return 0;
}

int phys_rapl_default_limit_bits(enum phys_pl pl, bool psys)
{
    if (pl == PHYS_PL4)
        return 13;
    return psys ? 17 : 15;
}

int64_t phys_rapl_window_normalise(int64_t us, int64_t time_unit_us)
{
    if (time_unit_us <= 0)
        return us;
    uint64_t tu = (uint64_t)time_unit_us, y, f;
    if (us < time_unit_us) {
        y = 0; /* raw 0 */
        f = 0;
    } else {
        uint64_t v = (uint64_t)us / tu;
        y = 63 - (uint64_t)__builtin_clzll(v);
        if (y > 31) {
            y = 31; /* raw 0x7F */
            f = 3;
        } else {
            f = (4 * (v - (1ULL << y))) >> y;
        }
    }
    /* 2^Y·(4+F)·unit/4; for Y = 31 and units of seconds this would pass 2^63, so saturate */
    uint64_t r = (1ULL << y) * (4 + f);
    if (r > (uint64_t)INT64_MAX / tu)
        return INT64_MAX;
    return (int64_t)(r * tu / 4);
}

uint64_t phys_rapl_max_energy_range_uj(uint64_t energy_unit_nj)
{
    return 4294967295ULL * energy_unit_nj / 1000;
}

/* ---- the node ---- */

/* CPUs of one package with the same utilisation and running frequency: the power model is
 * evaluated once per run, weighted by its share of the package's CPUs. */
struct run {
    double util, f; /* f: scale = running kHz / cpuinfo_max */
    int n;
};

/* The runs of every package in one pass over the CPUs: runs[k][..], counts in nr[k]. A new run
 * starts when a CPU differs from the package's last one (CPUs with the same settings are usually
 * neighbours, so a package has a few runs; it is exact whatever their number). */
static void package_runs(const struct phys_cpu_params *p, const struct phys_cpu_state *s, const struct phys_load *load,
                         struct run *runs, int *nr)
{
    const double inv_fmax = p->cpuinfo_max_khz > 0 ? 1.0 / (double)p->cpuinfo_max_khz : 0;
    int base[PHYS_MAX_PKGS], used = 0;
    for (int k = 0; k < s->npkgs; k++) {
        base[k] = used;
        used += s->pkg[k].ncpus;
        nr[k] = 0;
    }
    for (int i = 0; i < s->ncpus; i++) {
        int k = phys_cpu_pkg_of(p, s, i);
        struct run *r = runs + base[k];
        double u = phys_load_util(load, i), f = inv_fmax > 0 ? s->cpu[i].freq_khz * inv_fmax : 1;
        if (nr[k] > 0 && r[nr[k] - 1].util == u && r[nr[k] - 1].f == f)
            r[nr[k] - 1].n++;
        else
            r[nr[k]++] = (struct run){u, f, 1};
    }
}

/* Package power: Σ over runs of (CPUs in the run / CPUs in the package) · model power at the
 * run's utilisation and min(f, ceiling). With one run this is the model's power itself. */
static double runs_power(const struct phys_cpu_params *p, const struct phys_load *load, const struct run *runs,
                         int nr, double ceiling)
{
    int total = 0;
    for (int r = 0; r < nr; r++)
        total += runs[r].n;
    if (nr == 1)
        return model_w(p, runs[0].util, load, runs[0].f < ceiling ? runs[0].f : ceiling);
    double w = 0;
    for (int r = 0; r < nr; r++)
        w += (double)runs[r].n / total * model_w(p, runs[r].util, load, runs[r].f < ceiling ? runs[r].f : ceiling);
    return w;
}

/* The frequency ceiling (scale) under which the package draws cap: the model's own inverse with
 * one run, else 30 bisection steps on [ms, 1] keeping the last ceiling within cap. */
static double runs_solve(const struct phys_cpu_params *p, const struct phys_load *load, const struct run *runs,
                         int nr, double cap, double ms)
{
    if (nr == 1)
        return p->model == PHYS_MODEL_CURVE ? curve_solve(p, load, runs[0].util, cap, ms)
                                            : analytic_solve(p, runs[0].util, cap, ms);
    if (runs_power(p, load, runs, nr, 1) <= cap)
        return 1;
    double lo = ms, hi = 1, best = ms;
    for (int i = 0; i < 30; i++) {
        double mid = (lo + hi) / 2;
        if (runs_power(p, load, runs, nr, mid) <= cap) {
            best = mid;
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return best;
}

unsigned phys_cpu_begin_interval(const struct phys_cpu_params *p, struct phys_cpu_state *s,
                                 const struct phys_load *load)
{
    unsigned changed = 0;
    const double ms = min_scale(p);
    const uint64_t dram_uw = watts_to_uw(p->dram_w_per_socket);
    uint64_t psys_uw = watts_to_uw(p->platform_other_w);
    struct run all_runs[PHYS_MAX_CPUS + PHYS_MAX_PKGS];
    int nruns[PHYS_MAX_PKGS];
    package_runs(p, s, load, all_runs, nruns);
    for (int k = 0, at = 0; k < s->npkgs; at += s->pkg[k].ncpus, k++) {
        struct phys_pkg_state *ps = &s->pkg[k];
        struct run *runs = all_runs + at, idle_run = {0, ms, 1};
        int nr = nruns[k];
        if (nr == 0) /* a package without CPUs draws what an idle one does */
            runs = &idle_run, nr = 1;
        /* the package's spread factor scales its model power, so a cap is solved for cap / sc */
        double sc = p->pkg[k].power_scale > 0 ? p->pkg[k].power_scale : 1;
        double nat = sc * runs_power(p, load, runs, nr, 1);
        double f_max_run = 0;
        for (int r = 0; r < nr; r++)
            f_max_run = runs[r].f > f_max_run ? runs[r].f : f_max_run;

        double cap = HUGE_VAL, req = HUGE_VAL;
        if (pl_enforced(p, s, k, PHYS_PL1) && ps->pl1_settled_w < cap)
            cap = ps->pl1_settled_w;
        for (int pl = PHYS_PL2; pl <= PHYS_PL4; pl++)
            if (pl_enforced(p, s, k, pl) && pl_target_w(p, s, k, pl) < cap)
                cap = pl_target_w(p, s, k, pl);
        if (hsmp_present(p, k) && ps->hsmp_settled_w < cap)
            cap = ps->hsmp_settled_w;
        if (p->pkg[k].rapl_present && p->pkg[k].pl[PHYS_PL1].present)
            req = (double)ps->pl_limit_uw[PHYS_PL1] / 1e6;
        if (hsmp_present(p, k) && (double)ps->hsmp_cap_uw / 1e6 < req)
            req = (double)ps->hsmp_cap_uw / 1e6;

        if (ps->limits_ignored)
            cap = HUGE_VAL;
        if (ps->fault_cap_w > 0 && ps->fault_cap_w < cap)
            cap = ps->fault_cap_w;
        double power = nat, f_eff = f_max_run;
        bool capped = false;
        if (nat > cap) {
            /* c.4: frequency drops to meet the cap, down to cpuinfo_min; below what that draws
             * (or floorW) the package keeps drawing more than the limit */
            double lowest = sc * runs_power(p, load, runs, nr, ms);
            double floor_w = p->rapl_floor_w > lowest ? p->rapl_floor_w : lowest;
            double want = cap > floor_w ? cap : floor_w;
            power = nat < want ? nat : want;
            double solved = runs_solve(p, load, runs, nr, cap / sc, ms);
            f_eff = solved < f_max_run ? solved : f_max_run;
            f_eff = f_eff > ms ? f_eff : ms;
            capped = true;
        }
        if (capped != (ps->capped != 0) || (capped && f_eff != ps->scale_eff))
            changed |= PHYS_BEGAN_FREQ_CEILING;
        ps->natural_w = nat;
        ps->power_w = power;
        ps->scale_eff = f_eff;
        ps->capped = capped;
        ps->cap_w = cap;
        ps->uncapped_khz = f_max_run;
        ps->requested_cap_w = req;

        if (s->powered_off)
            ps->power_w = power = 0;
        uint64_t pkg_uw = watts_to_uw(power), pkg_dram_uw = s->powered_off ? 0 : dram_uw;
        ps->energy[PHYS_ZONE_PACKAGE].power_uw = pkg_uw;
        ps->energy[PHYS_ZONE_DRAM].power_uw = pkg_dram_uw;
        ps->energy[PHYS_ZONE_CORE].power_uw = watts_to_uw(power * clamp01(p->core_fraction));
        psys_uw += pkg_uw + pkg_dram_uw;
    }
    s->psys.power_uw = s->powered_off ? 0 : psys_uw;

    /* CPU time: a CPU whose utilisation changed starts a new line at this grid boundary. */
    double active = 0;
    for (int i = 0; i < s->ncpus; i++) {
        struct phys_core_state *c = &s->cpu[i];
        double u = phys_load_util(load, i);
        active += u;
        uint32_t rate = (uint32_t)(u * 1e6 + 0.5);
        if (rate != c->busy_rate_ns) {
            c->busy_base_ns = phys_cpu_busy_ns(s, i, s->substeps);
            c->busy_base_sub = s->substeps;
            c->busy_rate_ns = rate;
            changed |= PHYS_BEGAN_BUSY_LINES;
        }
    }
    s->nr_active = (int32_t)(active + 0.5);
    return changed;
}

void phys_cpu_init(const struct phys_cpu_params *p, struct phys_cpu_state *s)
{
    memset(s, 0, offsetof(struct phys_cpu_state, cpu)); /* the CPUs past ncpus are not touched */
    s->npkgs = npkgs_of(p);
    s->ncpus = p->cpus < s->npkgs ? s->npkgs : p->cpus > PHYS_MAX_CPUS ? PHYS_MAX_CPUS : p->cpus;
    memset(s->cpu, 0, sizeof s->cpu[0] * (size_t)s->ncpus);
    s->boost = p->boost != 0;
    s->max_perf_pct = 100;
    s->min_perf_pct = 0;
    for (int i = 0; i < s->ncpus; i++) {
        struct phys_core_state *c = &s->cpu[i];
        c->governor = p->governor;
        c->epp = p->epp;
        c->scaling_min_khz = (int32_t)p->cpuinfo_min_khz;
        c->scaling_max_khz = (int32_t)phys_cpu_cpuinfo_max_khz(p, s);
        struct freq_limits l = freq_limits(p, s, i);
        c->freq_khz = p->governor == PHYS_GOV_PERFORMANCE ? l.ceiling : l.eff_min;
        s->pkg[phys_cpu_pkg_of(p, s, i)].ncpus++;
    }
    for (int k = 0; k < s->npkgs; k++) {
        const struct phys_pkg_params *pp = &p->pkg[k];
        struct phys_pkg_state *ps = &s->pkg[k];
        for (int pl = 0; pl < PHYS_NPL; pl++)
            ps->pl_limit_uw[pl] = pp->pl[pl].limit_uw;
        ps->pl1_window_us = pp->pl[PHYS_PL1].time_window_us;
        ps->rapl_enabled = pp->rapl_enabled != 0;
        ps->hsmp_cap_uw = pp->hsmp_cap_default_uw;
        ps->pl1_settled_w = pl_target_w(p, s, k, PHYS_PL1);
        ps->hsmp_settled_w = hsmp_target_w(p, s, k);
        for (int z = 0; z < 3; z++)
            energy_init(&ps->energy[z], &pp->counter[z]);
    }
    energy_init(&s->psys, &p->psys);
    const struct phys_load idle = {0, 0, PHYS_CLASS_MIXED, 0, {0}};
    phys_cpu_begin_interval(p, s, &idle);
    for (int k = 0; k < s->npkgs; k++) {
        s->pkg[k].temp_c = s->pkg[k].temp_from_c = s->pkg[k].temp_to_c =
            p->ambient_init_c + thermal_c_per_w(p) * s->pkg[k].power_w;
        s->pkg[k].freq_khz = 0;
    }
    for (int i = 0; i < s->ncpus; i++)
        s->pkg[phys_cpu_pkg_of(p, s, i)].freq_khz += s->cpu[i].freq_khz;
    for (int k = 0; k < s->npkgs; k++)
        s->pkg[k].freq_khz = s->pkg[k].ncpus ? s->pkg[k].freq_khz / s->pkg[k].ncpus : 0;
}

/* kernel/sched/loadavg.c calc_load: 11-bit fixed point, EXP_1/5/15 = 1884, 2014, 2037. */
static uint64_t calc_load(uint64_t load, uint64_t exp, uint64_t active)
{
    uint64_t next = load * exp + active * (2048 - exp);
    if (active >= load)
        next += 2048 - 1;
    return next / 2048;
}

/* n substeps of x += (target - x)·a on m independent lanes, four at a time (their chains run
 * side by side), stopping a group early at its fixed point: where a further substep changes no
 * lane, every later one would not either, so the result is the same bits. A lane within snap[l]
 * of its target steps onto it (the GPU limit's settle does the same). */
static void settle_lanes(double *x, const double *target, const double *a, const double *snap, int m, int64_t n)
{
    for (int g = 0; g < m; g += 4) {
        double v[4], t[4], f[4], d[4];
        int w = m - g < 4 ? m - g : 4;
        for (int j = 0; j < 4; j++) {
            v[j] = j < w ? x[g + j] : 0;
            t[j] = j < w ? target[g + j] : 0;
            f[j] = j < w ? a[g + j] : 0;
            d[j] = j < w ? snap[g + j] : 0;
        }
        for (int64_t i = 0; i < n; i++) {
            double e0 = t[0] - v[0], e1 = t[1] - v[1], e2 = t[2] - v[2], e3 = t[3] - v[3];
            double n0 = fabs(e0) <= d[0] ? t[0] : v[0] + e0 * f[0];
            double n1 = fabs(e1) <= d[1] ? t[1] : v[1] + e1 * f[1];
            double n2 = fabs(e2) <= d[2] ? t[2] : v[2] + e2 * f[2];
            double n3 = fabs(e3) <= d[3] ? t[3] : v[3] + e3 * f[3];
            if (n0 == v[0] && n1 == v[1] && n2 == v[2] && n3 == v[3])
                break;
            v[0] = n0;
            v[1] = n1;
            v[2] = n2;
            v[3] = n3;
        }
        for (int j = 0; j < w; j++)
            x[g + j] = v[j];
    }
}

/* A frequency, PL1 or HSMP lane within a millionth of its target (relative, or absolute below
 * 1) steps onto it: the power it gives differs from the target's by about as much, and the lane holds
 * from there exactly (settling, physics_cpu.h). */
static double snap_of(double target)
{
    double m = fabs(target);
    return 1e-6 * (m > 1 ? m : 1);
}

/* The package's temperature at substep end (phys_pkg_state): the substep law x += (to - x)·a in
 * closed form, x = to + (from - to)·(1 - a)^k, so a tick costs the same however far it is from
 * its target. It depends on the substep alone, not on how the time was cut into calls; a new
 * target (at a call's start, as the law takes it) starts a new approach from where it is.
 * ln_keep = ln(1 - a), the caller's (the same for every package). */
static void temp_advance(struct phys_pkg_state *ps, double to, double a, double ln_keep, uint64_t now, uint64_t end)
{
    const double ON_C = 1e-9; /* a gap this small is on the target: a millionth of what the files show */
    if (to != ps->temp_to_c) {
        double gap = fabs(ps->temp_c - to), k = 0;
        if (a < 1 && gap > ON_C)
            k = phys_log(ON_C / gap) / ln_keep; /* both logs negative */
        ps->temp_from_c = ps->temp_c;
        ps->temp_to_c = to;
        ps->temp_from_sub = now;
        ps->temp_on_sub = now + (k < 1e15 ? (uint64_t)k + 1 : (uint64_t)1e15);
    }
    if (end >= ps->temp_on_sub || a >= 1) {
        ps->temp_c = to;
        return;
    }
    ps->temp_c = to + (ps->temp_from_c - to) * phys_exp((double)(end - ps->temp_from_sub) * ln_keep);
}

bool phys_cpu_step(const struct phys_cpu_params *p, struct phys_cpu_state *s, const struct phys_load *load,
                   double ambient_c, int64_t dt_ns)
{
    if (dt_ns <= 0)
        return false;
    /* boundaries crossed, computed so that carry + dt cannot overflow */
    int64_t n = dt_ns / PHYS_SUBSTEP_NS, part = s->carry_ns + dt_ns % PHYS_SUBSTEP_NS;
    n += part / PHYS_SUBSTEP_NS;
    s->carry_ns = part % PHYS_SUBSTEP_NS;
    s->now_ns += dt_ns;
    if (n == 0)
        return false;

    const double hs_a = settle_factor(p->hsmp_settle_tau_ms / 1000.0);
    const double t_a = settle_factor(thermal_tau_s(p)), t_ln_keep = t_a < 1 ? phys_log(1 - t_a) : 0;
    const double f_a = settle_factor(p->freq_ramp_ms / 1000.0);

    /* The first-order laws as lanes: one per run of neighbouring CPUs with the same frequency and
     * target (they share the work), then two per package (PL1, HSMP). Targets are taken at the
     * start of the call, as before the interval's substeps. */
    double x[2 * PHYS_MAX_PKGS + PHYS_MAX_CPUS + 4], tg[2 * PHYS_MAX_PKGS + PHYS_MAX_CPUS + 4],
        fa[2 * PHYS_MAX_PKGS + PHYS_MAX_CPUS + 4], sn[2 * PHYS_MAX_PKGS + PHYS_MAX_CPUS + 4];
    int16_t lane_of[PHYS_MAX_CPUS];
    int nl = 0;
    const struct phys_core_state *prev = NULL;
    double prev_u = -1;
    for (int i = 0; i < s->ncpus; i++) {
        const struct phys_core_state *c = &s->cpu[i];
        double u = phys_load_util(load, i);
        /* a neighbour with the same policy settings, utilisation and frequency: the same lane */
        if (prev && u == prev_u && c->freq_khz == prev->freq_khz && c->governor == prev->governor &&
            c->scaling_min_khz == prev->scaling_min_khz && c->scaling_max_khz == prev->scaling_max_khz) {
            lane_of[i] = (int16_t)(nl - 1);
            continue;
        }
        double ft = freq_target(p, s, i, u);
        prev = c;
        prev_u = u;
        if (nl > 0 && x[nl - 1] == c->freq_khz && tg[nl - 1] == ft) {
            lane_of[i] = (int16_t)(nl - 1);
            continue;
        }
        x[nl] = c->freq_khz, tg[nl] = ft, fa[nl] = f_a, sn[nl] = snap_of(ft);
        lane_of[i] = (int16_t)nl++;
    }
    /* pad to a group of four so PL1 and HSMP, which have usually settled, form groups of their own */
    while (nl % 4)
        x[nl] = tg[nl] = sn[nl] = 0, fa[nl++] = 0;
    int first_cap_lane = nl;
    for (int k = 0; k < s->npkgs; k++) {
        struct phys_pkg_state *ps = &s->pkg[k];
        x[nl] = ps->pl1_settled_w, tg[nl] = pl_target_w(p, s, k, PHYS_PL1), fa[nl] = settle_factor(pl1_tau_s(p, s, k));
        sn[nl] = snap_of(tg[nl]), nl++;
        x[nl] = ps->hsmp_settled_w, tg[nl] = hsmp_target_w(p, s, k), fa[nl] = hs_a, sn[nl] = snap_of(tg[nl]), nl++;
    }
    settle_lanes(x, tg, fa, sn, nl, n);
    /* still settling until every frequency and cap lane is on its target: from there every later
     * step leaves them, and so the powers, exactly as they are */
    s->settling = 0;
    for (int l = 0; l < nl && !s->settling; l++)
        s->settling = x[l] != tg[l];

    double sum_f[PHYS_MAX_PKGS] = {0};
    bool moved = false;
    for (int i = 0; i < s->ncpus; i++) {
        moved = moved || s->cpu[i].freq_khz != x[lane_of[i]];
        s->cpu[i].freq_khz = x[lane_of[i]];
        sum_f[phys_cpu_pkg_of(p, s, i)] += s->cpu[i].freq_khz;
    }
    for (int k = 0; k < s->npkgs; k++) {
        struct phys_pkg_state *ps = &s->pkg[k];
        energy_add(&ps->energy[PHYS_ZONE_PACKAGE], (uint64_t)n);
        energy_add(&ps->energy[PHYS_ZONE_DRAM], (uint64_t)n);
        energy_add(&ps->energy[PHYS_ZONE_CORE], (uint64_t)n);
        temp_advance(ps, ambient_c + thermal_c_per_w(p) * ps->power_w, t_a, t_ln_keep, s->substeps,
                     s->substeps + (uint64_t)n);
        ps->pl1_settled_w = x[first_cap_lane + 2 * k];
        ps->hsmp_settled_w = x[first_cap_lane + 2 * k + 1];
        ps->freq_khz = ps->ncpus ? sum_f[k] / ps->ncpus : 0;
    }
    energy_add(&s->psys, (uint64_t)n);

    /* Load averages every PHYS_LOAD_PERIOD substeps, with this interval's running tasks. */
    uint64_t samples = (s->substeps + (uint64_t)n) / PHYS_LOAD_PERIOD - s->substeps / PHYS_LOAD_PERIOD;
    static const uint64_t exps[3] = {1884, 2014, 2037};
    uint64_t active = (uint64_t)(s->nr_active > 0 ? s->nr_active : 0) * 2048;
    for (uint64_t j = 0; j < samples; j++) {
        uint64_t before[3] = {s->avenrun[0], s->avenrun[1], s->avenrun[2]};
        for (int m = 0; m < 3; m++)
            s->avenrun[m] = calc_load(s->avenrun[m], exps[m], active);
        if (!memcmp(before, s->avenrun, sizeof before))
            break; /* the fixed point: every later sample gives the same */
    }
    s->substeps += (uint64_t)n;
    return moved;
}
