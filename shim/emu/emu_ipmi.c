/* emu_ipmi: the OpenIPMI ioctls and message layer; see emu_ipmi.h. */
#include "emu_ipmi.h"
#include "seg_faults.h"

#include <errno.h>
#include <sys/ioctl.h> /* _IOR and _IOWR, which linux/ipmi.h uses without including */
#include <linux/fiemap.h> /* struct fiemap, the size in FS_IOC_FIEMAP */
#include <linux/fs.h>
#include <linux/ipmi.h>
#include <string.h>
#include <time.h>

#define SI_ADDR_TYPE 0x0C    /* IPMI_SYSTEM_INTERFACE_ADDR_TYPE */
#define IPMB_ADDR_TYPE 0x01  /* IPMI_IPMB_ADDR_TYPE */
#define IPMB_BCAST_TYPE 0x41 /* IPMI_IPMB_BROADCAST_ADDR_TYPE */
#define BMC_CHANNEL 0x0F     /* IPMI_BMC_CHANNEL */

void emu_ipmi_init(struct ipmi_queue *q)
{
    memset(q, 0, sizeof *q);
    q->my_address = 0x20; /* IPMI_BMC_SLAVE_ADDR */
    q->my_lun = 2;
    q->maintenance_mode = IPMI_MAINTENANCE_MODE_AUTO; /* the interface's mode at registration */
}

/* The ioctls fs/ioctl.c's do_vfs_ioctl answers itself for any file, before the driver sees the
 * call (FIONREAD only for regular files: on the device it reaches ipmi_ioctl, which does not
 * know it). A front end lets the kernel answer these on its stand-in descriptor. */
static bool vfs_generic(unsigned long req)
{
    switch (req) {
    case FIOCLEX:
    case FIONCLEX:
    case FIONBIO:
    case FIOASYNC:
    case FIOQSIZE:
    case FIFREEZE:
    case FITHAW:
    case FIGETBSZ:
    case FICLONE:
    case FICLONERANGE:
    case FIDEDUPERANGE:
    case FS_IOC_FIEMAP:
    case FS_IOC_GETFLAGS:
    case FS_IOC_SETFLAGS:
    case FS_IOC_FSGETXATTR:
    case FS_IOC_FSSETXATTR:
#ifdef FS_IOC_GETFSUUID
    case FS_IOC_GETFSUUID:
#endif
#ifdef FS_IOC_GETFSSYSFSPATH
    case FS_IOC_GETFSSYSFSPATH:
#endif
        return true;
    default:
        return false;
    }
}

int emu_ipmi_send(struct ipmi_queue *q, struct seg *s, const uint8_t *addr, unsigned addr_len, long msgid,
                  uint8_t netfn, uint8_t cmd, const uint8_t *data, unsigned len, int64_t now_unix)
{
    if (addr_len < IPMI_SI_ADDR_LEN || addr_len > IPMI_ADDR_MAX)
        return EINVAL;
    int type;
    short channel;
    memcpy(&type, addr, sizeof type);
    memcpy(&channel, addr + 4, sizeof channel);
    uint8_t lun = addr[6];
    bool ipmb = type == IPMB_ADDR_TYPE || type == IPMB_BCAST_TYPE;
    if (!ipmb && (type != SI_ADDR_TYPE || channel != BMC_CHANNEL || lun > 3))
        return EINVAL;
    if (netfn & 1)
        return EINVAL; /* a response netfn */
    if (netfn == 0x06 && (cmd == 0x33 || cmd == 0x34 || cmd == 0x35))
        return EINVAL; /* Get Message, Send Message, Read Event Message Buffer: the driver's own */
    if (len > IPMI_DATA_MAX || len + 2 > IPMI_DATA_MAX)
        return EMSGSIZE;
    if (q->count >= IPMI_QUEUE)
        return EBUSY;
    struct ipmi_message *m = &q->q[(q->head + q->count) % IPMI_QUEUE];
    memset(m, 0, sizeof *m);
    m->msgid = msgid;
    int si = SI_ADDR_TYPE;
    short bmc = BMC_CHANNEL;
    memcpy(m->addr, &si, sizeof si);
    memcpy(m->addr + 4, &bmc, sizeof bmc);
    m->addr[6] = ipmb ? 0 : lun;
    m->netfn = (uint8_t)(netfn + 1);
    m->cmd = cmd;
    struct seg_faults f = {0};
    if (!ipmb && seg_faults_read(s, &f) && f.bmc) {
        /* a BMC that answers late, or not at all (docs/faults.md): the caller waits the delay in
         * its send, then a timeout gets the completion code the message handler gives a request
         * that timed out (faults.md §6.1: IPMI_TIMEOUT_COMPLETION_CODE) */
        struct timespec ts = {.tv_sec = f.bmc_ms / 1000, .tv_nsec = (long)(f.bmc_ms % 1000) * 1000000};
        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
            ;
    }
    if (ipmb || (f.bmc == 't')) {
        m->data[0] = 0xC3; /* no IPMB device answers, or the BMC timed out: the driver's timeout */
        m->len = 1;
    } else {
        m->len = (uint16_t)emu_bmc_answer(s, netfn, cmd, data, len, now_unix, m->data);
    }
    q->count++;
    return 0;
}

