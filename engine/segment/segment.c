/* segment: mapping, lookup, reads, slot stores, events and latch publication; see segment.h.
 * Linked into the engine, the shim and fakesmi: libc only, no allocation, no locks, and no
 * system call on the read path (the clock is the vDSO's). */
#include "segment.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool seg_path_from_env(char *path, size_t len)
{
    const char *seg = getenv("HWEMU_SEGMENT"), *node = getenv("HWEMU_NODE"), *root = getenv("HWEMU_ROOT");
    if (seg && *seg)
        snprintf(path, len, "%s", seg);
    else if (node && *node)
        snprintf(path, len, "%s/%s.seg", root && *root ? root : "/dev/shm/hwemu", node);
    else
        return false;
    return true;
}

int64_t seg_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

static bool range_ok(uint64_t off, uint64_t count, uint64_t size, uint64_t file)
{
    return off <= file && count <= (file - off) / (size ? size : 1);
}

int seg_check(const struct seg *s, char *err, size_t errlen)
{
    const struct seg_header *h = s->h;
    if (s->size < sizeof *h || memcmp(h->magic, SEG_MAGIC, 8) != 0)
        return fail(err, errlen, EINVAL, "not an hwemu segment (bad magic)");
    if (h->version != SEG_VERSION || h->header_size != sizeof *h)
        return fail(err, errlen, EINVAL, "segment version or header size differs from this hwemu's; "
                    "restart the engine with the same hwemu build");
    if (h->file_size != s->size)
        return fail(err, errlen, EINVAL, "segment size does not match its header (truncated?)");
    uint64_t f = s->size;
    if (!range_ok(h->entries_off, h->n_entries, sizeof(struct seg_entry), f) ||
        !range_ok(h->strings_off, h->strings_size, 1, f) ||
        !range_ok(h->params_off, h->n_params, sizeof(struct seg_param), f) ||
        !range_ok(h->values_off[0], h->n_values, sizeof(struct seg_value), f) ||
        !range_ok(h->values_off[1], h->n_values, sizeof(struct seg_value), f) ||
        !range_ok(h->slots_off, h->n_slots, sizeof(struct seg_slot), f) ||
        !range_ok(h->hwm_off, h->n_values, sizeof(uint64_t), f) ||
        !range_ok(h->ring_off, h->ring_cap, sizeof(struct seg_event), f) ||
        !range_ok(h->ledger_off, 2, h->ledger_size, f) ||
        h->n_counters > h->n_values ||
        h->ledger_size < sizeof(struct seg_ledger) + sizeof(uint64_t) * (uint64_t)h->n_counters ||
        (h->ring_cap & (h->ring_cap - 1)) != 0 || h->ring_cap == 0 || h->substep_ns <= 0 ||
        h->strings_size == 0 || ((const char *)s->base)[h->strings_off + h->strings_size - 1] != 0)
        return fail(err, errlen, EINVAL, "segment sections lie outside the file; it is damaged");
    const struct seg_entry *e = (const struct seg_entry *)(s->base + h->entries_off);
    for (uint32_t i = 0; i < h->n_entries; i++) {
        if (e[i].path_off >= h->strings_size || e[i].text_off > h->strings_size ||
            e[i].text_len > h->strings_size - e[i].text_off ||
            (e[i].value != SEG_NONE && e[i].value >= h->n_values) ||
            (e[i].slot != SEG_NONE && e[i].slot >= h->n_slots) ||
            (e[i].param != SEG_NONE && e[i].param >= h->n_params) ||
            (e[i].parent != SEG_NONE && e[i].parent >= h->n_entries))
            return fail(err, errlen, EINVAL, "a segment entry points outside its tables; it is damaged");
    }
    return 0;
}

