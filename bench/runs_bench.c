/* runs_bench: what a workload run costs. A mixed cluster of N nodes (CPU and GPU profiles in
 * the proportions of the original's experiment 02: 5,000 nodes with 22,760 GPUs, so 57 % GPU
 * nodes), a diurnal trace of H emulated hours generated in-process (peak rate scaled to the
 * cluster: --diurnal-peak-rate 80 * N / 5000), run at --speed max with a tick of T seconds.
 * Reports: the median tick without a run (K ticks), the median and mean tick during the run,
 * the run's wall time, placement cost per placement attempt, and the wall time this scales to
 * for 5,000 nodes and 60 h (linear in nodes x ticks, which is what a tick costs).
 * Usage: runs_bench ROOT_PARENT N HOURS [TICK_S] [K] [MAX_TICKS] [BATCH]   (defaults: tick 1 s, K 20; MAX_TICKS:
 * stop the run after that many ticks (0: none), to measure a large cluster's tick without running it all;
 * BATCH: engine_config.batch_ticks, 0 the engine's default, 1 every node at every tick)
 * HWEMU_BENCH_PROFILE=NAME: every node of that one profile instead of the mix (memory per profile).
 * Memory: the engine's anonymous pages and the root's files (segments and static files) after the
 * start, after the idle ticks and at the run's end, in all and per node.
 * Figures go to bench/README.md with the machine and the command. */
#include "engine.h"
#include "runs.h"
#include "tracegen.h"
#include "diag.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

/* A kB figure of /proc/self/status ("VmRSS", "VmHWM", "RssAnon", "RssShmem"), 0 if absent. */
static long status_kb(const char *key)
{
    char line[256];
    long v = 0;
    size_t kl = strlen(key);
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':')
            v = atol(line + kl + 1);
    if (f)
        fclose(f);
    return v;
}

/* The space the files directly under dir (the root's segments and static files) take, KiB:
 * tmpfs pages, resident whether or not a process maps them. */
static long dir_kb(const char *dir)
{
    long kb = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    char p[1024];
    struct stat st;
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.' || strstr(de->d_name, ".static")) {
            snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
            if (!lstat(p, &st) && S_ISREG(st.st_mode))
                kb += (long)st.st_blocks / 2;
        }
    if (d)
        closedir(d);
    return kb;
}

/* Memory per node: the engine's own pages (anonymous: heap, stacks) and the root's files (every
 * segment page, mapped by the engine or not, counted once), with what the engine maps of them. */
