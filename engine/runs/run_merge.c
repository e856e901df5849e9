/* run_merge: the shards' run directories made one; see run_merge.h. */
#include "run_merge.h"

#include "diag.h"
#include "run.h"
#include "run_files.h"
#include "run_merge_course.h"
#include "trace.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_MAX ((size_t)1 << 36)

struct jline {
    const char *id;  /* in obj */
    const char *state;
    cJSON *obj;
    char *text;      /* the line as the shard wrote it */
    int lineno;
};

struct shard {
    const struct run_merge_in *in;
    cJSON *sum;
    int index, count;
    const char *key;
    struct jline *lines;
    int nlines;
};

static int by_id(const void *a, const void *b)
{
    return strcmp(((const struct jline *)a)->id, ((const struct jline *)b)->id);
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int by_index(const void *a, const void *b)
{
    return ((const struct shard *)a)->index - ((const struct shard *)b)->index;
}

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* The shard's summary.json: sharded, placed by the cluster, ended. 0, or -1 with err. */
static int read_summary(struct shard *s, char *err, size_t errlen)
{
    const struct run_merge_in *in = s->in;
    if (!in->summary) {
        snprintf(err, errlen, "%s has no summary.json: its run has not ended (or it is not a run directory); merge "
                 "the shards' run directories once every shard's run has ended", in->dir);
        return -1;
    }
    s->sum = cJSON_ParseWithLength(in->summary, in->summary_len);
    if (!cJSON_IsObject(s->sum)) {
        snprintf(err, errlen, "%s/summary.json is not the JSON an engine writes", in->dir);
        return -1;
    }
    const char *sh = str_of(s->sum, "shard"), *pl = str_of(s->sum, "placement"), *st = str_of(s->sum, "state");
    char tail;
    if (!sh || sscanf(sh, "%d/%d%c", &s->index, &s->count, &tail) != 2 || s->count < 2 || s->index < 0 ||
        s->index >= s->count) {
        snprintf(err, errlen, "%s is not a shard's run (its summary.json has no \"shard\": \"I/N\"): an unsharded "
                 "engine's run is whole already", in->dir);
        return -1;
    }
    if (!pl || strcmp(pl, "kubernetes")) {
        snprintf(err, errlen, "%s: shard %s placed the trace's jobs with the %s placement on its own nodes (no "
                 "--kubeconfig): every shard ran the whole trace, so there is no one run to merge; run the shards "
                 "with --kubeconfig", in->dir, sh, pl ? pl : "(unknown)");
        return -1;
    }
    if (!st || (strcmp(st, "completed") && strcmp(st, "stalled"))) {
        snprintf(err, errlen, "%s: shard %s's run is %s: merge runs that ended (completed or stalled)", in->dir, sh,
                 st ? st : "(no state)");
        return -1;
    }
    s->key = str_of(s->sum, "runKey");
    if (!s->key) {
        snprintf(err, errlen, "%s/summary.json has no runKey", in->dir);
        return -1;
    }
    return 0;
}

/* The shard's jobs.jsonl as lines sorted by job id (bsearch). 0, or -1 with err. */
static int read_jobs(struct shard *s, char *err, size_t errlen)
{
    const char *p = s->in->jobs ? s->in->jobs : "", *end = p + (s->in->jobs ? s->in->jobs_len : 0);
    for (int ln = 1; p < end; ln++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n) {
            s->lines = realloc(s->lines, sizeof *s->lines * (size_t)(s->nlines + 1));
            if (!s->lines)
                abort();
            struct jline *l = &s->lines[s->nlines++];
            *l = (struct jline){.obj = cJSON_ParseWithLength(p, n), .text = strndup(p, n), .lineno = ln};
            l->id = str_of(l->obj, "jobId");
            l->state = str_of(l->obj, "state");
            if (!l->text)
                abort();
            if (!l->id || !l->state) {
                snprintf(err, errlen, "%s/jobs.jsonl:%d: not a job's line (no jobId or state)", s->in->dir, ln);
                return -1;
            }
        }
        p += n + 1;
    }
    qsort(s->lines, (size_t)s->nlines, sizeof *s->lines, by_id);
    for (int k = 1; k < s->nlines; k++)
        if (!strcmp(s->lines[k].id, s->lines[k - 1].id)) {
            snprintf(err, errlen, "%s/jobs.jsonl:%d and :%d: job %s has two lines", s->in->dir,
                     s->lines[k - 1].lineno, s->lines[k].lineno, s->lines[k].id);
            return -1;
        }
    return 0;
}

