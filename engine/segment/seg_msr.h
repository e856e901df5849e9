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

#define MSR_IA32_TSC 0x10u
#define MSR_SMI_COUNT 0x34u
#define MSR_IA32_UCODE_REV 0x8Bu
#define MSR_PLATFORM_INFO 0xCEu
#define MSR_PKG_CST_CONFIG_CONTROL 0xE2u
#define MSR_IA32_MPERF 0xE7u
#define MSR_IA32_APERF 0xE8u
#define MSR_IA32_PERF_CTL 0x199u
#define MSR_IA32_THERM_INTERRUPT 0x19Bu
#define MSR_IA32_THERM_STATUS 0x19Cu
#define MSR_IA32_MISC_ENABLE 0x1A0u
#define MSR_TEMPERATURE_TARGET 0x1A2u
#define MSR_TURBO_RATIO_LIMIT 0x1ADu
#define MSR_MISC_FEATURE_CONTROL 0x1A4u
#define MSR_MISC_PWR_MGMT 0x1AAu
#define MSR_TURBO_RATIO_LIMIT1 0x1AEu
#define MSR_POWER_CTL 0x1FCu
#define MSR_VR_CURRENT_CONFIG 0x601u
#define MSR_CONFIG_TDP_NOMINAL 0x648u
#define MSR_CONFIG_TDP_LEVEL_1 0x649u
#define MSR_CONFIG_TDP_LEVEL_2 0x64Au
#define MSR_CONFIG_TDP_CONTROL 0x64Bu
#define MSR_TURBO_ACTIVATION_RATIO 0x64Cu
#define MSR_PM_ENABLE 0x770u
#define MSR_HWP_CAPABILITIES 0x771u
#define MSR_HWP_REQUEST_PKG 0x772u
#define MSR_HWP_INTERRUPT 0x773u
#define MSR_HWP_REQUEST 0x774u
#define MSR_HWP_STATUS 0x777u
#define MSR_IA32_ENERGY_PERF_BIAS 0x1B0u
#define MSR_IA32_PACKAGE_THERM_STATUS 0x1B1u
#define MSR_IA32_PACKAGE_THERM_INTERRUPT 0x1B2u
#define MSR_PKG_C3_RESIDENCY 0x3F8u
#define MSR_PKG_C6_RESIDENCY 0x3F9u
#define MSR_PKG_C7_RESIDENCY 0x3FAu
#define MSR_CORE_C3_RESIDENCY 0x3FCu
#define MSR_CORE_C6_RESIDENCY 0x3FDu
#define MSR_CORE_C7_RESIDENCY 0x3FEu
#define MSR_PKG_C2_RESIDENCY 0x60Du
#define MSR_PKGC3_IRTL 0x60Au
#define MSR_PKGC6_IRTL 0x60Bu
#define MSR_PKGC7_IRTL 0x60Cu
#define MSR_PKG_C8_RESIDENCY 0x630u
#define MSR_PKG_C9_RESIDENCY 0x631u
#define MSR_PKG_C10_RESIDENCY 0x632u
#define MSR_PKG_PERF_STATUS 0x613u
#define MSR_DRAM_POWER_LIMIT 0x618u
#define MSR_DRAM_PERF_STATUS 0x61Bu
#define MSR_DRAM_POWER_INFO 0x61Cu
#define MSR_PP0_POWER_LIMIT 0x638u
#define MSR_PP0_ENERGY_STATUS 0x639u
#define MSR_PP0_POLICY 0x63Au
#define MSR_PP0_PERF_STATUS 0x63Bu
#define MSR_PP1_POWER_LIMIT 0x640u
#define MSR_PP1_ENERGY_STATUS 0x641u
#define MSR_PP1_POLICY 0x642u
#define MSR_AMD_MPERF_RO 0xC00000E7u
#define MSR_AMD_APERF_RO 0xC00000E8u
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
 * (not writable here) or the errno a powercap validator gave (the same as the file write). A
 * THERM register takes any value: its log bit written 0 clears the log (stored through its log
 * file, an event like a file write), the other bits are ignored. */
int seg_msr_write(struct seg *s, uint32_t entry, uint32_t msr, uint64_t val, int pid);
/* The rate of the reader's RDTSC in kHz, measured once per process against CLOCK_MONOTONIC_RAW
 * over 20 ms (each end the tightest of 16 RDTSC-clock-RDTSC reads, so a preemption does not
 * skew it): the clock of the registers that count at the TSC's rate where the node gives them
 * none (AMD), so MPERF/TSC and residency/TSC are the node's shares. */
uint64_t seg_msr_tsc_khz(void);
/* The clock of M entry's time stamp counter (register 0x10) in kHz when the node gives it one
 * (Intel: the base frequency), 0 when it counts at the reader's RDTSC rate or has none. */
uint64_t seg_msr_tsc_clock_khz(const struct seg *s, uint32_t entry);
/* The CPU number (the device's minor) of a dev/cpu/<n>/msr entry, or -1 for another entry. */
int seg_msr_cpu(const struct seg *s, uint32_t entry);

/* PKG_POWER_LIMIT window field (7 bits, Y in 4:0, Z in 6:5) for a window of us microseconds at
 * time unit unit_us, and back: the kernel's encoding (intel_rapl_common.c rapl_compute_time_window_core). */
uint32_t msr_window_field(uint64_t us, uint64_t unit_us);
uint64_t msr_window_us(uint32_t field, uint64_t unit_us);

#endif
