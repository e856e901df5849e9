/* node_open: a node's segment opened: rendered from the pool's template, or an existing one
 * resumed (its counters salvaged here, its agents' settings re-applied by node_apply.c), its
 * first tick (node.c) and its identity published (node_publish.c); and closed. See node.h.
 *
 * Resume rules (Joulie emulate mode, "Restarts and recovery"; docs/sources.md): an existing
 * segment is resumed when it was rendered for the same node, profile and profile values (the layout hash covers the
 * entries and the profile tree); anything else stops the start with an error naming the node
 * and the remedy. On resume every counter continues from max(ledger, read high-water mark),
 * so no counter ever decreases, and no energy accrues for the time the engine was down; the
 * limits and settings agents wrote are read back from the segment, validated again and applied.
 * (Precisely: every counter resumes from seg_resume_total, segment.h "Resume": the horizon of
 * the last visible snapshot, which no read of it can exceed, bounded by the ledger.)
 * At start, a segment whose header is not the template's (but names this node and profile) or
 * whose size is not the template's is damaged (node_repair.c "Damage"): the node is rendered
 * again, its counters salvaged from the old file's ledger and snapshot read with the template's
 * geometry when the file is large enough (else they start at zero, said in node.said). */
#include "node_internal.h"
#include "params.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Every counter's resumed total from segment from (mapped and bound with the template's
 * geometry) into out[ncounters]: segment.h "Resume". The node's ledger sequence continues from
 * the newest copy found: restarted at 1, its first writes would be older than the copies the
 * dead engine left, and a later restart would read those stale totals as the newest. */
static void salvage_totals(struct node *n, const struct seg *from, uint64_t *out)
{
    uint64_t *led = calloc(from->n_counters + 1, sizeof *led), seq = 0;
    if (!led)
        abort();
    bool have = seg_ledger_read(from, &seq, led);
    n->ledger_seq = have && seq < (UINT64_MAX >> 1) ? seq : 0;
    for (uint32_t k = 0; k < n->ncounters; k++) {
        uint32_t v = n->counters[k];
        struct seg_value vis;
        seg_value_load(from, v, &vis); /* what a reader sees: the journal's when it names v */
        uint64_t hwm = atomic_load(&from->hwm[v]);
        out[k] = seg_resume_total(have && k < from->n_counters, have ? led[k] : 0, &vis, hwm, from->substep_ns,
                                  n->tick_ns);
    }
    free(led);
}

static void resume_counters(struct node *n, struct phys_cpu_params *p, const uint64_t *totals)
{
    for (uint32_t k = 0; k < n->ncounters; k++) {
        const struct binding *b = &n->binds[n->counters[k]];
        if (b->kind == BK_GPU_ENERGY) {
            n->gstate.g[b->pkg < PHYS_GPU_MAX ? b->pkg : 0].start_uj = (int64_t)totals[k];
            continue;
        }
        if (b->kind == BK_ELAPSED || b->kind == BK_CPU_BUSY || b->kind == BK_UNIT_CPU || b->kind == BK_CPU_CYCLES) {
            /* time counters: the ledger holds them at their horizon (write_ledger), and the
             * busy lines' open-ended nsub makes seg_resume_total keep the ledger's value */
            n->cstart[k] = totals[k];
            if (b->kind == BK_ELAPSED)
                n->cstart_elapsed_us = totals[k];
            continue;
        }
        struct phys_counter *c = b->zone == PHYS_ZONE_PSYS ? &p->psys : &p->pkg[b->pkg].counter[b->zone];
        c->start_uj = (int64_t)totals[k];
    }
}

/* The engine's view of its mapped segment: the template's geometry, and the template's
 * entries, strings and params (private memory) in place of the file's. */
static void adopt(struct node *n)
{
    seg_bind(&n->seg, node_img_header(n->t));
    seg_bind_static(&n->seg, n->t->image.st_bytes);
    if (n->seg.guard < 0)
        seg_guard_register(&n->seg);
}

