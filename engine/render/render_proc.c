/* render_proc: the node's /proc files that stock tools read for load and memory (issue 14):
 *   proc/stat      view (seg_view.h): per-CPU busy/idle ticks from the CPU time counters
 *   proc/uptime    view: elapsed and summed idle time
 *   proc/loadavg   S text: load averages (physics calc_load), running/threads, last pid
 *   proc/meminfo   view: MemTotal = node.capacity.memoryKi (the kubelet's capacity.memory is
 *                  MemTotal, read by cadvisor from /proc/meminfo), used share from the load's
 *                  memory intensity (node.c)
 * and the values behind them: one elapsed-time counter for the node, one busy-time counter per
 * logical CPU (value order = CPU index), both in the ledger so they never go back across
 * restarts. The shim maps /proc/<name> to proc/<name> (shim/emu/emu.c). */
#include "params.h"
#include "profile.h"
#include "render.h"
#include "seg_attr.h"
#include "seg_view.h"
#include "ytree.h"

#include <stdio.h>
#include <string.h>

int render_proc_ncpus(const struct phys_cpu_params *p)
{
    int npkgs = p->sockets < 1 ? 1 : p->sockets > PHYS_MAX_PKGS ? PHYS_MAX_PKGS : p->sockets;
    if (p->cpus < 1)
        return 0;
    return p->cpus < npkgs ? npkgs : p->cpus > PHYS_MAX_CPUS ? PHYS_MAX_CPUS : p->cpus;
}

void render_proc(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p)
{
    int n = render_proc_ncpus(p);
    if (n == 0)
        return;
    struct seg_builder *b = l->b;
    uint32_t elapsed = layout_counter_ex(l, 1000, 64, false, (struct binding){.kind = BK_ELAPSED});
    uint32_t busy0 = SEG_NONE;
    for (int i = 0; i < n; i++) {
        uint32_t v = layout_counter_ex(l, 1000, 64, false, (struct binding){.kind = BK_CPU_BUSY, .cpu = (uint16_t)i});
        if (i == 0)
            busy0 = v;
    }
    uint32_t times = segb_param(b, (struct seg_param){.a = elapsed, .b = busy0, .c = n, .related = SEG_NONE}, NULL);
    segb_dynamic(b, "proc/stat", 0444, SEG_S, elapsed, SEG_VIEW_PROC_STAT, times);
    segb_dynamic(b, "proc/uptime", 0444, SEG_S, elapsed, SEG_VIEW_PROC_UPTIME, times);
    segb_dynamic(b, "proc/loadavg", 0444, SEG_S,
                 layout_value(l, "0.00 0.00 0.00 1/1 1\n", (struct binding){.kind = BK_LOADAVG}), SV_NONE,
                 SEG_NONE);
    long long total_kb = prof_int(tree, "node.capacity.memoryKi", 0);
    if (total_kb > 0) {
        uint32_t used = layout_value(l, "0\n", (struct binding){.kind = BK_MEM_USED});
        uint32_t mp = segb_param(b, (struct seg_param){.a = total_kb, .b = used, .related = SEG_NONE}, NULL);
        segb_dynamic(b, "proc/meminfo", 0444, SEG_S, used, SEG_VIEW_PROC_MEMINFO, mp);
    }
}
