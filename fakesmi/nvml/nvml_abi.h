/* nvml_abi: the C ABI libhwemu-nvml.so implements, as NVIDIA's libnvidia-ml.so.1 defines it
 * (NVML API version 12, the CUDA 12.2 nvml.h that NVIDIA/go-nvml commit 075f45f carries; driver
 * branch 535). Only the types and constants the library reads or writes are here; every struct
 * layout is checked below with _Static_assert (x86-64). fakesmi/nvml/README.md is the contract:
 * which symbols exist, what each answers from the node's segment, and which return codes. */
#ifndef HWEMU_NVML_ABI_H
#define HWEMU_NVML_ABI_H
#include <stddef.h>
#include <stdint.h>

typedef int nvmlReturn_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15, /* faults.md §1.1: the GPU fell off the bus */
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_UNKNOWN = 999,
};

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;
typedef int nvmlEnableState_t;   /* 0 disabled, 1 enabled */

/* NVML events (faults.md §2.2): the Xid event type and what nvmlEventSetWait_v2 fills; the v1
 * nvmlEventSetWait fills only the first three fields (its struct predates the MIG ids). */
#define NVML_EVENT_TYPE_XID 0x8ULL /* nvmlEventTypeXidCriticalError: eventData is the Xid */
typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;     /* 0xFFFFFFFF: not a MIG instance */
    unsigned int computeInstanceId;
} nvmlEventData_t;
_Static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t as in nvml.h");
typedef int nvmlClockType_t;     /* 0 graphics, 1 SM, 2 memory, 3 video */
typedef int nvmlClockId_t;       /* 0 current, 1 app target, 2 app default, 3 customer boost max */
typedef int nvmlPstates_t;       /* 0..15, 32 unknown */

enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };
enum { NVML_CLOCK_ID_CURRENT = 0, NVML_CLOCK_ID_APP_CLOCK_TARGET = 1, NVML_CLOCK_ID_APP_CLOCK_DEFAULT = 2,
       NVML_CLOCK_ID_CUSTOMER_BOOST_MAX = 3 };
#define NVML_CLOCK_LIMIT_ID_RANGE_START 0xffffff00u
#define NVML_CLOCK_LIMIT_ID_TDP 0xffffff01u
#define NVML_CLOCK_LIMIT_ID_UNLIMITED 0xffffff02u
#define NVML_PSTATE_UNKNOWN 32
#define NVML_BRAND_NVIDIA 14
#define NVML_DEVICE_ARCH_UNKNOWN 0xffffffffu
#define NVML_VALUE_NOT_AVAILABLE 0xffffffffffffffffULL

/* NVML_STRUCT_VERSION(d, v) = sizeof(struct) | v << 24 */
#define NVML_STRUCT_VERSION(size, v) ((unsigned)(size) | (unsigned)(v) << 24)

typedef struct {
    char busIdLegacy[16];        /* "%04X:%02X:%02X.0" */
    unsigned int domain, bus, device;
    unsigned int pciDeviceId;    /* device << 16 | 0x10DE */
    unsigned int pciSubSystemId; /* subsystem device << 16 | subsystem vendor */
    char busId[32];              /* "%08X:%02X:%02X.0" */
} nvmlPciInfo_t;                 /* the v2 and v3 layout */

typedef struct { /* what nvmlDeviceGetPciInfo (v1) fills: the 16-byte bus id, then the numbers */
    char busId[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    unsigned int reserved[4];
} nvmlPciInfo_v1_t;

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 NVML_STRUCT_VERSION(sizeof(nvmlMemory_v2_t), 2)

typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;

typedef struct {
    unsigned int version;
    unsigned char powerScope;    /* 0 GPU, 1 module */
    unsigned int powerValueMw;
} nvmlPowerValue_v2_t;
#define nvmlPowerValue_v2 NVML_STRUCT_VERSION(sizeof(nvmlPowerValue_v2_t), 2)

typedef union {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    int siVal;
} nvmlValue_t;
enum { NVML_VALUE_TYPE_DOUBLE = 0, NVML_VALUE_TYPE_UNSIGNED_INT = 1, NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
       NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3, NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4, NVML_VALUE_TYPE_SIGNED_INT = 5 };

typedef struct {
    unsigned int fieldId;
    unsigned int scopeId;        /* power fields: 0 GPU, 1 module */
    long long timestamp;         /* us, CLOCK_REALTIME */
    long long latencyUsec;
    int valueType;
    nvmlReturn_t nvmlReturn;
    nvmlValue_t value;
} nvmlFieldValue_t;

/* The field ids the library answers (nvml.h NVML_FI_DEV_*). */
enum {
    NVML_FI_DEV_MEMORY_TEMP = 82,
    NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION = 83,
    NVML_FI_DEV_POWER_AVERAGE = 185,
    NVML_FI_DEV_POWER_INSTANT = 186,
    NVML_FI_DEV_POWER_MIN_LIMIT = 187,
    NVML_FI_DEV_POWER_MAX_LIMIT = 188,
    NVML_FI_DEV_POWER_DEFAULT_LIMIT = 189,
    NVML_FI_DEV_POWER_CURRENT_LIMIT = 190,
    NVML_FI_DEV_ENERGY = 191,
    NVML_FI_DEV_POWER_REQUESTED_LIMIT = 192,
};

_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t is 68 bytes");
_Static_assert(sizeof(nvmlPciInfo_v1_t) == 52, "nvmlPciInfo_v1_t is 52 bytes");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40 && nvmlMemory_v2 == 0x02000028, "nvmlMemory_v2_t");
_Static_assert(sizeof(nvmlPowerValue_v2_t) == 12 && nvmlPowerValue_v2 == 0x0200000C, "nvmlPowerValue_v2_t");
_Static_assert(sizeof(nvmlFieldValue_t) == 40 && offsetof(nvmlFieldValue_t, value) == 32, "nvmlFieldValue_t");

/* Exported symbols are marked NVML_API; everything else is hidden. */
#define NVML_API __attribute__((visibility("default")))
/* Another exported name of the function fn (the same signature and meaning). */
#define NVML_ALIAS(name, fn) NVML_API __typeof__(fn) name __attribute__((alias(#fn)))

/* Entry points the library's own files call. */
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t dev, unsigned int *limit);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t dev, unsigned int *index);

#endif
