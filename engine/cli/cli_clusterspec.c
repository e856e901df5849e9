/* cli_clusterspec: `hwemu clusterspec validate|render-nodes|list`. */
#include "arena.h"
#include "cli.h"
#include "load.h"
#include "nodeobject.h"
#include "profile.h"
#include "spec.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* Above this many nodes validate warns (the largest cluster measured is 100,000 nodes, as two
 * --shard engines on one host: bench/README.md). */
#define CLI_NODES_WARN 100000

static const char help[] =
    "Usage: hwemu clusterspec validate|render-nodes|list --spec FILE [--profiles-dir DIR] [--shard I/N]\n"
    "\n"
    "  validate       check the spec; silent with exit 0 when it is good, every problem\n"
    "                 (file:line:col, pool, what was expected) and exit 1 when not\n"
    "  render-nodes   a YAML stream of the spec's Kubernetes v1 Nodes, for kubectl apply -f -\n"
    "  list           one line per node: node, pool, profile\n"
    "\n"
    "Options:\n"
    "  --spec FILE          the cluster spec (env SIM_CLUSTER_SPEC)\n"
    "  --profiles-dir DIR   local profiles added to the builtin ones (env SIM_PROFILES_DIR)\n"
    "  --shard I/N          render-nodes and list: only the nodes `hwemu serve --shard I/N` runs, the\n"
    "                       spec's k-th node (from 0) when k mod N is I; auto/N: I from the host name's\n"
    "                       trailing -I (env SIM_SHARD; docs/kubernetes.md \"Sharding\")\n"
    "  -h, --help           this text\n"
    "The single-dash spellings -spec and -profiles-dir work too.\n";

static void list_nodes(const struct cluster_spec *s)
{
    int wn = 4, wp = 4;
    for (int i = 0; i < s->nnodes; i++) {
        int a = (int)strlen(s->nodes[i].name), b = (int)strlen(s->pools[s->nodes[i].pool].name);
        wn = a > wn ? a : wn;
        wp = b > wp ? b : wp;
    }
    for (int i = 0; i < s->nnodes; i++) {
        const struct spec_pool *p = &s->pools[s->nodes[i].pool];
        printf("%-*s  %-*s  %s\n", wn, s->nodes[i].name, wp, p->name, p->profile->name);
    }
}

static void render_nodes(const struct cluster_spec *s)
{
    for (int i = 0; i < s->nnodes; i++) {
        struct arena a = {0};
        struct node_object o;
        nodeobject_for_spec_node(&a, s, &s->nodes[i], &o);
        nodeobject_write_yaml(stdout, &o);
        arena_free(&a);
    }
}

int cmd_clusterspec(int argc, char **argv)
{
    static const struct option opts[] = {
        {"spec", required_argument, 0, 's'},
        {"profiles-dir", required_argument, 0, 'p'},
        {"shard", required_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *spec = cli_env("SIM_CLUSTER_SPEC"), *dir = cli_env("SIM_PROFILES_DIR");
    const char *shard = cli_env("SIM_SHARD"), *shard_from = "SIM_SHARD";
    int c, shard_index = 0, shard_count = 1;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long_only(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 's': spec = optarg; break;
        case 'p': dir = optarg; break;
        case 'S': shard = optarg, shard_from = "--shard"; break;
        case 'h': fputs(help, stdout); return EXIT_OK;
        default: return cli_bad_option("clusterspec", argv, opts);
        }
    }
    if (optind >= argc)
        return cli_usage_error("clusterspec", "say what to do: validate, render-nodes or list");
    const char *what = argv[optind];
    if (strcmp(what, "validate") && strcmp(what, "render-nodes") && strcmp(what, "list"))
        return cli_usage_error("clusterspec", "unknown subcommand \"%s\" (expected validate, render-nodes or list)",
                               what);
    if (optind + 1 < argc)
        return cli_usage_error("clusterspec", "unexpected argument \"%s\"", argv[optind + 1]);
    if (!spec)
        return cli_usage_error("clusterspec", "no spec given: pass --spec FILE or set SIM_CLUSTER_SPEC");
    if (shard && cli_parse_shard("clusterspec", shard, shard_from, &shard_index, &shard_count))
        return EXIT_USAGE;

    struct profile_set ps = {0};
    int rc = model_load_profiles(&ps, dir) ? EXIT_INVALID : EXIT_OK;
    struct cluster_spec s = {0};
    if (rc == EXIT_OK)
        rc = model_load_spec(&s, spec, &ps) ? EXIT_INVALID : EXIT_OK;
    /* a spec one engine may not hold: said by validate, refused by serve at start with what the
     * machine has (docs/robustness.md "Capacity") */
    if (rc == EXIT_OK && !strcmp(what, "validate") && s.nnodes > CLI_NODES_WARN)
        fprintf(stderr, "hwemu clusterspec: warning: %d nodes, more than %d: a node needs about 100 KB of memory, "
                "200 KB in the root and a file descriptor (intel-xeon-2s-rapl), about %.0f GiB and %.0f GiB here; "
                "`hwemu serve` checks them against the machine at start (docs/robustness.md \"Capacity\")\n",
                s.nnodes, CLI_NODES_WARN, s.nnodes * 100e3 / (1 << 30), s.nnodes * 200e3 / (1 << 30));
    if (rc == EXIT_OK) {
        spec_keep_shard(&s, shard_index, shard_count);
        if (!strcmp(what, "list"))
            list_nodes(&s);
        else if (!strcmp(what, "render-nodes"))
            render_nodes(&s);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            perror("hwemu clusterspec: writing the output");
            rc = EXIT_INVALID;
        }
    }
    spec_free(&s);
    profiles_free(&ps);
    return rc;
}
