/* cli_run: `hwemu run --spec S --trace T`: one workload run to its end on a cluster spec,
 * without HTTP, then its summary on stdout: readable, or its status JSON with --json (on a
 * terminal, its progress meanwhile: cli_run_show.c). The nodes' segments live under the root as with
 * `hwemu serve` (agents can run against them meanwhile, and a later serve resumes them). */
#include "cli.h"
#include "cli_run_show.h"
#include "diag.h"
#include "duration.h"
#include "engine.h"
#include "run_otlp.h"
#include "runs.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help[] =
    "Usage: hwemu run --trace FILE|DIR [--spec FILE] [--profiles-dir DIR] [--root DIR] [--runs-dir DIR]\n"
    "                 [--tick DURATION] [--workers N] [--speed N|max] [--batch N] [--course-interval D]\n"
    "                 [--time emulated|wall] [--wait-agents N] [--agent-wait D] [--json]\n"
    "\n"
    "Runs one workload trace on the cluster spec's nodes to its end (every job completed or\n"
    "stalled) and prints the run's summary (readable; --json: its status JSON); on a terminal its\n"
    "progress meanwhile on stderr (emulated time, jobs by state, energy, time left). A run the\n"
    "engine was stopped in the middle of (its state.json in the runs directory) resumes instead.\n"
    "Outputs go to the runs directory <runs-dir>/<runId>/: trace.jsonl, jobs.jsonl, course.jsonl,\n"
    "summary.json. SIGTERM or SIGINT suspends the run (its state.json kept) and the same command\n"
    "resumes it. Exit 0 when every job completed, 1 when the trace is invalid or a job stalled, 2 on\n"
    "a usage error, 3 when it was suspended.\n"
    "\n"
    "Options (each also read from the environment variable shown):\n"
    "  --trace FILE|DIR    the trace (SIM_WORKLOAD_TRACE_PATH); a directory: its *.jsonl in name order\n"
    "  --spec FILE         the cluster spec (SIM_CLUSTER_SPEC); default: the embedded specs/smoke.yaml\n"
    "  --profiles-dir DIR  local profiles (SIM_PROFILES_DIR)\n"
    "  --root DIR          node segments (SIM_HWEMU_ROOT); default /dev/shm/hwemu\n"
    "  --runs-dir DIR      run outputs (SIM_RUNS_DIR); default <root>/runs\n"
    "  --tick DURATION     emulated time per tick (SIM_EMULATE_TICK); default 1s\n"
    "  --workers N         tick worker threads (SIM_EMULATE_WORKERS)\n"
    "  --speed N|max       emulated time per wall time (SIM_SPEED); default 1 (wall time, agents in\n"
    "                      the loop); N: N times faster, agents see counters move N times faster;\n"
    "                      max: ticks back to back\n"
    "  --batch N           at --speed max: a node steps and publishes once per N ticks, and in\n"
    "                      between only when its load or limits change (SIM_BATCH_TICKS); default 300, 1: every tick\n"
    "  --base-speed-per-core X   work units per core-second (SIM_BASE_SPEED_PER_CORE); default 1\n"
    CLI_TIME_HELP("                      ")
    "  --json              print the run's status object (JSON) at the end instead of the readable summary\n"
    "  --course-interval D emulated time between the lines of the run's course.jsonl\n"
    "                      (SIM_RUN_COURSE_INTERVAL); default 60s\n"
    "SIM_RUN_CHECKPOINT_INTERVAL: the least wall time between the run's checkpoints (default 30s).\n";

static struct engine eng;

static void on_signal(int sig)
{
    (void)sig;
    eng.stop = 1;
}

int cli_parse_speed(const char *text, double *speed)
{
    if (!strcmp(text, "max")) {
        *speed = ENGINE_SPEED_MAX;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno || !isfinite(v) || v < 1 || v > 1e6)
        return -1;
    *speed = v;
    return 0;
}

int cli_parse_batch(const char *text, int *ticks)
{
    char *end;
    errno = 0;
    long b = strtol(text, &end, 10);
    if (end == text || *end || errno || b < 1 || b > 1000000)
        return -1;
    *ticks = (int)b;
    return 0;
}

/* The run's end on stdout: its status object s (--json), else the readable summary. */
static void print_summary(const char *dir, const char *id, const cJSON *s, bool json)
{
    if (!json) {
        run_show_summary(stdout, dir, id, s);
        return;
    }
    char *text = s ? cJSON_Print(s) : NULL;
    if (text)
        printf("%s\n", text);
    free(text);
}

