/* nvidia_smi_set: the nvidia-smi commands that change a GPU (tools §1.11-§1.13):
 * -pl, -pm, -lgc/-lmc and -rgc/-rmc. Each writes the GPU's A file through gv_write, which
 * the engine validates as the driver would, and prints what the real tool prints (the texts
 * of Debian's nvidia-smi 535 run on the node's NVML, tests/cli/test_nvml.sh): a line per GPU,
 * then "All done.", or at the first GPU that refuses, the NVML error and "Terminating early
 * due to previous errors." with the NVML code as exit code. A setting a GPU does not support
 * is a warning (an error with -eow). -pl checks every selected GPU before its first write and
 * names the first out of range, so such a limit changes nothing; a GPU whose limits cannot be read is "not supported in
 * current scope" and skipped. The success lines show the request as given (the real tool
 * prints what it asked for, not a re-read), then the persistence warning when persistence is
 * off. Under HWEMU_UNPRIVILEGED=1 every write is refused with Insufficient Permissions and
 * nothing is written. */
#include "nvidia_smi.h"

#include <errno.h>
#include <string.h>

#include "gpu_view.h"

/* An errno of gv_write as NVML reports it: nvmlErrorString and the exit code (the NVML code). */
static const char *nvml_error(int err, int *code)
{
    switch (err) {
    case EINVAL:
        *code = 2;
        return "Invalid Argument";
    case EOPNOTSUPP:
        *code = 3;
        return "Not Supported";
    case EACCES:
    case EPERM:
        *code = 4;
        return "Insufficient Permissions";
    case ENOENT:
        *code = 6;
        return "Not Found";
    default:
        *code = 255;
        return "Unknown Error";
    }
}

/* A GPU refused the command: the real tool reports it and stops there. */
static int fail(const char *what, const char *bus, int err)
{
    int code;
    fprintf(nv_out, "%s for GPU %s: %s\n", what, bus, nvml_error(err, &code));
    fputs("Terminating early due to previous errors.\n", nv_out);
    return code;
}

/* A GPU does not support the setting: a warning the command moves on from, or with -eow an
 * error it stops at (false). */
static bool unsupported(const char *line, bool eow)
{
    fprintf(nv_out, "%s\n", line);
    fputs(eow ? "Terminating early due to previous errors.\n" : "Treating as warning and moving on.\n", nv_out);
    return !eow;
}

/* The warning the real tool prints after a change on a GPU whose persistence mode is off. */
static void persistence_warning(int g, const char *bus)
{
    if (nv_persistence(g) == 0)
        fprintf(nv_out,
                "\nWarning: persistence mode is disabled on device %s. See the Known Issues section of the "
                "nvidia-smi(1) man page for more information. Run with [--help | -h] switch to get more "
                "information on how to enable persistence mode.\n",
                bus);
}

/* Writes a GPU's A file as the logged-in user may: 0 or the errno. */
static int write_gpu(int g, const char *file, const char *text)
{
    char path[96];
    if (gv_unprivileged())
        return EACCES;
    snprintf(path, sizeof path, "state/nvml/gpu%d/%s", g, file);
    return gv_write(path, text);
}

int nv_set_power_limit(const struct nv_sel *s, long long mw, bool eow)
{
    struct {
        char bus[32];
        long long old, min, max;
        bool unsupported;
    } g[GPU_MAX];
    char t[64], w1[32], w2[32], w3[32], line[128];
    bool out_of_range = false;
    for (int k = 0; k < s->n; k++) {
        int i = s->gpu[k];
        nv_read(i, "pci_bus_id", g[k].bus, sizeof g[k].bus);
        bool limit = nv_num(nv_read(i, "power_limit_mw", t, sizeof t), &g[k].old);
        bool min = nv_num(nv_read(i, "power_min_limit_mw", t, sizeof t), &g[k].min);
        bool max = nv_num(nv_read(i, "power_max_limit_mw", t, sizeof t), &g[k].max);
        g[k].unsupported = !limit || !min || !max;
    }
    if (nv_incomplete())
        return 255;
    /* limits that cannot be read: the real tool's "current scope" notice, no write (-eow: an error) */
    for (int k = 0; k < s->n && eow; k++)
        if (g[k].unsupported) {
            fprintf(nv_out, "Changing power management limit is not supported in current scope for GPU: %s.\n",
                    g[k].bus);
            fputs("Terminating early due to previous errors.\n", nv_out);
            return 3;
        }
    /* the first GPU out of range stops the command, before any write */
    for (int k = 0; k < s->n && !out_of_range; k++)
        if (!g[k].unsupported && (mw < g[k].min || mw > g[k].max)) {
            fprintf(nv_out,
                    "Provided power limit %s W is not a valid power limit which should be between %s W and %s W "
                    "for GPU %s\n",
                    nv_watts(mw, w1, sizeof w1), nv_watts(g[k].min, w2, sizeof w2), nv_watts(g[k].max, w3, sizeof w3),
                    g[k].bus);
            out_of_range = true;
        }
    if (out_of_range) {
        fputs("Terminating early due to previous errors.\n", nv_out);
        return 2;
    }
    snprintf(t, sizeof t, "%lld", mw);
    for (int k = 0; k < s->n; k++) {
        if (g[k].unsupported) {
            fprintf(nv_out, "Changing power management limit is not supported in current scope for GPU: %s.\n",
                    g[k].bus);
            continue;
        }
        int err = write_gpu(s->gpu[k], "power_limit_mw", t);
        if (err == EOPNOTSUPP) {
            snprintf(line, sizeof line, "Changing power management limit is not supported for GPU: %s.", g[k].bus);
            if (!unsupported(line, eow))
                return 3;
            continue;
        }
        if (err)
            return fail("Failed to set power management limit", g[k].bus, err);
        fprintf(nv_out, "Power limit for GPU %s was set to %s W from %s W.\n", g[k].bus, nv_watts(mw, w1, sizeof w1),
                nv_watts(g[k].old, w2, sizeof w2));
        persistence_warning(s->gpu[k], g[k].bus);
    }
    fputs("All done.\n", nv_out);
    return 0;
}

