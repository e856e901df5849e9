/* fuzz_node_drain: the engine's tick on a segment an agent wrote anything into. One engine (the
 * embedded specs/smoke.yaml: a RAPL node, a GPU node, a VM) runs in a root of its own; each
 * input is stored into one node's segment, where a hostile agent could store it, and every node
 * ticks: the health check (header and static part against the template, repairs), the drain of
 * slots and events, the physics, the publication and the ledger. What must hold (node.c
 * "Damage"): no crash, no read or write outside the node's private tables or the mapping, and
 * the tick returns (bounded work per input).
 *
 * Input: byte 0 picks where the rest goes (0: from the file's start; 1: the snapshot copies;
 * 2: the slots; 3: the high-water marks; 4: the event ring; 5: the ledger; 6: the node's static
 * file, segment.h "Files", from its start) and which node (bits 4-5); bytes 1-16 are added to ring_head and slot_writes (the agents' counters); the
 * rest is copied there, as far as the file goes. libFuzzer (clang -fsanitize=fuzzer): see docs/robustness.md
 * "Fuzzing"; seed corpus tests/fuzz/corpus/node_drain/. */
#include "engine.h"
#include "events.h"
#include "segment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct engine eng;
static char root[128];

static void cleanup(void)
{
    engine_stop(&eng);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz_node_drain: could not remove %s\n", root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(root, sizeof root, "/dev/shm/hwemu-fuzz-drain-%d", (int)getpid());
    struct engine_config cfg = {.root = root, .addr = "", .tick_ns = 100000000, .workers = 1};
    if (engine_start(&eng, &cfg)) {
        fprintf(stderr, "fuzz_node_drain: the engine does not start\n%s", eng.said ? eng.said : "");
        exit(1);
    }
    /* events in memory only: a long run must not fill the disk with damage reports */
    events_close(eng.events);
    char err[200];
    eng.events = events_open(NULL, err, sizeof err);
    for (int i = 0; i < eng.nnodes; i++)
        eng.nodes[i].damage_said = ~0u; /* one stderr line per kind is the engine's; not here */
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 17 || !eng.nnodes)
        return 0;
    struct node *n = &eng.nodes[((data[0] >> 4) & 3) % eng.nnodes];
    struct seg *s = &n->seg;
    const struct seg_header *h = (const struct seg_header *)n->t->image.bytes; /* the template's */
    uint32_t where[] = {0, h->values_off, h->slots_off, h->hwm_off, h->ring_off, h->ledger_off, 0};
    unsigned pick = (data[0] & 15) % 7;
    uint32_t at = where[pick];
    uint8_t *base = s->base;
    size_t fsize = s->size;
    if (pick == 6 && n->t->st) {
        base = n->t->st->f.base;
        fsize = n->t->st->f.size;
    }
    uint64_t a, b;
    memcpy(&a, data + 1, 8);
    memcpy(&b, data + 9, 8);
    atomic_fetch_add(&s->h->ring_head, a);
    atomic_fetch_add(&s->h->slot_writes, b);
    size_t len = size - 17;
    if (at < fsize) {
        if (len > fsize - at)
            len = fsize - at;
        memcpy(base + at, data + 17, len);
    }
    engine_tick(&eng);
    return 0;
}
