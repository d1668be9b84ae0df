/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Least-loaded machine selection (seed 002 §3.3 step 5; §3.1 group scheduler).
 *
 * "Load" of machine j for a sub-task is its expected completion time if the sub-task were
 * sent now: backlog_j + s_j, with backlog_j = max(busy_until_j - now, 0) and s_j the sub-task's
 * time on j (docs/model.md). On idle machines this prefers the faster ones.
 */
#ifndef NL_PICK_H
#define NL_PICK_H

#include <stdint.h>

#include "nl_machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Groups of at most this many candidates are picked by ranking every pair (no branches). */
#define NL_PICK_RANK_MAX 8u

/**
 * Pick the machines for the n_split sub-tasks of one task among candidates.
 *
 * With at least n_split candidates, the n_split distinct ones of least expected completion;
 * with fewer, sub-tasks share machines: each sub-task in turn goes to the candidate of least
 * expected completion counting the sub-tasks already placed by this call. Ties go to the
 * candidate listed first (callers list ids ascending), so the result is deterministic.
 * A candidate whose busy_until_vt is NL_MACH_GONE_VT or more has left and is never picked:
 * with fewer live candidates than n_split the live ones share the sub-tasks.
 *
 * @param cand       [n_cand] candidate machine ids, ascending.
 * @param n_cand     >= 1.
 * @param rate       Machine rates (nl_mach_rates_build()), indexed by id.
 * @param load       Load table, indexed by id.
 * @param now_vt     Current time [u.t.].
 * @param sub_instr  Instructions of one sub-task, I/L [instr].
 * @param sub_bits   Data of one sub-task, D/L [bit].
 * @param n_split    L, 1..NL_TASK_MAX_SPLIT.
 * @param out        Output [n_split] machine ids, ascending by expected completion.
 * @return n_split; -EINVAL if n_split is out of range; -ENOSPC if no candidate is live.
 * @par Context  Any lcore or the simulator; reads `load` without synchronisation (the caller
 *               provides a stable view: an RCU snapshot or its own table). No allocation.
 *               Cost O(n_cand * n_split) worst case, O(n_cand) typical; O(n_cand^2)
 *               without data-dependent branches up to NL_PICK_RANK_MAX candidates.
 * @par Source   seed 002 §3.3 step 5 ("the L machines of low load").
 */
int nl_pick_least_loaded(const uint32_t *cand, unsigned int n_cand, const struct nl_mach_rate *rate,
			 const struct nl_mach_load *load, double now_vt, double sub_instr,
			 double sub_bits, unsigned int n_split, uint32_t *out);

#ifdef __cplusplus
}
#endif
#endif /* NL_PICK_H */
