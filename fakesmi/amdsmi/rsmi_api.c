/* rsmi_api: the ROCm SMI entry points librocm_smi64.so answers from the node (smi_node):
 * init, the device list, identity, power (average, current socket, either), the energy
 * counter, power caps get and set, temperatures, clocks, busy percent, memory, the performance
 * level and the status strings. Devices are numbered as rocm-smi numbers them; before
 * rsmi_init the list is empty, so every device call is INVALID_ARGS, as in the real library.
 * A reading the node has no file for is NOT_SUPPORTED (rocm_smi reads a missing sysfs file as
 * ENOENT): rsmi_dev_power_ave_get on an MI300X, which has only power1_input, is one, as on the
 * real machine. ABI: rocm_smi.h of ROCm 6.1 and later (library major 7). */
#include "gpu_view.h"
#include "rsmi_abi.h"
#include "rsmi_status.h"
#include "smi_node.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

static _Atomic int refs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

bool rsmi_ready(void)
{
    return atomic_load(&refs) > 0;
}

/* Device dv of an initialised library, NULL otherwise (the caller's INVALID_ARGS). */
static const struct amd_gpu *dev(uint32_t dv)
{
    return rsmi_ready() ? smi_gpu(dv) : NULL;
}

#define DEV_CALL(dv, out)                                                                                       \
    const struct amd_gpu *g = dev(dv);                                                                          \
    if (!g || !(out))                                                                                           \
        return RSMI_STATUS_INVALID_ARGS

