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

/* The part-to-part spread of one node (docs/profiles.md "Part-to-part spread"): each package's
 * and each GPU's power_scale becomes 1 + d, d within ±PARAMS_SPREAD, d summing to zero over the
 * node's packages and over its GPUs (so the node's total at equal loads is unchanged), drawn
 * from a hash of the node name and the unit's index: the same node gets the same figures on
 * every start, two nodes of a pool different ones. A node with one package (or GPU) has none. */
#define PARAMS_SPREAD 0.015
void params_spread(const char *node, struct phys_cpu_params *p, struct phys_gpu_params *g);

#endif
