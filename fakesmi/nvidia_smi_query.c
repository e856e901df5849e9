/* nvidia_smi_query: the two reports of the nvidia-smi personality (tools §1.9, §1.10):
 * `nvidia-smi -q [-d TYPES]` in the 590.48.01 layout (4 spaces a level, labels padded so
 * that " : " starts at column 54), and the 91-column summary table nvidia-smi prints without
 * arguments. Values come from the GPUs' state/nvml files; what the node does not model prints
 * as the real tool prints an unavailable value (N/A), never as an invented number. It only
 * prints: it reads no file but the GPUs' and changes nothing. */
#include "nvidia_smi.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LABEL_COLUMN 54
#define DEPRECATED "Requested functionality has been deprecated"

static void head(int depth, const char *label)
{
    fprintf(nv_out, "%*s%s\n", 4 * depth, "", label);
}

__attribute__((format(printf, 3, 4))) static void kv(int depth, const char *label, const char *fmt, ...)
{
    va_list ap;
    fprintf(nv_out, "%*s%-*s : ", 4 * depth, "", LABEL_COLUMN - 4 * depth, label);
    va_start(ap, fmt);
    vfprintf(nv_out, fmt, ap);
    va_end(ap);
    fputc('\n', nv_out);
}

/* An integer file with its unit ("41 C"), or N/A when it holds a token. */
static const char *with_unit(int g, const char *file, const char *unit, char *buf, size_t cap)
{
    char t[64];
    long long v;
    if (!nv_num(nv_read(g, file, t, sizeof t), &v))
        return "N/A";
    snprintf(buf, cap, "%lld %s", v, unit);
    return buf;
}

/* A mW file as "69.85 W", or N/A. */
static const char *watts(int g, const char *file, char *buf, size_t cap)
{
    char t[64], w[32];
    long long v;
    if (!nv_num(nv_read(g, file, t, sizeof t), &v))
        return "N/A";
    snprintf(buf, cap, "%s W", nv_watts(v, w, sizeof w));
    return buf;
}

/* A text file as it is, N/A when empty. */
static const char *text(int g, const char *file, char *buf, size_t cap)
{
    return *nv_read(g, file, buf, cap) ? buf : "N/A";
}

/* The architecture as nvidia-smi names it: "hopper" -> "Hopper", "ada-lovelace" -> "Ada Lovelace". */
static const char *architecture(int g, char *buf, size_t cap)
{
    if (!*nv_read(g, "architecture", buf, cap))
        return "N/A";
    for (char *p = buf; *p; p++) {
        if (*p == '-')
            *p = ' ';
        if (p == buf || p[-1] == ' ')
            *p = (char)toupper((unsigned char)*p);
    }
    return buf;
}

static void identity(int g)
{
    char b[160];
    unsigned bus[4];
    int pm = nv_persistence(g);
    const char *mig = nv_mig_capable(g) ? "Disabled" : "N/A";
    kv(1, "Product Name", "%s", text(g, "name", b, sizeof b));
    kv(1, "Product Brand", "NVIDIA");
    kv(1, "Product Architecture", "%s", architecture(g, b, sizeof b));
    kv(1, "Persistence Mode", "%s", pm == 1 ? "Enabled" : pm == 0 ? "Disabled" : "N/A");
    head(1, "MIG Mode");
    kv(2, "Current", "%s", mig);
    kv(2, "Pending", "%s", mig);
    kv(1, "Serial Number", "%s", text(g, "serial", b, sizeof b));
    kv(1, "GPU UUID", "%s", text(g, "uuid", b, sizeof b));
    kv(1, "Minor Number", "%d", g);
    head(1, "GPU Virtualization Mode");
    kv(2, "Virtualization Mode", "None");
    head(1, "PCI");
    if (nv_bus_id(nv_read(g, "pci_bus_id", b, sizeof b), bus)) {
        kv(2, "Bus", "0x%02X", bus[1]);
        kv(2, "Device", "0x%02X", bus[2]);
        kv(2, "Domain", "0x%04X", bus[0]);
    }
    kv(2, "Device Id", "%s", text(g, "pci_device_id", b, sizeof b));
    kv(2, "Bus Id", "%s", text(g, "pci_bus_id", b, sizeof b));
    kv(1, "Fan Speed", "N/A");
}

