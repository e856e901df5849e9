/* wrap_sys: what a process learns about the machine without opening a file: the number of
 * CPUs (sysconf(_SC_NPROCESSORS_*), get_nprocs*) and the affinity mask (sched_getaffinity, which
 * nproc and most thread pools read) are the node's, as on the real machine (glibc reads the
 * host's /sys/devices/system/cpu with internal calls no wrapper sees). A process emulating a
 * node may run on any of its CPUs: the mask is every CPU of the node (its cpuN directories,
 * numbered 0 .. n-1). sched_setaffinity stays the host's (it pins real threads). getloadavg
 * (what os.getloadavg and psutil call) reads the node's /proc/loadavg: glibc opens the file with an
 * internal call, so without this it showed the host's load. */
#include "emu.h"
#include "real.h"
#include "segment.h"

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

/* glibc's getloadavg (stdlib/getloadavg.c): up to three of the first fields of /proc/loadavg,
 * parsed in the C locale; -1 with errno EINVAL for nelem < 0. */
EXPORT int getloadavg(double loadavg[], int nelem)
{
    uint32_t e;
    enum emu_root root;
    struct seg *s = emu_seg();
    if (!s || emu_path("/proc/loadavg", true, &e, &root) != 0)
        return REAL(getloadavg)(loadavg, nelem);
    if (nelem < 0) {
        errno = EINVAL;
        return -1;
    }
    char tmp[SEG_TEXT_MAX];
    size_t len = 0;
    const char *t = seg_read(s, e, seg_now_ns(), tmp, &len);
    if (!t) {
        errno = EIO;
        return -1;
    }
    int i = 0;
    size_t p = 0;
    for (; i < nelem && i < 3; i++) {
        while (p < len && t[p] == ' ')
            p++;
        if (p >= len || t[p] < '0' || t[p] > '9')
            break;
        double v = 0, scale = 1;
        while (p < len && t[p] >= '0' && t[p] <= '9')
            v = v * 10 + (t[p++] - '0');
        if (p < len && t[p] == '.')
            for (p++; p < len && t[p] >= '0' && t[p] <= '9'; p++)
                v += (t[p] - '0') * (scale /= 10);
        loadavg[i] = v;
    }
    return i;
}
