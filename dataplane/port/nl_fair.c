/* SPDX-License-Identifier: BSD-3-Clause */
/* Deficit round robin (nl_fair.h). */
#include <errno.h>
#include <stdlib.h>

#include "nl_fair.h"

int
nl_fair_init(struct nl_fair *f, unsigned int n, const uint32_t *quantum)
{
	f->n = n;
	f->head = f->cnt = 0;
	f->turn = false;
	if (n == 0)
		return -EINVAL;
	f->quantum = calloc(n, sizeof(*f->quantum));
	f->deficit = calloc(n, sizeof(*f->deficit));
	f->active = calloc(n, 1);
	f->round = calloc(n, sizeof(*f->round));
	if (f->quantum == NULL || f->deficit == NULL || f->active == NULL || f->round == NULL) {
		nl_fair_free(f);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (quantum[i] == 0) {
			nl_fair_free(f);
			return -EINVAL;
		}
		f->quantum[i] = quantum[i];
	}
	return 0;
}

void
nl_fair_free(struct nl_fair *f)
{
	free(f->quantum);
	free(f->deficit);
	free(f->active);
	free(f->round);
	f->quantum = NULL;
	f->deficit = NULL;
	f->active = NULL;
	f->round = NULL;
}

void
nl_fair_backlogged_st(struct nl_fair *f, unsigned int i)
{
	if (i >= f->n || f->active[i])
		return;
	f->active[i] = 1;
	f->round[(f->head + f->cnt) % f->n] = i;
	f->cnt++;
}

int
nl_fair_next_st(struct nl_fair *f, nl_fair_has_fn has, void *ctx)
{
	while (f->cnt > 0) {
		unsigned int i = f->round[f->head];

		if (!f->turn) { /* a new turn: add the quantum */
			f->deficit[i] += f->quantum[i];
			f->turn = true;
		}
		if (f->deficit[i] >= 1 && has(ctx, i)) {
			f->deficit[i]--;
			return (int)i;
		}
		/* end of its turn: to the back of the round, or out of it without a backlog */
		f->turn = false;
		f->head = (f->head + 1) % f->n;
		f->cnt--;
		if (has(ctx, i)) {
			f->round[(f->head + f->cnt) % f->n] = i;
			f->cnt++;
		} else {
			f->deficit[i] = 0;
			f->active[i] = 0;
		}
	}
	return -1;
}

/* End the head's turn and move it to the back of the round (it stays in the round). */
static void
rotate(struct nl_fair *f)
{
	unsigned int i = f->round[f->head];

	f->turn = false;
	f->head = (f->head + 1) % f->n;
	f->round[(f->head + f->cnt - 1) % f->n] = i;
}

int
nl_fair_next_elig_st(struct nl_fair *f, nl_fair_state_fn st, void *ctx)
{
	unsigned int held = 0; /* HELD flows seen in a row */

	while (f->cnt > 0) {
		unsigned int i = f->round[f->head];
		enum nl_fair_state s = st(ctx, i);

		if (s == NL_FAIR_EMPTY) { /* out of the round */
			f->turn = false;
			f->head = (f->head + 1) % f->n;
			f->cnt--;
			f->deficit[i] = 0;
			f->active[i] = 0;
			continue;
		}
		if (s == NL_FAIR_HELD) {
			if (f->deficit[i] > (int64_t)f->quantum[i])
				f->deficit[i] = f->quantum[i];
			rotate(f);
			if (++held >= f->cnt)
				return -1;
			continue;
		}
		held = 0;
		if (!f->turn) { /* a new turn: add the quantum */
			f->deficit[i] += f->quantum[i];
			f->turn = true;
		}
		if (f->deficit[i] >= 1) {
			f->deficit[i]--;
			return (int)i;
		}
		rotate(f);
	}
	return -1;
}

void
nl_fair_refund_st(struct nl_fair *f, unsigned int i)
{
	if (i >= f->n)
		return;
	f->deficit[i]++;
	nl_fair_backlogged_st(f, i);
}
