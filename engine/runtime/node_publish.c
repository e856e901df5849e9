/* node_publish: changed values made visible to readers: one snapshot of the node's changes
 * written into both copies around the generation flip (node_publish: the tick's publication,
 * node.c), and the values that name the node's hardware published once (node_publish_identity:
 * at the open, node_open.c; after a repair that lost them, node_repair.c). A value's text
 * (node_text_value) is inline in node_internal.h: the tick formats several a node. See
 * segment.h "Snapshot publication". */
#include "node_internal.h"

#include <stdint.h>
#include <stdlib.h>

/* One snapshot: the changes into the copy readers do not see, the flip, the same into the other. */
void node_publish(struct node *n, struct node_change *ch, uint32_t nch, int64_t now_mono)
{
    struct seg *s = &n->seg;
    seg_publish_begin(s);
    for (int copy = 0; copy < 2; copy++) {
        struct seg_value *c = seg_writable_copy(s);
        for (uint32_t i = 0; i < nch; i++)
            c[ch[i].value] = ch[i].v;
        if (!copy)
            seg_publish_flip(s);
    }
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
