/* gpu_files: the files of a node's GPUs: where they are, what they hold, who writes them. This
 * is the contract between the engine (render_gpu.c renders them, node.c publishes them each
 * tick) and fakesmi (which reads and writes nothing else). Paths are node-relative segment
 * paths; every text ends with one newline. Classes as in segment.h: R rendered (static), S
 * written by the engine each tick, A writable (a write is validated by its seg_attr validator
 * at the write, is in effect for readers at once, reaches the physics at the next tick, and is
 * a joulie.sim.write.* event of that tick, whoever wrote it: an agent or a tool).
 *
 * GPU i of a node sits on PCI bus 0x10+i (domain 0, device 0, function 0):
 *   BDF "0000:<bb>:00.0", bb two lower-case hex digits; NVML's bus id "00000000:<BB>:00.0".
 *
 * Every PCI function (engine/render/render_pci.c; Linux 6.12 drivers/pci/pci-sysfs.c): the GPUs
 * and, on buses 0x02 + k, entry k of the profile's pci[] (the BMC's VGA), all R (a profile's
 * uncore functions, render_uncore.c, sit at 0000:<bb>:<ss>.<f> with the same files):
 *   sys/devices/pci0000:<bb>/0000:<bb>:00.0/
 *     vendor, device, subsystem_vendor, subsystem_device  "0x%04x"; class "0x%06x"; revision "0x%02x"
 *     irq "%d"; enable "1"; power_state "D0"; boot_vga; dma_mask_bits, consistent_dma_mask_bits
 *     numa_node "%d" (0644): GPU i on NUMA node i * nodes / count; pci[] functions on node 0
 *     local_cpus, local_cpulist   that node's CPUs (mask, list)
 *     current_link_speed, max_link_speed ("32.0 GT/s PCIe"), current_link_width, max_link_width
 *     resource     13 lines "0x%016llx 0x%016llx 0x%016llx" (BAR0-5, ROM, bridge windows):
 *                  the profile's bars ("0:64p:256G 2:64p:2M 5:32:1M"), 64-bit BARs from
 *                  (32 TiB + bus TiB), 32-bit ones from 0x90000000 + bus * 64 MiB, size-aligned
 *     config       256 bytes: the type-0 header agreeing with the files above (command 0x0006,
 *                  status with a capability list, the BARs with their type bits, subsystem,
 *                  interrupt pin A), power management at 0x40, PCI Express endpoint at 0x50
 *     modalias     "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X"; uevent DRIVER=, PCI_CLASS=, PCI_ID=,
 *                  PCI_SUBSYS_ID=, PCI_SLOT_NAME=, MODALIAS=
 *     subsystem    -> ../../../bus/pci;   driver -> ../../../bus/pci/drivers/<drv> when bound
 *   sys/bus/pci/devices/0000:<bb>:00.0             -> ../../../devices/pci0000:<bb>/0000:<bb>:00.0
 *   proc/bus/pci/<bb>/00.0   0644, the same 256 bytes as config (drivers/pci/proc.c)
 *   proc/bus/pci/devices     one line per function, by bus and devfn (show_device); proc/bus/pci
 *                            is owned by the node
 *   sys/bus/pci/drivers/<drv>/0000:<bb>:00.0       -> the device; .../<drv>/module -> ../../../../module/<drv>
 *   sys/module/<drv>/initstate "live", refcnt "0", coresize, taint, uevent, drivers/pci:<drv>
 *     for every bound driver (amdgpu, nvidia, i915, xe, ast, mgag200, ...); the GPU drivers a
 *     node does not load are absent whatever the host has
 *
 * NVIDIA (gpus.vendor nvidia): the NVML view, one directory per GPU, upstream c0:
 *   state/nvml/driver_version        R  "590.48.01"
 *   state/nvml/cuda_version          R  "13.1"
 *   state/nvml/gpu<i>/               i = 0.. in index order, no leading zeros
 *     name, uuid, pci_bus_id, serial R  product; "GPU-8-4-4-4-12" hex; "00000000:<BB>:00.0"; 13 digits
 *     pci_device_id                  R  "0x<DDDD>10DE" (device << 16 | 0x10de, upper case)
 *     compute_cap, architecture      R  "9.0"; "hopper" (empty text when the profile has none)
 *     mig_capable                    R  "1" when the GPU can run MIG (gpus.migCapable), else "0"
 *     memory_total_mib               R  integer MiB
 *     memory_used_mib                S  integer MiB
 *     power_min_limit_mw             R  integer mW, or a token such as "[N/A]" (gpus.fieldSupport)
 *     power_max_limit_mw             R  likewise
 *     power_default_limit_mw         R  likewise
 *     power_limit_mw                 A  requested limit, integer mW (SV_NVML_LIMIT; a token when
 *                                       fieldSupport names power.limit: then every write fails
 *                                       with EOPNOTSUPP)
 *     enforced_power_limit_mw        S  the limit in force (settled toward power_limit_mw), mW
 *     power_draw_mw                  S  power averaged over the telemetry window (NVML's 1 s), mW
 *     power_instant_mw               S  power at the tick, mW
 *     total_energy_mj                S  counter: energy since the engine first started, mJ
 *                                       (a SEG_V_COUNTER value in mJ, 64 bits, never wraps)
 *     utilization_gpu_pct            S  integer %
 *     utilization_memory_pct         S  integer %
 *     temperature_gpu_c              S  integer degrees C
 *     temperature_memory_c           S  integer degrees C (HBM)
 *     pstate                         S  "P0" busy, "P8" idle
 *     clocks_graphics_mhz            S  integer MHz (graphics = SM on these GPUs)
 *     clocks_sm_mhz                  S  integer MHz
 *     clocks_memory_mhz              S  integer MHz
 *     clocks_video_mhz               S  integer MHz
 *     clocks_max_graphics_mhz        R  integer MHz (also the SM maximum)
 *     clocks_max_memory_mhz          R  integer MHz
 *     clocks_max_video_mhz           R  integer MHz
 *     supported_clocks               R  one line per memory clock, highest first:
 *                                       "<mem>:<g1> <g2> ...", graphics clocks highest first,
 *                                       already cut at that memory clock's smMaxByMem ceiling
 *     locked_gpu_clocks              A  "<min> <max>" MHz, or "none" (SV_NVML_CLOCKS: max
 *                                       clamped to the highest supported graphics clock, min
 *                                       above max -> EINVAL; "none" resets)
 *     locked_memory_clocks           A  likewise for memory clocks
 *     persistence_mode               A  "1" enabled, "0" disabled (SV_BOOL01)
 *     clocks_event_reasons           S  "0x%016llX" bitmask: 0x1 idle, 0x4 SW power cap
 *     peer_rx_bytes, peer_tx_bytes   S  bytes received from / sent to the node's other GPUs
 *     xid                            S  "<seq> <x0> <x1> <x2> <x3>": the GPU's Xid errors since the engine
 *                                          started, seq of them; x0 the last (number seq), x1 the one
 *                                          before, ... (0: none)
 *                                       (seq, 0: none) and the last one's number (docs/faults.md)
 *     ecc_errors                     S  "<corrected> <uncorrected> <rows corrected> <rows uncorrected>
 *                                        <pending>": its memory errors since then, the rows
 *                                        remapped for them and whether a remap waits for the
 *                                        GPU's reset (docs/faults.md gpu-ecc)
 *   dev/nvidiactl                    R  empty, mode 0666 (agents only stat it)
 *
 * AMD (gpus.vendor amd): amdgpu as the kernel shows it (sysfs §9), card n = the DRM
 * cards of pci[] entries with drm: true first, then the GPUs in index order:
 *   sys/class/drm/card<n>            -> ../../devices/pci0000:<bb>/0000:<bb>:00.0/drm/card<n>
 *   sys/devices/pci0000:<bb>/0000:<bb>:00.0/
 *     drm/card<n>/device             -> ../../../0000:<bb>:00.0
 *     product_name, vbios_version    R  (when the profile sets them)
 *     power_dpm_force_performance_level  A  "auto" (SV_DPM_LEVEL: prefix match of the kernel's
 *                                       words, else EINVAL)
 *     pp_dpm_sclk, pp_dpm_mclk       S  "<i>: <f>Mhz *" for the current level, "<i>: <f>Mhz " others
 *     gpu_busy_percent               S  integer %
 *     mem_info_vram_total            R  bytes;  mem_info_vram_used  S  bytes
 *     hwmon/hwmon<h>/                h = 2 + GPU index (after the HSMP sockets on HSMP hosts)
 *       name                         R  "amdgpu"
 *       power1_label                 R  "PPT"
 *       power1_cap                   A  uW, whole watts (SV_AMDGPU_CAP: kstrtou32, truncated to
 *                                       whole watts, outside [cap_min, cap_max] -> EINVAL)
 *       power1_cap_min, _max, _default  R  uW
 *       power1_average               S  uW (first-order average over the telemetry window),
 *                                       multiple of 1000; rendered unless powerSensor is input
 *       power1_input                 S  uW, instantaneous; rendered for powerSensor input/both
 *       temp1_input, temp2_input, temp3_input  S  m degrees C: edge, junction, mem
 *       temp1_label, temp2_label, temp3_label  R  "edge", "junction", "mem"
 *       freq1_input, freq1_label     S/R  sclk in Hz, "sclk"
 *       temp1_crit .. temp3_emergency  R  m degrees C: crit, crit_hyst (-273150), emergency per sensor
 *       in0_input, in0_label         R  "800" mV, "vddgfx" (librocm_smi64 5.2.3 needs the label)
 *     drm/renderD<128+n>/            the render node's directory (librocm_smi64's render minor)
 *   sys/class/hwmon/hwmon<h>         -> ../../devices/pci0000:<bb>/0000:<bb>:00.0/hwmon/hwmon<h>
 *   sys/class/kfd/kfd                -> ../../devices/virtual/kfd/kfd (render_kfd.c): topology/
 *     generation_id, system_properties, nodes/<k>/ per NUMA node (gpu_id 0) then nodes/<nodes+i>/
 *     per GPU: properties ("key value" lines: location_id = bus << 8, domain 0, hive_id 0,
 *     drm_render_minor, simd_arrays_per_engine x array_count x cu_per_simd_array =
 *     gpus.computeUnits), gpu_id (non-zero), name (gfx version), io_links/0/properties (PCIe,
 *     type 2, to its NUMA node), p2p_links/
 *   state/amdgpu/card<n>/gfx_version R  "gfx942"
 *   state/amdgpu/card<n>/energy_uj   S  counter, uJ, 64 bits (the tools' and exporters' energy)
 *
 * Intel (gpus.vendor intel): i915 (sysfs §10.1) or, with gpus.intel.driver xe, xe
 * (§10.2, the package channel 2 only, as DG2 maps it):
 *   sys/bus/pci/drivers/<drv>/0000:<bb>:00.0  -> ../../../../devices/pci0000:<bb>/0000:<bb>:00.0
 *   sys/devices/pci0000:<bb>/0000:<bb>:00.0/drm/card<n>/, sys/class/drm/card<n> as for AMD
 *   .../hwmon/hwmon<h>/ name         R  "i915" / "xe"
 *     i915: power1_max               A  0664, uW: any value is taken (SV_INTEL_PL1): rounded to
 *                                       1/8 W; 0 turns the limit off; the next tick clamps it to
 *                                       the hardware's [floor, rated max], which it then reads
 *           power1_rated_max         R  uW;  power1_max_interval  A 0664 ms (> 256000 -> EINVAL)
 *           energy1_input            S  counter, uJ, 64 bits
 *     xe:   power2_label "pkg", power2_max, power2_rated_max, power2_max_interval, energy2_input
 *
 * Node-wide tool facts (what fakesmi needs of the profile):
 *   state/tools/<tool>               R  the variant: nvidia-smi "default"; rocm-smi "current" or
 *                                       "legacy-agent-contract"; amd-smi "7.1" or "7.2". A tool
 *                                       without such a file is not installed on the node.
 *   state/gpu/unprivileged_set_is_noop  R  "1" when an unprivileged set is silently a no-op
 *   state/gpu/field_support/<field>  R  the token nvidia-smi prints for that query field
 *
 * Units everywhere are the driver's: NVML mW and mJ, hwmon uW, uJ and m degrees C.
 */
#ifndef HWEMU_GPU_FILES_H
#define HWEMU_GPU_FILES_H

#define GPU_PCI_BUS_BASE 0x10 /* GPU i on bus 0x10 + i */
#define GPU_MAX 16            /* GPUs per node */
#define NVML_DRIVER_VERSION "590.48.01"
#define NVML_CUDA_VERSION "13.1"

#endif
