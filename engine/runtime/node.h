/* node: one emulated node at run time: its physics state, its segment, and the bindings between
 * the two. Owns: a pool's template (node_template.c: parameters from render/params.c, files
 * from render/render.c), opening or resuming a node's segment (node_open.c), each tick's drain
 * of agent writes, physics step and publication (node.c, node_gpu.c), the damage checks and
 * repairs (node_repair.c), and what those three use: the agents' settings applied
 * (node_apply.c) and the publication of a snapshot (node_publish.c); what the node files share
 * is node_internal.h. A node never blocks on a
 * reader and never trusts what agents wrote into its segment: every slot is validated again
 * before it reaches the physics, every index read from the segment is bounded by the node's
 * private counts, and the segment's header and its static file are checked against the
 * template every tick (docs/robustness.md). */
#ifndef HWEMU_NODE_H
#define HWEMU_NODE_H
#include "layout.h"
#include "params.h"
#include "physics_cpu.h"
#include "physics_gpu.h"
#include "segment.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct spec_pool;
struct yt_node;
struct job_cgroups;

struct event_log;

struct node;

/* A static file (segment.h "Files") as the engine holds it: put once at the start for every
 * layout, shared by the templates with that layout hash, and checked (node_repair.c "Damage")
 * by one node that uses it, on that node's worker, so no two threads touch it. */
struct node_static {
    struct seg_static_file f;
    char *path;                  /* <root>/<hash>.static */
    const struct node *checker;  /* the first node opened on it */
};

/* What every node of a pool shares: the physics parameters, the laid-out segment and the
 * bindings of its values. Rendering once per pool is what makes starting thousands of nodes
 * cheap: a node's segment is a copy of the image's node file with its name in the header, and
 * its static part is the one static file of its layout. */
struct node_template {
    const char *profile;
    const char *gpu_product;
    struct phys_cpu_params params;
    struct phys_gpu_params gparams;
    struct sensor_params sensors; /* its power sensors' noise (profile sensors.*) */
    struct seg_image image;
    struct binding *binds;
    uint32_t nbinds;
    struct node_static *st;      /* its static file (NULL until node_static_put); maybe shared */
    bool owns_st;                /* this template put it (and frees it) */
    /* The values a tick looks up by kind, the same for every node of the template (node_template.c
     * node_index_build): kept once here, not per node, which is most of what a node's heap was */
    struct node_index {
        uint32_t *counters, ncounters;   /* the counter values, in value order (ledger order) */
        uint32_t *svalues, nsvalues;     /* the values published from the physics each tick */
        uint32_t *freq_values, nfreq;    /* the scaling_cur_freq values (one per policy) */
        uint32_t *busy_values, nbusy;    /* the busy-time counter of each CPU index */
        uint32_t *slot_entry;            /* per slot: its entry */
        uint32_t *counter_of;            /* per value: its place in counters (SEG_NONE: not a counter) */
        uint32_t *shown_of;              /* per value: its place in node.shown (SEG_NONE: none) */
        uint32_t nshown;                 /* freq_values first (same order), then the others */
        uint32_t nunits, ncyc;           /* job cgroup slots, busy-cycle lines */
        struct node_unit_vals *unit_vals; /* per job cgroup slot: the values it publishes (node_unit.c) */
        struct node_cyc_line {            /* per busy-cycle line (node_cycles.c), in value order */
            uint32_t v;                   /* its BK_CPU_CYCLES value */
            uint16_t cpu;                 /* CPU index (a CPU's cycles, zone 0) */
            int16_t pkg;                  /* the package of a RAPL throttle-time line (zone 1), -1: a CPU's */
        } *cyc_lines;
        uint32_t ncf, ncfc;              /* cpufreq/stats time lines, and their count values */
    } ix;
};

/* cg: the spec's job cgroups (NULL: none rendered). */
int node_template_build(struct node_template *t, const char *profile, const struct yt_node *tree, double ambient_c,
                        int64_t tick_ns, const struct job_cgroups *cg, char *err, size_t errlen);
/* Gives template t of templates[0..n) its static file under root: the one of an earlier
 * template with the same layout hash, else a new one put there (seg_static_put). 0, or an
 * errno with a message in err. Before any node of t opens. */
