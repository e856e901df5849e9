/* render_gpu: every GPU file of a node (engine/segment/gpu_files.h is the contract): the PCI devices
 * (the DRM pci[] entries of the profile, then the GPUs), the NVML state of NVIDIA GPUs, and the
 * node-wide tool facts. The amdgpu and i915/xe sysfs trees are render_gpu_hwmon.c's, the amdkfd
 * topology render_kfd.c's, each PCI function render_pci.c's; the helpers all of them use are
 * render_gpu_common.c's. */
#include "gpu_files.h"
#include "params.h"
#include "render.h"
#include "profile.h"
#include "render_gpu.h"
#include "render_gpu_common.h"
#include "render_pci.h"
#include "render_topology.h"
#include "seg_attr.h"
#include "ytree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const gpu_drivers[] = {"nvidia", "amdgpu", "i915", "xe", NULL};

/* The mW text of a limit, or the fieldSupport token that stands in its place. */
static const char *limit_text(const struct yt_node *fs, const char *field, double w, char *buf, size_t len)
{
    const struct yt_node *tok = fs ? yt_get(fs, field) : NULL;
    if (tok && tok->kind == YT_SCALAR)
        snprintf(buf, len, "%s\n", tok->text);
    else
        snprintf(buf, len, "%lld\n", (long long)(w * 1000 + 0.5));
    return buf;
}

/* supported_clocks: per memory clock (highest first) the graphics clocks from its ceiling
 * down to the minimum in the profile's steps. */
static void supported_clocks(struct node_layout *l, const char *dir, const struct phys_gpu_params *g)
{
    char text[4096];
    size_t used = 0;
    for (int k = 0; k < g->nmem && used < sizeof text - 16; k++) {
        int top = phys_gpu_gfx_ceiling(g, g->mem_clk[k]);
        used += (size_t)snprintf(text + used, sizeof text - used, "%d:", g->mem_clk[k]);
        int step = g->gfx_step > 0 ? g->gfx_step : (top - g->gfx_min > 0 ? top - g->gfx_min : 1);
        for (int f = top; f >= g->gfx_min && used < sizeof text - 16; f -= step)
            used += (size_t)snprintf(text + used, sizeof text - used, "%s%d", f == top ? "" : " ", f);
        text[used++] = '\n';
    }
    char path[512];
    snprintf(path, sizeof path, "%s/supported_clocks", dir);
    segb_static(l->b, path, 0444, text, used);
}

