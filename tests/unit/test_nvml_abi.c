/* test_nvml_abi: libhwemu-nvml.so's contract (fakesmi/nvml/README.md) checked through dlopen
 * and dlsym, as a client loads it, against a segment built here with two GPUs: GPU 0 an H100
 * SXM (limits 200-700 W, clocks 2619 MHz memory x 1980..1950 MHz graphics), GPU 1 with
 * fieldSupport tokens in its limits. Expected values are the files' texts written below; the
 * struct layouts and return codes are NVML 12.2's (nvml.h, NVIDIA/go-nvml 075f45f). */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nvml_abi.h"
#include "seg_attr.h"
#include "seg_build.h"
#include "seg_tmp.h"

static char path[256];
static struct seg seg;
static void *lib;

/* A function of the library by name (the test fails when it is not exported). */
static void *sym(const char *name)
{
    void *f = dlsym(lib, name);
    if (!f)
        fail_msg("libhwemu-nvml.so does not export %s", name);
    return f;
}
#define CALL(type, name, ...) (((type)sym(name))(__VA_ARGS__))
typedef nvmlReturn_t (*fn_v)(void);
typedef nvmlReturn_t (*fn_u)(unsigned);
typedef nvmlReturn_t (*fn_pu)(unsigned *);
typedef nvmlReturn_t (*fn_d_pu)(nvmlDevice_t, unsigned *);
typedef nvmlReturn_t (*fn_d_u)(nvmlDevice_t, unsigned);
typedef nvmlReturn_t (*fn_d_uu)(nvmlDevice_t, unsigned, unsigned);
typedef nvmlReturn_t (*fn_d_p)(nvmlDevice_t, void *);
typedef nvmlReturn_t (*fn_d_s)(nvmlDevice_t, char *, unsigned);
typedef nvmlReturn_t (*fn_i_d)(unsigned, nvmlDevice_t *);
typedef nvmlReturn_t (*fn_s_d)(const char *, nvmlDevice_t *);
typedef nvmlReturn_t (*fn_d_t_pu)(nvmlDevice_t, int, unsigned *);

static void text(struct seg_builder *b, const char *p, const char *t)
{
    segb_static(b, p, 0444, t, strlen(t));
}

static void value(struct seg_builder *b, const char *p, const char *t)
{
    segb_dynamic(b, p, 0444, SEG_S, segb_value_text(b, t), SV_NONE, SEG_NONE);
}

