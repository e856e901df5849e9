/* render_gpu_common: helpers shared by the GPU and PCI renderers (render_gpu_common.c; used by
 * render_gpu.c, render_gpu_hwmon.c, render_kfd.c, render_pci.c). engine/segment/gpu_files.h is
 * the contract of the files they lay out. */
#ifndef HWEMU_RENDER_GPU_COMMON_H
#define HWEMU_RENDER_GPU_COMMON_H
#include "layout.h"

#include <stddef.h>
#include <stdint.h>

/* "sys/devices/pci0000:<bb>/0000:<bb>:00.0" */
void gpu_pci_dir(int bus, char *buf, size_t len);
/* The DRM minor drm/<name> (card<N>, renderD<N>) of the PCI function on bus: its device
 * directory with `device`, `dev`, the driver model's entries (render_devmodel.h), and the
 * sys/class/drm/<name> link. */
void gpu_drm_minor(struct node_layout *l, int bus, const char *name, int minor);
/* gpu_drm_minor of card<card>. */
void gpu_drm_card(struct node_layout *l, int bus, int card);
/* dir/name, read-only, the formatted text and a newline. */
void gpu_static(struct node_layout *l, const char *dir, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* An S file bound to quantity (enum gpu_quantity) of GPU gpu. */
uint32_t gpu_value(struct node_layout *l, const char *path, const char *text, int gpu, int quantity);
/* An A file bound to setting (enum gpu_setting) of GPU gpu, with its validator's constants. */
uint32_t gpu_setting(struct node_layout *l, const char *path, uint16_t mode, const char *text, int gpu, int setting,
                     int validator, struct seg_param param, const char *words);

#endif