void seg_bind(struct seg *s)
{
    const struct seg_header *h = s->h;
    s->entries = (const struct seg_entry *)(s->base + h->entries_off);
    s->strings = (const char *)(s->base + h->strings_off);
    s->params = (const struct seg_param *)(s->base + h->params_off);
    s->copy[0] = (struct seg_value *)(s->base + h->values_off[0]);
    s->copy[1] = (struct seg_value *)(s->base + h->values_off[1]);
    s->slots = (struct seg_slot *)(s->base + h->slots_off);
    s->hwm = (_Atomic uint64_t *)(s->base + h->hwm_off);
    s->ring = (struct seg_event *)(s->base + h->ring_off);
    s->ledger[0] = (struct seg_ledger *)(s->base + h->ledger_off);
    s->ledger[1] = (struct seg_ledger *)(s->base + h->ledger_off + h->ledger_size);
}

int seg_open(struct seg *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return fail(err, errlen, e, "%s: cannot open the segment: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(struct seg_header)) {
        close(fd);
        return fail(err, errlen, EINVAL, "%s: %s", path, "too small to be an hwemu segment");
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        close(fd);
        return fail(err, errlen, e, "%s: cannot map the segment: %s", path, strerror(e));
    }
    s->base = p;
    s->size = (size_t)st.st_size;
    s->h = p;
    s->fd = fd;
    char why[200];
    if (seg_check(s, why, sizeof why)) {
        seg_close(s);
        return fail(err, errlen, EINVAL, "%s: %s", path, why);
    }
    seg_bind(s);
    return 0;
}

void seg_close(struct seg *s)
{
    if (s->base)
        munmap(s->base, s->size);
    if (s->fd >= 0)
        close(s->fd);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

const char *seg_path(const struct seg *s, uint32_t entry)
{
    return s->strings + s->entries[entry].path_off;
}

uint32_t seg_lookup(const struct seg *s, const char *path, size_t len)
{
    uint32_t lo = 0, hi = s->h->n_entries;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const char *p = s->strings + s->entries[mid].path_off;
        int c = strncmp(p, path, len);
        if (c == 0 && p[len] != 0)
            c = 1;
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return SEG_NONE;
}

/* Appends component comp to the resolved prefix buf (which names a directory or is empty). */
static int walk_push(char *buf, size_t *blen, const char *comp, size_t clen)
{
    if (clen == 1 && comp[0] == '.')
        return 0;
    if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
        while (*blen && buf[*blen - 1] != '/')
            (*blen)--;
        if (*blen)
            (*blen)--; /* drop the slash; ".." of the root stays at the root */
        return 0;
    }
    if (*blen + clen + 2 > SEG_PATH_MAX)
        return ENAMETOOLONG;
    if (*blen)
        buf[(*blen)++] = '/';
    memcpy(buf + *blen, comp, clen);
    *blen += clen;
    return 0;
}

int seg_resolve(const struct seg *s, const char *path, size_t len, bool follow, uint32_t *entry)
{
    uint32_t last;
    return seg_resolve_ex(s, path, len, follow, entry, &last);
}

int seg_resolve_ex(const struct seg *s, const char *path, size_t len, bool follow, uint32_t *entry,
                   uint32_t *last_dir)
{
    *last_dir = SEG_NONE;
    /* pending: what is left to walk; done: the resolved prefix. Both fit SEG_PATH_MAX. */
    char pending[SEG_PATH_MAX], done[SEG_PATH_MAX];
    size_t plen, dlen = 0, pos = 0;
    int hops = 0;
    if (len >= SEG_PATH_MAX)
        return ENAMETOOLONG;
    memcpy(pending, path, len);
    plen = len;
    while (pos < plen) {
        while (pos < plen && pending[pos] == '/')
            pos++;
        if (pos >= plen)
            break;
        size_t start = pos;
        while (pos < plen && pending[pos] != '/')
            pos++;
        size_t clen = pos - start;
        bool dots = (clen == 1 && pending[start] == '.') ||
                    (clen == 2 && pending[start] == '.' && pending[start + 1] == '.');
        int rc = walk_push(done, &dlen, pending + start, clen);
        if (rc)
            return rc;
        if (dots)
            continue;
        uint32_t e = seg_lookup(s, done, dlen);
        if (e == SEG_NONE)
            return ENOENT;
        if (s->entries[e].kind == SEG_DIR)
            *last_dir = e;
        if (s->entries[e].flags & SEG_F_ABSENT)
            return ENOENT;
        bool last = true;
        for (size_t q = pos; q < plen; q++)
            if (pending[q] != '/')
                last = false;
        const struct seg_entry *en = &s->entries[e];
        if (en->kind == SEG_LINK && (!last || follow)) {
            if (++hops > 40)
                return ELOOP;
            /* Replace the link by its target (relative to the link's directory), then walk on. */
            const char *t = s->strings + en->text_off;
            size_t tl = en->text_len, rest = plen - pos;
            if (tl + 1 + rest >= SEG_PATH_MAX)
                return ENAMETOOLONG;
            memmove(pending + tl + 1, pending + pos, rest);
            memcpy(pending, t, tl);
            pending[tl] = '/';
            plen = tl + 1 + rest;
            pos = 0;
            while (dlen && done[dlen - 1] != '/')
                dlen--; /* back to the link's directory */
            if (dlen)
                dlen--;
            if (t[0] == '/')
                return ENOENT; /* absolute targets leave the node's tree */
            continue;
        }
        if (!last && en->kind != SEG_DIR)
            return ENOTDIR;
    }
    if (!dlen)
        return ENOENT; /* the node root itself is not an entry */
    uint32_t e = seg_lookup(s, done, dlen);
    if (e == SEG_NONE || (s->entries[e].flags & SEG_F_ABSENT))
        return ENOENT;
    *entry = e;
    return 0;
}

