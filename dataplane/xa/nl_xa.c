/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale-out (nl_xa.h): hand-over and hand-back of tasks between appliances, proxies,
 * membership, the control-lcore round and reception.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include <sodium.h>

#include "nl_atomic.h"
#include "nl_dp_farm.h"
#include "nl_dp_inline.h"
#include "nl_port_priv.h"
#include "nl_gossip.h"
#include "nl_policy.h"
#include "nl_rng.h"
#include "nl_xa_core.h"

/* ---------------------------------------------------------------- task ends ---- */

bool
nl_xa_finish_ctl(struct nl_port *io, struct nl_task *t)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	struct nl_dp_meta *mt = &io->meta[t->aux];
	struct xa_task *xt = &xa->task[t->aux];
	struct nl_xa_back b;
	bool told = xt->flags & XA_TF_TOLD;

	if (xt->state != XA_FOREIGN)
		return nl_xa_own_end_ctl(io, t); /* #36: a resend tied to it; its end kept */
	xt->flags = 0; /* the task ends here: its object starts clean */
	memset(&b, 0, sizeof(b));
	b.task_id = t->id;
	b.origin_token = xt->token;
	b.origin_seq = xt->seq;
	b.reason = nl_xa_end_reason(t);
	b.n_done = mt->n_done;
	b.status = mt->status;
	b.hops = t->hops;
	nl_xa_queue_back_ctl(io, xt->origin, &b);
	nl_xa_crossed_end_ctl(io, t, told); /* #36: its client may resend it at the origin's standby */
	mt->active = 0;
	xt->state = XA_OWN;
	rte_mempool_put(dp->pool, t);
	nl_atomic_store_relaxed(&xa->foreign_live, xa->foreign_live - 1);
	return true;
}

/* ---------------------------------------------------------------- hand-over out ---- */

/* Into manager m's inbox; at one of our own managers whose subtree we left at our standby
 * (#36 failback = no) it is handed there instead: nothing decides at it here. */
static bool
put_at(struct nl_port *io, struct nl_task *t, uint32_t m)
{
	struct nl_xa *xa = nl_xa_of(io->dp);

	if (xa->mgr_home[m] != xa->self || xa->mgr_app[m] == xa->self)
		return nl_dp_inbox_put_ctl(io->dp, t, m);
	nl_xa_hand_out_ctl(io, t, m);
	return true;
}

/* Port hook entry_ctl: local entry (nl_xa_entry.c); a task whose entry manager is one of ours
 * left at our standby (#36 failback = no) is handed there at once; a client's resend at a
 * standby is held for the words of the dead appliance's workers (#36, nl_xa_resend.c). */
static uint32_t
entry_hook(struct nl_port *io, struct nl_task *t, uint64_t rnd)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	const struct nl_sched *s = io->dp->gen_rcu->s;
	uint32_t at, m;

	if (xa != NULL && nl_xa_resend_take_ctl(io, t))
		return NL_PORT_ENTRY_TAKEN;
	at = nl_xa_entry_ctl(io, t, rnd);
	if (xa == NULL || at != NL_NODE_NONE || xa->holder[xa->self] == xa->self)
		return at;
	m = s->ops->entry(s, t, rnd); /* the port's own choice with the same draw */
	if (m >= io->dp->n_mgr || xa->mgr_home[m] != xa->self || xa->mgr_app[m] == xa->self ||
	    !xa->peer[xa->mgr_app[m]].live || (xa->task[t->aux].flags & XA_TF_FARM))
		return NL_NODE_NONE;
	nl_xa_hand_out_ctl(io, t, m);
	nl_atomic_store_relaxed(&xa->entry_taken, xa->entry_taken + 1);
	return NL_PORT_ENTRY_TAKEN;
}

/* Drain the proxies' inboxes (the pending bits other lcores set, as a manager lcore does):
 * tasks for another appliance's managers are handed out; at managers this appliance adopted
 * as a standby (#36) the control lcore decides itself. */
