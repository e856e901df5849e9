/* node_publish: changed values made visible to readers: one snapshot of the node's changes
 * written value by value through the journal while the generation is odd (node_publish: the tick's publication,
 * node.c), and the values that name the node's hardware published once (node_publish_identity:
 * at the open, node_open.c; after a repair that lost them, node_repair.c). A value's text
 * (node_text_value) is inline in node_internal.h: the tick formats several a node. See
 * segment.h "Snapshot publication". */
#include "node_internal.h"

#include <stdint.h>
#include <stdlib.h>

/* One snapshot: the generation odd, each change through the journal, the generation even. The
 * elapsed counter goes last: every line a view reads is capped at its horizon, so a view that
 * reads a publication midway (segment.h "Snapshot publication": a publication that does not
 * end, an engine killed in one) reads the old lines to their horizon and the new ones at their
 * start, at or after it, and no line past what the next read shows. */
void node_publish(struct node *n, struct node_change *ch, uint32_t nch, int64_t now_mono)
{
    struct seg *s = &n->seg;
    seg_publish_begin(s);
    for (int elapsed = 0; elapsed < 2; elapsed++)
        for (uint32_t i = 0; i < nch; i++)
            if ((ch[i].value < n->nvalues && n->binds[ch[i].value].kind == BK_ELAPSED) == (elapsed == 1))
                seg_publish_value(s, ch[i].value, &ch[i].v);
    seg_publish_end(s, now_mono);
}

/* The values that name this node's hardware (GPU UUIDs, serials): the template's texts are
 * the pool's, so each node publishes its own once. */
void node_publish_identity(struct node *n)
{
    struct node_change *ch = malloc(sizeof *ch * (n->nvalues ? n->nvalues : 1));
    if (!ch)
        abort();
    uint32_t nch = 0;
    char text[SEG_TEXT_MAX];
    for (uint32_t v = 0; v < n->nvalues; v++) {
        if (n->binds[v].kind != BK_GPU_IDENT || !node_gpu_text(n, &n->binds[v], text, sizeof text))
            continue;
        struct node_change c = {.value = v, .v = node_img_values(n->t)[v]};
        node_text_value(&c.v, text);
        ch[nch++] = c;
    }
    if (nch)
        node_publish(n, ch, nch, seg_now_ns());
    free(ch);
}
