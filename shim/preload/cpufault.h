/* cpufault: the node's answers to the CPUID instruction (cpufault.c). */
#ifndef HWEMU_SHIM_CPUFAULT_H
#define HWEMU_SHIM_CPUFAULT_H
#include <stdbool.h>

/* Turns CPUID faulting on and answers it with the node's processor; nothing when the node has no
 * /proc/cpuinfo or the host offers no CPUID faulting. Called once, by the constructor, after
 * emu_init succeeded. */
void cpuid_init(void);
/* The shim's SIGSEGV handler in place (the program's own kept aside and called for every fault
 * the shim does not answer): true when it is. For tsctrap.c's RDTSC faults too. */
bool cpufault_handler_ensure(void);

#endif
