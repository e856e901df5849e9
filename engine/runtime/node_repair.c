/* node_repair: damage to a node's segment or static file found and repaired, on the node's
 * worker at the start of its tick (node_check_health). See node.h.
 *
 * Damage (docs/robustness.md): the engine's view of a segment is private. Its geometry, entries,
 * strings and params are the template image's; it never reads an index or a count from the
 * file. Each tick it compares the file's header with the image, and every 8th tick it lstat()s
 * the file's path (the node holds no descriptor: node.h) against the identity it opened. The static file a layout's nodes share (segment.h "Files") is checked by one of
 * them (struct node_static's checker): its bytes against the image every tick, its path and size
 * every 8th. What it finds, it reports (one line per kind and node: on stderr while the engine
 * runs, in the node's said while it opens, which engine_start returns; and a
 * joulie.sim.segment.damaged event each time, naming the file) and repairs, and the node keeps
 * running from its private state:
 *   header or static file changed: rewritten from the image;
 *   static file deleted, replaced or shrunk: put back whole (readers that mapped the old one
 *     keep it: its content is the same);
 *   file shrunk (a SIGBUS the guard caught, or the fstat): grown back, its space reserved, mapped
 *     afresh and rewritten from the image; counters continue from the physics; when the cut
 *     reached the snapshot's values the settings agents wrote are lost with them, and the node
 *     goes back to the profile's (its physics too, so file and physics agree);
 *   file deleted or replaced: a new file is put at the path with the old one's dynamic part
 *     (snapshot, slots, marks, ledger), so counters and settings continue; agents that mapped
 *     the old file keep its last values until they open the node again.
 * A damaged segment found at the start is rendered again by node_open.c (its counters salvaged)
 * and reported here, with its event at the node's first tick that has the log. A repair that
 * lost the agents' settings re-applies the profile's (node_apply.c) and publishes the identity
 * again (node_publish.c); this file never calls the open or the tick. */
#include "node_internal.h"

#include "events.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *damage_name(unsigned kind)
{
    switch (kind) {
    case DMG_HEADER: return "header";
    case DMG_STATIC: return "static";
    case DMG_SHRUNK: return "truncated";
    case DMG_DELETED: return "deleted";
    default: return "unreadable";
    }
}

void node_said_add(struct node *n, const char *line, size_t len)
{
    size_t had = n->said ? strlen(n->said) : 0;
    char *said = realloc(n->said, had + len + 1);
    if (!said)
        abort();
    memcpy(said + had, line, len);
    said[had + len] = 0;
    n->said = said;
}

/* One report of a damage found and what was done about file (the node's segment, or the static
 * file it shares, reported by the node that checks it): an event each time (when the log is at
 * hand), one line per kind: in node.said while the node opens (engine_start returns it), else on
 * stderr. */
static void report_file(struct node *n, unsigned kind, const char *file, const char *what, const char *action,
                        int64_t now_wall, struct event_log *log)
{
    n->damaged++;
    if (!(n->damage_said & kind)) {
        n->damage_said |= kind;
        char line[2048];
        int len = snprintf(line, sizeof line, "node %s: %s %s: %s; %s (docs/robustness.md)\n", n->name,
                           file == n->path ? "segment" : "static file", file, what, action);
        if (len >= (int)sizeof line) { /* cut, still one line */
            len = (int)sizeof line - 1;
            line[len - 1] = '\n';
        }
        if (n->opening) { /* engine_start hands it to the command that started the engine */
            node_said_add(n, line, (size_t)len);
        } else {
            /* a running node's repair, on its worker: said as it happens, under the program's
             * name (the engine runs under `hwemu serve` or `hwemu run`) */
            fprintf(stderr, "hwemu: %s", line);
        }
    }
    if (!log) {
        snprintf(n->pending, sizeof n->pending, "%s|%s|%s", damage_name(kind), what, action);
        return;
    }
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "file", file);
    cJSON_AddStringToObject(a, "damage", damage_name(kind));
    cJSON_AddStringToObject(a, "what", what);
    cJSON_AddStringToObject(a, "action", action);
    events_emit(log, now_wall, n->name, "joulie.sim.segment.damaged", a);
}

void node_report_damage(struct node *n, unsigned kind, const char *what, const char *action, int64_t now_wall,
                        struct event_log *log)
{
    report_file(n, kind, n->path, what, action, now_wall, log);
}

static void emit_pending(struct node *n, int64_t now_wall, struct event_log *log)
{
    char *what = strchr(n->pending, '|'), *action = what ? strchr(what + 1, '|') : NULL;
    if (!log || !action)
        return;
    *what++ = 0;
    *action++ = 0;
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "file", n->path);
    cJSON_AddStringToObject(a, "damage", n->pending);
    cJSON_AddStringToObject(a, "what", what);
    cJSON_AddStringToObject(a, "action", action);
    events_emit(log, now_wall, n->name, "joulie.sim.segment.damaged", a);
    n->pending[0] = 0;
}