int node_static_put(struct node_template *templates, int n, int t, const char *root, char *err, size_t errlen);
void node_template_free(struct node_template *t);
/* What one node of template t holds in the engine's own memory (the struct node and the arrays
 * node_open allocates for it, from the template's counts), bytes: engine_start's estimate
 * (docs/robustness.md "Capacity"). Its segment is not included. */
size_t node_private_bytes(const struct node_template *t);
/* What one node of template t really takes of it once started and running jobs (bytes): the
 * same less the CPUs' and GPUs' physics state past the node's own (never touched: their pages
 * stay unallocated) and the arrays only an agent's write, a resume or a power cycle (the slot
 * sequences) or a power-loss or rapl-jump fault (the energy offsets) makes; the job cgroup
 * slots (made at a node's first job) are counted. */
size_t node_resident_bytes(const struct node_template *t);

/* The last write an agent made to a node's files, as its event said (the engine's page shows it
 * per node). event NULL: none since the engine started. */
struct node_write_note {
    int64_t wall_ns;
    const char *event; /* "joulie.sim.write.accepted", ".normalized", ".rejected" (static) */
    const char *file;  /* the path, in the segment's string pool */
    char value[24];    /* what was written, cut to fit */
    const char *error; /* rejected: "einval", ... (static); else NULL */
};

/* The values one job cgroup slot publishes (engine/render/render_cgroup.c), the same for every
 * node of a template (node_template.ix.unit_vals). */
struct node_unit_vals {
    uint32_t v_id, v_cid, v_cpu, v_mask[2], v_mem, v_mem_max, v_weight, v_procs; /* SEG_NONE: none */
    uint32_t v_pid, v_proc, v_name;  /* its process, /proc/<pid> (render_jobproc.c) */
    int nmask;
};

/* What one job cgroup slot of the node (node_unit.c) holds now. */
struct node_unit {
    bool used;                    /* a job holds it */
    bool dirty;                   /* its texts changed since the last publication */
    char id[SEG_TEXT_MAX + 1], cid[SEG_TEXT_MAX + 1];
    char salvaged[SEG_TEXT_MAX + 1]; /* the id it showed when the engine resumed, until claimed */
    uint64_t mask[PHYS_MAX_CPUS / 64]; /* the CPUs it holds (CPU index bits) */
    uint64_t mem, mem_max;        /* bytes; mem_max 0: "max" */
    int weight, pid;
    uint64_t start_ticks;         /* when it was claimed: USER_HZ ticks since the node's boot */
    int threads, first_cpu;       /* its process's threads (one per CPU it holds) and lowest CPU */
    char name[SEG_TEXT_MAX];      /* its process's cmdline argument (the job's name) */
    uint64_t origin_ns;           /* Σ of its CPUs' busy ns (this engine's physics) when it was claimed */
};

/* What a job cgroup shows (node_unit_claim). */
struct node_unit_info {
    const char *id;               /* the slot's id: "4217" (job_4217), a pod uid with underscores */
    const char *cid;              /* the container's id (Kubernetes), or NULL */
    const int *cpus;              /* CPU indexes it holds */
    int ncpus;
    uint64_t mem, mem_max;        /* memory.current, memory.max (0: "max") in bytes */
    int weight;                   /* cpu.weight 1..10000 */
    int pid;                      /* the one process cgroup.procs lists, and /proc/<pid> */
    const char *name;             /* the job's name for its process's cmdline (truncated), or NULL */
};

/* The Xids a GPU's state/nvml/gpu<i>/xid keeps (gpu_files.h): NVML delivers each to an event set
 * that waits, the oldest first, as long as no more than this many came between two waits. */
#define NODE_XIDS 4

/* The faults striking a node now (docs/faults.md): set on the tick thread between ticks by the
 * fault schedule (engine/runs/faults.c), applied by the node's tick: the physics' inputs (the
 * inlet, GPU brakes, ignored limits) and state/faults, the text the readers of the segment
 * (NVML, the shim's BMC, hwmon and write paths) act on (node_faults_text). All zero: healthy. */
