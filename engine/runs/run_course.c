/* run_course: a run's course.jsonl, one line per interval of emulated time; see run_course.h. */
#include "run_course.h"

#include "engine.h"
#include "run.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void init(struct run_course *c, const struct engine *e, int64_t interval_ns)
{
    memset(c, 0, sizeof *c);
    c->f.fd = -1;
    c->interval_ns = interval_ns > 0 ? interval_ns : RUN_COURSE_INTERVAL_S * 1000000000LL;
    c->last_ns = -1;
    c->npools = e->spec.npools;
}

int run_course_open(struct run_course *c, int dfd, const char *dir, const struct engine *e, int64_t interval_ns,
                    char *err, size_t errlen)
{
    init(c, e, interval_ns);
    if (line_file_create(&c->f, dfd, dir, "course.jsonl", err, errlen))
        return -1;
    c->last_ns = 0; /* the run starts with nothing used */
    return 0;
}

/* The time of the previous line: the file's last (the file as the checkpoint left it). */
static void take_last(struct run_course *c, int dfd)
{
    size_t len;
    char *text = run_files_read(dfd, "course.jsonl", (size_t)1 << 31, &len);
    if (!text || !len) {
        free(text);
        c->last_ns = text ? 0 : -1; /* an empty file: the run's start */
        return;
    }
    size_t start = len - 1; /* the last line: after the newline before the final one */
    while (start > 0 && text[start - 1] != '\n')
        start--;
    cJSON *x = cJSON_ParseWithLength(text + start, len - start);
    free(text);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(x, "timeSec");
    c->last_ns = cJSON_IsNumber(t) ? llround(t->valuedouble * 1e9) : 0;
    cJSON_Delete(x);
}

int run_course_resume(struct run_course *c, int dfd, const char *dir, const struct engine *e, int64_t interval_ns,
                      off_t len, char *err, size_t errlen)
{
    init(c, e, interval_ns);
    if (line_file_resume(&c->f, dfd, dir, "course.jsonl", len, err, errlen))
        return -1;
    take_last(c, dfd);
    return 0;
}

struct pool_sample {
    double power_w, energy_j;
    int packages_capped, packages_throttled, gpus_capped, gpus_throttled;
    double cap_w;
};

/* One line: the run's state now. */
static void sample(struct run_course *c, const struct engine *e, const struct run *r)
{
    struct pool_sample *ps = calloc((size_t)c->npools + 1, sizeof *ps);
    if (!ps)
        abort();
    for (int i = 0; i < r->nnodes && i < e->nnodes; i++) {
        struct pool_sample *p = &ps[e->spec.nodes[i].pool];
        const struct node *nd = &e->nodes[i];
        p->power_w += r->it_node_w[i];
        p->energy_j += (double)r->nodes[i].delta_uj / 1e6;
        for (int k = 0; k < nd->state.npkgs; k++) {
            const struct phys_pkg_state *pk = &nd->state.pkg[k];
            if (isfinite(pk->cap_w)) { /* a PL1 or HSMP cap in force */
                p->packages_capped++;
                p->cap_w += pk->cap_w;
            }
            p->packages_throttled += pk->capped != 0; /* the interval's power set by a cap */
        }
        for (int g = 0; g < nd->gparams.count; g++) {
            const struct phys_gpu *gs = &nd->gstate.g[g];
            if (gs->limit_w > 0 && gs->limit_w < nd->gparams.default_w) { /* below its default limit */
                p->gpus_capped++;
                p->cap_w += gs->limit_w;
            }
            p->gpus_throttled += gs->capped;
        }
    }
    double power_w = 0;
    for (int p = 0; p < c->npools; p++)
        power_w += ps[p].power_w;
    uint64_t cls[JOB_NCLASSES], idle, nodes;
    run_energy(r, cls, &idle, &nodes);
    double nodes_j = (double)nodes / 1e6;
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "timeSec", (double)r->now_ns / 1e9);
    cJSON_AddNumberToObject(x, "powerWatts", power_w);
    cJSON *en = cJSON_AddObjectToObject(x, "energyJoules");
    for (int k = 0; k < JOB_NCLASSES; k++)
        cJSON_AddNumberToObject(en, job_class_names[k], (double)cls[k] / 1e6);
    cJSON_AddNumberToObject(en, "idle", (double)idle / 1e6);
    cJSON_AddNumberToObject(en, "nodes", nodes_j);
    cJSON *js = cJSON_AddObjectToObject(x, "jobs");
    cJSON_AddNumberToObject(js, "waiting", r->count[JS_PENDING] + r->count[JS_WAITING]);
    cJSON_AddNumberToObject(js, "running", r->count[JS_RUNNING]);
    cJSON_AddNumberToObject(js, "completed", r->count[JS_COMPLETED]);
    cJSON_AddNumberToObject(js, "stalled", r->count[JS_STALLED]);
    if (run_sharded(r))
        cJSON_AddNumberToObject(js, "elsewhere", r->count[JS_ELSEWHERE]);
    cJSON *pools = cJSON_AddObjectToObject(x, "pools");
    for (int p = 0; p < c->npools; p++) {
        if (!e->spec.pools[p].count)
            continue;
        cJSON *o = cJSON_AddObjectToObject(pools, e->spec.pools[p].name);
        cJSON_AddNumberToObject(o, "powerWatts", ps[p].power_w);
        cJSON_AddNumberToObject(o, "energyJoules", ps[p].energy_j);
        cJSON_AddNumberToObject(o, "packagesCapped", ps[p].packages_capped);
        cJSON_AddNumberToObject(o, "gpusCapped", ps[p].gpus_capped);
        cJSON_AddNumberToObject(o, "capWatts", ps[p].cap_w);
        cJSON_AddNumberToObject(o, "packagesThrottled", ps[p].packages_throttled);
        cJSON_AddNumberToObject(o, "gpusThrottled", ps[p].gpus_throttled);
    }
    c->last_ns = r->now_ns;
    free(ps);
    char *s = cJSON_PrintUnformatted(x);
    cJSON_Delete(x);
    if (!s)
        abort();
    line_file_put(&c->f, s);
    free(s);
    if (c->f.err != c->said_err) { /* a failure and the recovery said once each */
        if (c->f.err)
            fprintf(stderr, "hwemu: run %s: cannot write %s: %s; its lines wait and are tried again at the next\n",
                    r->id, c->f.path, strerror(c->f.err));
        else
            fprintf(stderr, "hwemu: run %s: %s is written again\n", r->id, c->f.path);
        c->said_err = c->f.err;
    }
}

void run_course_tick(struct run_course *c, const struct engine *e, const struct run *r)
{
    if (c->f.fd < 0 || c->last_ns < 0)
        return;
    /* the next multiple of the interval after the last line */
    int64_t next = (c->last_ns / c->interval_ns + 1) * c->interval_ns;
    if (r->now_ns >= next)
        sample(c, e, r);
}

void run_course_close(struct run_course *c, const struct engine *e, const struct run *r, bool final)
{
    if (c->f.fd < 0)
        return;
    if (final && c->last_ns >= 0 && r->now_ns > c->last_ns)
        sample(c, e, r);
    line_file_close(&c->f);
}
