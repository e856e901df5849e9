/* engine: start, tick loop, snapshot; see engine.h.
 * The tick thread sleeps to each absolute tick deadline (CLOCK_MONOTONIC), releases the
 * workers, waits for them, publishes the telemetry snapshot and records the tick's cost. A
 * tick that ends past the next deadline is an overrun: the loop skips to the next deadline
 * in the future, so nodes are always stepped to wall time, never replayed. */
#include "engine.h"

#include "engine_clock.h"
#include "load.h"
#include "events.h"
#include "root.h"
#include "ytree.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

const double tick_bucket_le[TICK_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,   0.25,   0.5,   1,    2.5,   5};

static int64_t now_of(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
    while (nanosleep(&ts, &ts) == EINTR)
        ;
}

static const char *const class_names[] = {"cpu.compute_bound", "cpu.memory_bound", "cpu.io_bound", "cpu.mixed"};

static int class_of(const char *c)
{
    for (int i = 0; i < 4; i++)
        if (c && !strcmp(c, class_names[i]))
            return i;
    return PHYS_CLASS_COMPUTE_BOUND;
}

double engine_ambient_c(const struct engine *e, int pool, int64_t wall_ns)
{
    const struct facility *f = &e->spec.facility;
    double hours = (double)wall_ns / 3.6e12;
    double c = f->ambient_c + f->amplitude_c * sin(2 * M_PI * hours / f->period_h);
    const char *zone = pool >= 0 ? e->spec.pools[pool].cooling_zone : NULL;
    for (int i = 0; zone && i < f->nzones; i++)
        if (!strcmp(f->zones[i].name, zone))
            c += f->zones[i].offset_c;
    return c;
}

int engine_find(const struct engine *e, const char *name)
{
    const struct spec_node *n = spec_find_node(&e->spec, name);
    return n ? (int)(n - e->spec.nodes) : -1;
}

static void fill_telemetry(const struct engine *e, int i, struct node_telemetry *t, double ambient)
{
    const struct node *n = &e->nodes[i];
    const struct spec_pool *pool = &e->spec.pools[e->spec.nodes[i].pool];
    const struct phys_cpu_state *s = &n->state;
    memset(t, 0, sizeof *t);
    t->name = n->name;
    t->pool = pool->name;
    t->profile = n->profile;
    t->npkgs = s->npkgs;
    t->ambient_c = ambient;
    t->cpu_util = n->load.cpu_util;
    t->memory_intensity = n->load.memory_intensity;
    t->cpu_class = class_names[n->load.cpu_class & 3];
    t->cpu_throttle_pct = phys_cpu_dvfs_throttle_pct(&n->params, s);
    t->cpu_thermal_throttle_pct = n->thermal_pct;
    for (int k = 0; k < s->npkgs; k++) {
        const struct phys_pkg_state *p = &s->pkg[k];
        t->pkg_power_w[k] = p->power_w;
        t->pkg_temp_c[k] = p->temp_c;
        t->pkg_cap_w[k] = isfinite(p->cap_w) ? p->cap_w : 0;
        t->pkg_capped[k] = p->capped;
        t->pkg_freq_khz[k] = phys_cpu_cur_freq_khz(&n->params, s, k);
        t->pkg_pl1_uw[k] = p->pl_limit_uw[PHYS_PL1];
        t->pkg_pl2_uw[k] = p->pl_limit_uw[PHYS_PL2];
        t->pkg_energy_uj[k] = phys_energy_total_uj(s, PHYS_ZONE_PACKAGE, k);
        t->dram_energy_uj[k] = phys_energy_total_uj(s, PHYS_ZONE_DRAM, k);
        t->cpu_power_w += p->power_w;
        t->pkg_dram_power_w[k] = (double)p->energy[PHYS_ZONE_DRAM].power_uw / 1e6;
        t->dram_power_w += t->pkg_dram_power_w[k];
        t->node_energy_uj += t->pkg_energy_uj[k] + t->dram_energy_uj[k];
        t->core_power_w[k] = (double)p->energy[PHYS_ZONE_CORE].power_uw / 1e6;
        t->core_energy_uj[k] = phys_energy_total_uj(s, PHYS_ZONE_CORE, k);
        if (n->params.pkg[k].rapl_present)
            t->has_rapl_limits = true;
    }
    t->node_power_w = node_power_w(n); /* GPUs included */
    t->node_power_reading_w = n->power.current_w;
    t->node_power_min_w = n->power.min_w;
    t->node_power_max_w = n->power.max_w;
    t->node_power_avg_w = node_power_avg_w(n);
    t->node_power_period_ms = node_power_period_ms(n);
    t->platform_power_w = (double)s->psys.power_uw / 1e6;
    t->platform_energy_uj = phys_energy_total_uj(s, PHYS_ZONE_PSYS, 0);
    /* the zones the node renders an energy_uj for: its energy counters (a few per node) */
    for (uint32_t c = 0; c < n->ncounters; c++) {
        const struct binding *b = &n->binds[n->counters[c]];
        if (b->kind != BK_ENERGY)
            continue;
        t->has_energy_zones = true;
        if (b->zone == PHYS_ZONE_PSYS)
            t->has_psys = true;
        else if (b->pkg < PHYS_MAX_PKGS)
            t->pkg_zones[b->pkg] |= (uint8_t)(1u << b->zone);
    }
    const struct phys_gpu_params *gp = &n->gparams;
    static const char *const vendors[] = {"", "nvidia", "amd", "intel"};
    t->ngpus = gp->vendor == PHYS_GPU_NONE ? 0 : gp->count;
    t->gpu_vendor = vendors[gp->vendor & 3];
    t->gpu_product = n->gpu_product;
    t->gpu_util = n->gload.util;
    for (int k = 0; k < t->ngpus; k++) {
        const struct phys_gpu *g = &n->gstate.g[k];
        t->gpu_power_w[k] = g->power_w;
        t->gpu_draw_w[k] = node_gpu_draw_w(n, k);
        t->gpu_limit_w[k] = g->limit_w;
        t->gpu_enforced_w[k] = g->enforced_w;
        t->gpu_temp_c[k] = g->temp_c;
        t->gpu_clock_mhz[k] = g->gfx_mhz;
        t->gpu_mem_clock_mhz[k] = g->mem_mhz;
        t->gpu_energy_uj[k] = phys_gpu_total_uj(&n->gstate, k);
        t->gpu_capped[k] = g->capped;
        t->gpu_power_total_w += g->power_w;
        t->node_energy_uj += t->gpu_energy_uj[k];
    }
    t->last_write = n->last_write;
    t->redfish_retry_s = n->faults.redfish_retry_s;
}