/* An existing segment at n->path. Returns 0 (mapped and adopted: resume it), a positive errno
 * with err set (the start stops: a file of another node or profile, or of another hwemu
 * build), or -1 when it is damaged (why says how; *salvaged when its counters could be read
 * with the template's geometry into n->totals). */
static int open_existing(struct node *n, char *err, size_t errlen, char *why, size_t whylen, bool *salvaged)
{
    const struct seg_header *ih = node_img_header(n->t);
    const char *path = n->path, *name = n->name;
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "node %s: cannot open its segment %s: %s%s", name, path, strerror(e),
                 e == ELOOP ? " (it is a symbolic link, which the engine never follows: remove it)" : "");
        return e;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "node %s: %s is not a regular file; remove it and start again", name, path);
        return EINVAL;
    }
    if (st.st_size < (off_t)sizeof(struct seg_header)) {
        close(fd);
        snprintf(why, whylen, "the file has %lld bytes, too few for a segment", (long long)st.st_size);
        return -1;
    }
    int rc = seg_map(&n->seg, fd, (size_t)st.st_size, true);
    if (rc) {
        close(fd);
        snprintf(err, errlen, "node %s: cannot map its segment %s: %s", name, path, strerror(rc));
        return rc;
    }
    n->seg.fd = fd;
    n->seg.h = (struct seg_header *)n->seg.base;
    seg_guard_register(&n->seg);
    const struct seg_header *h = n->seg.h;
    struct seg_header want;
    node_expected_header(n, &want);
    if (memcmp(h->magic, SEG_MAGIC, 8)) {
        snprintf(why, whylen, "its header is not an hwemu segment's");
    } else if (h->version != SEG_VERSION || h->header_size != sizeof *h) {
        snprintf(err, errlen, "node %s: %s is a segment of another hwemu build (format %u); make sure no agent "
                 "uses it, remove it and start again: the node is rendered fresh, its counters back at zero",
                 name, path, h->version);
        seg_close(&n->seg);
        return EINVAL;
    } else if (strncmp(h->node, name, sizeof h->node) || strncmp(h->profile, n->t->profile, sizeof h->profile) ||
               h->layout_hash != n->t->image.layout_hash) {
        snprintf(err, errlen,
                 "node %s: %s was rendered for node %.64s, profile %.64s%s; make sure no agent uses node %s, remove "
                 "%s and start again: the node is rendered fresh, its counters back at zero",
                 name, path, h->node, h->profile,
                 strncmp(h->profile, n->t->profile, sizeof h->profile) ? "" : " with other profile values", name,
                 path);
        seg_close(&n->seg);
        return EEXIST;
    } else if ((size_t)st.st_size != ih->file_size || memcmp(h, &want, NODE_HEADER_STATIC) ||
               h->substep_ns != ih->substep_ns) {
        snprintf(why, whylen, "its size or section table is not the template's (%lld bytes, %zu expected)",
                 (long long)st.st_size, (size_t)ih->file_size);
    } else {
        adopt(n); /* its static part is compared chunk by chunk from the first tick on */
        seg_journal_heal(&n->seg, node_img_values(n->t)); /* a value store a kill cut short */
        return 0;
    }
    /* damaged: what can be read with the template's geometry is salvaged */
    if ((size_t)st.st_size >= ih->file_size && !seg_faulted(&n->seg)) {
        seg_bind(&n->seg, ih);
        salvage_totals(n, &n->seg, n->totals);
        *salvaged = !seg_faulted(&n->seg);
    }
    seg_close(&n->seg);
    return -1;
}

/* The segment is mapped: its mode set (group_shared), its identity kept for the health checks
 * (node_repair.c), its descriptor closed. Non-zero, with err set, when its identity cannot be
 * read. */
