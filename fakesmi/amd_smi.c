/* amd_smi: the amd-smi personality, as amdsmi_cli of ROCm 7.1 and 7.2 behaves
 * (upstream f.5, tools §3) over the node's amdgpu files. Modelled: list,
 * static --limit, metric --power (human and --json), and the power cap commands set -o (7.1
 * "-o WATTS", 7.2 "-o ppt0|ppt1 WATTS") and reset -o, with -g, --json and --loglevel; anything
 * else a real amd-smi accepts is "not emulated" (exit 2). Several GPUs print as one output, as
 * the CLI's handle_gpus gathers them. It writes only power<n>_cap, through gv_write. Without
 * root (HWEMU_UNPRIVILEGED=1) that write fails as the library fails it, AMDSMI_STATUS_NO_PERM,
 * which the CLI turns into an uncaught PermissionError. */
#include "amd_devices.h"
#include "pyargs.h"
#include "gpu_view.h"
#include "tools.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const COMMANDS[] = {"version", "list", "static", "firmware", "ucode", "bad-pages", "metric",
                                       "process", "profile", "event", "topology", "set", "reset", "monitor",
                                       "dmon", "xgmi", "partition", "ras", "node", "default", NULL};

/* The option strings of the modelled subcommands in registration order (options that depend
 * on the platform all listed); then come the device options and the modifiers. */
static const char LIST_OPTIONS[] = "-e";
static const char STATIC_OPTIONS[] =
    "-a/--asic -b/--bus -V/--vbios -I/--ifwi -d/--driver -v/--vram -c/--cache -B/--board -R/--process-isolation "
    "-r/--ras -C/--clock -p/--partition -l/--limit -P/--soc-pstate -x/--xgmi-plpd -u/--numa -d/--dfc-ucode "
    "-f/--fb-info -n/--num-vf -s/--smu -i/--interface-ver";
static const char METRIC_OPTIONS[] =
    "-m/--mem-usage -u/--usage -p/--power -c/--clock -t/--temperature -P/--pcie -e/--ecc -k/--ecc-blocks "
    "-V/--voltage -b/--base-board -G/--gpu-board -f/--fan -C/--voltage-curve -o/--overdrive -l/--perf-level "
    "-x/--xgmi-err -E/--energy -v/--violation -T/--throttle -s/--schedule -G/--guard -u/--guest-data "
    "-f/--fb-usage -m/--xgmi --cpu-power-metrics --cpu-prochot --cpu-freq-metrics --cpu-c0-res "
    "--cpu-lclk-dpm-level --cpu-pwr-svi-telemetry-rails --cpu-io-bandwidth --cpu-xgmi-bandwidth "
    "--cpu-metrics-ver --cpu-metrics-table --cpu-socket-energy --cpu-ddr-bandwidth --cpu-temp "
    "--cpu-dimm-temp-range-rate --cpu-dimm-pow-consumption --cpu-dimm-thermal-sensor --core-boost-limit "
    "--core-curr-active-freq-core-limit --core-energy";
/* set, cut where 7.2 adds -S and -F */
static const char SET_OPTIONS_HEAD[] =
    "-f/--fan -l/--perf-level -P/--profile -d/--perf-determinism -C/--compute-partition -M/--memory-partition "
    "-o/--power-cap -p/--soc-pstate -x/--xgmi-plpd -c/--clk-level ";
static const char SET_OPTIONS_TAIL[] =
    "-L/--clk-limit -R/--process-isolation --cpu-pwr-limit --cpu-xgmi-link-width --cpu-lclk-dpm-level "
    "--cpu-pwr-eff-mode --cpu-gmi3-link-width --cpu-pcie-link-rate --cpu-df-pstate-range --cpu-enable-apb "
    "--cpu-disable-apb --soc-boost-limit --core-boost-limit";
static const char RESET_OPTIONS[] = "-G/--gpureset -c/--clocks -f/--fans -p/--profile -x/--xgmierr "
                                    "-d/--perf-determinism -o/--power-cap -r/--reload-driver -l/--clean-local-data";
