/* nvidia_smi_watts: how nvidia-smi prints a power. Kept out of the callers' files so it stays a
 * real call that tests/cli/test_nvml.sh can force through gdb, as it forces the real tool's
 * NVML answer, to compare the two on chosen values. */
#include "nvidia_smi_common.h"

#include <stdio.h>

const char *nv_watts(long long mw, char *buf, size_t cap)
{
    /* In single precision, as the real nvidia-smi 535 divides: forced through gdb, it printed
     * 551515 mW as 551.52 and 45 mW as 0.05, where the double quotient prints 551.51 and 0.04
     * (tests/cli/test_nvml.sh checks the rule on the real tool). */
    snprintf(buf, cap, "%.2f", (double)((float)mw / 1000.0f));
    return buf;
}
