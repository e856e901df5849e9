/* supervisor: `hwemu exec` for programs that bypass libc (Go, static binaries): a seccomp
 * user-notification supervisor that answers the agent's file system calls on the node's paths
 * from the same emulation core as the shim (emu.c, segment.c, seg_attr.c), and lets every other
 * system call run in the kernel (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
 *
 * Processes. `hwemu exec` (P, the pid the caller knows) forks the supervisor S, which forks the
 * agent C. C installs the filter (inherited by everything it starts), hands the listener to S
 * and execs CMD. S is C's parent and a child subreaper, so every supervised process stays its
 * descendant (ptrace-level access to their memory under Yama) and orphans are reaped by it; S
 * lives until the last supervised process is gone (the listener hangs up). P waits for C's
 * status (which S sends it), forwards the signals other processes send it to C, and exits as C
 * did, even when C left background children that S still serves. If S dies, C (whose parent
 * death signal is SIGKILL) dies with it and P reports it; S itself reports every failure it
 * survives on stderr. See supervisor.c for the filter and the answers.
 *
 * Routes. `--intercept=auto` takes the seccomp route for statically linked ELF programs and for
 * Go programs (a .go.buildinfo section or a Go build-ID note, whatever their linkage), the
 * preload route (LD_PRELOAD only, no filter, no cost) for other dynamically linked programs, and
 * the seccomp route when it cannot tell (an unreadable file, an unknown format). A `#!` script
 * takes its interpreter's route. The seccomp route keeps LD_PRELOAD set, so dynamically linked
 * programs the agent starts are answered by their own shim without a round trip.
 * What it must never do: leave the agent blocked in a notification (every notification gets a
 * reply: an answer, an errno or CONTINUE), or fail silently. */
#ifndef HWEMU_SHIM_SUPERVISOR_H
#define HWEMU_SHIM_SUPERVISOR_H
#include <stdbool.h>
#include <stddef.h>

enum sv_route { SV_ROUTE_PRELOAD = 1, SV_ROUTE_SECCOMP = 2 };

/* The route auto picks for cmd (looked up in PATH as execvp does); why says why in a few words
 * ("statically linked", "a Go program", ...). */
enum sv_route sv_route_for(const char *cmd, char *why, size_t len);

/* Can the seccomp route give cmd emulated time (docs/time.md "Go agents")? True for a statically
 * linked Go program (its runtime reads the auxiliary vector after its first arch_prctl, where
 * the supervisor hides the vDSO); why says what cmd is otherwise. */
bool sv_time_fits(const char *cmd, char *why, size_t len);

/* Runs argv[0] (execvp) under the supervisor, with the environment as it is (HWEMU_NODE,
 * HWEMU_ROOT set). Returns the status `hwemu exec` exits with: CMD's exit code, 127/126 when
 * it cannot be found/run, 1 when the supervisor could not start or died; when CMD was killed by
 * a signal, P is killed by the same signal (it returns 128 + the signal if that fails). */
int sv_exec(char *const argv[]);

#endif
