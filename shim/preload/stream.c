/* stream: cookie streams on emulated descriptors and the standard streams over an alias; see
 * stream.h. */
#include "stream.h"

#include "fdtable.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct cookie {
    int fd;                     /* the emulated descriptor the stream uses */
    bool borrowed;              /* the number outlives the stream: close leaves it open */
    int std;                    /* 0, 1, 2: the standard stream it stands in for; -1 */
    char buf[SEG_READ_MAX];     /* the stream's buffer: one page, one store */
};

/* The standard streams pointed at a cookie stream: glibc's own, to put back, and ours. */
static struct {
    FILE *glibc;
    FILE *ours;
    struct cookie *cookie;
} std_swap[3];
static pid_t self_pid; /* this process's pid, kept by fork's child handler; a vfork child differs */

static FILE **std_var(int fd)
{
    return fd == 0 ? &stdin : fd == 1 ? &stdout : &stderr;
}

/* The callbacks call the shim's exported read/write/lseek64/close, which handle emulated
 * descriptors (and are the kernel's for anything else). */
static ssize_t cookie_read(void *c, char *buf, size_t n)
{
    return read(((struct cookie *)c)->fd, buf, n);
}

/* A buffer larger than a page reaches the kernel as successive writes, one store each, as
 * glibc's own file streams do. A refused store returns what was written before it (0: glibc
 * then marks the stream in error, errno the store's), never -1, which glibc would count as
 * every byte written. */
static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
    struct cookie *k = c;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(k->fd, buf + done, n - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    return (ssize_t)done;
}

static int cookie_seek(void *c, off64_t *pos, int whence)
{
    off64_t r = lseek64(((struct cookie *)c)->fd, *pos, whence);
    if (r < 0)
        return -1;
    *pos = r;
    return 0;
}

static int cookie_close(void *c)
{
    struct cookie *k = c;
    if (k->std >= 0 && std_swap[k->std].cookie == k) {
        /* the program closed its standard stream (coreutils' close_stdout): glibc's comes
         * back, as closed as the descriptor is about to be */
        *std_var(k->std) = std_swap[k->std].glibc;
        std_swap[k->std].ours = NULL;
        std_swap[k->std].cookie = NULL;
    }
    int rc = k->borrowed ? 0 : close(k->fd);
    int saved = errno; /* fclose reports a refused store's errno: keep it */
    free(k);
    errno = saved;
    return rc;
}

static FILE *cookie_new(int fd, const char *mode, int std, struct cookie **out)
{
    struct cookie *k = malloc(sizeof *k);
    if (!k) {
        errno = ENOMEM;
        return NULL;
    }
    k->fd = fd;
    k->borrowed = false;
    k->std = std;
    cookie_io_functions_t io = {
        .read = cookie_read, .write = cookie_write, .seek = cookie_seek, .close = cookie_close};
    FILE *fp = fopencookie(k, mode, io);
    if (!fp) {
        int saved = errno;
        free(k);
        errno = saved;
        return NULL;
    }
    setvbuf(fp, k->buf, _IOFBF, sizeof k->buf);
    /* fileno() gives the descriptor; glibc's cookie operations never use the number. */
    fp->_fileno = fd;
    if (out)
        *out = k;
    return fp;
}

FILE *stream_open(int fd, const char *mode)
{
    return cookie_new(fd, mode, -1, NULL);
}

static void forked_child(void)
{
    self_pid = getpid();
}

void stream_init(void)
{
    self_pid = getpid();
    pthread_atfork(NULL, NULL, forked_child);
}

void stream_std_attach(int fd)
{
    if (fd < 0 || fd > 2 || std_swap[fd].ours || getpid() != self_pid)
        return;
    FILE **var = std_var(fd);
    struct emu_file *f = fdt_get(fd);
    if (!f || !*var || (*var)->_fileno != fd)
        return;
    int acc = f->flags & O_ACCMODE;
    if (fd == 0 ? acc == O_WRONLY : acc == O_RDONLY)
        return; /* the stream could not use it either way: glibc's fails as the kernel does */
    int saved = errno;
    struct cookie *k;
    FILE *ours = cookie_new(fd, fd == 0 ? "r" : "w", fd, &k);
    errno = saved;
    if (!ours)
        return;
    if (fd == 2)
        setvbuf(ours, NULL, _IONBF, 0);
    std_swap[fd].glibc = *var;
    std_swap[fd].ours = ours;
    std_swap[fd].cookie = k;
    *var = ours;
}

void stream_std_detach(int fd)
{
    if (fd < 0 || fd > 2 || !std_swap[fd].ours)
        return;
    FILE *ours = std_swap[fd].ours;
    FILE **var = std_var(fd);
    if (*var == ours)
        *var = std_swap[fd].glibc;
    std_swap[fd].cookie->borrowed = true; /* the caller is closing or replacing the number */
    std_swap[fd].cookie->std = -1;
    std_swap[fd].ours = NULL;
    std_swap[fd].cookie = NULL;
    int saved = errno;
    fclose(ours); /* its last bytes are stored: the number is still the file's */
    errno = saved;
}