/* The cluster's totals, from a snapshot the workers filled. */
static void sum_totals(const struct engine *e, struct telemetry *t)
{
    struct cluster_totals *c = &t->totals;
    memset(c, 0, sizeof *c);
    c->nodes = t->n;
    c->ambient_c = t->ambient_c;
    for (int i = 0; i < t->n; i++) {
        const struct node_telemetry *n = &t->nodes[i];
        c->power_w += n->node_power_w;
        c->cpu_w += n->cpu_power_w;
        c->dram_w += n->dram_power_w;
        c->gpu_w += n->gpu_power_total_w;
        c->other_w += e->nodes[i].state.powered_off ? 0 : e->nodes[i].params.platform_other_w;
        c->energy_j += (double)n->node_energy_uj / 1e6;
        bool capped = false;
        for (int k = 0; k < n->npkgs; k++)
            capped = capped || n->pkg_capped[k];
        for (int k = 0; k < n->ngpus; k++)
            capped = capped || n->gpu_capped[k];
        c->capped += capped;
    }
}

/* --speed max in batches of more than one tick (engine.h batch_ticks). */
#define ENGINE_WRITE_POLL 8
static bool batched(const struct engine *e)
{
    return e->cfg.speed == ENGINE_SPEED_MAX && e->cfg.batch_ticks > 1;
}

static void tick_slice(struct engine *e, int w)
{
    int nw = e->cfg.workers;
    int from = (int)((long)e->nnodes * w / nw), to = (int)((long)e->nnodes * (w + 1) / nw);
    bool lazy = batched(e) && !e->full_tick;
    for (int i = from; i < to; i++) {
        struct node *n = &e->nodes[i];
        /* inside a batch: only a node whose hook asked for this tick, or that an agent wrote to
         * (looked at every ENGINE_WRITE_POLL ticks, a share of the nodes each tick: the header
         * of every segment at every tick would cost more than the batch saves) */
        if (lazy && e->tick_mono < n->wake_mono &&
            ((uint64_t)i + e->batch_pos) % ENGINE_WRITE_POLL != 0)
            continue;
        bool wrote = batched(e) && node_has_writes(n);
        if (lazy && e->tick_mono < n->wake_mono && !wrote)
            continue;
        n->wake_mono = e->next_full_mono;
        double amb = engine_ambient_c(e, e->spec.nodes[i].pool, e->tick_wall);
        node_tick(n, e->tick_mono, e->tick_until, e->tick_wall, amb, e->events);
        /* limits an agent wrote take effect from now, and a power still settling moves: the
         * node steps again at the next tick (until its power holds) */
        if (batched(e) && (wrote || node_settling(n)))
            node_wake(n, e->tick_mono + 1);
        if (e->next && !lazy)
            fill_telemetry(e, i, &e->next->nodes[i], amb);
    }
}

