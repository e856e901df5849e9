/* render_pci: one PCI function as the kernel shows it to pciutils/libpci and udev, and the
 * /sys/module entries of the drivers a node loads (engine/segment/gpu_files.h has the list of
 * files; Linux 6.12 drivers/pci/pci-sysfs.c, drivers/pci/pci-driver.c, kernel/module/sysfs.c).
 * Never: values that change while the node runs (everything here is R). */
#include "render_pci.h"

#include "gpu_files.h"
#include "profile.h"
#include "render_devmodel.h"
#include "render_gpu_common.h"
#include "render_topology.h"
#include "ytree.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned hex_of(const char *s, unsigned dflt)
{
    if (!s || !*s)
        return dflt;
    return (unsigned)strtoul(s, NULL, 16);
}

/* "0:64p:256G 2:64p:2M 5:32:1M": BAR index, width (32/64), p = prefetchable, size with K/M/G. */
static int parse_bars(const char *text, struct pci_bar *bars, int max)
{
    int n = 0;
    const char *p = text;
    while (p && *p && n < max) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        char *end;
        struct pci_bar b = {0};
        b.index = (int)strtol(p, &end, 10);
        if (*end != ':')
            break;
        b.bits64 = !strncmp(end + 1, "64", 2);
        p = end + 3;
        if (*p == 'p') {
            b.prefetch = true;
            p++;
        }
        if (*p != ':')
            break;
        unsigned long long size = strtoull(p + 1, &end, 10);
        int unit = toupper((unsigned char)*end);
        size <<= unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0;
        b.size = size;
        if (b.index >= 0 && b.index < 6 && size)
            bars[n++] = b;
        p = end + (unit == 'K' || unit == 'M' || unit == 'G');
    }
    return n;
}

void pci_fn_from_profile(const struct yt_node *d, struct pci_fn *fn)
{
    fn->vendor = hex_of(prof_str(d, "vendor", ""), 0xffff);
    fn->device = hex_of(prof_str(d, "device", ""), 0xffff);
    fn->subvendor = hex_of(prof_str(d, "subsystemVendor", ""), fn->vendor);
    fn->subdevice = hex_of(prof_str(d, "subsystemDevice", ""), 0);
    fn->cls = hex_of(prof_str(d, "class", ""), 0);
    fn->revision = hex_of(prof_str(d, "revision", ""), 0);
    const char *drv = prof_str(d, "driver", "");
    snprintf(fn->driver, sizeof fn->driver, "%s", drv);
    fn->nbars = parse_bars(prof_str(d, "bars", ""), fn->bars, 6);
}

/* The standard type-0 header (include/uapi/linux/pci_regs.h), a power-management capability at
 * 0x40 and a PCI Express endpoint capability at 0x50 (link speed/width from the function),
 * the rest of the 256 bytes zero. A root-complex integrated endpoint (the uncore's functions,
 * which decode no address range: command 0, no BARs, no interrupt pin) has its PCI Express
 * capability (device/port type 1001b, no link) at 0x40 alone. */
