/* fault: one hardware fault as it is written in a cluster spec (spec.faults[]), a trace (a
 * `type: fault` record) or a request (POST /faults): when it starts, how long it lasts, which
 * nodes it strikes (names, pools, labels, a seeded fraction), which device, its kind and the
 * kind's parameters (docs/faults.md). Owns the kinds and devices tables and the parsing of one
 * fault from a YAML or JSON mapping (a JSON record is parsed as YAML: its nodes keep line and
 * column) with file:line:col messages naming the field and what was expected.
 * Never: time, nodes at run time, or what a fault does (engine/runs/faults.c schedules them,
 * engine/runtime applies them). */
#ifndef HWEMU_FAULT_H
#define HWEMU_FAULT_H
#include <stdbool.h>
#include <stdint.h>

struct arena;
struct diag;
struct yt_node;

enum fault_kind {
    FK_GPU_LOST = 0,        /* the GPU fell off the bus: NVML GPU_IS_LOST, PCI config all ones, jobs stall */
    FK_GPU_POWER_BRAKE,     /* the board's power brake: the GPU held at `watts` (default its minimum limit) */
    FK_BMC_TIMEOUT,         /* every IPMI request answered cc 0xC3 (Timeout) after `delayMs` */
    FK_BMC_SLOW,            /* every IPMI request answered right, after `delayMs` */
    FK_REDFISH_UNAVAILABLE, /* the node's Redfish answers 503 with Retry-After `retryAfterSec` */
    FK_HWMON_ERROR,         /* hwmon value reads fail with `errno` (default EIO) */
    FK_WRITE_REFUSED,       /* agents' writes to the node's files fail with `errno` (default ENODATA) */
    FK_LIMIT_IGNORED,       /* power limits are accepted and read back but not enforced */
    FK_INLET_TEMP,          /* the node's inlet is `deltaC` warmer than its cooling zone */
    FK_FAN_FAILURE,         /* a failed fan: the same physics as inlet-temp, default deltaC 65 */
    FK_RAPL_FREEZE,         /* a package's (or DRAM's) RAPL energy counter stops updating; it catches up at the end */
    FK_GPU_XID,             /* at its start, the GPU reports Xid `xid` (default 13): NVML's Xid event */
    FK_GPU_ECC_CORRECTED,   /* at its start, `count` (1) corrected memory errors */
    FK_GPU_ECC_UNCORRECTED, /* at its start, `count` (1) uncorrected memory errors, with Xid 48 */
    FK_LIMIT_LOCKED,        /* a package's RAPL limits locked (the MSR's lock bit): stores refused as the kernel does */
    FK_PSU_LOSS,            /* a lost power supply: the node held within `watts` (GPUs braked, packages capped) */
    FK_POWER_LOSS,          /* the node lost its power: it draws nothing, its files fail with `errno` (EIO), its
                             * BMC and GPUs do not answer, its jobs stall; back, its counters restart from 0 */
    FK_FREQ_STUCK,          /* the CPUs' running frequency stays where it was; cpufreq writes accepted, no effect */
    FK_RAPL_JUMP,           /* at its start a RAPL energy counter jumps forward by `joules` (1000) */
    FK_NKINDS
};
enum fault_device { FD_NODE = 0, FD_PACKAGE, FD_DRAM, FD_GPU, FD_BMC, FD_COOLING, FD_NDEVICES };

extern const char *const fault_kind_names[FK_NKINDS];
extern const char *const fault_device_names[FD_NDEVICES];

#define FAULT_ID_MAX 64

struct fault_def {
    char id[FAULT_ID_MAX];    /* "" until scheduled (engine/runs/faults.c names it then) */
    const char *file;         /* where it was written, for messages */
    int line;
    int kind;                 /* enum fault_kind */
    int device;               /* enum fault_device */
    int index;                /* package or GPU number; -1: every one of the node's */
    bool has_at;              /* atSec given: else it starts now (a request) or at 0 (spec, trace) */
    double at_s;              /* emulated seconds after the engine's first tick (spec, request) or the run's start (trace) */
    bool has_duration;        /* durationSec given: else it lasts until it is cleared (a reset) */
    double duration_s;
    const char **nodes, **pools, **label_keys, **label_values;
    int nnodes, npools, nlabels;
    double fraction;          /* of the matching nodes, picked by seed: 1 = all of them */
    uint64_t seed;
    double value;             /* the kind's number: watts, delayMs, retryAfterSec, deltaC (NAN: its default) */
    int err;                  /* hwmon-error, write-refused, power-loss: the errno */
};

/* Parses one fault mapping (YAML, or JSON read as YAML) into f, strings in a; what names it in
 * messages is where ("spec.faults[2]", "trace record", "request"). Keys it does not know are
 * errors, except those in ignore (NULL-terminated, may be NULL: a trace record's "type" and
 * "schemaVersion"). true, or false with every problem in d. */
bool fault_parse(struct fault_def *f, struct arena *a, const struct yt_node *map, const char *where,
                 const char *const *ignore, struct diag *d);
/* The errno of a name ("EIO", "eio") or a number, and its name: 0 / NULL when unknown. */
int fault_errno(const char *name);
const char *fault_errno_name(int err);
/* The device as written back ("gpu3", "package0", "gpu", "bmc") into buf. */
const char *fault_device_text(const struct fault_def *f, char *buf, unsigned len);

#endif
