/* cli_agents: `hwemu agents [selection] [--root DIR] [--logs DIR] -- CMD [ARGS...]`: an agent
 * fleet, one CMD per selected node of the running engine, as a DaemonSet runs one agent per
 * Kubernetes node. Owns: the selection (the spec's nodes, in spec order, narrowed by --pool,
 * --node-glob and --label, all of which must match; of those, the nodes under the root: a sharded
 * engine's slice), the expansion of
 * {node}, {index} and {index+N} in CMD's arguments, the per-node logs, restarts with backoff and
 * the fleet's stop. Each agent is a child process that runs `hwemu exec --node N` itself (cmd_exec
 * in the forked child: the same checks, environment and intercept route, no second copy), with
 * NODE_NAME=N and HWEMU_AGENT_INDEX=I set, in a process group of its own so that a stop reaches
 * the agent and everything it started.
 *
 * Restarts: an agent that exits (any status, or killed) is started again after a backoff of 1 s,
 * doubled on every quick exit up to 30 s, back to 1 s once an agent has stayed up for a minute,
 * like a kubelet's CrashLoopBackOff. Stop: SIGTERM, SIGINT or SIGHUP sends SIGTERM to every
 * agent's group, SIGKILL to those still running after --grace seconds (default 10), and exits
 * once all are gone. Exit status: 0 after such a stop; 1 invalid input (the spec, no node
 * selected, none of them under the root, the log directory cannot be created); 2 usage error. An agent's own exit status never ends the fleet: it is printed and the
 * agent restarted. */
#include "arena.h"
#include "cli.h"
#include "load.h"
#include "nodeobject.h"
#include "profile.h"
#include "spec.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char help[] =
    "Usage: hwemu agents [--pool NAME] [--node-glob GLOB] [--label KEY=VALUE]... [--spec FILE]\n"
    "                    [--profiles-dir DIR] [--root DIR] [--logs DIR] [--intercept HOW]\n"
    "                    [--grace SECONDS] [--time emulated|wall] -- CMD [ARGS...]\n"
    "\n"
    "Runs one CMD per selected node of a running `hwemu serve`, each as `hwemu exec --node NODE`\n"
    "runs it, with NODE_NAME=NODE and HWEMU_AGENT_INDEX=INDEX in its environment and, in ARGS,\n"
    "{node} replaced by the node's name, {index} by its position in the selection (0, 1, ...) and\n"
    "{index+N} by N plus that position (distinct ports: --addr=127.0.0.1:{index+9100}). An agent\n"
    "that exits is started again after 1 s, doubling up to 30 s while it keeps failing, back to 1 s\n"
    "after a minute up. SIGTERM, SIGINT or SIGHUP stops every agent (SIGTERM, then SIGKILL after\n"
    "the grace period) and exits 0.\n"
    "\n"
    "Selection (the spec's nodes in spec order; every option given must match; none: all nodes; of\n"
    "those, the ones under the root, as a sharded engine renders only its slice):\n"
    "  --pool NAME          the nodes of one pool of the spec\n"
    "  --node-glob GLOB     node names matching a shell pattern (\"gpu-*\")\n"
    "  --label KEY=VALUE    nodes whose Node labels (as `clusterspec render-nodes` prints them)\n"
    "                       have KEY=VALUE; repeatable\n"
    "Options:\n"
    "  --spec FILE          the engine's cluster spec (SIM_CLUSTER_SPEC); default the builtin one\n"
    "  --profiles-dir DIR   local profiles added to the builtin ones (SIM_PROFILES_DIR)\n"
    "  --root DIR           the engine's root (SIM_HWEMU_ROOT); default /dev/shm/hwemu\n"
    "  --logs DIR           each agent's stdout and stderr appended to DIR/<node>.log (created);\n"
    "                       default: this command's own stdout and stderr\n"
    "  --intercept HOW      auto, preload or seccomp, as for `hwemu exec` (default auto)\n"
    "  --grace SECONDS      how long a stop waits after SIGTERM before SIGKILL (default 10)\n"
    "  --time emulated|wall as for `hwemu exec` (default wall): emulated puts every agent in the\n"
    "                       engine's emulated time (docs/time.md)\n"
    "  -h, --help           this text\n"
    "Exit status: 0 stopped by a signal; 1 invalid input or no node selected; 2 usage error.\n";

