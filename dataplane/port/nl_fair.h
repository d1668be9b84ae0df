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

/** A flow's state at its turn (nl_fair_next_elig_st()). */
enum nl_fair_state {
	NL_FAIR_EMPTY = 0, /**< no backlog: it leaves the round, its deficit cleared */
	NL_FAIR_READY,     /**< backlogged and may be served now */
	NL_FAIR_HELD,      /**< backlogged, but may not be served now (over its share): its
			    *   turn ends, it stays in the round with its deficit (at most one
			    *   quantum) */
};

/** The state of flow i now. */
typedef enum nl_fair_state (*nl_fair_state_fn)(void *ctx, unsigned int i);

/**
 * nl_fair_next_st() where a backlogged flow may also be held back: the next READY flow in
 * round order, charged one unit; -1 when every flow in the round is HELD or EMPTY (after at
 * most one pass over the round). A HELD flow keeps its place and its deficit (capped at its
 * quantum), so among the READY flows the order and the shares are DRR's.
 * @param st  State of the caller's flows. @param ctx  Its argument.
 * @par Context The owner (_st). Cost O(flows in the round) at worst.
 * @par Source M. Shreedhar and G. Varghese, SIGCOMM 1995 (a flow that cannot send keeps its
 * deficit).
 */
int nl_fair_next_elig_st(struct nl_fair *f, nl_fair_state_fn st, void *ctx);

/**
 * Give back the unit nl_fair_next_elig_st() / nl_fair_next_st() charged flow i (its head
 * could not be served after all, e.g. the engine was full); it is backlogged again.
 * @par Context The owner (_st).
 */
void nl_fair_refund_st(struct nl_fair *f, unsigned int i);

#ifdef __cplusplus
}
#endif
#endif /* NL_FAIR_H */