/* The header the file must have: the template's, with this node's name. Only the part before
 * the first field agents or the engine change at run time (slot_writes) is compared. */
void node_expected_header(const struct node *n, struct seg_header *h)
{
    memcpy(h, node_img_header(n->t), sizeof *h);
    memset(h->node, 0, sizeof h->node);
    snprintf(h->node, sizeof h->node, "%s", n->name);
}

/* Writes the header's static fields back from the image. */
static void restore_header(struct node *n)
{
    struct seg_header h;
    node_expected_header(n, &h);
    memcpy(n->seg.base, &h, NODE_HEADER_STATIC);
    n->seg.h->substep_ns = h.substep_ns;
    n->seg.h->tick_ns = n->tick_ns;
    n->seg.h->engine_pid = (uint32_t)getpid();
}

/* The file shrank: grow it back, reserve its space, map it afresh and rewrite what was lost. */
static void repair_shrunk(struct node *n, off_t had, int64_t now_wall, struct event_log *log)
{
    struct seg *s = &n->seg;
    char what[160];
    snprintf(what, sizeof what, "the file shrank to %lld of %zu bytes", (long long)had, s->size);
    /* the node holds no descriptor: the file at its path, if it is still the node's */
    struct stat fs;
    int fd = open(n->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC), rc = fd < 0 ? errno : 0;
    if (!rc && (fstat(fd, &fs) != 0 || fs.st_ino != n->seg_ino || fs.st_dev != n->seg_dev))
        rc = ESTALE; /* replaced since the check: the next file tick puts a new one in place */
    if (!rc)
        rc = ftruncate(fd, (off_t)s->size) ? errno : posix_fallocate(fd, 0, (off_t)s->size);
    if (!rc) {
        s->fd = fd;
        rc = seg_revalidate(s);
        s->fd = -1;
    }
    if (fd >= 0)
        close(fd);
    if (rc) {
        char action[200];
        snprintf(action, sizeof action, "cannot restore it (%s): its readers get EIO until there is room on the "
                 "root's filesystem; the node runs on from the engine's state", strerror(rc));
        node_report_damage(n, DMG_SHRUNK, what, action, now_wall, log);
        return;
    }
    bool values_lost = had < (off_t)s->static_end;
    if (values_lost) {
        /* the snapshot's values are gone with the agents' settings: back to the template's */
        memcpy(s->base, n->t->image.bytes, n->t->image.used);
        atomic_store(&s->h->gen, s->pub_gen);
    }
    restore_header(n);
    /* what the lost pages held: the slots, marks and ring restart empty; the ledger is
     * written again at the end of this tick */
    for (uint32_t i = 0; i < s->n_slots && n->slot_applied; i++)
        n->slot_applied[i] = 0;
    n->ev_tail = atomic_load(&s->h->ring_head);
    n->slot_writes_seen = (uint64_t)-1;
    if (values_lost) {
        node_resume_writes(n); /* the profile's settings into the physics; its energy goes on */
        node_publish_identity(n);
    }
    node_report_damage(n, DMG_SHRUNK, what,
           values_lost ? "grown back and rewritten from the engine's state; counters continue; the settings agents "
                         "wrote went back to the profile's"
                       : "grown back and rewritten from the engine's state; counters and settings continue",
           now_wall, log);
}

/* The file was deleted or replaced: put a new one at the path carrying the old one's state. */
static void repair_deleted(struct node *n, const char *how, int64_t now_wall, struct event_log *log)
{
    struct seg fresh;
    char err[600];
    int rc = seg_image_write(&n->t->image, n->path, n->name, &fresh, err, sizeof err);
    if (rc) {
        char action[700];
        snprintf(action, sizeof action, "cannot put a new one in place (%s); the node runs on in the old file, "
                 "which new agents cannot open", err);
        node_report_damage(n, DMG_DELETED, how, action, now_wall, log);
        return;
    }
    struct seg *cur = &n->seg;
    uint32_t from = node_img_header(n->t)->journal_off; /* the journal, the values and what follows */
    memcpy(fresh.base + from, cur->base + from, cur->size - from);
    fresh.h->tick_ns = n->tick_ns;
    atomic_store(&fresh.h->gen, cur->pub_gen);
    atomic_store(&fresh.h->ring_head, atomic_load(&cur->h->ring_head));
    atomic_store(&fresh.h->slot_writes, atomic_load(&cur->h->slot_writes));
    atomic_store(&fresh.h->heartbeat_ns, atomic_load(&cur->h->heartbeat_ns));
    /* The new file takes the old one's addresses (HTTP threads may be reading them): nothing
     * is unmapped, every pointer stays valid. */
    if (mmap(cur->base, cur->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fresh.fd, 0) == MAP_FAILED) {
        seg_close(&fresh);
        node_report_damage(n, DMG_DELETED, how, "cannot map the new file; the node runs on in the old one", now_wall, log);
        return;
    }
    munmap(fresh.base, fresh.map_size);
    struct stat fs;
    if (fstat(fresh.fd, &fs) == 0) {
        n->seg_dev = fs.st_dev;
        n->seg_ino = fs.st_ino;
    }
    close(fresh.fd);
    node_report_damage(n, DMG_DELETED, how,
           "put a new file in place with the node's state (counters and settings continue); agents that had the "
           "old one open keep its last values until they open the node again",
           now_wall, log);
}

