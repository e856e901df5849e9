/* nvml_node: the node behind the library: its segment (mapped once, at the first nvmlInit*),
 * its GPUs as device handles, and the one way every entry point reads or writes a GPU's
 * state/nvml file (engine/segment/gpu_files.h). It owns the init reference count and the
 * return-code rules shared by all getters (UNINITIALIZED, INVALID_ARGUMENT for a foreign
 * handle or NULL pointer, a fieldSupport token as its NVML code). It never allocates on a read
 * and makes no system call on one (the clock is the vDSO's). */
#ifndef HWEMU_NVML_NODE_H
#define HWEMU_NVML_NODE_H
#include <stdbool.h>
#include <stdint.h>

#include "gpu_files.h"
#include "nvml_abi.h"

/* The files of one GPU the library uses, by their names under state/nvml/gpu<i>/. */
enum nv_file {
    NF_NAME, NF_UUID, NF_PCI_BUS_ID, NF_SERIAL, NF_PCI_DEVICE_ID, NF_COMPUTE_CAP, NF_ARCHITECTURE,
    NF_MIG_CAPABLE, NF_MEMORY_TOTAL, NF_MEMORY_USED, NF_POWER_MIN, NF_POWER_MAX, NF_POWER_DEFAULT,
    NF_POWER_LIMIT, NF_POWER_ENFORCED, NF_POWER_DRAW, NF_POWER_INSTANT, NF_ENERGY, NF_UTIL_GPU,
    NF_UTIL_MEMORY, NF_TEMP_GPU, NF_TEMP_MEMORY, NF_PSTATE, NF_CLK_GRAPHICS, NF_CLK_SM, NF_CLK_MEMORY,
    NF_CLK_VIDEO, NF_MAX_GRAPHICS, NF_MAX_MEMORY, NF_MAX_VIDEO, NF_SUPPORTED_CLOCKS, NF_LOCKED_GPU,
    NF_LOCKED_MEMORY, NF_PERSISTENCE, NF_REASONS, NF_XID, NF_ECC, NF_COUNT
};

_Static_assert(NF_COUNT <= 64, "nvmlDevice_st.counters has a bit per file");

/* A device handle points at one of these. */
struct nvmlDevice_st {
    unsigned index;
    uint32_t entry[NF_COUNT];   /* segment entry of each file, SEG_NONE when the node has none */
    uint64_t counters;          /* bit f: file f is a counter (only its read needs the clock) */
    unsigned bus;               /* PCI bus of the GPU */
    unsigned subsystem;         /* pciSubSystemId: subsystem device << 16 | subsystem vendor */
};

/* nvmlInit*: maps the node on the first call; NVML_SUCCESS or DRIVER_NOT_LOADED (no emulated
 * node, or one without NVIDIA GPUs: the reason goes to stderr once). Reference-counted; a
 * surplus nv_shutdown is SUCCESS. */
nvmlReturn_t nv_init(void);
nvmlReturn_t nv_shutdown(void);
/* Is the library initialised? */
bool nv_ready(void);
unsigned nv_count(void);
struct nvmlDevice_st *nv_gpu(unsigned index);
/* Has GPU index fallen off the bus (state/faults, engine/segment/seg_faults.h)? */
bool nv_lost(unsigned index);
/* The common checks of a device call: SUCCESS, UNINITIALIZED, INVALID_ARGUMENT, or GPU_IS_LOST
 * for a GPU that fell off the bus (docs/faults.md). */
nvmlReturn_t nv_check(nvmlDevice_t dev, const void *out);
/* Is the process running as a user without root (HWEMU_UNPRIVILEGED=1 at the last init)? */
bool nv_unprivileged(void);

/* A GPU file's text, without its newline, into buf (NUL-terminated). SUCCESS, or
 * NOT_SUPPORTED when the node has no such file. */
nvmlReturn_t nv_text(const struct nvmlDevice_st *g, enum nv_file f, char *buf, unsigned cap);
/* A node-relative file's text ("state/nvml/driver_version"); NOT_FOUND when missing. */
nvmlReturn_t nv_node_text(const char *path, char *buf, unsigned cap);
/* A decimal file as a number: SUCCESS, NOT_SUPPORTED (no file, "[N/A]", "[Not Supported]"),
 * NO_PERMISSION ("[Insufficient Permissions]") or UNKNOWN (any other token): a profile's
 * fieldSupport token is the NVML code the getter returns. */
nvmlReturn_t nv_u64(const struct nvmlDevice_st *g, enum nv_file f, uint64_t *v);
/* nv_u64 into an unsigned int (values past 32 bits are UNKNOWN). */
nvmlReturn_t nv_u32(const struct nvmlDevice_st *g, enum nv_file f, unsigned *v);
/* Copies text into an NVML string buffer: SUCCESS, or INSUFFICIENT_SIZE when it does not fit
 * with its NUL (nothing is written then). */
nvmlReturn_t nv_copy(const char *text, char *out, unsigned length);
/* Writes an A file as a tool would (the validator decides, the slot holds it, one event):
 * SUCCESS, or the errno as NVML names it (EINVAL INVALID_ARGUMENT, EOPNOTSUPP NOT_SUPPORTED,
 * EACCES NO_PERMISSION). Refused with NO_PERMISSION, unwritten, under HWEMU_UNPRIVILEGED=1. */
nvmlReturn_t nv_write(const struct nvmlDevice_st *g, enum nv_file f, const char *text);
/* A PCI bus id in hex, "domain:bus:device.function", "domain:bus:device" or
 * "bus:device.function" (domain 0), as b[0..3] (function 0 when absent); false when it is none
 * of them (in nvml_device.c, with the lookups that use it). */
bool nv_parse_bus_id(const char *text, unsigned b[4]);

#endif
