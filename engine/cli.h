/* cli: what every `hwemu` subcommand shares: exit codes, the SIM_* environment defaults,
 * and loading profiles and specs with their errors printed for a person.
 *
 * Exit codes (README "Exit codes"):
 *   0  success
 *   1  the input is invalid (spec or profile errors, each printed on stderr) or the
 *      command failed at run time
 *   2  usage error: unknown command or option, missing argument, bad environment value
 * Options are GNU-style long options; the seed's single-dash spelling (-spec) works too. */
#ifndef HWEMU_CLI_H
#define HWEMU_CLI_H
#include <stdbool.h>

struct profile_set;
struct cluster_spec;

enum { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

#define HWEMU_VERSION "0.1.0"

/* The value of an environment variable, or NULL when unset or empty. */
const char *cli_env(const char *name);
/* Loads builtins plus dir (NULL: none). Prints every error; returns EXIT_OK or EXIT_INVALID. */
int cli_load_profiles(struct profile_set *ps, const char *dir);
/* Loads a spec file; path NULL means the embedded specs/smoke.yaml. Prints every error. */
int cli_load_spec(struct cluster_spec *s, const char *path, struct profile_set *ps);
/* Prints "hwemu CMD: MSG" and a hint to --help on stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int cmd_clusterspec(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_node(const char *what, int argc, char **argv);
int cmd_exec(int argc, char **argv);

#endif
