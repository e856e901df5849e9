/* profile_show: prints a profile's facts with their sources; see profile_show.h. */
#include "profile_show.h"

#include "profile.h"
#include "ytree.h"

#include <stdbool.h>
#include <string.h>

static bool scalar_list(const struct yt_node *n)
{
    if (n->kind != YT_SEQ)
        return false;
    for (int i = 0; i < n->n; i++)
        if (n->vals[i]->kind != YT_SCALAR)
            return false;
    return true;
}

static void leaf(FILE *out, const char *path, const struct yt_node *n)
{
    fprintf(out, "  %s = ", path);
    if (n->kind == YT_SEQ) {
        fputc('[', out);
        for (int i = 0; i < n->n; i++)
            fprintf(out, "%s%s", i ? ", " : "", n->vals[i]->text);
        fputc(']', out);
    } else if (n->kind == YT_MAP) {
        fputs("{}", out);
    } else if (strchr(n->text, '\n')) {
        fprintf(out, "(%zu bytes of text)", strlen(n->text));
    } else {
        fputs(n->text, out);
    }
    fprintf(out, "    [%s]\n", n->src ? n->src : "plain");
}

static void walk(FILE *out, const struct yt_node *n, const char *path)
{
    char p[512];
    if (n->kind == YT_MAP && n->n) {
        for (int i = 0; i < n->n; i++) {
            snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", n->keys[i]->text);
            walk(out, n->vals[i], p);
        }
    } else if (n->kind == YT_SEQ && n->n && !scalar_list(n)) {
        for (int i = 0; i < n->n; i++) {
            snprintf(p, sizeof p, "%s[%d]", path, i);
            walk(out, n->vals[i], p);
        }
    } else {
        leaf(out, path, n);
    }
}

static void labels(FILE *out, const struct yt_node *groups)
{
    for (int i = 0; groups && groups->kind == YT_MAP && i < groups->n; i++) {
        const struct yt_node *g = groups->vals[i];
        const char *src = yt_str(yt_get(g, "src"));
        const struct yt_node *vals = yt_get(g, "values");
        for (int j = 0; vals && vals->kind == YT_MAP && j < vals->n; j++)
            fprintf(out, "  node.labels.%s: %s = %s    [%s]\n", groups->keys[i]->text, vals->keys[j]->text,
                    yt_str(vals->vals[j]) ? vals->vals[j]->text : "?", src ? src : "plain");
    }
}

void profile_show(FILE *out, const struct profile *p)
{
    fprintf(out, "profile %s\n", p->name);
    fprintf(out, "file: %s%s\n", p->file, p->builtin ? " (builtin)" : "");
    fprintf(out, "description: %s\n", p->description);
    fprintf(out, "extends: %s\n", p->extends ? p->extends : "-");
    fputs("facts:\n", out);
    const struct yt_node *t = p->tree;
    for (int i = 0; i < t->n; i++) {
        const char *k = t->keys[i]->text;
        if (!strcmp(k, "sources"))
            continue;
        if (!strcmp(k, "node")) {
            const struct yt_node *node = t->vals[i];
            for (int j = 0; j < node->n; j++) {
                char path[128];
                snprintf(path, sizeof path, "node.%s", node->keys[j]->text);
                if (!strcmp(node->keys[j]->text, "labels"))
                    labels(out, node->vals[j]);
                else
                    walk(out, node->vals[j], path);
            }
            continue;
        }
        walk(out, t->vals[i], k);
    }
    fputs("sources:\n", out);
    const struct yt_node *s = yt_get(t, "sources");
    for (int i = 0; s && i < s->n; i++) {
        const struct yt_node *e = s->vals[i];
        const char *note = yt_str(yt_get(e, "note"));
        fprintf(out, "  %s: %s: %s%s%s\n", s->keys[i]->text, yt_str(yt_get(e, "kind")) ? yt_str(yt_get(e, "kind")) : "?",
                yt_str(yt_get(e, "ref")) ? yt_str(yt_get(e, "ref")) : "?", note && *note ? " -- " : "",
                note ? note : "");
    }
}
