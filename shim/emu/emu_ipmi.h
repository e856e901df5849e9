/* emu_ipmi: the OpenIPMI driver's ioctls and message layer for one open /dev/ipmi0, front-end
 * independent: the one list of the ioctls hwemu answers (emu_ipmi_ioctl), used by the shim
 * (preload/ipmi.c, in-process pointers) and the seccomp supervisor (supervisor/sv_answer.c, the
 * target's memory), which bring only the copying of the arguments in and out and the
 * descriptor's readiness; this file decides what the kernel would
 * (drivers/char/ipmi/ipmi_devintf.c, ipmi_msghandler.c; include/uapi/linux/ipmi.h):
 *   ioctls   SEND_COMMAND(_SETTIME) and RECEIVE_MSG(_TRUNC) below; SET_GETS_EVENTS,
 *            SET/GET_MY_ADDRESS, _MY_LUN, GET_MY_CHANNEL_ADDRESS, _MY_CHANNEL_LUN,
 *            GET_TIMING_PARMS remembered or answered from the queue's fields; SET_MY_CHANNEL_*,
 *            SET_TIMING_PARMS, (UN)REGISTER_FOR_CMD(_CHANS), SET/GET_MAINTENANCE_MODE accepted;
 *            no event and no command ever arrives. A NULL argument is EFAULT (the driver's
 *            copy_from_user) except for GET_MAINTENANCE_MODE, which takes none.
 *   send     address length 8..40, a system-interface address on channel 0x0F with LUN <= 3 or an
 *            IPMB address, a request netfn, not App Get Message / Send Message / Read Event
 *            Message Buffer (EINVAL); at most 272 data bytes (EMSGSIZE). The BMC's answer
 *            (emu_bmc.c) is queued at once with the caller's msgid, netfn + 1, cc first; an IPMB
 *            address is answered cc 0xC3 (the node has no IPMB devices). 16 answers wait at most
 *            (EBUSY beyond).
 *   receive  the head of the queue: EAGAIN when empty; the caller's buffers decide EMSGSIZE
 *            (emu_ipmi_fit)
 * No allocation, no lock (one caller per file at a time), no system call. */
#ifndef HWEMU_SHIM_EMU_IPMI_H
#define HWEMU_SHIM_EMU_IPMI_H
#include "emu_bmc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IPMI_QUEUE 16
#define IPMI_DATA_MAX 272 /* IPMI_MAX_MSG_LENGTH */
#define IPMI_ADDR_MAX 40  /* sizeof(struct ipmi_addr) */
#define IPMI_SI_ADDR_LEN 8 /* sizeof(struct ipmi_system_interface_addr) */

struct ipmi_message {
    long msgid;
    uint8_t addr[IPMI_SI_ADDR_LEN]; /* struct ipmi_system_interface_addr as delivered */
    uint8_t netfn, cmd;
    uint16_t len;
    uint8_t data[BMC_RSP_MAX];
};

struct ipmi_queue {
    unsigned my_address, my_lun;
    int gets_events;
    unsigned head, count;
    struct ipmi_message q[IPMI_QUEUE];
};

void emu_ipmi_init(struct ipmi_queue *q);
/* IPMICTL_SEND_COMMAND with the address (addr_len bytes, copied in) and the message: 0 or errno. */
int emu_ipmi_send(struct ipmi_queue *q, struct seg *s, const uint8_t *addr, unsigned addr_len, long msgid,
                  uint8_t netfn, uint8_t cmd, const uint8_t *data, unsigned len, int64_t now_unix);
/* The message a receive takes, or NULL when the queue is empty (EAGAIN). */
const struct ipmi_message *emu_ipmi_head(const struct ipmi_queue *q);
/* Removes the head (after a receive took it). */
void emu_ipmi_drop(struct ipmi_queue *q);
/* A receive into buffers of addr_cap and data_cap bytes (trunc: RECEIVE_MSG_TRUNC): 0 (all of
 * it), EINVAL (address buffer too small: kept), EMSGSIZE (data too big: *take says whether the
 * truncated message is taken), with *copy the data bytes to copy. */
int emu_ipmi_fit(const struct ipmi_message *m, unsigned addr_cap, unsigned data_cap, bool trunc, unsigned *copy,
                 bool *take);

/* How a front end reaches the caller's memory (an address in the caller's address space). */
struct emu_ipmi_io {
    /* Copy n bytes at addr into buf / from buf to addr: 0, EFAULT, or EMU_IPMI_GONE. */
    int (*in)(void *ctx, uint64_t addr, void *buf, size_t n);
    int (*out)(void *ctx, uint64_t addr, const void *buf, size_t n);
    /* Does the call still stand, right before a message is queued? NULL: always. */
    bool (*valid)(void *ctx);
    void *ctx;
};
#define EMU_IPMI_NOT_OURS (-1) /* not an IPMI ioctl: the descriptor's own (FIOCLEX, FIONBIO, ...) */
#define EMU_IPMI_GONE (-2)     /* the caller went away while being answered (io's in/out/valid) */

/* The ioctl req with argument arg on the file of queue q, node segment s: 0, an errno,
 * EMU_IPMI_NOT_OURS or EMU_IPMI_GONE. The descriptor is readable exactly while q->count is
 * not 0: the caller compares it before and after (ipmi_poll). */
int emu_ipmi_ioctl(struct ipmi_queue *q, struct seg *s, unsigned long req, uint64_t arg, const struct emu_ipmi_io *io);

#endif
