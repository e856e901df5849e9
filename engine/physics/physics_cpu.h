/* physics_cpu: the CPU side of one node's physics (upstream §c): package power from load
 * and frequency (analytic or measured-curve model), the running frequency a cpufreq governor and
 * the agent's limits give, RAPL PL1/PL2/PL4 and HSMP caps and the frequency a cap forces, package
 * temperature, and exact energy counters per zone with the kernel's unit and 32-bit wrap.
 *
 * Owns: the numbers. A node is a flat phys_cpu_params (what the profile says, never changes) and a
 * flat phys_cpu_state (everything that evolves, including the limits agents wrote). Both are plain
 * structs with fixed-size arrays and no pointers, so they can be copied, compared with memcmp,
 * stored in a ledger or placed in a shared segment as they are.
 *
 * Never: I/O, allocation, globals, locks, clocks or randomness. Nothing here parses or validates
 * what an agent wrote (the write path does; it stores normalised values into the state, using the
 * phys_rapl_* helpers below for the kernel's arithmetic). No libm either: the few exp/log it needs
 * are computed here, so a given input gives the same bits on every host and every libm.
 *
 * Time. Node time starts at 0 at phys_cpu_init. Physics advances on a fixed grid of 1 ms substeps
 * (PHYS_SUBSTEP_NS) from that origin. phys_cpu_step(dt) runs one substep per grid boundary it
 * crosses and carries the rest of dt to the next call, so the state at a time depends only on the
 * grid, never on how the time was cut into calls: 1000 steps of 1 ms leave exactly the same bytes
 * as one step of 1 s.
 *
 * Intervals. The power every zone draws is fixed by phys_cpu_begin_interval (from the load, the
 * limits and the running frequency at that moment) and held until the next call to it. The engine
 * calls it once per tick, after it has stepped to the tick and applied what agents wrote, so a
 * write takes effect from the tick boundary and the whole trajectory of the coming interval is
 * known when it is published. Inside an interval the dynamics still evolve on every substep: the
 * running frequency ramps, PL1 and HSMP caps settle, the temperature moves. Their effect on power
 * shows from the next interval on. (Upstream recomputes power on every substep; holding it per
 * interval is what makes reads between ticks exact, see the contract below.)
 *
 * Reads between ticks (the contract for the shim, see phys_energy_publish).
 * Each zone counts energy in an exact integer accumulator: µJ since init plus a remainder in nJ
 * (0..999). At every grid boundary it adds power_uw nJ (P µW for 1 ms is P nJ), with power_uw the
 * zone's held power, an integer. So between two begin_interval calls a counter is a straight line
 * on the grid, and from these published numbers
 *     acc_uj, rem_nj    accumulator at the last grid boundary grid_ns before publication
 *     power_uw          held power of the interval, µW (= nJ per substep)
 *     unit_nj, seed_raw the counter register (energy unit; raw count at accumulator 0)
 *     until_ns          reads later than this are read at until_ns (the engine's freeze horizon)
 * the energy_uj file at any time t ≥ grid_ns is
 *     n      = floor((min(t, until_ns) - grid_ns) / 1 ms)
 *     nj     = rem_nj + n * power_uw
 *     tot_uj = acc_uj + nj / 1000          rem = nj mod 1000
 *     raw    = (seed_raw + floor((tot_uj * 1000 + rem) / unit_nj)) mod 2^32
 *     value  = floor(raw * unit_nj / 1000)
 * This is bit-identical to stepping a copy of the state to t and calling phys_energy_uj_at, never
 * decreases with t (until the 32-bit counter wraps, as hardware does) and at the next tick equals
 * what the tick computes. phys_energy_pub_uj_at implements exactly these lines.
 *
 * Formulas and their sources are in physics_cpu.c. */
#ifndef HWEMU_PHYSICS_CPU_H
#define HWEMU_PHYSICS_CPU_H
#include <stdbool.h>
#include <stdint.h>

