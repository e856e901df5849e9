/* render_pci: PCI functions (pciutils/libpci, udev) and the /sys/module entries of the drivers
 * bound to them; engine/segment/gpu_files.h lists the files. */
#ifndef HWEMU_RENDER_PCI_H
#define HWEMU_RENDER_PCI_H
#include "layout.h"

#include <stdbool.h>
#include <stdint.h>

struct yt_node;

struct pci_bar {
    int index;                /* BAR 0-5 */
    bool bits64, prefetch;
    unsigned long long size;  /* bytes, a power of two */
};

/* One function at 0000:<bus>:00.0. */
struct pci_fn {
    int bus;
    unsigned vendor, device, subvendor, subdevice, cls, revision;
    char driver[32];          /* "" when unbound */
    int irq, numa_node;
    int link_speed, link_width; /* PCIe generation 1-6 (2.5 to 64 GT/s) and lanes */
    bool boot_vga;
    struct pci_bar bars[6];
    int nbars;
};

/* The identity, driver and BARs of a profile's PCI mapping (pci[] entries, gpus.pci): vendor,
 * device, class, revision, subsystemVendor (default: vendor), subsystemDevice, driver, bars
 * ("0:64p:256G 2:64p:2M 5:32:1M"). Leaves bus, irq, node, link and boot_vga as they are. */
void pci_fn_from_profile(const struct yt_node *d, struct pci_fn *fn);
/* The function's directory and files, its sys/bus/pci links, and its driver's module. */
void render_pci_function(struct node_layout *l, const struct yt_node *tree, const struct pci_fn *fn);
/* sys/module/<driver> (initstate "live", ...), once per driver. */
void render_pci_module(struct node_layout *l, const char *driver);

#endif
