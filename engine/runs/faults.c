/* faults: the fault schedule at run time; see faults.h. */
#include "faults.h"

#include "arena.h"
#include "engine.h"
#include "fault.h"
#include "run.h"
#include "run_output.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum fault_state { FT_PENDING = 0, FT_ACTIVE, FT_ENDED };
static const char *const state_names[] = {"pending", "active", "ended"};
static const char *const source_names[] = {"spec", "trace", "request"};

struct sched_fault {
    struct fault_def def;       /* strings in arena */
    struct arena arena;
    int source;                 /* enum fault_source */
    char run_id[64];            /* FS_TRACE: its run */
    int state;                  /* enum fault_state */
    bool clear;                 /* cleared: ends at the next tick */
    int64_t start_mono, end_mono; /* emulated; end INT64_MAX: until cleared */
    int *nodes, nnodes;         /* struck, engine node indexes (from its start) */
    unsigned char *touched;     /* per job of touched_run: it ran on a struck device while active */
    int ntouched_cap;
    char touched_run[64];       /* the run touched holds (a spec or request fault sees each run) */
    const char *end_reason;
    bool before_resume;         /* FS_TRACE: its time came before the point its resumed run resumed
                                 * from: it keeps its start (and end), announced before the resume */
};

struct faults {
    struct engine *e;
    struct faults_host host;
    struct sched_fault **f;
    int n, cap;
    unsigned seq[3];            /* per source: the last number given to an unnamed fault */
    int64_t origin_mono;        /* emulated time of the first tick; INT64_MIN until then */
    bool dirty;                 /* a fault started or ended: the nodes' states are rebuilt */
    struct node_faults *scratch; /* per node, for the rebuild */
};

struct faults *faults_new(struct engine *e, const struct faults_host *host)
{
    struct faults *fs = calloc(1, sizeof *fs);
    if (!fs)
        return NULL;
    fs->e = e;
    fs->host = *host;
    fs->origin_mono = INT64_MIN;
    fs->scratch = calloc((size_t)(e->nnodes ? e->nnodes : 1), sizeof *fs->scratch);
    if (!fs->scratch) {
        free(fs);
        return NULL;
    }
    return fs;
}

static void fault_free(struct sched_fault *f)
{
    arena_free(&f->arena);
    free(f->nodes);
    free(f->touched);
    free(f);
}

void faults_free(struct faults *fs)
{
    if (!fs)
        return;
    for (int i = 0; i < fs->n; i++)
        fault_free(fs->f[i]);
    free(fs->f);
    free(fs->scratch);
    free(fs);
}

static struct sched_fault *find(struct faults *fs, const char *id)
{
    for (int i = 0; i < fs->n; i++)
        if (!strcmp(fs->f[i]->def.id, id))
            return fs->f[i];
    return NULL;
}

static const char **copy_strs(struct arena *a, const char **s, int n)
{
    if (!n)
        return NULL;
    const char **out = arena_alloc(a, sizeof *out * (size_t)n);
    for (int i = 0; i < n; i++)
        out[i] = arena_strdup(a, s[i]);
    return out;
}