static unsigned int
drain_proxies(struct nl_port *io)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct nl_dp_lcore *px = xa->proxy;
	unsigned int work = 0, n_words = (px->n_mgr + 63) / 64;

	for (unsigned int w = 0; w < n_words; w++) {
		uint64_t bits;

		if (nl_atomic_load_relaxed(&px->pend[w]) == 0)
			continue;
		bits = nl_atomic_xchg_acquire(&px->pend[w], 0);
		while (bits != 0) {
			unsigned int b = (unsigned int)__builtin_ctzll(bits);
			struct nl_dp_mgr *mg = px->mgr[w * 64 + b];
			struct nl_dp_msg msg[32];
			unsigned int n;

			bits &= bits - 1;
			if (xa->mgr_app[mg->id] == xa->self) { /* #36: adopted as a standby */
				n = nl_dp_mgr_serve_ctl(px, mg);
				nl_atomic_store_relaxed(&xa->adopted_in, xa->adopted_in + n);
				work += n;
				continue;
			}
			n = rte_ring_sc_dequeue_burst_elem(mg->inbox, msg, sizeof(msg[0]), 32, NULL);
			for (unsigned int i = 0; i < n; i++)
				nl_xa_hand_out_ctl(io, msg[i].t, mg->id);
			mg->tasks_in += n;
			work += n;
			if (rte_ring_count(mg->inbox) > 0)
				nl_dp_mgr_mark(mg);
		}
	}
	return work;
}

/* ---------------------------------------------------------------- hand-over in ---- */

static void
reject_back(struct nl_port *io, const struct nl_xa_task *r, enum nl_reject_reason why)
{
	struct nl_xa_back b = { .task_id = r->task_id,
				.origin_token = r->origin_token,
				.origin_seq = r->origin_seq,
				.reason = (uint16_t)why,
				.hops = r->hops };

	nl_xa_queue_back_ctl(io, r->origin_app, &b);
}

static void
hand_in(struct nl_port *io, const struct nl_xa_task *r)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	struct nl_dp_meta *mt;
	struct xa_task *xt;
	struct nl_task *t;
	void *obj;

	if (r->to_mgr >= dp->n_mgr || r->origin_app >= xa->cfg.n_app) {
		xa->bad_task++;
		if (r->origin_app < xa->cfg.n_app && r->origin_app != xa->self)
			reject_back(io, r, NL_REJECT_BAD_TASK);
		return;
	}
	if (r->flags & NL_XA_TF_RESEND) { /* #36: a resend our standby passed: never run here */
		nl_xa_pass_in_ctl(io, r);
		return;
	}
	if (r->origin_app == xa->self) { /* one of ours comes back (e.g. up to our root) */
		t = nl_xa_parked_lookup(xa, r->origin_token, r->origin_seq, r->task_id);
		if (t == NULL) {
			xa->stale_back++;
			return;
		}
		nl_xa_unpark(xa, t);
		t->hops = r->hops;
		xa->task[t->aux].flags = r->flags;
		if (!put_at(io, t, r->to_mgr))
			nl_xa_fail_task(io, t, NL_REJECT_OVERLOAD);
		return;
	}
	if (rte_mempool_get(dp->pool, &obj) != 0) {
		xa->overload_in++;
		reject_back(io, r, NL_REJECT_OVERLOAD);
		return;
	}
	t = obj;
	mt = &io->meta[t->aux];
	xt = &xa->task[t->aux];
	t->id = r->task_id;
	t->need = r->need;
	t->instr = (double)r->instr;
	t->data_bits = (double)r->data_bits;
	t->n_split = r->n_split;
	t->t_arrive_vt = nl_dp_now_vt(dp) - (double)r->age_us * 1000.0 / dp->o.ns_per_vt;
	t->sched_wait_vt = 0;
	t->hops = r->hops;
	t->flags = 0;
	memset(&mt->client_ts_ns, 0, offsetof(struct nl_dp_meta, sub_mach) -
					     offsetof(struct nl_dp_meta, client_ts_ns));
	mt->active = 0;
	mt->ingress_tsc = rte_rdtsc() - (uint64_t)((double)r->age_us * 1e-6 *
						   (double)rte_get_tsc_hz());
	mt->cmd_id = r->cmd_id;
	mt->args_len = r->args_len;
	memcpy(mt->args, r->args, r->args_len);
	memset(mt->sub_mach, 0xff, sizeof(mt->sub_mach));
	xt->state = XA_FOREIGN;
	xt->flags = r->flags;
	xt->origin = r->origin_app;
	xt->token = r->origin_token;
	xt->seq = r->origin_seq;
	xt->cip = r->client_ip;
	xt->cport = r->client_port;
	nl_atomic_store_relaxed(&xa->foreign_live, xa->foreign_live + 1);
	if (!put_at(io, t, r->to_mgr))
		nl_xa_fail_task(io, t, NL_REJECT_OVERLOAD); /* handed back failed */
}