#define PHYS_MAX_PKGS 8
#define PHYS_MAX_FREQS 64
#define PHYS_MAX_CURVE 32
#define PHYS_SUBSTEP_NS 1000000LL /* 1 ms */
#define PHYS_MAX_CPUS 512        /* logical CPUs of a node the physics runs (the largest profile has 384) */
#define PHYS_LOAD_PERIOD 5000    /* substeps between load-average samples (kernel LOAD_FREQ, 5 s) */

enum phys_model { PHYS_MODEL_ANALYTIC = 0, PHYS_MODEL_CURVE = 1 };

/* scaling_driver. intel_pstate (active) and amd-pstate-epp are "setpolicy" drivers: their
 * powersave follows load; the others' powersave pins the minimum. */
enum phys_driver {
    PHYS_DRV_INTEL_PSTATE = 0, /* intel_pstate active */
    PHYS_DRV_INTEL_CPUFREQ,    /* intel_pstate passive */
    PHYS_DRV_ACPI_CPUFREQ,     /* table driver */
    PHYS_DRV_AMD_PSTATE_EPP,   /* amd-pstate active */
    PHYS_DRV_AMD_PSTATE,       /* amd-pstate passive/guided */
};

enum phys_governor {
    PHYS_GOV_PERFORMANCE = 0,
    PHYS_GOV_POWERSAVE,
    PHYS_GOV_SCHEDUTIL,
    PHYS_GOV_ONDEMAND,
    PHYS_GOV_CONSERVATIVE,
    PHYS_GOV_USERSPACE,
};

enum phys_cpu_class { PHYS_CLASS_COMPUTE_BOUND = 0, PHYS_CLASS_MEMORY_BOUND, PHYS_CLASS_IO_BOUND, PHYS_CLASS_MIXED };

/* Constraint kinds by name: long_term, short_term, peak_power. */
enum phys_pl { PHYS_PL1 = 0, PHYS_PL2 = 1, PHYS_PL4 = 2, PHYS_NPL = 3 };

/* rejectWrites of a constraint: locked is still enforced, disabled is not. */
enum phys_reject { PHYS_REJECT_NONE = 0, PHYS_REJECT_LOCKED, PHYS_REJECT_DISABLED };

/* Energy zones. PACKAGE, DRAM and CORE exist per package; PSYS once per node (pkg ignored). */
enum phys_zone { PHYS_ZONE_PACKAGE = 0, PHYS_ZONE_DRAM, PHYS_ZONE_CORE, PHYS_ZONE_PSYS, PHYS_NZONES };

/* The load a node runs. Utilisation is per logical CPU (index = position in the node's CPU list,
 * ascending CPU number): with ncpu_util 0 every CPU runs at cpu_util (baseLoad); a producer that
 * drives CPUs one by one (workload runs) sets ncpu_util and cpu_util_of[0..ncpu_util), and CPUs
 * past ncpu_util run at cpu_util. */
struct phys_load {
    double cpu_util;         /* 0..1, every CPU unless given per CPU */
    double memory_intensity; /* 0..1 */
    int cpu_class;           /* enum phys_cpu_class */
    int32_t ncpu_util;       /* entries of cpu_util_of in use, 0..PHYS_MAX_CPUS */
    float cpu_util_of[PHYS_MAX_CPUS];
};

/* ---- parameters: what the profile says; never written by the physics ---- */

struct phys_constraint {
    int32_t present;        /* the constraint exists on this zone */
    int32_t reject;         /* enum phys_reject */
    int64_t limit_uw;       /* initial constraint_N_power_limit_uw */
    int64_t max_power_uw;   /* constraint_N_max_power_uw; > 0 caps what is enforced */
    int64_t time_window_us; /* initial constraint_N_time_window_us (PL1: settle time constant) */
    int32_t limit_bits;     /* width of the limit field; 0 = MSR default (phys_rapl_default_limit_bits) */
    int32_t reserved;
};

