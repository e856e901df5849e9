/* runs_bench: what a workload run costs. A mixed cluster of N nodes (CPU and GPU profiles in
 * the proportions of the original's experiment 02: 5,000 nodes with 22,760 GPUs, so 57 % GPU
 * nodes), a diurnal trace of H emulated hours generated in-process (peak rate scaled to the
 * cluster: --diurnal-peak-rate 80 * N / 5000), run at --speed max with a tick of T seconds.
 * Reports: the start's wall time, the median tick without a run (K ticks), the median and mean tick during the run,
 * the run's wall time, placement cost per placement attempt, and the wall time this scales to
 * for 5,000 nodes and 60 h (linear in nodes x ticks, which is what a tick costs).
 * Usage: runs_bench ROOT_PARENT N HOURS [TICK_S] [K] [MAX_TICKS] [BATCH]   (defaults: tick 1 s, K 20; MAX_TICKS:
 * stop the run after that many ticks (0: none), to measure a large cluster's tick without running it all;
 * BATCH: engine_config.batch_ticks, 0 the engine's default, 1 every node at every tick)
 * HWEMU_BENCH_PROFILE=NAME: every node of that one profile instead of the mix (memory per profile).
 * HWEMU_BENCH_SHARDS=S (S >= 2): the same N-node spec started as S engines at once, shard i/S of it
 * each (engine_config.shard_index/count, as `serve --shard i/S`), each in its own process with its
 * own root (one process maps at most vm.max_map_count segments: about 65,000 nodes); they start
 * together, wait for each other, then tick and run side by side. Each runs, standalone on its own
 * nodes, a trace scaled to them (N/S nodes: the rate the whole cluster's trace gives a shard).
 * Each prints its lines prefixed "shard i/S:", then one line sums their memory per node of N.
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
#include <sys/wait.h>
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
static void print_memory(const char *pre, const char *when, const char *root, int n, long *anon_out, long *files_out)
{
    long anon = status_kb("RssAnon"), shm = status_kb("RssShmem"), files = dir_kb(root);
    *anon_out = anon;
    *files_out = files;
    printf("%s  memory %s: RSS %ld KiB (anonymous %ld, segment pages mapped %ld), peak RSS %ld KiB, heap in use %zu KiB, "
           "root's files %ld KiB; per node %.1f KiB anonymous + %.1f KiB files = %.1f KiB\n",
           pre, when, status_kb("VmRSS"), anon, shm, status_kb("VmHWM"), mallinfo2().uordblks / 1024, files,
           (double)anon / n, (double)files / n, (double)(anon + files) / n);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* What one engine measured, in KiB and ms: the memory after the start, after the idle ticks and
 * at the run's end; what a shard sends back for the sums. */
struct figs {
    int ok, nodes;
    long anon[3], files[3];
    double idle_p50, run_p50, run_mean;
};

struct bench {
    const char *spec, *trace;
    double hours, tick_s;
    int k, batch, gpu;
    long max_ticks, jobs;
};

/* A bench that cannot go on: stops the engine and removes its root (cmd); 1. */
static int drop(struct engine *e, const char *cmd)
{
    engine_stop(e);
    int removed = system(cmd);
    (void)removed; /* it failed either way */
    return 1;
}

/* Starts one engine of the spec (shard index of count; count 1: every node) on root, ticks it
 * idle, runs the trace, prints its figures (each line prefixed pre) into fg and removes root.
 * ready and go (-1: none): a shard writes a byte to ready once started and reads one from go
 * before its first tick, so that the shards tick side by side. 0 if it ran. */