static const char COMMON_OPTIONS[] = "-g/--gpu -U/--cpu -O/--core -v/--vf --json --csv --file --loglevel";

static const char *const TEMP_LIMITS[] = {"slowdown_edge_temperature",     "slowdown_hotspot_temperature",
                                          "slowdown_vram_temperature",     "shutdown_edge_temperature",
                                          "shutdown_hotspot_temperature", "shutdown_vram_temperature"};

enum format { HUMAN, JSON, CSV };

/* One run. */
static struct {
    bool v72;
    const char *cmd;
    enum format fmt;
    struct amd_gpu gpu[GPU_MAX];
    int ngpu;
    const struct amd_gpu *sel[64]; /* the GPUs -g selects, in its order */
    int nsel;
} A;

static struct py_args args;

static int not_emulated(const char *what)
{
    fprintf(stderr, "fakesmi: amd-smi %s is not emulated\n", what);
    return 2;
}

/* An AmdSmiException nothing catches: Python prints its qualified class and str(e), which
 * follows the output format, without a traceback (sys.tracebacklimit = -1); exit 1. */
static int __attribute__((format(printf, 3, 4))) raise_exc(const char *cls, int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "amdsmi_cli_exceptions.%s: ", cls);
    if (A.fmt == JSON) {
        fputs("{\"error\": ", stderr);
        py_json_str(stderr, msg);
        fprintf(stderr, ", \"code\": %d}\n", code);
    } else if (A.fmt == CSV) {
        fprintf(stderr, "error,code\n%s, %d\n", msg, code);
    } else {
        fprintf(stderr, "%s Error code: %d\n", msg, code);
    }
    return 1;
}

static int invalid_parameter(const char *arg)
{
    return raise_exc("AmdSmiInvalidParameterException", -2, "Parameter '%s' is invalid. Run 'amd-smi %s -h' for more info.",
                     arg, A.cmd);
}

static int invalid_value(const char *arg)
{
    return raise_exc("AmdSmiInvalidParameterValueException", -5,
                     "Value '%s' is not of valid type or format. Run 'amd-smi %s -h' for more info.", arg, A.cmd);
}

/* AMDSMI_STATUS_NO_PERM from a set: the library's exception, then the PermissionError the
 * command raises from it (a real run's output, ROCm 7). */
static int permission_error(void)
{
    fputs("amdsmi.amdsmi_exception.AmdSmiLibraryException: Error code:\n"
          "\t10 | AMDSMI_STATUS_NO_PERM - Permission Denied\n\n"
          "The above exception was the direct cause of the following exception:\n\n"
          "PermissionError: Command requires elevation\n",
          stderr);
    return 1;
}

/* amdsmi_cli.py's argument normalisation: long options and plain values lower-cased, short
 * options as given, and the value of an option naming a file, a device or a profile as given. */
static void lowercase_args(int argc, char **argv)
{
    static const char *const keep_case[] = {"--folder", "--file", "--gpu", "--cpu", "--core", "--profile",
                                            "--cper-file", NULL};
    bool keep = false;
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        size_t n = strlen(a); /* how much of it to lower-case */
        bool names = false;
        for (int k = 0; keep_case[k]; k++) {
            size_t len = strlen(keep_case[k]);
            names |= !strcmp(a, keep_case[k]);
            if (!strncmp(a, keep_case[k], len) && a[len] == '=')
                n = len; /* --gpu=VALUE */
        }
        if (keep || (a[0] == '-' && a[1] != '-' && n == strlen(a)))
            n = 0; /* the value of such an option, or a short option */
        for (size_t k = 0; k < n; k++)
            a[k] = (char)tolower((unsigned char)a[k]);
        keep = !keep && names;
    }
}

/* ---- Output: json.dumps(indent=4), or amdsmi_logger's human form (keys upper-cased, four
 * spaces a level, single quotes dropped). ---- */

static int depth;  /* JSON nesting, or human indentation level */
static bool first; /* nothing written yet in the current JSON container */