int nv_set_persistence(const struct nv_sel *s, bool on)
{
    const char *word = on ? "Enabled" : "Disabled";
    char bus[32];
    for (int k = 0; k < s->n; k++) {
        int g = s->gpu[k];
        nv_read(g, "pci_bus_id", bus, sizeof bus);
        if (gv_unprivileged()) /* refused even when the mode would not change */
            return fail("Unable to set persistence mode", bus, EACCES);
        if (nv_persistence(g) == on) {
            fprintf(nv_out, "Persistence mode is already %s for GPU %s.\n", word, bus);
            continue;
        }
        int err = write_gpu(g, "persistence_mode", on ? "1" : "0");
        if (err)
            return fail("Unable to set persistence mode", bus, err);
        fprintf(nv_out, "%s persistence mode for GPU %s.\n", word, bus);
    }
    fputs("All done.\n", nv_out);
    return 0;
}

/* The real tool prints the clocks it asked for (the driver's clamp shows only in what the
 * file reads back); a combination the driver refuses is a warning pointing at the supported
 * clocks, a refused user the clock permission message. */
int nv_set_clocks(const struct nv_sel *s, bool memory, bool reset, long long lo, long long hi, bool eow)
{
    const char *file = memory ? "locked_memory_clocks" : "locked_gpu_clocks";
    const char *kind = memory ? "memory" : "GPU";
    const char *pre = memory ? "mem" : "gpu";
    char text[48], line[256], bus[32];
    if (reset)
        snprintf(text, sizeof text, "none");
    else
        snprintf(text, sizeof text, "%lld %lld", lo, hi);
    for (int k = 0; k < s->n; k++) {
        int g = s->gpu[k];
        nv_read(g, "pci_bus_id", bus, sizeof bus);
        int err = write_gpu(g, file, text);
        if (err == EOPNOTSUPP || err == ENOENT) {
            snprintf(line, sizeof line, "Setting locked %s clocks is not supported for GPU %s.",
                     reset && !memory ? "gpu" : kind, bus);
            if (!unsupported(line, eow))
                return 3;
            continue;
        }
        if (err == EACCES || err == EPERM) {
            fprintf(nv_out, "The current user does not have permission to change clocks for GPU %s.\n", bus);
            fputs("Terminating early due to previous errors.\n", nv_out);
            return 4;
        }
        if (err == EINVAL && !reset) {
            snprintf(line, sizeof line,
                     "Specified clock combination \"(%sClkMin %lld, %sClkMax %lld)\" is not supported for GPU %s. Run "
                     "'nvidia-smi -q -d SUPPORTED_CLOCKS' to see list of supported clock combinations",
                     pre, lo, pre, hi, bus);
            if (!unsupported(line, eow))
                return 2;
            continue;
        }
        if (err) {
            char what[64];
            snprintf(what, sizeof what, "Failed to %s locked %s clocks", reset ? "reset" : "set", kind);
            return fail(what, bus, err);
        }
        if (reset)
            continue;
        fprintf(nv_out, "%s clocks set to \"(%sClkMin %lld, %sClkMax %lld)\" for GPU %s\n", memory ? "Memory" : "GPU",
                pre, lo, pre, hi, bus);
        persistence_warning(g, bus);
    }
    fputs("All done.\n", nv_out);
    return 0;
}
