/* exporters: per-node imitations of the energy exporters users already scrape, so that a
 * Prometheus scrape config (and the dashboards and alerts behind it) written for the real
 * exporter works with only the target changed.
 *
 *   GET /exporters                              JSON: the formats, which are enabled, the URLs
 *   GET /exporters/<format>/<node>/metrics      the node's exposition in that exporter's format
 *   GET /exporters/<format>/metrics?node=<node> the same, for a scrape config using `params`
 *
 * Formats (SIM_EXPORTERS selects which answer; names, units, labels and types as
 * Kepler's and the GPU exporters' sources pin them: docs/sources.md):
 *   kepler-0.7   kepler_node_{core,dram,package}_joules_total (counters, J) for the zones the
 *                node has, with labels instance (the node), mode (dynamic|idle), package (socket
 *                index) and source="rapl-sysfs"; NVIDIA GPUs: kepler_node_gpu_joules_total with
 *                package = the GPU's index and source="NVML"; kepler_exporter_build_info.
 *   kepler-0.12  kepler_node_cpu_{,active_,idle_}joules_total (counters, J) and
 *                kepler_node_cpu_{,active_,idle_}watts (gauges, W) with node_name, zone
 *                (package|core|dram|psys) and path (aggregated-<zone> when several zones share
 *                the name, as Kepler aggregates them; else the zone's class link);
 *                kepler_node_cpu_usage_ratio; NVIDIA GPUs: kepler_node_gpu_{,active_,idle_}
 *                {joules_total,watts} and kepler_node_gpu_info with gpu, gpu_name, gpu_uuid,
 *                node_name, vendor; kepler_build_info.
 *   dcgm-exporter        nodes with NVIDIA GPUs: the default counters (default-counters.csv)
 *                the emulator computes, DCGM_FI_DEV_{SM_CLOCK,MEM_CLOCK,MEMORY_TEMP,GPU_TEMP,
 *                POWER_USAGE (W),TOTAL_ENERGY_CONSUMPTION (counter, mJ),GPU_UTIL,MEM_COPY_UTIL,
 *                FB_FREE,FB_USED}, labels gpu, UUID, pci_bus_id, device, modelName, Hostname,
 *                DCGM_FI_DRIVER_VERSION in that order; INT64 fields as integers, DOUBLE ones
 *                with Go's %f (6 decimals).
 *   rocm-device-metrics  nodes with AMD GPUs: gpu_package_power (MI3xx; other products
 *                gpu_average_package_power), gpu_power_usage (W), gpu_energy_consumed (uJ, a
 *                gauge as in the real exporter), gpu_junction_temperature (MI3xx; others
 *                gpu_edge_temperature), gpu_memory_temperature (C), gpu_gfx_activity (%),
 *                gpu_clock{clock_type="system"} (MHz), gpu_nodes_total; the exporter's
 *                always-present labels, lower-cased and sorted.
 *
 * Invariants. Power, energy, clocks, utilization and the GPU (edge) temperature come from the
 * telemetry snapshot the tick published (the caller holds rcu_read_lock) and from the node's
 * profile parameters, which never change after start: a scrape never steps a node, takes no
 * lock the tick loop takes, and costs the tick nothing. The counters are the very uJ counters
 * /telemetry, /metrics and OTLP print, so every format agrees with the others at the same
 * snapshot. What the snapshot does not carry (a GPU's UUID, bus id, name, memory, memory and
 * hotspot temperatures) is read from the node's own GPU files (engine/segment/gpu_files.h) as the
 * vendor's tools read them: the identity is fixed, the gauges are those of the latest tick.
 * A GPU exporter on a node without that vendor's GPUs is a 404 saying so.
 *
 * The idle/dynamic (0.7) and idle/active (0.12) splits are not Kepler's estimates: a zone's
 * counter is split by a fixed idle share, the profile's idle package power over its full-load
 * power (physics.cpu.idlePkgW / maxPkgW, or the power curve's lowest over its highest point;
 * a GPU's physics.gpu.idleW / naturalMaxW). The same share splits the power gauges. Fixed per
 * node, so both halves are monotonic and add up to the counter exactly.
 *
 * What Kepler reads is what the node has: the powercap zones that count energy (node_telemetry's
 * pkg_zones and has_psys), and NVIDIA GPUs (Kepler's only GPU meter is NVML). Left out on
 * purpose: uncore (not modelled), Kepler 0.7's platform (an ACPI or Redfish meter, which the
 * emulator has not) and other series, container/process/pod levels (no workloads),
 * kepler_node_info (a counter without _total, which promtool flags) and kepler_node_cpu_info
 * (per logical CPU); the DCGM and ROCm fields the emulator does not model (PCIe, NVLink, XID,
 * ECC, encoder/decoder, profiling ratios, VRAM of the ROCm exporter). A node without an energy
 * zone (a VM) serves only Kepler's build info, as a real exporter would find no meter. Node
 * names are DNS labels (checked by the spec), so they need no escaping; texts from profiles are
 * escaped. */