static void member(const char *key)
{
    if (A.fmt == JSON) {
        printf("%s\n%*s", first ? "" : ",", 4 * depth, "");
        if (key) {
            py_json_str(stdout, key);
            fputs(": ", stdout);
        }
    } else {
        printf("%*s", 4 * depth, "");
        for (const char *k = key; *k; k++)
            putchar(toupper((unsigned char)*k));
        putchar(':');
    }
    first = false;
}

static void em_open(const char *key, char bracket)
{
    if (A.fmt == JSON) {
        if (depth)
            member(key);
        putchar(bracket);
    } else if (key) {
        member(key);
        putchar('\n');
    }
    depth++;
    first = true;
}

static void em_close(char bracket)
{
    depth--;
    if (A.fmt == JSON)
        printf("\n%*s%c", 4 * depth, "", bracket);
    first = false;
}

static void em_int(const char *key, long long v)
{
    member(key);
    printf(A.fmt == JSON ? "%lld" : " %lld\n", v);
}

static void em_str(const char *key, const char *v)
{
    member(key);
    if (A.fmt == JSON) {
        py_json_str(stdout, v);
        return;
    }
    putchar(' ');
    for (; *v; v++)
        if (*v != '\'')
            putchar(*v);
    putchar('\n');
}

/* unit_format: {"value": W, "unit": "W"} in JSON, "W W" for people. */
static void em_watts(const char *key, long long w)
{
    if (A.fmt == HUMAN) {
        member(key);
        printf(" %lld W\n", w);
        return;
    }
    em_open(key, '{');
    em_int("value", w);
    em_str("unit", "W");
    em_close('}');
}

/* The GPUs' outputs: a JSON list (under "gpu_data" for static and metric), or one block per
 * GPU, each followed by an empty line, and one more after several (print_output). */
static void output_begin(bool gpu_data)
{
    if (A.fmt == JSON) {
        em_open(NULL, gpu_data ? '{' : '[');
        if (gpu_data)
            em_open("gpu_data", '[');
    }
}

static void output_end(bool gpu_data)
{
    if (A.fmt == JSON) {
        em_close(']');
        if (gpu_data)
            em_close('}');
        putchar('\n');
    } else if (A.nsel > 1) {
        putchar('\n');
    }
}

static void gpu_begin(const struct amd_gpu *g)
{
    if (A.fmt == JSON) {
        em_open(NULL, '{');
        em_int("gpu", g->index);
    } else {
        printf("GPU: %d\n", g->index);
        depth = 1;
    }
}

static void gpu_end(void)
{
    if (A.fmt == JSON) {
        em_close('}');
    } else {
        depth = 0;
        putchar('\n');
    }
}

/* ---- Power caps ---- */

/* amdsmi_get_power_cap_info of PPT sensor 0 (power1_*) or 1 (power2_*), in uW. */
struct cap_info {
    long long cur, lo, hi, def;
};

static bool cap_info(const struct amd_gpu *g, int sensor, struct cap_info *c)
{
    char attr[32];
    const char *suffix[] = {"", "_min", "_max", "_default"};
    long long *field[] = {&c->cur, &c->lo, &c->hi, &c->def};
    for (int i = 0; i < 4; i++) {
        snprintf(attr, sizeof attr, "power%d_cap%s", sensor + 1, suffix[i]);
        if (!amd_hwmon_ll(g, attr, field[i]))
            return false;
    }
    return true;
}

/* amdsmi_get_supported_power_cap: does the GPU have that PPT's cap? */
static bool has_sensor(const struct amd_gpu *g, int sensor)
{
    char attr[16];
    long long v;
    snprintf(attr, sizeof attr, "power%d_cap", sensor + 1);
    return amd_hwmon_ll(g, attr, &v);
}

/* convert_SI_unit: uW to whole W and back, in floating point as Python computes them. */
static long long to_w(long long uw)
{
    return (long long)((double)uw * 0.000001);
}

static long long to_uw(long long w)
{
    return (long long)((double)w / 0.000001);
}

