/* SPDX-License-Identifier: BSD-3-Clause */
/* Fair admission of the appliance's submitters (nl_admit.h). */
#include <errno.h>
#include <stdlib.h>

#include "nl_admit.h"

int
nl_admit_init(struct nl_admit *a, unsigned int n, const uint32_t *w, uint64_t limit,
	      uint64_t reserve)
{
	a->w = NULL;
	a->queued = a->flight = NULL;
	a->drr.quantum = NULL;
	a->drr.deficit = NULL;
	a->drr.active = NULL;
	a->drr.round = NULL;
	if (n == 0 || limit == 0)
		return -EINVAL;
	a->n = n;
	a->held = a->w_work = a->borrowed = 0;
	a->limit = limit;
	a->reserve = reserve < limit ? reserve : limit - 1;
	a->w = calloc(n, sizeof(*a->w));
	a->queued = calloc(n, sizeof(*a->queued));
	a->flight = calloc(n, sizeof(*a->flight));
	if (a->w == NULL || a->queued == NULL || a->flight == NULL)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		if (w[i] == 0 || w[i] > 1000)
			return -EINVAL;
		a->w[i] = w[i];
	}
	return nl_fair_init(&a->drr, n, w);
}

void
nl_admit_free(struct nl_admit *a)
{
	free(a->w);
	free(a->queued);
	free(a->flight);
	a->w = NULL;
	a->queued = a->flight = NULL;
	nl_fair_free(&a->drr);
}

static bool
has_work(const struct nl_admit *a, unsigned int i)
{
	return a->queued[i] + a->flight[i] > 0;
}

/* queued or flight of i is about to change by d (+1 / -1): keep W (the weights of those with
 * work) up to date across i's "has work" transitions */
static void
work_change(struct nl_admit *a, unsigned int i, bool before)
{
	bool after = has_work(a, i);

	if (after && !before)
		a->w_work += a->w[i];
	else if (!after && before)
		a->w_work -= a->w[i];
}

double
nl_admit_share(const struct nl_admit *a, unsigned int i)
{
	uint64_t w = a->w_work + (has_work(a, i) ? 0 : a->w[i]);

	return i < a->n && w > 0 ? (double)(a->limit - a->reserve) * a->w[i] / (double)w : 0;
}

/* flight_i < (L - R) w_i / W, exactly (integers: flight <= 2^32, W <= 2^18, L w <= 2^47) */
static bool
under_share(const struct nl_admit *a, unsigned int i)
{
	return a->flight[i] == 0 ||
	       a->flight[i] * a->w_work < (a->limit - a->reserve) * (uint64_t)a->w[i];
}

static enum nl_fair_state
st_share(void *ctx, unsigned int i)
{
	const struct nl_admit *a = ctx;

	if (a->queued[i] == 0)
		return NL_FAIR_EMPTY;
	return under_share(a, i) ? NL_FAIR_READY : NL_FAIR_HELD;
}

static enum nl_fair_state
st_any(void *ctx, unsigned int i)
{
	const struct nl_admit *a = ctx;

	return a->queued[i] == 0 ? NL_FAIR_EMPTY : NL_FAIR_READY;
}

void
nl_admit_queued_st(struct nl_admit *a, unsigned int i)
{
	bool before;

	if (i >= a->n)
		return;
	before = has_work(a, i);
	a->queued[i]++;
	work_change(a, i, before);
	nl_fair_backlogged_st(&a->drr, i);
}

int
nl_admit_next_st(struct nl_admit *a)
{
	int i;

	if (a->held >= a->limit)
		return -1;
	/* 1. a principal under its share; 2. while under L - R, anyone with a queue (I2, I3) */
	i = nl_fair_next_elig_st(&a->drr, st_share, a);
	if (i < 0 && a->held < a->limit - a->reserve) {
		i = nl_fair_next_elig_st(&a->drr, st_any, a);
		if (i >= 0)
			a->borrowed++;
	}
	if (i < 0)
		return -1;
	a->queued[i]--; /* still has work: it moves to flight */
	a->flight[i]++;
	a->held++;
	return i;
}

void
nl_admit_undo_st(struct nl_admit *a, unsigned int i, bool again)
{
	if (!again) { /* answered at once: as if it had ended */
		nl_admit_done_st(a, i);
		return;
	}
	if (i >= a->n || a->flight[i] == 0)
		return;
	a->flight[i]--; /* back to the head of its queue: it has work before and after */
	a->held--;
	a->queued[i]++;
	nl_fair_refund_st(&a->drr, i);
}

void
nl_admit_done_st(struct nl_admit *a, unsigned int i)
{
	bool before;

	if (i >= a->n || a->flight[i] == 0)
		return;
	before = has_work(a, i);
	a->flight[i]--;
	a->held--;
	work_change(a, i, before);
}
