/* wrap_dl: a program that dlopens NVIDIA's NVML by an absolute path (nvidia-smi's fallbacks
 * /usr/lib64/libnvidia-ml.so.1 and the like, or a tool that names its driver directory) gets
 * the node's NVML, libhwemu-nvml.so, as it would by name through LD_LIBRARY_PATH: `hwemu exec`
 * names it in HWEMU_NVML. Every other dlopen is passed on untouched, as a tail call, so libc
 * still sees the program's own code as the caller (its RUNPATH and $ORIGIN, its namespace).
 * It must never load anything the program did not ask for but that one library. */
#include "real.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* Is path an absolute or relative path (not a bare name) whose file is libnvidia-ml.so*? */
static int names_nvml(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash && !strncmp(slash + 1, "libnvidia-ml.so", 15);
}

/* The pass-through must compile to a jump (a sibling call) whatever the build type: gcc's -O2 for
 * this function, clang's musttail (clang has no optimize attribute). */
#ifdef __clang__
#define SIBLING_CALLS
#define TAIL_CALL __attribute__((musttail))
#else
#define SIBLING_CALLS __attribute__((optimize("O2", "optimize-sibling-calls")))
#define TAIL_CALL
#endif
EXPORT SIBLING_CALLS void *dlopen(const char *file, int mode)
{
    const char *nvml;
    if (names_nvml(file) && (nvml = getenv("HWEMU_NVML")) && *nvml == '/')
        file = nvml;
    TAIL_CALL return REAL(dlopen)(file, mode);
}
