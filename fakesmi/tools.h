/* tools: the personalities of the fakesmi multi-call binary. Each gets the arguments after
 * its name (argv[0] is the tool's name) with the node already opened (gpu_view.h), prints
 * what the real tool prints for the node's GPUs, and returns the real tool's exit code. */
#ifndef HWEMU_FAKESMI_TOOLS_H
#define HWEMU_FAKESMI_TOOLS_H

int nvidia_smi_main(int argc, char **argv);
int rocm_smi_main(int argc, char **argv);
int amd_smi_main(int argc, char **argv);

#endif
