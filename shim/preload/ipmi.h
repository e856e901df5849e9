/* ipmi: /dev/ipmi0 in the LD_PRELOAD shim, the OpenIPMI character device as
 * drivers/char/ipmi/ipmi_devintf.c and ipmi_msghandler.c present it, the BMC behind it being
 * emu_bmc.c's.
 *
 * An open of the node's dev/ipmi0 returns a real descriptor (an eventfd), not one of the
 * fdtable's: ipmitool and FreeIPMI wait for the answer with select(), which needs a kernel
 * descriptor below FD_SETSIZE. The descriptor is readable exactly while a message waits, as
 * ipmi_poll says. The ioctls are emu_ipmi.c's (emu_ipmi_ioctl, the one list both routes answer),
 * their arguments copied in and out here; any other is the eventfd's (FIOCLEX, FIONBIO and the
 * kernel's generic ones; else ENOTTY).
 * read, write and fstat of the descriptor are the eventfd's (nothing these clients do). Not emulated: a
 * dup of the descriptor (the copy is a plain eventfd; a number closed behind the shim's back and
 * reused is recognised by fstat unless it is another eventfd), asynchronous notification (FASYNC).
 * The seccomp supervisor answers the same ioctls for static and Go programs (sv_answer.c's
 * a_ioctl, over the same emu_ipmi_ioctl). Unlike the rest of the
 * shim this file makes system calls (the eventfd); it never allocates. */
#ifndef HWEMU_SHIM_IPMI_H
#define HWEMU_SHIM_IPMI_H
#include <stdbool.h>
#include <stdint.h>

/* A descriptor for the node's IPMI device entry opened with flags, or -1 with errno. */
int ipmi_open(uint32_t entry, int flags);
/* Is fd an open IPMI device of ours? Cheap when none is open. */
bool ipmi_is(int fd);
/* The ioctl on one of ours: 0 or -1 with errno. */
int ipmi_ioctl(int fd, unsigned long req, void *arg);
/* Forgets fd (the caller closes the descriptor). */
void ipmi_close(int fd);

#endif
