/* profile: loading, provenance resolution and `extends` merging; see profile.h.
 * Validation of a merged tree lives in profile_validate.c. */
#include "profile.h"

#include "diag.h"
#include "embedded.h"
#include "profile_validate.h"
#include "provenance.h"
#include "textfile.h"
#include "ytree.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

enum { P_NEW, P_MERGING, P_DONE, P_FAILED };

static const char *const header_keys[] = {"schemaVersion", "name", "description", "extends", "sources", NULL};

static bool is_header(const char *k)
{
    for (int i = 0; header_keys[i]; i++)
        if (!strcmp(k, header_keys[i]))
            return true;
    return false;
}

static bool valid_name(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '-'))
            return false;
    return true;
}

static bool blank(const char *s)
{
    for (; s && *s; s++)
        if (!isspace((unsigned char)*s))
            return false;
    return true;
}

/* --- provenance (step 2) ------------------------------------------------------------------ */

static bool is_fact_wrapper(const struct yt_node *n)
{
    if (n->kind != YT_MAP || n->n != 2)
        return false;
    return yt_get(n, "v") && yt_get(n, "src");
}

static void set_src_deep(struct yt_node *n, const char *src)
{
    n->src = src;
    if (n->kind != YT_SCALAR)
        for (int i = 0; i < n->n; i++)
            if (!n->vals[i]->src)
                set_src_deep(n->vals[i], src);
}

/* Returns the resolved node (a wrapper is replaced by its value). */
static struct yt_node *resolve(struct arena *a, struct yt_node *n, const char *src, const char *who,
                               struct diag *d)
{
    if (is_fact_wrapper(n)) {
        struct yt_node *s = yt_get(n, "src");
        struct yt_node *v = yt_get(n, "v");
        if (s->kind != YT_SCALAR) {
            diag_at(d, s, "profile %s: src must be a text value \"kind:ref\", not a %s", who,
                    yt_kind_name(s->kind));
            return v;
        }
        return resolve(a, v, s->text, who, d);
    }
    if (n->kind == YT_MAP) {
        struct yt_node *s = yt_get(n, "src");
        if (s) {
            if (s->kind != YT_SCALAR)
                diag_at(d, s, "profile %s: src must be a text value \"kind:ref\", not a %s", who,
                        yt_kind_name(s->kind));
            else
                src = s->text;
            yt_map_remove(n, "src");
        }
        n->src = src;
        for (int i = 0; i < n->n; i++)
            n->vals[i] = resolve(a, n->vals[i], src, who, d);
        return n;
    }
    if (n->kind == YT_SEQ) {
        bool scalars = true;
        for (int i = 0; i < n->n; i++)
            if (n->vals[i]->kind != YT_SCALAR)
                scalars = false;
        n->src = src;
        if (scalars) {
            set_src_deep(n, src); /* a list of values is one fact */
            return n;
        }
        for (int i = 0; i < n->n; i++)
            n->vals[i] = resolve(a, n->vals[i], src, who, d);
        return n;
    }
    n->src = src;
    return n;
}

static struct yt_node *resolve_file(struct arena *a, const struct yt_node *raw, const char *who,
                                    struct diag *d)
{
    struct yt_node *own = yt_clone(a, raw);
    for (int i = 0; i < own->n; i++) {
        const char *k = own->keys[i]->text;
        if (is_header(k))
            continue;
        if (!strcmp(k, "node") && own->vals[i]->kind == YT_MAP) {
            struct yt_node *node = own->vals[i];
            for (int j = 0; j < node->n; j++)
                if (strcmp(node->keys[j]->text, "labels") != 0)
                    node->vals[j] = resolve(a, node->vals[j], NULL, who, d);
            continue;
        }
        own->vals[i] = resolve(a, own->vals[i], NULL, who, d);
    }
    return own;
}

/* --- merge (step 3) ------------------------------------------------------------------------ */

/* Child over parent. `whole_below` marks maps whose entries are replaced whole. */
static struct yt_node *merge(struct arena *a, const struct yt_node *parent, const struct yt_node *child,
                             bool entries_whole)
{
    if (!parent)
        return yt_clone(a, child);
    if (!child)
        return yt_clone(a, parent);
    if (parent->kind != YT_MAP || child->kind != YT_MAP)
        return yt_clone(a, child);
    struct yt_node *m = yt_clone(a, parent);
    for (int i = 0; i < child->n; i++) {
        const char *k = child->keys[i]->text;
        struct yt_node *pv = yt_get(m, k);
        struct yt_node *v = entries_whole ? yt_clone(a, child->vals[i]) : merge(a, pv, child->vals[i], false);
        yt_map_put(a, m, child->keys[i], v);
    }
    /* Mappings keep the child's location so errors point where the child wrote them. */
    m->file = child->file;
    m->line = child->line;
    m->col = child->col;
    return m;
}

