/* layout: what rendering a node produces besides its files: one binding per dynamic value,
 * saying which physics quantity the value shows (S) or carries to the physics (A).
 * Owns the binding kinds and the value table the render files fill (layout.c). The renderers
 * (render*.c) and the runtime (runtime/node.c) share it; it never includes either of them.
 *
 * Bindings. Every dynamic value of the segment is bound to one physics quantity: an S value
 * is published from the physics each tick (energy counters, running frequency, ...), an A
 * value carries what agents wrote into the physics state (limits, governor, ...). */
#ifndef HWEMU_LAYOUT_H
#define HWEMU_LAYOUT_H
#include "seg_build.h"

#include <stdbool.h>
#include <stdint.h>

enum bind_kind {
    BK_STATIC = 0,   /* A value with no physics effect (a disabled DRAM limit, ...) */
    BK_ENERGY,       /* S counter: zone, pkg */
    BK_CUR_FREQ,     /* S: scaling_cur_freq of the policy whose first CPU (index) is cpu */
    BK_HSMP_POWER,   /* S: HSMP power1_input of pkg, uW */
    BK_PL_LIMIT,     /* A: constraint power limit: pkg, pl */
    BK_PL1_WINDOW,   /* A: PL1 time window of pkg */
    BK_ZONE_ENABLED, /* A: package zone enabled */
    BK_GOVERNOR,     /* A: scaling_governor of the policy of cpu (every CPU of the policy) */
    BK_MIN_FREQ,     /* A: scaling_min_freq of the policy of cpu */
    BK_MAX_FREQ,     /* A: scaling_max_freq of the policy of cpu */
    BK_EPP,          /* A: energy_performance_preference of the policy of cpu */
    BK_BOOST,        /* A: cpufreq/boost (1 = turbo on) */
    BK_NO_TURBO,     /* A: intel_pstate/no_turbo (1 = turbo off) */
    BK_MAX_PERF_PCT, /* A: intel_pstate/max_perf_pct */
    BK_MIN_PERF_PCT, /* A: intel_pstate/min_perf_pct */
    BK_HSMP_CAP,     /* A: HSMP power1_cap of pkg */
    BK_GPU,          /* S: quantity zone (enum gpu_quantity) of GPU pkg */
    BK_GPU_ENERGY,   /* S counter: energy of GPU pkg */
    BK_GPU_IDENT,    /* S: per-node identity zone (enum gpu_quantity) of GPU pkg, set at open */
    BK_GPU_SET,      /* A: setting zone (enum gpu_setting) of GPU pkg */
    BK_PLATFORM,     /* S: state/platform/power, the node's power and its statistics */
    BK_FAULTS,       /* S: state/faults, the faults striking the node (node.h node_faults_text) */
    BK_PM_COUNTER,   /* S: a Cray pm_counters file: zone = enum pm_file, pkg = accelerator
                      * (PM_FRESHNESS: pkg = raw_scan_hz, 1..255) */
    BK_ELAPSED,      /* S counter: the node's elapsed time (seg_view.h units), republished every tick */
    BK_CPU_BUSY,     /* S counter: busy time of CPU index cpu, republished when its utilisation changes */
    BK_LOADAVG,      /* S: /proc/loadavg */
    BK_MEM_USED,     /* S: the applications' share of memory in ppm, for the meminfo view */
    BK_PKG_TEMP,     /* S: package pkg's temperature in m°C, in steps of 1 °C (zone 0) or 0.125 °C (zone 1) */
    BK_THERMAL,      /* S: package pkg's thermal throttling (PROCHOT at TjMax, render_throttle.c): zone enum
                      * thermal_quantity, published on change */
    BK_ENERGY_KEPT,  /* a counter with no file: the energy of a zone (zone, pkg) the physics counts but
                      * the node renders no energy_uj for (DRAM on AMD, psys on most nodes). It is in
                      * the ledger only, never published: a restart carries the zone's energy on, so
                      * the node's energy (/debug/energy, the exporters, pm_counters) never goes back */
    BK_CF_STAT,      /* S: the cpufreq/stats of the table-driver policy whose first CPU index is cpu
                      * (render_cpufreq.c, published by runtime/node_cfstats.c): zone 0 the time in a
                      * table entry (SEG_V_LINE), zone 1 SEG_COUNTS_PER_VALUE of its transition counts
                      * (SEG_V_COUNTS); pkg = the table's entries */
    BK_CF_RESET,     /* A: cpufreq/stats/reset of the policy whose first CPU index is cpu */
    BK_CPU_CYCLES,   /* S counter: zone 0, the clock cycles CPU index cpu ran while busy (its busy time at
                      * its running frequency: IA32_APERF); zone 1, the ns package pkg was throttled by
                      * its RAPL limits (MSR_PKG_PERF_STATUS); republished when its rate changes
                      * (runtime/node_cycles.c), in the ledger */
    /* job cgroup slot `cpu` (render_cgroup.c; published by runtime/node_unit.c) */
    BK_UNIT_ID,      /* S: the slot's id (zone 0), its container's id (zone 1); empty: absent */
    BK_UNIT_CPU,     /* S counter: the unit's CPU time (seg_view.h time units), in the ledger */
    BK_UNIT_MASK,    /* S: part pkg of the unit's CPU mask, raw bytes */
    BK_UNIT_MEM,     /* S: memory.current */
    BK_UNIT_MEM_MAX, /* S: memory.max */
    BK_UNIT_WEIGHT,  /* S: cpu.weight */
    BK_UNIT_PROCS,   /* S: cgroup.procs of the unit's task */
    /* the job's process /proc/<pid> (render_jobproc.c) */
    BK_UNIT_PID,     /* S: the process's pid, no newline (the proc slot's id); empty: absent */
    BK_UNIT_PROC,    /* S: "<pid> <starttime ticks> <threads> <first cpu>\n" for the process views */
    BK_UNIT_NAME,    /* S: the job's name (the trace's jobId, at most SEG_TEXT_MAX - 1 bytes) for cmdline */
};
#define BK_UNIT_FIRST BK_UNIT_ID
#define BK_UNIT_LAST BK_UNIT_NAME

