/* render_topology: CPU topology, caches and NUMA nodes; see render_topology.h for the files and
 * the placement rules. Never: I/O, validation (profile_validate has done it), or any value
 * that changes while the node runs (everything here is R). */
#include "render_topology.h"

#include "profile.h"
#include "render_cpuinfo.h"
#include "render_devmodel.h"
#include "ytree.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where every CPU sits, computed once per render. */
struct topo {
    struct cpuinfo_cpu *cpus;
    int n;          /* CPUs */
    int nr;         /* possible CPU ids: the width of every mask (highest id + 1) */
    int sockets, cores, threads;
    int smt_bits, core_bits;
    int nodes;
    bool intel, vm;
    int *node;      /* NUMA node of cpus[i] */
    uint32_t *apic; /* derived APIC id of cpus[i] */
};

static int ceil_log2(long long v)
{
    int b = 0;
    while ((1LL << b) < v)
        b++;
    return b;
}

static int numa_nodes_of(const struct yt_node *tree, int sockets)
{
    long long n = prof_int(tree, "numa.nodes", 0);
    if (n >= 1)
        return (int)n;
    return prof_bool(tree, "cpu.oneSocketPerVCPU", false) ? 1 : (sockets > 0 ? sockets : 1);
}

/* The NUMA node of a CPU at (socket, core). */
static int node_of(const struct topo *t, int socket, int core)
{
    if (t->nodes >= t->sockets) {
        int parts = t->nodes / t->sockets;
        return socket * parts + core * parts / (t->cores > 0 ? t->cores : 1);
    }
    return socket * t->nodes / t->sockets;
}

static bool topo_load(const struct yt_node *tree, struct topo *t)
{
    memset(t, 0, sizeof *t);
    t->n = cpuinfo_cpus(tree, &t->cpus);
    if (t->n < 0)
        abort();
    t->vm = prof_bool(tree, "cpu.oneSocketPerVCPU", false);
    t->intel = !strcmp(prof_str(tree, "cpu.vendorID", ""), "GenuineIntel");
    t->threads = 1;
    for (int i = 0; i < t->n; i++) {
        const struct cpuinfo_cpu *c = &t->cpus[i];
        if (c->id + 1 > t->nr)
            t->nr = c->id + 1;
        if (c->socket + 1 > t->sockets)
            t->sockets = c->socket + 1;
        if (c->core + 1 > t->cores)
            t->cores = c->core + 1;
        if (c->thread + 1 > t->threads)
            t->threads = c->thread + 1;
    }
    if (t->sockets < 1)
        t->sockets = 1;
    t->smt_bits = ceil_log2(t->threads);
    t->core_bits = ceil_log2(t->cores);
    t->nodes = numa_nodes_of(tree, t->sockets);
    t->node = calloc((size_t)t->n + 1, sizeof *t->node);
    t->apic = calloc((size_t)t->n + 1, sizeof *t->apic);
    if (!t->node || !t->apic)
        abort();
    for (int i = 0; i < t->n; i++) {
        const struct cpuinfo_cpu *c = &t->cpus[i];
        t->node[i] = node_of(t, c->socket, c->core);
        if (t->node[i] >= t->nodes)
            t->node[i] = t->nodes - 1;
        t->apic[i] = (uint32_t)c->socket << (t->smt_bits + t->core_bits) | (uint32_t)c->core << t->smt_bits |
                     (uint32_t)c->thread;
    }
    return true;
}

static void topo_free(struct topo *t)
{
    free(t->cpus);
    free(t->node);
    free(t->apic);
}

/* --- masks and lists ------------------------------------------------------------------------ */

/* A set of CPU ids, nr wide. */
struct cpuset {
    uint32_t *w;
    int nr;
};

static struct cpuset set_new(int nr)
{
    struct cpuset s = {calloc((size_t)(nr + 31) / 32 + 1, sizeof(uint32_t)), nr};
    if (!s.w)
        abort();
    return s;
}

static void set_add(struct cpuset *s, int id)
{
    if (id >= 0 && id < s->nr)
        s->w[id / 32] |= 1u << (id % 32);
}

static bool set_has(const struct cpuset *s, int id)
{
    return id >= 0 && id < s->nr && (s->w[id / 32] >> (id % 32) & 1);
}

