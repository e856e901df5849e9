/* nvidia_smi: the nvidia-smi personality of fakesmi, as driver 590.48.01 answers
 * (tools §1): the command line and its checks, the choice of GPUs (-i), -L,
 * --query-gpu with --format=csv, and --query-compute-apps (no processes: its header). The
 * commands that change a GPU are in nvidia_smi_set.c, the
 * two reports (-q, the summary table) in nvidia_smi_query.c, the readers and helpers all three
 * use in nvidia_smi_common.c. Every value is checked before
 * anything is read or written, with the real tool's messages and exit codes (§1.3). Output
 * is collected in nv_out and reaches stdout in one write; a node whose NVML files are
 * incomplete prints nothing there and fails with exit 255 and the missing file on stderr. */
#include "nvidia_smi.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "gpu_view.h"
#include "tools.h"

#define DEPRECATED "[Requested functionality has been deprecated]"
#define INVALID_COMBINATION "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"

/* ---- the command line ---- */

enum opt { O_HELP, O_VERSION, O_LIST, O_ID, O_QUERY_GPU, O_FORMAT, O_QUERY, O_DISPLAY, O_PL, O_PM,
           O_LGC, O_LMC, O_RGC, O_RMC, O_EOW, O_QUERY_APPS, O_COUNT };

static const struct {
    const char *s, *l;
    bool value;
    bool action;
} options[O_COUNT] = {
    [O_HELP] = {"-h", "--help", false, false},
    [O_VERSION] = {NULL, "--version", false, false},
    [O_LIST] = {"-L", "--list-gpus", false, true},
    [O_ID] = {"-i", "--id", true, false},
    [O_QUERY_GPU] = {NULL, "--query-gpu", true, true},
    [O_FORMAT] = {NULL, "--format", true, false},
    [O_QUERY] = {"-q", "--query", false, true},
    [O_DISPLAY] = {"-d", "--display", true, false},
    [O_PL] = {"-pl", "--power-limit", true, true},
    [O_PM] = {"-pm", "--persistence-mode", true, true},
    [O_LGC] = {"-lgc", "--lock-gpu-clocks", true, true},
    [O_LMC] = {"-lmc", "--lock-memory-clocks", true, true},
    [O_RGC] = {"-rgc", "--reset-gpu-clocks", false, true},
    [O_RMC] = {"-rmc", "--reset-memory-clocks", false, true},
    [O_EOW] = {"-eow", "--error-on-warning", false, false},
    [O_QUERY_APPS] = {NULL, "--query-compute-apps", true, true},
};

/* Options and subcommands of the real tool that this one does not model. */
static const char *const not_emulated[] = {
    "-x", "--xml-format", "-u", "--unit", "-f", "--filename", "-l", "--loop", "-lms", "--loop-ms",
    "-ac", "--applications-clocks", "-rac", "--reset-applications-clocks", "-r", "--gpu-reset",
    "-c", "--compute-mode", "-e", "--ecc-config", "-p", "--reset-ecc-errors", "-am",
    "--accounting-mode", "-sc", "--scope", "-m", "--mode", "-B", "--list-excluded-gpus",
    "-mig", "--multi-instance-gpu", "--query-supported-clocks",
    "--query-accounted-apps", "--query-retired-pages", "--query-remapped-rows", "--help-query-gpu",
    "--dtd", "dmon", "pmon", "topo", "nvlink", "mig", "clocks", NULL,
};

static bool name_is(const char *name, const char *arg, size_t len)
{
    return name && strlen(name) == len && !strncmp(name, arg, len);
}

/* Fills val[] (flags get ""): -1, or the exit code of a usage error already printed. */
static int parse_args(int argc, char **argv, const char *val[O_COUNT])
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *eq = strncmp(a, "--", 2) ? NULL : strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        int k = 0;
        while (k < O_COUNT && !name_is(options[k].s, a, len) && !name_is(options[k].l, a, len))
            k++;
        if (k == O_COUNT) {
            for (int j = 0; not_emulated[j]; j++)
                if (name_is(not_emulated[j], a, len)) {
                    fprintf(stderr, "fakesmi: nvidia-smi %.*s is not emulated\n", (int)len, a);
                    return 2;
                }
            fprintf(nv_out, "ERROR: Option %s is not recognized. Please run 'nvidia-smi -h'.\n", a);
            return 2;
        }
        if (options[k].value && !eq && i + 1 == argc)
            goto invalid;
        if (!options[k].value && eq)
            goto invalid;
        val[k] = !options[k].value ? "" : eq ? eq + 1 : argv[++i];
    }
    int actions = 0;
    for (int k = 0; k < O_COUNT; k++)
        actions += options[k].action && val[k];
    if (actions > 1 || (!val[O_QUERY_GPU] && !val[O_QUERY_APPS]) != !val[O_FORMAT] || (val[O_DISPLAY] && !val[O_QUERY]))
        goto invalid;
    return -1;
