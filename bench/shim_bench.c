/* shim_bench: open+read+close of one file, repeated, timed in batches; prints the median
 * nanoseconds per open+read+close. Run it three ways (bench/shim_bench.sh does): on the
 * emulated energy_uj through the shim, on a tmpfs file with the shim loaded, and on the same
 * tmpfs file without the shim.
 * Usage: shim_bench PATH [BATCHES] [PER_BATCH] */
#include "bench_time.h"

#include <fcntl.h>
#include <stdbool.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: shim_bench PATH [BATCHES] [PER_BATCH] [whole]\n");
        return 2;
    }
    int batches = argc > 2 ? atoi(argv[2]) : 41, per = argc > 3 ? atoi(argv[3]) : 20000;
    double *ns = malloc(sizeof *ns * (size_t)batches);
    static char buf[256 * 1024];
    size_t want = argc > 4 && !strcmp(argv[4], "whole") ? sizeof buf : 128; /* whole: read to EOF */
    long sink = 0;
    /* HWEMU_BENCH_CPU=1: the thread's CPU time per operation instead of the wall clock's (on a
     * shared machine the wall clock counts the time other processes hold the core) */
    const char *cpu_env = getenv("HWEMU_BENCH_CPU");
    bool cpu = cpu_env && *cpu_env == '1';
    for (int b = 0; b < batches; b++) {
        struct timespec c0, c1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        double t0 = bench_now_ns();
        for (int i = 0; i < per; i++) {
            int fd = open(argv[1], O_RDONLY);
            if (fd < 0) {
                perror(argv[1]);
                return 1;
            }
            ssize_t n;
            while ((n = read(fd, buf, want)) > 0 && want > 128)
                sink += n;
            sink += n;
            close(fd);
        }
        ns[b] = (bench_now_ns() - t0) / per;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        if (cpu)
            ns[b] = ((double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec)) / per;
    }
    qsort(ns, (size_t)batches, sizeof *ns, bench_cmp_double);
    printf("%.1f\n", ns[batches / 2]);
    return sink > 0 ? 0 : 1;
}
