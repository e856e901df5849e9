/* render_topology: the structure of a node's processors and memory as sysfs shows it, and the
 * placement the other renderers share (which NUMA node a CPU or a PCI device is on).
 *
 * Files (Linux 6.12 drivers/base/{cpu,topology,cacheinfo,node}.c; Documentation/ABI/stable/
 * sysfs-devices-system-cpu, sysfs-devices-node; every value ends in "\n"):
 *   sys/devices/system/cpu/{online,possible,present}   list of every CPU ("0-95")
 *   sys/devices/system/cpu/{offline,isolated}         empty line; kernel_max "8191" (Debian NR_CPUS-1)
 *   sys/devices/system/cpu/smt/active, control        "1"/"on" with SMT, "0"/"off" with one thread per
 *                                                     core, "0"/"notsupported" on a VM (cpu.hypervisor)
 *   sys/devices/system/cpu/cpu<N>/online              "1", every CPU but 0 (which cannot go offline)
 *   sys/devices/system/cpu/cpu<N>/node<K>             -> ../../node/node<K>
 *   .../cpu<N>/topology/physical_package_id, die_id   the socket ("%d"; die = package: one die each)
 *   .../topology/core_id                              the core within its package
 *   .../topology/cluster_id                           Intel: the L2 id (APIC id >> 1); AMD: 65535
 *   .../topology/{thread_siblings,core_cpus}[_list]   the CPUs of the core
 *   .../topology/{core_siblings,package_cpus,die_cpus}[_list]  the CPUs of the package
 *   .../topology/cluster_cpus[_list]                  the CPUs sharing the L2 (the core's threads)
 *   .../cpu<N>/cache/index<K>/                        one per cpu.caches entry, in order:
 *       id, level, type (Data|Instruction|Unified), size ("<KB>K"), coherency_line_size,
 *       ways_of_associativity, number_of_sets (size / (ways * line)), physical_line_partition (1),
 *       shared_cpu_map, shared_cpu_list, uevent (empty)
 *   sys/devices/system/node/{possible,online,has_cpu,has_memory,has_normal_memory}  "0-1"
 *   sys/devices/system/node/has_generic_initiator    empty line
 *   sys/devices/system/node/node<K>/cpumap, cpulist   its CPUs; distance: the numa.distances row
 *   .../node<K>/meminfo                               the kernel's layout; MemTotal = node.capacity.memoryKi
 *                                                     shared evenly, MemFree a fixed 90 % (static)
 *   .../node<K>/numastat, hugepages/hugepages-2048kB/{nr,free,surplus}_hugepages  zeros
 * Masks are hex in 32-bit groups, most significant first, comma-separated, as wide as the
 * number of possible CPUs (lib/vsprintf.c bitmap_string); lists are "a-b,c" ranges.
 *
 * Placement. APIC ids are derived as the kernel derives the ids from them: thread bits
 * (1 with SMT), then core bits (ceil log2 of cores per socket), then the package, so Intel
 * L1/L2 cache ids are apicid >> 1 and an L3 shared by k cores has id apicid >> (smt + log2 k).
 * NUMA node of a CPU: its socket split into numa.nodes / sockets parts by core (SNC, NPS), or
 * sockets grouped into numa.nodes (a VM with a package per vCPU, one node). A node without
 * numa.nodes has one node per socket (one in all on a VM). */
#ifndef HWEMU_RENDER_TOPOLOGY_H
#define HWEMU_RENDER_TOPOLOGY_H
#include "layout.h"

#include <stddef.h>

struct yt_node;

void render_topology(struct node_layout *l, const struct yt_node *tree);

/* The node's NUMA nodes (at least 1). */
int topo_numa_nodes(const struct yt_node *tree);
/* The CPUs of NUMA node k as a list ("0-23,48-71\n") and as a mask into buf; false when k is
 * not a node or buf is too small. */
bool topo_node_cpus(const struct yt_node *tree, int k, bool mask, char *buf, size_t len);

#endif