invalid:
    fputs(INVALID_COMBINATION, stderr);
    return 2;
}

static void help(void)
{
    fputs("NVIDIA System Management Interface -- v" NVML_DRIVER_VERSION "\n"
          "\n"
          "Emulated by hwemu fakesmi for the GPUs of an emulated node; the options below are the\n"
          "ones it answers.\n"
          "\n"
          "nvidia-smi [OPTION1 [ARG1]] [OPTION2 [ARG2]] ...\n"
          "\n"
          "    -h,   --help                Print usage information and exit.\n"
          "          --version             Print version information and exit.\n"
          "    -L,   --list-gpus           Display a list of GPUs connected to the system.\n"
          "    <no arguments>              Show a summary of GPUs connected to the system.\n"
          "    -q,   --query               Display GPU info.\n"
          "    -d,   --display=            With -q, only: MEMORY, UTILIZATION, TEMPERATURE, POWER,\n"
          "                                    CLOCK, COMPUTE, PIDS, PERFORMANCE, SUPPORTED_CLOCKS\n"
          "                                Flags can be combined with comma e.g. CLOCK,POWER.\n"
          "    --query-gpu=                Comma separated list of properties of the GPUs.\n"
          "    --format=                   csv (MANDATORY with --query-gpu), noheader, nounits.\n"
          "    --query-compute-apps=       Comma separated list of properties of the compute\n"
          "                                    processes (none run on the emulated GPUs).\n"
          "    -i,   --id=                 Target GPUs: index, UUID, serial or PCI bus id,\n"
          "                                    comma separated.\n"
          "    -pm,  --persistence-mode=   Set persistence mode: 0/DISABLED, 1/ENABLED\n"
          "    -pl,  --power-limit=        Specifies maximum power management limit in watts.\n"
          "    -lgc, --lock-gpu-clocks=    <minGpuClock,maxGpuClock> or one clock, in MHz.\n"
          "    -rgc, --reset-gpu-clocks    Resets the GPU clocks to the default values.\n"
          "    -lmc, --lock-memory-clocks= <minMemClock,maxMemClock> or one clock, in MHz.\n"
          "    -rmc, --reset-memory-clocks Resets the Memory clocks to the default values.\n"
          "    -eow, --error-on-warning    Return a non-zero error for warnings.\n",
          nv_out);
}

static void version(void)
{
    const char *dot = strrchr(NVML_DRIVER_VERSION, '.');
    fprintf(nv_out,
            "NVIDIA-SMI version  : %s\nNVML version        : %.*s\nDRIVER version      : %s\n"
            "CUDA Version        : %s\n",
            NVML_DRIVER_VERSION, (int)(dot - NVML_DRIVER_VERSION), NVML_DRIVER_VERSION,
            NVML_DRIVER_VERSION, NVML_CUDA_VERSION);
}

/* ---- --query-gpu ---- */

enum fkind { FK_INDEX, FK_COUNT, FK_TIME, FK_DRIVER, FK_TEXT, FK_INT, FK_MW, FK_PERSIST, FK_MEMFREE,
             FK_CONST, FK_REASON, FK_PCI, FK_MIG };

struct qfield {
    const char *name, *alias;
    const char *unit; /* header " [unit]" and value " unit"; NULL: none */
    enum fkind kind;
    const char *arg;  /* FK_TEXT, FK_INT, FK_MW: the GPU's file; FK_CONST: the value */
    unsigned bit;     /* FK_REASON: the clocks_event_reasons bit; FK_PCI: 0 domain, 1 bus, 2 device */
};