static struct yt_node *merge_profiles(struct arena *a, const struct yt_node *parent, const struct yt_node *own)
{
    struct yt_node *m = yt_new_map(a, own);
    for (int i = 0; parent && i < parent->n; i++)
        if (!is_header(parent->keys[i]->text))
            yt_map_set(a, m, parent->keys[i]->text, yt_clone(a, parent->vals[i]));
    for (int i = 0; i < own->n; i++) {
        const char *k = own->keys[i]->text;
        if (is_header(k) && strcmp(k, "sources"))
            continue; /* the header lives in struct profile, never in the tree */
        struct yt_node *pv = parent ? yt_get(m, k) : NULL;
        if (!strcmp(k, "sources")) {
            pv = parent ? yt_get(parent, "sources") : NULL;
            yt_map_set(a, m, k, merge(a, pv, own->vals[i], true));
        } else if (!strcmp(k, "node") && pv) {
            struct yt_node *node = merge(a, pv, own->vals[i], false);
            struct yt_node *pl = yt_get(pv, "labels"), *cl = yt_get(own->vals[i], "labels");
            if (pl && cl)
                yt_map_set(a, node, "labels", merge(a, pl, cl, true));
            yt_map_set(a, m, k, node);
        } else {
            yt_map_put(a, m, own->keys[i], merge(a, pv, own->vals[i], false));
        }
    }
    if (parent && !yt_get(own, "sources") && yt_get(parent, "sources"))
        yt_map_set(a, m, "sources", yt_clone(a, yt_get(parent, "sources")));
    return m;
}

/* --- loading (step 1) ---------------------------------------------------------------------- */

static int add_file(struct profile_set *ps, const char *file, const char *text, size_t len, bool builtin,
                    struct diag *d)
{
    struct arena *a = &ps->arena;
    int before = d->count;
    bool empty = false;
    struct yt_node *raw = yt_parse(a, file, text, len, d, &empty);
    if (!raw) {
        if (empty)
            diag_add(d, file, "the file is empty; a profile needs schemaVersion, name and description");
        return -1;
    }
    if (raw->kind != YT_MAP) {
        diag_at(d, raw, "a profile must be a mapping of keys, not a %s", yt_kind_name(raw->kind));
        return -1;
    }
    /* Expected name from the file name. */
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    size_t blen = strlen(base);
    const char *stem = arena_strndup(a, base, blen > 5 ? blen - 5 : blen);

    struct yt_node *sv = yt_get(raw, "schemaVersion"), *nm = yt_get(raw, "name");
    struct yt_node *desc = yt_get(raw, "description"), *ext = yt_get(raw, "extends");
    long long ver = 0;
    const char *who = nm && yt_str(nm) ? yt_str(nm) : stem;
    if (!sv)
        diag_at(d, raw, "profile %s: schemaVersion is missing; add `schemaVersion: 1`", who);
    else if (!yt_int(sv, &ver) || ver != 1)
        diag_at(d, sv, "profile %s: schemaVersion must be 1 (this hwemu reads version 1), got \"%s\"", who,
                yt_str(sv) ? yt_str(sv) : yt_kind_name(sv->kind));
    if (!nm || !yt_str(nm))
        diag_at(d, nm ? nm : raw, "profile %s: name is missing; add `name: %s`", who, stem);
    else if (!valid_name(nm->text))
        diag_at(d, nm, "profile %s: name may hold only a-z, 0-9 and '-'", who);
    else if (strcmp(nm->text, stem) != 0)
        diag_at(d, nm, "profile %s: the name must equal the file name without .yaml (\"%s\"); rename one of them",
                who, stem);
    if (!desc || !yt_str(desc) || blank(desc->text))
        diag_at(d, desc ? desc : raw, "profile %s: description is missing or blank; say what machine this is",
                who);
    if (ext && (!yt_str(ext) || !valid_name(ext->text)))
        diag_at(d, ext, "profile %s: extends must name another profile", who);
    struct yt_node *srcs = yt_get(raw, "sources");
    if (srcs && srcs->kind != YT_MAP) {
        diag_at(d, srcs, "profile %s: sources must be a mapping of id -> {kind, ref, note}", who);
    } else if (srcs) {
        for (int i = 0; i < srcs->n; i++) {
            const char *id = srcs->keys[i]->text;
            struct yt_node *e = srcs->vals[i];
            bool idok = *id != 0;
            for (const char *c = id; *c; c++)
                if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
                    idok = false;
            if (!idok)
                diag_at(d, srcs->keys[i], "profile %s: source id \"%s\" may hold only letters, digits, '_' and '-'",
                        who, id);
            if (e->kind != YT_MAP) {
                diag_at(d, e, "profile %s: sources.%s must be a mapping {kind, ref, note}", who, id);
                continue;
            }
            for (int j = 0; j < e->n; j++) {
                const char *k = e->keys[j]->text;
                if (strcmp(k, "kind") && strcmp(k, "ref") && strcmp(k, "note"))
                    diag_at(d, e->keys[j], "profile %s: sources.%s: unknown key \"%s\" (expected kind, ref, note)",
                            who, id, k);
            }
            const char *kind = yt_str(yt_get(e, "kind"));
            if (!prov_source_kind_ok(kind))
                diag_at(d, yt_get(e, "kind") ? yt_get(e, "kind") : e,
                        "profile %s: sources.%s.kind must be published, corpus or measured", who, id);
            const char *ref = yt_str(yt_get(e, "ref"));
            if (!ref || blank(ref))
                diag_at(d, e, "profile %s: sources.%s.ref is missing or blank; say where the fact comes from", who,
                        id);
        }
    }
    if (d->count > before)
        return -1;

