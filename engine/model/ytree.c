/* ytree: libyaml document -> located tree; see ytree.h.
 * Built from libyaml's events with an explicit stack, checking the depth and size bounds and
 * duplicate keys (a hash table) event by event, so a deeply nested, recursive-alias or
 * "billion laughs" document is an error found in linear time rather than a hang. */
#include "ytree.h"

#include "arena.h"
#include "diag.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

enum { YT_MAX_DEPTH = 64, YT_MAX_NODES = 1000000 };

/* An open-addressing hash table from (owner, text) to a node: the keys seen in each open
 * mapping (owner: the mapping) and the anchors (owner: NULL). Linear in the document. */
struct slot {
    const void *owner;
    const char *text;
    struct yt_node *node;
    long size;  /* anchors: nodes in the anchored subtree (-1 while it is still open) */
    int depth;  /* anchors: its nesting depth below the anchored node */
};
struct table {
    struct slot *s;
    size_t cap, used;
};

static uint64_t hash_of(const void *owner, const char *text)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)owner;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h ^ (h >> 29);
}

/* The slot for (owner, text): the existing one, or a new one with node NULL. NULL: no memory. */
static struct slot *table_slot(struct table *t, const void *owner, const char *text)
{
    if (t->used * 2 >= t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 64;
        struct slot *ns = calloc(ncap, sizeof *ns);
        if (!ns)
            return NULL;
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->s[i].text)
                continue;
            size_t j = hash_of(t->s[i].owner, t->s[i].text) & (ncap - 1);
            while (ns[j].text)
                j = (j + 1) & (ncap - 1);
            ns[j] = t->s[i];
        }
        free(t->s);
        t->s = ns;
        t->cap = ncap;
    }
    size_t j = hash_of(owner, text) & (t->cap - 1);
    while (t->s[j].text && (t->s[j].owner != owner || strcmp(t->s[j].text, text)))
        j = (j + 1) & (t->cap - 1);
    if (!t->s[j].text) {
        t->s[j].owner = owner;
        t->s[j].text = text;
        t->used++;
    }
    return &t->s[j];
}

/* An open collection: its node, where its children start on the child stack, its anchor. */
struct frame {
    struct yt_node *n;
    size_t first;
    struct slot *anchor;
    long nodes_at_start;
    int depth_below; /* the deepest child's depth below this node */
};

struct builder {
    struct arena *a;
    struct diag *d;
    const char *file;
    struct frame *stack;
    int depth, stack_cap;
    struct yt_node **kids;
    size_t nkids, kids_cap;
    struct table keys, anchors;
    long nodes;
    struct yt_node *root;
    bool failed;
};

