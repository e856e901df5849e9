/* emu_status: the node's lines of a process's own /proc/<pid>/status, for both front-ends (the
 * shim's open in wrap_file.c, the supervisor's in sv_answer.c).
 *
 * /proc/<pid>/status is the host's file (the process's name, ids, memory and signals are real)
 * with the four lines that describe the machine's CPUs and memory nodes replaced by the node's,
 * as fs/proc/array.c (task_cpus_allowed) and kernel/cgroup/cpuset.c
 * (cpuset_task_status_allowed) print them for a process allowed every CPU and node:
 *   Cpus_allowed:\t%*pb        nr_cpu_ids bits (the node's possible CPUs), lib/vsprintf.c
 *                              bitmap_string: 32-bit hex groups, most significant first, the
 *                              first group only as wide as its bits need ("3" for 2 CPUs)
 *   Cpus_allowed_list:\t%*pbl  ranges ("0-383")
 *   Mems_allowed:\t%*pb        MAX_NUMNODES bits: 1024 (NODES_SHIFT 10, x86's default with
 *                              MAXSMP, the Kconfig that gives Debian's NR_CPUS 8192; the host's
 *                              kernel prints the same 32 groups)
 *   Mems_allowed_list:\t%*pbl  ranges ("0-1")
 * Which files: /proc/self/status, /proc/thread-self/status and /proc/<n>/status where n is the
 * process's own id or its thread's, with or without task/<tid>/ (another process's status is
 * the host's, as sched_getaffinity of another process is). libnuma sizes its CPU and node
 * masks from these lines (set_nodemask_size, set_task_constraints), numactl --show prints them.
 * What it must never do: make a system call (the front-ends read the host's text and hand the
 * result out), allocate, or change a line other than these four. */
#ifndef HWEMU_SHIM_EMU_STATUS_H
#define HWEMU_SHIM_EMU_STATUS_H
#include <stddef.h>
#include <sys/types.h>

#define EMU_STATUS_MAX 16384 /* the longest status text taken (the kernel's is about 1.5 KiB) */
#define EMU_MAX_NUMNODES 1024

/* Is abs (an absolute path) the status file of process pid, thread tid? If so, the host path
 * the text comes from (self and thread-self named by number, so a supervisor reads its
 * target's) goes into host (cap bytes) and 1 is returned; else 0. */
int emu_status_path(const char *abs, pid_t pid, pid_t tid, char *host, size_t cap);

/* The host's status text in[0..n) with the node's four lines (ncpus CPUs, nnodes memory nodes)
 * into out (cap bytes): the length, or 0 when it does not fit (the caller then gives the
 * host's text). A line the host's text lacks is not added. */
size_t emu_status_filter(const char *in, size_t n, int ncpus, int nnodes, char *out, size_t cap);

/* %*pb of a mask of nbits bits whose first nset are set, and %*pbl of it, into out: the length
 * (no newline), or 0 when it does not fit. */
size_t emu_mask_hex(int nbits, int nset, char *out, size_t cap);
size_t emu_mask_list(int nset, char *out, size_t cap);

#endif
