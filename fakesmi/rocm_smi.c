/* rocm_smi: the rocm-smi personality, as python_smi_tools/rocm_smi.py of rocm_smi_lib behaves
 * (upstream f.4, tools §2) over the node's amdgpu files. Variants: current,
 * and legacy-agent-contract, which registers --showpowercap after -M (no release has it; an
 * agent asks for it). Modelled: -P -M -t -u -c -p --showproductname (and --showpowercap), the
 * sets --setperflevel, --setpoweroverdrive and --resetpoweroverdrive, and -d, --json,
 * --autorespond, --loglevel; any other real option is "not emulated" (exit 2). Like the real
 * tool it exits 0 after most failures unless --loglevel names a level other than warning.
 * It writes only power1_cap and power_dpm_force_performance_level, through gv_write. Without
 * root (HWEMU_UNPRIVILEGED=1) a set re-runs the real tool through sudo before it prints
 * anything: a profile with unprivilegedSetIsNoop says that run prints nothing and exits 0;
 * without it that run is not emulated. Secondary dies are not modelled (no file marks one). */
#include "amd_devices.h"
#include "pyargs.h"
#include "gpu_view.h"
#include "tools.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Every option of rocm_smi.py in registration order, cut after -M, where the legacy variant
 * puts --showpowercap. */
static const char OPTIONS_HEAD[] =
    "-h/--help -V/--version -d/--device --alldevices --showhw -a/--showallinfo -i/--showid -v/--showvbios "
    "-e/--showevents --showdriverversion --showtempgraph --showfwinfo --showmclkrange --showmemvendor "
    "--showsclkrange --showproductname --showserial --showuniqueid --showvoltagerange --showbus "
    "--showpagesinfo --showpendingpages --showretiredpages --showunreservablepages -f/--showfan -P/--showpower "
    "-t/--showtemp -u/--showuse --showmemuse --showvoltage -b/--showbw -c/--showclocks -g/--showgpuclocks "
    "-l/--showprofile -M/--showmaxpower ";
static const char OPTIONS_TAIL[] =
    "-m/--showmemoverdrive -o/--showoverdrive -p/--showperflevel -S/--showclkvolt -s/--showclkfrq --showmeminfo "
    "--showpids --showpidgpus --showreplaycount --showrasinfo --showvc --showxgmierr --showtopo --showtopoaccess "
    "--showtopoweight --showtopohops --showtopotype --showtoponuma --showenergycounter --shownodesbw "
    "--showcomputepartition --showmemorypartition -r/--resetclocks --resetfans --resetprofile "
    "--resetpoweroverdrive --resetxgmierr --resetperfdeterminism --resetcomputepartition --resetmemorypartition "
    "--setclock --setsclk --setmclk --setpcie --setslevel --setmlevel --setvc --setsrange --setextremum --setmrange "
    "--setfan --setperflevel --setoverdrive --setmemoverdrive --setpoweroverdrive --setprofile --setperfdeterminism "
    "--setcomputepartition --setmemorypartition --rasenable --rasdisable --rasinject --gpureset --load --save "
    "--autorespond --loglevel --json --csv";

static const struct py_model MODELLED[] = {
    {"--help", 0, NULL, false},
    {"--device", PY_PLUS, "DEVICE", true},
    {"--showproductname", 0, NULL, false},
    {"--showpower", 0, NULL, false},
    {"--showtemp", 0, NULL, false},
    {"--showuse", 0, NULL, false},
    {"--showclocks", 0, NULL, false},
    {"--showmaxpower", 0, NULL, false},
    {"--showpowercap", 0, NULL, false},
    {"--showperflevel", 0, NULL, false},
    {"--resetpoweroverdrive", 0, NULL, false},
    {"--setperflevel", 1, "LEVEL", false},
    {"--setpoweroverdrive", 1, "WATTS", false},
    {"--autorespond", 1, "RESPONSE", false},
    {"--loglevel", 1, "LEVEL", false},
    {"--json", 0, NULL, false},
    {NULL, 0, NULL, false},
};

enum { NOTSET = 0, DEBUG = 10, INFO = 20, WARNING = 30, ERROR = 40, CRITICAL = 50 };
enum { RSMI_NOT_SUPPORTED = 2, RSMI_UNKNOWN = -1 }; /* rsmi_status_t as ctypes returns it */
#define NO_DEV (-1)                                /* printLog's device None */
#define APP_WIDTH 90
#define JSON_KEYS 48

