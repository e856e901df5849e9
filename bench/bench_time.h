/* bench_time: what every benchmark here times with: the monotonic clock in nanoseconds and the
 * comparison qsort needs to take a median of doubles. Header-only, libc only, so the benchmarks
 * built with gcc -static by their scripts include it too. */
#ifndef HWEMU_BENCH_TIME_H
#define HWEMU_BENCH_TIME_H
#include <time.h>

static inline double bench_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
