/* fuzz_segment: a reader (the shim, the supervisor, fakesmi, the CLI) mapping a hostile segment:
 * the input is the node file followed by its static file (segment.h "Files"), split where the
 * node header's file_size says (all of it when that is past the end). What must hold (segment.h
 * "Trust"): seg_check and seg_check_static refuse or accept them without reading outside the
 * files, and on accepted files every read, lookup, path walk, write decision, slot load, event
 * pop, ledger read and resume computation stays in bounds and never traps (no division by a
 * shared value, no signed overflow).
 *
 * libFuzzer (clang -fsanitize=fuzzer): docs/robustness.md "Fuzzing" has the build and run commands; the
 * seed corpus is tests/fuzz/corpus/segment/ (small segments written by seg_build, each node file
 * with its static file after it, and damaged copies of them). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "seg_attr.h"
#include "segment.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(struct seg *s)
{
    char tmp[SEG_TEXT_MAX], out[SEG_TEXT_MAX];
    size_t len;
    uint32_t n = s->n_entries < 4096 ? s->n_entries : 4096;
    for (uint32_t i = 0; i < n; i++) {
        const char *p = seg_path(s, i);
        size_t pl = strnlen(p, SEG_PATH_MAX);
        uint32_t e;
        if (pl < SEG_PATH_MAX && seg_resolve(s, p, pl, true, &e) == 0)
            (void)seg_read(s, e, 5000000000, tmp, &len);
        (void)seg_lookup(s, p, pl);
        const char *t = seg_read(s, i, 5000000000, tmp, &len);
        if (t && len > SEG_READ_MAX)
            abort(); /* a read never shows more than a page */
        bool changes;
        size_t olen;
        (void)seg_attr_store(s, i, "1\n", 2, 5000000000, out, &olen, &changes);
    }
    uint32_t e;
    (void)seg_resolve(s, "sys/class/powercap/intel-rapl:0/energy_uj", 41, true, &e);
    (void)seg_resolve(s, "a/../../b/./c/link/x", 20, true, &e);
    uint32_t ns = s->n_slots < 512 ? s->n_slots : 512;
    for (uint32_t i = 0; i < ns; i++) {
        uint64_t seq;
        (void)seg_slot_load(s, i, &seq, out, &len);
    }
    uint64_t tail = 0, lost = 0;
    struct seg_event ev;
    for (uint32_t k = 0; k < s->ring_cap && seg_event_pop(s, &tail, &ev, &lost); k++)
        if (ev.len > SEG_TEXT_MAX)
            abort();
    uint64_t *tot = calloc(s->n_counters + 1, sizeof *tot), seq = 0;
    bool have = tot && seg_ledger_read(s, &seq, tot);
    uint32_t nv = s->n_values < 4096 ? s->n_values : 4096;
    for (uint32_t v = 0, k = 0; tot && v < nv; v++) {
        struct seg_value vis;
        if (!seg_value_load(s, v, &vis) || vis.type != SEG_V_COUNTER)
            continue;
        uint64_t r = seg_resume_total(have && k < s->n_counters, have && k < s->n_counters ? tot[k] : 0, &vis,
                                      s->hwm[v], s->substep_ns, 1000000000);
        if (r > SEG_TOTAL_MAX)
            abort();
        k++;
    }
    free(tot);
}

/* A memfd holding len bytes: its descriptor, or -1. */
static int memfd_of(int *fd, const char *name, const uint8_t *data, size_t len)
{
    if (*fd < 0)
        *fd = memfd_create(name, MFD_CLOEXEC);
    if (*fd < 0 || ftruncate(*fd, 0) || ftruncate(*fd, (off_t)len) ||
        (len && pwrite(*fd, data, len, 0) != (ssize_t)len))
        return -1;
    return *fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1, sfd = -1;
    if (size < sizeof(struct seg_header) || size > (1u << 20))
        return 0;
    uint64_t fsz = ((const struct seg_header *)data)->file_size;
    size_t node_len = fsz >= sizeof(struct seg_header) && fsz <= size ? (size_t)fsz : size;
    if (memfd_of(&fd, "fuzz-segment", data, node_len) < 0 ||
        memfd_of(&sfd, "fuzz-static", data + node_len, size - node_len) < 0)
        return 0;
    struct seg s;
    memset(&s, 0, sizeof s);
    s.fd = -1;
    s.guard = -1;
    if (seg_map(&s, fd, node_len, false))
        return 0;
    s.h = (struct seg_header *)s.base;
    char err[256] = "";
    if (seg_check(&s, err, sizeof err) == 0) {
        seg_bind(&s, s.h);
        /* the static file as a reader maps it: read-only, then a zero page */
        size_t st_len = size - node_len, ps = (size_t)sysconf(_SC_PAGESIZE);
        size_t map = (st_len + ps - 1) / ps * ps + ps;
        uint8_t *r = mmap(NULL, map, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (r != MAP_FAILED && (!st_len || mmap(r, st_len, PROT_READ, MAP_SHARED | MAP_FIXED, sfd, 0) != MAP_FAILED)) {
            if (seg_check_static(&s, r, st_len, err, sizeof err) == 0) {
                seg_bind_static(&s, r);
                exercise(&s);
            } else if (!err[0]) {
                abort(); /* every refusal says why */
            }
        }
        if (r != MAP_FAILED)
            munmap(r, map);
    } else if (!err[0]) {
        abort(); /* every refusal says why */
    }
    munmap(s.base, s.map_size);
    return 0;
}