static const struct qfield fields[] = {
    {"timestamp", NULL, NULL, FK_TIME, NULL, 0},
    {"driver_version", NULL, NULL, FK_DRIVER, NULL, 0},
    {"count", NULL, NULL, FK_COUNT, NULL, 0},
    {"name", "gpu_name", NULL, FK_TEXT, "name", 0},
    {"serial", "gpu_serial", NULL, FK_TEXT, "serial", 0},
    {"uuid", "gpu_uuid", NULL, FK_TEXT, "uuid", 0},
    {"pci.bus_id", "gpu_bus_id", NULL, FK_TEXT, "pci_bus_id", 0},
    {"pci.domain", NULL, NULL, FK_PCI, NULL, 0},
    {"pci.bus", NULL, NULL, FK_PCI, NULL, 1},
    {"pci.device", NULL, NULL, FK_PCI, NULL, 2},
    {"pci.device_id", NULL, NULL, FK_TEXT, "pci_device_id", 0},
    {"index", NULL, NULL, FK_INDEX, NULL, 0},
    {"persistence_mode", NULL, NULL, FK_PERSIST, NULL, 0},
    {"fan.speed", NULL, "%", FK_CONST, "[N/A]", 0},
    {"pstate", NULL, NULL, FK_TEXT, "pstate", 0},
    {"clocks_event_reasons.supported", "clocks_throttle_reasons.supported", NULL, FK_CONST,
     "0x00000000000001FF", 0},
    {"clocks_event_reasons.active", "clocks_throttle_reasons.active", NULL, FK_TEXT, "clocks_event_reasons", 0},
    {"clocks_event_reasons.gpu_idle", "clocks_throttle_reasons.gpu_idle", NULL, FK_REASON, NULL, 0x1},
    {"clocks_event_reasons.applications_clocks_setting", "clocks_throttle_reasons.applications_clocks_setting",
     NULL, FK_REASON, NULL, 0x2},
    {"clocks_event_reasons.sw_power_cap", "clocks_throttle_reasons.sw_power_cap", NULL, FK_REASON, NULL, 0x4},
    {"clocks_event_reasons.hw_slowdown", "clocks_throttle_reasons.hw_slowdown", NULL, FK_REASON, NULL, 0x8},
    {"clocks_event_reasons.sync_boost", "clocks_throttle_reasons.sync_boost", NULL, FK_REASON, NULL, 0x10},
    {"clocks_event_reasons.sw_thermal_slowdown", "clocks_throttle_reasons.sw_thermal_slowdown", NULL, FK_REASON,
     NULL, 0x20},
    {"clocks_event_reasons.hw_thermal_slowdown", "clocks_throttle_reasons.hw_thermal_slowdown", NULL, FK_REASON,
     NULL, 0x40},
    {"clocks_event_reasons.hw_power_brake_slowdown", "clocks_throttle_reasons.hw_power_brake_slowdown", NULL,
     FK_REASON, NULL, 0x80},
    {"memory.total", NULL, "MiB", FK_INT, "memory_total_mib", 0},
    {"memory.used", NULL, "MiB", FK_INT, "memory_used_mib", 0},
    {"memory.free", NULL, "MiB", FK_MEMFREE, NULL, 0},
    {"compute_mode", NULL, NULL, FK_CONST, "Default", 0},
    {"compute_cap", NULL, NULL, FK_TEXT, "compute_cap", 0},
    {"utilization.gpu", NULL, "%", FK_INT, "utilization_gpu_pct", 0},
    {"utilization.memory", NULL, "%", FK_INT, "utilization_memory_pct", 0},
    {"temperature.gpu", NULL, NULL, FK_INT, "temperature_gpu_c", 0},
    {"temperature.memory", NULL, NULL, FK_INT, "temperature_memory_c", 0},
    {"power.management", NULL, NULL, FK_CONST, DEPRECATED, 0},
    {"power.draw", NULL, "W", FK_MW, "power_draw_mw", 0},
    {"power.draw.average", "gpu.power.draw.average", "W", FK_MW, "power_draw_mw", 0},
    {"power.draw.instant", "gpu.power.draw.instant", "W", FK_MW, "power_instant_mw", 0},
    {"power.limit", "gpu.power.requested_limit", "W", FK_MW, "power_limit_mw", 0},
    {"enforced.power.limit", "gpu.power.current_limit", "W", FK_MW, "enforced_power_limit_mw", 0},
    {"power.default_limit", "gpu.power.default_limit", "W", FK_MW, "power_default_limit_mw", 0},
    {"power.min_limit", "gpu.power.min_limit", "W", FK_MW, "power_min_limit_mw", 0},
    {"power.max_limit", "gpu.power.max_limit", "W", FK_MW, "power_max_limit_mw", 0},
    {"clocks.current.graphics", "clocks.gr", "MHz", FK_INT, "clocks_graphics_mhz", 0},
    {"clocks.current.sm", "clocks.sm", "MHz", FK_INT, "clocks_sm_mhz", 0},
    {"clocks.current.memory", "clocks.mem", "MHz", FK_INT, "clocks_memory_mhz", 0},
    {"clocks.current.video", "clocks.video", "MHz", FK_INT, "clocks_video_mhz", 0},
    {"clocks.applications.graphics", "clocks.applications.gr", "MHz", FK_CONST, DEPRECATED, 0},
    {"clocks.applications.memory", "clocks.applications.mem", "MHz", FK_CONST, DEPRECATED, 0},
    {"clocks.default_applications.graphics", "clocks.default_applications.gr", "MHz", FK_CONST, DEPRECATED, 0},
    {"clocks.default_applications.memory", "clocks.default_applications.mem", "MHz", FK_CONST, DEPRECATED, 0},
    {"clocks.max.graphics", "clocks.max.gr", "MHz", FK_INT, "clocks_max_graphics_mhz", 0},
    {"clocks.max.sm", NULL, "MHz", FK_INT, "clocks_max_graphics_mhz", 0},
    {"clocks.max.memory", "clocks.max.mem", "MHz", FK_INT, "clocks_max_memory_mhz", 0},
    {"mig.mode.current", NULL, NULL, FK_MIG, NULL, 0},
    {"mig.mode.pending", NULL, NULL, FK_MIG, NULL, 0},
};
#define NFIELDS (sizeof fields / sizeof fields[0])

