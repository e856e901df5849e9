/* fuzz_trace: workload trace loading (engine/runs/trace.c over cJSON, one JSON record a line)
 * on hostile text. Checked: no crash, no sanitizer report, no hang (libFuzzer's -timeout), a
 * refused trace always says why (at least one message) and leaves nothing half-loaded, and an
 * accepted one has its jobs in submit order. */
#include "diag.h"
#include "trace.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace t = {0};
    struct diag d = {0};
    int rc = trace_parse(&t, "fuzz.jsonl", (const char *)data, size, &d);
    if (rc && (d.count == 0 || t.njobs != 0))
        __builtin_trap();
    for (int i = 1; rc == 0 && i < t.njobs; i++)
        if (t.jobs[i].submit_s < t.jobs[i - 1].submit_s)
            __builtin_trap();
    trace_free(&t);
    diag_free(&d);
    return 0;
}
