/* seg_faults: the faults striking a node as its segment's readers act on them (docs/faults.md):
 * the text of state/faults, an S value the engine publishes each tick (engine/runtime/node.h
 * node_faults_text): space-separated words, each present only while its fault is on,
 *   lost=<hex>      the GPUs that fell off the bus, a bit each (NVML answers GPU_IS_LOST, their
 *                   PCI config space reads all ones)
 *   bmc=t<ms>       the BMC answers every IPMI request cc 0xC3 (Timeout) after <ms>
 *   bmc=s<ms>       the BMC answers right, after <ms>
 *   hwmon=<errno>   hwmon value files fail to read with this errno
 *   write=<errno>   agents' writes to the node's files fail with this errno
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
};

/* The faults of segment s now (all zero when it has no state/faults): true when any is on. */
bool seg_faults_read(struct seg *s, struct seg_faults *out);
/* The same from a text (the parser). */
bool seg_faults_parse(const char *text, size_t len, struct seg_faults *out);

#endif
