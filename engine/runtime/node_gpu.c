/* node_gpu: the texts of a node's GPU files (engine/segment/gpu_files.h) from the GPU physics, in each
 * driver's units and formats, and the GPU identities (UUID, serial) derived from the node's
 * name. node.c publishes them. */
#include "gpu_files.h"
#include "node_internal.h"
#include "segment.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long long mw(double w)
{
    return w > 0 ? (long long)floor(w * 1000) : 0;
}

/* pp_dpm_* of a fine-grained DPM table (sysfs-abi §9.2): the two ends, and the live clock as
 * level 1 between them. */
static void dpm_table(char *t, size_t len, int lo, int hi, int cur)
{
    if (cur <= lo)
        snprintf(t, len, "0: %dMhz *\n1: %dMhz \n", lo, hi);
    else if (cur >= hi)
        snprintf(t, len, "0: %dMhz \n1: %dMhz *\n", lo, hi);
    else
        snprintf(t, len, "0: %dMhz\n1: %dMhz *\n2: %dMhz\n", lo, cur, hi);
}

/* The salts of the GPU power sensors' noise (node_sensor_noise): NVML's reading ("noise", as it
 * always was), amdgpu's power1_average and power1_input. */
#define SALT_NVML UINT64_C(0x6e6f697365)
#define SALT_AMD_AVG UINT64_C(0x616d64617667)
#define SALT_AMD_INPUT UINT64_C(0x616d64696e70)

double node_gpu_draw_w(const struct node *n, int k)
{
    const struct phys_gpu *g = &n->gstate.g[k];
    /* NVML's power reading is "accurate to within +/- 5 watts" (nvidia-smi(1), power.draw): a
     * measurement, not the truth; amdgpu documents none. Ours: triangular noise within +/- the
     * profile's sensors.gpuPowerNoiseW (1 W unless it says), new at each publication. */
    if (n->gparams.vendor == PHYS_GPU_AMD)
        return g->avg_amd_w + n->sensors.gpu_w * node_sensor_noise(n, k, SALT_AMD_AVG);
    if (n->gparams.vendor != PHYS_GPU_NVIDIA)
        return g->draw_w;
    return g->draw_w + n->sensors.gpu_w * node_sensor_noise(n, k, SALT_NVML);
}

