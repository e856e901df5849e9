/* emu_hide: the host's devices and GPU driver libraries a node hides; see emu_hide.h. */
#include "emu_hide.h"

#include <string.h>

bool emu_dev_class(const char *name, size_t len)
{
    static const struct {
        const char *name;
        bool prefix; /* every name that starts so */
    } classes[] = {{"nvidia", true}, {"dri", false}, {"kfd", false}, {"cpu", false}, {"ipmi", true}, {"hsmp", false}};
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        size_t n = strlen(classes[i].name);
        if (len >= n && !strncmp(name, classes[i].name, n) && (classes[i].prefix || len == n))
            return true;
    }
    return false;
}

enum vendor { NVIDIA, NVML, AMD };

/* The vendor whose driver ships the library named base (a file name), or -1. */
static int lib_vendor(const char *base)
{
    static const struct {
        const char *prefix;
        enum vendor v;
    } libs[] = {{"libnvidia-ml.so", NVML},       {"libnvidia-", NVIDIA},      {"libcuda.so", NVIDIA},
                {"libcudadebugger.so", NVIDIA},  {"libnvcuvid.so", NVIDIA},   {"libnvoptix.so", NVIDIA},
                {"librocm_smi64.so", AMD},       {"libamd_smi.so", AMD},      {"libhsa-runtime64.so", AMD},
                {"libamdhip64.so", AMD}};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
        if (!strncmp(base, libs[i].prefix, strlen(libs[i].prefix)))
            return (int)libs[i].v;
    return -1;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static bool has_nvidia(const struct seg *s)
{
    return seg_lookup(s, "state/nvml", 10) != SEG_NONE;
}

bool emu_lib_hidden_on(bool nvidia, bool amd, const char *path)
{
    if (!path)
        return false;
    const char *base = base_name(path);
    if (strncmp(base, "lib", 3))
        return false; /* the common case, at once */
    int v = lib_vendor(base);
    if (v < 0)
        return false;
    if (v == AMD)
        return !amd;
    return v == NVIDIA || !nvidia;
}

bool emu_lib_hidden(const struct seg *s, const char *path)
{
    if (!s || !path)
        return false;
    return emu_lib_hidden_on(has_nvidia(s), seg_lookup(s, "sys/class/kfd/kfd", 17) != SEG_NONE, path);
}

const char *emu_lib_node_var(const char *path)
{
    const char *file = base_name(path);
    if (!strncmp(file, "libnvidia-ml.so", 15))
        return "HWEMU_NVML";
    if (!strncmp(file, "libamd_smi.so", 13))
        return "HWEMU_AMDSMI";
    if (!strncmp(file, "librocm_smi64.so", 16) && strcmp(file + 16, ".1") && strncmp(file + 16, ".1.", 3))
        return "HWEMU_ROCMSMI";
    return NULL;
}

bool emu_lib_nvml(const struct seg *s, const char *path)
{
    return s && path && lib_vendor(base_name(path)) == NVML && has_nvidia(s);
}
