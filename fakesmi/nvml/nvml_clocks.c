/* nvml_clocks: clocks and clock reasons: current and maximum clocks, the supported-clock
 * tables (the two-call protocol: a count too small gets INSUFFICIENT_SIZE and the count
 * needed, nothing written), the clock-event reasons, and the locked-clock setters, which
 * write locked_{gpu,memory}_clocks through their validator (the driver's clamp of the maximum,
 * min above max INVALID_ARGUMENT) as any tool's write would, so they are events of the next
 * tick. Application clocks are deprecated in the driver the node reports: DEPRECATED, as
 * fakesmi prints them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml_abi.h"
#include "nvml_node.h"

#define CHECK(dev, out)                                                                                           \
    do {                                                                                                          \
        nvmlReturn_t rc_ = nv_check(dev, out);                                                                    \
        if (rc_)                                                                                                  \
            return rc_;                                                                                           \
    } while (0)

NVML_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t dev, nvmlClockType_t type, unsigned int *clock)
{
    static const enum nv_file files[] = {NF_CLK_GRAPHICS, NF_CLK_SM, NF_CLK_MEMORY, NF_CLK_VIDEO};
    CHECK(dev, clock);
    if (type < 0 || type > 3)
        return NVML_ERROR_INVALID_ARGUMENT;
    return nv_u32(dev, files[type], clock);
}

/* The SM maximum is the graphics one on these GPUs. */
NVML_API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, nvmlClockType_t type, unsigned int *clock)
{
    static const enum nv_file files[] = {NF_MAX_GRAPHICS, NF_MAX_GRAPHICS, NF_MAX_MEMORY, NF_MAX_VIDEO};
    CHECK(dev, clock);
    if (type < 0 || type > 3)
        return NVML_ERROR_INVALID_ARGUMENT;
    return nv_u32(dev, files[type], clock);
}

NVML_API nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t dev, nvmlClockType_t type, nvmlClockId_t id, unsigned int *mhz)
{
    CHECK(dev, mhz);
    switch (id) {
    case NVML_CLOCK_ID_CURRENT: return nvmlDeviceGetClockInfo(dev, type, mhz);
    case NVML_CLOCK_ID_CUSTOMER_BOOST_MAX: return nvmlDeviceGetMaxClockInfo(dev, type, mhz);
    case NVML_CLOCK_ID_APP_CLOCK_TARGET:
    case NVML_CLOCK_ID_APP_CLOCK_DEFAULT: return NVML_ERROR_DEPRECATED;
    default: return NVML_ERROR_INVALID_ARGUMENT;
    }
}

NVML_API nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t dev, nvmlClockType_t type, unsigned int *mhz)
{
    CHECK(dev, mhz);
    return NVML_ERROR_DEPRECATED;
}
NVML_ALIAS(nvmlDeviceGetDefaultApplicationsClock, nvmlDeviceGetApplicationsClock);

NVML_API nvmlReturn_t nvmlDeviceSetApplicationsClocks(nvmlDevice_t dev, unsigned int mem, unsigned int graphics)
{
    CHECK(dev, dev);
    return nv_unprivileged() ? NVML_ERROR_NO_PERMISSION : NVML_ERROR_DEPRECATED;
}

NVML_API nvmlReturn_t nvmlDeviceResetApplicationsClocks(nvmlDevice_t dev)
{
    CHECK(dev, dev);
    return nv_unprivileged() ? NVML_ERROR_NO_PERMISSION : NVML_ERROR_DEPRECATED;
}

/* supported_clocks: one line per memory clock, "<mem>:<g1> <g2> ...", highest first. Calls
 * fn(arg, mem, graphics list) per line; stops when fn returns true. */
static nvmlReturn_t each_memory_clock(nvmlDevice_t dev, bool (*fn)(void *, unsigned, const char *), void *arg)
{
    char table[16384];
    if (nv_text(dev, NF_SUPPORTED_CLOCKS, table, sizeof table) || !table[0])
        return NVML_ERROR_NOT_SUPPORTED;
    for (char *line = table; *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = 0;
        char *colon = strchr(line, ':');
        if (colon && fn(arg, (unsigned)strtoul(line, NULL, 10), colon + 1))
            return NVML_SUCCESS;
        if (!end)
            break;
        line = end + 1;
    }
    return NVML_SUCCESS;
}

/* Fills a clock list from the two-call protocol: *count in = room, out = how many there are. */
struct clock_list {
    unsigned *count, *out, n;
    unsigned want_mem; /* graphics lists: the memory clock asked for */
    bool found;
};

static void put_clock(struct clock_list *l, unsigned mhz)
{
    if (l->n < *l->count && l->out)
        l->out[l->n] = mhz;
    l->n++;
}

static bool add_memory(void *arg, unsigned mem, const char *graphics)
{
    put_clock(arg, mem);
    return false;
}

static bool add_graphics(void *arg, unsigned mem, const char *graphics)
{
    struct clock_list *l = arg;
    if (mem != l->want_mem)
        return false;
    l->found = true;
    for (const char *p = graphics; *p;) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p)
            break;
        put_clock(l, (unsigned)v);
        p = end;
    }
    return true;
}

static nvmlReturn_t finish_list(struct clock_list *l, nvmlReturn_t rc)
{
    if (rc)
        return rc;
    bool fits = l->n <= *l->count;
    *l->count = l->n;
    return fits ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
}

