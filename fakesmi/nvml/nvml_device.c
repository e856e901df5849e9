/* nvml_device: device discovery and the device getters that are not power or clocks:
 * handles (by index, UUID, serial, PCI bus id), identity, PCI, memory, utilisation,
 * temperature, performance state, persistence and the modes nvidia-smi's table shows. Values
 * are the node's state/nvml files; what the node does not model is NOT_SUPPORTED, except the
 * constants fakesmi's nvidia-smi prints too (brand NVIDIA, display off, ECC enabled with no
 * errors, compute mode Default, encoder and decoder idle, no processes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvml_abi.h"
#include "nvml_node.h"

#define CHECK(dev, out)                                                                                           \
    do {                                                                                                          \
        nvmlReturn_t rc_ = nv_check(dev, out);                                                                    \
        if (rc_)                                                                                                  \
            return rc_;                                                                                           \
    } while (0)

/* ---- count and handles ---- */

NVML_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (!deviceCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    *deviceCount = nv_count();
    return NVML_SUCCESS;
}
NVML_ALIAS(nvmlDeviceGetCount, nvmlDeviceGetCount_v2);

NVML_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (!device || index >= nv_count())
        return NVML_ERROR_INVALID_ARGUMENT;
    if (nv_lost(index)) /* faults.md §1.2: handle lookup fails with 15 after Xid 79 */
        return NVML_ERROR_GPU_IS_LOST;
    *device = nv_gpu(index);
    return NVML_SUCCESS;
}
NVML_ALIAS(nvmlDeviceGetHandleByIndex, nvmlDeviceGetHandleByIndex_v2);

/* The GPU whose file f reads as text (case-insensitive when nocase): SUCCESS or NOT_FOUND. */
static nvmlReturn_t find_by(enum nv_file f, const char *text, bool nocase, nvmlDevice_t *device)
{
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (!text || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < nv_count(); i++) {
        char t[96];
        if (nv_text(nv_gpu(i), f, t, sizeof t) == NVML_SUCCESS && (nocase ? !strcasecmp(t, text) : !strcmp(t, text))) {
            if (nv_lost(i))
                return NVML_ERROR_GPU_IS_LOST;
            *device = nv_gpu(i);
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

NVML_API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    return find_by(NF_UUID, uuid, true, device);
}

NVML_API nvmlReturn_t nvmlDeviceGetHandleBySerial(const char *serial, nvmlDevice_t *device)
{
    return find_by(NF_SERIAL, serial, false, device);
}

bool nv_parse_bus_id(const char *t, unsigned b[4])
{
    int n = 0;
    if (sscanf(t, "%x:%x:%x.%x%n", &b[0], &b[1], &b[2], &b[3], &n) == 4 && !t[n])
        return true;
    n = 0;
    b[3] = 0;
    if (sscanf(t, "%x:%x:%x%n", &b[0], &b[1], &b[2], &n) == 3 && !t[n])
        return true;
    b[0] = 0;
    n = 0;
    return sscanf(t, "%x:%x.%x%n", &b[1], &b[2], &b[3], &n) == 3 && !t[n];
}

NVML_API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    unsigned want[4], have[4];
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (!pciBusId || !device || !nv_parse_bus_id(pciBusId, want))
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < nv_count(); i++) {
        char t[64];
        if (nv_text(nv_gpu(i), NF_PCI_BUS_ID, t, sizeof t) == NVML_SUCCESS && nv_parse_bus_id(t, have) &&
            !memcmp(want, have, 3 * sizeof want[0])) {
            if (nv_lost(i))
                return NVML_ERROR_GPU_IS_LOST;
            *device = nv_gpu(i);
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}
NVML_ALIAS(nvmlDeviceGetHandleByPciBusId, nvmlDeviceGetHandleByPciBusId_v2);

/* ---- identity ---- */

NVML_API nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t dev, unsigned int *index)
{
    CHECK(dev, index);
    *index = dev->index;
    return NVML_SUCCESS;
}
NVML_ALIAS(nvmlDeviceGetMinorNumber, nvmlDeviceGetIndex);

static nvmlReturn_t text_getter(nvmlDevice_t dev, enum nv_file f, char *out, unsigned int length)
{
    char t[160];
    CHECK(dev, out);
    nvmlReturn_t rc = nv_text(dev, f, t, sizeof t);
    if (rc == NVML_SUCCESS && !t[0])
        rc = NVML_ERROR_NOT_SUPPORTED;
    return rc ? rc : nv_copy(t, out, length);
}

NVML_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int length)
{
    return text_getter(dev, NF_NAME, name, length);
}

