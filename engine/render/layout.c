/* layout: the value table of a node being rendered: each value the segment builder lays out
 * gets its binding at the same index (see layout.h). */
#include "layout.h"

#include <stdlib.h>

static uint32_t grow_binds(struct node_layout *l, struct binding bind)
{
    if (l->nbinds == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        struct binding *nb = realloc(l->binds, sizeof *nb * l->cap);
        if (!nb)
            abort();
        l->binds = nb;
    }
    l->binds[l->nbinds] = bind;
    return l->nbinds++;
}

uint32_t layout_value(struct node_layout *l, const char *text, struct binding bind)
{
    uint32_t v = segb_value_text(l->b, text);
    uint32_t i = grow_binds(l, bind);
    (void)i; /* value indices and binding indices advance together */
    return v;
}

uint32_t layout_counter(struct node_layout *l, uint32_t unit_nj, struct binding bind)
{
    return layout_counter_ex(l, unit_nj, 32, false, bind);
}

uint32_t layout_line(struct node_layout *l, struct binding bind)
{
    uint32_t v = segb_value_line(l->b);
    grow_binds(l, bind);
    return v;
}

uint32_t layout_counts(struct node_layout *l, struct binding bind)
{
    uint32_t v = segb_value_counts(l->b);
    grow_binds(l, bind);
    return v;
}

uint32_t layout_counter_ex(struct node_layout *l, uint32_t unit_nj, uint8_t wrap_bits, bool shows_count,
                           struct binding bind)
{
    uint32_t v = segb_value_counter(l->b, unit_nj, wrap_bits, shows_count);
    grow_binds(l, bind);
    return v;
}