struct worker_arg {
    struct engine *e;
    int w;
};

static void *worker(void *arg)
{
    struct worker_arg *a = arg;
    for (;;) {
        pthread_barrier_wait(&a->e->start);
        if (a->e->stop == 2)
            break;
        tick_slice(a->e, a->w);
        pthread_barrier_wait(&a->e->done);
    }
    free(a);
    return NULL;
}

static void free_telemetry(struct rcu_head *h)
{
    free(caa_container_of(h, struct telemetry, rcu));
}

static struct telemetry *new_telemetry(int n)
{
    struct telemetry *t = calloc(1, sizeof *t + sizeof t->nodes[0] * (size_t)(n ? n : 1));
    if (!t)
        abort();
    t->n = n;
    return t;
}

static void publish_telemetry(struct engine *e)
{
    struct telemetry *old = e->telemetry;
    e->next->wall_ns = e->tick_wall;
    e->next->tick = atomic_load(&e->ticks);
    e->next->cluster = e->spec.name;
    e->next->facility = &e->spec.facility;
    e->next->ambient_c = engine_ambient_c(e, -1, e->tick_wall);
    e->next->seq = old ? old->seq + 1 : 1;
    sum_totals(e, e->next);
    history_push(e->history, e->tick_wall, &e->next->totals);
    rcu_assign_pointer(e->telemetry, e->next);
    e->next = new_telemetry(e->nnodes);
    if (old)
        call_rcu(&old->rcu, free_telemetry);
}

static void record_tick(struct engine *e, int64_t ns)
{
    atomic_fetch_add(&e->ticks, 1);
    atomic_fetch_add(&e->tick_sum_ns, (uint64_t)ns);
    double s = (double)ns / 1e9;
    int b = 0;
    while (b < TICK_BUCKETS && s > tick_bucket_le[b])
        b++;
    atomic_fetch_add(&e->tick_bucket[b], 1);
}

/* Where this tick's lines end (emulated time): never after the next tick's time, which the
 * next tick restarts every line from. engine_run sleeps to absolute deadlines, so a tick that
 * woke late comes less than a tick before the next one: its lines end at the next deadline
 * (in the loop's grid: the first deadline after real, the time this tick woke). Without the
 * loop (engine_tick called directly: `hwemu run`, the start's tick, benchmarks), the next tick
 * comes a whole period after this one ended, or at tick_ns of emulated time at speed max: one
 * tick. segment.h "Counters"; docs/robustness.md "Between two ticks". */
static int64_t tick_until(const struct engine *e, int64_t real)
{
    int64_t next = e->next_deadline, period = e->deadline_period;
    if (!next || period <= 0 || e->cfg.speed == ENGINE_SPEED_MAX)
        return e->tick_mono + e->cfg.tick_ns;
    if (next <= real) /* woken after the next deadline too: the grid's first one past now */
        next += ((real - next) / period + 1) * period;
    double speed = e->cfg.speed > 1 ? e->cfg.speed : 1;
    return e->tick_mono + (int64_t)((double)(next - real) * speed);
}

