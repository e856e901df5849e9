/* render_gpu_common: what the GPU and PCI renderers share (render_gpu.c, render_gpu_hwmon.c,
 * render_kfd.c, render_pci.c): a PCI function's directory, a GPU's DRM card links, and the three
 * kinds of file they lay out (a static text, a GPU quantity, a GPU setting). It calls only the
 * layout and the segment builder, so none of those files depends on another through it. */
#include "render_gpu_common.h"

#include "render_devmodel.h"
#include "seg_attr.h"

#include <stdarg.h>
#include <stdio.h>

void gpu_pci_dir(int bus, char *buf, size_t len)
{
    snprintf(buf, len, "sys/devices/pci0000:%02x/0000:%02x:00.0", bus, bus);
}

uint32_t gpu_value(struct node_layout *l, const char *path, const char *text, int gpu, int quantity)
{
    return segb_dynamic(l->b, path, 0444, SEG_S,
                        layout_value(l, text, (struct binding){.kind = BK_GPU, .zone = (uint8_t)quantity,
                                                              .pkg = (uint8_t)gpu}),
                        SV_NONE, SEG_NONE);
}

uint32_t gpu_setting(struct node_layout *l, const char *path, uint16_t mode, const char *text, int gpu, int setting,
                     int validator, struct seg_param param, const char *words)
{
    uint32_t prm = segb_param(l->b, param, words);
    return segb_dynamic(l->b, path, mode, SEG_A,
                        layout_value(l, text, (struct binding){.kind = BK_GPU_SET, .zone = (uint8_t)setting,
                                                              .pkg = (uint8_t)gpu}),
                        (uint16_t)validator, prm);
}

void gpu_static(struct node_layout *l, const char *dir, const char *name, const char *fmt, ...)
{
    char path[512], text[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof text - 2)
        n = (int)sizeof text - 2;
    text[n++] = '\n';
    snprintf(path, sizeof path, "%s/%s", dir, name);
    segb_static(l->b, path, 0444, text, (size_t)n);
}

void gpu_drm_minor(struct node_layout *l, int bus, const char *name, int minor)
{
    char pci[128], dir[192], text[128];
    gpu_pci_dir(bus, pci, sizeof pci);
    snprintf(dir, sizeof dir, "%s/drm/%s", pci, name);
    segb_dir(l->b, dir, 0755);
    dm_link(l, dir, "device", pci);
    dm_link(l, "sys/class/drm", name, dir);
    /* drm_sysfs.c: class drm, type drm_minor, devt 226:minor, devnode "dri/<name>";
     * dev_uevent prints MAJOR, MINOR, DEVNAME, DEVTYPE; device_add adds `dev` ("226:<minor>") */
    snprintf(text, sizeof text, "MAJOR=226\nMINOR=%d\nDEVNAME=dri/%s\nDEVTYPE=drm_minor\n", minor, name);
    dm_device(l, dir, "class/drm", text, DM_PM_UNSUPPORTED);
    gpu_static(l, dir, "dev", "226:%d", minor);
}

void gpu_drm_card(struct node_layout *l, int bus, int card)
{
    char name[32];
    snprintf(name, sizeof name, "card%d", card);
    gpu_drm_minor(l, bus, name, card);
}