static const char OUT_OF_SPEC_WARNING[] =
    "\n          ******WARNING******\n\n"
    "          Operating your AMD GPU outside of official AMD specifications or outside of\n"
    "          factory settings, including but not limited to the conducting of overclocking,\n"
    "          over-volting or under-volting (including use of this interface software,\n"
    "          even if such software has been directly or indirectly provided by AMD or otherwise\n"
    "          affiliated in any way with AMD), may cause damage to your AMD GPU, system components\n"
    "          and/or result in system failure, as well as cause other problems.\n"
    "          DAMAGES CAUSED BY USE OF YOUR AMD GPU OUTSIDE OF OFFICIAL AMD SPECIFICATIONS OR\n"
    "          OUTSIDE OF FACTORY SETTINGS ARE NOT COVERED UNDER ANY AMD PRODUCT WARRANTY AND\n"
    "          MAY NOT BE COVERED BY YOUR BOARD OR SYSTEM MANUFACTURER'S WARRANTY.\n"
    "          Please use this utility with caution.\n"
    "          ";

/* JSON_DATA['card<d>']: the metrics of one device, in insertion order. */
struct json_card {
    int n;
    char key[JSON_KEYS][80];
    char val[JSON_KEYS][160];
};

/* One run: rocm_smi.py's globals PRINT_JSON, JSON_DATA and RETCODE, and the logging level. */
static struct {
    bool json;
    int level;
    int retcode;
    struct amd_gpu gpu[GPU_MAX];
    int ngpu;
    int dev[GPU_MAX]; /* the devices to act on, in the order given */
    int ndev;
    struct json_card card[GPU_MAX]; /* by position in dev[] */
} R;

static struct py_args args;

static int not_emulated(const char *what)
{
    fprintf(stderr, "fakesmi: rocm-smi %s is not emulated\n", what);
    return 2;
}

/* getattr(logging, name.upper(), logging.WARNING) for the names that are levels. */
static int log_level(const char *name)
{
    static const struct { const char *name; int level; } levels[] = {
        {"NOTSET", NOTSET}, {"DEBUG", DEBUG}, {"INFO", INFO}, {"WARN", WARNING}, {"WARNING", WARNING},
        {"ERROR", ERROR}, {"CRITICAL", CRITICAL}, {"FATAL", CRITICAL},
    };
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (!strcasecmp(name, levels[i].name))
            return levels[i].level;
    return WARNING;
}

/* logging under basicConfig(format='%(levelname)s: %(message)s'), on stderr. stdout is
 * flushed first so that combined output keeps the program's order. */