int faults_add(struct faults *fs, const struct fault_def *def, int source, const char *run_id, char *id_out,
               size_t idlen)
{
    char id[FAULT_ID_MAX];
    if (def->id[0]) {
        snprintf(id, sizeof id, "%s", def->id);
        if (find(fs, id))
            return EEXIST;
    } else {
        do
            snprintf(id, sizeof id, "%s-%u", source_names[source], ++fs->seq[source]);
        while (find(fs, id));
    }
    if (fs->n == fs->cap) {
        int cap = fs->cap ? fs->cap * 2 : 8;
        struct sched_fault **p = realloc(fs->f, sizeof *p * (size_t)cap);
        if (!p)
            return ENOMEM;
        fs->f = p;
        fs->cap = cap;
    }
    struct sched_fault *f = calloc(1, sizeof *f);
    if (!f)
        return ENOMEM;
    f->def = *def;
    snprintf(f->def.id, sizeof f->def.id, "%s", id);
    f->def.file = def->file ? arena_strdup(&f->arena, def->file) : NULL;
    f->def.nodes = copy_strs(&f->arena, def->nodes, def->nnodes);
    f->def.pools = copy_strs(&f->arena, def->pools, def->npools);
    f->def.label_keys = copy_strs(&f->arena, def->label_keys, def->nlabels);
    f->def.label_values = copy_strs(&f->arena, def->label_values, def->nlabels);
    f->source = source;
    if (run_id)
        snprintf(f->run_id, sizeof f->run_id, "%s", run_id);
    f->start_mono = INT64_MIN; /* resolved at the tick (faults_tick) */
    f->end_mono = INT64_MAX;
    fs->f[fs->n++] = f;
    snprintf(id_out, idlen, "%s", id);
    return 0;
}

int faults_clear(struct faults *fs, const char *id)
{
    struct sched_fault *f = find(fs, id);
    if (!f)
        return ENOENT;
    if (f->state == FT_ENDED || f->clear)
        return EALREADY;
    f->clear = true;
    return 0;
}

/* SplitMix64: the seeded order a fraction picks nodes in. */
static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Can the fault strike node i's device (a GPU it has, a package, a BMC)? */
static bool has_device(const struct engine *e, const struct fault_def *d, int i)
{
    const struct node *n = &e->nodes[i];
    switch (d->device) {
    case FD_GPU:
        return n->gparams.count > 0 && d->index < n->gparams.count;
    case FD_PACKAGE:
        return d->index < n->state.npkgs;
    default:
        return true;
    }
}

static bool selected(struct faults *fs, const struct fault_def *d, int i)
{
    const struct engine *e = fs->e;
    const char *name = e->nodes[i].name;
    bool any = d->nnodes || d->npools;
    bool hit = !any;
    for (int k = 0; k < d->nnodes && !hit; k++)
        hit = !strcmp(d->nodes[k], name);
    const char *pool = e->spec.pools[e->spec.nodes[i].pool].name;
    for (int k = 0; k < d->npools && !hit; k++)
        hit = pool && !strcmp(d->pools[k], pool);
    for (int k = 0; k < d->nlabels && hit; k++)
        hit = fs->host.has_label && fs->host.has_label(fs->host.ctx, i, d->label_keys[k], d->label_values[k]);
    return hit && has_device(e, d, i);
}

/* The nodes the fault strikes: those selected, then a fraction of them picked by its seed (a
 * Fisher-Yates shuffle of the spec's order, the first ones kept), in the spec's order. */
static void pick_nodes(struct faults *fs, struct sched_fault *f)
{
    const struct engine *e = fs->e;
    f->nodes = malloc(sizeof *f->nodes * (size_t)(e->nnodes ? e->nnodes : 1));
    if (!f->nodes)
        return;
    int n = 0;
    for (int i = 0; i < e->nnodes; i++)
        if (selected(fs, &f->def, i))
            f->nodes[n++] = i;
    if (f->def.fraction < 1 && n > 0) {
        int keep = (int)llround(f->def.fraction * n);
        if (keep == 0 && f->def.fraction > 0)
            keep = 1;
        uint64_t s = f->def.seed;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(splitmix(&s) % (uint64_t)(i + 1));
            int t = f->nodes[i];
            f->nodes[i] = f->nodes[j];
            f->nodes[j] = t;
        }
        n = keep;
        for (int i = 1; i < n; i++) /* back to the spec's order */
            for (int j = i; j > 0 && f->nodes[j - 1] > f->nodes[j]; j--) {
                int t = f->nodes[j];
                f->nodes[j] = f->nodes[j - 1];
                f->nodes[j - 1] = t;
            }
    }
    f->nnodes = n;
}

