/* cli_trace: `hwemu trace generate` writes a synthetic Joulie trace (engine/runs/tracegen.h);
 * `hwemu trace validate FILE` reads one as a run would and prints every problem. */
#include "cli.h"
#include "diag.h"
#include "trace.h"
#include "tracegen.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char help[] =
    "Usage: hwemu trace generate [--out FILE] [--mode default|diurnal] [--seed N] [options]\n"
    "       hwemu trace validate FILE|DIR\n"
    "\n"
    "generate writes a Joulie workload trace (JSON Lines: type workload and type job records,\n"
    "schema v2) like the original's workloadgen; the same options and --seed give the same bytes.\n"
    "validate reads a trace as a run does and prints each problem as file:line: field: what was expected.\n"
    "\n"
    "Options of generate (the original's flags and defaults; single-dash spellings work too):\n"
    "  --jobs N (50)                     default mode: logical workloads\n"
    "  --out FILE (trace.jsonl; - is stdout)\n"
    "  --namespace NS (default)          --mean-inter-arrival-sec S (5)\n"
    "  --seed N (the current time, printed on stderr)\n"
    "  --perf-ratio P (0.30)             --compute-bound-perf-boost X (3.5)\n"
    "  --no-affinity-only BOOL (false)   --gpu-ratio P (0.80)\n"
    "  --gpu-request N (1)               --min-gpu-request N (0)        --amd-gpu-ratio P (0)\n"
    "  --cpu-work-rate-per-core X (1)    --gpu-work-rate-per-gpu X (1)\n"
    "  --emit-workload-records BOOL (true)\n"
    "  --burst-day-probability P (0.25)  --burst-mean-jobs N (8)        --burst-multiplier X (2)\n"
    "  --dip-day-probability P (0.30)    --dip-multiplier X (0.08)      --time-scale X (1)\n"
    "  --mode default|diurnal (default)  --sim-hours H (48)             --work-scale X (1)\n"
    "  --base-speed-per-core X (2)       --diurnal-burst-min N (20)     --diurnal-burst-max N (80)\n"
    "  --diurnal-peak-rate JOBS_PER_MIN (80)\n";

