/* nvml_node: the node's segment behind the library; see nvml_node.h. */
#include "nvml_node.h"
#include "seg_faults.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seg_attr.h"
#include "segment.h"

static const char *const file_names[NF_COUNT] = {
    [NF_NAME] = "name", [NF_UUID] = "uuid", [NF_PCI_BUS_ID] = "pci_bus_id", [NF_SERIAL] = "serial",
    [NF_PCI_DEVICE_ID] = "pci_device_id", [NF_COMPUTE_CAP] = "compute_cap", [NF_ARCHITECTURE] = "architecture",
    [NF_MIG_CAPABLE] = "mig_capable", [NF_MEMORY_TOTAL] = "memory_total_mib", [NF_MEMORY_USED] = "memory_used_mib",
    [NF_POWER_MIN] = "power_min_limit_mw", [NF_POWER_MAX] = "power_max_limit_mw",
    [NF_POWER_DEFAULT] = "power_default_limit_mw", [NF_POWER_LIMIT] = "power_limit_mw",
    [NF_POWER_ENFORCED] = "enforced_power_limit_mw", [NF_POWER_DRAW] = "power_draw_mw",
    [NF_POWER_INSTANT] = "power_instant_mw", [NF_ENERGY] = "total_energy_mj", [NF_UTIL_GPU] = "utilization_gpu_pct",
    [NF_UTIL_MEMORY] = "utilization_memory_pct", [NF_TEMP_GPU] = "temperature_gpu_c",
    [NF_TEMP_MEMORY] = "temperature_memory_c", [NF_PSTATE] = "pstate", [NF_CLK_GRAPHICS] = "clocks_graphics_mhz",
    [NF_CLK_SM] = "clocks_sm_mhz", [NF_CLK_MEMORY] = "clocks_memory_mhz", [NF_CLK_VIDEO] = "clocks_video_mhz",
    [NF_MAX_GRAPHICS] = "clocks_max_graphics_mhz", [NF_MAX_MEMORY] = "clocks_max_memory_mhz",
    [NF_MAX_VIDEO] = "clocks_max_video_mhz", [NF_SUPPORTED_CLOCKS] = "supported_clocks",
    [NF_LOCKED_GPU] = "locked_gpu_clocks", [NF_LOCKED_MEMORY] = "locked_memory_clocks",
    [NF_PERSISTENCE] = "persistence_mode", [NF_REASONS] = "clocks_event_reasons",
    [NF_XID] = "xid", [NF_ECC] = "ecc_errors",
};

static struct seg the_seg;
static bool mapped;
static struct nvmlDevice_st gpus[GPU_MAX];
static unsigned n_gpus;
static bool unprivileged;
static _Atomic int refs;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

