/* profile_validate: checks one merged profile tree (or a tree with spec overrides on top).
 * Owns: the walk along profile_schema (unknown keys with a "did you mean", types, accepted
 * words, a source on every non-zero fact, citations into `sources`) and the cross-field rules
 * (CPU topology vs capacity, zone naming, cpufreq ranges, GPU limits, ...). Every error names
 * file:line:col, the subject ("profile x" or "pool y") and the dotted key. */
#ifndef HWEMU_PROFILE_VALIDATE_H
#define HWEMU_PROFILE_VALIDATE_H

struct diag;
struct yt_node;

/* 0 when clean; -1 with every problem added to d. */
int profile_validate(const struct yt_node *tree, const char *subject, struct diag *d);

/* Closest word of a "|"- or NULL-terminated candidate list within a small edit distance. */
const char *closest_word(const char *word, const char *const *candidates);

#endif
