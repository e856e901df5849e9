/* rsmi_status: rocm_smi's status codes and texts; see rsmi_status.h. */
#include "rsmi_status.h"

#include <errno.h>
#include <stddef.h>

static const char *const texts[] = {
    [RSMI_STATUS_SUCCESS] = "RSMI_STATUS_SUCCESS: The function has been executed successfully.",
    [RSMI_STATUS_INVALID_ARGS] = "RSMI_STATUS_INVALID_ARGS: The provided arguments do not meet the preconditions "
                                 "required for calling this function.",
    [RSMI_STATUS_NOT_SUPPORTED] = "RSMI_STATUS_NOT_SUPPORTED: This function is not supported in the current "
                                  "environment.",
    [RSMI_STATUS_FILE_ERROR] = "RSMI_STATUS_FILE_ERROR: There was an error in finding or opening a file or "
                               "directory. The operation may not be supported by this Linux kernel version.",
    [RSMI_STATUS_PERMISSION] = "RSMI_STATUS_PERMISSION: The user ID of the calling process does not have sufficient "
                               "permission to execute a command.  Often this is fixed by running as root (sudo).",
    [RSMI_STATUS_OUT_OF_RESOURCES] = "Unable to acquire memory or other resource",
    [RSMI_STATUS_INTERNAL_EXCEPTION] = "An internal exception was caught",
    [RSMI_STATUS_INPUT_OUT_OF_BOUNDS] = "The provided input is out of allowable or safe range",
    [RSMI_STATUS_INIT_ERROR] = "An error occurred during initialization, during monitor discovery or when when "
                               "initializing internal data structures",
    [RSMI_STATUS_NOT_YET_IMPLEMENTED] = "The called function has not been implemented in this system for this device "
                                        "type",
    [RSMI_STATUS_NOT_FOUND] = "An item required to complete the call was not found",
    [RSMI_STATUS_INSUFFICIENT_SIZE] = "Not enough resources were available to fully execute the call",
    [RSMI_STATUS_INTERRUPT] = "An interrupt occurred while executing the function",
    [RSMI_STATUS_UNEXPECTED_SIZE] = "Data (usually from reading a file) was out of range from what was expected",
    [RSMI_STATUS_NO_DATA] = "No data was found (usually from reading a file) where data was expected",
    [RSMI_STATUS_UNEXPECTED_DATA] = "Data (usually from reading a file) was not of the type that was expected",
    [RSMI_STATUS_BUSY] = "A resource or mutex could not be acquired because it is already being used",
    [RSMI_STATUS_REFCOUNT_OVERFLOW] = "An internal reference counter exceeded INT32_MAX",
};

/* rsmi_status_map: rocm_smi code -> AMD SMI code. */
static const struct {
    uint32_t rsmi, amdsmi;
} map[] = {
    {RSMI_STATUS_SUCCESS, 0}, {RSMI_STATUS_INVALID_ARGS, 1}, {RSMI_STATUS_NOT_SUPPORTED, 2},
    {RSMI_STATUS_FILE_ERROR, 14}, {RSMI_STATUS_PERMISSION, 10}, {RSMI_STATUS_OUT_OF_RESOURCES, 15},
    {RSMI_STATUS_INTERNAL_EXCEPTION, 16}, {RSMI_STATUS_INPUT_OUT_OF_BOUNDS, 17}, {RSMI_STATUS_INIT_ERROR, 32},
    {RSMI_STATUS_NOT_YET_IMPLEMENTED, 3}, {RSMI_STATUS_NOT_FOUND, 31}, {RSMI_STATUS_INSUFFICIENT_SIZE, 41},
    {RSMI_STATUS_INTERRUPT, 11}, {RSMI_STATUS_UNEXPECTED_SIZE, 42}, {RSMI_STATUS_NO_DATA, 40},
    {RSMI_STATUS_UNEXPECTED_DATA, 43}, {RSMI_STATUS_BUSY, 30}, {RSMI_STATUS_REFCOUNT_OVERFLOW, 19},
    {RSMI_STATUS_UNKNOWN_ERROR, 0xFFFFFFFF},
};

const char *rsmi_text(uint32_t status)
{
    if (status == RSMI_STATUS_UNKNOWN_ERROR)
        return "An unknown error prevented the call from completing successfully";
    return status < sizeof texts / sizeof texts[0] ? texts[status] : NULL;
}

uint32_t rsmi_from_errno(int err)
{
    switch (err) {
    case 0: return RSMI_STATUS_SUCCESS;
    case ESRCH: return RSMI_STATUS_NOT_FOUND;
    case EACCES: return RSMI_STATUS_PERMISSION;
    case EPERM:
    case ENOENT:
    case EOPNOTSUPP: return RSMI_STATUS_NOT_SUPPORTED;
    case EINVAL:
    case ERANGE: return RSMI_STATUS_INVALID_ARGS;
    case EBADF:
    case EISDIR: return RSMI_STATUS_FILE_ERROR;
    case EINTR: return RSMI_STATUS_INTERRUPT;
    case EIO: return RSMI_STATUS_UNEXPECTED_SIZE;
    case ENXIO: return RSMI_STATUS_UNEXPECTED_DATA;
    case EBUSY: return RSMI_STATUS_BUSY;
    default: return RSMI_STATUS_UNKNOWN_ERROR;
    }
}

uint32_t rsmi_to_amdsmi(uint32_t rsmi)
{
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].rsmi == rsmi)
            return map[i].amdsmi;
    return 0xFFFFFFFF;
}

bool rsmi_from_amdsmi(uint32_t amdsmi, uint32_t *rsmi)
{
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].amdsmi == amdsmi) {
            *rsmi = map[i].rsmi;
            return true;
        }
    return false;
}