NVML_API nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t dev, unsigned int *count, unsigned int *clocks)
{
    CHECK(dev, count);
    struct clock_list l = {count, clocks, 0, 0, false};
    if (*count && !clocks)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* a short list is written only when it fits whole */
    unsigned room = *count;
    struct clock_list probe = {&(unsigned){0}, NULL, 0, 0, false};
    nvmlReturn_t rc = each_memory_clock(dev, add_memory, &probe);
    if (rc)
        return rc;
    if (probe.n > room) {
        *count = probe.n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    return finish_list(&l, each_memory_clock(dev, add_memory, &l));
}

NVML_API nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t dev, unsigned int memoryClockMHz,
                                                           unsigned int *count, unsigned int *clocks)
{
    CHECK(dev, count);
    if (*count && !clocks)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned room = *count;
    struct clock_list probe = {&(unsigned){0}, NULL, 0, memoryClockMHz, false};
    nvmlReturn_t rc = each_memory_clock(dev, add_graphics, &probe);
    if (rc)
        return rc;
    if (!probe.found)
        return NVML_ERROR_NOT_FOUND;
    if (probe.n > room) {
        *count = probe.n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    struct clock_list l = {count, clocks, 0, memoryClockMHz, false};
    return finish_list(&l, each_memory_clock(dev, add_graphics, &l));
}

/* The reasons the node models are idle (0x1), the SW power cap (0x4), the SW and HW thermal
 * slowdowns (0x20, 0x40: a cooling fault) and the power brake (0x80: a fault); every reason
 * nvidia-smi names is reported as supported (fakesmi's 0x1FF). */
NVML_API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev, unsigned long long *reasons)
{
    char t[32];
    CHECK(dev, reasons);
    if (nv_text(dev, NF_REASONS, t, sizeof t) || sscanf(t, "%llx", reasons) != 1)
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}
NVML_ALIAS(nvmlDeviceGetCurrentClocksEventReasons, nvmlDeviceGetCurrentClocksThrottleReasons);

NVML_API nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t dev, unsigned long long *reasons)
{
    CHECK(dev, reasons);
    *reasons = 0x1FF;
    return NVML_SUCCESS;
}
NVML_ALIAS(nvmlDeviceGetSupportedClocksEventReasons, nvmlDeviceGetSupportedClocksThrottleReasons);

/* The lowest and highest supported clock of a kind (graphics: over every memory clock). */
struct range {
    bool memory;
    unsigned lo, hi;
};

static bool widen(void *arg, unsigned mem, const char *graphics)
{
    struct range *r = arg;
    if (r->memory) {
        r->lo = mem < r->lo ? mem : r->lo;
        r->hi = mem > r->hi ? mem : r->hi;
        return false;
    }
    for (const char *p = graphics; *p;) {
        char *end;
        unsigned v = (unsigned)strtoul(p, &end, 10);
        if (end == p)
            break;
        r->lo = v < r->lo ? v : r->lo;
        r->hi = v > r->hi ? v : r->hi;
        p = end;
    }
    return false;
}

/* NVML's symbolic limits (TDP, UNLIMITED) as MHz: the lowest supported clock for a minimum,
 * the highest for a maximum; any other id in the reserved range is INVALID_ARGUMENT. */
static nvmlReturn_t lock(nvmlDevice_t dev, bool memory, unsigned lo, unsigned hi)
{
    CHECK(dev, dev);
    if (nv_unprivileged())
        return NVML_ERROR_NO_PERMISSION;
    if (lo >= NVML_CLOCK_LIMIT_ID_RANGE_START || hi >= NVML_CLOCK_LIMIT_ID_RANGE_START) {
        bool sym_lo = lo == NVML_CLOCK_LIMIT_ID_TDP || lo == NVML_CLOCK_LIMIT_ID_UNLIMITED;
        bool sym_hi = hi == NVML_CLOCK_LIMIT_ID_TDP || hi == NVML_CLOCK_LIMIT_ID_UNLIMITED;
        if ((lo >= NVML_CLOCK_LIMIT_ID_RANGE_START && !sym_lo) || (hi >= NVML_CLOCK_LIMIT_ID_RANGE_START && !sym_hi))
            return NVML_ERROR_INVALID_ARGUMENT;
        struct range r = {memory, ~0u, 0};
        if (each_memory_clock(dev, widen, &r) || r.hi == 0)
            return NVML_ERROR_NOT_SUPPORTED;
        lo = sym_lo ? r.lo : lo;
        hi = sym_hi ? r.hi : hi;
    }
    char t[48];
    snprintf(t, sizeof t, "%u %u", lo, hi);
    return nv_write(dev, memory ? NF_LOCKED_MEMORY : NF_LOCKED_GPU, t);
}

NVML_API nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t dev, unsigned int minMHz, unsigned int maxMHz)
{
    return lock(dev, false, minMHz, maxMHz);
}

NVML_API nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t dev, unsigned int minMHz, unsigned int maxMHz)
{
    return lock(dev, true, minMHz, maxMHz);
}

NVML_API nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t dev)
{
    CHECK(dev, dev);
    return nv_write(dev, NF_LOCKED_GPU, "none");
}

NVML_API nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t dev)
{
    CHECK(dev, dev);
    return nv_write(dev, NF_LOCKED_MEMORY, "none");
}
