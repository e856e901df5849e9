/* render_kfd: the amdkfd topology librocm_smi64 (rocm_smi_lib rocm-5.2.3, src/rocm_smi_kfd.cc,
 * rocm_smi_io_link.cc) needs before it lists a GPU: one node per NUMA node (CPU, gpu_id 0) and
 * one per AMD GPU (Linux 6.12 drivers/gpu/drm/amd/amdkfd/kfd_topology.c prints the same keys):
 *   sys/class/kfd/kfd -> ../../devices/virtual/kfd/kfd
 *   sys/devices/virtual/kfd/kfd/topology/generation_id, system_properties
 *   .../topology/nodes/<n>/properties   "<key> <value>" lines; GPUs: location_id (bus << 8),
 *                                       domain, hive_id, drm_render_minor, the CU geometry
 *   .../nodes/<n>/gpu_id, name           0 and "" for CPUs; GPUs a non-zero id and the gfx name
 *   .../nodes/<n>/io_links/0/properties  a GPU's PCIe link (type 2) to its NUMA node
 *   .../nodes/<n>/p2p_links/             empty
 * kfd is a device of class kfd (kfd_chardev.c kfd_chardev_init: device_create with devt
 * MKDEV(major, 0), name "kfd"): `subsystem`, `dev`, uevent MAJOR, MINOR, DEVNAME, power/. Its major
 * is dynamic (register_chrdev(0, ...): the kernel picks a free one at each boot); 235 is assumed.
 * Never: anything that changes while the node runs. */
#include "gpu_files.h"
#include "profile.h"
#include "render_gpu.h"
#include "render_devmodel.h"
#include "render_gpu_common.h"
#include "render_topology.h"
#include "ytree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void node_dir(struct node_layout *l, int n, char *dir, size_t len)
{
    snprintf(dir, len, "sys/devices/virtual/kfd/kfd/topology/nodes/%d", n);
    char sub[192];
    snprintf(sub, sizeof sub, "%s/p2p_links", dir);
    segb_dir(l->b, sub, 0755);
    snprintf(sub, sizeof sub, "%s/io_links", dir);
    segb_dir(l->b, sub, 0755);
}

void render_kfd(struct node_layout *l, const struct yt_node *tree, const struct yt_node *gp, int gpus,
                int first_card)
{
    segb_link(l->b, "sys/class/kfd/kfd", "../../devices/virtual/kfd/kfd");
    gpu_static(l, "sys/devices/virtual/kfd/kfd/topology", "generation_id", "1");
    gpu_static(l, "sys/devices/virtual/kfd/kfd/topology", "system_properties", "platform_oem 0\nplatform_id 0\nplatform_rev 0");
    segb_own(l->b, "sys/devices/virtual/kfd");
    dm_device(l, "sys/devices/virtual/kfd/kfd", "class/kfd", "MAJOR=235\nMINOR=0\nDEVNAME=kfd\n", DM_PM_UNSUPPORTED);
    gpu_static(l, "sys/devices/virtual/kfd/kfd", "dev", "235:0");
    int nodes = topo_numa_nodes(tree);
    char dir[160], path[224], text[1024];
    for (int k = 0; k < nodes; k++) {
        node_dir(l, k, dir, sizeof dir);
        gpu_static(l, dir, "gpu_id", "0");
        gpu_static(l, dir, "name", "%s", "");
        long long cores = prof_int(tree, "cpu.sockets", 1) * prof_int(tree, "cpu.coresPerSocket", 1) *
                          prof_int(tree, "cpu.threadsPerCore", 1) / nodes;
        gpu_static(l, dir, "properties",
                   "cpu_cores_count %lld\nsimd_count 0\nmem_banks_count 1\ncaches_count 0\nio_links_count 0\n"
                   "p2p_links_count 0\ncpu_core_id_base 0\nsimd_id_base 0\nmax_waves_per_simd 0\nlds_size_in_kb 0\n"
                   "gds_size_in_kb 0\nnum_gws 0\nwave_front_size 0\narray_count 0\nsimd_arrays_per_engine 0\n"
                   "cu_per_simd_array 0\nsimd_per_cu 0\nmax_slots_scratch_cu 0\ngfx_target_version 0\nvendor_id 0\n"
                   "device_id 0\nlocation_id 0\ndomain 0\ndrm_render_minor 0\nhive_id 0\nnum_sdma_engines 0\n"
                   "num_sdma_xgmi_engines 0\nnum_sdma_queues_per_engine 0\nnum_cp_queues 0\nmax_engine_clk_ccompute 0",
                   cores);
    }
    /* CU geometry: simd_arrays_per_engine x array_count x cu_per_simd_array = gpus.computeUnits
     * (a stated split: 1 x CUs/8 x 8) */
    long long cus = prof_int(gp, "computeUnits", 64);
    unsigned device = (unsigned)strtoul(prof_str(gp, "pci.device", "0"), NULL, 16);
    for (int i = 0; i < gpus; i++) {
        int n = nodes + i, bus = GPU_PCI_BUS_BASE + i, numa = i * nodes / gpus;
        node_dir(l, n, dir, sizeof dir);
        /* gpu_id: kfd hashes the GPU's identity into 16 bits; any stable non-zero value */
        gpu_static(l, dir, "gpu_id", "%d", 0x1000 + bus * 0x111);
        gpu_static(l, dir, "name", "%s", prof_str(gp, "gfxVersion", "amdgpu"));
        snprintf(text, sizeof text,
                 "cpu_cores_count 0\nsimd_count %lld\nmem_banks_count 1\ncaches_count 0\nio_links_count 1\n"
                 "p2p_links_count 0\ncpu_core_id_base 0\nsimd_id_base 2147487744\nmax_waves_per_simd 8\n"
                 "lds_size_in_kb 64\ngds_size_in_kb 0\nnum_gws 64\nwave_front_size 64\narray_count %lld\n"
                 "simd_arrays_per_engine 1\ncu_per_simd_array 8\nsimd_per_cu 4\nmax_slots_scratch_cu 32\n"
                 "gfx_target_version 0\nvendor_id 4098\ndevice_id %u\nlocation_id %d\ndomain 0\ndrm_render_minor %d\n"
                 "hive_id 0\nnum_sdma_engines 2\nnum_sdma_xgmi_engines 0\nnum_sdma_queues_per_engine 8\n"
                 "num_cp_queues 24\nmax_engine_clk_fcompute %lld\nlocal_mem_size 0\nfw_version 0\ncapability 0\n"
                 "debug_prop 0\nsdma_fw_version 0\nunique_id %d\nnum_xcc 1\nmax_engine_clk_ccompute 0",
                 cus * 4, cus / 8, device, bus << 8, 128 + first_card + i, prof_int(gp, "clocks.graphicsMaxMHz", 0),
                 bus);
        gpu_static(l, dir, "properties", "%s", text);
        snprintf(path, sizeof path, "%s/io_links/0", dir);
        gpu_static(l, path, "properties",
                   "type 2\nversion_major 0\nversion_minor 0\nnode_from %d\nnode_to %d\nweight 20\nmin_latency 0\n"
                   "max_latency 0\nmin_bandwidth 312\nmax_bandwidth 64000\nrecommended_transfer_size 0\nflags 1",
                   n, numa);
    }
}
