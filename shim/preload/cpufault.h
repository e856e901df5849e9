/* cpufault: the node's answers to the CPUID instruction (cpufault.c). */
#ifndef HWEMU_SHIM_CPUFAULT_H
#define HWEMU_SHIM_CPUFAULT_H

/* Turns CPUID faulting on and answers it with the node's processor; nothing when the node has no
 * /proc/cpuinfo or the host offers no CPUID faulting. Called once, by the constructor, after
 * emu_init succeeded. */
void cpuid_init(void);

#endif
