/* Unit tests of run_merge (engine/runs/run_merge.c, docs/runs.md "Merging the shards' runs"): two
 * shards' run directories of a four-job trace, built here as a sharded engine writes them (one
 * job completed on each shard and one more on shard 1, one stalled on both, the others
 * "elsewhere"), so every expected value below is read off these inputs:
 * - the merge: one line a job in the trace's order, each from the shard that completed it, the
 *   stalled job's once; the summary's counts, the nodes in the spec's order (the k-th node of
 *   the spec is shard k mod 2's), energies and facility summed, times the longest, the shards
 *   listed; the logs by time with the stalled event once; the metrics shard after shard;
 * - every refusal, each naming what is wrong: a job completed on two shards or on none, two run
 *   keys, a shard missing or given twice, a standalone or unsharded run, a run not ended, two
 *   traces, a node in two shards;
 * - run_merge_dirs: the files written into a new directory, an existing --out refused;
 * - course.jsonl (test_course): the shards' lines on their shared times, summed, an ended
 *   shard's energy carried on, jobs by state from the merged jobs' times, the last line the
 *   merged summary's; no merged course when a shard has none; a bad line refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_merge.h"

static const char trace[] = "{\"type\":\"job\",\"jobId\":\"a\",\"submitTimeOffsetSec\":0}\n"
                            "{\"type\":\"job\",\"jobId\":\"b\",\"submitTimeOffsetSec\":1}\n"
                            "{\"type\":\"job\",\"jobId\":\"c\",\"submitTimeOffsetSec\":2,"
                            "\"podTemplate\":{\"requests\":{\"nvidia.com/gpu\":\"16\"}}}\n"
                            "{\"type\":\"job\",\"jobId\":\"d\",\"submitTimeOffsetSec\":3,\"intentClass\":\"performance\"}\n";

#define LINE(id, cls, state, node, start) \
    "{\"jobId\":\"" id "\",\"class\":\"" cls "\",\"state\":\"" state "\",\"node\":" node ",\"startSec\":" start "}\n"

static const char jobs0[] = LINE("a", "standard", "completed", "\"n0\"", "2")
    LINE("c", "standard", "stalled", "null", "-1") LINE("b", "standard", "elsewhere", "null", "-1")
        LINE("d", "performance", "elsewhere", "null", "-1");
static const char jobs1[] = LINE("c", "standard", "stalled", "null", "-1") LINE("a", "standard", "elsewhere", "null", "-1")
    LINE("b", "standard", "completed", "\"n1\"", "3") LINE("d", "performance", "completed", "\"n3\"", "5");

static char *summary(const char *key, const char *shard, const char *placement, const char *state, double time,
                     const char *n_a, double e_a, const char *n_b, double e_b)
{
    char *s;
    if (asprintf(&s,
                 "{\"runId\":\"run-%s\",\"runKey\":\"%s\",\"shard\":\"%s\",\"state\":\"%s\",\"trace\":\"t.jsonl\","
                 "\"placement\":\"%s\",\"timeSec\":%g,\"ticks\":%g,\"energyJoules\":{\"standard\":%g,"
                 "\"performance\":1,\"idle\":2,\"resumeGap\":0,\"nodes\":%g},\"makespanSec\":%g,"
                 "\"nodes\":[{\"node\":\"%s\",\"energyJoules\":%g},{\"node\":\"%s\",\"energyJoules\":%g}],"
                 "\"facility\":{\"itEnergyJoules\":%g,\"energyJoules\":%g,\"pue\":1.1},\"meanPowerWatts\":%.17g,"
                 "\"placementMicrosecondsPerPlacedJob\":10,\"placementAttempts\":4}",
                 shard, key, shard, state, placement, time, time, e_a, e_a + e_b, time - 1, n_a, e_a, n_b, e_b,
                 e_a + e_b, (e_a + e_b) * 1.1, (e_a + e_b) / time) < 0)
        abort();
    return s;
}

static const char logs0[] =
    "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"100\",\"eventName\":\"joulie.sim.job.stalled\"}]}]}]}\n"
    "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"200\",\"eventName\":\"joulie.sim.job.started\"}]}]}]}\n";
static const char logs1[] =
    "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"100\",\"eventName\":\"joulie.sim.job.stalled\"}]}]}]}\n"
    "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"150\",\"eventName\":\"joulie.sim.job.started\"}]}]}]}\n";

struct two {
    struct run_merge_in in[2];
    char *sum[2];
};

/* the two shards as above (given in the order 1, 0: the merge sorts them) */
static void two_shards(struct two *t)
{
    memset(t, 0, sizeof *t);
    t->sum[0] = summary("k1", "1/2", "kubernetes", "completed", 60, "n1", 30, "n3", 50);
    t->sum[1] = summary("k1", "0/2", "kubernetes", "stalled", 50, "n0", 40, "n2", 20);
    t->in[0] = (struct run_merge_in){.dir = "s1", .trace = trace, .trace_len = strlen(trace), .jobs = jobs1,
                                     .jobs_len = strlen(jobs1), .summary = t->sum[0], .summary_len = strlen(t->sum[0]),
                                     .logs = logs1, .logs_len = strlen(logs1), .metrics = "m1\n", .metrics_len = 3};
    t->in[1] = (struct run_merge_in){.dir = "s0", .trace = trace, .trace_len = strlen(trace), .jobs = jobs0,
                                     .jobs_len = strlen(jobs0), .summary = t->sum[1], .summary_len = strlen(t->sum[1]),
                                     .logs = logs0, .logs_len = strlen(logs0), .metrics = "m0\n", .metrics_len = 3};
}