NVML_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned int length)
{
    return text_getter(dev, NF_UUID, uuid, length);
}

NVML_API nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t dev, char *serial, unsigned int length)
{
    return text_getter(dev, NF_SERIAL, serial, length);
}

NVML_API nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t dev, int *type)
{
    CHECK(dev, type);
    *type = NVML_BRAND_NVIDIA;
    return NVML_SUCCESS;
}

/* The architecture file's word ("hopper", "ada-lovelace") as nvmlDeviceArchitecture_t. */
NVML_API nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t dev, unsigned int *arch)
{
    static const char *const names[] = {"", "", "kepler", "maxwell", "pascal", "volta", "turing", "ampere",
                                        "ada-lovelace", "hopper", "blackwell"};
    char t[64];
    CHECK(dev, arch);
    nv_text(dev, NF_ARCHITECTURE, t, sizeof t);
    if (!strcasecmp(t, "ada"))
        strcpy(t, "ada-lovelace");
    for (unsigned i = 2; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(t, names[i])) {
            *arch = i;
            return NVML_SUCCESS;
        }
    return NVML_ERROR_NOT_SUPPORTED;
}

NVML_API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t dev, int *major, int *minor)
{
    char t[32];
    CHECK(dev, major);
    if (!minor)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (nv_text(dev, NF_COMPUTE_CAP, t, sizeof t) || sscanf(t, "%d.%d", major, minor) != 2)
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

static nvmlReturn_t pci_info(nvmlDevice_t dev, nvmlPciInfo_t *pci)
{
    char t[64];
    CHECK(dev, pci);
    unsigned b[4];
    if (nv_text(dev, NF_PCI_BUS_ID, t, sizeof t) || !nv_parse_bus_id(t, b))
        return NVML_ERROR_NOT_SUPPORTED;
    memset(pci, 0, sizeof *pci);
    pci->domain = b[0];
    pci->bus = b[1];
    pci->device = b[2];
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", b[0] & 0xffff, b[1] & 0xff, b[2] & 0xff);
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", b[0], b[1] & 0xff, b[2] & 0xff);
    if (nv_text(dev, NF_PCI_DEVICE_ID, t, sizeof t) == NVML_SUCCESS)
        pci->pciDeviceId = (unsigned)strtoul(t, NULL, 16);
    pci->pciSubSystemId = dev->subsystem;
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t *pci)
{
    return pci_info(dev, pci);
}
NVML_ALIAS(nvmlDeviceGetPciInfo_v2, nvmlDeviceGetPciInfo_v3);

/* v1 callers hold the 52-byte struct: the legacy bus id first, never the 32-byte one. */
NVML_API nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t dev, nvmlPciInfo_v1_t *pci)
{
    nvmlPciInfo_t p;
    nvmlReturn_t rc = pci_info(dev, pci ? &p : NULL);
    if (rc)
        return rc;
    memset(pci, 0, sizeof *pci);
    memcpy(pci->busId, p.busIdLegacy, sizeof pci->busId);
    pci->domain = p.domain;
    pci->bus = p.bus;
    pci->device = p.device;
    pci->pciDeviceId = p.pciDeviceId;
    pci->pciSubSystemId = p.pciSubSystemId;
    return NVML_SUCCESS;
}

/* ---- memory, utilisation, temperature, state ---- */

#define MIB (1024ULL * 1024ULL)