/* The library's set of a cap: 0, or the errno. Without root it is refused as NO_PERM. */
static int cap_write(const struct amd_gpu *g, int sensor, long long uw)
{
    char attr[16];
    if (gv_unprivileged())
        return EACCES;
    snprintf(attr, sizeof attr, "power%d_cap", sensor + 1);
    return amd_hwmon_write(g, attr, uw);
}

/* ---- Commands ---- */

/* -g: all, or GPU indices. 0, or the exit code of the exception. */
static int select_gpus(const struct py_opt *o)
{
    A.nsel = 0;
    for (int i = 0; i < o->nvals; i++)
        if (!strcmp(o->vals[i], "all")) {
            for (int k = 0; k < A.ngpu; k++)
                A.sel[A.nsel++] = &A.gpu[k];
            return 0;
        }
    for (int i = 0; i < o->nvals && A.nsel < (int)(sizeof A.sel / sizeof A.sel[0]); i++) {
        if (!py_isdigit(o->vals[i]))
            return invalid_value(o->vals[i]);
        errno = 0;
        long long k = strtoll(o->vals[i], NULL, 10);
        if (errno || k >= A.ngpu)
            return raise_exc("AmdSmiDeviceNotFoundException", -3, "Can not find a device: GPU '%s'", o->vals[i]);
        A.sel[A.nsel++] = &A.gpu[k];
    }
    return 0;
}

static void list_gpu(const struct amd_gpu *g)
{
    char uuid[37];
    amd_uuid(g, uuid);
    gpu_begin(g);
    em_str("bdf", g->bdf[0] ? g->bdf : "N/A");
    em_str("uuid", uuid);
    em_int("kfd_id", amd_kfd_id(g));
    em_int("node_id", amd_node_id(g));
    em_int("partition_id", 0);
    gpu_end();
}

/* One PPT's limits of 7.2's static --limit, or N/A when the GPU has no readable cap info. */
static void static_ppt(const char *key, const struct cap_info *c)
{
    em_open(key, '{');
    if (c) {
        em_watts("max_power_limit", to_w(c->hi));
        em_watts("min_power_limit", to_w(c->lo));
        em_watts("socket_power_limit", to_w(c->cur));
    } else {
        em_str("max_power_limit", "N/A");
        em_str("min_power_limit", "N/A");
        em_str("socket_power_limit", "N/A");
    }
    em_close('}');
}

/* static --limit. The temperature limits have no source in a node's files: N/A, as when the
 * library calls fail. */
static void static_limit(const struct amd_gpu *g)
{
    struct cap_info c[2];
    bool ok[2] = {false, false};
    gpu_begin(g);
    em_open("limit", '{');
    if (A.v72) {
        for (int s = 0; s < 2; s++)
            if (has_sensor(g, s) && !(ok[s] = cap_info(g, s, &c[s])))
                break;
        static_ppt("ppt0", ok[0] ? &c[0] : NULL);
        static_ppt("ppt1", ok[1] ? &c[1] : NULL);
    } else if (cap_info(g, 0, &c[0])) {
        em_watts("max_power", to_w(c[0].hi));
        em_watts("min_power", to_w(c[0].lo));
        em_watts("socket_power", to_w(c[0].cur));
    } else {
        em_str("max_power", "N/A");
        em_str("min_power", "N/A");
        em_str("socket_power", "N/A");
    }
    for (size_t i = 0; i < sizeof TEMP_LIMITS / sizeof TEMP_LIMITS[0]; i++)
        em_str(TEMP_LIMITS[i], "N/A");
    if (A.v72) {
        em_str("ptl_state", "N/A");
        em_str("ptl_format", "N/A");
    }
    em_close('}');
    gpu_end();
}

/* metric --power: the socket power from the hwmon reading, in whole watts; voltages, throttle
 * status and power management have no source in a node's files and print N/A. */
static void metric_power(const struct amd_gpu *g)
{
    static const char *const unsourced[] = {"gfx_voltage", "soc_voltage", "mem_voltage", "throttle_status",
                                            "power_management"};
    long long uw;
    bool current;
    gpu_begin(g);
    em_open("power", '{');
    if (amd_power_uw(g, &uw, &current))
        em_watts("socket_power", to_w(uw));
    else
        em_str("socket_power", "N/A");
    for (size_t i = 0; i < sizeof unsourced / sizeof unsourced[0]; i++)
        em_str(unsourced[i], "N/A");
    em_close('}');
    gpu_end();
}

