/* cli_report: `hwemu report RUN_DIR... --out FILE.html [--csv FILE.csv]`: one self-contained
 * HTML report of one run or several side by side, the first the baseline
 * (engine/telemetry/report.c). */
#include "cli.h"
#include "report.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "Usage: hwemu report RUN_DIR... --out FILE.html [--csv FILE.csv]\n"
    "\n"
    "Writes one self-contained HTML report (the chart library inside it: nothing is fetched when it\n"
    "is viewed) of the runs in RUN_DIR... (run directories of runs that ended: summary.json,\n"
    "jobs.jsonl, course.jsonl), side by side, the first the baseline: a table against it (energy\n"
    "saved %, makespan change %, jobs slowed, p50/p95 completion time and change), energy by class,\n"
    "and charts of energy against makespan, cluster power, cumulative energy and throttling over\n"
    "time, energy by class, completion-time percentiles by class, and energy per node.\n"
    "\n"
    "Options:\n"
    "  --out FILE.html   the report (required)\n"
    "  --csv FILE.csv    the same comparison table (with energy by class) as CSV\n"
    "Exit 0, 1 when a run directory cannot be read or a file written, 2 on a usage error.\n";

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {{"out", 1, 0, 'o'}, {"csv", 1, 0, 'c'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    const char *out = NULL, *csv = NULL;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long_only(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'c': csv = optarg; break;
        case 'h': fputs(help, stdout); return EXIT_OK;
        default: return cli_usage_error("report", "unknown option or missing value: %s", argv[optind - 1]);
        }
    }
    if (!out)
        return cli_usage_error("report", "--out FILE.html is required");
    if (optind >= argc)
        return cli_usage_error("report", "give at least one run directory (e.g. <root>/runs/run-...)");
    if (!report_available()) {
        fprintf(stderr, "hwemu report: this hwemu was built without the web page's chart library: configure with "
                        "-DHWEMU_WEB_UI=ON (npm installed) and build again\n");
        return EXIT_INVALID;
    }
    char err[8192];
    if (report_write((const char *const *)argv + optind, argc - optind, out, csv, err, sizeof err)) {
        fprintf(stderr, "hwemu report: %s\n", err);
        return EXIT_INVALID;
    }
    fprintf(stderr, "hwemu report: %d run%s -> %s%s%s\n", argc - optind, argc - optind == 1 ? "" : "s", out,
            csv ? ", " : "", csv ? csv : "");
    return EXIT_OK;
}
