/* profile_get: typed getters with defaults over a merged profile tree (or any YAML tree).
 * Shared by the profile loader, its validator, the renderers and the physics parameters, so
 * that none of them has to include another for a lookup. */
#ifndef HWEMU_PROFILE_GET_H
#define HWEMU_PROFILE_GET_H
#include <stdbool.h>

struct yt_node;

/* Getters over a merged tree; `path` is dotted through mappings ("cpu.sockets"). */
long long prof_int(const struct yt_node *tree, const char *path, long long dflt);
double prof_num(const struct yt_node *tree, const char *path, double dflt);
const char *prof_str(const struct yt_node *tree, const char *path, const char *dflt);
bool prof_bool(const struct yt_node *tree, const char *path, bool dflt);

#endif
