/* render_cgroup: the node's cgroup v2 tree under /sys/fs/cgroup as the resource manager of the
 * spec (spec.jobCgroups, docs/interfaces.md "Job cgroups") lays it out for its jobs:
 *   slurm       system.slice/slurmstepd.scope/job_<id>/{...,step_batch/user/task_0/cgroup.procs}
 *               (the layout of SLURM's cgroup/v2 plugin as CEEMS reads it: ceems-dev/ceems
 *               pkg/collector/cgroup.go and its testdata sys.ttar)
 *   kubernetes  kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/
 *               cri-containerd-<id>.scope (the kubelet's systemd cgroup driver: a pod with
 *               requests and no limits is Burstable, kubernetes.io "Pod Quality of Service
 *               Classes"; the slice name escapes the uid's dashes as underscores)
 * Job directories are slots (segment.h "Slots"): K = min(maxJobsPerNode, the node's logical
 * CPUs) slot directories rendered once, whose names and presence the engine publishes as the
 * run places and ends jobs (every job holds at least one CPU of its own, so a node never runs
 * more jobs than it has CPUs). Per unit, the files containerd's cgroup2 Stat and CEEMS read
 * (cgroup.controllers, cpu.stat, cpuset.cpus.effective, memory.current, memory.max,
 * memory.stat, memory.events, memory.swap.*, io.stat, cgroup.procs, cpu.weight) with values:
 *   unit id        text, the slot's id (job number, pod uid; container id)
 *   CPU time       a time counter like the CPUs' busy counters (seg_view.h units), in the ledger:
 *                  the sum of the held CPUs' busy time since the job started there
 *   CPU mask       raw mask bytes for the cpuset view (one value per 384 CPUs)
 *   memory.current, memory.max, cpu.weight, cgroup.procs  texts
 * The root shows the node-level files (cgroup.controllers, cgroup.subtree_control, cpu.stat of
 * every CPU, cpuset.*.effective, ...). The whole of sys/fs/cgroup is the node's (owned): the
 * host's own cgroup tree never shows through. Never: anything about jobs at run time (the
 * runtime publishes the values, engine/runtime/node_unit.c). */
#include "render.h"
#include "seg_attr.h"
#include "seg_view.h"
#include "spec.h"

#include <stdio.h>
#include <string.h>

#define CG "sys/fs/cgroup"

static void file(struct node_layout *l, const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    segb_static(l->b, path, 0444, text, strlen(text));
}

static void dyn(struct node_layout *l, const char *dir, const char *name, uint32_t value, uint16_t view,
                uint32_t param)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    segb_dynamic(l->b, path, 0444, SEG_S, value, view, param);
}

static uint32_t find_bind(const struct node_layout *l, uint8_t kind, uint16_t cpu)
{
    for (uint32_t v = 0; v < l->nbinds; v++)
        if (l->binds[v].kind == kind && l->binds[v].cpu == cpu)
            return v;
    return SEG_NONE;
}

/* The files of an interior cgroup (a slice or scope with children). */
static void interior(struct node_layout *l, const char *dir, const char *controllers)
{
    segb_dir(l->b, dir, 0755);
    file(l, dir, "cgroup.controllers", controllers);
    file(l, dir, "cgroup.subtree_control", controllers);
    file(l, dir, "cgroup.procs", "");
    file(l, dir, "cgroup.type", "domain\n");
}

