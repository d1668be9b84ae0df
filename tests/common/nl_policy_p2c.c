/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "nl_policy_p2c.h"

struct p2c {
	uint64_t *rng; /* [n_mgr] per-manager xorshift state (policy state per manager, I3) */
};

static uint64_t
p2c_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int
p2c_init(struct nl_sched *s)
{
	struct p2c *p = calloc(1, sizeof(*p));

	s->n_mgr = 1 + s->tree->n_leaf;
	if (p != NULL)
		p->rng = malloc(s->n_mgr * sizeof(*p->rng));
	if (p == NULL || p->rng == NULL) {
		free(p);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->n_mgr; i++)
		p->rng[i] = UINT64_C(0x9e3779b97f4a7c15) * (i + 1);
	s->priv = p;
	return 0;
}

static void
p2c_fini(struct nl_sched *s)
{
	struct p2c *p = s->priv;

	if (p != NULL)
		free(p->rng);
	free(p);
	s->priv = NULL;
}

static uint32_t
p2c_entry(const struct nl_sched *s, const struct nl_task *t, uint64_t rnd)
{
	(void)s;
	(void)t;
	(void)rnd;
	return 0;
}

static double
p2c_service_vt(const struct nl_sched *s, uint32_t mgr, const struct nl_task *t)
{
	(void)t;
	return mgr == 0 ? s->p.mgr_service_vt : s->p.pick_service_vt;
}

/* Expected completion of one more sub-task on machine x: its backlog, the sub-tasks this
 * decision already put on it (out[0..k-1]) and this one. */
static double
p2c_key(const struct nl_sched *s, const struct nl_mach_load *ld, const uint32_t *out,
	unsigned int k, uint32_t x, double now_vt, double si, double sb)
{
	double backlog = ld[x].busy_until_vt - now_vt;
	unsigned int on_x = 1;

	for (unsigned int j = 0; j < k; j++)
		on_x += out[j] == x;
	return (backlog > 0 ? backlog : 0) + on_x * nl_mach_rate_service_vt(&s->rate[x], si, sb);
}

static void
p2c_decide(struct nl_sched *s, uint32_t mgr, struct nl_task *t, double now_vt,
	   const struct nl_engine *eng)
{
	struct p2c *p = s->priv;
	const struct nl_tree *tr = s->tree;
	uint32_t out[NL_TASK_MAX_SPLIT], leaf;

	if (!nl_sched_task_ok(s, t)) {
		eng->ops->reject(eng->ctx, t, NL_REJECT_BAD_TASK, now_vt);
		return;
	}
	leaf = nl_tree_leaf_of(tr, t->need);
	if (leaf == NL_NODE_NONE) {
		eng->ops->reject(eng->ctx, t, NL_REJECT_NO_MACHINE, now_vt);
		return;
	}
	if (mgr == 0) {
		eng->ops->forward(eng->ctx, t, 1 + leaf, now_vt);
		return;
	}
	const uint32_t *cand = &tr->leaf_mach[tr->leaf_off[leaf]];
	unsigned int n_cand = tr->leaf_off[leaf + 1] - tr->leaf_off[leaf], n_live = 0;
	const struct nl_mach_load *ld = eng->ops->load(eng->ctx, mgr, now_vt);
	double si = t->instr / t->n_split, sb = t->data_bits / t->n_split;
	uint32_t live[256];

	for (unsigned int c = 0; c < n_cand && n_live < 256; c++)
		if (ld[cand[c]].busy_until_vt < NL_MACH_GONE_VT)
			live[n_live++] = cand[c];
	if (n_live == 0 || mgr != 1 + leaf) {
		eng->ops->reject(eng->ctx, t, NL_REJECT_NO_MACHINE, now_vt);
		return;
	}
	for (unsigned int k = 0; k < t->n_split; k++) {
		uint32_t a = live[p2c_next(&p->rng[mgr]) % n_live];
		uint32_t b = live[p2c_next(&p->rng[mgr]) % n_live];

		out[k] = p2c_key(s, ld, out, k, b, now_vt, si, sb) <
				 p2c_key(s, ld, out, k, a, now_vt, si, sb) ?
			 b :
			 a;
	}
	eng->ops->dispatch(eng->ctx, t, out, t->n_split, now_vt);
}

static void
p2c_mgr_name(const struct nl_sched *s, uint32_t mgr, char *buf, unsigned int len)
{
	(void)s;
	if (mgr == 0)
		snprintf(buf, len, "front");
	else
		snprintf(buf, len, "leaf%u", mgr - 1);
}

static uint32_t
p2c_top_mgr(const struct nl_sched *s)
{
	(void)s;
	return 0;
}

const struct nl_policy_ops nl_test_policy_p2c = {
	.name = "p2c",
	.init = p2c_init,
	.fini = p2c_fini,
	.entry = p2c_entry,
	.service_vt = p2c_service_vt,
	.decide = p2c_decide,
	.measure = NULL,
	.mgr_name = p2c_mgr_name,
	.top_mgr = p2c_top_mgr,
	.replace = nl_sched_replace_leaf,
};
