/* emu_bmc: IPMI and DCMI answers of the node's BMC; see emu_bmc.h. */
#include "emu_bmc.h"
#include "emu.h"

#include <stdio.h>
#include <string.h>

#define NETFN_APP 0x06
#define NETFN_DCMI 0x2C
#define DCMI_GROUP 0xDC
#define CC_OK 0x00
#define CC_NO_LIMIT 0x80
#define CC_INVALID_CMD 0xC1
#define CC_INVALID_FIELD 0xCC

/* The node's power figures from state/platform/power: false when the node has none. */
static bool platform_power(struct seg *s, double w[4], double *period_ms)
{
    uint32_t e = seg_lookup(s, "state/platform/power", 20);
    if (e == SEG_NONE)
        return false;
    char tmp[SEG_TEXT_MAX + 1];
    size_t n;
    const char *t = seg_read(s, e, emu_now_ns(), tmp, &n);
    if (!t)
        return false; /* the segment shrank under us */
    char text[SEG_TEXT_MAX + 1];
    if (n > SEG_TEXT_MAX)
        n = SEG_TEXT_MAX;
    memcpy(text, t, n);
    text[n] = 0;
    return sscanf(text, "%lf %lf %lf %lf %lf", &w[0], &w[1], &w[2], &w[3], period_ms) == 5;
}

static void put16(uint8_t *p, double w)
{
    long v = w > 0 ? (long)(w + 0.5) : 0;
    if (v < 0)
        v = 0;
    if (v > 0xFFFF)
        v = 0xFFFF;
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint64_t v)
{
    if (v > 0xFFFFFFFFu)
        v = 0xFFFFFFFFu;
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static size_t power_reading(struct seg *s, const uint8_t *data, size_t len, int64_t now_unix, uint8_t *rsp)
{
    double w[4], period;
    if (len < 4 || data[0] != DCMI_GROUP || data[1] != 0x01)
        return rsp[0] = CC_INVALID_FIELD, 1;
    if (!platform_power(s, w, &period))
        return rsp[0] = CC_INVALID_FIELD, 1;
    rsp[0] = CC_OK;
    rsp[1] = DCMI_GROUP;
    for (int i = 0; i < 4; i++)
        put16(rsp + 2 + 2 * i, w[i]);
    put32(rsp + 10, (uint64_t)(now_unix > 0 ? now_unix : 0));
    put32(rsp + 14, (uint64_t)(period > 0 ? period : 0));
    rsp[18] = 0x40; /* power measurement active */
    return 19;
}

size_t emu_bmc_answer(struct seg *s, uint8_t netfn, uint8_t cmd, const uint8_t *data, size_t len, int64_t now_unix,
                      uint8_t *rsp)
{
    if (netfn == NETFN_APP && cmd == 0x01) { /* Get Device ID */
        static const uint8_t id[] = {CC_OK, 0x20, 0x01, 0x02, 0x10, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
        memcpy(rsp, id, sizeof id);
        return sizeof id;
    }
    if (netfn != NETFN_DCMI || (cmd != 0x01 && cmd != 0x02 && cmd != 0x03))
        return rsp[0] = CC_INVALID_CMD, 1;
    if (len < 1 || data[0] != DCMI_GROUP)
        return rsp[0] = CC_INVALID_FIELD, 1;
    switch (cmd) {
    case 0x01: /* Get DCMI Capability Info */
        if (len < 2 || data[1] != 0x01)
            return rsp[0] = CC_INVALID_FIELD, 1;
        {
            static const uint8_t caps[] = {CC_OK, DCMI_GROUP, 0x01, 0x05, 0x02, 0x00, 0x01, 0x01};
            memcpy(rsp, caps, sizeof caps);
            return sizeof caps;
        }
    case 0x02:
        return power_reading(s, data, len, now_unix, rsp);
    default: /* Get Power Limit */
        rsp[0] = CC_NO_LIMIT;
        rsp[1] = DCMI_GROUP;
        return 2;
    }
}