struct node_faults {
    uint32_t gpu_lost;           /* bit g: GPU g fell off the bus */
    uint32_t gpu_brake;          /* bit g: GPU g's power brake is on, at gpu_brake_w[g] (0: its minimum limit) */
    double gpu_brake_w[PHYS_GPU_MAX];
    uint32_t pkg_limits_ignored; /* bit k: package k's limits are not enforced */
    uint32_t gpu_limits_ignored; /* bit g: GPU g's */
    char bmc;                    /* 0; 't': IPMI answers cc 0xC3 after bmc_delay_ms; 's': right, after it */
    int bmc_delay_ms;
    int redfish_retry_s;         /* > 0: Redfish answers 503 with this Retry-After; -1: it does not answer */
    int hwmon_err;               /* > 0: hwmon value reads fail with this errno */
    int write_err;               /* > 0: agents' writes fail with this errno */
    double inlet_c;              /* the inlet's rise over the cooling zone's ambient */
    uint32_t rapl_frozen_pkg;    /* bit k: package k's package and core energy counters stop updating */
    uint32_t rapl_frozen_dram;   /* bit k: its DRAM energy counter */
    uint32_t pkg_locked;         /* bit k: package k's RAPL limits are locked */
    double psu_w;                /* > 0: a lost PSU leaves the node this much power */
    int off_err;                 /* > 0: the node lost its power; its files fail with this errno */
    uint32_t freq_stuck;         /* bit k: package k's CPUs' running frequency stays where it was */
};
/* state/faults's text for f ("gl=<hex> bmc=t<ms> hw=<errno> wr=<errno> lk=<hex> off=<errno>\n",
 * the words of the faults on, "\n" when none; engine/segment/seg_faults.h) into buf
 * (SEG_TEXT_MAX: at most 43 bytes with every word). */
void node_faults_text(const struct node_faults *f, char *buf, size_t len);

