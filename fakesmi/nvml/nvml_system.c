/* nvml_system: the library-wide entry points: init and shutdown, nvmlErrorString (the 535
 * library's strings), the system queries (driver, NVML and CUDA versions, process names) and
 * the event sets (Xid events a fault raises, docs/faults.md). */
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

/* Event sets (faults.md §2.2): Xid events only (nvmlEventTypeXidCriticalError). A GPU's Xids are
 * its state/nvml/gpu<i>/xid, "<seq> <x0> <x1> <x2> <x3>" (the last four, x0 the newest; a fault
 * raises them: docs/faults.md); a set takes the ones after its registration, one a wait, the
 * oldest first, and of more than four between two waits the last four. Any other type is
 * NOT_SUPPORTED (the set stays usable, as the header says). */
#define XIDS 4
#define EVENT_GPUS 64
struct nvmlEventSet_st {
    unsigned long long types[EVENT_GPUS]; /* registered types per GPU index */
    unsigned long seen[EVENT_GPUS];       /* the Xid sequence delivered up to */
};

/* GPU g's Xid sequence and its last Xids, xid[0] the newest (0: none, or no file). */
static unsigned long xid_now(const struct nvmlDevice_st *g, int xid[XIDS])
{
    char t[64];
    unsigned long seq = 0;
    memset(xid, 0, sizeof(int) * XIDS);
    if (nv_text(g, NF_XID, t, sizeof t) != NVML_SUCCESS ||
        sscanf(t, "%lu %d %d %d %d", &seq, &xid[0], &xid[1], &xid[2], &xid[3]) < 2)
        return 0;
    return seq;
}

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
    if (rc)
        return rc;
    if (types & ~NVML_EVENT_TYPE_XID || !types || dev->index >= EVENT_GPUS)
        return NVML_ERROR_NOT_SUPPORTED;
    int xid[XIDS];
    set->types[dev->index] |= types;
    set->seen[dev->index] = xid_now(dev, xid); /* events before the registration are not delivered */
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t dev, unsigned long long *types)
{
    nvmlReturn_t rc = nv_check(dev, types);
    if (rc)
        return rc;
    *types = NVML_EVENT_TYPE_XID;
    return NVML_SUCCESS;
}

/* A wait: at once when an Xid came on a registered GPU since the last delivery, else every
 * 10 ms until timeoutms (TIMEOUT). v2 fills the whole nvmlEventData_t, v1 its first fields. */
static nvmlReturn_t wait_event(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms, bool v2)
{
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (!set || !data)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned waited = 0;; waited += 10) {
        for (unsigned i = 0; i < nv_count() && i < EVENT_GPUS; i++) {
            int xid[XIDS];
            unsigned long seq;
            if (!(set->types[i] & NVML_EVENT_TYPE_XID) || (seq = xid_now(nv_gpu(i), xid)) <= set->seen[i])
                continue;
            /* the oldest not delivered yet that the file still holds */
            unsigned long next = seq - set->seen[i] > XIDS ? seq - XIDS + 1 : set->seen[i] + 1;
            set->seen[i] = next;
            data->device = nv_gpu(i);
            data->eventType = NVML_EVENT_TYPE_XID;
            data->eventData = (unsigned long long)xid[seq - next];
            if (v2)
                data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFFu;
            return NVML_SUCCESS;
        }
        if (waited >= timeoutms)
            return NVML_ERROR_TIMEOUT;
        unsigned step = timeoutms - waited < 10 ? timeoutms - waited : 10;
        struct timespec ts = {0, (long)step * 1000000};
        while (nanosleep(&ts, &ts))
            ;
    }
}

NVML_API nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
    return wait_event(set, data, timeoutms, true);
}

NVML_API nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
    return wait_event(set, data, timeoutms, false);
}

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
