/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager lcore loop (STYLE.md shape): each round the ingress lcore draws new tasks
 * (gen_poll_st), tasks whose transfer ended reach their inbox (emulated), then the managers
 * whose pending bit is set are polled: each admits tasks from its inbox in FIFO order
 * (nl_model_mgr_admit) and decides on them at the end of their service (ops->decide). The
 * housekeeping block announces the quiescent state and may nap.
 */
#include <math.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <urcu/urcu-qsbr.h>

#include "nl_dp_inline.h"
#include "nl_dp_match.h"

/* Poisson generator of emulated / native runs (the ingress role): the model's task source,
 * so the stream is the simulator's for the same seed (nl_model.h I1). */
static unsigned int
gen_poll_st(struct nl_dp_lcore *lc, double now_vt)
{
	struct nl_dp *dp = lc->dp;
	struct nl_task spare = { .id = 0 }; /* takes the draws of a task the pool cannot hold */
	unsigned int n = 0;
	double ingress_vt;

	if (nl_atomic_load_relaxed(&dp->gen_done) != 0 || lc->src.next_vt > now_vt)
		return 0;
	ingress_vt = dp->o.emulate ? 0 : nl_dp_now_vt(dp); /* one fresh read per burst */
	while (lc->src.next_vt <= now_vt && n < dp->o.burst) {
		struct nl_task *t = &spare;
		uint64_t rnd;
		void *obj;

		if (lc->src.next_vt >= dp->horizon_vt) {
			nl_atomic_store_relaxed(&dp->gen_done, 1);
			break;
		}
		n++;
		nl_stat_add_st(&lc->generated, 1);
		if (rte_mempool_get(dp->pool, &obj) == 0)
			t = obj;
		/* drawn even when refused, so the stream does not depend on the pool */
		nl_model_src_draw(&lc->src, &dp->m, t, &rnd);
		if (t == &spare) {
			nl_stat_add_st(&lc->rejected_ingress, 1);
			continue;
		}
		nl_dp_match_task(dp->match_h, &dp->m, &lc->src, t); /* issue #15 hook */
		if (!dp->o.emulate)
			t->t_arrive_vt = ingress_vt; /* native: latency counts from the real ingress */
		if (nl_dp_ingress_st(lc, t, t->t_arrive_vt, rnd) != 0) {
			rte_mempool_put(dp->pool, t);
			nl_stat_add_st(&lc->rejected_ingress, 1);
			continue;
		}
		/* Relaxed: the control lcore reads it for progress; the task itself travels through
		 * rings, whose enqueue/dequeue order its contents. */
		nl_stat_add_st(&lc->accepted, 1);
	}
	return n;
}

/* Manager mg's decision on t at now_vt (ops->decide), with its counters; the decide() cost
 * histogram samples one decision in 16 (a TSC read costs as much as a routing step). A
 * decision that passes the task through managers of this lcore (nl_policy.h I6) is one
 * sample of mg's histogram. */
static inline void
decide_st(struct nl_dp_lcore *lc, struct nl_sched *s, struct nl_dp_mgr *mg, struct nl_task *t,
	  double now_vt)
{
	lc->at = mg;
	if ((mg->tasks_out & 15) == 0) {
		uint64_t c0 = rte_rdtsc();

		s->ops->decide(s, mg->id, t, now_vt, &lc->eng);
		uint64_t ns = (uint64_t)((double)(rte_rdtsc() - c0) / lc->dp->cyc_per_ns);

		nl_stat_add_st(&mg->svc_hist[nl_dp_log2_bucket(ns, NL_DP_HIST_BUCKETS)], 1);
	} else {
		s->ops->decide(s, mg->id, t, now_vt, &lc->eng);
	}
	/* the manager that ended the decision: mg, or the last one passed on this lcore (I6) */
	nl_stat_add_st(&lc->at->tasks_out, 1);
	lc->at = NULL;
}

/* Decide every task handed over on this lcore (nl_dp_hand_put_st), including those the
 * decisions hand over in turn, until the FIFO is empty. Native and port modes. */
static unsigned int
hand_drain_st(struct nl_dp_lcore *lc, double now_vt)
{
	struct nl_sched *s = lc->gen->s;
	unsigned int n = 0;

	while (lc->hand_head != lc->hand_tail) {
		struct nl_dp_hand h = lc->hand[lc->hand_head++ & (NL_DP_HAND_CAP - 1)];
		struct nl_dp_mgr *mg = &lc->dp->mgr[h.mgr];

		nl_stat_add_st(&mg->tasks_in, 1);
		h.t->at_mgr = h.mgr;
		decide_st(lc, s, mg, h.t, now_vt);
		n++;
	}
	nl_dp_lat_flush_st(lc);
	return n;
}

