/* seg_build: building and writing a segment file; see seg_build.h and segment.h. */
#include "seg_build.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define RING_CAP 256u
#define SUBSTEP_NS 1000000

struct bentry {
    char *path;
    const char *text; /* static text (owned by strs) or link target */
    size_t text_len;
    uint32_t value, param;
    uint16_t validator, mode;
    uint8_t kind, cls, flags;
};

struct seg_builder {
    struct bentry *e;
    uint32_t n, cap;
    uint32_t *index; /* open-addressing hash of paths -> builder id + 1 */
    uint32_t index_cap;
    struct seg_value *values;
    uint32_t nvalues, vcap;
    /* Quiet values (segment.h "Quiet values"): counted as they come (nquiet); once a split is
     * set (split, first_quiet), the live ones take 0, 1, ... and the quiet ones first_quiet, ... */
    uint32_t nquiet, nlive, first_quiet;
    bool split;
    struct bparam {
        struct seg_param p;
        char *words;
    } *params;
    uint32_t nparams, pcap;
    char **texts; /* owned static texts */
    uint32_t ntexts, tcap;
    int errors;
    const char *first_error;
    char errbuf[256];
};

uint64_t seg_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t size)
{
    if (need <= *cap)
        return p;
    uint32_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(p, (size_t)c * size);
    if (!q) {
        fprintf(stderr, "hwemu: out of memory building a segment\n");
        abort();
    }
    *cap = c;
    return q;
}

struct seg_builder *segb_new(void)
{
    struct seg_builder *b = calloc(1, sizeof *b);
    if (!b)
        abort();
    return b;
}

void segb_free(struct seg_builder *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; i < b->n; i++)
        free(b->e[i].path);
    for (uint32_t i = 0; i < b->ntexts; i++)
        free(b->texts[i]);
    for (uint32_t i = 0; i < b->nparams; i++)
        free(b->params[i].words);
    free(b->e);
    free(b->index);
    free(b->values);
    free(b->params);
    free(b->texts);
    free(b);
}

static uint32_t path_hash(const char *p)
{
    return (uint32_t)seg_hash_bytes(1469598103934665603ULL, p, strlen(p));
}

static void reindex(struct seg_builder *b)
{
    uint32_t cap = b->index_cap ? b->index_cap * 2 : 1024;
    uint32_t *idx = calloc(cap, sizeof *idx);
    if (!idx)
        abort();
    for (uint32_t i = 0; i < b->n; i++) {
        uint32_t at = path_hash(b->e[i].path) & (cap - 1);
        while (idx[at])
            at = (at + 1) & (cap - 1);
        idx[at] = i + 1;
    }
    free(b->index);
    b->index = idx;
    b->index_cap = cap;
}

uint32_t segb_value_of(const struct seg_builder *b, uint32_t id)
{
    return id < b->n ? b->e[id].value : SEG_NONE;
}

uint32_t segb_find(const struct seg_builder *b, const char *path)
{
    if (!b->index_cap)
        return SEG_NONE;
    uint32_t at = path_hash(path) & (b->index_cap - 1);
    while (b->index[at]) {
        if (!strcmp(b->e[b->index[at] - 1].path, path))
            return b->index[at] - 1;
        at = (at + 1) & (b->index_cap - 1);
    }
    return SEG_NONE;
}

static void error(struct seg_builder *b, const char *what, const char *path)
{
    if (!b->errors++) {
        snprintf(b->errbuf, sizeof b->errbuf, "%s: %s", path, what);
        b->first_error = b->errbuf;
    }
}

