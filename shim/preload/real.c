/* real: resolving the forward pointers of every wrapped symbol (real.h). */
#include "real.h"

#include <dlfcn.h>
#include <sys/stat.h>

#define SHIM_DEFINE(ret, name, args) ret(*real_##name) args;
SHIM_SYMBOLS(SHIM_DEFINE)
#undef SHIM_DEFINE

void shim_resolve(void)
{
#define SHIM_RESOLVE(ret, name, args)                                                                  \
    if (!real_##name)                                                                              \
        *(void **)&real_##name = dlsym(RTLD_NEXT, #name);
    SHIM_SYMBOLS(SHIM_RESOLVE)
#undef SHIM_RESOLVE
}