struct phys_counter {
    int64_t energy_unit_nj;      /* 0: recovered from max_energy_range_uj, else 1000 */
    int64_t max_energy_range_uj; /* profile override; only used to recover a missing unit */
    int64_t start_uj;            /* energy_uj at init (0 fresh; the ledger value on restart) */
};

struct phys_pkg_params {
    int32_t rapl_present;  /* a package powercap zone with constraints exists */
    int32_t rapl_enabled;  /* initial zone `enabled` */
    int64_t power_unit_uw; /* limit quantum (0 = none) */
    struct phys_constraint pl[PHYS_NPL];
    struct phys_counter counter[3]; /* PHYS_ZONE_PACKAGE, _DRAM, _CORE */
    int64_t hsmp_cap_default_uw;    /* initial HSMP power1_cap; 0 with cap_max 0 = no HSMP */
    int64_t hsmp_cap_max_uw;        /* power1_cap_max */
    /* this package's share of the part-to-part spread: its model power (idle and load) times
     * this factor; 0 (zeroed params) means 1, no spread (params_spread, engine/render/params.c) */
    double power_scale;
};

struct phys_cpu_params {
    /* topology: the physics runs every logical CPU (cpus, at most PHYS_MAX_CPUS) and groups them
     * into packages by cpu_pkg (index = position in the CPU list); with cpu_pkg_n 0 the CPUs are
     * split into sockets contiguous blocks. dies are for the renderer. */
    int32_t sockets, dies_per_pkg, cpus;
    int32_t model; /* enum phys_model */
    int32_t cpu_pkg_n;
    int32_t reserved2;
    uint8_t cpu_pkg[PHYS_MAX_CPUS];
    /* For the write path, not the physics: the CPU index of the first CPU of each CPU's cpufreq
     * policy (a write to a policy sets every CPU whose cpu_policy is that CPU). */
    uint16_t cpu_policy[PHYS_MAX_CPUS];
    int32_t policy_span; /* most CPUs in one policy (1: every policy is one CPU) */
    int32_t reserved3;

    /* analytic model (c.2) */
    double idle_pkg_w, max_pkg_w;
    double alpha_util, beta_freq; /* ≤ 0 → 1 */
    double knee;                  /* curve throughput knee, ≤ 0 → 0.7 */
    double core_fraction;         /* share of package energy a core zone counts */
    int32_t freq_ramp_ms;         /* running-frequency time constant, 0 = instant */
    int32_t curve_n;              /* measured curve (c.3): node watts at load percentages */
    double curve_load_pct[PHYS_MAX_CURVE];
    double curve_node_w[PHYS_MAX_CURVE]; /* whole node; split evenly over the packages */

    double dram_w_per_socket, platform_other_w;
    double rapl_floor_w;      /* lowest package power a cap can force */
    double rapl_settle_tau_s; /* > 0: fixed PL1 settle tau; 0 = each PL1's time window */
    int32_t hsmp_settle_tau_ms; /* 0 = instant */
    int32_t reserved0;

    /* temperature: first order toward ambient + thermal_c_per_w·P (≤ 0 → 0.125 °C/W, 4 s) */
    double thermal_c_per_w, thermal_tau_s;
    double ambient_init_c; /* ambient at init, for the initial temperature */

    /* cpufreq (one set for every policy of the node) */
    int32_t driver;   /* enum phys_driver */
    int32_t governor; /* initial enum phys_governor */
    int32_t epp;      /* initial raw EPP 0..255 (stored, no effect on power) */
    int32_t boost;    /* initial turbo/boost: cpufreq/boost, or !intel_pstate/no_turbo */
    int64_t cpuinfo_min_khz, cpuinfo_max_khz; /* hardware range, max with turbo */
    int64_t base_khz;                         /* top non-turbo frequency, 0 = unknown */
    int32_t freq_n;                           /* scaling_available_frequencies, 0 = none */
    int32_t reserved1;
    int64_t freq_khz[PHYS_MAX_FREQS];