static uint32_t add(struct seg_builder *b, const char *path, uint8_t kind, uint16_t mode)
{
    if (!*path || path[0] == '/' || strstr(path, "//") || path[strlen(path) - 1] == '/') {
        error(b, "not a clean relative path", path);
        return SEG_NONE;
    }
    uint32_t have = segb_find(b, path);
    if (have != SEG_NONE) {
        if (kind == SEG_DIR && b->e[have].kind == SEG_DIR)
            return have;
        error(b, "defined twice", path);
        return SEG_NONE;
    }
    /* Parents first, so that every directory on the way is an entry. */
    const char *slash = strrchr(path, '/');
    if (slash) {
        char parent[512];
        size_t n = (size_t)(slash - path);
        if (n >= sizeof parent) {
            error(b, "path too long", path);
            return SEG_NONE;
        }
        memcpy(parent, path, n);
        parent[n] = 0;
        uint32_t p = segb_find(b, parent);
        if (p == SEG_NONE)
            segb_dir(b, parent, 0755);
        else if (b->e[p].kind != SEG_DIR)
            error(b, "parent is not a directory", path);
    }
    b->e = grow(b->e, &b->cap, b->n + 1, sizeof *b->e);
    struct bentry *e = &b->e[b->n];
    memset(e, 0, sizeof *e);
    e->path = strdup(path);
    if (!e->path)
        abort();
    e->kind = kind;
    e->mode = mode;
    e->value = e->param = SEG_NONE;
    b->n++;
    if (b->n * 2 > b->index_cap)
        reindex(b);
    else {
        uint32_t at = path_hash(path) & (b->index_cap - 1);
        while (b->index[at])
            at = (at + 1) & (b->index_cap - 1);
        b->index[at] = b->n;
    }
    return b->n - 1;
}

uint32_t segb_dir(struct seg_builder *b, const char *path, uint16_t mode)
{
    return add(b, path, SEG_DIR, mode);
}

static const char *own_text(struct seg_builder *b, const char *text, size_t len)
{
    b->texts = grow(b->texts, &b->tcap, b->ntexts + 1, sizeof *b->texts);
    char *t = malloc(len + 1);
    if (!t)
        abort();
    memcpy(t, text, len);
    t[len] = 0;
    b->texts[b->ntexts++] = t;
    return t;
}

uint32_t segb_link(struct seg_builder *b, const char *path, const char *target)
{
    uint32_t id = add(b, path, SEG_LINK, 0777);
    if (id != SEG_NONE) {
        b->e[id].text = own_text(b, target, strlen(target));
        b->e[id].text_len = strlen(target);
    }
    return id;
}

uint32_t segb_static(struct seg_builder *b, const char *path, uint16_t mode, const char *text, size_t len)
{
    uint32_t id = add(b, path, SEG_FILE, mode);
    if (id != SEG_NONE) {
        b->e[id].cls = SEG_R;
        b->e[id].text = own_text(b, text, len);
        b->e[id].text_len = len;
    }
    return id;
}

uint32_t segb_dynamic(struct seg_builder *b, const char *path, uint16_t mode, char cls, uint32_t value,
                      uint16_t validator, uint32_t param)
{
    if (value >= b->nvalues) {
        error(b, "dynamic file without a value", path);
        return SEG_NONE;
    }
    uint32_t id = add(b, path, SEG_FILE, mode);
    if (id != SEG_NONE) {
        b->e[id].cls = (uint8_t)cls;
        b->e[id].value = value;
        b->e[id].validator = validator;
        b->e[id].param = param;
    }
    return id;
}

uint32_t segb_device(struct seg_builder *b, const char *path, uint16_t mode, char cls, uint32_t param)
{
    uint32_t id = add(b, path, SEG_FILE, mode);
    if (id != SEG_NONE) {
        b->e[id].cls = (uint8_t)cls;
        b->e[id].param = param;
    }
    return id;
}

/* A new value's index (zeroed): the next one, or, after a split, the next live or quiet one. */
static uint32_t new_value(struct seg_builder *b, bool quiet)
{
    uint32_t at = b->nvalues;
    if (!b->split) {
        b->nquiet += quiet;
    } else if (quiet) {
        at = b->first_quiet + b->nquiet++;
    } else {
        at = b->nlive++;
        if (at >= b->first_quiet)
            at = b->first_quiet + b->nquiet++; /* more live values than the split said: segb_image refuses */
    }
    if (at >= b->nvalues) {
        b->values = grow(b->values, &b->vcap, at + 1, sizeof *b->values);
        memset(b->values + b->nvalues, 0, sizeof *b->values * (at + 1 - b->nvalues));
        b->nvalues = at + 1;
    }
    return at;
}

