/* cpu_vulns: the files of /sys/devices/system/cpu/vulnerabilities and the bug bit each reports,
 * for the kernel the profiles assume (Linux 6.12.117: drivers/base/cpu.c
 * cpu_root_vulnerabilities_attrs, in that order; the bug names are the ones /proc/cpuinfo's
 * `bugs` line prints, arch/x86/include/asm/cpufeatures.h X86_BUG_*).
 * The kernel prints "Not affected\n" for a file whose bug the CPU lacks
 * (arch/x86/kernel/cpu/bugs.c cpu_show_common); otherwise its mitigation state, which depends on
 * microcode, firmware and the command line and so is a profile fact (cpu.vulnerabilities.<file>).
 * Owns only this table and the lookup of a bug in a `bugs` line; never renders or validates. */
#ifndef HWEMU_CPU_VULNS_H
#define HWEMU_CPU_VULNS_H
#include <stdbool.h>

struct cpu_vuln {
    const char *file;   /* the file's name, also its profile key */
    const char *bug;    /* the `bugs` word that makes the CPU affected */
    const char *alt;    /* a second word that does too (mmio_unknown), or NULL */
};

extern const struct cpu_vuln cpu_vulns[];
extern const int cpu_vulns_n;

/* Whether the `bugs` line (words separated by blanks) names v's bug. */
bool cpu_vuln_affected(const struct cpu_vuln *v, const char *bugs);

#endif
