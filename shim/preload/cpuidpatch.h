/* cpuidpatch: the CPUID instructions of a program's code made to trap, for hosts without CPUID
 * faulting (cpuidpatch.c). */
#ifndef HWEMU_SHIM_CPUIDPATCH_H
#define HWEMU_SHIM_CPUIDPATCH_H
#include <stdbool.h>
#include <stdint.h>

/* Rewrites every CPUID (0F A2) of the objects loaded now into UD2 (0F 0B), the caller's SIGILL
 * handler in place to answer them, and asks the audit module (libhwemu-audit.so, when loaded)
 * to hand over every object loaded later, before its constructors run. Skips ld.so, libc.so.6,
 * the vDSO, the shim and the audit module. before_first_rewrite runs once, before the first
 * UD2 is written (now or at a later load): the caller prepares its answers there, outside the
 * signal handler. Called once, by cpufault.c's cpuid_init. */
void cpuidpatch_loaded(void (*before_first_rewrite)(void));
/* ip is a CPUID this file rewrote (async-signal-safe, lock-free). */
bool cpuidpatch_is_site(uintptr_t ip);

#endif
