/* seg_faults: the faults striking a node as its segment's readers act on them (docs/faults.md):
 * the text of state/faults, an S value the engine publishes each tick (engine/runtime/node.h
 * node_faults_text): space-separated words, each present only while its fault is on,
 *   gl=<hex>        the GPUs that fell off the bus, a bit each (NVML answers GPU_IS_LOST, their
 *                   PCI config space reads all ones)
 *   bmc=t<ms>       the BMC answers every IPMI request cc 0xC3 (Timeout) after <ms>
 *   bmc=s<ms>       the BMC answers right, after <ms>
 *   hw=<errno>      hwmon value files fail to read with this errno
 *   wr=<errno>      agents' writes to the node's files fail with this errno
 *   lk=<hex>        the packages whose RAPL limits are locked, a bit each: a store of a package
 *                   zone's constraint file fails ENODATA, of its `enabled` ENOSYS (faults.md §4.3)
 *   off=<errno>     the node lost its power: every read and write of its files, MSR and IPMI
 *                   devices fails with this errno (its GPUs are lost too: gl has them all)
 * A reader parses it at each use (no allocation, no system call); anything it does not
 * understand is no fault. */
#ifndef HWEMU_SEG_FAULTS_H
#define HWEMU_SEG_FAULTS_H
#include "segment.h"

struct seg_faults {
    uint32_t gpu_lost;
    char bmc;        /* 0, 't' or 's' */
    int bmc_ms;
    int hwmon_err;   /* 0: none */
    int write_err;   /* 0: none */
    uint32_t pkg_locked;
    int off_err;     /* 0: powered */
};
/* The errno a store of entry path gets while packages in locked are locked, else 0: the package
 * zone's (intel-rapl:<k>/, not a subzone) constraint_*_power_limit_uw and _time_window_us
 * ENODATA, its enabled ENOSYS (the powercap core's conversions of the driver's -EACCES). */
int seg_faults_locked_errno(uint32_t locked, const char *path);

/* The faults of segment s now (all zero when it has no state/faults): true when any is on. */
bool seg_faults_read(struct seg *s, struct seg_faults *out);
/* The same from a text (the parser). */
bool seg_faults_parse(const char *text, size_t len, struct seg_faults *out);

#endif