    for (int i = 0; i < ps->n; i++) {
        if (!strcmp(ps->items[i].name, nm->text)) {
            diag_at(d, nm, "profile %s is defined twice: here and in %s%s; rename the local one", nm->text,
                    ps->items[i].file, ps->items[i].builtin ? " (builtin)" : "");
            return -1;
        }
    }
    if (ps->n == ps->cap) {
        int cap = ps->cap ? ps->cap * 2 : 16;
        struct profile *it = realloc(ps->items, sizeof *it * (size_t)cap);
        if (!it) {
            diag_add(d, file, "out of memory");
            return -1;
        }
        ps->items = it;
        ps->cap = cap;
    }
    struct profile *p = &ps->items[ps->n++];
    memset(p, 0, sizeof *p);
    p->name = nm->text;
    p->description = desc->text;
    p->extends = ext ? ext->text : NULL;
    p->file = arena_strdup(a, file);
    p->builtin = builtin;
    p->raw = raw;
    p->own = resolve_file(a, raw, p->name, d);
    return d->count > before ? -1 : 0;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static int load_dir(struct profile_set *ps, const char *dir, struct diag *d)
{
    DIR *dh = opendir(dir);
    if (!dh) {
        diag_add(d, dir, "cannot read the profiles directory: %m (check --profiles-dir / SIM_PROFILES_DIR)");
        return -1;
    }
    char **names = NULL;
    int n = 0, cap = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(dh))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".yaml") != 0 || e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(names, sizeof *nn * (size_t)cap);
            if (!nn)
                break;
            names = nn;
        }
        names[n++] = arena_printf(&ps->arena, "%s/%s", dir, e->d_name);
    }
    closedir(dh);
    if (n)
        qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++) {
        size_t len;
        char *text = textfile_read(names[i], &len, d);
        if (!text) {
            rc = -1;
            continue;
        }
        if (add_file(ps, names[i], text, len, false, d))
            rc = -1;
        free(text); /* the tree copied every string into the arena */
    }
    free(names);
    return rc;
}

/* The longest extends chain taken: a profile and at most this many ancestors. */
enum { MAX_EXTENDS = 32 };

/* True when p's extends chain has more than MAX_EXTENDS ancestors (a cycle or an unknown
 * parent stops the walk: finish reports those). Walks names only, so the answer is the same
 * whichever profile is finished first. */
static bool chain_too_long(const struct profile_set *ps, const struct profile *p)
{
    const struct profile *seen[MAX_EXTENDS + 2];
    int n = 0;
    seen[n++] = p;
    while (p->extends) {
        p = profiles_find(ps, p->extends);
        if (!p)
            return false;
        for (int i = 0; i < n; i++)
            if (seen[i] == p)
                return false;
        if (n > MAX_EXTENDS)
            return true;
        seen[n++] = p;
    }
    return false;
}

