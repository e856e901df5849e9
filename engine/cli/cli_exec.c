/* cli_exec: `hwemu exec --node NAME [--root DIR] [--intercept auto|preload|seccomp] -- CMD
 * [ARGS...]`: runs an unmodified agent against one emulated node. It checks that the node exists
 * under the root and that its engine is running, sets
 *   LD_PRELOAD   libhwemu-shim.so first (the agent's own preloads kept after it)
 *   LD_AUDIT     libhwemu-audit.so first (the agent's own audit modules kept after it): ld.so's
 *                search for the GPU management libraries a program is linked against finds the
 *                node's, or none where the node lacks them (shim/preload/audit.c)
 *   GLIBC_TUNABLES  glibc.rtld.optional_static_tls=16384 first (the caller's tunables kept after
 *                it): room for the shim's initial-exec TLS once an audit module is loaded
 *   HWEMU_CPUID  with --cpuid: how the shim makes CPUID the node's (shim/preload/cpufault.c)
 *   HWLOC_COMPONENTS  "-x86" unless set: hwloc takes the node's sysfs, not the host's CPUID
 *   HWEMU_NODE, HWEMU_ROOT   which node the shim serves (children inherit them)
 *   PATH         <root>/<node>.bin first: links to fakesmi for the GPU tools the node's profile
 *                installs (state/tools/<tool>), and only those
 *   LD_LIBRARY_PATH  <root>/<node>.lib first: on a node with NVIDIA GPUs (state/nvml), the
 *                names libnvidia-ml.so.1 and libnvidia-ml.so link to libhwemu-nvml.so, the
 *                node's NVML (fakesmi/nvml/README.md); on a node with AMD GPUs (state/amdgpu)
 *                libamd_smi.so(.26) and librocm_smi64.so(.7, .6, .5) link to libhwemu-amdsmi.so
 *                and libhwemu-rocmsmi.so (fakesmi/amdsmi/README.md); on other nodes it is empty
 *   HWEMU_NVML, HWEMU_AMDSMI, HWEMU_ROCMSMI   the first of those names in <root>/<node>.lib
 *                where the node has the library: the shim loads it for a dlopen of the vendor's
 *                library by an absolute path (shim/preload/wrap_dl.c)
 * and then takes one of two routes (shim/supervisor/supervisor.h): preload replaces itself with CMD, so
 * CMD's exit status is hwemu's; seccomp runs CMD under the seccomp supervisor (for programs
 * that bypass libc: Go, static binaries) and exits as CMD did. auto (the default) reads CMD's
 * file to choose (sv_route.c). 127: CMD not found; 126: CMD not executable. */
#include "cli.h"
#include "seg_clock.h"
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

/* The static TLS surplus the preloaded shim needs beside an audit module (shim/preload/audit.c). */
#define STATIC_TLS_TUNABLE "glibc.rtld.optional_static_tls=16384"

static const char help[] =
    "Usage: hwemu exec --node NAME [--root DIR] [--intercept auto|preload|seccomp] [--time emulated|wall]\n"
    "                  [--cpuid auto|fault|patch|host] -- CMD [ARGS...]\n"
    "\n"
    "Runs CMD against node NAME of a running `hwemu serve`: CMD and every program it starts see\n"
    "the node's /sys (and /host-sys) powercap, cpufreq, hwmon, PCI and DRM files and its\n"
    "/proc/cpuinfo, read and written as on the real machine, and the node's GPU tools (nvidia-smi,\n"
    "rocm-smi, amd-smi: links to fakesmi) first on PATH, and its GPU libraries first on\n"
    "LD_LIBRARY_PATH: NVML (libnvidia-ml.so.1) on a node with NVIDIA GPUs, AMD SMI and ROCm SMI\n"
    "(libamd_smi.so, librocm_smi64.so) on one with AMD GPUs; a program linked against one of\n"
    "them loads the node's, or fails to start where the node lacks it, whatever the host has\n"
    "(libhwemu-audit.so, LD_AUDIT). The exit status is CMD's (127: not found, 126: not\n"
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
    "  --time emulated    CMD lives in the engine's emulated time (an engine started with --time\n"
    "                     emulated): its clocks, sleeps and waits with timeouts, and at --speed max\n"
    "                     the engine waits for it (docs/time.md); the preload route, and on the\n"
    "                     seccomp route statically linked Go programs only; default wall\n"
    "  --cpuid HOW        how the CPUID instruction answers with the node's processor (preload route):\n"
    "                       fault  CPUID faulting (hosts with the cpuid_fault flag)\n"
    "                       patch  the CPUIDs of CMD's code and libraries rewritten into a trap\n"
    "                              (hosts without it; docs/interfaces.md \"MSR devices\")\n"
    "                       host   neither: the host's processor\n"
    "                       auto   (default, or HWEMU_CPUID) fault where the host offers it, else patch\n"
    "  -h, --help         this text\n";