static void __attribute__((format(printf, 2, 3))) log_msg(int level, const char *fmt, ...)
{
    if (level < R.level)
        return;
    fflush(stdout);
    fprintf(stderr, "%s: ", level == ERROR ? "ERROR" : level == WARNING ? "WARNING" : level == INFO ? "INFO" : "DEBUG");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* formatJson: each line of the text that has a colon becomes a key (before the first ": ")
 * and a stripped value (up to the next ": "); a key already there keeps its place. */
static void format_json(int dev, const char *text)
{
    struct json_card *c = NULL;
    for (int i = 0; i < R.ndev; i++)
        if (R.dev[i] == dev)
            c = &R.card[i];
    for (const char *line = text; c && *line;) {
        size_t len = strcspn(line, "\n");
        const char *sep = strstr(line, ": ");
        if (memchr(line, ':', len) && sep && sep < line + len) {
            const char *v = sep + 2, *end = strstr(v, ": ");
            if (!end || end > line + len)
                end = line + len;
            while (v < end && strchr(" \t\r\v\f", *v))
                v++;
            while (end > v && strchr(" \t\r\v\f", end[-1]))
                end--;
            int k = 0;
            while (k < c->n && (strlen(c->key[k]) != (size_t)(sep - line) || strncmp(c->key[k], line, sep - line)))
                k++;
            if (k < JSON_KEYS) {
                snprintf(c->key[k], sizeof c->key[k], "%.*s", (int)(sep - line), line);
                snprintf(c->val[k], sizeof c->val[k], "%.*s", (int)(end - v), v);
                c->n += k == c->n;
            }
        }
        line += len + (line[len] == '\n');
    }
}

/* printLog: "GPU[d]\t\t: metric: value" on stdout, or under --json an entry of card<d>. */
static void print_log(int dev, const char *metric, const char *value)
{
    char line[512];
    snprintf(line, sizeof line, "%s%s%s", metric, value ? ": " : "", value ? value : "");
    if (R.json) {
        if (dev != NO_DEV)
            format_json(dev, line);
    } else if (dev == NO_DEV) {
        puts(line);
    } else {
        printf("GPU[%d]\t\t: %s\n", dev, line);
    }
}

/* printInfoLog: "GPU[d]\t: metric: value" at INFO, which the default level hides. */
static void print_info(int dev, const char *metric, const char *value)
{
    if (!R.json)
        log_msg(INFO, "GPU[%d]\t: %s: %s", dev, metric, value);
}

/* printErrLog: an ERROR line, or a DEBUG one under --json. */
static void print_err(int dev, const char *msg)
{
    log_msg(R.json ? DEBUG : ERROR, "GPU[%d]\t: %s", dev, msg);
}

/* printLogSpacer: the title centred in '=' over 90 columns (an odd title gets one '=' more),
 * or 90 '='. Nothing under --json. */
static void spacer(const char *title)
{
    char t[APP_WIDTH + 2] = "";
    if (R.json)
        return;
    if (title)
        snprintf(t, sizeof t, "%s%s", title, strlen(title) % 2 ? "=" : "");
    int pad = (APP_WIDTH - (int)strlen(t)) / 2;
    for (int i = 0; i < pad; i++)
        putchar('=');
    fputs(t, stdout);
    for (int i = 0; i < pad; i++)
        putchar('=');
    putchar('\n');
}

/* rsmi_ret_ok on a failed library call: the debug line, the verbose line unless silent, and
 * RETCODE. The statuses a file gives: a missing file is NOT_SUPPORTED; anything else, such as
 * the EINVAL of a refused write, is UNKNOWN_ERROR (ErrnoToRsmiStatus), which the verbose table
 * does not name. */
static void rsmi_failed(int dev, const char *metric, int status, bool silent)
{
    if (!R.json && !silent) {
        log_msg(DEBUG, "%d GPU[%d]: %s: %s\t", status, dev, metric,
                status == RSMI_NOT_SUPPORTED ? "RSMI_STATUS_NOT_SUPPORTED: This function is not supported in the current environment."
                                             : "RSMI_STATUS_UNKNOWN_ERROR: An unknown error occurred");
        if (status == RSMI_NOT_SUPPORTED) {
            char line[160];
            snprintf(line, sizeof line, "%s, Not supported on the given system", metric);
            print_log(dev, line, NULL);
        }
    }
    R.retcode = status;
}

static int rsmi_status(int err)
{
    return err == ENOENT ? RSMI_NOT_SUPPORTED : RSMI_UNKNOWN;
}

static const struct amd_gpu *gpu(int dev)
{
    return &R.gpu[dev];
}

/* A decimal attribute of the PCI device (gpu_busy_percent). */
static bool dev_ll(int dev, const char *attr, long long *out)
{
    char buf[32], *end;
    if (!amd_dev_read(gpu(dev), attr, buf, sizeof buf) || !buf[0])
        return false;
    *out = strtoll(buf, &end, 10);
    return !*end;
}

/* ---- Temperatures (-t) ---- */

/* A sensor's temperature in m degrees C: the hwmon temp<i>_input whose label is the one the
 * library looks for. The HBM sensors come from gpu_metrics, which a node does not have. */
static bool temp_mc(int dev, const char *sensor, long long *mc)
{
    const char *label = !strcmp(sensor, "edge") ? "edge" : !strcmp(sensor, "junction") ? "junction"
                                                      : !strcmp(sensor, "memory")       ? "mem"
                                                                                         : NULL;
    for (int i = 1; label && i <= 8; i++) {
        char attr[16], text[32], path[128];
        snprintf(path, sizeof path, "%s/temp%d_label", gpu(dev)->hwmon, i);
        if (gv_read(path, text, sizeof text) >= 0 && !strcmp(text, label)) {
            snprintf(attr, sizeof attr, "temp%d_input", i);
            return amd_hwmon_ll(gpu(dev), attr, mc);
        }
    }
    return false;
}

static void show_temp(void)
{
    static const char *const sensors[] = {"edge", "junction", "memory", "HBM 0", "HBM 1", "HBM 2", "HBM 3"};
    spacer(" Temperature ");
    for (int i = 0; i < R.ndev; i++)
        for (size_t s = 0; s < sizeof sensors / sizeof sensors[0]; s++) {
            char metric[64], value[32];
            long long mc;
            snprintf(metric, sizeof metric, "Temperature (Sensor %s) (C)", sensors[s]);
            if (temp_mc(R.dev[i], sensors[s], &mc)) {
                py_float(mc / 1000.0, value, sizeof value);
                print_log(R.dev[i], metric, value);
            } else {
                rsmi_failed(R.dev[i], "get_temp_metric", RSMI_NOT_SUPPORTED, true);
                print_info(R.dev[i], metric, "N/A");
            }
        }
    spacer(NULL);
}

/* ---- Clocks (-c) ---- */

/* The current level of a pp_dpm_<clk> table: the label of the line marked '*' (a number, or S
 * for deep sleep, as rocm-smi numbers them) and its frequency in MHz. */
static bool current_clock(const char *table, char *label, size_t cap, long long *mhz)
{
    for (const char *line = table; *line;) {
        size_t len = strcspn(line, "\n");
        const char *colon = memchr(line, ':', len);
        if (colon && memchr(line, '*', len)) {
            snprintf(label, cap, "%.*s", (int)(colon - line), line);
            *mhz = strtoll(colon + 1, NULL, 10);
            return true;
        }
        line += len + (line[len] == '\n');
    }
    return false;
}

static void show_clocks(void)
{
    static const char *const clocks[] = {"dcefclk", "fclk", "mclk", "sclk", "socclk"}; /* sorted() */
    spacer(" Current clock frequencies ");
    for (int i = 0; i < R.ndev; i++) {
        int d = R.dev[i];
        for (size_t c = 0; c < sizeof clocks / sizeof clocks[0]; c++) {
            char attr[32], table[1024], level[16], metric[64], value[32];
            long long mhz;
            snprintf(attr, sizeof attr, "pp_dpm_%s", clocks[c]);
            if (!amd_dev_read(gpu(d), attr, table, sizeof table)) {
                log_msg(DEBUG, "%s clock is unsupported on device[%d]", clocks[c], d);
                continue;
            }
            if (!current_clock(table, level, sizeof level, &mhz))
                continue;
            snprintf(value, sizeof value, "(%lldMhz)", mhz);
            if (R.json) {
                snprintf(metric, sizeof metric, "%s clock speed:", clocks[c]);
                print_log(d, metric, value);
                snprintf(metric, sizeof metric, "%s clock level:", clocks[c]);
                print_log(d, metric, level);
            } else {
                snprintf(metric, sizeof metric, "%s clock level: %s", clocks[c], level);
                print_log(d, metric, value);
            }
        }
        log_msg(DEBUG, "PCIe clock is unsupported on device[%d]", d);
    }
    spacer(NULL);
}

/* ---- Performance level (-p, --setperflevel) ---- */

/* getPerfLevel, lower-cased as -p prints it: the library's name for the sysfs word, or n/a
 * after reporting the failure. */
static const char *perf_level(int dev)
{
    static const char *const words[][2] = {
        {"auto", "auto"}, {"low", "low"}, {"high", "high"}, {"manual", "manual"},
        {"profile_standard", "stable_std"}, {"profile_peak", "stable_peak"},
        {"profile_min_mclk", "stable_min_mclk"}, {"profile_min_sclk", "stable_min_sclk"},
        {"perf_determinism", "perf_determinism"},
    };
    char word[32];
    if (!amd_dev_read(gpu(dev), "power_dpm_force_performance_level", word, sizeof word)) {
        rsmi_failed(dev, "get_perf_level", RSMI_NOT_SUPPORTED, false);
        return "n/a";
    }
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(word, words[i][0]))
            return words[i][1];
    return "unknown";
}

