/* usermem: copies into and out of the agent's buffers that fail as copy_to_user does; see
 * usermem.h. */
#include "usermem.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* The top of the user address space on x86-64 with 5-level paging (TASK_SIZE_MAX there;
 * 2^47 - 4096 with 4 levels, where the range between is refused by the copies instead). */
#define USER_TOP ((((uintptr_t)1) << 56) - 4096)
#define FIRST_PAGE 4096

bool um_cheap_ok(const void *p, size_t n, size_t copy)
{
    uintptr_t a = (uintptr_t)p;
    if (n && (a > USER_TOP || n > USER_TOP - a))
        return false;
    return !copy || a >= FIRST_PAGE;
}

/* 0 until a copy failed for another reason than the buffer (the calls are refused here): then
 * 1, and every copy is memcpy after um_cheap_ok. */
static _Atomic int no_vm_calls;

/* process_vm_readv/writev on ourselves: the count, or -1 when the calls are not available
 * (errno kept as it was). */
static ssize_t vm_copy(bool out, const struct iovec *local, unsigned long nlocal, const struct iovec *remote)
{
    if (atomic_load_explicit(&no_vm_calls, memory_order_relaxed))
        return -1;
    int saved = errno;
    ssize_t k = out ? process_vm_writev(getpid(), local, nlocal, remote, 1, 0)
                    : process_vm_readv(getpid(), local, nlocal, remote, 1, 0);
    if (k < 0 && errno != EFAULT) {
        atomic_store(&no_vm_calls, 1); /* ENOSYS, EPERM: a sandbox refuses them */
        errno = saved;
        return -1;
    }
    errno = saved;
    return k < 0 ? 0 : k;
}

int um_copy_in(void *dst, const void *user, size_t n)
{
    if (!n)
        return 0;
    struct iovec l = {dst, n}, r = {(void *)user, n};
    ssize_t k = vm_copy(false, &l, 1, &r);
    if (k >= 0)
        return (size_t)k == n ? 0 : EFAULT;
    if (!um_cheap_ok(user, n, n))
        return EFAULT;
    memcpy(dst, user, n);
    return 0;
}

size_t um_copy_out(void *user, const void *src, size_t n)
{
    if (!n)
        return 0;
    struct iovec l = {(void *)src, n}, r = {user, n};
    ssize_t k = vm_copy(true, &l, 1, &r);
    if (k >= 0)
        return (size_t)k;
    if (!um_cheap_ok(user, n, n))
        return 0;
    memcpy(user, src, n);
    return n;
}

#define PATTERN_PAGE 4096
#define PATTERN_IOVS 256 /* 1 MiB a call */

size_t um_fill8(void *user, size_t n, const unsigned char pattern[8])
{
    unsigned char page[PATTERN_PAGE];
    for (size_t i = 0; i < sizeof page; i += 8)
        memcpy(page + i, pattern, 8);
    struct iovec l[PATTERN_IOVS];
    size_t done = 0;
    while (done < n) {
        size_t left = n - done, want = 0;
        unsigned long nl = 0;
        while (nl < PATTERN_IOVS && want < left) {
            size_t k = left - want < sizeof page ? left - want : sizeof page;
            l[nl++] = (struct iovec){page, k};
            want += k;
        }
        struct iovec r = {(char *)user + done, want};
        ssize_t k = vm_copy(true, l, nl, &r);
        if (k < 0) { /* no process_vm_writev here: memcpy, which cannot stop at a bad page */
            if (!um_cheap_ok((char *)user + done, want, want))
                return done;
            for (size_t i = 0; i < want; i += sizeof page)
                memcpy((char *)user + done + i, page, want - i < sizeof page ? want - i : sizeof page);
            k = (ssize_t)want;
        }
        done += (size_t)k;
        if ((size_t)k < want)
            break;
    }
    return done;
}
