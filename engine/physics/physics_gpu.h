/* physics_gpu: the GPUs of one node: power from utilization and clocks, the power limit settling
 * toward what was written, energy, the telemetry averages each vendor reports, clocks, clock
 * locks, temperature, persistence and peer transfers. Pure computation; node.c binds it to
 * the segment (engine/segment/gpu_files.h lists the files).
 *
 * Time and energy. The GPUs share the node's physics clock and its 1 ms grid. As for the CPU
 * zones (physics_cpu.h, "Reads between ticks"), a GPU's power is held constant over each
 * published interval, so its energy counter is a straight line on the grid that a reader can
 * extrapolate exactly: the held power is the mean, over the coming tick, of the power the
 * settling limit allows (see phys_gpu_begin_interval), which keeps the energy of every
 * interval what the settling curve integrates to.
 *
 * Model (upstream c.7, c.8; the parts it leaves open are marked "ours"):
 *   natural power  Pn(u) = wc*(idle + D*u^1.02) + wm*(idle + D*(0.35*sqrt(u) + 0.30*u)),
 *                  D = naturalMax - idle, weights by class and memory intensity (c.7)
 *   clock ceiling  the graphics clock is held at or below the lock's maximum and the
 *                  smMaxByMem ceiling of the locked memory clock; the dynamic power scales
 *                  with the square of the clock ratio (ours)
 *   faults         a power brake is a limit in force at once (no settling); an ignored
 *                  limit settles toward the maximum instead; a thermal cap holds power at
 *                  once below both, the enforced limit unchanged (docs/faults.md)
 *   limit          enforced settles toward the written limit (clamped to [min, max]) with
 *                  tau = capSettleTauMS: e(t) = target + (e0 - target) * exp(-t / tau), and
 *                  is the target once within 0.5 W of it (ours: the controller then holds it)
 *   power          P = max(idle, min(Pclock, e(t)))
 *   clock          under the limit the graphics clock drops so that the dynamic power fits:
 *                  f = fceil * sqrt((e - idle) / (Pclock - idle)), at least graphicsMin (ours)
 *   NVML draw      boxcar mean over telemetryWindowMS (c.8); AMD power1_average first-order
 *                  with that window as time constant (c.8); instant = the power at the tick
 *   temperature    first order (tau 20 s, ours) toward ambient + thermalRiseC * P / naturalMax
 *   persistence    disabled: an idle GPU (utilization 0) returns its written limit to the
 *                  default at the tick (node.c does it, in the file too, with a
 *                  joulie.sim.cap.reset event)
 *   peer transfers each receiver's inbound demand shares its peerLinkGBps in proportion;
 *                  with receiverGate on, a receiver takes data at its link rate scaled by its
 *                  graphics clock ratio (ours); bytes count on both ends
 */
#ifndef HWEMU_PHYSICS_GPU_H
#define HWEMU_PHYSICS_GPU_H
#include <stdbool.h>
#include <stdint.h>

#define PHYS_GPU_MAX 16
#define PHYS_GPU_MAX_MEMCLK 8
#define PHYS_GPU_MAX_XFER (PHYS_GPU_MAX * (PHYS_GPU_MAX - 1)) /* every ordered pair of GPUs */
#define PHYS_GPU_RING 64

enum phys_gpu_vendor { PHYS_GPU_NONE = 0, PHYS_GPU_NVIDIA, PHYS_GPU_AMD, PHYS_GPU_INTEL };
enum phys_gpu_class { PHYS_GPU_CLASS_COMPUTE = 0, PHYS_GPU_CLASS_MEMORY, PHYS_GPU_CLASS_OTHER };

struct phys_gpu_xfer {
    int from, to;       /* GPU indices */
    double gbps;        /* demanded GB/s */
};

/* What the workload asks of the GPUs. */
struct phys_gpu_load {
    double util;              /* 0..1, every GPU */
    double memory_intensity;  /* 0..1 */
    int cls;                  /* enum phys_gpu_class */
    struct phys_gpu_xfer xfer[PHYS_GPU_MAX_XFER];
    int nxfer;
};

