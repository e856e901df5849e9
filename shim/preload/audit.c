/* audit: libhwemu-audit.so, the LD_AUDIT module `hwemu exec` sets beside the shim. A program
 * LINKED against a GPU vendor's management library (DT_NEEDED libnvidia-ml.so.1, libamd_smi.so.26,
 * librocm_smi64.so.7, ...) has it loaded by ld.so's own search, which no LD_PRELOAD wrapper sees
 * and which finds the host's copy through the program's DT_RPATH, or through ld.so.cache where
 * LD_LIBRARY_PATH has none (a node without such GPUs, or an environment that dropped
 * LD_LIBRARY_PATH). ld.so asks this module about every name it looks up (la_objsearch, glibc's
 * rtld-audit interface, `man 7 rtld-audit`), for the program's libraries and for dlopen:
 *   - a management library the node has (emu_lib_node_var: NVML on an NVIDIA node, AMD SMI and
 *     ROCm SMI 5-7 on an AMD GPU node) is the node's, the path `hwemu exec` put in HWEMU_NVML,
 *     HWEMU_AMDSMI or HWEMU_ROCMSMI, whatever the program's RPATH or the host's cache say;
 *   - a driver library the node lacks (emu_lib_hidden_on, the shim's rule) is not found in any
 *     directory the search tries (a path is the routes' to refuse: wrap_dl.c, the supervisor; a
 *     DT_NEEDED entry with a slash, which no vendor SDK writes, is not covered): the program stops as on a machine without the driver
 *     ("error while loading shared libraries: libnvidia-ml.so.1: cannot open shared object
 *     file: No such file or directory"), a dlopen returns NULL with that message;
 *   - every other name is ld.so's, untouched.
 * The node's GPUs are read from those variables (HWEMU_NVML set: NVIDIA GPUs; HWEMU_AMDSMI set:
 * AMD GPUs, as `hwemu exec` links them from the segment's state/nvml and state/amdgpu), once, at
 * la_version; without HWEMU_NODE the module answers every name with itself. Loaded in its own
 * link namespace with its own libc: it shares no state with the shim. ld.so ignores LD_AUDIT for
 * set-user-ID programs, as it does LD_PRELOAD.
 *   CPUID on hosts without CPUID faulting (shim/preload/cpuidpatch.c): the shim rewrites the CPUIDs
 * of the objects loaded at start, and writes its hook into hwemu_objopen_hook, exported here (the
 * shim exports no name but libc's); la_objopen hands it every object loaded after that, mapped
 * and not yet relocated or initialised, so a dlopened library's constructors already trap, and
 * la_objclose hands it every object about to be unmapped (its sites leave the table). Before the
 * shim's constructor, and without the shim, the hook is NULL and the objects are ld.so's alone.
 *   With an audit module ld.so fixes the static TLS block before it loads the preloaded shim,
 *   whose initial-exec TLS (6.1 KiB) must then fit in the block's surplus (glibc 2.36's default
 *   and glibc.rtld.optional_static_tls=4096 are too small, 8192 is enough): `hwemu exec` sets GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 beside
 *   LD_AUDIT (without it: "libhwemu-shim.so: cannot allocate memory in static TLS block"). */
#include "emu_hide.h"

#include <link.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static bool on_node, nvidia, amd;

/* The shim's (cpuidpatch.c): open 1 for an object just mapped, 0 for one about to be unmapped. */
EXPORT void (*hwemu_objopen_hook)(int open, uintptr_t base, const char *path);

EXPORT unsigned int la_version(unsigned int version)
{
    const char *nvml = getenv("HWEMU_NVML"), *amdsmi = getenv("HWEMU_AMDSMI"), *node = getenv("HWEMU_NODE");
    on_node = node && *node;
    nvidia = nvml && *nvml == '/';
    amd = amdsmi && *amdsmi == '/';
    return version < LAV_CURRENT ? version : LAV_CURRENT;
}

EXPORT char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
    (void)cookie;
    if (!on_node)
        return (char *)name;
    if (flag == LA_SER_ORIG) {
        const char *var = emu_lib_node_var(name);
        const char *mine = var ? getenv(var) : NULL;
        if (mine && *mine == '/')
            return (char *)mine;
        /* a bare name is refused below at every directory the search tries, so that ld.so's
         * message names it as for any missing library; a path is opened as it is, where the
         * routes refuse it (the shim's dlopen, the supervisor's open): refused here, ld.so's
         * message would name no file */
        return (char *)name;
    }
    return emu_lib_hidden_on(nvidia, amd, name) ? NULL : (char *)name;
}

EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    (void)lmid;
    void (*hook)(int, uintptr_t, const char *) = __atomic_load_n(&hwemu_objopen_hook, __ATOMIC_ACQUIRE);
    *cookie = (uintptr_t)map;
    if (hook)
        hook(1, map->l_addr, map->l_name);
    return 0; /* no symbol bindings audited: calls stay direct */
}

EXPORT unsigned int la_objclose(uintptr_t *cookie)
{
    void (*hook)(int, uintptr_t, const char *) = __atomic_load_n(&hwemu_objopen_hook, __ATOMIC_ACQUIRE);
    const struct link_map *map = (const struct link_map *)*cookie;
    if (hook && map)
        hook(0, map->l_addr, map->l_name);
    return 0;
}
