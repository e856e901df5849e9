/* run_merge_course: the shards' course.jsonl made one; see run_merge_course.h. */
#include "run_merge_course.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cline {
    int64_t t;     /* timeSec in ns: the key the shards' lines meet on */
    double time_s; /* as the line says it */
    const cJSON *obj;
};

struct course {
    cJSON *lines; /* the parsed lines (an array: owns them) */
    struct cline *l;
    int n;
};

static int64_t ns_of(double s)
{
    return llround(s * 1e9);
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static int parse(const char *text, size_t len, const char *dir, struct course *c, char *err, size_t errlen)
{
    c->lines = cJSON_CreateArray();
    int lineno = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        lineno++;
        if (end > at) {
            cJSON *x = cJSON_ParseWithLength(text + at, end - at);
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(x, "timeSec");
            if (!cJSON_IsObject(x) || !cJSON_IsNumber(t)) {
                cJSON_Delete(x);
                snprintf(err, errlen, "%s/course.jsonl:%d: not a course line (a JSON object with timeSec): is this "
                         "a run directory hwemu wrote?", dir, lineno);
                return -1;
            }
            if (c->n && ns_of(t->valuedouble) < c->l[c->n - 1].t) {
                cJSON_Delete(x);
                snprintf(err, errlen, "%s/course.jsonl:%d: timeSec %.17g is before the line above it: the file is "
                         "not a course hwemu wrote", dir, lineno, t->valuedouble);
                return -1;
            }
            cJSON_AddItemToArray(c->lines, x);
            c->l = realloc(c->l, sizeof *c->l * (size_t)(c->n + 1));
            if (!c->l)
                abort();
            c->l[c->n++] = (struct cline){ns_of(t->valuedouble), t->valuedouble, x};
        }
        at = end + 1;
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* How many of sorted v[0..n) are <= x. */
static int at_or_before(const int64_t *v, int n, int64_t x)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (v[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Adds v to o's number k (made when absent: the first shard's order of keys). */
static void add(cJSON *o, const char *k, double v)
{
    cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (x)
        cJSON_SetNumberHelper(x, x->valuedouble + v);
    else
        cJSON_AddNumberToObject(o, k, v);
}

/* The completed jobs' start and end times (sorted), the jobs and the stalled ones of the merged
 * jobs.jsonl. */
struct jobtimes {
    int64_t *start, *end;
    int ncompleted, total, stalled;
};

static void job_times(const char *jobs, struct jobtimes *j)
{
    memset(j, 0, sizeof *j);
    size_t len = jobs ? strlen(jobs) : 0;
    int cap = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(jobs + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - jobs) : len;
        cJSON *x = end > at ? cJSON_ParseWithLength(jobs + at, end - at) : NULL;
        at = end + 1;
        if (!x)
            continue;
        j->total++;
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(x, "state");
        if (cJSON_IsString(st) && !strcmp(st->valuestring, "stalled"))
            j->stalled++;
        if (cJSON_IsString(st) && !strcmp(st->valuestring, "completed")) {
            if (j->ncompleted == cap) {
                cap = cap ? cap * 2 : 64;
                j->start = realloc(j->start, sizeof *j->start * (size_t)cap);
                j->end = realloc(j->end, sizeof *j->end * (size_t)cap);
                if (!j->start || !j->end)
                    abort();
            }
            j->start[j->ncompleted] = ns_of(num(x, "startSec"));
            j->end[j->ncompleted++] = ns_of(num(x, "endSec"));
        }
        cJSON_Delete(x);
    }
    if (j->ncompleted) {
        qsort(j->start, (size_t)j->ncompleted, sizeof *j->start, cmp_i64);
        qsort(j->end, (size_t)j->ncompleted, sizeof *j->end, cmp_i64);
    }
}

/* The merged line at time t (ns; time_s as a shard's line says it); at[i]: shard i's line at or
 * before t, -1 before its first. */
static cJSON *line_at(const struct course *c, int n, const int *at, int64_t t, double time_s,
                      const struct jobtimes *j)
{
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "timeSec", time_s);
    cJSON *power = cJSON_AddNumberToObject(x, "powerWatts", 0);
    cJSON *en = cJSON_AddObjectToObject(x, "energyJoules");
    cJSON *js = cJSON_AddObjectToObject(x, "jobs");
    cJSON *pools = cJSON_AddObjectToObject(x, "pools");
    double watts = 0, stalled = 0;
    for (int i = 0; i < n; i++) {
        if (at[i] < 0)
            continue; /* not started yet: nothing used */
        const cJSON *l = c[i].l[at[i]].obj;
        bool ended = t > c[i].l[c[i].n - 1].t; /* past its last line, the shard's end */
        if (!ended)
            watts += num(l, "powerWatts");
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(l, "energyJoules"))
            if (cJSON_IsNumber(e))
                add(en, e->string, e->valuedouble);
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(l, "pools")) {
            cJSON *mp = cJSON_GetObjectItemCaseSensitive(pools, p->string);
            if (!mp)
                mp = cJSON_AddObjectToObject(pools, p->string);
            const cJSON *f;
            cJSON_ArrayForEach(f, p)
                if (cJSON_IsNumber(f))
                    add(mp, f->string, ended && strcmp(f->string, "energyJoules") ? 0 : f->valuedouble);
        }
        stalled = fmax(stalled, num(cJSON_GetObjectItemCaseSensitive(l, "jobs"), "stalled"));
    }
    cJSON_SetNumberHelper(power, watts);
    int started = at_or_before(j->start, j->ncompleted, t), done = at_or_before(j->end, j->ncompleted, t);
    int st = (int)fmin(stalled, j->stalled);
    cJSON_AddNumberToObject(js, "waiting", j->total - started - st);
    cJSON_AddNumberToObject(js, "running", started - done);
    cJSON_AddNumberToObject(js, "completed", done);
    cJSON_AddNumberToObject(js, "stalled", st);
    return x;
}