static void config_space(const struct pci_fn *fn, const uint64_t *addr, unsigned char *c)
{
    memset(c, 0, 256);
#define W16(o, v) (c[o] = (unsigned char)(v), c[(o) + 1] = (unsigned char)((v) >> 8))
#define W32(o, v) (W16(o, (v) & 0xffff), W16((o) + 2, ((uint32_t)(v)) >> 16))
    W16(0x00, fn->vendor);
    W16(0x02, fn->device);
    W16(0x04, fn->rciep ? 0x0000 : 0x0006); /* memory space, bus master */
    W16(0x06, 0x0010);                 /* capabilities list */
    c[0x08] = (unsigned char)fn->revision;
    W16(0x09, fn->cls & 0xffff);       /* prog-if, subclass */
    c[0x0b] = (unsigned char)(fn->cls >> 16);
    c[0x0c] = fn->rciep ? 0 : 0x10;    /* cache line: 64 bytes */
    c[0x0e] = fn->multifunction ? 0x80 : 0x00;
    for (int i = 0; i < fn->nbars; i++) {
        const struct pci_bar *b = &fn->bars[i];
        uint32_t lo = (uint32_t)(addr[i] & 0xfffffff0u) | (b->bits64 ? 0x4 : 0) | (b->prefetch ? 0x8 : 0);
        W32(0x10 + 4 * b->index, lo);
        if (b->bits64 && b->index < 5)
            W32(0x10 + 4 * (b->index + 1), (uint32_t)(addr[i] >> 32));
    }
    W16(0x2c, fn->subvendor);
    W16(0x2e, fn->subdevice);
    c[0x34] = 0x40;                    /* first capability */
    if (fn->rciep) {
        c[0x40] = 0x10;                /* PCI Express, version 2, root complex integrated endpoint */
        W16(0x42, 0x0092);
        return;
    }
    c[0x3c] = (unsigned char)fn->irq;
    c[0x3d] = 1;                       /* INTA# */
    c[0x40] = 0x01;                    /* power management, version 3, next 0x50 */
    c[0x41] = 0x50;
    W16(0x42, 0x0003);
    c[0x50] = 0x10;                    /* PCI Express, version 2, endpoint, last */
    c[0x51] = 0x00;
    W16(0x52, 0x0002);
    W32(0x5c, (uint32_t)(fn->link_speed | fn->link_width << 4)); /* LnkCap */
    W16(0x62, fn->link_speed | fn->link_width << 4);             /* LnkSta */
#undef W16
#undef W32
}

void pci_fn_dir(const struct pci_fn *fn, char *buf, size_t len)
{
    snprintf(buf, len, "sys/devices/pci0000:%02x/0000:%02x:%02x.%x", fn->bus, fn->bus, fn->slot, fn->func);
}

/* The function's line of /proc/bus/pci/devices (drivers/pci/proc.c show_device): bus and devfn,
 * vendor and device, irq, then the start of BARs 0-5 and the ROM with the BAR's low flag bits
 * (PCI_REGION_FLAG_MASK), their sizes, and the bound driver's name. */
static void proc_line(struct pci_proc *pp, const struct pci_fn *fn, const uint64_t *addr)
{
    char line[512];
    int n = snprintf(line, sizeof line, "%02x%02x\t%04x%04x\t%x", fn->bus, fn->slot << 3 | fn->func, fn->vendor,
                     fn->device, fn->irq);
    for (int pass = 0; pass < 2; pass++)
        for (int r = 0; r < 7; r++) {
            unsigned long long v = 0;
            for (int i = 0; i < fn->nbars; i++)
                if (fn->bars[i].index == r)
                    v = pass ? fn->bars[i].size
                             : addr[i] | (fn->bars[i].bits64 ? 0x4 : 0) | (fn->bars[i].prefetch ? 0x8 : 0);
            n += snprintf(line + n, sizeof line - (size_t)n, "\t%16llx", v);
        }
    if (fn->driver[0])
        n += snprintf(line + n, sizeof line - (size_t)n, "\t%s", fn->driver);
    snprintf(line + n, sizeof line - (size_t)n, "\n");
    if (pp->n == pp->cap) {
        int cap = pp->cap ? 2 * pp->cap : 64;
        char **grown = realloc(pp->lines, (size_t)cap * sizeof *grown);
        if (!grown)
            return;
        pp->lines = grown;
        pp->cap = cap;
    }
    char *copy = strdup(line);
    if (copy)
        pp->lines[pp->n++] = copy;
}

static int line_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void render_pci_proc(struct node_layout *l, struct pci_proc *pp)
{
    segb_dir(l->b, "proc/bus/pci", 0555);
    segb_own(l->b, "proc/bus/pci");
    if (pp->n > 1)
        qsort(pp->lines, (size_t)pp->n, sizeof *pp->lines, line_cmp); /* "BBDD": bus, then devfn */
    size_t len = 0;
    for (int i = 0; i < pp->n; i++)
        len += strlen(pp->lines[i]);
    char *text = malloc(len + 1), *at = text;
    for (int i = 0; text && i < pp->n; i++)
        at = stpcpy(at, pp->lines[i]);
    segb_static(l->b, "proc/bus/pci/devices", 0444, text ? text : "", text ? len : 0);
    free(text);
    for (int i = 0; i < pp->n; i++)
        free(pp->lines[i]);
    free(pp->lines);
    *pp = (struct pci_proc){0};
}

