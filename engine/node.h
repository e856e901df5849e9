/* node: one emulated node: its profile-derived physics, its segment, and the bindings between
 * the two. Owns: turning a profile tree into physics parameters (node_params.c), rendering
 * the node's files into a segment (render*.c), and each tick's drain of agent writes, physics
 * step and publication (node.c). A node never blocks on a reader and never trusts what agents
 * wrote into its segment: every slot is validated again before it reaches the physics.
 *
 * Bindings. Every dynamic value of the segment is bound to one physics quantity: an S value
 * is published from the physics each tick (energy counters, running frequency, ...), an A
 * value carries what agents wrote into the physics state (limits, governor, ...). */
#ifndef HWEMU_NODE_H
#define HWEMU_NODE_H
#include "physics_cpu.h"
#include "physics_gpu.h"
#include "seg_build.h"
#include "segment.h"

#include <stdbool.h>
#include <stdio.h>

struct spec_pool;
struct yt_node;

enum bind_kind {
    BK_STATIC = 0,   /* A value with no physics effect (a disabled DRAM limit, ...) */
    BK_ENERGY,       /* S counter: zone, pkg */
    BK_CUR_FREQ,     /* S: scaling_cur_freq of pkg */
    BK_CPUINFO_MAX,  /* S: cpuinfo_max_freq (follows turbo) */
    BK_HSMP_POWER,   /* S: HSMP power1_input of pkg, uW */
    BK_PL_LIMIT,     /* A: constraint power limit: pkg, pl */
    BK_PL1_WINDOW,   /* A: PL1 time window of pkg */
    BK_ZONE_ENABLED, /* A: package zone enabled */
    BK_GOVERNOR,     /* A: scaling_governor of a policy of pkg */
    BK_MIN_FREQ,     /* A: scaling_min_freq of a policy of pkg */
    BK_MAX_FREQ,     /* A: scaling_max_freq of a policy of pkg */
    BK_EPP,          /* A: energy_performance_preference of a policy of pkg */
    BK_BOOST,        /* A: cpufreq/boost (1 = turbo on) */
    BK_NO_TURBO,     /* A: intel_pstate/no_turbo (1 = turbo off) */
    BK_HSMP_CAP,     /* A: HSMP power1_cap of pkg */
    BK_GPU,          /* S: quantity zone (enum gpu_quantity) of GPU pkg */
    BK_GPU_ENERGY,   /* S counter: energy of GPU pkg */
    BK_GPU_IDENT,    /* S: per-node identity zone (enum gpu_quantity) of GPU pkg, set at open */
    BK_GPU_SET,      /* A: setting zone (enum gpu_setting) of GPU pkg */
};

/* The GPU values published each tick (BK_GPU) or once at open (BK_GPU_IDENT). */
enum gpu_quantity {
    GQ_ENFORCED_MW, GQ_DRAW_MW, GQ_INSTANT_MW, GQ_UTIL_GPU, GQ_UTIL_MEM, GQ_TEMP_C, GQ_TEMP_MEM_C, GQ_PSTATE,
    GQ_CLK_GFX, GQ_CLK_SM, GQ_CLK_MEM, GQ_CLK_VIDEO, GQ_REASONS, GQ_PEER_RX, GQ_PEER_TX, GQ_MEM_USED_MIB,
    GQ_HWMON_AVG_UW, GQ_HWMON_INPUT_UW, GQ_TEMP_EDGE_MC, GQ_TEMP_JUNCTION_MC, GQ_TEMP_HBM_MC, GQ_SCLK_HZ,
    GQ_BUSY_PCT, GQ_VRAM_USED_B, GQ_PP_SCLK, GQ_PP_MCLK,
    GQ_UUID, GQ_SERIAL, /* identity */
};

/* What agents and tools write to a GPU. */
enum gpu_setting { GS_LIMIT_MW, GS_LOCK_GFX, GS_LOCK_MEM, GS_PERSISTENCE, GS_CAP_UW, GS_PERF_LEVEL, GS_INTEL_PL1_UW };

struct binding {
    uint8_t kind;    /* enum bind_kind */
    uint8_t zone;    /* enum phys_zone */
    uint8_t pkg;
    uint8_t pl;      /* enum phys_pl */
};

/* What render fills in: the builder plus one binding per value (index = value index). */
struct node_layout {
    struct seg_builder *b;
    struct binding *binds;
    uint32_t nbinds, cap;
};

uint32_t layout_value(struct node_layout *l, const char *text, struct binding bind);
uint32_t layout_counter(struct node_layout *l, uint32_t unit_nj, struct binding bind);
/* A counter of another width (64: never wraps), optionally showing its register count. */
uint32_t layout_counter_ex(struct node_layout *l, uint32_t unit_nj, uint8_t wrap_bits, bool shows_count,
                           struct binding bind);

