/* cli_serve: `hwemu serve`: run the engine on a cluster spec until SIGINT or SIGTERM; on a
 * terminal, the progress of a long start (the engine reports it through a callback and prints
 * nothing itself). */
#include "cli.h"
#include "cluster.h"
#include "cluster_pods.h"
#include "duration.h"
#include "engine.h"
#include "exporters.h"
#include "http.h"
#include "http_runs.h"
#include "diag.h"
#include "kube_config.h"
#include "run_otlp.h"
#include "runs.h"
#include "otlp.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char help[] =
    "Usage: hwemu serve [--spec FILE] [--profiles-dir DIR] [--root DIR] [--addr HOST:PORT]\n"
    "                   [--tick DURATION] [--workers N] [--exporters LIST] [--speed N|max] [--batch N]\n"
    "                   [--http-auth-file FILE] [--tls-cert FILE --tls-key FILE] [--http-max-connections N]\n"
    "                   [--http-timeout DURATION] [--trace-dir DIR] [--shard I/N]\n"
    "                   [--kubeconfig FILE|incluster] [--time emulated|wall] [--wait-agents N] [--agent-wait D]\n"
    "\n"
    "Runs every node of the cluster spec: renders (or resumes) one segment per node under the root,\n"
    "steps every node each tick, and serves a page at / and /telemetry/<node>, /control/<node>,\n"
    "/debug/nodes, /debug/cluster, /debug/history, /debug/events, /debug/energy and /metrics over\n"
    "HTTP. On a terminal, a long start shows its progress on stderr (nodes done, rate, time left).\n"
    "Stops cleanly on SIGINT or SIGTERM; a later start on the same root resumes every node where it\n"
    "stopped.\n"
    "\n"
    "Options (each also read from the environment variable shown):\n"
    "  --spec FILE          the cluster spec (SIM_CLUSTER_SPEC); default: the embedded specs/smoke.yaml\n"
    "  --profiles-dir DIR   local profiles added to the builtin ones (SIM_PROFILES_DIR)\n"
    "  --root DIR           where the node segments and events.jsonl live (SIM_HWEMU_ROOT);\n"
    "                       default /dev/shm/hwemu (tmpfs)\n"
    "  --addr HOST:PORT     HTTP listen address (SIM_ADDR); default 127.0.0.1:18080 (loopback; another\n"
    "                       interface gets a warning); port 0: the kernel picks one, printed at start\n"
    "  --tick DURATION      tick period, Go syntax such as 1s or 250ms (SIM_EMULATE_TICK); default 1s\n"
    "  --workers N          tick worker threads (SIM_EMULATE_WORKERS); default the online CPUs, at most 12\n"
    "  --exporters LIST     exporter formats served per node at /exporters/<format>/<node>/metrics\n"
    "                       (SIM_EXPORTERS; default none): kepler-0.7, kepler-0.12, dcgm-exporter, rocm-device-metrics\n"
    "  --speed N|max        emulated time per wall time (SIM_SPEED): 1 (default) wall time; N: N times\n"
    "                       faster (agents see counters move N times faster); max: ticks back to back\n"
    "  --batch N            at --speed max: a node steps and publishes once per N ticks, and in between\n"
    "                       only when its load or limits change (SIM_BATCH_TICKS); default 300, 1: every tick\n"
    CLI_TIME_HELP("                       ")
    "  --http-auth-file FILE  HTTP basic auth for every route but /healthz; the file's first line is\n"
    "                       user:password (SIM_HTTP_AUTH_FILE); default none\n"
    "  --tls-cert FILE      serve HTTPS with this PEM certificate (SIM_TLS_CERT); needs --tls-key\n"
    "  --tls-key FILE       the certificate's PEM private key (SIM_TLS_KEY); default plain HTTP\n"
    "  --http-max-connections N  connections served at once; more are closed at once\n"
    "                       (SIM_HTTP_MAX_CONNECTIONS); default 4096\n"
    "  --http-timeout DURATION  a connection idle this long is closed (SIM_HTTP_TIMEOUT); default 15s\n"
    "  --trace-dir DIR      POST /runs {\"tracePath\"} reads traces from this directory only (SIM_TRACE_DIR);\n"
    "                       default none: tracePath is refused (403), a trace in the body still works\n"
    "  --shard I/N          run only shard I of N (SIM_SHARD): the spec's k-th node (from 0) when k mod N\n"
    "                       is I; auto/N: I from the host name's trailing -I (a StatefulSet's pod NAME-I);\n"
    "                       `hwemu clusterspec list --shard I/N` shows the slice. Default: every node\n"
    "  --kubeconfig FILE|incluster  register every node (of the shard) as a Kubernetes Node and keep them\n"
    "                       (SIM_KUBECONFIG): FILE's current context, or incluster: the pod's service\n"
    "                       account (KUBERNETES_SERVICE_HOST/PORT, /var/run/secrets/kubernetes.io/\n"
    "                       serviceaccount); labels set on the Nodes reach the engine as PUT\n"
    "                       /nodes/<n>/labels does; a run's jobs become batch/v1 Jobs that the cluster's\n"
    "                       scheduler places; with --shard, each shard runs the pods bound to its nodes\n"
    "                       (give every shard the same trace; `hwemu runs merge` makes their run\n"
    "                       directories one: docs/kubernetes.md \"Sharding\"). Default: no cluster\n"
    "  -h, --help           this text\n"
    "\n"
    "Workload runs (docs/runs.md): POST /runs[?key=KEY], GET /runs[/<runId>], POST /runs/<runId>/stop; a\n"
    "trace in SIM_WORKLOAD_TRACE_PATH starts at startup, with the run key SIM_RUN_KEY (the key naming the\n"
    "run's Kubernetes Jobs; by default on a shard a hash of the trace, the spec's name and the work\n"
    "rate); outputs under SIM_RUNS_DIR (default <root>/runs); a run checkpoints every 300 ticks, at\n"
    "most every SIM_RUN_CHECKPOINT_INTERVAL (default 30s), and resumes at the next start after a stop\n"
    "or a crash; SIM_RUN_COURSE_INTERVAL (default 60s): the emulated time between the lines of a\n"
    "run's course.jsonl.\n";

