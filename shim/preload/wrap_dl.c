/* wrap_dl: a program that dlopens a GPU vendor's management library by an absolute path gets
 * the node's, as it would by name through LD_LIBRARY_PATH (`hwemu exec` names them):
 *   libnvidia-ml.so*   (nvidia-smi's fallbacks /usr/lib64/libnvidia-ml.so.1 and the like, a
 *                      tool that names its driver directory)             -> HWEMU_NVML
 *   libamd_smi.so*     (the PyPI amdsmi's /opt/rocm/lib/libamd_smi.so)  -> HWEMU_AMDSMI
 *   librocm_smi64.so*  (pyrsmi's /opt/rocm/lib/librocm_smi64.so, ROCm 5-7's .so.5/.6/.7), but
 *                      not .so.1: Debian's librocm_smi64 5.2.3, the library Debian's rocm-smi
 *                      loads by its path, stays the real one              -> HWEMU_ROCMSMI
 * each only where the node has the library (the variable is set). Every other dlopen is passed
 * on untouched, as a tail call, so libc still sees the program's own code as the caller (its
 * RUNPATH and $ORIGIN, its namespace). It must never load anything the program did not ask
 * for but those libraries. */
#include "real.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* The variable naming the node's library for a path (not a bare name) whose file is one of
 * the vendors' libraries, NULL for any other. */
static const char *node_library_var(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (!slash)
        return NULL;
    const char *file = slash + 1;
    if (!strncmp(file, "libnvidia-ml.so", 15))
        return "HWEMU_NVML";
    if (!strncmp(file, "libamd_smi.so", 13))
        return "HWEMU_AMDSMI";
    if (!strncmp(file, "librocm_smi64.so", 16) && strcmp(file + 16, ".1") && strncmp(file + 16, ".1.", 3))
        return "HWEMU_ROCMSMI";
    return NULL;
}

/* -O2 whatever the build type: the pass-through must compile to a jump (a sibling call). */
EXPORT __attribute__((optimize("O2", "optimize-sibling-calls"))) void *dlopen(const char *file, int mode)
{
    const char *var = node_library_var(file), *lib;
    if (var && (lib = getenv(var)) && *lib == '/')
        file = lib;
    return REAL(dlopen)(file, mode);
}
