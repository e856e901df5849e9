/* cli: shared CLI plumbing; see cli.h. */
#include "cli.h"

#include "duration.h"
#include "profile_validate.h"

#include <ctype.h>
#include <getopt.h>
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

int cli_bad_option(const char *cmd, char **argv, const struct option *opts)
{
    const char *arg = argv[optind - 1];
    for (const struct option *o = opts; optopt && o->name; o++)
        if (o->val == optopt && o->has_arg == required_argument)
            return cli_usage_error(cmd, "--%s needs a value", o->name);
    const char *name = arg + strspn(arg, "-");
    size_t len = strcspn(name, "=");
    char word[64], prefixed[256] = "";
    snprintf(word, sizeof word, "%.*s", (int)len, name);
    const char *names[128];
    int n = 0, matches = 0;
    for (const struct option *o = opts; o->name && n < 127; o++) {
        names[n++] = o->name;
        if (len && !strncmp(o->name, word, len)) { /* getopt takes a unique prefix: this one is not */
            size_t used = strlen(prefixed);
            snprintf(prefixed + used, sizeof prefixed - used, "%s--%s", matches++ ? ", " : "", o->name);
        }
    }
    names[n] = NULL;
    if (matches > 1)
        return cli_usage_error(cmd, "%s is ambiguous: %s", arg, prefixed);
    const char *near = closest_word(word, names);
    if (near)
        return cli_usage_error(cmd, "unknown option %s; did you mean --%s?", arg, near);
    return cli_usage_error(cmd, "unknown option %s", arg);
}

const char *cli_closest_command(const char *usage, const char *word)
{
    static char names[64][32];
    const char *list[65];
    int n = 0;
    const char *p = strstr(usage, "\nCommands:\n");
    for (p = p ? strchr(p + 1, '\n') + 1 : ""; !strncmp(p, "  ", 2) && p[2] != ' ' && n < 64;) {
        p += 2;
        for (;;) { /* "files|cat|write --node ...": each name before the first space */
            size_t l = strcspn(p, "| \n");
            if (l && n < 63) {
                snprintf(names[n], sizeof names[n], "%.*s", (int)l, p);
                list[n] = names[n];
                n++;
            }
            p += l;
            if (*p != '|')
                break;
            p++;
        }
        p = strchr(p, '\n');
        p = p ? p + 1 : "";
    }
    list[n] = NULL;
    return closest_word(word, list);
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

int cli_parse_shard(const char *cmd, const char *text, const char *from, int *index, int *count)
{
    const char *slash = strchr(text, '/');
    char *end;
    long n = slash ? strtol(slash + 1, &end, 10) : 0;
    if (!slash || slash == text || *end || end == slash + 1 || n < 1 || n > 10000)
        return cli_usage_error(cmd, "%s=\"%s\" is not a shard: I/N with 0 <= I < N <= 10000 (1/3), or auto/N "
                               "(I from the host name's trailing -I, as a StatefulSet names its pods)", from, text);
    long i;
    if ((size_t)(slash - text) == 4 && !strncmp(text, "auto", 4)) {
        char host[256] = "";
        const char *h = getenv("HOSTNAME");
        if (h && *h)
            snprintf(host, sizeof host, "%s", h);
        else if (gethostname(host, sizeof host - 1))
            host[0] = 0;
        size_t len = strlen(host), k = len;
        while (k > 0 && isdigit((unsigned char)host[k - 1]))
            k--;
        if (k == len || k == 0 || host[k - 1] != '-' || len - k > 5)
            return cli_usage_error(cmd, "%s=\"%s\": the host name \"%s\" does not end in -I (a StatefulSet's pods are "
                                   "NAME-0, NAME-1, ...); give the shard as I/N", from, text, host);
        i = strtol(host + k, NULL, 10);
        if (i >= n)
            return cli_usage_error(cmd, "%s=\"%s\": the host name \"%s\" is shard %ld, but there are only %ld shards "
                                   "(is the StatefulSet's replica count above N?)", from, text, host, i, n);
    } else {
        i = strtol(text, &end, 10);
        if (end != slash || i < 0 || i >= n)
            return cli_usage_error(cmd, "%s=\"%s\" is not a shard: I/N with 0 <= I < N <= 10000 (the first of three is "
                                   "0/3)", from, text);
    }
    *index = (int)i;
    *count = (int)n;
    return EXIT_OK;
}

int cli_time_options(const char *cmd, const char *time, const char *wait_agents, const char *agent_wait,
                     bool *emulated, int *nagents, int64_t *wait_ns)
{
    *emulated = false;
    if (time && strcmp(time, "wall") && strcmp(time, "emulated"))
        return cli_usage_error(cmd, "--time takes emulated or wall, not \"%s\"", time);
    *emulated = time && !strcmp(time, "emulated");
    if (wait_agents) {
        char *end;
        long n = strtol(wait_agents, &end, 10);
        if (end == wait_agents || *end || n < 0 || n > 100000)
            return cli_usage_error(cmd, "--wait-agents \"%s\" is not a number of agents from 0 to 100000", wait_agents);
        if (!*emulated && n)
            return cli_usage_error(cmd, "--wait-agents waits for agents in emulated time: add --time emulated");
        *nagents = (int)n;
    }
    if (agent_wait && (!duration_parse(agent_wait, wait_ns) || *wait_ns <= 0))
        return cli_usage_error(cmd, "--agent-wait \"%s\" is not a duration (10s, 500ms)", agent_wait);
    return EXIT_OK;
}
