/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NLSC: N-level scheduling (seed 002 §3.3). One manager per node of the resource tree; a
 * task appears at a random leaf (§4.2) or, with static scheduling (§4.4), at a random leaf
 * whose prefix already matches the k statically known resources 1..k. Each manager applies
 * the routing step (tree/nl_tree.h); the matching leaf assigns the L sub-tasks to its L
 * least-loaded machines.
 *
 * Worked example, N = 4: a task needing 0110 appears at leaf 0101. Leaf: prefix differs at
 * resource 3 -> up to M(3,010); differs -> up to M(2,01); matches, down on resource 3 (=1) to
 * M(3,011); down on resource 4 (=0) to leaf 0110, which assigns. 4 hops = 2 * (4 - 2).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "nl_match.h" /* issue #15 hook: matched tasks pick by Requirements/Rank */
#include "nl_pick.h"
#include "nl_pick_idx.h"
#include "nl_policy.h"

#define NLSC_STATIC_MAX_BITS NL_STATIC_KNOWN_MAX /* nl_model_cfg.h: the config refuses more */

struct nlsc {
	unsigned int k;      /* statically known resources */
	uint32_t *bkt_off;   /* [2^k + 1] offsets into bkt_leaf */
	uint32_t *bkt_leaf;  /* leaf node ids grouped by prefix & mask(k) */
	struct nl_pick_mirror *pm; /* [n_mgr] pick index of each leaf of >= NL_PICK_IDX_MIN_CAND
				    * machines (per-manager state, nl_policy.h I3) */
};

static void
nlsc_free(struct nlsc *n, unsigned int n_mgr)
{
	if (n == NULL)
		return;
	for (unsigned int i = 0; n->pm != NULL && i < n_mgr; i++)
		nl_pick_idx_free(&n->pm[i].idx);
	free(n->pm);
	free(n->bkt_off);
	free(n->bkt_leaf);
	free(n);
}

/* A pick index for every leaf large enough to gain from one (nl_pick_idx.h). */
static int
nlsc_build_idx(struct nl_sched *s, struct nlsc *n)
{
	const struct nl_tree *t = s->tree;

	n->pm = calloc(t->n_node, sizeof(*n->pm));
	if (n->pm == NULL)
		return -ENOMEM;
	for (unsigned int l = 0; l < t->n_leaf; l++) {
		uint32_t a = t->leaf_off[l], off[2] = { 0, t->leaf_off[l + 1] - a };
		struct nl_pick_mirror *pm = &n->pm[t->leaf_node[l]];
		int rc;

		if (off[1] < NL_PICK_IDX_MIN_CAND)
			continue;
		rc = nl_pick_idx_build(&pm->idx, 1, off, &t->leaf_mach[a], s->rate, s->n_mach);
		if (rc != 0)
			return rc;
		pm->built = true;
	}
	return 0;
}

static int
nlsc_init(struct nl_sched *s)
{
	struct nlsc *n = calloc(1, sizeof(*n));
	const struct nl_tree *t = s->tree;

	if (n == NULL)
		return -ENOMEM;
	s->n_mgr = t->n_node;
	n->k = s->p.static_known;
	if (n->k > t->n_res || n->k > NLSC_STATIC_MAX_BITS) {
		free(n);
		return -EINVAL;
	}
	if (n->k > 0) {
		uint32_t nb = 1u << n->k;

		n->bkt_off = calloc(nb + 1, sizeof(uint32_t));
		n->bkt_leaf = malloc(t->n_leaf * sizeof(uint32_t));
		if (n->bkt_off == NULL || n->bkt_leaf == NULL) {
			free(n->bkt_off);
			free(n->bkt_leaf);
			free(n);
			return -ENOMEM;
		}
		for (unsigned int l = 0; l < t->n_leaf; l++)
			n->bkt_off[(t->node[t->leaf_node[l]].prefix & nl_res_mask(n->k)) + 1]++;
		for (uint32_t b = 0; b < nb; b++)
			n->bkt_off[b + 1] += n->bkt_off[b];
		uint32_t *fill = calloc(nb, sizeof(uint32_t));

		if (fill == NULL) {
			free(n->bkt_off);
			free(n->bkt_leaf);
			free(n);
			return -ENOMEM;
		}
		for (unsigned int l = 0; l < t->n_leaf; l++) {
			uint32_t b = (uint32_t)(t->node[t->leaf_node[l]].prefix & nl_res_mask(n->k));

			n->bkt_leaf[n->bkt_off[b] + fill[b]++] = t->leaf_node[l];
		}
		free(fill);
	}
	int rc = nlsc_build_idx(s, n);

	if (rc != 0) {
		nlsc_free(n, t->n_node);
		return rc;
	}
	s->priv = n;
	return 0;
}

static void
nlsc_fini(struct nl_sched *s)
{
	nlsc_free(s->priv, s->tree->n_node);
	s->priv = NULL;
}

