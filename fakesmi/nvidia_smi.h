/* nvidia_smi: the commands nvidia_smi.c (the command line, GPU selection, -L and --query-gpu)
 * hands to the other files of the nvidia-smi personality: nvidia_smi_set.c the commands that
 * change a GPU, nvidia_smi_query.c the two reports, `-q` and the summary table. What all of them
 * share (nv_out, the readers, the helpers) is nvidia_smi_common.h's. */
#ifndef HWEMU_FAKESMI_NVIDIA_SMI_H
#define HWEMU_FAKESMI_NVIDIA_SMI_H
#include <stdbool.h>

#include "nvidia_smi_common.h"

/* nvidia-smi -pl: the limit in mW for every selected GPU; returns the exit code. */
int nv_set_power_limit(const struct nv_sel *sel, long long mw, bool eow);
/* nvidia-smi -pm 0|1; returns the exit code. */
int nv_set_persistence(const struct nv_sel *sel, bool on);
/* -lgc/-lmc (memory) lock the clocks to [lo, hi] MHz, -rgc/-rmc (reset) unlock them; returns
 * the exit code. */
int nv_set_clocks(const struct nv_sel *sel, bool memory, bool reset, long long lo, long long hi, bool eow);

/* nvidia-smi -q [-d TYPES] for the selected GPUs; returns the exit code. */
int nv_query_report(const struct nv_sel *sel, unsigned display);
/* nvidia-smi without arguments; returns the exit code. */
int nv_summary_table(const struct nv_sel *sel);

#endif