static struct jline *find_line(const struct shard *s, const char *id)
{
    struct jline key = {.id = id};
    return bsearch(&key, s->lines, (size_t)s->nlines, sizeof *s->lines, by_id);
}

static void shard_free(struct shard *s)
{
    for (int k = 0; k < s->nlines; k++) {
        cJSON_Delete(s->lines[k].obj);
        free(s->lines[k].text);
    }
    free(s->lines);
    cJSON_Delete(s->sum);
}

/* The shards agree: one key, one count, each index once, every index given, the same trace. */
static int check_shards(struct shard *sh, int n, char *err, size_t errlen)
{
    for (int i = 1; i < n; i++) {
        if (strcmp(sh[i].key, sh[0].key)) {
            snprintf(err, errlen, "%s is run key %s and %s is run key %s: they are different runs (merge the run "
                     "directories of one run key)", sh[0].in->dir, sh[0].key, sh[i].in->dir, sh[i].key);
            return -1;
        }
        if (sh[i].count != sh[0].count) {
            snprintf(err, errlen, "%s is a shard of %d and %s a shard of %d: they are different runs", sh[0].in->dir,
                     sh[0].count, sh[i].in->dir, sh[i].count);
            return -1;
        }
    }
    qsort(sh, (size_t)n, sizeof *sh, by_index);
    for (int i = 1; i < n; i++)
        if (sh[i].index == sh[i - 1].index) {
            snprintf(err, errlen, "%s and %s are both shard %d/%d: give each shard's run directory once",
                     sh[i - 1].in->dir, sh[i].in->dir, sh[i].index, sh[i].count);
            return -1;
        }
    if (n != sh[0].count) {
        size_t len = (size_t)snprintf(err, errlen, "run key %s has %d shards and %d run director%s %s given; "
                                      "missing:", sh[0].key, sh[0].count, n, n == 1 ? "y" : "ies", n == 1 ? "was" : "were");
        for (int x = 0, i = 0; x < sh[0].count && len < errlen; x++) {
            if (i < n && sh[i].index == x)
                i++;
            else
                len += (size_t)snprintf(err + len, errlen - len, " shard %d/%d", x, sh[0].count);
        }
        return -1;
    }
    for (int i = 1; i < n; i++)
        if (!sh[i].in->trace || !sh[0].in->trace || sh[i].in->trace_len != sh[0].in->trace_len ||
            memcmp(sh[i].in->trace, sh[0].in->trace, sh[0].in->trace_len)) {
            snprintf(err, errlen, "%s/trace.jsonl differs from %s/trace.jsonl: the shards did not run the same trace",
                     sh[i].in->dir, sh[0].in->dir);
            return -1;
        }
    return 0;
}

static void shard_name(const struct shard *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "%d/%d", s->index, s->count);
}

/* jobs.jsonl: per job of the trace, the one completed line, or a stalled-everywhere job's first
 * line. */
