/* rsmi_status: rocm_smi's status codes, the texts rsmi_status_string gives them (Debian's
 * librocm_smi64 5.2.3 word for word; tests/amdsmi/ compares the two libraries), its errno
 * mapping (ErrnoToRsmiStatus: what a sysfs read or write fails with), and AMD SMI's mapping of
 * them (rsmi_status_map of amd_smi_common.h), which both libraries' callers see. */
#ifndef HWEMU_RSMI_STATUS_H
#define HWEMU_RSMI_STATUS_H
#include <stdbool.h>
#include <stdint.h>

enum {
    RSMI_STATUS_SUCCESS = 0, RSMI_STATUS_INVALID_ARGS = 1, RSMI_STATUS_NOT_SUPPORTED = 2, RSMI_STATUS_FILE_ERROR = 3,
    RSMI_STATUS_PERMISSION = 4, RSMI_STATUS_OUT_OF_RESOURCES = 5, RSMI_STATUS_INTERNAL_EXCEPTION = 6,
    RSMI_STATUS_INPUT_OUT_OF_BOUNDS = 7, RSMI_STATUS_INIT_ERROR = 8, RSMI_STATUS_NOT_YET_IMPLEMENTED = 9,
    RSMI_STATUS_NOT_FOUND = 10, RSMI_STATUS_INSUFFICIENT_SIZE = 11, RSMI_STATUS_INTERRUPT = 12,
    RSMI_STATUS_UNEXPECTED_SIZE = 13, RSMI_STATUS_NO_DATA = 14, RSMI_STATUS_UNEXPECTED_DATA = 15,
    RSMI_STATUS_BUSY = 16, RSMI_STATUS_REFCOUNT_OVERFLOW = 17, RSMI_STATUS_UNKNOWN_ERROR = 0xFFFFFFFF,
};

/* rsmi_status_string's text for a code; NULL for one 5.2.3 does not know. */
const char *rsmi_text(uint32_t status);
/* ErrnoToRsmiStatus: 0 SUCCESS, EACCES PERMISSION, EPERM and ENOENT NOT_SUPPORTED, ... (and
 * EINVAL, which the library's own range check raises before the write, INVALID_ARGS). */
uint32_t rsmi_from_errno(int err);
/* AMD SMI's status for a rocm_smi one. */
uint32_t rsmi_to_amdsmi(uint32_t rsmi);
/* The rocm_smi status an AMD SMI one maps back from; false when none does. */
bool rsmi_from_amdsmi(uint32_t amdsmi, uint32_t *rsmi);

#endif
