/* wrap_sys: what a process learns about the machine without opening a file: the number of
 * CPUs (sysconf(_SC_NPROCESSORS_*), get_nprocs*) and the affinity mask (sched_getaffinity, which
 * nproc and most thread pools read) are the node's, as on the real machine (glibc reads the
 * host's /sys/devices/system/cpu with internal calls no wrapper sees). A process emulating a
 * node may run on any of its CPUs: the mask is every CPU of the node (its cpuN directories,
 * numbered 0 .. n-1). sched_setaffinity of the calling thread to a set of the node's CPUs succeeds
 * and is what the thread's sched_getaffinity shows afterwards; the thread keeps running where the
 * host runs it (a node has more CPUs than its host: turbostat "migrates" to each CPU whose MSRs it
 * reads, and an MSR device answers from any host CPU). A mask with a CPU the node lacks fails
 * EINVAL as the kernel's does; another process's affinity stays the host's. libnuma asks the
 * kernel itself, through syscall(SYS_sched_getaffinity, ...) (numa_sched_getaffinity, whose
 * result sizes every CPU mask it parses): syscall() answers that number as the kernel would,
 * with the cpumask size as the result, and passes every other number on. getloadavg(3), which
 * glibc answers from /proc/loadavg with an internal open (os.getloadavg, psutil.getloadavg, the
 * uptime of procps use it), gives the node's load averages when the node renders that file. */
#include "emu.h"
#include "emu_read.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define SEG_MAX_CPUS_MASK 8192 /* the most CPUs a pinned mask holds */

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

/* The calling thread's mask as sched_setaffinity set it (bytes of CPU bits), set: one was set. */
static __thread struct {
    bool set;
    unsigned char bits[(SEG_MAX_CPUS_MASK + 7) / 8];
} pinned;

EXPORT int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask)
{
    int n = emu_ncpus();
    if (n <= 0 || !own(pid))
        return REAL(sched_getaffinity)(pid, size, mask);
    if (size >= ((size_t)n + 63) / 64 * 8)
        memset(mask, 0, size); /* glibc clears the rest of the caller's buffer */
    long rc = node_mask(n, size, mask);
    if (rc > 0 && pinned.set && (pid == 0 || pid == gettid()))
        memcpy(mask, pinned.bits, (size_t)rc);
    return rc < 0 ? shim_fail((int)-rc) : 0;
}

EXPORT int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *mask)
{
    int n = emu_ncpus();
    if (n <= 0 || n > SEG_MAX_CPUS_MASK || !(pid == 0 || pid == gettid()))
        return REAL(sched_setaffinity)(pid, size, mask);
    const unsigned char *m = (const unsigned char *)mask;
    bool any = false;
    for (size_t i = 0; i < size * 8; i++)
        if (m[i / 8] >> (i % 8) & 1) {
            if ((int)i >= n)
                return shim_fail(EINVAL); /* the kernel: no CPU of the mask is allowed */
            any = true;
        }
    if (!any)
        return shim_fail(EINVAL);
    memset(pinned.bits, 0, sizeof pinned.bits);
    memcpy(pinned.bits, m, size < sizeof pinned.bits ? size : sizeof pinned.bits);
    pinned.set = true;
    return 0;
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

EXPORT int getloadavg(double *loadavg, int nelem)
{
    uint32_t entry;
    enum emu_root root;
    if (nelem < 0 || emu_path("/proc/loadavg", true, &entry, &root) != 0)
        return REAL(getloadavg)(loadavg, nelem);
    struct emu_show sh = {0};
    const char *bytes;
    ssize_t n = emu_read_at(&sh, entry, O_RDONLY, 0, 256, &bytes);
    char text[257];
    size_t len = n > 0 ? (size_t)n : 0;
    memcpy(text, n > 0 ? bytes : "", len);
    text[len] = 0;
    emu_show_release(&sh);
    /* "%lu.%02lu %lu.%02lu %lu.%02lu ..." (fs/proc/loadavg.c): up to three numbers, read
     * without the locale (whose decimal point may not be '.') */
    int got = 0;
    const char *p = text;
    while (got < nelem && got < 3) {
        while (*p == ' ')
            p++;
        if (*p < '0' || *p > '9')
            break;
        uint64_t mant = 0, div = 1; /* one division: the correctly rounded double, as strtod */
        while (*p >= '0' && *p <= '9' && mant < UINT64_MAX / 100)
            mant = mant * 10 + (uint64_t)(*p++ - '0');
        if (*p == '.')
            for (p++; *p >= '0' && *p <= '9'; p++)
                if (div < 1000000000) {
                    mant = mant * 10 + (uint64_t)(*p - '0');
                    div *= 10;
                }
        loadavg[got++] = (double)mant / (double)div;
    }
    return got > 0 ? got : shim_fail(EIO);
}
