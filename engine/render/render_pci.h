/* render_pci: PCI functions (pciutils/libpci, udev) and the /sys/module entries of the drivers
 * bound to them; engine/segment/gpu_files.h lists the files. */
#ifndef HWEMU_RENDER_PCI_H
#define HWEMU_RENDER_PCI_H
#include "layout.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct yt_node;

struct pci_bar {
    int index;                /* BAR 0-5 */
    bool bits64, prefetch;
    unsigned long long size;  /* bytes, a power of two */
};

/* One function at 0000:<bus>:<slot>.<func> (slot and func 0 unless set). */
struct pci_fn {
    int bus, slot, func;
    unsigned vendor, device, subvendor, subdevice, cls, revision;
    char driver[32];          /* "" when unbound */
    int irq, numa_node;
    int link_speed, link_width; /* PCIe generation 1-6 (2.5 to 64 GT/s) and lanes */
    bool boot_vga;
    struct pci_bar bars[6];
    int nbars;
    bool multifunction;       /* header type bit 7: function 0 of a device with more functions */
    bool rciep;               /* a root-complex integrated endpoint (the uncore's functions): its
                               * PCI Express capability has no link and it has no interrupt pin */
    const char *module;       /* the driver's module when it is not named as the driver (NULL) */
};

/* What /proc/bus/pci/devices lists: one line per rendered function, written once all are rendered
 * (render_pci_proc), sorted by bus and devfn as the kernel's device list is. */
struct pci_proc {
    char **lines;
    int n, cap;
};

/* The identity, driver and BARs of a profile's PCI mapping (pci[] entries, gpus.pci): vendor,
 * device, class, revision, subsystemVendor (default: vendor), subsystemDevice, driver, bars
 * ("0:64p:256G 2:64p:2M 5:32:1M"). Leaves bus, irq, node, link and boot_vga as they are. */
void pci_fn_from_profile(const struct yt_node *d, struct pci_fn *fn);
/* "sys/devices/pci0000:<bb>/0000:<bb>:<ss>.<f>" */
void pci_fn_dir(const struct pci_fn *fn, char *buf, size_t len);
/* The function's directory and files, its sys/bus/pci links, its driver's module, and its
 * /proc/bus/pci/<bb>/<ss>.<f> (the same config space) and line of /proc/bus/pci/devices in pp. */
void render_pci_function(struct node_layout *l, const struct yt_node *tree, const struct pci_fn *fn,
                         struct pci_proc *pp);
/* sys/module/<module> (initstate "live", ...) with the link to its PCI driver, once per module. */
void render_pci_module(struct node_layout *l, const char *driver, const char *module);
/* proc/bus/pci/devices from pp (then freed), and proc/bus/pci owned by the node: the host's buses
 * never show through. */
void render_pci_proc(struct node_layout *l, struct pci_proc *pp);

#endif
