/* main: the `hwemu` command: dispatches to one subcommand per file (cli_*.c). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fputs("Usage: hwemu <command> [options]\n"
          "\n"
          "Emulates the power and frequency hardware of cluster nodes for energy-management agents.\n"
          "\n"
          "Commands:\n"
          "  clusterspec validate|render-nodes|list   check a cluster spec, render its Kubernetes Nodes, list its nodes\n"
          "  serve                                    run the engine: every node of a cluster spec, HTTP API\n"
          "  profiles list|show NAME                  the hardware profiles and their facts with sources\n"
          "  run --trace FILE [--spec FILE]           one workload trace on the cluster to its end; prints the summary\n"
          "  runs merge --out DIR RUN_DIR...          merge the run directories of a sharded run's shards into one\n"
          "  report RUN_DIR... --out FILE.html        one HTML report of runs side by side, the first the baseline\n"
          "  trace generate|validate                  write a synthetic workload trace; check one\n"
          "  exec --node NAME -- CMD [ARGS...]        run an unmodified agent against an emulated node\n"
          "  agents [--pool P] -- CMD [ARGS...]       run an agent on every selected node, restarted when it dies\n"
          "  files|cat|write --node NAME ...          list, read and write a running node's files\n"
          "  fault add|list|clear                     a running engine's hardware faults (docs/faults.md)\n"
          "\n"
          "Run 'hwemu <command> --help' for a command's options.\n"
          "Exit codes: 0 success, 1 invalid input or failure, 2 usage error, 3 a run suspended (run).\n",
          out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("hwemu %s\n", HWEMU_VERSION);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "clusterspec"))
        return cmd_clusterspec(argc - 1, argv + 1);
    if (!strcmp(cmd, "exec"))
        return cmd_exec(argc - 1, argv + 1);
    if (!strcmp(cmd, "agents"))
        return cmd_agents(argc - 1, argv + 1);
    if (!strcmp(cmd, "files") || !strcmp(cmd, "cat") || !strcmp(cmd, "write"))
        return cmd_node(cmd, argc - 1, argv + 1);
    if (!strcmp(cmd, "serve"))
        return cmd_serve(argc - 1, argv + 1);
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "runs"))
        return cmd_runs(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "trace"))
        return cmd_trace(argc - 1, argv + 1);
    if (!strcmp(cmd, "fault"))
        return cmd_fault(argc - 1, argv + 1);
    if (!strcmp(cmd, "profiles"))
        return cmd_profiles(argc - 1, argv + 1);
    fprintf(stderr, "hwemu: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return EXIT_USAGE;
}
