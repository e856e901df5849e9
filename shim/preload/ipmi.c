/* ipmi: the OpenIPMI device's descriptors and ioctls in the shim; see ipmi.h. */
#include "ipmi.h"

#include "emu.h"
#include "emu_ipmi.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <linux/ipmi.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FILES 16   /* IPMI descriptors open at once (a tool opens one) */

struct ipmi_file {
    _Atomic int fd;         /* -1: free */
    dev_t dev;              /* the eventfd's identity: a number closed behind our back (close_range, */
    ino_t ino;              /* exec) and reused by another file is not ours any more */
    atomic_flag busy;       /* one ioctl at a time on this file */
    uint32_t entry;
    struct ipmi_queue q;
};

static struct ipmi_file files[FILES];
static _Atomic int nopen;
static _Atomic int initialised;

static void init_once(void)
{
    int expected = 0;
    if (atomic_load(&initialised) == 2 || !atomic_compare_exchange_strong(&initialised, &expected, 1)) {
        while (atomic_load(&initialised) != 2)
            ;
        return;
    }
    for (int i = 0; i < FILES; i++)
        atomic_store(&files[i].fd, -1);
    atomic_store(&initialised, 2);
}

static struct ipmi_file *find(int fd)
{
    if (fd < 0 || !atomic_load_explicit(&nopen, memory_order_acquire))
        return NULL;
    for (int i = 0; i < FILES; i++) {
        if (atomic_load(&files[i].fd) != fd)
            continue;
        struct stat st;
        if (REAL(fstat)(fd, &st) == 0 && st.st_dev == files[i].dev && st.st_ino == files[i].ino)
            return &files[i];
        int expected = fd; /* stale: the number is another file's now */
        if (atomic_compare_exchange_strong(&files[i].fd, &expected, -1))
            atomic_fetch_sub(&nopen, 1);
        return NULL;
    }
    return NULL;
}

bool ipmi_is(int fd)
{
    return find(fd) != NULL;
}

int ipmi_open(uint32_t entry, int flags)
{
    init_once();
    int fd = eventfd(0, EFD_NONBLOCK | ((flags & O_CLOEXEC) ? EFD_CLOEXEC : 0));
    if (fd < 0)
        return -1;
    for (int i = 0; i < FILES; i++) {
        struct ipmi_file *f = &files[i];
        int expected = -1;
        if (!atomic_compare_exchange_strong(&f->fd, &expected, -2)) /* -2: being filled */
            continue;
        f->entry = entry;
        emu_ipmi_init(&f->q);
        struct stat st;
        if (REAL(fstat)(fd, &st) == 0) {
            f->dev = st.st_dev;
            f->ino = st.st_ino;
        }
        atomic_flag_clear(&f->busy);
        atomic_store(&f->fd, fd);
        atomic_fetch_add(&nopen, 1);
        return fd;
    }
    REAL(close)(fd);
    errno = EMFILE;
    return -1;
}

void ipmi_close(int fd)
{
    struct ipmi_file *f = find(fd);
    if (f) {
        atomic_store(&f->fd, -1);
        atomic_fetch_sub(&nopen, 1);
    }
}

/* The descriptor is readable while a message waits (ipmi_poll). */
static void set_readable(int fd, bool on)
{
    uint64_t v = 1;
    if (on) {
        if (REAL(write)(fd, &v, sizeof v) < 0)
            return; /* a full counter: it is readable anyway */
    } else if (REAL(read)(fd, &v, sizeof v) < 0) {
        return; /* already clear */
    }
}

static int send_request(struct ipmi_file *f, int fd, const struct ipmi_req *r)
{
    if (!r->addr || r->addr_len < IPMI_SI_ADDR_LEN || r->addr_len > IPMI_ADDR_MAX)
        return EINVAL;
    uint8_t addr[IPMI_ADDR_MAX], data[IPMI_DATA_MAX];
    memcpy(addr, r->addr, r->addr_len);
    unsigned len = r->msg.data && r->msg.data_len ? r->msg.data_len : 0;
    if (len > IPMI_DATA_MAX)
        return EMSGSIZE;
    if (len)
        memcpy(data, r->msg.data, len);
    bool was_empty = !f->q.count;
    int err = emu_ipmi_send(&f->q, emu_seg(), addr, r->addr_len, r->msgid, r->msg.netfn, r->msg.cmd, data, len,
                            (int64_t)time(NULL));
    if (!err && was_empty)
        set_readable(fd, true);
    return err;
}