/* What the fault does to a node's struck state. */
static void strike(const struct fault_def *d, const struct node *n, struct node_faults *nf)
{
    uint32_t gpus = d->index >= 0 ? 1u << d->index
                    : n->gparams.count >= 32 ? UINT32_MAX : (1u << n->gparams.count) - 1;
    switch (d->kind) {
    case FK_GPU_LOST:
        nf->gpu_lost |= gpus;
        break;
    case FK_GPU_POWER_BRAKE:
        nf->gpu_brake |= gpus;
        for (int g = 0; g < PHYS_GPU_MAX; g++)
            if ((gpus >> g) & 1)
                nf->gpu_brake_w[g] = isnan(d->value) ? 0 : d->value;
        break;
    case FK_BMC_TIMEOUT:
        nf->bmc = 't';
        nf->bmc_delay_ms = (int)d->value;
        break;
    case FK_BMC_SLOW:
        if (nf->bmc != 't') { /* a timeout wins */
            nf->bmc = 's';
            nf->bmc_delay_ms = (int)d->value;
        }
        break;
    case FK_REDFISH_UNAVAILABLE:
        if (nf->redfish_retry_s >= 0) /* a node without power does not answer at all */
            nf->redfish_retry_s = (int)d->value;
        break;
    case FK_HWMON_ERROR:
        nf->hwmon_err = d->err;
        break;
    case FK_WRITE_REFUSED:
        nf->write_err = d->err;
        break;
    case FK_LIMIT_IGNORED:
        if (d->device == FD_NODE || d->device == FD_PACKAGE)
            nf->pkg_limits_ignored |= d->index >= 0 ? 1u << d->index : UINT32_MAX;
        if (d->device == FD_NODE || d->device == FD_GPU)
            nf->gpu_limits_ignored |= d->device == FD_GPU ? gpus : UINT32_MAX;
        break;
    case FK_INLET_TEMP:
    case FK_FAN_FAILURE:
        nf->inlet_c += d->value;
        break;
    case FK_PSU_LOSS:
        nf->psu_w = nf->psu_w > 0 && nf->psu_w < d->value ? nf->psu_w : d->value;
        nf->gpu_brake |= n->gparams.count >= 32 ? UINT32_MAX : (1u << n->gparams.count) - 1;
        break;
    case FK_POWER_LOSS:
        nf->off_err = d->err;
        nf->gpu_lost |= n->gparams.count >= 32 ? UINT32_MAX : (1u << n->gparams.count) - 1;
        nf->redfish_retry_s = -1; /* no answer at all */
        break;
    case FK_FREQ_STUCK:
        nf->freq_stuck |= d->index >= 0 ? 1u << d->index : UINT32_MAX;
        break;
    case FK_LIMIT_LOCKED:
        nf->pkg_locked |= d->index >= 0 ? 1u << d->index : (1u << n->state.npkgs) - 1;
        break;
    case FK_RAPL_FREEZE:
        if (d->device == FD_DRAM)
            nf->rapl_frozen_dram = UINT32_MAX;
        else
            nf->rapl_frozen_pkg |= d->index >= 0 ? 1u << d->index : UINT32_MAX;
        break;
    default:
        break;
    }
}

/* What a fault's start leaves on a node's GPUs for good: an Xid (a GPU that fell off the bus
 * logs Xid 79, an uncorrected memory error Xid 48; faults.md §1.3, §2.1) and ECC counts. */