/* One requested column: its field and, when the node's fieldSupport names the field, the
 * token printed in its place on every GPU. */
struct column {
    const struct qfield *f;
    bool has_token;
    char token[64];
};

struct format {
    bool header, units;
};

/* "csv[,noheader][,nounits]" in any order; csv is mandatory. */
static bool parse_format(const char *text, struct format *fmt)
{
    bool csv = false;
    fmt->header = fmt->units = true;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, ",");
        while (len && p[len - 1] == ' ')
            len--;
        if (name_is("csv", p, len))
            csv = true;
        else if (name_is("noheader", p, len))
            fmt->header = false;
        else if (name_is("nounits", p, len))
            fmt->units = false;
        else
            return false;
        p += strcspn(p, ",");
        p += *p == ',';
        p += strspn(p, " ");
    }
    return csv;
}

/* The columns of a --query-gpu list (malloc'd, *n of them): NULL after printing the real
 * tool's message for a field it does not know. */
static struct column *parse_fields(const char *list, int *n)
{
    int cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    struct column *cols = calloc((size_t)cap, sizeof *cols);
    if (!cols) {
        perror("fakesmi: nvidia-smi");
        return NULL;
    }
    *n = 0;
    for (const char *p = list;; p++) {
        p += strspn(p, " ");
        size_t len = strcspn(p, ",");
        while (len && p[len - 1] == ' ')
            len--;
        size_t k = 0;
        while (k < NFIELDS && !name_is(fields[k].name, p, len) && !name_is(fields[k].alias, p, len))
            k++;
        if (k == NFIELDS) {
            fprintf(nv_out, "Field \"%.*s\" is not a valid field to query.\n\n", (int)len, p);
            free(cols);
            return NULL;
        }
        cols[(*n)++].f = &fields[k];
        p = strchr(p, ',');
        if (!p)
            return cols;
    }
}

static void put_timestamp(void)
{
    struct timespec ts;
    struct tm tm;
    char b[32];
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    strftime(b, sizeof b, "%Y/%m/%d %H:%M:%S", &tm);
    fprintf(nv_out, "%s.%03ld", b, ts.tv_nsec / 1000000);
}

static void put_unit(const char *unit)
{
    if (unit)
        fprintf(nv_out, " %s", unit);
}