/* The environment values cmd_exec made with asprintf (NULL ones skipped). */
static void free_all(char *a, char *b, char *c, char *d, char *e)
{
    free(a);
    free(b);
    free(c);
    free(d);
    free(e);
}

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

/* One of the node's vendor libraries: the names clients load it by, the hwemu library they link to,
 * the variable that names that library's path when it is elsewhere, and the segment directory
 * that says the node has the vendor's GPUs. */
struct node_lib {
    const char *state;             /* "state/nvml": the node has the vendor's GPUs */
    const char *so, *so_var;       /* libhwemu-nvml.so, HWEMU_NVML_LIBRARY */
    const char *what;              /* for the message: "the node's NVML" */
    const char *names[5];          /* the links in <root>/<node>.lib, the first one named to the shim */
};

static const struct node_lib node_libs[] = {
    {"state/nvml", "libhwemu-nvml.so", "HWEMU_NVML_LIBRARY", "the node's NVML", {"libnvidia-ml.so.1", "libnvidia-ml.so"}},
    {"state/amdgpu", "libhwemu-amdsmi.so", "HWEMU_AMDSMI_LIBRARY", "the node's AMD SMI",
     {"libamd_smi.so", "libamd_smi.so.26"}},
    {"state/amdgpu", "libhwemu-rocmsmi.so", "HWEMU_ROCMSMI_LIBRARY", "the node's ROCm SMI",
     {"librocm_smi64.so", "librocm_smi64.so.7", "librocm_smi64.so.6", "librocm_smi64.so.5"}},
};
#define N_NODE_LIBS (sizeof node_libs / sizeof node_libs[0])

/* Makes link point to target (a new link renamed over the old one: a program loading it
 * meanwhile never misses it). 0, or -1 with a message on stderr. */