static void raise_errors(const struct fault_def *d, struct node *n, int64_t now_mono)
{
    if (d->kind != FK_GPU_LOST && d->kind != FK_GPU_XID && d->kind != FK_GPU_ECC_CORRECTED &&
        d->kind != FK_GPU_ECC_UNCORRECTED)
        return;
    for (int g = 0; g < n->gparams.count && g < PHYS_GPU_MAX; g++) {
        if (d->index >= 0 && g != d->index)
            continue;
        struct node_gpu_errors *ge = &n->gpu_err[g];
        int xid = d->kind == FK_GPU_LOST ? 79 : d->kind == FK_GPU_XID ? (int)d->value
                  : d->kind == FK_GPU_ECC_UNCORRECTED ? 48 : 0;
        /* the row the errors hit is remapped to a spare one, which takes effect at the GPU's
         * next reset (row remapping, Ampere and later; faults.md §2.5): one row per fault, its
         * errors being at one address (ours) */
        if (d->kind == FK_GPU_ECC_CORRECTED) {
            ge->ecc_corrected += (uint64_t)d->value;
            ge->rows_corrected++;
            ge->remap_pending = true;
        }
        if (d->kind == FK_GPU_ECC_UNCORRECTED) {
            ge->ecc_uncorrected += (uint64_t)d->value;
            ge->rows_uncorrected++;
            ge->remap_pending = true;
        }
        /* a remap is recorded: Xid 63 "Row Remapper: New row marked for remapping, reset gpu to
         * activate" (nverror.h INFOROM_DRAM_RETIREMENT_EVENT; an A100's, faults.md §2), after
         * the error's own Xid */
        int xids[2] = {xid, d->kind == FK_GPU_ECC_CORRECTED || d->kind == FK_GPU_ECC_UNCORRECTED ? 63 : 0};
        for (int i = 0; i < 2; i++) {
            if (!xids[i])
                continue;
            memmove(ge->xid + 1, ge->xid, sizeof ge->xid - sizeof ge->xid[0]);
            ge->xid[0] = xids[i];
            ge->xid_seq++;
        }
        node_wake(n, now_mono);
    }
}

/* What a fault's start does once to a node's counters: a RAPL counter that jumps (rapl-jump). */
static void jump_counters(const struct fault_def *d, struct node *n, int64_t now_mono)
{
    if (d->kind != FK_RAPL_JUMP)
        return;
    node_counter_jump(n, d->index >= 0 ? 1u << d->index : UINT32_MAX, d->device == FD_DRAM, d->value * 1e6);
    node_wake(n, now_mono);
}

/* What a fault's end does once: a GPU that fell off the bus comes back through its reset, a node
 * whose power returns resets every GPU; a reset applies the rows waiting to be remapped. */
static void reset_gpus(const struct fault_def *d, struct node *n, int64_t now_mono)
{
    if (d->kind != FK_GPU_LOST && d->kind != FK_POWER_LOSS)
        return;
    for (int g = 0; g < n->gparams.count && g < PHYS_GPU_MAX; g++)
        if (d->kind == FK_POWER_LOSS || d->index < 0 || g == d->index)
            n->gpu_err[g].remap_pending = false;
    node_wake(n, now_mono);
}

/* Every node's struck state from the active faults; the nodes whose state changed step now. */
static void rebuild(struct faults *fs)
{
    struct engine *e = fs->e;
    memset(fs->scratch, 0, sizeof *fs->scratch * (size_t)e->nnodes);
    for (int k = 0; k < fs->n; k++) {
        const struct sched_fault *f = fs->f[k];
        if (f->state != FT_ACTIVE)
            continue;
        for (int i = 0; i < f->nnodes; i++)
            strike(&f->def, &e->nodes[f->nodes[i]], &fs->scratch[f->nodes[i]]);
    }
    for (int i = 0; i < e->nnodes; i++)
        if (memcmp(&e->nodes[i].faults, &fs->scratch[i], sizeof fs->scratch[i])) {
            e->nodes[i].faults = fs->scratch[i];
            node_wake(&e->nodes[i], e->tick_mono);
        }
}

/* Does job j of run r run on what f strikes on node i? */
static bool job_struck(const struct sched_fault *f, const struct run_job *j)
{
    if (f->def.device != FD_GPU || f->def.index < 0)
        return true;
    for (int g = 0; g < j->ngpus; g++)
        if (j->gpus[g] == f->def.index)
            return true;
    return false;
}

