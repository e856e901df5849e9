/* cli_exec: `hwemu exec --node NAME [--root DIR] [--intercept auto|preload|seccomp] -- CMD
 * [ARGS...]`: runs an unmodified agent against one emulated node. It checks that the node exists
 * under the root and that its engine is running, sets
 *   LD_PRELOAD   libhwemu-shim.so first (the agent's own preloads kept after it)
 *   HWLOC_COMPONENTS  "-x86" unless set: hwloc takes the node's sysfs, not the host's CPUID
 *   HWEMU_NODE, HWEMU_ROOT   which node the shim serves (children inherit them)
 *   PATH         <root>/<node>.bin first: links to fakesmi for the GPU tools the node's profile
 *                installs (state/tools/<tool>), and only those
 *   LD_LIBRARY_PATH  <root>/<node>.lib first: on a node with NVIDIA GPUs (state/nvml), the
 *                names libnvidia-ml.so.1 and libnvidia-ml.so link to libhwemu-nvml.so, the
 *                node's NVML (fakesmi/nvml/README.md); on other nodes the directory is empty
 *   HWEMU_NVML   <root>/<node>.lib/libnvidia-ml.so.1 on an NVIDIA node: the shim loads it for a
 *                dlopen of libnvidia-ml.so* by an absolute path (shim/preload/wrap_dl.c)
 * and then takes one of two routes (shim/supervisor/supervisor.h): preload replaces itself with CMD, so
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
    "the node's /sys (and /host-sys) powercap, cpufreq, hwmon, PCI and DRM files and its\n"
    "/proc/cpuinfo, read and written as on the real machine, and the node's GPU tools (nvidia-smi,\n"
    "rocm-smi, amd-smi: links to fakesmi) first on PATH, and on a node with NVIDIA GPUs its NVML\n"
    "library (libnvidia-ml.so.1: libhwemu-nvml.so) first on LD_LIBRARY_PATH. The exit status is\n"
    "CMD's (127: not found, 126: not executable).\n"
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

/* A file of hwemu's (libhwemu-shim.so, fakesmi): the environment variable's path, else next to
 * the hwemu binary (the build tree), else in ../lib/hwemu (the install tree, wherever it was
 * moved: the binary's own path from /proc/self/exe, links resolved). */