/* One tick of every node, on the workers (or this thread with one worker). */
static void tick_all(struct engine *e)
{
    /* emulated time: wall time at speed 1, N times as fast, or one tick per tick at max */
    int64_t real = now_of(CLOCK_MONOTONIC);
    if (!e->real_last) {
        e->tick_mono = real;
        e->wall_minus_mono = now_of(CLOCK_REALTIME) - real;
        /* every node's physics starts at this tick, whenever its opening ended: how long the
         * openings took (the machine's load) never enters the physics */
        for (int i = 0; i < e->nnodes; i++)
            node_rebase(&e->nodes[i], e->tick_mono);
    } else if (e->cfg.speed == ENGINE_SPEED_MAX) {
        e->tick_mono += e->cfg.tick_ns;
    } else if (e->cfg.speed > 1) {
        e->tick_mono += (int64_t)((double)(real - e->real_last) * e->cfg.speed);
    } else {
        e->tick_mono += real - e->real_last;
    }
    e->real_last = real;
    e->tick_wall = e->tick_mono + e->wall_minus_mono;
    e->tick_until = tick_until(e, real);
    if (batched(e)) { /* the batch's first tick steps and publishes every node */
        e->full_tick = e->batch_pos == 0;
        e->next_full_mono = e->tick_mono + (int64_t)(e->cfg.batch_ticks - e->batch_pos) * e->cfg.tick_ns;
        e->batch_pos = (e->batch_pos + 1) % (uint64_t)e->cfg.batch_ticks;
    } else {
        e->full_tick = true;
        e->next_full_mono = INT64_MIN; /* every node steps at every tick */
    }
    if (e->debug_hold_ns) { /* HWEMU_DEBUG_LATE_TICK: the nodes publish this long after the tick's time */
        sleep_ns(e->debug_hold_ns);
        e->debug_hold_ns = 0;
    }
    if (e->hooks.before)
        e->hooks.before(e->hooks.ctx, e);
    if (!e->threads) { /* one worker, or before the workers start */
        for (int w = 0; w < e->cfg.workers; w++)
            tick_slice(e, w);
    } else {
        pthread_barrier_wait(&e->start);
        tick_slice(e, 0);
        pthread_barrier_wait(&e->done);
    }
    if (e->full_tick) /* in a batch, the snapshot of its first tick stands for the whole batch */
        publish_telemetry(e);
    if (e->hooks.after)
        e->hooks.after(e->hooks.ctx, e);
}

int64_t engine_tick(struct engine *e)
{
    if (e->clock && e->cfg.speed == ENGINE_SPEED_MAX) /* the agents' deadlines before this tick */
        engine_clock_serve(e, e->tick_mono + e->cfg.tick_ns);
    int64_t t0 = now_of(CLOCK_MONOTONIC);
    tick_all(e);
    int64_t took = now_of(CLOCK_MONOTONIC) - t0;
    record_tick(e, took);
    if (e->clock)
        engine_clock_ticked(e);
    return took;
}

void engine_run(struct engine *e)
{
    if (e->cfg.speed == ENGINE_SPEED_MAX) {
        while (!e->stop)
            engine_tick(e);
        return;
    }
    int64_t period = e->cfg.speed > 1 ? (int64_t)((double)e->cfg.tick_ns / e->cfg.speed) : e->cfg.tick_ns;
    if (period < 1)
        period = 1;
    int64_t deadline = now_of(CLOCK_MONOTONIC) + period;
    for (uint64_t k = 0; !e->stop; k++) {
        struct timespec ts = {.tv_sec = deadline / 1000000000, .tv_nsec = deadline % 1000000000};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !e->stop)
           ;
        if (e->stop)
            break;
        e->next_deadline = deadline + period; /* tick_until: the next tick never comes before it */
        e->deadline_period = period;
        if (e->cfg.debug_late_ns && (k & 1) == 0)
            sleep_ns(e->cfg.debug_late_ns); /* this tick wakes late */
        else if (e->cfg.debug_late_ns)
            e->debug_hold_ns = e->cfg.debug_late_ns; /* this one is on time and publishes late */
        engine_tick(e);
        deadline += period;
        int64_t now = now_of(CLOCK_MONOTONIC);
        if (now >= deadline) {
            uint64_t missed = (uint64_t)((now - deadline) / period) + 1;
            atomic_fetch_add(&e->overruns, missed);
            deadline += (int64_t)missed * period;
        }
    }
}

static struct phys_load base_load(const struct spec_pool *p)
{
    return (struct phys_load){.cpu_util = p->base.cpu_util, .memory_intensity = p->base.memory_intensity,
                              .cpu_class = class_of(p->base.cpu_class)};
}

static struct phys_gpu_load gpu_load(const struct spec_pool *p)
{
    const char *c = p->base.gpu_class ? p->base.gpu_class : "";
    struct phys_gpu_load l = {.util = p->base.gpu_util, .memory_intensity = p->base.memory_intensity,
                              .cls = !strcmp(c, "gpu.compute_bound")                                     ? PHYS_GPU_CLASS_COMPUTE
                                     : !strcmp(c, "gpu.memory_bound") || !strcmp(c, "gpu.bandwidth_bound") ? PHYS_GPU_CLASS_MEMORY
                                                                                                        : PHYS_GPU_CLASS_OTHER};
    for (int k = 0; k < p->base.nxfer && k < PHYS_GPU_MAX_XFER; k++)
        l.xfer[l.nxfer++] = (struct phys_gpu_xfer){p->base.xfer[k].from, p->base.xfer[k].to, p->base.xfer[k].gbps};
    return l;
}

