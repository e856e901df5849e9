/* usermem: the agent's buffers as the kernel reaches them, for the shim's answers to device
 * reads, ioctls and writes. The kernel copies a system call's buffers with copy_to_user and
 * copy_from_user, which fail with EFAULT instead of faulting: a bad pointer given to read(),
 * pread() or ioctl() is an error, never a SIGSEGV. The shim answers those calls inside the
 * process, so it copies with process_vm_readv/process_vm_writev on the process itself (the
 * kernel checks each page as copy_to_user does: an unmapped or read-only page is EFAULT, and a
 * copy stops at the first page it cannot reach), one system call per copy.
 *
 * Where this applies (docs/shim.md "Bad buffers"): the MSR devices' read and write, the IPMI
 * ioctls, and writes to the node's attributes, the calls where the kernel itself does the
 * copying and that are not on a hot path. An emulated file's read, the path every energy_uj
 * poll takes, stays free of system calls: it only applies um_cheap_ok (the kernel's
 * access_ok, and the first page, which no process maps) and copies with memcpy, so any other
 * bad pointer faults there as it would in a libc function.
 *
 * When the process may not make these calls (a seccomp profile that refuses them: ENOSYS or
 * EPERM), the copies fall back to memcpy after um_cheap_ok, once decided for the process. */
#ifndef HWEMU_SHIM_USERMEM_H
#define HWEMU_SHIM_USERMEM_H
#include <stdbool.h>
#include <stddef.h>

/* Without a system call: could the kernel copy `copy` bytes (of a call given n) at p? False
 * when p + n leaves the user address space (the kernel's access_ok, which refuses the whole
 * call) or when bytes are to be copied into the first page (NULL and its neighbours). */
bool um_cheap_ok(const void *p, size_t n, size_t copy);
/* Copies n bytes from the agent's user to dst: 0, or EFAULT when any of them is unreachable. */
int um_copy_in(void *dst, const void *user, size_t n);
/* Copies n bytes from src to the agent's user: how many reached it (n when all; a copy stops at
 * the first page it cannot write). */
size_t um_copy_out(void *user, const void *src, size_t n);
/* Writes the 8 bytes at pattern again and again over n bytes at user (an MSR read of n bytes):
 * how many reached it, as um_copy_out. */
size_t um_fill8(void *user, size_t n, const unsigned char pattern[8]);

#endif