/* One node as the engine holds it. */
struct node {
    const char *name, *profile;
    const struct node_template *t; /* its image is the node's private static part */
    char *path;                  /* <root>/<name>.seg */
    const char *gpu_product;     /* gpus.product, or "" */
    struct phys_cpu_params params;
    struct phys_cpu_state state;
    struct phys_load load;
    struct phys_gpu_params gparams;
    struct phys_gpu_state gstate;
    struct phys_gpu_load gload;
    struct seg seg;              /* mapped; its descriptor closed once opened (seg.fd -1) */
    dev_t seg_dev;               /* the segment file's identity, to tell it from another put at */
    ino_t seg_ino;               /* its path (node_repair.c) */
    const struct binding *binds; /* per value (the template's) */
    uint32_t nvalues;
    /* the template's lookups by kind (node_template.ix), copied here for the tick's loops */
    const uint32_t *slot_entry;    /* per slot: its entry */
    uint64_t *slot_applied;        /* per slot: the last sequence applied to the physics; NULL (all 0)
                                    * until an agent writes, a resume or a power cycle (node_slot_applied) */
    const uint32_t *counters;      /* the counter values, in value order (ledger order) */
    uint32_t ncounters;
    const uint32_t *svalues;       /* the values published from the physics each tick */
    uint32_t nsvalues;
    const uint32_t *freq_values;   /* the scaling_cur_freq values (one per policy) */
    uint32_t nfreq;
    bool freq_dirty;               /* a frequency or a cap ceiling moved, or nothing is shown: look at them */
    int64_t *shown;                /* per value published on change (ix.shown_of): the number it shows */
    uint64_t *busy_shown;          /* per CPU index: the busy line's base substep it shows */
    uint32_t *busy_shown_rate;     /* per CPU index: its rate */
    uint64_t *cstart;              /* per counter (ix.counter_of; node_cstart): its total before this
                                    * start (ledger); used for the time counters */
    uint64_t cstart_elapsed_us;    /* the elapsed counter's */
    const uint32_t *busy_values;   /* the busy-time counter of each CPU index */
    uint32_t nbusy;
    bool busy_dirty;               /* a busy line was rebased, or nothing is shown: look at them */
    char loadavg_shown[SEG_TEXT_MAX]; /* the /proc/loadavg text published last */
    int64_t horizon_ns;            /* node time of the last publication's freeze horizon (until_mono) */
    uint64_t *totals;              /* per counter: the totals salvaged at the open (node_open.c), freed
                                    * once resumed (NULL after; write_ledger has its own) */
    uint64_t ledger_seq;           /* the last ledger copy written */
    uint64_t slot_writes_seen;     /* header slot_writes at the last drain */
    uint64_t ev_tail, ev_lost;
    uint32_t gpu_limit_entry[PHYS_GPU_MAX]; /* per GPU: its NVML power_limit_mw entry, or SEG_NONE */
    int64_t mono_origin;         /* CLOCK_MONOTONIC at physics time 0 (node_rebase) */
    /* The node's power as its BMC reports it (state/platform/power, DCMI, Redfish): samples at
     * every tick since the node opened in this engine. */
    struct node_power_stats {
        double current_w, min_w, max_w, energy_j; /* energy: held power x interval, summed */
        int64_t since_mono, last_mono;            /* the first tick, the last one */
        int64_t since_wall_ns;                    /* the first tick, CLOCK_REALTIME */
        double held_w;                            /* the power held since the last tick */
    } power;
    int64_t tick_ns;
    bool resumed;
    bool sensor_noise;           /* its sensors measure with noise (spec.sensors.noise, default true) */
    struct sensor_params sensors; /* how much (the template's, from the profile) */
    /* health (node_repair.c "Damage"): checked every tick, the file itself every few */
    uint32_t ticks;
    uint32_t damaged;            /* damage seen since the start (repairs made) */
    uint32_t damage_said;        /* kinds already logged (one line each) */
    char pending[240];           /* a damage found before the event log was at hand */
    bool opening;                /* in node_open: a damage found is said in said, not printed */
    char *said;                  /* what node_open has to say to the person who started the engine
                                  * ('\n'-terminated lines: a damaged segment rendered again);
                                  * engine_start takes it. NULL: nothing */
    struct node_write_note last_write; /* written by the node's tick, read by fill_telemetry */
    /* POST /control answers to this node by action (engine/telemetry/http.c counts and names them;
     * the tick never touches them) */
    _Atomic uint64_t controls[4];
    /* Called on the node's worker at every tick after the step and the agents' writes, before
     * the next interval begins: it may set load and gload for that interval (a workload run
     * does, engine/runs). NULL: the load stays as it is. */
    void (*load_hook)(void *ctx, struct node *n);
    void *load_ctx;
    struct node_faults faults;     /* the faults striking it (written between ticks only) */
    /* per GPU: its Xid errors and ECC counts since the engine started (what a fault raised:
     * gpu-lost, gpu-xid, gpu-ecc-*), published as state/nvml/gpu<i>/xid and ecc_errors */
    struct node_gpu_errors {
        uint32_t xid_seq;                          /* Xids raised so far */
        int xid[NODE_XIDS];                        /* the last ones: xid[0] number xid_seq, 0: none */
        uint64_t ecc_corrected, ecc_uncorrected;
        uint32_t rows_corrected, rows_uncorrected; /* rows remapped: one per memory error fault */
        bool remap_pending;                        /* a remap waits for the GPU's reset */
    } gpu_err[PHYS_GPU_MAX];
    /* per package: its thermal throttling, PROCHOT holding it at TjMax under a cooling fault
     * (node.c account_throttle), episodes counted as Linux's therm_throt.c counts them: a rising
     * edge counts, a falling edge adds the episode's ms to the total and the maximum (the
     * thermal_throttle files, render_throttle.c; IA32_(PACKAGE_)THERM_STATUS bits 0 and 1) */
    struct node_thermal {
        bool active;
        uint64_t count, total_ms, max_ms;
        int64_t since_ns;          /* physics time the episode began */
        double cap_w;              /* the power that keeps it at TjMax in its air; INFINITY: none */
    } thermal[PHYS_MAX_PKGS];
    double thermal_pct;            /* the packages' mean frequency loss to thermal throttling, % */
    double air_c;                  /* its inlet air over the interval that began last, °C */
    bool off_held;                 /* the node was without power over the interval the next tick ends
                                    * (its jobs wait: what the load hook accounts then) */
    bool was_off;                  /* the interval that began last was without power */
    bool power_back;               /* its power came back at this tick: this publication restarts its
                                    * counters from 0, as a machine's that powers up (node_power_back) */
    uint64_t *seed_off;            /* per counter (ix.counter_of): what an energy counter's register
                                    * count is moved by (a counter that jumped, rapl-jump; one restarted
                                    * at power-up); NULL, every offset 0, until a fault moves one */
    uint32_t gpu_lost_held;        /* the GPUs lost over the interval the next tick ends (what the
                                    * load hook accounts then: faults as they were when it began) */
    /* --speed max batches (engine.h batch_ticks): the node is stepped at the first tick at or
     * after this emulated time (CLOCK_MONOTONIC based, like the tick's). The engine sets it to
     * its next batch before each step; the load hook, or the run's tick-thread hooks, bring it
     * forward (node_wake) for a load that changes earlier. Unused at other speeds. */
    int64_t wake_mono;
    struct node_unit *units;       /* the job cgroup slots (node_unit.c): NULL until a job claims one
                                    * or a resumed segment showed one held (a node without jobs holds none) */
    int nunits;
    bool units_quiet;              /* none held and none to publish: node_units_collect skips them */
    /* cpufreq/stats of the table-driver policies (node_cfstats.c) */
    struct node_cfpol {
        uint32_t v0;               /* its first stat value: k time lines, then its counts' values */
        uint32_t t, c;             /* its k times in cf_time from t, its k² counts in cf_count from c */
        uint64_t since;            /* the substep its current entry became current, UINT64_MAX: none */
        uint16_t cpu;              /* its first CPU index */
        uint8_t k;                 /* table entries */
        int8_t cur;                /* the entry it is in (-1: before the first tick) */
        int8_t next;               /* the entry of the frequency handed over this tick (-1: none yet) */
        bool dirty;                /* in cf_dirty */
        bool all;                  /* publish every line at the next tick (the first one, a reset) */
        bool reset;                /* an agent wrote reset: cleared at the next tick */
    } *cfpol;
    int ncfpol;
    int *cf_dirty, ncf_dirty;      /* the policies to look at in this tick's publication */
    uint16_t *cf_of_cpu;           /* per CPU index: 1 + the policy it is the first CPU of, 0: none */
    uint64_t *cf_time;             /* per policy entry: ns in it up to its last stop */
    uint32_t *cf_count;            /* per policy (from, to) pair: transitions */
    /* the CPUs' busy-cycle lines (node_cycles.c): where each stands, line k of the template's
     * ix.cyc_lines (24 B a line) */
    struct node_cyc {
        uint64_t base;             /* cycles (this engine's) at grid boundary base_sub */
        uint64_t base_sub : 63;    /* (a substep count: 2^63 ms are 292 million years) */
        uint64_t shown : 1;        /* the segment shows this line */
        uint64_t rate;             /* cycles per substep, UINT64_MAX: before the first tick */
    } *cyc;
    uint32_t ncyc;
};

