/* wrap_sys: what a process learns about the machine without opening a file: the number of
 * CPUs (sysconf(_SC_NPROCESSORS_*), get_nprocs*) and the affinity mask (sched_getaffinity, which
 * nproc and most thread pools read) are the node's, as on the real machine (glibc reads the
 * host's /sys/devices/system/cpu with internal calls no wrapper sees). A process emulating a
 * node may run on any of its CPUs: the mask is every CPU of the node (its cpuN directories,
 * numbered 0 .. n-1). sched_setaffinity stays the host's (it pins real threads). libnuma asks the
 * kernel itself, through syscall(SYS_sched_getaffinity, ...) (numa_sched_getaffinity, whose
 * result sizes every CPU mask it parses): syscall() answers that number as the kernel would,
 * with the cpumask size as the result, and passes every other number on. */
#include "emu.h"
#include "real.h"

#include <errno.h>
#include <stdarg.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
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
/* Is pid (0, the process or one of its threads by id) this process's? */
static bool own(pid_t pid)
{
    return pid == 0 || pid == getpid() || pid == gettid();
}

/* The node's mask into the first bytes of mask (size bytes): the kernel's cpumask size, or
 * -EINVAL when size is below it. */
static long node_mask(int n, size_t size, void *mask)
{
    size_t need = ((size_t)n + 63) / 64 * 8;
    if (size < need)
        return -EINVAL;
    memset(mask, 0, need);
    for (int i = 0; i < n; i++)
        ((unsigned char *)mask)[i / 8] |= (unsigned char)(1u << (i % 8));
    return (long)need;
}

EXPORT int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask)
{
    int n = emu_ncpus();
    if (n <= 0 || !own(pid))
        return REAL(sched_getaffinity)(pid, size, mask);
    if (size >= ((size_t)n + 63) / 64 * 8)
        memset(mask, 0, size); /* glibc clears the rest of the caller's buffer */
    long rc = node_mask(n, size, mask);
    return rc < 0 ? shim_fail((int)-rc) : 0;
}

/* syscall(2): six arguments are taken whatever the number, as glibc's own syscall() does. */
EXPORT long syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    int n;
    if (nr == SYS_sched_getaffinity && (n = emu_ncpus()) > 0 && own((pid_t)a[0])) {
        if (a[1] % (long)sizeof(long))
            return shim_fail(EINVAL);
        long rc = node_mask(n, (size_t)a[1], (void *)a[2]);
        return rc < 0 ? shim_fail((int)-rc) : rc;
    }
    return REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
