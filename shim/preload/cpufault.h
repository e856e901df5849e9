/* cpufault: the node's answers to the CPUID instruction (cpufault.c). */
#ifndef HWEMU_SHIM_CPUFAULT_H
#define HWEMU_SHIM_CPUFAULT_H
#include <stdint.h>

/* Turns CPUID faulting on and answers it with the node's processor; nothing when the node has no
 * /proc/cpuinfo or the host offers no CPUID faulting. Called once, by the constructor, after
 * emu_init succeeded. */
void cpuid_init(void);
/* The calling thread opened MSR device entry: RDTSC at the node's TSC clock from now on where the
 * node gives it one (tsctrap.c), with the shim's SIGSEGV handler in place to answer it (the
 * program's own kept aside and called for every fault the shim does not answer). */
void cpufault_msr_opened(uint32_t entry);

#endif
