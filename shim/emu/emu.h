/* emu: the emulation core shared by the LD_PRELOAD shim and the seccomp supervisor.
 *
 * Owns: which node this process emulates (HWEMU_NODE with HWEMU_ROOT, default /dev/shm/hwemu,
 * or HWEMU_SEGMENT, a segment file), mapping its segment once, and the translation of the
 * paths an agent uses into the node's files:
 *   /proc/cpuinfo          -> cpuinfo
 *   /proc                  -> proc             listed with the host's entries after the node's
 *   /proc/<name>[/...]     -> proc/<name>...   the files the node renders there (stat, ...) and
 *                                              its jobs' processes (proc/<pid>/..., owned); any
 *                                              other /proc path (self, host pids) is the host's
 *   /sys/fs/cgroup/.../cpuset.{cpus,mems}[.effective], cpuset.effective_{cpus,mems}
 *                          -> cgroup/cpuset.{cpus,mems}   whatever cgroup directory names them
 *   /dev                   -> dev              listed with the host's entries after the node's
 *   /dev/<class>[/...]     -> dev/<class>...   nvidia*, dri, kfd, cpu, ipmi*, hsmp: the node's
 *                                              devices (nvidiactl 195:255, cpu/<n>/msr, ipmi0)
 *                                              or absent, whatever the host has (emu_hide.h);
 *                                              any other /dev path is the host's
 *   a GPU driver library the node lacks, anywhere (emu_hide.h)       -> absent (ENOENT)
 *   /host-sys[/...]        -> sys[/...]        the whole tree is the node's (the Joulie mount)
 *   /sys/...               -> sys/...          the node's where it renders it: a path that
 *                                              resolves in the segment, or that lies under a
 *                                              directory the node owns (powercap, cpufreq,
 *                                              intel_pstate, amd_pstate, amd_hsmp, hwmon), is
 *                                              emulated; any other /sys path is the host's
 * Relative paths are taken against the working directory, which the shim tracks: a chdir into
 * an emulated directory leaves the kernel's cwd where it was and is handed to children in
 * HWEMU_CWD (with the kernel's cwd of that moment in HWEMU_CWD_BASE); a child whose
 * environment lost it (shells export from their own variables) takes PWD when PWD is a
 * directory of the node and not the kernel's cwd. What it
 * must never do: allocate, lock, or make a system call when answering for an emulated path
 * (the clock is the vDSO's); or touch errno on a path that is not the node's. */
#ifndef HWEMU_SHIM_EMU_H
#define HWEMU_SHIM_EMU_H
#include "segment.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/statfs.h>

#define EMU_PASS (-4096) /* not the node's: hand the call to libc (never -1, a wrapper's failure) */

enum emu_root { EMU_ROOT_SYS = 1, EMU_ROOT_HOST_SYS, EMU_ROOT_PROC, EMU_ROOT_DEV };

/* The mapped segment, or NULL when no node is configured or it cannot be mapped (a message
 * on stderr says why, once). Safe from any thread and from signal handlers after the first
 * call, which the shim's constructor makes. */
struct seg *emu_seg(void);
/* Maps the segment now (the constructor calls it): 0, or -1 when there is nothing to emulate. */
int emu_init(void);
/* The time the node's counters are read at (a CLOCK_MONOTONIC in ns): seg_now_ns() unless a front
 * end set another clock with emu_set_clock before its first read. The preload shim keeps
 * seg_now_ns (its clock_gettime is the shim's, emulated under --time emulated); the seccomp
 * supervisor, whose own clock is the host's, sets the emulated one (shim/supervisor/sv_time.c). */
int64_t emu_now_ns(void);
void emu_set_clock(int64_t (*now)(void));

/* Where an absolute, or cwd-relative, path lands. Returns EMU_PASS, or 0 with the entry (and
 * root, the prefix the agent used, for answers that name paths), or an errno (ENOENT,
 * ENOTDIR, ELOOP, ENAMETOOLONG) that the call must fail with. follow: resolve a final link. */
int emu_path(const char *path, bool follow, uint32_t *entry, enum emu_root *root);
/* The same for a path relative to an emulated directory entry (the *at calls). */
int emu_path_at(uint32_t dir, enum emu_root root, const char *path, bool follow, uint32_t *entry);

/* stat of an entry as sysfs/procfs show it (size 4096 for attributes, 0 for cpuinfo and
 * directories, the kernel's modes, uid/gid 0, one device per root). */
