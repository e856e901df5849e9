/* render_cpuinfo: the text of a node's /proc/cpuinfo, and where each logical CPU sits.
 *
 * Owns: the cpuinfo format and the numbering of logical CPUs over sockets, cores and SMT
 * threads. Other renderers (cpufreq policies, per-CPU directories) take the CPU list from here
 * so that every file of a node agrees on which CPU is where.
 *
 * The text (the numbering as upstream §d; the fields as the kernel prints them):
 *  - cpu.cpuinfoVerbatim set (corpus replays): that text, byte for byte. The CPUs are read from
 *    it: one per blank-line-separated block with an integer `processor`; `physical id` and
 *    `core id` give socket and core (0 when unreadable), and the threads of one (socket, core)
 *    are numbered in the order their blocks appear.
 *  - otherwise one block per logical CPU k = 0 … S·C·T−1, ascending, each ending with an empty
 *    line (so the text ends "\n\n"), in the order and padding of arch/x86/kernel/cpu/proc.c
 *    show_cpuinfo (Linux 6.12). Every line is key, TAB padding, ":", then " value" (a line
 *    without words is the bare key):
 *        processor\t: k
 *        vendor_id\t: cpu.vendorID
 *        cpu family\t: cpu.family
 *        model\t\t: cpu.model
 *        model name\t: cpu.modelName ("unknown" when empty, as the kernel prints)
 *        stepping\t: cpu.stepping
 *        microcode\t: cpu.microcode as written ("0x…"; left out when empty or 0, as the
 *                    kernel leaves out revision 0)
 *        cpu MHz\t\t: cpu.cpuMHz with exactly three decimals, rounded as "%.3f" rounds
 *        cache size\t: <KB> KB, the sizeKB of a cpu.caches entry: level 2 on AuthenticAMD (the
 *                    kernel takes CPUID 0x80000006's L2), the highest level ≥ 2 otherwise
 *                    (intel.c: L3, else L2); left out without one
 *        physical id\t: socket of k
 *        siblings\t: C·T
 *        core id\t\t: core of k
 *        cpu cores\t: C
 *        apicid\t\t: the APIC id render_topology derives: socket << (tb + cb) | core << tb |
 *                    thread, tb = ⌈log2 T⌉, cb = ⌈log2 C⌉ (k on a VM with a package per vCPU)
 *        initial apicid\t: the same
 *        fpu\t\t: yes, fpu_exception\t: yes, cpuid level\t: cpu.cpuidLevel, wp\t\t: yes
 *        flags\t\t: the words of cpu.flags, then those the facts imply that are missing:
 *                    `hypervisor` (cpu.hypervisor), `hwp` (cpufreq.hwp) and `hwp_epp`
 *                    (cpufreq.hwp with cpufreq.driver intel_pstate), in the kernel's order
 *                    (cpufeatures.h: hypervisor is word 4, hwp and hwp_epp word 14);
 *                    without cpufreq.hwp HWP's words (hwp and hwp_*) are dropped; single
 *                    spaces; the bare key when there are none
 *        vmx flags\t: the words of cpu.vmxFlags, only when they exist and flags has vmx
 *        bugs\t\t: the words of cpu.bugs (the bare key when none)
 *        bogomips\t: cpu.tscKHz / 500 "." (tscKHz / 5) mod 100: the kernel's
 *                    lpj/(500000/HZ) "." (lpj/(5000/HZ)) % 100 with lpj = tsc_khz·1000/HZ
 *                    (tsc.c sets loops_per_jiffy from the TSC), the same for every HZ
 *        TLB size\t: cpu.tlbSize " 4K pages", only when > 0 (AMD)
 *        clflush size\t: 64, cache_alignment\t: 64
 *        address sizes\t: cpu.physAddrBits " bits physical, " cpu.virtAddrBits " bits virtual"
 *        power management: the words of cpu.powerManagement (the bare key when none)
 *    Each profile's values are sourced facts (its `sources`); docs/whole-node.md lists them.
 *  - Numbering (cpu.numbering "" or socket-major-smt-last, the only one): CPU k is on socket
 *    (k mod S·C)/C, core k mod C, thread k/(S·C): every first thread socket by socket, then the
 *    second threads. With cpu.oneSocketPerVCPU every CPU is its own package: physical id k,
 *    core 0, siblings 1, cpu cores 1. cpu.diesPerPackage does not show in cpuinfo.
 *  S, C, T are cpu.sockets, coresPerSocket, threadsPerCore; a tree where one is below 1 has no
 *  CPUs (and an empty text). A carriage return or newline inside a string value is printed as a
 *  space, so a value can never start a line of its own.
 *
 * Never: I/O, globals, locale-dependent formatting, or validation (profile_validate has done it;
 * whatever the tree holds, the result is well-formed text). Allocates only the results it
 * returns. */
#ifndef HWEMU_RENDER_CPUINFO_H
#define HWEMU_RENDER_CPUINFO_H
#include <stdbool.h>
#include <stddef.h>

struct yt_node;

/* One logical CPU: its number (cpuinfo `processor`) and where it sits. */
struct cpuinfo_cpu {
    int id, socket, core, thread;
};

/* The node's /proc/cpuinfo as a malloc'd, NUL-terminated text (the caller frees it); *len (when
 * len is non-NULL) is its length without the NUL. NULL only when memory runs out. */
char *render_cpuinfo(const struct yt_node *tree, size_t *len);

/* Number of logical CPUs (S·C·T, or the blocks of a verbatim cpuinfo); saturates at INT_MAX. */
int cpuinfo_ncpus(const struct yt_node *tree);

/* Socket, core and SMT thread of logical CPU `cpu` (its `processor` number). Each of them is
 * -1 when the node has no such CPU. Any output pointer may be NULL. Without a verbatim cpuinfo
 * the CPU numbers are exactly 0 … ncpus−1; a verbatim one may skip numbers (offline CPUs), so
 * callers that walk every CPU of any profile use cpuinfo_cpus. */
void cpuinfo_cpu_topology(const struct yt_node *tree, int cpu, int *socket, int *core, int *thread);

/* Every logical CPU, by ascending number (ties keep the verbatim text's order), as a malloc'd
 * array in *out (the caller frees it; NULL when there are none). Returns the count, or -1 when
 * memory runs out (*out is then NULL). */
int cpuinfo_cpus(const struct yt_node *tree, struct cpuinfo_cpu **out);

/* Is w one of the whitespace-separated words (a cpu.flags list)? */
bool cpuinfo_has_word(const char *words, const char *w);

struct node_layout;
/* The node's cpuinfo entry (render_cpuinfo.c, after the cpufreq policies and render_proc's
 * busy counters are rendered): cpu_policy[k] is the CPU index of CPU index k's policy
 * (phys_cpu_params.cpu_policy). `cpu MHz` is then a view of each policy's scaling_cur_freq, or
 * of its scaling_min_freq while the CPU is idle under intel_pstate in active mode. */
void render_cpuinfo_entry(struct node_layout *l, const struct yt_node *tree, const unsigned short *cpu_policy,
                          int npolicy);

#endif
