/* emu_bmc: the node's baseboard management controller as its in-band interface sees it: one
 * IPMI request (network function, command, data) in, one response (completion code first) out.
 * Front-end independent (emu_ipmi.c carries the messages of /dev/ipmi0 for both routes); reads the
 * segment only.
 *
 * Answers (IPMI 2.0 and DCMI 1.5 messages; byte layouts as FreeIPMI 1.6.10's templates and
 * ipmitool 1.8.19's structures encode them):
 *   App 0x06 / 0x01 Get Device ID       device 0x20, revision 1, firmware 2.10, IPMI 2.0, no
 *                                       additional device support, manufacturer and product 0
 *   DCMI 0x2C / 0x01 Get DCMI Capability Info, parameter 1: DCMI 1.5, parameter revision 2, no
 *                                       mandatory platform capability emulated, power management
 *                                       (optional byte bit 0), in-band system interface (bit 0)
 *   DCMI 0x2C / 0x02 Get Power Reading, mode 1 (system power statistics): current, minimum,
 *                                       maximum, average W (u16 LE, rounded), IPMI timestamp (the
 *                                       wall clock, s), reporting period (ms, since the engine
 *                                       opened the node), state 0x40 (measurement active); from
 *                                       state/platform/power
 *   DCMI 0x2C / 0x03 Get Power Limit    0x80 "no power limit set"
 *   any other request                   0xC1 invalid command (PICMG and VITA probes included);
 *                                       a DCMI request without the group extension 0xDC, or an
 *                                       unsupported mode or parameter, 0xCC invalid data field
 * Not emulated: sensors, SEL, SDR, FRU, chassis control, power limiting through DCMI, LAN. */
#ifndef HWEMU_SHIM_EMU_BMC_H
#define HWEMU_SHIM_EMU_BMC_H
#include "segment.h"

#include <stddef.h>
#include <stdint.h>

#define BMC_RSP_MAX 64

/* The response to a request of netfn (even: a request) / cmd with data[0..len) into rsp
 * (BMC_RSP_MAX bytes): its length (at least 1, the completion code). now_unix: the wall clock. */
size_t emu_bmc_answer(struct seg *s, uint8_t netfn, uint8_t cmd, const uint8_t *data, size_t len, int64_t now_unix,
                      uint8_t *rsp);

#endif
