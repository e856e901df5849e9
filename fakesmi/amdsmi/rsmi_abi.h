/* rsmi_abi: the types of ROCm SMI's C ABI (rocm_smi.h of ROCm 6.1 and later, library major 7)
 * that librocm_smi64.so fills, and the library's init state, which its unsupported names
 * consult. x86-64. */
#ifndef HWEMU_RSMI_ABI_H
#define HWEMU_RSMI_ABI_H
#include <stdbool.h>
#include <stdint.h>

#define RSMI_API __attribute__((visibility("default")))
#define RSMI_MAX_NUM_FREQUENCIES 33
#define RSMI_LIB_VERSION_MAJOR 7
#define RSMI_LIB_VERSION_MINOR 0
#define RSMI_LIB_VERSION_PATCH 0
#define RSMI_LIB_VERSION_STRING "7.0.0"

typedef uint32_t rsmi_status_t;
typedef struct {
    uint32_t major, minor, patch;
    const char *build;
} rsmi_version_t;
typedef struct {
    bool has_deep_sleep;
    uint32_t num_supported;
    uint32_t current;
    uint64_t frequency[RSMI_MAX_NUM_FREQUENCIES]; /* Hz */
} rsmi_frequencies_t;
_Static_assert(sizeof(rsmi_frequencies_t) == 280, "rsmi_frequencies_t");
typedef enum { RSMI_AVERAGE_POWER = 0, RSMI_CURRENT_POWER = 1, RSMI_INVALID_POWER = 0xFFFFFFFF } RSMI_POWER_TYPE;

/* Has rsmi_init succeeded more often than rsmi_shut_down was called (rsmi_api.c)? */
bool rsmi_ready(void);

#endif
