/* profile_schema: the profile format as data; see profile_schema.h.
 * Keep profiles/README.md in step with this table. */
#include "profile_schema.h"

#include <stdio.h>
#include <string.h>

#define FACT(k, t) {k, t, true, NULL, NULL}
#define FACTW(k, w) {k, SF_STR, true, NULL, w}
#define PLAIN(k, t) {k, t, false, NULL, NULL}
#define PLAINW(k, w) {k, SF_STR, false, NULL, w}
#define OBJ(k, s) {k, SF_OBJ, false, s, NULL}
#define OBJLIST(k, s) {k, SF_OBJLIST, false, s, NULL}
#define END {NULL, 0, false, NULL, NULL}

static const struct sfield taint_fields[] = {
    PLAIN("key", SF_STR), PLAIN("value", SF_STR),
    PLAINW("effect", "NoSchedule|PreferNoSchedule|NoExecute"), END};
static const struct sfield capacity_fields[] = {FACT("cpu", SF_INT), FACT("memoryKi", SF_INT), END};
static const struct sfield reserved_fields[] = {PLAIN("cpu", SF_STR), PLAIN("memory", SF_STR), END};
static const struct sfield node_fields[] = {
    PLAINW("nfd", "|present|absent"),
    {"labels", SF_LABELS, false, NULL, NULL},
    OBJLIST("taints", taint_fields),
    OBJ("capacity", capacity_fields),
    OBJ("reserved", reserved_fields),
    PLAIN("extendedResources", SF_INTMAP),
    END};
static const struct sfield pci_fields[] = {
    FACT("class", SF_STR), FACT("vendor", SF_STR), FACT("device", SF_STR), PLAIN("drm", SF_BOOL),
    FACT("revision", SF_STR), FACT("subsystemVendor", SF_STR), FACT("subsystemDevice", SF_STR),
    FACT("driver", SF_STR), FACT("bars", SF_STR), END};
static const struct sfield uncore_fields[] = {
    FACT("vendor", SF_STR), FACT("class", SF_STR), FACT("revision", SF_STR), FACT("subsystemVendor", SF_STR),
    FACT("subsystemDevice", SF_STR), FACT("buses", SF_STR), FACT("functions", SF_STR), FACT("module", SF_STR), END};
static const struct sfield cache_fields[] = {
    PLAIN("level", SF_INT), PLAINW("type", "Data|Instruction|Unified"), FACT("sizeKB", SF_INT), FACT("ways", SF_INT),
    FACT("lineBytes", SF_INT), FACT("coresPerInstance", SF_INT), END};
static const struct sfield numa_fields[] = {FACT("nodes", SF_INT), FACT("distances", SF_INTLIST), END};
/* One fact per file of /sys/devices/system/cpu/vulnerabilities (cpu_vulns.h, the same names and
 * order; tests/unit/test_render_vulns.c checks they agree): the text an affected CPU prints. */
static const struct sfield vuln_fields[] = {
    FACT("meltdown", SF_STR), FACT("spectre_v1", SF_STR), FACT("spectre_v2", SF_STR),
    FACT("spec_store_bypass", SF_STR), FACT("l1tf", SF_STR), FACT("mds", SF_STR), FACT("tsx_async_abort", SF_STR),
    FACT("itlb_multihit", SF_STR), FACT("srbds", SF_STR), FACT("mmio_stale_data", SF_STR), FACT("retbleed", SF_STR),
    FACT("spec_rstack_overflow", SF_STR), FACT("gather_data_sampling", SF_STR),
    FACT("reg_file_data_sampling", SF_STR), FACT("indirect_target_selection", SF_STR), FACT("tsa", SF_STR),
    FACT("vmscape", SF_STR), END};
static const struct sfield cpu_fields[] = {
    OBJLIST("caches", cache_fields),
    OBJ("vulnerabilities", vuln_fields),
    FACT("vendorID", SF_STR), FACT("modelName", SF_STR), FACT("family", SF_INT), FACT("model", SF_INT),
    FACT("stepping", SF_INT), FACT("sockets", SF_INT), FACT("coresPerSocket", SF_INT),
    FACT("threadsPerCore", SF_INT), FACT("diesPerPackage", SF_INT),
    PLAINW("numbering", "|socket-major-smt-last"), PLAIN("oneSocketPerVCPU", SF_BOOL),
    PLAIN("hypervisor", SF_BOOL), FACT("cpuMHz", SF_FLOAT), FACT("flags", SF_STR),
    FACT("microcode", SF_STR), FACT("cpuidLevel", SF_INT), FACT("vmxFlags", SF_STR), FACT("bugs", SF_STR),
    FACT("tscKHz", SF_INT), FACT("tlbSize", SF_INT), FACT("physAddrBits", SF_INT), FACT("virtAddrBits", SF_INT),
    FACT("powerManagement", SF_STR),
    PLAIN("cpuinfoVerbatim", SF_STR), END};
