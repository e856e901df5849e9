/* exec_bench: the wall time of running a command, as an agent that shells out to a GPU tool
 * pays it: fork, exec, the tool's work, exit, wait. Runs CMD N times (its output to /dev/null)
 * and prints the median and the 90th percentile in microseconds.
 * Usage: exec_bench N CMD [ARGS...] */
#include "bench_time.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: exec_bench N CMD [ARGS...]\n");
        return 2;
    }
    int n = atoi(argv[1]);
    if (n < 1)
        n = 1;
    double *t = malloc(sizeof *t * (size_t)n);
    if (!t)
        return 1;
    for (int i = 0; i < n; i++) {
        double t0 = bench_now_ns() / 1e3;
        pid_t pid = fork();
        if (pid == 0) {
            int fd = open("/dev/null", O_WRONLY);
            dup2(fd, 1);
            execvp(argv[2], argv + 2);
            _exit(127);
        }
        int st;
        waitpid(pid, &st, 0);
        t[i] = bench_now_ns() / 1e3 - t0;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "exec_bench: %s exited with %d\n", argv[2], WIFEXITED(st) ? WEXITSTATUS(st) : -1);
            return 1;
        }
    }
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    printf("%.0f %.0f\n", t[n / 2], t[n * 9 / 10]);
    free(t);
    return 0;
}