void emu_stat(uint32_t entry, enum emu_root root, struct stat *st);
/* The same as struct statx (statx(2)'s basic fields). */
void emu_stat_to_statx(const struct stat *st, struct statx *sx);
/* The same as struct stat64 (the 64-bit-offset API's; same layout on x86_64, copied field by
 * field so nothing depends on that). */
void emu_stat_to64(const struct stat *s, struct stat64 *d);
/* The path an agent would see for an entry ("/sys/..." or "/host-sys/..." or
 * "/proc/cpuinfo") into buf; its length, or -1 when buf is too small. */
int emu_agent_path(uint32_t entry, enum emu_root root, char *buf, size_t len);
/* A relative path joined to the tracked working directory into buf (an absolute one as is);
 * NULL when it does not fit or the working directory is unknown. */
const char *emu_absolute(const char *path, char *buf, size_t len);
/* The working directory changed (chdir/fchdir succeeded): track it for relative paths;
 * emulated: it is the node's directory, the kernel's cwd did not move. */
void emu_set_cwd(const char *abs, bool emulated);
/* Is the working directory an emulated one (the kernel's cwd stayed elsewhere)? */
bool emu_cwd_emulated(void);

/* Does the node own this directory whole, itself or through an ancestor (SEG_F_OWNED)? */
bool emu_owned(const struct seg *s, uint32_t entry);
/* The node's logical CPUs (the cpuN directories it renders); 0 when none is known. */
int emu_ncpus(void);
/* The node's NUMA nodes (the nodeN directories under sys/devices/system/node); 0 when none. */
int emu_nnodes(void);

/* The events and stores of one write call (seg_attr rules; R and S files with a write bit
 * take the write and change nothing, as the seed describes), the event naming writer pid.
 * Returns 0 or the errno; EINVAL for the IPMI device, which has no write. */
int emu_write(uint32_t entry, const char *buf, size_t len, int pid);
/* The OpenIPMI device's major: dynamic on a real host (ipmi_devintf registers "ipmidev" with
 * major 0); hwemu shows this one. */
#define EMU_IPMI_MAJOR 239
/* The permission check of a device node (mode 0600, root's) before its driver's open: EACCES for
 * a user other than root, as the VFS answers before the driver sees the call; 0 for root (taken
 * to hold CAP_SYS_RAWIO, which the msr driver checks next) and for any other entry. */
int emu_device_check(uint32_t entry, unsigned euid);
/* Is the entry an MSR device (class M)? Its reads never move the file position (msr.c). */
bool emu_is_msr(uint32_t entry);
/* MAX_RW_COUNT (include/linux/fs.h: INT_MAX & PAGE_MASK): the most one read or write moves. */
#define EMU_MAX_RW_COUNT 0x7ffff000u
/* pread of an MSR device: n bytes at offset off = MSR address, as arch/x86/kernel/msr.c's
 * msr_read answers it: n cut to EMU_MAX_RW_COUNT (vfs_read), EINVAL for n % 8, then the
 * register read once per 8 bytes (`for (; count; count -= 8)`, the same register each time).
 * Returns the count to fill, the caller writing the register (reg, u32 lo then u32 hi,
 * little-endian) count / 8 times and stopping at the first 8 bytes it cannot copy (the
 * driver's partial success), or -errno (EINVAL, EIO no such register, EBADF opened for writing
 * only). The register is read once for all its copies: one instant. */
ssize_t emu_msr_read(uint32_t entry, int flags, int64_t off, size_t n, unsigned char reg[8]);
/* pwrite of an MSR device by pid: the count, or -errno (EINVAL n % 8, EIO not writable). */
ssize_t emu_msr_write(uint32_t entry, int64_t off, const void *buf, size_t n, int pid);
/* access(2) of an entry for user uid: 0 or EACCES. It is the kernel's permission check, not
 * kernfs's open check: for root (CAP_DAC_OVERRIDE) reading and writing are allowed whatever
 * the bits (open for writing a 0444 attribute still fails, in open), X_OK needs an execute bit
 * on a file. Other users are "others" of the root-owned files. */
int emu_access(uint32_t entry, int mode, unsigned uid);
/* sysfs's answer to opening an entry with these flags (sysfs §1.2): 0, or EEXIST
 * (O_CREAT|O_EXCL), EISDIR (a directory for writing), ENOTDIR (O_DIRECTORY on a file), EACCES
 * (no write or read bit for the mode asked, even for root). */
int emu_open_check(uint32_t entry, int flags);
/* statfs of the node's file systems: sysfs, or procfs for /proc/cpuinfo. */
void emu_statfs(enum emu_root root, struct statfs *sf);

#endif
