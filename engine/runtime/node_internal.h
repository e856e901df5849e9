/* node_internal: what the runtime's node files share and nothing outside engine/runtime may
 * call. Their dependencies run one way (test_layers.sh refuses a circle): the open
 * (node_open.c) does a first tick (node.c), which begins with the damage checks
 * (node_repair.c); all three use the agents' settings applied (node_apply.c) and the
 * publication (node_publish.c), which use only the GPU texts (node_gpu.c), job cgroup slots
 * (node_unit.c), cpufreq/stats lines (node_cfstats.c) and busy-cycle lines (node_cycles.c) a
 * tick publishes. node.h is the
 * public side (the engine, the runs, the telemetry). */
#ifndef HWEMU_NODE_INTERNAL_H
#define HWEMU_NODE_INTERNAL_H
#include "node.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct event_log;

/* The template's header and values: the private base of every value the engine computes (its
 * type, unit and register width never come from the file). */
static inline const struct seg_header *node_img_header(const struct node_template *t)
{
    return (const struct seg_header *)t->image.bytes;
}

static inline const struct seg_value *node_img_values(const struct node_template *t)
{
    return (const struct seg_value *)(t->image.bytes + node_img_header(t)->values_off);
}

/* node.slot_applied, made at its first need (an agent's write, a resume, a power cycle): a node
 * no agent wrote to holds none (every slot's applied sequence reads 0 then). */
static inline uint64_t *node_slot_applied(struct node *n)
{
    if (!n->slot_applied && !(n->slot_applied = calloc(node_img_header(n->t)->n_slots + 1u, sizeof *n->slot_applied)))
        abort();
    return n->slot_applied;
}

/* The total before this start of counter value v (node.cstart); a value that is no counter gets
 * the spare entry past the counters, which nothing reads back. */
static inline uint64_t *node_cstart(struct node *n, uint32_t v)
{
    uint32_t k = v < n->nvalues ? n->t->ix.counter_of[v] : SEG_NONE;
    return &n->cstart[k < n->ncounters ? k : n->ncounters];
}

static inline uint64_t node_cstart_of(const struct node *n, uint32_t v)
{
    uint32_t k = v < n->nvalues ? n->t->ix.counter_of[v] : SEG_NONE;
    return n->cstart[k < n->ncounters ? k : n->ncounters];
}

/* The number value v shows (node.shown), for a value published on change; the spare entry for
 * any other. */
static inline int64_t *node_shown(struct node *n, uint32_t v)
{
    uint32_t k = v < n->nvalues ? n->t->ix.shown_of[v] : SEG_NONE;
    return &n->shown[k < n->t->ix.nshown ? k : n->t->ix.nshown];
}

/* One value a tick publishes. */
struct node_change {
    uint32_t value;
    struct seg_value v;
};

/* A text as a value's text (cut to what a value holds). Inline: the tick formats several a node. */
static inline void node_text_value(struct seg_value *v, const char *text)
{
    size_t n = strlen(text);
    if (n > sizeof v->text)
        n = sizeof v->text;
    memcpy(v->text, text, n);
    v->len = (uint8_t)n;
}

/* Agents' settings (node_apply.c): an agent's validated text into the physics (b's quantity);
 * the settings agents wrote, read back from the segment, validated again and applied (a resumed
 * segment, and a repaired one whose settings were lost). */
void node_apply(struct node *n, const struct binding *b, const char *text);
void node_resume_writes(struct node *n);

/* Publication (node_publish.c): changes ch[0..nch) published as one snapshot; the values that
 * name this node's hardware (GPU UUIDs, serials), published (at the open, and by a repair that
 * lost them). */
void node_publish(struct node *n, struct node_change *ch, uint32_t nch, int64_t now_mono);
void node_publish_identity(struct node *n);

/* Damage (node_repair.c, docs/robustness.md): the kinds (one stderr line each per node), the
 * header a node's file must have, of which the part before NODE_HEADER_STATIC is compared (what
 * follows changes at run time), one damage found and what was done (an event when log is at
 * hand, else one at the first tick that has it), and the tick's checks and repairs. */
