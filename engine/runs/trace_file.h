/* trace_file: reading a trace the run API names (POST /runs {"tracePath": ...}) as the engine's
 * user, but only from the directory the operator allowed (hwemu serve --trace-dir,
 * SIM_TRACE_DIR; docs/security.md "Traces named over HTTP").
 * Owns: resolving the name inside that directory (relative, or absolute under it; no "..", no
 * symbolic link at any component, each opened with O_NOFOLLOW from the one before), what may be
 * read (regular files only: a FIFO or device is refused without being opened for reading, so it
 * never blocks), the size limit, and the permission bits of what was read (the copies a run
 * makes keep them). Messages name the path as given and the directory, never the content.
 * Never: parsing the trace (trace.c). */
#ifndef HWEMU_TRACE_FILE_H
#define HWEMU_TRACE_FILE_H
#include <stddef.h>

enum { TRACE_FILE_MAX = 64 << 20 }; /* bytes of one tracePath (a directory: all its *.jsonl) */

enum trace_file_status {
    TRACE_FILE_OK = 0,
    TRACE_FILE_REFUSED,  /* outside the directory, through a link, or tracePath is off: 403 */
    TRACE_FILE_MISSING,  /* no such file: 404 */
    TRACE_FILE_NOT_REGULAR, /* a FIFO, device, socket, or a directory without *.jsonl: 400 */
    TRACE_FILE_TOO_BIG,  /* over max bytes: 413 */
    TRACE_FILE_ERROR,    /* cannot be read: 400 */
};

/* Reads name (a file, or a directory of *.jsonl concatenated in name order) inside dir (NULL:
 * tracePath is off). On TRACE_FILE_OK *text is malloc'd and NUL-terminated, *mode the
 * permission bits every file read has (the bits of several ANDed). Otherwise a message in err. */
enum trace_file_status trace_file_read(const char *dir, const char *name, size_t max, char **text, size_t *len,
                                       unsigned *mode, char *err, size_t errlen);

#endif