/* One line of what engine_start has to say (engine.said). */
static void say(struct engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct engine *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = NULL;
    int len = vasprintf(&line, fmt, ap);
    va_end(ap);
    size_t had = e->said ? strlen(e->said) : 0;
    char *said = len < 0 ? NULL : realloc(e->said, had + (size_t)len + 2);
    if (!said)
        abort();
    memcpy(said + had, line, (size_t)len);
    memcpy(said + had + (size_t)len, "\n", 2);
    e->said = said;
    free(line);
}

/* Nodes whose failure to open is printed; the others are counted (a full root would print
 * one line a node). */
#define ENGINE_FAILS_SHOWN 10

/* MemAvailable of /proc/meminfo in bytes, 0 when unknown. */
static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}

/* What the process's cgroup (v2) still lets it use: memory.max less memory.current, bytes; 0
 * when it sets no limit or none can be read. A container's MemAvailable is the host's. */
static uint64_t cgroup_headroom(void)
{
    char line[600], path[800];
    FILE *f = fopen("/proc/self/cgroup", "re");
    bool found = false;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "0::", 3)) {
            line[strcspn(line, "\n")] = 0;
            found = true;
            break;
        }
    if (f)
        fclose(f);
    if (!found)
        return 0;
    unsigned long long max = 0, cur = 0;
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
    f = fopen(path, "re");
    bool limited = f && fscanf(f, "%llu", &max) == 1; /* "max": no limit */
    if (f)
        fclose(f);
    if (!limited)
        return 0;
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.current", line + 3);
    f = fopen(path, "re");
    if (!f || fscanf(f, "%llu", &cur) != 1)
        cur = 0;
    if (f)
        fclose(f);
    return max > cur ? max - cur : 1;
}

/* The root's file system keeps its files in memory (tmpfs, ramfs: /dev/shm, the default). */
static bool root_in_memory(const char *root)
{
    struct statfs sf;
    return !statfs(root, &sf) && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC);
}

static double gib(uint64_t b)
{
    return (double)b / (1u << 30);
}

/* b bytes for a person: "3.4 GiB", or "812 MiB" below a GiB (a static buffer of k, 0..4). */
static const char *human(uint64_t b, int k)
{
    static char buf[5][32];
    k = k < 0 ? 0 : k % 5;
    if (b >= (UINT64_C(1) << 30))
        snprintf(buf[k], sizeof buf[0], "%.1f GiB", gib(b));
    else
        snprintf(buf[k], sizeof buf[0], "%.0f MiB", (double)b / (1 << 20));
    return buf[k];
}

/* What every node of the spec needs (docs/robustness.md "Capacity"), before any is allocated or
 * written: what it really takes once started and running jobs, its private memory
 * (node_resident_bytes and two telemetry snapshots) and its segment in the root (the pages a
 * new file holds, seg_image_resident, and each layout's static file; a segment already there of
 * this node counts as pages it will reuse), the segments counted as memory too when the root
 * keeps its files in memory (tmpfs), against what the machine has available (MemAvailable, or
 * the cgroup's memory.max headroom when smaller) and the root's free space; the holes agents'
 * writes and counter reads fill later are not counted, and the messages say how much they can
 * add. The process's address space limit (RLIMIT_AS: every segment is mapped whole) is checked
 * against the whole: node_private_bytes and every file's size. 0, or -1 with one message naming
 * the need, what there is and the remedy. */