/* The static file this node checks for every node that shares it (node.h "struct node_static"):
 * on file ticks (or at once after a SIGBUS in it) whether it is still at its path and whole,
 * and every tick its bytes against the image. */
static void check_static(struct node *n, bool file_tick, int64_t now_wall, struct event_log *log)
{
    struct node_static *st = n->t->st;
    struct seg_static_file *f = &st->f;
    const struct seg_image *img = &n->t->image;
    if (file_tick || seg_guard_faulted(f->guard)) {
        struct stat fs, ps;
        char err[600], action[700];
        if (fstat(f->fd, &fs) == 0 && (fs.st_nlink == 0 || stat(st->path, &ps) != 0 || ps.st_ino != fs.st_ino ||
                                       ps.st_dev != fs.st_dev)) {
            struct seg_static_file fresh;
            if (seg_static_put(img, st->path, &fresh, err, sizeof err)) {
                snprintf(action, sizeof action, "cannot put a new one in place (%s): agents that start now cannot "
                         "open their nodes; the running ones keep theirs", err);
            } else {
                seg_static_close(f);
                *f = fresh;
                snprintf(action, sizeof action, "put a new one in place; agents that had the old one keep it");
            }
            report_file(n, DMG_DELETED, st->path, "the file was deleted or replaced", action, now_wall, log);
            return;
        }
        if (seg_guard_faulted(f->guard) || (fstat(f->fd, &fs) == 0 && fs.st_size < (off_t)f->size)) {
            int rc = seg_static_restore(img, f);
            if (rc)
                snprintf(action, sizeof action, "cannot grow it back (%s): its readers get EIO until there is room on "
                         "the root's filesystem", strerror(rc));
            else
                snprintf(action, sizeof action, "grown back and rewritten from the template");
            report_file(n, DMG_SHRUNK, st->path, "the file shrank", action, now_wall, log);
            return;
        }
    }
    /* the whole file: one per layout, so a damage that every node of the layout would show
     * lasts at most one tick (about 0.1 ms per MB) */
    if (memcmp(f->base, img->st_bytes, f->size) && !seg_guard_faulted(f->guard)) {
        memcpy(f->base, img->st_bytes, f->size);
        char what[160];
        snprintf(what, sizeof what, "its entries, strings or parameters were changed (every node of profile %s with "
                 "these values shares it)", n->profile);
        report_file(n, DMG_STATIC, st->path, what, "rewritten from the template; the engine never used them",
                    now_wall, log);
    }
}

void node_check_health(struct node *n, int64_t now_wall, struct event_log *log)
{
    struct seg *s = &n->seg;
    if (n->pending[0])
        emit_pending(n, now_wall, log);
    /* the file: every 8th tick, or at once when the guard caught a SIGBUS in it */
    bool file_tick = (n->ticks++ & 7) == 0;
    if (seg_faulted(s) || file_tick) {
        /* by its path (the node holds no descriptor), against the identity it had */
        struct stat ps;
        if (lstat(n->path, &ps) != 0) {
            if (errno == ENOENT)
                repair_deleted(n, "the file was deleted (or moved away) under the running engine", now_wall, log);
        } else if (ps.st_ino != n->seg_ino || ps.st_dev != n->seg_dev) {
            repair_deleted(n, "another file was put at its path", now_wall, log);
        } else if (ps.st_size < (off_t)s->size || seg_faulted(s)) {
            repair_shrunk(n, ps.st_size, now_wall, log);
        }
    }
    struct seg_header h;
    node_expected_header(n, &h);
    if (memcmp(s->base, &h, NODE_HEADER_STATIC) || s->h->substep_ns != h.substep_ns) {
        restore_header(n);
        node_report_damage(n, DMG_HEADER, "its header was changed", "rewritten from the template; the engine never used it",
               now_wall, log);
    }
    if (n->t->st && n->t->st->checker == n)
        check_static(n, file_tick, now_wall, log);
}
