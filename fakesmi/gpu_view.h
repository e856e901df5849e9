/* gpu_view: fakesmi's window on one node's files. It maps the node's segment the way the shim
 * does (HWEMU_SEGMENT, or HWEMU_NODE under HWEMU_ROOT, default /dev/shm/hwemu), reads files
 * by their node-relative paths (engine/segment/gpu_files.h lists the GPU files), and writes through
 * the attribute's validator exactly as a file write would: refused with the driver's errno,
 * or stored and in effect at once, and an event of the next tick naming the tool's pid. No
 * allocation; a read is a few hundred nanoseconds. */
#ifndef HWEMU_FAKESMI_GPU_VIEW_H
#define HWEMU_FAKESMI_GPU_VIEW_H
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* Opens the node: 0, or -1 with a message in err (which variable to set, which file is
 * missing or damaged). */
int gv_open(char *err, size_t errlen);
/* The node's name (the segment header's). */
const char *gv_node(void);
/* Reads a node-relative file ("state/nvml/gpu0/power_limit_mw") into buf, NUL-terminated,
 * the trailing newline removed. Returns its length, or -ENOENT (no such file), -EISDIR. */
int gv_read(const char *path, char *buf, size_t cap);
/* gv_read of a printf-formatted path. */
int gv_readf(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Does a node-relative path exist (file, directory or link)? */
bool gv_exists(const char *path);
/* The GPUs that fell off the bus (state/faults, engine/segment/seg_faults.h), a bit each. */
uint32_t gv_lost_gpus(void);
/* gv_read parsed as a decimal integer; false when missing or not a number (a token). */
bool gv_read_ll(const char *path, long long *out);
/* Writes text (a newline is added when missing) to an A file: 0, or the errno the write got
 * (EINVAL, EOPNOTSUPP, EACCES for a read-only file, ENOENT). */
int gv_write(const char *path, const char *text);
/* Is the tool running as a user without root (HWEMU_UNPRIVILEGED=1)? */
bool gv_unprivileged(void);

#endif