/* The pm_counters files published each tick (render_platform.c). */
enum pm_file { PM_POWER, PM_ENERGY, PM_CPU_POWER, PM_CPU_ENERGY, PM_MEMORY_POWER, PM_MEMORY_ENERGY, PM_ACCEL_POWER,
               PM_ACCEL_ENERGY, PM_FRESHNESS, PM_STARTUP };

/* The thermal throttle values of a package (BK_THERMAL), as Linux's therm_throt.c counts them. */
enum thermal_quantity { TQ_ACTIVE, TQ_COUNT, TQ_TOTAL_MS, TQ_MAX_MS };

/* The GPU values published each tick (BK_GPU) or once at open (BK_GPU_IDENT). */
enum gpu_quantity {
    GQ_ENFORCED_MW, GQ_DRAW_MW, GQ_INSTANT_MW, GQ_UTIL_GPU, GQ_UTIL_MEM, GQ_TEMP_C, GQ_TEMP_MEM_C, GQ_PSTATE,
    GQ_CLK_GFX, GQ_CLK_SM, GQ_CLK_MEM, GQ_CLK_VIDEO, GQ_REASONS, GQ_PEER_RX, GQ_PEER_TX, GQ_MEM_USED_MIB,
    GQ_HWMON_AVG_UW, GQ_HWMON_INPUT_UW, GQ_TEMP_EDGE_MC, GQ_TEMP_JUNCTION_MC, GQ_TEMP_HBM_MC, GQ_SCLK_HZ,
    GQ_BUSY_PCT, GQ_VRAM_USED_B, GQ_PP_SCLK, GQ_PP_MCLK, GQ_XID, GQ_ECC,
    GQ_UUID, GQ_SERIAL, /* identity */
};

/* What agents and tools write to a GPU. */
enum gpu_setting { GS_LIMIT_MW, GS_LOCK_GFX, GS_LOCK_MEM, GS_PERSISTENCE, GS_CAP_UW, GS_PERF_LEVEL, GS_INTEL_PL1_UW };

struct binding {
    uint8_t kind;    /* enum bind_kind */
    uint8_t zone;    /* enum phys_zone */
    uint8_t pkg;
    uint8_t pl;      /* enum phys_pl */
    uint16_t cpu;    /* CPU index (position in the node's CPU list) for per-CPU values; slot for BK_UNIT_* */
};

/* What render fills in: the builder plus one binding per value (index = value index). */
struct node_layout {
    struct seg_builder *b;
    struct binding *binds;
    uint32_t nbinds, cap;
};

/* A text value; a quiet one (layout_quiet_kind: an agent's setting, or a text no tick publishes)
 * goes with the quiet values (seg_build.h segb_value_quiet). */
uint32_t layout_value(struct node_layout *l, const char *text, struct binding bind);
/* The binding kinds whose values only an agent's write changes (segment.h "Quiet values"). */
bool layout_quiet_kind(uint8_t kind);
uint32_t layout_counter(struct node_layout *l, uint32_t unit_nj, struct binding bind);
/* A time line outside the ledger (SEG_V_LINE). */
uint32_t layout_line(struct node_layout *l, struct binding bind);
/* SEG_COUNTS_PER_VALUE counts outside the ledger (SEG_V_COUNTS). */
uint32_t layout_counts(struct node_layout *l, struct binding bind);
/* A counter of another width (64: never wraps), optionally showing its register count. */
uint32_t layout_counter_ex(struct node_layout *l, uint32_t unit_nj, uint8_t wrap_bits, bool shows_count,
                           struct binding bind);

#endif