static int release_fd(struct node *n, bool group_shared, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(n->seg.fd, &st) != 0) {
        snprintf(err, errlen, "node %s: cannot read what its segment %s is: %s", n->name, n->path, strerror(errno));
        return -1;
    }
    n->seg_dev = st.st_dev;
    n->seg_ino = st.st_ino;
    if (group_shared && fchmod(n->seg.fd, 0660)) {
        char line[600];
        int len = snprintf(line, sizeof line, "node %s: cannot make its segment %s group-writable: %s\n", n->name,
                           n->path, strerror(errno));
        node_said_add(n, line, len < (int)sizeof line ? (size_t)len : sizeof line - 1);
    }
    close(n->seg.fd);
    n->seg.fd = -1;
    return 0;
}

/* Everything node_open allocates for a node besides its segment: freed by a failed open and by
 * node_close alike (one list, so a new array cannot be left out of either). */
static void free_arrays(struct node *n)
{
    void **arrays[] = {(void **)&n->path,   (void **)&n->slot_applied, (void **)&n->totals,
                       (void **)&n->shown,  (void **)&n->busy_shown,   (void **)&n->busy_shown_rate,
                       (void **)&n->cstart, (void **)&n->seed_off,
                       (void **)&n->units,        (void **)&n->said};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        free(*arrays[i]);
        *arrays[i] = NULL;
    }
    node_cfstats_free(n);
    node_cycles_free(n);
}