static void fail_at(struct builder *b, const yaml_mark_t *m, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail_at(struct builder *b, const yaml_mark_t *m, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct yt_node at = {.file = b->file, .line = (int)m->line + 1, .col = (int)m->column + 1};
    diag_at(b->d, &at, "%s", msg);
    b->failed = true;
}

static void too_big(struct builder *b, const yaml_mark_t *m)
{
    fail_at(b, m, "the document nests deeper than %d levels or expands to more than %d nodes (a recursive "
            "alias?); flatten it", YT_MAX_DEPTH, YT_MAX_NODES);
}

static bool push_kid(struct builder *b, struct yt_node *n)
{
    if (b->nkids == b->kids_cap) {
        size_t ncap = b->kids_cap ? b->kids_cap * 2 : 256;
        struct yt_node **nk = realloc(b->kids, ncap * sizeof *nk);
        if (!nk)
            return false;
        b->kids = nk;
        b->kids_cap = ncap;
    }
    b->kids[b->nkids++] = n;
    return true;
}

/* A finished node (scalar, alias copy or closed collection) of `size` nodes, `below` levels
 * deep: becomes the root, or the next item, key or value of the open collection. */
static void add_node(struct builder *b, struct yt_node *n, const yaml_mark_t *m, int below)
{
    if (!b->depth) {
        b->root = n;
        return;
    }
    struct frame *f = &b->stack[b->depth - 1];
    if (f->depth_below < below + 1)
        f->depth_below = below + 1;
    if (f->n->kind == YT_MAP && (b->nkids - f->first) % 2 == 0) { /* a key */
        if (n->kind != YT_SCALAR) {
            fail_at(b, m, "a mapping key must be a plain value, not a %s", yt_kind_name(n->kind));
            return;
        }
        struct slot *s = table_slot(&b->keys, f->n, n->text);
        if (!s) {
            fail_at(b, m, "out of memory");
            return;
        }
        if (s->node) {
            fail_at(b, m, "duplicate key \"%.80s%s\" (first at line %d); remove one of them", n->text,
                    strlen(n->text) > 80 ? "..." : "", s->node->line);
            return;
        }
        s->node = n;
    }
    if (!push_kid(b, n))
        fail_at(b, m, "out of memory");
}

static struct yt_node *new_node(struct builder *b, enum yt_kind kind, const yaml_mark_t *m)
{
    struct yt_node *n = arena_alloc(b->a, sizeof *n);
    n->kind = kind;
    n->file = b->file;
    n->line = (int)m->line + 1;
    n->col = (int)m->column + 1;
    return n;
}

/* Registers an anchor on a node that starts now (size -1: still open). */
static struct slot *anchor(struct builder *b, const yaml_char_t *name, const yaml_mark_t *m)
{
    if (!name)
        return NULL;
    struct slot *s = table_slot(&b->anchors, NULL, arena_strdup(b->a, (const char *)name));
    if (!s)
        fail_at(b, m, "out of memory");
    else
        s->size = -1;
    return s;
}

static void on_event(struct builder *b, const yaml_event_t *ev)
{
    const yaml_mark_t *m = &ev->start_mark;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        if (++b->nodes > YT_MAX_NODES || b->depth > YT_MAX_DEPTH) {
            too_big(b, m);
            return;
        }
        if (memchr(ev->data.scalar.value, 0, ev->data.scalar.length)) {
            fail_at(b, m, "a value holds a NUL character (a \\0 or \\x00 escape): no name, path or number can "
                    "contain one; remove it");
            return;
        }
        struct yt_node *n = new_node(b, YT_SCALAR, m);
        n->text = arena_strndup(b->a, (const char *)ev->data.scalar.value, ev->data.scalar.length);
        n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        struct slot *s = anchor(b, ev->data.scalar.anchor, m);
        if (s) {
            s->node = n;
            s->size = 1;
            s->depth = 0;
        }
        add_node(b, n, m, 0);
        return;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        bool map = ev->type == YAML_MAPPING_START_EVENT;
        if (++b->nodes > YT_MAX_NODES || b->depth > YT_MAX_DEPTH) {
            too_big(b, m);
            return;
        }
        if (b->depth) { /* a collection as a key: refused when it starts, not when it ends */
            struct frame *f = &b->stack[b->depth - 1];
            if (f->n->kind == YT_MAP && (b->nkids - f->first) % 2 == 0) {
                fail_at(b, m, "a mapping key must be a plain value, not a %s", map ? "mapping" : "sequence");
                return;
            }
        }
        if (b->depth == b->stack_cap) {
            int ncap = b->stack_cap ? b->stack_cap * 2 : 16;
            struct frame *ns = realloc(b->stack, (size_t)ncap * sizeof *ns);
            if (!ns) {
                fail_at(b, m, "out of memory");
                return;
            }
            b->stack = ns;
            b->stack_cap = ncap;
        }
        struct frame *f = &b->stack[b->depth++];
        *f = (struct frame){.n = new_node(b, map ? YT_MAP : YT_SEQ, m), .first = b->nkids,
                            .nodes_at_start = b->nodes - 1};
        f->anchor = anchor(b, map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor, m);
        if (f->anchor)
            f->anchor->node = f->n;
        return;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
        struct frame f = b->stack[--b->depth];
        size_t count = b->nkids - f.first;
        struct yt_node *n = f.n;
        if (n->kind == YT_MAP) {
            n->n = (int)(count / 2);
            n->keys = arena_alloc(b->a, sizeof *n->keys * (count / 2 ? count / 2 : 1));
            n->vals = arena_alloc(b->a, sizeof *n->vals * (count / 2 ? count / 2 : 1));
            for (size_t i = 0; i + 1 < count; i += 2) {
                n->keys[i / 2] = b->kids[f.first + i];
                n->vals[i / 2] = b->kids[f.first + i + 1];
            }
        } else {
            n->n = (int)count;
            n->vals = arena_alloc(b->a, sizeof *n->vals * (count ? count : 1));
            if (count) /* kids is NULL until the first child */
                memcpy(n->vals, b->kids + f.first, sizeof *n->vals * count);
        }
        b->nkids = f.first;
        if (f.anchor) {
            f.anchor->size = b->nodes - f.nodes_at_start;
            f.anchor->depth = f.depth_below;
        }
        add_node(b, n, m, f.depth_below);
        return;
    }
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)ev->data.alias.anchor;
        struct slot *s = table_slot(&b->anchors, NULL, name);
        if (!s) {
            fail_at(b, m, "out of memory");
            return;
        }
        if (!s->node) {
            s->text = arena_strdup(b->a, name); /* the slot keeps the name past the event */
            fail_at(b, m, "alias *%.80s names no anchor before it; define &%.80s first", name, name);
            return;
        }
        if (s->size < 0) {
            fail_at(b, m, "alias *%.80s is inside the node it names (a recursive alias); YAML trees cannot "
                    "contain themselves", name);
            return;
        }
        /* an alias is a copy (later edits of one place must not change the other), counted
         * whole against the limits before it is made */
        if (s->size > YT_MAX_NODES - b->nodes || b->depth + s->depth > YT_MAX_DEPTH) {
            too_big(b, m);
            return;
        }
        b->nodes += s->size;
        add_node(b, yt_clone(b->a, s->node), m, s->depth);
        return;
    }
    default:
        return;
    }
}