/* Each line's time on the merged course: a line before the shard's last is at the first tick at or
 * after a multiple of the interval, so it counts at the last multiple at or before it (shards'
 * ticks need not meet; a tick longer than the interval skips multiples);
 * the last line, the shard's end, at its own time. */
static void on_grid(struct course *c, int64_t interval_ns)
{
    for (int k = 0; interval_ns > 0 && k + 1 < c->n; k++) {
        c->l[k].t = c->l[k].t / interval_ns * interval_ns;
        c->l[k].time_s = (double)c->l[k].t / 1e9;
    }
}

int run_merge_course(const char *const *texts, const size_t *lens, const char *const *dirs, int n,
                     int64_t interval_ns, const char *jobs, char **out, char *err, size_t errlen)
{
    *out = NULL;
    struct course *c = calloc((size_t)n + 1, sizeof *c);
    int *at = calloc((size_t)n + 1, sizeof *at);
    if (!c || !at)
        abort();
    int rc = 0, total = 0;
    for (int i = 0; i < n && !rc; i++) {
        rc = parse(texts[i], lens[i], dirs[i], &c[i], err, errlen);
        on_grid(&c[i], interval_ns);
        total += c[i].n;
    }
    int64_t *times = malloc(sizeof *times * (size_t)(total + 1));
    if (!times)
        abort();
    int nt = 0;
    for (int i = 0; i < n && !rc; i++)
        for (int k = 0; k < c[i].n; k++)
            times[nt++] = c[i].l[k].t;
    qsort(times, (size_t)nt, sizeof *times, cmp_i64);
    struct jobtimes j;
    job_times(rc ? NULL : jobs, &j);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        abort();
    for (int i = 0; i < n; i++)
        at[i] = -1;
    for (int k = 0; k < nt && !rc; k++) {
        if (k && times[k] == times[k - 1])
            continue;
        double time_s = 0;
        bool have = false;
        for (int i = 0; i < n; i++) {
            while (at[i] + 1 < c[i].n && c[i].l[at[i] + 1].t <= times[k])
                at[i]++;
            if (!have && at[i] >= 0 && c[i].l[at[i]].t == times[k]) {
                time_s = c[i].l[at[i]].time_s;
                have = true;
            }
        }
        cJSON *x = line_at(c, n, at, times[k], time_s, &j);
        char *s = cJSON_PrintUnformatted(x);
        cJSON_Delete(x);
        if (!s)
            abort();
        fputs(s, f);
        fputc('\n', f);
        free(s);
    }
    if (fclose(f))
        abort();
    if (rc)
        free(text);
    else
        *out = text;
    free(j.start);
    free(j.end);
    free(times);
    for (int i = 0; i < n; i++) {
        cJSON_Delete(c[i].lines);
        free(c[i].l);
    }
    free(c);
    free(at);
    return rc;
}
