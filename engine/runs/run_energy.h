/* run_energy: the energy split's entry points for run.c's node hook (private to engine/runs):
 * where node n's counting begins (its counters now, per part), and the interval since the last
 * hook split between the jobs that held node i and idle, one split per tick of it (ticks is 1
 * but where the node did not step for several ticks of a --speed max batch, each tick_ns long,
 * over which its powers held: each is split as its own step would have split it). The totals
 * are run_energy (run.h). */
#ifndef HWEMU_RUN_ENERGY_H
#define HWEMU_RUN_ENERGY_H
#include "run.h"

void run_energy_begin(struct run_node *n, const struct node *nd);
/* After a restart that a crash left: the counters' increase since the checkpoint is the redone
 * work's, no job's (run.h resume_gap_uj); counting goes on from now. */
void run_energy_resume_gap(struct run_node *n, const struct node *nd);
void run_energy_account(struct run *r, int i, struct node *nd, int64_t ticks, int64_t tick_ns);

#endif