static int receive(struct ipmi_file *f, int fd, struct ipmi_recv *rv, bool trunc)
{
    const struct ipmi_message *m = emu_ipmi_head(&f->q);
    if (!m)
        return EAGAIN;
    unsigned copy;
    bool take;
    int rc = emu_ipmi_fit(m, rv->addr ? rv->addr_len : 0, rv->msg.data_len, trunc, &copy, &take);
    if (rc == EINVAL || !take)
        return rc;
    memcpy(rv->addr, m->addr, sizeof m->addr);
    rv->addr_len = sizeof m->addr;
    rv->recv_type = IPMI_RESPONSE_RECV_TYPE;
    rv->msgid = m->msgid;
    rv->msg.netfn = m->netfn;
    rv->msg.cmd = m->cmd;
    if (copy && rv->msg.data)
        memcpy(rv->msg.data, m->data, copy);
    rv->msg.data_len = (unsigned short)copy;
    emu_ipmi_drop(&f->q);
    if (!f->q.count)
        set_readable(fd, false);
    return rc;
}

static int dispatch(struct ipmi_file *f, int fd, unsigned long req, void *arg)
{
    if (!arg && req != IPMICTL_GET_MAINTENANCE_MODE_CMD)
        return EFAULT;
    switch (req) {
    case IPMICTL_SEND_COMMAND:
        return send_request(f, fd, arg);
    case IPMICTL_SEND_COMMAND_SETTIME:
        return send_request(f, fd, &((struct ipmi_req_settime *)arg)->req);
    case IPMICTL_RECEIVE_MSG:
    case IPMICTL_RECEIVE_MSG_TRUNC:
        return receive(f, fd, arg, req == IPMICTL_RECEIVE_MSG_TRUNC);
    case IPMICTL_SET_GETS_EVENTS_CMD:
        f->q.gets_events = *(int *)arg;
        return 0;
    case IPMICTL_SET_MY_ADDRESS_CMD:
        f->q.my_address = *(unsigned *)arg;
        return 0;
    case IPMICTL_GET_MY_ADDRESS_CMD:
        *(unsigned *)arg = f->q.my_address;
        return 0;
    case IPMICTL_SET_MY_LUN_CMD:
        f->q.my_lun = *(unsigned *)arg & 3;
        return 0;
    case IPMICTL_GET_MY_LUN_CMD:
        *(unsigned *)arg = f->q.my_lun;
        return 0;
    case IPMICTL_SET_MY_CHANNEL_ADDRESS_CMD:
    case IPMICTL_SET_MY_CHANNEL_LUN_CMD:
    case IPMICTL_SET_TIMING_PARMS_CMD:
    case IPMICTL_REGISTER_FOR_CMD:
    case IPMICTL_UNREGISTER_FOR_CMD:
    case IPMICTL_REGISTER_FOR_CMD_CHANS:
    case IPMICTL_UNREGISTER_FOR_CMD_CHANS:
    case IPMICTL_SET_MAINTENANCE_MODE_CMD:
        return 0;
    case IPMICTL_GET_MY_CHANNEL_ADDRESS_CMD: {
        struct ipmi_channel_lun_address_set *c = arg;
        c->value = (unsigned char)f->q.my_address;
        return 0;
    }
    case IPMICTL_GET_MY_CHANNEL_LUN_CMD: {
        struct ipmi_channel_lun_address_set *c = arg;
        c->value = (unsigned char)f->q.my_lun;
        return 0;
    }
    case IPMICTL_GET_TIMING_PARMS_CMD: {
        struct ipmi_timing_parms *t = arg;
        t->retries = 0;
        t->retry_time_ms = 0;
        return 0;
    }
    case IPMICTL_GET_MAINTENANCE_MODE_CMD:
        return 0; /* the kernel returns the mode as the ioctl's value: 0, automatic */
    default:
        return -1; /* not an IPMI ioctl: the eventfd's (FIOCLEX and the generic ones; else ENOTTY) */
    }
}

int ipmi_ioctl(int fd, unsigned long req, void *arg)
{
    struct ipmi_file *f = find(fd);
    if (!f)
        return shim_fail(EBADF);
    while (atomic_flag_test_and_set_explicit(&f->busy, memory_order_acquire))
        ;
    int err = dispatch(f, fd, req, arg);
    atomic_flag_clear_explicit(&f->busy, memory_order_release);
    if (err == -1)
        return REAL(ioctl)(fd, req, arg);
    return err ? shim_fail(err) : 0;
}