struct phys_gpu_params {
    int vendor;                      /* enum phys_gpu_vendor; NONE: no GPUs */
    int count;
    double idle_w, natural_max_w;
    double min_w, max_w, default_w;  /* limit range; for Intel min_w is the hardware floor */
    double start_w;                  /* the limit in force at render (currentW, else default) */
    int64_t tau_ns, window_ns;
    double thermal_rise_c;
    int gfx_min, gfx_max, gfx_idle, gfx_step; /* MHz */
    int mem_clk[PHYS_GPU_MAX_MEMCLK], nmem;    /* supported memory clocks, highest first */
    int mem_ceiling[PHYS_GPU_MAX_MEMCLK];      /* smMaxByMem per memory clock, 0: none */
    int mem_idle, video_max;
    bool persistence;
    double peer_link_gbps;
    bool receiver_gate;
    double ambient_init_c;
    long long memory_mib;            /* per GPU */
    /* each GPU's share of the part-to-part spread: its idle and clock-dependent power times this
     * factor (a cap still holds at the cap); 0 means 1 (params_spread, engine/render/params.c) */
    double power_scale[PHYS_GPU_MAX];
};

struct phys_gpu {
    /* written by agents and tools (applied at the tick) */
    double limit_w;           /* requested limit; Intel: 0 = no limit */
    /* the clock locks' maxima (0: not locked); a lock's minimum does not hold a clock up
     * against the power limit, which wins, so the physics needs only the maxima */
    int lock_gfx_max, lock_mem_max;
    bool persistence;
    /* faults (docs/faults.md), set by the runtime: the board's power brake holds the GPU at
     * brake_w from the next interval (0: none), and limit_ignored enforces no limit (its
     * maximum) whatever limit_w reads */
    double brake_w;
    bool limit_ignored;
    /* its thermal controller (docs/faults.md, set by the runtime under a cooling fault): the
     * power that keeps it at its maximum operating temperature in its air, 0: none. It holds
     * power and clocks down from the next interval without moving the enforced limit */
    double thermal_w;
    bool powered_off;         /* its node lost its power: from the next interval it draws nothing */
    /* physics */
    double enforced_w;        /* settled limit */
    double target_w;          /* what enforced settles toward this interval */
    double power_w;           /* held power of the interval */
    double instant_w;         /* power at the tick */
    double avg_amd_w;         /* first-order average */
    double temp_c;
    int gfx_mhz, mem_mhz;
    bool capped;              /* the limit holds power below what the clocks would draw */
    bool thermal_capped;      /* thermal_w holds it below what the clocks and the limit allow */
    uint64_t acc_uj, rem_nj;  /* energy since init on the 1 ms grid */
    uint64_t power_uw;        /* held power, uW = nJ per substep */
    int64_t start_uj;         /* energy before this engine's start (resume) */
    double rx_bytes, tx_bytes;
    double rx_gbps, tx_gbps;  /* this interval's rates */
    /* NVML boxcar: energy samples at the last ticks */
    int64_t ring_t[PHYS_GPU_RING];
    uint64_t ring_uj[PHYS_GPU_RING];
    int ring_head, ring_n;
    double draw_w;            /* boxcar mean at the last tick */
};

struct phys_gpu_state {
    struct phys_gpu g[PHYS_GPU_MAX];
    int64_t now_ns;
};

/* State at render: limits at start_w, clocks idle, temperature at ambient. The GPUs past
 * p->count are left as the memory holds them (zero in a node, which starts from zeroed memory:
 * their pages are never touched); nothing reads them. */
void phys_gpu_init(const struct phys_gpu_params *p, struct phys_gpu_state *s);
/* Advances every GPU to now_ns (physics time): energy at the held powers on the 1 ms grid, the
 * limit's settling, averages, temperature, peer bytes. */
void phys_gpu_step(const struct phys_gpu_params *p, struct phys_gpu_state *s, double ambient_c, int64_t now_ns);
/* Fixes each GPU's power for the coming interval of interval_ns from load and the written
 * settings: the held power is the interval's mean of the settling curve. */
void phys_gpu_begin_interval(const struct phys_gpu_params *p, struct phys_gpu_state *s,
                             const struct phys_gpu_load *load, int64_t interval_ns);
/* Total energy of GPU i in uJ (start_uj included). */
uint64_t phys_gpu_total_uj(const struct phys_gpu_state *s, int i);
/* The same total back grid boundaries before the last step's end, at the power that step held
 * (exact while back is at most the boundaries that step crossed). */
uint64_t phys_gpu_total_uj_back(const struct phys_gpu_state *s, int i, uint64_t back);
/* Natural power at utilization u for the load's class and memory intensity (c.7). */
double phys_gpu_natural_w(const struct phys_gpu_params *p, const struct phys_gpu_load *load, double u);
/* The highest supported graphics clock at or below mhz under memory clock mem (its ceiling). */
int phys_gpu_gfx_ceiling(const struct phys_gpu_params *p, int mem_mhz);

#endif
