/* render_gpu: the GPU renderers render_gpu.c calls for a node's GPUs (render_gpu_hwmon.c: amdgpu
 * and i915/xe sysfs; render_kfd.c: the amdkfd topology). What they share with render_gpu.c is in
 * render_gpu_common.h. engine/segment/gpu_files.h is the contract. */
#ifndef HWEMU_RENDER_GPU_H
#define HWEMU_RENDER_GPU_H
#include "params.h"
#include "render.h"

/* amdgpu or i915/xe sysfs of every GPU: cards from first_card, hwmon devices from first_hwmon. */
void render_gpu_hwmon(struct node_layout *l, const struct yt_node *gp, const struct phys_gpu_params *g,
                      int first_card, int first_hwmon);

/* The amdkfd topology of the node's AMD GPUs (render_kfd.c), cards from first_card. */
void render_kfd(struct node_layout *l, const struct yt_node *tree, const struct yt_node *gp, int gpus,
                int first_card);

#endif