int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"trace", 1, 0, 'T'}, {"spec", 1, 0, 's'}, {"profiles-dir", 1, 0, 'p'}, {"root", 1, 0, 'r'},
        {"runs-dir", 1, 0, 'R'}, {"tick", 1, 0, 't'}, {"workers", 1, 0, 'w'}, {"speed", 1, 0, 'S'},
        {"base-speed-per-core", 1, 0, 'b'}, {"batch", 1, 0, 'B'}, {"json", 0, 0, 'j'}, {"course-interval", 1, 0, 'C'},
        {"time", 1, 0, 'E'}, {"wait-agents", 1, 0, 'N'}, {"agent-wait", 1, 0, 'W'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    struct engine_config cfg = {.spec_path = cli_env("SIM_CLUSTER_SPEC"), .profiles_dir = cli_env("SIM_PROFILES_DIR"),
                                .root = cli_env("SIM_HWEMU_ROOT")};
    const char *trace = cli_env("SIM_WORKLOAD_TRACE_PATH"), *runs_dir = cli_env("SIM_RUNS_DIR");
    const char *tick = cli_env("SIM_EMULATE_TICK"), *workers = cli_env("SIM_EMULATE_WORKERS");
    const char *tick_from = "SIM_EMULATE_TICK", *workers_from = "SIM_EMULATE_WORKERS";
    const char *speed = cli_env("SIM_SPEED"), *bspeed = cli_env("SIM_BASE_SPEED_PER_CORE");
    const char *batch = cli_env("SIM_BATCH_TICKS"), *course = cli_env("SIM_RUN_COURSE_INTERVAL");
    const char *course_from = "SIM_RUN_COURSE_INTERVAL";
    const char *time = cli_env("SIM_TIME"), *wait_agents = cli_env("SIM_WAIT_AGENTS"), *agent_wait = cli_env("SIM_AGENT_WAIT");
    bool json = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long_only(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'T': trace = optarg; break;
        case 's': cfg.spec_path = optarg; break;
        case 'p': cfg.profiles_dir = optarg; break;
        case 'r': cfg.root = optarg; break;
        case 'R': runs_dir = optarg; break;
        case 't': tick = optarg, tick_from = "--tick"; break;
        case 'w': workers = optarg, workers_from = "--workers"; break;
        case 'S': speed = optarg; break;
        case 'b': bspeed = optarg; break;
        case 'B': batch = optarg; break;
        case 'j': json = true; break;
        case 'C': course = optarg, course_from = "--course-interval"; break;
        case 'E': time = optarg; break;
        case 'N': wait_agents = optarg; break;
        case 'W': agent_wait = optarg; break;
        case 'h': fputs(help, stdout); return EXIT_OK;
        default: return cli_bad_option("run", argv, opts);
        }
    }
    if (optind < argc)
        return cli_usage_error("run", "unexpected argument \"%s\"", argv[optind]);
    if (!trace)
        return cli_usage_error("run", "--trace is required (or SIM_WORKLOAD_TRACE_PATH); `hwemu trace generate` "
                                      "writes one");
    if (!cfg.root)
        cfg.root = "/dev/shm/hwemu";
    if (cli_tick_workers("run", tick, tick_from, workers, workers_from, &cfg.tick_ns, &cfg.workers))
        return EXIT_USAGE;
    cfg.speed = 1;
    if (speed && cli_parse_speed(speed, &cfg.speed))
        return cli_usage_error("run", "--speed \"%s\" is not a speed: a number from 1 to 1000000, or max", speed);
    if (cli_time_options("run", time, wait_agents, agent_wait, &cfg.time_emulated, &cfg.wait_agents,
                         &cfg.agent_wait_ns))
        return EXIT_USAGE;
    if (batch && cli_parse_batch(batch, &cfg.batch_ticks))
        return cli_usage_error("run", "--batch \"%s\" is not a number of ticks from 1 to 1000000", batch);
    int64_t course_ns = 0;
    if (course && (!duration_parse(course, &course_ns) || course_ns <= 0))
        return cli_usage_error("run", "%s \"%s\" is not a duration (60s, 5m)", course_from, course);
    double base = 1;
    if (bspeed) {
        char *end;
        base = strtod(bspeed, &end);
        if (*end || !(base > 0) || base > 1e6)
            return cli_usage_error("run", "--base-speed-per-core \"%s\" is not a positive number", bspeed);
    }
    int started = engine_start(&eng, &cfg);
    cli_print_said("run", eng.said); /* its errors, or notes of a start that went on */
    if (started) {
        engine_stop(&eng);
        return EXIT_INVALID;
    }
    int64_t ckpt = 0;
    const char *ckpt_text = cli_env("SIM_RUN_CHECKPOINT_INTERVAL");
    if (ckpt_text && (!duration_parse(ckpt_text, &ckpt) || ckpt <= 0)) {
        engine_stop(&eng);
        return cli_usage_error("run", "SIM_RUN_CHECKPOINT_INTERVAL \"%s\" is not a duration (30s, 500ms)", ckpt_text);
    }
    char err[4400];
    struct runs *m = runs_attach(&eng, runs_dir, base, ckpt, err, sizeof err);
    if (!m) {
        fprintf(stderr, "hwemu run: %s\n", err);
        engine_stop(&eng);
        return EXIT_INVALID;
    }
    run_otlp_attach(m); /* the run's OTLP files */
    runs_set_course_interval(m, course_ns);
    char *dir = strdup(runs_path(m)); /* for the summary, after runs_detach */
    if (!dir)
        abort();
    struct diag d = {0};
    char id[64];
    int rc = 0;
    if (runs_active_id(m, id, sizeof id)) /* this root's runs directory had a run in the middle: it goes on */
        fprintf(stderr, "hwemu run: run %s resumed; the trace %s is not started\n", id, trace);
    else
        rc = runs_submit_path(m, trace, NULL, id, sizeof id, &d);
    if (rc) {
        diag_print(&d, stderr);
        fprintf(stderr, "hwemu run: the trace was not started (%d problem%s); nothing ran\n", d.count,
                d.count == 1 ? "" : "s");
        diag_free(&d);
        free(dir);
        runs_detach(m);
        run_otlp_close();
        engine_stop(&eng);
        return EXIT_INVALID;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    fprintf(stderr, "hwemu run: %s on %d nodes from %s; tick %.3f s, speed %s\n", id, eng.nnodes,
            cfg.spec_path ? cfg.spec_path : "builtin specs/smoke.yaml", (double)cfg.tick_ns / 1e9,
            speed ? speed : "1");
    struct run_show show;
    run_show_start(&show);
    if (cfg.speed == ENGINE_SPEED_MAX) {
        while (!eng.stop && runs_busy(m)) {
            engine_tick(&eng);
            run_show_tick(&show, m);
        }
    } else {
        int64_t period = (int64_t)((double)cfg.tick_ns / (cfg.speed > 1 ? cfg.speed : 1));
        while (!eng.stop && runs_busy(m)) {
            struct timespec ts = {.tv_sec = period / 1000000000, .tv_nsec = period % 1000000000};
            nanosleep(&ts, NULL);
            engine_tick(&eng);
            run_show_tick(&show, m);
        }
    }
    run_show_end(&show);
    if (eng.stop && runs_busy(m)) {
        /* interrupted: the run is suspended (docs/runs.md "Restarts"), and the same command resumes
         * it; its status says so */
        cJSON *s = runs_get_json(m, id);
        bool kept = runs_detach(m);
        if (s) {
            cJSON_ReplaceItemInObjectCaseSensitive(s, "state", cJSON_CreateString(kept ? "suspended" : "stopped"));
            print_summary(dir, id, s, json);
            cJSON_Delete(s);
        }
        free(dir);
        run_otlp_close();
        engine_stop(&eng);
        if (kept)
            fprintf(stderr, "hwemu run: %s suspended; the same command (the same --root or --runs-dir) resumes it\n",
                    id);
        else
            fprintf(stderr, "hwemu run: %s: its state could not be written at the stop (see above)\n", id);
        return kept ? EXIT_SUSPENDED : EXIT_INVALID;
    }
    const char *state = runs_state(m, id);
    cJSON *s = runs_get_json(m, id);
    print_summary(dir, id, s, json);
    cJSON_Delete(s);
    free(dir);
    bool ok = state && !strcmp(state, "completed");
    if (!ok)
        fprintf(stderr, "hwemu run: %s ended %s (see jobs.jsonl: each stalled job says why)\n", id,
                state ? state : "?");
    runs_detach(m);
    run_otlp_close();
    engine_stop(&eng);
    return ok ? EXIT_OK : EXIT_INVALID;
}
