/* profile_schema: every key a hardware profile may hold, its type, whether it is a fact (must
 * carry a source) or a plain setting, and the words it accepts. The table is the single
 * definition of the profile format (profiles/README.md documents it for users); profile.c
 * walks a merged profile along it. Zones nest: a zone's `children` use the zone table again. */
#ifndef HWEMU_PROFILE_SCHEMA_H
#define HWEMU_PROFILE_SCHEMA_H
#include <stdbool.h>

enum sf_type {
    SF_INT,        /* integer */
    SF_FLOAT,      /* number */
    SF_STR,        /* any scalar, taken as text */
    SF_BOOL,       /* true / false */
    SF_INTLIST,    /* list of integers (one fact) */
    SF_FLOATLIST,  /* list of numbers (one fact) */
    SF_OBJ,        /* mapping with the keys of `sub` */
    SF_OBJLIST,    /* list of mappings with the keys of `sub` */
    SF_STRMAP,     /* mapping of free keys to text values (plain) */
    SF_INTMAP,     /* mapping of free keys to integers (plain) */
    SF_LABELS,     /* node.labels: group -> {src, values: {key: value}} */
};

struct sfield {
    const char *key;
    enum sf_type type;
    bool fact;                  /* needs a source when non-zero */
    const struct sfield *sub;   /* SF_OBJ / SF_OBJLIST */
    const char *words;          /* SF_STR: accepted values, "|"-separated, "" allowed if listed */
};

/* The top level below the header keys (schemaVersion, name, description, extends, sources). */
extern const struct sfield profile_schema[];

const struct sfield *sfield_find(const struct sfield *table, const char *key);
/* "a, b, c" of a table's keys, for "expected one of" messages. */
void sfield_keys(const struct sfield *table, char *buf, unsigned len);
const char *sf_type_name(enum sf_type t);

#endif
