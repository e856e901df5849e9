/* wrap_dl: the GPU driver libraries a program loads with dlopen.
 *  - A driver library the node does not have (emu_hide.h: NVIDIA's on a node without NVIDIA
 *    GPUs, AMD's SMI and runtime libraries on a node without AMD GPUs, NVIDIA's other than NVML
 *    everywhere) is not found, by name or by path, whatever the host has installed: dlopen
 *    returns NULL and the next dlerror() says what ld.so says for a missing library,
 *    "<file>: cannot open shared object file: No such file or directory". (ld.so's own search,
 *    which a dlopen by name goes through, cannot be seen from here: the name is refused before.)
 *  - A program that dlopens a GPU vendor's management library by an absolute path gets the
 *    node's, as it would by name through LD_LIBRARY_PATH (`hwemu exec` names them):
 *      libnvidia-ml.so*   on an NVIDIA node (nvidia-smi's fallbacks /usr/lib64/libnvidia-ml.so.1
 *                         and the like, a tool that names its driver directory)  -> HWEMU_NVML
 *      libamd_smi.so*     on an AMD node (the PyPI amdsmi's /opt/rocm/lib/libamd_smi.so)
 *                                                                              -> HWEMU_AMDSMI
 *      librocm_smi64.so*  on an AMD node (pyrsmi's /opt/rocm/lib/librocm_smi64.so, ROCm 5-7's
 *                         .so.5/.6/.7), but not .so.1: Debian's librocm_smi64 5.2.3, which
 *                         Debian's rocm-smi loads by its path, stays the real one -> HWEMU_ROCMSMI
 * Every other dlopen is passed on untouched, as a tail call, so libc still sees the program's
 * own code as the caller (its RUNPATH and $ORIGIN, its namespace). It must never load anything
 * the program did not ask for but those libraries. */
#include "emu.h"
#include "emu_hide.h"
#include "real.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* The error of a dlopen refused here, for this thread's next dlerror(). */
static __thread char refused[1100];
static __thread bool refused_pending;

static void *refuse(const char *file)
{
    (void)REAL(dlerror)(); /* a failed dlopen replaces the error an earlier call left */
    snprintf(refused, sizeof refused, "%s: cannot open shared object file: No such file or directory", file);
    refused_pending = true;
    return NULL;
}

/* The node's AMD SMI library for a path whose file is AMD's (set by `hwemu exec` on AMD nodes
 * only), NULL for any other path. */
static const char *node_amd_library(const char *path)
{
    const char *var = emu_lib_node_var(path);
    const char *lib = var && strcmp(var, "HWEMU_NVML") ? getenv(var) : NULL;
    return lib && *lib == '/' ? lib : NULL;
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
    refused_pending = false;
    struct seg *s = emu_seg();
    if (emu_lib_hidden(s, file))
        return refuse(file);
    const char *lib;
    /* a path (a bare name is LD_LIBRARY_PATH's, which has the node's first) */
    if (file && strchr(file, '/')) {
        if (emu_lib_nvml(s, file) && (lib = getenv("HWEMU_NVML")) && *lib == '/')
            file = lib;
        else if ((lib = node_amd_library(file)))
            file = lib;
    }
    TAIL_CALL return REAL(dlopen)(file, mode);
}

EXPORT char *dlerror(void)
{
    if (refused_pending) {
        refused_pending = false;
        return refused;
    }
    return REAL(dlerror)();
}
