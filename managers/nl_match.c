/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Matching at the leaf (nl_match.h): the match table and the pick that reads it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nl_match.h"
#include "nl_pick.h"
#include "nl_policy.h"

struct nl_match_src nl_match_src;

struct nl_match_tab *
nl_match_tab_new(uint32_t n_mach, uint32_t n_h, uint64_t gen)
{
	uint32_t words = (n_mach + 63) / 64;
	size_t bits = (size_t)n_h * words * sizeof(uint64_t);
	size_t ranks = (size_t)n_h * n_mach * sizeof(double);
	struct nl_match_tab *tab;
	uint8_t *mem;

	if (n_mach == 0 || n_h == 0)
		return NULL;
	tab = calloc(1, sizeof(*tab));
	mem = calloc(1, bits + ranks + (size_t)n_h * sizeof(struct nl_match_ent));
	if (tab == NULL || mem == NULL) {
		free(tab);
		free(mem);
		return NULL;
	}
	tab->n_mach = n_mach;
	tab->words = words;
	tab->n_h = n_h;
	tab->gen = gen;
	tab->mem = mem;
	tab->ent = (struct nl_match_ent *)(mem + bits + ranks);
	for (uint32_t h = 0; h < n_h; h++) {
		tab->ent[h].elig = (const uint64_t *)(mem + (size_t)h * words * sizeof(uint64_t));
		tab->ent[h].rank = NULL;
	}
	return tab;
}

static double *
rank_row(struct nl_match_tab *tab, uint32_t h)
{
	uint8_t *base = (uint8_t *)tab->mem + (size_t)tab->n_h * tab->words * sizeof(uint64_t);

	return (double *)(base + (size_t)h * tab->n_mach * sizeof(double));
}

void
nl_match_tab_set(struct nl_match_tab *tab, uint32_t h, uint32_t m, bool ok, double rank)
{
	uint64_t *w;

	if (h == 0 || h >= tab->n_h || m >= tab->n_mach)
		return;
	w = (uint64_t *)tab->ent[h].elig + m / 64;
	if (ok && !(*w >> (m % 64) & 1)) {
		*w |= UINT64_C(1) << (m % 64);
		tab->ent[h].n_elig++;
	} else if (!ok && (*w >> (m % 64) & 1)) {
		*w &= ~(UINT64_C(1) << (m % 64));
		tab->ent[h].n_elig--;
	}
	rank_row(tab, h)[m] = isnan(rank) ? 0 : rank;
}

void
nl_match_tab_use_rank(struct nl_match_tab *tab, uint32_t h)
{
	if (h > 0 && h < tab->n_h)
		tab->ent[h].rank = rank_row(tab, h);
}

void
nl_match_tab_free(struct nl_match_tab *tab)
{
	if (tab == NULL)
		return;
	free(tab->mem);
	free(tab);
}

/* (rank, key) a better than b: higher Rank first, then lower expected completion. */
static inline bool
better(double ra, double ka, double rb, double kb)
{
	return ra > rb || (ra == rb && ka < kb);
}

