/* run_cgroup: a run's jobs as the nodes' cgroup v2 trees show them (docs/interfaces.md "Job
 * cgroups"): each job placed on a node claims one of the node's job cgroup slots
 * (runtime/node_unit.c) for as long as it runs, named as the spec's resource manager names it:
 *   slurm       job_<id>: id = (FNV-1a of the run id mod 20000) * 100000 + the job's index + 1, so
 *               a run's jobs have increasing numbers, two runs rarely share one, and a resumed
 *               run names its jobs as before
 *   kubernetes  kubepods-burstable-pod<uid>.slice: uid a version-4 form UUID from FNV-1a of the run
 *               id and jobId, dashes written as underscores (the kubelet's systemd driver); its
 *               container cri-containerd-<64 hex>.scope
 * The unit's memory.current is the job's memory request × (0.5 + 0.45 × memory intensity), in
 * 4 KiB pages (assumed residency: the trace gives only the request); memory.max is the request
 * (SLURM's ConstrainRAMSpace limit) or "max" (a Kubernetes pod without limits); cpu.weight 100, or
 * for a pod the kubelet's shares (requested millicores × 1024 / 1000) converted as runc converts
 * shares to cgroup v2 weight (1 + (shares - 2) × 9999 / 262142); the one process of cgroup.procs
 * is the job's process, /proc/<pid> of the node (engine/render/render_jobproc.c): pid
 * run_job_pid(), named by the trace's jobId in its cmdline. Never: placement (a job always has a
 * slot: placement counts them), the energy split. */
#include "engine.h"
#include "node.h"
#include "run.h"
#include "spec.h"

#include <stdio.h>
#include <string.h>

static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static unsigned long long slurm_id(const struct run *r, const struct run_job *j)
{
    return (unsigned long long)(fnv1a(14695981039346656037ULL, r->id) % 20000) * 100000ULL + (unsigned)j->index + 1;
}

/* The pod uid (36 characters) with sep between its groups, and the container id's 32 hex digits. */
static void pod_uid(const struct run *r, const struct run_job *j, char sep, char *uid, char *cid)
{
    uint64_t a = fnv1a(fnv1a(14695981039346656037ULL, r->id), "/");
    a = fnv1a(a, j->t->id);
    uint64_t b = fnv1a(a ^ 0x9e3779b97f4a7c15ULL, "pod");
    b = (b & ~0xf000ULL) | 0x4000ULL;                             /* version 4 */
    uint64_t c = (fnv1a(a, "node") & 0x3fffffffffffffffULL) | 0x8000000000000000ULL; /* variant 10 */
    snprintf(uid, 40, "%08llx%c%04llx%c%04llx%c%04llx%c%012llx", (unsigned long long)(a >> 32), sep,
             (unsigned long long)(a >> 16 & 0xffff), sep, (unsigned long long)(b & 0xffff), sep,
             (unsigned long long)(c >> 48), sep, (unsigned long long)(c & 0xffffffffffffULL));
    if (cid)
        snprintf(cid, 33, "%016llx%016llx", (unsigned long long)fnv1a(b, "c"), (unsigned long long)fnv1a(c, "c"));
}

int run_job_pid(const struct run_job *j)
{
    return RUN_JOB_PID_BASE + j->index;
}

void run_cgroup_path(const struct run *r, const struct run_job *j, char *buf, size_t cap)
{
    int mgr = r->e->spec.cgroups.manager;
    char uid[40];
    if (j->node < 0 || !r->nodes[j->node].slots || mgr == CG_NONE)
        snprintf(buf, cap, "%s", "");
    else if (mgr == CG_KUBERNETES) {
        pod_uid(r, j, '_', uid, NULL);
        snprintf(buf, cap, "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice", uid);
    } else {
        snprintf(buf, cap, "system.slice/slurmstepd.scope/job_%llu", slurm_id(r, j));
    }
}

static void claim(struct run *r, struct run_job *j, struct node *nd)
{
    const struct trace_job *t = j->t;
    char id[48], cid[40];
    if (r->e->spec.cgroups.manager == CG_KUBERNETES) {
        pod_uid(r, j, '_', id, cid);
    } else {
        snprintf(id, sizeof id, "%llu", slurm_id(r, j));
        cid[0] = 0;
    }
    double mi = t->mem_int < 0 ? 0 : t->mem_int > 1 ? 1 : t->mem_int;
    uint64_t req = (uint64_t)(t->mem_mib * 1048576.0);
    uint64_t shares = (uint64_t)(t->cpu_req * 1024 + 0.5);
    if (shares < 2)
        shares = 2;
    struct node_unit_info u = {
        .id = id,
        .cid = cid[0] ? cid : NULL,
        .cpus = j->cpus,
        .ncpus = t->cpus,
        .mem = (uint64_t)((double)req * (0.5 + 0.45 * mi)) / 4096 * 4096,
        .mem_max = r->e->spec.cgroups.manager == CG_KUBERNETES ? 0 : req,
        .weight = r->e->spec.cgroups.manager == CG_KUBERNETES ? (int)(1 + (shares - 2) * 9999 / 262142) : 100,
        .pid = run_job_pid(j),
        .name = t->id,
    };
    bool continued;
    j->slot = node_unit_claim(nd, &u, &continued);
}

void run_cgroup_sync(struct run *r, int i, struct node *nd)
{
    struct run_node *n = &r->nodes[i];
    if (!n->slots)
        return;
    for (int k = 0; k < n->ndone; k++) { /* finished in this hook: their directories go */
        struct run_job *j = &r->jobs[n->done[k]];
        j->cgroup_cpu_ns = node_unit_cpu_ns(nd, j->slot);
        node_unit_release(nd, j->slot);
        j->slot = -1;
    }
    for (int k = 0; k < n->njobs; k++) {
        struct run_job *j = &r->jobs[n->jobs[k]];
        if (r->ending) {
            j->cgroup_cpu_ns = node_unit_cpu_ns(nd, j->slot);
            node_unit_release(nd, j->slot);
            j->slot = -1;
        } else if (j->slot < 0) {
            claim(r, j, nd);
        }
    }
}
