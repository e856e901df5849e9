/* exporters: per-node imitations of the energy exporters users already scrape, so that a
 * Prometheus scrape config (and the dashboards and alerts behind it) written for the real
 * exporter works with only the target changed.
 *
 *   GET /exporters                              JSON: the formats, which are enabled, the URLs
 *   GET /exporters/<format>/<node>/metrics      the node's exposition in that exporter's format
 *   GET /exporters/<format>/metrics?node=<node> the same, for a scrape config using `params`
 *
 * Formats (SIM_EXPORTERS selects which answer; names, units, labels and types as
 * ../shared/reference/telemetry.md §5 pins them):
 *   kepler-0.7   kepler_node_package_joules_total, kepler_node_dram_joules_total (counters, J)
 *                with labels instance (the node), mode (dynamic|idle), package (socket index)
 *                and source="rapl-sysfs"; kepler_exporter_build_info.
 *   kepler-0.12  kepler_node_cpu_{,active_,idle_}joules_total (counters, J) and
 *                kepler_node_cpu_{,active_,idle_}watts (gauges, W) with node_name, zone
 *                (package|dram) and path (aggregated-<zone> on a multi-socket node, as Kepler
 *                aggregates same-named zones; the zone's sysfs directory on one socket);
 *                kepler_node_cpu_usage_ratio; kepler_build_info.
 *
 * Invariants. Everything comes from the telemetry snapshot the tick published (the caller holds
 * rcu_read_lock) and from the node's profile parameters, which never change after start: a
 * scrape never steps a node, takes no lock the tick loop takes, and costs the tick nothing.
 * The counters are the very µJ counters /telemetry, /metrics and OTLP print, so every format
 * agrees with the others at the same snapshot.
 *
 * The idle/dynamic (0.7) and idle/active (0.12) splits are not Kepler's estimates: a zone's
 * counter is split by a fixed idle share, the profile's idle package power over its full-load
 * power (physics.cpu.idlePkgW / maxPkgW, or the power curve's lowest over its highest point).
 * The same share splits the power gauges. Fixed per node, so both halves are monotonic and add
 * up to the counter exactly.
 *
 * Left out on purpose: core, uncore and platform series (the snapshot carries no core or psys
 * counter; uncore is not modelled), GPU series (GPUs are not modelled yet), container/process/pod
 * levels (no workloads), kepler_node_info (a counter without _total, which promtool flags) and
 * kepler_node_cpu_info (per logical CPU). A node without RAPL zones (a VM) serves only the build
 * info, as a real exporter would find no meter. Node names are DNS labels (checked by the spec),
 * so label values need no escaping. */
#include "exporters.h"

#include "engine.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[EXP_COUNT] = {"kepler-0.7", "kepler-0.12"};

#define PROM_TYPE "text/plain; version=0.0.4; charset=utf-8"

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
            snprintf(err, errlen, "unknown exporter \"%.*s\" (known: kepler-0.7, kepler-0.12; GPU exporters come "
                     "with the GPU model)", (int)len, s);
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

static bool has_dram(const struct node_telemetry *n, int k)
{
    return n->dram_energy_uj[k] || n->pkg_dram_power_w[k] > 0; /* as OTLP decides */
}

static void kepler07(FILE *f, const struct node_telemetry *n, double share)
{
    static const char *const comp[2] = {"package", "dram"};
    for (int z = 0; n->has_rapl && z < 2; z++) {
        bool any = false;
        for (int k = 0; k < n->npkgs; k++) {
            uint64_t uj = z ? n->dram_energy_uj[k] : n->pkg_energy_uj[k];
            if (z && !has_dram(n, k))
                continue;
            if (!any)
                fprintf(f, "# HELP kepler_node_%s_joules_total Aggregated value in %s value from rapl-sysfs\n"
                           "# TYPE kepler_node_%s_joules_total counter\n", comp[z], comp[z], comp[z]);
            any = true;
            double j = (double)uj / 1e6, idle = j * share;
            fprintf(f, "kepler_node_%s_joules_total{instance=\"%s\",mode=\"dynamic\",package=\"%d\","
                       "source=\"rapl-sysfs\"} %.6f\n", comp[z], n->name, k, j - idle);
            fprintf(f, "kepler_node_%s_joules_total{instance=\"%s\",mode=\"idle\",package=\"%d\","
                       "source=\"rapl-sysfs\"} %.6f\n", comp[z], n->name, k, idle);
        }
    }
    fputs("# HELP kepler_exporter_build_info A metric with a constant '1' value labeled by version, revision, "
          "branch, os and arch from which kepler_exporter was built.\n"
          "# TYPE kepler_exporter_build_info gauge\n"
          "kepler_exporter_build_info{arch=\"amd64\",branch=\"hwemu\",os=\"linux\",revision=\"hwemu\","
          "version=\"v0.7.12\"} 1\n", f);
}

