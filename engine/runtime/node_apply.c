/* node_apply: a setting agents wrote, put into the node's physics: one validated text into the
 * quantity its binding names (node_apply: the tick's drain of the slots, node.c), and every
 * setting a segment holds, read back, validated again and applied (node_resume_writes: a resumed
 * segment at the open, node_open.c; a repaired one whose settings were lost, node_repair.c).
 * See node_internal.h. */
#include "node_internal.h"
#include "params.h"

#include "seg_attr.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int epp_value(const char *t)
{
    static const struct {
        const char *name;
        int v;
    } names[] = {{"performance", 0}, {"balance_performance", 128}, {"balance_power", 192}, {"power", 255},
                 {"default", 128}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strncmp(t, names[i].name, strlen(names[i].name)) && (t[strlen(names[i].name)] == '\n'))
            return names[i].v;
    return atoi(t);
}

static void apply_gpu(struct node *n, const struct binding *b, const char *text, long long v)
{
    if (b->pkg >= PHYS_GPU_MAX)
        return;
    struct phys_gpu *g = &n->gstate.g[b->pkg];
    int lo = 0, hi = 0;
    switch (b->zone) {
    case GS_LIMIT_MW:
        if (text[0] != '[') /* a token: the limit is not supported */
            g->limit_w = (double)v / 1000;
        break;
    case GS_CAP_UW: g->limit_w = (double)v / 1e6; break;
    case GS_INTEL_PL1_UW: g->limit_w = (double)v / 1e6; break;
    case GS_PERSISTENCE: g->persistence = v != 0; break;
    case GS_LOCK_GFX:
    case GS_LOCK_MEM:
        if (sscanf(text, "%d %d", &lo, &hi) != 2)
            lo = hi = 0; /* "none" */
        if (b->zone == GS_LOCK_GFX)
            g->lock_gfx_max = hi;
        else
            g->lock_mem_max = hi;
        break;
    default: break; /* the performance level is kept by its file; it changes no physics */
    }
}

/* A policy's setting goes to every CPU of the policy. */
#define SET_POLICY(n, b, field, value)                                                                \
    do {                                                                                              \
        int end_ = (n)->params.policy_span > 1 ? (n)->state.ncpus : (b)->cpu + 1;                     \
        for (int i_ = (b)->cpu; i_ < end_ && i_ < (n)->state.ncpus; i_++)                            \
            if ((n)->params.cpu_policy[i_] == (b)->cpu)                                               \
                (n)->state.cpu[i_].field = (value);                                                   \
    } while (0)

void node_apply(struct node *n, const struct binding *b, const char *text)
{
    struct phys_pkg_state *k = &n->state.pkg[b->pkg < PHYS_MAX_PKGS ? b->pkg : 0];
    long long v = strtoll(text, NULL, 10);
    int32_t khz = v < 0 ? 0 : v > INT32_MAX ? INT32_MAX : (int32_t)v;
    switch (b->kind) {
    case BK_PL_LIMIT: k->pl_limit_uw[b->pl < PHYS_NPL ? b->pl : 0] = v; break;
    case BK_PL1_WINDOW: k->pl1_window_us = v; break;
    case BK_ZONE_ENABLED: k->rapl_enabled = v != 0; break;
    case BK_GOVERNOR: SET_POLICY(n, b, governor, params_governor_of(text)); break;
    case BK_MIN_FREQ: SET_POLICY(n, b, scaling_min_khz, khz); break;
    case BK_MAX_FREQ: SET_POLICY(n, b, scaling_max_khz, khz); break;
    case BK_EPP: SET_POLICY(n, b, epp, epp_value(text)); break;
    case BK_BOOST: n->state.boost = v != 0; break;
    case BK_NO_TURBO: n->state.boost = v == 0; break;
    case BK_MAX_PERF_PCT: n->state.max_perf_pct = (int32_t)(v < 0 ? 0 : v > 100 ? 100 : v); break;
    case BK_MIN_PERF_PCT: n->state.min_perf_pct = (int32_t)(v < 0 ? 0 : v > 100 ? 100 : v); break;
    case BK_HSMP_CAP: k->hsmp_cap_uw = v; break;
    case BK_GPU_SET: apply_gpu(n, b, text, v); break;
    case BK_CF_RESET: node_cfstats_reset(n, b->cpu); break;
    default: break;
    }
}

/* The settings agents wrote, as a reader sees them now, into the physics. */
void node_resume_writes(struct node *n)
{
    /* Every A value as a reader sees it now (slot if newer) goes into the physics, validated
     * again first: the file is untrusted. What the attribute refuses stays the profile's. */
    int64_t now = seg_now_ns(); /* one instant for the whole node (a clock read costs as much as a slot) */
    for (uint32_t i = 0; i < n->seg.n_slots; i++) {
        uint32_t e = n->slot_entry[i];
        char tmp[SEG_TEXT_MAX + 1], out[SEG_TEXT_MAX + 1];
        size_t len, olen = 0;
        bool changes = false;
        const char *t = seg_read_stored(&n->seg, e, now, tmp, &len); /* the request, not a cap (segment.h "Turbo") */
        uint32_t v = n->seg.entries[e].value;
        const struct seg_value *dflt = &node_img_values(n->t)[v];
        if (t && len == dflt->len && !memcmp(t, dflt->a.text, len)) {
            memcpy(out, t, len); /* the profile's own text (most of them): nothing to check */
            out[len] = 0;
            node_apply(n, &n->binds[v], out);
        } else if (t && !seg_attr_store(&n->seg, e, t, len, now, out, &olen, &changes) && changes) {
            out[olen < SEG_TEXT_MAX ? olen : SEG_TEXT_MAX] = 0;
            node_apply(n, &n->binds[v], out);
        }
        uint64_t seq;
        char st[SEG_TEXT_MAX];
        node_slot_applied(n)[i] = seg_slot_load(&n->seg, i, &seq, st, &len) ? seq : 0;
    }
}
