/* profiles_fixture.h: the builtin profiles for a unit test that renders from them, loaded once
 * for the whole group (profiles_setup and profiles_teardown, cmocka's group setup and teardown),
 * and the arena of the YAML trees the test parses (fixture_parse). Include after cmocka.h. */
#ifndef HWEMU_TEST_PROFILES_FIXTURE_H
#define HWEMU_TEST_PROFILES_FIXTURE_H

#include "arena.h"
#include "diag.h"
#include "profile.h"
#include "ytree.h"

#include <stdio.h>
#include <string.h>

static struct profile_set ps;
static struct arena fixture_arena;

static inline int profiles_setup(void **st)
{
    (void)st;
    struct diag d = {0};
    int rc = profiles_load(&ps, NULL, &d);
    diag_print(&d, stderr);
    diag_free(&d);
    return rc;
}

static inline int profiles_teardown(void **st)
{
    (void)st;
    profiles_free(&ps);
    arena_free(&fixture_arena);
    return 0;
}

/* yaml (flow text) parsed as file `name`; fails the test on a parse error. */
static inline struct yt_node *fixture_parse(const char *name, const char *yaml)
{
    struct diag d = {0};
    struct yt_node *t = yt_parse(&fixture_arena, name, yaml, strlen(yaml), &d, NULL);
    diag_print(&d, stderr);
    diag_free(&d);
    assert_non_null(t);
    return t;
}

#endif