static void show_perf_level(void)
{
    spacer(" Show Performance Level ");
    for (int i = 0; i < R.ndev; i++) {
        perf_level(R.dev[i]); /* rocm_smi.py asks twice, so a failure is reported twice */
        print_log(R.dev[i], "Performance Level", perf_level(R.dev[i]));
    }
    spacer(NULL);
}

static void set_perf_level(const char *level)
{
    spacer(" Set Performance Level ");
    for (int i = 0; i < R.ndev; i++) {
        int d = R.dev[i];
        if (strcmp(level, "auto") && strcmp(level, "low") && strcmp(level, "high") && strcmp(level, "manual")) {
            print_err(d, "Unable to set Performance Level");
            log_msg(ERROR, "Invalid Performance level: %s", level);
            continue;
        }
        char path[96], msg[64];
        snprintf(path, sizeof path, "%s/power_dpm_force_performance_level", gpu(d)->dev);
        int err = gv_write(path, level);
        if (err) {
            rsmi_failed(d, "set_perf_level", rsmi_status(err), false);
            continue;
        }
        snprintf(msg, sizeof msg, "Performance level set to %s", level);
        print_log(d, msg, NULL);
    }
    spacer(NULL);
}

/* ---- Power (-M, --showpowercap, -P) ---- */

