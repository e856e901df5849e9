/* cpufault: the CPUID instruction answers with the node's processor, not the host's. CPUID is an
 * instruction, not a call; two triggers reach the one answer below (emulate):
 *   fault  the shim turns on CPUID faulting for the process (arch_prctl(ARCH_SET_CPUID, 0),
 *          Linux 4.12, on processors and hypervisors that offer it: the host's /proc/cpuinfo
 *          flag cpuid_fault), so every CPUID after the constructor raises SIGSEGV (si_code
 *          SI_KERNEL), which cpuid_fault below answers and steps over;
 *   patch  on a host without it, the CPUIDs of the program's code are rewritten into UD2
 *          (cpuidpatch.c), whose SIGILL cpuid_trap below answers and steps over (2 bytes too).
 * HWEMU_CPUID chooses (hwemu exec --cpuid): auto (unset: fault where the host offers it, else
 * patch), fault, patch, host (neither). glibc's own CPUID calls (its start-up feature probe,
 * the ifunc choices) keep the host's answers on both: they run before the constructor, and
 * libc.so.6 and ld.so are never patched. The leaves tools read to
 * decide what the machine is are the node's, from its /proc/cpuinfo block of CPU 0 and its MSRs
 * (read once, where a route is armed: at the start when faulting is on, before the first
 * rewrite on the patch route, so a process with no CPUID to patch pays nothing on that route;
 * never first in the handler, which may run on a runtime's small alternate stack):
 *   0           max leaf (the host's), vendor (vendor_id)
 *   1           EAX family/model/stepping (cpu family, model, stepping, encoded as the SDM's
 *               CPUID.01H:EAX); EBX, ECX, EDX the host's
 *   6           EAX bit 0 DTS (flag dtherm), 1 turbo (ida), 2 ARAT (arat), 4 PLN (pln), 6 PTM
 *               (pts), 7-11 HWP (hwp, hwp_notify, hwp_act_window, hwp_epp, hwp_pkg_req); ECX
 *               bit 0 APERF/MPERF (aperfmperf), bit 3 EPB (epb)
 *   0x15        the TSC/crystal ratio of the clock RDTSC really counts: EAX 1, EBX that rate in
 *               kHz, ECX 1000 Hz. In a process whose RDTSC is the node's (it opened an MSR
 *               device of an Intel node: tsctrap.c) the node's TSC clock, the base frequency;
 *               else the host's TSC rate (measured once against CLOCK_MONOTONIC_RAW over 20 ms,
 *               seg_msr_tsc_khz). Tools that scale MPERF to the TSC (turbostat's tsc_tweak =
 *               base / TSC) then compute the node's busy share
 *   0x16        EAX base MHz (MSR_PLATFORM_INFO's ratio), EBX max MHz (MSR_TURBO_RATIO_LIMIT's
 *               first byte), ECX bus 100 MHz; Intel nodes only
 *   0x80000002-4 the brand string (model name)
 *   0x80000007  EDX bit 8 invariant TSC (constant_tsc), bit 14 RAPL (AMD: the flag rapl, or the
 *               node's RAPL_PWR_UNIT register 0xC0010299 answers)
 * Every other leaf and field is the host's (executed with faulting off for that instruction):
 * the topology leaves (4, 0xB, 0x1F, 0x8000001E), the cache leaves and the feature bits of
 * leaves 1 and 7 (docs/interfaces.md "MSR devices"). A program's own SIGSEGV and SIGILL
 * dispositions (sigaction, signal: wrapped here) are kept aside and called for every fault or
 * trap that is not a CPUID, the shim's handler staying in place (a Go runtime linked with libc
 * installs its own, and its packages run CPUID after that); a program that sets one with the raw
 * system call replaces the shim's, and its CPUIDs then fault or trap as it does not expect. Only
 * the preload route: the seccomp route's programs (Go, static) see the host's CPUID. */
#include "cpufault.h"

#include "cpuidpatch.h"

#include "emu.h"
#include "real.h"
#include "emu_read.h"
#include "seg_msr.h"
#include "tsctrap.h"

#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define ARCH_SET_CPUID 0x1012
#define EXPORT __attribute__((visibility("default")))

static struct {
    bool intel;
    uint32_t vendor[3];         /* EBX, EDX, ECX of leaf 0 */
    uint32_t leaf1_eax;
    uint32_t leaf6_eax, leaf6_ecx;
    uint32_t ext7_edx;
    uint32_t brand[12];
    uint32_t base_mhz, max_mhz;
} node;

