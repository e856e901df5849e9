/* alias: an emulated file behind a low descriptor number that code outside the shim writes to.
 *
 * A shell redirection (`echo 50000000 > .../constraint_0_power_limit_uw`) opens the file,
 * dup2()s it onto 1 and lets the builtin or the exec'd program write through stdio. So the
 * low number is held by a memfd named "hwemu:<entry>:<root>:<access mode>", registered as the
 * emulated description, and, for 0, 1 and 2, the standard stream of the number is pointed at
 * a cookie stream on it (stream.h): writes through the wrapped write() and through stdio are
 * stores at once, refused with the kernel's errno. A program exec'd with the number open finds
 * the memfd by name at start and does the same. What still lands in the memfd (a raw system
 * call, a stream the program made itself with glibc's internal calls) is stored to the
 * attribute (one store) when the number is closed or replaced or the process exits; a store
 * the attribute refuses then cannot fail the write that is long gone: it is reported on stderr
 * and as a joulie.sim.write.rejected event. */
#ifndef HWEMU_SHIM_ALIAS_H
#define HWEMU_SHIM_ALIAS_H
#include "emu.h"

/* Makes newfd (a low number) an alias of the emulated description of fd: a memfd placeholder
 * dup'ed onto newfd, registered in the descriptor table. Returns newfd or -1 with errno. */
int alias_make(int fd, int newfd, int flags);
/* newfd stops being an alias (close or dup2 over it): stores what was written behind the
 * shim's back. No-op for a number that is not an alias. */
void alias_flush(int fd);
/* At start: adopt the aliases inherited across exec. At exit: flush every alias. */
void alias_adopt(void);
void alias_flush_all(void);

#endif
