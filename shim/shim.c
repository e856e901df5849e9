/* shim: libhwemu-shim.so's entry: the constructor that resolves the forward pointers and maps
 * the node's segment before main() runs, so that no wrapper ever initialises on a hot path.
 * Loaded without HWEMU_NODE (or HWEMU_SEGMENT), the shim passes every call through.
 * The wrappers themselves are in wrap_*.c; the list of wrapped symbols is real.h. */
#include "emu.h"
#include "real.h"

__attribute__((constructor)) static void shim_init(void)
{
    shim_resolve();
    emu_init();
}