static void performance(int g)
{
    static const struct {
        int depth;
        const char *label;
        unsigned bit;
    } reasons[] = {
        {2, "Idle", 0x1}, {2, "Applications Clocks Setting", 0x2}, {2, "SW Power Cap", 0x4},
        {2, "HW Slowdown", 0x8}, {3, "HW Thermal Slowdown", 0x40}, {3, "HW Power Brake Slowdown", 0x80},
        {2, "Sync Boost", 0x10}, {2, "SW Thermal Slowdown", 0x20}, {2, "Display Clock Setting", 0x100},
    };
    static const char *const counters[] = {"SW Power Capping", "Sync Boost", "SW Thermal Slowdown",
                                           "HW Thermal Slowdown", "HW Power Braking"};
    char b[64];
    unsigned long long bits;
    kv(1, "Performance State", "%s", text(g, "pstate", b, sizeof b));
    bool known = sscanf(nv_read(g, "clocks_event_reasons", b, sizeof b), "%llx", &bits) == 1;
    head(1, "Clocks Event Reasons");
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        kv(reasons[i].depth, reasons[i].label, "%s", !known ? "N/A" : bits & reasons[i].bit ? "Active" : "Not Active");
    head(1, "Clocks Event Reasons Counters");
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        kv(2, counters[i], "N/A");
    kv(1, "Sparse Operation Mode", "Disabled");
}

static void memory(int g)
{
    char t[64];
    long long total, used;
    bool known = nv_num(nv_read(g, "memory_total_mib", t, sizeof t), &total) &&
                 nv_num(nv_read(g, "memory_used_mib", t, sizeof t), &used);
    head(1, "FB Memory Usage");
    if (!known) {
        kv(2, "Total", "N/A");
        kv(2, "Reserved", "N/A");
        kv(2, "Used", "N/A");
        kv(2, "Free", "N/A");
        return;
    }
    kv(2, "Total", "%lld MiB", total);
    kv(2, "Reserved", "0 MiB");
    kv(2, "Used", "%lld MiB", used);
    kv(2, "Free", "%lld MiB", total - used);
}

static void utilization(int g)
{
    char b[64];
    head(1, "Utilization");
    kv(2, "GPU", "%s", with_unit(g, "utilization_gpu_pct", "%", b, sizeof b));
    kv(2, "Memory", "%s", with_unit(g, "utilization_memory_pct", "%", b, sizeof b));
    kv(2, "Encoder", "0 %%");
    kv(2, "Decoder", "0 %%");
    kv(2, "JPEG", "0 %%");
    kv(2, "OFA", "0 %%");
    head(1, "ECC Mode"); /* as the table's ECC cell: enabled, no errors */
    kv(2, "Current", "Enabled");
    kv(2, "Pending", "Enabled");
}

static void temperature(int g)
{
    char b[64];
    head(1, "Temperature");
    kv(2, "GPU Current Temp", "%s", with_unit(g, "temperature_gpu_c", "C", b, sizeof b));
    kv(2, "GPU T.Limit Temp", "N/A");
    kv(2, "GPU Shutdown T.Limit Temp", "N/A");
    kv(2, "GPU Slowdown T.Limit Temp", "N/A");
    kv(2, "GPU Max Operating T.Limit Temp", "N/A");
    kv(2, "GPU Target Temperature", "N/A");
    kv(2, "Memory Current Temp", "%s", with_unit(g, "temperature_memory_c", "C", b, sizeof b));
    kv(2, "Memory Max Operating T.Limit Temp", "N/A");
}

/* Current = the limit in force, Requested = the one set with -pl (tools §1.10.1). The
 * samples block is printed only for -d POWER, and the node keeps no samples. */
static void power(int g, bool samples)
{
    static const char *const sample_lines[] = {"Duration", "Number of Samples", "Max", "Min", "Avg"};
    static const char *const module_lines[] = {"Average Power Draw", "Instantaneous Power Draw",
                                               "Current Power Limit", "Requested Power Limit",
                                               "Default Power Limit", "Min Power Limit", "Max Power Limit"};
    char b[64];
    head(1, "GPU Power Readings");
    kv(2, "Average Power Draw", "%s", watts(g, "power_draw_mw", b, sizeof b));
    kv(2, "Instantaneous Power Draw", "%s", watts(g, "power_instant_mw", b, sizeof b));
    kv(2, "Current Power Limit", "%s", watts(g, "enforced_power_limit_mw", b, sizeof b));
    kv(2, "Requested Power Limit", "%s", watts(g, "power_limit_mw", b, sizeof b));
    kv(2, "Default Power Limit", "%s", watts(g, "power_default_limit_mw", b, sizeof b));
    kv(2, "Min Power Limit", "%s", watts(g, "power_min_limit_mw", b, sizeof b));
    kv(2, "Max Power Limit", "%s", watts(g, "power_max_limit_mw", b, sizeof b));
    if (samples) {
        head(1, "Power Samples");
        for (size_t i = 0; i < sizeof sample_lines / sizeof sample_lines[0]; i++)
            kv(2, sample_lines[i], "Not Found");
    }
    head(1, "GPU Memory Power Readings "); /* sic: the trailing space is the driver's */
    kv(2, "Average Power Draw", "N/A");
    kv(2, "Instantaneous Power Draw", "N/A");
    head(1, "Module Power Readings");
    for (size_t i = 0; i < sizeof module_lines / sizeof module_lines[0]; i++)
        kv(2, module_lines[i], "N/A");
}