/* The kernel's %*pb: 32-bit groups, most significant first; the first group only as many hex
 * digits as its bits need. */
static size_t set_mask(const struct cpuset *s, char *out, size_t len)
{
    int groups = (s->nr + 31) / 32, used = 0;
    if (groups < 1)
        groups = 1;
    for (int g = groups - 1; g >= 0 && (size_t)used + 10 < len; g--) {
        int digits = 8;
        if (g == groups - 1 && s->nr % 32)
            digits = (s->nr % 32 + 3) / 4;
        used += snprintf(out + used, len - (size_t)used, "%s%0*x", g == groups - 1 ? "" : ",", digits, s->w[g]);
    }
    used += snprintf(out + used, len - (size_t)used, "\n");
    return (size_t)used;
}

/* The kernel's %*pbl: "0-23,48-71". */
static size_t set_list(const struct cpuset *s, char *out, size_t len)
{
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < s->nr && used + 24 < len; i++) {
        if (!set_has(s, i))
            continue;
        int j = i;
        while (j + 1 < s->nr && set_has(s, j + 1))
            j++;
        used += (size_t)snprintf(out + used, len - used, "%s%d", used ? "," : "", i);
        if (j > i)
            used += (size_t)snprintf(out + used, len - used, "-%d", j);
        i = j;
    }
    used += (size_t)snprintf(out + used, len - used, "\n");
    return used;
}

static size_t text_cap(int nr)
{
    return (size_t)nr * 8 + 128;
}

static void put(struct node_layout *l, const char *path, const char *text)
{
    segb_static(l->b, path, 0444, text, strlen(text));
}

/* dir/<name><mask> and dir/<name>_list of a set ("thread_siblings", ""; "shared_cpu", "_map"). */
static void put_set(struct node_layout *l, const char *dir, const char *name, const char *mask, const struct cpuset *s,
                    char *buf, size_t cap)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, mask);
    set_mask(s, buf, cap);
    put(l, path, buf);
    snprintf(path, sizeof path, "%s/%s_list", dir, name);
    set_list(s, buf, cap);
    put(l, path, buf);
}

/* --- CPUs --------------------------------------------------------------------------------------- */

static void cpu_root(struct node_layout *l, const struct topo *t, char *buf, size_t cap)
{
    struct cpuset all = set_new(t->nr);
    for (int i = 0; i < t->n; i++)
        set_add(&all, t->cpus[i].id);
    set_list(&all, buf, cap);
    static const char *const lists[] = {"online", "possible", "present"};
    char path[128];
    for (int m = 0; m < 3; m++) {
        snprintf(path, sizeof path, "sys/devices/system/cpu/%s", lists[m]);
        put(l, path, buf);
    }
    /* the cpuset of the process's cgroup (shim/emu/emu.c maps every cgroup's cpuset files here):
     * every CPU, as on a node whose agents no one restricted (hwloc drops the CPUs outside it) */
    put(l, "cgroup/cpuset.cpus", buf);
    put(l, "sys/devices/system/cpu/offline", "\n");
    put(l, "sys/devices/system/cpu/isolated", "\n");
    put(l, "sys/devices/system/cpu/kernel_max", "8191\n");
    /* kernel/cpu.c: "notsupported" where the CPU has no SMT to control (a VM's vCPUs) */
    bool smt = t->threads > 1;
    put(l, "sys/devices/system/cpu/smt/active", smt ? "1\n" : "0\n");
    put(l, "sys/devices/system/cpu/smt/control", smt ? "on\n" : t->vm ? "notsupported\n" : "off\n");
    free(all.w);
}

/* cpuN is a device of the cpu bus bound to ACPI's processor driver (drivers/base/cpu.c
 * register_cpu, cpu_uevent; drivers/acpi/processor_driver.c: .name "processor", .bus
 * &cpu_subsys), uevent the given text; the node owns it whole, so none of the host's CPU
 * attributes show through. */
