/* tick_bench: what the engine costs for N intel-xeon-2s-rapl nodes on this machine (another
 * profile with HWEMU_BENCH_PROFILE, e.g. nvidia-h100-sxm-8gpu).
 * For each N: render every node fresh on an empty root, time T ticks 1 s apart (each tick steps
 * every node through 1 s of physics, as the default tick does; median and p99), stop, start
 * again on the same root (resume), and report per node the engine's heap, its resident memory
 * (which includes the node's segment pages, shared with the agents) and the segment's size, and
 * the pool's one static file. With more than 60 ticks (HWEMU_BENCH_STEADY), the median of the
 * ticks after the first minute too (the temperatures settled to what the files show).
 * Usage: tick_bench ROOT_PARENT [TICKS] [N...]   (defaults: 50 ticks; 200 1000 10000 nodes)
 * Figures go to bench/README.md with the machine and the command. */
#include "engine.h"
#include "otlp.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ticks after which the p50 is printed too (HWEMU_BENCH_STEADY, default 60) */
static int steady_after(void)
{
    const char *v = getenv("HWEMU_BENCH_STEADY");
    return v && atoi(v) > 0 ? atoi(v) : 60;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int run(const char *parent, int n, int ticks)
{
    char root[512], spec[600], cmd[700];
    snprintf(root, sizeof root, "%s/hwemu-bench-%d-%d", parent, (int)getpid(), n);
    snprintf(spec, sizeof spec, "%s.yaml", root);
    FILE *f = fopen(spec, "w");
    if (!f)
        return 1;
    const char *profile = getenv("HWEMU_BENCH_PROFILE");
    fprintf(f, "apiVersion: sim.joulie.io/v1alpha1\nkind: ClusterSpec\nmetadata: {name: bench}\nspec:\n"
               "  defaults: {baseLoad: {cpuUtil: 0.6, gpuUtil: 0.8, memoryIntensity: 0.2}}\n"
               "  pools:\n  - {name: node, profile: %s, count: %d}\n",
            profile && *profile ? profile : "intel-xeon-2s-rapl", n);
    fclose(f);
    struct engine_config cfg = {.spec_path = spec, .root = root, .addr = "", .tick_ns = 1000000000,
                                .workers = (int)sysconf(_SC_NPROCESSORS_ONLN)};
    if (cfg.workers > 12)
        cfg.workers = 12;
    static struct engine e;
    long rss0 = rss_kib();
    size_t heap0 = mallinfo2().uordblks;
    if (engine_start(&e, &cfg)) {
        fprintf(stderr, "%s", e.said ? e.said : ""); /* why it did not start */
        return 1;
    }
    char err[1024];
    struct otlp *otlp = otlp_attach(&e, err, sizeof err); /* runs when OTEL_EXPORTER_OTLP_ENDPOINT is set */
    if (!otlp && *err) {
        fprintf(stderr, "tick_bench: %s\n", err);
        return 1;
    }
    double fresh = e.start_seconds;
    long rss1 = rss_kib();
    size_t heap1 = mallinfo2().uordblks;
    int64_t *t = calloc((size_t)ticks, sizeof *t);
    for (int i = 0; i < ticks; i++) {
        struct timespec ts = {1, 0}; /* the default tick: 1 s of physics per node per tick */
        nanosleep(&ts, NULL);
        t[i] = engine_tick(&e);
    }
    /* after the first minute: the temperatures (thermal tau 4 s) have settled to the millidegree
     * the files show, so they are no longer published every tick */
    int after = steady_after(), nsteady = ticks > after ? ticks - after : 0;
    int64_t *steady = calloc((size_t)nsteady + 1, sizeof *steady);
    memcpy(steady, t + after * (nsteady > 0), sizeof *t * (size_t)nsteady);
    qsort(steady, (size_t)nsteady, sizeof *steady, cmp64);
    qsort(t, (size_t)ticks, sizeof *t, cmp64);
    struct stat st;
    char seg[700];
    snprintf(seg, sizeof seg, "%s/node-0.seg", root);
    long seg_size = stat(seg, &st) == 0 ? (long)st.st_size : 0;
    /* the one static file every node of the pool shares (segment.h "Files") */
    long st_size = e.templates[0].st && stat(e.templates[0].st->path, &st) == 0 ? (long)st.st_size : 0;
    otlp_detach(&e, otlp);
    engine_stop(&e);
    if (engine_start(&e, &cfg)) {
        fprintf(stderr, "%s", e.said ? e.said : ""); /* why it did not start */
        return 1;
    }
    double resume = e.start_seconds;
    int resumed = e.resumed;
    engine_stop(&e);
    char later[64] = "";
    if (nsteady)
        snprintf(later, sizeof later, " (after %d s: %.2f ms)", after, (double)steady[nsteady / 2] / 1e6);
    free(steady);
    printf("%6d nodes  render-fresh %7.3f s  resume %7.3f s (%d resumed)  tick p50 %7.2f ms%s  p99 %7.2f ms  "
           "heap %5.1f KiB/node  RSS %5.1f KiB/node  segment %4ld KiB/node + %ld KiB shared  workers %d\n",
           n, fresh, resume, resumed, (double)t[ticks / 2] / 1e6, later, (double)t[ticks * 99 / 100] / 1e6,
           (double)(heap1 - heap0) / 1024 / n, (double)(rss1 - rss0) / n, seg_size / 1024, st_size / 1024,
           cfg.workers);
    fflush(stdout);
    free(t);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", root, spec);
    return system(cmd) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: tick_bench ROOT_PARENT [TICKS] [N...]\n");
        return 2;
    }
    int ticks = argc > 2 ? atoi(argv[2]) : 50;
    static const int defaults[] = {200, 1000, 10000};
    int rc = 0;
    if (argc > 3)
        for (int i = 3; i < argc; i++)
            rc |= run(argv[1], atoi(argv[i]), ticks);
    else
        for (int i = 0; i < 3; i++)
            rc |= run(argv[1], defaults[i], ticks);
    return rc;
}