    struct phys_pkg_params pkg[PHYS_MAX_PKGS];
    struct phys_counter psys; /* the node's psys counter (power = platform + Σ package + DRAM) */
};

/* ---- state: what evolves ---- */

/* One energy counter: exact accumulator, held power and the 32-bit register view. */
struct phys_energy {
    uint64_t acc_uj;   /* µJ since init */
    uint64_t rem_nj;   /* sub-µJ remainder, 0..999 */
    uint64_t power_uw; /* held power of the interval; also nJ per substep */
    uint64_t unit_nj;  /* counter unit */
    uint64_t seed_raw; /* raw count at acc 0 (from start_uj) */
    uint64_t start_uj; /* phys_energy_total_uj base */
};

/* One logical CPU: its cpufreq policy's settings (a policy spanning several CPUs writes all of
 * them), its running frequency, and its CPU time as a line on the substep grid: busy ns at
 * substep s ≥ busy_base_sub is busy_base_ns + busy_rate_ns·(s - busy_base_sub). The line is
 * rebased only when the CPU's utilisation changes, so a reader can extend it exactly. */
struct phys_core_state {
    double freq_khz;                         /* running frequency (ramped) */
    int32_t scaling_min_khz, scaling_max_khz; /* written by agents (normalised) */
    int32_t governor;                        /* enum phys_governor */
    int32_t epp;                             /* raw 0..255; no effect on power (upstream c.5, assumed) */
    uint32_t busy_rate_ns;                   /* busy ns per substep this interval: utilisation × 1e6 */
    uint32_t stuck_khz;                      /* > 0: its frequency is stuck here whatever its governor and
                                              * limits ask (a fault, docs/faults.md; set by the runtime) */
    uint64_t busy_base_ns, busy_base_sub;
};

struct phys_pkg_state {
    /* written by agents through the write path (normalised values, as the files read back) */
    int64_t pl_limit_uw[PHYS_NPL];
    int64_t pl1_window_us;
    int64_t hsmp_cap_uw;
    int32_t rapl_enabled;
    int32_t ncpus;    /* logical CPUs in the package */
    int32_t capped;   /* the interval's power is set by a cap */
    int32_t limits_ignored; /* a fault (limit-ignored, docs/faults.md): the limits read back as
                             * written but none is enforced from the next interval */
    double fault_cap_w;     /* > 0: the power the platform's firmware holds the package at (set by the
                             * runtime from a fault, docs/faults.md: PROCHOT at TjMax under a cooling
                             * fault, the node manager's share of a lost PSU's budget); 0: none */

    /* dynamics, every substep */
    double freq_khz;       /* mean running frequency of the package's CPUs */
    double pl1_settled_w;  /* PL1 settled power */
    double hsmp_settled_w; /* HSMP settled cap */
    double temp_c;
    /* the temperature's approach in closed form: from temp_from_c at substep temp_from_sub toward
     * temp_to_c, (1 - h/τ)^k of the gap left after k substeps; on temp_to_c from substep
     * temp_on_sub (the gap under 1e-9 °C). A new target starts a new approach from where it is. */
    double temp_from_c, temp_to_c;
    uint64_t temp_from_sub, temp_on_sub;

    /* fixed at the last phys_cpu_begin_interval */
    double power_w;         /* package power drawn over the interval */
    double natural_w;       /* what it would draw without caps */
    double scale_eff;       /* frequency scale the power corresponds to (f_eff) */
    double cap_w;           /* enforced cap in force, INFINITY = none */
    double uncapped_khz;    /* the frequency its busiest CPUs would run at without any cap */
    double requested_cap_w; /* lowest PL1/HSMP limit written, enforced or not; INFINITY = none */

    struct phys_energy energy[3]; /* PHYS_ZONE_PACKAGE, _DRAM, _CORE */
};