#include "exporters.h"

#include "engine.h"
#include "gpu_files.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[EXP_COUNT] = {"kepler-0.7", "kepler-0.12", "dcgm-exporter", "rocm-device-metrics"};
/* the GPU vendor (node_telemetry.gpu_vendor) a format needs, NULL: any node */
static const char *const needs[EXP_COUNT] = {NULL, NULL, "nvidia", "amd"};

#define PROM_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* A node_telemetry.gpu_vendor as the vendor writes its name. */
static const char *vendor_name(const char *v)
{
    return !strcmp(v, "nvidia") ? "NVIDIA" : !strcmp(v, "amd") ? "AMD" : !strcmp(v, "intel") ? "Intel" : v;
}

/* "kepler-0.7<sep>kepler-0.12<sep>..." into out */
static char *known(char *out, size_t len, const char *sep)
{
    size_t n = 0;
    for (int i = 0; i < EXP_COUNT && n < len; i++)
        n += (size_t)snprintf(out + n, len - n, "%s%s", i ? sep : "", names[i]);
    return out;
}

int exporters_parse(const char *list, unsigned *mask, char *err, size_t errlen)
{
    *mask = 0;
    if (!list)
        return 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        const char *s = p;
        size_t len = n;
        while (len && (*s == ' ' || *s == '\t'))
            s++, len--;
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
            len--;
        int found = len == 0 || (len == 4 && !strncmp(s, "none", 4)) ? EXP_COUNT : -1;
        for (int i = 0; i < EXP_COUNT && found < 0; i++)
            if (strlen(names[i]) == len && !strncmp(s, names[i], len))
                found = i;
        if (found < 0) {
            char all[128];
            snprintf(err, errlen, "unknown exporter \"%.*s\" (known: %s)", (int)len, s, known(all, sizeof all, ", "));
            return -1;
        }
        if (found < EXP_COUNT)
            *mask |= 1u << found;
        p += n + (p[n] == ',');
    }
    return 0;
}

static char *json_body(unsigned *code, unsigned status, const char *msg, const char *exporter, const char *node,
                       size_t *len)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", msg);
    if (exporter)
        cJSON_AddStringToObject(o, "exporter", exporter);
    if (node)
        cJSON_AddStringToObject(o, "node", node);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    *code = status;
    *len = s ? strlen(s) : 0;
    return s;
}

/* The idle share of a node's package power (see the header comment), in [0, 1]. */
static double idle_share(const struct phys_cpu_params *p)
{
    double s = 0;
    if (p->model == PHYS_MODEL_CURVE && p->curve_n > 1 && p->curve_node_w[p->curve_n - 1] > 0)
        s = p->curve_node_w[0] / p->curve_node_w[p->curve_n - 1];
    else if (p->max_pkg_w > 0)
        s = p->idle_pkg_w / p->max_pkg_w;
    return s < 0 ? 0 : s > 1 ? 1 : s;
}

#define LABELS_MAX 512
_Static_assert(GPU_MAX >= PHYS_GPU_MAX, "a node's GPUs fit the label arrays");

