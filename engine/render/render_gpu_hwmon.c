/* render_gpu_hwmon: the kernel-side files of AMD and Intel GPUs (engine/segment/gpu_files.h): amdgpu's
 * device attributes and hwmon (sysfs §9), i915's or xe's hwmon (§10), each GPU's DRM card
 * and its sys/class/hwmon link. */
#include "gpu_files.h"
#include "params.h"
#include "render.h"
#include "profile.h"
#include "render_gpu.h"
#include "render_devmodel.h"
#include "render_gpu_common.h"
#include "seg_attr.h"
#include "ytree.h"

#include <stdio.h>
#include <string.h>

/* sys/class/hwmon/hwmon<h>, the hwmon device's `device` link to its PCI function (how
 * libsensors names the chip, e.g. amdgpu-pci-1000) and its driver-model entries (class hwmon,
 * no uevent properties). */
static void hwmon_link(struct node_layout *l, int bus, int h)
{
    char path[160], target[160];
    snprintf(path, sizeof path, "sys/devices/pci0000:%02x/0000:%02x:00.0/hwmon/hwmon%d", bus, bus, h);
    dm_device(l, path, "class/hwmon", "", DM_PM_UNSUPPORTED);
    snprintf(path, sizeof path, "sys/devices/pci0000:%02x/0000:%02x:00.0/hwmon/hwmon%d/device", bus, bus, h);
    snprintf(target, sizeof target, "../../../0000:%02x:00.0", bus);
    segb_link(l->b, path, target);
    snprintf(path, sizeof path, "sys/class/hwmon/hwmon%d", h);
    snprintf(target, sizeof target, "../../devices/pci0000:%02x/0000:%02x:00.0/hwmon/hwmon%d", bus, bus, h);
    segb_link(l->b, path, target);
}

static void amdgpu(struct node_layout *l, const struct yt_node *gp, const struct phys_gpu_params *g, int i, int card,
                   int h)
{
    int bus = GPU_PCI_BUS_BASE + i;
    char dev[128], hw[160], path[256], text[64];
    gpu_pci_dir(bus, dev, sizeof dev);
    if (*prof_str(gp, "product", ""))
        gpu_static(l, dev, "product_name", "%s", prof_str(gp, "product", ""));
    if (*prof_str(gp, "vbiosVersion", ""))
        gpu_static(l, dev, "vbios_version", "%s", prof_str(gp, "vbiosVersion", ""));
    snprintf(path, sizeof path, "%s/power_dpm_force_performance_level", dev);
    gpu_setting(l, path, 0644, "auto\n", i, GS_PERF_LEVEL, SV_DPM_LEVEL, (struct seg_param){.related = SEG_NONE},
                NULL);
    snprintf(path, sizeof path, "%s/pp_dpm_sclk", dev);
    gpu_value(l, path, "0: 0Mhz *\n", i, GQ_PP_SCLK);
    snprintf(path, sizeof path, "%s/pp_dpm_mclk", dev);
    gpu_value(l, path, "0: 0Mhz *\n", i, GQ_PP_MCLK);
    snprintf(path, sizeof path, "%s/gpu_busy_percent", dev);
    gpu_value(l, path, "0\n", i, GQ_BUSY_PCT);
    gpu_static(l, dev, "mem_info_vram_total", "%lld", prof_int(gp, "memoryMiB", 0) * 1048576LL);
    snprintf(path, sizeof path, "%s/mem_info_vram_used", dev);
    gpu_value(l, path, "0\n", i, GQ_VRAM_USED_B);
    gpu_drm_card(l, bus, card);
    snprintf(text, sizeof text, "renderD%d", 128 + card); /* librocm_smi64's render minor */
    gpu_drm_minor(l, bus, text, 128 + card);
    snprintf(hw, sizeof hw, "%s/hwmon/hwmon%d", dev, h);
    segb_dir(l->b, hw, 0755);
    hwmon_link(l, bus, h);
    gpu_static(l, hw, "name", "amdgpu");
    gpu_static(l, hw, "power1_label", "PPT");
    long long min_uw = (long long)(g->min_w * 1e6), max_uw = (long long)(g->max_w * 1e6);
    snprintf(path, sizeof path, "%s/power1_cap", hw);
    snprintf(text, sizeof text, "%lld\n", (long long)g->start_w * 1000000LL);
    gpu_setting(l, path, 0644, text, i, GS_CAP_UW, SV_AMDGPU_CAP,
                (struct seg_param){.a = min_uw, .b = max_uw, .related = SEG_NONE}, NULL);
    gpu_static(l, hw, "power1_cap_min", "%lld", min_uw);
    gpu_static(l, hw, "power1_cap_max", "%lld", max_uw);
    gpu_static(l, hw, "power1_cap_default", "%lld", (long long)(g->default_w * 1e6));
    const char *sensor = prof_str(gp, "powerSensor", "");
    snprintf(text, sizeof text, "%lld\n", (long long)(g->idle_w * 1000) * 1000);
    if (strcmp(sensor, "input")) {
        snprintf(path, sizeof path, "%s/power1_average", hw);
        gpu_value(l, path, text, i, GQ_HWMON_AVG_UW);
    }
    if (!strcmp(sensor, "input") || !strcmp(sensor, "both")) {
        snprintf(path, sizeof path, "%s/power1_input", hw);
        gpu_value(l, path, text, i, GQ_HWMON_INPUT_UW);
    }
    static const struct {
        const char *label;
        int q;
    } temps[] = {{"edge", GQ_TEMP_EDGE_MC}, {"junction", GQ_TEMP_JUNCTION_MC}, {"mem", GQ_TEMP_HBM_MC}};
    for (int k = 0; k < 3; k++) {
        char name[32];
        snprintf(name, sizeof name, "temp%d_label", k + 1);
        gpu_static(l, hw, name, "%s", temps[k].label);
        snprintf(path, sizeof path, "%s/temp%d_input", hw, k + 1);
        gpu_value(l, path, "0\n", i, temps[k].q);
    }
    /* The limits amdgpu_pm.c shows per sensor (temp*_crit, _crit_hyst, _emergency, m degrees C)
     * and the GFX voltage rail in0 "vddgfx" (mV), which librocm_smi64 5.2.3 needs to start
     * (Monitor::setVoltSensorLabelMap). Stated values, no source read: SMU 13 boards' usual
     * limits and an idle rail voltage. */
    static const int crit[3][3] = {{100000, -273150, 105000}, {110000, -273150, 115000}, {100000, -273150, 105000}};
    for (int k = 0; k < 3; k++) {
        char name[32];
        snprintf(name, sizeof name, "temp%d_crit", k + 1);
        gpu_static(l, hw, name, "%d", crit[k][0]);
        snprintf(name, sizeof name, "temp%d_crit_hyst", k + 1);
        gpu_static(l, hw, name, "%d", crit[k][1]);
        snprintf(name, sizeof name, "temp%d_emergency", k + 1);
        gpu_static(l, hw, name, "%d", crit[k][2]);
    }
    gpu_static(l, hw, "in0_label", "vddgfx");
    gpu_static(l, hw, "in0_input", "800");
    gpu_static(l, hw, "freq1_label", "sclk");
    snprintf(path, sizeof path, "%s/freq1_input", hw);
    gpu_value(l, path, "0\n", i, GQ_SCLK_HZ);
    char st[64];
    snprintf(st, sizeof st, "state/amdgpu/card%d", card);
    if (*prof_str(gp, "gfxVersion", ""))
        gpu_static(l, st, "gfx_version", "%s", prof_str(gp, "gfxVersion", ""));
    snprintf(path, sizeof path, "%s/energy_uj", st);
    segb_dynamic(l->b, path, 0444, SEG_S,
                 layout_counter_ex(l, 1000, 64, false, (struct binding){.kind = BK_GPU_ENERGY, .pkg = (uint8_t)i}),
                 SV_NONE, SEG_NONE);
}

