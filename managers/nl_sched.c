/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>

#include "nl_pick.h"
#include "nl_policy.h"

const struct nl_policy_ops *
nl_policy_of(enum nl_scheme scheme)
{
	return scheme == NL_SCHEME_2LSC ? &nl_policy_2lsc : &nl_policy_nlsc;
}

int
nl_sched_create(struct nl_sched **out, const struct nl_policy_ops *ops,
		const struct nl_sched_params *p, const struct nl_machine *mach, unsigned int n_mach)
{
	struct nl_resvec *vec;
	struct nl_sched *s;
	int rc;

	if (out == NULL || ops == NULL || p == NULL || mach == NULL || n_mach == 0 ||
	    p->n_res == 0 || p->n_res > NL_RES_MAX)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	vec = malloc(n_mach * sizeof(*vec));
	if (s != NULL)
		s->rate = malloc(n_mach * sizeof(*s->rate));
	if (s == NULL || vec == NULL || s->rate == NULL) {
		if (s != NULL)
			free(s->rate);
		free(s);
		free(vec);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < n_mach; i++)
		vec[i] = mach[i].res;
	nl_mach_rates_build(mach, n_mach, s->rate);
	s->ops = ops;
	s->p = *p;
	s->mach = mach;
	s->n_mach = n_mach;
	rc = nl_tree_build(&s->tree, p->n_res, vec, n_mach, p->subset ? NL_TREE_SUBSET : 0);
	free(vec);
	if (rc == 0)
		rc = ops->init(s);
	if (rc != 0) {
		nl_tree_free(s->tree);
		free(s->rate);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void
nl_sched_free(struct nl_sched *s)
{
	if (s == NULL)
		return;
	s->ops->fini(s);
	nl_tree_free(s->tree);
	free(s->rate);
	free(s);
}

int
nl_sched_replace_leaf(const struct nl_sched *s, const struct nl_task *t,
		      const struct nl_mach_load *load, double now_vt, uint32_t *out_mach)
{
	const struct nl_tree *tr = s->tree;
	uint32_t leaf = nl_tree_leaf_of(tr, t->need);
	int n;

	if (leaf == NL_NODE_NONE || t->n_split == 0)
		return -ENOSPC;
	n = nl_pick_least_loaded(&tr->leaf_mach[tr->leaf_off[leaf]],
				 tr->leaf_off[leaf + 1] - tr->leaf_off[leaf], s->rate, load, now_vt,
				 t->instr / t->n_split, t->data_bits / t->n_split, 1, out_mach);
	return n == 1 ? 0 : -ENOSPC;
}
