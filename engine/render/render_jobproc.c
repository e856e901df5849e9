/* render_jobproc: each job cgroup slot's process as /proc/<pid> of the node (docs/interfaces.md
 * "Jobs as processes"), so exporters that attribute by process (Scaphandre through sysinfo, ps,
 * top) see the run's jobs. One proc slot directory per job cgroup slot (segment.h "Slots"):
 *   proc/<pid>/        slot directory named by the pid value (BK_UNIT_PID), owned: a name it
 *                      does not render does not exist (it is never the host's)
 *     stat, status, statm   views over the unit's CPU-time counter, its process text value
 *                      (BK_UNIT_PROC) and memory.current (seg_view.h SEG_VIEW_PID_*)
 *     cmdline          "hwemu-job\0<jobId>\0" (a template over BK_UNIT_NAME)
 *     cgroup           "0::/<the job's cgroup>\n", the directory render_cgroup.c made for it
 *                      (SLURM: the batch step's task; Kubernetes: the pod's container)
 *     comm, io, environ, exe   static: "hwemu-job", no I/O, no environment, /usr/bin/hwemu-job
 *     task/<pid>/      the one thread: stat, status, statm, comm, cmdline, cgroup
 * The process's name is synthetic (no program runs); its numbers come from the same values as
 * the job's cgroup files, so /proc/<pid>/stat and cpu.stat count the same CPU time. Must be called
 * after render_cgroup (it uses the slots' values). Never: anything at run time (the runtime
 * publishes the values, engine/runtime/node_unit.c). */
#include "render.h"
#include "seg_view.h"
#include "spec.h"

#include <stdio.h>
#include <string.h>

#define COMM "hwemu-job"

static uint32_t find_unit(const struct node_layout *l, uint8_t kind, uint16_t k, uint8_t zone)
{
    for (uint32_t v = 0; v < l->nbinds; v++)
        if (l->binds[v].kind == kind && l->binds[v].cpu == k && l->binds[v].zone == zone)
            return v;
    return SEG_NONE;
}

/* A template view (seg_view.h SEG_VIEW_TEMPLATE) at dir/name: text with "\x01<v>\x02" markers. */
static void templ(struct node_layout *l, const char *dir, const char *name, const char *text, int markers,
                  uint32_t any_value)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    uint32_t pa = segb_param(l->b, (struct seg_param){.a = (int64_t)strlen(text), .b = markers, .related = SEG_NONE},
                             text);
    segb_dynamic(l->b, path, 0444, SEG_S, any_value, SEG_VIEW_TEMPLATE, pa);
}

/* The files of one process (or thread) directory. */
static void proc_files(struct node_layout *l, const char *dir, uint32_t views, uint32_t info, const char *cmdline,
                       const char *cgroup, int cg_markers, uint32_t id)
{
    char path[512];
    snprintf(path, sizeof path, "%s/stat", dir);
    segb_dynamic(l->b, path, 0444, SEG_S, info, SEG_VIEW_PID_STAT, views);
    snprintf(path, sizeof path, "%s/status", dir);
    segb_dynamic(l->b, path, 0444, SEG_S, info, SEG_VIEW_PID_STATUS, views);
    snprintf(path, sizeof path, "%s/statm", dir);
    segb_dynamic(l->b, path, 0444, SEG_S, info, SEG_VIEW_PID_STATM, views);
    snprintf(path, sizeof path, "%s/comm", dir);
    segb_static(l->b, path, 0644, COMM "\n", strlen(COMM) + 1);
    templ(l, dir, "cmdline", cmdline, 1, info);
    templ(l, dir, "cgroup", cgroup, cg_markers, id);
}

void render_jobproc(struct node_layout *l, const struct phys_cpu_params *p, const struct job_cgroups *cg)
{
    int slots = render_cgroup_slots(p, cg);
    uint32_t elapsed = SEG_NONE;
    for (uint32_t v = 0; v < l->nbinds && elapsed == SEG_NONE; v++)
        if (l->binds[v].kind == BK_ELAPSED)
            elapsed = v;
    if (!slots || elapsed == SEG_NONE)
        return;
    struct seg_builder *b = l->b;
    static const char io[] = "rchar: 0\nwchar: 0\nsyscr: 0\nsyscw: 0\nread_bytes: 0\nwrite_bytes: 0\n"
                             "cancelled_write_bytes: 0\n";
    for (int k = 0; k < slots; k++) {
        uint16_t sk = (uint16_t)k;
        uint32_t id = find_unit(l, BK_UNIT_ID, sk, 0), cid = find_unit(l, BK_UNIT_ID, sk, 1);
        uint32_t cpu = find_unit(l, BK_UNIT_CPU, sk, 0), mem = find_unit(l, BK_UNIT_MEM, sk, 0);
        if (id == SEG_NONE || cpu == SEG_NONE || mem == SEG_NONE)
            continue;
        uint32_t pid = layout_value(l, "", (struct binding){.kind = BK_UNIT_PID, .cpu = sk});
        uint32_t info = layout_value(l, "", (struct binding){.kind = BK_UNIT_PROC, .cpu = sk});
        uint32_t name = layout_value(l, "", (struct binding){.kind = BK_UNIT_NAME, .cpu = sk});
        uint32_t views = segb_param(
            b, (struct seg_param){.a = elapsed, .b = cpu, .c = info, .d = mem, .related = SEG_NONE}, COMM);
        char cmdline[64], cgroup[400];
        snprintf(cmdline, sizeof cmdline, COMM "\x03\x01%u\x02\x03", name);
        int markers;
        if (cg->manager == CG_KUBERNETES && cid != SEG_NONE) {
            snprintf(cgroup, sizeof cgroup,
                     "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod\x01%u\x02.slice/"
                     "cri-containerd-\x01%u\x02\x01%u\x02.scope\n",
                     id, cid, cid);
            markers = 3;
        } else {
            snprintf(cgroup, sizeof cgroup, "0::/system.slice/slurmstepd.scope/job_\x01%u\x02/step_batch/user/task_0\n",
                     id);
            markers = 1;
        }
        char dir[512], task[600], tdir[700], path[800];
        segb_slot_dir(b, "proc", (uint32_t)k, pid, "\x01", dir, sizeof dir);
        segb_own(b, dir);
        proc_files(l, dir, views, info, cmdline, cgroup, markers, id);
        snprintf(path, sizeof path, "%s/io", dir);
        segb_static(b, path, 0400, io, sizeof io - 1);
        snprintf(path, sizeof path, "%s/environ", dir);
        segb_static(b, path, 0400, "", 0);
        snprintf(path, sizeof path, "%s/exe", dir);
        segb_link(b, path, "/usr/bin/" COMM);
        snprintf(task, sizeof task, "%s/task", dir);
        segb_dir(b, task, 0555);
        segb_slot_dir(b, task, 0, pid, "\x01", tdir, sizeof tdir);
        proc_files(l, tdir, views, info, cmdline, cgroup, markers, id);
    }
}
