/* seg_build: the engine's side of creating a segment: collect entries, static text, params
 * and initial values, then lay the file out (segment.h) and map it.
 * Owns: path uniqueness (implicit parent directories), entry sorting, string dedup, the
 * layout hash. Entry ids handed out before segb_write are builder ids; params that name a
 * related entry use builder ids and are remapped when written. Value indices are stable (with
 * a quiet split, final from the start: segb_quiet_split). */
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
/* A device file (class SEG_M or SEG_I, segment.h "Devices"): no value; param as the class says. */
uint32_t segb_device(struct seg_builder *b, const char *path, uint16_t mode, char cls, uint32_t param);
uint32_t segb_value_text(struct seg_builder *b, const char *text);
/* A quiet text value (segment.h "Quiet values"): one only an agent's write changes, whose
 * template text readers take from the static file until the node has its own copy. Before a
 * split its index is the next, like any value's; after segb_quiet_split(b, first_quiet) the
 * quiet values take first_quiet, first_quiet + 1, ... and the others 0, 1, ...: render a layout
 * once to count its live values (segb_live_count: every value made that is not quiet), then
 * again after segb_quiet_split(new builder, that count), with the same calls. */
uint32_t segb_value_quiet(struct seg_builder *b, const char *text);
uint32_t segb_live_count(const struct seg_builder *b);
void segb_quiet_split(struct seg_builder *b, uint32_t first_quiet);
uint32_t segb_value_counter(struct seg_builder *b, uint32_t unit_nj, uint8_t wrap_bits, bool shows_count);
/* A SEG_V_LINE value (segment.h): a time line outside the ledger, 0 until published. */
uint32_t segb_value_line(struct seg_builder *b);
/* A SEG_V_COUNTS value (segment.h): SEG_COUNTS_PER_VALUE counts outside the ledger, 0 until published. */
uint32_t segb_value_counts(struct seg_builder *b);
uint32_t segb_param(struct seg_builder *b, struct seg_param p, const char *words);
/* Sets SEG_F_TURBO or SEG_F_CEIL (segment.h "Turbo") on file id. */
void segb_flag(struct seg_builder *b, uint32_t id, uint8_t flag);
/* Marks a directory (when present) as owned by the node: SEG_F_OWNED. */
void segb_own(struct seg_builder *b, const char *dir);
/* Records that the node does not have dir, whatever the host has there: SEG_F_ABSENT. */
void segb_absent(struct seg_builder *b, const char *dir);
/* Slot k of directory parent (segment.h "Slots"): the directory parent/SEG_SLOT_MARK<k>, its id
 * in text value `value`, its name pattern (SEG_SLOT_MARK bytes stand for the id); marks parent
 * SEG_F_SLOTS. Slots of one parent must be made 0, 1, ... in order. The path of the slot
 * (what files under it are rendered below) goes to path_out (cap bytes). */
uint32_t segb_slot_dir(struct seg_builder *b, const char *parent, uint32_t k, uint32_t value, const char *pattern,
                       char *path_out, size_t cap);
/* Looks up a builder id by path, SEG_NONE when absent. */
uint32_t segb_find(const struct seg_builder *b, const char *path);
/* The value of a dynamic file (builder id), SEG_NONE for other entries. */
uint32_t segb_value_of(const struct seg_builder *b, uint32_t id);
int segb_errors(const struct seg_builder *b, const char **first);

/* A laid-out segment in memory, ready to be instantiated for any number of nodes (all the
 * nodes of a pool share one: only the node name in the header differs): the node file's
 * written prefix (used of its size bytes; the rest is zeros) and the whole static file
 * (segment.h "Files"). */
struct seg_image {
    uint8_t *bytes;
    size_t used, size;
    uint8_t *st_bytes;
    size_t st_size;
    uint64_t layout_hash;
};

/* A static file as the engine holds it: mapped writable (to repair it) and guarded. */
struct seg_static_file {
    uint8_t *base;
    size_t size, map_size;
    int fd, guard;
};

/* Lays the builder out into img. extra_hash is folded into the layout hash (the profile's
 * values). 0, or EINVAL with a message when the builder recorded inconsistencies. */
int segb_image(struct seg_builder *b, const char *profile, uint64_t extra_hash, int64_t tick_ns,
               struct seg_image *img, char *err, size_t errlen);
void seg_image_free(struct seg_image *img);
/* The bytes a node file new from img holds in its file system (seg_image_write): the written
 * prefix and the ledger, in whole pages of page_size bytes; the holes (the quiet values, slots,
 * high-water marks and ring) take none until written. */
uint64_t seg_image_resident(const struct seg_image *img, uint64_t page_size);
/* Creates the node file at path from the image for node (via a temporary file and rename) and
 * maps it; its entries, strings and params are the image's (valid while img is). */
int seg_image_write(const struct seg_image *img, const char *path, const char *node, struct seg *out, char *err,
                    size_t errlen);
/* Puts the image's static file at path (seg_static_path): an existing file that is already the
 * image's is kept as it is (agents may have it mapped); anything else is replaced through a
 * temporary file and rename (a symlink is never followed). Maps it writable into out. 0, or an
 * errno with a message in err. */
int seg_static_put(const struct seg_image *img, const char *path, struct seg_static_file *out, char *err,
                   size_t errlen);
/* A static file that shrank (or whose pages the guard replaced): grown back to its size,
 * written whole from the image and mapped afresh over the same addresses. 0 or an errno. */
int seg_static_restore(const struct seg_image *img, struct seg_static_file *f);
void seg_static_close(struct seg_static_file *f);
/* segb_image, seg_static_put next to path, seg_image_write, then the static file mapped as a
 * reader maps it (the tests' one call). */
int segb_write(struct seg_builder *b, const char *path, const char *node, const char *profile, uint64_t extra_hash,
               int64_t tick_ns, struct seg *out, char *err, size_t errlen);

uint64_t seg_hash_bytes(uint64_t h, const void *p, size_t n);

#endif