static void kepler012(FILE *f, const struct node_telemetry *n, double share)
{
    /* one aggregated series per zone: zone, path, joules, watts */
    struct { const char *zone; char path[64]; double j, w; } zs[2];
    int nz = 0;
    bool multi = n->npkgs > 1;
    if (n->has_rapl && n->npkgs) {
        zs[nz].zone = "package";
        zs[nz].j = zs[nz].w = 0;
        for (int k = 0; k < n->npkgs; k++)
            zs[nz].j += (double)n->pkg_energy_uj[k] / 1e6, zs[nz].w += n->pkg_power_w[k];
        snprintf(zs[nz].path, sizeof zs[nz].path, multi ? "aggregated-package" : "/sys/class/powercap/intel-rapl:0");
        nz++;
        bool dram = false;
        zs[nz].zone = "dram";
        zs[nz].j = zs[nz].w = 0;
        for (int k = 0; k < n->npkgs; k++)
            if (has_dram(n, k))
                dram = true, zs[nz].j += (double)n->dram_energy_uj[k] / 1e6, zs[nz].w += n->pkg_dram_power_w[k];
        snprintf(zs[nz].path, sizeof zs[nz].path, multi ? "aggregated-dram" : "/sys/class/powercap/intel-rapl:0:0");
        nz += dram;
    }
    static const char *const state[3] = {"", "active_", "idle_"};
    static const char *const state_help[3] = {"", " in active state", " in idle state"};
    for (int s = 0; nz && s < 3; s++) {
        fprintf(f, "# HELP kepler_node_cpu_%sjoules_total Energy consumption of cpu%s at node level in joules\n"
                   "# TYPE kepler_node_cpu_%sjoules_total counter\n", state[s], state_help[s], state[s]);
        for (int z = 0; z < nz; z++) {
            double v = s == 0 ? zs[z].j : s == 2 ? zs[z].j * share : zs[z].j - zs[z].j * share;
            fprintf(f, "kepler_node_cpu_%sjoules_total{node_name=\"%s\",path=\"%s\",zone=\"%s\"} %.6f\n", state[s],
                    n->name, zs[z].path, zs[z].zone, v);
        }
    }
    for (int s = 0; nz && s < 3; s++) {
        fprintf(f, "# HELP kepler_node_cpu_%swatts Power consumption of cpu%s at node level in watts\n"
                   "# TYPE kepler_node_cpu_%swatts gauge\n", state[s], state_help[s], state[s]);
        for (int z = 0; z < nz; z++) {
            double v = s == 0 ? zs[z].w : s == 2 ? zs[z].w * share : zs[z].w - zs[z].w * share;
            fprintf(f, "kepler_node_cpu_%swatts{node_name=\"%s\",path=\"%s\",zone=\"%s\"} %.6f\n", state[s],
                    n->name, zs[z].path, zs[z].zone, v);
        }
    }
    fprintf(f, "# HELP kepler_node_cpu_usage_ratio CPU usage ratio of a node (value between 0.0 and 1.0)\n"
               "# TYPE kepler_node_cpu_usage_ratio gauge\n"
               "kepler_node_cpu_usage_ratio{node_name=\"%s\"} %.6f\n", n->name, n->cpu_util);
    fputs("# HELP kepler_build_info A metric with a constant '1' value labeled with version information\n"
          "# TYPE kepler_build_info gauge\n"
          "kepler_build_info{arch=\"amd64\",branch=\"hwemu\",goversion=\"none\",revision=\"hwemu\","
          "version=\"v0.12.0\"} 1\n", f);
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
    cJSON_AddStringToObject(o, "enable", "SIM_EXPORTERS=kepler-0.7,kepler-0.12 (or --exporters) on hwemu serve");
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
        char fname[64];
        snprintf(fname, sizeof fname, "%.*s", (int)(flen < 63 ? flen : 63), fmt);
        *body = json_body(&code, 404, "no such exporter (known: kepler-0.7, kepler-0.12; see GET /exporters)",
                          fname, NULL, len);
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
    char *out = NULL;
    size_t olen = 0;
    FILE *f = open_memstream(&out, &olen);
    if (!f) {
        *body = NULL;
        return 500;
    }
    double share = idle_share(&e->nodes[i].params);
    if (x == EXP_KEPLER_07)
        kepler07(f, &t->nodes[i], share);
    else
        kepler012(f, &t->nodes[i], share);
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