static uint32_t text_value(struct seg_builder *b, const char *text, bool quiet)
{
    uint32_t at = new_value(b, quiet);
    struct seg_value *v = &b->values[at];
    v->type = SEG_V_TEXT;
    size_t n = strlen(text);
    if (n > sizeof v->a.text)
        n = sizeof v->a.text;
    memcpy(v->text, text, n);
    v->len = (uint8_t)n;
    return at;
}

uint32_t segb_value_text(struct seg_builder *b, const char *text)
{
    return text_value(b, text, false);
}

uint32_t segb_value_quiet(struct seg_builder *b, const char *text)
{
    return text_value(b, text, true);
}

uint32_t segb_live_count(const struct seg_builder *b)
{
    return b->nvalues - b->nquiet;
}

void segb_quiet_split(struct seg_builder *b, uint32_t first_quiet)
{
    if (b->nvalues) {
        error(b, "the quiet values' split was set after values were made", "(values)");
        return;
    }
    b->split = true;
    b->first_quiet = first_quiet;
}

uint32_t segb_value_counter(struct seg_builder *b, uint32_t unit_nj, uint8_t wrap_bits, bool shows_count)
{
    uint32_t at = new_value(b, false);
    struct seg_value *v = &b->values[at];
    v->type = SEG_V_COUNTER;
    v->wrap_bits = wrap_bits;
    v->shows_count = shows_count;
    v->ctr.unit_nj = unit_nj;
    return at;
}

uint32_t segb_value_line(struct seg_builder *b)
{
    uint32_t v = segb_value_counter(b, 1000, 64, false);
    b->values[v].type = SEG_V_LINE;
    return v;
}

uint32_t segb_value_counts(struct seg_builder *b)
{
    uint32_t v = segb_value_text(b, "");
    b->values[v].type = SEG_V_COUNTS;
    b->values[v].len = SEG_COUNTS_PER_VALUE * 4;
    return v;
}

uint32_t segb_param(struct seg_builder *b, struct seg_param p, const char *words)
{
    b->params = grow(b->params, &b->pcap, b->nparams + 1, sizeof *b->params);
    b->params[b->nparams].p = p;
    b->params[b->nparams].words = words ? strdup(words) : NULL;
    return b->nparams++;
}

uint32_t segb_slot_dir(struct seg_builder *b, const char *parent, uint32_t k, uint32_t value, const char *pattern,
                       char *path_out, size_t cap)
{
    int n = snprintf(path_out, cap, "%s/%c%u", parent, SEG_SLOT_MARK, k);
    if (n < 0 || (size_t)n >= cap || value >= b->nvalues) {
        error(b, "slot directory: path too long or no value", parent);
        return SEG_NONE;
    }
    if (k > 0) {
        char prev[512];
        snprintf(prev, sizeof prev, "%s/%c%u", parent, SEG_SLOT_MARK, k - 1);
        if (segb_find(b, prev) == SEG_NONE)
            error(b, "slot directories out of order", path_out);
    }
    uint32_t id = add(b, path_out, SEG_DIR, 0755);
    if (id == SEG_NONE)
        return id;
    b->e[id].flags |= SEG_F_SLOT;
    b->e[id].value = value;
    b->e[id].text = own_text(b, pattern, strlen(pattern));
    b->e[id].text_len = strlen(pattern);
    b->e[segb_find(b, parent)].flags |= SEG_F_SLOTS;
    return id;
}

void segb_flag(struct seg_builder *b, uint32_t id, uint8_t flag)
{
    if (id < b->n && b->e[id].kind == SEG_FILE)
        b->e[id].flags |= flag;
}