const struct ipmi_message *emu_ipmi_head(const struct ipmi_queue *q)
{
    return q->count ? &q->q[q->head] : NULL;
}

void emu_ipmi_drop(struct ipmi_queue *q)
{
    if (!q->count)
        return;
    q->head = (q->head + 1) % IPMI_QUEUE;
    q->count--;
}

int emu_ipmi_fit(const struct ipmi_message *m, unsigned addr_cap, unsigned data_cap, bool trunc, unsigned *copy,
                 bool *take)
{
    *take = false;
    *copy = 0;
    if (addr_cap < IPMI_SI_ADDR_LEN)
        return EINVAL;
    if (data_cap < m->len) {
        if (!trunc)
            return EMSGSIZE; /* kept for a larger buffer */
        *copy = data_cap;
        *take = true;
        return EMSGSIZE;
    }
    *copy = m->len;
    *take = true;
    return 0;
}

/* SEND_COMMAND(_SETTIME): the request (a settime's is its first member), its address and data
 * copied in, then the message layer's checks and answer. */
static int ioctl_send(struct ipmi_queue *q, struct seg *s, uint64_t arg, const struct emu_ipmi_io *io)
{
    struct ipmi_req r;
    int err = io->in(io->ctx, arg, &r, sizeof r);
    if (err)
        return err;
    if (!r.addr || r.addr_len < IPMI_SI_ADDR_LEN || r.addr_len > IPMI_ADDR_MAX)
        return EINVAL;
    unsigned len = r.msg.data && r.msg.data_len ? r.msg.data_len : 0;
    if (len > IPMI_DATA_MAX)
        return EMSGSIZE;
    uint8_t addr[IPMI_ADDR_MAX], data[IPMI_DATA_MAX];
    if ((err = io->in(io->ctx, (uint64_t)(uintptr_t)r.addr, addr, r.addr_len)) ||
        (len && (err = io->in(io->ctx, (uint64_t)(uintptr_t)r.msg.data, data, len))))
        return err;
    if (io->valid && !io->valid(io->ctx))
        return EMU_IPMI_GONE;
    return emu_ipmi_send(q, s, addr, r.addr_len, r.msgid, r.msg.netfn, r.msg.cmd, data, len, (int64_t)time(NULL));
}

/* RECEIVE_MSG(_TRUNC): the head of the queue into the caller's buffers (emu_ipmi_fit decides
 * what fits); the message leaves the queue only once everything was copied out. */
static int ioctl_receive(struct ipmi_queue *q, uint64_t arg, bool trunc, const struct emu_ipmi_io *io)
{
    struct ipmi_recv rv;
    int err = io->in(io->ctx, arg, &rv, sizeof rv); /* copied in before the queue is looked at */
    if (err)
        return err;
    const struct ipmi_message *m = emu_ipmi_head(q);
    if (!m)
        return EAGAIN;
    unsigned copy;
    bool take;
    int rc = emu_ipmi_fit(m, rv.addr ? rv.addr_len : 0, rv.msg.data_len, trunc, &copy, &take);
    if (rc == EINVAL || !take)
        return rc;
    rv.addr_len = sizeof m->addr;
    rv.recv_type = IPMI_RESPONSE_RECV_TYPE;
    rv.msgid = m->msgid;
    rv.msg.netfn = m->netfn;
    rv.msg.cmd = m->cmd;
    rv.msg.data_len = (unsigned short)copy;
    if ((err = io->out(io->ctx, (uint64_t)(uintptr_t)rv.addr, m->addr, sizeof m->addr)) ||
        (copy && rv.msg.data && (err = io->out(io->ctx, (uint64_t)(uintptr_t)rv.msg.data, m->data, copy))) ||
        (err = io->out(io->ctx, arg, &rv, sizeof rv)))
        return err;
    emu_ipmi_drop(q);
    return rc;
}

