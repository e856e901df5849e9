/* wrap_sys: what a process learns about the machine without opening a file: the number of
 * CPUs (sysconf(_SC_NPROCESSORS_*), get_nprocs*) is the node's, as on the real machine
 * (glibc reads the host's /sys/devices/system/cpu with internal calls no wrapper sees). */
#include "emu.h"
#include "real.h"

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