static long raw_syscall2(long nr, long a, long b)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return ret;
}

static bool faulting; /* CPUID faulting is on (the fault route) */

/* The host's answer: faulting off for the one instruction (the patch route's handler is not in
 * rewritten code: its CPUID is the instruction itself). */
static void host_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    if (faulting)
        raw_syscall2(SYS_arch_prctl, ARCH_SET_CPUID, 1);
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
    if (faulting)
        raw_syscall2(SYS_arch_prctl, ARCH_SET_CPUID, 0);
}

static void answer(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    host_cpuid(leaf, sub, r);
    switch (leaf) {
    case 0:
        r[1] = node.vendor[0], r[3] = node.vendor[1], r[2] = node.vendor[2];
        break;
    case 1:
        r[0] = node.leaf1_eax;
        break;
    case 6:
        r[0] = node.leaf6_eax, r[1] = 0, r[2] = node.leaf6_ecx, r[3] = 0;
        break;
    case 0x15:
        if (!node.intel)
            break;
        r[0] = 1, r[1] = (uint32_t)(tsc_node_khz() ? tsc_node_khz() : seg_msr_tsc_khz()), r[2] = 1000, r[3] = 0;
        break;
    case 0x16:
        if (node.intel)
            r[0] = node.base_mhz, r[1] = node.max_mhz, r[2] = 100, r[3] = 0;
        break;
    case 0x80000002:
    case 0x80000003:
    case 0x80000004:
        memcpy(r, &node.brand[(leaf - 0x80000002) * 4], 16);
        break;
    case 0x80000007:
        r[3] = node.ext7_edx;
        break;
    default:
        break;
    }
}

/* What the program believes SIGSEGV's and SIGILL's dispositions are: the one before the shim's,
 * then whatever it set through sigaction or signal (which keep the shim's handler in place and
 * answer with this one, so a runtime that forwards faults it does not own to the "previous"
 * handler, as Go's does, never forwards them back here). */
static bool learn(void);
static _Atomic int learnt; /* 0 not yet, 1 learning, 2 the node's facts, 3 none: the host's answers */
struct disposition {
    struct sigaction before;
    bool armed; /* the shim's handler is the signal's */
};
static struct disposition segv, ill;

static struct disposition *disposition_of(int sig)
{
    return sig == SIGSEGV && segv.armed ? &segv : sig == SIGILL && ill.armed ? &ill : NULL;
}

/* The one answer of both triggers: the CPUID at the context's RIP (2 bytes: 0F A2, or the UD2
 * that replaced it) answered and stepped over. */
static void emulate(greg_t *g)
{
    cpufault_learn(); /* done already when the route was armed: a fallback only */
    uint32_t r[4];
    if (atomic_load(&learnt) == 2)
        answer((uint32_t)g[REG_RAX], (uint32_t)g[REG_RCX], r);
    else
        host_cpuid((uint32_t)g[REG_RAX], (uint32_t)g[REG_RCX], r);
    g[REG_RAX] = r[0], g[REG_RBX] = r[1], g[REG_RCX] = r[2], g[REG_RDX] = r[3];
    g[REG_RIP] += 2;
}

/* A fault or trap that is not the shim's: the program's disposition, else the default (the
 * instruction repeats on return and ends the process as it would have). */
static void chain(struct disposition *d, int sig, siginfo_t *si, void *ctx)
{
    if ((d->before.sa_flags & SA_SIGINFO) && d->before.sa_sigaction) {
        d->before.sa_sigaction(sig, si, ctx);
        return;
    }
    if (d->before.sa_handler != SIG_DFL && d->before.sa_handler != SIG_IGN) {
        d->before.sa_handler(sig);
        return;
    }
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    REAL(sigaction)(sig, &dfl, NULL);
    d->armed = false;
}

static void cpuid_fault(int sig, siginfo_t *si, void *ctx)
{
    ucontext_t *uc = ctx;
    if (tsc_fault(si, uc))
        return; /* an RDTSC of a process that reads the node's MSRs */
    greg_t *g = uc->uc_mcontext.gregs;
    const unsigned char *ip = (const unsigned char *)g[REG_RIP];
    /* a #GP (SI_KERNEL) at a CPUID: never a fault of the instruction fetch itself */
    if (si->si_code == SI_KERNEL && ip[0] == 0x0F && ip[1] == 0xA2) {
        emulate(g);
        return;
    }
    chain(&segv, sig, si, ctx);
}