/* The text of one of the node's files now, its newline dropped ("" when there is no such file). */
static void node_file(struct node *nd, char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void node_file(struct node *nd, char *out, size_t cap, const char *fmt, ...)
{
    char path[256], tmp[SEG_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    uint32_t e = seg_lookup(&nd->seg, path, strlen(path));
    size_t len = 0;
    const char *t = e == SEG_NONE ? "" : seg_read(&nd->seg, e, seg_now_ns(), tmp, &len);
    if (!t)
        t = ""; /* the node's segment lost pages: the engine is repairing it */
    while (len && t[len - 1] == '\n')
        len--;
    snprintf(out, cap, "%.*s", (int)len, t);
}

/* A file's text as a number; NAN when it is none ("[N/A]", no such file). */
static double num(const char *text)
{
    char *end;
    double v = strtod(text, &end);
    return *text && !*end ? v : NAN;
}

/* A label value as the text format wants it: backslash, quote and newline escaped. */
static char *esc(char *out, size_t cap, const char *in)
{
    size_t n = 0;
    for (; *in && n + 2 < cap; in++) {
        if (*in == '\\' || *in == '"' || *in == '\n')
            out[n++] = '\\';
        out[n++] = *in == '\n' ? 'n' : *in;
    }
    out[n] = 0;
    return out;
}

/* One family: HELP, TYPE, then one sample per labels[k]; a NAN value has none (both GPU
 * exporters skip a blank reading). prec: digits after the point, or -1 for a double's short form. */
static void family(FILE *f, const char *name, const char *type, const char *help, int n,
                   char labels[][LABELS_MAX], const double *v, int prec)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    for (int k = 0; k < n; k++) {
        if (isnan(v[k]))
            continue;
        if (prec < 0)
            fprintf(f, "%s{%s} %.15g\n", name, labels[k], v[k]);
        else
            fprintf(f, "%s{%s} %.*f\n", name, labels[k], prec, v[k]);
    }
}

#define ZONE(z) (1u << (z))

/* The GPU idle share: the profile's idle power over its natural maximum, in [0, 1]. */
static double gpu_idle_share(const struct phys_gpu_params *g)
{
    double s = g->natural_max_w > 0 ? g->idle_w / g->natural_max_w : 0;
    return s < 0 ? 0 : s > 1 ? 1 : s;
}

/* A package's zone counter (J) and power (W). */
static double zone_joules(const struct node_telemetry *n, int zone, int k)
{
    uint64_t uj = zone == PHYS_ZONE_DRAM ? n->dram_energy_uj[k] : zone == PHYS_ZONE_CORE ? n->core_energy_uj[k]
                                                                                         : n->pkg_energy_uj[k];
    return (double)uj / 1e6;
}

static double zone_watts(const struct node_telemetry *n, int zone, int k)
{
    return zone == PHYS_ZONE_DRAM ? n->pkg_dram_power_w[k] : zone == PHYS_ZONE_CORE ? n->core_power_w[k]
                                                                                    : n->pkg_power_w[k];
}

/* Kepler reads NVIDIA GPUs only (NVML). */
static bool kepler_gpus(const struct node_telemetry *n)
{
    return n->ngpus && !strcmp(n->gpu_vendor, "nvidia");
}

/* A counter or gauge split as Kepler splits it: state 't' total, 'a' active, 'i' idle (the share). */
static double split(double total, double share, char state)
{
    double idle = total * share;
    return state == 't' ? total : state == 'a' ? total - idle : idle;
}

/* Kepler 0.7: one family per component, a dynamic and an idle sample per device (label
 * package: the socket, or the GPU's index), the idle one the counter times the share. */
static void kepler07_family(FILE *f, const struct node_telemetry *n, const char *comp, const char *source, int ndev,
                            const int *dev, const double *joules, double share)
{
    char labels[2 * GPU_MAX][LABELS_MAX];
    double v[2 * GPU_MAX];
    char name[64], help[128];
    for (int d = 0; d < ndev; d++)
        for (int m = 0; m < 2; m++) {
            snprintf(labels[2 * d + m], LABELS_MAX, "instance=\"%s\",mode=\"%s\",package=\"%d\",source=\"%s\"", n->name,
                     m ? "idle" : "dynamic", dev[d], source);
            v[2 * d + m] = split(joules[d], share, m ? 'i' : 'a');
        }
    snprintf(name, sizeof name, "kepler_node_%s_joules_total", comp);
    snprintf(help, sizeof help, "Aggregated value in %s value from %s", comp, source);
    if (ndev)
        family(f, name, "counter", help, 2 * ndev, labels, v, 6);
}

/* Kepler 0.7: the build info, then the components the node has, in name order. */
static void kepler07(FILE *f, const struct node_telemetry *n, double share, double gshare)
{
    static const struct { const char *comp; int zone; } comps[] = {
        {"core", PHYS_ZONE_CORE}, {"dram", PHYS_ZONE_DRAM}, {"gpu", -1}, {"package", PHYS_ZONE_PACKAGE}};
    fputs("# HELP kepler_exporter_build_info A metric with a constant '1' value labeled by version, revision, "
          "branch, os and arch from which kepler_exporter was built.\n"
          "# TYPE kepler_exporter_build_info gauge\n"
          "kepler_exporter_build_info{arch=\"amd64\",branch=\"hwemu\",os=\"linux\",revision=\"hwemu\","
          "version=\"v0.7.12\"} 1\n", f);
    for (size_t c = 0; c < sizeof comps / sizeof comps[0]; c++) {
        int dev[GPU_MAX], ndev = 0;
        double j[GPU_MAX];
        if (comps[c].zone < 0) {
            for (int k = 0; kepler_gpus(n) && k < n->ngpus; k++, ndev++)
                dev[ndev] = k, j[ndev] = (double)n->gpu_energy_uj[k] / 1e6;
            kepler07_family(f, n, comps[c].comp, "NVML", ndev, dev, j, gshare);
            continue;
        }
        for (int k = 0; k < n->npkgs; k++)
            if (n->pkg_zones[k] & ZONE(comps[c].zone))
                dev[ndev] = k, j[ndev++] = zone_joules(n, comps[c].zone, k);
        kepler07_family(f, n, comps[c].comp, "rapl-sysfs", ndev, dev, j, share);
    }
}

/* The path Kepler 0.12 reports for a zone that is the only one of its name: the class link of
 * the directory holding its energy_uj. */
static void zone_path(struct node *nd, int zone, int pkg, char *out, size_t cap)
{
    const struct seg *s = &nd->seg;
    for (uint32_t i = 0; i < s->n_entries; i++) {
        const struct seg_entry *en = &s->entries[i];
        const struct binding *b = en->cls == SEG_S && en->value < nd->nvalues ? &nd->binds[en->value] : NULL;
        if (b && b->kind == BK_ENERGY && b->zone == zone && b->pkg == pkg) {
            const char *dir = seg_path(s, en->parent), *base = strrchr(dir, '/');
            snprintf(out, cap, "/sys/class/powercap/%s", base ? base + 1 : dir);
            return;
        }
    }
    snprintf(out, cap, "/sys/class/powercap");
}

/* Kepler 0.12: per zone name (same-named zones aggregated, as Kepler does on a multi-socket
 * node) the counter and power, total, active and idle; the usage ratio; then the NVIDIA GPUs'. */
static void kepler012(FILE *f, struct node *nd, const struct node_telemetry *n, double share, double gshare)
{
    static const struct { const char *zone; int id; } zones[] = {
        {"package", PHYS_ZONE_PACKAGE}, {"core", PHYS_ZONE_CORE}, {"dram", PHYS_ZONE_DRAM}, {"psys", PHYS_ZONE_PSYS}};
    static const struct { char state; bool watts; } fams[] = {{'t', false}, {'a', false}, {'i', false},
                                                              {'t', true},  {'a', true},  {'i', true}};
    static const char *const state_name[] = {['t'] = "", ['a'] = "active_", ['i'] = "idle_"};
    static const char *const state_help[] = {['t'] = "", ['a'] = " in active state", ['i'] = " in idle state"};
    char labels[GPU_MAX][LABELS_MAX], path[128], name[96], help[160];
    double j[GPU_MAX], w[GPU_MAX], v[GPU_MAX];
    int nz = 0;
    for (size_t z = 0; z < sizeof zones / sizeof zones[0]; z++) {
        int id = zones[z].id, count = 0, last = 0;
        j[nz] = w[nz] = 0;
        if (id == PHYS_ZONE_PSYS && n->has_psys) {
            count = 1;
            j[nz] = (double)n->platform_energy_uj / 1e6;
            w[nz] = n->platform_power_w;
        }
        for (int k = 0; id != PHYS_ZONE_PSYS && k < n->npkgs; k++)
            if (n->pkg_zones[k] & ZONE(id)) {
                count++, last = k;
                j[nz] += zone_joules(n, id, k);
                w[nz] += zone_watts(n, id, k);
            }
        if (!count)
            continue;
        if (count > 1)
            snprintf(path, sizeof path, "aggregated-%s", zones[z].zone);
        else
            zone_path(nd, id, last, path, sizeof path);
        snprintf(labels[nz++], LABELS_MAX, "node_name=\"%s\",path=\"%s\",zone=\"%s\"", n->name, path, zones[z].zone);
    }
    for (size_t x = 0; nz && x < sizeof fams / sizeof fams[0]; x++) {
        char st = fams[x].state;
        for (int z = 0; z < nz; z++)
            v[z] = split(fams[x].watts ? w[z] : j[z], share, st);
        snprintf(name, sizeof name, "kepler_node_cpu_%s%s", state_name[(int)st], fams[x].watts ? "watts" : "joules_total");
        snprintf(help, sizeof help, "%s consumption of cpu%s at node level in %s", fams[x].watts ? "Power" : "Energy",
                 state_help[(int)st], fams[x].watts ? "watts" : "joules");
        family(f, name, fams[x].watts ? "gauge" : "counter", help, nz, labels, v, 6);
    }
    if (nz) {
        snprintf(labels[0], LABELS_MAX, "node_name=\"%s\"", n->name);
        family(f, "kepler_node_cpu_usage_ratio", "gauge", "CPU usage ratio of a node (value between 0.0 and 1.0)", 1,
               labels, &n->cpu_util, 6);
    }
    fputs("# HELP kepler_build_info A metric with a constant '1' value labeled with version information\n"
          "# TYPE kepler_build_info gauge\n"
          "kepler_build_info{arch=\"amd64\",branch=\"hwemu\",goversion=\"none\",revision=\"hwemu\","
          "version=\"v0.12.0\"} 1\n", f);
    if (!kepler_gpus(n))
        return;
    /* the GPUs: labels gpu, gpu_name, gpu_uuid (NVML's), node_name, vendor; power is NVML's */
    static const struct { char state; bool watts; const char *help; } gfams[] = {
        {'t', false, "Energy consumption of gpu at node level in joules"},
        {'a', false, "Energy consumption of gpu in active state at node level in joules"},
        {'i', false, "Energy consumption of gpu in idle state at node level in joules"},
        {'t', true, "Total GPU power consumption in watts"},
        {'a', true, "GPU active power (total - idle) in watts"},
        {'i', true, "GPU idle power (auto-detected minimum) in watts"},
    };
    char uuid[128], gname[192], e[2][192];
    for (int k = 0; k < n->ngpus; k++) {
        node_file(nd, uuid, sizeof uuid, "state/nvml/gpu%d/uuid", k);
        node_file(nd, gname, sizeof gname, "state/nvml/gpu%d/name", k);
        snprintf(labels[k], LABELS_MAX, "gpu=\"%d\",gpu_name=\"%s\",gpu_uuid=\"%s\",node_name=\"%s\",vendor=\"nvidia\"",
                 k, esc(e[0], sizeof e[0], gname), esc(e[1], sizeof e[1], uuid), n->name);
        j[k] = (double)n->gpu_energy_uj[k] / 1e6;
        w[k] = n->gpu_draw_w[k];
    }
    for (size_t x = 0; x < sizeof gfams / sizeof gfams[0]; x++) {
        char st = gfams[x].state;
        for (int k = 0; k < n->ngpus; k++)
            v[k] = split(gfams[x].watts ? w[k] : j[k], gshare, st);
        snprintf(name, sizeof name, "kepler_node_gpu_%s%s", state_name[(int)st], gfams[x].watts ? "watts" : "joules_total");
        family(f, name, gfams[x].watts ? "gauge" : "counter", gfams[x].help, n->ngpus, labels, v, 6);
    }
    for (int k = 0; k < n->ngpus; k++)
        v[k] = 1;
    family(f, "kepler_node_gpu_info", "gauge", "GPU device information for mapping index to UUID/name", n->ngpus, labels,
           v, 0);
}

/* The utilization the tools show, whole percent. */
static double util_pct(const struct node_telemetry *n)
{
    return round(100 * fmin(fmax(n->gpu_util, 0), 1));
}

enum dcgm_field { D_SM_CLOCK, D_MEM_CLOCK, D_MEMORY_TEMP, D_GPU_TEMP, D_POWER, D_ENERGY, D_GPU_UTIL, D_MEM_UTIL,
                  D_FB_FREE, D_FB_USED, D_COUNT };

/* dcgm-exporter: the default counters in default-counters.csv order. */
static void dcgm(FILE *f, struct node *nd, const struct node_telemetry *n)
{
    static const struct { const char *name, *type, *help; } fields[D_COUNT] = {
        {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."},
        {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."},
        {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."},
        {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."},
        {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."},
        {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."},
        {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."},
        {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."},
        {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."},
        {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."},
    };
    char labels[GPU_MAX][LABELS_MAX], driver[64], text[3][128], e[3][192];
    double v[D_COUNT][GPU_MAX];
    node_file(nd, driver, sizeof driver, "state/nvml/driver_version");
    for (int k = 0; k < n->ngpus; k++) {
        node_file(nd, text[0], sizeof text[0], "state/nvml/gpu%d/uuid", k);
        node_file(nd, text[1], sizeof text[1], "state/nvml/gpu%d/pci_bus_id", k);
        node_file(nd, text[2], sizeof text[2], "state/nvml/gpu%d/name", k);
        snprintf(labels[k], LABELS_MAX, "gpu=\"%d\",UUID=\"%s\",pci_bus_id=\"%s\",device=\"nvidia%d\","
                 "modelName=\"%s\",Hostname=\"%s\",DCGM_FI_DRIVER_VERSION=\"%s\"", k, esc(e[0], sizeof e[0], text[0]),
                 esc(e[1], sizeof e[1], text[1]), k, esc(e[2], sizeof e[2], text[2]), n->name, driver);
        node_file(nd, text[0], sizeof text[0], "state/nvml/gpu%d/temperature_memory_c", k);
        v[D_MEMORY_TEMP][k] = num(text[0]);
        node_file(nd, text[0], sizeof text[0], "state/nvml/gpu%d/utilization_memory_pct", k);
        v[D_MEM_UTIL][k] = num(text[0]);
        node_file(nd, text[0], sizeof text[0], "state/nvml/gpu%d/memory_used_mib", k);
        node_file(nd, text[1], sizeof text[1], "state/nvml/gpu%d/memory_total_mib", k);
        v[D_FB_USED][k] = num(text[0]);
        v[D_FB_FREE][k] = num(text[1]) - v[D_FB_USED][k];
        v[D_SM_CLOCK][k] = n->gpu_clock_mhz[k];
        v[D_MEM_CLOCK][k] = n->gpu_mem_clock_mhz[k];
        v[D_GPU_TEMP][k] = round(n->gpu_temp_c[k]);
        v[D_POWER][k] = n->gpu_draw_w[k];
        v[D_ENERGY][k] = (double)(n->gpu_energy_uj[k] / 1000);
        v[D_GPU_UTIL][k] = util_pct(n);
    }
    for (int d = 0; d < D_COUNT; d++)
        family(f, fields[d].name, fields[d].type, fields[d].help, n->ngpus, labels, v[d], d == D_POWER ? 6 : 0);
}

/* The hwmon directory of the AMD GPU on PCI bus `bus` into out ("" when it has none). */
static void amd_hwmon(struct node *nd, int bus, char *out, size_t cap)
{
    char dir[96];
    int dl = snprintf(dir, sizeof dir, "sys/devices/pci0000:%02x/0000:%02x:00.0/hwmon", bus, bus);
    uint32_t e = seg_lookup(&nd->seg, dir, (size_t)dl);
    /* entries are sorted by path: a directory's first child is the next entry */
    const char *child = e != SEG_NONE && e + 1 < nd->seg.n_entries ? seg_path(&nd->seg, e + 1) : "";
    snprintf(out, cap, "%s", !strncmp(child, dir, (size_t)dl) && child[dl] == '/' ? child : "");
}

/* The ROCm exporter's always-present labels, lower-cased and sorted; extra goes after card_model. */
#define ROCM_LABELS "card_model=\"%s\",%scontainer=\"\",gpu_compute_partition_type=\"%s\",gpu_id=\"%s\"," \
                    "gpu_memory_partition_type=\"%s\",gpu_partition_id=\"%s\",hostname=\"%s\",job_id=\"\"," \
                    "job_partition=\"\",job_user=\"\",namespace=\"\",pod=\"\",serial_number=\"\""

enum rocm_field { R_POWER, R_POWER_USAGE, R_ENERGY, R_TEMP, R_MEM_TEMP, R_GFX, R_CLOCK, R_COUNT };

/* ROCm device-metrics-exporter: an Instinct MI3xx gets the MI3xx fields; any other product
 * (MI2xx, Radeon) the MI2xx ones. */
static void rocm(FILE *f, struct node *nd, const struct node_telemetry *n)
{
    bool mi3 = strstr(n->gpu_product, "MI3") != NULL;
    const struct { const char *name, *help; } fields[R_COUNT] = {
        {mi3 ? "gpu_package_power" : "gpu_average_package_power",
         mi3 ? "Current socket power in Watts" : "Average socket power in Watts"},
        {"gpu_power_usage", "GPU Power usage in Watts"},
        {"gpu_energy_consumed", "Accumulated energy consumed by the GPU in uJ"},
        {mi3 ? "gpu_junction_temperature" : "gpu_edge_temperature",
         mi3 ? "Current junction/hotspot temperature in Celsius" : "Current edge temperature in Celsius"},
        {"gpu_memory_temperature", "Current memory temperature in Celsius"},
        {"gpu_gfx_activity", "Graphics engine usage in Percentage (0-100)"},
        {"gpu_clock", "List of current GPU clock frequencies in MHz"},
    };
    const char *compute = mi3 ? "spx" : "none", *memory = mi3 ? "nps1" : "none";
    char labels[GPU_MAX][LABELS_MAX], clock[GPU_MAX][LABELS_MAX], model[192], id[16], hw[128], text[64];
    double v[R_COUNT][GPU_MAX];
    esc(model, sizeof model, n->gpu_product);
    for (int k = 0; k < n->ngpus; k++) {
        snprintf(id, sizeof id, "%d", k);
        snprintf(labels[k], LABELS_MAX, ROCM_LABELS, model, "", compute, id, memory, "0", n->name);
        snprintf(clock[k], LABELS_MAX, ROCM_LABELS, model, "clock_index=\"0\",clock_type=\"system\",", compute, id,
                 memory, "0", n->name);
        /* the socket power: current on MI3xx, else amdgpu's average */
        v[R_POWER][k] = v[R_POWER_USAGE][k] = mi3 ? n->gpu_power_w[k] : n->gpu_draw_w[k];
        v[R_ENERGY][k] = (double)n->gpu_energy_uj[k];
        /* temperatures in whole degrees, as amdsmi gives them: junction (MI3xx) or edge, memory */
        amd_hwmon(nd, GPU_PCI_BUS_BASE + k, hw, sizeof hw);
        node_file(nd, text, sizeof text, "%s/temp%d_input", hw, mi3 ? 2 : 1);
        v[R_TEMP][k] = floor(num(text) / 1000);
        node_file(nd, text, sizeof text, "%s/temp3_input", hw);
        v[R_MEM_TEMP][k] = floor(num(text) / 1000);
        v[R_GFX][k] = util_pct(n);
        v[R_CLOCK][k] = n->gpu_clock_mhz[k];
    }
    for (int r = 0; r < R_COUNT; r++)
        family(f, fields[r].name, "gauge", fields[r].help, n->ngpus, r == R_CLOCK ? clock : labels, v[r],
               r <= R_POWER_USAGE ? -1 : 0);
    /* the node-wide series: the same labels, the GPU's empty */
    double count = n->ngpus;
    snprintf(labels[0], LABELS_MAX, ROCM_LABELS, "", "", "", "", "", "", n->name);
    family(f, "gpu_nodes_total", "gauge", "Number of GPUs in the node", 1, labels, &count, 0);
}

static char *index_json(unsigned enabled, size_t *len)
{
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "exporters");
    for (int i = 0; i < EXP_COUNT; i++) {
        cJSON *x = cJSON_CreateObject();
        char url[96];
        snprintf(url, sizeof url, "/exporters/%s/<node>/metrics", names[i]);
        cJSON_AddStringToObject(x, "name", names[i]);
        cJSON_AddBoolToObject(x, "enabled", (enabled >> i) & 1);
        cJSON_AddStringToObject(x, "url", url);
        cJSON_AddItemToArray(arr, x);
    }
    char list[128], how[192];
    snprintf(how, sizeof how, "SIM_EXPORTERS=%s (or --exporters) on hwemu serve", known(list, sizeof list, ","));
    cJSON_AddStringToObject(o, "enable", how);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    *len = s ? strlen(s) : 0;
    return s;
}

unsigned exporters_http(const struct engine *e, const struct telemetry *t, const char *path, const char *node_arg,
                        char **body, size_t *len, const char **type)
{
    unsigned code = 200;
    *type = "application/json";
    if (!*path || !strcmp(path, "/")) {
        *body = index_json(e->cfg.exporters, len);
        return 200;
    }
    /* path: /<format>/<node>/metrics or /<format>/metrics */
    const char *fmt = path + 1, *slash = strchr(fmt, '/');
    size_t flen = slash ? (size_t)(slash - fmt) : strlen(fmt);
    int x = -1;
    for (int i = 0; i < EXP_COUNT; i++)
        if (strlen(names[i]) == flen && !strncmp(fmt, names[i], flen))
            x = i;
    char msg[256];
    if (x < 0) {
        char fname[64], list[128];
        snprintf(fname, sizeof fname, "%.*s", (int)(flen < 63 ? flen : 63), fmt);
        snprintf(msg, sizeof msg, "no such exporter (known: %s; see GET /exporters)", known(list, sizeof list, ", "));
        *body = json_body(&code, 404, msg, fname, NULL, len);
        return code;
    }
    if (!((e->cfg.exporters >> x) & 1)) {
        snprintf(msg, sizeof msg, "exporter %s is not enabled: start hwemu serve with SIM_EXPORTERS=%s (a comma "
                 "list, or --exporters %s)", names[x], names[x], names[x]);
        *body = json_body(&code, 404, msg, names[x], NULL, len);
        return code;
    }
    char node[256];
    const char *rest = slash ? slash : "";
    if (!strcmp(rest, "/metrics") && node_arg) {
        snprintf(node, sizeof node, "%s", node_arg);
    } else {
        const char *nb = rest + (*rest == '/'), *ne = strchr(nb, '/');
        if (!*nb || !ne || strcmp(ne, "/metrics") || (size_t)(ne - nb) >= sizeof node) {
            snprintf(msg, sizeof msg, "no such route: use /exporters/%s/<node>/metrics or /exporters/%s/metrics"
                     "?node=<node>", names[x], names[x]);
            *body = json_body(&code, 404, msg, names[x], NULL, len);
            return code;
        }
        snprintf(node, sizeof node, "%.*s", (int)(ne - nb), nb);
    }
    int i = 0;
    while (t && i < t->n && strcmp(t->nodes[i].name, node))
        i++;
    if (!t || i == t->n) {
        *body = json_body(&code, 404, "no such node in the cluster spec (see /debug/nodes)", names[x], node, len);
        return code;
    }
    const struct node_telemetry *n = &t->nodes[i];
    if (needs[x] && strcmp(n->gpu_vendor, needs[x])) {
        const char *use = NULL; /* the format for this node's GPUs */
        for (int j = 0; j < EXP_COUNT; j++)
            if (needs[j] && !strcmp(n->gpu_vendor, needs[j]))
                use = names[j];
        snprintf(msg, sizeof msg, "%s imitates the exporter of %s GPUs; node %s has %s%s%s%s", names[x],
                 vendor_name(needs[x]), node, n->ngpus ? vendor_name(n->gpu_vendor) : "no GPUs",
                 n->ngpus ? " GPUs" : "", use ? ": use " : "", use ? use : "");
        *body = json_body(&code, 404, msg, names[x], node, len);
        return code;
    }
    char *out = NULL;
    size_t olen = 0;
    FILE *f = open_memstream(&out, &olen);
    if (!f) {
        *body = NULL;
        return 500;
    }
    double share = idle_share(&e->nodes[i].params), gshare = gpu_idle_share(&e->nodes[i].gparams);
    if (x == EXP_KEPLER_07)
        kepler07(f, n, share, gshare);
    else if (x == EXP_KEPLER_012)
        kepler012(f, &e->nodes[i], n, share, gshare);
    else if (x == EXP_DCGM)
        dcgm(f, &e->nodes[i], n);
    else
        rocm(f, &e->nodes[i], n);
    if (fclose(f)) {
        free(out);
        *body = NULL;
        return 500;
    }
    *type = PROM_TYPE;
    *body = out;
    *len = olen;
    return 200;
}