enum node_damage { DMG_HEADER = 1, DMG_STATIC = 2, DMG_SHRUNK = 4, DMG_DELETED = 8, DMG_AT_START = 16 };
#define NODE_HEADER_STATIC offsetof(struct seg_header, slot_writes)
void node_expected_header(const struct node *n, struct seg_header *h);
void node_report_damage(struct node *n, unsigned kind, const char *what, const char *action, int64_t now_wall,
                        struct event_log *log);
void node_check_health(struct node *n, int64_t now_wall, struct event_log *log);
/* Adds one line (ending in a newline) to what node_open has to say (n->said). */
void node_said_add(struct node *n, const char *line, size_t len);

/* The text of a GPU value (BK_GPU, BK_GPU_IDENT) now: false for other bindings. */
bool node_gpu_text(const struct node *n, const struct binding *b, char *t, size_t len);
/* The text a GPU setting reads after the tick applied text when the hardware changes it (an
 * Intel limit clamped to the hardware's range) into out: its length, or 0 when it reads as
 * written. */
size_t node_gpu_effective(const struct node *n, const struct binding *b, const char *text, char *out, size_t cap);

/* Job cgroup slots (node_unit.c): the slots from the bindings (at open), the ids a resumed
 * segment showed (before the first publication), this tick's values appended to ch (at most 9 a
 * slot), and a slot's CPU-time total in µs at substep until_sub for the ledger (v: its
 * BK_UNIT_CPU value). */
/* The values of each of nunits job cgroup slots in binds[0..nv) (node_template.ix.unit_vals;
 * malloc'd, NULL when nunits is 0). */
struct node_unit_vals *node_unit_vals_build(const struct binding *binds, uint32_t nv, uint32_t nunits);
void node_units_init(struct node *n);
void node_units_salvage(struct node *n);
void node_units_collect(struct node *n, struct node_change *ch, uint32_t *nch, int64_t until_ns);
uint64_t node_unit_total_us(const struct node *n, uint32_t v, uint64_t until_sub);

/* cpufreq/stats (node_cfstats.c): the policies from the bindings (at open), the lines a resumed
 * segment showed (after resume_counters: it needs the resumed elapsed time), a reset an agent
 * wrote (the tick's drain) and dropping the resets a resume re-applied, the running frequency of
 * the policy whose first CPU index is cpu when its scaling_cur_freq moved, every line again at
 * the next tick (node_rebase), this tick's lines appended to ch (at most k + k² a policy). */
void node_cfstats_init(struct node *n);
void node_cfstats_free(struct node *n);
void node_cfstats_reset(struct node *n, uint16_t cpu);
void node_cfstats_forget_resets(struct node *n);
void node_cfstats_freq(struct node *n, uint16_t cpu, int64_t khz);
void node_cfstats_republish(struct node *n);
void node_cfstats_collect(struct node *n, struct node_change *ch, uint32_t *nch);
void node_cfstats_resume(struct node *n);

/* Busy-cycle lines (node_cycles.c): the lines from the bindings (at open), every line again at
 * the next tick (node_rebase), this tick's lines appended to ch (at most one a CPU), and a line's
 * total in thousands of cycles at substep until_sub for the ledger (v: its BK_CPU_CYCLES value). */
/* The ncyc lines of binds[0..nv) (node_template.ix.cyc_lines; malloc'd, NULL when ncyc is 0). */
struct node_cyc_line *node_cyc_lines_build(const struct binding *binds, uint32_t nv, uint32_t ncyc);
void node_cycles_init(struct node *n);
void node_cycles_free(struct node *n);
void node_cycles_republish(struct node *n);
void node_cycles_collect(struct node *n, struct node_change *ch, uint32_t *nch);
/* Package k's power is held down by its RAPL limits over the interval that begins (not by a
 * fault's cap: PROCHOT or a lost PSU's share), the time MSR_PKG_PERF_STATUS counts. */
bool node_rapl_throttled(const struct node *n, int k);
/* The power came back: every line restarts from 0 at this tick (APERF, PERF_STATUS). */
void node_cycles_power_back(struct node *n);
/* Line k's total (k: the k-th BK_CPU_CYCLES value in value order; the lines are in the same
 * order), its value v; v's total before this start when line k is not v's. */
uint64_t node_cycles_total(const struct node *n, uint32_t k, uint32_t v, uint64_t until_sub);

#endif