static void two_free(struct two *t)
{
    free(t->sum[0]);
    free(t->sum[1]);
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static void test_merge(void **state)
{
    (void)state;
    struct two t;
    two_shards(&t);
    struct run_merge_out m;
    char err[2048] = "";
    int rc = run_merge(t.in, 2, &m, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
    /* a from shard 0, b from shard 1, c (stalled on both) shard 0's, d from shard 1: trace order */
    const char *want = LINE("a", "standard", "completed", "\"n0\"", "2") LINE("b", "standard", "completed", "\"n1\"", "3")
        LINE("c", "standard", "stalled", "null", "-1") LINE("d", "performance", "completed", "\"n3\"", "5");
    assert_string_equal(m.jobs, want);
    assert_string_equal(m.trace, trace);
    assert_string_equal(m.key, "k1");
    assert_int_equal(m.shards, 2);
    assert_int_equal(m.jobs_total, 4);
    assert_int_equal(m.completed, 3);
    assert_int_equal(m.stalled, 1);
    assert_int_equal(m.completed_on[0], 1);
    assert_int_equal(m.completed_on[1], 2);
    assert_int_equal(m.nodes, 4);
    assert_float_equal(m.energy_j, 140, 1e-9); /* 40 + 20 + 30 + 50 */
    cJSON *s = cJSON_Parse(m.summary);
    assert_non_null(s);
    assert_string_equal(cJSON_GetObjectItem(s, "runKey")->valuestring, "k1");
    assert_string_equal(cJSON_GetObjectItem(s, "state")->valuestring, "stalled");
    assert_string_equal(cJSON_GetObjectItem(s, "placement")->valuestring, "kubernetes");
    assert_float_equal(num(s, "timeSec"), 60, 0);      /* the longer shard's */
    assert_float_equal(num(s, "makespanSec"), 59, 0);  /* likewise */
    const cJSON *js = cJSON_GetObjectItem(s, "jobs");
    assert_float_equal(num(js, "total"), 4, 0);
    assert_float_equal(num(js, "completed"), 3, 0);
    assert_float_equal(num(js, "stalled"), 1, 0);
    assert_null(cJSON_GetObjectItem(js, "elsewhere"));
    const cJSON *perf = cJSON_GetObjectItem(cJSON_GetObjectItem(s, "jobsByClass"), "performance");
    assert_float_equal(num(perf, "completed"), 1, 0);
    const cJSON *en = cJSON_GetObjectItem(s, "energyJoules");
    assert_float_equal(num(en, "nodes"), 140, 1e-9);
    assert_float_equal(num(en, "standard"), 70, 1e-9); /* 40 + 30 */
    assert_float_equal(num(en, "performance"), 2, 1e-9);
    const cJSON *nodes = cJSON_GetObjectItem(s, "nodes");
    const char *order[] = {"n0", "n1", "n2", "n3"};
    for (int i = 0; i < 4; i++)
        assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, i), "node")->valuestring, order[i]);
    const cJSON *fac = cJSON_GetObjectItem(s, "facility");
    assert_float_equal(num(fac, "itEnergyJoules"), 140, 1e-9);
    assert_float_equal(num(fac, "pue"), 1.1, 1e-9);
    assert_float_equal(num(s, "meanPowerWatts"), 80.0 / 60 + 60.0 / 50, 1e-9);
    assert_float_equal(num(s, "placementAttempts"), 8, 0);
    const cJSON *sh = cJSON_GetObjectItem(s, "shards");
    assert_int_equal(cJSON_GetArraySize(sh), 2);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(sh, 0), "shard")->valuestring, "0/2");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(sh, 0), "runDir")->valuestring, "s0");
    assert_float_equal(num(cJSON_GetArrayItem(sh, 1), "jobsCompleted"), 2, 0);
    cJSON_Delete(s);
    /* the stalled event once (shard 0's), then by time: 150 (shard 1), 200 (shard 0) */
    const char *wlogs =
        "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"100\",\"eventName\":\"joulie.sim.job.stalled\"}]}]}]}\n"
        "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"150\",\"eventName\":\"joulie.sim.job.started\"}]}]}]}\n"
        "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"200\",\"eventName\":\"joulie.sim.job.started\"}]}]}]}\n";
    assert_string_equal(m.logs, wlogs);
    assert_string_equal(m.metrics, "m0\nm1\n");
    run_merge_free(&m);
    two_free(&t);
}