/* mg's periodic measurement when due and a burst of its inbox decided; the decisions'
 * hand-overs on this lcore stay in its FIFO (the caller drains them). */
static inline unsigned int
mgr_poll_inbox_st(struct nl_dp_lcore *lc, struct nl_dp_mgr *mg, double now_vt)
{
	struct nl_dp *dp = lc->dp;
	struct nl_sched *s = lc->gen->s;
	bool emu = dp->o.emulate;
	unsigned int n = 0;

	if (mg->id == dp->measure_mgr && dp->sp.measure_period_vt > 0) {
		lc->at = mg;
		while (now_vt >= mg->next_measure_vt && mg->next_measure_vt < dp->horizon_vt) {
			s->ops->measure(s, emu ? mg->next_measure_vt : now_vt, &lc->eng);
			mg->next_measure_vt += dp->sp.measure_period_vt;
		}
		lc->at = NULL;
	}
	while (n < dp->o.burst) {
		if (!mg->has_cur) {
			struct nl_task *t;

			if (rte_ring_sc_dequeue_elem(mg->inbox, &mg->cur, sizeof(mg->cur)) != 0)
				break;
			t = mg->cur.t;
			nl_stat_add_st(&mg->tasks_in, 1);
			if (emu) {
				mg->cur_done_vt = nl_model_mgr_admit(&mg->srv, s, mg->id, t,
								     mg->cur.stamp_vt);
			} else {
				t->at_mgr = mg->id;
				mg->cur_done_vt = now_vt;
			}
			mg->has_cur = true;
		}
		if (mg->cur_done_vt > now_vt)
			break;
		mg->has_cur = false;
		decide_st(lc, s, mg, mg->cur.t, emu ? mg->cur_done_vt : now_vt);
		n++;
	}
	return n;
}

static unsigned int
mgr_poll_st(struct nl_dp_lcore *lc, struct nl_dp_mgr *mg, double now_vt)
{
	unsigned int n = mgr_poll_inbox_st(lc, mg, now_vt);

	if (!lc->dp->o.emulate)
		n += hand_drain_st(lc, now_vt); /* the burst's tasks on to their leaves */
	return n;
}

unsigned int
nl_dp_mgr_serve_ctl(struct nl_dp_lcore *lc, struct nl_dp_mgr *mg)
{
	struct nl_dp *dp = lc->dp;
	unsigned int n;

	if (dp->o.emulate || mg->owner != lc)
		return 0;
	lc->gen = dp->gen_rcu; /* the caller publishes the generations (I3): the current one */
	n = mgr_poll_inbox_st(lc, mg, nl_dp_now_vt(dp));
	/* Forwards to managers lc also owns went to its FIFO (nl_dp_hand_put_st()); lc owns
	 * managers this caller does not decide at (a scale-out proxy's), so each goes to its
	 * inbox and the caller sees it on its next drain: decided here or carried away. */
	while (lc->hand_head != lc->hand_tail) {
		struct nl_dp_hand h = lc->hand[lc->hand_head++ & (NL_DP_HAND_CAP - 1)];

		if (!nl_dp_inbox_put_ctl(dp, h.t, h.mgr))
			nl_dp_task_fail_st(lc, h.t, NL_REJECT_OVERLOAD);
	}
	nl_dp_lat_flush_st(lc);
	if (mg->has_cur || rte_ring_count(mg->inbox) > 0 || mg->id == dp->measure_mgr)
		nl_dp_mgr_mark(mg);
	return n;
}

/* Poll the managers whose pending bit is set; a manager that still has work (a task in
 * service, a burst cut short, the policy's periodic measurement) sets its bit again. */
static unsigned int
lcore_poll_pending(struct nl_dp_lcore *lc, double now_vt)
{
	unsigned int busy = 0, n_words = (lc->n_mgr + 63) / 64;
	uint32_t meas = lc->dp->measure_mgr;

	for (unsigned int w = 0; w < n_words; w++) {
		uint64_t bits;

		if (nl_atomic_load_relaxed(&lc->pend[w]) == 0)
			continue; /* seen next round if set meanwhile */
		bits = nl_atomic_xchg_acquire(&lc->pend[w], 0);
		while (bits != 0) {
			unsigned int b = (unsigned int)__builtin_ctzll(bits);
			struct nl_dp_mgr *mg = lc->mgr[w * 64 + b];

			bits &= bits - 1;
			busy += mgr_poll_st(lc, mg, now_vt);
			if (mg->has_cur || rte_ring_count(mg->inbox) > 0 || mg->id == meas)
				nl_dp_mgr_mark(mg);
		}
	}
	return busy;
}