/* One value of a column for GPU g: a number with its unit, or a file's token as it is. */
static void put_value(const struct column *c, int g, int total, bool units)
{
    const struct qfield *f = c->f;
    const char *unit = units && f->unit ? f->unit : NULL;
    char t[160], w[32];
    long long v, used;
    unsigned long long bits;
    unsigned b[4];
    int pm;
    if (c->has_token) {
        fputs(c->token, nv_out);
        return;
    }
    switch (f->kind) {
    case FK_INDEX:
        fprintf(nv_out, "%d", g);
        return;
    case FK_COUNT:
        fprintf(nv_out, "%d", total);
        return;
    case FK_TIME:
        put_timestamp();
        return;
    case FK_DRIVER:
        fputs(nv_read_path("state/nvml/driver_version", t, sizeof t), nv_out);
        return;
    case FK_CONST:
        fputs(f->arg, nv_out);
        return;
    case FK_TEXT:
        fputs(nv_read(g, f->arg, t, sizeof t), nv_out);
        return;
    case FK_PERSIST:
        pm = nv_persistence(g);
        fputs(pm == 1 ? "Enabled" : pm == 0 ? "Disabled" : "[N/A]", nv_out);
        return;
    case FK_MIG:
        fputs(nv_mig_capable(g) ? "Disabled" : "[N/A]", nv_out);
        return;
    case FK_PCI:
        if (nv_bus_id(nv_read(g, "pci_bus_id", t, sizeof t), b))
            fprintf(nv_out, "0x%0*X", f->bit ? 2 : 4, b[f->bit]); /* the domain has 4 digits */
        else
            fputs("[N/A]", nv_out);
        return;
    case FK_REASON:
        nv_read(g, "clocks_event_reasons", t, sizeof t);
        if (sscanf(t, "%llx", &bits) == 1)
            fputs(bits & f->bit ? "Active" : "Not Active", nv_out);
        else
            fputs(t, nv_out);
        return;
    case FK_MEMFREE:
        if (nv_num(nv_read(g, "memory_total_mib", t, sizeof t), &v) &&
            nv_num(nv_read(g, "memory_used_mib", t, sizeof t), &used)) {
            fprintf(nv_out, "%lld", v - used);
            put_unit(unit);
        } else {
            fputs("[N/A]", nv_out);
        }
        return;
    case FK_INT:
    case FK_MW:
        if (!nv_num(nv_read(g, f->arg, t, sizeof t), &v)) {
            fputs(t, nv_out);
            return;
        }
        if (f->kind == FK_MW)
            fputs(nv_watts(v, w, sizeof w), nv_out);
        else
            fprintf(nv_out, "%lld", v);
        put_unit(unit);
        return;
    }
}

static int query_gpu(const struct nv_sel *s, struct column *cols, int n, struct format fmt)
{
    /* power.min_limit and power.max_limit are one NVML call (the limit constraints): a token
     * for either stands in for both, as the real tool prints it */
    for (int c = 0; c < n; c++) {
        const char *name = cols[c].f->name;
        const char *other = !strcmp(name, "power.min_limit")   ? "power.max_limit"
                            : !strcmp(name, "power.max_limit") ? "power.min_limit"
                                                               : NULL;
        cols[c].has_token = gv_readf(cols[c].token, sizeof cols[c].token, "state/gpu/field_support/%s", name) >= 0;
        if (!cols[c].has_token && other)
            cols[c].has_token =
                gv_readf(cols[c].token, sizeof cols[c].token, "state/gpu/field_support/%s", other) >= 0;
    }
    if (fmt.header)
        for (int c = 0; c < n; c++) {
            fputs(cols[c].f->name, nv_out);
            if (cols[c].f->unit)
                fprintf(nv_out, " [%s]", cols[c].f->unit);
            fputs(c + 1 < n ? ", " : "\n", nv_out);
        }
    for (int k = 0; k < s->n; k++)
        for (int c = 0; c < n; c++) {
            put_value(&cols[c], s->gpu[k], s->total, fmt.units);
            fputs(c + 1 < n ? ", " : "\n", nv_out);
        }
    return 0;
}

/* ---- --query-compute-apps ---- */

/* The node's GPUs run no processes, so the list is its header alone (what the real tool prints
 * then); the field names, aliases and units are the real tool's (--help-query-compute-apps). */
