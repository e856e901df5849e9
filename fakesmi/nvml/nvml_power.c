/* nvml_power: power, energy and power limits: the getters, nvmlDeviceGetFieldValues (the
 * power and energy fields nvidia-smi's -q and -pl read) and the limit setters, which write
 * power_limit_mw through its validator as any tool's write would (range [min, max] mW, else
 * INVALID_ARGUMENT; a fieldSupport token there: NOT_SUPPORTED) and so are events of the
 * engine's next tick. Units are NVML's: mW and mJ. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nvml_abi.h"
#include "nvml_node.h"

#define CHECK(dev, out)                                                                                           \
    do {                                                                                                          \
        nvmlReturn_t rc_ = nv_check(dev, out);                                                                    \
        if (rc_)                                                                                                  \
            return rc_;                                                                                           \
    } while (0)

static nvmlReturn_t mw(nvmlDevice_t dev, enum nv_file f, unsigned int *out)
{
    CHECK(dev, out);
    return nv_u32(dev, f, out);
}

/* The 1 s average, as NVML reports it on Ampere and newer. */
NVML_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned int *power)
{
    return mw(dev, NF_POWER_DRAW, power);
}

NVML_API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t dev, unsigned long long *energy)
{
    CHECK(dev, energy);
    uint64_t v;
    nvmlReturn_t rc = nv_u64(dev, NF_ENERGY, &v);
    if (!rc)
        *energy = v;
    return rc;
}

/* The requested limit (what -pl set). */
NVML_API nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t dev, unsigned int *limit)
{
    return mw(dev, NF_POWER_LIMIT, limit);
}

NVML_API nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t dev, unsigned int *limit)
{
    return mw(dev, NF_POWER_DEFAULT, limit);
}

/* The limit in force, as the engine settles it toward the requested one. */
NVML_API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t dev, unsigned int *limit)
{
    return mw(dev, NF_POWER_ENFORCED, limit);
}

NVML_API nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t dev, unsigned int *minLimit,
                                                                   unsigned int *maxLimit)
{
    unsigned lo, hi;
    CHECK(dev, minLimit);
    if (!maxLimit)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t rc = nv_u32(dev, NF_POWER_MIN, &lo);
    if (!rc)
        rc = nv_u32(dev, NF_POWER_MAX, &hi);
    if (rc)
        return rc;
    *minLimit = lo;
    *maxLimit = hi;
    return NVML_SUCCESS;
}

/* Power management is deprecated in the driver the node reports (fakesmi prints
 * "[Requested functionality has been deprecated]" for power.management). */
NVML_API nvmlReturn_t nvmlDeviceGetPowerManagementMode(nvmlDevice_t dev, nvmlEnableState_t *mode)
{
    CHECK(dev, mode);
    return NVML_ERROR_DEPRECATED;
}

NVML_API nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t dev, unsigned int limit)
{
    char t[16];
    CHECK(dev, dev);
    snprintf(t, sizeof t, "%u", limit);
    return nv_write(dev, NF_POWER_LIMIT, t);
}

/* Only the GPU scope has a limit of its own; the module scope is not modelled. */
NVML_API nvmlReturn_t nvmlDeviceSetPowerManagementLimit_v2(nvmlDevice_t dev, nvmlPowerValue_v2_t *value)
{
    CHECK(dev, value);
    if (value->version != nvmlPowerValue_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (value->powerScope != 0)
        return NVML_ERROR_NOT_SUPPORTED;
    return nvmlDeviceSetPowerManagementLimit(dev, value->powerValueMw);
}

/* One field of the GPU scope: its file and value type. */
static void field(nvmlDevice_t dev, nvmlFieldValue_t *v)
{
    enum nv_file f;
    bool wide = false;
    switch (v->fieldId) {
    case NVML_FI_DEV_POWER_AVERAGE: f = NF_POWER_DRAW; break;
    case NVML_FI_DEV_POWER_INSTANT: f = NF_POWER_INSTANT; break;
    case NVML_FI_DEV_POWER_MIN_LIMIT: f = NF_POWER_MIN; break;
    case NVML_FI_DEV_POWER_MAX_LIMIT: f = NF_POWER_MAX; break;
    case NVML_FI_DEV_POWER_DEFAULT_LIMIT: f = NF_POWER_DEFAULT; break;
    case NVML_FI_DEV_POWER_CURRENT_LIMIT: f = NF_POWER_ENFORCED; break;
    case NVML_FI_DEV_POWER_REQUESTED_LIMIT: f = NF_POWER_LIMIT; break;
    case NVML_FI_DEV_MEMORY_TEMP: f = NF_TEMP_MEMORY; break;
    case NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION:
    case NVML_FI_DEV_ENERGY: f = NF_ENERGY; wide = true; break;
    default: v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED; return;
    }
    bool power = v->fieldId >= NVML_FI_DEV_POWER_AVERAGE && v->fieldId <= NVML_FI_DEV_POWER_REQUESTED_LIMIT;
    if (power && v->scopeId != 0) { /* module (1) and memory (2) power are not modelled */
        v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        return;
    }
    uint64_t x;
    v->nvmlReturn = nv_u64(dev, f, &x);
    if (v->nvmlReturn)
        return;
    if (wide) {
        v->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
        v->value.ullVal = x;
    } else {
        v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
        v->value.uiVal = (unsigned)x;
    }
}

NVML_API nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t dev, int valuesCount, nvmlFieldValue_t *values)
{
    CHECK(dev, values);
    if (valuesCount < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (int i = 0; i < valuesCount; i++) {
        nvmlFieldValue_t *v = &values[i];
        v->timestamp = (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
        v->latencyUsec = 0;
        memset(&v->value, 0, sizeof v->value);
        field(dev, v);
    }
    return NVML_SUCCESS;
}
