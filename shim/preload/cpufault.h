/* cpufault: the node's answers to the CPUID instruction (cpufault.c). */
#ifndef HWEMU_SHIM_CPUFAULT_H
#define HWEMU_SHIM_CPUFAULT_H
#include <stdint.h>

/* Makes CPUID answer with the node's processor by the route HWEMU_CPUID chooses (auto: CPUID
 * faulting where the host offers it, else the program's CPUIDs rewritten into UD2 by
 * cpuidpatch.c); nothing when the node has no /proc/cpuinfo or HWEMU_CPUID is host. Called once,
 * by the constructor, after emu_init succeeded. */
void cpuid_init(void);
/* Learns the node's processor (its /proc/cpuinfo and MSRs) once, if not yet: called where a route
 * is armed (cpuid_init for faulting; for the patch route cpuidpatch.c calls it, handed over by
 * cpuid_init, before its first rewrite), never first from
 * the signal handler, which may run on a runtime's small alternate stack (Rust's threads have
 * 8 KiB or so; learning reads and resolves the node's files and needs more). */
void cpufault_learn(void);
/* The calling thread opened MSR device entry: RDTSC at the node's TSC clock from now on where the
 * node gives it one (tsctrap.c), with the shim's SIGSEGV handler in place to answer it (the
 * program's own kept aside and called for every fault the shim does not answer). */
void cpufault_msr_opened(uint32_t entry);

#endif