static int find_beside(const char *name, const char *var, char *out, size_t len)
{
    const char *env = getenv(var);
    if (env && *env && access(env, R_OK) == 0) {
        /* absolute: the links to it in <root>/<node>.bin are followed from another directory */
        char abs[PATH_MAX];
        snprintf(out, len, "%s", env[0] == '/' || !realpath(env, abs) ? env : abs);
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
    static const char *const dirs[] = {"", "../lib/hwemu/"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char path[PATH_MAX + 64], real[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s%s", exe, dirs[i], name);
        if (access(path, R_OK) == 0) { /* <prefix>/lib/hwemu/x, not <prefix>/bin/../lib/hwemu/x */
            snprintf(out, len, "%s", realpath(path, real) ? real : path);
            return 0;
        }
    }
    return -1;
}

/* <root>/<node>.bin holds the node's GPU tools: a link to fakesmi for every tool its profile
 * installs (state/tools/<tool>), and nothing else, so discovery finds exactly the node's tools.
 * Returns 0, or -1 with a message on stderr. */
static int link_tools(const struct seg *s, const char *bin)
{
    static const char *const tools[] = {"nvidia-smi", "rocm-smi", "amd-smi"};
    char fakesmi[PATH_MAX], link[PATH_MAX], tmp[PATH_MAX + 32];
    bool any = false;
    for (size_t i = 0; i < 3; i++) {
        char path[64];
        snprintf(path, sizeof path, "state/tools/%s", tools[i]);
        any |= seg_lookup(s, path, strlen(path)) != SEG_NONE;
    }
    if (any && find_beside("fakesmi", "HWEMU_FAKESMI", fakesmi, sizeof fakesmi)) {
        fprintf(stderr, "hwemu exec: fakesmi (the node's GPU tools) is neither next to the hwemu binary nor in "
                "../lib/hwemu; set HWEMU_FAKESMI to its path\n");
        return -1;
    }
    for (size_t i = 0; i < 3; i++) {
        char path[64];
        snprintf(path, sizeof path, "state/tools/%s", tools[i]);
        snprintf(link, sizeof link, "%s/%s", bin, tools[i]);
        if (seg_lookup(s, path, strlen(path)) == SEG_NONE) {
            unlink(link);
            continue;
        }
        /* a new link renamed over the old one: a tool running meanwhile never misses it */
        snprintf(tmp, sizeof tmp, "%s.%d", link, (int)getpid());
        unlink(tmp);
        if (symlink(fakesmi, tmp) || rename(tmp, link)) {
            fprintf(stderr, "hwemu exec: cannot link %s to %s: %s\n", link, fakesmi, strerror(errno));
            unlink(tmp);
            return -1;
        }
    }
    return 0;
}

/* <root>/<node>.lib holds the node's NVML: libnvidia-ml.so.1 and libnvidia-ml.so linking to
 * libhwemu-nvml.so when the node has NVIDIA GPUs (state/nvml), nothing otherwise. Sets nvml to
 * the library's path there ("" on other nodes). Returns 0, or -1 with a message on stderr. */
static int link_nvml(const struct seg *s, const char *lib, char *nvml, size_t len)
{
    static const char *const names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
    bool nvidia = seg_lookup(s, "state/nvml", 10) != SEG_NONE;
    char so[PATH_MAX], link[PATH_MAX], tmp[PATH_MAX + 32];
    nvml[0] = 0;
    if (nvidia && find_beside("libhwemu-nvml.so", "HWEMU_NVML_LIBRARY", so, sizeof so)) {
        fprintf(stderr, "hwemu exec: libhwemu-nvml.so (the node's NVML) is neither next to the hwemu binary nor in "
                "../lib/hwemu; set HWEMU_NVML_LIBRARY to its path\n");
        return -1;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(link, sizeof link, "%s/%s", lib, names[i]);
        if (!nvidia) {
            unlink(link);
            continue;
        }
        snprintf(tmp, sizeof tmp, "%s.%d", link, (int)getpid());
        unlink(tmp);
        if (symlink(so, tmp) || rename(tmp, link)) {
            fprintf(stderr, "hwemu exec: cannot link %s to %s: %s\n", link, so, strerror(errno));
            unlink(tmp);
            return -1;
        }
    }
    if (nvidia)
        snprintf(nvml, len, "%s/%s", lib, names[0]);
    return 0;
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
        default: return cli_bad_option("exec", argv, opts);
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
    /* The node's tools directory exists from the start, so PATH order is stable. */
    char bin[PATH_MAX];
    snprintf(bin, sizeof bin, "%s/%s.bin", root, node);
    mkdir(bin, 0755);
    int linked = link_tools(&s, bin);
    char lib[PATH_MAX], nvml[PATH_MAX];
    snprintf(lib, sizeof lib, "%s/%s.lib", root, node);
    mkdir(lib, 0755);
    if (!linked)
        linked = link_nvml(&s, lib, nvml, sizeof nvml);
    seg_close(&s);
    if (linked)
        return EXIT_INVALID;
    if ((engine > 0 && kill(engine, 0) != 0 && errno == ESRCH) || age > 3 * tick + 1000000000LL) {
        fprintf(stderr, "hwemu exec: the engine of %s is not running (its last tick was %.1f s ago); start "
                "`hwemu serve --root %s` first\n", root, (double)age / 1e9, root);
        return EXIT_INVALID;
    }
    char shim[PATH_MAX];
    if (find_beside("libhwemu-shim.so", "HWEMU_SHIM", shim, sizeof shim)) {
        fprintf(stderr, "hwemu exec: libhwemu-shim.so is neither next to the hwemu binary nor in ../lib/hwemu; "
                "set HWEMU_SHIM to its path\n");
        return EXIT_INVALID;
    }
    const char *old_preload = getenv("LD_PRELOAD"), *old_path = getenv("PATH"), *old_libs = getenv("LD_LIBRARY_PATH");
    char *preload = NULL, *newpath = NULL, *libs = NULL, abs_lib[PATH_MAX];
    if (!realpath(lib, abs_lib))
        snprintf(abs_lib, sizeof abs_lib, "%s", lib);
    if (asprintf(&preload, "%s%s%s", shim, old_preload && *old_preload ? ":" : "", old_preload ? old_preload : "") < 0 ||
        asprintf(&newpath, "%s:%s", bin, old_path && *old_path ? old_path : "/usr/local/bin:/usr/bin:/bin") < 0 ||
        asprintf(&libs, "%s%s%s", abs_lib, old_libs && *old_libs ? ":" : "", old_libs ? old_libs : "") < 0) {
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
    setenv("LD_LIBRARY_PATH", libs, 1);
    if (nvml[0]) {
        char abs_nvml[PATH_MAX + 32];
        snprintf(abs_nvml, sizeof abs_nvml, "%s/libnvidia-ml.so.1", abs_lib);
        setenv("HWEMU_NVML", abs_nvml, 1);
    } else {
        unsetenv("HWEMU_NVML");
    }
    unsetenv("HWEMU_SEGMENT");
    /* hwloc's x86 backend asks the host's CPUID for the topology, which is not the node's:
     * leave hwloc the node's sysfs (a value the caller set wins). */
    setenv("HWLOC_COMPONENTS", "-x86", 0);
    enum sv_route route = !strcmp(intercept, "seccomp") ? SV_ROUTE_SECCOMP : SV_ROUTE_PRELOAD;
    if (!strcmp(intercept, "auto")) {
        char why[PATH_MAX + 100];
        route = sv_route_for(argv[optind], why, sizeof why);
    }
    if (route == SV_ROUTE_SECCOMP) {
        free(preload);
        free(newpath);
        free(libs);
        return sv_exec(argv + optind);
    }
    execvp(argv[optind], argv + optind);
    int e = errno;
    fprintf(stderr, "hwemu exec: %s: %s\n", argv[optind], strerror(e));
    free(preload);
    free(newpath);
    free(libs);
    return e == ENOENT ? 127 : 126;
}