/* exec --node N --root R --intercept I --time T --: the arguments before CMD's (not allocated) */
#define AGENT_ARGV_FIXED 10
#define BACKOFF_FIRST_S 1
#define BACKOFF_MAX_S 30
#define BACKOFF_RESET_S 60 /* up this long: the next exit starts the backoff over */

struct agent {
    const char *node;
    int index;
    char **argv;        /* "exec" --node N --root R --intercept I -- CMD expanded ARGS..., NULL */
    pid_t pid;          /* 0: not running */
    double started;     /* monotonic seconds of the last start */
    double restart_at;  /* when not running: the next start */
    int backoff;        /* seconds the next quick exit waits */
    unsigned starts;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ARG with {node}, {index} and {index+N} replaced (anything else in braces is kept as it is, so
 * an agent's own templates pass through). NULL when out of memory or N is not a number. */
static char *expand(const char *arg, const char *node, int index)
{
    size_t cap = strlen(arg) + 64, len = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    for (const char *p = arg; *p;) {
        char piece[64];
        const char *add = NULL;
        size_t skip = 1;
        if (*p == '{') {
            const char *end = strchr(p, '}');
            size_t n = end ? (size_t)(end - p + 1) : 0;
            if (n == 6 && !strncmp(p, "{node}", 6)) {
                add = node;
                skip = n;
            } else if (n == 7 && !strncmp(p, "{index}", 7)) {
                snprintf(piece, sizeof piece, "%d", index);
                add = piece;
                skip = n;
            } else if (n > 8 && !strncmp(p, "{index+", 7)) {
                char *stop;
                errno = 0;
                long base = strtol(p + 7, &stop, 10);
                if (stop == end && stop > p + 7 && !errno && base >= 0 && base <= INT_MAX - 100000) {
                    snprintf(piece, sizeof piece, "%ld", base + index);
                    add = piece;
                    skip = n;
                }
            }
        }
        size_t alen = add ? strlen(add) : 1;
        if (len + alen + 1 > cap) {
            cap = (len + alen + 1) * 2;
            char *grown = realloc(out, cap);
            if (!grown) {
                free(out);
                return NULL;
            }
            out = grown;
        }
        memcpy(out + len, add ? add : p, alen);
        len += alen;
        p += skip;
    }
    out[len] = 0;
    return out;
}

static bool has_label(const struct node_object *o, const char *kv)
{
    const char *eq = strchr(kv, '=');
    for (int i = 0; i < o->labels.n; i++) {
        size_t klen = (size_t)(eq - kv);
        if (strlen(o->labels.items[i].k) == klen && !strncmp(o->labels.items[i].k, kv, klen))
            return !strcmp(o->labels.items[i].v, eq + 1);
    }
    return false;
}

/* Sends sig to every running agent's process group. */
static void signal_all(struct agent *a, int n, int sig)
{
    for (int i = 0; i < n; i++)
        if (a[i].pid > 0 && kill(-a[i].pid, sig) && errno == ESRCH)
            kill(a[i].pid, sig);
}

/* Starts agent a: a child in its own process group, signals as a fresh process has them, its
 * output in the node's log, then cmd_exec: exactly `hwemu exec --node N ... -- CMD ARGS`.
 * 0, or -1 when fork failed (printed). */
static int start_agent(struct agent *a, const char *logs, const sigset_t *oldmask)
{
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/%s.log", logs ? logs : "", a->node);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "hwemu agents: node %s: cannot start an agent: fork: %s\n", a->node, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGPIPE};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            signal(sigs[i], SIG_DFL);
        sigprocmask(SIG_SETMASK, oldmask, NULL);
        int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (devnull >= 0) {
            dup2(devnull, 0);
            close(devnull);
        }
        if (logs) {
            int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (fd < 0) {
                fprintf(stderr, "hwemu agents: node %s: cannot open the log %s: %s\n", a->node, log, strerror(errno));
                _exit(EXIT_INVALID);
            }
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
            time_t t = time(NULL);
            char when[32];
            strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
            fprintf(stderr, "hwemu agents: %s start %u of the agent on node %s (index %d)\n", when, a->starts + 1,
                    a->node, a->index);
        }
        char idx[16];
        snprintf(idx, sizeof idx, "%d", a->index);
        setenv("NODE_NAME", a->node, 1);
        setenv("HWEMU_AGENT_INDEX", idx, 1);
        int argc = 0;
        while (a->argv[argc])
            argc++;
        fflush(NULL);
        _exit(cmd_exec(argc, a->argv));
    }
    setpgid(pid, pid); /* also here: a stop right after the fork must find the group */
    a->pid = pid;
    a->started = now_s();
    a->starts++;
    return 0;
}

/* The text of a wait status: "exit status 3", "killed by signal 9". */
static void describe(int status, char *out, size_t len)
{
    if (WIFEXITED(status))
        snprintf(out, len, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(out, len, "wait status %#x", status);
}

/* Reaps every exited agent; when restart, schedules its next start. Returns how many run. */
static int reap(struct agent *a, int n, bool restart)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < n; i++) {
            if (a[i].pid != pid)
                continue;
            a[i].pid = 0;
            /* what the agent started goes with it, as a container's processes do */
            kill(-pid, SIGKILL);
            double t = now_s(), up = t - a[i].started;
            if (up >= BACKOFF_RESET_S)
                a[i].backoff = BACKOFF_FIRST_S;
            char what[96];
            describe(status, what, sizeof what);
            if (restart) {
                a[i].restart_at = t + a[i].backoff;
                fprintf(stderr, "hwemu agents: node %s: the agent ended (%s) after %.1f s; starting it again in %d s\n",
                        a[i].node, what, up, a[i].backoff);
                a[i].backoff = a[i].backoff * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : a[i].backoff * 2;
            } else if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) &&
                       !(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 128 + SIGTERM))) {
                fprintf(stderr, "hwemu agents: node %s: the agent stopped (%s)\n", a[i].node, what);
            }
        }
    }
    int running = 0;
    for (int i = 0; i < n; i++)
        running += a[i].pid > 0;
    return running;
}