static void clocks(int g)
{
    char b[64];
    head(1, "Clocks");
    kv(2, "Graphics", "%s", with_unit(g, "clocks_graphics_mhz", "MHz", b, sizeof b));
    kv(2, "SM", "%s", with_unit(g, "clocks_sm_mhz", "MHz", b, sizeof b));
    kv(2, "Memory", "%s", with_unit(g, "clocks_memory_mhz", "MHz", b, sizeof b));
    kv(2, "Video", "%s", with_unit(g, "clocks_video_mhz", "MHz", b, sizeof b));
    head(1, "Applications Clocks");
    kv(2, "Graphics", DEPRECATED);
    kv(2, "Memory", DEPRECATED);
    head(1, "Default Applications Clocks");
    kv(2, "Graphics", DEPRECATED);
    kv(2, "Memory", DEPRECATED);
    head(1, "Deferred Clocks");
    kv(2, "Memory", "N/A");
    head(1, "Max Clocks");
    kv(2, "Graphics", "%s", with_unit(g, "clocks_max_graphics_mhz", "MHz", b, sizeof b));
    kv(2, "SM", "%s", with_unit(g, "clocks_max_graphics_mhz", "MHz", b, sizeof b));
    kv(2, "Memory", "%s", with_unit(g, "clocks_max_memory_mhz", "MHz", b, sizeof b));
    kv(2, "Video", "%s", with_unit(g, "clocks_max_video_mhz", "MHz", b, sizeof b));
    head(1, "Max Customer Boost Clocks");
    kv(2, "Graphics", "%s", with_unit(g, "clocks_max_graphics_mhz", "MHz", b, sizeof b));
    head(1, "Clock Policy");
    kv(2, "Auto Boost", "N/A");
    kv(2, "Auto Boost Default", "N/A");
}

/* supported_clocks holds one line per memory clock, "<mem>:<g1> <g2> ...", highest first. */
static void supported_clocks(int g)
{
    static char table[64 * 1024];
    char *line, *save;
    if (!*nv_read(g, "supported_clocks", table, sizeof table)) {
        kv(1, "Supported Clocks", "N/A");
        return;
    }
    head(1, "Supported Clocks");
    for (line = strtok_r(table, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *graphics = strchr(line, ':'), *clock, *save2;
        if (!graphics)
            continue;
        *graphics++ = '\0';
        kv(2, "Memory", "%s MHz", line);
        for (clock = strtok_r(graphics, " ", &save2); clock; clock = strtok_r(NULL, " ", &save2))
            kv(3, "Graphics", "%s MHz", clock);
    }
}

/* asctime's form without its newline: "Tue Jul 14 08:12:38 2026". */
static const char *now_text(char *buf, size_t cap)
{
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, cap, "%a %b %e %H:%M:%S %Y", &tm);
    return buf;
}

