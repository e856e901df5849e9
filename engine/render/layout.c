/* layout: the value table of a node being rendered: each value the segment builder lays out
 * gets its binding at the same index (see layout.h). */
#include "layout.h"

#include <stdlib.h>
#include <string.h>

/* The binding of value v at its index (value indices and binding indices are the same; after
 * a quiet split they do not come in order). */
static void put_bind(struct node_layout *l, uint32_t v, struct binding bind)
{
    if (v >= l->cap) {
        uint32_t cap = l->cap ? l->cap : 64;
        while (cap <= v)
            cap *= 2;
        struct binding *nb = realloc(l->binds, sizeof *nb * cap);
        if (!nb)
            abort();
        memset(nb + l->cap, 0, sizeof *nb * (cap - l->cap));
        l->binds = nb;
        l->cap = cap;
    }
    l->binds[v] = bind;
    if (v >= l->nbinds)
        l->nbinds = v + 1;
}

bool layout_quiet_kind(uint8_t kind)
{
    switch (kind) {
    case BK_STATIC: case BK_PL_LIMIT: case BK_PL1_WINDOW: case BK_ZONE_ENABLED: case BK_GOVERNOR:
    case BK_MIN_FREQ: case BK_MAX_FREQ: case BK_EPP: case BK_BOOST: case BK_NO_TURBO: case BK_MAX_PERF_PCT:
    case BK_MIN_PERF_PCT: case BK_HSMP_CAP: case BK_GPU_SET: case BK_CF_RESET:
        return true;
    default:
        return false;
    }
}

uint32_t layout_value(struct node_layout *l, const char *text, struct binding bind)
{
    uint32_t v = layout_quiet_kind(bind.kind) ? segb_value_quiet(l->b, text) : segb_value_text(l->b, text);
    put_bind(l, v, bind);
    return v;
}

uint32_t layout_counter(struct node_layout *l, uint32_t unit_nj, struct binding bind)
{
    return layout_counter_ex(l, unit_nj, 32, false, bind);
}

uint32_t layout_line(struct node_layout *l, struct binding bind)
{
    uint32_t v = segb_value_line(l->b);
    put_bind(l, v, bind);
    return v;
}

uint32_t layout_counts(struct node_layout *l, struct binding bind)
{
    uint32_t v = segb_value_counts(l->b);
    put_bind(l, v, bind);
    return v;
}

uint32_t layout_counter_ex(struct node_layout *l, uint32_t unit_nj, uint8_t wrap_bits, bool shows_count,
                           struct binding bind)
{
    uint32_t v = segb_value_counter(l->b, unit_nj, wrap_bits, shows_count);
    put_bind(l, v, bind);
    return v;
}