/* Waits for one of the blocked signals in set, at most `secs`; the signal, or 0 on timeout. */
static int wait_signal(const sigset_t *set, double secs)
{
    if (secs < 0)
        secs = 0;
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    int sig = sigtimedwait(set, NULL, &ts);
    return sig < 0 ? 0 : sig;
}

/* Runs the fleet until a stop signal; the exit status. */
static int supervise(struct agent *a, int n, const char *logs, int grace, const sigset_t *set,
                     const sigset_t *oldmask)
{
    for (int i = 0; i < n; i++)
        if (start_agent(&a[i], logs, oldmask))
            a[i].restart_at = now_s() + a[i].backoff;
    fprintf(stderr, "hwemu agents: %d agent%s started%s%s; SIGTERM stops them\n", n, n == 1 ? "" : "s",
            logs ? ", logs in " : "",
            logs ? logs : "");
    int stop = 0;
    while (!stop) {
        double next = now_s() + 60;
        for (int i = 0; i < n; i++)
            if (a[i].pid == 0 && a[i].restart_at < next)
                next = a[i].restart_at;
        int sig = wait_signal(set, next - now_s());
        if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
            stop = sig;
        reap(a, n, !stop);
        double t = now_s();
        for (int i = 0; i < n && !stop; i++)
            if (a[i].pid == 0 && a[i].restart_at <= t && start_agent(&a[i], logs, oldmask))
                a[i].restart_at = t + a[i].backoff;
    }
    fprintf(stderr, "hwemu agents: %s: stopping %d agents (SIGTERM, SIGKILL after %d s)\n", strsignal(stop),
            reap(a, n, false), grace);
    signal_all(a, n, SIGTERM);
    double deadline = now_s() + grace;
    int running;
    while ((running = reap(a, n, false)) > 0 && now_s() < deadline)
        wait_signal(set, deadline - now_s() < 0.2 ? deadline - now_s() : 0.2);
    if (running > 0) {
        for (int i = 0; i < n; i++)
            if (a[i].pid > 0)
                fprintf(stderr, "hwemu agents: node %s: the agent outlived SIGTERM by %d s; killing it\n", a[i].node,
                        grace);
        signal_all(a, n, SIGKILL);
        while (reap(a, n, false) > 0)
            wait_signal(set, 0.1);
    }
    fprintf(stderr, "hwemu agents: all agents stopped\n");
    return EXIT_OK;
}

