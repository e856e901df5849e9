/* fuzz_profile: profile loading (engine/model/profile.c: parsing, provenance, extends merging,
 * profile_validate) on hostile text: the input is a local profile file next to the builtins
 * (written to a tmpfs directory, as --profiles-dir reads it). Checked: no crash, no sanitizer
 * report, no hang, and a refused profile always says why. */
#include "diag.h"
#include "profile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[64], file[128];

static void cleanup(void)
{
    unlink(file);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    snprintf(dir, sizeof dir, "/dev/shm/hwemu-fuzz-profile-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(file, sizeof file, "%s/fuzz.yaml", dir);
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(file, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    struct profile_set ps = {0};
    struct diag d = {0};
    int rc = profiles_load(&ps, dir, &d);
    if (rc && d.count == 0)
        __builtin_trap();
    profiles_free(&ps);
    diag_free(&d);
    return 0;
}