static void cpu_topology(struct node_layout *l, const struct topo *t, int i, const char *uevent, char *buf,
                         size_t cap)
{
    const struct cpuinfo_cpu *c = &t->cpus[i];
    char dir[128], path[192], text[32];
    snprintf(dir, sizeof dir, "sys/devices/system/cpu/cpu%d", c->id);
    segb_dir(l->b, dir, 0755);
    segb_own(l->b, dir);
    dm_device(l, dir, "bus/cpu", uevent, DM_PM_CPU);
    dm_bus(l, dir, "cpu", "processor");
    if (c->id != 0) { /* CPU 0 cannot go offline: it has no online file */
        snprintf(path, sizeof path, "%s/online", dir);
        segb_static(l->b, path, 0644, "1\n", 2);
    }
    snprintf(path, sizeof path, "%s/node%d", dir, t->node[i]);
    snprintf(text, sizeof text, "../../node/node%d", t->node[i]);
    segb_link(l->b, path, text);
    snprintf(dir, sizeof dir, "sys/devices/system/cpu/cpu%d/topology", c->id);
    segb_dir(l->b, dir, 0755);
    segb_own(l->b, dir);
    static const char *const ids[] = {"physical_package_id", "die_id", "core_id", "cluster_id"};
    int vals[] = {c->socket, c->socket, c->core, t->intel ? (int)(t->apic[i] >> t->smt_bits) : 65535};
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, ids[k]);
        snprintf(text, sizeof text, "%d\n", vals[k]);
        put(l, path, text);
    }
    struct cpuset core = set_new(t->nr), pkg = set_new(t->nr);
    for (int j = 0; j < t->n; j++) {
        if (t->cpus[j].socket != c->socket)
            continue;
        set_add(&pkg, t->cpus[j].id);
        if (t->cpus[j].core == c->core)
            set_add(&core, t->cpus[j].id);
    }
    static const char *const core_names[] = {"thread_siblings", "core_cpus", "cluster_cpus"};
    static const char *const pkg_names[] = {"core_siblings", "package_cpus", "die_cpus"};
    for (int k = 0; k < 3; k++) {
        put_set(l, dir, core_names[k], "", &core, buf, cap);
        put_set(l, dir, pkg_names[k], "", &pkg, buf, cap);
    }
    free(core.w);
    free(pkg.w);
}

/* --- caches ------------------------------------------------------------------------------------- */

static void cpu_caches(struct node_layout *l, const struct yt_node *tree, const struct topo *t, int i, char *buf,
                       size_t cap)
{
    const struct yt_node *caches = yt_path(tree, "cpu.caches");
    if (!caches || caches->kind != YT_SEQ)
        return;
    const struct cpuinfo_cpu *c = &t->cpus[i];
    char dir[160], path[224], text[64];
    snprintf(dir, sizeof dir, "sys/devices/system/cpu/cpu%d/cache", c->id);
    segb_dir(l->b, dir, 0755);
    segb_own(l->b, dir);
    snprintf(path, sizeof path, "%s/uevent", dir);
    segb_static(l->b, path, 0644, "", 0);
    for (int k = 0; k < caches->n; k++) {
        const struct yt_node *e = caches->vals[k];
        long long size = prof_int(e, "sizeKB", 0), ways = prof_int(e, "ways", 1), line = prof_int(e, "lineBytes", 64);
        long long share = prof_int(e, "coresPerInstance", 1);
        if (share < 1)
            share = 1;
        if (ways < 1)
            ways = 1;
        if (line < 1)
            line = 64;
        char idx[192];
        snprintf(idx, sizeof idx, "%s/index%d", dir, k);
        int group = c->core / (int)share;
        uint32_t id = t->apic[i] >> (t->smt_bits + ceil_log2(share));
        struct {
            const char *name;
            long long v;
        } nums[] = {{"id", id}, {"level", prof_int(e, "level", 1)}, {"coherency_line_size", line},
                    {"ways_of_associativity", ways}, {"number_of_sets", size * 1024 / (ways * line)},
                    {"physical_line_partition", 1}};
        for (size_t q = 0; q < sizeof nums / sizeof nums[0]; q++) {
            snprintf(path, sizeof path, "%s/%s", idx, nums[q].name);
            snprintf(text, sizeof text, "%lld\n", nums[q].v);
            put(l, path, text);
        }
        snprintf(path, sizeof path, "%s/type", idx);
        snprintf(text, sizeof text, "%s\n", prof_str(e, "type", "Unified"));
        put(l, path, text);
        snprintf(path, sizeof path, "%s/size", idx);
        snprintf(text, sizeof text, "%lldK\n", size);
        put(l, path, text);
        snprintf(path, sizeof path, "%s/uevent", idx);
        segb_static(l->b, path, 0644, "", 0);
        struct cpuset sh = set_new(t->nr);
        for (int j = 0; j < t->n; j++)
            if (t->cpus[j].socket == c->socket && t->cpus[j].core / (int)share == group)
                set_add(&sh, t->cpus[j].id);
        put_set(l, idx, "shared_cpu", "_map", &sh, buf, cap);
        free(sh.w);
    }
}