static const struct sfield constraint_fields[] = {
    PLAIN("name", SF_STR), FACT("powerLimitUW", SF_INT), FACT("maxPowerUW", SF_INT),
    FACT("timeWindowUS", SF_INT), FACTW("rejectWrites", "|locked|disabled"), END};
static const struct sfield zone_fields[];
static const struct sfield zone_fields[] = {
    PLAINW("repeat", "|per-package|per-die|once"),
    PLAIN("nameFormat", SF_STR),
    FACT("enabled", SF_INT),
    FACT("energyUnitNJ", SF_INT),
    FACT("powerUnitUW", SF_INT),
    FACT("maxEnergyRangeUJ", SF_INT),
    FACT("limitBits", SF_INT),
    OBJLIST("constraints", constraint_fields),
    OBJLIST("children", zone_fields),
    PLAIN("extraFiles", SF_STRMAP),
    END};
static const struct sfield control_type_fields[] = {
    PLAINW("name", "intel-rapl|intel-rapl-mmio"), OBJLIST("zones", zone_fields), END};
static const struct sfield powercap_fields[] = {OBJLIST("controlTypes", control_type_fields), END};
static const struct sfield cpufreq_fields[] = {
    FACT("driver", SF_STR), FACT("governor", SF_STR), FACT("availableGovernors", SF_STR),
    {"policyGrouping", SF_STR, true, NULL, "|per-cpu|per-core"},
    FACT("cpuinfoMinKHz", SF_INT), FACT("cpuinfoMaxKHz", SF_INT), FACT("availableKHz", SF_INTLIST),
    FACT("boost", SF_INT), PLAIN("minimal", SF_BOOL), FACT("hwp", SF_BOOL), FACT("baseKHz", SF_INT),
    FACT("transitionLatencyNS", SF_INT), END};
static const struct sfield hsmp_fields[] = {
    FACTW("layout", "platform"), FACT("capMaxUW", SF_INT), FACT("capDefaultUW", SF_INT), END};
static const struct sfield cray_pm_fields[] = {FACT("rawScanHz", SF_INT), FACT("version", SF_INT), END};
static const struct sfield gpu_limit_fields[] = {
    FACT("minW", SF_FLOAT), FACT("maxW", SF_FLOAT), FACT("defaultW", SF_FLOAT), FACT("currentW", SF_FLOAT), END};
static const struct sfield gpu_tool_fields[] = {
    PLAINW("name", "nvidia-smi|rocm-smi|amd-smi"), PLAIN("variant", SF_STR), END};
static const struct sfield gpu_smmax_fields[] = {FACT("memMHz", SF_INT), FACT("maxGraphicsMHz", SF_INT), END};
static const struct sfield gpu_supported_fields[] = {OBJLIST("smMaxByMem", gpu_smmax_fields), END};
static const struct sfield gpu_clock_fields[] = {
    FACT("graphicsMinMHz", SF_INT), FACT("graphicsMaxMHz", SF_INT), FACT("graphicsStepMHz", SF_INT),
    FACT("graphicsIdleMHz", SF_INT), FACT("memoryMHz", SF_INTLIST), FACT("memoryIdleMHz", SF_INT),
    FACT("videoMaxMHz", SF_INT), OBJ("supported", gpu_supported_fields), END};
static const struct sfield gpu_transfer_fields[] = {FACT("peerLinkGBps", SF_FLOAT), FACT("receiverGate", SF_BOOL), END};
static const struct sfield gpu_intel_fields[] = {FACTW("driver", "i915|xe"), END};
static const struct sfield gpu_fields[] = {
    PLAINW("vendor", "nvidia|amd|intel"),
    FACT("count", SF_INT),
    FACT("product", SF_STR),
    OBJ("pci", pci_fields),
    OBJ("limits", gpu_limit_fields),
    FACTW("powerSensor", "|input|average|both"),
    FACTW("ppt1", "|absent|present"),
    FACT("vbiosVersion", SF_STR),
    FACT("gfxVersion", SF_STR),
    FACTW("exposure", "whole|mig-single|mig-mixed|timeslice-rename|timeslice-norename|dra"),
    FACTW("labeller", "gfd|listed"),
    PLAIN("migProfile", SF_STR),
    PLAIN("migDevicesPerGPU", SF_INT),
    PLAIN("timesliceReplicas", SF_INT),
    PLAIN("fieldSupport", SF_STRMAP),
    PLAIN("secondaryDies", SF_INTLIST),
    OBJLIST("tools", gpu_tool_fields),
    FACTW("persistenceMode", "|enabled|disabled"),
    FACT("architecture", SF_STR),
    FACT("computeCapability", SF_STR),
    FACT("memoryMiB", SF_INT),
    FACT("migCapable", SF_BOOL),
    OBJ("clocks", gpu_clock_fields),
    OBJ("transfer", gpu_transfer_fields),
    OBJ("intel", gpu_intel_fields),
    FACT("unprivilegedSetIsNoop", SF_BOOL),
    FACT("thermalRiseC", SF_FLOAT),
    FACT("computeUnits", SF_INT),
    END};