/* The message of set -o for one GPU (7.1: typ "", 7.2: "PPT0 " or "PPT1 "). Returns 0, or
 * the exit code when the run ends with an exception. */
static int set_power_cap(const struct amd_gpu *g, int sensor, const char *typ, long long w, char *msg, size_t cap)
{
    struct cap_info c;
    if (!cap_info(g, sensor, &c)) {
        snprintf(msg, cap, "[AMDSMI_STATUS_NOT_SUPPORTED] Unable to set %spower cap to %lldW", typ, w);
        return 0;
    }
    long long cur = to_w(c.cur), lo = to_w(c.lo), hi = to_w(c.hi);
    if (w == cur) {
        snprintf(msg, cap, "%s%s is already set to %lldW", typ, A.v72 ? "power cap" : "Power cap", w);
    } else if (cur == 0) {
        snprintf(msg, cap, "Unable to set %spower cap to %lldW, current value is 0W", typ, w);
    } else if (w >= lo && w <= hi && (!A.v72 || w > 0)) {
        int err = cap_write(g, sensor, to_uw(w));
        if (err == EACCES || err == EPERM)
            return permission_error();
        snprintf(msg, cap, err ? "[AMDSMI_STATUS_FILE_ERROR] Unable to set %spower cap to %lldW"
                               : "Successfully set %spower cap to %lldW",
                 typ, w);
    } else {
        /* "setting power cap to 0 will return the current power cap so the technical minimum
         * value is 1" */
        snprintf(msg, cap, "Power cap must be between %lldW and %lldW", lo ? lo : 1, hi);
    }
    return 0;
}

/* reset -o of 7.1: power1_cap back to its default unless it is there. */
static int reset_power_cap71(const struct amd_gpu *g, char *msg, size_t cap)
{
    struct cap_info c;
    if (!cap_info(g, 0, &c)) {
        snprintf(msg, cap, "[AMDSMI_STATUS_NOT_SUPPORTED] Unable to reset power cap to default");
        return 0;
    }
    long long def = to_w(c.def);
    if (to_w(c.cur) == def) {
        snprintf(msg, cap, "Power cap is already set to %lldW", def);
        return 0;
    }
    int err = cap_write(g, 0, to_uw(def));
    if (err == EACCES || err == EPERM)
        return permission_error();
    if (err) {
        fprintf(stderr, "ValueError: Unable to reset power cap to %lld on GPU %d\n", def, g->index);
        return 1;
    }
    snprintf(msg, cap, "Successfully set power cap to %lldW", def);
    return 0;
}

/* reset -o of 7.2: every PPT the GPU has back to its default as read, one message each. */
static int reset_power_cap72(const struct amd_gpu *g, char msg[2][160])
{
    static const char unsupported[] = "[AMDSMI_STATUS_NOT_SUPPORTED] Unable to reset to default power cap";
    static const char failed[] = "[AMDSMI_STATUS_NOT_SUPPORTED] Unable to reset cap to default power cap";
    snprintf(msg[0], 160, "%s", !has_sensor(g, 0) && !has_sensor(g, 1) ? failed : unsupported);
    snprintf(msg[1], 160, "%s", unsupported);
    for (int s = 0; s < 2; s++) {
        struct cap_info c;
        if (!has_sensor(g, s))
            continue;
        if (!cap_info(g, s, &c)) {
            snprintf(msg[s], 160, "%s", failed);
            break;
        }
        int err = cap_write(g, s, c.def);
        if (err == EACCES || err == EPERM)
            return permission_error();
        if (err) {
            snprintf(msg[s], 160, "[AMDSMI_STATUS_FILE_ERROR] Unable to reset cap to default power cap");
            break;
        }
        snprintf(msg[s], 160, "Successfully reset power cap to %lldW", to_w(c.def));
    }
    return 0;
}

