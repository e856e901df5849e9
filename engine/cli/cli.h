/* cli: what every `hwemu` subcommand shares: exit codes, the SIM_* environment defaults and
 * usage errors. One file per command (cli_<command>.c); main.c dispatches.
 *
 * Exit codes (docs/cli.md "Exit codes"):
 *   0  success
 *   1  the input is invalid (spec or profile errors, each printed on stderr) or the
 *      command failed at run time
 *   2  usage error: unknown command or option, missing argument, bad environment value
 * Options are GNU-style long options; the seed's single-dash spelling (-spec) works too. */
#ifndef HWEMU_CLI_H
#define HWEMU_CLI_H
#include <stdbool.h>
#include <stdint.h>

enum { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2, EXIT_SUSPENDED = 3 /* hwemu run: suspended, resumes */ };

#define HWEMU_VERSION "0.1.0"

/* The value of an environment variable, or NULL when unset or empty. */
const char *cli_env(const char *name);
/* Prints "hwemu CMD: MSG" and a hint to --help on stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct option;
/* A getopt_long_only loop's '?' (opterr = 0) for cmd: "--NAME needs a value" when argv[optind - 1]
 * is a known option missing its value, else "unknown option X" with the ambiguous prefix's
 * options or "did you mean --NEAR?" (closest_word of the table's names). Returns EXIT_USAGE. */
int cli_bad_option(const char *cmd, char **argv, const struct option *opts);
/* The command of usage's "Commands:" table (`hwemu --help`: the first word of each row, a|b|c
 * each) nearest to word, or NULL: the table is the one list of commands. */
const char *cli_closest_command(const char *usage, const char *word);

/* What the engine said (engine.said: '\n'-terminated lines, or NULL), each line printed as
 * "hwemu CMD: LINE" on stderr: the runtime prints nothing for a person itself. */
void cli_print_said(const char *cmd, const char *said);

/* The tick period and worker count of serve and run, each from its option or variable (tick_from
 * and workers_from name which, for the message); defaults 1 s and the online CPUs (at most 12).
 * EXIT_OK, or a usage error printed for cmd. */
int cli_tick_workers(const char *cmd, const char *tick, const char *tick_from, const char *workers,
                     const char *workers_from, int64_t *tick_ns, int *nworkers);

/* --shard / SIM_SHARD (from names which, for the message): "I/N" with 0 <= I < N <= 10000, or
 * "auto/N": I is the trailing -I of the host name (a StatefulSet pod's ordinal: hwemu-2 is 2),
 * from HOSTNAME or else gethostname(). EXIT_OK with *index and *count, or a usage error for cmd. */
int cli_parse_shard(const char *cmd, const char *text, const char *from, int *index, int *count);

int cmd_clusterspec(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_node(const char *what, int argc, char **argv);
int cmd_exec(int argc, char **argv);
/* `hwemu agents`: forks one child per selected node that calls cmd_exec. */
int cmd_agents(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_run(int argc, char **argv);
/* `hwemu runs merge`: the shards' run directories of one run made one (engine/runs/run_merge.h). */
int cmd_runs(int argc, char **argv);
/* `hwemu fault add|list|clear`: a running engine's fault schedule over its HTTP API. */
int cmd_fault(int argc, char **argv);
/* `hwemu report`: one HTML report of run directories (engine/telemetry/report.h). */
int cmd_report(int argc, char **argv);
/* --time emulated|wall (SIM_TIME), --wait-agents N (SIM_WAIT_AGENTS) and --agent-wait D
 * (SIM_AGENT_WAIT) of serve and run (docs/time.md), each NULL when not given. EXIT_OK, or a usage
 * error printed for cmd. */
/* Their lines of serve's and run's --help, continuation lines indented by INDENT (a string literal). */
#define CLI_TIME_HELP(INDENT)                                                                                          \
    "  --time emulated|wall  emulated: the agents of `hwemu exec --time emulated` live in the engine's\n"                \
    INDENT "emulated time; at --speed max it waits for them (SIM_TIME; docs/time.md); default wall\n"                   \
    "  --wait-agents N     with --time emulated: the first tick waits until N agent threads wait on\n"                  \
    INDENT "the clock (SIM_WAIT_AGENTS), at most 60 s\n"                                                                \
    "  --agent-wait D      with --time emulated: how long an agent may run between two of its waits,\n"                 \
    INDENT "in wall time, before time goes on without it (SIM_AGENT_WAIT); default 10s\n"
int cli_time_options(const char *cmd, const char *time, const char *wait_agents, const char *agent_wait,
                     bool *emulated, int *nagents, int64_t *wait_ns);
/* --speed / SIM_SPEED: "max" or 1..1e6; 0 or -1 when invalid. */
int cli_parse_speed(const char *text, double *speed);
/* --batch N (SIM_BATCH_TICKS): 1..1000000 ticks into *ticks; 0, or -1 for anything else. */
int cli_parse_batch(const char *text, int *ticks);

#endif