static void nvml_gpu(struct node_layout *l, const struct yt_node *gp, const struct phys_gpu_params *g, int i)
{
    char dir[128], path[256], text[128];
    snprintf(dir, sizeof dir, "state/nvml/gpu%d", i);
    segb_dir(l->b, dir, 0755);
    const struct yt_node *fs = yt_get(gp, "fieldSupport");
    const char *dev = prof_str(gp, "pci.device", "");
    gpu_static(l, dir, "name", "%s", prof_str(gp, "product", ""));
    gpu_static(l, dir, "pci_bus_id", "00000000:%02X:00.0", GPU_PCI_BUS_BASE + i);
    gpu_static(l, dir, "pci_device_id", "0x%04lX10DE", strtol(*dev ? dev : "0", NULL, 16));
    gpu_static(l, dir, "compute_cap", "%s", prof_str(gp, "computeCapability", ""));
    gpu_static(l, dir, "architecture", "%s", prof_str(gp, "architecture", ""));
    gpu_static(l, dir, "mig_capable", "%d", prof_bool(gp, "migCapable", false));
    gpu_static(l, dir, "memory_total_mib", "%lld", prof_int(gp, "memoryMiB", 0));
    static const struct {
        const char *file, *field;
        int which; /* 0 min, 1 max, 2 default */
    } limits[] = {{"power_min_limit_mw", "power.min_limit", 0}, {"power_max_limit_mw", "power.max_limit", 1},
                  {"power_default_limit_mw", "power.default_limit", 2}};
    bool token = fs && yt_get(fs, "power.limit");
    for (int k = 0; k < 3; k++) {
        double w = limits[k].which == 0 ? g->min_w : limits[k].which == 1 ? g->max_w : g->default_w;
        limit_text(fs, limits[k].field, w, text, sizeof text);
        token |= text[0] == '[';
        snprintf(path, sizeof path, "%s/%s", dir, limits[k].file);
        segb_static(l->b, path, 0444, text, strlen(text));
    }
    snprintf(path, sizeof path, "%s/power_limit_mw", dir);
    gpu_setting(l, path, 0644, limit_text(fs, "power.limit", g->start_w, text, sizeof text), i, GS_LIMIT_MW,
                SV_NVML_LIMIT,
                (struct seg_param){.a = (int64_t)(g->min_w * 1000 + 0.5), .b = (int64_t)(g->max_w * 1000 + 0.5),
                                   .c = token, .related = SEG_NONE},
                NULL);
    static const struct {
        const char *file;
        int q;
    } svals[] = {{"enforced_power_limit_mw", GQ_ENFORCED_MW}, {"power_draw_mw", GQ_DRAW_MW},
                 {"power_instant_mw", GQ_INSTANT_MW}, {"utilization_gpu_pct", GQ_UTIL_GPU},
                 {"utilization_memory_pct", GQ_UTIL_MEM}, {"temperature_gpu_c", GQ_TEMP_C},
                 {"temperature_memory_c", GQ_TEMP_MEM_C}, {"pstate", GQ_PSTATE},
                 {"clocks_graphics_mhz", GQ_CLK_GFX}, {"clocks_sm_mhz", GQ_CLK_SM},
                 {"clocks_memory_mhz", GQ_CLK_MEM}, {"clocks_video_mhz", GQ_CLK_VIDEO},
                 {"clocks_event_reasons", GQ_REASONS}, {"peer_rx_bytes", GQ_PEER_RX}, {"peer_tx_bytes", GQ_PEER_TX},
                 {"memory_used_mib", GQ_MEM_USED_MIB}, {"xid", GQ_XID}, {"ecc_errors", GQ_ECC}};
    for (size_t k = 0; k < sizeof svals / sizeof svals[0]; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, svals[k].file);
        gpu_value(l, path, "0\n", i, svals[k].q);
    }
    static const struct {
        const char *file;
        int q;
    } ident[] = {{"uuid", GQ_UUID}, {"serial", GQ_SERIAL}};
    for (size_t k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, ident[k].file);
        segb_dynamic(l->b, path, 0444, SEG_S,
                     layout_value(l, "\n", (struct binding){.kind = BK_GPU_IDENT, .zone = (uint8_t)ident[k].q,
                                                           .pkg = (uint8_t)i}),
                     SV_NONE, SEG_NONE);
    }
    snprintf(path, sizeof path, "%s/total_energy_mj", dir);
    segb_dynamic(l->b, path, 0444, SEG_S,
                 layout_counter_ex(l, 1000000, 64, true, (struct binding){.kind = BK_GPU_ENERGY, .pkg = (uint8_t)i}),
                 SV_NONE, SEG_NONE);
    gpu_static(l, dir, "clocks_max_graphics_mhz", "%d", g->gfx_max);
    gpu_static(l, dir, "clocks_max_memory_mhz", "%d", g->nmem ? g->mem_clk[0] : g->mem_idle);
    gpu_static(l, dir, "clocks_max_video_mhz", "%d", g->video_max);
    supported_clocks(l, dir, g);
    int mem_lo = g->nmem ? g->mem_clk[g->nmem - 1] : 0, mem_hi = g->nmem ? g->mem_clk[0] : 0;
    snprintf(path, sizeof path, "%s/locked_gpu_clocks", dir);
    gpu_setting(l, path, 0644, "none\n", i, GS_LOCK_GFX, SV_NVML_CLOCKS,
                (struct seg_param){.a = g->gfx_min, .b = g->gfx_max, .related = SEG_NONE}, NULL);
    snprintf(path, sizeof path, "%s/locked_memory_clocks", dir);
    gpu_setting(l, path, 0644, "none\n", i, GS_LOCK_MEM, SV_NVML_CLOCKS,
                (struct seg_param){.a = mem_lo, .b = mem_hi, .related = SEG_NONE}, NULL);
    snprintf(path, sizeof path, "%s/persistence_mode", dir);
    gpu_setting(l, path, 0644, g->persistence ? "1\n" : "0\n", i, GS_PERSISTENCE, SV_BOOL01,
                (struct seg_param){.related = SEG_NONE}, NULL);
}

/* state/tools/<tool>, state/gpu/...: what fakesmi needs of the profile. */
static void tool_facts(struct node_layout *l, const struct yt_node *gp)
{
    segb_dir(l->b, "state/tools", 0755);
    const struct yt_node *tools = yt_get(gp, "tools");
    for (int i = 0; tools && tools->kind == YT_SEQ && i < tools->n; i++)
        gpu_static(l, "state/tools", prof_str(tools->vals[i], "name", ""), "%s",
                   prof_str(tools->vals[i], "variant", ""));
    gpu_static(l, "state/gpu", "unprivileged_set_is_noop", "%d", prof_bool(gp, "unprivilegedSetIsNoop", false));
    const struct yt_node *fs = yt_get(gp, "fieldSupport");
    for (int i = 0; fs && fs->kind == YT_MAP && i < fs->n; i++)
        gpu_static(l, "state/gpu/field_support", fs->keys[i]->text, "%s", yt_str(fs->vals[i]));
}

