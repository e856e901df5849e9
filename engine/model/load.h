/* load: the builtin and local profiles and a cluster spec, loaded for a command with every
 * problem printed on stderr. */
#ifndef HWEMU_LOAD_H
#define HWEMU_LOAD_H

struct profile_set;
struct cluster_spec;

/* Loads builtins plus dir (NULL: none). Prints every error; 0, or -1 when any profile is bad. */
int model_load_profiles(struct profile_set *ps, const char *dir);
/* Loads a spec file; path NULL means the embedded specs/smoke.yaml. Prints every error; 0 or -1. */
int model_load_spec(struct cluster_spec *s, const char *path, struct profile_set *ps);

#endif
