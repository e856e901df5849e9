/* amdsmi_api: the AMD SMI entry points libamd_smi.so answers from the node (smi_node): init,
 * sockets and processor handles, identity, power, the energy counter, power caps get and set,
 * temperatures, clocks, activity, memory, the performance level, the gpu_metrics table, and the
 * status strings. Units, sentinels and return codes are the real library's (ROCm 7.0.2, AMD SMI
 * 26.0.2, as its Linux sources of 6.x read them; fakesmi/amdsmi/README.md has the table):
 * before amdsmi_init every call but the version and status ones is NOT_INIT; a handle this
 * library did not give out is INVAL, a NULL output INVAL; what the node has no file for is
 * NOT_SUPPORTED. Handles are small non-pointer numbers (below 2^31, never dereferenced), so
 * a client that passes them as C ints (pyrsmi's ctypes mode) still reaches its GPU. */
#include "amdsmi_abi.h"
#include "gpu_view.h"
#include "rsmi_status.h"
#include "smi_node.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_HANDLE_BASE 0x4d490000u    /* processor handle of GPU i: base + i + 1 */
#define SOCKET_HANDLE_BASE 0x4d530000u /* socket handle of GPU i's socket: base + i + 1 */
#define UNSUPPORTED16 0xFFFFu          /* what the Python layer shows as "N/A" for power and activity */

static atomic_bool initialized;

bool amdsmi_ready(void)
{
    return atomic_load(&initialized);
}

#define CHECK_INIT()                                                                                            \
    do {                                                                                                        \
        if (!atomic_load(&initialized))                                                                         \
            return AMDSMI_STATUS_NOT_INIT;                                                                      \
    } while (0)

/* The GPU behind a processor handle, NULL for one this library did not give out. */
static const struct amd_gpu *gpu_of(amdsmi_processor_handle h)
{
    uintptr_t v = (uintptr_t)h;
    return v > GPU_HANDLE_BASE && v <= GPU_HANDLE_BASE + smi_count() ? smi_gpu((unsigned)(v - GPU_HANDLE_BASE - 1))
                                                                       : NULL;
}

/* The common checks of a GPU call: init, the handle, the output pointer. */
#define GPU_CALL(h, out)                                                                                        \
    CHECK_INIT();                                                                                               \
    const struct amd_gpu *g = gpu_of(h);                                                                        \
    if (!g || !(out))                                                                                           \
        return AMDSMI_STATUS_INVAL

/* A driver errno as amd-smi reports it (rocm_smi's ErrnoToRsmiStatus, then rsmi_status_map). */
static amdsmi_status_t from_errno(int err)
{
    return rsmi_to_amdsmi(rsmi_from_errno(err));
}

static void copy_text(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src);
}