static int merge_jobs(struct shard *sh, int n, const struct trace *t, FILE *f, struct run_merge_out *out,
                      struct jline **chosen, char *err, size_t errlen)
{
    const char **ids = malloc(sizeof *ids * (size_t)(t->njobs ? t->njobs : 1));
    if (!ids)
        abort();
    for (int k = 0; k < t->njobs; k++)
        ids[k] = t->jobs[k].id;
    qsort(ids, (size_t)t->njobs, sizeof *ids, by_str);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < sh[i].nlines; k++)
            if (!bsearch(&sh[i].lines[k].id, ids, (size_t)t->njobs, sizeof *ids, by_str)) {
                snprintf(err, errlen, "%s/jobs.jsonl:%d: job %s is not in the trace", sh[i].in->dir,
                         sh[i].lines[k].lineno, sh[i].lines[k].id);
                free(ids);
                return -1;
            }
    free(ids);
    for (int k = 0; k < t->njobs; k++) {
        const char *id = t->jobs[k].id;
        int done = -1, stalled = 0;
        struct jline *pick = NULL;
        for (int i = 0; i < n; i++) {
            struct jline *l = find_line(&sh[i], id);
            if (l && !strcmp(l->state, "completed")) {
                if (done >= 0) {
                    char a[32], b[32];
                    shard_name(&sh[done], a, sizeof a);
                    shard_name(&sh[i], b, sizeof b);
                    snprintf(err, errlen, "job %s was completed on two shards, %s (%s) and %s (%s): the shards did "
                             "not share one run through the scheduler (were they given the same run key, and the "
                             "same API server?)", id, a, sh[done].in->dir, b, sh[i].in->dir);
                    return -1;
                }
                done = i;
                pick = l;
            }
            if (l && !strcmp(l->state, "stalled")) {
                stalled++;
                if (!pick)
                    pick = l;
            }
        }
        if (done < 0 && stalled != n) {
            size_t len = (size_t)snprintf(err, errlen, "job %s was completed on no shard and is not stalled on every "
                                          "one (", id);
            for (int i = 0; i < n && len < errlen; i++) {
                struct jline *l = find_line(&sh[i], id);
                char a[32];
                shard_name(&sh[i], a, sizeof a);
                len += (size_t)snprintf(err + len, errlen - len, "%s%s: %s", i ? ", " : "", a,
                                        l ? l->state : "no line");
            }
            if (len < errlen)
                snprintf(err + len, errlen - len, "): a shard's run is missing it or did not end whole");
            return -1;
        }
        chosen[k] = pick;
        if (done >= 0) {
            out->completed++;
            out->completed_on[sh[done].index]++;
        } else {
            out->stalled++;
        }
        fprintf(f, "%s\n", pick->text);
    }
    out->jobs_total = t->njobs;
    return 0;
}

/* The nodes of every shard in the spec's order (the k-th node of the spec is shard k mod N's
 * (k div N)-th); a node in two shards is refused. */
static int merge_nodes(struct shard *sh, int n, cJSON *nodes, struct run_merge_out *out, char *err, size_t errlen)
{
    int most = 0;
    for (int i = 0; i < n; i++)
        if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sh[i].sum, "nodes")) > most)
            most = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sh[i].sum, "nodes"));
    for (int pos = 0; pos < most; pos++)
        for (int i = 0; i < n; i++) {
            const cJSON *x = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sh[i].sum, "nodes"), pos);
            if (!x)
                continue;
            const char *name = str_of(x, "node");
            const cJSON *y;
            cJSON_ArrayForEach(y, nodes)
            {
                if (name && str_of(y, "node") && !strcmp(name, str_of(y, "node"))) {
                    snprintf(err, errlen, "node %s is in shard %d/%d's run (%s) and in another's: the runs are not "
                             "of one spec's disjoint shards", name, sh[i].index, sh[i].count, sh[i].in->dir);
                    return -1;
                }
            }
            out->energy_j += num_of(x, "energyJoules");
            cJSON_AddItemToArray(nodes, cJSON_Duplicate(x, true));
        }
    out->nodes = cJSON_GetArraySize(nodes);
    return 0;
}

