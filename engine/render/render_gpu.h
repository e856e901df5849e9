/* render_gpu: helpers shared by the GPU renderers (render_gpu.c: PCI, NVML, tool facts;
 * render_gpu_hwmon.c: amdgpu and i915/xe sysfs). engine/segment/gpu_files.h is the contract. */
#ifndef HWEMU_RENDER_GPU_H
#define HWEMU_RENDER_GPU_H
#include "params.h"
#include "render.h"

/* "sys/devices/pci0000:<bb>/0000:<bb>:00.0" */
void gpu_pci_dir(int bus, char *buf, size_t len);
/* drm/card<card>/device in the PCI directory and the sys/class/drm/card<card> link. */
void gpu_drm_card(struct node_layout *l, int bus, int card);
/* dir/name, read-only, the formatted text and a newline. */
void gpu_static(struct node_layout *l, const char *dir, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* An S file bound to quantity (enum gpu_quantity) of GPU gpu. */
uint32_t gpu_value(struct node_layout *l, const char *path, const char *text, int gpu, int quantity);
/* An A file bound to setting (enum gpu_setting) of GPU gpu, with its validator's constants. */
uint32_t gpu_setting(struct node_layout *l, const char *path, uint16_t mode, const char *text, int gpu, int setting,
                     int validator, struct seg_param param, const char *words);
/* amdgpu or i915/xe sysfs of every GPU: cards from first_card, hwmon devices from first_hwmon. */
void render_gpu_hwmon(struct node_layout *l, const struct yt_node *gp, const struct phys_gpu_params *g,
                      int first_card, int first_hwmon);

/* The amdkfd topology of the node's AMD GPUs (render_kfd.c), cards from first_card. */
void render_kfd(struct node_layout *l, const struct yt_node *tree, const struct yt_node *gp, int gpus,
                int first_card);

#endif