void segb_own(struct seg_builder *b, const char *dir)
{
    uint32_t id = segb_find(b, dir);
    if (id != SEG_NONE && b->e[id].kind == SEG_DIR)
        b->e[id].flags |= SEG_F_OWNED;
}

void segb_absent(struct seg_builder *b, const char *dir)
{
    if (segb_find(b, dir) != SEG_NONE)
        return; /* the node has it after all */
    uint32_t id = segb_dir(b, dir, 0755);
    if (id != SEG_NONE)
        b->e[id].flags |= SEG_F_OWNED | SEG_F_ABSENT;
}

int segb_errors(const struct seg_builder *b, const char **first)
{
    if (first)
        *first = b->first_error;
    return b->errors;
}

/* --- layout ------------------------------------------------------------------------------- */

static const struct seg_builder *sort_ctx;

static int cmp_ids(const void *x, const void *y)
{
    return strcmp(sort_ctx->e[*(const uint32_t *)x].path, sort_ctx->e[*(const uint32_t *)y].path);
}

struct strtab {
    char *buf;
    uint32_t len, cap;
};

static uint32_t str_add(struct strtab *t, const char *s, size_t n)
{
    t->buf = grow(t->buf, &t->cap, t->len + (uint32_t)n + 1, 1);
    memcpy(t->buf + t->len, s, n);
    t->buf[t->len + n] = 0;
    uint32_t off = t->len;
    t->len += (uint32_t)n + 1;
    return off;
}

/* Static texts and link targets repeat (a package's CPU mask in every CPU of it, "0\n", a link
 * to the same driver): each distinct text is stored once and entries share its offset. An
 * open-addressing table of offsets, keyed by the text's hash. */
struct textdedup {
    uint32_t *slot; /* string offset + 1, 0 = free */
    uint32_t *len;
    uint32_t cap, n;
};

static uint32_t text_add(struct strtab *t, struct textdedup *d, const char *s, size_t n)
{
    if (d->n * 2 >= d->cap) {
        uint32_t cap = d->cap ? d->cap * 2 : 4096;
        uint32_t *slot = calloc(cap, sizeof *slot), *len = calloc(cap, sizeof *len);
        if (!slot || !len)
            abort();
        for (uint32_t i = 0; i < d->cap; i++) {
            if (!d->slot[i])
                continue;
            uint32_t at = (uint32_t)seg_hash_bytes(1469598103934665603ULL, t->buf + d->slot[i] - 1, d->len[i]) &
                          (cap - 1);
            while (slot[at])
                at = (at + 1) & (cap - 1);
            slot[at] = d->slot[i];
            len[at] = d->len[i];
        }
        free(d->slot);
        free(d->len);
        d->slot = slot;
        d->len = len;
        d->cap = cap;
    }
    uint32_t at = (uint32_t)seg_hash_bytes(1469598103934665603ULL, s, n) & (d->cap - 1);
    while (d->slot[at]) {
        if (d->len[at] == n && !memcmp(t->buf + d->slot[at] - 1, s, n))
            return d->slot[at] - 1;
        at = (at + 1) & (d->cap - 1);
    }
    uint32_t off = str_add(t, s, n);
    d->slot[at] = off + 1;
    d->len[at] = (uint32_t)n;
    d->n++;
    return off;
}

static uint32_t align64(uint32_t x)
{
    return (x + 63) & ~63u;
}

struct layout {
    uint32_t *order;   /* final position -> builder id */
    uint32_t *pos;     /* builder id -> final position */
    struct seg_entry *entries;
    struct strtab strs;
    uint32_t nslots;
};

static void layout_free(struct layout *l)
{
    free(l->order);
    free(l->pos);
    free(l->entries);
    free(l->strs.buf);
}