static cJSON *merge_summary(struct shard *sh, int n, struct jline *const *chosen, int njobs,
                            struct run_merge_out *out, char *err, size_t errlen)
{
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "runId", sh[0].key); /* the merged run is the run key's */
    cJSON_AddStringToObject(x, "runKey", sh[0].key);
    cJSON_AddStringToObject(x, "state", out->stalled ? "stalled" : "completed");
    cJSON_AddStringToObject(x, "trace", str_of(sh[0].sum, "trace") ? str_of(sh[0].sum, "trace") : "");
    cJSON_AddStringToObject(x, "placement", "kubernetes");
    double time = 0, ticks = 0, makespan = 0, it = 0, fac = 0, power = 0, attempts = 0, place_us = 0;
    int placed = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *s = sh[i].sum;
        time = num_of(s, "timeSec") > time ? num_of(s, "timeSec") : time;
        ticks = num_of(s, "ticks") > ticks ? num_of(s, "ticks") : ticks;
        makespan = num_of(s, "makespanSec") > makespan ? num_of(s, "makespanSec") : makespan;
        it += num_of(cJSON_GetObjectItemCaseSensitive(s, "facility"), "itEnergyJoules");
        fac += num_of(cJSON_GetObjectItemCaseSensitive(s, "facility"), "energyJoules");
        power += num_of(s, "meanPowerWatts");
        attempts += num_of(s, "placementAttempts");
        int here = 0; /* jobs that started on this shard: what its placement time is per */
        for (int k = 0; k < sh[i].nlines; k++)
            here += num_of(sh[i].lines[k].obj, "startSec") >= 0 && strcmp(sh[i].lines[k].state, "elsewhere");
        place_us += num_of(s, "placementMicrosecondsPerPlacedJob") * here;
        placed += here;
    }
    cJSON_AddNumberToObject(x, "timeSec", time);
    cJSON_AddNumberToObject(x, "ticks", ticks);
    int count[JS_NSTATES] = {0}, bycls[JOB_NCLASSES][JS_NSTATES] = {{0}};
    for (int k = 0; k < njobs; k++)
        for (int s = 0; s < JS_ELSEWHERE; s++)
            if (!strcmp(chosen[k]->state, job_state_names[s])) {
                count[s]++;
                for (int c = 0; c < JOB_NCLASSES; c++)
                    if (str_of(chosen[k]->obj, "class") && !strcmp(str_of(chosen[k]->obj, "class"), job_class_names[c]))
                        bycls[c][s]++;
            }
    cJSON *js = cJSON_AddObjectToObject(x, "jobs");
    cJSON_AddNumberToObject(js, "total", njobs);
    for (int s = 0; s < JS_ELSEWHERE; s++)
        cJSON_AddNumberToObject(js, job_state_names[s], count[s]);
    cJSON *en = cJSON_AddObjectToObject(x, "energyJoules");
    const cJSON *e0;
    cJSON_ArrayForEach(e0, cJSON_GetObjectItemCaseSensitive(sh[0].sum, "energyJoules"))
    {
        double sum = 0;
        for (int i = 0; i < n; i++)
            sum += num_of(cJSON_GetObjectItemCaseSensitive(sh[i].sum, "energyJoules"), e0->string);
        cJSON_AddNumberToObject(en, e0->string, sum);
    }
    cJSON_AddNumberToObject(x, "makespanSec", makespan);
    cJSON *bc = cJSON_AddObjectToObject(x, "jobsByClass");
    for (int c = 0; c < JOB_NCLASSES; c++) {
        cJSON *o = cJSON_AddObjectToObject(bc, job_class_names[c]);
        for (int s = 0; s < JS_ELSEWHERE; s++)
            cJSON_AddNumberToObject(o, job_state_names[s], bycls[c][s]);
    }
    if (merge_nodes(sh, n, cJSON_AddArrayToObject(x, "nodes"), out, err, errlen)) {
        cJSON_Delete(x);
        return NULL;
    }
    cJSON *f = cJSON_AddObjectToObject(x, "facility");
    cJSON_AddNumberToObject(f, "itEnergyJoules", it);
    cJSON_AddNumberToObject(f, "energyJoules", fac);
    cJSON_AddNumberToObject(f, "pue", it > 0 ? fac / it : 0);
    cJSON_AddNumberToObject(x, "meanPowerWatts", power); /* each shard's over its own run's time */
    cJSON_AddNumberToObject(x, "placementMicrosecondsPerPlacedJob", placed ? place_us / placed : 0);
    cJSON_AddNumberToObject(x, "placementAttempts", attempts);
    cJSON *shards = cJSON_AddArrayToObject(x, "shards");
    for (int i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        char name[32];
        shard_name(&sh[i], name, sizeof name);
        cJSON_AddStringToObject(o, "shard", name);
        cJSON_AddStringToObject(o, "runDir", sh[i].in->dir);
        static const char *const keep[] = {"runId", "state", "timeSec", "ticks", "makespanSec", "resumes",
                                           "outputProblems"};
        for (size_t k = 0; k < sizeof keep / sizeof *keep; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(sh[i].sum, keep[k]);
            if (v)
                cJSON_AddItemToObject(o, keep[k], cJSON_Duplicate(v, true));
        }
        cJSON_AddNumberToObject(o, "jobsCompleted", out->completed_on[sh[i].index]);
        cJSON_AddItemToArray(shards, o);
    }
    return x;
}

