/* profile: hardware profiles: loading, provenance, `extends` merging and validation.
 * Owns: the set of profiles (builtins embedded in the binary plus a local directory), each as
 * a tree of facts where every leaf carries its source. Nothing downstream reads YAML: it reads
 * a profile's merged tree with the getters below.
 *
 * Load order and rules (profiles/README.md is the user-facing version):
 *  1. each file is parsed on its own; header keys (schemaVersion, name, description, extends)
 *     are checked and never inherited; `sources` entries are checked;
 *  2. provenance is resolved per file: `{v: X, src: S}` gives X the source S, a mapping-level
 *     `src:` covers every value below it (a deeper one wins); node.labels stays as written;
 *  3. `extends` chains merge parent first: mappings merge key by key, lists and values are
 *     replaced whole, and so are each `sources.<id>` and each `node.labels.<group>`;
 *  4. the merged tree is walked along profile_schema (unknown keys, types, words, a source on
 *     every non-zero fact, citations) and cross-checked (profile_validate).
 * Every problem is reported with file:line:col, the profile and the dotted key. */
#ifndef HWEMU_PROFILE_H
#define HWEMU_PROFILE_H
#include "profile_get.h"
#include "arena.h"

#include <stdbool.h>

struct diag;
struct yt_node;

struct profile {
    const char *name;
    const char *description;
    const char *extends;     /* parent name or NULL */
    const char *file;        /* "profiles/x.yaml" (builtin) or the local path */
    bool builtin;
    struct yt_node *raw;     /* as parsed */
    struct yt_node *own;     /* this file's keys, facts resolved */
    struct yt_node *tree;    /* merged with its ancestors: what everything reads */
    int state;               /* private to profile.c */
};

struct profile_set {
    struct arena arena;
    struct profile *items;
    int n, cap;
};

/* Loads the builtins and, when dir is non-NULL, every *.yaml of dir. Returns 0, or -1 with
 * every problem in d (the set then holds only what loaded cleanly). */
int profiles_load(struct profile_set *ps, const char *dir, struct diag *d);
void profiles_free(struct profile_set *ps);
const struct profile *profiles_find(const struct profile_set *ps, const char *name);

/* A profile's tree with a cluster spec's overrides merged on top (the override's leaves get
 * the source "assumed:cluster spec override at FILE:LINE"), validated. Errors are prefixed
 * with `subject` (e.g. "pool gpu") and point into the spec. NULL on error. */
struct yt_node *profile_with_overrides(struct profile_set *ps, const struct profile *p,
                                       const struct yt_node *overrides, const char *subject,
                                       struct diag *d);


#endif