static void lay_out(struct seg_builder *b, struct layout *l)
{
    memset(l, 0, sizeof *l);
    l->order = malloc(sizeof *l->order * (b->n + 1));
    l->pos = malloc(sizeof *l->pos * (b->n + 1));
    l->entries = calloc(b->n + 1, sizeof *l->entries);
    if (!l->order || !l->pos || !l->entries)
        abort();
    for (uint32_t i = 0; i < b->n; i++)
        l->order[i] = i;
    sort_ctx = b;
    qsort(l->order, b->n, sizeof *l->order, cmp_ids);
    for (uint32_t i = 0; i < b->n; i++)
        l->pos[l->order[i]] = i;
    str_add(&l->strs, "", 0);
    struct textdedup dd = {0};
    for (uint32_t i = 0; i < b->n; i++) {
        const struct bentry *be = &b->e[l->order[i]];
        struct seg_entry *e = &l->entries[i];
        e->path_off = str_add(&l->strs, be->path, strlen(be->path));
        if (be->text) {
            e->text_off = text_add(&l->strs, &dd, be->text, be->text_len);
            e->text_len = (uint32_t)be->text_len;
        }
        e->value = be->value;
        e->param = be->param;
        e->validator = be->validator;
        e->mode = be->mode;
        e->kind = be->kind;
        e->cls = be->cls;
        e->flags = be->flags;
        e->slot = be->cls == SEG_A ? l->nslots++ : SEG_NONE;
        const char *slash = strrchr(be->path, '/');
        e->parent = SEG_NONE;
        if (slash) {
            char parent[512];
            size_t n = (size_t)(slash - be->path);
            memcpy(parent, be->path, n);
            parent[n] = 0;
            uint32_t p = segb_find(b, parent);
            e->parent = p == SEG_NONE ? SEG_NONE : l->pos[p];
        }
    }
    free(dd.slot);
    free(dd.len);
}

static uint64_t layout_hash(const struct seg_builder *b, const struct layout *l, uint64_t extra)
{
    uint64_t h = seg_hash_bytes(1469598103934665603ULL, &extra, sizeof extra);
    h = seg_hash_bytes(h, &b->n, sizeof b->n);
    h = seg_hash_bytes(h, &b->nvalues, sizeof b->nvalues);
    h = seg_hash_bytes(h, l->entries, sizeof *l->entries * b->n);
    h = seg_hash_bytes(h, l->strs.buf, l->strs.len);
    return h;
}


int segb_image(struct seg_builder *b, const char *profile, uint64_t extra_hash, int64_t tick_ns,
               struct seg_image *img, char *err, size_t errlen)
{
    memset(img, 0, sizeof *img);
    if (b->errors) {
        snprintf(err, errlen, "profile %s: the rendered tree is inconsistent: %s (%d problem%s)", profile,
                 b->first_error, b->errors, b->errors == 1 ? "" : "s");
        return EINVAL;
    }
    /* With a split, every index below first_quiet live and every one from it quiet, no gap:
     * the rendering that set it made the same values as the one that counted them. */
    uint32_t first_quiet = b->split ? b->first_quiet : b->nvalues;
    if (b->split && (b->nlive != b->first_quiet || b->nvalues != b->first_quiet + b->nquiet)) {
        snprintf(err, errlen, "profile %s: the rendering made %u live and %u quiet values, its count before %u "
                 "live: the render is not deterministic (a bug: report it)", profile, b->nlive, b->nquiet,
                 b->first_quiet);
        return EINVAL;
    }
    struct layout l;
    lay_out(b, &l);
    /* Params: words go to the string table, related entries are remapped. */
    struct seg_param *params = calloc(b->nparams + 1, sizeof *params);
    if (!params)
        abort();
    for (uint32_t i = 0; i < b->nparams; i++) {
        params[i] = b->params[i].p;
        params[i].words_off = b->params[i].words ? str_add(&l.strs, b->params[i].words, strlen(b->params[i].words))
                                                 : SEG_NONE;
        if (params[i].related != SEG_NONE && params[i].related < b->n)
            params[i].related = l.pos[params[i].related];
    }
    struct seg_header h = {0};
    memcpy(h.magic, SEG_MAGIC, 8);
    h.version = SEG_VERSION;
    h.header_size = sizeof h;
    snprintf(h.profile, sizeof h.profile, "%s", profile);
    h.layout_hash = seg_hash_bytes(layout_hash(b, &l, extra_hash), &first_quiet, sizeof first_quiet);
    h.n_entries = b->n;
    h.strings_size = l.strs.len;
    h.n_params = b->nparams;