static int bench_engine(const struct bench *b, const char *root, int index, int count, int ready, int go,
                        struct figs *fg)
{
    char pre[64] = ""; /* what each line of a shard starts with */
    if (count > 1)
        snprintf(pre, sizeof pre, "shard %d/%d:", index, count);
    struct engine_config cfg = {.spec_path = b->spec, .root = root, .addr = "", .tick_ns = (int64_t)(b->tick_s * 1e9),
                                .workers = (int)sysconf(_SC_NPROCESSORS_ONLN), .speed = ENGINE_SPEED_MAX,
                                .batch_ticks = b->batch, .shard_index = index, .shard_count = count};
    if (cfg.workers > 12)
        cfg.workers = 12;
    static struct engine e;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    int64_t s0 = mono();
    int bad = engine_start(&e, &cfg);
    double start_s = (double)(mono() - s0) / 1e9;
    if (ready >= 0 && write(ready, bad ? "0" : "1", 1) != 1)
        bad = 1;
    if (bad) {
        fprintf(stderr, "%s%s", pre, e.said ? e.said : ""); /* why it did not start (the capacity check: what and what to do) */
        int removed = system(cmd);
        (void)removed; /* a failed start fails either way */
        return 1;
    }
    int n = fg->nodes = e.nnodes;
    char go_byte;
    if (go >= 0 && read(go, &go_byte, 1) != 1)
        return drop(&e, cmd);
    printf("%s  started %d nodes in %.1f s\n", pre, n, start_s);
    print_memory(pre, "after the start", root, n, &fg->anon[0], &fg->files[0]);
    int k = b->k;
    int64_t *t = calloc((size_t)k, sizeof *t);
    for (int i = 0; i < k; i++) /* warm up: the first ticks touch every segment page */
        engine_tick(&e);
    double idle_sum = 0;
    for (int i = 0; i < k; i++)
        idle_sum += (double)(t[i] = engine_tick(&e));
    qsort(t, (size_t)k, sizeof *t, cmp64);
    double idle_p50 = fg->idle_p50 = (double)t[k / 2] / 1e6, idle_mean = idle_sum / k / 1e6;
    free(t);
    print_memory(pre, "after the idle ticks", root, n, &fg->anon[1], &fg->files[1]);
    char err[4400];
    struct runs *m = runs_attach(&e, NULL, 1, 0, err, sizeof err);
    if (!m) {
        fprintf(stderr, "%sruns_bench: %s\n", pre, err);
        return drop(&e, cmd);
    }
    struct diag d = {0};
    char id[64];
    if (runs_submit_path(m, b->trace, NULL, id, sizeof id, &d)) {
        diag_print(&d, stderr);
        runs_detach(m);
        return drop(&e, cmd);
    }
    size_t cap = 1 << 16, nt = 0;
    int64_t *rt = malloc(cap * sizeof *rt), t0 = mono();
    while (runs_busy(m)) {
        if (nt == cap)
            rt = realloc(rt, (cap *= 2) * sizeof *rt);
        rt[nt++] = engine_tick(&e);
        if (b->max_ticks && (long)nt == b->max_ticks)
            runs_stop(m, id);
    }
    double wall = (double)(mono() - t0) / 1e9;
    print_memory(pre, "at the run's end", root, n, &fg->anon[2], &fg->files[2]);
    double sum = 0;
    for (size_t i = 0; i < nt; i++)
        sum += (double)rt[i];
    qsort(rt, nt, sizeof *rt, cmp64);
    fg->run_p50 = (double)rt[nt / 2] / 1e6;
    fg->run_mean = sum / (double)nt / 1e6;
    char path[1200];
    snprintf(path, sizeof path, "%s/runs/%s/summary.json", root, id);
    FILE *f = fopen(path, "r");
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
    printf("%s%s%d nodes (%d GPU in the whole spec), %.1f h diurnal trace, %ld jobs, tick %.1f s, batch %d ticks, %d workers\n",
           pre, *pre ? " " : "", n, b->gpu, b->hours, b->jobs, b->tick_s, e.cfg.batch_ticks, cfg.workers);
    printf("%s  tick p50 without a run %.2f ms (mean %.2f ms, %d ticks); during the run p50 %.2f ms, mean %.2f ms (%zu ticks)\n",
           pre, idle_p50, idle_mean, k, fg->run_p50, fg->run_mean, nt);
    printf("%s  run: %s, completed %d, stalled %d, emulated %.0f s, wall %.1f s; placement %.2f us per placed job\n",
           pre, cJSON_GetStringValue(cJSON_GetObjectItem(s, "state")),
           (int)cJSON_GetNumberValue(cJSON_GetObjectItem(js, "completed")),
           (int)cJSON_GetNumberValue(cJSON_GetObjectItem(js, "stalled")), span, wall, place);
    double per = wall / (double)nt / n; /* wall per node-tick */
    /* 60 h of arrivals plus the same tail of long jobs after the last arrival */
    double ticks60 = (60 * 3600.0 + (span - b->hours * 3600 > 0 ? span - b->hours * 3600 : 0)) / b->tick_s;
    printf("%s  %.2f us per node per emulated second; load average %.2f\n", pre, per / b->tick_s * 1e6, loadavg());
    printf("%s  %.1f us per node-tick during the run; 5,000 nodes for 60 h of arrivals plus this tail (%.0f ticks): "
           "%.0f s wall\n", pre, per * 1e6, ticks60, per * 5000 * ticks60);
    cJSON_Delete(s);
    free(buf);
    free(rt);
    runs_detach(m);
    engine_stop(&e);
    fg->ok = system(cmd) == 0;
    return fg->ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: runs_bench ROOT_PARENT N HOURS [TICK_S] [K] [MAX_TICKS] [BATCH]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    const char *sh = getenv("HWEMU_BENCH_SHARDS");
    int shards = sh ? atoi(sh) : 1;
    if (shards < 1 || shards > n) {
        fprintf(stderr, "runs_bench: HWEMU_BENCH_SHARDS=%s: give a number of engines from 1 to N (%d)\n", sh, n);
        return 2;
    }
    struct bench b = {.hours = atof(argv[3]), .tick_s = argc > 4 ? atof(argv[4]) : 1, .k = argc > 5 ? atoi(argv[5]) : 20,
                      .max_ticks = argc > 6 ? atol(argv[6]) : 0, .batch = argc > 7 ? atoi(argv[7]) : 0};
    char root[512], spec[600], trace[600];
    snprintf(root, sizeof root, "%s/hwemu-runs-bench-%d", argv[1], (int)getpid());
    snprintf(spec, sizeof spec, "%s.yaml", root);
    snprintf(trace, sizeof trace, "%s.jsonl", root);
    b.spec = spec;
    b.trace = trace;
    /* 57 % GPU nodes: 8x H100 NVL, 8x MI300X and 4x L40S; 43 % CPU nodes: Xeon RAPL and EPYC HSMP */
    int gpu = b.gpu = (int)lround(n * 0.57), nvl = gpu / 2, mi = gpu / 4, l40 = gpu - nvl - mi, cpu = n - gpu;
    int xeon = cpu / 2, epyc = cpu - xeon;
    FILE *f = fopen(spec, "w");
    if (!f) {
        perror(spec); /* ROOT_PARENT missing or not writable */
        return 1;
    }
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
    double tn = (double)n / shards; /* the nodes one engine runs the trace on */
    struct tracegen_opts o;
    tracegen_defaults(&o);
    o.diurnal = true;
    o.sim_hours = b.hours;
    o.diurnal_peak_rate = 80.0 * tn / 5000;
    o.diurnal_burst_min = (int)(20.0 * tn / 5000);
    o.diurnal_burst_max = (int)(80.0 * tn / 5000);
    o.amd_gpu_ratio = 0.25;
    o.seed = 1;
    f = fopen(trace, "w");
    if (!f) {
        perror(trace);
        return 1;
    }
    b.jobs = tracegen_write(&o, f);
    fclose(f);
    int rc = 0;
    if (shards == 1) {
        struct figs fg = {0};
        rc = bench_engine(&b, root, 0, 1, -1, -1, &fg);
    } else {
        int ready[2], go[2], res[2];
        if (pipe(ready) || pipe(go) || pipe(res)) {
            perror("runs_bench: pipe");
            return 1;
        }
        fflush(stdout);
        for (int i = 0; i < shards; i++) {
            pid_t p = fork();
            if (p < 0) {
                perror("runs_bench: fork");
                return 1;
            }
            if (p == 0) {
                close(ready[0]);
                close(go[1]);
                close(res[0]);
                char r[600];
                snprintf(r, sizeof r, "%s-shard-%d", root, i);
                struct figs fg = {0};
                int bad = bench_engine(&b, r, i, shards, ready[1], go[0], &fg);
                if (write(res[1], &fg, sizeof fg) != (ssize_t)sizeof fg)
                    bad = 1;
                fflush(stdout);
                _exit(bad);
            }
        }
        close(ready[1]);
        close(go[0]);
        close(res[1]);
        char c;
        int started = 0;
        for (int i = 0; i < shards && read(ready[0], &c, 1) == 1; i++)
            started += c == '1';
        printf("%d of %d shards started (started together; they tick from now on side by side)\n", started, shards);
        fflush(stdout);
        for (int i = 0; i < shards; i++)
            if (write(go[1], "g", 1) != 1)
                rc = 1;
        struct figs all = {0}, fg;
        int done = 0;
        double p50_max = 0, p50_sum = 0, run_sum = 0;
        while (read(res[0], &fg, sizeof fg) == (ssize_t)sizeof fg) {
            if (!fg.ok)
                continue;
            done++;
            all.nodes += fg.nodes;
            for (int w = 0; w < 3; w++) {
                all.anon[w] += fg.anon[w];
                all.files[w] += fg.files[w];
            }
            p50_sum += fg.idle_p50;
            run_sum += fg.run_p50;
            p50_max = fg.idle_p50 > p50_max ? fg.idle_p50 : p50_max;
        }
        for (int i = 0; i < shards; i++) {
            int st;
            if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
                rc = 1;
        }
        if (done == shards) {
            static const char *const when[3] = {"after the start", "after the idle ticks", "at the run's end"};
            printf("all %d shards, %d nodes:\n", shards, all.nodes);
            for (int w = 0; w < 3; w++)
                printf("  memory %s: anonymous %ld KiB + root's files %ld KiB = %.2f GiB; per node %.1f KiB anonymous + "
                       "%.1f KiB files = %.1f KiB\n",
                       when[w], all.anon[w], all.files[w], (double)(all.anon[w] + all.files[w]) / 1048576,
                       (double)all.anon[w] / all.nodes, (double)all.files[w] / all.nodes,
                       (double)(all.anon[w] + all.files[w]) / all.nodes);
            printf("  tick p50 without a run: mean of the shards' %.2f ms, slowest shard's %.2f ms; during the run: mean "
                   "of the shards' p50 %.2f ms\n", p50_sum / shards, p50_max, run_sum / shards);
        } else {
            printf("%d of %d shards ran to the end: no sums\n", done, shards);
            rc = 1;
        }
    }
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", spec, trace);
    return system(cmd) == 0 && rc == 0 ? 0 : 1;
}
