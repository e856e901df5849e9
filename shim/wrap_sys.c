/* wrap_sys: what a process learns about the machine without opening a file: the number of
 * CPUs (sysconf(_SC_NPROCESSORS_*), get_nprocs*) and the affinity mask (sched_getaffinity, which
 * nproc and most thread pools read) are the node's, as on the real machine (glibc reads the
 * host's /sys/devices/system/cpu with internal calls no wrapper sees). A process emulating a
 * node may run on any of its CPUs: the mask is every CPU of the node (its cpuN directories,
 * numbered 0 .. n-1). sched_setaffinity stays the host's (it pins real threads). */
#include "emu.h"
#include "real.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT long sysconf(int name)
{
    if ((name == _SC_NPROCESSORS_CONF || name == _SC_NPROCESSORS_ONLN) && emu_ncpus() > 0)
        return emu_ncpus();
    return REAL(sysconf)(name);
}

EXPORT int get_nprocs(void)
{
    return emu_ncpus() > 0 ? emu_ncpus() : REAL(get_nprocs)();
}

EXPORT int get_nprocs_conf(void)
{
    return emu_ncpus() > 0 ? emu_ncpus() : REAL(get_nprocs_conf)();
}

/* The kernel's answer for a node of n CPUs: the mask of every CPU, in a buffer of at least the
 * kernel's cpumask size (nr_cpu_ids bits rounded up to a long), else EINVAL. glibc's wrapper
 * returns 0 and clears the rest of the caller's buffer. */
EXPORT int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask)
{
    int n = emu_ncpus();
    if (n <= 0 || (pid != 0 && pid != getpid()))
        return REAL(sched_getaffinity)(pid, size, mask);
    size_t need = ((size_t)n + 63) / 64 * 8;
    if (size < need) {
        errno = EINVAL;
        return -1;
    }
    memset(mask, 0, size);
    for (int i = 0; i < n; i++)
        ((unsigned char *)mask)[i / 8] |= (unsigned char)(1u << (i % 8));
    return 0;
}