struct phys_cpu_state {
    int64_t now_ns;      /* node time since init */
    int64_t carry_ns;    /* time since the last grid boundary, [0, PHYS_SUBSTEP_NS) */
    uint64_t substeps;   /* grid boundaries crossed since init */
    int32_t npkgs;       /* packages simulated (sockets clamped to 1..PHYS_MAX_PKGS) */
    int32_t boost;       /* turbo/boost on (agent-writable) */
    int32_t ncpus;       /* logical CPUs simulated (cpus clamped to npkgs..PHYS_MAX_CPUS) */
    int32_t max_perf_pct, min_perf_pct; /* intel_pstate global limits (agent-writable), % of cpuinfo_max */
    int32_t nr_active;   /* tasks running this interval: round(Σ utilisation), load-average input */
    int32_t settling;    /* after the last step a running frequency, PL1 or HSMP is not yet on its
                          * target (each steps onto it from within 1e-6, relative, of it): the power
                          * of a next interval could differ in any bit; once on them it holds
                          * exactly (the temperature, which no power depends on, is not counted) */
    int32_t powered_off; /* the node lost its power (a fault, docs/faults.md, set by the runtime): from
                          * the next interval every zone draws nothing */
    uint64_t avenrun[3]; /* load averages 1, 5, 15 min, kernel fixed point (11 bits) */
    struct phys_pkg_state pkg[PHYS_MAX_PKGS];
    struct phys_energy psys;
    struct phys_core_state cpu[PHYS_MAX_CPUS];
};

/* What a reader needs to compute one energy_uj file between ticks (header contract). */
struct phys_energy_pub {
    uint64_t acc_uj, rem_nj, power_uw, unit_nj, seed_raw;
    int64_t grid_ns;  /* last grid boundary at publication */
    int64_t until_ns; /* freeze horizon (≥ grid_ns); INT64_MAX for none */
};

/* State at render: limits, governor and caps at the profile's values, counters at start_uj,
 * frequency at the ceiling under performance else at the minimum, and the first interval begun
 * at zero load. The CPUs past ncpus are left as the memory holds them (zero in a node, which
 * starts from zeroed memory: their pages are never touched); nothing reads them. */
void phys_cpu_init(const struct phys_cpu_params *p, struct phys_cpu_state *s);

/* What a phys_cpu_begin_interval changed that readers of the state see (a publisher skips the
 * rest): a package's capped state or effective scale (so phys_cpu_cpu_freq_khz of its CPUs may
 * differ), a CPU's busy line (rebased: its utilisation changed). */
enum { PHYS_BEGAN_FREQ_CEILING = 1, PHYS_BEGAN_BUSY_LINES = 2 };

/* Fix the power of every zone for the interval that starts now, from load, the limits in s, the
 * running frequency and the settled caps (c.2-c.4). Idempotent for the same inputs. Returns the
 * PHYS_BEGAN_* changes it made. */
unsigned phys_cpu_begin_interval(const struct phys_cpu_params *p, struct phys_cpu_state *s,
                                 const struct phys_load *load);

/* Advance by dt_ns (≥ 0; a negative dt does nothing) on the 1 ms grid: per substep, energy at the
 * held powers, PL1/HSMP settling, each CPU's frequency ramp toward its governor's target for its
 * utilisation, temperature toward ambient_c, and every PHYS_LOAD_PERIOD substeps the load
 * averages (kernel/sched/loadavg.c calc_load). Pass the load the interval was begun with. Returns whether a CPU's running frequency changed. */
bool phys_cpu_step(const struct phys_cpu_params *p, struct phys_cpu_state *s, const struct phys_load *load,
                   double ambient_c, int64_t dt_ns);

/* Package power of the model alone (no caps) at frequency scale f = running kHz / cpuinfo_max. */
double phys_cpu_model_power_w(const struct phys_cpu_params *p, const struct phys_load *load, double f);