static int query_apps(const char *list, struct format fmt)
{
    static const struct {
        const char *name, *alias, *header;
    } app_fields[] = {
        {"timestamp", NULL, "timestamp"}, {"gpu_name", NULL, "gpu_name"}, {"gpu_bus_id", NULL, "gpu_bus_id"},
        {"gpu_serial", NULL, "gpu_serial"}, {"gpu_uuid", NULL, "gpu_uuid"}, {"pid", NULL, "pid"},
        {"process_name", "name", "process_name"}, {"used_gpu_memory", "used_memory", "used_gpu_memory [MiB]"},
    };
    const size_t n = sizeof app_fields / sizeof app_fields[0];
    char *header = NULL;
    size_t hlen = 0;
    FILE *h = open_memstream(&header, &hlen);
    if (!h)
        return 255;
    for (const char *p = list, *sep = "";; p++, sep = ", ") {
        p += strspn(p, " ");
        size_t len = strcspn(p, ","), k = 0;
        while (len && p[len - 1] == ' ')
            len--;
        while (k < n && !name_is(app_fields[k].name, p, len) && !name_is(app_fields[k].alias, p, len))
            k++;
        if (k == n) {
            fclose(h);
            free(header);
            fprintf(nv_out, "Field \"%.*s\" is not a valid field to query.\n\n", (int)len, p);
            return 2;
        }
        fprintf(h, "%s%s", sep, app_fields[k].header);
        p = strchr(p, ',');
        if (!p)
            break;
    }
    fclose(h);
    if (fmt.header)
        fprintf(nv_out, "%s\n", header);
    free(header);
    return 0;
}

/* ---- selection and -L ---- */