/* --- NUMA nodes ------------------------------------------------------------------------------- */

static void numa_meminfo(struct node_layout *l, const char *dir, int k, long long total_kb)
{
    /* drivers/base/node.c node_read_meminfo: "Node %d %-15s %8lu kB" for the memory lines, then
     * the huge page counts "%5u" */
    static const char *const names[] = {
        "MemTotal:", "MemFree:", "MemUsed:", "SwapCached:", "Active:", "Inactive:", "Active(anon):",
        "Inactive(anon):", "Active(file):", "Inactive(file):", "Unevictable:", "Mlocked:", "Dirty:", "Writeback:",
        "FilePages:", "Mapped:", "AnonPages:", "Shmem:", "KernelStack:", "PageTables:", "SecPageTables:",
        "NFS_Unstable:", "Bounce:", "WritebackTmp:", "KReclaimable:", "Slab:", "SReclaimable:", "SUnreclaim:",
        "AnonHugePages:", "ShmemHugePages:", "ShmemPmdMapped:", "FileHugePages:", "FilePmdMapped:", "Unaccepted:"};
    long long free_kb = total_kb / 10 * 9;
    char text[4096], path[192];
    size_t used = 0;
    for (size_t q = 0; q < sizeof names / sizeof names[0]; q++) {
        long long v = q == 0 ? total_kb : q == 1 ? free_kb : q == 2 ? total_kb - free_kb : 0;
        used += (size_t)snprintf(text + used, sizeof text - used, "Node %d %-15s %8lld kB\n", k, names[q], v);
    }
    static const char *const huge[] = {"HugePages_Total:", "HugePages_Free:", "HugePages_Surp:"};
    for (int q = 0; q < 3; q++)
        used += (size_t)snprintf(text + used, sizeof text - used, "Node %d %-15s %5d\n", k, huge[q], 0);
    snprintf(path, sizeof path, "%s/meminfo", dir);
    segb_static(l->b, path, 0444, text, used);
}

