/* nvidia_smi_common: what the files of the nvidia-smi personality share (nvidia_smi.c,
 * nvidia_smi_set.c, nvidia_smi_query.c): the command's output stream nv_out, the readers of the
 * node's state/nvml files that remember the first missing one, and the number, persistence, MIG
 * and PCI bus id helpers. It calls only gpu_view.c, so none of those files depends on another
 * through it. */
#include "nvidia_smi_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_view.h"

FILE *nv_out;
static char missing[192]; /* the first file a read found missing, with the reason */

const char *nv_read_path(const char *path, char *buf, size_t cap)
{
    int n = gv_read(path, buf, cap);
    if (n < 0) {
        if (!missing[0])
            snprintf(missing, sizeof missing, "%s: %s", path, strerror(-n));
        buf[0] = '\0';
    }
    return buf;
}

bool nv_incomplete(void)
{
    return missing[0] != '\0';
}

const char *nv_missing(void)
{
    return missing[0] ? missing : NULL;
}

const char *nv_read(int gpu, const char *file, char *buf, size_t cap)
{
    char path[96];
    snprintf(path, sizeof path, "state/nvml/gpu%d/%s", gpu, file);
    return nv_read_path(path, buf, cap);
}

bool nv_num(const char *text, long long *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(text, &end, 10);
    if (end == text || *end || errno)
        return false;
    *v = x;
    return true;
}

int nv_persistence(int gpu)
{
    char t[16];
    nv_read(gpu, "persistence_mode", t, sizeof t);
    return !strcmp(t, "1") ? 1 : !strcmp(t, "0") ? 0 : -1;
}

/* A GPU that can run MIG shows its mode (no MIG instances: Disabled); others show N/A. */
bool nv_mig_capable(int gpu)
{
    char t[64];
    nv_read(gpu, "mig_capable", t, sizeof t);
    return !strcmp(t, "1");
}

bool nv_bus_id(const char *text, unsigned b[4])
{
    int n = 0;
    if (sscanf(text, "%x:%x:%x.%x%n", &b[0], &b[1], &b[2], &b[3], &n) == 4 && n && !text[n])
        return true;
    n = 0;
    b[3] = 0;
    if (sscanf(text, "%x:%x:%x%n", &b[0], &b[1], &b[2], &n) == 3 && n && !text[n])
        return true;
    b[0] = 0;
    n = 0;
    return sscanf(text, "%x:%x.%x%n", &b[1], &b[2], &b[3], &n) == 3 && n && !text[n];
}
