/* run_files: the runs directory and a run's files, opened so that nobody else can redirect them
 * and written so that a kill -9 or a full file system never leaves a spliced line or half a file
 * (docs/security.md "The runs directory", docs/robustness.md "Runs").
 *
 * The runs directory is held to the root's rules (root_prepare: owned by the engine's user,
 * writable by nobody else, not a symbolic link, under ancestors nobody else can change) and kept
 * open; a run's directory is made with mkdirat (exclusive) and opened with O_NOFOLLOW relative to
 * it, and every file relative to that: new files with O_CREAT | O_EXCL | O_NOFOLLOW, existing ones
 * with O_NOFOLLOW and checked regular.
 *
 * Line files (jobs.jsonl, the otlp/ files) get whole lines only: each line is one pwrite at the end
 * of the last whole line; a short or failed write is cut back (ftruncate) to that end and the line
 * kept in memory, tried again before the next one and at each flush, so the file is always a
 * prefix of whole lines in order. Whole files (state.json, summary.json) are written to
 * <name>.tmp, fsync'd and renamed over the old one, so the old version survives a failure.
 * Never: decide what is written or when (run_output.c, runs.c, the OTLP writer do). */
#ifndef HWEMU_RUN_FILES_H
#define HWEMU_RUN_FILES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The runs directory (created when missing) held to the root's rules: its fd, or -1 with what
 * is wrong and the remedy in err. */
int run_files_dir(const char *path, char *err, size_t errlen);
/* A new directory name in dfd (exclusive: errno EEXIST when the name is taken): its fd, or -1. */
int run_files_mkdir(int dfd, const char *name);
/* An existing directory name in dfd, never through a symbolic link: its fd, or -1 (errno). */
int run_files_opendir(int dfd, const char *name);
/* The whole of regular file name in dfd (no symbolic link; at most max bytes), NUL-terminated,
 * malloc'd; NULL with errno (ENOENT: none, EFBIG: larger than max, EINVAL: not a regular file). */
char *run_files_read(int dfd, const char *name, size_t max, size_t *len);
/* Writes name in dfd whole (tmp, fsync, rename): 0, or -1 with the file and errno in err (the
 * old version, if any, stays). shown: the directory as messages name it. */
int run_files_replace(int dfd, const char *shown, const char *name, const char *text, size_t len, char *err,
                      size_t errlen);
/* A new regular file name in dfd (exclusive, no symbolic link) with text and permission bits
 * mode: 0 or -1 with err. */
int run_files_create(int dfd, const char *shown, const char *name, const char *text, size_t len, unsigned mode,
                     char *err, size_t errlen);

struct line_file {
    int fd;
    off_t len;           /* bytes of whole lines in the file */
    char **pending;      /* lines a write did not take yet, oldest first (with their '\n') */
    int npending, cap;
    uint64_t failures;   /* writes that failed (each cut back and kept) */
    int err;             /* errno of the last failure, 0 once everything is written */
    char *path;          /* as messages name it */
};

/* Creates name in dfd (exclusive) empty: 0, or -1 with err. */
int line_file_create(struct line_file *lf, int dfd, const char *shown, const char *name, char *err, size_t errlen);
/* Opens name in dfd for a resumed run, cut back to its first len bytes (the checkpoint's; -1:
 * as it is), or created when missing and len is 0: 0, or -1 with err. */
int line_file_resume(struct line_file *lf, int dfd, const char *shown, const char *name, off_t len, char *err,
                     size_t errlen);
/* Queues text + '\n' and writes what is queued: false when some line is still waiting. */
bool line_file_put(struct line_file *lf, const char *text);
/* Writes what is queued: false when some line is still waiting (lf->err says why). */
bool line_file_flush(struct line_file *lf);
/* Flushes, closes; returns the lines still waiting (they are lost), 0 when all are written. */
int line_file_close(struct line_file *lf);

#endif