static struct engine eng;

/* The start's progress line on a terminal: nothing for a start shorter than PROGRESS_AFTER_NS,
 * then one line rewritten in place at most every PROGRESS_EVERY_NS, erased when every node is up
 * (the summary line says the rest). */
#define PROGRESS_AFTER_NS 300000000LL
#define PROGRESS_EVERY_NS 100000000LL

struct progress {
    int64_t t0, last;
    bool shown;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void show_progress(void *ctx, int done, int total, int resumed)
{
    struct progress *p = ctx;
    int64_t now = mono_ns();
    if (done == total) {
        if (p->shown)
            fputs("\r\033[K", stderr);
        return;
    }
    if (now - p->t0 < PROGRESS_AFTER_NS || now - p->last < PROGRESS_EVERY_NS)
        return;
    p->last = now;
    p->shown = true;
    double secs = (double)(now - p->t0) / 1e9, rate = done / secs;
    double left = rate > 0 ? (total - done) / rate : 0;
    const char *what = resumed == 0 ? "rendering" : resumed == done ? "resuming" : "rendering and resuming";
    fprintf(stderr, "\rhwemu serve: %s nodes: %d/%d (%.0f%%), %.0f nodes/s, %.0f s left\033[K", what, done, total,
            100.0 * done / total, rate, left + 0.5);
}

static void on_signal(int sig)
{
    (void)sig;
    eng.stop = 1;
}

/* A test setting of bytes (docs/robustness.md "Capacity") from environment variable name into
 * *out, said on stderr ("<name>: <before> <bytes> <after> (a test setting)"): 0, or the usage
 * error's exit code. */
static int debug_bytes(const char *name, const char *before, const char *after, uint64_t *out)
{
    const char *s = cli_env(name);
    if (!s)
        return 0;
    char *end;
    unsigned long long b = strtoull(s, &end, 10);
    if (*end || end == s || !b)
        return cli_usage_error("serve", "%s=\"%.100s\" is not a number of bytes above 0 (a test setting: "
                               "docs/robustness.md)", name, s);
    *out = b;
    fprintf(stderr, "hwemu serve: %s: %s %llu %s (a test setting)\n", name, before, b, after);
    return 0;
}

int cmd_serve(int argc, char **argv)
{
    static const struct option opts[] = {
        {"spec", required_argument, 0, 's'}, {"profiles-dir", required_argument, 0, 'p'},
        {"root", required_argument, 0, 'r'}, {"addr", required_argument, 0, 'a'},
        {"tick", required_argument, 0, 't'}, {"workers", required_argument, 0, 'w'},
        {"exporters", required_argument, 0, 'x'}, {"speed", required_argument, 0, 'S'}, {"batch", required_argument, 0, 'B'},
        {"http-auth-file", required_argument, 0, 'A'}, {"tls-cert", required_argument, 0, 'C'},
        {"tls-key", required_argument, 0, 'K'},         {"http-max-connections", required_argument, 0, 'M'},
        {"http-timeout", required_argument, 0, 'T'}, {"trace-dir", required_argument, 0, 'D'},
        {"shard", required_argument, 0, 'H'},
        {"kubeconfig", required_argument, 0, 'k'},
        {"time", required_argument, 0, 'E'}, {"wait-agents", required_argument, 0, 'N'},
        {"agent-wait", required_argument, 0, 'W'},
        {"help", no_argument, 0, 'h'},       {0, 0, 0, 0}};
    struct engine_config cfg = {
        .spec_path = cli_env("SIM_CLUSTER_SPEC"), .profiles_dir = cli_env("SIM_PROFILES_DIR"),
        .root = cli_env("SIM_HWEMU_ROOT"), .addr = cli_env("SIM_ADDR")};
    const char *tick = cli_env("SIM_EMULATE_TICK"), *workers = cli_env("SIM_EMULATE_WORKERS");
    const char *tick_from = "SIM_EMULATE_TICK", *workers_from = "SIM_EMULATE_WORKERS";
    const char *exporters = cli_env("SIM_EXPORTERS"), *exporters_from = "SIM_EXPORTERS";
    struct http_config hcfg = {.auth_file = cli_env("SIM_HTTP_AUTH_FILE"), .tls_cert = cli_env("SIM_TLS_CERT"),
                               .tls_key = cli_env("SIM_TLS_KEY")};
    const char *maxconn = cli_env("SIM_HTTP_MAX_CONNECTIONS"), *maxconn_from = "SIM_HTTP_MAX_CONNECTIONS";
    const char *htimeout = cli_env("SIM_HTTP_TIMEOUT"), *htimeout_from = "SIM_HTTP_TIMEOUT";
    const char *addr_from = "SIM_ADDR";
    const char *speed = cli_env("SIM_SPEED"), *speed_from = "SIM_SPEED";
    const char *batch = cli_env("SIM_BATCH_TICKS"), *batch_from = "SIM_BATCH_TICKS";
    const char *trace_dir = cli_env("SIM_TRACE_DIR"), *trace_dir_from = "SIM_TRACE_DIR";
    const char *shard = cli_env("SIM_SHARD"), *shard_from = "SIM_SHARD";
    const char *kubeconfig = cli_env("SIM_KUBECONFIG"), *kubeconfig_from = "SIM_KUBECONFIG";
    const char *time = cli_env("SIM_TIME"), *wait_agents = cli_env("SIM_WAIT_AGENTS"), *agent_wait = cli_env("SIM_AGENT_WAIT");
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long_only(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 's': cfg.spec_path = optarg; break;
        case 'p': cfg.profiles_dir = optarg; break;
        case 'r': cfg.root = optarg; break;
        case 'a': cfg.addr = optarg, addr_from = "--addr"; break;
        case 't': tick = optarg, tick_from = "--tick"; break;
        case 'w': workers = optarg, workers_from = "--workers"; break;
        case 'x': exporters = optarg, exporters_from = "--exporters"; break;
        case 'A': hcfg.auth_file = optarg; break;
        case 'C': hcfg.tls_cert = optarg; break;
        case 'K': hcfg.tls_key = optarg; break;
        case 'M': maxconn = optarg, maxconn_from = "--http-max-connections"; break;
        case 'T': htimeout = optarg, htimeout_from = "--http-timeout"; break;
        case 'S': speed = optarg, speed_from = "--speed"; break;
        case 'B': batch = optarg, batch_from = "--batch"; break;
        case 'D': trace_dir = optarg, trace_dir_from = "--trace-dir"; break;
        case 'H': shard = optarg, shard_from = "--shard"; break;
        case 'k': kubeconfig = optarg, kubeconfig_from = "--kubeconfig"; break;
        case 'E': time = optarg; break;
        case 'N': wait_agents = optarg; break;
        case 'W': agent_wait = optarg; break;
        case 'h': fputs(help, stdout); return EXIT_OK;
        default: return cli_bad_option("serve", argv, opts);
        }
    }
    if (optind < argc)
        return cli_usage_error("serve", "unexpected argument \"%s\"", argv[optind]);
    if (!cfg.root)
        cfg.root = "/dev/shm/hwemu";
    if (!cfg.addr)
        cfg.addr = "127.0.0.1:18080";
    if (cli_tick_workers("serve", tick, tick_from, workers, workers_from, &cfg.tick_ns, &cfg.workers))
        return EXIT_USAGE;
    char host[256], aerr[512];
    unsigned port;
    if (http_parse_addr(cfg.addr, host, sizeof host, &port, aerr, sizeof aerr))
        return cli_usage_error("serve", "%s: %s", addr_from, aerr);
    hcfg.addr = cfg.addr;
    if (maxconn) {
        char *end;
        long m = strtol(maxconn, &end, 10);
        if (*end || end == maxconn || m < 1 || m > 1000000)
            return cli_usage_error("serve", "%s=\"%.100s\" is not a number of connections between 1 and 1000000",
                                   maxconn_from, maxconn);
        hcfg.max_connections = (unsigned)m;
    }
    if (htimeout) {
        int64_t ns;
        if (!duration_parse(htimeout, &ns) || ns < 1000000000LL || ns > 3600000000000LL)
            return cli_usage_error("serve", "%s=\"%.100s\" is not a timeout between 1s and 1h (Go syntax: 15s)",
                                   htimeout_from, htimeout);
        hcfg.timeout_s = (unsigned)(ns / 1000000000LL);
    }
    struct stat tsb;
    if (trace_dir && (stat(trace_dir, &tsb) || !S_ISDIR(tsb.st_mode)))
        return cli_usage_error("serve", "%s=\"%.200s\" is not a directory: name the directory POST /runs may read "
                               "traces from (docs/security.md)", trace_dir_from, trace_dir);
    if (!hcfg.tls_cert != !hcfg.tls_key)
        return cli_usage_error("serve", "TLS needs both --tls-cert and --tls-key (or SIM_TLS_CERT and SIM_TLS_KEY)");
    cfg.speed = 1;
    if (speed && cli_parse_speed(speed, &cfg.speed))
        return cli_usage_error("serve", "%s=\"%s\" is not a speed: a number from 1 to 1000000, or max", speed_from,
                               speed);
    if (cli_time_options("serve", time, wait_agents, agent_wait, &cfg.time_emulated, &cfg.wait_agents,
                         &cfg.agent_wait_ns))
        return EXIT_USAGE;
    if (batch && cli_parse_batch(batch, &cfg.batch_ticks))
        return cli_usage_error("serve", "%s=\"%s\" is not a number of ticks from 1 to 1000000", batch_from, batch);
    if (shard && cli_parse_shard("serve", shard, shard_from, &cfg.shard_index, &cfg.shard_count))
        return EXIT_USAGE;
    double base_speed = 1;
    const char *bs = cli_env("SIM_BASE_SPEED_PER_CORE");
    if (bs) {
        char *end;
        base_speed = strtod(bs, &end);
        if (*end || !(base_speed > 0) || base_speed > 1e6)
            return cli_usage_error("serve", "SIM_BASE_SPEED_PER_CORE=\"%s\" is not a positive number", bs);
    }
    const char *late = cli_env("HWEMU_DEBUG_LATE_TICK");
    if (late && (!duration_parse(late, &cfg.debug_late_ns) || cfg.debug_late_ns <= 0 ||
                 cfg.debug_late_ns >= cfg.tick_ns / 2))
        return cli_usage_error("serve", "HWEMU_DEBUG_LATE_TICK=\"%.100s\" is not a duration above 0 and below half "
                               "the tick (a test setting: docs/robustness.md)", late);
    int drc = debug_bytes("HWEMU_DEBUG_ROOT_FREE", "the root's file system is taken to have", "bytes free",
                          &cfg.debug_root_free);
    if (!drc)
        drc = debug_bytes("HWEMU_DEBUG_MEM_AVAILABLE", "the machine is taken to have", "bytes of memory available",
                          &cfg.debug_mem_available);
    if (drc)
        return drc;
    char xerr[256];
    if (exporters_parse(exporters, &cfg.exporters, xerr, sizeof xerr))
        return cli_usage_error("serve", "%s=\"%s\": %s", exporters_from, exporters, xerr);
    if (kubeconfig) { /* a kubeconfig that cannot work is said before any node starts */
        struct kube_config kc;
        char kerr[1024];
        int krc = !strcmp(kubeconfig, CLUSTER_INCLUSTER) ? kube_config_incluster(&kc, NULL, kerr, sizeof kerr)
                                                         : kube_config_load(&kc, kubeconfig, kerr, sizeof kerr);
        kube_config_free(&kc);
        if (krc) {
            fprintf(stderr, "hwemu serve: %s=%s: %s\n", kubeconfig_from, kubeconfig, kerr);
            return EXIT_INVALID;
        }
    }
    /* the address, credentials and certificate first: a port in use fails now, not after every
     * node is rendered */
    char err[1024];
    struct http *h = http_listen(&hcfg, err, sizeof err);
    if (!h) {
        fprintf(stderr, "hwemu serve: %s\n", err);
        return EXIT_INVALID;
    }
    struct progress progress = {.t0 = mono_ns()};
    if (isatty(STDERR_FILENO)) {
        cfg.progress = show_progress;
        cfg.progress_ctx = &progress;
    }
    int started = engine_start(&eng, &cfg);
    cli_print_said("serve", eng.said); /* its errors, or notes of a start that went on */
    if (started) {
        http_stop(h);
        engine_stop(&eng);
        return EXIT_INVALID;
    }
    struct otlp *otlp = otlp_attach(&eng, err, sizeof err);
    if (!otlp && *err) {
        fprintf(stderr, "hwemu serve: %s\n", err);
        http_stop(h);
        engine_stop(&eng);
        return EXIT_USAGE;
    }
    int64_t ckpt = 0;
    const char *ckpt_text = cli_env("SIM_RUN_CHECKPOINT_INTERVAL");
    if (ckpt_text && (!duration_parse(ckpt_text, &ckpt) || ckpt <= 0)) {
        otlp_detach(&eng, otlp);
        http_stop(h);
        engine_stop(&eng);
        return cli_usage_error("serve", "SIM_RUN_CHECKPOINT_INTERVAL \"%s\" is not a duration (30s, 500ms)",
                               ckpt_text);
    }
    int64_t course_ns = 0; /* each run's course.jsonl interval (engine/runs/run_course.h) */
    const char *course = cli_env("SIM_RUN_COURSE_INTERVAL");
    if (course && (!duration_parse(course, &course_ns) || course_ns <= 0)) {
        otlp_detach(&eng, otlp);
        engine_stop(&eng);
        return cli_usage_error("serve", "SIM_RUN_COURSE_INTERVAL \"%s\" is not a duration (60s, 5m)", course);
    }
    struct runs *runs = runs_attach(&eng, cli_env("SIM_RUNS_DIR"), base_speed, ckpt, err, sizeof err);
    if (!runs) {
        fprintf(stderr, "hwemu serve: %s\n", err);
        http_stop(h);
        otlp_detach(&eng, otlp);
        engine_stop(&eng);
        return EXIT_INVALID;
    }
    run_otlp_attach(runs); /* the runs' OTLP files */
    runs_set_course_interval(runs, course_ns);
    const char *trace = cli_env("SIM_WORKLOAD_TRACE_PATH");
    const char *run_key = cli_env("SIM_RUN_KEY");
    if (trace && runs_busy(runs)) /* a run this engine stopped in the middle of resumed: not again */
        fprintf(stderr, "hwemu serve: a resumed run is active; SIM_WORKLOAD_TRACE_PATH=%s is not started again\n",
                trace);
    else if (trace) {
        struct diag d = {0};
        char id[64];
        int rc = runs_submit_path(runs, trace, run_key, id, sizeof id, &d);
        if (rc) {
            diag_print(&d, stderr);
            fprintf(stderr, "hwemu serve: SIM_WORKLOAD_TRACE_PATH=%s was not started (%d problem%s)\n", trace,
                    d.count, d.count == 1 ? "" : "s");
            diag_free(&d);
            http_stop(h);
            runs_detach(runs);
            run_otlp_close();
            otlp_detach(&eng, otlp);
            engine_stop(&eng);
            return EXIT_INVALID;
        }
        fprintf(stderr, "hwemu serve: run %s of %s starts now\n", id, trace);
    }
    http_runs_set(runs);
    http_runs_set_trace_dir(trace_dir);
    /* the start line before the first answer but 503s: whoever got /healthz can read it */
    fprintf(stderr, "hwemu serve: %d nodes (%d resumed) from %s in %.3f s; root %s; %s; tick %.3f s, %d "
            "workers\n", eng.nnodes, eng.resumed, cfg.spec_path ? cfg.spec_path : "builtin specs/smoke.yaml",
            eng.start_seconds, cfg.root, http_url(h), (double)cfg.tick_ns / 1e9, cfg.workers);
    http_start(h, &eng, otlp);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (cfg.shard_count > 1)
        fprintf(stderr, "hwemu serve: shard %d/%d: %d of the spec's %d nodes (the k-th when k mod %d is %d)\n",
                cfg.shard_index, cfg.shard_count, eng.nnodes, eng.spec_nnodes, cfg.shard_count, cfg.shard_index);
    /* after the OTLP sink is on the event log (the cluster's thread emits events from its start)
     * and after the start line (its thread prints what the API answers) */
    struct cluster *cluster = NULL;
    struct cluster_pods *pods = NULL;
    if (kubeconfig) {
        cluster = cluster_attach(&eng, runs, kubeconfig, err, sizeof err);
        if (!cluster) {
            fprintf(stderr, "hwemu serve: %s=%s: %s\n", kubeconfig_from, kubeconfig, err);
            http_stop(h);
            http_runs_set(NULL);
            runs_detach(runs);
            run_otlp_close();
            otlp_detach(&eng, otlp);
            engine_stop(&eng);
            return EXIT_INVALID;
        }
        fprintf(stderr, "hwemu serve: kubernetes: registering and keeping the Nodes at %s\n",
                cluster_describe(cluster));
        /* runs through the real scheduler: before the first tick, so a run submitted or resumed
         * above is placed by it from its start; on a shard too: every shard makes the same Jobs
         * under the run key and runs the pods bound to its own nodes (docs/kubernetes.md
         * "Sharding") */
        if (!(pods = cluster_pods_attach(&eng, kubeconfig, err, sizeof err)))
            fprintf(stderr, "hwemu serve: kubernetes: %s; runs use the standalone placement\n", err);
        else
            runs_set_placer(runs, cluster_pods_placer(pods));
    }
    if (cfg.debug_late_ns)
        fprintf(stderr, "hwemu serve: HWEMU_DEBUG_LATE_TICK: every other tick wakes %.3f s late and the ticks "
                "between publish %.3f s late (a test setting)\n", (double)cfg.debug_late_ns / 1e9,
                (double)cfg.debug_late_ns / 1e9);
    engine_run(&eng);
    fprintf(stderr, "hwemu serve: stopping after %llu ticks (%llu overruns); the root keeps every node for a "
            "resume\n", (unsigned long long)atomic_load(&eng.ticks), (unsigned long long)atomic_load(&eng.overruns));
    http_stop(h);
    cluster_detach(cluster); /* before the runs it hands labels to, and the event log's OTLP sink */
    http_runs_set(NULL);
    runs_detach(runs); /* an active run is suspended (resumed at the next start) */
    cluster_pods_detach(pods); /* after the runs: a suspended run tells its placer */
    run_otlp_close();
    otlp_detach(&eng, otlp);
    engine_stop(&eng);
    return EXIT_OK;
}