static int check_capacity(const struct engine *e, const struct engine_config *cfg, char *err, size_t errlen)
{
    const char *root = cfg->root;
    uint64_t mem = 0, disk = 0, mapped = 0, whole = 0, ps = (uint64_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < e->nnodes; i++) {
        const struct node_template *t = &e->templates[e->spec.nodes[i].pool];
        mem += node_resident_bytes(t) + 2 * sizeof(struct node_telemetry);
        whole += node_private_bytes(t) + 2 * sizeof(struct node_telemetry);
        disk += seg_image_resident(&t->image, ps);
        mapped += t->image.size;
    }
    for (int p = 0; p < e->spec.npools; p++) {
        disk += e->spec.pools[p].count ? e->templates[p].image.st_size : 0;
        mapped += e->spec.pools[p].count ? e->templates[p].image.st_size : 0;
    }
    uint64_t holes = mapped - disk; /* what agents' writes and counter reads may fill later */
    /* segments already there (a resume) are space the nodes reuse, and memory already taken */
    int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (int i = 0; dfd >= 0 && i < e->nnodes; i++) {
        char name[300];
        struct stat st;
        snprintf(name, sizeof name, "%s.seg", e->spec.nodes[i].name);
        if (!fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode)) {
            uint64_t have = (uint64_t)st.st_blocks * 512,
                     want = seg_image_resident(&e->templates[e->spec.nodes[i].pool].image, ps);
            disk -= have < want ? have : want;
        }
    }
    if (dfd >= 0)
        close(dfd);
    bool in_mem = root_in_memory(root);
    uint64_t need = mem + (in_mem ? disk : 0);
    uint64_t avail = cfg->debug_mem_available ? cfg->debug_mem_available : mem_available(), cg = cgroup_headroom();
    const char *what = cfg->debug_mem_available ? "HWEMU_DEBUG_MEM_AVAILABLE, a test setting" : "MemAvailable";
    if (cg && (!avail || cg < avail)) {
        avail = cg;
        what = "its cgroup's memory.max less memory.current";
    }
    if (avail && need > avail) {
        char segs[600] = "";
        if (in_mem)
            snprintf(segs, sizeof segs, " (%s of node state in the engine, %s of segments in the root %s, a tmpfs, "
                     "which keeps them in memory; what the nodes take once started, each with its job cgroup slots; "
                     "not a run's trace and jobs, nor the pages agents' writes and counter reads add to the "
                     "segments later, up to %s more)",
                     human(mem, 0), human(disk, 1), root, human(holes, 4));
        else
            snprintf(segs, sizeof segs, " (node state in the engine once started, each node with its job cgroup "
                     "slots; not a run's trace and jobs)");
        snprintf(err, errlen, "%d nodes need about %s of memory%s and this machine has %s available (%s): start "
                 "fewer nodes (split the spec across engines with --shard, each with its own --root)%s or free "
                 "memory", e->nnodes, human(need, 2), segs, human(avail, 3), what,
                 in_mem ? ", choose a --root (SIM_HWEMU_ROOT) on a disk-backed file system (the segments then live "
                          "in its page cache)," : "");
        return -1;
    }
    struct rlimit as;
    if (!getrlimit(RLIMIT_AS, &as) && as.rlim_cur != RLIM_INFINITY && whole + mapped > (uint64_t)as.rlim_cur) {
        snprintf(err, errlen, "%d nodes need about %s of address space (%s of node state and %s of mapped "
                 "segments) and the process may have %s (RLIMIT_AS, ulimit -v): raise the limit (ulimit -v "
                 "unlimited) or start fewer nodes", e->nnodes, human(whole + mapped, 0), human(whole, 1),
                 human(mapped, 2), human((uint64_t)as.rlim_cur, 3));
        return -1;
    }
    /* one memory map a node (seg_map) against the kernel's limit of maps a process may have */
    long max_maps = 0, maps_now = 0;
    FILE *mf = fopen("/proc/sys/vm/max_map_count", "r");
    if (mf) {
        if (fscanf(mf, "%ld", &max_maps) != 1)
            max_maps = 0;
        fclose(mf);
    }
    if (max_maps > 0 && (mf = fopen("/proc/self/maps", "r"))) {
        for (int c; (c = getc(mf)) != EOF;)
            maps_now += c == '\n';
        fclose(mf);
    }
    long maps_need = e->nnodes + e->spec.npools + 256; /* the nodes, the static files, threads and libraries to come */
    if (max_maps > 0 && maps_now + maps_need > max_maps) {
        snprintf(err, errlen, "%d nodes need about %ld memory maps (one a node's segment) and this process may have "
                 "%ld more (vm.max_map_count is %ld, /proc/sys/vm/max_map_count): start fewer nodes (split the spec "
                 "across engines with --shard, each with its own --root) or raise the limit (as root: sysctl -w "
                 "vm.max_map_count=%ld)", e->nnodes, maps_need, max_maps - maps_now, max_maps,
                 (maps_now + maps_need) * 2);
        return -1;
    }
    struct statvfs vfs;
    if (statvfs(root, &vfs))
        return 0; /* unknown: each node's own reservation says it */
    uint64_t free_b = cfg->debug_root_free ? cfg->debug_root_free : (uint64_t)vfs.f_bavail * vfs.f_frsize;
    if (disk <= free_b)
        return 0;
    snprintf(err, errlen, "the root %s needs %.0f MiB for %d node segments (the pages new segments hold; agents' "
             "writes and counter reads may add up to %.0f MiB later) and its file system has %.0f MiB free: "
             "free space there, choose a --root (SIM_HWEMU_ROOT) on a larger file system (a tmpfs: mount -o "
             "remount,size=...), or start fewer nodes", root, (double)disk / (1 << 20), e->nnodes,
             (double)holes / (1 << 20), (double)free_b / (1 << 20));
    return -1;
}

