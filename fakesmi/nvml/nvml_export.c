/* nvml_export: nvmlInternalGetExportTable, the private entry point nvidia-smi 535 calls right
 * after init and refuses to run without ("Mismatch in versions between nvidia-smi and NVML.").
 * It is in no header; what is known of it was observed on Debian's nvidia-smi 535.261.03 (see
 * README.md): the caller passes a 16-byte id and gets a table whose word 0 is its size in bytes
 * and whose word n (n >= 1) is a function it calls only when the size exceeds 8 n.
 *
 * The table here has the real library's size for that id (0x7a8 bytes, 245 words). Every
 * entry answers NOT_SUPPORTED without touching its arguments (nvidia-smi then prints N/A or
 * falls back to the public call), except:
 *   12 (text, unsigned *domain, *bus, *device, *function)  parses the PCI bus id of -i <id>
 *                                ("Invalid PCI bus id format" when it fails); then, per GPU,
 *   75 (index, unsigned *domain, *bus, *device)  that GPU's PCI location; the tool selects the
 *                                GPU whose three numbers equal the parsed ones, function 0
 *                                (read from the tool's code: the compares after the two calls)
 *   108 (device, unsigned *mW)   the enforced power limit: --query-gpu=enforced.power.limit
 *   213, 214, 215 (device, unsigned *count, entries)  the process lists (compute, graphics, a
 *                                third): none, *count set to 0, the entries untouched. All three
 *                                must succeed or --query-compute-apps prints a row of [N/A] per GPU
 *   243 (device, unsigned *mode) Sparse Operation Mode: 0, which -q prints "Disabled" (7 was
 *                                seen to print "Enabled"); as fakesmi prints it
 * Any other id gets NOT_SUPPORTED; a NULL pointer or id INVALID_ARGUMENT. */
#include <string.h>

#include "nvml_abi.h"
#include "nvml_node.h"

#define EXPORT_WORDS 245
#define ET_PARSE_BUS_ID 12
#define ET_PCI_LOCATION 75
#define ET_ENFORCED_POWER_LIMIT 108
#define ET_SPARSE_OPERATION_MODE 243
#define ET_PROCESSES_FIRST 213
#define ET_PROCESSES_LAST 215

/* 6c3efec4-8fc9-4e6c-a327-ee696e12f7c4, as nvidia-smi 535 passes it. */
static const unsigned char smi_table_id[16] = {0xc4, 0xfe, 0x3e, 0x6c, 0xc9, 0x8f, 0x6c, 0x4e,
                                               0xa3, 0x27, 0xee, 0x69, 0x6e, 0x12, 0xf7, 0xc4};

/* An entry called with any arguments: the SysV caller cleans up, so none need be declared. */
static nvmlReturn_t et_not_supported(void)
{
    return NVML_ERROR_NOT_SUPPORTED;
}

static nvmlReturn_t et_parse_bus_id(const char *text, unsigned *domain, unsigned *bus, unsigned *device,
                                    unsigned *function)
{
    unsigned b[4];
    if (!text || !domain || !bus || !device || !function || !nv_parse_bus_id(text, b))
        return NVML_ERROR_INVALID_ARGUMENT;
    *domain = b[0], *bus = b[1], *device = b[2], *function = b[3];
    return NVML_SUCCESS;
}

static nvmlReturn_t et_pci_location(unsigned index, unsigned *domain, unsigned *bus, unsigned *device)
{
    char t[64];
    unsigned b[4];
    if (!nv_ready())
        return NVML_ERROR_UNINITIALIZED;
    if (index >= nv_count() || !domain || !bus || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t rc = nv_text(nv_gpu(index), NF_PCI_BUS_ID, t, sizeof t);
    if (rc)
        return rc;
    if (!nv_parse_bus_id(t, b))
        return NVML_ERROR_UNKNOWN;
    *domain = b[0], *bus = b[1], *device = b[2];
    return NVML_SUCCESS;
}

static nvmlReturn_t et_enforced_power_limit(nvmlDevice_t dev, unsigned int *mw)
{
    return nvmlDeviceGetEnforcedPowerLimit(dev, mw);
}

static nvmlReturn_t et_sparse_operation_mode(nvmlDevice_t dev, unsigned int *mode)
{
    unsigned index;
    nvmlReturn_t rc = nvmlDeviceGetIndex(dev, &index);
    if (rc)
        return rc;
    if (!mode)
        return NVML_ERROR_INVALID_ARGUMENT;
    *mode = 0;
    return NVML_SUCCESS;
}

static nvmlReturn_t et_no_processes(nvmlDevice_t dev, unsigned int *count, void *entries)
{
    unsigned index;
    nvmlReturn_t rc = nvmlDeviceGetIndex(dev, &index);
    if (rc)
        return rc;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = 0;
    return NVML_SUCCESS;
}

static const void *table[EXPORT_WORDS];

static void build_table(void)
{
    table[0] = (const void *)(uintptr_t)(EXPORT_WORDS * sizeof(void *));
    for (int i = 1; i < EXPORT_WORDS; i++)
        table[i] = (const void *)(uintptr_t)et_not_supported;
    table[ET_PARSE_BUS_ID] = (const void *)(uintptr_t)et_parse_bus_id;
    table[ET_PCI_LOCATION] = (const void *)(uintptr_t)et_pci_location;
    table[ET_ENFORCED_POWER_LIMIT] = (const void *)(uintptr_t)et_enforced_power_limit;
    table[ET_SPARSE_OPERATION_MODE] = (const void *)(uintptr_t)et_sparse_operation_mode;
    for (int i = ET_PROCESSES_FIRST; i <= ET_PROCESSES_LAST; i++)
        table[i] = (const void *)(uintptr_t)et_no_processes;
}

NVML_API nvmlReturn_t nvmlInternalGetExportTable(const void **ppExportTable, const void *pExportTableId)
{
    if (!ppExportTable || !pExportTableId)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (memcmp(pExportTableId, smi_table_id, sizeof smi_table_id))
        return NVML_ERROR_NOT_SUPPORTED;
    if (!table[0])
        build_table(); /* idempotent: racing callers write the same words */
    *ppExportTable = table;
    return NVML_SUCCESS;
}