/* Whether parked task t, which the transit that passed it on to xm->at said it forgot
 * unacknowledged, is settled now: not while xm->at is dead here (held: our own hold's end
 * settles it, with the words of its workers, settle_lost()), nor when xm->at restarted
 * (settle_lost() made it wait for the words of its workers); else as settle_lost() would. */
static void
unsent_settle(struct nl_port *io, struct nl_task *t)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_task *xm = &xa->task[t->aux];

	if (xm->lost_tsc != 0 && !xm->dead_at) /* xm->at restarted: its workers' words */
		return;
	if (xm->at < xa->cfg.n_app && xm->at != xa->self && !xa->peer[xm->at].live &&
	    !xm->dead_at) {
		xm->unsent = 1; /* swim_events() settles it if xm->at is back first */
		return;
	}
	if (!nl_xa_pass_back_ctl(io, t) && !nl_xa_asked_ctl(io, t))
		nl_xa_lost_one_ctl(io, t, xm->at < xa->cfg.n_app ? xm->at : xa->self);
}

/* A transit's word that its hand-over of parked task t to b->at_app was never acknowledged
 * and is forgotten (b->at_app declared dead there and not back within its hold): unless we
 * know the task further on (a later move), no one holds it to answer it, and waiting we would
 * wait for ever once b->at_app is live here (back within our own hold: a partition whose
 * verdicts came at different times). It may have arrived unacknowledged, as may a held
 * HANDOVER of ours forgotten at the end of our hold. */
static void
unsent_back(struct nl_port *io, struct nl_task *t, const struct nl_xa_back *b)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	const struct xa_task *xm = &xa->task[t->aux];

	/* only a task we know at b->at_app (or, passed home to us, at the transit), by that
	 * hand-over or an older one: a word from a transit whose note we have not applied, or
	 * of a place we know it left, is late */
	if (xm->state != XA_PARKED || (xm->at != b->at_app && b->at_app != xa->self) ||
	    nl_xa_moved_newer(xm->at_hops, b->hops)) {
		xa->late_moved++;
		return;
	}
	xa->unsent++;
	unsent_settle(io, t);
}