static const struct sfield phys_cpu_fields[] = {
    PLAINW("model", "|analytic|catalog-curve"),
    FACT("maxPkgW", SF_FLOAT), FACT("idlePkgW", SF_FLOAT), FACT("alphaUtil", SF_FLOAT),
    FACT("betaFreq", SF_FLOAT), FACT("knee", SF_FLOAT), FACT("coreFraction", SF_FLOAT),
    FACT("freqRampMS", SF_INT), FACT("curveLoadPct", SF_FLOATLIST), FACT("curveNodeW", SF_FLOATLIST), END};
static const struct sfield phys_dram_fields[] = {FACT("wattsPerSocket", SF_FLOAT), END};
static const struct sfield phys_platform_fields[] = {FACT("otherW", SF_FLOAT), END};
static const struct sfield phys_rapl_fields[] = {
    PLAINW("settleTau", "|timeWindow"), FACT("floorW", SF_FLOAT), END};
static const struct sfield phys_hsmp_fields[] = {FACT("settleTauMS", SF_INT), END};
static const struct sfield phys_gpu_fields[] = {
    FACT("idleW", SF_FLOAT), FACT("naturalMaxW", SF_FLOAT), FACT("computeGamma", SF_FLOAT),
    FACT("memoryEpsilon", SF_FLOAT), FACT("memoryGamma", SF_FLOAT), FACT("capSettleTauMS", SF_INT),
    FACT("telemetryWindowMS", SF_INT), END};
static const struct sfield physics_fields[] = {
    OBJ("cpu", phys_cpu_fields), OBJ("dram", phys_dram_fields), OBJ("platform", phys_platform_fields),
    OBJ("rapl", phys_rapl_fields), OBJ("hsmp", phys_hsmp_fields), OBJ("gpu", phys_gpu_fields), END};

static const struct sfield sensor_fields[] = {
    FACT("gpuPowerNoiseW", SF_FLOAT), FACT("socketPowerNoiseW", SF_FLOAT), FACT("bmcPowerNoisePct", SF_FLOAT), END};

const struct sfield profile_schema[] = {
    OBJ("node", node_fields),
    OBJLIST("pci", pci_fields),
    OBJ("uncore", uncore_fields),
    OBJ("cpu", cpu_fields),
    OBJ("numa", numa_fields),
    OBJ("powercap", powercap_fields),
    OBJ("cpufreq", cpufreq_fields),
    OBJ("hsmp", hsmp_fields),
    OBJ("crayPmCounters", cray_pm_fields),
    OBJ("gpus", gpu_fields),
    OBJ("physics", physics_fields),
    OBJ("sensors", sensor_fields),
    END};

const struct sfield *sfield_find(const struct sfield *table, const char *key)
{
    for (const struct sfield *f = table; f && f->key; f++)
        if (!strcmp(f->key, key))
            return f;
    return NULL;
}

void sfield_keys(const struct sfield *table, char *buf, unsigned len)
{
    unsigned used = 0;
    buf[0] = 0;
    for (const struct sfield *f = table; f && f->key && used < len; f++) {
        int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", f->key);
        if (n < 0)
            break;
        used += (unsigned)n;
    }
}

const char *sf_type_name(enum sf_type t)
{
    switch (t) {
    case SF_INT: return "an integer";
    case SF_FLOAT: return "a number";
    case SF_STR: return "a text value";
    case SF_BOOL: return "true or false";
    case SF_INTLIST: return "a list of integers";
    case SF_FLOATLIST: return "a list of numbers";
    case SF_OBJ: return "a mapping";
    case SF_OBJLIST: return "a list of mappings";
    case SF_STRMAP: return "a mapping of names to text values";
    case SF_INTMAP: return "a mapping of names to integers";
    case SF_LABELS: return "a mapping of label groups ({src, values})";
    }
    return "?";
}