/* One consistent copy of a snapshot value (latch read). */
static void load_value(const struct seg *s, uint32_t v, struct seg_value *out)
{
    for (;;) {
        uint64_t g = atomic_load_explicit(&s->h->gen, memory_order_acquire);
        memcpy(out, &s->copy[g & 1][v], sizeof *out);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->h->gen, memory_order_relaxed) == g)
            return;
    }
}

static void raise_hwm(struct seg *s, uint32_t v, uint64_t raw)
{
    uint64_t cur = atomic_load_explicit(&s->hwm[v], memory_order_relaxed);
    while (cur < raw && !atomic_compare_exchange_weak_explicit(&s->hwm[v], &cur, raw, memory_order_release,
                                                               memory_order_relaxed))
        ;
}

static size_t put_u64(char *buf, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\n';
    return n + 1;
}

/* The count of counter value vi (loaded in v) at now_ns, unwrapped; raises its high-water mark. */
static uint64_t counter_raw(struct seg *s, uint32_t vi, const struct seg_value *v, int64_t now_ns)
{
    int64_t n = (now_ns - v->ctr.t0_ns) / s->h->substep_ns;
    if (n < 0)
        n = 0;
    if (n > (int64_t)v->nsub)
        n = v->nsub;
    unsigned __int128 nj = (unsigned __int128)v->ctr.power_uw * (uint64_t)n + v->ctr.rem_nj;
    uint64_t acc = v->ctr.acc_uj + (uint64_t)(nj / 1000);
    uint64_t rem = (uint64_t)(nj % 1000);
    raise_hwm(s, vi, v->ctr.start_uj + acc);
    uint64_t unit = v->ctr.unit_nj ? v->ctr.unit_nj : 1000;
    uint64_t seed = (uint64_t)v->ctr.seed_raw_hi << 32 | v->ctr.seed_raw;
    return seed + (uint64_t)(((unsigned __int128)acc * 1000 + rem) / unit);
}

uint64_t seg_counter_raw(struct seg *s, uint32_t vi, int64_t now_ns, uint8_t *wrap_bits, uint32_t *unit_nj)
{
    struct seg_value v;
    if (vi >= s->h->n_values)
        return 0;
    load_value(s, vi, &v);
    if (v.type != SEG_V_COUNTER)
        return 0;
    if (wrap_bits)
        *wrap_bits = v.wrap_bits;
    if (unit_nj)
        *unit_nj = v.ctr.unit_nj ? v.ctr.unit_nj : 1000;
    return counter_raw(s, vi, &v, now_ns);
}