/* Marks the jobs of run r that run on what f strikes now. */
static void touch(struct sched_fault *f, const struct run *r)
{
    if (!r || strcmp(r->id, f->run_id[0] ? f->run_id : r->id))
        return;
    if (f->touched && strcmp(f->touched_run, r->id)) { /* another run than the one it saw */
        free(f->touched);
        f->touched = NULL;
    }
    if (!f->touched) {
        snprintf(f->touched_run, sizeof f->touched_run, "%s", r->id);
        f->touched = calloc((size_t)(r->njobs ? r->njobs : 1), 1);
        f->ntouched_cap = r->njobs;
        if (!f->touched)
            return;
    }
    for (int k = 0; k < f->nnodes; k++) {
        const struct run_node *rn = &r->nodes[f->nodes[k]];
        for (int q = 0; q < rn->njobs; q++) {
            const struct run_job *j = &r->jobs[rn->jobs[q]];
            if (j->index < f->ntouched_cap && job_struck(f, j))
                f->touched[j->index] = 1;
        }
    }
}

static cJSON *fault_json(const struct faults *fs, const struct sched_fault *f)
{
    const struct fault_def *d = &f->def;
    cJSON *o = cJSON_CreateObject();
    char dev[32];
    cJSON_AddStringToObject(o, "id", d->id);
    cJSON_AddStringToObject(o, "kind", fault_kind_names[d->kind]);
    cJSON_AddStringToObject(o, "device", fault_device_text(d, dev, sizeof dev));
    cJSON_AddStringToObject(o, "state", state_names[f->state]);
    cJSON_AddStringToObject(o, "source", source_names[f->source]);
    if (f->run_id[0])
        cJSON_AddStringToObject(o, "runId", f->run_id);
    if (d->has_at)
        cJSON_AddNumberToObject(o, "atSec", d->at_s);
    if (d->has_duration)
        cJSON_AddNumberToObject(o, "durationSec", d->duration_s);
    else
        cJSON_AddStringToObject(o, "until", "cleared");
    cJSON *p = cJSON_AddObjectToObject(o, "params");
    switch (d->kind) {
    case FK_PSU_LOSS:
        cJSON_AddNumberToObject(p, "watts", d->value);
        break;
    case FK_GPU_POWER_BRAKE:
        if (!isnan(d->value))
            cJSON_AddNumberToObject(p, "watts", d->value);
        break;
    case FK_BMC_TIMEOUT:
    case FK_BMC_SLOW:
        cJSON_AddNumberToObject(p, "delayMs", d->value);
        break;
    case FK_REDFISH_UNAVAILABLE:
        cJSON_AddNumberToObject(p, "retryAfterSec", d->value);
        break;
    case FK_HWMON_ERROR:
    case FK_WRITE_REFUSED:
    case FK_POWER_LOSS:
        cJSON_AddStringToObject(p, "errno", fault_errno_name(d->err));
        break;
    case FK_RAPL_JUMP:
        cJSON_AddNumberToObject(p, "joules", d->value);
        break;
    case FK_INLET_TEMP:
    case FK_FAN_FAILURE:
        cJSON_AddNumberToObject(p, "deltaC", d->value);
        break;
    case FK_GPU_XID:
        cJSON_AddNumberToObject(p, "xid", d->value);
        break;
    case FK_GPU_ECC_CORRECTED:
    case FK_GPU_ECC_UNCORRECTED:
        cJSON_AddNumberToObject(p, "count", d->value);
        break;
    default:
        break;
    }
    if (f->state != FT_PENDING) {
        cJSON *ns = cJSON_AddArrayToObject(o, "nodes");
        for (int i = 0; i < f->nnodes; i++)
            cJSON_AddItemToArray(ns, cJSON_CreateString(fs->e->nodes[f->nodes[i]].name));
        if (fs->origin_mono != INT64_MIN)
            cJSON_AddNumberToObject(o, "startedSec", (double)(f->start_mono - fs->origin_mono) / 1e9);
    } else {
        cJSON *sel = cJSON_AddObjectToObject(o, "select");
        cJSON *a = cJSON_AddArrayToObject(sel, "nodes");
        for (int i = 0; i < d->nnodes; i++)
            cJSON_AddItemToArray(a, cJSON_CreateString(d->nodes[i]));
        a = cJSON_AddArrayToObject(sel, "pools");
        for (int i = 0; i < d->npools; i++)
            cJSON_AddItemToArray(a, cJSON_CreateString(d->pools[i]));
        a = cJSON_AddObjectToObject(sel, "labels");
        for (int i = 0; i < d->nlabels; i++)
            cJSON_AddStringToObject(a, d->label_keys[i], d->label_values[i]);
        cJSON_AddNumberToObject(sel, "fraction", d->fraction);
        cJSON_AddNumberToObject(sel, "seed", (double)d->seed);
    }
    if (f->state == FT_ENDED) {
        if (fs->origin_mono != INT64_MIN && f->end_mono != INT64_MAX)
            cJSON_AddNumberToObject(o, "endedSec", (double)(f->end_mono - fs->origin_mono) / 1e9);
        cJSON_AddStringToObject(o, "endReason", f->end_reason);
    }
    return o;
}