int node_open(struct node *n, const struct node_template *t, const char *root, const char *name,
              const struct phys_load *load, const struct phys_gpu_load *gload, int64_t tick_ns, bool group_shared,
              char *err, size_t errlen)
{
    /* n is zeroed memory (node.h): not cleared again, so that the pages of what this node does
     * not use (CPUs and GPUs past its own) are never touched */
    n->seg.fd = -1;
    n->seg.guard = -1;
    n->opening = true; /* a damage found now is said to engine_start (node.said), not printed */
    n->t = t;
    n->name = name;
    n->profile = t->profile;
    n->gpu_product = t->gpu_product;
    n->tick_ns = tick_ns;
    n->load = *load;
    n->gload = *gload;
    n->params = t->params;
    n->gparams = t->gparams;
    n->sensors = t->sensors;
    params_spread(name, &n->params, &n->gparams); /* two packages or GPUs are not identical */
    n->binds = t->binds;
    n->nvalues = t->nbinds;
    /* the lookups by kind are the template's; what the node holds per value is per counter,
     * per CPU or per value published on change (each with a spare entry past its end) */
    const struct node_index *ix = &t->ix;
    n->slot_entry = ix->slot_entry;
    n->counters = ix->counters;
    n->ncounters = ix->ncounters;
    n->svalues = ix->svalues;
    n->nsvalues = ix->nsvalues;
    n->freq_values = ix->freq_values;
    n->nfreq = ix->nfreq;
    n->busy_values = ix->busy_values;
    n->nbusy = ix->nbusy;
    n->totals = calloc(n->ncounters + 1, sizeof *n->totals);
    n->cstart = calloc(n->ncounters + 1, sizeof *n->cstart);
    n->shown = malloc((ix->nshown + 1) * sizeof *n->shown);
    n->busy_shown = malloc((n->nbusy + 1) * sizeof *n->busy_shown);
    n->busy_shown_rate = calloc(n->nbusy + 1, sizeof *n->busy_shown_rate);
    size_t plen = strlen(root) + strlen(name) + 6;
    n->path = malloc(plen);
    if (!n->totals || !n->shown || !n->busy_shown || !n->busy_shown_rate || !n->cstart || !n->path)
        abort();
    snprintf(n->path, plen, "%s/%s.seg", root, name);
    node_units_init(n);
    node_cfstats_init(n);
    node_cycles_init(n);
    for (uint32_t k = 0; k <= ix->nshown; k++)
        n->shown[k] = -1; /* nothing shown yet: the first tick publishes every value */
    for (uint32_t i = 0; i <= n->nbusy; i++)
        n->busy_shown[i] = UINT64_MAX;
    n->freq_dirty = n->busy_dirty = true;
    seg_guard_install();
    int rc;
    bool salvaged = false, rendered = false; /* rendered: the file is the template's image, written now */
    char why[200] = "";
    struct stat st;
    if (lstat(n->path, &st) == 0) {
        rc = open_existing(n, err, errlen, why, sizeof why, &salvaged);
        if (rc == 0) {
            n->resumed = true;
            salvage_totals(n, &n->seg, n->totals);
            node_units_salvage(n); /* which job each cgroup slot showed */
        } else if (rc < 0) {
            rc = seg_image_write(&t->image, n->path, name, &n->seg, err, errlen);
            rendered = !rc;
            if (!rc) {
                adopt(n);
                n->resumed = salvaged;
                node_report_damage(n, DMG_AT_START, why,
                       salvaged ? "rendered again; its counters continue from what its ledger and snapshot held"
                                : "rendered again; nothing could be salvaged: its counters start at zero",
                       0, NULL);
            }
        }
    } else {
        rc = seg_image_write(&t->image, n->path, name, &n->seg, err, errlen);
        rendered = !rc;
        if (!rc)
            adopt(n);
    }
    if (rc) {
        if (n->seg.base)
            seg_close(&n->seg);
        free_arrays(n);
        return rc;
    }
    if (release_fd(n, group_shared, err, errlen)) {
        seg_close(&n->seg);
        free_arrays(n);
        return EIO;
    }
    n->seg.h->tick_ns = tick_ns;
    n->seg.h->engine_pid = (uint32_t)getpid();
    for (int i = 0; i < PHYS_GPU_MAX; i++)
        n->gpu_limit_entry[i] = SEG_NONE;
    /* drain once at the start, unless the file was just written from the image: its slots are
     * empty (holes, seg_image_write) until an agent's store bumps slot_writes, and a drain now
     * would fault in every slot page of a node no agent writes to */
    n->slot_writes_seen = rendered ? atomic_load(&n->seg.h->slot_writes) : (uint64_t)-1;
    for (uint32_t i = 0; i < n->seg.n_entries; i++) {
        uint32_t slot = n->seg.entries[i].slot, v = n->seg.entries[i].value;
        if (slot == SEG_NONE || slot >= n->seg.n_slots || v >= n->nvalues)
            continue;
        const struct binding *b = &n->binds[v];
        if (b->kind == BK_GPU_SET && b->zone == GS_LIMIT_MW && b->pkg < PHYS_GPU_MAX)
            n->gpu_limit_entry[b->pkg] = i;
    }
    phys_gpu_init(&n->gparams, &n->gstate);
    if (n->resumed)
        resume_counters(n, &n->params, n->totals);
    if (n->resumed)
        node_cfstats_resume(n); /* from the snapshot it left, bounded by the elapsed time resumed */
    free(n->totals); /* what was salvaged is in the physics and cstart now */
    n->totals = NULL;
    phys_cpu_init(&n->params, &n->state);
    if (n->resumed && !salvaged)
        node_resume_writes(n);
    node_cfstats_forget_resets(n); /* a reset acts once, at the tick after its write */
    n->ev_tail = atomic_load(&n->seg.h->ring_head);
    if (t->st && !t->st->checker)
        t->st->checker = n;
    n->mono_origin = seg_now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* The start's lines stand still until the engine's first tick: the nodes opened last may
     * open less than a tick before it, and no reader may see past what it will publish. */
    node_tick(n, n->mono_origin, n->mono_origin, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec,
              n->params.ambient_init_c, NULL);
    node_publish_identity(n);
    n->opening = false;
    return 0;
}

void node_close(struct node *n)
{
    if (!n->seg.base)
        return; /* never opened */
    if (n->t->st && n->t->st->checker == n)
        n->t->st->checker = NULL;
    seg_close(&n->seg);
    free_arrays(n); /* seg_close cleared the segment: a second node_close does nothing */
}
