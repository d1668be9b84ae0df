/* SPDX-License-Identifier: BSD-3-Clause */
#include "nl_evq.h"

int
nl_evq_init(struct nl_evq *q, size_t cap)
{
	q->h = malloc((cap ? cap : 1) * sizeof(*q->h));
	q->n = 0;
	q->cap = cap ? cap : 1;
	q->seq = 0;
	q->n_pushed = 0;
	return q->h == NULL ? -ENOMEM : 0;
}

void
nl_evq_fini(struct nl_evq *q)
{
	free(q->h);
	q->h = NULL;
	q->n = q->cap = 0;
}

int
nl_evq_grow(struct nl_evq *q)
{
	struct nl_ev *h = realloc(q->h, 2 * q->cap * sizeof(*h));

	if (h == NULL)
		return -ENOMEM;
	q->h = h;
	q->cap *= 2;
	return 0;
}
