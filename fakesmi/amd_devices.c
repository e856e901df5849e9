/* amd_devices: the AMD GPU list rocm-smi and amd-smi share; see amd_devices.h. gpu_view has no directory listing, so the lists are probed: card<n> for n up
 * to 63, hwmon<h> for h up to 63, the PCI bus of a card among the 256 buses (from its own,
 * 0x10 + index, on). A probe is a segment lookup of a few hundred nanoseconds. */
#include "amd_devices.h"

#include "gpu_view.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_MAX 64
#define AMD_VENDOR 0x1002

/* The PCI address of card n: the bus whose device directory holds drm/card<n>. */
static void find_bdf(struct amd_gpu *g)
{
    char path[96];
    for (int k = 0; k < 256; k++) {
        int bus = (GPU_PCI_BUS_BASE + g->index + k) & 0xff;
        snprintf(path, sizeof path, "sys/devices/pci0000:%02x/0000:%02x:00.0/drm/card%d", bus, bus, g->card);
        if (gv_exists(path)) {
            snprintf(g->bdf, sizeof g->bdf, "0000:%02x:00.0", bus);
            return;
        }
    }
}

int amd_gpus(struct amd_gpu *out)
{
    int n = 0;
    for (int card = 0; card < PROBE_MAX && n < GPU_MAX; card++) {
        char path[64], vendor[32], *end;
        snprintf(path, sizeof path, "sys/class/drm/card%d/device/vendor", card);
        if (gv_read(path, vendor, sizeof vendor) <= 0)
            continue;
        errno = 0;
        unsigned long id = strtoul(vendor, &end, 0); /* Python's int(v, 0): 0x1002 */
        while (isspace((unsigned char)*end))
            end++;
        if (errno || *end || id != AMD_VENDOR)
            continue;
        struct amd_gpu *g = &out[n];
        memset(g, 0, sizeof *g);
        g->index = n++;
        g->card = card;
        snprintf(g->dev, sizeof g->dev, "sys/class/drm/card%d/device", card);
        for (int h = 0; h < PROBE_MAX; h++) {
            snprintf(g->hwmon, sizeof g->hwmon, "%s/hwmon/hwmon%d", g->dev, h);
            if (gv_exists(g->hwmon))
                break;
            g->hwmon[0] = 0;
        }
        find_bdf(g);
    }
    return n;
}

bool amd_dev_read(const struct amd_gpu *g, const char *attr, char *buf, size_t cap)
{
    return gv_readf(buf, cap, "%s/%s", g->dev, attr) >= 0;
}

bool amd_hwmon_ll(const struct amd_gpu *g, const char *attr, long long *out)
{
    char path[128];
    if (!g->hwmon[0])
        return false;
    snprintf(path, sizeof path, "%s/%s", g->hwmon, attr);
    return gv_read_ll(path, out);
}

int amd_hwmon_write(const struct amd_gpu *g, const char *attr, long long value)
{
    char path[128], text[32];
    if (!g->hwmon[0])
        return ENOENT;
    snprintf(path, sizeof path, "%s/%s", g->hwmon, attr);
    snprintf(text, sizeof text, "%lld", value);
    return gv_write(path, text);
}

bool amd_power_uw(const struct amd_gpu *g, long long *uw, bool *current)
{
    *current = amd_hwmon_ll(g, "power1_input", uw);
    return *current || amd_hwmon_ll(g, "power1_average", uw);
}

unsigned amd_kfd_id(const struct amd_gpu *g)
{
    uint32_t h = 2166136261u;
    for (const char *p = g->bdf; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return (h & 0xffff) ? (h & 0xffff) : 1;
}

int amd_node_id(const struct amd_gpu *g)
{
    return g->index + 1;
}


uint64_t amd_serial(const struct amd_gpu *g)
{
    uint64_t serial = 14695981039346656037ull;
    for (const char *p = g->bdf; *p; p++)
        serial = (serial ^ (unsigned char)*p) * 1099511628211ull;
    return serial;
}

void amd_uuid(const struct amd_gpu *g, char out[static 37])
{
    char did_text[16];
    long long did = 0;
    uint64_t serial = amd_serial(g);
    if (amd_dev_read(g, "device", did_text, sizeof did_text))
        did = strtoll(did_text, NULL, 0);
    snprintf(out, 37, "%02x%02x%04x-0000-1000-80%02x-%04x%08x", (unsigned)(serial >> 56), 0xffu,
             (unsigned)(did & 0xffff), (unsigned)(serial >> 48 & 0xff), (unsigned)(serial >> 32 & 0xffff),
             (unsigned)(serial & 0xffffffff));
}

int amd_dpm_levels(const struct amd_gpu *g, const char *clk, unsigned *mhz, int max, int *current)
{
    char attr[32], table[1024];
    snprintf(attr, sizeof attr, "pp_dpm_%s", clk);
    if (!amd_dev_read(g, attr, table, sizeof table))
        return -1;
    int n = 0;
    *current = -1;
    for (const char *line = table; *line && n < max;) {
        size_t len = strcspn(line, "\n");
        const char *colon = memchr(line, ':', len);
        if (colon) {
            if (memchr(line, '*', len))
                *current = n;
            mhz[n++] = (unsigned)strtoul(colon + 1, NULL, 10);
        }
        line += len + (line[len] == '\n');
    }
    return n;
}
