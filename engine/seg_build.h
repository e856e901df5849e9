/* seg_build: the engine's side of creating a segment: collect entries, static text, params
 * and initial values, then lay the file out (segment.h) and map it.
 * Owns: path uniqueness (implicit parent directories), entry sorting, string dedup, the
 * layout hash. Entry ids handed out before segb_write are builder ids; params that name a
 * related entry use builder ids and are remapped when written. Value indices are stable. */
#ifndef HWEMU_SEG_BUILD_H
#define HWEMU_SEG_BUILD_H
#include "segment.h"

struct seg_builder;

struct seg_builder *segb_new(void);
void segb_free(struct seg_builder *b);

/* Every call returns a builder id (or value/param index); parents are created as 0755 dirs.
 * A path given twice keeps the first definition and counts an error (segb_errors). */
uint32_t segb_dir(struct seg_builder *b, const char *path, uint16_t mode);
uint32_t segb_link(struct seg_builder *b, const char *path, const char *target);
uint32_t segb_static(struct seg_builder *b, const char *path, uint16_t mode, const char *text, size_t len);
uint32_t segb_dynamic(struct seg_builder *b, const char *path, uint16_t mode, char cls, uint32_t value,
                      uint16_t validator, uint32_t param);
uint32_t segb_value_text(struct seg_builder *b, const char *text);
uint32_t segb_value_counter(struct seg_builder *b, uint32_t unit_nj, uint8_t wrap_bits);
uint32_t segb_param(struct seg_builder *b, struct seg_param p, const char *words);
/* Looks up a builder id by path, SEG_NONE when absent. */
uint32_t segb_find(const struct seg_builder *b, const char *path);
int segb_errors(const struct seg_builder *b, const char **first);

/* Writes the layout to path (via a temporary file and rename) and maps it into out.
 * extra_hash is folded into the layout hash (the profile values). */
int segb_write(struct seg_builder *b, const char *path, const char *node, const char *profile, uint64_t extra_hash,
               int64_t tick_ns, struct seg *out, char *err, size_t errlen);
/* The layout hash segb_write would give, without writing. */
uint64_t segb_hash(struct seg_builder *b, uint64_t extra_hash);

uint64_t seg_hash_bytes(uint64_t h, const void *p, size_t n);

#endif
