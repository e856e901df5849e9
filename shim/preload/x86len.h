/* x86len: the length of one x86-64 instruction (x86len.c). */
#ifndef HWEMU_SHIM_X86LEN_H
#define HWEMU_SHIM_X86LEN_H
#include <stddef.h>
#include <stdint.h>

/* The length in bytes of the 64-bit-mode instruction at p (avail bytes readable there), or -1
 * when the bytes are no instruction this decoder knows, run past avail or past 15 bytes. Pure:
 * reads p[0..avail) only. */
int x86_insn_len(const uint8_t *p, size_t avail);

#endif
