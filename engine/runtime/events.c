/* events: events.jsonl and the recent-events ring; see events.h. */
#include "events.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RECENT 1024

struct event_log {
    pthread_mutex_t mu;
    FILE *f;
    char *recent[RECENT];
    char *recent_node[RECENT];
    uint64_t total, write_errors;
    events_sink_fn *sink;
    void *sink_ctx;
};

struct event_log *events_open(const char *path, char *err, size_t errlen)
{
    struct event_log *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&l->mu, NULL);
    if (path) {
        /* never through a symbolic link, never anything but a regular file: the root is ours
         * (root.c), and a link or a FIFO here was put there to redirect the engine's writes */
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
        struct stat st;
        int why = fd < 0 ? errno : fstat(fd, &st) ? errno : !S_ISREG(st.st_mode) ? EINVAL : 0;
        if (!why && fcntl(fd, F_SETFL, O_WRONLY | O_APPEND))
            why = errno;
        if (!why && !(l->f = fdopen(fd, "a")))
            why = errno;
        if (why) {
            if (fd >= 0)
                close(fd);
            if (why == ELOOP || why == EINVAL || why == ENXIO) /* ENXIO: a FIFO no one reads */
                snprintf(err, errlen, "%s is a symbolic link or not a regular file: refused (it could redirect the "
                         "engine's writes); remove it and start again", path);
            else
                snprintf(err, errlen, "%s: cannot open the event log: %s", path, strerror(why));
            pthread_mutex_destroy(&l->mu);
            free(l);
            return NULL;
        }
        setvbuf(l->f, NULL, _IOLBF, 0); /* a line is whole on disk when emit returns */
    }
    return l;
}

void events_close(struct event_log *l)
{
    if (!l)
        return;
    if (l->f)
        fclose(l->f);
    for (int i = 0; i < RECENT; i++) {
        free(l->recent[i]);
        free(l->recent_node[i]);
    }
    pthread_mutex_destroy(&l->mu);
    free(l);
}

static void rfc3339(int64_t wall_ns, char *buf, size_t len)
{
    time_t sec = (time_t)(wall_ns / 1000000000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%09lldZ", (long long)(wall_ns % 1000000000));
}

void events_emit(struct event_log *l, int64_t wall_ns, const char *node, const char *name, struct cJSON *attrs)
{
    char when[64];
    rfc3339(wall_ns, when, sizeof when);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "time", when);
    cJSON_AddStringToObject(o, "node", node);
    cJSON_AddStringToObject(o, "event", name);
    cJSON_AddItemToObject(o, "attributes", attrs ? attrs : cJSON_CreateObject());
    char *line = cJSON_PrintUnformatted(o);
    pthread_mutex_lock(&l->mu);
    events_sink_fn *sink = l->sink;
    void *ctx = l->sink_ctx;
    pthread_mutex_unlock(&l->mu);
    if (sink)
        sink(ctx, wall_ns, node, name, cJSON_GetObjectItemCaseSensitive(o, "attributes"));
    cJSON_Delete(o);
    if (!line)
        return;
    pthread_mutex_lock(&l->mu);
    uint64_t slot = l->total++ % RECENT;
    if (l->f && (fputs(line, l->f) == EOF || fputc('\n', l->f) == EOF)) {
        if (!l->write_errors++)
            fprintf(stderr, "hwemu: cannot append to events.jsonl (%s); events stay in /debug/events only\n",
                    strerror(errno));
    }
    free(l->recent[slot]);
    free(l->recent_node[slot]);
    l->recent[slot] = line;
    l->recent_node[slot] = strdup(node);
    pthread_mutex_unlock(&l->mu);
}

char *events_recent_json(struct event_log *l, const char *node, uint64_t after, size_t limit, uint64_t *total)
{
    pthread_mutex_lock(&l->mu);
    size_t cap = 64, len = 0;
    char *out = malloc(cap);
    if (!out) {
        pthread_mutex_unlock(&l->mu);
        return NULL;
    }
    out[len++] = '[';
    uint64_t first = l->total > RECENT ? l->total - RECENT : 0;
    if (first < after)
        first = after;
    if (limit) { /* the newest `limit` that match */
        uint64_t i = l->total;
        for (size_t kept = 0; i > first && kept < limit; i--)
            if (l->recent[(i - 1) % RECENT] && (!node || !strcmp(node, l->recent_node[(i - 1) % RECENT])))
                kept++;
        first = i;
    }
    if (total)
        *total = l->total;
    bool any = false;
    for (uint64_t i = first; i < l->total; i++) {
        const char *line = l->recent[i % RECENT];
        if (!line || (node && strcmp(node, l->recent_node[i % RECENT])))
            continue;
        size_t n = strlen(line);
        if (len + n + 4 > cap) {
            while (len + n + 4 > cap)
                cap *= 2;
            char *nb = realloc(out, cap);
            if (!nb)
                break;
            out = nb;
        }
        if (any)
            out[len++] = ',';
        memcpy(out + len, line, n);
        len += n;
        any = true;
    }
    out[len++] = ']';
    out[len] = 0;
    pthread_mutex_unlock(&l->mu);
    return out;
}

uint64_t events_total(struct event_log *l)
{
    pthread_mutex_lock(&l->mu);
    uint64_t t = l->total;
    pthread_mutex_unlock(&l->mu);
    return t;
}

void events_set_sink(struct event_log *l, events_sink_fn *fn, void *ctx)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->sink = fn;
    l->sink_ctx = ctx;
    pthread_mutex_unlock(&l->mu);
}

uint64_t events_write_errors(struct event_log *l)
{
    pthread_mutex_lock(&l->mu);
    uint64_t t = l->write_errors;
    pthread_mutex_unlock(&l->mu);
    return t;
}