/* The unit files of slot k under dir (the job's cgroup, or the pod's). */
static void unit_files(struct node_layout *l, const char *dir, uint16_t k, uint32_t elapsed, uint32_t cpu_time,
                       uint32_t mask0, int nmask, const char *mems)
{
    struct seg_builder *b = l->b;
    file(l, dir, "cgroup.controllers", "cpuset cpu io memory pids\n");
    file(l, dir, "cgroup.subtree_control", "cpuset cpu io memory pids\n");
    file(l, dir, "cgroup.procs", "");
    file(l, dir, "cgroup.type", "domain\n");
    uint32_t cs = segb_param(b, (struct seg_param){.a = elapsed, .b = cpu_time, .c = 1, .d = 1, .related = SEG_NONE},
                             NULL);
    dyn(l, dir, "cpu.stat", cpu_time, SEG_VIEW_CG_CPU_STAT, cs);
    dyn(l, dir, "cpu.weight", layout_value(l, "100\n", (struct binding){.kind = BK_UNIT_WEIGHT, .cpu = k}), SV_NONE,
        SEG_NONE);
    file(l, dir, "cpu.max", "max 100000\n");
    uint32_t mp = segb_param(b, (struct seg_param){.a = mask0, .b = nmask, .related = SEG_NONE}, NULL);
    dyn(l, dir, "cpuset.cpus.effective", mask0, SEG_VIEW_CG_CPUS, mp);
    dyn(l, dir, "cpuset.cpus", mask0, SEG_VIEW_CG_CPUS, mp);
    file(l, dir, "cpuset.mems.effective", mems);
    uint32_t cur = layout_value(l, "0\n", (struct binding){.kind = BK_UNIT_MEM, .cpu = k});
    dyn(l, dir, "memory.current", cur, SV_NONE, SEG_NONE);
    dyn(l, dir, "memory.max", layout_value(l, "max\n", (struct binding){.kind = BK_UNIT_MEM_MAX, .cpu = k}), SV_NONE,
        SEG_NONE);
    uint32_t ms = segb_param(b, (struct seg_param){.a = cur, .related = SEG_NONE}, NULL);
    dyn(l, dir, "memory.stat", cur, SEG_VIEW_CG_MEMORY_STAT, ms);
    file(l, dir, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n");
    file(l, dir, "memory.swap.current", "0\n");
    file(l, dir, "memory.swap.max", "max\n");
    file(l, dir, "pids.current", "1\n");
    file(l, dir, "io.stat", ""); /* no block device model: a cgroup that did no I/O shows nothing */
}

int render_cgroup_slots(const struct phys_cpu_params *p, const struct job_cgroups *cg)
{
    int n = render_proc_ncpus(p);
    if (!cg || cg->manager == CG_NONE || n == 0)
        return 0;
    return cg->max_jobs < n ? cg->max_jobs : n;
}

void render_cgroup(struct node_layout *l, const struct phys_cpu_params *p, const struct job_cgroups *cg)
{
    int slots = render_cgroup_slots(p, cg);
    uint32_t elapsed = find_bind(l, BK_ELAPSED, 0), busy0 = find_bind(l, BK_CPU_BUSY, 0);
    if (!slots || elapsed == SEG_NONE || busy0 == SEG_NONE)
        return;
    struct seg_builder *b = l->b;
    int n = render_proc_ncpus(p);
    int sockets = p->sockets < 1 ? 1 : p->sockets > PHYS_MAX_PKGS ? PHYS_MAX_PKGS : p->sockets;
    char all_cpus[32], mems[32];
    snprintf(all_cpus, sizeof all_cpus, n > 1 ? "0-%d\n" : "0\n", n - 1);
    snprintf(mems, sizeof mems, sockets > 1 ? "0-%d\n" : "0\n", sockets - 1);

    /* the root: what the kernel shows at the top of a cgroup2 mount with these controllers */
    segb_dir(b, CG, 0755);
    file(l, CG, "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
    file(l, CG, "cgroup.subtree_control", "cpuset cpu io memory pids\n");
    file(l, CG, "cgroup.max.depth", "max\n");
    file(l, CG, "cgroup.max.descendants", "max\n");
    file(l, CG, "cgroup.procs", "1\n");
    file(l, CG, "cgroup.threads", "1\n");
    uint32_t rs = segb_param(b, (struct seg_param){.a = elapsed, .b = busy0, .c = n, .d = 0, .related = SEG_NONE},
                             NULL);
    dyn(l, CG, "cpu.stat", elapsed, SEG_VIEW_CG_CPU_STAT, rs);
    file(l, CG, "cpuset.cpus.effective", all_cpus);
    file(l, CG, "cpuset.mems.effective", mems);

    const char *parent;
    if (cg->manager == CG_KUBERNETES) {
        interior(l, CG "/kubepods.slice", "cpuset cpu io memory pids\n");
        interior(l, CG "/kubepods.slice/kubepods-burstable.slice", "cpuset cpu io memory pids\n");
        interior(l, CG "/kubepods.slice/kubepods-besteffort.slice", "cpuset cpu io memory pids\n");
        parent = CG "/kubepods.slice/kubepods-burstable.slice";
    } else {
        interior(l, CG "/system.slice", "cpuset cpu io memory pids\n");
        interior(l, CG "/system.slice/slurmstepd.scope", "cpuset cpu memory\n");
        parent = CG "/system.slice/slurmstepd.scope";
    }
    segb_dir(b, CG "/init.scope", 0755);
    file(l, CG "/init.scope", "cgroup.controllers", "");
    file(l, CG "/init.scope", "cgroup.procs", "1\n");

    int nmask = (n + SEG_TEXT_MAX * 8 - 1) / (SEG_TEXT_MAX * 8);
    for (int k = 0; k < slots; k++) {
        uint16_t sk = (uint16_t)k;
        uint32_t id = layout_value(l, "", (struct binding){.kind = BK_UNIT_ID, .cpu = sk});
        uint32_t cpu_time = layout_counter_ex(l, 1000, 64, false, (struct binding){.kind = BK_UNIT_CPU, .cpu = sk});
        uint32_t mask0 = SEG_NONE;
        for (int m = 0; m < nmask; m++) {
            uint32_t v = layout_value(l, "", (struct binding){.kind = BK_UNIT_MASK, .cpu = sk, .pkg = (uint8_t)m});
            if (m == 0)
                mask0 = v;
        }
        uint32_t procs = layout_value(l, "", (struct binding){.kind = BK_UNIT_PROCS, .cpu = sk});
        char dir[512], leaf[600];
        if (cg->manager == CG_KUBERNETES) {
            segb_slot_dir(b, parent, (uint32_t)k, id, "kubepods-burstable-pod\x01.slice", dir, sizeof dir);
            unit_files(l, dir, sk, elapsed, cpu_time, mask0, nmask, mems);
            /* the pod's one container: cri-containerd-<64 hex>.scope, its id the container's */
            uint32_t cid = layout_value(l, "", (struct binding){.kind = BK_UNIT_ID, .cpu = sk, .zone = 1});
            segb_slot_dir(b, dir, 0, cid, "cri-containerd-\x01\x01.scope", leaf, sizeof leaf);
            file(l, leaf, "cgroup.controllers", "cpuset cpu io memory pids\n");
            file(l, leaf, "cgroup.type", "domain\n");
            uint32_t cs = segb_param(
                b, (struct seg_param){.a = elapsed, .b = cpu_time, .c = 1, .d = 1, .related = SEG_NONE}, NULL);
            dyn(l, leaf, "cpu.stat", cpu_time, SEG_VIEW_CG_CPU_STAT, cs);
            dyn(l, leaf, "cgroup.procs", procs, SV_NONE, SEG_NONE);
        } else {
            segb_slot_dir(b, parent, (uint32_t)k, id, "job_\x01", dir, sizeof dir);
            unit_files(l, dir, sk, elapsed, cpu_time, mask0, nmask, mems);
            /* the batch step's task holds the job's process (CEEMS reads cgroup.procs below
             * job_<id>; the job-level file is empty, as SLURM leaves it) */
            snprintf(leaf, sizeof leaf, "%s/step_batch", dir);
            interior(l, leaf, "cpuset cpu memory\n");
            snprintf(leaf, sizeof leaf, "%s/step_batch/user/task_0", dir);
            segb_dir(b, leaf, 0755);
            file(l, leaf, "cgroup.controllers", "cpuset cpu memory\n");
            dyn(l, leaf, "cgroup.procs", procs, SV_NONE, SEG_NONE);
        }
    }
}