static void
back_in(struct nl_port *io, const struct nl_xa_back *b)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	struct nl_task *t = nl_xa_parked_lookup(xa, b->origin_token, b->origin_seq, b->task_id);
	struct nl_dp_meta *mt;

	if (b->reason == NL_XA_REASON_WORKER) { /* #36: a worker's word, relayed by a standby */
		nl_xa_worker_word_ctl(io, b);
		return;
	}
	if (b->reason == NL_XA_REASON_CLIENT || b->reason == NL_XA_REASON_CLIENT_SUB) {
		/* #36: a dead one's client task that crossed, or a word its new life passed on */
		nl_xa_client_back_ctl(io, b);
		return;
	}
	if (b->reason == NL_XA_REASON_NOT_HELD && t != NULL && nl_xa_pass_back_ctl(io, t))
		return; /* #36: the resend we passed is of no task there: decided here */
	if (t == NULL) { /* answered already (its appliance was declared gone), or forged */
		if (b->reason == NL_XA_REASON_MOVED || b->reason == NL_XA_REASON_UNSENT)
			/* a note overtaken by the task's end */
			xa->late_moved++;
		else
			xa->stale_back++;
		return;
	}
	if (b->reason == NL_XA_REASON_UNSENT) { /* #36: a transit forgot its hand-over */
		unsent_back(io, t, b);
		return;
	}
	if (b->reason == NL_XA_REASON_MOVED) { /* still away: now at another appliance */
		struct xa_task *xm = &xa->task[t->aux];

		/* Notes of one task come from each appliance it passed, over different links:
		 * one sent before a later move may arrive after it. Applied, it would put the
		 * task where it no longer is (answered machine_lost when that one dies though it
		 * runs elsewhere; or waiting for ever on a live one that passed it on to one
		 * that died). The later note has more hops (nl_xa_hand_out_ctl()); an older one is late. */
		if (!nl_xa_moved_newer(b->hops, xm->at_hops)) {
			xa->late_moved++;
			return;
		}
		xm->at_hops = b->hops;
		xm->unsent = 0; /* it moved on from where it was said unsent */
		nl_xa_dead_at_clear(xa, t); /* ... or said to be at one dead here */
		if (b->at_app < xa->cfg.n_app && b->at_app != xa->self)
			xm->at = b->at_app;
		xa->moved++;
		if (b->at_app < xa->cfg.n_app && !xa->peer[b->at_app].live &&
		    xa->peer[b->at_app].hold_tsc == 0) { /* (held there: settle_lost() answers) */
			/* moved to an appliance declared gone here before the note arrived, its
			 * hold over: the mover saw it live. Answered now, the task could run there
			 * all the same (a restarted appliance's new life, live for the mover
			 * before SWIM says so here: seen in scaleout_asked as tasks answered
			 * REJECT machine_lost that ran); it waits there instead */
			xa->moved_dead++;
			nl_xa_dead_at_wait_ctl(io, t);
		}
		return;
	}
	nl_xa_unpark(xa, t);
	mt = &io->meta[t->aux];
	mt->n_done = (uint8_t)b->n_done;
	mt->status = b->status;
	t->hops = b->hops;
	t->flags &= ~NL_MODEL_SUBS_MASK;
	if (b->reason != 0)
		nl_xa_set_failed(t, (enum nl_reject_reason)b->reason);
	nl_dp_port_finish(io, t);
}

/* ---------------------------------------------------------------- membership ---- */

/* Whether pool task i is parked at appliance app. */
static bool
parked_there(const struct nl_dp *dp, const struct nl_xa *xa, unsigned int i, unsigned int app)
{
	return xa->task[i].state == XA_PARKED && xa->task[i].at == app && dp->pool_task[i] != NULL;
}

/* Tasks parked at appliance app now. */
static uint64_t
parked_at(const struct nl_dp *dp, const struct nl_xa *xa, unsigned int app)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < dp->n_pool; i++)
		n += parked_there(dp, xa, i, app);
	return n;
}

/* Whether the hold of what is parked at dead appliance `app` is over: dead_hold_s passed,
 * and nothing is parked there or its workers' word is not waited for any more
 * (nl_xa_hold_on_ctl(): we run its subtree and its workers have not all failed over yet). */
static bool
hold_over(struct nl_port *io, unsigned int app, uint64_t now)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	const struct xa_peer *p = &xa->peer[app];

	if (p->hold_tsc == 0 || p->live || now < p->hold_tsc)
		return false;
	if (!p->holding_on && parked_at(io->dp, xa, app) == 0)
		return true;
	return !nl_xa_hold_on_ctl(io, app, now);
}

/* What was parked at appliance `app` (declared dead `why`, its hold over or not wanted) is
 * answered REJECT machine_lost or re-routed, now (X1: each exactly once); our unacknowledged
 * HANDOVERs to it are forgotten (HANDBACKs too when it `restarted`). */
static void
settle_lost(struct nl_port *io, unsigned int app, const char *why, bool restarted)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	uint64_t n = 0, r = 0, w = 0, u;

	for (unsigned int i = 0; i < dp->n_pool; i++) {
		struct nl_task *t = dp->pool_task[i];

		if (!parked_there(dp, xa, i, app) || nl_xa_pass_back_ctl(io, t) ||
		    nl_xa_asked_ctl(io, t)) /* #36: a resend passed there; it ran */
			continue;
		if (restarted && nl_xa_restart_wait_ctl(io, t)) { /* #36: its workers' word */
			w++;
			continue;
		}
		if (nl_xa_lost_one_ctl(io, t, app))
			r++;
		else
			n++;
	}
	u = nl_xa_rtx_clear_ctl(io, app, restarted);
	xa->peer[app].hold_tsc = 0;
	xa->peer[app].holding_on = false; /* its slots to any worker again (nl_xa_owns_mach()) */
	XA_LOG(WARNING, "appliance %s %s: %llu tasks parked there answered REJECT machine_lost, "
	       "%llu re-routed, %llu wait for its workers' word; %llu tasks of other appliances "
	       "whose hand-over there was not acknowledged: their origins told\n",
	       xa->cfg.app[app].name, why, (unsigned long long)n, (unsigned long long)r,
	       (unsigned long long)w, (unsigned long long)u);
}

