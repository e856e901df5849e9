/* rsmi_unsupported: every other name of the ROCm SMI ABI that Debian's librocm_smi64 5.2.3
 * exports and pyrsmi 0.2.0 calls (XGMI, partitions, fans, overdrive, PCIe bandwidth and
 * throughput, counters, events, processes, topology links, firmware): exported so that a
 * C client's link and a ctypes lookup succeed. Each answers INVALID_ARGS before rsmi_init (the
 * real library's device list is empty then) and NOT_SUPPORTED after; it reads and writes no
 * argument and takes any (the SysV ABI's caller cleans up). Sorted, one a line. */
#include "rsmi_abi.h"
#include "rsmi_status.h"

#define UNSUPPORTED(name)                                                                                         \
    RSMI_API rsmi_status_t name(void);                                                                            \
    rsmi_status_t name(void)                                                                                      \
    {                                                                                                             \
        return rsmi_ready() ? RSMI_STATUS_NOT_SUPPORTED : RSMI_STATUS_INVALID_ARGS;                               \
    }

UNSUPPORTED(rsmi_compute_process_gpus_get)
UNSUPPORTED(rsmi_compute_process_info_by_pid_get)
UNSUPPORTED(rsmi_compute_process_info_get)
UNSUPPORTED(rsmi_counter_available_counters_get)
UNSUPPORTED(rsmi_counter_control)
UNSUPPORTED(rsmi_counter_read)
UNSUPPORTED(rsmi_dev_clk_range_set)
UNSUPPORTED(rsmi_dev_compute_partition_get)
UNSUPPORTED(rsmi_dev_compute_partition_reset)
UNSUPPORTED(rsmi_dev_compute_partition_set)
UNSUPPORTED(rsmi_dev_counter_create)
UNSUPPORTED(rsmi_dev_counter_destroy)
UNSUPPORTED(rsmi_dev_counter_group_supported)
UNSUPPORTED(rsmi_dev_ecc_count_get)
UNSUPPORTED(rsmi_dev_ecc_enabled_get)
UNSUPPORTED(rsmi_dev_ecc_status_get)
UNSUPPORTED(rsmi_dev_fan_reset)
UNSUPPORTED(rsmi_dev_fan_rpms_get)
UNSUPPORTED(rsmi_dev_fan_speed_get)
UNSUPPORTED(rsmi_dev_fan_speed_max_get)
UNSUPPORTED(rsmi_dev_fan_speed_set)
UNSUPPORTED(rsmi_dev_firmware_version_get)
UNSUPPORTED(rsmi_dev_gpu_clk_freq_set)
UNSUPPORTED(rsmi_dev_gpu_metrics_info_get)
UNSUPPORTED(rsmi_dev_gpu_reset)
UNSUPPORTED(rsmi_dev_memory_partition_get)
UNSUPPORTED(rsmi_dev_memory_partition_reset)
UNSUPPORTED(rsmi_dev_memory_partition_set)
UNSUPPORTED(rsmi_dev_memory_reserved_pages_get)
UNSUPPORTED(rsmi_dev_od_clk_info_set)
UNSUPPORTED(rsmi_dev_od_volt_curve_regions_get)
UNSUPPORTED(rsmi_dev_od_volt_info_get)
UNSUPPORTED(rsmi_dev_od_volt_info_set)
UNSUPPORTED(rsmi_dev_overdrive_level_get)
UNSUPPORTED(rsmi_dev_overdrive_level_set)
UNSUPPORTED(rsmi_dev_overdrive_level_set_v1)
UNSUPPORTED(rsmi_dev_pci_bandwidth_get)
UNSUPPORTED(rsmi_dev_pci_bandwidth_set)
UNSUPPORTED(rsmi_dev_pci_replay_counter_get)
UNSUPPORTED(rsmi_dev_pci_throughput_get)
UNSUPPORTED(rsmi_dev_perf_level_set_v1)
UNSUPPORTED(rsmi_dev_power_profile_presets_get)
UNSUPPORTED(rsmi_dev_power_profile_set)
UNSUPPORTED(rsmi_dev_subsystem_name_get)
UNSUPPORTED(rsmi_dev_supported_func_iterator_close)
UNSUPPORTED(rsmi_dev_supported_func_iterator_open)
UNSUPPORTED(rsmi_dev_supported_variant_iterator_open)
UNSUPPORTED(rsmi_dev_vbios_version_get)
UNSUPPORTED(rsmi_dev_volt_metric_get)
UNSUPPORTED(rsmi_dev_vram_vendor_get)
UNSUPPORTED(rsmi_dev_xgmi_error_reset)
UNSUPPORTED(rsmi_dev_xgmi_error_status)
UNSUPPORTED(rsmi_dev_xgmi_hive_id_get)
UNSUPPORTED(rsmi_event_notification_get)
UNSUPPORTED(rsmi_event_notification_init)
UNSUPPORTED(rsmi_event_notification_mask_set)
UNSUPPORTED(rsmi_event_notification_stop)
UNSUPPORTED(rsmi_func_iter_next)
UNSUPPORTED(rsmi_func_iter_value_get)
UNSUPPORTED(rsmi_is_P2P_accessible)
UNSUPPORTED(rsmi_minmax_bandwidth_get)
UNSUPPORTED(rsmi_perf_determinism_mode_set)
UNSUPPORTED(rsmi_topo_get_link_type)
UNSUPPORTED(rsmi_topo_get_link_weight)
UNSUPPORTED(rsmi_topo_numa_affinity_get)
UNSUPPORTED(rsmi_utilization_count_get)
