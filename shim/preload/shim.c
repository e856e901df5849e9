/* shim: libhwemu-shim.so's entry: the constructor that resolves the forward pointers and maps
 * the node's segment before main() runs, so that no wrapper ever initialises on a hot path.
 * Loaded without HWEMU_NODE (or HWEMU_SEGMENT), the shim passes every call through.
 * The wrappers themselves are in wrap_*.c; the list of wrapped symbols is real.h. */
#include "alias.h"
#include "cpufault.h"
#include "emu.h"
#include "emutime.h"
#include "emutimer.h"
#include "exec_env.h"
#include "real.h"
#include "stream.h"

__attribute__((constructor)) static void shim_init(void)
{
    shim_resolve();
    stream_init();
    emutime_init(); /* --time emulated: the engine's clock, before main() reads any time */
    emutimer_init();
    if (emu_init() == 0) {
        exec_keep_env(); /* what a program it starts needs to stay on the node */
        alias_adopt(); /* emulated files a parent left on low numbers across exec */
        cpuid_init();  /* CPUID answers with the node's processor */
    }
}

/* What programs wrote behind the shim's back to aliased numbers reaches the node at exit. */
__attribute__((destructor)) static void shim_fini(void)
{
    alias_flush_all();
    emutime_exit(); /* the exiting thread's clock slot (the others': the engine sees them gone) */
}