static void numa(struct node_layout *l, const struct yt_node *tree, const struct topo *t, char *buf, size_t cap)
{
    char dir[96], path[192], text[64];
    snprintf(text, sizeof text, t->nodes > 1 ? "0-%d\n" : "0\n", t->nodes - 1);
    static const char *const lists[] = {"possible", "online", "has_cpu", "has_memory", "has_normal_memory"};
    for (int m = 0; m < 5; m++) {
        snprintf(path, sizeof path, "sys/devices/system/node/%s", lists[m]);
        put(l, path, text);
    }
    put(l, "sys/devices/system/node/has_generic_initiator", "\n");
    put(l, "cgroup/cpuset.mems", text); /* every memory node (cpu_root's cpuset.cpus) */
    const struct yt_node *dist = yt_path(tree, "numa.distances");
    long long mem_kb = prof_int(tree, "node.capacity.memoryKi", 0);
    for (int k = 0; k < t->nodes; k++) {
        snprintf(dir, sizeof dir, "sys/devices/system/node/node%d", k);
        segb_dir(l->b, dir, 0755);
        dm_device(l, dir, "bus/node", "", DM_PM_UNSUPPORTED); /* drivers/base/node.c register_node: no uevent */
        dm_bus(l, dir, "node", NULL);
        struct cpuset s = set_new(t->nr);
        for (int i = 0; i < t->n; i++)
            if (t->node[i] == k)
                set_add(&s, t->cpus[i].id);
        snprintf(path, sizeof path, "%s/cpumap", dir);
        set_mask(&s, buf, cap);
        put(l, path, buf);
        snprintf(path, sizeof path, "%s/cpulist", dir);
        set_list(&s, buf, cap);
        put(l, path, buf);
        for (int i = 0; i < t->n; i++)
            if (t->node[i] == k) {
                char link[160], target[64];
                snprintf(link, sizeof link, "%s/cpu%d", dir, t->cpus[i].id);
                snprintf(target, sizeof target, "../../cpu/cpu%d", t->cpus[i].id);
                segb_link(l->b, link, target);
            }
        free(s.w);
        /* distance: the SLIT row, "10 21"; without numa.distances, 10 local and 20 remote
         * (the kernel's defaults, LOCAL_DISTANCE and REMOTE_DISTANCE) */
        size_t used = 0;
        for (int j = 0; j < t->nodes && used + 16 < cap; j++) {
            long long d = k == j ? 10 : 20;
            int at = k * t->nodes + j;
            if (dist && dist->kind == YT_SEQ && at < dist->n)
                d = strtoll(yt_str(dist->vals[at]), NULL, 10);
            used += (size_t)snprintf(buf + used, cap - used, "%s%lld", j ? " " : "", d);
        }
        used += (size_t)snprintf(buf + used, cap - used, "\n");
        snprintf(path, sizeof path, "%s/distance", dir);
        segb_static(l->b, path, 0444, buf, used);
        numa_meminfo(l, dir, k, mem_kb / t->nodes);
        snprintf(path, sizeof path, "%s/numastat", dir);
        put(l, path, "numa_hit 0\nnuma_miss 0\nnuma_foreign 0\ninterleave_hit 0\nlocal_node 0\nother_node 0\n");
        static const char *const hp[] = {"nr_hugepages", "free_hugepages", "surplus_hugepages"};
        for (int q = 0; q < 3; q++) {
            snprintf(path, sizeof path, "%s/hugepages/hugepages-2048kB/%s", dir, hp[q]);
            put(l, path, "0\n");
        }
    }
}

void render_topology(struct node_layout *l, const struct yt_node *tree)
{
    struct topo t;
    topo_load(tree, &t);
    size_t cap = text_cap(t.nr);
    char *buf = malloc(cap);
    if (!buf)
        abort();
    cpu_root(l, &t, buf, cap);
    /* cpu_uevent: print_cpu_modalias, "cpu:type:" CPU_FEATURE_TYPEVAL ":feature:" and the CPU's
     * feature numbers (arch/x86/include/asm/cpufeature.h: "x86,ven%04Xfam%04Xmod%04X", vendor
     * X86_VENDOR_INTEL 0, X86_VENDOR_AMD 2). The feature numbers need CPUID bits no profile
     * holds: the list is empty (docs/whole-node.md "The driver model"). */
    char uevent[160];
    snprintf(uevent, sizeof uevent, "DRIVER=processor\nMODALIAS=cpu:type:x86,ven%04Xfam%04Xmod%04X:feature:\n",
             t.intel ? 0u : 2u, (unsigned)prof_int(tree, "cpu.family", 0), (unsigned)prof_int(tree, "cpu.model", 0));
    for (int i = 0; i < t.n; i++) {
        cpu_topology(l, &t, i, uevent, buf, cap);
        cpu_caches(l, tree, &t, i, buf, cap);
    }
    numa(l, tree, &t, buf, cap);
    /* The node's CPUs and NUMA nodes are its own: the host's cpuN and nodeN never show. */
    segb_own(l->b, "sys/devices/system/node");
    free(buf);
    topo_free(&t);
}

int topo_numa_nodes(const struct yt_node *tree)
{
    struct topo t;
    topo_load(tree, &t);
    int n = t.nodes;
    topo_free(&t);
    return n;
}

bool topo_node_cpus(const struct yt_node *tree, int k, bool mask, char *buf, size_t len)
{
    struct topo t;
    topo_load(tree, &t);
    bool ok = k >= 0 && k < t.nodes && len >= text_cap(t.nr);
    if (ok) {
        struct cpuset s = set_new(t.nr);
        for (int i = 0; i < t.n; i++)
            if (t.node[i] == k)
                set_add(&s, t.cpus[i].id);
        if (mask)
            set_mask(&s, buf, len);
        else
            set_list(&s, buf, len);
        free(s.w);
    }
    topo_free(&t);
    return ok;
}
