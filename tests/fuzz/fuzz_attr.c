/* fuzz_attr: every attribute's write parser (engine/segment/seg_attr.h) on hostile bytes.
 * The engine renders one node of every builtin profile; the input's first two bytes choose one
 * agent-writable (A) file among all of theirs, the rest is what a writer writes. Each write is
 * decided by seg_attr_store as the shim decides it; a taken one is stored in the slot and the
 * engine's next tick drains it (validating again, as for any untrusted slot). Checked: no
 * crash, a result of 0 or a positive errno, a normalised text inside its buffer and
 * newline-terminated. */
#include "fuzz_engine.h"
#include "seg_attr.h"

#include <stdint.h>
#include <string.h>

struct target {
    struct seg *seg;
    uint32_t entry;
};
static struct target *targets;
static size_t ntargets;
static struct engine *eng;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    eng = fuzz_engine_start();
    for (int pass = 0; pass < 2; pass++) {
        ntargets = 0;
        for (int i = 0; i < eng->nnodes; i++) {
            struct seg *s = &eng->nodes[i].seg;
            for (uint32_t e = 0; e < s->h->n_entries; e++) {
                if (s->entries[e].validator == SV_NONE)
                    continue;
                if (pass)
                    targets[ntargets] = (struct target){s, e};
                ntargets++;
            }
        }
        if (!pass)
            targets = calloc(ntargets ? ntargets : 1, sizeof *targets);
    }
    fprintf(stderr, "fuzz_attr: %zu writable attributes on %d nodes\n", ntargets, eng->nnodes);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned calls;
    if (size < 2 || !ntargets)
        return 0;
    const struct target *t = &targets[(size_t)(data[0] | data[1] << 8) % ntargets];
    char out[SEG_TEXT_MAX + 1];
    memset(out, 0x5a, sizeof out);
    size_t olen = 0;
    bool changes = true;
    int rc = seg_attr_store(t->seg, t->entry, (const char *)data + 2, size - 2, 0, out, &olen, &changes);
    if (rc < 0 || out[SEG_TEXT_MAX] != 0x5a)
        __builtin_trap();
    if (rc == 0 && changes) {
        if (olen == 0 || olen > SEG_TEXT_MAX || out[olen - 1] != '\n')
            __builtin_trap();
        seg_slot_store(t->seg, t->entry, out, olen, 0);
    }
    if (++calls % 64 == 0)
        engine_tick(eng); /* drains the slots: the engine validates every one again */
    return 0;
}
