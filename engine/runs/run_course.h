/* run_course: a run's course, course.jsonl in its directory: one line per interval of emulated
 * time (RUN_COURSE_INTERVAL_S by default, SIM_RUN_COURSE_INTERVAL), and one at the run's end:
 * the cluster's and each pool's IT power at that moment (each node's of the interval it began
 * last), the energy so far by class and per pool, jobs by state, the caps in force and the throttling (docs/runs.md "Outputs").
 *
 * A line holds only what the run's clock and state give (no wall time), so repeated runs at
 * --speed max write the same bytes. The file is a line file (run_files.h): whole lines only; its
 * length goes into each checkpoint and a resumed run cuts it back to it and takes the time of the
 * previous line from its last line, so a restart neither loses nor doubles a line.
 * Never: decide when checkpoints happen (runs.c), touch the run's state. */
#ifndef HWEMU_RUN_COURSE_H
#define HWEMU_RUN_COURSE_H
#include "run_files.h"

#include <stdint.h>
#include <sys/types.h>

#define RUN_COURSE_INTERVAL_S 60

struct engine;
struct run;

struct run_course {
    struct line_file f;     /* fd -1: closed */
    int64_t interval_ns;
    int64_t last_ns;        /* the run's clock at the last line (0: none yet); -1: no lines */
    int npools;
    int said_err;           /* the errno of the write failure said last, 0 */
};

/* A new run's course.jsonl in dfd (dir: as messages name it), every interval_ns (0: the
 * default). 0, or -1 with err. */
int run_course_open(struct run_course *c, int dfd, const char *dir, const struct engine *e, int64_t interval_ns,
                    char *err, size_t errlen);
/* A resumed run's: cut back to len bytes (the checkpoint's; -1: as it is), its last line the
 * previous sample. 0, or -1 with err. */
int run_course_resume(struct run_course *c, int dfd, const char *dir, const struct engine *e, int64_t interval_ns,
                      off_t len, char *err, size_t errlen);
/* After a tick: a line when the run's clock crossed the next multiple of the interval. */
void run_course_tick(struct run_course *c, const struct engine *e, const struct run *r);
/* Closes; final: the run ended, a last line at its end (unless one is there already). */
void run_course_close(struct run_course *c, const struct engine *e, const struct run *r, bool final);

#endif