RSMI_API rsmi_status_t rsmi_init(uint64_t flags)
{
    (void)flags; /* RSMI_INIT_FLAG_ALL_GPUS and the others: the node's AMD GPUs either way */
    pthread_mutex_lock(&lock);
    enum smi_open o = smi_open("hwemu-rocmsmi");
    if (o == SMI_OPEN || o == SMI_NO_AMD_GPU) /* no AMD GPU: an empty device list, as on such a machine */
        atomic_fetch_add(&refs, 1);
    pthread_mutex_unlock(&lock);
    return o == SMI_NO_NODE ? RSMI_STATUS_INIT_ERROR : RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_shut_down(void)
{
    int r = atomic_load(&refs);
    while (r > 0 && !atomic_compare_exchange_weak(&refs, &r, r - 1))
        ;
    return RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_num_monitor_devices(uint32_t *n)
{
    if (!n)
        return RSMI_STATUS_INVALID_ARGS;
    *n = rsmi_ready() ? smi_count() : 0;
    return RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_version_get(rsmi_version_t *v)
{
    if (!v)
        return RSMI_STATUS_INVALID_ARGS;
    v->major = RSMI_LIB_VERSION_MAJOR;
    v->minor = RSMI_LIB_VERSION_MINOR;
    v->patch = RSMI_LIB_VERSION_PATCH;
    v->build = RSMI_LIB_VERSION_STRING;
    return RSMI_STATUS_SUCCESS;
}

/* rsmi_version_str_get(RSMI_SW_COMP_DRIVER): the amdgpu module's version, else the kernel's
 * release (what the real library falls back to for an in-tree amdgpu). */
RSMI_API rsmi_status_t rsmi_version_str_get(uint32_t component, char *buf, uint32_t len)
{
    if (!buf || !len || component != 0)
        return RSMI_STATUS_INVALID_ARGS;
    char text[128];
    struct utsname u;
    if (gv_read("sys/module/amdgpu/version", text, sizeof text) <= 0)
        snprintf(text, sizeof text, "%s", uname(&u) ? "" : u.release);
    if (strlen(text) + 1 > len)
        return RSMI_STATUS_INSUFFICIENT_SIZE;
    memcpy(buf, text, strlen(text) + 1);
    return RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_status_string(rsmi_status_t status, const char **text)
{
    if (!text)
        return RSMI_STATUS_INVALID_ARGS;
    *text = rsmi_text(status);
    if (!*text) {
        *text = "An unknown error occurred";
        return RSMI_STATUS_UNKNOWN_ERROR;
    }
    return RSMI_STATUS_SUCCESS;
}

/* ---- Identity ---- */

static rsmi_status_t pci_u16(uint32_t dv, const char *attr, uint16_t *out)
{
    DEV_CALL(dv, out);
    unsigned v;
    if (!smi_dev_hex(g, attr, &v))
        return RSMI_STATUS_NOT_SUPPORTED;
    *out = (uint16_t)v;
    return RSMI_STATUS_SUCCESS;
}

/* A decimal attribute of the GPU's PCI device (numa_node, gpu_busy_percent, ...). */
static rsmi_status_t dev_u32(uint32_t dv, const char *attr, uint32_t *out)
{
    DEV_CALL(dv, out);
    long long v;
    if (!smi_dev_ll(g, attr, &v))
        return RSMI_STATUS_NOT_SUPPORTED;
    *out = (uint32_t)v;
    return RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_dev_id_get(uint32_t dv, uint16_t *id)
{
    return pci_u16(dv, "device", id);
}

RSMI_API rsmi_status_t rsmi_dev_vendor_id_get(uint32_t dv, uint16_t *id)
{
    return pci_u16(dv, "vendor", id);
}

RSMI_API rsmi_status_t rsmi_dev_revision_get(uint32_t dv, uint16_t *rev)
{
    return pci_u16(dv, "revision", rev);
}

RSMI_API rsmi_status_t rsmi_dev_subsystem_id_get(uint32_t dv, uint16_t *id)
{
    return pci_u16(dv, "subsystem_device", id);
}

RSMI_API rsmi_status_t rsmi_dev_subsystem_vendor_id_get(uint32_t dv, uint16_t *id)
{
    return pci_u16(dv, "subsystem_vendor", id);
}

/* Copies text into the caller's buffer: INSUFFICIENT_SIZE (truncated, as the real library
 * leaves it) when it does not fit with its NUL. */
static rsmi_status_t copy_out(const char *text, char *buf, size_t len)
{
    if (!len)
        return RSMI_STATUS_INVALID_ARGS;
    snprintf(buf, len, "%s", text);
    return strlen(text) + 1 > len ? RSMI_STATUS_INSUFFICIENT_SIZE : RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_dev_name_get(uint32_t dv, char *name, size_t len)
{
    DEV_CALL(dv, name);
    char text[256];
    if (!amd_dev_read(g, "product_name", text, sizeof text))
        return RSMI_STATUS_NOT_SUPPORTED;
    return copy_out(text, name, len);
}

RSMI_API rsmi_status_t rsmi_dev_brand_get(uint32_t dv, char *brand, uint32_t len)
{
    return rsmi_dev_name_get(dv, brand, len);
}

RSMI_API rsmi_status_t rsmi_dev_vendor_name_get(uint32_t dv, char *name, size_t len)
{
    DEV_CALL(dv, name);
    return copy_out("Advanced Micro Devices, Inc. [AMD/ATI]", name, len);
}

RSMI_API rsmi_status_t rsmi_dev_serial_number_get(uint32_t dv, char *serial, uint32_t len)
{
    DEV_CALL(dv, serial);
    char text[32];
    snprintf(text, sizeof text, "%016llX", (unsigned long long)amd_serial(g));
    return copy_out(text, serial, len);
}

RSMI_API rsmi_status_t rsmi_dev_unique_id_get(uint32_t dv, uint64_t *id)
{
    DEV_CALL(dv, id);
    *id = amd_serial(g);
    return RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv, uint64_t *bdfid)
{
    DEV_CALL(dv, bdfid);
    unsigned d = 0, b = 0, device = 0, f = 0;
    sscanf(g->bdf, "%x:%x:%x.%x", &d, &b, &device, &f);
    *bdfid = (uint64_t)d << 32 | b << 8 | (device & 0x1f) << 3 | (f & 7);
    return RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_dev_drm_render_minor_get(uint32_t dv, uint32_t *minor)
{
    DEV_CALL(dv, minor);
    *minor = 128 + (uint32_t)g->card;
    return RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_topo_get_numa_node_number(uint32_t dv, uint32_t *node)
{
    return dev_u32(dv, "numa_node", node);
}

/* ---- Power, energy, caps ---- */

/* A hwmon value of power sensor s (power<s+1>_<what>), uW. */
static rsmi_status_t hwmon_power(uint32_t dv, uint32_t s, const char *what, uint64_t *out)
{
    DEV_CALL(dv, out);
    char attr[48];
    long long v;
    snprintf(attr, sizeof attr, "power%u_%s", s + 1, what);
    if (s > 8 || !amd_hwmon_ll(g, attr, &v))
        return RSMI_STATUS_NOT_SUPPORTED;
    *out = (uint64_t)v;
    return RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_dev_power_ave_get(uint32_t dv, uint32_t sensor, uint64_t *uw)
{
    return hwmon_power(dv, sensor, "average", uw);
}

/* power1_input, which rocm_smi reads only when power1_label is PPT. */
RSMI_API rsmi_status_t rsmi_dev_current_socket_power_get(uint32_t dv, uint64_t *uw)
{
    DEV_CALL(dv, uw);
    char label[16];
    if (!g->hwmon[0] || gv_readf(label, sizeof label, "%s/power1_label", g->hwmon) < 0 || strcmp(label, "PPT"))
        return RSMI_STATUS_NOT_SUPPORTED;
    return hwmon_power(dv, 0, "input", uw);
}

RSMI_API rsmi_status_t rsmi_dev_power_get(uint32_t dv, uint64_t *uw, RSMI_POWER_TYPE *type)
{
    if (!type)
        return RSMI_STATUS_INVALID_ARGS;
    rsmi_status_t r = rsmi_dev_current_socket_power_get(dv, uw);
    if (r == RSMI_STATUS_SUCCESS) {
        *type = RSMI_CURRENT_POWER;
        return r;
    }
    if (r == RSMI_STATUS_INVALID_ARGS)
        return r;
    r = rsmi_dev_power_ave_get(dv, 0, uw);
    *type = r == RSMI_STATUS_SUCCESS ? RSMI_AVERAGE_POWER : RSMI_INVALID_POWER;
    return r;
}

RSMI_API rsmi_status_t rsmi_dev_energy_count_get(uint32_t dv, uint64_t *count, float *resolution, uint64_t *timestamp)
{
    DEV_CALL(dv, count);
    if (!resolution || !timestamp)
        return RSMI_STATUS_INVALID_ARGS;
    if (!smi_energy(g, count, timestamp))
        return RSMI_STATUS_NOT_SUPPORTED;
    *resolution = SMI_ENERGY_RESOLUTION_UJ;
    return RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_dev_power_cap_get(uint32_t dv, uint32_t sensor, uint64_t *cap)
{
    return hwmon_power(dv, sensor, "cap", cap);
}

RSMI_API rsmi_status_t rsmi_dev_power_cap_default_get(uint32_t dv, uint64_t *cap)
{
    return hwmon_power(dv, 0, "cap_default", cap);
}

RSMI_API rsmi_status_t rsmi_dev_power_cap_range_get(uint32_t dv, uint32_t sensor, uint64_t *max, uint64_t *min)
{
    if (!min)
        return RSMI_STATUS_INVALID_ARGS;
    rsmi_status_t r = hwmon_power(dv, sensor, "cap_max", max);
    return r ? r : hwmon_power(dv, sensor, "cap_min", min);
}

RSMI_API rsmi_status_t rsmi_dev_power_cap_set(uint32_t dv, uint32_t sensor, uint64_t cap)
{
    const struct amd_gpu *g = dev(dv);
    if (!g)
        return RSMI_STATUS_INVALID_ARGS;
    return rsmi_from_errno(smi_cap_set(g, sensor, cap));
}

/* ---- Temperatures, clocks, activity, memory ---- */

RSMI_API rsmi_status_t rsmi_dev_temp_metric_get(uint32_t dv, uint32_t sensor, uint32_t metric, int64_t *mc)
{
    DEV_CALL(dv, mc);
    long long v;
    if (!smi_temp(g, sensor, metric, &v))
        return RSMI_STATUS_NOT_SUPPORTED;
    *mc = v;
    return RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_dev_gpu_clk_freq_get(uint32_t dv, uint32_t type, rsmi_frequencies_t *f)
{
    static const char *const tables[] = {"sclk", "fclk", "dcefclk", "socclk", "mclk", "pcie",
                                         "vclk", "vclk1", "dclk", "dclk1"};
    DEV_CALL(dv, f);
    if (type >= sizeof tables / sizeof tables[0])
        return RSMI_STATUS_INVALID_ARGS;
    unsigned mhz[RSMI_MAX_NUM_FREQUENCIES];
    int current, n = amd_dpm_levels(g, tables[type], mhz, RSMI_MAX_NUM_FREQUENCIES, &current);
    if (n <= 0)
        return RSMI_STATUS_NOT_SUPPORTED;
    memset(f, 0, sizeof *f);
    f->num_supported = (uint32_t)n;
    f->current = current >= 0 ? (uint32_t)current : 0;
    for (int i = 0; i < n; i++)
        f->frequency[i] = (uint64_t)mhz[i] * 1000000;
    return RSMI_STATUS_SUCCESS;
}

RSMI_API rsmi_status_t rsmi_dev_busy_percent_get(uint32_t dv, uint32_t *pct)
{
    return dev_u32(dv, "gpu_busy_percent", pct);
}

RSMI_API rsmi_status_t rsmi_dev_memory_busy_percent_get(uint32_t dv, uint32_t *pct)
{
    return dev_u32(dv, "mem_busy_percent", pct);
}

static rsmi_status_t memory(uint32_t dv, uint32_t type, const char *what, uint64_t *out)
{
    DEV_CALL(dv, out);
    if (type > 2)
        return RSMI_STATUS_INVALID_ARGS;
    return smi_memory(g, type, what, out) ? RSMI_STATUS_SUCCESS : RSMI_STATUS_NOT_SUPPORTED;
}

RSMI_API rsmi_status_t rsmi_dev_memory_total_get(uint32_t dv, uint32_t type, uint64_t *total)
{
    return memory(dv, type, "total", total);
}

RSMI_API rsmi_status_t rsmi_dev_memory_usage_get(uint32_t dv, uint32_t type, uint64_t *used)
{
    return memory(dv, type, "used", used);
}

RSMI_API rsmi_status_t rsmi_dev_perf_level_get(uint32_t dv, uint32_t *level)
{
    DEV_CALL(dv, level);
    return smi_perf_level(g, level) ? RSMI_STATUS_SUCCESS : RSMI_STATUS_NOT_SUPPORTED;
}

RSMI_API rsmi_status_t rsmi_dev_perf_level_set(uint32_t dv, uint32_t level)
{
    const struct amd_gpu *g = dev(dv);
    if (!g)
        return RSMI_STATUS_INVALID_ARGS;
    return rsmi_from_errno(smi_perf_level_set(g, level));
}