struct event_log;

/* What every node of a pool shares: the physics parameters, the laid-out segment and the
 * bindings of its values. Rendering once per pool is what makes starting thousands of nodes
 * cheap: a node's segment is a copy of the image with its name in the header. */
struct node_template {
    const char *profile;
    const char *gpu_product;
    struct phys_cpu_params params;
    struct phys_gpu_params gparams;
    struct seg_image image;
    struct binding *binds;
    uint32_t nbinds;
};

int node_template_build(struct node_template *t, const char *profile, const struct yt_node *tree, double ambient_c,
                        int64_t tick_ns, char *err, size_t errlen);
void node_template_free(struct node_template *t);

/* One node as the engine holds it. */
struct node {
    const char *name, *profile;
    const char *gpu_product;     /* gpus.product, or "" */
    struct phys_cpu_params params;
    struct phys_cpu_state state;
    struct phys_load load;
    struct phys_gpu_params gparams;
    struct phys_gpu_state gstate;
    struct phys_gpu_load gload;
    struct seg seg;
    const struct binding *binds; /* per value (the template's) */
    uint32_t nvalues;
    uint32_t *slot_entry;        /* per slot: its entry */
    uint64_t *slot_applied;      /* per slot: the last sequence applied to the physics */
    uint32_t *counters, ncounters; /* the counter values, in value order (ledger order) */
    uint32_t *svalues, nsvalues;   /* the values published from the physics each tick */
    uint64_t *totals;              /* per counter: ledger scratch */
    uint64_t ledger_seq;           /* the last ledger copy written */
    uint64_t slot_writes_seen;     /* header slot_writes at the last drain */
    uint64_t ev_tail, ev_lost;
    uint32_t gpu_limit_entry[PHYS_GPU_MAX]; /* per GPU: its NVML power_limit_mw entry, or SEG_NONE */
    int64_t mono_origin;         /* CLOCK_MONOTONIC at physics time 0 */
    int64_t tick_ns;
    bool resumed;
};

/* Creates <root>/<name>.seg from the template or, when it exists and was rendered from the
 * same template, resumes it. Returns 0, or an errno with a message naming the node and the
 * remedy in err. */
int node_open(struct node *n, const struct node_template *t, const char *root, const char *name,
              const struct phys_load *load, const struct phys_gpu_load *gload, int64_t tick_ns, char *err,
              size_t errlen);
void node_close(struct node *n);
/* One tick at now_mono: step to it, drain agent writes (events to log), begin the next
 * interval at load, publish, write the ledger. */
void node_tick(struct node *n, int64_t now_mono, int64_t now_wall, double ambient_c, struct event_log *log);
/* The text of a GPU value (BK_GPU, BK_GPU_IDENT) now: false for other bindings. */
bool node_gpu_text(const struct node *n, const struct binding *b, char *t, size_t len);
/* The text a GPU setting reads after the tick applied text when the hardware changes it (an
 * Intel limit clamped to the hardware's range) into out: its length, or 0 when it reads as
 * written. */
size_t node_gpu_effective(const struct node *n, const struct binding *b, const char *text, char *out, size_t cap);
/* Governor name (a prefix of a line is fine) as enum phys_governor. */
int node_governor_of(const char *g);
/* A stable hash of a profile tree's values (keys, values, order), for the layout hash. */
uint64_t node_tree_hash(const struct yt_node *tree);

/* Constraint name -> enum phys_pl (long_term, short_term, peak_power), -1 for others; zone
 * name -> enum phys_zone (package-N only as a top-level zone), -1 for others. */
int node_pl_of(const char *constraint_name);
int node_zone_of(const char *zone_name, bool top);

/* Physics parameters from a merged profile tree (pool overrides included). */
void node_params(const struct yt_node *tree, double ambient_c, struct phys_cpu_params *p);
void node_gpu_params(const struct yt_node *tree, double ambient_c, struct phys_gpu_params *g);

/* Renders every file of a node of this profile (sys/, cpuinfo, state/) into l. */
void render_node(struct node_layout *l, const struct yt_node *tree, const char *profile,
                 const struct phys_cpu_params *p, const struct phys_gpu_params *g);
void render_powercap(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p);
void render_cpufreq(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p);
void render_hsmp(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p);
/* The GPUs (engine/gpu_files.h): PCI devices, the vendor's sysfs and state files, tool facts. */
void render_gpus(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p,
                 const struct phys_gpu_params *g);

#endif