void render_pci_function(struct node_layout *l, const struct yt_node *tree, const struct pci_fn *fn,
                         struct pci_proc *pp)
{
    char dir[128], path[256], text[512];
    pci_fn_dir(fn, dir, sizeof dir);
    segb_dir(l->b, dir, 0755);
    gpu_static(l, dir, "vendor", "0x%04x", fn->vendor);
    gpu_static(l, dir, "device", "0x%04x", fn->device);
    gpu_static(l, dir, "subsystem_vendor", "0x%04x", fn->subvendor);
    gpu_static(l, dir, "subsystem_device", "0x%04x", fn->subdevice);
    gpu_static(l, dir, "class", "0x%06x", fn->cls);
    gpu_static(l, dir, "revision", "0x%02x", fn->revision);
    gpu_static(l, dir, "irq", "%d", fn->irq);
    gpu_static(l, dir, "enable", "1");
    gpu_static(l, dir, "power_state", "D0");
    gpu_static(l, dir, "dma_mask_bits", "64");
    gpu_static(l, dir, "consistent_dma_mask_bits", "64");
    gpu_static(l, dir, "broken_parity_status", "0");
    gpu_static(l, dir, "msi_bus", "1");
    gpu_static(l, dir, "d3cold_allowed", "1");
    gpu_static(l, dir, "boot_vga", "%d", fn->boot_vga);
    static const char *const speeds[] = {"Unknown", "2.5 GT/s PCIe", "5.0 GT/s PCIe", "8.0 GT/s PCIe",
                                         "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe"};
    const char *speed = speeds[fn->link_speed >= 1 && fn->link_speed <= 6 ? fn->link_speed : 0];
    gpu_static(l, dir, "current_link_speed", "%s", speed);
    gpu_static(l, dir, "max_link_speed", "%s", speed);
    gpu_static(l, dir, "current_link_width", "%d", fn->link_width);
    gpu_static(l, dir, "max_link_width", "%d", fn->link_width);
    snprintf(path, sizeof path, "%s/numa_node", dir);
    snprintf(text, sizeof text, "%d\n", fn->numa_node);
    segb_static(l->b, path, 0644, text, strlen(text));
    char cpus[8192];
    if (topo_node_cpus(tree, fn->numa_node < 0 ? 0 : fn->numa_node, false, cpus, sizeof cpus)) {
        snprintf(path, sizeof path, "%s/local_cpulist", dir);
        segb_static(l->b, path, 0444, cpus, strlen(cpus));
        topo_node_cpus(tree, fn->numa_node < 0 ? 0 : fn->numa_node, true, cpus, sizeof cpus);
        snprintf(path, sizeof path, "%s/local_cpus", dir);
        segb_static(l->b, path, 0444, cpus, strlen(cpus));
    }
    /* BAR addresses: 64-bit BARs in a window of 1 TiB per bus above 32 TiB, 32-bit ones in 64 MiB
     * per bus from 0x90000000, each aligned to its size (firmware-like, stated; no source). */
    uint64_t addr[6] = {0}, hi = (0x200000ULL + (uint64_t)fn->bus * 0x10000ULL) << 20,
             lo = 0x90000000ULL + (uint64_t)fn->bus * 0x4000000ULL;
    for (int i = 0; i < fn->nbars; i++) {
        uint64_t *next = fn->bars[i].bits64 ? &hi : &lo, size = fn->bars[i].size;
        *next = (*next + size - 1) / size * size;
        addr[i] = *next;
        *next += size;
    }
    /* resource: BAR0-5, the ROM, then the bridge windows (none): "start end flags" each */
    size_t used = 0;
    for (int r = 0; r < 13; r++) {
        uint64_t start = 0, end = 0, flags = 0;
        for (int i = 0; r < 6 && i < fn->nbars; i++)
            if (fn->bars[i].index == r) {
                start = addr[i];
                end = addr[i] + fn->bars[i].size - 1;
                /* IORESOURCE_MEM | SIZEALIGN, MEM_64, PREFETCH (include/linux/ioport.h) */
                flags = 0x40200 | (fn->bars[i].bits64 ? 0x100000 : 0) | (fn->bars[i].prefetch ? 0x2000 : 0);
            }
        used += (size_t)snprintf(text + used, sizeof text - used, "0x%016llx 0x%016llx 0x%016llx\n",
                                 (unsigned long long)start, (unsigned long long)end, (unsigned long long)flags);
        if (used >= sizeof text - 64)
            break;
    }
    snprintf(path, sizeof path, "%s/resource", dir);
    segb_static(l->b, path, 0444, text, used);
    unsigned char cfg[256];
    config_space(fn, addr, cfg);
    snprintf(path, sizeof path, "%s/config", dir);
    segb_static(l->b, path, 0644, (const char *)cfg, sizeof cfg);
    /* drivers/pci/proc.c: proc/bus/pci/<bb>/<ss>.<f>, 0644, the same config space */
    snprintf(path, sizeof path, "proc/bus/pci/%02x", fn->bus);
    segb_dir(l->b, path, 0555);
    snprintf(path, sizeof path, "proc/bus/pci/%02x/%02x.%x", fn->bus, fn->slot, fn->func);
    segb_static(l->b, path, 0644, (const char *)cfg, sizeof cfg);
    proc_line(pp, fn, addr);
    char modalias[128];
    snprintf(modalias, sizeof modalias, "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X", fn->vendor, fn->device,
             fn->subvendor, fn->subdevice, fn->cls >> 16, (fn->cls >> 8) & 0xff, fn->cls & 0xff);
    gpu_static(l, dir, "modalias", "%s", modalias);
    used = 0;
    if (fn->driver[0])
        used += (size_t)snprintf(text, sizeof text, "DRIVER=%s\n", fn->driver);
    used += (size_t)snprintf(text + used, sizeof text - used,
                             "PCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\nPCI_SLOT_NAME=0000:%02x:%02x.%x\n"
                             "MODALIAS=%s\n",
                             fn->cls, fn->vendor, fn->device, fn->subvendor, fn->subdevice, fn->bus, fn->slot,
                             fn->func, modalias);
    /* the bus libsensors and udev read; power/: pci_pm_init forbids runtime PM ("on", "active") */
    dm_device(l, dir, "bus/pci", text, DM_PM_ON);
    dm_bus(l, dir, "pci", fn->driver);
    if (fn->driver[0])
        render_pci_module(l, fn->driver, fn->module ? fn->module : fn->driver);
}

void render_pci_module(struct node_layout *l, const char *driver, const char *module)
{
    char dir[96], path[192], target[128];
    snprintf(dir, sizeof dir, "sys/module/%s", module);
    if (segb_find(l->b, dir) != SEG_NONE)
        return;
    segb_dir(l->b, dir, 0755);
    segb_own(l->b, dir);
    gpu_static(l, dir, "initstate", "live");
    gpu_static(l, dir, "refcnt", "0");
    gpu_static(l, dir, "coresize", "0");
    snprintf(path, sizeof path, "%s/taint", dir);
    segb_static(l->b, path, 0444, "\n", 1);
    snprintf(path, sizeof path, "%s/uevent", dir);
    segb_static(l->b, path, 0644, "", 0);
    snprintf(path, sizeof path, "%s/drivers/pci:%s", dir, driver);
    snprintf(target, sizeof target, "../../../bus/pci/drivers/%s", driver);
    segb_link(l->b, path, target);
    snprintf(path, sizeof path, "sys/bus/pci/drivers/%s/module", driver);
    snprintf(target, sizeof target, "../../../../module/%s", module);
    segb_link(l->b, path, target);
}