static void show_max_power(void)
{
    spacer(" Power Cap ");
    for (int i = 0; i < R.ndev; i++) {
        long long uw;
        char value[32];
        if (amd_hwmon_ll(gpu(R.dev[i]), "power1_cap", &uw)) {
            /* getMaxPower: the current cap, floored to whole watts */
            py_float(floor(uw / 1e6), value, sizeof value);
            print_log(R.dev[i], "Max Graphics Package Power (W)", value);
        } else {
            rsmi_failed(R.dev[i], "get_power_cap", RSMI_NOT_SUPPORTED, false);
            print_log(R.dev[i], "Max Graphics Package Power Unsupported", NULL);
        }
    }
    spacer(NULL);
}

/* The watts of a uW hwmon attribute as a Python float, or N/A. */
static const char *watts(int dev, const char *attr, char *buf, size_t cap)
{
    long long uw;
    if (!amd_hwmon_ll(gpu(dev), attr, &uw))
        return "N/A";
    py_float(uw / 1e6, buf, cap);
    return buf;
}

/* --showpowercap of the legacy variant: the keys the agent reads, in watts. */
static void show_power_cap(void)
{
    spacer(" Power Cap ");
    for (int i = 0; i < R.ndev; i++) {
        int d = R.dev[i];
        char buf[32];
        long long uw;
        bool current;
        print_log(d, "Max Graphics Package Power (W)", watts(d, "power1_cap_max", buf, sizeof buf));
        print_log(d, "Min Graphics Package Power (W)", watts(d, "power1_cap_min", buf, sizeof buf));
        print_log(d, "Current Power Cap (W)", watts(d, "power1_cap", buf, sizeof buf));
        bool reading = amd_power_uw(gpu(d), &uw, &current);
        if (reading)
            py_float(uw / 1e6, buf, sizeof buf);
        print_log(d, "Average Graphics Package Power (W)", reading ? buf : "N/A");
    }
    spacer(NULL);
}

static void show_power(void)
{
    spacer(" Power Consumption ");
    for (int i = 0; i < R.ndev; i++) {
        long long uw;
        bool current;
        char value[32];
        if (amd_power_uw(gpu(R.dev[i]), &uw, &current)) {
            py_float(uw / 1e6, value, sizeof value);
            print_log(R.dev[i], current ? "Current Socket Graphics Package Power (W)" : "Average Graphics Package Power (W)",
                      value);
        } else {
            print_err(R.dev[i], "Unable to get Average or Current Socket Graphics Package Power Consumption");
        }
    }
    spacer(NULL);
}

/* ---- Use (-u) ---- */

static void show_use(void)
{
    spacer(" % time GPU is busy ");
    for (int i = 0; i < R.ndev; i++) {
        int d = R.dev[i];
        long long pct;
        char value[24];
        if (dev_ll(d, "gpu_busy_percent", &pct)) {
            snprintf(value, sizeof value, "%lld", pct);
            print_log(d, "GPU use (%)", value);
        } else {
            rsmi_failed(d, "GPU Utilization ", RSMI_NOT_SUPPORTED, false);
            print_log(d, "GPU use Unsupported", NULL);
        }
        /* The coarse-grain GFX Activity counter comes from gpu_metrics, which a node has not. */
        rsmi_failed(d, "get_utilization_count_GFX Activity", RSMI_NOT_SUPPORTED, true);
        print_info(d, "GFX Activity", "N/A");
    }
    spacer(NULL);
}

/* ---- Product (--showproductname) ---- */

/* A PCI ID attribute as rocm-smi prints it: hex() of a C short, zero-padded to width digits. */
static const char *hex_attr(int dev, const char *attr, int width, char *buf, size_t cap)
{
    char text[32], *end;
    if (!amd_dev_read(gpu(dev), attr, text, sizeof text) || !text[0])
        return "N/A";
    long long v = strtoll(text, &end, 0);
    if (*end)
        return "N/A";
    int s = (short)v;
    if (s < 0)
        snprintf(buf, cap, "-0x%x", (unsigned)-s);
    else
        snprintf(buf, cap, "0x%0*x", width, (unsigned)s);
    return buf;
}

