/* nvml_bench: what one nvmlDeviceGetPowerUsage costs a C client of the node's NVML
 * (libhwemu-nvml.so as libnvidia-ml.so.1, loaded by name as NVML clients load it: run under
 * `hwemu exec`). Times ROUNDS rounds of CALLS calls each on GPU 0 and prints the median and
 * p90 per call in ns; then, for a system-call count under strace -c, makes CALLS calls more
 * between two getppid() markers (the markers show where the loop is in the trace).
 * Usage: nvml_bench [ROUNDS [CALLS]]   (defaults 50 rounds of 100000 calls) */
#include "bench_time.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*init_fn)(void);
typedef int (*handle_fn)(unsigned, void **);
typedef int (*power_fn)(void *, unsigned *);

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 50, calls = argc > 2 ? atoi(argv[2]) : 100000;
    if (rounds < 1 || calls < 1)
        return 2;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "nvml_bench: %s (run it under `hwemu exec --node NAME`)\n", dlerror());
        return 1;
    }
    init_fn init = (init_fn)dlsym(lib, "nvmlInit_v2");
    handle_fn handle = (handle_fn)dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    power_fn power = (power_fn)dlsym(lib, "nvmlDeviceGetPowerUsage");
    void *dev = NULL;
    unsigned mw = 0;
    if (!init || !handle || !power || init() || handle(0, &dev) || power(dev, &mw)) {
        fprintf(stderr, "nvml_bench: the library does not answer nvmlDeviceGetPowerUsage on GPU 0\n");
        return 1;
    }
    double *t = malloc(sizeof *t * (size_t)rounds);
    if (!t)
        return 1;
    unsigned long long sum = 0;
    for (int r = 0; r < rounds; r++) {
        double t0 = bench_now_ns();
        for (int i = 0; i < calls; i++) {
            power(dev, &mw);
            sum += mw;
        }
        t[r] = (bench_now_ns() - t0) / calls;
    }
    qsort(t, (size_t)rounds, sizeof *t, bench_cmp_double);
    printf("nvmlDeviceGetPowerUsage: median %.1f ns/call, p90 %.1f ns/call (%d rounds of %d calls, GPU 0 at %u mW)\n",
           t[rounds / 2], t[rounds * 9 / 10], rounds, calls, mw);
    getppid(); /* marker: the counted loop starts */
    for (int i = 0; i < calls; i++) {
        power(dev, &mw);
        sum += mw;
    }
    getppid(); /* marker: it ends */
    free(t);
    return sum == 0;
}