int
nl_match_pick(const struct nl_match_tab *tab, uint32_t h, const uint32_t *cand,
	      unsigned int n_cand, const struct nl_mach_rate *rate,
	      const struct nl_mach_load *load, double now_vt, double sub_instr,
	      double sub_bits, unsigned int n_split, uint32_t *out)
{
	double key[NL_TASK_MAX_SPLIT], rk[NL_TASK_MAX_SPLIT];
	const uint64_t *elig;
	const double *rank;
	unsigned int n = 0, n_live = 0;

	if (n_split == 0 || n_split > NL_TASK_MAX_SPLIT)
		return -EINVAL;
	if (h == 0 || h >= tab->n_h || tab->ent[h].n_elig == 0)
		return -ENOSPC;
	elig = tab->ent[h].elig;
	rank = tab->ent[h].rank;
	/* Keep the n_split best in (rk, key) order; earlier (lower id) candidates win ties. */
	for (unsigned int c = 0; c < n_cand; c++) {
		uint32_t id = cand[c];
		double bu, k, r;
		unsigned int j;

		if (id >= tab->n_mach || !((elig[id / 64] >> (id % 64)) & 1))
			continue;
		bu = load[id].busy_until_vt;
		if (!(bu < NL_MACH_GONE_VT))
			continue;
		n_live++;
		k = (bu > now_vt ? bu - now_vt : 0) +
		    nl_mach_rate_service_vt(&rate[id], sub_instr, sub_bits);
		r = rank != NULL ? rank[id] : 0;
		if (n == n_split && !better(r, k, rk[n - 1], key[n - 1]))
			continue;
		j = n < n_split ? n++ : n - 1;
		while (j > 0 && better(r, k, rk[j - 1], key[j - 1])) {
			key[j] = key[j - 1];
			rk[j] = rk[j - 1];
			out[j] = out[j - 1];
			j--;
		}
		key[j] = k;
		rk[j] = r;
		out[j] = id;
	}
	if (n_live == 0)
		return -ENOSPC;
	if (n_live >= n_split)
		return (int)n_split;
	/* Fewer eligible live machines than sub-tasks: out[0..n-1] holds all of them; place
	 * one sub-task at a time on the best, counting those placed. */
	uint32_t live[NL_TASK_MAX_SPLIT];
	double extra[NL_TASK_MAX_SPLIT] = { 0 };

	memcpy(live, out, n * sizeof(uint32_t));
	for (unsigned int s = 0; s < n_split; s++) {
		unsigned int best = 0;
		double best_k = 0, best_r = 0;

		for (unsigned int c = 0; c < n; c++) {
			double b = load[live[c]].busy_until_vt - now_vt;
			double k = (b > 0 ? b : 0) + extra[c] +
				   nl_mach_rate_service_vt(&rate[live[c]], sub_instr, sub_bits);
			double r = rank != NULL ? rank[live[c]] : 0;

			if (c == 0 || better(r, k, best_r, best_k)) {
				best = c;
				best_k = k;
				best_r = r;
			}
		}
		extra[best] += nl_mach_rate_service_vt(&rate[live[best]], sub_instr, sub_bits);
		out[s] = live[best];
	}
	return (int)n_split;
}

int
nl_match_pick_cur(uint32_t h, const uint32_t *cand, unsigned int n_cand,
		  const struct nl_mach_rate *rate, const struct nl_mach_load *load, double now_vt,
		  double sub_instr, double sub_bits, unsigned int n_split, uint32_t *out)
{
	const struct nl_match_tab *tab = __atomic_load_n(&nl_match_src.tab, __ATOMIC_ACQUIRE);

	if (tab == NULL)
		return -ENOSPC;
	return nl_match_pick(tab, h, cand, n_cand, rate, load, now_vt, sub_instr, sub_bits,
			     n_split, out);
}

unsigned int
nl_match_live_cur(uint32_t h, const uint32_t *cand, unsigned int n_cand,
		  const struct nl_mach_load *load)
{
	const struct nl_match_tab *tab = __atomic_load_n(&nl_match_src.tab, __ATOMIC_ACQUIRE);
	unsigned int n = 0;

	if (tab == NULL || h == 0 || h >= tab->n_h || tab->ent[h].n_elig == 0)
		return 0;
	for (unsigned int c = 0; c < n_cand; c++) {
		uint32_t id = cand[c];

		n += id < tab->n_mach && ((tab->ent[h].elig[id / 64] >> (id % 64)) & 1) &&
		     load[id].busy_until_vt < NL_MACH_GONE_VT;
	}
	return n;
}

int
nl_match_replace(const struct nl_sched *s, const struct nl_task *t,
		 const struct nl_mach_load *load, double now_vt, uint32_t *out_mach)
{
	const struct nl_tree *tr = s->tree;
	uint32_t leaf = nl_tree_leaf_of(tr, t->need);
	int n;

	if (leaf == NL_NODE_NONE || t->n_split == 0)
		return -ENOSPC;
	n = nl_match_pick_task(t, &tr->leaf_mach[tr->leaf_off[leaf]],
			       tr->leaf_off[leaf + 1] - tr->leaf_off[leaf], s->rate, load, now_vt,
			       t->instr / t->n_split, t->data_bits / t->n_split, 1, out_mach);
	return n == 1 ? 0 : -ENOSPC;
}