/* set -o and reset -o over the selected GPUs: every GPU acts, then the output prints, so an
 * exception leaves stdout empty as the CLI's gathered output does. */
static int power_cap_command(const char *pwr_type, long long w)
{
    static char msg[64][2][160];
    char typ[8] = "";
    int sensor = pwr_type && !strcmp(pwr_type, "ppt1");
    if (pwr_type)
        snprintf(typ, sizeof typ, "PPT%d ", sensor);
    for (int i = 0; i < A.nsel; i++) {
        int rc = !strcmp(A.cmd, "set") ? set_power_cap(A.sel[i], sensor, typ, w, msg[i][0], sizeof msg[i][0])
                 : A.v72               ? reset_power_cap72(A.sel[i], msg[i])
                                       : reset_power_cap71(A.sel[i], msg[i][0], sizeof msg[i][0]);
        if (rc)
            return rc;
    }
    bool map = A.v72 && !strcmp(A.cmd, "reset");
    output_begin(false);
    for (int i = 0; i < A.nsel; i++) {
        gpu_begin(A.sel[i]);
        if (map) {
            em_open("powercap", '{');
            em_str("ppt0", msg[i][0]);
            em_str("ppt1", msg[i][1]);
            em_close('}');
        } else {
            em_str("powercap", msg[i][0]);
        }
        gpu_end();
    }
    output_end(false);
    return 0;
}

/* argparse runs the -g action and the -o type checks as it meets them, in the order the
 * options came: the GPUs -g selects, and set -o's PWR_TYPE (7.2) and WATTS. 0, or the exit
 * code of the exception. */