/* run_merge refuses with a message holding want */
static void refused(struct run_merge_in *in, int n, const char *want)
{
    struct run_merge_out m;
    char err[2048] = "";
    assert_int_equal(run_merge(in, n, &m, err, sizeof err), -1);
    if (!strstr(err, want))
        fail_msg("want \"%s\" in: %s", want, err);
    assert_null(m.jobs);
    assert_null(m.summary);
}

static void test_refusals(void **state)
{
    (void)state;
    struct two t;
    two_shards(&t);
    /* a completed on both shards */
    const char *twice = LINE("a", "standard", "completed", "\"n1\"", "1") LINE("b", "standard", "completed", "\"n1\"", "3")
        LINE("c", "standard", "stalled", "null", "-1") LINE("d", "performance", "completed", "\"n3\"", "5");
    t.in[0].jobs = twice;
    t.in[0].jobs_len = strlen(twice);
    refused(t.in, 2, "job a was completed on two shards, 0/2 (s0) and 1/2 (s1)");
    /* d elsewhere on both: completed on none */
    const char *none = LINE("c", "standard", "stalled", "null", "-1") LINE("a", "standard", "elsewhere", "null", "-1")
        LINE("b", "standard", "completed", "\"n1\"", "3") LINE("d", "performance", "elsewhere", "null", "-1");
    t.in[0].jobs = none;
    t.in[0].jobs_len = strlen(none);
    refused(t.in, 2, "job d was completed on no shard and is not stalled on every one (0/2: elsewhere, 1/2: elsewhere)");
    t.in[0].jobs = jobs1;
    t.in[0].jobs_len = strlen(jobs1);
    /* a line of a job the trace does not have */
    const char *stranger = LINE("zz", "standard", "completed", "\"n1\"", "3");
    t.in[0].jobs = stranger;
    t.in[0].jobs_len = strlen(stranger);
    refused(t.in, 2, "s1/jobs.jsonl:1: job zz is not in the trace");
    t.in[0].jobs = jobs1;
    t.in[0].jobs_len = strlen(jobs1);
    /* shard 1 is missing; then shard 0 given twice */
    refused(&t.in[1], 1, "run key k1 has 2 shards and 1 run directory was given; missing: shard 1/2");
    struct run_merge_in dup[2] = {t.in[1], t.in[1]};
    dup[1].dir = "s0-again";
    refused(dup, 2, "s0 and s0-again are both shard 0/2");
    /* another run key, a standalone run, an unsharded one, one not ended */
    struct {
        char *sum;
        const char *want;
    } bad[] = {
        {summary("k2", "1/2", "kubernetes", "completed", 60, "n1", 30, "n3", 50), "is run key k1 and s1 is run key k2"},
        {summary("k1", "1/2", "standalone", "completed", 60, "n1", 30, "n3", 50), "placed the trace's jobs with the standalone placement"},
        {summary("k1", "1", "kubernetes", "completed", 60, "n1", 30, "n3", 50), "s1 is not a shard's run"},
        {summary("k1", "1/2", "kubernetes", "stopped", 60, "n1", 30, "n3", 50), "shard 1/2's run is stopped"},
        {summary("k1", "1/2", "kubernetes", "completed", 60, "n1", 30, "n2", 50), "node n2 is in shard"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        struct run_merge_in in[2] = {t.in[1], t.in[0]};
        in[1].summary = bad[k].sum;
        in[1].summary_len = strlen(bad[k].sum);
        refused(in, 2, bad[k].want);
        free(bad[k].sum);
    }
    struct run_merge_in in[2] = {t.in[1], t.in[0]};
    in[1].summary = NULL;
    refused(in, 2, "s1 has no summary.json: its run has not ended");
    /* another trace */
    const char *other = "{\"type\":\"job\",\"jobId\":\"a\"}\n";
    in[1] = t.in[0];
    in[1].trace = other;
    in[1].trace_len = strlen(other);
    refused(in, 2, "s1/trace.jsonl differs from s0/trace.jsonl");
    two_free(&t);
}

static void put(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void test_dirs(void **state)
{
    (void)state;
    char tmp[] = "/tmp/hwemu-merge-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    struct two t;
    two_shards(&t);
    char d0[300], d1[300], o0[300], out[300];
    snprintf(d0, sizeof d0, "%s/s0", tmp);
    snprintf(d1, sizeof d1, "%s/s1", tmp);
    snprintf(o0, sizeof o0, "%s/s0/otlp", tmp);
    snprintf(out, sizeof out, "%s/merged", tmp);
    assert_int_equal(mkdir(d0, 0755), 0);
    assert_int_equal(mkdir(d1, 0755), 0);
    assert_int_equal(mkdir(o0, 0755), 0);
    put(d0, "trace.jsonl", trace);
    put(d1, "trace.jsonl", trace);
    put(d0, "jobs.jsonl", jobs0);
    put(d1, "jobs.jsonl", jobs1);
    put(d0, "summary.json", t.sum[1]);
    put(d1, "summary.json", t.sum[0]);
    put(o0, "logs.jsonl", logs0); /* shard 1 has no otlp/: its part is empty */
    const char *dirs[] = {d1, d0};
    struct run_merge_out m;
    char err[2048] = "";
    if (run_merge_dirs(dirs, 2, out, &m, err, sizeof err))
        fail_msg("%s", err);
    run_merge_free(&m);
    char p[400];
    snprintf(p, sizeof p, "%s/jobs.jsonl", out);
    assert_non_null(slurp(p));
    assert_int_equal(strncmp(slurp(p), "{\"jobId\":\"a\"", 12), 0);
    snprintf(p, sizeof p, "%s/trace.jsonl", out);
    assert_string_equal(slurp(p), trace);
    snprintf(p, sizeof p, "%s/summary.json", out);
    assert_non_null(strstr(slurp(p), "\"runKey\":\t\"k1\""));
    snprintf(p, sizeof p, "%s/otlp/logs.jsonl", out);
    assert_string_equal(slurp(p), logs0);
    /* again into the same --out: refused, nothing changed */
    assert_int_equal(run_merge_dirs(dirs, 2, out, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "writes into a new directory only"));
    /* a directory that is not there */
    const char *gone[] = {d1, "/nonexistent/run"};
    assert_int_equal(run_merge_dirs(gone, 2, out, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open the run directory /nonexistent/run"));
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    assert_int_equal(system(cmd), 0);
    two_free(&t);
}

/* course.jsonl: two shards' courses, built here as run_course.c writes them (every 10 s and at
 * each shard's end: shard 0 ends at 45 s, shard 1 at 60 s; shard 0 has the pool intel, shard 1
 * intel and gpu); the jobs' times in their jobs.jsonl lines (a 2-25 s on shard 0, b 3-42 s and d
 * 5-55 s on shard 1, c stalled on both). Each expected value below is a sum read off these rows:
 *            t   power  standard  perf  idle  nodes
 * shard 0:  10   100    10        0     0.5   12      pool intel: power, energy = nodes, 2 capped, 300 W, 1 throttled
 *           20   100    20        0     1     30
 *           30    80    30        0.5   1.5   45
 *           40    80    35        1     2     55
 *           45    60    40        1     2     60      = its summary.json (standard 40, nodes 40 + 20)
 * shard 1:  10   200     5        0.2   0.5   20      pool intel: a quarter of power and energy, 1 capped,
 *           20   200    10        0.4   1     40        150 W, 1 throttled; gpu: three quarters,
 *           30   150    15        0.6   1.2   50        4 GPUs capped, 1200 W, 2 throttled
 *           40   150    20        0.8   1.5   60
 *           50   120    25        0.9   1.8   70
 *           60   100    30        1     2     80      = its summary.json (standard 30, nodes 30 + 50) */
static const double rows0[][6] = {{10, 100, 10, 0, 0.5, 12}, {20, 100, 20, 0, 1, 30}, {30, 80, 30, 0.5, 1.5, 45},
                                  {40, 80, 35, 1, 2, 55}, {45, 60, 40, 1, 2, 60}};
static const double rows1[][6] = {{10, 200, 5, 0.2, 0.5, 20}, {20, 200, 10, 0.4, 1, 40}, {30, 150, 15, 0.6, 1.2, 50},
                                  {40, 150, 20, 0.8, 1.5, 60}, {50, 120, 25, 0.9, 1.8, 70}, {60, 100, 30, 1, 2, 80}};

static char *course_of(const double (*rows)[6], int n, int shard, double offset)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    for (int k = 0; k < n; k++) {
        const double *r = rows[k];
        fprintf(f, "{\"timeSec\":%g,\"powerWatts\":%g,\"energyJoules\":{\"standard\":%g,\"performance\":%g,\"idle\":%g,"
                "\"nodes\":%g},\"jobs\":{\"waiting\":1,\"running\":1,\"completed\":%d,\"stalled\":1,\"elsewhere\":1},",
                r[0] + offset, r[1], r[2], r[3], r[4], r[5], k);
        if (shard == 0)
            fprintf(f, "\"pools\":{\"intel\":{\"powerWatts\":%g,\"energyJoules\":%g,\"packagesCapped\":2,\"gpusCapped\":0,"
                    "\"capWatts\":300,\"packagesThrottled\":1,\"gpusThrottled\":0}}}\n", r[1], r[5]);
        else
            fprintf(f, "\"pools\":{\"intel\":{\"powerWatts\":%g,\"energyJoules\":%g,\"packagesCapped\":1,\"gpusCapped\":0,"
                    "\"capWatts\":150,\"packagesThrottled\":1,\"gpusThrottled\":0},\"gpu\":{\"powerWatts\":%g,"
                    "\"energyJoules\":%g,\"packagesCapped\":0,\"gpusCapped\":4,\"capWatts\":1200,\"packagesThrottled\":0,"
                    "\"gpusThrottled\":2}}}\n", r[1] / 4, r[5] / 4, r[1] * 3 / 4, r[5] * 3 / 4);
    }
    assert_int_equal(fclose(f), 0);
    return text;
}

#define TLINE(id, cls, state, node, start, end)                                                                       \
    "{\"jobId\":\"" id "\",\"class\":\"" cls "\",\"state\":\"" state "\",\"node\":" node ",\"queuedSec\":0,"           \
    "\"startSec\":" start ",\"endSec\":" end "}\n"
static const char tjobs0[] = TLINE("a", "standard", "completed", "\"n0\"", "2", "25")
    TLINE("c", "standard", "stalled", "null", "-1", "-1") TLINE("b", "standard", "elsewhere", "null", "-1", "-1")
        TLINE("d", "performance", "elsewhere", "null", "-1", "-1");
static const char tjobs1[] = TLINE("c", "standard", "stalled", "null", "-1", "-1")
    TLINE("a", "standard", "elsewhere", "null", "-1", "-1") TLINE("b", "standard", "completed", "\"n1\"", "3", "42")
        TLINE("d", "performance", "completed", "\"n3\"", "5", "55");

static const cJSON *field(const cJSON *o, const char *path) /* "pools.intel.powerWatts" */
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *k = strtok(buf, "."); k; k = strtok(NULL, "."))
        o = cJSON_GetObjectItemCaseSensitive(o, k);
    return o;
}

static double at(const cJSON *o, const char *path)
{
    const cJSON *v = field(o, path);
    if (!cJSON_IsNumber(v))
        fail_msg("no number at %s", path);
    return v->valuedouble;
}

/* The merged course of test_course's shards (lines at times[0..7)): every value read off the rows. */
static void course_checks(const struct run_merge_out *mo, const double *times)
{
    struct run_merge_out m = *mo;
    assert_non_null(m.course);
    cJSON *l[16];
    int n = 0;
    for (char *s = m.course, *nl; (nl = strchr(s, '\n')) && n < 16; s = nl + 1) {
        l[n] = cJSON_ParseWithLength(s, (size_t)(nl - s));
        assert_non_null(l[n]);
        n++;
    }
    /* a line at each multiple of the interval a shard reached and at each shard's end */
    assert_int_equal(n, 7);
    for (int k = 0; k < n; k++)
        assert_float_equal(at(l[k], "timeSec"), times[k], 0);
    /* 10 s: both shards' lines summed; a, b, d started, none ended, c stalled */
    assert_float_equal(at(l[0], "powerWatts"), 300, 1e-9);
    assert_float_equal(at(l[0], "energyJoules.nodes"), 32, 1e-9);
    assert_float_equal(at(l[0], "jobs.running"), 3, 0);
    assert_float_equal(at(l[0], "jobs.waiting"), 0, 0);
    assert_float_equal(at(l[0], "jobs.completed"), 0, 0);
    assert_float_equal(at(l[0], "jobs.stalled"), 1, 0);
    assert_null(field(l[0], "jobs.elsewhere"));
    /* 30 s: a ended at 25 */
    assert_float_equal(at(l[2], "jobs.running"), 2, 0);
    assert_float_equal(at(l[2], "jobs.completed"), 1, 0);
    /* 45 s: shard 0's end line (60 W) and shard 1's of 40 s (150 W); b ended at 42 */
    assert_float_equal(at(l[4], "powerWatts"), 210, 1e-9);
    assert_float_equal(at(l[4], "energyJoules.nodes"), 120, 1e-9);
    assert_float_equal(at(l[4], "energyJoules.standard"), 60, 1e-9);
    assert_float_equal(at(l[4], "pools.intel.powerWatts"), 60 + 37.5, 1e-9);
    assert_float_equal(at(l[4], "pools.intel.energyJoules"), 60 + 15, 1e-9);
    assert_float_equal(at(l[4], "pools.intel.packagesCapped"), 3, 0);
    assert_float_equal(at(l[4], "pools.gpu.powerWatts"), 112.5, 1e-9);
    assert_float_equal(at(l[4], "jobs.running"), 1, 0);
    assert_float_equal(at(l[4], "jobs.completed"), 2, 0);
    /* 50 s: shard 0 has ended: its energies carried on, no power, caps or throttling */
    assert_float_equal(at(l[5], "powerWatts"), 120, 1e-9);
    assert_float_equal(at(l[5], "energyJoules.nodes"), 130, 1e-9);
    assert_float_equal(at(l[5], "energyJoules.idle"), 3.8, 1e-9);
    assert_float_equal(at(l[5], "pools.intel.powerWatts"), 30, 1e-9);
    assert_float_equal(at(l[5], "pools.intel.energyJoules"), 60 + 17.5, 1e-9);
    assert_float_equal(at(l[5], "pools.intel.packagesCapped"), 1, 0);
    assert_float_equal(at(l[5], "pools.intel.capWatts"), 150, 0);
    assert_float_equal(at(l[5], "pools.intel.packagesThrottled"), 1, 0);
    /* the last line: the merged summary.json's energies and job counts, exactly */
    cJSON *s = cJSON_Parse(m.summary);
    assert_non_null(s);
    const char *keys[] = {"standard", "performance", "idle", "nodes"};
    for (int k = 0; k < 4; k++) {
        char p[64];
        snprintf(p, sizeof p, "energyJoules.%s", keys[k]);
        assert_true(at(l[6], p) == at(s, p));
    }
    assert_float_equal(at(l[6], "energyJoules.nodes"), 140, 1e-9);
    assert_float_equal(at(l[6], "powerWatts"), 100, 1e-9);
    assert_true(at(l[6], "jobs.completed") == at(s, "jobs.completed"));
    assert_true(at(l[6], "jobs.stalled") == at(s, "jobs.stalled"));
    assert_float_equal(at(l[6], "jobs.running"), 0, 0);
    assert_float_equal(at(l[6], "jobs.waiting"), 0, 0);
    cJSON_Delete(s);
    for (int k = 0; k < n; k++)
        cJSON_Delete(l[k]);
}

static void test_course(void **state)
{
    (void)state;
    struct two t;
    two_shards(&t);
    free(t.sum[1]);
    t.sum[1] = summary("k1", "0/2", "kubernetes", "stalled", 45, "n0", 40, "n2", 20);
    t.in[1].summary = t.sum[1];
    t.in[1].summary_len = strlen(t.sum[1]);
    char *c0 = course_of(rows0, 5, 0, 0), *c1 = course_of(rows1, 6, 1, 0);
    t.in[0].jobs = tjobs1, t.in[0].jobs_len = strlen(tjobs1), t.in[0].course = c1, t.in[0].course_len = strlen(c1);
    t.in[1].jobs = tjobs0, t.in[1].jobs_len = strlen(tjobs0), t.in[1].course = c0, t.in[1].course_len = strlen(c0);
    struct run_merge_out m;
    char err[2048] = "";
    if (run_merge(t.in, 2, &m, err, sizeof err))
        fail_msg("%s", err);
    /* the lines' own times (no interval in the summaries): 10..40 both, 45 shard 0's end, 50, 60 shard 1's */
    const double times[] = {10, 20, 30, 40, 45, 50, 60};
    course_checks(&m, times);
    /* run_merge_dirs reads each shard's course.jsonl and writes the merged one */
    char tmp[] = "/tmp/hwemu-merge-course-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char d0[300], d1[300], out[300], p[400];
    snprintf(d0, sizeof d0, "%s/s0", tmp);
    snprintf(d1, sizeof d1, "%s/s1", tmp);
    snprintf(out, sizeof out, "%s/merged", tmp);
    assert_int_equal(mkdir(d0, 0755), 0);
    assert_int_equal(mkdir(d1, 0755), 0);
    const char *files[] = {"trace.jsonl", "jobs.jsonl", "summary.json", "course.jsonl"};
    for (int k = 0; k < 4; k++) {
        const char *v0[] = {trace, tjobs0, t.sum[1], c0}, *v1[] = {trace, tjobs1, t.sum[0], c1};
        put(d0, files[k], v0[k]);
        put(d1, files[k], v1[k]);
    }
    const char *dirs[] = {d0, d1};
    struct run_merge_out md;
    if (run_merge_dirs(dirs, 2, out, &md, err, sizeof err))
        fail_msg("%s", err);
    snprintf(p, sizeof p, "%s/course.jsonl", out);
    assert_string_equal(slurp(p), m.course);
    run_merge_free(&md);
    run_merge_free(&m);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    assert_int_equal(system(cmd), 0);
    /* the shards' ticks not on the multiples (shard 0's 0.25 s after them, shard 1's 0.5 s) and the
     * interval in their summaries (courseIntervalSec 10): a line before a shard's last counts at the
     * multiple it was written for, the last (the shard's end) at its own time */
    char *g0 = course_of(rows0, 5, 0, 0.25), *g1 = course_of(rows1, 6, 1, 0.5), *gs[2];
    struct run_merge_in gin[2] = {t.in[0], t.in[1]};
    for (int i = 0; i < 2; i++) {
        if (asprintf(&gs[i], "{\"courseIntervalSec\":10,%s", t.in[i].summary + 1) < 0)
            abort();
        gin[i].summary = gs[i], gin[i].summary_len = strlen(gs[i]);
        gin[i].course = i ? g0 : g1, gin[i].course_len = strlen(gin[i].course);
    }
    if (run_merge(gin, 2, &m, err, sizeof err))
        fail_msg("%s", err);
    const double gtimes[] = {10, 20, 30, 40, 45.25, 50, 60.5};
    course_checks(&m, gtimes);
    cJSON *gsum = cJSON_Parse(m.summary); /* the merged run says its course's grid */
    assert_float_equal(at(gsum, "courseIntervalSec"), 10, 0);
    cJSON_Delete(gsum);
    run_merge_free(&m);
    free(g0);
    free(g1);
    free(gs[0]);
    free(gs[1]);
    /* a shard without course.jsonl (an hwemu before it): no merged course */
    t.in[0].course = NULL;
    if (run_merge(t.in, 2, &m, err, sizeof err))
        fail_msg("%s", err);
    assert_null(m.course);
    run_merge_free(&m);
    /* a line that is not JSON: refused with the file and line */
    const char *bad = "{\"timeSec\":10,\"powerWatts\":1}\nnot json\n";
    t.in[0].course = bad, t.in[0].course_len = strlen(bad);
    refused(t.in, 2, "s1/course.jsonl:2: not a course line");
    free(c0);
    free(c1);
    two_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_merge), cmocka_unit_test(test_refusals),
                                       cmocka_unit_test(test_dirs), cmocka_unit_test(test_course)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
