/* fuzz_engine.h: an engine for the fuzz targets that need one (fuzz_attr, fuzz_http): one node
 * of every builtin profile, rendered into a fresh root under /dev/shm, started once per fuzzing
 * process. Header-only (the fuzz build compiles each fuzz_*.c into its own binary). */
#ifndef HWEMU_FUZZ_ENGINE_H
#define HWEMU_FUZZ_ENGINE_H
#include "diag.h"
#include "engine.h"
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static struct engine fuzz_eng;
static char fuzz_root[64];

static void fuzz_engine_cleanup(void)
{
    engine_stop(&fuzz_eng);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", fuzz_root);
    if (system(cmd)) {
    }
}

/* Starts the engine (exits the process when it cannot: the target would test nothing). */
static struct engine *fuzz_engine_start(void)
{
    snprintf(fuzz_root, sizeof fuzz_root, "/dev/shm/hwemu-fuzz-XXXXXX");
    if (!mkdtemp(fuzz_root)) {
        perror("mkdtemp");
        exit(1);
    }
    struct profile_set ps = {0};
    struct diag d = {0};
    if (profiles_load(&ps, NULL, &d)) {
        diag_print(&d, stderr);
        exit(1);
    }
    char spec[4096];
    snprintf(spec, sizeof spec, "%s/spec.yaml", fuzz_root);
    FILE *f = fopen(spec, "w");
    if (!f) {
        perror(spec);
        exit(1);
    }
    fprintf(f, "apiVersion: sim.joulie.io/v1alpha1\nkind: ClusterSpec\nmetadata: {name: fuzz}\nspec:\n  pools:\n");
    for (int i = 0; i < ps.n; i++)
        fprintf(f, "  - {name: p%d, profile: %s, count: 1}\n", i, ps.items[i].name);
    fclose(f);
    profiles_free(&ps);
    diag_free(&d);
    char root[4096];
    snprintf(root, sizeof root, "%s/r", fuzz_root);
    struct engine_config cfg = {.spec_path = spec, .root = root, .tick_ns = 100000000, .workers = 1, .speed = 1};
    if (engine_start(&fuzz_eng, &cfg)) {
        fprintf(stderr, "fuzz: the engine did not start\n%s", fuzz_eng.said ? fuzz_eng.said : "");
        exit(1);
    }
    atexit(fuzz_engine_cleanup);
    return &fuzz_eng;
}

#endif