static void cpuid_trap(int sig, siginfo_t *si, void *ctx)
{
    ucontext_t *uc = ctx;
    greg_t *g = uc->uc_mcontext.gregs;
    /* a #UD at a UD2 that was a CPUID (the table says so before its bytes are read) */
    if (si->si_code == ILL_ILLOPN && cpuidpatch_is_site((uintptr_t)g[REG_RIP])) {
        emulate(g);
        return;
    }
    chain(&ill, sig, si, ctx);
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    struct disposition *d = disposition_of(sig);
    if (!d)
        return REAL(sigaction)(sig, act, old);
    if (old)
        *old = d->before;
    if (act)
        d->before = *act;
    return 0;
}

EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
    struct disposition *d = disposition_of(sig);
    if (!d)
        return REAL(signal)(sig, handler);
    if (handler == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    __sighandler_t was = d->before.sa_handler; /* sa_sigaction shares its storage */
    d->before = (struct sigaction){.sa_handler = handler, .sa_flags = SA_RESTART};
    return was;
}

/* The value of "key\t: value" in text (up to the line's end) into out. */
static bool field(const char *text, size_t len, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && p < text + len;) {
        const char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t ll = (size_t)((nl ? nl : text + len) - p);
        const char *c = ll > kl && !memcmp(p, key, kl) ? p + kl : NULL;
        while (c && c < p + ll && (*c == '\t' || *c == ' '))
            c++;
        if (c && c < p + ll && *c == ':') {
            {
                c += c + 1 < p + ll && c[1] == ' ' ? 2 : 1;
                size_t n = (size_t)(p + ll - c) < cap - 1 ? (size_t)(p + ll - c) : cap - 1;
                memcpy(out, c, n);
                out[n] = 0;
                return true;
            }
        }
        p = nl ? nl + 1 : NULL;
    }
    return false;
}

static bool has_flag(const char *flags, const char *f)
{
    size_t n = strlen(f);
    for (const char *p = flags; (p = strstr(p, f)); p += n)
        if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
            return true;
    return false;
}

/* Register msr of CPU 0 of the node, 0 when it has none. */
static uint64_t msr0(uint32_t msr)
{
    uint32_t e;
    enum emu_root root;
    unsigned char reg[8];
    if (emu_path("/dev/cpu/0/msr", true, &e, &root) || emu_msr_read(e, O_RDONLY, msr, 8, reg) != 8)
        return 0;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | reg[i];
    return v;
}

/* The node's facts from its /proc/cpuinfo (CPU 0's block) and MSRs (cpufault_learn): true when
 * they were found. No allocation (the flags line in a static buffer): it may still run in the
 * signal handler as a fallback. */
static bool learn(void)
{
    uint32_t e;
    enum emu_root root;
    if (emu_path("/proc/cpuinfo", true, &e, &root))
        return false;
    struct emu_show sh = {0};
    const char *text;
    ssize_t n = emu_read_at(&sh, e, O_RDONLY, 0, 1 << 20, &text);
    char vendor[16] = "", fam[16] = "", model[16] = "", step[16] = "", brand[64] = "";
    static char flags[8192];
    bool ok = n > 0 && field(text, (size_t)n, "vendor_id", vendor, sizeof vendor) &&
              field(text, (size_t)n, "cpu family", fam, sizeof fam) && field(text, (size_t)n, "model", model, sizeof model) &&
              field(text, (size_t)n, "model name", brand, sizeof brand) && field(text, (size_t)n, "flags", flags, sizeof flags);
    if (ok && !field(text, (size_t)n, "stepping", step, sizeof step))
        strcpy(step, "0");
    emu_show_release(&sh);
    if (!ok || strlen(vendor) != 12)
        return false;
    memcpy(node.vendor, vendor, 12);
    node.intel = !strcmp(vendor, "GenuineIntel");
    uint32_t f = (uint32_t)strtoul(fam, NULL, 10), m = (uint32_t)strtoul(model, NULL, 10), s = (uint32_t)strtoul(step, NULL, 10);
    node.leaf1_eax = (s & 0xF) | (m & 0xF) << 4 | (f < 0xF ? f : 0xF) << 8 | (m >> 4 & 0xF) << 16 |
                     (f > 0xF ? (f - 0xF) & 0xFF : 0) << 20;
    static const char *const eax6[] = {"dtherm", "ida", "arat", "", "pln", "", "pts", "hwp", "hwp_notify",
                                       "hwp_act_window", "hwp_epp", "hwp_pkg_req"};
    for (int i = 0; i < (int)(sizeof eax6 / sizeof eax6[0]); i++)
        if (*eax6[i] && has_flag(flags, eax6[i]))
            node.leaf6_eax |= 1u << i;
    node.leaf6_ecx = (has_flag(flags, "aperfmperf") ? 1u : 0) | (has_flag(flags, "epb") ? 8u : 0);
    node.ext7_edx = has_flag(flags, "constant_tsc") ? 1u << 8 : 0;
    memcpy(node.brand, brand, strnlen(brand, sizeof node.brand));
    if (!node.intel && (has_flag(flags, "rapl") || msr0(0xC0010299)))
        node.ext7_edx |= 1u << 14; /* the node's AMD RAPL registers answer */
    node.base_mhz = (uint32_t)(msr0(0xCE) >> 8 & 0xFF) * 100;
    node.max_mhz = (uint32_t)(msr0(0x1AD) & 0xFF) * 100;
    return true;
}

