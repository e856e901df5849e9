/* nvidia_smi_common: what the files of the nvidia-smi personality share (nvidia_smi_common.c, and
 * nv_watts in nvidia_smi_watts.c): the selection of GPUs, the -q display types, the output
 * stream, and the readers of the node's state/nvml and state/gpu/field_support files
 * (engine/segment/gpu_files.h), the only files the personality reads. Everything is printed into
 * nv_out, which the command writes to stdout in one piece at the end. */
#ifndef HWEMU_FAKESMI_NVIDIA_SMI_COMMON_H
#define HWEMU_FAKESMI_NVIDIA_SMI_COMMON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "gpu_files.h"

/* The GPUs a command acts on, by index, in the order -i named them. */
struct nv_sel {
    int n;            /* selected */
    int gpu[GPU_MAX];
    int total;        /* GPUs on the node */
};

/* -q -d display types (bits); NV_D_ALL is plain -q. */
enum {
    NV_D_MEMORY = 1 << 0,
    NV_D_UTILIZATION = 1 << 1,
    NV_D_TEMPERATURE = 1 << 2,
    NV_D_POWER = 1 << 3,
    NV_D_CLOCK = 1 << 4,
    NV_D_COMPUTE = 1 << 5,
    NV_D_PIDS = 1 << 6,
    NV_D_PERFORMANCE = 1 << 7,
    NV_D_SUPPORTED_CLOCKS = 1 << 8,
    NV_D_ALL = 1 << 9,
};

/* The command's stdout. */
extern FILE *nv_out;

/* The text of a node-relative file in buf; "" when missing, remembered as below. */
const char *nv_read_path(const char *path, char *buf, size_t cap);
/* The text of state/nvml/gpu<gpu>/<file> in buf. A missing file reads as "" and is
 * remembered: the command then prints nothing on stdout and fails (exit 255). */
const char *nv_read(int gpu, const char *file, char *buf, size_t cap);
/* Has a read found a file missing (the command then fails with exit 255)? */
bool nv_incomplete(void);
/* The first file a read found missing, with the reason ("state/nvml/gpu0/name: No such file or
 * directory"); NULL when none was. */
const char *nv_missing(void);
/* Is text a whole decimal integer (not a token such as "[N/A]")? */
bool nv_num(const char *text, long long *v);
/* A mW value as watts with two decimals, as the real tool prints it: %.2f of the single-
 * precision mW / 1000 (551515 -> "551.52", where the double quotient gives "551.51"; Debian's
 * nvidia-smi 535 on the node's NVML, tests/cli/test_nvml.sh). In nvidia_smi_watts.c. */
const char *nv_watts(long long mw, char *buf, size_t cap);
/* Persistence mode: 1 enabled, 0 disabled, -1 unknown. */
int nv_persistence(int gpu);
/* Does the GPU have MIG (shown "Disabled"), or not (N/A)? */
bool nv_mig_capable(int gpu);
/* A PCI bus id in hex as numbers: "domain:bus:device.function", "domain:bus:device" (function
 * 0) or "bus:device.function" (domain 0), the forms nvml.h documents for
 * nvmlDeviceGetHandleByPciBusId_v2 (and the node's NVML parses for the real tool's -i),
 * so -i takes what the real tool on the node's NVML takes. */
bool nv_bus_id(const char *text, unsigned b[4]);

#endif
