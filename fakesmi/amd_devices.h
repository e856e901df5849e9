/* amd_devices: the ground rocm-smi and amd-smi share. First, the node's AMD GPUs as both tools
 * number them (upstream f.2): the entries of sys/class/drm named exactly card<n>, in
 * n order, whose device/vendor is 0x1002; a GPU's index is its position in that list, so a BMC
 * VGA card0 makes card1 GPU 0. Everything here reads the node through gpu_view. (What both
 * tools inherit from being Python programs is pyargs.h's.) */
#ifndef HWEMU_FAKESMI_AMD_DEVICES_H
#define HWEMU_FAKESMI_AMD_DEVICES_H

#include "gpu_files.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One AMD GPU. Paths are node-relative. */
struct amd_gpu {
    int index;      /* position in the tools' list: rocm-smi -d N, amd-smi -g N */
    int card;       /* DRM card number: sys/class/drm/card<card> */
    char dev[48];   /* its PCI device directory through the class link */
    char hwmon[80]; /* its hwmon directory, "" when it has none */
    char bdf[16];   /* "0000:10:00.0", "" when it sits on no bus fakesmi finds */
};

/* Lists the node's AMD GPUs into out (GPU_MAX entries); returns how many. */
int amd_gpus(struct amd_gpu *out);
/* Reads an attribute of the GPU's PCI device (product_name, pp_dpm_sclk, ...). */
bool amd_dev_read(const struct amd_gpu *g, const char *attr, char *buf, size_t cap);
/* Reads a decimal hwmon attribute (power1_cap in uW, temp1_input in m degrees C). */
bool amd_hwmon_ll(const struct amd_gpu *g, const char *attr, long long *out);
/* Writes a decimal value to a hwmon attribute: 0 or the errno the driver gives. */
int amd_hwmon_write(const struct amd_gpu *g, const char *attr, long long value);
/* The GPU's own power reading in uW: power1_input ("current socket" power) when the GPU has
 * it, else power1_average. *current says which. False when it has neither. */
bool amd_power_uw(const struct amd_gpu *g, long long *uw, bool *current);
/* The KFD gpu_id both tools show (rocm-smi's GUID, amd-smi's KFD_ID): synthetic, a 16-bit
 * FNV-1a hash of the PCI address as KFD's is a hash, never 0. */
unsigned amd_kfd_id(const struct amd_gpu *g);
/* The KFD topology node both tools show: synthetic, index + 1 (one CPU node first). */
int amd_node_id(const struct amd_gpu *g);
/* The GPU's ASIC serial (amd-smi's asic_serial, sysfs unique_id on the real machine):
 * synthetic, the 64-bit FNV-1a hash of the PCI address. */
uint64_t amd_serial(const struct amd_gpu *g);
/* The GPU's UUID as amdsmi_uuid_gen builds it from the serial and the PCI device id: serial
 * byte 7, the function 0xff and the device id, then version 1, the variant with serial byte 6,
 * and serial bytes 0-5 ("abff74a1-0000-1000-80d1-3c23a9580558"). out holds 37 bytes. */
void amd_uuid(const struct amd_gpu *g, char out[static 37]);
/* The levels of the GPU's pp_dpm_<clk> table ("sclk", "mclk") in MHz, in the file's order, into
 * mhz (at most max); *current is the index of the level marked '*' (-1 when none is).
 * Returns the number of levels, -1 when the GPU has no such table. */
int amd_dpm_levels(const struct amd_gpu *g, const char *clk, unsigned *mhz, int max, int *current);

#endif