/* The jobs of the run it touched (on node i; -1: any), as jobIds. */
static cJSON *touched_json(const struct sched_fault *f, const struct run *r, int node)
{
    cJSON *a = cJSON_CreateArray();
    bool same = f->touched && r && !strcmp(f->touched_run, r->id);
    for (int k = 0; same && k < f->ntouched_cap && k < r->njobs; k++)
        if (f->touched[k] && (node < 0 || r->jobs[k].node == node))
            cJSON_AddItemToArray(a, cJSON_CreateString(r->jobs[k].t->id));
    return a;
}

/* The events of a start or an end: one per node struck (none struck: one without a node), and
 * the run's faults.jsonl line. */
static void announce(struct faults *fs, struct sched_fault *f, const struct run *r, struct run_output *out,
                     bool started)
{
    const char *name = started ? "joulie.sim.fault.started" : "joulie.sim.fault.ended";
    bool ours = r && (!f->run_id[0] || !strcmp(f->run_id, r->id));
    for (int k = 0; k < (f->nnodes ? f->nnodes : 1); k++) {
        cJSON *a = fault_json(fs, f);
        /* each node's event names its node: the list of all of them once per node would be
         * quadratic in a large fault's nodes; their count says how wide it struck */
        cJSON_DeleteItemFromObjectCaseSensitive(a, "nodes");
        cJSON_AddNumberToObject(a, "nodeCount", f->nnodes);
        if (ours)
            cJSON_AddItemToObject(a, "jobs", touched_json(f, r, f->nnodes ? f->nodes[k] : -1));
        fs->host.emit(fs->host.ctx, f->nnodes ? fs->e->nodes[f->nodes[k]].name : "", name, a);
    }
    if (!ours || !out)
        return;
    /* the run's line: nothing from the wall clock, times from the run's start */
    cJSON *l = cJSON_CreateObject();
    char dev[32];
    cJSON_AddStringToObject(l, "event", started ? "started" : "ended");
    cJSON_AddStringToObject(l, "faultId", f->def.id);
    cJSON_AddStringToObject(l, "kind", fault_kind_names[f->def.kind]);
    cJSON_AddStringToObject(l, "device", fault_device_text(&f->def, dev, sizeof dev));
    cJSON_AddNumberToObject(l, "atSec", (double)r->now_ns / 1e9);
    cJSON *ns = cJSON_AddArrayToObject(l, "nodes");
    for (int k = 0; k < f->nnodes; k++)
        cJSON_AddItemToArray(ns, cJSON_CreateString(fs->e->nodes[f->nodes[k]].name));
    cJSON_AddItemToObject(l, "jobs", touched_json(f, r, -1));
    if (!started)
        cJSON_AddStringToObject(l, "reason", f->end_reason);
    char *s = cJSON_PrintUnformatted(l);
    cJSON_Delete(l);
    if (s)
        run_output_fault(out, s);
    free(s);
}