bool node_gpu_text(const struct node *n, const struct binding *b, char *t, size_t len)
{
    const struct phys_gpu_params *p = &n->gparams;
    if (b->pkg >= PHYS_GPU_MAX)
        return false;
    const struct phys_gpu *g = &n->gstate.g[b->pkg];
    double u = n->gload.util < 0 ? 0 : n->gload.util > 1 ? 1 : n->gload.util;
    double m = n->gload.memory_intensity;
    bool busy = u > 0;
    switch (b->zone) {
    case GQ_ENFORCED_MW: snprintf(t, len, "%lld\n", llround(g->enforced_w * 1000)); break;
    case GQ_DRAW_MW: snprintf(t, len, "%lld\n", mw(node_gpu_draw_w(n, b->pkg))); break;
    case GQ_XID: {
        const struct node_gpu_errors *ge = &n->gpu_err[b->pkg];
        snprintf(t, len, "%u %d %d %d %d\n", ge->xid_seq, ge->xid[0], ge->xid[1], ge->xid[2], ge->xid[3]);
        break;
    }
    case GQ_ECC: {
        const struct node_gpu_errors *ge = &n->gpu_err[b->pkg];
        snprintf(t, len, "%llu %llu %u %u %d\n", (unsigned long long)ge->ecc_corrected,
                 (unsigned long long)ge->ecc_uncorrected, ge->rows_corrected, ge->rows_uncorrected, ge->remap_pending);
        break;
    }
    case GQ_INSTANT_MW: snprintf(t, len, "%lld\n", mw(g->instant_w)); break;
    case GQ_UTIL_GPU:
    case GQ_BUSY_PCT: snprintf(t, len, "%ld\n", lround(100 * u)); break;
    case GQ_UTIL_MEM: snprintf(t, len, "%ld\n", lround(100 * u * m)); break;
    case GQ_TEMP_C: snprintf(t, len, "%ld\n", lround(g->temp_c)); break;
    /* HBM runs a few degrees above the die (the 590 H100 capture: 41 C GPU, 48 C memory) */
    case GQ_TEMP_MEM_C: snprintf(t, len, "%ld\n", lround(g->temp_c + 7)); break;
    case GQ_PSTATE: snprintf(t, len, "%s\n", busy ? "P0" : "P8"); break;
    case GQ_CLK_GFX:
    case GQ_CLK_SM: snprintf(t, len, "%d\n", g->gfx_mhz); break;
    case GQ_CLK_MEM: snprintf(t, len, "%d\n", g->mem_mhz); break;
    case GQ_CLK_VIDEO:
        snprintf(t, len, "%d\n", p->gfx_max > 0 ? (int)((long long)p->video_max * g->gfx_mhz / p->gfx_max) : 0);
        break;
    case GQ_REASONS: {
        /* a power brake (a fault) is nvmlClocksEventReasonHwPowerBrakeSlowdown 0x80, not the SW
         * power cap (NVML header) */
        bool braked = g->brake_w > 0 && g->enforced_w <= g->brake_w + 0.5;
        unsigned long long r = (busy ? 0ULL : 0x1ULL) | (braked ? 0x80ULL : g->capped && !g->thermal_capped ? 0x4ULL : 0);
        /* the thermal controller capping clocks at the maximum operating temperature is
         * SwThermalSlowdown 0x20; a GPU its air heats past the slowdown temperature even so
         * (its idle power is too much there) is HwThermalSlowdown 0x40 (NVML header; faults.md
         * §3.1) */
        if (g->thermal_capped)
            r |= 0x20ULL;
        if (g->temp_c > NODE_GPU_SLOWDOWN_C)
            r |= 0x40ULL;
        snprintf(t, len, "0x%016llX\n", r);
        break;
    }
    case GQ_PEER_RX: snprintf(t, len, "%.0f\n", floor(g->rx_bytes)); break;
    case GQ_PEER_TX: snprintf(t, len, "%.0f\n", floor(g->tx_bytes)); break;
    case GQ_MEM_USED_MIB: {
        /* what the workload holds: none idle, up to the whole memory as it leans on it (ours) */
        long long total = p->memory_mib;
        snprintf(t, len, "%lld\n", busy ? (long long)(total * (0.1 + 0.8 * m) * u) : 0);
        break;
    }
    case GQ_VRAM_USED_B: {
        long long total = p->memory_mib * 1048576LL;
        snprintf(t, len, "%lld\n", busy ? (long long)(total * (0.1 + 0.8 * m) * u) : 0);
        break;
    }
    case GQ_HWMON_AVG_UW: snprintf(t, len, "%lld\n", mw(node_gpu_draw_w(n, b->pkg)) * 1000); break;
    case GQ_HWMON_INPUT_UW:
        snprintf(t, len, "%lld\n", mw(g->instant_w + n->sensors.gpu_w * node_sensor_noise(n, b->pkg, SALT_AMD_INPUT)) * 1000);
        break;
    case GQ_TEMP_EDGE_MC: snprintf(t, len, "%lld\n", (long long)(g->temp_c * 1000)); break;
    /* the hotspot runs above the edge as power rises (ours: +10 C at the natural maximum) */
    case GQ_TEMP_JUNCTION_MC:
        snprintf(t, len, "%lld\n",
                 (long long)((g->temp_c + (p->natural_max_w > 0 ? 10 * g->power_w / p->natural_max_w : 0)) * 1000));
        break;
    case GQ_TEMP_HBM_MC: snprintf(t, len, "%lld\n", (long long)((g->temp_c + 7) * 1000)); break;
    case GQ_SCLK_HZ: snprintf(t, len, "%lld\n", (long long)g->gfx_mhz * 1000000LL); break;
    case GQ_PP_SCLK: dpm_table(t, len, p->gfx_min, p->gfx_max, g->gfx_mhz); break;
    case GQ_PP_MCLK: {
        int lo = p->nmem ? p->mem_clk[p->nmem - 1] : p->mem_idle, hi = p->nmem ? p->mem_clk[0] : p->mem_idle;
        dpm_table(t, len, lo, hi, g->mem_mhz);
        break;
    }
    case GQ_UUID: {
        uint64_t a = node_ident_bits(n->name, b->pkg, 1), c = node_ident_bits(n->name, b->pkg, 2);
        snprintf(t, len, "GPU-%08x-%04x-%04x-%04x-%012llx\n", (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
                 (unsigned)a & 0xffff, (unsigned)(c >> 48), (unsigned long long)(c & 0xffffffffffffULL));
        break;
    }
    case GQ_SERIAL: snprintf(t, len, "%013llu\n", (unsigned long long)(node_ident_bits(n->name, b->pkg, 3) % 10000000000000ULL)); break;
    default: return false;
    }
    return true;
}

size_t node_gpu_effective(const struct node *n, const struct binding *b, const char *text, char *out, size_t cap)
{
    if (b->kind != BK_GPU_SET || b->zone != GS_INTEL_PL1_UW)
        return 0;
    /* i915 takes any value; the hardware clamps what it enforces and the file shows that */
    double w = strtod(text, NULL) / 1e6;
    if (w <= 0)
        return 0;
    if (w < n->gparams.min_w)
        w = n->gparams.min_w;
    if (w > n->gparams.max_w)
        w = n->gparams.max_w;
    return (size_t)snprintf(out, cap, "%lld\n", (long long)llround(w * 1e6));
}
