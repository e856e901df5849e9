/* wrap_exec: every program a process of the node starts stays on the node, also one started
 * with an emptied or rewritten environment (`env -i`, likwid's access daemon, a service
 * manager's clean environment): the exec family (execve, execv, execvp, execvpe, execl, execlp,
 * execle, fexecve) and posix_spawn/posix_spawnp start it with the variables that put a process
 * on its node added back when the environment given has none of them (no HWEMU_* variable):
 * every HWEMU_* variable the shim was loaded with, and LD_PRELOAD naming the shim (put first in
 * an LD_PRELOAD the caller sets without it). An environment that keeps any HWEMU_* variable is
 * the caller's choice and is passed as given (`env -u LD_PRELOAD prog` leaves the shim out, so
 * the seccomp route alone answers prog). glibc's execv, execvp, execl and execlp reach execve through internal calls
 * no wrapper sees, so they are wrapped too (with environ as their environment). The variables are the
 * ones the shim was loaded with (taken by the constructor, exec_keep_env). A program whose environment is
 * given whole keeps every other variable as given. The seccomp route needs none of this: its
 * filter is inherited across every exec. */
#include "emutime.h"
#include "exec_env.h"
#include "real.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define SHIM_NAME "libhwemu-shim.so"

extern char **environ;

/* The variables to keep, as the shim was loaded with them (exec_keep_env, at the constructor:
 * `env -i` empties environ before its exec, so they cannot be read there). */
static char **kept;
static const char *kept_preload;

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
    const char *p = getenv("LD_PRELOAD");
    kept_preload = p ? strdup(p) : NULL;
}

/* env with the node's variables added: a malloc'd array (the strings are env's, the shim's
 * environment's, or *preload, malloc'd), or NULL when nothing is missing. */
static char **with_node(char *const env[], char **preload)
{
    *preload = NULL;
    const char *mine = kept_preload;
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
    /* the shim's own path: the entry of its LD_PRELOAD that names it */
    const char *shim = NULL;
    size_t shim_len = 0;
    for (const char *p = mine; p && *p;) {
        size_t l = strcspn(p, ": ");
        if (l >= sizeof SHIM_NAME - 1 && !memcmp(p + l - (sizeof SHIM_NAME - 1), SHIM_NAME, sizeof SHIM_NAME - 1)) {
            shim = p;
            shim_len = l;
            break;
        }
        p += l;
        p += strspn(p, ": ");
    }
    const char *given = NULL;
    size_t gi = n;
    for (size_t i = 0; i < n; i++)
        if (!strncmp(env[i], "LD_PRELOAD=", 11))
            given = env[i] + 11, gi = i;
    bool need_preload = shim && (!given || !strstr(given, SHIM_NAME));
    if (!add && !need_preload)
        return NULL;
    char **out = malloc((n + add + 2) * sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (i != gi || !need_preload)
            out[k++] = env[i];
    for (char **e = kept; *e; e++)
        out[k++] = *e;
    if (need_preload) {
        size_t gl = given ? strlen(given) : 0;
        *preload = malloc(11 + shim_len + 1 + gl + 1);
        if (*preload) {
            memcpy(*preload, "LD_PRELOAD=", 11);
            memcpy(*preload + 11, shim, shim_len);
            size_t at = 11 + shim_len;
            if (gl) {
                (*preload)[at++] = ':';
                memcpy(*preload + at, given, gl);
                at += gl;
            }
            (*preload)[at] = 0;
            out[k++] = *preload;
        } else if (given) {
            out[k++] = env[gi];
        }
    }
    out[k] = NULL;
    return out;
}

/* Runs call with env, or with env and the node's variables: the call's result into rc, errno as it
 * left it. */
#define WITH_NODE(env, call_with, rc)                                                                                  \
    do {                                                                                                               \
        char *preload_;                                                                                                \
        char **full_ = with_node((env), &preload_);                                                                    \
        char *const *use_ = full_ ? full_ : (env);                                                                     \
        (rc) = (call_with);                                                                                            \
        int err_ = errno;                                                                                              \
        free(full_);                                                                                                   \
        free(preload_);                                                                                                \
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
