/* fuzz_spec: cluster spec loading (engine/model/spec.c over ytree.c and libyaml) on hostile
 * text, against the builtin profiles (loaded once). Checked: no crash, no sanitizer report, no
 * hang (libFuzzer's -timeout), and a refused spec always says why (at least one message). */
#include "diag.h"
#include "profile.h"
#include "spec.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static struct profile_set ps;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct diag d = {0};
    if (profiles_load(&ps, NULL, &d)) {
        diag_print(&d, stderr);
        exit(1);
    }
    diag_free(&d);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cluster_spec s = {0};
    struct diag d = {0};
    int rc = spec_load(&s, "fuzz.yaml", (const char *)data, size, &ps, &d);
    if (rc && d.count == 0)
        __builtin_trap();
    spec_free(&s);
    diag_free(&d);
    return 0;
}