void
nl_xa_declare_lost_ctl(struct nl_port *io, unsigned int app, const char *why, bool hold)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	struct xa_peer *p = &xa->peer[app];

	nl_xa_flush_peer_ctl(io, app);
	p->gone_epoch = ++xa->gone_epoch;
	/* its machines are gone for the policies first: a task re-routed below must not be
	 * placed on them again (the lcore that takes it sees this snapshot) */
	nl_xa_install_ctl(io, app, true);
	if (!hold || xa->cfg.dead_hold_s <= 0) {
		settle_lost(io, app, why, !hold);
		return;
	}
	p->hold_tsc = rte_rdtsc() + (uint64_t)(xa->cfg.dead_hold_s * (double)rte_get_tsc_hz());
	p->full_tsc = 0; /* (nl_xa_hold_on_ctl()) */
	p->holding_on = false;
	XA_LOG(WARNING, "appliance %s %s: %llu tasks parked there held for %g s (dead_hold_s) "
	       "in case it returns, then answered\n", xa->cfg.app[app].name, why,
	       (unsigned long long)parked_at(dp, xa, app), xa->cfg.dead_hold_s);
}

/* Any datagram of appliance `app`: its MAC, its boot incarnation (a new one: it restarted,
 * what was parked at it is answered). Whether it is live is SWIM's word alone (swim_events()),
 * never "it spoke": a peer declared dead that speaks again is told so by SWIM and refutes. */
static void
peer_heard(struct nl_port *io, unsigned int app, uint64_t inc, const struct nl_frame_addr *a)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_peer *p = &xa->peer[app];

	memcpy(p->mac, a->src_mac, 6);
	p->mac_known = true;
	p->last_rx_s = nl_xa_real_s();
	p->rx_dgrams++;
	if (p->inc != 0 && p->inc != inc) { /* it restarted: it has lost what it held of ours */
		if (p->live) {
			nl_xa_declare_lost_ctl(io, app, "restarted", false);
			p->gone++;
			p->rejoined++;
		} else if (p->hold_tsc != 0) {
			settle_lost(io, app, "restarted while declared dead", true);
		}
		nl_xa_crossed_dead_ctl(io, app); /* #36: its clients may resend at its standby */
		xa->reborn_tsc[app] = rte_rdtsc(); /* ... held there a while (nl_xa_resend.c) */
	}
	if (p->inc != inc) { /* a new incarnation numbers its datagrams from 1 */
		p->rx_hi = 0;
		memset(p->rx_win, 0, sizeof(p->rx_win));
	}
	p->inc = inc;
}

/* Act on SWIM's verdicts (flagged by nl_xa_swim.c): a DEAD appliance is declared gone (what
 * was parked there answered or re-routed, its machines gone in the load table); one that
 * refuted its death (a new SWIM incarnation) is live again, its last summaries installed. A
 * SUSPECT appliance stays live: suspicion is not a verdict (SWIM §4.2). */
