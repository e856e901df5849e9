/* emu_ipmi: the OpenIPMI message layer; see emu_ipmi.h. */
#include "emu_ipmi.h"

#include <errno.h>
#include <string.h>

#define SI_ADDR_TYPE 0x0C    /* IPMI_SYSTEM_INTERFACE_ADDR_TYPE */
#define IPMB_ADDR_TYPE 0x01  /* IPMI_IPMB_ADDR_TYPE */
#define IPMB_BCAST_TYPE 0x41 /* IPMI_IPMB_BROADCAST_ADDR_TYPE */
#define BMC_CHANNEL 0x0F     /* IPMI_BMC_CHANNEL */

void emu_ipmi_init(struct ipmi_queue *q)
{
    memset(q, 0, sizeof *q);
    q->my_address = 0x20; /* IPMI_BMC_SLAVE_ADDR */
    q->my_lun = 2;
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
    if (ipmb) {
        m->data[0] = 0xC3; /* no IPMB device answers: the driver's timeout */
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
