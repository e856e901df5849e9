/* engine: `hwemu serve`: the cluster's nodes, the tick loop and what the engine's own readers
 * (HTTP, metrics) see.
 * Owns: starting every node of a spec (render or resume), the tick loop that steps every node
 * to wall time on the worker threads, tick statistics, the facility's ambient temperature,
 * and the immutable per-tick telemetry snapshot published with RCU (urcu-bp). A request never
 * steps a node: HTTP reads the latest snapshot only. */
#ifndef HWEMU_ENGINE_H
#define HWEMU_ENGINE_H
#include "history.h"
#include "node.h"
#include "profile.h"
#include "spec.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <urcu-bp.h>

struct event_log;
struct engine_clock;

struct engine_config {
    const char *spec_path;    /* NULL: the embedded specs/smoke.yaml */
    const char *profiles_dir; /* NULL: builtins only */
    const char *root;         /* segments and events.jsonl */
    const char *addr;         /* HTTP listen address host:port */
    int64_t tick_ns;
    int workers;
    unsigned exporters; /* SIM_EXPORTERS: 1u << enum exporter (exporters.h) */
    /* Emulated time per wall time: 0 or 1 wall time; N > 1 N times faster (a tick of tick_ns
     * every tick_ns / N of wall time); ENGINE_SPEED_MAX ticks back to back, each tick_ns. */
    double speed;
    /* At --speed max (ENGINE_SPEED_MAX) only: a batch of this many ticks (0: ENGINE_BATCH_TICKS;
     * 1: every node every tick). A node is stepped and published at the batch's first tick and
     * otherwise only at a tick its load hook asked for (node.wake_mono) or when an agent wrote
     * to it (seen within 8 ticks); the telemetry snapshot is published once per batch. Between its steps a node's
     * load, limits and held powers stay as they were, and its files stand at its last step
     * (docs/runs.md "Time: --speed"). */
    int batch_ticks;
    /* Called by engine_start after each node is rendered or resumed: done of total nodes so far,
     * resumed of them resumed. NULL: none. The engine prints nothing of it (the CLI does, on a
     * terminal). */
    void (*progress)(void *ctx, int done, int total, int resumed);
    void *progress_ctx;
    /* Tests only (HWEMU_DEBUG_LATE_TICK, docs/robustness.md): 0, or a duration below the tick.
     * engine_run then wakes every other tick this late and holds the publication of the ticks
     * between as long after taking their time, so a tick that wakes on time follows a late one
     * and its nodes publish late: the window between two ticks, made wide on purpose. */
    int64_t debug_late_ns;
    /* Tests only (HWEMU_DEBUG_ROOT_FREE, docs/robustness.md "Capacity"): 0, or the bytes the
     * root's file system is taken to have free, to play a small root without mounting one. */
    uint64_t debug_root_free;
    /* Tests only (HWEMU_DEBUG_MEM_AVAILABLE, the same section): 0, or the bytes of memory the
     * machine is taken to have available, to play a small machine. */
    uint64_t debug_mem_available;
    /* --shard index/count (count 0 or 1: every node): only the nodes of the spec that are this
     * shard's (spec_keep_shard) are opened, stepped and served. */
    int shard_index, shard_count;
    /* --time emulated (docs/time.md): the engine shares its emulated clock with the agents of
     * its root (<root>/clock, seg_clock.h) and, at --speed max, moves time on only when each of
     * them waits (every node then steps every tick: batch_ticks is 1). wait_agents: the first
     * tick after the start waits until so many agent threads have joined (at most
     * ENGINE_WAIT_AGENTS_NS of wall time). agent_wait_ns: how long an agent may run or stay
     * silent, in wall time, before time goes on without it (0: ENGINE_AGENT_WAIT_NS). */
    bool time_emulated;
    int wait_agents;
    int64_t agent_wait_ns;
};
#define ENGINE_SPEED_MAX (-1.0)
#define ENGINE_BATCH_TICKS 300
#define ENGINE_AGENT_WAIT_NS 10000000000LL
#define ENGINE_WAIT_AGENTS_NS 60000000000LL

struct engine;
/* What a layer above (engine/runs) runs at every tick on the tick thread, with no worker
 * running: before steps the nodes (it may install or remove nodes' load hooks, node.h), after
 * follows the snapshot's publication. ctx is theirs. */
