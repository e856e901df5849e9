/* engine_clock: the engine's side of the emulated clock it shares with its agents under
 * `--time emulated` (docs/time.md; the file's contract is engine/segment/seg_clock.h).
 * Owns: making <root>/clock at the start, publishing the emulated time after every tick (the
 * tick's time at --speed max, the tick's rate pair otherwise), at --speed max serving the
 * agents' deadlines that come before the next tick (time moved to each in turn, every agent
 * waited for until it waits again, or let go after the wall bound with an event), freeing the
 * slots of threads that are gone, and the stop (agents go on in wall time). */
#ifndef HWEMU_ENGINE_CLOCK_H
#define HWEMU_ENGINE_CLOCK_H
#include <stddef.h>
#include <stdint.h>

struct engine;

/* After the start's first tick: the clock at the engine's time. 0, or -1 with the message. */
int engine_clock_start(struct engine *e, char *err, size_t errlen);
/* At --speed max, before the tick at emulated time `before`: serves every agent deadline before
 * it (returns when every agent waits past it, or e->stop is set). */
void engine_clock_serve(struct engine *e, int64_t before);
/* After a tick: the tick's time (or rate pair) published to the agents. */
void engine_clock_ticked(struct engine *e);
/* The agents' wake-ups so far (waits that ended at their deadline). */
uint64_t engine_clock_wakeups(const struct engine *e);
/* Marks the clock stopped (agents go on in wall time) and frees the engine's side. */
void engine_clock_stop(struct engine *e);

#endif