static bool num(const char *t, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    if (end == t || *end || errno || !isfinite(v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* a whole number in [lo, hi]: stored only when it is one */
static bool whole(const char *t, int lo, int hi, int *out)
{
    double v;
    if (!num(t, lo, hi, &v) || v != floor(v))
        return false;
    *out = (int)v;
    return true;
}

static bool boolean(const char *t, bool *out)
{
    if (!strcmp(t, "true") || !strcmp(t, "1") || !strcmp(t, "yes"))
        return *out = true, true;
    if (!strcmp(t, "false") || !strcmp(t, "0") || !strcmp(t, "no"))
        return *out = false, true;
    return false;
}

static int generate(int argc, char **argv)
{
    enum { O_JOBS = 1, O_OUT, O_NS, O_MIA, O_SEED, O_PERF, O_CBPB, O_NOAFF, O_GPUR, O_GPUREQ, O_CPURATE, O_GPURATE,
           O_EMIT, O_BDP, O_BMJ, O_BM, O_DDP, O_DM, O_TS, O_MODE, O_HOURS, O_WS, O_BSPC, O_DBMIN, O_DBMAX, O_DPR,
           O_MINGPU, O_AMD, O_HELP };
    static const struct option opts[] = {
        {"jobs", 1, 0, O_JOBS}, {"out", 1, 0, O_OUT}, {"namespace", 1, 0, O_NS},
        {"mean-inter-arrival-sec", 1, 0, O_MIA}, {"seed", 1, 0, O_SEED}, {"perf-ratio", 1, 0, O_PERF},
        {"compute-bound-perf-boost", 1, 0, O_CBPB}, {"no-affinity-only", 1, 0, O_NOAFF},
        {"gpu-ratio", 1, 0, O_GPUR}, {"gpu-request", 1, 0, O_GPUREQ}, {"cpu-work-rate-per-core", 1, 0, O_CPURATE},
        {"gpu-work-rate-per-gpu", 1, 0, O_GPURATE}, {"emit-workload-records", 1, 0, O_EMIT},
        {"burst-day-probability", 1, 0, O_BDP}, {"burst-mean-jobs", 1, 0, O_BMJ},
        {"burst-multiplier", 1, 0, O_BM}, {"dip-day-probability", 1, 0, O_DDP}, {"dip-multiplier", 1, 0, O_DM},
        {"time-scale", 1, 0, O_TS}, {"mode", 1, 0, O_MODE}, {"sim-hours", 1, 0, O_HOURS},
        {"work-scale", 1, 0, O_WS}, {"base-speed-per-core", 1, 0, O_BSPC}, {"diurnal-burst-min", 1, 0, O_DBMIN},
        {"diurnal-burst-max", 1, 0, O_DBMAX}, {"diurnal-peak-rate", 1, 0, O_DPR},
        {"min-gpu-request", 1, 0, O_MINGPU}, {"amd-gpu-ratio", 1, 0, O_AMD}, {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
    struct tracegen_opts o;
    tracegen_defaults(&o);
    o.seed = (uint64_t)time(NULL);
    bool seeded = false;
    const char *out = "trace.jsonl";
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long_only(argc, argv, "", opts, NULL)) != -1) {
        const char *name = c > 0 && c < O_HELP ? opts[c - 1].name : "";
        bool ok = true;
        switch (c) {
        case O_JOBS: ok = whole(optarg, 0, 10000000, &o.jobs); break;
        case O_OUT: out = optarg; break;
        case O_NS: o.ns = optarg; ok = *optarg && !strpbrk(optarg, "\"\\"); break;
        case O_MIA: ok = num(optarg, 1e-6, 1e9, &o.mean_inter_arrival_sec); break;
        case O_SEED: {
            char *end;
            errno = 0;
            long long s = strtoll(optarg, &end, 10);
            ok = end != optarg && !*end && !errno;
            o.seed = (uint64_t)s;
            seeded = true;
            break;
        }
        case O_PERF: ok = num(optarg, 0, 1, &o.perf_ratio); break;
        case O_CBPB: ok = num(optarg, 0, 1e3, &o.compute_bound_perf_boost); break;
        case O_NOAFF: ok = boolean(optarg, &o.no_affinity_only); break;
        case O_GPUR: ok = num(optarg, 0, 1, &o.gpu_ratio); break;
        case O_GPUREQ: ok = whole(optarg, 0, 16, &o.gpu_request); break;
        case O_CPURATE: ok = num(optarg, 0, 1e6, &o.cpu_work_rate_per_core); break;
        case O_GPURATE: ok = num(optarg, 0, 1e6, &o.gpu_work_rate_per_gpu); break;
        case O_EMIT: ok = boolean(optarg, &o.emit_workload_records); break;
        case O_BDP: ok = num(optarg, 0, 1, &o.burst_day_probability); break;
        case O_BMJ: ok = num(optarg, 0, 1e6, &o.burst_mean_jobs); break;
        case O_BM: ok = num(optarg, 0, 1e6, &o.burst_multiplier); break;
        case O_DDP: ok = num(optarg, 0, 1, &o.dip_day_probability); break;
        case O_DM: ok = num(optarg, 0, 1e6, &o.dip_multiplier); break;
        case O_TS: ok = num(optarg, 1e-6, 1e6, &o.time_scale); break;
        case O_MODE: ok = !strcmp(optarg, "default") || !strcmp(optarg, "diurnal"); o.diurnal = !strcmp(optarg, "diurnal"); break;
        case O_HOURS: ok = num(optarg, 0, 1e5, &o.sim_hours); break;
        case O_WS: ok = num(optarg, 0, 1e6, &o.work_scale); break;
        case O_BSPC: ok = num(optarg, 0, 1e6, &o.base_speed_per_core); break;
        case O_DBMIN: ok = whole(optarg, 0, 1000000, &o.diurnal_burst_min); break;
        case O_DBMAX: ok = whole(optarg, 0, 1000000, &o.diurnal_burst_max); break;
        case O_DPR: ok = num(optarg, 0, 1e6, &o.diurnal_peak_rate); break;
        case O_MINGPU: ok = whole(optarg, 0, 16, &o.min_gpu_request); break;
        case O_AMD: ok = num(optarg, 0, 1, &o.amd_gpu_ratio); break;
        case O_HELP: fputs(help, stdout); return EXIT_OK;
        default: return cli_bad_option("trace generate", argv, opts);
        }
        if (!ok)
            return cli_usage_error("trace generate", "--%s \"%s\" is not a valid value (see --help for the range)",
                                   name, optarg);
    }
    if (optind < argc)
        return cli_usage_error("trace generate", "unexpected argument \"%s\"", argv[optind]);
    if (o.diurnal_burst_max < o.diurnal_burst_min)
        return cli_usage_error("trace generate", "--diurnal-burst-max %d is below --diurnal-burst-min %d",
                               o.diurnal_burst_max, o.diurnal_burst_min);
    if (!seeded)
        fprintf(stderr, "hwemu trace generate: --seed %llu (pass it again for the same trace)\n",
                (unsigned long long)o.seed);
    FILE *f = strcmp(out, "-") ? fopen(out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "hwemu trace generate: cannot write %s: %s\n", out, strerror(errno));
        return EXIT_INVALID;
    }
    long n = tracegen_write(&o, f);
    if ((f != stdout && fclose(f)) || n < 0) {
        fprintf(stderr, "hwemu trace generate: cannot write %s: %s\n", out, strerror(errno));
        return EXIT_INVALID;
    }
    if (f != stdout)
        fprintf(stderr, "hwemu trace generate: %ld job records in %s\n", n, out);
    return EXIT_OK;
}

static int validate(int argc, char **argv)
{
    if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        if (argc == 2)
            return fputs(help, stdout), EXIT_OK;
        return cli_usage_error("trace validate", "expected one trace file or directory");
    }
    struct trace t;
    struct diag d = {0};
    if (trace_load(&t, argv[1], NULL, NULL, &d)) {
        diag_print(&d, stderr);
        fprintf(stderr, "hwemu trace validate: %d problem%s\n", d.count, d.count == 1 ? "" : "s");
        diag_free(&d);
        return EXIT_INVALID;
    }
    int gpu = 0, perf = 0, gang = 0;
    for (int i = 0; i < t.njobs; i++) {
        gpu += t.jobs[i].gpus > 0;
        perf += t.jobs[i].cls == JOB_PERFORMANCE;
        gang += t.jobs[i].gang;
    }
    printf("%s: %d jobs (%d with GPUs, %d performance, %d in gangs), %d workload records, last submit at %.3f s\n",
           argv[1], t.njobs, gpu, perf, gang, t.nworkloads, t.njobs ? t.jobs[t.njobs - 1].submit_s : 0);
    trace_free(&t);
    diag_free(&d);
    return EXIT_OK;
}

int cmd_trace(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(help, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    if (!strcmp(argv[1], "generate"))
        return generate(argc - 1, argv + 1);
    if (!strcmp(argv[1], "validate"))
        return validate(argc - 1, argv + 1);
    return cli_usage_error("trace", "unknown subcommand \"%s\" (generate or validate)", argv[1]);
}