/* Job cgroups (node_unit.c, docs/interfaces.md "Job cgroups"); called on the node's worker
 * (its load hook) only. node_unit_claim takes a free slot for a job whose CPUs begin running
 * from this tick: the slot the engine resumed showing the same id when there is one (its CPU
 * time continues from what the ledger held, *continued set), else a free slot (its CPU time
 * starts at 0). Returns the slot, or -1 when every slot is in use. node_unit_release frees
 * it: its directory is gone from the next publication. */
int node_unit_claim(struct node *n, const struct node_unit_info *u, bool *continued);
void node_unit_release(struct node *n, int k);
/* The unit's CPU time now (ns, as its cpu.stat counts it from its start), 0 for a free slot. */
uint64_t node_unit_cpu_ns(const struct node *n, int k);

/* Creates <root>/<name>.seg from the template or, when it exists and was rendered from the
 * same template, resumes it (a damaged one is rendered again, its counters salvaged: see
 * node_repair.c "Damage"). n must be zeroed memory (calloc): the parts a node does not use are
 * left untouched, unfaulted. group_shared: make the file group-writable (a setgid root shared
 * with its group's agents, docs/security.md). The node keeps the file mapped and holds no
 * descriptor for it (an engine's node count is bounded by memory, not RLIMIT_NOFILE). Returns 0,
 * or an errno with a message naming the node and the remedy in err. A damage it found and
 * repaired, or a mode it could not set, is in n->said (it prints nothing). */