static int finish(struct profile_set *ps, struct profile *p, struct diag *d)
{
    if (p->state == P_DONE)
        return 0;
    if (p->state == P_FAILED)
        return -1;
    if (p->state == P_NEW && chain_too_long(ps, p)) {
        diag_at(d, yt_get(p->raw, "extends"), "profile %s: its extends chain has more than %d profiles above it; "
                "shorten the chain (copy facts into a nearer parent)", p->name, MAX_EXTENDS);
        p->state = P_FAILED;
        return -1;
    }
    if (p->state == P_MERGING) {
        diag_at(d, yt_get(p->raw, "extends"), "profile %s: extends cycle through %s; break the chain", p->name,
                p->extends);
        p->state = P_FAILED;
        return -1;
    }
    p->state = P_MERGING;
    const struct yt_node *parent_tree = NULL;
    if (p->extends) {
        struct profile *parent = (struct profile *)profiles_find(ps, p->extends);
        if (!parent) {
            diag_at(d, yt_get(p->raw, "extends"), "profile %s: extends \"%s\", which is not a known profile "
                    "(see `hwemu profiles list`)", p->name, p->extends);
            p->state = P_FAILED;
            return -1;
        }
        if (finish(ps, parent, d)) {
            if (parent->state == P_FAILED && p->state == P_MERGING)
                diag_at(d, yt_get(p->raw, "extends"), "profile %s: extends %s, which has errors (above)",
                        p->name, p->extends);
            p->state = P_FAILED;
            return -1;
        }
        parent_tree = parent->tree;
    }
    p->tree = merge_profiles(&ps->arena, parent_tree, p->own);
    char subject[160];
    snprintf(subject, sizeof subject, "profile %s", p->name);
    if (profile_validate(p->tree, subject, d)) {
        p->state = P_FAILED;
        return -1;
    }
    p->state = P_DONE;
    return 0;
}

int profiles_load(struct profile_set *ps, const char *dir, struct diag *d)
{
    int rc = 0;
    for (const struct embedded_file *f = embedded_files; f->path; f++)
        if (!strncmp(f->path, "profiles/", 9) && add_file(ps, f->path, f->data, f->len, true, d))
            rc = -1;
    if (dir && load_dir(ps, dir, d))
        rc = -1;
    for (int i = 0; i < ps->n; i++)
        if (finish(ps, &ps->items[i], d))
            rc = -1;
    /* Keep only the profiles that loaded cleanly. */
    int kept = 0;
    for (int i = 0; i < ps->n; i++)
        if (ps->items[i].state == P_DONE)
            ps->items[kept++] = ps->items[i];
    ps->n = kept;
    return rc;
}

void profiles_free(struct profile_set *ps)
{
    free(ps->items);
    arena_free(&ps->arena);
    ps->items = NULL;
    ps->n = ps->cap = 0;
}

const struct profile *profiles_find(const struct profile_set *ps, const char *name)
{
    for (int i = 0; i < ps->n; i++)
        if (!strcmp(ps->items[i].name, name))
            return &ps->items[i];
    return NULL;
}

struct yt_node *profile_with_overrides(struct profile_set *ps, const struct profile *p,
                                       const struct yt_node *overrides, const char *subject,
                                       struct diag *d)
{
    struct arena *a = &ps->arena;
    if (!overrides)
        return p->tree;
    if (overrides->kind != YT_MAP) {
        diag_at(d, overrides, "%s: overrides must be a mapping of profile keys (e.g. {gpus: {persistenceMode: "
                "disabled}}), not a %s", subject, yt_kind_name(overrides->kind));
        return NULL;
    }
    struct yt_node *ov = yt_clone(a, overrides);
    int before = d->count;
    for (int i = 0; i < ov->n; i++) {
        const char *k = ov->keys[i]->text;
        if (is_header(k)) {
            diag_at(d, ov->keys[i], "%s: overrides may not change \"%s\"; only hardware keys can be overridden",
                    subject, k);
            continue;
        }
        struct yt_node *v = ov->vals[i];
        ov->vals[i] = resolve(a, v, arena_printf(a, "assumed:cluster spec override at %s:%d", v->file, v->line),
                              subject, d);
    }
    if (d->count > before)
        return NULL;
    struct yt_node *tree = yt_new_map(a, p->tree);
    for (int i = 0; i < p->tree->n; i++)
        yt_map_set(a, tree, p->tree->keys[i]->text, p->tree->vals[i]);
    for (int i = 0; i < ov->n; i++)
        yt_map_put(a, tree, ov->keys[i], merge(a, yt_get(tree, ov->keys[i]->text), ov->vals[i], false));
    if (profile_validate(tree, subject, d))
        return NULL;
    return tree;
}
