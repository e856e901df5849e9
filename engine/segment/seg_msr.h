/* seg_msr: the registers of a class M file, /dev/cpu/<n>/msr (segment.h, "Devices").
 *
 * Reads follow the kernel's msr driver (arch/x86/kernel/msr.c) at the register level: an address
 * the node's processor has answers 8 bytes, any other answers EIO, as a faulting RDMSR does.
 * Writes: only MSR_PKG_POWER_LIMIT (0x610) is writable; it is decoded with the layout of the
 * Intel SDM Vol. 3B §14.9.3 (PL1 14:0, enable 15, clamp 16, window 23:17 as 2^Y * (1 + Z/4) time
 * units, PL2 46:32 / 47 / 48 / 55:49, lock 63) and stored through the powercap files' validators
 * (seg_attr_write), so a limit written as an MSR is the same store and the same write event as
 * one written to constraint_N_power_limit_uw. A register whose lock bit reads 1 ignores writes
 * ("all write attempts to this MSR are ignored until next RESET", SDM §14.9.3). Every other
 * address faults (EIO): the energy, unit and info registers are read-only in hardware.
 * Dependency-free (libc); no allocation. */
#ifndef HWEMU_SEG_MSR_H
#define HWEMU_SEG_MSR_H
#include "segment.h"

#define MSR_RAPL_POWER_UNIT 0x606u
#define MSR_PKG_POWER_LIMIT 0x610u
#define MSR_PKG_ENERGY_STATUS 0x611u
#define MSR_PKG_POWER_INFO 0x614u
#define MSR_DRAM_ENERGY_STATUS 0x619u
#define MSR_IA32_PERF_STATUS 0x198u
#define MSR_AMD_RAPL_POWER_UNIT 0xC0010299u
#define MSR_AMD_CORE_ENERGY_STATUS 0xC001029Au
#define MSR_AMD_PKG_ENERGY_STATUS 0xC001029Bu

/* The register at address msr of M entry at now_ns: 0 with *val, or EIO. */
int seg_msr_read(struct seg *s, uint32_t entry, uint32_t msr, int64_t now_ns, uint64_t *val);
/* A write of val to msr through M entry by pid: 0 (stored, or ignored under the lock bit) or EIO
 * (not writable here) or the errno a powercap validator gave (the same as the file write). */
int seg_msr_write(struct seg *s, uint32_t entry, uint32_t msr, uint64_t val, int pid);
/* The CPU number (the device's minor) of a dev/cpu/<n>/msr entry, or -1 for another entry. */
int seg_msr_cpu(const struct seg *s, uint32_t entry);

/* PKG_POWER_LIMIT window field (7 bits, Y in 4:0, Z in 6:5) for a window of us microseconds at
 * time unit unit_us, and back: the kernel's encoding (intel_rapl_common.c rapl_compute_time_window_core). */
uint32_t msr_window_field(uint64_t us, uint64_t unit_us);
uint64_t msr_window_us(uint32_t field, uint64_t unit_us);

#endif
