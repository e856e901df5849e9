/* cli_run_show: `hwemu run`'s progress line on a terminal and its readable summary; see
 * cli_run_show.h. The line is the style of `hwemu serve`'s start progress: one line on stderr
 * rewritten in place ("\r...\033[K") and erased at the end. */
#include "cli_run_show.h"
#include "diag.h"
#include "runs.h"
#include "textfile.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SHOW_EVERY_NS 100000000LL

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* "1h02m03s", "4m05s", "12s" */
static void hms(char *b, size_t n, double s)
{
    long t = s > 0 ? (long)(s + 0.5) : 0;
    if (t >= 3600)
        snprintf(b, n, "%ldh%02ldm%02lds", t / 3600, t / 60 % 60, t % 60);
    else if (t >= 60)
        snprintf(b, n, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(b, n, "%lds", t);
}

/* "812.3 J", "12.41 kJ", "3.207 MJ", "1.500 GJ" */
static void joules(char *b, size_t n, double j)
{
    static const char *const unit[] = {"J", "kJ", "MJ", "GJ", "TJ"};
    int u = 0;
    while (j >= 1000 && u < 4)
        j /= 1000, u++;
    snprintf(b, n, "%.*f %s", u ? 3 : 1, j, unit[u]);
}

void run_show_start(struct run_show *s)
{
    *s = (struct run_show){.on = isatty(STDERR_FILENO), .t0 = mono_ns()};
}

void run_show_tick(struct run_show *s, struct runs *m)
{
    if (!s->on)
        return;
    int64_t now = mono_ns();
    if (now - s->last < SHOW_EVERY_NS)
        return;
    s->last = now;
    struct runs_progress p;
    if (!runs_progress(m, &p))
        return;
    char t[32], e[32], left[48] = "time left unknown";
    hms(t, sizeof t, p.time_s);
    joules(e, sizeof e, p.energy_j);
    /* the time left: the wall time so far per job ended, for the jobs not ended yet */
    int ended = p.completed + p.stalled;
    if (ended > 0) {
        char l[32];
        hms(l, sizeof l, (double)(now - s->t0) / 1e9 * (p.total - ended) / ended);
        snprintf(left, sizeof left, "about %s left", l);
    }
    fprintf(stderr, "\rhwemu run: %s emulated; jobs %d waiting, %d running, %d completed, %d stalled of %d; %s; %s\033[K",
            t, p.waiting, p.running, p.completed, p.stalled, p.total, e, left);
    s->shown = true;
}

void run_show_end(struct run_show *s)
{
    if (s->shown)
        fputs("\r\033[K", stderr);
    s->shown = false;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "?";
}

static cJSON *read_summary(const char *path)
{
    struct diag d = {0};
    char *text = textfile_read(path, NULL, &d);
    diag_free(&d); /* none: a suspended run (its status is shown instead) */
    cJSON *x = text ? cJSON_Parse(text) : NULL;
    free(text);
    return x;
}

void run_show_summary(FILE *out, const char *runs_dir, const char *id, const cJSON *status)
{
    char *path = NULL, *dir = NULL;
    if (asprintf(&dir, "%s/%s", runs_dir, id) < 0 || asprintf(&path, "%s/summary.json", dir) < 0)
        abort();
    cJSON *file = read_summary(path);
    const cJSON *x = file ? file : status;
    if (!x) {
        free(path);
        free(dir);
        return;
    }
    char t[32], b[32];
    hms(t, sizeof t, num(x, "timeSec"));
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(x, "jobs");
    fprintf(out, "run %s %s after %s emulated", str(x, "runId"), str(x, "state"), t);
    if (file)
        fprintf(out, " (makespan %.1f s)", num(x, "makespanSec"));
    fprintf(out, "\n  jobs      %d: %d completed, %d stalled", (int)num(js, "total"), (int)num(js, "completed"),
            (int)num(js, "stalled"));
    if (num(js, "running") + num(js, "waiting") + num(js, "pending") > 0)
        fprintf(out, ", %d running, %d waiting", (int)num(js, "running"), (int)(num(js, "waiting") + num(js, "pending")));
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(x, "energyJoules");
    joules(b, sizeof b, num(en, "nodes"));
    fprintf(out, "\n  energy    %s", b);
    if (file)
        fprintf(out, ", mean power %.1f W", num(x, "meanPowerWatts"));
    const char *sep = "\n  by class  ";
    const cJSON *c;
    cJSON_ArrayForEach(c, en) /* the classes and idle: the parts of the nodes' energy */
        if (strcmp(c->string, "nodes") && strcmp(c->string, "resumeGap") && cJSON_IsNumber(c)) {
            joules(b, sizeof b, c->valuedouble);
            fprintf(out, "%s%s %s", sep, c->string, b);
            sep = ", ";
        }
    const cJSON *fac = cJSON_GetObjectItemCaseSensitive(x, "facility");
    if (fac && num(fac, "pue") > 0) {
        joules(b, sizeof b, num(fac, "energyJoules"));
        fprintf(out, "\n  facility  %s (PUE %.2f)", b, num(fac, "pue"));
    }
    fprintf(out, "\n  outputs   %s/%s\n", dir, file ? " (summary.json, jobs.jsonl, trace.jsonl)" : "");
    cJSON_Delete(file);
    free(path);
    free(dir);
}