/* An OTLP logs line's time and event name (its first record's). */
static int log_of(const char *text, size_t n, uint64_t *time, char *name, size_t cap)
{
    cJSON *o = cJSON_ParseWithLength(text, n);
    const cJSON *rec = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
                                   cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "resourceLogs"), 0), "scopeLogs"),
                               0),
            "logRecords"),
        0);
    const char *t = str_of(rec, "timeUnixNano"), *e = str_of(rec, "eventName");
    int rc = t && e ? 0 : -1;
    if (!rc) {
        *time = strtoull(t, NULL, 10);
        snprintf(name, cap, "%s", e);
    }
    cJSON_Delete(o);
    return rc;
}

struct logline {
    uint64_t time;
    int shard, seq;
    const char *p;
    size_t n;
};

static int by_time(const void *a, const void *b)
{
    const struct logline *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->shard != y->shard)
        return x->shard - y->shard;
    return x->seq - y->seq;
}

/* otlp/logs.jsonl: every shard's events by time, the stalled ones (every shard says them) once. */
static int merge_logs(struct shard *sh, int n, FILE *f, char *err, size_t errlen)
{
    struct logline *all = NULL;
    int nall = 0;
    for (int i = 0; i < n; i++) {
        const char *p = sh[i].in->logs, *end = p + sh[i].in->logs_len;
        for (int ln = 1; p && p < end; ln++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
            uint64_t t;
            char name[128];
            if (len && log_of(p, len, &t, name, sizeof name)) {
                snprintf(err, errlen, "%s/otlp/logs.jsonl:%d: not an OTLP logs line of a run", sh[i].in->dir, ln);
                free(all);
                return -1;
            }
            if (len && (i == 0 || strcmp(name, "joulie.sim.job.stalled"))) {
                all = realloc(all, sizeof *all * (size_t)(nall + 1));
                if (!all)
                    abort();
                all[nall] = (struct logline){.time = t, .shard = i, .seq = nall, .p = p, .n = len};
                nall++;
            }
            p += len + 1;
        }
    }
    qsort(all, (size_t)nall, sizeof *all, by_time);
    for (int k = 0; k < nall; k++)
        fprintf(f, "%.*s\n", (int)all[k].n, all[k].p);
    free(all);
    return 0;
}

static char *closed(FILE *f, char **buf)
{
    if (fclose(f))
        abort();
    return *buf;
}