static nvmlReturn_t memory(nvmlDevice_t dev, uint64_t *total, uint64_t *used)
{
    nvmlReturn_t rc = nv_u64(dev, NF_MEMORY_TOTAL, total);
    if (!rc)
        rc = nv_u64(dev, NF_MEMORY_USED, used);
    if (!rc && *used > *total)
        *used = *total;
    return rc;
}

/* The node reserves no memory (fakesmi prints Reserved 0 MiB): v1 used = v2 used. */
NVML_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m)
{
    uint64_t total, used;
    CHECK(dev, m);
    nvmlReturn_t rc = memory(dev, &total, &used);
    if (rc)
        return rc;
    m->total = total * MIB;
    m->used = used * MIB;
    m->free = (total - used) * MIB;
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *m)
{
    uint64_t total, used;
    CHECK(dev, m);
    if (m->version != nvmlMemory_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    nvmlReturn_t rc = memory(dev, &total, &used);
    if (rc)
        return rc;
    m->total = total * MIB;
    m->reserved = 0;
    m->used = used * MIB;
    m->free = (total - used) * MIB;
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t *u)
{
    CHECK(dev, u);
    unsigned gpu, mem;
    nvmlReturn_t rc = nv_u32(dev, NF_UTIL_GPU, &gpu);
    if (!rc)
        rc = nv_u32(dev, NF_UTIL_MEMORY, &mem);
    if (rc)
        return rc;
    u->gpu = gpu;
    u->memory = mem;
    return NVML_SUCCESS;
}

/* Encoder, decoder, JPEG and OFA engines are idle (fakesmi prints 0 %); the sampling period
 * is NVML's 167 ms. */
static nvmlReturn_t idle_engine(nvmlDevice_t dev, unsigned int *util, unsigned int *period)
{
    CHECK(dev, util);
    if (!period)
        return NVML_ERROR_INVALID_ARGUMENT;
    *util = 0;
    *period = 167000;
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t dev, unsigned int *util, unsigned int *period)
{
    return idle_engine(dev, util, period);
}

NVML_API nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t dev, unsigned int *util, unsigned int *period)
{
    return idle_engine(dev, util, period);
}

NVML_API nvmlReturn_t nvmlDeviceGetJpgUtilization(nvmlDevice_t dev, unsigned int *util, unsigned int *period)
{
    return idle_engine(dev, util, period);
}

NVML_API nvmlReturn_t nvmlDeviceGetOfaUtilization(nvmlDevice_t dev, unsigned int *util, unsigned int *period)
{
    return idle_engine(dev, util, period);
}

/* Sensor 0 (the GPU) only. */
NVML_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned int *temp)
{
    CHECK(dev, temp);
    if (sensor != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    return nv_u32(dev, NF_TEMP_GPU, temp);
}

/* "P0" .. "P15" */
NVML_API nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t dev, nvmlPstates_t *state)
{
    char t[16];
    CHECK(dev, state);
    if (nv_text(dev, NF_PSTATE, t, sizeof t) || t[0] != 'P' || t[1] < '0' || t[1] > '9')
        return NVML_ERROR_NOT_SUPPORTED;
    *state = atoi(t + 1);
    return NVML_SUCCESS;
}
NVML_ALIAS(nvmlDeviceGetPowerState, nvmlDeviceGetPerformanceState);

NVML_API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, nvmlEnableState_t *mode)
{
    char t[8];
    CHECK(dev, mode);
    if (nv_text(dev, NF_PERSISTENCE, t, sizeof t) || (strcmp(t, "0") && strcmp(t, "1")))
        return NVML_ERROR_NOT_SUPPORTED;
    *mode = t[0] == '1';
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceSetPersistenceMode(nvmlDevice_t dev, nvmlEnableState_t mode)
{
    CHECK(dev, dev);
    if (mode != 0 && mode != 1)
        return NVML_ERROR_INVALID_ARGUMENT;
    return nv_write(dev, NF_PERSISTENCE, mode ? "1" : "0");
}

static bool mig_capable(nvmlDevice_t dev)
{
    char t[8];
    return nv_text(dev, NF_MIG_CAPABLE, t, sizeof t) == NVML_SUCCESS && !strcmp(t, "1");
}

/* MIG-capable GPUs run without MIG instances (mode Disabled); others do not support it. */
NVML_API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *current, unsigned int *pending)
{
    CHECK(dev, current);
    if (!pending)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!mig_capable(dev))
        return NVML_ERROR_NOT_SUPPORTED;
    *current = *pending = 0;
    return NVML_SUCCESS;
}