AMDSMI_API amdsmi_status_t amdsmi_init(uint64_t flags)
{
    if (atomic_load(&initialized))
        return AMDSMI_STATUS_SUCCESS;
    if (!(flags & AMDSMI_INIT_AMD_GPUS)) /* only GPUs are emulated: an init for CPUs alone finds no driver */
        return AMDSMI_STATUS_DRIVER_NOT_LOADED;
    if (smi_open("hwemu-amdsmi") != SMI_OPEN)
        return AMDSMI_STATUS_DRIVER_NOT_LOADED;
    atomic_store(&initialized, true);
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_shut_down(void)
{
    atomic_store(&initialized, false);
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_lib_version(amdsmi_version_t *v)
{
    if (!v)
        return AMDSMI_STATUS_INVAL;
    v->major = AMDSMI_LIB_VERSION_MAJOR;
    v->minor = AMDSMI_LIB_VERSION_MINOR;
    v->release = AMDSMI_LIB_VERSION_RELEASE;
    v->build = AMDSMI_LIB_VERSION_STRING;
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_status_code_to_string(amdsmi_status_t status, const char **text)
{
    if (!text)
        return AMDSMI_STATUS_INVAL;
    switch (status) {
    case AMDSMI_STATUS_FAIL_LOAD_MODULE: *text = "FAIL_LOAD_MODULE: Fail to load module."; return AMDSMI_STATUS_SUCCESS;
    case AMDSMI_STATUS_FAIL_LOAD_SYMBOL: *text = "FAIL_LOAD_SYMBOL: Fail to load symbol."; return AMDSMI_STATUS_SUCCESS;
    case AMDSMI_STATUS_DRM_ERROR: *text = "DRM_ERROR: Fail to run function in libdrm."; return AMDSMI_STATUS_SUCCESS;
    default: break;
    }
    /* every other code through rocm_smi's code and its text; one without one is unknown */
    uint32_t r;
    if (!rsmi_from_amdsmi(status, &r)) {
        *text = "An unknown error occurred";
        return AMDSMI_STATUS_UNKNOWN_ERROR;
    }
    *text = rsmi_text(r);
    return AMDSMI_STATUS_SUCCESS;
}

/* ---- Sockets and processors: one socket per GPU, as the real library groups them ---- */

AMDSMI_API amdsmi_status_t amdsmi_get_socket_handles(uint32_t *count, amdsmi_socket_handle *handles)
{
    CHECK_INIT();
    if (!count)
        return AMDSMI_STATUS_INVAL;
    if (!handles) {
        *count = smi_count();
        return AMDSMI_STATUS_SUCCESS;
    }
    if (*count > smi_count())
        *count = smi_count();
    for (uint32_t i = 0; i < *count; i++)
        handles[i] = (amdsmi_socket_handle)(uintptr_t)(SOCKET_HANDLE_BASE + i + 1);
    return AMDSMI_STATUS_SUCCESS;
}

/* The GPU a socket handle stands for, NULL for a foreign handle. */
static const struct amd_gpu *socket_gpu(amdsmi_socket_handle s)
{
    uintptr_t v = (uintptr_t)s;
    return v > SOCKET_HANDLE_BASE && v <= SOCKET_HANDLE_BASE + smi_count()
               ? smi_gpu((unsigned)(v - SOCKET_HANDLE_BASE - 1))
               : NULL;
}

AMDSMI_API amdsmi_status_t amdsmi_get_socket_info(amdsmi_socket_handle s, size_t len, char *name)
{
    CHECK_INIT();
    const struct amd_gpu *g = socket_gpu(s);
    if (!g || !name)
        return AMDSMI_STATUS_INVAL;
    unsigned d = 0, b = 0, dev = 0;
    sscanf(g->bdf, "%x:%x:%x", &d, &b, &dev);
    char id[32];
    snprintf(id, sizeof id, "%04X:%02X:%02X", d, b, dev); /* the socket id: the BDF without the function */
    strncpy(name, id, len);
    return AMDSMI_STATUS_SUCCESS;
}

/* Copies the processors of a socket (its one GPU, when of the type asked) as the real library
 * does: a NULL array asks for the count, a short one gets what fits. */
static amdsmi_status_t socket_processors(amdsmi_socket_handle s, bool of_type, uint32_t *count,
                                         amdsmi_processor_handle *handles)
{
    CHECK_INIT();
    if (!count)
        return AMDSMI_STATUS_INVAL;
    const struct amd_gpu *g = socket_gpu(s);
    if (!g)
        return AMDSMI_STATUS_INVAL;
    uint32_t n = of_type ? 1 : 0;
    if (!handles) {
        *count = n;
        return AMDSMI_STATUS_SUCCESS;
    }
    if (*count > n)
        *count = n;
    if (*count)
        handles[0] = (amdsmi_processor_handle)(uintptr_t)(GPU_HANDLE_BASE + (unsigned)g->index + 1);
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_processor_handles(amdsmi_socket_handle s, uint32_t *count,
                                                        amdsmi_processor_handle *handles)
{
    return socket_processors(s, true, count, handles);
}

AMDSMI_API amdsmi_status_t amdsmi_get_processor_handles_by_type(amdsmi_socket_handle s, processor_type_t type,
                                                                amdsmi_processor_handle *handles, uint32_t *count)
{
    return socket_processors(s, type == AMDSMI_PROCESSOR_TYPE_AMD_GPU, count, handles);
}

AMDSMI_API amdsmi_status_t amdsmi_get_processor_type(amdsmi_processor_handle h, processor_type_t *type)
{
    GPU_CALL(h, type);
    *type = AMDSMI_PROCESSOR_TYPE_AMD_GPU;
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_processor_info(amdsmi_processor_handle h, size_t len, char *name)
{
    GPU_CALL(h, name);
    char id[16];
    snprintf(id, sizeof id, "%d", g->index);
    strncpy(name, id, len);
    return AMDSMI_STATUS_SUCCESS;
}

/* The GPU's PCI address as amdsmi_bdf_t. */
static amdsmi_bdf_t bdf_of(const struct amd_gpu *g)
{
    unsigned d = 0, b = 0, dev = 0, f = 0;
    sscanf(g->bdf, "%x:%x:%x.%x", &d, &b, &dev, &f);
    amdsmi_bdf_t r = {.as_uint = 0};
    r.domain_number = d;
    r.bus_number = b & 0xff;
    r.device_number = dev & 0x1f;
    r.function_number = f & 7;
    return r;
}

AMDSMI_API amdsmi_status_t amdsmi_get_processor_handle_from_bdf(amdsmi_bdf_t bdf, amdsmi_processor_handle *h)
{
    CHECK_INIT();
    if (!h)
        return AMDSMI_STATUS_INVAL;
    for (unsigned i = 0; i < smi_count(); i++)
        if (bdf_of(smi_gpu(i)).as_uint == bdf.as_uint) {
            *h = (amdsmi_processor_handle)(uintptr_t)(GPU_HANDLE_BASE + i + 1);
            return AMDSMI_STATUS_SUCCESS;
        }
    return AMDSMI_STATUS_API_FAILED;
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_device_bdf(amdsmi_processor_handle h, amdsmi_bdf_t *bdf)
{
    GPU_CALL(h, bdf);
    *bdf = bdf_of(g);
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_bdf_id(amdsmi_processor_handle h, uint64_t *id)
{
    GPU_CALL(h, id);
    amdsmi_bdf_t b = bdf_of(g); /* rocm_smi's BDFID: domain << 32 | bus << 8 | device << 3 | function */
    *id = (uint64_t)b.domain_number << 32 | (uint64_t)b.bus_number << 8 | (uint64_t)b.device_number << 3 |
          b.function_number;
    return AMDSMI_STATUS_SUCCESS;
}

/* ---- Identity ---- */

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_device_uuid(amdsmi_processor_handle h, unsigned int *len, char *uuid)
{
    GPU_CALL(h, len);
    if (!uuid || *len < AMDSMI_GPU_UUID_SIZE)
        return AMDSMI_STATUS_INVAL;
    char text[37];
    amd_uuid(g, text);
    copy_text(uuid, *len, text);
    return AMDSMI_STATUS_SUCCESS;
}

/* The KFD topology properties of the GPU (matched by location_id = bus << 8): one property. */
static bool kfd_property(const struct amd_gpu *g, const char *key, long long *v)
{
    amdsmi_bdf_t b = bdf_of(g);
    for (int k = 0; k < 64; k++) {
        char text[4096], path[96];
        snprintf(path, sizeof path, "sys/class/kfd/kfd/topology/nodes/%d/properties", k);
        if (gv_read(path, text, sizeof text) <= 0)
            continue;
        long long loc = -1, want = -1;
        size_t klen = strlen(key);
        for (const char *line = text; *line;) {
            size_t n = strcspn(line, "\n");
            if (!strncmp(line, "location_id ", 12))
                loc = strtoll(line + 12, NULL, 10);
            if (!strncmp(line, key, klen) && line[klen] == ' ')
                want = strtoll(line + klen + 1, NULL, 10);
            line += n + (line[n] == '\n');
        }
        if (loc == (long long)(b.bus_number << 8 | b.device_number << 3 | b.function_number) && want >= 0) {
            *v = want;
            return true;
        }
    }
    return false;
}

/* The gfx target as the real library encodes it: the digits of "gfx942" read as hex (0x942). */
static uint64_t gfx_target(const struct amd_gpu *g)
{
    char text[32];
    if (gv_readf(text, sizeof text, "state/amdgpu/card%d/gfx_version", g->card) <= 0 || strncmp(text, "gfx", 3))
        return UINT64_MAX;
    return strtoull(text + 3, NULL, 16);
}

#define AMD_VENDOR_NAME "Advanced Micro Devices Inc. [AMD/ATI]"

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_asic_info(amdsmi_processor_handle h, amdsmi_asic_info_t *info)
{
    GPU_CALL(h, info);
    memset(info, 0, sizeof *info);
    unsigned v;
    long long simd = 0, arrays = 0, cus = 0;
    amd_dev_read(g, "product_name", info->market_name, sizeof info->market_name);
    info->vendor_id = smi_dev_hex(g, "vendor", &v) ? v : 0;
    copy_text(info->vendor_name, sizeof info->vendor_name, AMD_VENDOR_NAME);
    info->subvendor_id = smi_dev_hex(g, "subsystem_vendor", &v) ? v : UINT32_MAX;
    info->device_id = smi_dev_hex(g, "device", &v) ? v : 0;
    info->rev_id = smi_dev_hex(g, "revision", &v) ? v : 0;
    snprintf(info->asic_serial, sizeof info->asic_serial, "0x%016llX", (unsigned long long)amd_serial(g));
    info->oam_id = UINT32_MAX; /* no XGMI physical id on these nodes */
    info->num_of_compute_units = kfd_property(g, "simd_arrays_per_engine", &simd) &&
                                         kfd_property(g, "array_count", &arrays) &&
                                         kfd_property(g, "cu_per_simd_array", &cus)
                                     ? (uint32_t)(simd * arrays * cus)
                                     : UINT32_MAX;
    info->target_graphics_version = gfx_target(g);
    info->subsystem_id = smi_dev_hex(g, "subsystem_device", &v) ? v : UINT32_MAX;
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_board_info(amdsmi_processor_handle h, amdsmi_board_info_t *info)
{
    GPU_CALL(h, info);
    memset(info, 0, sizeof *info);
    amd_dev_read(g, "product_name", info->product_name, sizeof info->product_name);
    snprintf(info->product_serial, sizeof info->product_serial, "%016llX", (unsigned long long)amd_serial(g));
    copy_text(info->manufacturer_name, sizeof info->manufacturer_name, AMD_VENDOR_NAME);
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_enumeration_info(amdsmi_processor_handle h, amdsmi_enumeration_info_t *info)
{
    GPU_CALL(h, info);
    memset(info, 0, sizeof *info);
    info->drm_card = (uint32_t)g->card;
    info->drm_render = 128 + (uint32_t)g->card;
    info->hsa_id = (uint32_t)amd_node_id(g);
    info->hip_id = (uint32_t)g->index;
    snprintf(info->hip_uuid, sizeof info->hip_uuid, "GPU-%016llx", (unsigned long long)amd_serial(g));
    return AMDSMI_STATUS_SUCCESS;
}

/* A 16-bit PCI id of the GPU (device, revision, subsystem device, subsystem vendor). */
static amdsmi_status_t pci_u16(amdsmi_processor_handle h, const char *attr, uint16_t *out)
{
    GPU_CALL(h, out);
    unsigned v;
    if (!smi_dev_hex(g, attr, &v))
        return AMDSMI_STATUS_NOT_SUPPORTED;
    *out = (uint16_t)v;
    return AMDSMI_STATUS_SUCCESS;
}

/* A decimal attribute of the GPU's PCI device (numa_node, gpu_busy_percent). */
static amdsmi_status_t dev_u32(amdsmi_processor_handle h, const char *attr, uint32_t *out)
{
    GPU_CALL(h, out);
    long long v;
    if (!smi_dev_ll(g, attr, &v))
        return AMDSMI_STATUS_NOT_SUPPORTED;
    *out = (uint32_t)v;
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_id(amdsmi_processor_handle h, uint16_t *id)
{
    return pci_u16(h, "device", id);
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_revision(amdsmi_processor_handle h, uint16_t *rev)
{
    return pci_u16(h, "revision", rev);
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_subsystem_id(amdsmi_processor_handle h, uint16_t *id)
{
    return pci_u16(h, "subsystem_device", id);
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_vendor_name(amdsmi_processor_handle h, char *name, size_t len)
{
    GPU_CALL(h, name);
    if (len < sizeof AMD_VENDOR_NAME)
        return AMDSMI_STATUS_INSUFFICIENT_SIZE;
    copy_text(name, len, AMD_VENDOR_NAME);
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_vbios_info(amdsmi_processor_handle h, amdsmi_vbios_info_t *info)
{
    GPU_CALL(h, info);
    memset(info, 0, sizeof *info);
    if (!amd_dev_read(g, "vbios_version", info->version, sizeof info->version))
        return AMDSMI_STATUS_NOT_SUPPORTED;
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_driver_info(amdsmi_processor_handle h, amdsmi_driver_info_t *info)
{
    GPU_CALL(h, info);
    memset(info, 0, sizeof *info);
    copy_text(info->driver_name, sizeof info->driver_name, "amdgpu");
    if (gv_read("sys/module/amdgpu/version", info->driver_version, sizeof info->driver_version) < 0)
        info->driver_version[0] = 0;
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_kfd_info(amdsmi_processor_handle h, amdsmi_kfd_info_t *info)
{
    GPU_CALL(h, info);
    memset(info, 0, sizeof *info);
    info->kfd_id = amd_kfd_id(g);
    info->node_id = (uint32_t)amd_node_id(g);
    info->current_partition_id = 0;
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_topo_get_numa_node_number(amdsmi_processor_handle h, uint32_t *node)
{
    return dev_u32(h, "numa_node", node);
}

/* ---- Power and energy ---- */

AMDSMI_API amdsmi_status_t amdsmi_get_power_info(amdsmi_processor_handle h, amdsmi_power_info_t *info)
{
    GPU_CALL(h, info);
    memset(info, 0, sizeof *info);
    long long uw, mv, cap;
    /* each reading the GPU does not have stays 0xFFFF: MI300X has only the current socket power
     * (power1_input), the others only the average (power1_average) */
    info->current_socket_power = amd_hwmon_ll(g, "power1_input", &uw) ? (uint32_t)(uw / 1000000) : UNSUPPORTED16;
    info->average_socket_power = amd_hwmon_ll(g, "power1_average", &uw) ? (uint32_t)(uw / 1000000) : UNSUPPORTED16;
    info->socket_power = info->current_socket_power != UNSUPPORTED16 ? info->current_socket_power
                                                                       : info->average_socket_power;
    info->gfx_voltage = amd_hwmon_ll(g, "in0_input", &mv) ? (uint64_t)mv : UNSUPPORTED16;
    info->soc_voltage = UNSUPPORTED16;
    info->mem_voltage = UNSUPPORTED16;
    if (!amd_hwmon_ll(g, "power1_cap", &cap)) { /* the call's status is the cap's read */
        info->power_limit = UNSUPPORTED16;
        return AMDSMI_STATUS_NOT_SUPPORTED;
    }
    info->power_limit = (uint32_t)cap;
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_is_gpu_power_management_enabled(amdsmi_processor_handle h, bool *enabled)
{
    GPU_CALL(h, enabled);
    long long cap;
    *enabled = amd_hwmon_ll(g, "power1_cap", &cap); /* a DPM-managed GPU shows its power cap */
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_energy_count(amdsmi_processor_handle h, uint64_t *energy, float *resolution,
                                                   uint64_t *timestamp)
{
    GPU_CALL(h, energy);
    if (!resolution || !timestamp)
        return AMDSMI_STATUS_INVAL;
    if (!smi_energy(g, energy, timestamp))
        return AMDSMI_STATUS_NOT_SUPPORTED;
    *resolution = SMI_ENERGY_RESOLUTION_UJ;
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_power_cap_info(amdsmi_processor_handle h, uint32_t sensor,
                                                     amdsmi_power_cap_info_t *info)
{
    GPU_CALL(h, info);
    memset(info, 0, sizeof *info);
    static const char *const suffix[] = {"", "_default", "_min", "_max"};
    uint64_t *field[] = {&info->power_cap, &info->default_power_cap, &info->min_power_cap, &info->max_power_cap};
    bool any = false;
    for (int i = 0; i < 4; i++) {
        char attr[32];
        long long uw;
        /* the default is always power1's, as rocm_smi reads it */
        snprintf(attr, sizeof attr, "power%u_cap%s", i == 1 ? 1 : sensor + 1, suffix[i]);
        if (sensor < 8 && amd_hwmon_ll(g, attr, &uw)) {
            *field[i] = (uint64_t)uw;
            any = true;
        }
    }
    unsigned levels[16];
    int current;
    int n = amd_dpm_levels(g, "sclk", levels, 16, &current);
    info->dpm_cap = n > 0 ? (uint64_t)(n - 1) : 0; /* the highest sclk level */
    return any ? AMDSMI_STATUS_SUCCESS : AMDSMI_STATUS_NOT_SUPPORTED;
}

AMDSMI_API amdsmi_status_t amdsmi_set_power_cap(amdsmi_processor_handle h, uint32_t sensor, uint64_t cap)
{
    CHECK_INIT();
    const struct amd_gpu *g = gpu_of(h);
    if (!g)
        return AMDSMI_STATUS_INVAL;
    return from_errno(smi_cap_set(g, sensor, cap));
}

/* ---- Temperatures, clocks, activity ---- */

AMDSMI_API amdsmi_status_t amdsmi_get_temp_metric(amdsmi_processor_handle h, amdsmi_temperature_type_t sensor,
                                                  amdsmi_temperature_metric_t metric, int64_t *temperature)
{
    GPU_CALL(h, temperature);
    long long mc;
    if (!smi_temp(g, sensor, metric, &mc))
        return AMDSMI_STATUS_NOT_SUPPORTED;
    *temperature = mc / 1000; /* whole degrees C, as the library divides rocm_smi's m degrees */
    return AMDSMI_STATUS_SUCCESS;
}

/* The pp_dpm table of a clock type; NULL for a type the library has no table for. */
static const char *dpm_table(amdsmi_clk_type_t type)
{
    switch (type) {
    case AMDSMI_CLK_TYPE_SYS: return "sclk";
    case AMDSMI_CLK_TYPE_MEM: return "mclk";
    case AMDSMI_CLK_TYPE_DF: return "fclk";
    case AMDSMI_CLK_TYPE_DCEF: return "dcefclk";
    case AMDSMI_CLK_TYPE_SOC: return "socclk";
    case AMDSMI_CLK_TYPE_VCLK0: return "vclk";
    case AMDSMI_CLK_TYPE_VCLK1: return "vclk1";
    case AMDSMI_CLK_TYPE_DCLK0: return "dclk";
    case AMDSMI_CLK_TYPE_DCLK1: return "dclk1";
    default: return NULL;
    }
}

AMDSMI_API amdsmi_status_t amdsmi_get_clock_info(amdsmi_processor_handle h, amdsmi_clk_type_t type,
                                                 amdsmi_clk_info_t *info)
{
    GPU_CALL(h, info);
    const char *table = dpm_table(type);
    if (!table || type == AMDSMI_CLK_TYPE_DF || type == AMDSMI_CLK_TYPE_DCEF || type == AMDSMI_CLK_TYPE_SOC)
        return AMDSMI_STATUS_INVAL; /* amdsmi_get_clock_info takes GFX, MEM, VCLK and DCLK only */
    unsigned mhz[AMDSMI_MAX_NUM_FREQUENCIES];
    int current, n = amd_dpm_levels(g, table, mhz, AMDSMI_MAX_NUM_FREQUENCIES, &current);
    if (n <= 0)
        return AMDSMI_STATUS_API_FAILED; /* the sysfs table is missing */
    memset(info, 0, sizeof *info);
    info->min_clk = info->max_clk = mhz[0];
    for (int i = 1; i < n; i++) {
        info->min_clk = mhz[i] < info->min_clk ? mhz[i] : info->min_clk;
        info->max_clk = mhz[i] > info->max_clk ? mhz[i] : info->max_clk;
    }
    info->clk = current >= 0 ? mhz[current] : UINT32_MAX;
    info->clk_locked = 0;
    info->clk_deep_sleep = UINT8_MAX; /* no "S:" level in the table */
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_clk_freq(amdsmi_processor_handle h, amdsmi_clk_type_t type,
                                               amdsmi_frequencies_t *f)
{
    GPU_CALL(h, f);
    const char *table = dpm_table(type);
    if (!table)
        return AMDSMI_STATUS_INVAL;
    unsigned mhz[AMDSMI_MAX_NUM_FREQUENCIES];
    int current, n = amd_dpm_levels(g, table, mhz, AMDSMI_MAX_NUM_FREQUENCIES, &current);
    if (n <= 0)
        return AMDSMI_STATUS_NOT_SUPPORTED;
    memset(f, 0, sizeof *f);
    f->num_supported = (uint32_t)n;
    f->current = current >= 0 ? (uint32_t)current : 0;
    for (int i = 0; i < n; i++)
        f->frequency[i] = (uint64_t)mhz[i] * 1000000; /* Hz */
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_busy_percent(amdsmi_processor_handle h, uint32_t *pct)
{
    return dev_u32(h, "gpu_busy_percent", pct);
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_activity(amdsmi_processor_handle h, amdsmi_engine_usage_t *info)
{
    GPU_CALL(h, info);
    memset(info, 0, sizeof *info);
    long long v;
    info->gfx_activity = smi_dev_ll(g, "gpu_busy_percent", &v) ? (uint32_t)v : UNSUPPORTED16;
    info->umc_activity = smi_dev_ll(g, "mem_busy_percent", &v) ? (uint32_t)v : UNSUPPORTED16;
    info->mm_activity = UNSUPPORTED16;
    return AMDSMI_STATUS_SUCCESS;
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_perf_level(amdsmi_processor_handle h, amdsmi_dev_perf_level_t *level)
{
    GPU_CALL(h, level);
    return smi_perf_level(g, level) ? AMDSMI_STATUS_SUCCESS : AMDSMI_STATUS_NOT_SUPPORTED;
}

AMDSMI_API amdsmi_status_t amdsmi_set_gpu_perf_level(amdsmi_processor_handle h, amdsmi_dev_perf_level_t level)
{
    CHECK_INIT();
    const struct amd_gpu *g = gpu_of(h);
    if (!g)
        return AMDSMI_STATUS_INVAL;
    return from_errno(smi_perf_level_set(g, level));
}

/* ---- Memory and processes ---- */

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_vram_usage(amdsmi_processor_handle h, amdsmi_vram_usage_t *info)
{
    GPU_CALL(h, info);
    long long total, used;
    if (!smi_dev_ll(g, "mem_info_vram_total", &total) || !smi_dev_ll(g, "mem_info_vram_used", &used))
        return AMDSMI_STATUS_NOT_SUPPORTED;
    memset(info, 0, sizeof *info);
    info->vram_total = (uint32_t)(total / (1024 * 1024));
    info->vram_used = (uint32_t)(used / (1024 * 1024));
    return AMDSMI_STATUS_SUCCESS;
}

/* The GPU's memory of a type, bytes. Only VRAM is on the node. */
static amdsmi_status_t memory(amdsmi_processor_handle h, amdsmi_memory_type_t type, const char *what, uint64_t *out)
{
    GPU_CALL(h, out);
    if (type > AMDSMI_MEM_TYPE_GTT)
        return AMDSMI_STATUS_INVAL;
    return smi_memory(g, type, what, out) ? AMDSMI_STATUS_SUCCESS : AMDSMI_STATUS_NOT_SUPPORTED;
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_memory_total(amdsmi_processor_handle h, amdsmi_memory_type_t type,
                                                       uint64_t *total)
{
    return memory(h, type, "total", total);
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_memory_usage(amdsmi_processor_handle h, amdsmi_memory_type_t type,
                                                       uint64_t *used)
{
    return memory(h, type, "used", used);
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_process_list(amdsmi_processor_handle h, uint32_t *max, void *list)
{
    GPU_CALL(h, max);
    (void)list;  /* the emulated GPUs run no process: nothing is written */
    *max = 0;
    return AMDSMI_STATUS_SUCCESS;
}

/* amdsmi_free_name_value_pairs frees what the library allocated for a caller; this one never
 * allocates for one. */
AMDSMI_API void amdsmi_free_name_value_pairs(void *p)
{
    (void)p;
}

/* ---- gpu_metrics ---- */

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_metrics_header_info(amdsmi_processor_handle h,
                                                              amd_metrics_table_header_t *hdr)
{
    GPU_CALL(h, hdr);
    hdr->structure_size = sizeof(amdsmi_gpu_metrics_t);
    hdr->format_revision = 1;
    hdr->content_revision = 4;
    return AMDSMI_STATUS_SUCCESS;
}

/* A degrees C reading of a sensor for the table, 0xFFFF when the GPU has none. */
static uint16_t metric_temp(const struct amd_gpu *g, unsigned sensor)
{
    long long mc;
    return smi_temp(g, sensor, 0, &mc) ? (uint16_t)(mc / 1000) : UNSUPPORTED16;
}

/* The current level of a clock's table, MHz, 0xFFFF when it has none. */
static uint16_t metric_clock(const struct amd_gpu *g, const char *clk)
{
    unsigned mhz[AMDSMI_MAX_NUM_FREQUENCIES];
    int current, n = amd_dpm_levels(g, clk, mhz, AMDSMI_MAX_NUM_FREQUENCIES, &current);
    return n > 0 && current >= 0 ? (uint16_t)mhz[current] : UNSUPPORTED16;
}

AMDSMI_API amdsmi_status_t amdsmi_get_gpu_metrics_info(amdsmi_processor_handle h, amdsmi_gpu_metrics_t *m)
{
    GPU_CALL(h, m);
    memset(m, 0xFF, sizeof *m); /* every field the GPU does not report: all ones, as the driver presets it */
    amdsmi_get_gpu_metrics_header_info(h, &m->common_header);
    m->temperature_edge = metric_temp(g, 0);
    m->temperature_hotspot = metric_temp(g, 1);
    m->temperature_mem = metric_temp(g, 2);
    long long v;
    if (smi_dev_ll(g, "gpu_busy_percent", &v))
        m->average_gfx_activity = (uint16_t)v;
    if (amd_hwmon_ll(g, "power1_average", &v))
        m->average_socket_power = (uint16_t)(v / 1000000);
    if (amd_hwmon_ll(g, "power1_input", &v))
        m->current_socket_power = (uint16_t)(v / 1000000);
    uint64_t counts, ns;
    if (smi_energy(g, &counts, &ns)) {
        m->energy_accumulator = counts;
        m->system_clock_counter = ns;
    }
    m->current_gfxclk = metric_clock(g, "sclk");
    m->current_uclk = metric_clock(g, "mclk");
    return AMDSMI_STATUS_SUCCESS;
}
