/* Unit tests of engine/runs: the trace loader's fields and defaults (the original simulator's
 * loader defaults, docs/runs.md "Trace format"), Kubernetes quantities, placement's filter,
 * score and ties (the original's standalone findNodeForJob), the throughput multipliers, and
 * the generator's reproducibility and output (every record it writes loads). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "physics_cpu.h"
#include "physics_gpu.h"
#include "placement.h"
#include "run.h"
#include "trace.h"
#include "tracegen.h"

static int parse(struct trace *t, const char *text, struct diag *d)
{
    return trace_parse(t, "t.jsonl", text, strlen(text), d);
}

static void test_v1_defaults(void **st)
{
    (void)st;
    struct trace t;
    struct diag d = {0};
    assert_int_equal(parse(&t, "{\"type\":\"job\",\"schemaVersion\":\"v1\",\"jobId\":\"a\"}\n", &d), 0);
    assert_int_equal(t.njobs, 1);
    const struct trace_job *j = &t.jobs[0];
    assert_string_equal(j->id, "a");
    assert_string_equal(j->ns, "default");
    assert_int_equal(j->cls, JOB_STANDARD);
    assert_true(j->cpu_req == 1 && j->cpus == 1 && j->mem_mib == 64 && j->gpus == 0);
    assert_true(j->cpu_units == 1000 && j->gpu_units == 0);
    assert_true(j->sens_cpu == 1 && j->sens_gpu == 1);
    assert_int_equal(j->cpu_class, PHYS_CLASS_MIXED);
    assert_true(j->u_cpu == 0.65 && j->u_gpu == 0 && j->mem_int == 0.45 && j->io_int == 0.10 && j->feed == 0);
    trace_free(&t);
    diag_free(&d);
}

static void test_v2_fields(void **st)
{
    (void)st;
    const char *text =
        "{\"type\":\"workload\",\"schemaVersion\":\"v2\",\"workloadId\":\"w1\",\"gang\":true,"
        "\"pods\":[{\"role\":\"launcher\",\"replicas\":1},{\"role\":\"worker\",\"replicas\":2}]}\n"
        "\n"
        "{\"type\":\"job\",\"schemaVersion\":\"v2\",\"jobId\":\"w1-worker-01\",\"workloadId\":\"w1\",\"gang\":true,"
        "\"submitTimeOffsetSec\":12.5,\"namespace\":\"ml\",\"podTemplate\":{\"affinity\":{\"nodeAffinity\":"
        "{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
        "\"joulie.io/power-profile\",\"operator\":\"NotIn\",\"values\":[\"eco\"]}]}]}}},\"requests\":{\"cpu\":\"1500m\","
        "\"memory\":\"2Gi\",\"amd.com/gpu\":\"2\"}},\"work\":{\"cpuUnits\":50,\"gpuUnits\":70},\"sensitivity\":{\"cpu\":2,"
        "\"gpu\":0.25},\"workloadClass\":{\"cpu\":\"cpu.io_bound\",\"gpu\":\"gpu.bandwidth_bound\"}}\n"
        "{\"type\":\"job\",\"jobId\":\"b\",\"submitTimeOffsetSec\":3,\"intentClass\":\"performance\","
        "\"podTemplate\":{\"requests\":{\"gpu\":\"1\"}},\"workloadProfile\":{\"cpuUtilization\":0.3,"
        "\"gpuUtilization\":0.9,\"memoryIntensity\":0.1,\"ioIntensity\":0.2,\"cpuFeedIntensityGpu\":0.7}}\n"
        "{\"type\":\"job\",\"jobId\":\"c\",\"submitTimeOffsetSec\":3,\"podTemplate\":{\"requests\":"
        "{\"gpu.intel.com/i915\":\"1\"}}}\n"
        "{\"type\":\"metrics\",\"x\":1}\n";
    struct trace t;
    struct diag d = {0};
    assert_int_equal(parse(&t, text, &d), 0);
    assert_int_equal(t.njobs, 3);
    assert_int_equal(t.ignored, 1);
    /* submit order, ties by position */
    assert_string_equal(t.jobs[0].id, "b");
    assert_string_equal(t.jobs[1].id, "c");
    const struct trace_job *a = &t.jobs[2], *b = &t.jobs[0], *c = &t.jobs[1];
    assert_int_equal(a->line, 3);
    assert_true(a->gang);
    assert_string_equal(a->ns, "ml");
    assert_int_equal(a->cls, JOB_PERFORMANCE); /* from the affinity */
    assert_true(a->cpu_req == 1.5 && a->cpus == 2 && a->mem_mib == 2048);
    assert_true(a->gpus == 2 && a->gpu_vendor == GPU_REQ_AMD);
    assert_true(a->sens_cpu == 1 && a->sens_gpu == 0.25); /* clamped */
    assert_int_equal(a->cpu_class, PHYS_CLASS_IO_BOUND);
    assert_int_equal(a->gpu_class, PHYS_GPU_CLASS_MEMORY);
    assert_true(a->u_cpu == 0.20 && a->u_gpu == 0.70 && a->mem_int == 0.85 && a->io_int == 0.85 && a->feed == 0.45);
    assert_true(b->cls == JOB_PERFORMANCE && b->gpus == 1 && b->gpu_vendor == GPU_REQ_NVIDIA);
    assert_true(b->u_cpu == 0.3 && b->u_gpu == 0.9 && b->mem_int == 0.1 && b->io_int == 0.2 && b->feed == 0.7);
    assert_true(c->gpu_vendor == GPU_REQ_INTEL);
    const struct trace_workload *w = trace_workload_find(&t, "w1");
    assert_non_null(w);
    assert_true(w->gang && w->pods == 3);
    trace_free(&t);
    diag_free(&d);
}