int run_merge(const struct run_merge_in *in, int n, struct run_merge_out *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (n < 1) {
        snprintf(err, errlen, "no run directory given");
        return -1;
    }
    struct shard *sh = calloc((size_t)n, sizeof *sh);
    if (!sh)
        abort();
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        sh[i].in = &in[i];
        rc = read_summary(&sh[i], err, errlen);
    }
    if (!rc)
        rc = check_shards(sh, n, err, errlen);
    for (int i = 0; i < n && !rc; i++)
        rc = read_jobs(&sh[i], err, errlen);
    struct trace t = {0};
    struct diag d = {0};
    char label[4200];
    snprintf(label, sizeof label, "%s/trace.jsonl", n ? sh[0].in->dir : "");
    if (!rc && trace_parse(&t, label, sh[0].in->trace, sh[0].in->trace_len, &d)) {
        snprintf(err, errlen, "%s does not load (%d problem%s, first: %s)", label, d.count, d.count == 1 ? "" : "s",
                 d.count ? d.msgs[0] : "?");
        rc = -1;
    }
    diag_free(&d);
    struct jline **chosen = NULL;
    size_t jobs_len = 0, logs_len = 0, metrics_len = 0;
    if (!rc) {
        snprintf(out->key, sizeof out->key, "%s", sh[0].key);
        out->shards = n;
        out->completed_on = calloc((size_t)n, sizeof *out->completed_on);
        chosen = calloc((size_t)(t.njobs ? t.njobs : 1), sizeof *chosen);
        if (!out->completed_on || !chosen)
            abort();
        FILE *f = open_memstream(&out->jobs, &jobs_len);
        if (!f)
            abort();
        rc = merge_jobs(sh, n, &t, f, out, chosen, err, errlen);
        closed(f, &out->jobs);
    }
    cJSON *sum = rc ? NULL : merge_summary(sh, n, chosen, t.njobs, out, err, errlen);
    if (!rc && !sum)
        rc = -1;
    /* the shards' course interval (summary.json's courseIntervalSec), when they all say the same:
     * the merged course's grid */
    double iv = rc ? 0 : num_of(sh[0].sum, "courseIntervalSec");
    for (int i = 1; i < n; i++)
        iv = num_of(sh[i].sum, "courseIntervalSec") == iv ? iv : 0;
    if (sum && iv > 0)
        cJSON_AddNumberToObject(sum, "courseIntervalSec", iv);
    if (sum) {
        char *s = cJSON_Print(sum);
        if (!s || asprintf(&out->summary, "%s\n", s) < 0)
            abort();
        free(s);
        cJSON_Delete(sum);
    }
    bool logs = false, metrics = false;
    for (int i = 0; i < n; i++) {
        logs |= in[i].logs != NULL;
        metrics |= in[i].metrics != NULL;
    }
    if (!rc && logs) {
        FILE *f = open_memstream(&out->logs, &logs_len);
        if (!f)
            abort();
        rc = merge_logs(sh, n, f, err, errlen);
        closed(f, &out->logs);
    }
    if (!rc && metrics) { /* shard after shard: each line names its shard's run (hwemu.run.id) */
        FILE *f = open_memstream(&out->metrics, &metrics_len);
        if (!f)
            abort();
        for (int i = 0; i < n; i++)
            if (sh[i].in->metrics)
                fwrite(sh[i].in->metrics, 1, sh[i].in->metrics_len, f);
        closed(f, &out->metrics);
    }
    bool course = true; /* every shard's, or none (a shard of an hwemu before course.jsonl) */
    for (int i = 0; i < n; i++)
        course &= in[i].course != NULL;
    if (!rc && course) {
        const char **texts = calloc((size_t)n, sizeof *texts), **dirs = calloc((size_t)n, sizeof *dirs);
        size_t *lens = calloc((size_t)n, sizeof *lens);
        if (!texts || !dirs || !lens)
            abort();
        for (int i = 0; i < n; i++) { /* in shard order */
            texts[i] = sh[i].in->course;
            lens[i] = sh[i].in->course_len;
            dirs[i] = sh[i].in->dir;
        }
        rc = run_merge_course(texts, lens, dirs, n, iv > 0 ? llround(iv * 1e9) : 0, out->jobs, &out->course, err, errlen);
        free(texts);
        free(dirs);
        free(lens);
    }
    if (!rc) {
        out->trace = malloc(sh[0].in->trace_len + 1);
        if (!out->trace)
            abort();
        memcpy(out->trace, sh[0].in->trace, sh[0].in->trace_len);
        out->trace[sh[0].in->trace_len] = 0;
        out->trace_len = sh[0].in->trace_len;
    }
    free(chosen);
    trace_free(&t);
    for (int i = 0; i < n; i++)
        shard_free(&sh[i]);
    free(sh);
    if (rc)
        run_merge_free(out);
    return rc;
}

void run_merge_free(struct run_merge_out *out)
{
    free(out->trace);
    free(out->jobs);
    free(out->summary);
    free(out->logs);
    free(out->metrics);
    free(out->course);
    free(out->completed_on);
    memset(out, 0, sizeof *out);
}

/* ---- directories ---------------------------------------------------------------------------- */

/* name in dfd, or NULL when absent; -1 in *bad with err for another failure. */
static char *read_one(int dfd, const char *dir, const char *name, size_t *len, int *bad, char *err, size_t errlen)
{
    char *text = run_files_read(dfd, name, READ_MAX, len);
    if (!text && errno != ENOENT) {
        snprintf(err, errlen, "cannot read %s/%s: %s", dir, name,
                 errno == EINVAL ? "not a regular file (a symbolic link?): refused" : strerror(errno));
        *bad = -1;
    }
    return text;
}

