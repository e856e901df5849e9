/* physics_energy: the arithmetic an energy accumulator shares between the CPU and GPU physics
 * (physics_cpu.c, physics_gpu.c): what it held some substeps ago. Pure integer code. */
#ifndef HWEMU_PHYSICS_ENERGY_H
#define HWEMU_PHYSICS_ENERGY_H
#include <stdint.h>

/* The µJ an accumulator (acc µJ + rem nJ, growing by power nJ per substep) held back substeps
 * ago: floor((acc·1000 + rem - power·back) / 1000), in 64 bits (power·back stays far below 2^64). */
static inline uint64_t phys_energy_back(uint64_t acc_uj, uint64_t rem_nj, uint64_t power_uw, uint64_t back)
{
    uint64_t gone = power_uw * back;
    if (gone <= rem_nj)
        return acc_uj;
    uint64_t drop = (gone - rem_nj + 999) / 1000;
    return drop < acc_uj ? acc_uj - drop : 0;
}
#endif
