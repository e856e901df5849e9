/* fakesmi: one binary that answers as nvidia-smi, rocm-smi and amd-smi for an emulated node.
 * The tool is the name it was run as (hwemu exec links the node's tools to it), or its first
 * argument when run as fakesmi. A tool the node's profile does not install is "not found"
 * (exit 127, as the shell's), so an agent's discovery sees exactly the node's tools. */
#include "gpu_view.h"
#include "tools.h"

#include <stdio.h>
#include <string.h>

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int main(int argc, char **argv)
{
    if (argc < 1 || !argv[0]) {
        fputs("fakesmi: no program name\n", stderr);
        return 2;
    }
    const char *tool = base_name(argv[0]);
    if (!strcmp(tool, "fakesmi")) {
        if (argc < 2) {
            fputs("usage: fakesmi nvidia-smi|rocm-smi|amd-smi [ARG ...]\n", stderr);
            return 2;
        }
        argv++;
        argc--;
        tool = base_name(argv[0]);
    }
    int (*run)(int, char **) = !strcmp(tool, "nvidia-smi") ? nvidia_smi_main
                               : !strcmp(tool, "rocm-smi") ? rocm_smi_main
                               : !strcmp(tool, "amd-smi")  ? amd_smi_main
                                                           : NULL;
    if (!run) {
        fprintf(stderr, "fakesmi: %s is not a tool fakesmi emulates (nvidia-smi, rocm-smi, amd-smi)\n", tool);
        return 127;
    }
    char err[1200];
    if (gv_open(err, sizeof err)) {
        fprintf(stderr, "fakesmi: %s\n", err);
        return 255;
    }
    char path[64], variant[32];
    snprintf(path, sizeof path, "state/tools/%s", tool);
    if (gv_read(path, variant, sizeof variant) < 0) {
        fprintf(stderr, "%s: command not found (node %s has no %s)\n", tool, gv_node(), tool);
        return 127;
    }
    argv[0] = (char *)tool;
    return run(argc, argv);
}