/* One line of --showproductname: the value follows tabs that align it in a terminal. */
static void __attribute__((format(printf, 3, 4))) product_line(int dev, const char *metric, const char *fmt, ...)
{
    char value[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    print_log(dev, metric, value);
}

static void show_product(void)
{
    spacer(" Product Info ");
    for (int i = 0; i < R.ndev; i++) {
        int d = R.dev[i];
        char name[128], vbios[64], sku[64] = "N/A", gfx[32], hex[24];
        if (!amd_dev_read(gpu(d), "product_name", name, sizeof name) || !name[0])
            strcpy(name, "N/A");
        if (!amd_dev_read(gpu(d), "vbios_version", vbios, sizeof vbios) || !vbios[0])
            strcpy(vbios, "N/A");
        /* Card SKU: the middle of a vbios version of exactly three dash-separated parts. */
        const char *d1 = strchr(vbios, '-'), *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
        if (d2 && !strchr(d2 + 1, '-') && d2 - d1 - 1 > 1)
            snprintf(sku, sizeof sku, "%.*s", (int)(d2 - d1 - 1), d1 + 1);
        if (gv_readf(gfx, sizeof gfx, "state/amdgpu/card%d/gfx_version", gpu(d)->card) <= 0)
            strcpy(gfx, "N/A");
        product_line(d, "Card Series", "\t\t%s", name);
        product_line(d, "Card Model", "\t\t%s", hex_attr(d, "device", 0, hex, sizeof hex));
        product_line(d, "Card Vendor", "\t\t%s", "Advanced Micro Devices, Inc. [AMD/ATI]");
        product_line(d, "Card SKU", "\t\t%s", sku);
        product_line(d, "Subsystem ID", "\t%s", hex_attr(d, "subsystem_device", 4, hex, sizeof hex));
        product_line(d, "Device Rev", "\t\t%s", hex_attr(d, "revision", 2, hex, sizeof hex));
        product_line(d, "Node ID", "\t\t%d", amd_node_id(gpu(d)));
        product_line(d, "GUID", "\t\t%u", amd_kfd_id(gpu(d)));
        product_line(d, "GFX Version", "\t\t%s", gfx);
    }
    spacer(NULL);
}

/* ---- Power OverDrive (--setpoweroverdrive, --resetpoweroverdrive) ---- */

/* confirmOutOfSpecWarning: the warning, then the answer of --autorespond or of input(). -1 to
 * go on, or the exit code when the run ends here. */
static int confirm(const char *autorespond)
{
    char answer[256];
    size_t n = 0;
    puts(OUT_OF_SPEC_WARNING);
    if (autorespond && *autorespond) {
        snprintf(answer, sizeof answer, "%s", autorespond);
    } else {
        fputs("Do you accept these terms? [y/N] ", stdout);
        fflush(stdout);
        int c;
        while ((c = getchar()) != EOF && c != '\n')
            if (n + 1 < sizeof answer)
                answer[n++] = (char)c;
        answer[n] = 0;
        if (c == EOF && n == 0) {
            fputs("Traceback (most recent call last):\n  File \"rocm_smi.py\", in confirmOutOfSpecWarning\n"
                  "EOFError: EOF when reading a line\n",
                  stderr);
            return 1;
        }
    }
    static const char *const yes[] = {"Yes", "yes", "y", "Y", "YES"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (!strcmp(answer, yes[i]))
            return -1;
    fflush(stdout);
    fputs("Confirmation not given. Exiting without setting value\n", stderr); /* sys.exit(msg) */
    return 1;
}

/* One device of setPowerOverDrive; w == 0 resets. Returns -1, or the exit code of a run the
 * confirmation ended. */
static int set_power_one(int d, long long w, const char *value, const char *autorespond, bool *confirmed)
{
    const struct amd_gpu *g = gpu(d);
    long long cur = 0, def = 0, lo, hi, now;
    char msg[160], fw[32];
    if (!amd_hwmon_ll(g, "power1_cap", &cur))
        log_msg(DEBUG, "Unable to retireive current power cap."); /* sic */
    if (!amd_hwmon_ll(g, "power1_cap_default", &def))
        log_msg(DEBUG, "Unable to retrieve default power cap; retrieving via reset.");
    if (!amd_hwmon_ll(g, "power1_cap_min", &lo) || !amd_hwmon_ll(g, "power1_cap_max", &hi)) {
        rsmi_failed(d, "get_power_cap_range", RSMI_NOT_SUPPORTED, false);
        print_err(d, "Unable to parse Power OverDrive range");
        R.retcode = 1;
        return -1;
    }
    bool above = w > hi / 1e6;
    if (above || w < lo / 1e6) {
        print_err(d, "Unable to set Power OverDrive");
        log_msg(ERROR, "GPU[%d]\t\t: Value cannot be %s than: %lldW ", d, above ? "greater" : "less",
                (long long)((above ? hi : lo) / 1e6));
        R.retcode = 1;
        return -1;
    }
    long long cap = w == 0 ? def : w * 1000000;
    if (cap == cur) {
        py_float(cap / 1e6, fw, sizeof fw);
        snprintf(msg, sizeof msg, "Max power was already at: %sW", fw);
        print_log(d, msg, NULL);
    }
    if (cur < def)
        cur = def;
    if (!*confirmed && cap > cur) {
        int rc = confirm(autorespond);
        if (rc >= 0)
            return rc;
        *confirmed = true;
    }
    int err = amd_hwmon_write(g, "power1_cap", cap);
    if (err) {
        rsmi_failed(d, "set_power_cap", rsmi_status(err), false);
        snprintf(msg, sizeof msg, "Unable to set Power OverDrive to %sW", value);
        print_err(d, w == 0 ? "Unable to reset Power OverDrive to default" : msg);
        return -1;
    }
    if (w == 0) {
        if (!amd_hwmon_ll(g, "power1_cap", &now)) {
            rsmi_failed(d, "get_power_cap", RSMI_NOT_SUPPORTED, false);
        } else if (!R.json) {
            snprintf(msg, sizeof msg, "Successfully reset Power OverDrive to: %lldW", (long long)(now / 1e6));
            print_log(d, msg, NULL);
        }
    } else if (!R.json) {
        if (!amd_hwmon_ll(g, "power1_cap", &now))
            now = cur;
        if (now == cap) {
            snprintf(msg, sizeof msg, "Successfully set power to: %sW", value);
            print_log(d, msg, NULL);
        } else {
            snprintf(msg, sizeof msg, "Unable set power to: %sW, current value is %lldW", value, (long long)(now / 1e6));
            print_err(d, msg);
        }
    }
    return -1;
}

/* setPowerOverDrive; value "0" is --resetpoweroverdrive. Returns -1, or an exit code. */
static int set_power_overdrive(const char *value, const char *autorespond)
{
    long long w;
    if (!py_int(value, &w)) {
        print_log(NO_DEV, "Unable to set Power OverDrive", NULL);
        log_msg(ERROR, "%s is not an integer", value);
        R.retcode = 1;
        return -1;
    }
    spacer(w == 0 ? " Reset GPU Power OverDrive " : " Set GPU Power OverDrive ");
    bool confirmed = false;
    for (int i = 0; i < R.ndev; i++) {
        int rc = set_power_one(R.dev[i], w, value, autorespond, &confirmed);
        if (rc >= 0)
            return rc;
    }
    spacer(NULL);
    return -1;
}

/* ---- The run ---- */

/* An option's value when the arguments gave it a non-empty one (Python's truth test). */
static const char *value_of(const char *flag)
{
    const struct py_opt *o = py_get(&args, flag);
    return o && o->nvals && *o->vals[0] ? o->vals[0] : NULL;
}

/* json.dumps(JSON_DATA) of the cards that have entries; false when none has. */
static bool print_json(void)
{
    int printed = 0;
    for (int i = 0; i < R.ndev; i++) {
        const struct json_card *c = &R.card[i];
        if (!c->n)
            continue;
        printf("%s\"card%d\": {", printed++ ? ", " : "{", R.dev[i]);
        for (int k = 0; k < c->n; k++) {
            fputs(k ? ", " : "", stdout);
            py_json_str(stdout, c->key[k]);
            fputs(": ", stdout);
            py_json_str(stdout, c->val[k]);
        }
        putchar('}');
    }
    if (printed)
        puts("}");
    return printed;
}

/* The sections rocm_smi.py's main runs, in its order; -1, or the exit code of a run the
 * confirmation ended. */
static int run_sections(bool legacy)
{
    const char *autorespond = value_of("--autorespond"), *v;
    if (py_get(&args, "--showtemp"))
        show_temp();
    if (py_get(&args, "--showclocks"))
        show_clocks();
    if (py_get(&args, "--showperflevel"))
        show_perf_level();
    if (py_get(&args, "--showmaxpower"))
        show_max_power();
    if (legacy && py_get(&args, "--showpowercap"))
        show_power_cap();
    if (py_get(&args, "--showpower"))
        show_power();
    if (py_get(&args, "--showuse"))
        show_use();
    if (py_get(&args, "--showproductname"))
        show_product();
    if ((v = value_of("--setperflevel")))
        set_perf_level(v);
    int rc = -1;
    if ((v = value_of("--setpoweroverdrive")))
        rc = set_power_overdrive(v, autorespond);
    if (rc < 0 && py_get(&args, "--resetpoweroverdrive"))
        rc = set_power_overdrive("0", autorespond);
    return rc;
}

int rocm_smi_main(int argc, char **argv)
{
    char variant[32] = "", spec[sizeof OPTIONS_HEAD + sizeof OPTIONS_TAIL + 16], extras[1024] = "";
    gv_read("state/tools/rocm-smi", variant, sizeof variant);
    bool legacy = !strcmp(variant, "legacy-agent-contract");
    if (!legacy && strcmp(variant, "current")) {
        fprintf(stderr, "fakesmi: rocm-smi variant \"%s\" is not emulated\n", variant);
        return 2;
    }
    snprintf(spec, sizeof spec, "%s%s%s", OPTIONS_HEAD, legacy ? "--showpowercap " : "", OPTIONS_TAIL);
    py_parser(&args, "rocm-smi", spec, MODELLED);
    if (py_parse(&args, argc - 1, argv + 1))
        return py_fail(&args, args.err);
    if (args.help)
        return py_help(&args);
    if (args.unmodelled) {
        char what[80];
        snprintf(what, sizeof what, "option %s", args.unmodelled);
        return not_emulated(what);
    }
    if (args.nextras) {
        char msg[1100];
        snprintf(msg, sizeof msg, "unrecognized arguments: %s", py_extras(&args, extras, sizeof extras));
        return py_fail(&args, msg);
    }

    R.json = py_get(&args, "--json");
    R.ngpu = amd_gpus(R.gpu);
    if (!R.ngpu) {
        /* initializeRsmi before logging is configured: Python's default format, exit(0) */
        fputs("ERROR:root:Driver not initialized (amdgpu not found in modules)\n", stderr);
        return 0;
    }
    const char *loglevel = value_of("--loglevel");
    R.level = loglevel ? log_level(loglevel) : WARNING;
    if (gv_unprivileged() && (value_of("--setperflevel") || value_of("--setpoweroverdrive") ||
                              py_get(&args, "--resetpoweroverdrive"))) {
        char noop[8] = "";
        gv_read("state/gpu/unprivileged_set_is_noop", noop, sizeof noop);
        return !strcmp(noop, "1") ? 0 : not_emulated("set command without root (its re-run through sudo)");
    }
    const struct py_opt *d = py_get(&args, "--device");
    for (int i = 0; d && i < d->nvals; i++) {
        long long v;
        py_int(d->vals[i], &v);
        if (v < 0 || v >= R.ngpu) {
            log_msg(WARNING, "No such device card%lld", v); /* then sys.exit(): 0 */
            return 0;
        }
        int k = 0;
        while (k < R.ndev && R.dev[k] != v)
            k++;
        if (k == R.ndev)
            R.dev[R.ndev++] = (int)v;
    }
    for (int i = 0; !d && i < R.ngpu; i++)
        R.dev[R.ndev++] = i;
    if (argc == 1 || (argc == 2 && R.json))
        return not_emulated("concise view (no option, or --json alone)");

    if (!R.json)
        fputs("\n\n", stdout); /* print('\n') */
    spacer(" ROCm System Management Interface ");
    int rc = run_sections(legacy);
    if (rc >= 0)
        return rc;
    if (R.retcode && !R.json)
        log_msg(DEBUG, " \t\t One or more commands failed.");
    if (!loglevel || log_level(loglevel) == WARNING)
        R.retcode = 0;
    if (R.json && !print_json()) {
        log_msg(WARNING, "No JSON data to report");
        return R.retcode & 0xff;
    }
    spacer(" End of ROCm SMI Log ");
    return R.retcode & 0xff;
}