    /* The static file: its header, entries, strings, params (segment.h "Files"). */
    struct seg_static_header sh = {0};
    memcpy(sh.magic, SEG_STATIC_MAGIC, 8);
    sh.version = SEG_VERSION;
    sh.header_size = sizeof sh;
    sh.layout_hash = h.layout_hash;
    snprintf(sh.profile, sizeof sh.profile, "%s", profile);
    uint32_t off = align64(sizeof sh);
    sh.n_entries = b->n;
    sh.entries_off = off;
    off = align64(off + sizeof(struct seg_entry) * b->n);
    sh.strings_off = off;
    sh.strings_size = l.strs.len;
    off = align64(off + l.strs.len);
    sh.n_params = b->nparams;
    sh.params_off = off;
    off = align64(off + sizeof(struct seg_param) * b->nparams);
    sh.n_quiet = b->nvalues - first_quiet;
    sh.quiet_off = off;
    off += sizeof(struct seg_value) * sh.n_quiet;
    sh.file_size = off;
    img->st_size = sh.file_size;
    img->st_bytes = calloc(1, img->st_size);
    if (!img->st_bytes)
        abort();
    memcpy(img->st_bytes, &sh, sizeof sh);
    memcpy(img->st_bytes + sh.entries_off, l.entries, sizeof(struct seg_entry) * b->n);
    memcpy(img->st_bytes + sh.strings_off, l.strs.buf, l.strs.len);
    memcpy(img->st_bytes + sh.params_off, params, sizeof(struct seg_param) * b->nparams);
    if (sh.n_quiet)
        memcpy(img->st_bytes + sh.quiet_off, b->values + first_quiet, sizeof(struct seg_value) * sh.n_quiet);

    /* The node file. */
    off = align64(sizeof h);
    h.journal_off = off;
    off = align64(off + sizeof(struct seg_journal));
    h.first_quiet = first_quiet;
    h.quiet_off = off;
    off = align64(off + sizeof(uint64_t) * SEG_QUIET_WORDS(b->nvalues - first_quiet));
    h.slot_bits_off = off;
    off = align64(off + sizeof(uint64_t) * SEG_QUIET_WORDS(l.nslots));
    h.n_values = b->nvalues;
    h.values_off = off;
    off = align64(off + sizeof(struct seg_value) * b->nvalues);
    h.n_slots = l.nslots;
    h.slots_off = off;
    off = align64(off + sizeof(struct seg_slot) * l.nslots);
    h.hwm_off = off;
    off = align64(off + sizeof(uint64_t) * b->nvalues);
    h.ring_cap = RING_CAP;
    h.ring_off = off;
    off = align64(off + sizeof(struct seg_event) * RING_CAP);
    for (uint32_t v = 0; v < b->nvalues; v++)
        h.n_counters += b->values[v].type == SEG_V_COUNTER;
    h.ledger_size = align64(sizeof(struct seg_ledger) + sizeof(uint64_t) * h.n_counters);
    h.ledger_off = off;
    off += 2 * h.ledger_size;
    h.file_size = off;
    h.substep_ns = SUBSTEP_NS;
    h.tick_ns = tick_ns;

    /* Only the written prefix (up to the quiet values) goes into a new file: the rest is zeros
     * or holes. The image keeps every value (the engine's template values), quiet ones too. */
    img->size = h.file_size;
    img->used = h.values_off + sizeof(struct seg_value) * first_quiet;
    img->bytes = calloc(1, h.slots_off);
    if (!img->bytes)
        abort();
    memcpy(img->bytes, &h, sizeof h);
    if (b->nvalues) /* a node without dynamic files (a VM) has none */
        memcpy(img->bytes + h.values_off, b->values, sizeof(struct seg_value) * b->nvalues);
    img->layout_hash = h.layout_hash;
    free(params);
    layout_free(&l);
    return 0;
}