int nv_query_report(const struct nv_sel *s, unsigned display)
{
    bool all = display & NV_D_ALL;
    char b[64];
    fputs("\n==============NVSMI LOG==============\n\n", nv_out);
    kv(0, "Timestamp", "%s", now_text(b, sizeof b));
    kv(0, "Driver Version", "%s", nv_read_path("state/nvml/driver_version", b, sizeof b));
    kv(0, "CUDA Version", "%s", nv_read_path("state/nvml/cuda_version", b, sizeof b));
    fputc('\n', nv_out);
    kv(0, "Attached GPUs", "%d", s->total);
    for (int k = 0; k < s->n; k++) {
        int g = s->gpu[k];
        fprintf(nv_out, "GPU %s\n", nv_read(g, "pci_bus_id", b, sizeof b));
        if (all)
            identity(g);
        if (all || display & NV_D_PERFORMANCE)
            performance(g);
        if (all || display & NV_D_MEMORY)
            memory(g);
        if (all || display & NV_D_COMPUTE)
            kv(1, "Compute Mode", "Default");
        if (all || display & NV_D_UTILIZATION)
            utilization(g);
        if (all || display & NV_D_TEMPERATURE)
            temperature(g);
        if (all || display & NV_D_POWER)
            power(g, !all);
        if (all || display & NV_D_CLOCK)
            clocks(g);
        if (display & NV_D_SUPPORTED_CLOCKS)
            supported_clocks(g);
        if (all || display & NV_D_PIDS)
            kv(1, "Processes", "None");
        fputc('\n', nv_out);
    }
    return 0;
}

/* ---- the summary table (every line 91 columns but the date) ---- */

#define RULE_FULL "+-----------------------------------------------------------------------------------------+\n"
#define RULE_CELLS "+-----------------------------------------+------------------------+----------------------+\n"

/* A number with its unit glued on ("41C", "69W"), or N/A. */
static const char *glued(long long v, bool known, const char *unit, char *buf, size_t cap)
{
    if (!known)
        return "N/A";
    snprintf(buf, cap, "%lld%s", v, unit);
    return buf;
}

static void table_gpu(int g)
{
    char name[160], shown[32], bus[32], pstate[16], t[64];
    char temp[24], use[24], cap[24], used[24], total[24], util[24];
    long long v = 0, mib_total = 0;
    bool known;
    int pm = nv_persistence(g);
    nv_read(g, "name", name, sizeof name);
    snprintf(shown, sizeof shown, strlen(name) > 27 ? "%.24s..." : "%s", name);
    fprintf(nv_out, "|%4d  %-31s%-3s |   %-16s Off |%21s |\n", g, shown, pm == 1 ? "On" : pm == 0 ? "Off" : "N/A",
            nv_read(g, "pci_bus_id", bus, sizeof bus), "0");

    known = nv_num(nv_read(g, "temperature_gpu_c", t, sizeof t), &v);
    glued(v, known, "C", temp, sizeof temp);
    known = nv_num(nv_read(g, "power_draw_mw", t, sizeof t), &v);
    glued(v / 1000, known, "W", use, sizeof use);
    known = nv_num(nv_read(g, "enforced_power_limit_mw", t, sizeof t), &v);
    glued(v / 1000, known, "W", cap, sizeof cap);
    known = nv_num(nv_read(g, "memory_used_mib", t, sizeof t), &v);
    glued(v, known, "MiB", used, sizeof used);
    known = nv_num(nv_read(g, "memory_total_mib", t, sizeof t), &mib_total);
    glued(mib_total, known, "MiB", total, sizeof total);
    known = nv_num(nv_read(g, "utilization_gpu_pct", t, sizeof t), &v);
    glued(v, known, "%", util, sizeof util);
    fprintf(nv_out, "| N/A%6s    %-2s%16s / %5s |%11s / %9s |%8s%13s |\n", temp,
            text(g, "pstate", pstate, sizeof pstate), use, cap, used, total, util, "Default");
    fprintf(nv_out, "|%41s|%24s|%21s |\n", "", "", nv_mig_capable(g) ? "Disabled" : "N/A");
    fputs(RULE_CELLS, nv_out);
}

int nv_summary_table(const struct nv_sel *s)
{
    char b[64], driver[32], cuda[32];
    fprintf(nv_out, "%s       \n", now_text(b, sizeof b));
    fputs(RULE_FULL, nv_out);
    fprintf(nv_out, "| NVIDIA-SMI %-23sDriver Version: %-15sCUDA Version: %-9s|\n",
            nv_read_path("state/nvml/driver_version", driver, sizeof driver), driver,
            nv_read_path("state/nvml/cuda_version", cuda, sizeof cuda));
    fputs(RULE_CELLS
          "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
          "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
          "|                                         |                        |               MIG M. |\n"
          "|=========================================+========================+======================|\n",
          nv_out);
    for (int k = 0; k < s->n; k++)
        table_gpu(s->gpu[k]);
    fputs("\n" RULE_FULL
          "| Processes:                                                                              |\n"
          "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |\n"
          "|        ID   ID                                                               Usage      |\n"
          "|=========================================================================================|\n"
          "|  No running processes found                                                             |\n" RULE_FULL,
          nv_out);
    return 0;
}
