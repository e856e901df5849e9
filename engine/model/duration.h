/* duration: Go-style duration strings ("1s", "250ms", "1m30s", "1.5h") as SIM_EMULATE_TICK
 * and the seed's other durations spell them. Units: ns, us (or µs), ms, s, m, h. */
#ifndef HWEMU_DURATION_H
#define HWEMU_DURATION_H
#include <stdbool.h>
#include <stdint.h>

/* Nanoseconds; false (and *ns untouched) when s is not a duration or overflows. "0" is 0. */
bool duration_parse(const char *s, int64_t *ns);

#endif