static int act_on_options(const char **pwr_type, long long *watts)
{
    const struct py_opt *o;
    for (int k = 0; (o = py_nth(&args, k)); k++) {
        int rc = 0;
        if (!strcmp(o->model->flag, "--gpu")) {
            rc = select_gpus(o);
        } else if (!strcmp(o->model->flag, "--power-cap") && !strcmp(A.cmd, "set")) {
            const char *w = o->vals[o->nvals - 1];
            if (A.v72 && strcmp(o->vals[0], "ppt0") && strcmp(o->vals[0], "ppt1"))
                rc = invalid_parameter(o->vals[0]);
            else if (!py_isdigit(w) || !py_int(w, watts) || (!A.v72 && *watts <= 0))
                rc = invalid_value(w);
            *pwr_type = A.v72 ? o->vals[0] : NULL;
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* The parser of a subcommand: -h, its own options, the device options and the modifiers. */
static void build_parser(const char *cmd, char *prog, size_t progcap)
{
    static struct py_model models[8];
    char set_options[1024], spec[2048];
    snprintf(set_options, sizeof set_options, "%s%s%s", SET_OPTIONS_HEAD,
             A.v72 ? "-S/--ptl-status -F/--ptl-format " : "", SET_OPTIONS_TAIL);
    const char *own = !strcmp(cmd, "list")     ? LIST_OPTIONS
                      : !strcmp(cmd, "static") ? STATIC_OPTIONS
                      : !strcmp(cmd, "metric") ? METRIC_OPTIONS
                      : !strcmp(cmd, "set")    ? set_options
                                               : RESET_OPTIONS;
    int n = 0;
    models[n++] = (struct py_model){"--help", 0, NULL, false};
    models[n++] = (struct py_model){"--gpu", PY_PLUS, "GPU", false};
    models[n++] = (struct py_model){"--json", 0, NULL, false};
    models[n++] = (struct py_model){"--loglevel", 1, "LEVEL", false};
    if (!strcmp(cmd, "static"))
        models[n++] = (struct py_model){"--limit", 0, NULL, false};
    else if (!strcmp(cmd, "metric"))
        models[n++] = (struct py_model){"--power", 0, NULL, false};
    else if (!strcmp(cmd, "set"))
        models[n++] = A.v72 ? (struct py_model){"--power-cap", 2, "PWR_TYPE WATTS", false}
                            : (struct py_model){"--power-cap", 1, "WATTS", false};
    else if (!strcmp(cmd, "reset"))
        models[n++] = (struct py_model){"--power-cap", 0, NULL, false};
    models[n] = (struct py_model){NULL, 0, NULL, false};
    snprintf(spec, sizeof spec, "-h/--help %s %s", own, COMMON_OPTIONS);
    snprintf(prog, progcap, "amd-smi %s", cmd);
    py_parser(&args, prog, spec, models);
}

int amd_smi_main(int argc, char **argv)
{
    char variant[32] = "", prog[32], text[1024];
    gv_read("state/tools/amd-smi", variant, sizeof variant);
    A.v72 = !strcmp(variant, "7.2");
    if (!A.v72 && strcmp(variant, "7.1")) {
        fprintf(stderr, "fakesmi: amd-smi variant \"%s\" is not emulated\n", variant);
        return 2;
    }
    argc--, argv++;
    lowercase_args(argc, argv);
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--j"))
            A.fmt = JSON;
        else if (A.fmt != JSON && (!strcmp(argv[i], "--csv") || !strcmp(argv[i], "--c")))
            A.fmt = CSV;
    }
    if (argc == 0)
        return not_emulated("without a command (the default view)");
    A.cmd = argv[0];
    if (!strcmp(A.cmd, "-h") || !strcmp(A.cmd, "--help")) {
        puts("usage: amd-smi [-h] {list,static,metric,set,reset} ...  (emulated by fakesmi)");
        return 0;
    }
    int known = 0;
    while (COMMANDS[known] && strcmp(COMMANDS[known], A.cmd))
        known++;
    if (!COMMANDS[known]) {
        A.fmt = HUMAN; /* amdsmi_cli.py passes the destination where the format belongs */
        return raise_exc("AmdSmiInvalidSubcommandException", -10,
                         "AMD-SMI Command '%s' is invalid. Must receive valid AMD-SMI Command first. Run 'amd-smi -h' "
                         "for more info.",
                         A.cmd);
    }
    if (strcmp(A.cmd, "list") && strcmp(A.cmd, "static") && strcmp(A.cmd, "metric") && strcmp(A.cmd, "set") &&
        strcmp(A.cmd, "reset")) {
        snprintf(text, sizeof text, "command %s", A.cmd);
        return not_emulated(text);
    }

    build_parser(A.cmd, prog, sizeof prog);
    if (py_parse(&args, argc - 1, argv + 1))
        return py_fail(&args, args.err);
    if (args.help)
        return py_help(&args);
    if (args.unmodelled) {
        snprintf(text, sizeof text, "option %s", args.unmodelled);
        return not_emulated(text);
    }
    A.ngpu = amd_gpus(A.gpu);
    if (!A.ngpu)
        return not_emulated("on a node without an AMD GPU");
    for (int i = 0; i < A.ngpu; i++)
        A.sel[A.nsel++] = &A.gpu[i];

    const char *pwr_type = NULL;
    long long watts = 0;
    int rc = act_on_options(&pwr_type, &watts);
    if (rc)
        return rc;
    if (args.nextras) /* AMDSMIParser.error makes "unrecognized arguments" an exception */
        return invalid_parameter(py_extras(&args, text, sizeof text));
    if (A.fmt == CSV)
        return not_emulated("--csv output");

    if (!strcmp(A.cmd, "list") || !strcmp(A.cmd, "static") || !strcmp(A.cmd, "metric")) {
        bool is_list = !strcmp(A.cmd, "list"), is_static = !strcmp(A.cmd, "static");
        if (!is_list && !py_get(&args, is_static ? "--limit" : "--power"))
            return not_emulated(is_static ? "static other than --limit" : "metric other than --power");
        output_begin(!is_list);
        for (int i = 0; i < A.nsel; i++)
            (is_list ? list_gpu : is_static ? static_limit : metric_power)(A.sel[i]);
        output_end(!is_list);
        return 0;
    }
    if (!py_get(&args, "--power-cap")) {
        snprintf(text, sizeof text, "%s other than -o", A.cmd);
        return not_emulated(text);
    }
    return power_cap_command(pwr_type, watts);
}