static void test_errors_leave_nothing(void **st)
{
    (void)st;
    struct trace t;
    struct diag d = {0};
    assert_int_equal(parse(&t, "{\"type\":\"job\",\"jobId\":\"ok\"}\n{\"type\":\"job\",\"jobId\":\"x\","
                               "\"work\":{\"cpuUnits\":true}}\n", &d), -1);
    assert_int_equal(t.njobs, 0);
    assert_null(t.jobs);
    assert_int_equal(d.count, 1);
    assert_string_equal(d.msgs[0], "t.jsonl:2: work.cpuUnits: expected a number, found a boolean");
    diag_free(&d);
}

static void test_quantities(void **st)
{
    (void)st;
    double v;
    assert_true(trace_cpu_quantity("500m", &v) && v == 0.5);
    assert_true(trace_cpu_quantity("2", &v) && v == 2);
    assert_true(trace_cpu_quantity("1.5", &v) && v == 1.5);
    assert_false(trace_cpu_quantity("2 cores", &v));
    assert_false(trace_cpu_quantity("-1", &v));
    assert_true(trace_mem_quantity("64Mi", &v) && v == 64);
    assert_true(trace_mem_quantity("4Gi", &v) && v == 4096);
    assert_true(trace_mem_quantity("1048576", &v) && v == 1);
    assert_true(trace_mem_quantity("1G", &v) && fabs(v - 1e9 / 1048576) < 1e-9);
    assert_false(trace_mem_quantity("1 Gi", &v));
}

static void test_placement(void **st)
{
    (void)st;
    struct place_node n[3] = {
        {.name = "b", .total_cpus = 100, .free_cpus = 100},
        {.name = "a", .total_cpus = 100, .free_cpus = 100},
        {.name = "eco", .total_cpus = 100, .free_cpus = 100, .eco = true},
    };
    struct place_request perf = {.cpus = 10, .cls = JOB_PERFORMANCE}, std = {.cpus = 10, .cls = JOB_STANDARD};
    /* (1 - 10/100) * 70 + 15 = 78; the standard job prefers eco (+10) */
    assert_true(fabs(place_score(&n[0], &perf, 0) - 78) < 1e-9);
    assert_true(fabs(place_score(&n[2], &std, 0) - 88) < 1e-9);
    assert_int_equal(place_choose(n, 3, &std, 0), 2);
    /* performance never on eco; equal scores go to the name that sorts first */
    assert_int_equal(place_choose(n, 3, &perf, 0), 1);
    /* the emptier node wins */
    n[1].free_cpus = 50;
    assert_int_equal(place_choose(n, 3, &perf, 0), 0);
    /* a standard job on a node running performance jobs pays 0.3 * mean perf CPU % */
    n[0].performance_node = true;
    assert_true(fabs(place_score(&n[0], &std, 50) - 63) < 1e-9);
    /* GPUs: vendor and count */
    struct place_node g[2] = {{.name = "n", .total_cpus = 64, .free_cpus = 64, .total_gpus = 8, .free_gpus = 1,
                               .gpu_vendor = GPU_REQ_NVIDIA},
                              {.name = "m", .total_cpus = 64, .free_cpus = 64, .total_gpus = 8, .free_gpus = 8,
                               .gpu_vendor = GPU_REQ_AMD}};
    struct place_request nv2 = {.cpus = 4, .gpus = 2, .gpu_vendor = GPU_REQ_NVIDIA};
    assert_int_equal(place_choose(g, 2, &nv2, 0), -1);
    assert_true(place_could_fit(&g[0], &nv2));
    struct place_request amd = {.cpus = 4, .gpus = 2, .gpu_vendor = GPU_REQ_AMD};
    assert_int_equal(place_choose(g, 2, &amd, 0), 1);
    struct place_request big = {.cpus = 65};
    assert_false(place_could_fit(&g[0], &big));
    /* a node whose job cgroup slots are all in use takes no job (max_jobs 0: no limit) */
    struct place_node full = {.name = "f", .total_cpus = 8, .free_cpus = 8, .max_jobs = 2, .jobs = 2};
    assert_false(place_fits(&full, &(struct place_request){.cpus = 1}));
    full.jobs = 1;
    assert_true(place_fits(&full, &(struct place_request){.cpus = 1}));
    /* a draining node takes no performance job but a standard one */
    struct place_node dn = {.name = "d", .total_cpus = 8, .free_cpus = 8, .draining = true};
    assert_false(place_fits(&dn, &(struct place_request){.cpus = 1, .cls = JOB_PERFORMANCE}));
    assert_true(place_fits(&dn, &(struct place_request){.cpus = 1, .cls = JOB_STANDARD}));
}