static int write_out(const char *out_dir, const struct run_merge_out *m, char *err, size_t errlen)
{
    int dfd = run_files_mkdir(AT_FDCWD, out_dir);
    if (dfd < 0) {
        snprintf(err, errlen, "cannot make %s: %s%s", out_dir, strerror(errno),
                 errno == EEXIST ? " (the merge writes into a new directory only: give another --out)" : "");
        return -1;
    }
    int rc = run_files_create(dfd, out_dir, "trace.jsonl", m->trace, m->trace_len, 0644, err, errlen) ||
             run_files_create(dfd, out_dir, "jobs.jsonl", m->jobs, strlen(m->jobs), 0644, err, errlen) ||
             run_files_create(dfd, out_dir, "summary.json", m->summary, strlen(m->summary), 0644, err, errlen) ||
             (m->course && run_files_create(dfd, out_dir, "course.jsonl", m->course, strlen(m->course), 0644, err, errlen));
    if (!rc && (m->logs || m->metrics)) {
        char shown[4200];
        snprintf(shown, sizeof shown, "%s/otlp", out_dir);
        int odfd = run_files_mkdir(dfd, "otlp");
        if (odfd < 0) {
            snprintf(err, errlen, "cannot make %s: %s", shown, strerror(errno));
            rc = -1;
        } else {
            rc = (m->logs && run_files_create(odfd, shown, "logs.jsonl", m->logs, strlen(m->logs), 0644, err, errlen)) ||
                 (m->metrics &&
                  run_files_create(odfd, shown, "metrics.jsonl", m->metrics, strlen(m->metrics), 0644, err, errlen));
            close(odfd);
        }
    }
    close(dfd);
    return rc ? -1 : 0;
}

int run_merge_dirs(const char *const *dirs, int n, const char *out_dir, struct run_merge_out *out, char *err,
                   size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct run_merge_in *in = calloc((size_t)(n ? n : 1), sizeof *in);
    if (!in)
        abort();
    int bad = 0;
    for (int i = 0; i < n && !bad; i++) {
        in[i].dir = dirs[i];
        int dfd = run_files_opendir(AT_FDCWD, dirs[i]);
        if (dfd < 0) {
            snprintf(err, errlen, "cannot open the run directory %s: %s", dirs[i],
                     errno == ELOOP || errno == ENOTDIR ? "a symbolic link or not a directory: refused" : strerror(errno));
            bad = -1;
            break;
        }
        in[i].summary = read_one(dfd, dirs[i], "summary.json", &in[i].summary_len, &bad, err, errlen);
        if (!bad)
            in[i].trace = read_one(dfd, dirs[i], "trace.jsonl", &in[i].trace_len, &bad, err, errlen);
        if (!bad)
            in[i].jobs = read_one(dfd, dirs[i], "jobs.jsonl", &in[i].jobs_len, &bad, err, errlen);
        if (!bad)
            in[i].course = read_one(dfd, dirs[i], "course.jsonl", &in[i].course_len, &bad, err, errlen);
        int odfd = bad ? -1 : run_files_opendir(dfd, "otlp");
        if (odfd >= 0) {
            char shown[4200];
            snprintf(shown, sizeof shown, "%s/otlp", dirs[i]);
            in[i].logs = read_one(odfd, shown, "logs.jsonl", &in[i].logs_len, &bad, err, errlen);
            if (!bad)
                in[i].metrics = read_one(odfd, shown, "metrics.jsonl", &in[i].metrics_len, &bad, err, errlen);
            close(odfd);
        }
        close(dfd);
        if (!bad && !in[i].trace && in[i].summary) {
            snprintf(err, errlen, "%s has no trace.jsonl: not a run directory", dirs[i]);
            bad = -1;
        }
    }
    int rc = bad ? -1 : run_merge(in, n, out, err, errlen);
    if (!rc && write_out(out_dir, out, err, errlen)) {
        run_merge_free(out);
        rc = -1;
    }
    for (int i = 0; i < n; i++) {
        free((char *)in[i].summary);
        free((char *)in[i].trace);
        free((char *)in[i].jobs);
        free((char *)in[i].logs);
        free((char *)in[i].metrics);
        free((char *)in[i].course);
    }
    free(in);
    return rc;
}