static void print_memory(const char *when, const char *root, int n)
{
    long anon = status_kb("RssAnon"), shm = status_kb("RssShmem"), files = dir_kb(root);
    printf("  memory %s: RSS %ld KiB (anonymous %ld, segment pages mapped %ld), peak RSS %ld KiB, heap in use %zu KiB, "
           "root's files %ld KiB; per node %.1f KiB anonymous + %.1f KiB files = %.1f KiB\n",
           when, status_kb("VmRSS"), anon, shm, status_kb("VmHWM"), mallinfo2().uordblks / 1024, files,
           (double)anon / n, (double)files / n, (double)(anon + files) / n);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: runs_bench ROOT_PARENT N HOURS [TICK_S] [K] [MAX_TICKS] [BATCH]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    double hours = atof(argv[3]), tick_s = argc > 4 ? atof(argv[4]) : 1;
    int k = argc > 5 ? atoi(argv[5]) : 20;
    long max_ticks = argc > 6 ? atol(argv[6]) : 0;
    int batch = argc > 7 ? atoi(argv[7]) : 0;
    char root[512], spec[600], trace[600];
    snprintf(root, sizeof root, "%s/hwemu-runs-bench-%d", argv[1], (int)getpid());
    snprintf(spec, sizeof spec, "%s.yaml", root);
    snprintf(trace, sizeof trace, "%s.jsonl", root);
    /* 57 % GPU nodes: 8x H100 NVL, 8x MI300X and 4x L40S; 43 % CPU nodes: Xeon RAPL and EPYC HSMP */
    int gpu = (int)lround(n * 0.57), nvl = gpu / 2, mi = gpu / 4, l40 = gpu - nvl - mi, cpu = n - gpu;
    int xeon = cpu / 2, epyc = cpu - xeon;
    FILE *f = fopen(spec, "w");
    const char *one = getenv("HWEMU_BENCH_PROFILE");
    if (one)
        fprintf(f, "apiVersion: sim.joulie.io/v1alpha1\nkind: ClusterSpec\nmetadata: {name: runs-bench}\nspec:\n"
                   "  pools:\n  - {name: one, profile: %s, count: %d}\n", one, n);
    else
        fprintf(f, "apiVersion: sim.joulie.io/v1alpha1\nkind: ClusterSpec\nmetadata: {name: runs-bench}\nspec:\n  pools:\n"
                   "  - {name: nvl, profile: nvidia-h100-nvl-8gpu, count: %d}\n"
                   "  - {name: mi300x, profile: amd-instinct-mi300x-8gpu, count: %d}\n"
                   "  - {name: l40s, profile: nvidia-l40s-4gpu, count: %d}\n"
                   "  - {name: xeon, profile: intel-xeon-2s-rapl, count: %d}\n"
                   "  - {name: epyc, profile: amd-epyc-2s-hsmp, count: %d}\n",
                nvl, mi, l40, xeon, epyc);
    fclose(f);
    struct tracegen_opts o;
    tracegen_defaults(&o);
    o.diurnal = true;
    o.sim_hours = hours;
    o.diurnal_peak_rate = 80.0 * n / 5000;
    o.diurnal_burst_min = (int)(20.0 * n / 5000);
    o.diurnal_burst_max = (int)(80.0 * n / 5000);
    o.amd_gpu_ratio = 0.25;
    o.seed = 1;
    f = fopen(trace, "w");
    long jobs = tracegen_write(&o, f);
    fclose(f);
    struct engine_config cfg = {.spec_path = spec, .root = root, .addr = "", .tick_ns = (int64_t)(tick_s * 1e9),
                                .workers = (int)sysconf(_SC_NPROCESSORS_ONLN), .speed = ENGINE_SPEED_MAX, .batch_ticks = batch};
    if (cfg.workers > 12)
        cfg.workers = 12;
    static struct engine e;
    char cmd[1800];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' '%s'", root, spec, trace);
    if (engine_start(&e, &cfg)) {
        fprintf(stderr, "%s", e.said ? e.said : ""); /* why it did not start (the capacity check: what and what to do) */
        int removed = system(cmd);
        (void)removed; /* a failed start exits 1 either way */
        return 1;
    }
    print_memory("after the start", root, n);
    int64_t *t = calloc((size_t)k, sizeof *t);
    for (int i = 0; i < k; i++) /* warm up: the first ticks touch every segment page */
        engine_tick(&e);
    for (int i = 0; i < k; i++)
        t[i] = engine_tick(&e);
    qsort(t, (size_t)k, sizeof *t, cmp64);
    double idle_p50 = (double)t[k / 2] / 1e6;
    print_memory("after the idle ticks", root, n);
    char err[4400];
    struct runs *m = runs_attach(&e, NULL, 1, 0, err, sizeof err);
    if (!m) {
        fprintf(stderr, "runs_bench: %s\n", err);
        return 1;
    }
    struct diag d = {0};
    char id[64];
    if (runs_submit_path(m, trace, NULL, id, sizeof id, &d)) {
        diag_print(&d, stderr);
        return 1;
    }
    size_t cap = 1 << 16, nt = 0;
    int64_t *rt = malloc(cap * sizeof *rt), t0 = mono();
    while (runs_busy(m)) {
        if (nt == cap)
            rt = realloc(rt, (cap *= 2) * sizeof *rt);
        rt[nt++] = engine_tick(&e);
        if (max_ticks && (long)nt == max_ticks)
            runs_stop(m, id);
    }
    double wall = (double)(mono() - t0) / 1e9;
    print_memory("at the run's end", root, n);
    double sum = 0;
    for (size_t i = 0; i < nt; i++)
        sum += (double)rt[i];
    qsort(rt, nt, sizeof *rt, cmp64);
    char path[1200];
    snprintf(path, sizeof path, "%s/runs/%s/summary.json", root, id);
    f = fopen(path, "r");
    long fsz = 0; /* whole: a large cluster's summary is above 16 MiB (60,000 nodes) */
    if (f && !fseek(f, 0, SEEK_END) && (fsz = ftell(f)) > 0)
        rewind(f);
    char *buf = calloc(1, (size_t)(fsz > 0 ? fsz : 0) + 1);
    size_t got = f && fsz > 0 ? fread(buf, 1, (size_t)fsz, f) : 0;
    if (f)
        fclose(f);
    buf[got] = 0;
    cJSON *s = cJSON_Parse(buf);
    const cJSON *js = cJSON_GetObjectItem(s, "jobs");
    double place = cJSON_GetNumberValue(cJSON_GetObjectItem(s, "placementMicrosecondsPerPlacedJob"));
    double span = cJSON_GetNumberValue(cJSON_GetObjectItem(s, "timeSec"));
    printf("%d nodes (%d GPU), %.1f h diurnal trace, %ld jobs, tick %.1f s, batch %d ticks, %d workers\n", n, gpu,
           hours, jobs, tick_s, e.cfg.batch_ticks, cfg.workers);
    printf("  tick p50 without a run %.2f ms; during the run p50 %.2f ms, mean %.2f ms (%zu ticks)\n", idle_p50,
           (double)rt[nt / 2] / 1e6, sum / (double)nt / 1e6, nt);
    printf("  run: %s, completed %d, stalled %d, emulated %.0f s, wall %.1f s; placement %.2f us per placed job\n",
           cJSON_GetStringValue(cJSON_GetObjectItem(s, "state")),
           (int)cJSON_GetNumberValue(cJSON_GetObjectItem(js, "completed")),
           (int)cJSON_GetNumberValue(cJSON_GetObjectItem(js, "stalled")), span, wall, place);
    double per = wall / (double)nt / n; /* wall per node-tick */
    /* 60 h of arrivals plus the same tail of long jobs after the last arrival */
    double ticks60 = (60 * 3600.0 + (span - hours * 3600 > 0 ? span - hours * 3600 : 0)) / tick_s;
    printf("  %.2f us per node per emulated second; load average %.2f\n", per / tick_s * 1e6, loadavg());
    printf("  %.1f us per node-tick during the run; 5,000 nodes for 60 h of arrivals plus this tail (%.0f ticks): "
           "%.0f s wall\n", per * 1e6, ticks60, per * 5000 * ticks60);
    cJSON_Delete(s);
    free(buf);
    runs_detach(m);
    engine_stop(&e);
    return system(cmd) == 0 ? 0 : 1;
}
