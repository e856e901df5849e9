/* tsctrap: the time stamp counter a process reads with RDTSC counts at the node's TSC clock
 * when the process reads the node's MSRs. On an Intel node the TSC, MPERF and the C-state
 * residency registers count at the base frequency (engine/render/render_msr.c), as on the
 * processor, while the instruction RDTSC counts at the host's rate; a tool that divides a
 * register by the instruction (turbostat's Busy% = ΔMPERF/ΔTSC, with Bzy_MHz = base x
 * ΔAPERF/ΔMPERF) needs both on one clock. So the first open of an MSR device of such a node makes
 * the opening thread's RDTSC and RDTSCP fault (prctl(PR_SET_TSC, PR_TSC_SIGSEGV), Linux 2.6.26;
 * inherited by the threads and children it creates; cpufault.c arms it with its SIGSEGV handler
 * in place), and that handler answers them with the device's register 0x10, the node's elapsed time at its TSC
 * clock, and steps over the instruction. Processes that never open an MSR device keep the
 * host's instruction at full speed (a fault costs microseconds, and the vDSO's clock_gettime
 * reads the TSC).
 *   The vDSO's own RDTSC/RDTSCP (clock_gettime, gettimeofday: their time is computed from the
 *   host's TSC with the kernel's scale) get the host's value: the handler runs with the fault
 *   off (as cpufault.c executes the host's CPUID), so it also reads the clock itself.
 *   RDTSCP's ECX (TSC_AUX) is the host's (the CPU number and NUMA node getcpu gives).
 *   Exec: the kernel keeps the fault across execve and the dynamic loader executes RDTSC before
 *   any handler exists, so the exec family, posix_spawn, system and popen (wrap_exec.c) turn it
 *   off for the call; the new program's shim turns it on again when it opens an MSR device.
 *   A thread that blocks SIGSEGV keeps the host's RDTSC (a blocked synchronous fault ends the
 *   process): the open does not arm it (cpufault.c), and timer_create of a SIGEV_THREAD timer
 *   runs with the fault off (wrap_time.c), since glibc's timer threads, which block every
 *   signal, inherit it (turbostat opens MSR devices from one).
 *   Not covered: threads that existed before the open keep the host's RDTSC; a thread the
 *   program starts after it and that then blocks SIGSEGV dies at its first RDTSC; a program that
 *   replaces SIGSEGV's handler with the raw system call, or execs with the raw system call,
 *   faults as it does not expect (the same limits as cpufault.c's). */
#include "tsctrap.h"

#include "emu.h"
#include "seg_msr.h"

#include <elf.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <x86intrin.h>

#define NOT_ARMED UINT32_MAX

static _Atomic uint32_t clock_entry = NOT_ARMED; /* the MSR device whose register 0x10 RDTSC reads */
static _Atomic uint64_t clock_khz;
static uintptr_t vdso_lo, vdso_hi;
static __thread bool thread_armed;

static long raw_syscall2(long nr, long a, long b)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return ret;
}

/* The vDSO's extent (its PT_LOAD segments from AT_SYSINFO_EHDR). */
static void find_vdso(void)
{
    uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (!base)
        return;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD) {
            lo = ph[i].p_vaddr < lo ? ph[i].p_vaddr : lo;
            hi = ph[i].p_vaddr + ph[i].p_memsz > hi ? ph[i].p_vaddr + ph[i].p_memsz : hi;
        }
    if (hi > lo) {
        /* a prelinked vDSO's addresses start at 0: relative to base */
        vdso_lo = base + (lo < base ? lo : lo - base);
        vdso_hi = base + (hi < base ? hi : hi - base);
    }
}

uint64_t tsc_clock_of(uint32_t entry)
{
    return thread_armed ? 0 : seg_msr_tsc_clock_khz(emu_seg(), entry);
}

void tsc_arm(uint32_t entry, uint64_t khz)
{
    uint32_t none = NOT_ARMED;
    if (atomic_load(&clock_entry) == NOT_ARMED) {
        find_vdso();
        atomic_store(&clock_khz, khz);
    }
    atomic_compare_exchange_strong(&clock_entry, &none, entry);
    if (raw_syscall2(SYS_prctl, PR_SET_TSC, PR_TSC_SIGSEGV) == 0)
        thread_armed = true;
}

uint64_t tsc_node_khz(void)
{
    return atomic_load(&clock_entry) != NOT_ARMED ? atomic_load(&clock_khz) : 0;
}

bool tsc_fault(const siginfo_t *si, ucontext_t *uc)
{
    greg_t *g = uc->uc_mcontext.gregs;
    const unsigned char *ip = (const unsigned char *)g[REG_RIP];
    if (si->si_code != SI_KERNEL || ip[0] != 0x0F)
        return false;
    bool aux = ip[1] == 0x01 && ip[2] == 0xF9;
    if (ip[1] != 0x31 && !aux)
        return false;
    /* the fault off while the answer is made: reading the node's register reads the clock
     * (the vDSO's RDTSCP), and a fault inside this handler would end the process */
    raw_syscall2(SYS_prctl, PR_SET_TSC, PR_TSC_ENABLE);
    uint32_t e = atomic_load(&clock_entry), tsc_aux = 0;
    uint64_t v = aux ? __rdtscp(&tsc_aux) : __rdtsc();
    unsigned char reg[8];
    uintptr_t at = (uintptr_t)ip;
    if (e != NOT_ARMED && !(at >= vdso_lo && at < vdso_hi) && emu_msr_read(e, O_RDONLY, MSR_IA32_TSC, 8, reg) == 8) {
        v = 0;
        for (int i = 7; i >= 0; i--)
            v = v << 8 | reg[i];
    }
    raw_syscall2(SYS_prctl, PR_SET_TSC, PR_TSC_SIGSEGV);
    g[REG_RAX] = (greg_t)(v & 0xFFFFFFFFu);
    g[REG_RDX] = (greg_t)(v >> 32);
    if (aux)
        g[REG_RCX] = (greg_t)tsc_aux;
    g[REG_RIP] += aux ? 3 : 2;
    return true;
}

bool tsc_exec_begin(void)
{
    if (atomic_load(&clock_entry) == NOT_ARMED)
        return false;
    int mode = 0;
    if (raw_syscall2(SYS_prctl, PR_GET_TSC, (long)&mode) != 0 || mode != PR_TSC_SIGSEGV)
        return false;
    return raw_syscall2(SYS_prctl, PR_SET_TSC, PR_TSC_ENABLE) == 0;
}

void tsc_exec_end(bool was)
{
    if (was)
        raw_syscall2(SYS_prctl, PR_SET_TSC, PR_TSC_SIGSEGV);
}