static void test_throughput(void **st)
{
    (void)st;
    /* compute-bound work at full frequency runs at full speed, slower at lower frequency, and
     * memory-bound work loses less than compute-bound work */
    assert_true(fabs(run_cpu_throughput(1, 0.5625, PHYS_CLASS_COMPUTE_BOUND, 0.45, 0.1) - 1) < 1e-12);
    double c = run_cpu_throughput(0.5, 0.5625, PHYS_CLASS_COMPUTE_BOUND, 0.2, 0.1);
    double m = run_cpu_throughput(0.5, 0.5625, PHYS_CLASS_MEMORY_BOUND, 0.85, 0.1);
    assert_true(c < 0.75 && c > 0.5);
    assert_true(m > c);
    for (double f = 0.3; f < 1; f += 0.1)
        assert_true(run_cpu_throughput(f, 0.7, PHYS_CLASS_MIXED, 0.45, 0.1) <
                    run_cpu_throughput(f + 0.1, 0.7, PHYS_CLASS_MIXED, 0.45, 0.1));
    assert_true(run_gpu_throughput(1, PHYS_GPU_CLASS_COMPUTE, 0.45) == 1);
    double gc = run_gpu_throughput(0.6, PHYS_GPU_CLASS_COMPUTE, 0.2);
    double gm = run_gpu_throughput(0.6, PHYS_GPU_CLASS_MEMORY, 0.85);
    assert_true(gc < 0.8 && gm > gc);
}

static char *gen(const struct tracegen_opts *o, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_true(tracegen_write(o, f) > 0);
    fclose(f);
    return buf;
}

