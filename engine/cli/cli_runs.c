/* cli_runs: `hwemu runs merge --out DIR RUN_DIR...`: the run directories of every shard of one
 * sharded run made one run directory (the merge is engine/runs/run_merge.c's). */
#include "cli.h"
#include "run_merge.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char help[] =
    "Usage: hwemu runs merge --out DIR RUN_DIR...\n"
    "\n"
    "Merges the run directories of every shard of one run through the scheduler (hwemu serve\n"
    "--shard I/N --kubeconfig, the same trace and run key on every shard) into one run directory,\n"
    "as one engine would have written it: trace.jsonl; jobs.jsonl, one line a job (the line of the\n"
    "shard that completed it, or a stalled job's); summary.json, the cluster's (nodes the union in\n"
    "the spec's order, energies and facility summed, times the longest, \"shards\" each shard's\n"
    "run); otlp/logs.jsonl (every shard's job events by time), otlp/metrics.jsonl (shard after\n"
    "shard) and course.jsonl (the shards' lines on their shared times, summed; jobs by state from\n"
    "the merged jobs). Refused, with the reason: directories of different run keys or traces, a shard missing\n"
    "or given twice, a run not ended, a job completed on two shards or on none (docs/runs.md\n"
    "\"Merging the shards' runs\").\n"
    "\n"
    "Options:\n"
    "  --out DIR    the merged run's directory; made by the merge (an existing one is refused)\n"
    "  -h, --help   this text\n"
    "\n"
    "Exit 0 merged, 1 refused (the reason on stderr; nothing written), 2 usage error.\n";

int cmd_runs(int argc, char **argv)
{
    static const struct option opts[] = {{"out", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *out = NULL;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long_only(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'h': fputs(help, stdout); return EXIT_OK;
        default: return cli_bad_option("runs", argv, opts);
        }
    }
    if (optind >= argc)
        return cli_usage_error("runs", "say what to do: merge --out DIR RUN_DIR...");
    if (strcmp(argv[optind], "merge"))
        return cli_usage_error("runs", "unknown subcommand \"%s\" (expected merge)", argv[optind]);
    if (!out)
        return cli_usage_error("runs", "merge needs --out DIR: where the merged run goes");
    int n = argc - optind - 1;
    if (n < 1)
        return cli_usage_error("runs", "merge needs the run directory of every shard (RUN_DIR...)");
    struct run_merge_out m;
    char err[8192];
    if (run_merge_dirs((const char *const *)argv + optind + 1, n, out, &m, err, sizeof err)) {
        fprintf(stderr, "hwemu runs merge: %s\n", err);
        return EXIT_INVALID;
    }
    fprintf(stderr, "hwemu runs merge: run key %s, %d shards: %d jobs (%d completed:", m.key, m.shards,
            m.jobs_total, m.completed);
    for (int i = 0; i < m.shards; i++)
        fprintf(stderr, "%s %d on shard %d/%d", i ? "," : "", m.completed_on[i], i, m.shards);
    fprintf(stderr, "; %d stalled), %d nodes, %.1f J -> %s\n", m.stalled, m.nodes, m.energy_j, out);
    run_merge_free(&m);
    return EXIT_OK;
}
