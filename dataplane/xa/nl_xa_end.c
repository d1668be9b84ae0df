/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale-out's task ends and parked bookkeeping (nl_xa.h): a task failed (REJECT to its client,
 * or handed back failed), re-routed once when its client asked for it, answered lost when the
 * appliance holding it lost it; a parked task found by its hand-over handle, and made ours
 * again. Called by the hand-over code (nl_xa.c) and "asked before machine_lost"
 * (nl_xa_relay.c); calls only down (the port's finish, the engine's inboxes). Control lcore
 * only.
 */
#include <string.h>

#include <rte_cycles.h>

#include "nl_atomic.h"
#include "nl_policy.h"
#include "nl_xa_core.h"

void
nl_xa_set_failed(struct nl_task *t, enum nl_reject_reason why)
{
	t->flags = (t->flags & ~(NL_MODEL_SUBS_MASK | (0xffu << NL_TF_REASON_SHIFT))) |
		   NL_TF_FAILED | ((uint32_t)why << NL_TF_REASON_SHIFT);
}

uint16_t
nl_xa_end_reason(const struct nl_task *t)
{
	uint16_t why = (uint16_t)((t->flags >> NL_TF_REASON_SHIFT) & 0xff);

	if (!(t->flags & NL_TF_FAILED))
		return 0;
	return why != 0 ? why : NL_REJECT_OVERLOAD;
}

/* A task we cannot carry on here: ours is answered REJECT `why`; a foreign one is handed back
 * failed (nl_xa_finish_ctl() from the port's finish). */
void
nl_xa_fail_task(struct nl_port *io, struct nl_task *t, enum nl_reject_reason why)
{
	nl_xa_set_failed(t, why);
	nl_dp_port_finish(io, t);
}

/* A task whose next appliance is gone, when its client asked for it (SUBMIT flag reroute):
 * once, back into a live part of the tree: the top manager when its appliance is live, else
 * the first subtree root this appliance owns. It is routed from there as a new task would be
 * (machines of a gone appliance are gone in the load table). again: a task re-routed already
 * whose move (by a peer that did not know yet) to an appliance declared gone before that was
 * no second loss. false: answer machine_lost. */
bool
nl_xa_reroute_ctl(struct nl_port *io, struct nl_task *t, bool again)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	struct xa_task *xt = &xa->task[t->aux];
	const struct nl_sched *s = dp->gen_rcu->s;
	uint32_t to = s->ops->top_mgr(s);

	if (!(xt->flags & NL_XA_TF_REROUTE) || (!again && (xt->flags & NL_XA_TF_REROUTED)))
		return false;
	if (xa->mgr_app[to] != xa->self && !xa->peer[xa->mgr_app[to]].live) {
		to = NL_NODE_NONE;
		for (unsigned int i = 0; i < xa->n_root && to == NL_NODE_NONE; i++)
			if (xa->root[i].app == xa->self)
				to = xa->root[i].mgr;
		if (to == NL_NODE_NONE)
			return false;
	}
	xt->flags |= NL_XA_TF_REROUTED;
	xt->rr_epoch = xa->gone_epoch;
	t->flags &= ~NL_MODEL_SUBS_MASK;
	t->hops++;
	if (!nl_dp_inbox_put_ctl(dp, t, to))
		return false;
	nl_atomic_store_relaxed(&xa->rerouted, xa->rerouted + 1);
	return true;
}

struct nl_task *
nl_xa_parked_lookup(struct nl_xa *xa, uint32_t token, uint32_t seq, uint64_t id)
{
	struct nl_dp *dp = xa->dp;
	const struct xa_task *xt;
	struct nl_task *t;

	if (token >= dp->n_pool)
		return NULL;
	xt = &xa->task[token];
	t = dp->pool_task[token];
	if (t == NULL || xt->state != XA_PARKED || xt->seq != seq || t->id != id)
		return NULL;
	return t;
}

void
nl_xa_answer_words(struct nl_port *io, struct nl_task *t, const struct xa_words *w,
		   bool end_unheard)
{
	struct nl_dp_meta *mt = &io->meta[t->aux];
	uint64_t all = t->n_split >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << t->n_split) - 1;
	unsigned int n_end = (unsigned int)__builtin_popcountll(w->end & all);

	mt->n_done = (uint8_t)n_end;
	mt->status = w->status;
	if (n_end < t->n_split || end_unheard)
		mt->end_reason = NL_REJECT_MACHINE_LOST;
	t->flags &= ~NL_MODEL_SUBS_MASK;
	nl_dp_port_finish(io, t);
}

void
nl_xa_lost_wait_end(struct nl_xa *xa, struct xa_task *xt)
{
	if (xt->lost_tsc != 0)
		nl_atomic_store_relaxed(&xa->restart_waiting, xa->restart_waiting - 1);
	xt->lost_tsc = 0;
}

void
nl_xa_unpark(struct nl_xa *xa, struct nl_task *t)
{
	struct xa_task *xt = &xa->task[t->aux];

	if (xt->await)
		nl_atomic_store_relaxed(&xa->awaiting, xa->awaiting - 1);
	nl_xa_lost_wait_end(xa, xt);
	xt->state = XA_OWN;
	xt->await = 0;
	xt->unsent = 0;
	xt->dead_at = 0;
	memset(&xt->w, 0, sizeof(xt->w));
	nl_atomic_store_relaxed(&xa->parked, xa->parked - 1);
}

bool
nl_xa_lost_one_ctl(struct nl_port *io, struct nl_task *t, unsigned int app)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	const struct xa_task *xt = &xa->task[t->aux];
	/* re-routed after app was declared gone, it reached app only by a peer that did not know
	 * yet (a *moved* note, nl_xa_dead_at_wait_ctl()): no second loss, it may go again */
	bool again = (xt->flags & NL_XA_TF_REROUTED) && app < xa->cfg.n_app &&
		     xa->peer[app].gone_epoch <= xt->rr_epoch;

	nl_xa_unpark(xa, t);
	if (nl_xa_reroute_ctl(io, t, again))
		return true;
	nl_xa_fail_task(io, t, NL_REJECT_MACHINE_LOST);
	xa->peer[app].lost_tasks++;
	xa->lost_tasks++;
	return false;
}