const char *seg_read(struct seg *s, uint32_t entry, int64_t now_ns, char *tmp, size_t *len)
{
    const struct seg_entry *e = &s->entries[entry];
    if (e->kind != SEG_FILE) {
        *len = 0;
        return tmp;
    }
    if (e->cls == SEG_R || e->value == SEG_NONE) {
        *len = e->text_len;
        return s->strings + e->text_off;
    }
    struct seg_value v;
    load_value(s, e->value, &v);
    if (v.type == SEG_V_COUNTER) {
        uint64_t raw = counter_raw(s, e->value, &v, now_ns);
        uint64_t unit = v.ctr.unit_nj ? v.ctr.unit_nj : 1000;
        uint64_t wrapped = v.wrap_bits >= 64 ? raw : raw & ((UINT64_C(1) << v.wrap_bits) - 1);
        *len = put_u64(tmp, v.shows_count ? wrapped : (uint64_t)((unsigned __int128)wrapped * unit / 1000));
        return tmp;
    }
    if (e->cls == SEG_A && e->slot != SEG_NONE) {
        uint64_t seq;
        size_t n;
        char text[SEG_TEXT_MAX];
        if (seg_slot_load(s, e->slot, &seq, text, &n) && seq > v.a.applied) {
            memcpy(tmp, text, n);
            *len = n;
            return tmp;
        }
        size_t l = v.len < sizeof v.a.text ? v.len : sizeof v.a.text;
        memcpy(tmp, v.a.text, l);
        *len = l;
        return tmp;
    }
    size_t l = v.len < SEG_TEXT_MAX ? v.len : SEG_TEXT_MAX;
    memcpy(tmp, v.text, l);
    *len = l;
    return tmp;
}

bool seg_slot_load(const struct seg *s, uint32_t slot, uint64_t *seq, char *text, size_t *len)
{
    struct seg_slot *sl = &s->slots[slot];
    for (int tries = 0; tries < 1000; tries++) {
        uint64_t a = atomic_load_explicit(&sl->seq, memory_order_acquire);
        if (a == 0)
            return false;
        if (a & 1)
            continue;
        uint32_t n = sl->len;
        if (n > SEG_TEXT_MAX)
            n = SEG_TEXT_MAX; /* untrusted: a writer may have put anything here */
        memcpy(text, sl->text, n);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&sl->seq, memory_order_relaxed) == a) {
            *seq = a;
            *len = n;
            return true;
        }
    }
    return false;
}

void seg_slot_store(struct seg *s, uint32_t entry, const char *text, size_t len, int64_t now_ns)
{
    const struct seg_entry *e = &s->entries[entry];
    if (e->slot == SEG_NONE)
        return;
    struct seg_slot *sl = &s->slots[e->slot];
    if (len > SEG_TEXT_MAX)
        len = SEG_TEXT_MAX;
    /* Claim: even -> odd. A writer that died mid-store leaves the slot odd; after a bounded
     * wait the next writer takes it over, so one dead agent cannot wedge an attribute. */
    uint64_t cur = atomic_load_explicit(&s->slots[e->slot].seq, memory_order_relaxed);
    for (int spins = 0;; spins++) {
        if (!(cur & 1)) {
            if (atomic_compare_exchange_weak_explicit(&sl->seq, &cur, cur + 1, memory_order_acquire,
                                                      memory_order_relaxed))
                break;
            continue;
        }
        if (spins > 100000) {
            if (atomic_compare_exchange_weak_explicit(&sl->seq, &cur, cur + 2, memory_order_acquire,
                                                      memory_order_relaxed)) {
                atomic_fetch_add_explicit(&s->h->writes_refused_unsafely, 1, memory_order_relaxed);
                break;
            }
            continue;
        }
        cur = atomic_load_explicit(&sl->seq, memory_order_relaxed);
    }
    memcpy(sl->text, text, len);
    sl->len = (uint32_t)len;
    sl->time_ns = now_ns;
    atomic_fetch_add_explicit(&sl->seq, 1, memory_order_release);
    atomic_fetch_add_explicit(&s->h->slot_writes, 1, memory_order_release);
}