static bool all_digits(const char *p)
{
    if (!*p)
        return false;
    for (; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* Does one -i id name GPU g: its index, UUID (any case), serial or PCI bus id (any spelling)? */
/* Does id name GPU g: 1 yes, 0 no, -1 an id with a ':' that is no PCI bus id. */
/* What the real 535 tool prints after a handle lookup fails with NVML_ERROR_GPU_IS_LOST (the
 * string of nvmlErrorString(15) and its advice; faults.md §1.4, and the real tool on the node's
 * NVML, tests/cli/test_faults.sh). */
#define GPU_LOST_TEXT "GPU is lost.  Reboot the system to recover this GPU"

static int id_matches(const char *id, int g)
{
    char t[96];
    unsigned want[4], have[4];
    if (all_digits(id))
        return strtol(id, NULL, 10) == g;
    if (strchr(id, ':')) {
        if (!nv_bus_id(id, want))
            return -1;
        return nv_bus_id(nv_read(g, "pci_bus_id", t, sizeof t), have) && want[0] == have[0] &&
               want[1] == have[1] && want[2] == have[2] && want[3] == have[3];
    }
    return !strcasecmp(id, nv_read(g, "uuid", t, sizeof t)) || !strcmp(id, nv_read(g, "serial", t, sizeof t));
}

/* The GPUs -i selects, as the real nvidia-smi 535 on the node's NVML selects them
 * (tests/cli/test_nvml.sh compares the two): the ids are the list's comma-separated words
 * (empty ones skipped, leading blanks ignored); every GPU, in index order and once, is selected
 * when one of the ids names it (an index, a UUID, a serial, or a PCI bus id: an id with a ':'),
 * tried in the list's order. Returns 0, or the exit code after printing why:
 *   no id at all                    "Failed to parse device string on command line", 255
 *   an id with ':' that is no bus id, on the first GPU it is tried on:
 *                                   "Problem with GPU <g>: Invalid PCI bus id format. ...", 255
 *   no GPU named                    "No devices were found", 6 */
static int select_gpus(const char *list, struct nv_sel *s)
{
    s->n = 0;
    if (!list) {
        for (int g = 0; g < s->total; g++)
            s->gpu[s->n++] = g;
    } else {
        char ids[GPU_MAX * 2][96];
        int nid = 0;
        for (const char *p = list; *p && nid < GPU_MAX * 2;) {
            size_t len = strcspn(p, ",");
            size_t lead = strspn(p, " \t");
            if (lead < len)
                snprintf(ids[nid++], sizeof ids[0], "%.*s", (int)(len - lead), p + lead);
            p += len + (p[len] == ',');
        }
        if (!nid) {
            fputs("Failed to parse device string on command line", nv_out);
            return 255;
        }
        bool by_index = true;
        for (int k = 0; k < nid; k++)
            by_index = by_index && all_digits(ids[k]);
        uint32_t lost = gv_lost_gpus();
        for (int g = 0; g < s->total; g++)
            for (int k = 0; k < nid; k++) {
                if (!by_index && ((lost >> g) & 1)) { /* the real tool takes every handle to compare */
                    fprintf(nv_out, "Problem with GPU %d: %s\n\n\n", g, GPU_LOST_TEXT);
                    return 255;
                }
                int m = id_matches(ids[k], g);
                if (m < 0) {
                    fprintf(nv_out, "Problem with GPU %d: Invalid PCI bus id format. Try format "
                                    "[domain:]bus:device.function E.g. 0:2:0.0\n", g);
                    return 255;
                }
                if (m) {
                    s->gpu[s->n++] = g;
                    break;
                }
            }
    }
    if (!s->n) {
        fputs("No devices were found\n", nv_out);
        return 6;
    }
    return 0;
}

static int list_gpus(const struct nv_sel *s)
{
    char name[160], uuid[96];
    uint32_t lost = gv_lost_gpus();
    for (int k = 0; k < s->n; k++)
        if ((lost >> s->gpu[k]) & 1)
            fprintf(nv_out, "Unable to determine the device handle for gpu %d: %s\n\n\n", s->gpu[k], GPU_LOST_TEXT);
        else
            fprintf(nv_out, "GPU %d: %s (UUID: %s)\n", s->gpu[k], nv_read(s->gpu[k], "name", name, sizeof name),
                    nv_read(s->gpu[k], "uuid", uuid, sizeof uuid));
    for (int k = 0; k < s->n; k++)
        if ((lost >> s->gpu[k]) & 1)
            return 15; /* NVML_ERROR_GPU_IS_LOST, the documented code (faults.md §1.4) */
    return 0;
}

/* A selected GPU that fell off the bus stops every other command at its handle, as the real
 * 535 tool does on the node's NVML (tests/cli/test_faults.sh): the first one, in order. */
static int lost_handle(const struct nv_sel *s)
{
    uint32_t lost = gv_lost_gpus();
    for (int k = 0; k < s->n; k++)
        if ((lost >> s->gpu[k]) & 1) {
            fprintf(nv_out, "Unable to determine the device handle for GPU%d: %s\n\n\n", s->gpu[k], GPU_LOST_TEXT);
            return 15;
        }
    return 0;
}

/* ---- argument values ---- */

/* Watts ("300", "290.5") as integer mW, truncated as the real tool does (333.9999 -> 333999). */
static bool parse_watts(const char *text, long long *mw)
{
    char *end;
    double w = strtod(text, &end);
    if (end == text || *end || !isfinite(w) || w < 0 || w > 1e9)
        return false;
    *mw = (long long)(w * 1000);
    return true;
}

/* One clock in MHz at text, up to the end or a comma (*end). */
static bool parse_clock(const char *text, long long *mhz, const char **end)
{
    char *e;
    errno = 0;
    *mhz = strtoll(text, &e, 10);
    *end = e;
    return e != text && !errno && *mhz >= 0 && *mhz <= 1000000 && (!*e || *e == ',');
}

/* "min,max" or one clock for both, MHz. */
static bool parse_clocks(const char *text, long long *lo, long long *hi)
{
    const char *end;
    if (!parse_clock(text, lo, &end))
        return false;
    if (!*end) {
        *hi = *lo;
        return true;
    }
    return parse_clock(end + 1, hi, &end) && !*end;
}

/* 0/DISABLED or 1/ENABLED: 0, 1, or -1. */
static int parse_mode(const char *text)
{
    if (!strcmp(text, "1") || !strcasecmp(text, "ENABLED"))
        return 1;
    if (!strcmp(text, "0") || !strcasecmp(text, "DISABLED"))
        return 0;
    return -1;
}

/* A -d list as NV_D_* bits: 0 after printing why it is refused. */
static unsigned parse_display(const char *list)
{
    static const struct {
        const char *name;
        unsigned bit;
    } types[] = {
        {"MEMORY", NV_D_MEMORY}, {"UTILIZATION", NV_D_UTILIZATION}, {"TEMPERATURE", NV_D_TEMPERATURE},
        {"POWER", NV_D_POWER}, {"CLOCK", NV_D_CLOCK}, {"COMPUTE", NV_D_COMPUTE}, {"PIDS", NV_D_PIDS},
        {"PERFORMANCE", NV_D_PERFORMANCE}, {"SUPPORTED_CLOCKS", NV_D_SUPPORTED_CLOCKS},
        {"ECC", 0}, {"PAGE_RETIREMENT", 0}, {"ACCOUNTING", 0}, {"ENCODER_STATS", 0},
        {"SUPPORTED_GPU_TARGET_TEMP", 0}, {"VOLTAGE", 0}, {"FBC_STATS", 0}, {"ROW_REMAPPER", 0},
        {"GSP_FIRMWARE_VERSION", 0}, {"POWER_SMOOTHING", 0}, {"POWER_PROFILES", 0},
    };
    const size_t ntypes = sizeof types / sizeof types[0];
    unsigned bits = 0;
    for (const char *p = list;;) {
        size_t len = strcspn(p, ","), k = 0;
        while (k < ntypes && !(strlen(types[k].name) == len && !strncasecmp(types[k].name, p, len)))
            k++;
        if (k == ntypes) {
            fputs(INVALID_COMBINATION, stderr);
            return 0;
        }
        if (!types[k].bit) {
            fprintf(stderr, "fakesmi: nvidia-smi -d %s is not emulated\n", types[k].name);
            return 0;
        }
        bits |= types[k].bit;
        if (!p[len])
            return bits;
        p += len + 1;
    }
}

/* Everything after the command line parsed: check the values, find the driver and the GPUs,
 * run the action. */
static int run(const char *val[O_COUNT])
{
    struct column *cols = NULL;
    struct format fmt = {true, true};
    struct nv_sel sel = {0};
    long long mw = 0, lo = 0, hi = 0;
    unsigned display = NV_D_ALL;
    int ncols = 0, mode = 0, rc;
    bool eow = val[O_EOW] != NULL;

    if (val[O_QUERY_GPU] || val[O_QUERY_APPS]) {
        if (!parse_format(val[O_FORMAT], &fmt)) {
            fputs(INVALID_COMBINATION, stderr);
            return 2;
        }
        if (val[O_QUERY_GPU] && !(cols = parse_fields(val[O_QUERY_GPU], &ncols)))
            return 2;
    }
    if ((val[O_PL] && !parse_watts(val[O_PL], &mw)) || (val[O_PM] && (mode = parse_mode(val[O_PM])) < 0) ||
        (val[O_LGC] && !parse_clocks(val[O_LGC], &lo, &hi)) || (val[O_LMC] && !parse_clocks(val[O_LMC], &lo, &hi))) {
        fputs(INVALID_COMBINATION, stderr);
        rc = 2;
        goto out;
    }
    if (val[O_DISPLAY] && !(display = parse_display(val[O_DISPLAY]))) {
        rc = 2;
        goto out;
    }
    if (!gv_exists("state/nvml")) {
        fputs("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
              "latest NVIDIA driver is installed and running.\n",
              nv_out);
        rc = 9;
        goto out;
    }
    for (char path[32]; sel.total < GPU_MAX; sel.total++) {
        snprintf(path, sizeof path, "state/nvml/gpu%d", sel.total);
        if (!gv_exists(path))
            break;
    }
    if ((rc = select_gpus(val[O_ID], &sel)))
        goto out;
    if (val[O_LIST])
        rc = list_gpus(&sel);
    else if (!val[O_QUERY_APPS] && (rc = lost_handle(&sel)))
        ;
    else if (val[O_QUERY_APPS])
        rc = query_apps(val[O_QUERY_APPS], fmt);
    else if (cols)
        rc = query_gpu(&sel, cols, ncols, fmt);
    else if (val[O_QUERY])
        rc = nv_query_report(&sel, display);
    else if (val[O_PL])
        rc = nv_set_power_limit(&sel, mw, eow);
    else if (val[O_PM])
        rc = nv_set_persistence(&sel, mode == 1);
    else if (val[O_LGC] || val[O_RGC])
        rc = nv_set_clocks(&sel, false, val[O_RGC] != NULL, lo, hi, eow);
    else if (val[O_LMC] || val[O_RMC])
        rc = nv_set_clocks(&sel, true, val[O_RMC] != NULL, lo, hi, eow);
    else
        rc = nv_summary_table(&sel);
out:
    free(cols);
    return rc;
}

int nvidia_smi_main(int argc, char **argv)
{
    const char *val[O_COUNT] = {0};
    char *text = NULL;
    size_t len = 0;
    if (!(nv_out = open_memstream(&text, &len))) {
        perror("fakesmi: nvidia-smi");
        return 255;
    }
    int rc = parse_args(argc, argv, val);
    if (rc < 0 && val[O_HELP]) {
        help();
        rc = 0;
    } else if (rc < 0 && val[O_VERSION]) {
        version();
        rc = 0;
    } else if (rc < 0) {
        rc = run(val);
    }
    fclose(nv_out);
    nv_out = NULL;
    if (nv_missing()) {
        fprintf(stderr, "fakesmi: incomplete NVML state: %s\n", nv_missing());
        rc = 255;
    } else {
        for (size_t off = 0; off < len;) {
            ssize_t n = write(STDOUT_FILENO, text + off, len - off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            off += (size_t)n;
        }
    }
    free(text);
    return rc;
}