/* Seven instances at most on an H100 (NVIDIA's nvml-mock H100 profile). */
NVML_API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t dev, unsigned int *count)
{
    CHECK(dev, count);
    *count = mig_capable(dev) ? 7 : 0;
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t dev, unsigned int index, nvmlDevice_t *mig)
{
    CHECK(dev, mig);
    return mig_capable(dev) ? NVML_ERROR_NOT_FOUND : NVML_ERROR_NOT_SUPPORTED;
}

NVML_API nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t dev, unsigned int *isMigDevice)
{
    CHECK(dev, isMigDevice);
    *isMigDevice = 0;
    return NVML_SUCCESS;
}

/* Constant states both nvidia-smi routes print: display off, ECC on without errors, compute
 * mode Default, no virtualisation. */
static nvmlReturn_t constant(nvmlDevice_t dev, int *out, int value)
{
    CHECK(dev, out);
    *out = value;
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t dev, nvmlEnableState_t *display)
{
    return constant(dev, display, 0);
}

NVML_API nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t dev, nvmlEnableState_t *active)
{
    return constant(dev, active, 0);
}

NVML_API nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t dev, int *mode)
{
    return constant(dev, mode, 0);
}

NVML_API nvmlReturn_t nvmlDeviceGetVirtualizationMode(nvmlDevice_t dev, int *mode)
{
    return constant(dev, mode, 0);
}

NVML_API nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t dev, nvmlEnableState_t *current, nvmlEnableState_t *pending)
{
    CHECK(dev, current);
    if (!pending)
        return NVML_ERROR_INVALID_ARGUMENT;
    *current = *pending = 1;
    return NVML_SUCCESS;
}

/* The ECC state the engine publishes (state/nvml/gpu<i>/ecc_errors, gpu_files.h): errors,
 * remapped rows, a remap pending. */
struct ecc_state {
    unsigned long long corrected, uncorrected;
    unsigned rows_corrected, rows_uncorrected, pending;
};
static nvmlReturn_t ecc_state(nvmlDevice_t dev, struct ecc_state *e)
{
    char t[96];
    *e = (struct ecc_state){0};
    nvmlReturn_t r = nv_text(dev, NF_ECC, t, sizeof t);
    if (r == NVML_SUCCESS)
        sscanf(t, "%llu %llu %u %u %u", &e->corrected, &e->uncorrected, &e->rows_corrected, &e->rows_uncorrected,
               &e->pending);
    return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, int errorType, int counterType,
                                                  unsigned long long *eccCounts)
{
    CHECK(dev, eccCounts);
    if (errorType < 0 || errorType > 1 || counterType < 0 || counterType > 1)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* the counts since the engine started: the volatile and the aggregate counts alike
     * (docs/faults.md gpu-ecc-*) */
    struct ecc_state e;
    ecc_state(dev, &e);
    *eccCounts = errorType ? e.uncorrected : e.corrected;
    return NVML_SUCCESS;
}

/* The memory errors by location (nvmlMemoryLocation_t): the faults' errors are in the device
 * memory (DRAM, 2); the caches, register file, texture memory, CBU and SRAM (0, 1, 3..7) have
 * none. */
NVML_API nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t dev, int errorType, int counterType, int location,
                                                      unsigned long long *count)
{
    CHECK(dev, count);
    if (errorType < 0 || errorType > 1 || counterType < 0 || counterType > 1 || location < 0 || location > 7)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct ecc_state e;
    ecc_state(dev, &e);
    *count = location != 2 ? 0 : errorType ? e.uncorrected : e.corrected;
    return NVML_SUCCESS;
}

