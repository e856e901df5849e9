/* real: the libc functions the shim forwards to, resolved once with dlsym(RTLD_NEXT) (so an
 * interposer stacked behind the shim keeps working). This is the one list of every symbol the
 * shim wraps: SHIM_SYMBOLS names each with its type; a wrapper lives in one of the wrap_*.c
 * files. Internal code calls libc only through REAL(name), never the wrapped name, so the shim
 * never re-enters itself. Before the constructor ran, REAL() resolves on first use. */
#ifndef HWEMU_SHIM_REAL_H
#define HWEMU_SHIM_REAL_H
#include <dirent.h>
#include <ftw.h>
#include <glob.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

struct statx;

#define SHIM_SYMBOLS(X)                                                                                \
    /* opening */                                                                                  \
    X(int, open, (const char *, int, ...))                                                         \
    X(int, open64, (const char *, int, ...))                                                       \
    X(int, __open_2, (const char *, int))                                                          \
    X(int, __open64_2, (const char *, int))                                                        \
    X(int, openat, (int, const char *, int, ...))                                                  \
    X(int, openat64, (int, const char *, int, ...))                                                \
    X(int, __openat_2, (int, const char *, int))                                                   \
    X(int, __openat64_2, (int, const char *, int))                                                 \
    X(int, creat, (const char *, mode_t))                                                          \
    X(int, creat64, (const char *, mode_t))                                                        \
    /* I/O on a descriptor */                                                                      \
    X(ssize_t, read, (int, void *, size_t))                                                        \
    X(ssize_t, __read_chk, (int, void *, size_t, size_t))                                          \
    X(ssize_t, pread, (int, void *, size_t, off_t))                                                \
    X(ssize_t, pread64, (int, void *, size_t, off64_t))                                            \
    X(ssize_t, __pread_chk, (int, void *, size_t, off_t, size_t))                                  \
    X(ssize_t, __pread64_chk, (int, void *, size_t, off64_t, size_t))                              \
    X(ssize_t, readv, (int, const struct iovec *, int))                                            \
    X(ssize_t, preadv, (int, const struct iovec *, int, off_t))                                    \
    X(ssize_t, preadv64, (int, const struct iovec *, int, off64_t))                                \
    X(ssize_t, write, (int, const void *, size_t))                                                 \
    X(ssize_t, pwrite, (int, const void *, size_t, off_t))                                         \
    X(ssize_t, pwrite64, (int, const void *, size_t, off64_t))                                     \
    X(ssize_t, writev, (int, const struct iovec *, int))                                           \
    X(ssize_t, pwritev, (int, const struct iovec *, int, off_t))                                   \
    X(ssize_t, pwritev64, (int, const struct iovec *, int, off64_t))                               \
    X(off_t, lseek, (int, off_t, int))                                                             \
    X(off64_t, lseek64, (int, off64_t, int))                                                       \
    X(int, close, (int))                                                                           \
    X(int, dup, (int))                                                                             \
    X(int, dup2, (int, int))                                                                       \
    X(int, dup3, (int, int, int))                                                                  \
    X(int, fcntl, (int, int, ...))                                                                 \
    X(int, fcntl64, (int, int, ...))                                                               \
    X(ssize_t, copy_file_range, (int, off64_t *, int, off64_t *, size_t, unsigned))                \
    X(ssize_t, sendfile, (int, int, off_t *, size_t))                                              \
    X(ssize_t, sendfile64, (int, int, off64_t *, size_t))                                          \
    X(ssize_t, splice, (int, off64_t *, int, off64_t *, size_t, unsigned))                         \
    X(int, ioctl, (int, unsigned long, ...))                                                       \
    X(void *, mmap, (void *, size_t, int, int, int, off_t))                                        \
    X(void *, mmap64, (void *, size_t, int, int, int, off64_t))                                    \
    /* metadata */                                                                                 \
    X(int, stat, (const char *, struct stat *))                                                    \
    X(int, stat64, (const char *, struct stat64 *))                                                \
    X(int, lstat, (const char *, struct stat *))                                                   \
    X(int, lstat64, (const char *, struct stat64 *))                                               \
    X(int, fstat, (int, struct stat *))                                                            \
    X(int, fstat64, (int, struct stat64 *))                                                        \
    X(int, fstatat, (int, const char *, struct stat *, int))                                       \
    X(int, fstatat64, (int, const char *, struct stat64 *, int))                                   \
    X(int, __xstat, (int, const char *, struct stat *))                                            \
    X(int, __xstat64, (int, const char *, struct stat64 *))                                        \
    X(int, __lxstat, (int, const char *, struct stat *))                                           \
    X(int, __lxstat64, (int, const char *, struct stat64 *))                                       \
    X(int, __fxstat, (int, int, struct stat *))                                                    \
    X(int, __fxstat64, (int, int, struct stat64 *))                                                \
    X(int, __fxstatat, (int, int, const char *, struct stat *, int))                               \
    X(int, __fxstatat64, (int, int, const char *, struct stat64 *, int))                           \
    X(int, statx, (int, const char *, int, unsigned, struct statx *))                              \
    X(int, statfs, (const char *, struct statfs *))                                                \
    X(int, statfs64, (const char *, struct statfs64 *))                                            \
    X(int, fstatfs, (int, struct statfs *))                                                        \
    X(int, fstatfs64, (int, struct statfs64 *))                                                    \
    X(int, access, (const char *, int))                                                            \
    X(int, faccessat, (int, const char *, int, int))                                               \
    X(int, euidaccess, (const char *, int))                                                        \
    X(int, eaccess, (const char *, int))                                                           \
    X(ssize_t, readlink, (const char *, char *, size_t))                                           \
    X(ssize_t, readlinkat, (int, const char *, char *, size_t))                                    \
    X(ssize_t, __readlink_chk, (const char *, char *, size_t, size_t))                             \
    X(ssize_t, __readlinkat_chk, (int, const char *, char *, size_t, size_t))                      \
    X(char *, realpath, (const char *, char *))                                                    \
    X(char *, __realpath_chk, (const char *, char *, size_t))                                      \
    X(char *, canonicalize_file_name, (const char *))                                              \
    X(int, chdir, (const char *))                                                                  \
    X(ssize_t, getxattr, (const char *, const char *, void *, size_t))                             \
    X(ssize_t, lgetxattr, (const char *, const char *, void *, size_t))                            \
    X(ssize_t, fgetxattr, (int, const char *, void *, size_t))                                     \
    X(ssize_t, listxattr, (const char *, char *, size_t))                                          \
    X(ssize_t, llistxattr, (const char *, char *, size_t))                                         \
    X(ssize_t, flistxattr, (int, char *, size_t))                                                  \
    X(int, fchdir, (int))                                                                          \
    /* the namespace: nothing can be created, removed or renamed */                                \
    X(int, mkdir, (const char *, mode_t))                                                          \
    X(int, mkdirat, (int, const char *, mode_t))                                                   \
    X(int, rmdir, (const char *))                                                                  \
    X(int, unlink, (const char *))                                                                 \
    X(int, unlinkat, (int, const char *, int))                                                     \
    X(int, rename, (const char *, const char *))                                                   \
    X(int, renameat, (int, const char *, int, const char *))                                       \
    X(int, symlink, (const char *, const char *))                                                  \
    X(int, truncate, (const char *, off_t))                                                        \
    /* directories */                                                                              \
    X(DIR *, opendir, (const char *))                                                              \
    X(DIR *, fdopendir, (int))                                                                     \
    X(struct dirent *, readdir, (DIR *))                                                           \
    X(struct dirent64 *, readdir64, (DIR *))                                                       \
    X(int, readdir_r, (DIR *, struct dirent *, struct dirent **))                                  \
    X(int, readdir64_r, (DIR *, struct dirent64 *, struct dirent64 **))                            \
    X(int, closedir, (DIR *))                                                                      \
    X(int, dirfd, (DIR *))                                                                         \
    X(void, rewinddir, (DIR *))                                                                    \
    X(long, telldir, (DIR *))                                                                      \
    X(void, seekdir, (DIR *, long))                                                                \
    X(int, scandir, (const char *, struct dirent ***, int (*)(const struct dirent *),             \
                     int (*)(const struct dirent **, const struct dirent **)))                     \
    X(int, scandir64, (const char *, struct dirent64 ***, int (*)(const struct dirent64 *),       \
                       int (*)(const struct dirent64 **, const struct dirent64 **)))               \
    X(int, glob, (const char *, int, int (*)(const char *, int), glob_t *))                        \
    X(int, glob64, (const char *, int, int (*)(const char *, int), glob64_t *))                    \
    X(ssize_t, getdents64, (int, void *, size_t))                                                  \
    X(int, nftw, (const char *, int (*)(const char *, const struct stat *, int, struct FTW *), int, int)) \
    X(int, nftw64, (const char *, int (*)(const char *, const struct stat64 *, int, struct FTW *), int, int)) \
    X(int, ftw, (const char *, int (*)(const char *, const struct stat *, int), int))               \
    X(int, ftw64, (const char *, int (*)(const char *, const struct stat64 *, int), int))           \
    /* what the process learns about the machine */                                               \
    X(long, sysconf, (int))                                                                        \
    X(int, get_nprocs, (void))                                                                     \
    X(int, get_nprocs_conf, (void))                                                                \
    X(int, sched_getaffinity, (pid_t, size_t, void *))                                             \
    X(int, sched_setaffinity, (pid_t, size_t, const void *))                                       \
    X(long, syscall, (long, ...))                                                                  \
    X(int, getloadavg, (double *, int))                                                            \
    /* stdio */                                                                                    \
    X(FILE *, fopen, (const char *, const char *))                                                 \
    X(FILE *, fopen64, (const char *, const char *))                                               \
    X(FILE *, freopen, (const char *, const char *, FILE *))                                       \
    X(FILE *, freopen64, (const char *, const char *, FILE *))                                     \
    X(FILE *, fdopen, (int, const char *))                                                         \
    /* loading libraries */                                                                        \
    X(void *, dlopen, (const char *, int))                                                         \
    X(char *, dlerror, (void))                                                                     \
    /* signals: SIGSEGV, SIGILL stay the CPUID emulation's (cpufault.c) */                         \
    X(int, sigaction, (int, const struct sigaction *, struct sigaction *))                         \
    X(__sighandler_t, signal, (int, __sighandler_t))                                               \
    /* starting programs */                                                                        \
    X(int, execve, (const char *, char *const[], char *const[]))                                   \
    X(int, execvpe, (const char *, char *const[], char *const[]))                                  \
    X(int, fexecve, (int, char *const[], char *const[]))                                           \
    X(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *,                \
                         const posix_spawnattr_t *, char *const[], char *const[]))                 \
    X(int, posix_spawnp, (pid_t *, const char *, const posix_spawn_file_actions_t *,               \
                          const posix_spawnattr_t *, char *const[], char *const[]))                 \
    X(int, system, (const char *))                                                                 \
    X(FILE *, popen, (const char *, const char *))                                                 \
    /* time (emutime.h: only under HWEMU_TIME=emulated) */                                         \
    X(int, clock_gettime, (clockid_t, struct timespec *))                                          \
    X(int, gettimeofday, (struct timeval *restrict, void *restrict))                               \
    X(time_t, time, (time_t *))                                                                    \
    X(int, timespec_get, (struct timespec *, int))                                                 \
    X(int, clock_nanosleep, (clockid_t, int, const struct timespec *, struct timespec *))          \
    X(int, nanosleep, (const struct timespec *, struct timespec *))                                \
    X(unsigned int, sleep, (unsigned int))                                                         \
    X(int, usleep, (useconds_t))                                                                   \
    /* timers and the waits for a signal (wrap_timer.c) */                                         \
    X(int, timerfd_create, (clockid_t, int))                                                       \
    X(int, timerfd_settime, (int, int, const struct itimerspec *, struct itimerspec *))            \
    X(int, timerfd_gettime, (int, struct itimerspec *))                                            \
    X(int, timer_create, (clockid_t, struct sigevent *restrict, timer_t *restrict))                \
    X(int, timer_settime, (timer_t, int, const struct itimerspec *restrict, struct itimerspec *restrict)) \
    X(int, timer_gettime, (timer_t, struct itimerspec *))                                          \
    X(int, timer_getoverrun, (timer_t))                                                            \
    X(int, timer_delete, (timer_t))                                                                \
    X(int, setitimer, (__itimer_which_t, const struct itimerval *, struct itimerval *))            \
    X(int, getitimer, (__itimer_which_t, struct itimerval *))                                      \
    X(unsigned int, alarm, (unsigned int))                                                         \
    X(int, pause, (void))                                                                          \
    X(int, sigsuspend, (const sigset_t *))                                                         \
    /* waits with timeouts (wrap_wait.c) */                                                        \
    X(int, select, (int, fd_set *, fd_set *, fd_set *, struct timeval *))                          \
    X(int, pselect, (int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *)) \
    X(int, poll, (struct pollfd *, nfds_t, int))                                                   \
    X(int, ppoll, (struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))            \
    X(int, epoll_wait, (int, struct epoll_event *, int, int))                                      \
    X(int, epoll_pwait, (int, struct epoll_event *, int, int, const sigset_t *))                   \
    X(int, epoll_pwait2, (int, struct epoll_event *, int, const struct timespec *, const sigset_t *)) \
    X(int, pthread_cond_timedwait, (pthread_cond_t *, pthread_mutex_t *, const struct timespec *)) \
    X(int, pthread_cond_clockwait, (pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *)) \
    X(int, pthread_mutex_timedlock, (pthread_mutex_t *, const struct timespec *))                  \
    X(int, pthread_mutex_clocklock, (pthread_mutex_t *, clockid_t, const struct timespec *))       \
    X(int, sem_timedwait, (sem_t *, const struct timespec *))                                      \
    X(int, sem_clockwait, (sem_t *, clockid_t, const struct timespec *))                           \
    /* processes (wrap_proc.c) */                                                                  \
    X(pid_t, fork, (void))                                                                         \
    X(int, kill, (pid_t, int))                                                                     \
    X(pid_t, waitpid, (pid_t, int *, int))                                                         \
    X(pid_t, wait, (int *))                                                                        \
    X(pid_t, wait3, (int *, int, struct rusage *))                                                 \
    X(pid_t, wait4, (pid_t, int *, int, struct rusage *))                                          \
    X(int, waitid, (idtype_t, id_t, siginfo_t *, int))

#define SHIM_DECLARE(ret, name, args) extern ret(*real_##name) args;
SHIM_SYMBOLS(SHIM_DECLARE)
#undef SHIM_DECLARE

void shim_resolve(void);
/* REAL(open) is the next open in the lookup order (libc's). */
#define REAL(name) (real_##name ? real_##name : (shim_resolve(), real_##name))

/* Set errno and return -1: the shape of every emulated failure. */
static inline int shim_fail(int err)
{
    extern int *__errno_location(void);
    *__errno_location() = err;
    return -1;
}

#endif
