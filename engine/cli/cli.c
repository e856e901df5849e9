/* cli: shared CLI plumbing; see cli.h. */
#include "cli.h"

#include "duration.h"


#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *cli_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "hwemu %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nRun 'hwemu %s --help' for usage.\n", cmd);
    return EXIT_USAGE;
}

void cli_print_said(const char *cmd, const char *said)
{
    for (const char *l = said; l && *l;) {
        const char *end = strchr(l, '\n');
        int len = end ? (int)(end - l) : (int)strlen(l);
        fprintf(stderr, "hwemu %s: %.*s\n", cmd, len, l);
        l += len + (end ? 1 : 0);
    }
}

int cli_tick_workers(const char *cmd, const char *tick, const char *tick_from, const char *workers,
                     const char *workers_from, int64_t *tick_ns, int *nworkers)
{
    *tick_ns = 1000000000;
    if (tick && (!duration_parse(tick, tick_ns) || *tick_ns < 10000000 || *tick_ns > 3600000000000LL))
        return cli_usage_error(cmd, "%s=\"%s\" is not a tick between 10ms and 1h (Go syntax: 1s, 250ms)", tick_from,
                               tick);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    *nworkers = online < 1 ? 1 : online > 12 ? 12 : (int)online;
    if (workers) {
        char *end;
        long w = strtol(workers, &end, 10);
        if (*end || w < 1 || w > 256)
            return cli_usage_error(cmd, "%s=\"%s\" is not a number of workers between 1 and 256", workers_from,
                                   workers);
        *nworkers = (int)w;
    }
    return EXIT_OK;
}
