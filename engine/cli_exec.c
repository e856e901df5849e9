/* cli_exec: `hwemu exec --node NAME [--root DIR] [--intercept auto|preload|seccomp] -- CMD
 * [ARGS...]`: runs an unmodified agent against one emulated node. It checks that the node exists
 * under the root and that its engine is running, sets
 *   LD_PRELOAD   libhwemu-shim.so first (the agent's own preloads kept after it)
 *   HWEMU_NODE, HWEMU_ROOT   which node the shim serves (children inherit them)
 *   PATH         <root>/<node>.bin first: the node's GPU tools (nvidia-smi, ...) live there
 * and then takes one of two routes (shim/supervisor.h): preload replaces itself with CMD, so
 * CMD's exit status is hwemu's; seccomp runs CMD under the seccomp supervisor (for programs
 * that bypass libc: Go, static binaries) and exits as CMD did. auto (the default) reads CMD's
 * file to choose (sv_route.c). 127: CMD not found; 126: CMD not executable. */
#include "cli.h"
#include "segment.h"
#include "supervisor.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char help[] =
    "Usage: hwemu exec --node NAME [--root DIR] [--intercept auto|preload|seccomp] -- CMD [ARGS...]\n"
    "\n"
    "Runs CMD against node NAME of a running `hwemu serve`: CMD and every program it starts see\n"
    "the node's /sys (and /host-sys) powercap, cpufreq and hwmon files and its /proc/cpuinfo, read\n"
    "and written as on the real machine. The exit status is CMD's (127: not found, 126: not\n"
    "executable).\n"
    "\n"
    "Options:\n"
    "  --node NAME        the node (see `hwemu clusterspec list`)\n"
    "  --root DIR         the engine's root (SIM_HWEMU_ROOT); default /dev/shm/hwemu\n"
    "  --intercept HOW    how CMD's file calls reach the node:\n"
    "                       preload  libhwemu-shim.so (LD_PRELOAD): libc programs, no overhead\n"
    "                       seccomp  a seccomp supervisor answers the system calls (Go and static\n"
    "                                programs, and everything they start; LD_PRELOAD kept too)\n"
    "                       auto     (default) seccomp for Go and statically linked programs,\n"
    "                                preload for other dynamically linked ones, seccomp when unsure\n"
    "  -h, --help         this text\n";

/* libhwemu-shim.so next to the hwemu binary (the build tree), or in ../lib/hwemu (installed). */
static int find_shim(char *out, size_t len)
{
    const char *env = getenv("HWEMU_SHIM");
    if (env && *env && access(env, R_OK) == 0) {
        snprintf(out, len, "%s", env);
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = 0;
    static const char *const candidates[] = {"libhwemu-shim.so", "../lib/hwemu/libhwemu-shim.so"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        snprintf(out, len, "%s/%s", exe, candidates[i]);
        if (access(out, R_OK) == 0)
            return 0;
    }
    return -1;
}

int cmd_exec(int argc, char **argv)
{
    static const struct option opts[] = {
        {"node", required_argument, 0, 'n'}, {"root", required_argument, 0, 'r'},
        {"intercept", required_argument, 0, 'i'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *node = NULL, *root = cli_env("SIM_HWEMU_ROOT"), *intercept = "auto";
    int c;
    opterr = 0;
    optind = 1;
    /* "+": stop at the first non-option, so CMD's own options are CMD's */
    while ((c = getopt_long_only(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'n': node = optarg; break;
        case 'r': root = optarg; break;
        case 'i': intercept = optarg; break;
        case 'h': fputs(help, stdout); return EXIT_OK;
        default: return cli_usage_error("exec", "unknown option or missing value: %s", argv[optind - 1]);
        }
    }
    if (strcmp(intercept, "auto") && strcmp(intercept, "preload") && strcmp(intercept, "seccomp"))
        return cli_usage_error("exec", "--intercept takes auto, preload or seccomp, not %s", intercept);
    if (!node)
        return cli_usage_error("exec", "say which node: --node NAME");
    if (optind >= argc)
        return cli_usage_error("exec", "say what to run: hwemu exec --node %s -- CMD [ARGS...]", node);
    if (!root)
        root = "/dev/shm/hwemu";
    char path[PATH_MAX], err[512];
    snprintf(path, sizeof path, "%s/%s.seg", root, node);
    struct seg s;
    if (access(path, F_OK) != 0) {
        fprintf(stderr, "hwemu exec: no node %s under %s: is `hwemu serve --root %s` running, and is %s in its "
                "spec (`hwemu clusterspec list`)?\n", node, root, root, node);
        return EXIT_INVALID;
    }
    if (seg_open(&s, path, err, sizeof err)) {
        fprintf(stderr, "hwemu exec: %s\n", err);
        return EXIT_INVALID;
    }
    int64_t age = seg_now_ns() - atomic_load(&s.h->heartbeat_ns);
    pid_t engine = (pid_t)s.h->engine_pid;
    int64_t tick = s.h->tick_ns > 0 ? s.h->tick_ns : 1000000000;
    seg_close(&s);
    if ((engine > 0 && kill(engine, 0) != 0 && errno == ESRCH) || age > 3 * tick + 1000000000LL) {
        fprintf(stderr, "hwemu exec: the engine of %s is not running (its last tick was %.1f s ago); start "
                "`hwemu serve --root %s` first\n", root, (double)age / 1e9, root);
        return EXIT_INVALID;
    }
    char shim[PATH_MAX];
    if (find_shim(shim, sizeof shim)) {
        fprintf(stderr, "hwemu exec: libhwemu-shim.so is neither next to the hwemu binary nor in ../lib/hwemu; "
                "set HWEMU_SHIM to its path\n");
        return EXIT_INVALID;
    }
    /* The node's tools directory exists from the start, so PATH order is stable. */
    char bin[PATH_MAX];
    snprintf(bin, sizeof bin, "%s/%s.bin", root, node);
    mkdir(bin, 0755);
    const char *old_preload = getenv("LD_PRELOAD"), *old_path = getenv("PATH");
    char *preload = NULL, *newpath = NULL;
    if (asprintf(&preload, "%s%s%s", shim, old_preload && *old_preload ? ":" : "", old_preload ? old_preload : "") < 0 ||
        asprintf(&newpath, "%s:%s", bin, old_path && *old_path ? old_path : "/usr/local/bin:/usr/bin:/bin") < 0) {
        fprintf(stderr, "hwemu exec: out of memory\n");
        return EXIT_INVALID;
    }
    char abs_root[PATH_MAX];
    if (!realpath(root, abs_root))
        snprintf(abs_root, sizeof abs_root, "%s", root);
    setenv("LD_PRELOAD", preload, 1);
    setenv("HWEMU_NODE", node, 1);
    setenv("HWEMU_ROOT", abs_root, 1);
    setenv("PATH", newpath, 1);
    unsetenv("HWEMU_SEGMENT");
    enum sv_route route = !strcmp(intercept, "seccomp") ? SV_ROUTE_SECCOMP : SV_ROUTE_PRELOAD;
    if (!strcmp(intercept, "auto")) {
        char why[PATH_MAX + 100];
        route = sv_route_for(argv[optind], why, sizeof why);
    }
    if (route == SV_ROUTE_SECCOMP) {
        free(preload);
        free(newpath);
        return sv_exec(argv + optind);
    }
    execvp(argv[optind], argv + optind);
    int e = errno;
    fprintf(stderr, "hwemu exec: %s: %s\n", argv[optind], strerror(e));
    free(preload);
    free(newpath);
    return e == ENOENT ? 127 : 126;
}
