/* emutime_agent: the agent of bench/emutime_bench.sh, run under `hwemu exec --time emulated`:
 * sleeps PERIOD + PHASE emulated seconds (time moves only once every agent has joined, so this
 * first wake-up is the run's start for every agent), then COUNT times reads package 0's energy_uj and sleeps PERIOD
 * emulated seconds (relative nanosleep, as a reconcile loop does), then prints the real
 * CLOCK_MONOTONIC (a raw system call: the shim answers clock_gettime in emulated time) of its
 * first wake-up and of its end, in ns. Usage: emutime_agent PERIOD_S COUNT PHASE_S */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int64_t real_ns(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    double period = atof(argv[1]), phase = atof(argv[3]);
    long count = atol(argv[2]);
    sleep_s(period + phase);
    int64_t first = real_ns();
    char buf[64];
    for (long i = 0; i < count; i++) {
        int fd = open("/sys/class/powercap/intel-rapl:0/energy_uj", O_RDONLY);
        if (fd < 0 || read(fd, buf, sizeof buf) <= 0)
            return 1;
        close(fd);
        sleep_s(period);
    }
    printf("%lld %lld\n", (long long)first, (long long)real_ns());
    return 0;
}
