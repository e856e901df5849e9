/* jsontext: checks on the raw text of a JSON document that cJSON cannot make once it parsed it.
 * Owns: finding a string escape \u0000 (cJSON ends the string there, so "a\u0000b" reads as
 * "a": a label key or job id cut short) and bytes that are not UTF-8 (cJSON copies them as they
 * are, so they reach events.jsonl and jobs.jsonl). RFC 8259 §8.1: JSON text is UTF-8. */
#ifndef HWEMU_JSONTEXT_H
#define HWEMU_JSONTEXT_H
#include <stddef.h>

/* The offset of the first \u0000 escape (the backslash) in text[0..len), or -1. */
long jsontext_nul_escape(const char *text, size_t len);
/* The offset of the first byte that does not belong to well-formed UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF), or -1. */
long jsontext_bad_utf8(const char *text, size_t len);

#endif
