/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Fair admission of the appliance's submitters (issue #35 item 5, issue #33 item 4;
 * docs/security.md "Fair share and limits"): which principal's queued task is admitted next
 * into the engine, given the tasks each holds in flight. Pure C, no DPDK; the caller keeps the
 * queues (nl_dp_sec.c) and tells this module what joins, leaves and ends.
 *
 * Theory of operation. L = the admission limit (tasks accepted and not ended, all principals),
 * R = the reserve. A principal "has work" while it has a task queued or in flight; W = the sum
 * of the weights of the principals with work. Principal i's share is S_i = (L - R) w_i / W.
 * While fewer than L tasks are held, the next task admitted is, in deficit-round-robin order:
 *   1. the head of a principal under its share (in flight < S_i, or nothing in flight);
 *   2. failing that, while fewer than L - R are held, the head of any principal with a queue
 *      (it borrows what the others leave unused: work conserving up to L - R);
 * so the last R places are only ever taken by principals under their share.
 * Invariants (tests/dataplane/test_admit.c):
 *   I1 held <= L, and held = sum of in flight;
 *   I2 a principal over its share is admitted only while held < L - R and no principal under
 *      its share has a queued task: the reserve is kept for principals under their share, e.g.
 *      one that had no work until now, which is admitted at once however long the others'
 *      tasks run;
 *   I3 a principal under its share with a queued task is admitted whenever held < L (it never
 *      waits behind a principal over its share);
 *   I4 among principals admitted in the same step, the order is DRR's (weights as quanta).
 */
#ifndef NL_ADMIT_H
#define NL_ADMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_fair.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Admission state (one per appliance with principals). */
struct nl_admit {
	unsigned int n;        /**< principals (flows) */
	uint32_t *w;           /**< [n] weights >= 1 */
	uint64_t *queued;      /**< [n] tasks waiting in each principal's queue */
	uint64_t *flight;      /**< [n] tasks admitted and not ended */
	uint64_t held;         /**< sum of flight (I1) */
	uint64_t limit;        /**< L >= 1 */
	uint64_t reserve;      /**< R < L */
	uint64_t w_work;       /**< W: sum of the weights of principals with work */
	uint64_t borrowed;     /**< admissions over a share (step 2), for telemetry */
	struct nl_fair drr;
};

/**
 * @param a        Output.
 * @param n        Principals, >= 1.
 * @param w        [n] weights, each 1..1000 (copied).
 * @param limit    L: tasks held at most, >= 1.
 * @param reserve  R: places only principals under their share may take; clamped to L - 1.
 * @return 0; -EINVAL; -ENOMEM. @par Context Any thread; allocates.
 */
int nl_admit_init(struct nl_admit *a, unsigned int n, const uint32_t *w, uint64_t limit,
		  uint64_t reserve);

/** Free (after nl_admit_init(), even a failed one). @par Context The owner. */
void nl_admit_free(struct nl_admit *a);

/** A task joined principal i's queue. @par Context The owner (_st). */
void nl_admit_queued_st(struct nl_admit *a, unsigned int i);

/**
 * The principal whose queued head is admitted now, counted as held (its queued - 1, in
 * flight + 1); -1 when none may be (held = L, or every queued principal is over its share
 * and held >= L - R, or nothing is queued).
 * @par Context The owner (_st). O(principals with a queue) at worst.
 */
int nl_admit_next_st(struct nl_admit *a);

/**
 * The admission nl_admit_next_st() chose for i did not happen: with `again`, the task is still
 * at the head of i's queue (the engine was full: try later, its DRR unit given back); without,
 * it was answered at once (REJECT) and left the queue.
 * @par Context The owner (_st).
 */
void nl_admit_undo_st(struct nl_admit *a, unsigned int i, bool again);

/** A held task of principal i ended. @par Context The owner (_st). */
void nl_admit_done_st(struct nl_admit *a, unsigned int i);

/**
 * Principal i's share S_i now (with i counted as having work) [tasks, fractional].
 * @par Context Pure.
 */
double nl_admit_share(const struct nl_admit *a, unsigned int i);

#ifdef __cplusplus
}
#endif
#endif /* NL_ADMIT_H */
