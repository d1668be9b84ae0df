/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Event queue of virtual time: a 4-ary min-heap keyed by (time, insertion
 * sequence), so events at equal times run in the order they were scheduled and every run is
 * deterministic. Shared by every model the simulator runs (dispatch, batch, gossip) and by the
 * live engine's emulation (messages in transit, sub-tasks on emulated machines).
 *
 * Invariants:
 *  I1  h[0] has the least (t_vt, seq); every parent <= its children.
 *  I2  seq strictly increases over nl_evq_push_st() pushes, so (t_vt, seq) is a total
 *      order; nl_evq_push_key_st() gives an event its own seq (a tie key), at or above
 *      NL_EVQ_KEY_LATE when it is to follow every sequenced event of its time.
 */
#ifndef NL_EVQ_H
#define NL_EVQ_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/** First tie key of events that follow every nl_evq_push_st() event of equal time. */
#define NL_EVQ_KEY_LATE (UINT64_C(1) << 63)

/** One event. `kind`, `arg` and `ptr` are the model's. */
struct nl_ev {
	double t_vt;   /**< when [u.t. or s, the model's unit] */
	uint64_t seq;  /**< insertion order (I2) */
	uint32_t kind; /**< model-defined event type */
	uint32_t arg;  /**< model-defined, e.g. a manager id */
	void *ptr;     /**< model-defined, e.g. a task */
};

/** The queue. Single owner (the simulator thread). */
struct nl_evq {
	struct nl_ev *h;
	size_t n;
	size_t cap;
	uint64_t seq;
	uint64_t n_pushed; /**< events scheduled so far (the events/s figure) */
};

/**
 * Initialise an empty queue.
 * @param q    Queue.
 * @param cap  Initial capacity (grows as needed), >= 1.
 * @return 0 or -ENOMEM. @par Context Single owner.
 */
int nl_evq_init(struct nl_evq *q, size_t cap);

/** Free the queue's storage. @par Context Single owner. */
void nl_evq_fini(struct nl_evq *q);

/** Grow storage (called by nl_evq_push_st when full). @return 0 or -ENOMEM. */
int nl_evq_grow(struct nl_evq *q);

/**
 * Schedule an event with its own tie key instead of the next insertion sequence: among
 * events of equal time it runs after every event with a smaller key (I2). Keys from
 * NL_EVQ_KEY_LATE up run after every event scheduled by nl_evq_push_st() at that time.
 * @param key  Tie key; the caller keeps it unique among events of one time (a repeat
 *             orders the two arbitrarily, but the same way on every run).
 * @return 0, or -ENOMEM (the event is not scheduled).
 * @par Context Single owner; O(log4 n).
 */
static inline int
nl_evq_push_key_st(struct nl_evq *q, double t_vt, uint64_t key, uint32_t kind, uint32_t arg,
		   void *ptr)
{
	size_t i;

	if (q->n == q->cap && nl_evq_grow(q) != 0)
		return -ENOMEM;
	i = q->n++;
	struct nl_ev e = { .t_vt = t_vt, .seq = key, .kind = kind, .arg = arg, .ptr = ptr };

	q->n_pushed++;
	while (i > 0) {
		size_t p = (i - 1) / 4;

		if (q->h[p].t_vt < t_vt || (q->h[p].t_vt == t_vt && q->h[p].seq < e.seq))
			break;
		q->h[i] = q->h[p];
		i = p;
	}
	q->h[i] = e;
	return 0;
}

/**
 * Schedule an event; events of equal time run in the order they were scheduled.
 * @return 0, or -ENOMEM (the event is not scheduled).
 * @par Context Single owner; O(log4 n).
 */
static inline int
nl_evq_push_st(struct nl_evq *q, double t_vt, uint32_t kind, uint32_t arg, void *ptr)
{
	return nl_evq_push_key_st(q, t_vt, q->seq++, kind, arg, ptr);
}

static inline bool
nl_ev_before(const struct nl_ev *a, const struct nl_ev *b)
{
	return a->t_vt < b->t_vt || (a->t_vt == b->t_vt && a->seq < b->seq);
}

/**
 * Take the earliest event.
 * @param out  Output.
 * @return true, or false when the queue is empty.
 * @par Context Single owner; O(4 log4 n).
 */
static inline bool
nl_evq_pop_st(struct nl_evq *q, struct nl_ev *out)
{
	struct nl_ev last;
	size_t i = 0, n;

	if (q->n == 0)
		return false;
	*out = q->h[0];
	n = --q->n;
	if (n == 0)
		return true;
	last = q->h[n];
	for (;;) {
		size_t c = 4 * i + 1, best;

		if (c >= n)
			break;
		best = c;
		for (size_t k = c + 1; k < c + 4 && k < n; k++)
			if (nl_ev_before(&q->h[k], &q->h[best]))
				best = k;
		if (!nl_ev_before(&q->h[best], &last))
			break;
		q->h[i] = q->h[best];
		i = best;
	}
	q->h[i] = last;
	return true;
}

#ifdef __cplusplus
}
#endif
#endif /* NL_EVQ_H */