static int relink(const char *target, const char *link)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.%d", link, (int)getpid());
    unlink(tmp);
    if (symlink(target, tmp) || rename(tmp, link)) {
        fprintf(stderr, "hwemu exec: cannot link %s to %s: %s\n", link, target, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* <root>/<node>.lib holds the node's vendor libraries: on a node with NVIDIA GPUs (state/nvml)
 * libnvidia-ml.so.1 and libnvidia-ml.so linking to libhwemu-nvml.so; on one with AMD GPUs
 * (state/amdgpu) libamd_smi.so(.26) linking to libhwemu-amdsmi.so, librocm_smi64.so(.7, .6, .5)
 * to libhwemu-rocmsmi.so, and lib -> . (so that the directory serves as a ROCM_PATH: ROCm's
 * clients look in $ROCM_PATH/lib); nothing of a vendor the node lacks. Sets path[k] to library
 * k's first name there ("" when the node lacks it). Returns 0, or -1 with a message on stderr. */
static int link_libs(const struct seg *s, const char *lib, char path[N_NODE_LIBS][PATH_MAX])
{
    bool amd = seg_lookup(s, "state/amdgpu", 12) != SEG_NONE;
    char so[PATH_MAX], link[PATH_MAX];
    for (size_t k = 0; k < N_NODE_LIBS; k++) {
        const struct node_lib *nl = &node_libs[k];
        bool has = seg_lookup(s, nl->state, strlen(nl->state)) != SEG_NONE;
        path[k][0] = 0;
        if (has && find_beside(nl->so, nl->so_var, so, sizeof so)) {
            fprintf(stderr, "hwemu exec: %s (%s) is neither next to the hwemu binary nor in ../lib/hwemu; set %s "
                    "to its path\n", nl->so, nl->what, nl->so_var);
            return -1;
        }
        for (size_t i = 0; i < sizeof nl->names / sizeof nl->names[0] && nl->names[i]; i++) {
            snprintf(link, sizeof link, "%s/%s", lib, nl->names[i]);
            if (!has)
                unlink(link);
            else if (relink(so, link))
                return -1;
        }
        if (has)
            snprintf(path[k], PATH_MAX, "%s", nl->names[0]);
    }
    snprintf(link, sizeof link, "%s/lib", lib);
    if (!amd)
        unlink(link);
    else if (relink(".", link))
        return -1;
    return 0;
}

int cmd_exec(int argc, char **argv)
{
    static const struct option opts[] = {
        {"node", required_argument, 0, 'n'}, {"root", required_argument, 0, 'r'},
        {"intercept", required_argument, 0, 'i'}, {"time", required_argument, 0, 'E'},
        {"cpuid", required_argument, 0, 'C'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *node = NULL, *root = cli_env("SIM_HWEMU_ROOT"), *intercept = "auto", *time_mode = "wall", *cpuid = NULL;
    int c;
    opterr = 0;
    optind = 1;
    /* "+": stop at the first non-option, so CMD's own options are CMD's */
    while ((c = getopt_long_only(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'n': node = optarg; break;
        case 'r': root = optarg; break;
        case 'i': intercept = optarg; break;
        case 'E': time_mode = optarg; break;
        case 'C': cpuid = optarg; break;
        case 'h': fputs(help, stdout); return EXIT_OK;
        default: return cli_bad_option("exec", argv, opts);
        }
    }
    if (strcmp(intercept, "auto") && strcmp(intercept, "preload") && strcmp(intercept, "seccomp"))
        return cli_usage_error("exec", "--intercept takes auto, preload or seccomp, not %s", intercept);
    if (strcmp(time_mode, "emulated") && strcmp(time_mode, "wall"))
        return cli_usage_error("exec", "--time takes emulated or wall, not %s", time_mode);
    bool emulated = !strcmp(time_mode, "emulated");
    if (cpuid && strcmp(cpuid, "auto") && strcmp(cpuid, "fault") && strcmp(cpuid, "patch") && strcmp(cpuid, "host"))
        return cli_usage_error("exec", "--cpuid takes auto, fault, patch or host, not %s", cpuid);
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
    char lib[PATH_MAX], libs_in[N_NODE_LIBS][PATH_MAX];
    snprintf(lib, sizeof lib, "%s/%s.lib", root, node);
    mkdir(lib, 0755);
    if (!linked)
        linked = link_libs(&s, lib, libs_in);
    seg_close(&s);
    if (linked)
        return EXIT_INVALID;
    bool clock_alive = false;
    if (emulated) { /* the engine's clock (docs/time.md); its heartbeat stands for the segment's */
        char cpath[PATH_MAX];
        struct seg_clock clk;
        if (seg_clock_path(root, cpath, sizeof cpath) || seg_clock_open(&clk, cpath, err, sizeof err)) {
            fprintf(stderr, "hwemu exec: --time emulated: %s\n", err);
            return EXIT_INVALID;
        }
        clock_alive = !seg_clock_engine_gone(&clk) && clk.h->engine_pid == (uint32_t)engine;
        seg_clock_close(&clk);
        if (!clock_alive) {
            fprintf(stderr, "hwemu exec: --time emulated: the engine of %s is not running with --time emulated "
                    "(its clock %s/%s is a stopped engine's); start `hwemu serve --root %s --time emulated` "
                    "first\n", root, root, SEG_CLOCK_FILE, root);
            return EXIT_INVALID;
        }
    }
    if ((engine > 0 && kill(engine, 0) != 0 && errno == ESRCH) || (!clock_alive && age > 3 * tick + 1000000000LL)) {
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
    char audit_so[PATH_MAX];
    if (find_beside("libhwemu-audit.so", "HWEMU_AUDIT", audit_so, sizeof audit_so)) {
        fprintf(stderr, "hwemu exec: libhwemu-audit.so is neither next to the hwemu binary nor in ../lib/hwemu; "
                "set HWEMU_AUDIT to its path\n");
        return EXIT_INVALID;
    }
    const char *old_preload = getenv("LD_PRELOAD"), *old_path = getenv("PATH"), *old_libs = getenv("LD_LIBRARY_PATH");
    const char *old_audit = getenv("LD_AUDIT"), *old_tunables = getenv("GLIBC_TUNABLES");
    char *preload = NULL, *newpath = NULL, *libs = NULL, *audit = NULL, *tunables = NULL, abs_lib[PATH_MAX];
    if (!realpath(lib, abs_lib))
        snprintf(abs_lib, sizeof abs_lib, "%s", lib);
    if (asprintf(&preload, "%s%s%s", shim, old_preload && *old_preload ? ":" : "", old_preload ? old_preload : "") < 0 ||
        asprintf(&newpath, "%s:%s", bin, old_path && *old_path ? old_path : "/usr/local/bin:/usr/bin:/bin") < 0 ||
        asprintf(&libs, "%s%s%s", abs_lib, old_libs && *old_libs ? ":" : "", old_libs ? old_libs : "") < 0 ||
        asprintf(&audit, "%s%s%s", audit_so, old_audit && *old_audit ? ":" : "", old_audit ? old_audit : "") < 0 ||
        asprintf(&tunables, "%s%s%s", STATIC_TLS_TUNABLE, old_tunables && *old_tunables ? ":" : "",
                 old_tunables ? old_tunables : "") < 0) {
        fprintf(stderr, "hwemu exec: out of memory\n");
        return EXIT_INVALID;
    }
    char abs_root[PATH_MAX];
    if (!realpath(root, abs_root))
        snprintf(abs_root, sizeof abs_root, "%s", root);
    setenv("LD_PRELOAD", preload, 1);
    setenv("LD_AUDIT", audit, 1);
    setenv("GLIBC_TUNABLES", tunables, 1);
    setenv("HWEMU_NODE", node, 1);
    setenv("HWEMU_ROOT", abs_root, 1);
    setenv("PATH", newpath, 1);
    setenv("LD_LIBRARY_PATH", libs, 1);
    free_all(preload, newpath, libs, audit, tunables); /* setenv kept copies */
    /* the shim's answer to a dlopen of each library by an absolute path (shim/preload/wrap_dl.c) */
    static const char *const shim_vars[N_NODE_LIBS] = {"HWEMU_NVML", "HWEMU_AMDSMI", "HWEMU_ROCMSMI"};
    for (size_t k = 0; k < N_NODE_LIBS; k++) {
        char abs_so[2 * PATH_MAX + 2];
        snprintf(abs_so, sizeof abs_so, "%s/%s", abs_lib, libs_in[k]);
        if (libs_in[k][0])
            setenv(shim_vars[k], abs_so, 1);
        else
            unsetenv(shim_vars[k]);
    }
    unsetenv("HWEMU_SEGMENT");
    /* hwloc's x86 backend asks the host's CPUID for the topology, which is not the node's:
     * leave hwloc the node's sysfs (a value the caller set wins). */
    setenv("HWLOC_COMPONENTS", "-x86", 0);
    if (cpuid)
        setenv("HWEMU_CPUID", cpuid, 1);
    if (emulated)
        setenv("HWEMU_TIME", "emulated", 1);
    else
        unsetenv("HWEMU_TIME");
    enum sv_route route = !strcmp(intercept, "seccomp") ? SV_ROUTE_SECCOMP : SV_ROUTE_PRELOAD;
    char why[PATH_MAX + 100] = "--intercept seccomp was asked for";
    if (!strcmp(intercept, "auto"))
        route = sv_route_for(argv[optind], why, sizeof why);
    char what[PATH_MAX + 100];
    if (route == SV_ROUTE_SECCOMP && emulated && !sv_time_fits(argv[optind], what, sizeof what)) {
        /* docs/time.md "Go agents": the seccomp route gives emulated time to static Go programs only */
        fprintf(stderr, "hwemu exec: --time emulated: the seccomp route (%s) gives emulated time only to a "
                "statically linked Go program, and %s: any other program there reads its clocks from the vDSO, "
                "which no system call shows, and would run in the host's time while the engine waits for the "
                "others. Build a Go agent with CGO_ENABLED=0, run this one without --time emulated (in wall "
                "time, with the engine at --speed 1), or run a dynamically linked libc agent (docs/time.md)\n",
                strcmp(intercept, "auto") ? "--intercept seccomp" : "what --intercept auto picks for it", what);
        return EXIT_INVALID;
    }
    if (route == SV_ROUTE_PRELOAD && emulated && strcmp(intercept, "auto") &&
        sv_route_for(argv[optind], what, sizeof what) == SV_ROUTE_SECCOMP) {
        /* LD_PRELOAD never reaches it: it would read the host's clocks */
        fprintf(stderr, "hwemu exec: --time emulated: --intercept preload cannot reach %s (%s): it would live in "
                "the host's time. Use --intercept auto (docs/time.md \"Go agents\")\n", argv[optind], what);
        return EXIT_INVALID;
    }
    if (route == SV_ROUTE_SECCOMP) {
        return sv_exec(argv + optind);
    }
    execvp(argv[optind], argv + optind);
    int e = errno;
    fprintf(stderr, "hwemu exec: %s: %s\n", argv[optind], strerror(e));
    return e == ENOENT ? 127 : 126;
}