static void test_generator(void **st)
{
    (void)st;
    struct tracegen_opts o;
    tracegen_defaults(&o);
    assert_int_equal(o.jobs, 50);
    assert_true(o.mean_inter_arrival_sec == 5 && o.perf_ratio == 0.30 && o.gpu_ratio == 0.80);
    assert_true(o.sim_hours == 48 && o.diurnal_peak_rate == 80 && o.base_speed_per_core == 2);
    o.seed = 42;
    size_t l1, l2, l3;
    char *a = gen(&o, &l1), *b = gen(&o, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(a, b, l1);
    o.seed = 43;
    char *c = gen(&o, &l3);
    assert_false(l3 == l1 && !memcmp(a, c, l1));
    struct trace t;
    struct diag d = {0};
    assert_int_equal(trace_parse(&t, "gen", a, l1, &d), 0);
    assert_true(t.njobs >= 50);
    assert_int_equal(t.nworkloads, 50);
    int gangs = 0, gpus = 0;
    for (int i = 0; i < t.njobs; i++) {
        gangs += t.jobs[i].gang;
        gpus += t.jobs[i].gpus > 0;
        assert_true(t.jobs[i].sens_cpu == 0); /* default mode writes sensitivity 0 */
    }
    assert_true(gpus > 0);
    (void)gangs;
    trace_free(&t);
    /* diurnal: a short day, perf jobs have sensitivity 0.5 */
    tracegen_defaults(&o);
    o.diurnal = true;
    o.sim_hours = 0.5;
    o.diurnal_peak_rate = 4;
    o.seed = 5;
    size_t ld;
    char *dd = gen(&o, &ld);
    assert_int_equal(trace_parse(&t, "diurnal", dd, ld, &d), 0);
    assert_true(t.njobs > 10);
    for (int i = 0; i < t.njobs; i++) {
        assert_true(t.jobs[i].sens_cpu == (t.jobs[i].cls == JOB_PERFORMANCE ? 0.5 : 0));
        assert_true(t.jobs[i].submit_s <= 0.5 * 3600);
    }
    trace_free(&t);
    diag_free(&d);
    free(a);
    free(b);
    free(c);
    free(dd);
}

/* Per-CPU load (docs/runs.md "Load and progress"): each CPU a job holds runs at the job's
 * utilization of it, free CPUs idle; the physics then counts each CPU's busy time at its own
 * rate and the package whose CPUs are busy draws more than the other. Expected values: the
 * jobs' utilizations below (0.9 on two whole CPUs; 0.8 of a half-core request on one CPU). */
static void test_per_cpu_load(void **st)
{
    (void)st;
    struct trace_job ta = {.id = "a", .cpu_req = 2, .cpus = 2, .u_cpu = 0.9, .mem_int = 0.45};
    struct trace_job tb = {.id = "b", .cpu_req = 0.5, .cpus = 1, .u_cpu = 0.8, .mem_int = 0.45};
    int cpus_a[2] = {1, 2}, cpus_b[1] = {5};
    struct run_job jobs[2] = {{.t = &ta, .index = 0, .cpus = cpus_a}, {.t = &tb, .index = 1, .cpus = cpus_b}};
    unsigned char pkg_of[8] = {0, 0, 0, 0, 1, 1, 1, 1};
    int on_node[2] = {0, 1};
    struct run_node rn = {.ncpus = 8, .npkgs = 2, .cpu_pkg = pkg_of, .jobs = on_node, .njobs = 2};
    struct run r = {.jobs = jobs, .njobs = 2, .nodes = &rn, .nnodes = 1};
    struct phys_load *load = calloc(1, sizeof *load);
    struct phys_gpu_load gl;
    run_node_load(&r, 0, load, &gl);
    assert_int_equal(load->ncpu_util, 8);
    const double want[8] = {0, 0.9, 0.9, 0, 0, 0.4, 0, 0};
    for (int c = 0; c < 8; c++)
        assert_true(fabs(phys_load_util(load, c) - want[c]) < 1e-6);
    assert_true(fabs(load->cpu_util - (2 * 0.9 + 0.5 * 0.8) / 8) < 1e-9);
    assert_true(fabs(run_job_cpu_util(&tb) - 0.4) < 1e-12);

    /* the physics follows: busy ns per CPU over 1 s, and package 0 (1.8 busy CPUs) above package 1 (0.4) */
    struct phys_cpu_params *p = calloc(1, sizeof *p);
    struct phys_cpu_state *s = calloc(1, sizeof *s);
    p->sockets = 2, p->dies_per_pkg = 1, p->cpus = 8, p->model = PHYS_MODEL_ANALYTIC;
    p->idle_pkg_w = 40, p->max_pkg_w = 165, p->alpha_util = 1, p->beta_freq = 1, p->knee = 0.7;
    p->driver = PHYS_DRV_ACPI_CPUFREQ, p->governor = PHYS_GOV_PERFORMANCE, p->boost = 1;
    p->cpuinfo_min_khz = 1000000, p->cpuinfo_max_khz = 3000000, p->ambient_init_c = 20;
    for (int k = 0; k < 2; k++)
        p->pkg[k].counter[PHYS_ZONE_PACKAGE].energy_unit_nj = 61035;
    phys_cpu_init(p, s);
    phys_cpu_begin_interval(p, s, load);
    phys_cpu_step(p, s, load, 20, 1000000000LL);
    for (int c = 0; c < 8; c++)
        assert_true(llabs((long long)phys_cpu_busy_ns(s, c, s->substeps) - (long long)(want[c] * 1e9)) <= 1000);
    phys_cpu_begin_interval(p, s, load);
    assert_true(s->pkg[0].power_w > s->pkg[1].power_w + 10);
    /* with alpha = beta = 1 the analytic package power is linear in the CPUs' mean utilization */
    assert_true(fabs((s->pkg[0].power_w - 40) / (s->pkg[1].power_w - 40) - 1.8 / 0.4) < 1e-6);
    free(p);
    free(s);
    free(load);
}

/* workloadProfile.gpuPeerTransfers: the job's GPU ordinals, mapped at run time to the node's GPUs
 * the job holds; a pair named twice (here, and by two lines) sums. */
static void test_peer_transfers(void **st)
{
    (void)st;
    struct trace t;
    struct diag d = {0};
    assert_int_equal(parse(&t, "{\"type\":\"job\",\"jobId\":\"ar\",\"podTemplate\":{\"requests\":{\"nvidia.com/gpu\":\"3\"}},"
                               "\"workloadProfile\":{\"gpuPeerTransfers\":[{\"from\":0,\"to\":1,\"GBps\":100},"
                               "{\"from\":1,\"to\":2,\"GBps\":50},{\"from\":0,\"to\":1,\"GBps\":25}]}}\n", &d), 0);
    const struct trace_job *tj = &t.jobs[0];
    assert_int_equal(tj->nxfer, 3);
    assert_true(tj->xfer[1].from == 1 && tj->xfer[1].to == 2 && tj->xfer[1].gbps == 50);
    struct run_job j = {.t = tj, .gpus = {2, 5, 6}, .ngpus = 3, .cpus = (int[]){0}};
    int on_node[1] = {0};
    unsigned char pkg_of[1] = {0};
    struct run_node rn = {.ncpus = 1, .npkgs = 1, .ngpus = 8, .cpu_pkg = pkg_of, .jobs = on_node, .njobs = 1};
    struct run r = {.jobs = &j, .njobs = 1, .nodes = &rn, .nnodes = 1};
    struct phys_load *load = calloc(1, sizeof *load);
    struct phys_gpu_load *gl = calloc(1, sizeof *gl);
    run_node_load(&r, 0, load, gl);
    assert_int_equal(gl->nxfer, 2);
    assert_true(gl->xfer[0].from == 2 && gl->xfer[0].to == 5 && gl->xfer[0].gbps == 125);
    assert_true(gl->xfer[1].from == 5 && gl->xfer[1].to == 6 && gl->xfer[1].gbps == 50);
    free(load);
    free(gl);
    trace_free(&t);
    /* every problem at its line: a GPU past the job's, the same GPU twice, no GBps, no GPUs */
    assert_int_equal(parse(&t, "{\"type\":\"job\",\"jobId\":\"a\",\"podTemplate\":{\"requests\":{\"gpu\":\"2\"}},"
                               "\"workloadProfile\":{\"gpuPeerTransfers\":[{\"from\":0,\"to\":2,\"GBps\":1},"
                               "{\"from\":1,\"to\":1,\"GBps\":1},{\"from\":0,\"to\":1}]}}\n"
                               "{\"type\":\"job\",\"jobId\":\"b\",\"workloadProfile\":{\"gpuPeerTransfers\":"
                               "[{\"from\":0,\"to\":1,\"GBps\":1}]}}\n", &d), -1);
    assert_int_equal(d.count, 4);
    assert_string_equal(d.msgs[0], "t.jsonl:1: workloadProfile.gpuPeerTransfers[0]: from and to must be two different "
                                   "GPUs of the job: whole numbers 0..1");
    assert_string_equal(d.msgs[1], "t.jsonl:1: workloadProfile.gpuPeerTransfers[1]: from and to must be two different "
                                   "GPUs of the job: whole numbers 0..1");
    assert_string_equal(d.msgs[2], "t.jsonl:1: workloadProfile.gpuPeerTransfers[2]: GBps must be a number above 0 "
                                   "(GB/s the transfer asks for)");
    assert_string_equal(d.msgs[3], "t.jsonl:2: workloadProfile.gpuPeerTransfers: transfers between GPUs need a job "
                                   "of at least 2 GPUs (podTemplate.requests)");
    diag_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v1_defaults),  cmocka_unit_test(test_v2_fields), cmocka_unit_test(test_errors_leave_nothing),
        cmocka_unit_test(test_quantities),   cmocka_unit_test(test_placement), cmocka_unit_test(test_throughput),
        cmocka_unit_test(test_generator),    cmocka_unit_test(test_per_cpu_load), cmocka_unit_test(test_peer_transfers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
