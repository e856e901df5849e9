/* render_uncore: the processor's uncore PCI functions, per socket, as a profile's `uncore` lists
 * them (profiles/README.md "Uncore PCI functions"; docs/whole-node.md "The uncore's PCI
 * functions"): on the Cascade Lake nodes the integrated memory controller's bus of each socket,
 * which likwid's direct mode (likwid-powermeter -M 0) looks for before it reads any register
 * (likwid 5.2.2 src/access_x86_pci.c: an 8086:2042 function, found through hwloc's PCI objects,
 * else through /proc/bus/pci/devices, names each socket's bus; it then checks
 * /proc/bus/pci/<bus>/<ss>.<f> of each function it knows). Each function is complete as every
 * PCI function is (render_pci.c: sysfs, config space, /proc/bus/pci, driver model); its config
 * space holds the header and the PCI Express capability, and every register past them reads 0:
 * no uncore counter or memory controller register is modelled. */
#include "profile.h"
#include "render.h"
#include "render_pci.h"
#include "render_topology.h"
#include "ytree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned hex(const char *s)
{
    return (unsigned)strtoul(s, NULL, 16);
}

/* One entry of `functions`, "ss.f:dddd" or "ss.f:dddd:driver"; false when it is not. (The
 * profile validator says where a bad one is; here a bad entry is skipped.) */
static bool parse_function(const char *tok, struct pci_fn *fn)
{
    unsigned slot, func, dev;
    char drv[32] = "";
    int n = sscanf(tok, "%2x.%1u:%4x:%31s", &slot, &func, &dev, drv);
    if (n < 3 || slot > 0x1f || func > 7)
        return false;
    fn->slot = (int)slot;
    fn->func = (int)func;
    fn->device = dev;
    snprintf(fn->driver, sizeof fn->driver, "%s", n == 4 ? drv : "");
    return true;
}

/* How many entries of `functions` are functions of device `slot`. */
static int functions_of(const char *functions, int slot)
{
    int n = 0;
    for (const char *t = functions; *t; t += strcspn(t, " "), t += strspn(t, " ")) {
        unsigned s;
        if (sscanf(t, "%2x.", &s) == 1 && (int)s == slot)
            n++;
    }
    return n;
}

void render_uncore(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p,
                   struct pci_proc *pp)
{
    const struct yt_node *u = yt_get(tree, "uncore");
    if (!u || prof_bool(tree, "cpu.hypervisor", false))
        return;
    const char *buses = prof_str(u, "buses", ""), *functions = prof_str(u, "functions", "");
    const char *module = prof_str(u, "module", "");
    int sockets = p->sockets < 1 ? 1 : p->sockets, nodes = topo_numa_nodes(tree);
    /* what every function shares; bus, NUMA node, device and function are set per function */
    const struct pci_fn common = {.rciep = true,
                                  .vendor = hex(prof_str(u, "vendor", "0x8086")),
                                  .cls = hex(prof_str(u, "class", "0x088000")),
                                  .revision = hex(prof_str(u, "revision", "0")),
                                  .subvendor = hex(prof_str(u, "subsystemVendor", "0")),
                                  .subdevice = hex(prof_str(u, "subsystemDevice", "0")),
                                  .module = *module ? module : NULL};
    char list[2048];
    const char *b = buses;
    for (int s = 0; s < sockets && *b; s++) {
        char *end;
        long bus = strtol(b, &end, 16);
        if (end == b || bus < 0 || bus > 0xff)
            return;
        b = end + strspn(end, " ");
        snprintf(list, sizeof list, "%s", functions);
        char *save = NULL;
        for (char *tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
            struct pci_fn fn = common;
            fn.bus = (int)bus;
            fn.numa_node = nodes > 0 ? s * nodes / sockets : -1;
            if (!parse_function(tok, &fn))
                continue;
            /* function 0 of a device with more functions sets the header's multi-function bit */
            fn.multifunction = fn.func == 0 && functions_of(functions, fn.slot) > 1;
            render_pci_function(l, tree, &fn, pp);
        }
    }
}