static uint32_t
nlsc_entry(const struct nl_sched *s, const struct nl_task *t, uint64_t rnd)
{
	const struct nlsc *n = s->priv;
	const struct nl_tree *tr = s->tree;

	if (n->k > 0) {
		uint32_t b = (uint32_t)(t->need & nl_res_mask(n->k));
		uint32_t cnt = n->bkt_off[b + 1] - n->bkt_off[b];

		if (cnt > 0)
			return n->bkt_leaf[n->bkt_off[b] + (uint32_t)(rnd % cnt)];
		/* no group near Delta: appear anywhere, routing will reject */
	}
	return tr->leaf_node[rnd % tr->n_leaf];
}

static double
nlsc_service_vt(const struct nl_sched *s, uint32_t mgr, const struct nl_task *t)
{
	const struct nl_tree_node *nd = &s->tree->node[mgr];

	return nl_route_step(nd->level, nd->prefix, s->tree->n_res, t->need) == NL_ROUTE_ASSIGN ?
		       s->p.pick_service_vt + nl_match_service_vt(s, t) : /* issue #15 hook */
		       s->p.mgr_service_vt;
}

static void
nlsc_decide(struct nl_sched *s, uint32_t mgr, struct nl_task *t, double now_vt,
	    const struct nl_engine *eng)
{
	const struct nl_tree *tr = s->tree;
	enum nl_route_act act;
	uint32_t next, out[NL_TASK_MAX_SPLIT];

	if (!nl_sched_task_ok(s, t)) {
		eng->ops->reject(eng->ctx, t, NL_REJECT_BAD_TASK, now_vt);
		return;
	}
	/* Route until the task reaches its leaf or a manager the engine cannot take it to at
	 * once (another lcore, or a modelled service time: nl_policy.h I6). */
	for (;;) {
		next = nl_tree_next(tr, mgr, t->need, &act);
		if (act == NL_ROUTE_ASSIGN)
			break;
		if (next == NL_NODE_NONE) {
			eng->ops->reject(eng->ctx, t, NL_REJECT_NO_MACHINE, now_vt);
			return;
		}
		if (!nl_engine_pass(eng, t, next, now_vt)) {
			eng->ops->forward(eng->ctx, t, next, now_vt);
			return;
		}
		mgr = next;
	}
	uint32_t l = tr->node[mgr].leaf;
	const uint32_t *cand = &tr->leaf_mach[tr->leaf_off[l]];
	unsigned int n_cand = tr->leaf_off[l + 1] - tr->leaf_off[l];
	const struct nl_mach_load *ld = eng->ops->load(eng->ctx, mgr, now_vt);
	struct nl_pick_mirror *pm = &((struct nlsc *)s->priv)->pm[mgr];
	double si = t->instr / t->n_split, sb = t->data_bits / t->n_split;
	int n;

	if (!pm->built || eng->ops->load_gen == NULL)
		pm = NULL;
	else /* the index follows every booking, whichever way this pick is made */
		nl_pick_mirror_sync(pm, ld, eng->ops->load_gen(eng->ctx, mgr), now_vt);
	if (pm != NULL && nl_match_handle(t) == 0 && nl_pick_idx_worth(n_cand, t->n_split))
		n = nl_pick_idx_pick(&pm->idx, 0, now_vt, si, sb, t->n_split, out); /* no scan */
	else /* issue #15 hook: the scan, or Requirements / Rank when t has a match handle */
		n = nl_match_pick_task(t, cand, n_cand, s->rate, ld, now_vt, si, sb, t->n_split, out);
	if (n < 0) {
		eng->ops->reject(eng->ctx, t, NL_REJECT_NO_MACHINE, now_vt);
		return;
	}
	eng->ops->dispatch(eng->ctx, t, out, (unsigned int)n, now_vt);
	if (pm != NULL) /* t is the engine's now (I2); out[] and the table are ours to read */
		nl_pick_mirror_booked(pm, ld, out, (unsigned int)n, eng->ops->load_gen(eng->ctx, mgr));
}

static void
nlsc_mgr_name(const struct nl_sched *s, uint32_t mgr, char *buf, unsigned int len)
{
	const struct nl_tree_node *nd = &s->tree->node[mgr];
	char bits[NL_RES_MAX + 1];
	struct nl_resvec v = { .set = nd->prefix, .any = 0 };

	if (nd->level == 0)
		snprintf(buf, len, "M(0,root)");
	else
		snprintf(buf, len, "M(%u,%s)", nd->level,
			 nl_res_format(&v, nd->level, bits, sizeof(bits)));
}

static uint32_t
nlsc_top_mgr(const struct nl_sched *s)
{
	(void)s;
	return 0; /* the root M(0): a parent has a smaller id than its children (tree I1) */
}

const struct nl_policy_ops nl_policy_nlsc = {
	.name = "nlsc",
	.init = nlsc_init,
	.fini = nlsc_fini,
	.entry = nlsc_entry,
	.service_vt = nlsc_service_vt,
	.decide = nlsc_decide,
	.measure = NULL,
	.mgr_name = nlsc_mgr_name,
	.top_mgr = nlsc_top_mgr,
	.replace = nl_sched_replace_leaf,
};