static void
swim_events(struct nl_port *io)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	uint64_t dead = xa->swim_dead_pend, alive = xa->swim_alive_pend;

	xa->swim_dead_pend = 0;
	xa->swim_alive_pend = 0;
	for (unsigned int a = 0; a < xa->cfg.n_app; a++) {
		struct xa_peer *p = &xa->peer[a];

		if (a == xa->self)
			continue;
		if ((dead & (UINT64_C(1) << a)) && p->live) {
			p->live = false;
			p->gone++;
			nl_xa_declare_lost_ctl(io, a, "gone (SWIM: suspected and not refuted within "
						      "the suspicion timeout)", true);
			nl_xa_standby_dead_ctl(io, a); /* #36: its standby takes its subtree */
			nl_xa_crossed_dead_ctl(io, a); /* #36: ... and hears of its crossed tasks */
		}
		if ((alive & (UINT64_C(1) << a)) && !p->live) {
			uint64_t kept = p->hold_tsc != 0 ? parked_at(io->dp, xa, a) : 0;

			p->live = true;
			p->rejoined++;
			p->hold_tsc = 0; /* back in time: its hand-backs settle what it holds */
			p->holding_on = false;
			p->hold_kept += kept;
			XA_LOG(INFO, "appliance %s rejoined (SWIM: alive at incarnation %u); %llu tasks "
			       "parked there kept\n", xa->cfg.app[a].name, p->swim_inc,
			       (unsigned long long)kept);
			nl_xa_standby_alive_ctl(io, a); /* #36: its subtree back from its standby */
			nl_xa_install_ctl(io, a, false);
			for (unsigned int i = 0; i < io->dp->n_pool; i++) { /* unsent_settle() */
				if (!parked_there(io->dp, xa, i, a))
					continue;
				nl_xa_dead_at_clear(xa, io->dp->pool_task[i]); /* it is there */
				if (xa->task[i].unsent)
					unsent_settle(io, io->dp->pool_task[i]);
			}
		}
	}
}

/* ---------------------------------------------------------------- rounds ---- */

unsigned int
nl_xa_poll_ctl(struct nl_port *io)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	unsigned int work;
	uint64_t now = rte_rdtsc();

	if (xa == NULL)
		return 0;
	work = drain_proxies(io);
	if (now >= xa->next_check_tsc) { /* 100 times a second: is a gossip round due? */
		double s = nl_xa_real_s();

		xa->next_check_tsc = now + xa->check_cyc;
		for (unsigned int a = 0; a < xa->cfg.n_app; a++) {
			if (a == xa->self)
				continue;
			nl_xa_retransmit_ctl(io, a, now);
			if (hold_over(io, a, now))
				settle_lost(io, a, "not back within dead_hold_s", false);
		}
		nl_xa_await_poll_ctl(io); /* #36: tasks that ran, waiting for their ends */
		nl_xa_resend_poll_ctl(io); /* #36: clients' resends held at the standby */
		/* membership: SWIM's timers on our monotonic clock, then its verdicts */
		if (nl_xa_swim_tick_ctl(io) == 0)
			swim_events(io);
		nl_xa_hold_tick_ctl(io, now); /* #36 failback = no */
		if (s >= xa->next_gossip_s) {
			xa->next_gossip_s = s + xa->cfg.gossip_period_s;
			nl_xa_gossip_round_ctl(io, s);
			nl_xa_gossip_push_ctl(io);
			work++;
		}
	}
	for (unsigned int a = 0; a < xa->cfg.n_app; a++)
		if (xa->peer[a].out_task.n > 0 || xa->peer[a].out_back.n > 0 ||
		    xa->peer[a].out_ack.n > 0)
			nl_xa_flush_round_ctl(io, a, now);
	return work;
}

/* #36 paired: the configured peer speaking from a's address, or NL_XA_MAX_APPS. */
static unsigned int
pair_from(const struct nl_xa *xa, const struct nl_frame_addr *a)
{
	for (unsigned int i = 0; i < xa->cfg.n_app; i++)
		if (i != xa->self && xa->cfg.app[i].ip == a->src_ip &&
		    xa->cfg.app[i].port == a->src_port)
			return i;
	return NL_XA_MAX_APPS;
}