int emu_ipmi_ioctl(struct ipmi_queue *q, struct seg *s, unsigned long req, uint64_t arg, const struct emu_ipmi_io *io)
{
    unsigned v;
    int err;
    switch (req) {
    case IPMICTL_GET_MAINTENANCE_MODE_CMD:
    case IPMICTL_SEND_COMMAND:
    case IPMICTL_SEND_COMMAND_SETTIME:
    case IPMICTL_RECEIVE_MSG:
    case IPMICTL_RECEIVE_MSG_TRUNC:
    case IPMICTL_SET_GETS_EVENTS_CMD:
    case IPMICTL_SET_MY_ADDRESS_CMD:
    case IPMICTL_GET_MY_ADDRESS_CMD:
    case IPMICTL_SET_MY_LUN_CMD:
    case IPMICTL_GET_MY_LUN_CMD:
    case IPMICTL_SET_MY_CHANNEL_ADDRESS_CMD:
    case IPMICTL_GET_MY_CHANNEL_ADDRESS_CMD:
    case IPMICTL_SET_MY_CHANNEL_LUN_CMD:
    case IPMICTL_GET_MY_CHANNEL_LUN_CMD:
    case IPMICTL_SET_TIMING_PARMS_CMD:
    case IPMICTL_GET_TIMING_PARMS_CMD:
    case IPMICTL_REGISTER_FOR_CMD:
    case IPMICTL_UNREGISTER_FOR_CMD:
    case IPMICTL_REGISTER_FOR_CMD_CHANS:
    case IPMICTL_UNREGISTER_FOR_CMD_CHANS:
    case IPMICTL_SET_MAINTENANCE_MODE_CMD:
        if (!arg)
            return EFAULT; /* every IPMI ioctl copies an argument in or out */
        break;
    default:
        /* ipmi_ioctl's `default: rv = -ENOTTY` for a command it does not know (FIONREAD among
         * them); the generic ones never reach it */
        return vfs_generic(req) ? EMU_IPMI_NOT_OURS : ENOTTY;
    }
    struct seg_faults f;
    if (seg_faults_read(s, &f) && f.off_err > 0)
        return f.off_err; /* the node lost its power, its BMC with it (docs/faults.md power-loss) */
    switch (req) {
    case IPMICTL_SEND_COMMAND:
        return ioctl_send(q, s, arg, io);
    case IPMICTL_SEND_COMMAND_SETTIME:
        return ioctl_send(q, s, arg + offsetof(struct ipmi_req_settime, req), io);
    case IPMICTL_RECEIVE_MSG:
    case IPMICTL_RECEIVE_MSG_TRUNC:
        return ioctl_receive(q, arg, req == IPMICTL_RECEIVE_MSG_TRUNC, io);
    case IPMICTL_SET_GETS_EVENTS_CMD:
    case IPMICTL_SET_MY_ADDRESS_CMD:
    case IPMICTL_SET_MY_LUN_CMD:
        if ((err = io->in(io->ctx, arg, &v, sizeof v)))
            return err;
        if (req == IPMICTL_SET_GETS_EVENTS_CMD)
            q->gets_events = (int)v;
        else if (req == IPMICTL_SET_MY_ADDRESS_CMD)
            q->my_address = v;
        else
            q->my_lun = v & 3;
        return 0;
    case IPMICTL_GET_MY_ADDRESS_CMD:
        return io->out(io->ctx, arg, &q->my_address, sizeof q->my_address);
    case IPMICTL_GET_MY_LUN_CMD:
        return io->out(io->ctx, arg, &q->my_lun, sizeof q->my_lun);
    case IPMICTL_GET_MY_CHANNEL_ADDRESS_CMD:
    case IPMICTL_GET_MY_CHANNEL_LUN_CMD: {
        struct ipmi_channel_lun_address_set c;
        if ((err = io->in(io->ctx, arg, &c, sizeof c)))
            return err;
        c.value = (unsigned char)(req == IPMICTL_GET_MY_CHANNEL_ADDRESS_CMD ? q->my_address : q->my_lun);
        return io->out(io->ctx, arg, &c, sizeof c);
    }
    case IPMICTL_GET_TIMING_PARMS_CMD: {
        struct ipmi_timing_parms t = {0, 0};
        return io->out(io->ctx, arg, &t, sizeof t);
    }
    case IPMICTL_GET_MAINTENANCE_MODE_CMD: /* ipmi_get_maintenance_mode, copied out as an int */
        return io->out(io->ctx, arg, &q->maintenance_mode, sizeof q->maintenance_mode);
    case IPMICTL_SET_MAINTENANCE_MODE_CMD: { /* ipmi_set_maintenance_mode: auto, off, on, else EINVAL */
        int mode;
        if ((err = io->in(io->ctx, arg, &mode, sizeof mode)))
            return err;
        if (mode != IPMI_MAINTENANCE_MODE_AUTO && mode != IPMI_MAINTENANCE_MODE_OFF && mode != IPMI_MAINTENANCE_MODE_ON)
            return EINVAL;
        q->maintenance_mode = mode;
        return 0;
    }
    default: /* the channel settings, timing, command registrations: accepted */
        return 0;
    }
}