void faults_tick(struct faults *fs, struct run *r, struct run_output *out)
{
    struct engine *e = fs->e;
    int64_t now = e->tick_mono;
    if (fs->origin_mono == INT64_MIN)
        fs->origin_mono = now;
    for (int k = 0; k < fs->n; k++) {
        struct sched_fault *f = fs->f[k];
        bool run_here = f->source == FS_TRACE && r && !strcmp(r->id, f->run_id) && r->state == RUN_RUNNING;
        if (f->state == FT_PENDING && f->start_mono == INT64_MIN) { /* when it starts */
            if (f->source == FS_TRACE && run_here) {
                /* a resumed run continues its clock (run_before): a fault whose time came before
                 * the resume keeps its emulated start and end, as if the run had gone on */
                int64_t at = (int64_t)llround(f->def.at_s * 1e9);
                f->start_mono = r->start_mono + at;
                f->before_resume = r->resumed && at < r->now_ns;
            }
            else if (f->source != FS_TRACE)
                f->start_mono = f->def.has_at ? fs->origin_mono + (int64_t)llround(f->def.at_s * 1e9) : now;
        }
        if (f->state == FT_PENDING && (f->clear || (f->source == FS_TRACE && !run_here && f->start_mono != INT64_MIN))) {
            f->state = FT_ENDED; /* cleared before it began, or its run ended first */
            f->end_reason = f->clear ? "cleared before it started" : "its run ended before it started";
            continue;
        }
        if (f->state == FT_PENDING && f->start_mono != INT64_MIN && now >= f->start_mono) {
            f->state = FT_ACTIVE;
            if (!f->before_resume)
                f->start_mono = now;
            if (f->def.has_duration)
                f->end_mono = f->start_mono + (int64_t)llround(f->def.duration_s * 1e9);
            if (f->before_resume && now >= f->end_mono) { /* it ended before the resume */
                f->state = FT_ENDED;
                f->end_reason = "its duration ended";
                continue;
            }
            pick_nodes(fs, f);
            if (f->before_resume) { /* struck again where it was: announced before the resume */
                touch(f, r);
                fs->dirty = true;
                continue;
            }
            for (int i = 0; i < f->nnodes; i++) {
                raise_errors(&f->def, &e->nodes[f->nodes[i]], now);
                jump_counters(&f->def, &e->nodes[f->nodes[i]], now);
            }
            touch(f, r);
            fs->dirty = true;
            announce(fs, f, r, out, true);
        }
        if (f->state != FT_ACTIVE)
            continue;
        const char *why = f->clear ? "cleared"
                          : now >= f->end_mono ? "its duration ended"
                          : f->source == FS_TRACE && !run_here ? "its run ended"
                                                               : NULL;
        if (!why) {
            touch(f, r);
            continue;
        }
        f->state = FT_ENDED;
        f->end_reason = why;
        f->end_mono = now;
        for (int i = 0; i < f->nnodes; i++)
            reset_gpus(&f->def, &e->nodes[f->nodes[i]], now);
        fs->dirty = true;
        announce(fs, f, r, out, false);
    }
    if (fs->dirty) {
        fs->dirty = false;
        rebuild(fs);
    }
}

struct cJSON *faults_list_json(struct faults *fs)
{
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; k < fs->n; k++)
        cJSON_AddItemToArray(a, fault_json(fs, fs->f[k]));
    return a;
}

struct cJSON *faults_get_json(struct faults *fs, const char *id)
{
    const struct sched_fault *f = find(fs, id);
    return f ? fault_json(fs, f) : NULL;
}