/* scaling_cur_freq of one CPU (index into the CPU list; c.6: lowered to what a cap forces). */
int64_t phys_cpu_cpu_freq_khz(const struct phys_cpu_params *p, const struct phys_cpu_state *s, int cpu);
/* The mean of phys_cpu_cpu_freq_khz over the package's CPUs (telemetry's package frequency). */
int64_t phys_cpu_cur_freq_khz(const struct phys_cpu_params *p, const struct phys_cpu_state *s, int pkg);
/* Package of CPU index cpu (cpu_pkg, or the contiguous split). */
int phys_cpu_pkg_of(const struct phys_cpu_params *p, const struct phys_cpu_state *s, int cpu);
/* Utilisation of CPU index cpu under load (0..1). */
double phys_load_util(const struct phys_load *load, int cpu);
/* Busy ns of CPU cpu since init at grid boundary sub (≥ the CPU's line base; exact). */
uint64_t phys_cpu_busy_ns(const struct phys_cpu_state *s, int cpu, uint64_t sub);

/* The DVFS throttle the node's cpufreq limits impose, in percent: 100 × (1 − the mean over its CPUs
 * of the frequency ceiling their policy's limits allow (scaling_max_freq resolved into the table,
 * turbo, intel_pstate's max_perf_pct) over cpuinfo_max_khz, the hardware maximum with turbo).
 * 0 with no limit set; the running frequency under a governor or a cap does not count. */
double phys_cpu_dvfs_throttle_pct(const struct phys_cpu_params *p, const struct phys_cpu_state *s);

/* cpuinfo_max_freq as shown: the top non-turbo frequency (base_khz) while turbo is off on a driver
 * without a frequency table, else cpuinfo_max_khz. */
int64_t phys_cpu_cpuinfo_max_khz(const struct phys_cpu_params *p, const struct phys_cpu_state *s);

/* What a write of uw to constraint_N_power_limit_uw reads back (sysfs-abi §3.4): floored to the
 * power unit, then the raw count masked to limit_bits bits. A power unit ≤ 0 keeps uw as it is.
 * Returns 0, or -EINVAL when limit_bits is outside 1..63. */
int phys_rapl_limit_normalise(uint64_t uw, int64_t power_unit_uw, int limit_bits, uint64_t *out);

/* The field width a constraint has when the profile gives none: 15 bits (PL1, PL2), 17 on psys,
 * 13 for PL4. */
int phys_rapl_default_limit_bits(enum phys_pl pl, bool psys);

/* What a write of us to constraint_N_time_window_us reads back with time unit time_unit_us
 * (7-bit Y/F encoding, sysfs-abi §3.4). time_unit_us ≤ 0 keeps us. */
int64_t phys_rapl_window_normalise(int64_t us, int64_t time_unit_us);

/* max_energy_range_uj of a counter with this unit: floor((2^32 - 1) * unit / 1000). */
uint64_t phys_rapl_max_energy_range_uj(uint64_t energy_unit_nj);

/* energy_uj of a zone as the kernel shows it (32-bit raw count × unit, wrapping). */
uint64_t phys_energy_uj_at(const struct phys_cpu_state *s, enum phys_zone zone, int pkg);

/* Exact energy since init plus start_uj, without wrap (telemetry, ledger). */
uint64_t phys_energy_total_uj(const struct phys_cpu_state *s, enum phys_zone zone, int pkg);
/* The same total back substeps before the last step's end, at the power that step held (exact
 * while back is at most the substeps of that step: energy grows by the same nanojoules each). */
uint64_t phys_energy_total_uj_back(const struct phys_cpu_state *s, enum phys_zone zone, int pkg, uint64_t back);

/* The numbers to publish at a tick for reads until the next one (after begin_interval). */
void phys_energy_publish(const struct phys_cpu_state *s, enum phys_zone zone, int pkg, int64_t until_ns,
                         struct phys_energy_pub *out);

/* energy_uj at node time t_ns from published numbers (header contract); t before grid_ns reads
 * the value at grid_ns. */
uint64_t phys_energy_pub_uj_at(const struct phys_energy_pub *pub, int64_t t_ns);

#endif