struct engine_hooks {
    void *ctx;
    void (*before)(void *ctx, struct engine *e);
    void (*after)(void *ctx, struct engine *e);
};

/* What one node looked like at the last tick. */
struct node_telemetry {
    const char *name, *pool, *profile;
    int npkgs;
    double node_power_w, cpu_power_w, dram_power_w;
    /* the BMC's reading of node_power_w (with its sensor's noise, docs/faults.md "Sensors") and
     * the readings' statistics since the node opened (node.h "power": what DCMI and Redfish report) */
    double node_power_reading_w, node_power_min_w, node_power_max_w, node_power_avg_w;
    int64_t node_power_period_ms;
    double pkg_power_w[PHYS_MAX_PKGS], pkg_temp_c[PHYS_MAX_PKGS], pkg_cap_w[PHYS_MAX_PKGS];
    double pkg_dram_power_w[PHYS_MAX_PKGS];
    int64_t pkg_freq_khz[PHYS_MAX_PKGS], pkg_pl1_uw[PHYS_MAX_PKGS], pkg_pl2_uw[PHYS_MAX_PKGS];
    uint64_t pkg_energy_uj[PHYS_MAX_PKGS], dram_energy_uj[PHYS_MAX_PKGS];
    uint64_t node_energy_uj;
    bool has_rapl_limits; /* a package zone has constraints: PL1/PL2 mean something */
    bool pkg_capped[PHYS_MAX_PKGS];
    /* What a real collector can read: the powercap zones that count energy (an energy_uj file).
     * A VM has none; an AMD energy-only host has package and core zones without limits. */
    bool has_energy_zones;
    uint8_t pkg_zones[PHYS_MAX_PKGS]; /* 1u << enum phys_zone: PACKAGE, DRAM, CORE */
    bool has_psys;
    double core_power_w[PHYS_MAX_PKGS];
    uint64_t core_energy_uj[PHYS_MAX_PKGS];
    /* The platform as a psys zone counts it: packages, DRAM and the rest of the platform (no
     * GPUs), whether or not the node has a psys zone; a restart carries it on either way (a
     * kept counter when there is no psys file: layout.h BK_ENERGY_KEPT). */
    double platform_power_w;
    uint64_t platform_energy_uj;
    double cpu_util, memory_intensity, ambient_c;
    /* the DVFS throttle agents set: 100 × (1 − the mean over the CPUs of the frequency ceiling their
     * cpufreq limits allow, over the hardware maximum; phys_cpu_dvfs_throttle_pct) */
    double cpu_throttle_pct;
    /* the packages' mean frequency loss to thermal throttling (PROCHOT at TjMax, node.h
     * node.thermal_pct), 0..100 */
    double cpu_thermal_throttle_pct;
    const char *cpu_class;
    /* GPUs (none: ngpus 0); node_power_w and node_energy_uj include them */
    int ngpus;
    const char *gpu_vendor;      /* "nvidia", "amd", "intel" */
    const char *gpu_product;
    double gpu_util;
    double gpu_power_w[PHYS_GPU_MAX];     /* held power of the interval */
    double gpu_draw_w[PHYS_GPU_MAX];      /* what the vendor's tools report (NVML 1 s mean, amdgpu average) */
    double gpu_limit_w[PHYS_GPU_MAX];     /* requested limit (Intel: 0 = off) */
    double gpu_enforced_w[PHYS_GPU_MAX];  /* the limit in force */
    double gpu_temp_c[PHYS_GPU_MAX];
    int gpu_clock_mhz[PHYS_GPU_MAX], gpu_mem_clock_mhz[PHYS_GPU_MAX];
    uint64_t gpu_energy_uj[PHYS_GPU_MAX];
    bool gpu_capped[PHYS_GPU_MAX];        /* the limit holds the power below what the clocks would draw */
    double gpu_power_total_w;
    struct node_write_note last_write; /* the last agent write's event (event NULL: none yet) */
    int redfish_retry_s;               /* > 0: its Redfish is unavailable (node_faults) */
};