int cmd_agents(int argc, char **argv)
{
    static const struct option opts[] = {
        {"pool", required_argument, 0, 'p'},      {"node-glob", required_argument, 0, 'g'},
        {"label", required_argument, 0, 'l'},     {"spec", required_argument, 0, 's'},
        {"profiles-dir", required_argument, 0, 'd'}, {"root", required_argument, 0, 'r'},
        {"logs", required_argument, 0, 'L'},      {"intercept", required_argument, 0, 'i'}, {"time", required_argument, 0, 'E'},
        {"grace", required_argument, 0, 'G'},     {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *pool = NULL, *glob = NULL, *spec_path = cli_env("SIM_CLUSTER_SPEC");
    const char *dir = cli_env("SIM_PROFILES_DIR"), *root = cli_env("SIM_HWEMU_ROOT"), *logs = NULL;
    const char *intercept = "auto", *time_mode = "wall", *labels[32];
    int nlabels = 0, grace = 10, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long_only(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'p': pool = optarg; break;
        case 'g': glob = optarg; break;
        case 'l':
            if (!strchr(optarg, '=') || optarg[0] == '=')
                return cli_usage_error("agents", "--label takes KEY=VALUE, not \"%s\"", optarg);
            if (nlabels == (int)(sizeof labels / sizeof labels[0]))
                return cli_usage_error("agents", "at most %d --label options", nlabels);
            labels[nlabels++] = optarg;
            break;
        case 's': spec_path = optarg; break;
        case 'd': dir = optarg; break;
        case 'r': root = optarg; break;
        case 'L': logs = optarg; break;
        case 'i': intercept = optarg; break;
        case 'E': time_mode = optarg; break;
        case 'G': {
            char *end;
            long g = strtol(optarg, &end, 10);
            if (*end || end == optarg || g < 0 || g > 3600)
                return cli_usage_error("agents", "--grace takes whole seconds from 0 to 3600, not \"%s\"", optarg);
            grace = (int)g;
            break;
        }
        case 'h': fputs(help, stdout); return EXIT_OK;
        default: return cli_bad_option("agents", argv, opts);
        }
    }
    if (strcmp(intercept, "auto") && strcmp(intercept, "preload") && strcmp(intercept, "seccomp"))
        return cli_usage_error("agents", "--intercept takes auto, preload or seccomp, not %s", intercept);
    if (strcmp(time_mode, "emulated") && strcmp(time_mode, "wall"))
        return cli_usage_error("agents", "--time takes emulated or wall, not %s", time_mode);
    if (optind >= argc)
        return cli_usage_error("agents", "say what to run on every node: hwemu agents [selection] -- CMD [ARGS...]");
    if (!root)
        root = "/dev/shm/hwemu";

    struct profile_set ps = {0};
    struct cluster_spec s = {0};
    if (model_load_profiles(&ps, dir) || model_load_spec(&s, spec_path, &ps)) {
        spec_free(&s);
        profiles_free(&ps);
        return EXIT_INVALID;
    }
    int rc = EXIT_INVALID;
    struct agent *a = calloc((size_t)s.nnodes + 1, sizeof *a);
    int n = 0;
    bool pool_found = !pool;
    if (!a) {
        fprintf(stderr, "hwemu agents: out of memory\n");
        goto out;
    }
    /* The selection, in spec order. */
    for (int i = 0; i < s.nnodes; i++) {
        const struct spec_node *sn = &s.nodes[i];
        const char *pname = s.pools[sn->pool].name;
        pool_found |= pool && !strcmp(pool, pname);
        if ((pool && strcmp(pool, pname)) || (glob && fnmatch(glob, sn->name, 0)))
            continue;
        if (nlabels) {
            struct arena ar = {0};
            struct node_object o;
            nodeobject_for_spec_node(&ar, &s, sn, &o);
            bool all = true;
            for (int k = 0; k < nlabels && all; k++)
                all = has_label(&o, labels[k]);
            arena_free(&ar);
            if (!all)
                continue;
        }
        a[n].node = sn->name;
        a[n].index = n;
        a[n].backoff = BACKOFF_FIRST_S;
        n++;
    }
    if (!pool_found) {
        fprintf(stderr, "hwemu agents: the spec %s has no pool \"%s\" (its pools:", s.file ? s.file : "(builtin)", pool);
        for (int i = 0; i < s.npools; i++)
            fprintf(stderr, " %s", s.pools[i].name);
        fprintf(stderr, ")\n");
        goto out;
    }
    if (n == 0) {
        fprintf(stderr, "hwemu agents: no node of %s matches the selection%s%s%s%s%s: see `hwemu clusterspec list` "
                "and `clusterspec render-nodes` for the names and labels\n", s.file ? s.file : "the builtin spec",
                pool ? " --pool " : "", pool ? pool : "", glob ? " --node-glob " : "", glob ? glob : "",
                nlabels ? " and the --label options" : "");
        goto out;
    }
    /* Only the nodes under the root: a sharded engine (serve --shard) renders its slice of the
     * spec, so a fleet beside it runs that slice. None at all is an error at once (a typo'd root,
     * an engine not started), not a fleet restarting forever. Indexes count the nodes kept. */
    int kept = 0, absent = 0;
    for (int i = 0; i < n; i++) {
        char seg[PATH_MAX];
        snprintf(seg, sizeof seg, "%s/%s.seg", root, a[i].node);
        if (access(seg, F_OK)) {
            if (absent++ < 5)
                fprintf(stderr, "%s%s", absent == 1 ? "hwemu agents: not under the root, skipped: " : ", ", a[i].node);
            continue;
        }
        a[kept] = a[i];
        a[kept].index = kept;
        kept++;
    }
    if (absent)
        fprintf(stderr, "%s (%d of the %d selected; another shard's, or not rendered yet)\n", absent > 5 ? ", ..." : "",
                absent, n);
    n = kept;
    if (n == 0) {
        fprintf(stderr, "hwemu agents: no node of the selection is under %s: is `hwemu serve --root %s` running with the "
                "same spec?\n", root, root);
        goto out;
    }
    if (logs && mkdir(logs, 0755) && errno != EEXIST) {
        fprintf(stderr, "hwemu agents: cannot create the log directory %s: %s\n", logs, strerror(errno));
        goto out;
    }
    /* Every agent's argv: what `hwemu exec` parses, with its arguments expanded. */
    int cmdc = argc - optind;
    for (int i = 0; i < n; i++) {
        char **v = calloc((size_t)cmdc + AGENT_ARGV_FIXED + 1, sizeof *v);
        a[i].argv = v;
        if (!v)
            goto oom;
        int k = 0;
        v[k++] = "exec";
        v[k++] = "--node";
        v[k++] = (char *)a[i].node;
        v[k++] = "--root";
        v[k++] = (char *)root;
        v[k++] = "--intercept";
        v[k++] = (char *)intercept;
        v[k++] = "--time";
        v[k++] = (char *)time_mode;
        v[k++] = "--";
        for (int j = 0; j < cmdc; j++)
            if (!(v[k++] = expand(argv[optind + j], a[i].node, a[i].index)))
                goto oom;
    }
    sigset_t set, oldmask;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &oldmask);
    rc = supervise(a, n, logs, grace, &set, &oldmask);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    goto out;
oom:
    fprintf(stderr, "hwemu agents: out of memory\n");
out:
    for (int i = 0; a && i < n; i++) {
        for (int k = AGENT_ARGV_FIXED; a[i].argv && a[i].argv[k]; k++)
            free(a[i].argv[k]);
        free(a[i].argv);
    }
    free(a);
    spec_free(&s);
    profiles_free(&ps);
    return rc;
}
