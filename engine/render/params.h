/* params: a merged profile tree (pool overrides included) as physics parameters, and the
 * names the profile format and sysfs use for the physics' enums. Model -> physics; never
 * includes the runtime. */
#ifndef HWEMU_PARAMS_H
#define HWEMU_PARAMS_H
#include "physics_cpu.h"
#include "physics_gpu.h"

#include <stdbool.h>

struct yt_node;

/* Governor name (a prefix of a line is fine) as enum phys_governor. */
int params_governor_of(const char *g);

/* Constraint name -> enum phys_pl (long_term, short_term, peak_power), -1 for others; zone
 * name -> enum phys_zone (package-N only as a top-level zone), -1 for others. */
int params_pl_of(const char *constraint_name);
int params_zone_of(const char *zone_name, bool top);

/* Physics parameters from a merged profile tree (pool overrides included). */
void params_cpu(const struct yt_node *tree, double ambient_c, struct phys_cpu_params *p);
void params_gpu(const struct yt_node *tree, double ambient_c, struct phys_gpu_params *g);

/* What the node's power sensors add to the truth when the spec wants real sensors
 * (spec.sensors.noise, docs/faults.md "Sensors"): the bound of each reading's noise, from the
 * profile's sensors block (profiles/README.md), each defaulting to ours when the profile gives
 * none. 0: that sensor reads exact. */
struct sensor_params {
    double gpu_w;      /* sensors.gpuPowerNoiseW: NVML's power reading, amdgpu's power1_average/_input */
    double socket_w;   /* sensors.socketPowerNoiseW: amd_hsmp's power1_input */
    double bmc_pct;    /* sensors.bmcPowerNoisePct: the BMC's reading (DCMI, Redfish), % of it */
};
#define PARAMS_GPU_NOISE_W 1.0
#define PARAMS_SOCKET_NOISE_W 1.0
#define PARAMS_BMC_NOISE_PCT 1.0
void params_sensors(const struct yt_node *tree, struct sensor_params *s);

/* The part-to-part spread of one node (docs/profiles.md "Part-to-part spread"): each package's
 * and each GPU's power_scale becomes 1 + d, d within ±PARAMS_SPREAD, d summing to zero over the
 * node's packages and over its GPUs (so the node's total at equal loads is unchanged), drawn
 * from a hash of the node name and the unit's index: the same node gets the same figures on
 * every start, two nodes of a pool different ones. A node with one package (or GPU) has none. */
#define PARAMS_SPREAD 0.015
void params_spread(const char *node, struct phys_cpu_params *p, struct phys_gpu_params *g);

#endif
