/* SPDX-License-Identifier: BSD-3-Clause */
/* nlevel-worker's record of ended runs (nl_wrec.h). */
#include <errno.h>
#include <stdlib.h>

#include "nl_wrec.h"

static uint32_t
set_of(uint64_t task_id, uint16_t sub, uint8_t attempt)
{
	uint64_t h = task_id ^ ((uint64_t)sub << 48) ^ ((uint64_t)attempt << 40);

	h ^= h >> 33; /* splitmix64's finalizer: the index's low bits see every input bit */
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h & (NL_WREC_SETS - 1);
}

int
nl_wrec_init(struct nl_wrec *r)
{
	r->e = calloc((size_t)NL_WREC_SETS * NL_WREC_WAYS, sizeof(*r->e));
	r->seq = 0;
	r->n_put = r->n_hit = 0;
	return r->e != NULL ? 0 : -ENOMEM;
}

void
nl_wrec_fini(struct nl_wrec *r)
{
	free(r->e);
	r->e = NULL;
}

static struct nl_wrec_ent *
lookup(struct nl_wrec *r, uint64_t task_id, uint16_t sub, uint8_t attempt)
{
	struct nl_wrec_ent *s = &r->e[(size_t)set_of(task_id, sub, attempt) * NL_WREC_WAYS];

	for (unsigned int w = 0; w < NL_WREC_WAYS; w++)
		if (s[w].task_id == task_id && task_id != 0 && s[w].sub == sub &&
		    s[w].attempt == attempt)
			return &s[w];
	return NULL;
}

void
nl_wrec_put(struct nl_wrec *r, uint64_t task_id, uint16_t sub, uint8_t attempt,
	    const struct nl_msg_done *d)
{
	struct nl_wrec_ent *s, *e;

	if (attempt == 0 || task_id == 0 || r->e == NULL)
		return;
	e = lookup(r, task_id, sub, attempt);
	if (e == NULL) {
		s = &r->e[(size_t)set_of(task_id, sub, attempt) * NL_WREC_WAYS];
		e = &s[0];
		for (unsigned int w = 1; w < NL_WREC_WAYS && e->task_id != 0; w++)
			if (s[w].task_id == 0 || s[w].seq < e->seq)
				e = &s[w];
	}
	e->task_id = task_id;
	e->sub = sub;
	e->attempt = attempt;
	e->seq = ++r->seq;
	e->done = *d;
	r->n_put++;
}

const struct nl_msg_done *
nl_wrec_find(struct nl_wrec *r, uint64_t task_id, uint16_t sub, uint8_t attempt)
{
	struct nl_wrec_ent *e;

	if (attempt == 0 || r->e == NULL)
		return NULL;
	e = lookup(r, task_id, sub, attempt);
	if (e == NULL)
		return NULL;
	r->n_hit++;
	return &e->done;
}
