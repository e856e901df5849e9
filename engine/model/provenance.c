/* provenance: checks of "kind:ref" strings; see provenance.h. */
#include "provenance.h"

#include "ytree.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return 0;
    return 1;
}

int prov_source_kind_ok(const char *kind)
{
    return kind && (!strcmp(kind, "published") || !strcmp(kind, "corpus") || !strcmp(kind, "measured"));
}

const char *prov_check(const char *src, const struct yt_node *sources, char *buf, size_t len)
{
    const char *colon = strchr(src, ':');
    if (!colon) {
        snprintf(buf, len, "source \"%s\" is not of the form kind:ref (kinds: assumed, published, "
                 "corpus, measured, derived)", src);
        return buf;
    }
    size_t klen = (size_t)(colon - src);
    const char *ref = colon + 1;
    if (klen == 7 && !strncmp(src, "assumed", 7)) {
        if (blank(ref, strlen(ref))) {
            snprintf(buf, len, "source \"%s\": an assumption needs its reason after \"assumed:\"", src);
            return buf;
        }
        return NULL;
    }
    static const char *const cited[] = {"published", "corpus", "measured", "derived"};
    int kind = -1;
    for (int i = 0; i < 4; i++)
        if (strlen(cited[i]) == klen && !strncmp(src, cited[i], klen))
            kind = i;
    if (kind < 0) {
        snprintf(buf, len, "source \"%s\": unknown kind \"%.*s\" (expected assumed, published, corpus, "
                 "measured or derived)", src, (int)klen, src);
        return buf;
    }
    const char *hash = strchr(ref, '#');
    size_t idlen = hash ? (size_t)(hash - ref) : strlen(ref);
    if (idlen == 0 || idlen >= 128) {
        snprintf(buf, len, "source \"%s\": the source id after \"%s:\" is missing", src, cited[kind]);
        return buf;
    }
    for (size_t i = 0; i < idlen; i++) {
        if (isspace((unsigned char)ref[i])) {
            snprintf(buf, len, "source \"%s\": the source id may not contain blanks", src);
            return buf;
        }
    }
    if (hash && blank(hash + 1, strlen(hash + 1))) {
        snprintf(buf, len, "source \"%s\": a location after '#' must not be blank", src);
        return buf;
    }
    char id[128];
    memcpy(id, ref, idlen);
    id[idlen] = 0;
    const struct yt_node *entry = yt_get(sources, id);
    if (!entry) {
        snprintf(buf, len, "source \"%s\" cites \"%s\", which is not in this profile's sources", src, id);
        return buf;
    }
    const char *ekind = yt_str(yt_get(entry, "kind"));
    if (kind != 3 && ekind && strcmp(ekind, cited[kind]) != 0) {
        snprintf(buf, len, "source \"%s\" cites \"%s\" as %s, but that source is of kind %s", src, id,
                 cited[kind], ekind);
        return buf;
    }
    return NULL;
}