/* i915: channel 1 is the card; xe (DG2 maps only the package): channel 2. */
static void intel(struct node_layout *l, const struct yt_node *gp, const struct phys_gpu_params *g, int i, int card,
                  int h)
{
    int bus = GPU_PCI_BUS_BASE + i;
    bool xe = !strcmp(prof_str(gp, "intel.driver", "i915"), "xe");
    int ch = xe ? 2 : 1;
    char dev[128], hw[160], path[256], text[64];
    gpu_pci_dir(bus, dev, sizeof dev);
    gpu_drm_card(l, bus, card);
    snprintf(hw, sizeof hw, "%s/hwmon/hwmon%d", dev, h);
    segb_dir(l->b, hw, 0755);
    hwmon_link(l, bus, h);
    gpu_static(l, hw, "name", xe ? "xe" : "i915");
    if (xe) {
        snprintf(path, sizeof path, "power%d_label", ch);
        gpu_static(l, hw, path, "pkg");
    }
    snprintf(path, sizeof path, "%s/power%d_max", hw, ch);
    snprintf(text, sizeof text, "%lld\n", (long long)(g->start_w * 1e6));
    gpu_setting(l, path, 0664, text, i, GS_INTEL_PL1_UW, SV_INTEL_PL1, (struct seg_param){.related = SEG_NONE}, NULL);
    snprintf(path, sizeof path, "power%d_rated_max", ch);
    gpu_static(l, hw, path, "%lld", (long long)(g->max_w * 1e6));
    snprintf(path, sizeof path, "%s/power%d_max_interval", hw, ch);
    segb_dynamic(l->b, path, 0664, SEG_A, layout_value(l, "1000\n", (struct binding){.kind = BK_STATIC}), SV_MAX_MS,
                 segb_param(l->b, (struct seg_param){.a = 256000, .related = SEG_NONE}, NULL));
    snprintf(path, sizeof path, "%s/energy%d_input", hw, ch);
    segb_dynamic(l->b, path, 0444, SEG_S,
                 layout_counter_ex(l, 1000, 64, false, (struct binding){.kind = BK_GPU_ENERGY, .pkg = (uint8_t)i}),
                 SV_NONE, SEG_NONE);
}

void render_gpu_hwmon(struct node_layout *l, const struct yt_node *gp, const struct phys_gpu_params *g,
                      int first_card, int first_hwmon)
{
    for (int i = 0; i < g->count; i++) {
        if (g->vendor == PHYS_GPU_AMD)
            amdgpu(l, gp, g, i, first_card + i, first_hwmon + i);
        else if (g->vendor == PHYS_GPU_INTEL)
            intel(l, gp, g, i, first_card + i, first_hwmon + i);
    }
}