void
nl_xa_rx_ctl(struct nl_port *io, const struct nl_frame_addr *a, const uint8_t *pl, size_t plen)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	static struct nl_xa_msg m; /* control lcore only (X2); too large for its stack */
	const struct nl_auth_key *key = io->o.auth ? &io->o.auth_key : NULL;
	unsigned int from = NL_XA_MAX_APPS; /* paired: the peer at a's address */
	enum nl_proto_err e;

	if (xa == NULL) {
		nl_stat_add_st(&io->c.drops[NL_PROTO_E_TYPE], 1); /* not split: not ours to take */
		return;
	}
	if (a->dst_ip != io->o.ip) { /* flooded by a switch to everyone (broadcast): not ours */
		nl_stat_add_st(&xa->not_ours, 1);
		return;
	}
	if (xa->cfg.paired) { /* #36: only the pair's key speaks for the appliance at a's address */
		from = pair_from(xa, a);
		if (from == NL_XA_MAX_APPS) {
			nl_stat_add_st(&xa->bad_peer, 1);
			return;
		}
		key = &xa->cfg.pair[from];
	}
	e = nl_xa_open(key, &io->rp, pl, plen, nl_xa_skewed_ns(io->now_ns), &m);
	if (e == NL_PROTO_E_MAC && from != NL_XA_MAX_APPS)
		nl_stat_add_st(&xa->peer[from].pair_refused, 1);
	if (e != NL_PROTO_OK) {
		nl_stat_add_st(&io->c.drops[e], 1);
		return;
	}
	/* the sender must be a configured appliance, speaking from its configured address */
	if (m.from_app >= xa->cfg.n_app || m.from_app == xa->self ||
	    xa->cfg.app[m.from_app].ip != a->src_ip || xa->cfg.app[m.from_app].port != a->src_port) {
		nl_stat_add_st(&xa->bad_peer, 1);
		return;
	}
	peer_heard(io, m.from_app, m.incarnation, a);
	if (m.dgram_seq != 0) { /* numbered: acknowledge (again, if a duplicate), act once */
		nl_xa_queue_ack_ctl(io, m.from_app, m.dgram_seq);
		if (nl_xa_dedup_seen_ctl(&xa->peer[m.from_app], m.dgram_seq)) {
			nl_stat_add_st(&xa->peer[m.from_app].dup_rx, 1);
			return;
		}
	}
	switch (m.type) {
	case NL_XA_MSG_HANDOVER:
		xa->peer[m.from_app].rx_tasks += m.n;
		for (unsigned int i = 0; i < m.n; i++)
			hand_in(io, &m.u.task[i]);
		break;
	case NL_XA_MSG_HANDBACK:
		xa->peer[m.from_app].rx_backs += m.n;
		for (unsigned int i = 0; i < m.n; i++)
			back_in(io, &m.u.back[i]);
		break;
	case NL_XA_MSG_ACK:
		for (unsigned int i = 0; i < m.n; i++)
			nl_xa_acked_ctl(&xa->peer[m.from_app], m.u.ack[i]);
		break;
	case NL_XA_MSG_SWIM:
		nl_xa_swim_rx_ctl(io, &m);
		swim_events(io);
		break;
	case NL_XA_MSG_HOLD: /* #36 failback = no: the subtrees it runs */
		nl_xa_hold_rx_ctl(io, &m);
		break;
	default:
		nl_xa_summary_in_ctl(io, &m);
		break;
	}
}

void
nl_xa_drain_ctl(struct nl_dp *dp, void *ext)
{
	struct nl_xa *xa = ext;
	uint64_t n = 0;

	if (xa == NULL || dp->pool_task == NULL)
		return;
	for (unsigned int i = 0; i < dp->n_pool; i++) {
		struct xa_task *xt = &xa->task[i];

		if ((xt->state == XA_PARKED || xt->state == XA_RESENT) && dp->pool_task[i] != NULL) {
			if (n < 8) /* where each was waited for: the log says what a stop left */
				XA_LOG(WARNING, "stop: task %llu %s at %s (hops %u; %s) unanswered, "
				       "reported failed\n",
				       (unsigned long long)dp->pool_task[i]->id,
				       xt->state == XA_PARKED ? "parked" : "held as a resend",
				       xt->at < xa->cfg.n_app ? xa->cfg.app[xt->at].name : "?",
				       (unsigned int)xt->at_hops,
				       xt->at >= xa->cfg.n_app ? "-" : xa->peer[xt->at].live ?
				       "live" : xa->peer[xt->at].hold_tsc != 0 ? "dead, held" :
				       "dead");
			xt->state = XA_OWN;
			rte_mempool_put(dp->pool, dp->pool_task[i]);
			n++;
		}
	}
	xa->parked = 0;
	xa->resend_holding = 0;
	nl_stat_add_st(&dp->failed, n); /* I1: what a stop leaves unfinished is reported failed */
}