uint64_t seg_image_resident(const struct seg_image *img, uint64_t ps)
{
    const struct seg_header *h = (const struct seg_header *)img->bytes;
    uint64_t prefix = (img->used + ps - 1) / ps, led_lo = h->ledger_off / ps, led_hi = (img->size + ps - 1) / ps;
    if (led_lo < prefix)
        led_lo = prefix; /* a page both hold counts once */
    return (prefix + (led_hi > led_lo ? led_hi - led_lo : 0)) * ps;
}

void seg_image_free(struct seg_image *img)
{
    free(img->bytes);
    free(img->st_bytes);
    memset(img, 0, sizeof *img);
}

/* A new file at tmp, never an existing one (a symlink or a file planted there is not followed
 * or reused: a leftover of ours is removed once and the create tried again). */
static int create_exclusive(const char *tmp)
{
    for (int tries = 0; tries < 2; tries++) {
        int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST)
            return fd;
        unlink(tmp);
    }
    return -1;
}

/* Writes len bytes at the file's start: 0, or the errno (ENOSPC on a full filesystem). */
static int write_all(int fd, const uint8_t *bytes, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t w = pwrite(fd, bytes + done, len - done, (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : ENOSPC;
        done += (size_t)w;
    }
    return 0;
}

int seg_image_write(const struct seg_image *img, const char *path, const char *node, struct seg *out, char *err,
                    size_t errlen)
{
    char tmp[4096];
    memset(out, 0, sizeof *out);
    out->fd = -1;
    out->guard = -1;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp) {
        snprintf(err, errlen, "%s: the segment path is too long", path);
        return ENAMETOOLONG;
    }
    int fd = create_exclusive(tmp);
    if (fd < 0) {
        int rc = errno;
        snprintf(err, errlen, "%s: cannot create the segment: %s", tmp, strerror(rc));
        return rc;
    }
    /* The image goes in with write(), not through the map: tmpfs fills a page written whole
     * without zeroing it first and without a page fault per page, which is most of a fresh
     * render's time. Then the ledger's space is reserved (the engine writes it every tick: a
     * full filesystem is this error, not a SIGBUS at its first store). The slots, high-water
     * marks and ring between them stay holes, which read as the zeros they hold until an agent
     * writes (segment.h "Files"): a node no agent writes to costs none of their pages. */
    const struct seg_header *ih = (const struct seg_header *)img->bytes;
    int rc = write_all(fd, img->bytes, img->used);
    if (!rc && ih->ledger_off < img->size)
        rc = posix_fallocate(fd, (off_t)ih->ledger_off, (off_t)(img->size - ih->ledger_off));
    if (!rc && ftruncate(fd, (off_t)img->size))
        rc = errno;
    if (rc) {
        snprintf(err, errlen, "%s: cannot reserve %zu bytes for the segment: %s (free space on the root's "
                 "filesystem, or choose another --root)", path, img->size, strerror(rc));
        close(fd);
        unlink(tmp);
        return rc;
    }
    rc = seg_map(out, fd, img->size, true);
    if (rc) {
        snprintf(err, errlen, "%s: cannot map the segment: %s", tmp, strerror(rc));
        close(fd);
        unlink(tmp);
        return rc;
    }
    uint8_t *base = out->base;
    struct seg_header *h = (struct seg_header *)base;
    snprintf(h->node, sizeof h->node, "%s", node);
    h->engine_pid = (uint32_t)getpid();
    if (rename(tmp, path) != 0) {
        rc = errno;
        snprintf(err, errlen, "%s: cannot put the segment in place: %s", path, strerror(rc));
        munmap(base, out->map_size);
        close(fd);
        unlink(tmp);
        memset(out, 0, sizeof *out);
        out->fd = -1;
        out->guard = -1;
        return rc;
    }
    out->h = h;
    out->fd = fd;
    rc = seg_check(out, err, errlen);
    if (!rc) {
        seg_bind(out, h);
        seg_bind_static(out, img->st_bytes);
    }
    return rc;
}

