/* tracegen: the trace generator; see tracegen.h and docs/runs.md "trace generate".
 * Random numbers: xoshiro256** seeded through splitmix64; floats are printed with fixed
 * precision so that one seed gives one byte stream. */
#include "tracegen.h"

#include <math.h>
#include <string.h>

struct rng {
    uint64_t s[4];
};

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t next(struct rng *r)
{
    uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

static double uni(struct rng *r) /* [0, 1) */
{
    return (double)(next(r) >> 11) * 0x1.0p-53;
}

static int range(struct rng *r, int lo, int hi) /* [lo, hi] */
{
    return lo + (int)(uni(r) * (hi - lo + 1));
}

static double expo(struct rng *r, double mean)
{
    return -mean * log(1 - uni(r));
}

static double normal(struct rng *r)
{
    double u = 1 - uni(r), v = uni(r);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static double lognormal(struct rng *r, double median, double sigma, double lo, double hi)
{
    double v = median * exp(sigma * normal(r));
    return v < lo ? lo : v > hi ? hi : v;
}

static int poisson(struct rng *r, double mean)
{
    if (mean > 50) { /* normal approximation for large means */
        double v = mean + sqrt(mean) * normal(r);
        return v < 0 ? 0 : (int)(v + 0.5);
    }
    double l = exp(-mean), p = 1;
    int k = 0;
    do {
        k++;
        p *= uni(r);
    } while (p > l);
    return k - 1;
}

void tracegen_defaults(struct tracegen_opts *o)
{
    *o = (struct tracegen_opts){.jobs = 50, .ns = "default", .mean_inter_arrival_sec = 5, .seed = 1,
                                .perf_ratio = 0.30, .compute_bound_perf_boost = 3.5, .gpu_ratio = 0.80,
                                .gpu_request = 1, .cpu_work_rate_per_core = 1, .gpu_work_rate_per_gpu = 1,
                                .emit_workload_records = true, .burst_day_probability = 0.25,
                                .burst_mean_jobs = 8, .burst_multiplier = 2, .dip_day_probability = 0.30,
                                .dip_multiplier = 0.08, .time_scale = 1, .sim_hours = 48, .work_scale = 1,
                                .base_speed_per_core = 2, .diurnal_burst_min = 20, .diurnal_burst_max = 80,
                                .diurnal_peak_rate = 80, .min_gpu_request = 0, .amd_gpu_ratio = 0};
}

/* ---- one pod record ---------------------------------------------------------------------- */

struct prof {
    double cpu, gpu, mem, io, feed;
};

struct pod {
    const char *role;
    int replicas;
    int cpu;            /* cores */
    int mem_gi;
    int gpus;
    double role_fraction;
};

struct wl {
    char id[32];
    double t, duration;
    const char *type, *cpu_class, *gpu_class;
    bool gang, perf, affinity;
    const char *gpu_key;
    struct prof p;
    struct pod pods[4];
    int npods;
    double sens;
};

static void print_requests(FILE *out, const struct wl *w, const struct pod *p)
{
    fprintf(out, "{\"cpu\":\"%d\",\"memory\":\"%dGi\"", p->cpu, p->mem_gi);
    if (p->gpus)
        fprintf(out, ",\"%s\":\"%d\"", w->gpu_key, p->gpus);
    fputc('}', out);
}

static const char affinity_eco[] =
    "{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
    "\"matchExpressions\":[{\"key\":\"joulie.io/power-profile\",\"operator\":\"NotIn\",\"values\":[\"eco\"]}]}]}}}";

static long emit(const struct tracegen_opts *o, const struct wl *w, FILE *out)
{
    const char *intent = w->perf ? "performance" : "standard";
    if (o->emit_workload_records) {
        fprintf(out, "{\"type\":\"workload\",\"schemaVersion\":\"v2\",\"workloadId\":\"%s\","
                "\"submitTimeOffsetSec\":%.3f,\"namespace\":\"%s\",\"workloadType\":\"%s\",\"gang\":%s,"
                "\"durationSec\":%.0f,\"intentClass\":\"%s\",\"workloadClass\":{\"cpu\":\"%s\",\"gpu\":\"%s\"},"
                "\"sharedIntensityProfile\":{\"cpuUtilization\":%.3f,\"gpuUtilization\":%.3f,\"memoryIntensity\":%.3f,"
                "\"ioIntensity\":%.3f,\"cpuFeedIntensityGpu\":%.3f},\"pods\":[",
                w->id, w->t, o->ns, w->type, w->gang ? "true" : "false", w->duration, intent, w->cpu_class,
                w->gpu_class, w->p.cpu, w->p.gpu, w->p.mem, w->p.io, w->p.feed);
        for (int k = 0; k < w->npods; k++) {
            fprintf(out, "%s{\"role\":\"%s\",\"replicas\":%d,\"requests\":", k ? "," : "", w->pods[k].role,
                    w->pods[k].replicas);
            print_requests(out, w, &w->pods[k]);
            fprintf(out, ",\"gang\":%s}", w->gang ? "true" : "false");
        }
        fprintf(out, "],\"tags\":[\"%s\"]}\n", w->type);
    }
    long n = 0;
    for (int k = 0; k < w->npods; k++) {
        const struct pod *p = &w->pods[k];
        for (int i = 1; i <= p->replicas; i++, n++) {
            double util_c = p->gpus || !strcmp(w->type, "cpu_preprocess") || !strcmp(w->type, "cpu_analytics") ||
                                    o->diurnal ? w->p.cpu : w->p.cpu;
            double cu = w->duration * p->cpu * (util_c > 0.10 ? util_c : 0.10) * p->role_fraction *
                        (o->diurnal ? o->base_speed_per_core * o->work_scale : o->cpu_work_rate_per_core);
            double gu = p->gpus ? w->duration * p->gpus * (w->p.gpu > 0.10 ? w->p.gpu : 0.10) * p->role_fraction *
                                      (o->diurnal ? o->base_speed_per_core * o->work_scale : o->gpu_work_rate_per_gpu)
                                : 0;
            fprintf(out, "{\"type\":\"job\",\"schemaVersion\":\"v2\",\"jobId\":\"%s-%s-%02d\",\"workloadId\":\"%s\","
                    "\"workloadType\":\"%s\",\"podRole\":\"%s\",\"gang\":%s,\"submitTimeOffsetSec\":%.3f,"
                    "\"namespace\":\"%s\",\"intentClass\":\"%s\",\"podTemplate\":{",
                    w->id, p->role, i, w->id, w->type, p->role, w->gang ? "true" : "false", w->t, o->ns, intent);
            if (w->affinity)
                fprintf(out, "\"affinity\":%s,", affinity_eco);
            fputs("\"requests\":", out);
            print_requests(out, w, p);
            fprintf(out, "},\"work\":{\"cpuUnits\":%.3f,\"gpuUnits\":%.3f},\"sensitivity\":{\"cpu\":%.2f,\"gpu\":%.2f},"
                    "\"workloadClass\":{\"cpu\":\"%s\",\"gpu\":\"%s\"},\"workloadProfile\":{\"cpuUtilization\":%.3f,"
                    "\"gpuUtilization\":%.3f,\"memoryIntensity\":%.3f,\"ioIntensity\":%.3f,\"cpuFeedIntensityGpu\":%.3f},"
                    "\"tags\":[\"%s\"]}\n",
                    cu, gu, w->sens, w->sens, w->cpu_class, w->gpu_class, w->p.cpu, p->gpus ? w->p.gpu : 0, w->p.mem,
                    w->p.io, p->gpus ? w->p.feed : 0, w->type);
        }
    }
    return ferror(out) ? -1 : n;
}

static int gpu_count(struct rng *r, const struct tracegen_opts *o)
{
    double u = uni(r);
    int g = u < 0.80 ? 1 : u < 0.90 ? 2 : u < 0.97 ? 4 : 8;
    if (g < o->gpu_request)
        g = o->gpu_request;
    if (g < o->min_gpu_request)
        g = o->min_gpu_request;
    return g > 16 ? 16 : g;
}

static void intent(struct rng *r, const struct tracegen_opts *o, struct wl *w)
{
    double p = o->perf_ratio;
    if (!strcmp(w->cpu_class, "cpu.compute_bound") || !strcmp(w->gpu_class, "gpu.compute_bound"))
        p *= o->compute_bound_perf_boost;
    w->perf = !o->no_affinity_only && uni(r) < (p > 1 ? 1 : p);
    w->affinity = w->perf;
}

static const char *gpu_key(struct rng *r, const struct tracegen_opts *o)
{
    return uni(r) < o->amd_gpu_ratio ? "amd.com/gpu" : "nvidia.com/gpu";
}

/* ---- default mode ------------------------------------------------------------------------ */

/* Hourly arrival multipliers: 0.10 at 02-03 h, 1.00 at 09-10 h and 14-15 h (the original's
 * anchors); the hours between are ours. */
static const double hourly[24] = {0.30, 0.18, 0.10, 0.10, 0.14, 0.22, 0.40, 0.65, 0.85, 1.00, 0.95, 0.90,
                                  0.75, 0.90, 1.00, 0.95, 0.85, 0.70, 0.60, 0.55, 0.50, 0.45, 0.40, 0.35};

static void default_workload(struct rng *r, const struct tracegen_opts *o, struct wl *w)
{
    w->npods = 0;
    w->gang = false;
    w->sens = 0;
    w->gpu_key = gpu_key(r, o);
    if (uni(r) < o->gpu_ratio) {
        double u = uni(r);
        int g = gpu_count(r, o);
        w->cpu_class = "cpu.mixed";
        if (u < 0.45) {
            w->type = "debug_eval";
            w->gpu_class = "gpu.memory_bound";
            w->duration = lognormal(r, 206, 0.9, 30, 1000);
            w->p = (struct prof){0.20 + 0.20 * uni(r), 0.30 + 0.20 * uni(r), 0.55 + 0.2 * uni(r), 0.10, 0.35};
            w->pods[w->npods++] = (struct pod){"worker", 1, 2 * g, 8 * g, g, 1};
        } else if (u < 0.70) {
            w->type = "single_gpu_training";
            w->gpu_class = "gpu.compute_bound";
            w->duration = lognormal(r, 7200, 1.0, 900, 7 * 86400.0);
            w->p = (struct prof){0.20 + 0.25 * uni(r), 0.45 + 0.25 * uni(r), 0.45, 0.08, 0.45};
            w->pods[w->npods++] = (struct pod){"worker", 1, 4 * g, 16 * g, g, 1};
        } else if (u < 0.84) {
            w->type = "distributed_training";
            w->gpu_class = "gpu.compute_bound";
            w->gang = true;
            w->duration = lognormal(r, 14400, 1.0, 1200, 14 * 86400.0);
            w->p = (struct prof){0.15 + 0.20 * uni(r), 0.40 + 0.20 * uni(r), 0.55, 0.08, 0.55};
            w->pods[w->npods++] = (struct pod){"launcher", 1, 2, 4, 0, 0.2};
            w->pods[w->npods++] = (struct pod){"worker", g, 4, 12, 1, 1};
        } else if (u < 0.91) {
            w->type = "parameter_server_training";
            w->gpu_class = "gpu.memory_bound";
            w->gang = true;
            w->duration = lognormal(r, 10800, 1.0, 900, 7 * 86400.0);
            w->p = (struct prof){0.25 + 0.20 * uni(r), 0.40 + 0.20 * uni(r), 0.75, 0.10, 0.50};
            w->pods[w->npods++] = (struct pod){"ps", range(r, 1, 2), 4, 16, 0, 0.5};
            w->pods[w->npods++] = (struct pod){"worker", g, 4, 12, 1, 1};
        } else {
            w->type = "hpo_experiment";
            w->gpu_class = "gpu.mixed";
            w->duration = lognormal(r, 7200, 0.9, 1200, 3 * 86400.0);
            w->p = (struct prof){0.25 + 0.20 * uni(r), 0.45 + 0.25 * uni(r), 0.45, 0.10, 0.40};
            w->pods[w->npods++] = (struct pod){"controller", 1, 1, 2, 0, 0.2};
            w->pods[w->npods++] = (struct pod){"trial", range(r, 2, g + 2 > 8 ? 8 : g + 2), 4, 12, 1, 1};
        }
    } else {
        static const int cores[] = {2, 4, 8, 16, 32};
        w->gpu_class = "gpu.mixed";
        if (uni(r) < 0.75) {
            w->type = "cpu_preprocess";
            w->cpu_class = "cpu.memory_bound";
            w->duration = lognormal(r, 900, 0.9, 120, 8 * 3600.0);
            w->p = (struct prof){0.50 + 0.25 * uni(r), 0, 0.70 + 0.15 * uni(r), 0.15 + 0.25 * uni(r), 0};
            int c = cores[range(r, 0, 3)];
            w->pods[w->npods++] = (struct pod){"worker", 1, c, 2 * c, 0, 1};
        } else {
            w->type = "cpu_analytics";
            w->cpu_class = "cpu.compute_bound";
            w->duration = lognormal(r, 1800, 0.9, 300, 24 * 3600.0);
            w->p = (struct prof){0.75 + 0.20 * uni(r), 0, 0.35 + 0.2 * uni(r), 0.10, 0};
            int c = cores[range(r, 1, 4)];
            w->pods[w->npods++] = (struct pod){"worker", 1, c, 2 * c, 0, 1};
        }
    }
    intent(r, o, w);
    w->duration /= o->time_scale > 0 ? o->time_scale : 1;
}

static long gen_default(const struct tracegen_opts *o, struct rng *r, FILE *out)
{
    double t = 0;
    long n = 0;
    int day = -1, burst_hour = -1, dip_hour = -1;
    for (int i = 0; i < o->jobs; i++) {
        int hour = (int)fmod(t / 3600, 24), d = (int)(t / 86400);
        if (d != day) { /* each day may have a burst hour and a dip hour */
            static const int cand[] = {10, 11, 14, 15, 16};
            day = d;
            burst_hour = uni(r) < o->burst_day_probability ? cand[range(r, 0, 4)] : -1;
            dip_hour = uni(r) < o->dip_day_probability ? range(r, 0, 23) : -1;
        }
        double mult = hourly[hour];
        if (hour == burst_hour)
            mult *= o->burst_multiplier + o->burst_mean_jobs / 16;
        if (hour == dip_hour)
            mult *= o->dip_multiplier;
        t += expo(r, o->mean_inter_arrival_sec / (mult > 0.01 ? mult : 0.01));
        struct wl w = {0};
        snprintf(w.id, sizeof w.id, "workload-%06d", i + 1);
        w.t = t / (o->time_scale > 0 ? o->time_scale : 1);
        default_workload(r, o, &w);
        long k = emit(o, &w, out);
        if (k < 0)
            return -1;
        n += k;
    }
    return n;
}

/* ---- diurnal mode ------------------------------------------------------------------------ */

static void diurnal_workload(struct rng *r, const struct tracegen_opts *o, struct wl *w)
{
    w->npods = 1;
    w->gang = false;
    w->gpu_key = gpu_key(r, o);
    w->cpu_class = "cpu.mixed";
    w->gpu_class = "gpu.mixed";
    w->perf = false;
    double u = uni(r), gshare = o->gpu_ratio * 0.3125; /* 25 % GPU categories at the default ratio (ours) */
    if (u < gshare * 0.6) {
        static const int gs[] = {1, 2, 4, 8};
        int g = gs[range(r, 0, 3)];
        w->type = "gpu_training";
        w->gpu_class = "gpu.compute_bound";
        w->perf = true;
        w->duration = lognormal(r, 3600, 0.8, 300, 12 * 3600.0);
        w->p = (struct prof){0.30 + 0.2 * uni(r), 0.70 + 0.25 * uni(r), 0.45, 0.08, 0.45};
        w->pods[0] = (struct pod){"worker", 1, 4 * g, 16 * g, g, 1};
    } else if (u < gshare) {
        int g = range(r, 1, 2);
        w->type = "gpu_inference";
        w->gpu_class = "gpu.memory_bound";
        w->duration = lognormal(r, 900, 0.8, 60, 4 * 3600.0);
        w->p = (struct prof){0.20 + 0.2 * uni(r), 0.40 + 0.3 * uni(r), 0.65, 0.10, 0.35};
        w->pods[0] = (struct pod){"worker", 1, 2 * g, 8 * g, g, 1};
    } else {
        double v = uni(r);
        if (v < 0.50) {
            w->type = "cpu_small";
            w->duration = lognormal(r, 600, 0.8, 60, 4 * 3600.0);
            w->pods[0] = (struct pod){"worker", 1, range(r, 1, 8), 4, 0, 1};
            w->cpu_class = uni(r) < 0.5 ? "cpu.compute_bound" : "cpu.memory_bound";
        } else if (v < 0.85) {
            w->type = "cpu_medium";
            w->duration = lognormal(r, 1800, 0.8, 300, 8 * 3600.0);
            w->pods[0] = (struct pod){"worker", 1, 16 * range(r, 1, 4), 64, 0, 1};
            w->cpu_class = uni(r) < 0.5 ? "cpu.compute_bound" : "cpu.mixed";
        } else {
            w->type = "cpu_large";
            w->perf = true;
            w->duration = lognormal(r, 3600, 0.8, 600, 12 * 3600.0);
            w->pods[0] = (struct pod){"worker", 1, uni(r) < 0.5 ? 64 : 96, 256, 0, 1};
            w->cpu_class = "cpu.compute_bound";
        }
        w->p = (struct prof){0.60 + 0.35 * uni(r), 0, !strcmp(w->cpu_class, "cpu.memory_bound") ? 0.80 : 0.35, 0.10, 0};
    }
    if (!w->perf && !o->no_affinity_only && uni(r) < o->perf_ratio * 0.1)
        w->perf = true; /* a few standard categories carry a performance intent (ours) */
    if (o->no_affinity_only)
        w->perf = false;
    w->affinity = w->perf;
    w->sens = w->perf ? 0.5 : 0;
    w->duration /= o->time_scale > 0 ? o->time_scale : 1;
}

struct arrival {
    double t;
};

static long gen_diurnal(const struct tracegen_opts *o, struct rng *r, FILE *out)
{
    long n = 0;
    int id = 0;
    int minutes = (int)(o->sim_hours * 60);
    double ts = o->time_scale > 0 ? o->time_scale : 1;
    for (int m = 0; m < minutes; m++) {
        double h = fmod(m / 60.0, 24);
        double rate = o->diurnal_peak_rate * (0.25 + 0.70 * (1 - cos(2 * M_PI * (h - 4) / 24)) / 2);
        int k = poisson(r, rate);
        if (m % 60 == 0 && uni(r) < 0.10) /* a burst in 10 % of the hours */
            k += range(r, o->diurnal_burst_min, o->diurnal_burst_max);
        /* arrivals of the minute, in order */
        double prev = 0;
        for (int i = 0; i < k; i++) {
            double t = m * 60.0 + 60.0 * (i + uni(r)) / (k ? k : 1);
            if (t < prev)
                t = prev;
            prev = t;
            struct wl w = {0};
            snprintf(w.id, sizeof w.id, "workload-%06d", ++id);
            w.t = t / ts;
            diurnal_workload(r, o, &w);
            long e = emit(o, &w, out);
            if (e < 0)
                return -1;
            n += e;
        }
    }
    return n;
}

long tracegen_write(const struct tracegen_opts *o, FILE *out)
{
    struct rng r;
    uint64_t x = o->seed;
    for (int i = 0; i < 4; i++)
        r.s[i] = splitmix(&x);
    long n = o->diurnal ? gen_diurnal(o, &r, out) : gen_default(o, &r, out);
    if (fflush(out) || ferror(out))
        return -1;
    return n;
}
