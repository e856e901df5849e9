/* render: turning a node's merged profile and physics parameters into its files (the
 * segment's entries) and their bindings. render.c lays out the node root, topology and
 * cpuinfo and calls the per-subsystem renderers below, which only call layout.h and the
 * segment builder: never the runtime, the engine or anything above. */
#ifndef HWEMU_RENDER_H
#define HWEMU_RENDER_H
#include "layout.h"
#include "physics_cpu.h"
#include "physics_gpu.h"

struct pci_proc;

struct yt_node;
struct job_cgroups;

/* Renders every file of a node of this profile (sys/, cpuinfo, state/) into l; cg: the spec's
 * job cgroups (NULL: none). */
void render_node(struct node_layout *l, const struct yt_node *tree, const char *profile,
                 const struct phys_cpu_params *p, const struct phys_gpu_params *g, const struct job_cgroups *cg);
/* The cgroup v2 tree under sys/fs/cgroup with its job slots (render_cgroup.c; after render_proc,
 * whose time counters its cpu.stat files read), and how many job slots it has. */
void render_cgroup(struct node_layout *l, const struct phys_cpu_params *p, const struct job_cgroups *cg);
int render_cgroup_slots(const struct phys_cpu_params *p, const struct job_cgroups *cg);
/* Each job slot's process as proc/<pid> (render_jobproc.c; after render_cgroup). */
void render_jobproc(struct node_layout *l, const struct phys_cpu_params *p, const struct job_cgroups *cg);
void render_powercap(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p);
void render_cpufreq(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p);
void render_hsmp(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p);
/* /dev/cpu/<n>/msr (after powercap, cpufreq, proc and coretemp: its registers name their files,
 * busy counters and temperatures). */
void render_msr(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p);
/* state/platform/power, /dev/ipmi0 and, when the profile declares them, Cray pm_counters. */
void render_platform(struct node_layout *l, const struct yt_node *tree, const struct phys_gpu_params *g);
/* cpufreq/stats of every table-driver policy (render_cpufreq.c; after render_cpufreq and
 * render_proc, whose policies and elapsed counter it reads). */
void render_cpufreq_stats(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p);
/* /proc/stat, uptime, loadavg, meminfo and their values (render_proc.c). */
void render_proc(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p);
/* Each CPU's thermal_throttle counters, Intel (render_throttle.c). */
void render_thermal_throttle(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p);
/* coretemp / k10temp hwmon devices (render_coretemp.c). */
void render_coretemp(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p);
/* cpuidle of every CPU (render_cpuidle.c; after render_proc, whose counters it reads). */
void render_cpuidle(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p);
/* The share of a CPU's idle time, in permille, its cpuidle files give the core C6 states (C6,
 * C6P: what MSR_CORE_C6_RESIDENCY counts); 0 when the node has no such state. */
int render_cpuidle_c6_permille(const struct yt_node *tree);
/* /proc/modules: the drivers of the devices rendered so far (render_modules.c; call it last). */
void render_modules(struct node_layout *l, const struct yt_node *tree);
/* The logical CPUs the physics runs and /proc/stat shows (0 without a CPU topology). */
int render_proc_ncpus(const struct phys_cpu_params *p);
/* The GPUs (engine/segment/gpu_files.h): PCI devices, the vendor's sysfs and state files, tool
 * facts; every PCI function's line of /proc/bus/pci/devices goes to pp (render_pci.h). */
void render_gpus(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p,
                 const struct phys_gpu_params *g, struct pci_proc *pp);
/* The processor's uncore PCI functions a profile's `uncore` lists, per socket (render_uncore.c). */
void render_uncore(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p,
                   struct pci_proc *pp);

#endif
