/* seccomp_bench: what a statically linked agent pays under hwemu exec's seccomp supervisor.
 * Built with gcc -static (bench/seccomp_bench.sh does), so no shim can answer for it: every
 * file call that reaches an emulated path goes through the supervisor. Prints the median
 * nanoseconds per operation over BATCHES batches of N:
 *   orc PATH     open + read + close (a fresh read of the file each time)
 *   burst PATH   the same in bursts of 16 with 5 ms pauses (not timed) between them, as an
 *                agent reading a zone's files once per period does
 *   pread PATH   pread(fd, .., 0) on one descriptor kept open (libpowercap's way)
 *   open PATH    open + close (read elsewhere; for an emulated file: the open's cost)
 *   getppid      a system call the filter lets through (the BPF's cost on everything else)
 * Usage: seccomp_bench MODE [PATH] [BATCHES] [N] */
#include "bench_time.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: seccomp_bench orc|burst|pread|open|getppid [PATH] [BATCHES] [N]\n");
        return 2;
    }
    const char *mode = argv[1], *path = argc > 2 ? argv[2] : "/dev/null";
    int batches = argc > 3 ? atoi(argv[3]) : 21, per = argc > 4 ? atoi(argv[4]) : 2000;
    double *ns = malloc(sizeof *ns * (size_t)batches);
    char buf[128];
    long sink = 0;
    int kept = !strcmp(mode, "pread") ? open(path, O_RDONLY) : -1;
    if (!strcmp(mode, "pread") && kept < 0) {
        perror(path);
        return 1;
    }
    int burst = !strcmp(mode, "burst") ? 16 : 0;
    for (int b = 0; b < batches; b++) {
        double t0 = bench_now_ns(), paused = 0;
        for (int i = 0; i < per; i++) {
            if (burst && i && i % burst == 0) {
                double p0 = bench_now_ns();
                usleep(5000);
                paused += bench_now_ns() - p0;
            }
            if (!strcmp(mode, "getppid")) {
                sink += getppid();
            } else if (kept >= 0) {
                sink += pread(kept, buf, sizeof buf, 0);
            } else {
                int fd = open(path, O_RDONLY);
                if (fd < 0) {
                    perror(path);
                    return 1;
                }
                if ((mode[0] == 'o' && mode[1] == 'r') || burst)
                    sink += read(fd, buf, sizeof buf);
                close(fd);
            }
        }
        ns[b] = (bench_now_ns() - t0 - paused) / per;
    }
    qsort(ns, (size_t)batches, sizeof *ns, bench_cmp_double);
    printf("%.0f\n", ns[batches / 2]);
    return sink == -1;
}