int node_open(struct node *n, const struct node_template *t, const char *root, const char *name,
              const struct phys_load *load, const struct phys_gpu_load *gload, int64_t tick_ns, bool group_shared,
              char *err, size_t errlen);
void node_close(struct node *n);
/* One tick at now_mono: step to it, drain agent writes (events to log), begin the next
 * interval at load, publish, write the ledger. until_mono is the earliest the next tick can
 * take its time (the engine loop's next deadline): every published line ends there (its freeze
 * horizon), so a reader who reads this snapshot while the next tick is still publishing other
 * nodes sees the counters stand still, never run ahead of what that tick publishes (segment.h
 * "Counters"). until_mono <= now_mono: the lines stand still from now on. */
void node_tick(struct node *n, int64_t now_mono, int64_t until_mono, int64_t now_wall, double ambient_c,
               struct event_log *log);
/* Moves the node's physics time origin so that emulated time now_mono is its physics time now,
 * and has the next tick publish every value again (each line is timed from the origin): the
 * engine's first tick calls it for every node, so that no node's physics runs through the wall
 * time between its opening and that tick (node.mono_origin). Until that tick publishes, the
 * lines stand still where the opening left them. */
void node_rebase(struct node *n, int64_t now_mono);
/* A RAPL counter that jumps (rapl-jump, docs/faults.md): the energy counters of the packages in
 * pkgs (their package and core zones, or their DRAM zones when dram) show uj more from now on,
 * their register counts with them; the truth (/debug/energy) does not move. Between ticks. */
void node_counter_jump(struct node *n, uint32_t pkgs, bool dram, double uj);
/* Brings the node's next step forward to emulated time mono at the latest (node.wake_mono). */
void node_wake(struct node *n, int64_t mono);
/* Its physics is still moving toward the targets of its load and limits in a way that changes
 * the power of the next interval (a frequency ramp, a PL1, HSMP or GPU limit settling). */
bool node_settling(const struct node *n);
/* An agent wrote to the node's files (a slot store or an event) since its last tick. */
bool node_has_writes(const struct node *n);
/* What GPU k's vendor tools report as its power (NVML's power.draw, amdgpu's power1_average), W:
 * the physics' window mean, with the GPU sensor's measurement noise (sensors.gpuPowerNoiseW)
 * unless the spec asks for exact sensors (spec.sensors.noise false; docs/faults.md "Sensors").
 * The truth is its held power and energy (node_gpu.c). */
/* A GPU's thermal limits (NVML's NVML_TEMPERATURE_THRESHOLD_GPU_MAX and _SLOWDOWN; assumed for
 * every GPU: the values of the one nvidia-smi capture with both, a GeForce 2080, faults.md §3): above
 * the first its driver caps clocks (SW thermal slowdown), above the second the hardware slows
 * it (HW thermal slowdown). docs/faults.md "inlet-temp and fan-failure". */
#define NODE_GPU_MAX_OPERATING_C 89.0
/* A package's TjMax (render_coretemp.c's crit, assumed: not published for these Xeons), where
 * PROCHOT holds it. */
#define NODE_TJMAX_C 100.0
#define NODE_GPU_SLOWDOWN_C 97.0
double node_gpu_draw_w(const struct node *n, int k);
/* A reading's noise (node_sensors.c, docs/faults.md "Sensors"): triangular in [-1, 1], a function
 * of the node's name, the device k, the sensor (salt) and the physics time, new at every
 * publication; 0 when the spec wants exact sensors. A reading is the truth + bound x this. */
double node_sensor_noise(const struct node *n, int k, uint64_t salt);
/* A stable 64-bit mix of the node's name, a device index and a salt (FNV-1a, then splitmix64's
 * finaliser): the GPU identities and the sensors' noise draw from it. */
uint64_t node_ident_bits(const char *node, int k, uint64_t salt);
/* The node's power now, W: packages, DRAM, GPUs and the rest of the platform (the figure
 * /telemetry's nodePowerWatts and the BMC interfaces show). */
double node_power_w(const struct node *n);
/* The statistics of n->power: average over the reporting period (W) and the period (ms). */
double node_power_avg_w(const struct node *n);
int64_t node_power_period_ms(const struct node *n);

#endif
