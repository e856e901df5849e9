/* node_sensors: what a node's power sensors add to the truth (docs/faults.md "Sensors"): the
 * noise of each reading, drawn from a stable mix of the node, the device, the sensor and the
 * physics time, so that the same run reads the same figures (node_sensor_noise), and the mix
 * itself, which the GPU identities share (node_ident_bits). The readings that use it: NVML's
 * and amdgpu's GPU power (node_gpu.c), amd_hsmp's socket power, the BMC's node power and the
 * pm_counters power files (node.c). Energy counters never do: they stay the exact integral of the power. */
#include "node_internal.h"

#include "seg_build.h"

#include <string.h>

uint64_t node_ident_bits(const char *node, int k, uint64_t salt)
{
    uint64_t x = seg_hash_bytes(1469598103934665603ULL ^ salt, node, strlen(node));
    x ^= (uint64_t)k * 0x9e3779b97f4a7c15ULL;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

double node_sensor_noise(const struct node *n, int k, uint64_t salt)
{
    if (!n->sensor_noise)
        return 0;
    /* the sum of two uniform draws of 24 bits each, less 1: triangular, mean 0, within +/- 1 */
    uint64_t x = node_ident_bits(n->name, k, salt ^ n->state.substeps);
    double a = (double)(x >> 40) / 16777216.0, b = (double)(x & 0xffffff) / 16777216.0;
    return a + b - 1;
}