int engine_start(struct engine *e, const struct engine_config *cfg)
{
    memset(e, 0, sizeof *e);
    e->lock_fd = -1;
    e->cfg = *cfg;
    if (e->cfg.batch_ticks <= 0)
        e->cfg.batch_ticks = ENGINE_BATCH_TICKS;
    if (e->cfg.time_emulated && e->cfg.speed == ENGINE_SPEED_MAX)
        e->cfg.batch_ticks = 1; /* agents read between ticks: every node's lines must be current */
    int rc = model_load_profiles(&e->profiles, cfg->profiles_dir);
    if (rc == 0)
        rc = model_load_spec(&e->spec, cfg->spec_path, &e->profiles);
    if (rc)
        return rc;
    e->spec_nnodes = spec_keep_shard(&e->spec, cfg->shard_index, cfg->shard_count);
    if (!e->spec.nnodes && cfg->shard_count > 1) {
        say(e, "shard %d/%d has no node: the spec has %d node%s (use at most %d shards)", cfg->shard_index,
            cfg->shard_count, e->spec_nnodes, e->spec_nnodes == 1 ? "" : "s", e->spec_nnodes);
        return -1;
    }
    char path[4096], err[1024];
    bool shared;
    if (root_prepare(cfg->root, &shared, err, sizeof err)) {
        say(e, "%s", err);
        return -1;
    }
    e->root_shared = shared;
    /* one engine per root, before anything in it is touched (held until engine_stop) */
    e->lock_fd = root_lock(cfg->root, err, sizeof err);
    if (e->lock_fd < 0) {
        say(e, "%s", err);
        return -1;
    }
    snprintf(path, sizeof path, "%s/events.jsonl", cfg->root);
    e->events = events_open(path, err, sizeof err);
    if (!e->events) {
        say(e, "%s", err);
        return -1;
    }
    e->nnodes = e->spec.nnodes;
    int64_t t0 = now_of(CLOCK_MONOTONIC), wall = now_of(CLOCK_REALTIME);
    int failed = 0;
    e->templates = calloc((size_t)(e->spec.npools ? e->spec.npools : 1), sizeof *e->templates);
    if (!e->templates)
        abort();
    for (int p = 0; p < e->spec.npools; p++) {
        const struct spec_pool *pool = &e->spec.pools[p];
        if (!pool->count)
            continue;
        if (node_template_build(&e->templates[p], pool->profile->name, pool->tree, engine_ambient_c(e, p, wall),
                                cfg->tick_ns, &e->spec.cgroups, err, sizeof err)) {
            say(e, "pool %s: %s", pool->name, err);
            return -1;
        }
    }
    /* the memory and the root's space every node needs, before anything is allocated for them
     * or written: one message, not an abort or one ENOSPC line a node */
    if (check_capacity(e, cfg, err, sizeof err)) {
        say(e, "%s", err);
        return -1;
    }
    e->nodes = calloc((size_t)(e->nnodes ? e->nnodes : 1), sizeof *e->nodes);
    if (!e->nodes) {
        say(e, "out of memory for %d nodes (%zu bytes each): start fewer nodes", e->nnodes, sizeof *e->nodes);
        return -1;
    }
    for (int p = 0; p < e->spec.npools; p++) {
        const struct spec_pool *pool = &e->spec.pools[p];
        if (!pool->count)
            continue;
        if (node_static_put(e->templates, e->spec.npools, p, cfg->root, err, sizeof err)) {
            say(e, "pool %s: %s", pool->name, err);
            return -1;
        }
        /* readable by the group's agents in a setgid root, like the segments (docs/security.md) */
        if (shared && e->templates[p].owns_st && fchmod(e->templates[p].st->f.fd, 0440))
            say(e, "pool %s: cannot make its static file %s group-readable: %s", pool->name,
                e->templates[p].st->path, strerror(errno));
    }
    for (int i = 0; i < e->nnodes; i++) {
        const struct spec_node *sn = &e->spec.nodes[i];
        const struct spec_pool *p = &e->spec.pools[sn->pool];
        struct phys_load load = base_load(p);
        struct phys_gpu_load gload = gpu_load(p);
        if (node_open(&e->nodes[i], &e->templates[sn->pool], cfg->root, sn->name, &load, &gload, cfg->tick_ns,
                      shared, err, sizeof err)) {
            if (failed++ < ENGINE_FAILS_SHOWN) /* the rest are counted below */
                say(e, "%s", err);
        } else {
            struct node *nd = &e->nodes[i];
            if (nd->said) { /* a damaged segment it rendered again, a mode it could not set */
                say(e, "%.*s", (int)strlen(nd->said) - 1, nd->said);
                free(nd->said);
                nd->said = NULL;
            }
            e->resumed += e->nodes[i].resumed;
        }
        if (cfg->progress)
            cfg->progress(cfg->progress_ctx, i + 1, e->nnodes, e->resumed);
    }
    /* A node rendered fresh among resumed ones lost its segment while no engine ran (or never
     * had one): said, so that counters back at zero are never silent. */
    int fresh = 0;
    const char *first_fresh = NULL;
    for (int i = 0; i < e->nnodes && e->resumed; i++)
        if (e->nodes[i].seg.base && !e->nodes[i].resumed && !fresh++)
            first_fresh = e->nodes[i].name;
    if (fresh)
        say(e, "%d node%s had no segment in %s (%s%s) and start%s from zero while %d resumed: a segment removed "
            "while the engine was down takes its counters with it", fresh, fresh == 1 ? "" : "s", cfg->root,
            first_fresh, fresh > 1 ? ", ..." : "", fresh == 1 ? "s" : "", e->resumed);
    for (int i = 0; i < e->nnodes; i++) /* docs/faults.md "Sensors" */
        e->nodes[i].sensor_noise = e->spec.sensor_noise;
    e->start_seconds = (double)(now_of(CLOCK_MONOTONIC) - t0) / 1e9;
    if (failed) {
        say(e, "%d node%s could not start%s; nothing was changed for the others", failed, failed == 1 ? "" : "s",
            failed > ENGINE_FAILS_SHOWN ? " (the first 10 said why above)" : "");
        return -1;
    }
    uint64_t *keep = calloc((size_t)e->spec.npools + 1, sizeof *keep);
    if (!keep)
        abort();
    int nkeep = 0;
    for (int p = 0; p < e->spec.npools; p++)
        if (e->templates[p].st)
            keep[nkeep++] = e->templates[p].image.layout_hash;
    int pruned = root_prune_static(cfg->root, keep, nkeep);
    free(keep);
    if (pruned)
        say(e, "removed %d static file%s of %s that no segment uses any longer", pruned, pruned == 1 ? "" : "s",
            cfg->root);
    e->history = malloc(sizeof *e->history);
    if (!e->history)
        abort();
    history_init(e->history);
    e->next = new_telemetry(e->nnodes);
    tick_all(e); /* a first snapshot, so that HTTP has something from the start */
    if (engine_clock_start(e, err, sizeof err)) { /* --time emulated: the agents' clock at this tick */
        say(e, "%s", err);
        return -1;
    }
    if (cfg->workers > 1) {
        pthread_barrier_init(&e->start, NULL, (unsigned)cfg->workers);
        pthread_barrier_init(&e->done, NULL, (unsigned)cfg->workers);
        e->threads = calloc((size_t)cfg->workers, sizeof *e->threads);
        for (int w = 1; w < cfg->workers; w++) {
            struct worker_arg *a = malloc(sizeof *a);
            a->e = e;
            a->w = w;
            pthread_create(&e->threads[w], NULL, worker, a);
        }
    }
    return 0;
}