/* Why init fails, once per process, on stderr. */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
    static _Atomic int said;
    if (!atomic_exchange(&said, 1)) {
        va_list ap;
        va_start(ap, fmt);
        fputs("hwemu-nvml: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
}

static uint32_t lookup(const char *path)
{
    uint32_t e;
    if (seg_resolve(&the_seg, path, strlen(path), true, &e) || the_seg.entries[e].kind != SEG_FILE)
        return SEG_NONE;
    return e;
}

/* A sysfs hex file of the GPU's PCI device ("0x10de") as a number, 0 when missing. */
static unsigned pci_hex(unsigned bus, const char *file)
{
    char path[96], text[SEG_TEXT_MAX];
    snprintf(path, sizeof path, "sys/devices/pci0000:%02x/0000:%02x:00.0/%s", bus, bus, file);
    uint32_t e = lookup(path);
    if (e == SEG_NONE)
        return 0;
    size_t len;
    const char *t = seg_read(&the_seg, e, seg_now_ns(), text, &len);
    if (!t)
        return 0; /* the segment shrank under us */
    char buf[SEG_TEXT_MAX];
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    memcpy(buf, t, len);
    buf[len] = 0;
    return (unsigned)strtoul(buf, NULL, 16);
}

/* Maps the node and finds its GPUs' files: 0, or -1 after saying why. */
static int map_node(void)
{
    char path[PATH_MAX], err[900];
    if (!seg_path_from_env(path, sizeof path)) {
        say("no emulated node (HWEMU_NODE is not set): run the program through `hwemu exec --node NAME`; "
            "NVML reports the driver as not loaded");
        return -1;
    }
    the_seg.fd = -1;
    if (seg_open(&the_seg, path, err, sizeof err)) {
        say("cannot open the node's segment: %s; is `hwemu serve` running with this root (HWEMU_ROOT)?", err);
        return -1;
    }
    if (seg_lookup(&the_seg, "state/nvml", 10) == SEG_NONE) {
        say("node %s has no NVIDIA GPUs (no state/nvml in its segment); NVML reports the driver as not loaded",
            the_seg.h->node);
        seg_close(&the_seg);
        return -1;
    }
    n_gpus = 0;
    for (unsigned i = 0; i < GPU_MAX; i++) {
        char dir[32];
        snprintf(dir, sizeof dir, "state/nvml/gpu%u", i);
        if (seg_lookup(&the_seg, dir, strlen(dir)) == SEG_NONE)
            break;
        struct nvmlDevice_st *g = &gpus[n_gpus++];
        g->index = i;
        g->counters = 0;
        for (int f = 0; f < NF_COUNT; f++) {
            char p[96];
            snprintf(p, sizeof p, "%s/%s", dir, file_names[f]);
            g->entry[f] = lookup(p);
            uint32_t v = g->entry[f] == SEG_NONE ? SEG_NONE : the_seg.entries[g->entry[f]].value;
            if (v != SEG_NONE && v < the_seg.n_values && the_seg.values[v].type == SEG_V_COUNTER)
                g->counters |= UINT64_C(1) << f;
        }
        g->bus = GPU_PCI_BUS_BASE + i;
        char bus_id[64];
        unsigned d, b;
        if (nv_text(g, NF_PCI_BUS_ID, bus_id, sizeof bus_id) == NVML_SUCCESS && sscanf(bus_id, "%x:%x:", &d, &b) == 2)
            g->bus = b;
        g->subsystem = pci_hex(g->bus, "subsystem_device") << 16 | pci_hex(g->bus, "subsystem_vendor");
    }
    return 0;
}

nvmlReturn_t nv_init(void)
{
    pthread_mutex_lock(&init_lock);
    if (!mapped && map_node() == 0)
        mapped = true;
    const char *u = getenv("HWEMU_UNPRIVILEGED"); /* each init: the user the process runs as now */
    unprivileged = u && !strcmp(u, "1");
    nvmlReturn_t rc = mapped ? NVML_SUCCESS : NVML_ERROR_DRIVER_NOT_LOADED;
    if (mapped)
        atomic_fetch_add(&refs, 1);
    pthread_mutex_unlock(&init_lock);
    return rc;
}

nvmlReturn_t nv_shutdown(void)
{
    /* The mapping stays: a later init, and handles a client kept, find the same GPUs. A surplus
     * shutdown is no error (the header says so; the real library answers SUCCESS without init,
     * and nvidia-smi shuts down on every exit path, a failed init's too). */
    int r = atomic_load(&refs);
    while (r > 0 && !atomic_compare_exchange_weak(&refs, &r, r - 1))
        ;
    return NVML_SUCCESS;
}

bool nv_ready(void)
{
    return atomic_load_explicit(&refs, memory_order_acquire) > 0;
}

unsigned nv_count(void)
{
    return n_gpus;
}

struct nvmlDevice_st *nv_gpu(unsigned index)
{
    return index < n_gpus ? &gpus[index] : NULL;
}

bool nv_lost(unsigned index)
{
    struct seg_faults f;
    return seg_faults_read(&the_seg, &f) && index < 32 && ((f.gpu_lost >> index) & 1);
}

nvmlReturn_t nv_check(nvmlDevice_t dev, const void *out)
{
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    uintptr_t p = (uintptr_t)dev, lo = (uintptr_t)&gpus[0], hi = (uintptr_t)&gpus[n_gpus];
    if (p < lo || p >= hi || (p - lo) % sizeof gpus[0] || !out)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (nv_lost(dev->index)) /* fell off the bus (docs/faults.md): every call on it */
        return NVML_ERROR_GPU_IS_LOST;
    return NVML_SUCCESS;
}

bool nv_unprivileged(void)
{
    return unprivileged;
}

/* A text value's read does not depend on the time: only a counter's needs the clock. */
static size_t read_entry(uint32_t e, bool counter, char *buf, unsigned cap)
{
    char tmp[SEG_TEXT_MAX];
    size_t len;
    const char *t = seg_read(&the_seg, e, counter ? seg_now_ns() : 0, tmp, &len);
    if (!t)
        t = ""; /* the segment shrank under us: len is 0 */
    if (len && t[len - 1] == '\n')
        len--;
    if (len >= cap)
        len = cap - 1;
    memcpy(buf, t, len);
    buf[len] = 0;
    return len;
}

nvmlReturn_t nv_text(const struct nvmlDevice_st *g, enum nv_file f, char *buf, unsigned cap)
{
    if (g->entry[f] == SEG_NONE) {
        if (cap)
            buf[0] = 0;
        return NVML_ERROR_NOT_SUPPORTED;
    }
    read_entry(g->entry[f], g->counters >> f & 1, buf, cap);
    return NVML_SUCCESS;
}

nvmlReturn_t nv_node_text(const char *path, char *buf, unsigned cap)
{
    uint32_t e = lookup(path);
    if (e == SEG_NONE)
        return NVML_ERROR_NOT_FOUND;
    read_entry(e, true, buf, cap);
    return NVML_SUCCESS;
}

/* The NVML code a token stands for, as nvidia-smi prints the code in a --query-gpu cell. */
static nvmlReturn_t token_code(const char *t)
{
    if (!strcmp(t, "[Insufficient Permissions]"))
        return NVML_ERROR_NO_PERMISSION;
    if (!strcmp(t, "[N/A]") || !strcmp(t, "[Not Supported]") || !strcmp(t, "N/A"))
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nv_u64(const struct nvmlDevice_st *g, enum nv_file f, uint64_t *v)
{
    char t[SEG_TEXT_MAX];
    if (nv_text(g, f, t, sizeof t))
        return NVML_ERROR_NOT_SUPPORTED;
    uint64_t x = 0;
    const char *p = t;
    if (*p < '0' || *p > '9')
        return token_code(t);
    for (; *p >= '0' && *p <= '9'; p++)
        x = x * 10 + (uint64_t)(*p - '0');
    if (*p)
        return token_code(t);
    *v = x;
    return NVML_SUCCESS;
}

nvmlReturn_t nv_u32(const struct nvmlDevice_st *g, enum nv_file f, unsigned *v)
{
    uint64_t x;
    nvmlReturn_t rc = nv_u64(g, f, &x);
    if (rc)
        return rc;
    if (x > UINT32_MAX)
        return NVML_ERROR_UNKNOWN;
    *v = (unsigned)x;
    return NVML_SUCCESS;
}

nvmlReturn_t nv_copy(const char *text, char *out, unsigned length)
{
    size_t n = strlen(text);
    if (!out || n + 1 > length)
        return out ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_ERROR_INVALID_ARGUMENT;
    memcpy(out, text, n + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nv_write(const struct nvmlDevice_st *g, enum nv_file f, const char *text)
{
    if (unprivileged)
        return NVML_ERROR_NO_PERMISSION;
    uint32_t e = g->entry[f];
    if (e == SEG_NONE || !(the_seg.entries[e].mode & 0222))
        return NVML_ERROR_NOT_SUPPORTED;
    char buf[SEG_TEXT_MAX];
    size_t n = strlen(text);
    if (n + 2 > sizeof buf)
        return NVML_ERROR_INVALID_ARGUMENT;
    memcpy(buf, text, n);
    buf[n++] = '\n';
    switch (seg_attr_write(&the_seg, e, buf, n, (int)getpid())) {
    case 0:
        return NVML_SUCCESS;
    case EINVAL:
    case ERANGE:
        return NVML_ERROR_INVALID_ARGUMENT;
    case EOPNOTSUPP:
    case ENOSYS:
    case ENODATA:
        return NVML_ERROR_NOT_SUPPORTED;
    case EACCES:
    case EPERM:
        return NVML_ERROR_NO_PERMISSION;
    default:
        return NVML_ERROR_UNKNOWN;
    }
}
