/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Deficit round robin over n flows with unit-cost items (the appliance's fair admission
 * between submitters, docs/security.md "Fair share and limits"). The caller keeps the queues;
 * this keeps the round (flows with a backlog, in turn order), the deficits and the current
 * turn. Pure C, no allocation after init.
 *
 * Invariants: a flow is in the round at most once; nl_fair_next() returns a flow only while it
 * has a backlog (work conserving: it returns -1 only when no flow in the round has one); over
 * any interval in which flows i and j are both backlogged, their served counts S satisfy
 * |S_i / w_i - S_j / w_j| <= 2 (Shreedhar and Varghese 1995, Theorem 1, items of size 1).
 */
#ifndef NL_FAIR_H
#define NL_FAIR_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Whether flow i has a queued item. */
typedef bool (*nl_fair_has_fn)(void *ctx, unsigned int i);

/** DRR state. */
struct nl_fair {
	unsigned int n;      /**< flows */
	uint32_t *quantum;   /**< [n] weight: items per turn, >= 1 */
	int64_t *deficit;    /**< [n] */
	uint8_t *active;     /**< [n] in the round */
	uint32_t *round;     /**< [n] ring of flows with a backlog */
	unsigned int head, cnt;
	bool turn;           /**< the head's turn has begun (its quantum was added) */
};

/**
 * @param f  Output. @param n  Flows (>= 1). @param quantum  [n] weights >= 1 (copied).
 * @return 0; -EINVAL; -ENOMEM. @par Context Any thread; allocates.
 */
int nl_fair_init(struct nl_fair *f, unsigned int n, const uint32_t *quantum);

/** Free (NULL-safe fields). @par Context The owner. */
void nl_fair_free(struct nl_fair *f);

/**
 * Flow i has a backlog now (call after queueing an item): it joins the end of the round if it
 * is not in it. @par Context The owner (single-threaded, _st).
 */
void nl_fair_backlogged_st(struct nl_fair *f, unsigned int i);

/**
 * The flow whose head item is served next, charged one unit of its deficit; -1 when no flow
 * has a backlog. A flow found without a backlog at its turn leaves the round, its deficit
 * cleared.
 * @param has  Backlog test of the caller's queues. @param ctx  Its argument.
 * @par Context The owner. @par Source M. Shreedhar and G. Varghese, "Efficient fair queuing
 * using deficit round robin", SIGCOMM 1995.
 */
int nl_fair_next_st(struct nl_fair *f, nl_fair_has_fn has, void *ctx);

#ifdef __cplusplus
}
#endif
#endif /* NL_FAIR_H */
