/* counter_reader: reads energy counters in a tight loop, the two ways agents do, and reports
 * any read below an earlier one (a decrease; a register wrap, a drop of more than half the
 * zone's max_energy_range_uj, is not one). For tests/cli/test_crash_soak.sh, which runs it
 * under `hwemu exec` (the shim, and the seccomp supervisor) while the engine is killed.
 *
 * Usage: counter_reader STOPFILE FILE...   runs until STOPFILE exists; alternates for each FILE
 *   open+read+close, and pread(0) on a descriptor kept open from the start. With READY_FILE set
 *   in the environment, creates that file once every FILE is open (the test waits for it).
 * Output: one "DECREASE file method before after" line per decrease, then
 *   "reads N decreases D errors E rises R" (R: reads above the one before, so the counters
 *   were live). Exit 0. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXF 16

static int parse(const char *b, ssize_t n, uint64_t *v)
{
    if (n <= 0)
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(b, &end, 10);
    if (errno || end == b)
        return -1;
    *v = x;
    return 0;
}

static uint64_t range_of(const char *file)
{
    char p[4096], b[64];
    snprintf(p, sizeof p, "%s", file);
    char *slash = strrchr(p, '/');
    if (!slash)
        return UINT64_MAX;
    snprintf(slash + 1, sizeof p - (size_t)(slash + 1 - p), "max_energy_range_uj");
    int fd = open(p, O_RDONLY);
    uint64_t v = UINT64_MAX;
    if (fd >= 0) {
        ssize_t n = read(fd, b, sizeof b - 1);
        if (n > 0) {
            b[n] = 0;
            parse(b, n, &v);
        }
        close(fd);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc - 2 > MAXF) {
        fprintf(stderr, "usage: counter_reader STOPFILE FILE...\n");
        return 2;
    }
    int nf = argc - 2, kept[MAXF];
    uint64_t last[MAXF], range[MAXF];
    long reads = 0, decreases = 0, errors = 0, rises = 0;
    for (int i = 0; i < nf; i++) {
        kept[i] = open(argv[2 + i], O_RDONLY);
        if (kept[i] < 0) {
            fprintf(stderr, "counter_reader: %s: %s\n", argv[2 + i], strerror(errno));
            return 1;
        }
        last[i] = 0;
        range[i] = range_of(argv[2 + i]);
    }
    const char *ready = getenv("READY_FILE");
    if (ready) {
        int fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0)
            close(fd);
    }
    for (long round = 0;; round++) {
        if (round % 64 == 0 && access(argv[1], F_OK) == 0)
            break;
        for (int i = 0; i < nf; i++) {
            for (int how = 0; how < 2; how++) {
                char b[64];
                ssize_t n;
                if (how == 0) {
                    int fd = open(argv[2 + i], O_RDONLY);
                    n = fd < 0 ? -1 : read(fd, b, sizeof b - 1);
                    if (fd >= 0)
                        close(fd);
                } else {
                    n = pread(kept[i], b, sizeof b - 1, 0);
                }
                uint64_t v;
                if (n > 0)
                    b[n] = 0;
                if (parse(b, n, &v)) {
                    errors++;
                    continue;
                }
                reads++;
                if (v < last[i] && (range[i] == UINT64_MAX || last[i] - v < range[i] / 2)) {
                    decreases++;
                    printf("DECREASE %s %s %llu %llu\n", argv[2 + i], how ? "pread" : "open+read+close",
                           (unsigned long long)last[i], (unsigned long long)v);
                }
                if (v > last[i])
                    rises++;
                if (v > last[i] || last[i] - v >= range[i] / 2)
                    last[i] = v;
            }
        }
    }
    printf("reads %ld decreases %ld errors %ld rises %ld\n", reads, decreases, errors, rises);
    return 0;
}