/* An existing static file at path that is the image's, byte for byte: its descriptor (open
 * read-write), else -1. */
static int same_static(const struct seg_image *img, const char *path)
{
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != img->st_size) {
        close(fd);
        return -1;
    }
    uint8_t buf[65536];
    for (size_t at = 0; at < img->st_size;) {
        size_t want = img->st_size - at < sizeof buf ? img->st_size - at : sizeof buf;
        ssize_t r = pread(fd, buf, want, (off_t)at);
        if (r <= 0 || memcmp(buf, img->st_bytes + at, (size_t)r)) {
            close(fd);
            return -1;
        }
        at += (size_t)r;
    }
    return fd;
}

int seg_static_put(const struct seg_image *img, const char *path, struct seg_static_file *out, char *err,
                   size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->fd = -1;
    out->guard = -1;
    int fd = same_static(img, path);
    if (fd < 0) {
        char tmp[4096];
        if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp) {
            snprintf(err, errlen, "%s: the static file's path is too long", path);
            return ENAMETOOLONG;
        }
        fd = create_exclusive(tmp);
        if (fd < 0) {
            int rc = errno;
            snprintf(err, errlen, "%s: cannot create the static file: %s", tmp, strerror(rc));
            return rc;
        }
        /* read-only on disk: nobody but the engine, through the mapping it keeps, writes it */
        int rc = fchmod(fd, 0444) ? errno : write_all(fd, img->st_bytes, img->st_size);
        if (!rc && rename(tmp, path) != 0)
            rc = errno;
        if (rc) {
            snprintf(err, errlen, "%s: cannot write the static file: %s (free space on the root's filesystem, or "
                     "choose another --root)", path, strerror(rc));
            close(fd);
            unlink(tmp);
            return rc;
        }
    }
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), map = (img->st_size + ps - 1) / ps * ps;
    uint8_t *base = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        int rc = errno;
        snprintf(err, errlen, "%s: cannot map the static file: %s", path, strerror(rc));
        close(fd);
        return rc;
    }
    out->base = base;
    out->size = img->st_size;
    out->map_size = map;
    out->fd = fd;
    out->guard = seg_guard_add(base, img->st_size);
    return 0;
}

int seg_static_restore(const struct seg_image *img, struct seg_static_file *f)
{
    int rc = ftruncate(f->fd, (off_t)img->st_size) ? errno : write_all(f->fd, img->st_bytes, img->st_size);
    if (rc)
        return rc;
    if (mmap(f->base, f->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f->fd, 0) == MAP_FAILED)
        return errno;
    seg_guard_clear(f->guard);
    return 0;
}

void seg_static_close(struct seg_static_file *f)
{
    seg_guard_remove(&f->guard);
    if (f->base)
        munmap(f->base, f->map_size);
    if (f->fd >= 0)
        close(f->fd);
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->guard = -1;
}

int segb_write(struct seg_builder *b, const char *path, const char *node, const char *profile, uint64_t extra_hash,
               int64_t tick_ns, struct seg *out, char *err, size_t errlen)
{
    struct seg_image img;
    int rc = segb_image(b, profile, extra_hash, tick_ns, &img, err, errlen);
    if (rc)
        return rc;
    char spath[4096];
    struct seg_static_file f;
    rc = seg_static_path(path, img.layout_hash, spath, sizeof spath);
    if (rc)
        snprintf(err, errlen, "%s: the static file's path is too long", path);
    if (!rc)
        rc = seg_static_put(&img, spath, &f, err, errlen);
    if (!rc) {
        seg_static_close(&f);
        rc = seg_image_write(&img, path, node, out, err, errlen);
    }
    if (!rc) {
        rc = seg_attach_static(out, path, err, errlen); /* the image goes: the file's pages instead */
        if (rc)
            seg_close(out);
    }
    seg_image_free(&img);
    return rc;
}
