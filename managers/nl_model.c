/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include "nl_model.h"

void
nl_model_src_init(struct nl_model_src *src, double lambda, uint64_t seed)
{
	uint64_t x = seed;

	memset(src, 0, sizeof(*src));
	nl_rng_seed(&src->rng_task, nl_splitmix64(&x));
	nl_rng_seed(&src->rng_entry, nl_splitmix64(&x));
	src->bg_seed = nl_splitmix64(&x);
	src->lambda = lambda;
	src->next_vt = lambda > 0 ? nl_rng_exp(&src->rng_task, 1.0 / lambda) : 0;
}

void
nl_model_src_draw(struct nl_model_src *src, const struct nl_model_cfg *m, struct nl_task *t,
		  uint64_t *entry_rnd)
{
	uint32_t aux = t->aux;
	uint64_t need = 0;

	t->t_arrive_vt = src->next_vt;
	if (src->lambda > 0)
		src->next_vt += nl_rng_exp(&src->rng_task, 1.0 / src->lambda);
	if (m->need_prob == 0.5) {
		need = nl_rng_u64(&src->rng_task) & nl_res_mask(m->n_res);
	} else {
		for (unsigned int k = 0; k < m->n_res; k++)
			if (nl_rng_unif(&src->rng_task) <= m->need_prob)
				need |= UINT64_C(1) << k;
	}
	t->id = src->next_id++;
	t->need = need;
	t->n_split = (uint16_t)m->n_split;
	if (m->work_dist == NL_WORK_EXP) {
		t->instr = nl_rng_exp(&src->rng_task, m->instr);
		t->data_bits = m->data_bits > 0 ? nl_rng_exp(&src->rng_task, m->data_bits) : 0;
	} else {
		t->instr = m->instr;
		t->data_bits = m->data_bits;
	}
	t->sched_wait_vt = 0;
	t->at_mgr = 0;
	t->hops = 0;
	t->flags = 0;
	t->aux = aux;
	*entry_rnd = nl_rng_u64(&src->rng_entry);
}

uint32_t
nl_model_task_class(const struct nl_model_cfg *m, const struct nl_model_src *src,
		    const struct nl_task *t)
{
	uint64_t x = src->bg_seed ^ (t->id * UINT64_C(0xd1b54a32d192ed03)) ^ UINT64_C(0x636c617373);
	double u = (double)(nl_splitmix64(&x) >> 11) * 0x1.0p-53, acc = 0;

	for (unsigned int k = 0; k < m->n_tclass; k++) {
		acc += m->tclass[k].share;
		if (u < acc)
			return k + 1;
	}
	return 0;
}

struct nl_model_bg
nl_model_bg_of(const struct nl_model_cfg *m, uint64_t bg_seed, bool on)
{
	struct nl_model_bg bg = {
		.load_max = on ? m->bg_load_max : 0,
		.period_vt = m->bg_period_vt > 0 ? m->bg_period_vt : 1,
		.seed = bg_seed,
	};

	return bg;
}

void
nl_model_split_mach_parts(const struct nl_sched *s, const uint8_t *part, uint8_t *mach_part,
			  uint32_t *home)
{
	const struct nl_tree *tr = s->tree;

	for (uint32_t m = 0; m < s->n_mach; m++) {
		uint32_t h = 0;

		if (s->n_mgr != tr->n_node)
			h = nl_2lsc_group_of(s, m);
		mach_part[m] = part[h];
		if (home != NULL)
			home[m] = h;
	}
	if (s->n_mgr != tr->n_node)
		return;
	for (uint32_t l = 0; l < tr->n_leaf; l++)
		for (uint32_t j = tr->leaf_off[l]; j < tr->leaf_off[l + 1]; j++) {
			mach_part[tr->leaf_mach[j]] = part[tr->leaf_node[l]];
			if (home != NULL)
				home[tr->leaf_mach[j]] = tr->leaf_node[l];
		}
}

unsigned int
nl_model_split_parts(const struct nl_model_cfg *m, const struct nl_sched *s, uint8_t *part)
{
	bool tl = s->n_mgr != s->tree->n_node; /* not one manager per node: parent = top */
	unsigned int found = 0;
	char name[64];

	for (uint32_t i = 0; i < s->n_mgr; i++) {
		uint32_t x = i;

		part[i] = 0;
		while (x != NL_NODE_NONE && part[i] == 0) {
			s->ops->mgr_name(s, x, name, sizeof(name));
			for (unsigned int k = 0; k < m->n_cut; k++)
				if (strcmp(name, m->cut[k]) == 0)
					part[i] = (uint8_t)(k + 1);
			if (tl)
				x = x == s->ops->top_mgr(s) ? NL_NODE_NONE : s->ops->top_mgr(s);
			else
				x = s->tree->node[x].parent;
		}
	}
	for (unsigned int k = 0; k < m->n_cut; k++)
		for (uint32_t i = 0; i < s->n_mgr; i++) {
			s->ops->mgr_name(s, i, name, sizeof(name));
			if (strcmp(name, m->cut[k]) == 0) {
				found++;
				break;
			}
		}
	return found;
}
