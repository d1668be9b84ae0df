/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale-out: local entry (issue #36, docs/scale-out.md "Local entry"). Without it a new task
 * enters the tree where the policy's entry() says over the whole tree (NLSC: a random leaf;
 * 2LSC: a random group scheduler), so with k appliances about (k - 1) / k of the tasks start by
 * crossing. With it ([scaleout] entry = local, the default) a task that this appliance's own
 * machines can take enters at one of this appliance's managers, drawn from the policy's own
 * entry() restricted to them (up to XA_ENTRY_TRIES draws: the policy's distribution over our
 * managers, by rejection), and crosses only when the policy's routing sends it elsewhere.
 * The entry manager is handed to the engine (nl_dp_ingress_at_st()); the manager lcores see
 * no difference. Also here: the detour of a task whose next manager is on a dead appliance
 * (issue #36, docs/scale-out.md "Detours"), and which machines' load is this appliance's own.
 * Control lcore only.
 */
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "nl_atomic.h"
#include "nl_dp_inline.h"
#include "nl_xa_core.h"

void
nl_xa_entry_init(struct nl_xa *xa, const struct nl_sched *s)
{
	xa->n_local_vec = 0;
	for (uint32_t m = 0; m < s->n_mach; m++) {
		const struct nl_resvec *v = &s->mach[m].res;
		unsigned int i;

		if (xa->mach_app[m] != xa->self)
			continue;
		for (i = 0; i < xa->n_local_vec && i < XA_LOCAL_VEC; i++)
			if (xa->local_vec[i].set == v->set && xa->local_vec[i].any == v->any)
				break;
		if (i < xa->n_local_vec)
			continue;
		if (xa->n_local_vec == XA_LOCAL_VEC) {
			xa->n_local_vec = XA_LOCAL_VEC + 1; /* too many to list: every task may */
			return;
		}
		xa->local_vec[xa->n_local_vec++] = *v;
	}
}

/* Whether one of our machines holds what t needs (a leaf's machines' rule, subset). */
static bool
can_take(const struct nl_xa *xa, const struct nl_sched *s, uint64_t need)
{
	if (xa->n_local_vec > XA_LOCAL_VEC)
		return true;
	for (unsigned int i = 0; i < xa->n_local_vec; i++)
		if (nl_res_match(&xa->local_vec[i], need, s->tree->n_res, true))
			return true;
	return false;
}

uint32_t
nl_xa_entry_ctl(struct nl_port *io, const struct nl_task *t, uint64_t rnd)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	const struct nl_sched *s;
	uint64_t r = rnd;

	if (xa == NULL || xa->cfg.entry_tree)
		return NL_NODE_NONE;
	s = io->dp->gen_rcu->s;
	if (xa->n_local_vec == 0 || !can_take(xa, s, t->need)) {
		nl_stat_add_st(&xa->entry_policy, 1);
		return NL_NODE_NONE;
	}
	for (unsigned int i = 0; i < XA_ENTRY_TRIES; i++) {
		uint32_t m = s->ops->entry(s, t, r);

		if (m < s->n_mgr && xa->mgr_app[m] == xa->self) {
			nl_stat_add_st(&xa->entry_local, 1);
			return m;
		}
		r = r * 6364136223846793005ull + 1442695040888963407ull; /* next draw (Knuth LCG) */
		r ^= r >> 29;
	}
	nl_stat_add_st(&xa->entry_policy, 1);
	return NL_NODE_NONE;
}

/* Whether subtree root r (of a live appliance) has a machine holding need. */
static bool
root_can_take(const struct xa_root *r, const struct nl_sched *s, uint64_t need)
{
	for (unsigned int i = 0; i < r->n_mach; i++)
		if (r->mach[i] < s->n_mach &&
		    nl_res_match(&s->mach[r->mach[i]].res, need, s->tree->n_res, true))
			return true;
	return false;
}

/* The first live subtree root, ours first, other than avoid, whose machines hold need. */
static uint32_t
detour_root(const struct nl_xa *xa, const struct nl_sched *s, uint64_t need, uint32_t avoid)
{
	for (unsigned int pass = 0; pass < 2; pass++) /* our own roots first, then live peers' */
		for (unsigned int i = 0; i < xa->n_root; i++) {
			const struct xa_root *r = &xa->root[i];
			bool own = r->app == xa->self;

			if (own != (pass == 0) || r->mgr == avoid || (!own && !xa->peer[r->app].live))
				continue;
			if (root_can_take(r, s, need))
				return r->mgr;
		}
	return NL_NODE_NONE;
}

bool
nl_xa_detour_ctl(struct nl_port *io, struct nl_task *t, uint32_t to_mgr)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_task *xt = &xa->task[t->aux];
	uint32_t to;

	if ((xt->flags & XA_TF_DETOURED) || t->hops >= XA_DETOUR_MAX_HOPS)
		return false;
	to = detour_root(xa, io->dp->gen_rcu->s, t->need, to_mgr);
	if (to == NL_NODE_NONE)
		return false;
	xt->flags |= XA_TF_DETOURED;
	t->flags &= ~NL_MODEL_SUBS_MASK;
	t->hops++;
	if (!nl_dp_inbox_put_ctl(io->dp, t, to))
		return false;
	nl_atomic_store_relaxed(&xa->detoured, xa->detoured + 1);
	return true;
}

/* The load tables' view of this appliance's machines: the summaries of other appliances'
 * subtrees stand for their machines (placement by load, nl_xa_place_ctl()). */

const struct nl_mach_load *
nl_xa_local_load_ctl(void *ext, const struct nl_mach_load *w, unsigned int n_mach)
{
	struct nl_xa *xa = ext;

	if (xa == NULL)
		return w;
	for (unsigned int m = 0; m < n_mach; m++) {
		xa->local_load[m] = w[m];
		if (xa->mach_app[m] != xa->self)
			xa->local_load[m].busy_until_vt = NL_MACH_GONE_VT;
	}
	return xa->local_load;
}

bool
nl_xa_keeps_load(const void *ext, uint32_t m)
{
	const struct nl_xa *xa = ext;

	return xa != NULL && xa->mach_inst[m];
}
