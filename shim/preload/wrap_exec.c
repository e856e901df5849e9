/* wrap_exec: every program a process of the node starts stays on the node, also one started
 * with an emptied or rewritten environment (`env -i`, likwid's access daemon, a service
 * manager's clean environment): the exec family (execve, execv, execvp, execvpe, execl, execlp,
 * execle, fexecve) and posix_spawn/posix_spawnp start it with the variables that put a process
 * on its node added back when the environment given has none of them (no HWEMU_* variable):
 * every HWEMU_* variable the shim was loaded with, LD_PRELOAD naming the shim and LD_AUDIT naming
 * the audit module (audit.c) (each put first in a list the caller sets without it). An environment that keeps any HWEMU_* variable is
 * the caller's choice and is passed as given (`env -u LD_PRELOAD prog` leaves the shim out, so
 * the seccomp route alone answers prog). glibc's execv, execvp, execl and execlp reach execve through internal calls
 * no wrapper sees, so they are wrapped too (with environ as their environment). The variables are the
 * ones the shim was loaded with (taken by the constructor, exec_keep_env). A program whose environment is
 * given whole keeps every other variable as given. The seccomp route needs none of this: its
 * filter is inherited across every exec. Every start, system and popen included, begins the new
 * program with the host's RDTSC (tsctrap.c). */
#include "emutime.h"
#include "exec_env.h"
#include "real.h"
#include "tsctrap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define SHIM_NAME "libhwemu-shim.so"
#define AUDIT_NAME "libhwemu-audit.so"

extern char **environ;

/* The variables to keep, as the shim was loaded with them (exec_keep_env, at the constructor:
 * `env -i` empties environ before its exec, so they cannot be read there). */
static char **kept;

/* A list variable with an entry of hwemu's: LD_PRELOAD the shim, LD_AUDIT the audit module
 * (audit.c), GLIBC_TUNABLES the static TLS room the shim needs beside it (`hwemu exec` sets
 * them); mine is its value the shim was loaded with. */
struct loader_list {
    const char *var; /* "LD_PRELOAD=" */
    const char *lib; /* hwemu's entry in it: the file name it ends with, or the tunable it starts with */
    bool tunable;
    const char *mine;
};
static struct loader_list lists[] = {{"LD_PRELOAD=", SHIM_NAME, false, NULL},
                                     {"LD_AUDIT=", AUDIT_NAME, false, NULL},
                                     {"GLIBC_TUNABLES=", "glibc.rtld.optional_static_tls=", true, NULL}};
#define N_LISTS (sizeof lists / sizeof lists[0])

void exec_keep_env(void)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n += !strncmp(*e, "HWEMU_", 6) && strchr(*e, '=');
    kept = calloc(n + 1, sizeof *kept);
    if (!kept)
        return;
    size_t k = 0;
    for (char **e = environ; e && *e && k < n; e++)
        if (!strncmp(*e, "HWEMU_", 6) && strchr(*e, '='))
            kept[k++] = strdup(*e);
    for (size_t i = 0; i < N_LISTS; i++) {
        char name[16];
        snprintf(name, sizeof name, "%.*s", (int)strlen(lists[i].var) - 1, lists[i].var);
        const char *p = getenv(name);
        lists[i].mine = p ? strdup(p) : NULL;
    }
}

/* "VAR=<hwemu's entry of l.mine>[:given]" (malloc'd) when env's value (given, NULL: none) lacks
 * hwemu's library, else NULL. */
static char *with_library(const struct loader_list *l, const char *given)
{
    const char *lib = NULL;
    size_t lib_len = 0, want = strlen(l->lib);
    for (const char *p = l->mine; p && *p;) {
        size_t n = strcspn(p, ": ");
        if (n >= want && !memcmp(l->tunable ? p : p + n - want, l->lib, want)) {
            lib = p;
            lib_len = n;
            break;
        }
        p += n;
        p += strspn(p, ": ");
    }
    if (!lib || (given && strstr(given, l->lib)))
        return NULL;
    size_t vl = strlen(l->var), gl = given ? strlen(given) : 0;
    char *out = malloc(vl + lib_len + 1 + gl + 1);
    if (!out)
        return NULL;
    memcpy(out, l->var, vl);
    memcpy(out + vl, lib, lib_len);
    size_t at = vl + lib_len;
    if (gl) {
        out[at++] = ':';
        memcpy(out + at, given, gl);
        at += gl;
    }
    out[at] = 0;
    return out;
}

/* env with the node's variables added: a malloc'd array (the strings are env's, the shim's
 * environment's, or made[], malloc'd), or NULL when nothing is missing. */