/* Row remapping (Ampere and later; faults.md §2.5): a row is remapped for each memory error
 * fault, pending until the GPU's reset (the end of a gpu-lost or power-loss fault); remapping
 * never fails. Page retirement, its pre-Ampere predecessor, stays NOT_SUPPORTED (nvidia-smi
 * prints N/A), as on these GPUs. */
NVML_API nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t dev, unsigned int *corrRows, unsigned int *uncRows,
                                                unsigned int *isPending, unsigned int *failureOccurred)
{
    CHECK(dev, corrRows);
    if (!uncRows || !isPending || !failureOccurred)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct ecc_state e;
    nvmlReturn_t r = ecc_state(dev, &e);
    if (r != NVML_SUCCESS)
        return r;
    *corrRows = e.rows_corrected;
    *uncRows = e.rows_uncorrected;
    *isPending = e.pending != 0;
    *failureOccurred = 0;
    return NVML_SUCCESS;
}

/* The banks' spare rows: 2560 banks with every spare row free on a healthy H100 (the nvidia-smi
 * 590 capture, faults.md §2.8, assumed for every GPU); each remapped row takes a bank from Max
 * to High, as the A100 capture after one remap shows (639 Max, 1 High). */
#define NV_REMAP_BANKS 2560u
typedef struct {
    unsigned int max, high, partial, low, none;
} nv_remap_histogram;

NVML_API nvmlReturn_t nvmlDeviceGetRowRemapperHistogram(nvmlDevice_t dev, nv_remap_histogram *values)
{
    CHECK(dev, values);
    struct ecc_state e;
    nvmlReturn_t r = ecc_state(dev, &e);
    if (r != NVML_SUCCESS)
        return r;
    unsigned rows = e.rows_corrected + e.rows_uncorrected;
    rows = rows < NV_REMAP_BANKS ? rows : NV_REMAP_BANKS;
    *values = (nv_remap_histogram){.max = NV_REMAP_BANKS - rows, .high = rows};
    return NVML_SUCCESS;
}

/* The GPUs run no processes: every list is empty (a count of 0 and SUCCESS, whatever the
 * caller's buffer and entry version). */
static nvmlReturn_t no_processes(nvmlDevice_t dev, unsigned int *infoCount)
{
    CHECK(dev, infoCount);
    *infoCount = 0;
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *n, void *infos)
{
    return no_processes(dev, n);
}
NVML_ALIAS(nvmlDeviceGetComputeRunningProcesses_v2, nvmlDeviceGetComputeRunningProcesses_v3);
NVML_ALIAS(nvmlDeviceGetComputeRunningProcesses, nvmlDeviceGetComputeRunningProcesses_v3);
NVML_ALIAS(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlDeviceGetComputeRunningProcesses_v3);
NVML_ALIAS(nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlDeviceGetComputeRunningProcesses_v3);
NVML_ALIAS(nvmlDeviceGetGraphicsRunningProcesses, nvmlDeviceGetComputeRunningProcesses_v3);
NVML_ALIAS(nvmlDeviceGetMPSComputeRunningProcesses_v3, nvmlDeviceGetComputeRunningProcesses_v3);
NVML_ALIAS(nvmlDeviceGetMPSComputeRunningProcesses_v2, nvmlDeviceGetComputeRunningProcesses_v3);
NVML_ALIAS(nvmlDeviceGetMPSComputeRunningProcesses, nvmlDeviceGetComputeRunningProcesses_v3);

/* No process has samples: NOT_FOUND, the code the NVML header gives for none. */
NVML_API nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t dev, void *utilization, unsigned int *count,
                                                      unsigned long long lastSeenTimeStamp)
{
    CHECK(dev, count);
    *count = 0;
    return NVML_ERROR_NOT_FOUND;
}

/* The infoROM is whole (nvidia-smi warns on CORRUPTED_INFOROM only). */
NVML_API nvmlReturn_t nvmlDeviceValidateInforom(nvmlDevice_t dev)
{
    CHECK(dev, dev);
    return NVML_SUCCESS;
}