void seg_event_push(struct seg *s, uint32_t entry, int err, const char *text, size_t len, int64_t now_ns, int pid)
{
    uint64_t idx = atomic_fetch_add_explicit(&s->h->ring_head, 1, memory_order_relaxed);
    struct seg_event *ev = &s->ring[idx & (s->h->ring_cap - 1)];
    atomic_store_explicit(&ev->seq, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    if (len > SEG_TEXT_MAX)
        len = SEG_TEXT_MAX;
    ev->time_ns = now_ns;
    ev->entry = entry;
    ev->err = err;
    ev->len = (uint32_t)len;
    ev->pid = pid;
    memcpy(ev->text, text, len);
    atomic_store_explicit(&ev->seq, idx + 1, memory_order_release);
}

bool seg_event_pop(struct seg *s, uint64_t *tail, struct seg_event *out, uint64_t *lost)
{
    uint64_t head = atomic_load_explicit(&s->h->ring_head, memory_order_acquire);
    uint64_t cap = s->h->ring_cap;
    if (head > *tail + cap) {
        *lost += head - cap - *tail;
        *tail = head - cap;
    }
    while (*tail < head) {
        struct seg_event *ev = &s->ring[*tail & (cap - 1)];
        uint64_t seq = atomic_load_explicit(&ev->seq, memory_order_acquire);
        if (seq == *tail + 1) {
            memcpy(out, ev, sizeof *out);
            atomic_thread_fence(memory_order_acquire);
            if (atomic_load_explicit(&ev->seq, memory_order_relaxed) != seq) {
                (*lost)++; /* overwritten while copying */
                (*tail)++;
                continue;
            }
            if (out->len > SEG_TEXT_MAX)
                out->len = SEG_TEXT_MAX;
            (*tail)++;
            return true;
        }
        if (seq > *tail + 1) { /* lapped by producers */
            (*lost)++;
            (*tail)++;
            continue;
        }
        if (head - *tail > 64) { /* a producer died between claim and completion: skip it */
            (*lost)++;
            (*tail)++;
            continue;
        }
        return false; /* claimed but not complete yet: take it next time */
    }
    return false;
}

void seg_publish_begin(struct seg *s)
{
    atomic_fetch_add_explicit(&s->h->gen, 1, memory_order_release); /* odd: readers use copy 1 */
    atomic_thread_fence(memory_order_seq_cst);
}

void seg_publish_flip(struct seg *s)
{
    atomic_thread_fence(memory_order_release);
    atomic_fetch_add_explicit(&s->h->gen, 1, memory_order_release); /* even: readers use copy 0 */
    atomic_thread_fence(memory_order_seq_cst);
}

void seg_publish_end(struct seg *s, int64_t now_ns)
{
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->h->heartbeat_ns, now_ns, memory_order_release);
}

struct seg_value *seg_writable_copy(struct seg *s)
{
    /* While gen is odd readers use copy 1, so the engine writes copy 0, and vice versa. */
    uint64_t g = atomic_load_explicit(&s->h->gen, memory_order_relaxed);
    return s->copy[(g & 1) ? 0 : 1];
}

static uint64_t ledger_check(uint64_t seq, int64_t wall_ns, const uint64_t *total, uint32_t n)
{
    uint64_t h = (1469598103934665603ULL ^ seq) * 1099511628211ULL;
    h = (h ^ (uint64_t)wall_ns) * 1099511628211ULL;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ total[i]) * 1099511628211ULL;
    return h;
}

void seg_ledger_write(struct seg *s, uint64_t seq, const uint64_t *total_uj, int64_t wall_ns)
{
    struct seg_ledger *l = s->ledger[seq & 1];
    l->seq = 0; /* invalid while being written */
    atomic_thread_fence(memory_order_release);
    l->wall_ns = wall_ns;
    memcpy(l->total_uj, total_uj, sizeof *total_uj * s->h->n_counters);
    l->check = ledger_check(seq, wall_ns, total_uj, s->h->n_counters);
    atomic_thread_fence(memory_order_release);
    l->seq = seq;
}

const struct seg_ledger *seg_ledger_read(const struct seg *s)
{
    const struct seg_ledger *best = NULL;
    for (int i = 0; i < 2; i++) {
        const struct seg_ledger *l = s->ledger[i];
        if (l->seq && l->check == ledger_check(l->seq, l->wall_ns, l->total_uj, s->h->n_counters) &&
            (!best || l->seq > best->seq))
            best = l;
    }
    return best;
}