unsigned int
nl_dp_lcore_round_st(struct nl_dp_lcore *lc, double now_vt)
{
	unsigned int busy = 0;

	if (lc->ingress)
		busy += gen_poll_st(lc, now_vt);
	if (lc->dp->o.emulate) {
		busy += nl_dp_transit_release_st(lc, now_vt);
	} else {
		if (lc->dp->o.native_book)
			busy += nl_dp_native_done_st(lc, now_vt);
		busy += nl_dp_xhop_recv_st(lc); /* tasks other manager lcores handed over */
		busy += hand_drain_st(lc, now_vt); /* and new tasks of this lcore's entry managers */
	}
	/* A task forwarded to a manager already polled this round would wait a whole round per
	 * hop: sweep the pending bits again while sweeps find work. */
	for (unsigned int k = 0; k < NL_DP_SWEEPS; k++) {
		unsigned int b = lcore_poll_pending(lc, now_vt);

		busy += b;
		if (b == 0)
			break;
	}
	nl_dp_xhop_flush_st(lc); /* the round's hand-overs to other lcores, a burst per lcore */
	return busy;
}

double
nl_dp_lcore_next_vt(const struct nl_dp_lcore *lc, double now_vt)
{
	const struct nl_dp *dp = lc->dp;
	double t = INFINITY;

	if (lc->ingress && nl_atomic_load_relaxed(&dp->gen_done) == 0)
		t = lc->src.next_vt;
	if (lc->transit.n > 0 && lc->transit.h[0].t_vt < t)
		t = lc->transit.h[0].t_vt;
	for (unsigned int i = 0; i < lc->n_mgr; i++) {
		const struct nl_dp_mgr *mg = lc->mgr[i];

		if (mg->has_cur && mg->cur_done_vt < t)
			t = mg->cur_done_vt;
		else if (!mg->has_cur && rte_ring_count(mg->inbox) > 0)
			t = now_vt;
		if (mg->id == dp->measure_mgr && dp->sp.measure_period_vt > 0 &&
		    mg->next_measure_vt < dp->horizon_vt && mg->next_measure_vt < t)
			t = mg->next_measure_vt;
	}
	return t > now_vt ? t : now_vt;
}

int
nl_dp_lcore_main(void *arg)
{
	struct nl_dp_lcore *lc = arg; /* owned by this lcore only */
	struct nl_dp *dp = lc->dp;
	uint64_t loops = 0, idle = 0;

	urcu_qsbr_register_thread();
	for (;;) {
		unsigned int busy;
		double now = nl_dp_now_vt(dp);

		/* Emulated timing: the lcore's clock follows the wall clock but never jumps by more
		 * than one step per round. After a stall (the OS took the core) the lcore catches
		 * up in small steps, so tasks still meet managers in time-stamp order instead of
		 * a generator running ahead of the tasks in transit. */
		if (dp->o.emulate && now > lc->now_vt + NL_DP_EMU_STEP_VT)
			now = lc->now_vt + NL_DP_EMU_STEP_VT;
		lc->now_vt = now;
		/* Relaxed: the control lcore only uses it to tell a lagging lcore from a stuck run. */
		nl_atomic_store_relaxed(&lc->clock_mvt, (uint64_t)(now * 1000.0));
		/* Valid until our next quiescent state; pairs with rcu_assign_pointer() in
		 * nl_dp_gen_publish_ctl(). */
		lc->gen = rcu_dereference(dp->gen_rcu);
		busy = nl_dp_lcore_round_st(lc, now);
		if (busy == 0) {
			rte_pause();
			idle++;
		} else {
			idle = 0;
		}
		if ((++loops & lc->hk_mask) != 0)
			continue;
		/* housekeeping: no RCU-protected pointer is live below this line */
		lc->gen = NULL;
		urcu_qsbr_quiescent_state();
		if (nl_dp_stopping() || nl_atomic_load_relaxed(&dp->run_quit) != 0)
			break;
		if ((dp->o.emulate || dp->o.idle_sleep_us > 0) && idle > 4 * (lc->hk_mask + 1)) {
			/* Emulated timing (or --idle-sleep-us): an idle lcore naps instead of
			 * spinning (a sleeping thread goes offline first, STYLE.md). Emulated
			 * stamps are virtual, so a late wake-up changes no result. */
			urcu_qsbr_thread_offline();
			rte_delay_us_sleep(dp->o.idle_sleep_us ? dp->o.idle_sleep_us : 20);
			urcu_qsbr_thread_online();
		}
	}
	urcu_qsbr_unregister_thread();
	return 0;
}
