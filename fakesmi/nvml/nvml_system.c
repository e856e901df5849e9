/* nvml_system: the library-wide entry points: init and shutdown, nvmlErrorString (the 535
 * library's strings), the system queries (driver, NVML and CUDA versions, process names) and
 * the event sets nvidia-smi creates for its table (they never deliver an event). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml_abi.h"
#include "nvml_node.h"

NVML_API nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    (void)flags; /* NO_GPUS (1) and NO_ATTACH (2) change nothing here */
    return nv_init();
}

NVML_API nvmlReturn_t nvmlInit_v2(void)
{
    return nv_init();
}
NVML_ALIAS(nvmlInit, nvmlInit_v2);

NVML_API nvmlReturn_t nvmlShutdown(void)
{
    return nv_shutdown();
}

/* The strings of the real 535 library, by code. */
NVML_API const char *nvmlErrorString(nvmlReturn_t result)
{
    static const char *const text[] = {
        "Success", "Uninitialized", "Invalid Argument", "Not Supported", "Insufficient Permissions",
        "Already Initialized", "Not Found", "Insufficient Size", "Insufficient External Power",
        "Driver Not Loaded", "Timeout", "Interrupt Request Issue", "NVML Shared Library Not Found",
        "Function Not Found", "Corrupted infoROM", "GPU is lost", "GPU requires reset",
        "GPU access blocked by the operating system", "Driver/library version mismatch",
        "In use by another client", "Insufficient Memory", "No data", "vGPU ECC not supported",
        "Insufficient Resources", "Invalid Frequency", "Argument version mismatch",
        "Requested functionality has been deprecated", "System is not in ready state",
    };
    if (result >= 0 && (size_t)result < sizeof text / sizeof text[0])
        return text[result];
    return "Unknown Error";
}

NVML_API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    char t[64];
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (nv_node_text("state/nvml/driver_version", t, sizeof t))
        return NVML_ERROR_NOT_SUPPORTED;
    return nv_copy(t, version, length);
}

/* "<CUDA major>.<driver version>", as the 535 library's "12.535.261.03"; works without init
 * once a node was mapped, as the real one does. */
NVML_API nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    char driver[64], cuda[64], t[160];
    if (!nv_ready() && nv_init() == NVML_SUCCESS)
        nv_shutdown();
    if (nv_node_text("state/nvml/driver_version", driver, sizeof driver) ||
        nv_node_text("state/nvml/cuda_version", cuda, sizeof cuda))
        return NVML_ERROR_UNINITIALIZED;
    snprintf(t, sizeof t, "%d.%s", atoi(cuda), driver);
    return nv_copy(t, version, length);
}

/* "13.1" -> 13010 (major * 1000 + minor * 10). */
NVML_API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
    char t[64];
    int major = 0, minor = 0;
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (!cudaDriverVersion)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (nv_node_text("state/nvml/cuda_version", t, sizeof t) || sscanf(t, "%d.%d", &major, &minor) < 1)
        return NVML_ERROR_NOT_SUPPORTED;
    *cudaDriverVersion = major * 1000 + minor * 10;
    return NVML_SUCCESS;
}
NVML_ALIAS(nvmlSystemGetCudaDriverVersion, nvmlSystemGetCudaDriverVersion_v2);

/* The emulated GPUs run no processes: no name is known for any pid. */
NVML_API nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
    (void)pid;
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (!name || !length)
        return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_ERROR_NOT_FOUND;
}

/* Event sets: creatable (nvidia-smi's table and -q stop with "Internal NVML error" otherwise);
 * no event type can be registered, so a wait only times out. */
struct nvmlEventSet_st {
    int unused;
};

NVML_API nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (!set)
        return NVML_ERROR_INVALID_ARGUMENT;
    *set = calloc(1, sizeof **set);
    return *set ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

NVML_API nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    free(set);
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t dev, unsigned long long types, nvmlEventSet_t set)
{
    nvmlReturn_t rc = nv_check(dev, set);
    return rc ? rc : NVML_ERROR_NOT_SUPPORTED;
}

NVML_API nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t dev, unsigned long long *types)
{
    nvmlReturn_t rc = nv_check(dev, types);
    if (rc)
        return rc;
    *types = 0;
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, void *data, unsigned int timeoutms)
{
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (!set || !data)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct timespec ts = {timeoutms / 1000, (long)(timeoutms % 1000) * 1000000};
    while (nanosleep(&ts, &ts))
        ;
    return NVML_ERROR_TIMEOUT;
}
NVML_ALIAS(nvmlEventSetWait, nvmlEventSetWait_v2);

/* No GPU is excluded from the driver. */
NVML_API nvmlReturn_t nvmlGetExcludedDeviceCount(unsigned int *count)
{
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = 0;
    return NVML_SUCCESS;
}
NVML_ALIAS(nvmlGetBlacklistDeviceCount, nvmlGetExcludedDeviceCount);

/* No S-class units (Quadro Plex) exist. */
NVML_API nvmlReturn_t nvmlUnitGetCount(unsigned int *unitCount)
{
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (!unitCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    *unitCount = 0;
    return NVML_SUCCESS;
}
