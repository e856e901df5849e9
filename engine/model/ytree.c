/* ytree: libyaml document -> located tree; see ytree.h.
 * The conversion is recursive over libyaml's node graph with a depth and size bound, so a
 * recursive alias or a "billion laughs" document is an error rather than a hang. */
#include "ytree.h"

#include "arena.h"
#include "diag.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

enum { YT_MAX_DEPTH = 64, YT_MAX_NODES = 1000000 };

struct conv {
    struct arena *a;
    struct diag *d;
    const char *file;
    yaml_document_t *doc;
    long nodes;
    bool failed;
};

static struct yt_node *new_node(struct conv *c, enum yt_kind kind, const yaml_node_t *yn)
{
    struct yt_node *n = arena_alloc(c->a, sizeof *n);
    n->kind = kind;
    n->file = c->file;
    n->line = (int)yn->start_mark.line + 1;
    n->col = (int)yn->start_mark.column + 1;
    return n;
}

static struct yt_node *convert(struct conv *c, yaml_node_t *yn, int depth)
{
    if (c->failed)
        return NULL;
    if (depth > YT_MAX_DEPTH || ++c->nodes > YT_MAX_NODES) {
        struct yt_node at = {.file = c->file, .line = (int)yn->start_mark.line + 1,
                             .col = (int)yn->start_mark.column + 1};
        diag_at(c->d, &at, "the document nests deeper than %d levels or expands to more than %d "
                "nodes (a recursive alias?); flatten it", YT_MAX_DEPTH, YT_MAX_NODES);
        c->failed = true;
        return NULL;
    }
    switch (yn->type) {
    case YAML_SCALAR_NODE: {
        struct yt_node *n = new_node(c, YT_SCALAR, yn);
        n->text = arena_strndup(c->a, (const char *)yn->data.scalar.value, yn->data.scalar.length);
        n->plain = yn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        return n;
    }
    case YAML_SEQUENCE_NODE: {
        struct yt_node *n = new_node(c, YT_SEQ, yn);
        long count = yn->data.sequence.items.top - yn->data.sequence.items.start;
        n->vals = arena_alloc(c->a, sizeof *n->vals * (size_t)(count ? count : 1));
        for (yaml_node_item_t *it = yn->data.sequence.items.start; it < yn->data.sequence.items.top; it++) {
            struct yt_node *v = convert(c, yaml_document_get_node(c->doc, *it), depth + 1);
            if (!v)
                return NULL;
            n->vals[n->n++] = v;
        }
        return n;
    }
    case YAML_MAPPING_NODE: {
        struct yt_node *n = new_node(c, YT_MAP, yn);
        long count = yn->data.mapping.pairs.top - yn->data.mapping.pairs.start;
        size_t cap = (size_t)(count ? count : 1);
        n->keys = arena_alloc(c->a, sizeof *n->keys * cap);
        n->vals = arena_alloc(c->a, sizeof *n->vals * cap);
        for (yaml_node_pair_t *p = yn->data.mapping.pairs.start; p < yn->data.mapping.pairs.top; p++) {
            yaml_node_t *kn = yaml_document_get_node(c->doc, p->key);
            struct yt_node *k = convert(c, kn, depth + 1);
            if (!k)
                return NULL;
            if (k->kind != YT_SCALAR) {
                diag_at(c->d, k, "a mapping key must be a plain value, not a %s", yt_kind_name(k->kind));
                c->failed = true;
                return NULL;
            }
            for (int i = 0; i < n->n; i++) {
                if (strcmp(n->keys[i]->text, k->text) == 0) {
                    diag_at(c->d, k, "duplicate key \"%s\" (first at line %d); remove one of them",
                            k->text, n->keys[i]->line);
                    c->failed = true;
                    return NULL;
                }
            }
            struct yt_node *v = convert(c, yaml_document_get_node(c->doc, p->value), depth + 1);
            if (!v)
                return NULL;
            n->keys[n->n] = k;
            n->vals[n->n] = v;
            n->n++;
        }
        return n;
    }
    default:
        return NULL;
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

struct yt_node *yt_parse(struct arena *a, const char *file, const char *buf, size_t len,
                         struct diag *d, bool *empty)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    struct yt_node *root = NULL;
    if (empty)
        *empty = false;
    if (!yaml_parser_initialize(&parser)) {
        diag_add(d, file, "cannot initialise the YAML parser (out of memory)");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    if (!yaml_parser_load(&parser, &doc)) {
        syntax_error(d, file, &parser);
        yaml_parser_delete(&parser);
        return NULL;
    }
    yaml_node_t *top = yaml_document_get_root_node(&doc);
    if (!top) {
        if (empty)
            *empty = true;
    } else {
        struct conv c = {.a = a, .d = d, .file = arena_strdup(a, file), .doc = &doc};
        root = convert(&c, top, 0);
        if (c.failed)
            root = NULL;
    }
    yaml_document_delete(&doc);
    if (root) {
        /* A second document is almost always a mistake (two specs pasted into one file). */
        yaml_document_t extra;
        if (!yaml_parser_load(&parser, &extra)) {
            syntax_error(d, file, &parser);
            root = NULL;
        } else {
            yaml_node_t *x = yaml_document_get_root_node(&extra);
            if (x) {
                struct yt_node at = {.file = file, .line = (int)x->start_mark.line + 1,
                                     .col = (int)x->start_mark.column + 1};
                diag_at(d, &at, "a second YAML document starts here; this file must hold exactly one");
                root = NULL;
            }
            yaml_document_delete(&extra);
        }
    }
    yaml_parser_delete(&parser);
    return root;
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