struct telemetry {
    struct rcu_head rcu;
    int64_t wall_ns;
    uint64_t tick;
    const char *cluster;             /* the spec's metadata.name */
    const struct facility *facility; /* its cooling zones */
    double ambient_c;                /* the facility's ambient before cooling-zone offsets */
    uint64_t seq;                    /* 1 for the first snapshot, +1 each after (the history's seq) */
    struct cluster_totals totals;    /* every node summed (what the history ring keeps) */
    int n;
    struct node_telemetry nodes[];
};

#define TICK_BUCKETS 12
#define ENGINE_HTTP_STATS 4096
extern const double tick_bucket_le[TICK_BUCKETS];

struct engine {
    struct engine_config cfg;
    struct profile_set profiles;
    struct cluster_spec spec;
    struct node_template *templates; /* per pool */
    struct node *nodes;
    int nnodes;
    struct event_log *events;
    bool root_shared;            /* a setgid root (root_prepare): shared files group read-write */
    int lock_fd;                 /* <root>/.lock, flocked for the engine's life (root.h root_lock) */
    struct telemetry *telemetry; /* RCU pointer */
    struct telemetry *next;      /* being filled by the workers */
    /* tick statistics (written by the tick thread, read by HTTP) */
    _Atomic uint64_t ticks, overruns;
    _Atomic uint64_t tick_bucket[TICK_BUCKETS + 1];
    _Atomic uint64_t tick_sum_ns;
    /* HTTP requests by route, method and status, and their latency histogram by route and method:
     * laid out and named by engine/telemetry/http.c (which checks they fit); the tick never
     * touches them */
    _Atomic uint64_t http_stats[ENGINE_HTTP_STATS];
    /* workers */
    pthread_t *threads;
    pthread_barrier_t start, done;
    int64_t tick_mono, tick_wall; /* emulated time of the tick (node clocks are CLOCK_MONOTONIC based) */
    int64_t tick_until;           /* emulated time before which the next tick cannot come: the lines' end */
    int64_t next_deadline;        /* CLOCK_MONOTONIC of engine_run's next deadline (0: no loop) */
    int64_t deadline_period;      /* engine_run's period between deadlines */
    int64_t real_last;            /* CLOCK_MONOTONIC at the last tick */
    int64_t wall_minus_mono;      /* CLOCK_REALTIME - CLOCK_MONOTONIC at start */
    int64_t debug_hold_ns;        /* cfg.debug_late_ns: this tick holds its publication so long */
    struct engine_hooks hooks;    /* set before engine_run or under no tick */
    volatile sig_atomic_t stop;
    int spec_nnodes;            /* the spec's nodes before sharding (nnodes: this shard's) */
    double start_seconds;       /* render/resume time of every node */
    int resumed;
    struct history *history;    /* the cluster totals of the last snapshots */
    /* What engine_start has to say to the person who started the engine: its errors (it returned
     * -1) and notes (it went on: a node rendered again, counters back at zero, static files
     * removed), '\n'-terminated lines that name no command; NULL: nothing. The runtime prints
     * none of them: the CLI does, each under its own command's name ("hwemu serve: ...",
     * "hwemu run: ..."). Freed by engine_stop. */
    char *said;
    /* --speed max batches (cfg.batch_ticks > 1): the tick's place in its batch, whether every
     * node steps now (the batch's first tick), and the emulated time of the next batch */
    uint64_t batch_pos;
    bool full_tick;
    int64_t next_full_mono;
    struct engine_clock *clock; /* --time emulated: the clock shared with the agents (engine_clock.h) */
};

/* Loads profiles and spec (their problems printed by engine/model/load.c), prepares the root,
 * opens every node. 0, or -1; either way what it has to say is in e->said. */
int engine_start(struct engine *e, const struct engine_config *cfg);
/* One tick now, on the workers: every node, or at --speed max in a batch the nodes that are due
 * (engine_config.batch_ticks); returns how long it took (ns). */
int64_t engine_tick(struct engine *e);
/* The tick loop, until e->stop is set (by a signal handler), at cfg.speed. */
void engine_run(struct engine *e);
void engine_stop(struct engine *e);
int engine_find(const struct engine *e, const char *name);
/* The ambient of a pool's cooling zone at wall_ns; pool < 0: the facility's, before any offset. */
double engine_ambient_c(const struct engine *e, int pool, int64_t wall_ns);

#endif