static char **with_node(char *const env[], char *made[N_LISTS])
{
    for (size_t i = 0; i < N_LISTS; i++)
        made[i] = NULL;
    if (!kept || !kept[0])
        return NULL; /* not on a node: nothing to keep */
    size_t n = 0, add = 0;
    while (env && env[n])
        n++;
    for (size_t i = 0; i < n; i++)
        if (!strncmp(env[i], "HWEMU_", 6))
            return NULL; /* the caller kept the node's variables and chose the rest (env -u LD_PRELOAD) */
    for (char **e = kept; *e; e++)
        add++;
    size_t given_at[N_LISTS];
    for (size_t k = 0; k < N_LISTS; k++) {
        const char *given = NULL;
        given_at[k] = n;
        for (size_t i = 0; i < n; i++)
            if (!strncmp(env[i], lists[k].var, strlen(lists[k].var)))
                given = env[i] + strlen(lists[k].var), given_at[k] = i;
        made[k] = with_library(&lists[k], given);
    }
    char **out = malloc((n + add + N_LISTS + 1) * sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool replaced = false;
        for (size_t l = 0; l < N_LISTS; l++)
            replaced |= made[l] && given_at[l] == i;
        if (!replaced)
            out[k++] = env[i];
    }
    for (char **e = kept; *e; e++)
        out[k++] = *e;
    for (size_t l = 0; l < N_LISTS; l++)
        if (made[l])
            out[k++] = made[l];
    out[k] = NULL;
    return out;
}

/* Runs call with env, or with env and the node's variables, with the host's RDTSC for the new
 * image (tsctrap.c): the call's result into rc, errno as it left it. */
#define WITH_NODE(env, call_with, rc)                                                                                  \
    do {                                                                                                               \
        char *made_[N_LISTS];                                                                                          \
        char **full_ = with_node((env), made_);                                                                        \
        char *const *use_ = full_ ? full_ : (env);                                                                     \
        bool tsc_ = tsc_exec_begin();                                                                                  \
        (rc) = (call_with);                                                                                            \
        int err_ = errno;                                                                                              \
        tsc_exec_end(tsc_);                                                                                            \
        free(full_);                                                                                                   \
        for (size_t l_ = 0; l_ < N_LISTS; l_++)                                                                        \
            free(made_[l_]);                                                                                           \
        errno = err_;                                                                                                  \
    } while (0)

/* An exec: the program goes on holding this process's clock slot (emutime.h), with the node's
 * variables. */
#define EXEC_WITH(envp, call_with)                                                                                     \
    do {                                                                                                               \
        char **clocked_ = emutime_exec_env((envp), -1);                                                                \
        char *const *env_ = clocked_ ? clocked_ : (envp);                                                              \
        int rc_;                                                                                                       \
        WITH_NODE(env_, call_with, rc_);                                                                               \
        int e_ = errno;                                                                                                \
        free(clocked_);                                                                                                \
        errno = e_;                                                                                                    \
        return rc_;                                                                                                    \
    } while (0)

/* A spawn: the child holds the clock from its start on a slot claimed for it here. */
#define SPAWN_WITH(pid, envp, call_with)                                                                               \
    do {                                                                                                               \
        int slot_ = emutime_fork_prepare();                                                                            \
        char **clocked_ = emutime_exec_env((envp), slot_);                                                             \
        char *const *env_ = clocked_ ? clocked_ : (envp);                                                              \
        pid_t child_ = 0, *pid_ = (pid) ? (pid) : &child_;                                                             \
        int rc_;                                                                                                       \
        WITH_NODE(env_, call_with, rc_);                                                                               \
        emutime_spawned(slot_, rc_, *pid_);                                                                            \
        free(clocked_);                                                                                                \
        return rc_;                                                                                                    \
    } while (0)

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    EXEC_WITH(envp, REAL(execve)(path, argv, use_));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    EXEC_WITH(envp, REAL(execvpe)(file, argv, use_));
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    EXEC_WITH(envp, REAL(fexecve)(fd, argv, use_));
}

EXPORT int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

EXPORT int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

/* The arguments after arg0 up to the NULL, as an argv (at most 4096, as the kernel's limit on
 * strings is far above what a call site passes). */
#define ARGV_FROM(arg0, ap, argv)                                                                                      \
    const char *argv[4096];                                                                                            \
    size_t argc_ = 0;                                                                                                  \
    argv[argc_++] = (arg0);                                                                                            \
    while (argc_ < 4095 && (argv[argc_] = va_arg(ap, const char *)))                                                  \
        argc_++;                                                                                                       \
    argv[argc_] = NULL

EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    ARGV_FROM(arg, ap, argv);
    va_end(ap);
    return execve(path, (char *const *)argv, environ);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    ARGV_FROM(arg, ap, argv);
    va_end(ap);
    return execvpe(file, (char *const *)argv, environ);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    ARGV_FROM(arg, ap, argv);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, (char *const *)argv, envp);
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    SPAWN_WITH(pid, envp, REAL(posix_spawn)(pid_, path, fa, attr, argv, use_));
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    SPAWN_WITH(pid, envp, REAL(posix_spawnp)(pid_, file, fa, attr, argv, use_));
}

/* system and popen start /bin/sh through glibc's internal posix_spawn, which no wrapper sees:
 * the shell starts with the host's RDTSC (tsctrap.c; its environment is the caller's environ,
 * which keeps the node's variables unless the caller removed them). */
EXPORT int system(const char *command)
{
    bool tsc = tsc_exec_begin();
    int rc = REAL(system)(command);
    int err = errno;
    tsc_exec_end(tsc);
    errno = err;
    return rc;
}

EXPORT FILE *popen(const char *command, const char *type)
{
    bool tsc = tsc_exec_begin();
    FILE *f = REAL(popen)(command, type);
    int err = errno;
    tsc_exec_end(tsc);
    errno = err;
    return f;
}