void render_gpus(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p,
                 const struct phys_gpu_params *g, struct pci_proc *pp)
{
    segb_dir(l->b, "sys/class/drm", 0755);
    segb_dir(l->b, "sys/bus/pci/devices", 0755);
    segb_own(l->b, "sys/class/drm");
    segb_own(l->b, "sys/bus/pci/devices");
    /* The functions of pci[] (the BMC's VGA, ...): buses 0x02.., DRM cards 0.. for drm: true. */
    const struct yt_node *pci = yt_get(tree, "pci");
    int cards = 0, npci = pci && pci->kind == YT_SEQ ? pci->n : 0;
    for (int i = 0; i < npci; i++) {
        const struct yt_node *d = pci->vals[i];
        struct pci_fn fn = {.bus = 2 + i, .irq = 16 + i, .numa_node = 0, .link_speed = 1, .link_width = 1,
                            .boot_vga = i == 0};
        pci_fn_from_profile(d, &fn);
        render_pci_function(l, tree, &fn, pp);
        if (prof_bool(d, "drm", false)) {
            gpu_drm_card(l, 2 + i, cards);
            cards++;
        }
    }
    const struct yt_node *gp = yt_get(tree, "gpus");
    const char *driver = g->vendor == PHYS_GPU_NVIDIA ? "nvidia" : g->vendor == PHYS_GPU_AMD ? "amdgpu"
                       : g->vendor == PHYS_GPU_INTEL ? prof_str(gp, "intel.driver", "i915") : NULL;
    char own[128];
    for (int k = 0; gpu_drivers[k]; k++) {
        snprintf(own, sizeof own, "sys/bus/pci/drivers/%s", gpu_drivers[k]);
        if (driver && !strcmp(driver, gpu_drivers[k])) {
            segb_dir(l->b, own, 0755);
            segb_own(l->b, own);
        } else {
            segb_absent(l->b, own);
            snprintf(own, sizeof own, "sys/module/%s", gpu_drivers[k]);
            segb_absent(l->b, own);
        }
    }
    if (!gp || g->vendor == PHYS_GPU_NONE)
        return;
    tool_facts(l, gp);
    const char *vendor = prof_str(gp, "pci.vendor", g->vendor == PHYS_GPU_NVIDIA ? "0x10de"
                                                  : g->vendor == PHYS_GPU_AMD  ? "0x1002"
                                                                               : "0x8086");
    const struct yt_node *gpci = yt_path(gp, "pci");
    int nodes = topo_numa_nodes(tree);
    for (int i = 0; i < g->count; i++) {
        /* GPUs spread evenly over the NUMA nodes in bus order, PCIe Gen5 x16 (stated) */
        struct pci_fn fn = {.bus = GPU_PCI_BUS_BASE + i, .irq = 32 + i, .numa_node = i * nodes / g->count,
                            .link_speed = 5, .link_width = 16};
        if (gpci)
            pci_fn_from_profile(gpci, &fn);
        fn.vendor = (unsigned)strtoul(vendor, NULL, 16);
        if (!gpci || !*prof_str(gpci, "subsystemVendor", ""))
            fn.subvendor = fn.vendor;
        snprintf(fn.driver, sizeof fn.driver, "%s", driver ? driver : "");
        if (!fn.nbars) { /* a single 16 MiB register BAR when the profile gives none */
            fn.bars[0] = (struct pci_bar){.index = 0, .size = 16ULL << 20};
            fn.nbars = 1;
        }
        render_pci_function(l, tree, &fn, pp);
    }
    if (g->vendor == PHYS_GPU_NVIDIA) {
        gpu_static(l, "state/nvml", "driver_version", "%s", NVML_DRIVER_VERSION);
        gpu_static(l, "state/nvml", "cuda_version", "%s", NVML_CUDA_VERSION);
        for (int i = 0; i < g->count; i++)
            nvml_gpu(l, gp, g, i);
        segb_static(l->b, "dev/nvidiactl", 0666, "", 0);
        return;
    }
    /* hwmon numbers after the HSMP sockets' (render_hsmp.c), from 2 as upstream numbers them */
    int hwmon = yt_get(tree, "hsmp") && p->sockets > 2 ? p->sockets : 2;
    render_gpu_hwmon(l, gp, g, cards, hwmon);
    if (g->vendor == PHYS_GPU_AMD)
        render_kfd(l, tree, gp, g->count, cards);
}
