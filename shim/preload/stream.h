/* stream: FILE streams on emulated descriptors, for wrap_stdio.c (fopen, fdopen, freopen of a
 * node's file) and for the standard streams over a shell redirection (alias.c).
 *
 * glibc's FILE streams read and write through its internal calls, which no wrapper sees, so a
 * stream on an emulated descriptor is a fopencookie stream whose callbacks go through the
 * shim's exported read, write, lseek64 and close, and so behave exactly as those calls do:
 *   read     a read at offset 0 computes the content again (rewind, fseek 0 re-read a value)
 *   write    one store per write call, answered at once with the kernel's errno; the stream
 *            has a 4096-byte buffer, the kernel's page, so fprintf + fclose is one store, and
 *            a refused store makes fwrite/fflush/fclose fail with that errno (fopencookie(3):
 *            the callback returns 0, never -1, on error, or glibc counts the write as done)
 *   seek     lseek on the descriptor
 *   close    close of the descriptor
 * The stream's fileno() is the emulated descriptor, so fstat(fileno(f)) answers as sysfs.
 *
 * The standard streams. A shell's `echo 5 > energy_limit` (bash's builtins, and every program
 * it execs with that number: /bin/echo, printf, tee's stdout) writes through glibc's own
 * stdin/stdout/stderr, the static streams of descriptors 0, 1 and 2. While one of those
 * numbers is an alias of an emulated file (alias.h), the matching variable (stdout, ...) points
 * at a cookie stream on the number, so its writes are stores that fail as the kernel's would
 * (bash's `write error: Invalid argument`, coreutils' close_stdout); glibc's stream is put
 * back, untouched, when the number is closed or replaced. glibc's stderr stays unbuffered,
 * stdin and stdout fully buffered, as on a sysfs file. Not done in a vfork child (it shares
 * the parent's memory: the program it execs attaches its own), nor when the program pointed
 * the variable at another stream. */
#ifndef HWEMU_SHIM_STREAM_H
#define HWEMU_SHIM_STREAM_H
#include <stdio.h>

/* A cookie stream owning emulated descriptor fd (fclose closes it); NULL with errno, fd left
 * open. */
FILE *stream_open(int fd, const char *mode);

/* fd (0, 1 or 2) became an alias of an emulated file: point the standard stream of that
 * number at a cookie stream on it. Any other number: nothing. */
void stream_std_attach(int fd);
/* fd stops being an alias (closed or replaced): flush what the cookie stream holds (stored
 * while the number is still the file's) and point the variable back at glibc's stream. */
void stream_std_detach(int fd);
/* At start (the constructor): a fork child's pid is known, so a vfork child can be told apart. */
void stream_init(void);

#endif