static int setup(void **st)
{
    seg_tmp_path(path, sizeof path, "nvml.seg");
    struct seg_builder *b = segb_new();
    text(b, "state/nvml/driver_version", "590.48.01\n");
    text(b, "state/nvml/cuda_version", "13.1\n");
    const char *g0 = "state/nvml/gpu0/", *g1 = "state/nvml/gpu1/";
    char p[128];
#define P(dir, f) (snprintf(p, sizeof p, "%s%s", dir, f), p)
    for (int i = 0; i < 2; i++) {
        const char *g = i ? g1 : g0;
        text(b, P(g, "name"), "NVIDIA H100 80GB HBM3\n");
        text(b, P(g, "uuid"), i ? "GPU-11111111-2222-3333-4444-555555555555\n" : "GPU-0a0b0c0d-1111-2222-3333-444455556666\n");
        text(b, P(g, "pci_bus_id"), i ? "00000000:11:00.0\n" : "00000000:10:00.0\n");
        text(b, P(g, "serial"), i ? "1654922001235\n" : "1654922001234\n");
        text(b, P(g, "pci_device_id"), "0x233010DE\n");
        text(b, P(g, "compute_cap"), "9.0\n");
        text(b, P(g, "architecture"), "hopper\n");
        text(b, P(g, "mig_capable"), "1\n");
        text(b, P(g, "memory_total_mib"), "81559\n");
        value(b, P(g, "memory_used_mib"), "1024\n");
        value(b, P(g, "power_draw_mw"), "412345\n");
        value(b, P(g, "power_instant_mw"), "415000\n");
        value(b, P(g, "enforced_power_limit_mw"), "700000\n");
        value(b, P(g, "utilization_gpu_pct"), "87\n");
        value(b, P(g, "utilization_memory_pct"), "20\n");
        value(b, P(g, "temperature_gpu_c"), "41\n");
        value(b, P(g, "temperature_memory_c"), "48\n");
        value(b, P(g, "pstate"), "P0\n");
        value(b, P(g, "clocks_graphics_mhz"), "1980\n");
        value(b, P(g, "clocks_sm_mhz"), "1980\n");
        value(b, P(g, "clocks_memory_mhz"), "2619\n");
        value(b, P(g, "clocks_video_mhz"), "1545\n");
        text(b, P(g, "clocks_max_graphics_mhz"), "1980\n");
        text(b, P(g, "clocks_max_memory_mhz"), "2619\n");
        text(b, P(g, "clocks_max_video_mhz"), "1545\n");
        text(b, P(g, "supported_clocks"), "2619:1980 1965 1950\n");
        value(b, P(g, "clocks_event_reasons"), "0x0000000000000004\n");
        segb_dynamic(b, P(g, "total_energy_mj"), 0444, SEG_S, segb_value_counter(b, 1000000, 64, true), SV_NONE,
                     SEG_NONE);
        segb_dynamic(b, P(g, "persistence_mode"), 0644, SEG_A, segb_value_text(b, "1\n"), SV_BOOL01, SEG_NONE);
        segb_dynamic(b, P(g, "locked_gpu_clocks"), 0644, SEG_A, segb_value_text(b, "none\n"), SV_NVML_CLOCKS,
                     segb_param(b, (struct seg_param){.a = 1950, .b = 1980, .related = SEG_NONE}, NULL));
        segb_dynamic(b, P(g, "locked_memory_clocks"), 0644, SEG_A, segb_value_text(b, "none\n"), SV_NVML_CLOCKS,
                     segb_param(b, (struct seg_param){.a = 2619, .b = 2619, .related = SEG_NONE}, NULL));
    }
    text(b, P(g0, "power_min_limit_mw"), "200000\n");
    text(b, P(g0, "power_max_limit_mw"), "700000\n");
    text(b, P(g0, "power_default_limit_mw"), "700000\n");
    segb_dynamic(b, P(g0, "power_limit_mw"), 0644, SEG_A, segb_value_text(b, "700000\n"), SV_NVML_LIMIT,
                 segb_param(b, (struct seg_param){.a = 200000, .b = 700000, .related = SEG_NONE}, NULL));
    /* GPU 1: fieldSupport tokens stand in for its limits */
    text(b, P(g1, "power_min_limit_mw"), "[N/A]\n");
    text(b, P(g1, "power_max_limit_mw"), "700000\n");
    text(b, P(g1, "power_default_limit_mw"), "[Unknown Error]\n");
    segb_dynamic(b, P(g1, "power_limit_mw"), 0644, SEG_A, segb_value_text(b, "[Insufficient Permissions]\n"),
                 SV_NVML_LIMIT, segb_param(b, (struct seg_param){.a = 200000, .b = 700000, .c = 1, .related = SEG_NONE}, NULL));
    text(b, "sys/devices/pci0000:10/0000:10:00.0/subsystem_vendor", "0x10de\n");
    text(b, "sys/devices/pci0000:10/0000:10:00.0/subsystem_device", "0x16c1\n");
    char err[256];
    int rc = segb_write(b, path, "n", "p", 0, 1000000000, &seg, err, sizeof err);
    segb_free(b);
    if (rc)
        return rc;
    lib = dlopen(HWEMU_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        fprintf(stderr, "dlopen %s: %s\n", HWEMU_NVML_PATH, dlerror());
    return lib ? 0 : -1;
}

static int teardown(void **st)
{
    seg_close(&seg);
    seg_tmp_clean();
    return 0;
}

static nvmlDevice_t gpu(unsigned i)
{
    nvmlDevice_t d = NULL;
    assert_int_equal(CALL(fn_i_d, "nvmlDeviceGetHandleByIndex_v2", i, &d), NVML_SUCCESS);
    return d;
}

/* Before init: UNINITIALIZED, except nvmlErrorString; an engine-less environment: not loaded. */
static void test_init(void **st)
{
    unsigned n = 99;
    assert_int_equal(CALL(fn_pu, "nvmlDeviceGetCount_v2", &n), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(CALL(fn_v, "nvmlDeviceGetBAR1MemoryInfo"), NVML_ERROR_UNINITIALIZED);
    assert_string_equal(CALL(const char *(*)(int), "nvmlErrorString", 4), "Insufficient Permissions");
    assert_string_equal(CALL(const char *(*)(int), "nvmlErrorString", 26), "Requested functionality has been deprecated");
    assert_string_equal(CALL(const char *(*)(int), "nvmlErrorString", 28), "Unknown Error");
    setenv("HWEMU_SEGMENT", "/nonexistent/hwemu.seg", 1);
    assert_int_equal(CALL(fn_v, "nvmlInit_v2"), NVML_ERROR_DRIVER_NOT_LOADED);
    assert_int_equal(CALL(fn_v, "nvmlShutdown"), NVML_SUCCESS); /* surplus: no error */
    assert_int_equal(CALL(fn_pu, "nvmlDeviceGetCount_v2", &n), NVML_ERROR_UNINITIALIZED);
    setenv("HWEMU_SEGMENT", path, 1);
    assert_int_equal(CALL(fn_u, "nvmlInitWithFlags", 0), NVML_SUCCESS);
    assert_int_equal(CALL(fn_v, "nvmlInit"), NVML_SUCCESS);
    assert_int_equal(CALL(fn_v, "nvmlShutdown"), NVML_SUCCESS);
    assert_int_equal(CALL(fn_pu, "nvmlDeviceGetCount", &n), NVML_SUCCESS); /* one reference left */
    assert_int_equal(n, 2);
    char v[80];
    assert_int_equal(CALL(nvmlReturn_t(*)(char *, unsigned), "nvmlSystemGetDriverVersion", v, sizeof v), NVML_SUCCESS);
    assert_string_equal(v, "590.48.01");
    assert_int_equal(CALL(nvmlReturn_t(*)(char *, unsigned), "nvmlSystemGetDriverVersion", v, 5),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(CALL(nvmlReturn_t(*)(char *, unsigned), "nvmlSystemGetNVMLVersion", v, sizeof v), NVML_SUCCESS);
    assert_string_equal(v, "13.590.48.01");
    int cuda = 0;
    assert_int_equal(CALL(nvmlReturn_t(*)(int *), "nvmlSystemGetCudaDriverVersion_v2", &cuda), NVML_SUCCESS);
    assert_int_equal(cuda, 13010);
}

/* Every name the clients look up resolves (README.md, "Symbols"). */
static void test_symbols(void **st)
{
    static const char *const names[] = {
        "nvmlInit", "nvmlInit_v2", "nvmlInitWithFlags", "nvmlShutdown", "nvmlErrorString",
        "nvmlInternalGetExportTable", "nvmlDeviceGetCount", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex",
        "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByUUID", "nvmlDeviceGetHandleByPciBusId",
        "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetPciInfo", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo_v3",
        "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceSetPowerManagementLimit",
        "nvmlDeviceSetPowerManagementLimit_v2", "nvmlDeviceGetComputeRunningProcesses",
        "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetGraphicsRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses_v2",
        "nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetMPSComputeRunningProcesses_v3",
        "nvmlSystemGetCudaDriverVersion", "nvmlSystemGetCudaDriverVersion_v2", "nvmlEventSetWait",
        "nvmlEventSetWait_v2", "nvmlDeviceGetNvLinkRemotePciInfo", "nvmlDeviceGetNvLinkRemotePciInfo_v2",
        "nvmlDeviceGetGridLicensableFeatures_v4", "nvmlDeviceGetAttributes_v2", "nvmlComputeInstanceGetInfo_v2",
        "nvmlDeviceGetGpuInstancePossiblePlacements_v2", "nvmlVgpuInstanceGetLicenseInfo_v2",
        "nvmlDeviceGetDriverModel_v2", "nvmlDeviceRemoveGpu_v2", "nvmlDeviceGetCurrentClocksEventReasons",
        "nvmlDeviceGetCurrentClocksThrottleReasons", "nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetPowerUsage",
        "nvmlDeviceGetProcessUtilization", "nvmlDeviceGetFanSpeed", "nvmlDeviceGetFanSpeed_v2",
        "nvmlDeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetPcieThroughput", "nvmlDeviceGetTemperatureThreshold",
        "nvmlDeviceGetEncoderUtilization", "nvmlDeviceGetDecoderUtilization", "nvmlGetExcludedDeviceCount",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        sym(names[i]);
    assert_null(dlsym(lib, "nv_init")); /* internal names stay hidden */
    assert_null(dlsym(lib, "seg_open"));
}

static void test_identity(void **st)
{
    nvmlDevice_t d0 = gpu(0), d1 = gpu(1), d = NULL;
    char t[96];
    assert_int_equal(CALL(fn_i_d, "nvmlDeviceGetHandleByIndex", 2, &d), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(CALL(fn_d_s, "nvmlDeviceGetName", d0, t, sizeof t), NVML_SUCCESS);
    assert_string_equal(t, "NVIDIA H100 80GB HBM3");
    assert_int_equal(CALL(fn_d_s, "nvmlDeviceGetName", d0, t, 21), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(CALL(fn_d_s, "nvmlDeviceGetName", (nvmlDevice_t)t, t, sizeof t), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(CALL(fn_d_s, "nvmlDeviceGetName", d0, NULL, 64), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(CALL(fn_s_d, "nvmlDeviceGetHandleByUUID", "gpu-11111111-2222-3333-4444-555555555555", &d),
                     NVML_SUCCESS);
    assert_ptr_equal(d, d1);
    assert_int_equal(CALL(fn_s_d, "nvmlDeviceGetHandleByUUID", "GPU-x", &d), NVML_ERROR_NOT_FOUND);
    assert_int_equal(CALL(fn_s_d, "nvmlDeviceGetHandleByPciBusId_v2", "0000:11:00.0", &d), NVML_SUCCESS);
    assert_ptr_equal(d, d1);
    assert_int_equal(CALL(fn_s_d, "nvmlDeviceGetHandleByPciBusId", "10:00.0", &d), NVML_SUCCESS);
    assert_ptr_equal(d, d0);
    assert_int_equal(CALL(fn_s_d, "nvmlDeviceGetHandleBySerial", "1654922001235", &d), NVML_SUCCESS);
    assert_ptr_equal(d, d1);
    unsigned idx = 9;
    assert_int_equal(CALL(fn_d_pu, "nvmlDeviceGetIndex", d1, &idx), NVML_SUCCESS);
    assert_int_equal(idx, 1);

    nvmlPciInfo_t pci;
    memset(&pci, 0xff, sizeof pci);
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceGetPciInfo_v3", d0, &pci), NVML_SUCCESS);
    assert_string_equal(pci.busId, "00000000:10:00.0");
    assert_string_equal(pci.busIdLegacy, "0000:10:00.0");
    assert_int_equal(pci.bus, 0x10);
    assert_int_equal(pci.pciDeviceId, 0x233010DE);
    assert_int_equal(pci.pciSubSystemId, 0x16C110DE);
    nvmlPciInfo_v1_t v1[2];
    memset(v1, 0xab, sizeof v1);
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceGetPciInfo", d1, &v1[0]), NVML_SUCCESS);
    assert_string_equal(v1[0].busId, "0000:11:00.0");
    assert_int_equal(v1[0].bus, 0x11);
    assert_int_equal(((unsigned char *)&v1[1])[0], 0xab); /* nothing past the 52-byte v1 struct */

    unsigned arch = 0;
    assert_int_equal(CALL(fn_d_pu, "nvmlDeviceGetArchitecture", d0, &arch), NVML_SUCCESS);
    assert_int_equal(arch, 9);
    int major = 0, minor = 0;
    assert_int_equal(CALL(nvmlReturn_t(*)(nvmlDevice_t, int *, int *), "nvmlDeviceGetCudaComputeCapability", d0, &major,
                          &minor), NVML_SUCCESS);
    assert_true(major == 9 && minor == 0);
    unsigned cur = 5, pend = 5;
    assert_int_equal(CALL(nvmlReturn_t(*)(nvmlDevice_t, unsigned *, unsigned *), "nvmlDeviceGetMigMode", d0, &cur, &pend),
                     NVML_SUCCESS);
    assert_true(cur == 0 && pend == 0);
}

static void test_state(void **st)
{
    nvmlDevice_t d = gpu(0);
    nvmlMemory_t m;
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceGetMemoryInfo", d, &m), NVML_SUCCESS);
    assert_true(m.total == 81559ULL << 20 && m.used == 1024ULL << 20 && m.free == (81559ULL - 1024) << 20);
    nvmlMemory_v2_t m2 = {.version = 1};
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceGetMemoryInfo_v2", d, &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    m2.version = nvmlMemory_v2;
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceGetMemoryInfo_v2", d, &m2), NVML_SUCCESS);
    assert_true(m2.total == 81559ULL << 20 && m2.reserved == 0 && m2.used == 1024ULL << 20);
    nvmlUtilization_t u;
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceGetUtilizationRates", d, &u), NVML_SUCCESS);
    assert_true(u.gpu == 87 && u.memory == 20);
    unsigned t = 0;
    assert_int_equal(CALL(fn_d_t_pu, "nvmlDeviceGetTemperature", d, 0, &t), NVML_SUCCESS);
    assert_int_equal(t, 41);
    assert_int_equal(CALL(fn_d_t_pu, "nvmlDeviceGetTemperature", d, 1, &t), NVML_ERROR_INVALID_ARGUMENT);
    int ps = -1;
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceGetPerformanceState", d, &ps), NVML_SUCCESS);
    assert_int_equal(ps, 0);
    unsigned n = 5;
    assert_int_equal(CALL(nvmlReturn_t(*)(nvmlDevice_t, unsigned *, void *), "nvmlDeviceGetComputeRunningProcesses_v3", d,
                          &n, NULL), NVML_SUCCESS);
    assert_int_equal(n, 0);
    assert_int_equal(CALL(fn_v, "nvmlDeviceGetBAR1MemoryInfo"), NVML_ERROR_NOT_SUPPORTED);
    unsigned fan;
    assert_int_equal(CALL(fn_d_pu, "nvmlDeviceGetFanSpeed", d, &fan), NVML_ERROR_NOT_SUPPORTED);
}

static void test_power(void **st)
{
    nvmlDevice_t d0 = gpu(0), d1 = gpu(1);
    unsigned v = 0, lo = 0, hi = 0;
    assert_int_equal(CALL(fn_d_pu, "nvmlDeviceGetPowerUsage", d0, &v), NVML_SUCCESS);
    assert_int_equal(v, 412345);
    assert_int_equal(CALL(fn_d_pu, "nvmlDeviceGetEnforcedPowerLimit", d0, &v), NVML_SUCCESS);
    assert_int_equal(v, 700000);
    assert_int_equal(CALL(fn_d_pu, "nvmlDeviceGetPowerManagementDefaultLimit", d0, &v), NVML_SUCCESS);
    assert_int_equal(v, 700000);
    assert_int_equal(CALL(nvmlReturn_t(*)(nvmlDevice_t, unsigned *, unsigned *),
                          "nvmlDeviceGetPowerManagementLimitConstraints", d0, &lo, &hi), NVML_SUCCESS);
    assert_true(lo == 200000 && hi == 700000);
    unsigned long long e = 1;
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceGetTotalEnergyConsumption", d0, &e), NVML_SUCCESS);
    /* fieldSupport tokens: [N/A] NOT_SUPPORTED, [Insufficient Permissions] NO_PERMISSION, others UNKNOWN */
    assert_int_equal(CALL(nvmlReturn_t(*)(nvmlDevice_t, unsigned *, unsigned *),
                          "nvmlDeviceGetPowerManagementLimitConstraints", d1, &lo, &hi), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(CALL(fn_d_pu, "nvmlDeviceGetPowerManagementLimit", d1, &v), NVML_ERROR_NO_PERMISSION);
    assert_int_equal(CALL(fn_d_pu, "nvmlDeviceGetPowerManagementDefaultLimit", d1, &v), NVML_ERROR_UNKNOWN);
    assert_int_equal(CALL(fn_d_u, "nvmlDeviceSetPowerManagementLimit", d1, 300000), NVML_ERROR_NOT_SUPPORTED);

    /* the setter: the validator's range, in effect at once, one event per call */
    uint64_t events = atomic_load(&seg.h->ring_head);
    assert_int_equal(CALL(fn_d_u, "nvmlDeviceSetPowerManagementLimit", d0, 300000), NVML_SUCCESS);
    assert_int_equal(CALL(fn_d_pu, "nvmlDeviceGetPowerManagementLimit", d0, &v), NVML_SUCCESS);
    assert_int_equal(v, 300000);
    assert_int_equal(CALL(fn_d_u, "nvmlDeviceSetPowerManagementLimit", d0, 199999), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(CALL(fn_d_u, "nvmlDeviceSetPowerManagementLimit", d0, 700001), NVML_ERROR_INVALID_ARGUMENT);
    nvmlPowerValue_v2_t pv = {.version = nvmlPowerValue_v2, .powerScope = 0, .powerValueMw = 450000};
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceSetPowerManagementLimit_v2", d0, &pv), NVML_SUCCESS);
    assert_int_equal(atomic_load(&seg.h->ring_head), events + 4);
    pv.powerScope = 1;
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceSetPowerManagementLimit_v2", d0, &pv), NVML_ERROR_NOT_SUPPORTED);
    pv.powerScope = 0;
    pv.version = 1;
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceSetPowerManagementLimit_v2", d0, &pv),
                     NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    assert_int_equal(CALL(fn_d_pu, "nvmlDeviceGetPowerManagementLimit", d0, &v), NVML_SUCCESS);
    assert_int_equal(v, 450000);

    /* field values: per-field codes, GPU scope only */
    nvmlFieldValue_t f[5] = {{.fieldId = 185}, {.fieldId = 192}, {.fieldId = 187}, {.fieldId = 190, .scopeId = 1},
                             {.fieldId = 1}};
    assert_int_equal(CALL(nvmlReturn_t(*)(nvmlDevice_t, int, nvmlFieldValue_t *), "nvmlDeviceGetFieldValues", d0, 5, f),
                     NVML_SUCCESS);
    assert_true(f[0].nvmlReturn == 0 && f[0].valueType == NVML_VALUE_TYPE_UNSIGNED_INT && f[0].value.uiVal == 412345);
    assert_true(f[1].nvmlReturn == 0 && f[1].value.uiVal == 450000);
    assert_true(f[2].nvmlReturn == 0 && f[2].value.uiVal == 200000);
    assert_int_equal(f[3].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(f[4].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);

    /* without root: refused, unwritten */
    setenv("HWEMU_UNPRIVILEGED", "1", 1);
    assert_int_equal(CALL(fn_v, "nvmlInit_v2"), NVML_SUCCESS);
    assert_int_equal(CALL(fn_d_u, "nvmlDeviceSetPowerManagementLimit", d0, 300000), NVML_ERROR_NO_PERMISSION);
    assert_int_equal(CALL(fn_d_uu, "nvmlDeviceSetGpuLockedClocks", d0, 1950, 1980), NVML_ERROR_NO_PERMISSION);
    assert_int_equal(CALL(fn_d_u, "nvmlDeviceSetPersistenceMode", d0, 0), NVML_ERROR_NO_PERMISSION);
    unsetenv("HWEMU_UNPRIVILEGED");
    assert_int_equal(CALL(fn_v, "nvmlShutdown"), NVML_SUCCESS);
    assert_int_equal(CALL(fn_v, "nvmlInit_v2"), NVML_SUCCESS);
    assert_int_equal(CALL(fn_v, "nvmlShutdown"), NVML_SUCCESS);
    assert_int_equal(CALL(fn_d_pu, "nvmlDeviceGetPowerManagementLimit", d0, &v), NVML_SUCCESS);
    assert_int_equal(v, 450000);
}

static const char *read_file(const char *p, char *buf)
{
    size_t n;
    uint32_t e = seg_lookup(&seg, p, strlen(p));
    const char *t = seg_read(&seg, e, seg_now_ns(), buf, &n);
    memmove(buf, t, n);
    buf[n] = 0;
    return buf;
}

static void test_clocks(void **st)
{
    nvmlDevice_t d = gpu(0);
    char b[SEG_TEXT_MAX];
    unsigned c = 0;
    assert_int_equal(CALL(fn_d_t_pu, "nvmlDeviceGetClockInfo", d, NVML_CLOCK_MEM, &c), NVML_SUCCESS);
    assert_int_equal(c, 2619);
    assert_int_equal(CALL(fn_d_t_pu, "nvmlDeviceGetMaxClockInfo", d, NVML_CLOCK_SM, &c), NVML_SUCCESS);
    assert_int_equal(c, 1980);
    assert_int_equal(CALL(fn_d_t_pu, "nvmlDeviceGetApplicationsClock", d, NVML_CLOCK_GRAPHICS, &c), NVML_ERROR_DEPRECATED);
    unsigned long long r = 0;
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceGetCurrentClocksEventReasons", d, &r), NVML_SUCCESS);
    assert_int_equal(r, 0x4);
    /* the two-call protocol */
    unsigned n = 0, list[8] = {0};
    assert_int_equal(CALL(nvmlReturn_t(*)(nvmlDevice_t, unsigned *, unsigned *), "nvmlDeviceGetSupportedMemoryClocks", d,
                          &n, list), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 1);
    assert_int_equal(list[0], 0); /* nothing written */
    assert_int_equal(CALL(nvmlReturn_t(*)(nvmlDevice_t, unsigned *, unsigned *), "nvmlDeviceGetSupportedMemoryClocks", d,
                          &n, list), NVML_SUCCESS);
    assert_int_equal(list[0], 2619);
    n = 2;
    assert_int_equal(CALL(nvmlReturn_t(*)(nvmlDevice_t, unsigned, unsigned *, unsigned *),
                          "nvmlDeviceGetSupportedGraphicsClocks", d, 2619, &n, list), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 3);
    n = 8;
    assert_int_equal(CALL(nvmlReturn_t(*)(nvmlDevice_t, unsigned, unsigned *, unsigned *),
                          "nvmlDeviceGetSupportedGraphicsClocks", d, 2619, &n, list), NVML_SUCCESS);
    assert_true(n == 3 && list[0] == 1980 && list[2] == 1950);
    assert_int_equal(CALL(nvmlReturn_t(*)(nvmlDevice_t, unsigned, unsigned *, unsigned *),
                          "nvmlDeviceGetSupportedGraphicsClocks", d, 405, &n, list), NVML_ERROR_NOT_FOUND);
    /* locks go through the validator: the driver's clamp, min above max refused */
    assert_int_equal(CALL(fn_d_uu, "nvmlDeviceSetGpuLockedClocks", d, 1950, 2100), NVML_SUCCESS);
    assert_string_equal(read_file("state/nvml/gpu0/locked_gpu_clocks", b), "1950 1980\n");
    assert_int_equal(CALL(fn_d_uu, "nvmlDeviceSetGpuLockedClocks", d, 1980, 1950), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(CALL(fn_d_uu, "nvmlDeviceSetGpuLockedClocks", d, NVML_CLOCK_LIMIT_ID_TDP, NVML_CLOCK_LIMIT_ID_TDP),
                     NVML_SUCCESS);
    assert_string_equal(read_file("state/nvml/gpu0/locked_gpu_clocks", b), "1950 1980\n");
    assert_int_equal(CALL(fn_d_uu, "nvmlDeviceSetGpuLockedClocks", d, 0xffffff07u, 1980), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceResetGpuLockedClocks", d, NULL), NVML_SUCCESS);
    assert_string_equal(read_file("state/nvml/gpu0/locked_gpu_clocks", b), "none\n");
    assert_int_equal(CALL(fn_d_uu, "nvmlDeviceSetMemoryLockedClocks", d, 2619, 2619), NVML_SUCCESS);
    assert_string_equal(read_file("state/nvml/gpu0/locked_memory_clocks", b), "2619 2619\n");
    assert_int_equal(CALL(fn_d_uu, "nvmlDeviceSetApplicationsClocks", d, 2619, 1980), NVML_ERROR_DEPRECATED);
    /* persistence */
    int mode = -1;
    assert_int_equal(CALL(fn_d_u, "nvmlDeviceSetPersistenceMode", d, 0), NVML_SUCCESS);
    assert_int_equal(CALL(fn_d_p, "nvmlDeviceGetPersistenceMode", d, &mode), NVML_SUCCESS);
    assert_int_equal(mode, 0);
    assert_int_equal(CALL(fn_d_u, "nvmlDeviceSetPersistenceMode", d, 2), NVML_ERROR_INVALID_ARGUMENT);
}

/* nvmlInternalGetExportTable: nvidia-smi 535's id, the real size, the entries answered. */
static void test_export_table(void **st)
{
    static const unsigned char id[16] = {0xc4, 0xfe, 0x3e, 0x6c, 0xc9, 0x8f, 0x6c, 0x4e,
                                         0xa3, 0x27, 0xee, 0x69, 0x6e, 0x12, 0xf7, 0xc4};
    static const unsigned char other[16] = {1};
    typedef nvmlReturn_t (*get_t)(const void **, const void *);
    const void **table = NULL;
    assert_int_equal(CALL(get_t, "nvmlInternalGetExportTable", (const void **)&table, other), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(CALL(get_t, "nvmlInternalGetExportTable", NULL, id), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(CALL(get_t, "nvmlInternalGetExportTable", (const void **)&table, id), NVML_SUCCESS);
    assert_int_equal((uintptr_t)table[0], 0x7a8);
    unsigned mw = 0;
    assert_int_equal(((nvmlReturn_t(*)(nvmlDevice_t, unsigned *))(uintptr_t)table[108])(gpu(0), &mw), NVML_SUCCESS);
    assert_int_equal(mw, 700000);
    unsigned count = 500;
    char entries[4128];
    for (int i = 213; i <= 215; i++) {
        count = 500;
        assert_int_equal(((nvmlReturn_t(*)(nvmlDevice_t, unsigned *, void *))(uintptr_t)table[i])(gpu(1), &count, entries),
                         NVML_SUCCESS);
        assert_int_equal(count, 0); /* no processes */
    }
    unsigned mode = 7;
    assert_int_equal(((nvmlReturn_t(*)(nvmlDevice_t, unsigned *))(uintptr_t)table[243])(gpu(0), &mode), NVML_SUCCESS);
    assert_int_equal(mode, 0);
    /* 12 and 75, -i <PCI bus id>: the shapes read from nvidia-smi 535's code (docs/nvml.md) */
    typedef nvmlReturn_t (*parse_t)(const char *, unsigned *, unsigned *, unsigned *, unsigned *);
    typedef nvmlReturn_t (*where_t)(unsigned, unsigned *, unsigned *, unsigned *);
    unsigned dom = 9, bus = 9, dev = 9, fn = 9;
    assert_int_equal(((parse_t)(uintptr_t)table[12])("0001:1a:02.3", &dom, &bus, &dev, &fn), NVML_SUCCESS);
    assert_true(dom == 1 && bus == 0x1a && dev == 2 && fn == 3);
    assert_int_equal(((parse_t)(uintptr_t)table[12])("1a:02.3", &dom, &bus, &dev, &fn), NVML_SUCCESS);
    assert_true(dom == 0 && bus == 0x1a && dev == 2 && fn == 3);
    assert_int_equal(((parse_t)(uintptr_t)table[12])("0:1a:02", &dom, &bus, &dev, &fn), NVML_SUCCESS);
    assert_true(dom == 0 && bus == 0x1a && dev == 2 && fn == 0);
    assert_int_equal(((parse_t)(uintptr_t)table[12])("zz:1", &dom, &bus, &dev, &fn), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(((parse_t)(uintptr_t)table[12])("10:00.0", NULL, &bus, &dev, &fn), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(((where_t)(uintptr_t)table[75])(1, &dom, &bus, &dev), NVML_SUCCESS);
    assert_true(dom == 0 && bus == 0x11 && dev == 0);
    assert_int_equal(((where_t)(uintptr_t)table[75])(2, &dom, &bus, &dev), NVML_ERROR_INVALID_ARGUMENT);
    for (int i = 1; i < 245; i++)
        if (i != 12 && i != 75 && i != 108 && i != 243 && (i < 213 || i > 215))
            assert_int_equal(((nvmlReturn_t(*)(void))(uintptr_t)table[i])(), NVML_ERROR_NOT_SUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init),  cmocka_unit_test(test_symbols), cmocka_unit_test(test_identity),
        cmocka_unit_test(test_state), cmocka_unit_test(test_power),   cmocka_unit_test(test_clocks),
        cmocka_unit_test(test_export_table),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