void engine_stop(struct engine *e)
{
    engine_clock_stop(e); /* first: agents waiting on the clock go on in wall time */
    if (e->threads) {
        e->stop = 2;
        pthread_barrier_wait(&e->start);
        for (int w = 1; w < e->cfg.workers; w++)
            pthread_join(e->threads[w], NULL);
        free(e->threads);
        pthread_barrier_destroy(&e->start);
        pthread_barrier_destroy(&e->done);
    }
    for (int i = 0; e->nodes && i < e->nnodes; i++) /* none when the start stopped before them */
        node_close(&e->nodes[i]);
    free(e->nodes);
    for (int p = 0; e->templates && p < e->spec.npools; p++)
        node_template_free(&e->templates[p]);
    free(e->templates);
    struct telemetry *t = e->telemetry;
    rcu_assign_pointer(e->telemetry, NULL);
    synchronize_rcu();
    rcu_barrier();
    free(t);
    free(e->next);
    if (e->history) {
        history_destroy(e->history);
        free(e->history);
    }
    events_close(e->events);
    free(e->said);
    e->said = NULL;
    spec_free(&e->spec);
    profiles_free(&e->profiles);
    if (e->lock_fd >= 0) /* last: the root is another engine's from here */
        close(e->lock_fd);
    e->lock_fd = -1;
}
