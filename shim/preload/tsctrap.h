/* tsctrap: RDTSC at the node's TSC clock in a process that reads the node's MSRs (tsctrap.c). */
#ifndef HWEMU_SHIM_TSCTRAP_H
#define HWEMU_SHIM_TSCTRAP_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

/* The clock in kHz of MSR device entry's time stamp counter when the calling thread's RDTSC must
 * be made to count at it (the node gives one, Intel: the base frequency, and the thread does not
 * fault RDTSC yet), else 0. */
uint64_t tsc_clock_of(uint32_t entry);
/* RDTSC and RDTSCP fault from now on in the calling thread and the threads it creates; the
 * SIGSEGV handler (in place: the caller's job) answers them with tsc_fault, from entry's
 * register 0x10 counting at khz. */
void tsc_arm(uint32_t entry, uint64_t khz);
/* The SIGSEGV handler's first question: answers a faulting RDTSC/RDTSCP (true) or leaves the
 * fault to the others (false). Async-signal-safe. */
bool tsc_fault(const siginfo_t *si, ucontext_t *uc);
/* The clock in kHz RDTSC counts at in this process when it is the node's, else 0. */
uint64_t tsc_node_khz(void);
/* Around a call that replaces the process image (exec) or starts a program (posix_spawn,
 * system, popen): the new image starts with RDTSC the host's (the kernel keeps the fault
 * across execve, and the dynamic loader reads the TSC before any handler exists). Also around
 * timer_create of a SIGEV_THREAD timer (wrap_time.c): glibc's helper thread, started inside it,
 * blocks every signal, so its RDTSC must not fault. end puts the
 * calling thread's state back when the call returns. */
bool tsc_exec_begin(void);
void tsc_exec_end(bool was);

#endif