/* ---------------------------------------------------------------- placement by load ---- */

unsigned int
nl_xa_place_ctl(struct nl_port *io, const struct nl_dp_sub *rec, unsigned int n_rec)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	struct nl_task *t = rec[0].t;
	const struct nl_dp_meta *mt = &io->meta[t->aux];
	struct xa_task *xt = &xa->task[t->aux];
	unsigned int n = nl_model_task_subs_left(t), app;
	uint32_t m = rec[0].mach;

	/* a decision above the split (on summaries) chose machines of another appliance for
	 * all the task's sub-tasks: the task goes, once, to the manager that dispatches to the
	 * first of them there */
	if (rec[0].sub != 0 || mt->active || n == 0 || n > n_rec || m >= dp->n_mach ||
	    io->alive[m] || !xa->mach_inst[m] || (xt->flags & NL_XA_TF_PLACED) ||
	    (t->flags & NL_TF_FAILED) || (xt->flags & XA_TF_FARM)) /* farm: runs here (#34) */
		return 0;
	app = xa->mach_app[m];
	if (!xa->peer[app].live)
		return 0;
	for (unsigned int j = 1; j < n; j++)
		if (rec[j].t != t || rec[j].sub != j || rec[j].mach >= dp->n_mach ||
		    xa->mach_app[rec[j].mach] != app || !xa->mach_inst[rec[j].mach])
			return 0; /* not all there: its other sub-tasks are placed here */
	for (unsigned int j = 1; j < n; j++)
		nl_load_mark_applied_ctl(dp->load, rec[j].mgr, rec[j].seq);
	xt->flags |= NL_XA_TF_PLACED;
	t->flags &= ~NL_MODEL_SUBS_MASK;
	t->hops++;
	nl_atomic_store_relaxed(&xa->placed_out, xa->placed_out + 1);
	nl_xa_hand_out_ctl(io, t, xa->mach_mgr[m]);
	return n;
}

/* A SUBMIT's task: whether its client asked to be re-routed when an appliance is lost, and
 * whether it is a farm task (an FSUBMIT being admitted: its match handle is set), which never
 * leaves this appliance (XA_TF_FARM). */
static void
task_new(struct nl_port *io, struct nl_task *t, uint8_t submit_flags)
{
	struct nl_dp_farm_ctx c;
	struct xa_task *xt = &nl_xa_of(io->dp)->task[t->aux];

	nl_dp_farm_ctx_get(io, &c);
	xt->flags = (uint8_t)(((submit_flags & NL_SUBMIT_F_REROUTE) ? NL_XA_TF_REROUTE : 0) |
			      ((submit_flags & NL_SUBMIT_F_RESEND) ? XA_TF_RESEND : 0) |
			      (c.h != 0 ? XA_TF_FARM : 0));
	xt->farm_try = 0;
}

/* ---------------------------------------------------------------- hooks ---- */

/* What scale-out adds to the engine (nl_dp.h: placement, proxies, teardown, accounting). */
const struct nl_dp_ext_ops nl_xa_dp_ext = {
	.attach_ctl = nl_xa_attach_ctl,
	.mgr_lcore = nl_xa_mgr_lcore,
	.drain_ctl = nl_xa_drain_ctl,
	.foreign_live = nl_xa_foreign_live,
	.free = nl_xa_free,
};

/* What scale-out adds to port mode (nl_port.h: datagrams, rounds, task ends, placement). */
const struct nl_port_ext_ops nl_xa_port_ext = {
	.rx_ctl = nl_xa_rx_ctl,
	.poll_ctl = nl_xa_poll_ctl,
	.task_new_ctl = task_new,
	.entry_ctl = entry_hook,
	.finish_ctl = nl_xa_finish_ctl,
	.place_ctl = nl_xa_place_ctl,
	.local_load_ctl = nl_xa_local_load_ctl,
	.keeps_load = nl_xa_keeps_load,
	.owns_mach = nl_xa_owns_mach,
	.origin_ctl = nl_xa_origin_ctl,
	.relay_ctl = nl_xa_relay_ctl,
	.stop_ctl = nl_xa_drain_ctl,
};
