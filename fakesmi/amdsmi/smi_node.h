/* smi_node: the node behind libamd_smi.so and librocm_smi64.so: its segment, mapped once at
 * the first init of either library (gpu_view: HWEMU_SEGMENT, or HWEMU_NODE under HWEMU_ROOT),
 * its AMD GPUs as rocm-smi and amd-smi number them (amd_devices), and the reads and the one
 * write (the power cap) both ABIs share, in the driver's units: hwmon uW and m degrees C,
 * DPM levels in MHz, the energy counter in uJ. Every value comes from the node's files; a file
 * the node lacks is "not supported", as the real libraries find no sysfs file. */
#ifndef HWEMU_SMI_NODE_H
#define HWEMU_SMI_NODE_H
#include "amd_devices.h"

#include <stdbool.h>
#include <stdint.h>

/* Why the node cannot be used. */
enum smi_open { SMI_OPEN = 0, SMI_NO_NODE, SMI_NO_AMD_GPU };

/* Maps the node on the first call (thread-safe) and lists its GPUs; later calls return the
 * first answer. The reason for a failure goes to stderr once, prefixed with lib. */
enum smi_open smi_open(const char *lib);
unsigned smi_count(void);
/* GPU i, NULL past the count. */
const struct amd_gpu *smi_gpu(unsigned i);
/* Is the process running as a user without root (HWEMU_UNPRIVILEGED=1)? */
bool smi_unprivileged(void);

/* A hex attribute of the GPU's PCI device ("device", "revision", "subsystem_vendor"). */
bool smi_dev_hex(const struct amd_gpu *g, const char *attr, unsigned *v);
/* A decimal attribute of the GPU's PCI device ("mem_info_vram_total", "gpu_busy_percent"). */
bool smi_dev_ll(const struct amd_gpu *g, const char *attr, long long *v);
/* The energy counter's unit, as both libraries report it (rocm_smi's kEnergyCounterResolution). */
#define SMI_ENERGY_RESOLUTION_UJ 15.3f
/* The energy counter (state/amdgpu/card<n>/energy_uj, uJ) in counts of that resolution: counts
 * x the float 15.3f, as a client multiplies them, is the engine's energy to one count. *ns is
 * the time of the reading (ns, the segment's clock, as the driver stamps gpu_metrics). */
bool smi_energy(const struct amd_gpu *g, uint64_t *counts, uint64_t *ns);
/* Temperature sensor (0 edge, 1 junction, 2 memory: the hwmon temp<N>_label) and metric
 * (rocm_smi's and amd-smi's metric enum: 0 input, 1 max, ... 13 highest) in m degrees C.
 * False when the node has no such file (the libraries' NOT_SUPPORTED). */
bool smi_temp(const struct amd_gpu *g, unsigned sensor, unsigned metric, long long *mc);
/* rsmi_dev_power_cap_set: power<sensor+1>_cap = uw after the library's own checks (no root:
 * EACCES; outside [power1_cap_min, power1_cap_max]: EINVAL), then the attribute's validator.
 * 0 or the errno. */
int smi_cap_set(const struct amd_gpu *g, unsigned sensor, uint64_t uw);

/* power_dpm_force_performance_level as the enum both ABIs share (auto 0 ... perf_determinism 8,
 * 0x100 for another word). False when the GPU has no such file. */
bool smi_perf_level(const struct amd_gpu *g, uint32_t *level);
/* Sets it by that enum: 0 or the errno (EINVAL past perf_determinism, EACCES without root). */
int smi_perf_level_set(const struct amd_gpu *g, uint32_t level);
/* mem_info_<vram|vis_vram|gtt>_<what> (type 0, 1, 2; what "total" or "used"), bytes. False for
 * another type or a file the GPU lacks. */
bool smi_memory(const struct amd_gpu *g, uint32_t type, const char *what, uint64_t *bytes);

#endif