void cpufault_learn(void)
{
    int st = 0;
    if (atomic_compare_exchange_strong(&learnt, &st, 1))
        atomic_store(&learnt, learn() ? 2 : 3);
    else
        while (atomic_load(&learnt) == 1)
            ;
}

/* The shim's handler in place for sig (SIGSEGV: cpuid_fault, SIGILL: cpuid_trap). */
static bool handler_ensure(int sig)
{
    struct disposition *d = sig == SIGSEGV ? &segv : &ill;
    if (d->armed)
        return true;
    /* SA_ONSTACK: on the alternate stack a runtime sets up (Go's goroutine stacks are small) */
    struct sigaction sa = {.sa_sigaction = sig == SIGSEGV ? cpuid_fault : cpuid_trap,
                           .sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    if (REAL(sigaction)(sig, &sa, &d->before))
        return false;
    d->armed = true;
    return true;
}

void cpufault_msr_opened(uint32_t entry)
{
    uint64_t khz = tsc_clock_of(entry);
    /* a thread that blocks SIGSEGV (glibc's SIGEV_THREAD timer threads block every signal:
     * turbostat reads the MSRs from one) keeps the host's RDTSC: its fault could not be answered
     * and would end the process */
    sigset_t mask;
    if (!khz || pthread_sigmask(SIG_BLOCK, NULL, &mask) || sigismember(&mask, SIGSEGV))
        return;
    if (handler_ensure(SIGSEGV))
        tsc_arm(entry, khz);
}

void cpuid_init(void)
{
    uint32_t e;
    enum emu_root root;
    if (emu_path("/proc/cpuinfo", true, &e, &root))
        return; /* a node without cpuinfo: the host's CPUID */
    const char *mode = getenv("HWEMU_CPUID");
    if (!mode || !*mode)
        mode = "auto";
    bool fault = !strcmp(mode, "auto") || !strcmp(mode, "fault"), patch = !strcmp(mode, "auto") || !strcmp(mode, "patch");
    if (!fault && !patch) {
        if (strcmp(mode, "host"))
            fprintf(stderr, "hwemu shim: HWEMU_CPUID=%.40s is none of auto, fault, patch, host: CPUID stays the "
                    "host's (hwemu exec --cpuid sets it)\n", mode);
        return;
    }
    if (fault && handler_ensure(SIGSEGV)) {
        if (raw_syscall2(SYS_arch_prctl, ARCH_SET_CPUID, 0) == 0) {
            faulting = true;
            cpufault_learn(); /* now, not in the handler (cpufault.h) */
            return;
        }
        REAL(sigaction)(SIGSEGV, &segv.before, NULL); /* no CPUID faulting here */
        segv.armed = false;
        if (!patch)
            fprintf(stderr, "hwemu shim: HWEMU_CPUID=fault: this host offers no CPUID faulting (no cpuid_fault in "
                    "its /proc/cpuinfo), so CPUID stays the host's; hwemu exec --cpuid patch rewrites the "
                    "instructions instead\n");
    }
    if (patch && handler_ensure(SIGILL))
        cpuidpatch_loaded(cpufault_learn);
}