static void syntax_error(struct diag *d, const char *file, const yaml_parser_t *p)
{
    const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->context_mark;
    struct yt_node at = {.file = file, .line = (int)m->line + 1, .col = (int)m->column + 1};
    if (p->context)
        diag_at(d, &at, "YAML syntax error: %s %s", p->problem ? p->problem : "invalid document", p->context);
    else
        diag_at(d, &at, "YAML syntax error: %s", p->problem ? p->problem : "invalid document");
}

/* The tree is built from libyaml's event stream (never from its composed document), so the
 * depth, size and duplicate-key checks run as the text is read: a hostile document fails at
 * the first event past a limit, in time linear in what was read. */
struct yt_node *yt_parse(struct arena *a, const char *file, const char *buf, size_t len,
                         struct diag *d, bool *empty)
{
    yaml_parser_t parser;
    if (empty)
        *empty = false;
    if (!yaml_parser_initialize(&parser)) {
        diag_add(d, file, "cannot initialise the YAML parser (out of memory)");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    struct builder b = {.a = a, .d = d, .file = arena_strdup(a, file)};
    int docs = 0;
    bool done = false;
    while (!done && !b.failed) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            syntax_error(d, file, &parser);
            b.failed = true;
            break;
        }
        if (ev.type == YAML_STREAM_END_EVENT) {
            done = true;
        } else if (ev.type == YAML_DOCUMENT_START_EVENT) {
            docs++;
        } else if (ev.type == YAML_DOCUMENT_END_EVENT) {
            /* a second document is almost always a mistake (two specs pasted into one file) */
        } else if (docs > 1) {
            /* the first node of a second document */
            fail_at(&b, &ev.start_mark, "a second YAML document starts here; this file must hold exactly one");
        } else {
            on_event(&b, &ev);
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    free(b.stack);
    free(b.kids);
    free(b.keys.s);
    free(b.anchors.s);
    if (b.failed)
        return NULL;
    if (!b.root && empty)
        *empty = true;
    return b.root;
}

struct yt_node *yt_get(const struct yt_node *map, const char *key)
{
    if (!map || map->kind != YT_MAP)
        return NULL;
    for (int i = 0; i < map->n; i++)
        if (strcmp(map->keys[i]->text, key) == 0)
            return map->vals[i];
    return NULL;
}

struct yt_node *yt_path(const struct yt_node *root, const char *dotted)
{
    char seg[128];
    const struct yt_node *n = root;
    while (n && *dotted) {
        size_t len = strcspn(dotted, ".");
        if (len >= sizeof seg)
            return NULL;
        memcpy(seg, dotted, len);
        seg[len] = 0;
        n = yt_get(n, seg);
        dotted += len;
        if (*dotted == '.')
            dotted++;
    }
    return (struct yt_node *)n;
}

struct yt_node *yt_clone(struct arena *a, const struct yt_node *n)
{
    if (!n)
        return NULL;
    struct yt_node *c = arena_alloc(a, sizeof *c);
    *c = *n;
    if (n->kind != YT_SCALAR) {
        size_t cap = (size_t)(n->n ? n->n : 1);
        c->vals = arena_alloc(a, sizeof *c->vals * cap);
        if (n->kind == YT_MAP)
            c->keys = arena_alloc(a, sizeof *c->keys * cap);
        for (int i = 0; i < n->n; i++) {
            c->vals[i] = yt_clone(a, n->vals[i]);
            if (n->kind == YT_MAP)
                c->keys[i] = n->keys[i];
        }
    }
    return c;
}

struct yt_node *yt_new_map(struct arena *a, const struct yt_node *where)
{
    struct yt_node *m = arena_alloc(a, sizeof *m);
    m->kind = YT_MAP;
    if (where) {
        m->file = where->file;
        m->line = where->line;
        m->col = where->col;
    }
    return m;
}

void yt_map_put(struct arena *a, struct yt_node *map, struct yt_node *key, struct yt_node *val)
{
    for (int i = 0; i < map->n; i++) {
        if (strcmp(map->keys[i]->text, key->text) == 0) {
            map->vals[i] = val;
            return;
        }
    }
    /* Maps are exactly full; grow by copying (these trees are small and arena-owned). */
    struct yt_node **keys = arena_alloc(a, sizeof *keys * (size_t)(map->n + 1));
    struct yt_node **vals = arena_alloc(a, sizeof *vals * (size_t)(map->n + 1));
    if (map->n) {
        memcpy(keys, map->keys, sizeof *keys * (size_t)map->n);
        memcpy(vals, map->vals, sizeof *vals * (size_t)map->n);
    }
    keys[map->n] = key;
    vals[map->n] = val;
    map->keys = keys;
    map->vals = vals;
    map->n++;
}

void yt_map_set(struct arena *a, struct yt_node *map, const char *key, struct yt_node *val)
{
    for (int i = 0; i < map->n; i++) {
        if (strcmp(map->keys[i]->text, key) == 0) {
            map->vals[i] = val;
            return;
        }
    }
    struct yt_node *k = arena_alloc(a, sizeof *k);
    const struct yt_node *at = val ? val : map;
    *k = (struct yt_node){.kind = YT_SCALAR, .text = arena_strdup(a, key), .plain = true,
                          .file = at->file, .line = at->line, .col = at->col};
    yt_map_put(a, map, k, val);
}

void yt_map_remove(struct yt_node *map, const char *key)
{
    for (int i = 0; i < map->n; i++) {
        if (strcmp(map->keys[i]->text, key) == 0) {
            memmove(&map->keys[i], &map->keys[i + 1], sizeof *map->keys * (size_t)(map->n - i - 1));
            memmove(&map->vals[i], &map->vals[i + 1], sizeof *map->vals * (size_t)(map->n - i - 1));
            map->n--;
            return;
        }
    }
}

const char *yt_kind_name(enum yt_kind k)
{
    switch (k) {
    case YT_SCALAR: return "value";
    case YT_MAP: return "mapping";
    case YT_SEQ: return "list";
    }
    return "?";
}

bool yt_is_null(const struct yt_node *n)
{
    if (!n)
        return true;
    if (n->kind != YT_SCALAR || !n->plain)
        return false;
    return n->text[0] == 0 || strcmp(n->text, "~") == 0 || strcasecmp(n->text, "null") == 0;
}

const char *yt_str(const struct yt_node *n)
{
    return n && n->kind == YT_SCALAR ? n->text : NULL;
}

bool yt_int(const struct yt_node *n, long long *out)
{
    if (!n || n->kind != YT_SCALAR || !n->plain || !n->text[0])
        return false;
    const char *s = n->text;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10);
    if (errno || *end || end == s)
        return false;
    *out = v;
    return true;
}

bool yt_double(const struct yt_node *n, double *out)
{
    if (!n || n->kind != YT_SCALAR || !n->plain || !n->text[0])
        return false;
    char *end;
    errno = 0;
    double v = strtod(n->text, &end);
    if (errno || *end || !isfinite(v) || strpbrk(n->text, "xXnN"))
        return false;
    *out = v;
    return true;
}

bool yt_bool(const struct yt_node *n, bool *out)
{
    if (!n || n->kind != YT_SCALAR || !n->plain)
        return false;
    if (!strcmp(n->text, "true") || !strcmp(n->text, "True") || !strcmp(n->text, "TRUE")) {
        *out = true;
        return true;
    }
    if (!strcmp(n->text, "false") || !strcmp(n->text, "False") || !strcmp(n->text, "FALSE")) {
        *out = false;
        return true;
    }
    return false;
}
