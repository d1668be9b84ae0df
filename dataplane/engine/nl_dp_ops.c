/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A task's path through the live engine, in call order:
 *
 *   nl_dp_ingress_st()        entry manager (ops->entry); native runs: the ingress lcore's
 *                             hand-over FIFO or another manager lcore's SP/SC ring, as below;
 *                             emulated runs and port mode's I/O lcore: the manager's inbox
 *   [nl_dp_lcore.c]           the manager's lcore admits it (nl_model_mgr_admit) and, at the
 *                             end of service, calls ops->decide, which calls one of:
 *   eng_forward()             to another manager. Native and port modes (nl_dp_hand_put_st):
 *                             on the same lcore through its hand-over FIFO, on another
 *                             manager lcore staged for the pair's SP/SC ring, enqueued a
 *                             burst at a time; else its inbox. Emulated:
 *                             its inbox, via transit until the transfer ends
 *                             (nl_dp_transit_release_st)
 *   eng_dispatch()            book its sub-tasks in the manager's load view (nl_model_sub_vt)
 *                             and hand them to the control lcore on the sub-task ring
 *   eng_reject()              to the control lcore, which answers REJECT
 *   [nl_dp_emu.c / port]      the control lcore applies the bookings to the load table and
 *                             publishes it under RCU; managers read it through eng_load()
 */
#include <errno.h>

#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "nl_dp_inline.h"

void
nl_dp_task_fail_st(struct nl_dp_lcore *lc, struct nl_task *t, enum nl_reject_reason why)
{
	t->flags = (t->flags & ~(NL_MODEL_SUBS_MASK | (0xffu << NL_TF_REASON_SHIFT))) |
		   NL_TF_FAILED | ((uint32_t)why << NL_TF_REASON_SHIFT);
	if (lc->at != NULL)
		nl_stat_add_st(&lc->at->refused, 1);
	/* The finish ring holds more slots than the pool has tasks (I2), so this cannot fail. */
	if (rte_ring_mp_enqueue(lc->dp->fin_ring, t) != 0)
		RTE_VERIFY(0);
}

/* Put t on manager `to`'s inbox with its arrival stamp and tell to's lcore. false when `to`
 * does not exist or its inbox is full (the caller fails or refuses the task). */
static bool
inbox_put(struct nl_dp *dp, struct nl_task *t, uint32_t to, double stamp_vt)
{
	struct nl_dp_msg msg = { .t = t, .stamp_vt = stamp_vt };

	if (to >= dp->n_mgr || rte_ring_mp_enqueue_elem(dp->mgr[to].inbox, &msg, sizeof(msg)) != 0)
		return false;
	nl_dp_mgr_mark(&dp->mgr[to]);
	return true;
}

/* lc's staged tasks for destination lcore d onto the pair's ring, one burst. */
static void
xhop_flush_to(struct nl_dp_lcore *lc, unsigned int d)
{
	struct nl_dp *dp = lc->dp;
	struct nl_dp_hand *h = &lc->xout[d * NL_DP_XBURST];
	unsigned int n = lc->xout_n[d], k;

	k = rte_ring_sp_enqueue_burst_elem(dp->xring[lc->idx * dp->n_lc + d], h, sizeof(*h), n,
					   NULL);
	for (unsigned int j = k; j < n; j++) /* ring full: failed, not lost (I4) */
		nl_dp_task_fail_st(lc, h[j].t, NL_REJECT_OVERLOAD);
	lc->xout_n[d] = 0;
	nl_stat_add_st(&lc->xhop_out, k);
}

bool
nl_dp_hand_put_st(struct nl_dp_lcore *lc, struct nl_task *t, uint32_t mgr)
{
	struct nl_dp *dp = lc->dp;
	const struct nl_dp_mgr *mg;
	uint32_t d;

	if (dp->o.emulate || mgr >= dp->n_mgr)
		return false;
	mg = &dp->mgr[mgr];
	if (mg->owner == lc) { /* same lcore: no ring */
		if (lc->hand_tail - lc->hand_head >= NL_DP_HAND_CAP)
			return false;
		lc->hand[lc->hand_tail++ & (NL_DP_HAND_CAP - 1)] =
			(struct nl_dp_hand){ .t = t, .mgr = mgr };
		return true;
	}
	/* another manager lcore: staged for the pair's SP/SC ring (stages exist only on manager
	 * lcores, and only with several of them) */
	d = mg->owner_lc;
	if (lc->xout == NULL || d >= dp->n_lc)
		return false;
	lc->xout[d * NL_DP_XBURST + lc->xout_n[d]++] = (struct nl_dp_hand){ .t = t, .mgr = mgr };
	if (lc->xout_n[d] == NL_DP_XBURST)
		xhop_flush_to(lc, d);
	return true;
}

void
nl_dp_xhop_flush_st(struct nl_dp_lcore *lc)
{
	if (lc->xout == NULL)
		return;
	for (unsigned int d = 0; d < lc->dp->n_lc; d++)
		if (lc->xout_n[d] > 0)
			xhop_flush_to(lc, d);
}

unsigned int
nl_dp_xhop_recv_st(struct nl_dp_lcore *lc)
{
	struct nl_dp *dp = lc->dp;
	struct nl_dp_hand h[NL_DP_XBURST];
	unsigned int n = 0;

	if (lc->xout == NULL) /* not a manager lcore, or the only one */
		return 0;
	for (unsigned int s = 0; s < dp->n_lc; s++) {
		unsigned int room = NL_DP_HAND_CAP - (unsigned int)(lc->hand_tail - lc->hand_head), k;

		if (s == lc->idx || room == 0)
			continue;
		k = rte_ring_sc_dequeue_burst_elem(dp->xring[s * dp->n_lc + lc->idx], h, sizeof(h[0]),
						   room < NL_DP_XBURST ? room : NL_DP_XBURST, NULL);
		for (unsigned int j = 0; j < k; j++)
			lc->hand[lc->hand_tail++ & (NL_DP_HAND_CAP - 1)] = h[j];
		n += k;
	}
	return n;
}

/* Forward without delay, or at the end of a transfer; a full inbox fails the task (I4). */
static void
inbox_put_st(struct nl_dp_lcore *lc, struct nl_task *t, uint32_t to, double stamp_vt)
{
	if (!inbox_put(lc->dp, t, to, stamp_vt))
		nl_dp_task_fail_st(lc, t, NL_REJECT_OVERLOAD);
}

static void
eng_forward(void *ctx, struct nl_task *t, uint32_t to, double now_vt)
{
	struct nl_dp_lcore *lc = ctx;
	struct nl_dp *dp = lc->dp;

	t->hops++;
	nl_stat_add_st(&lc->at->fwd_out, 1);
	if (!dp->o.emulate) {
		/* same lcore: no ring; another manager lcore: its SP/SC ring, a burst at a time */
		if (!nl_dp_hand_put_st(lc, t, to))
			inbox_put_st(lc, t, to, now_vt);
		return;
	}
	/* Emulated: the task is on the wire for transfer_delay_vt; it reaches the inbox then. */
	/* scale-out hook (#13): plus the cut edge's delay of a simulated split */
	double hop_vt = nl_model_hop_vt(&dp->m, dp->split_part, lc->at->id, to);

	if (nl_evq_push_st(&lc->transit, now_vt + hop_vt, 0, to, t) != 0)
		nl_dp_task_fail_st(lc, t, NL_REJECT_OVERLOAD);
}

unsigned int
nl_dp_native_done_st(struct nl_dp_lcore *lc, double now_vt)
{
	struct nl_dp *dp = lc->dp;
	uint64_t now_slot = now_vt > 0 ? (uint64_t)now_vt : 0, stop;
	unsigned int n = 0, k = 0;
	void *done[64];

	if (lc->wh_n == 0) {
		lc->wh_cur = now_slot;
		return 0;
	}
	/* Slots strictly before now's are over: every task in them ended before now, but for
	 * those a lap or more ahead, which stay. A slot is at most one u.t. late. */
	stop = now_slot - lc->wh_cur > NL_DP_WHEEL ? lc->wh_cur + NL_DP_WHEEL : now_slot;
	for (; lc->wh_cur < stop; lc->wh_cur++) {
		uint32_t *link = &lc->wh_head[lc->wh_cur & (NL_DP_WHEEL - 1)];

		while (*link != UINT32_MAX) {
			uint32_t x = *link;

			if (lc->wh_end[x] >= now_vt) { /* a later lap: keep */
				link = &lc->wh_next[x];
				continue;
			}
			*link = lc->wh_next[x];
			done[k++] = dp->pool_task[x];
			lc->wh_n--;
			n++;
			if (k == 64) {
				rte_mempool_put_bulk(dp->pool, done, k);
				k = 0;
			}
		}
	}
	if (stop < now_slot)
		lc->wh_cur = now_slot; /* a whole lap was swept */
	if (k > 0)
		rte_mempool_put_bulk(dp->pool, done, k);
	nl_stat_add_st(&lc->dispatched_tasks, n);
	return n;
}

unsigned int
nl_dp_transit_release_st(struct nl_dp_lcore *lc, double now_vt)
{
	unsigned int n = 0;
	struct nl_ev ev;

	while (lc->transit.n > 0 && lc->transit.h[0].t_vt <= now_vt) {
		nl_evq_pop_st(&lc->transit, &ev);
		inbox_put_st(lc, ev.ptr, ev.arg, ev.t_vt);
		n++;
	}
	return n;
}

/* Native runs: remember the task's ingress time; the latency samples of a burst are taken
 * together with one clock read when the burst is done (nl_dp_lat_flush_st). */
static inline void
lat_note_st(struct nl_dp_lcore *lc, const struct nl_task *t)
{
	if (lc->lat_pend < NL_DP_LAT_BURST)
		lc->lat_arrive_vt[lc->lat_pend++] = t->t_arrive_vt;
}

void
nl_dp_lat_flush_st(struct nl_dp_lcore *lc)
{
	struct nl_dp *dp = lc->dp;
	double now_vt;

	if (lc->lat_pend == 0)
		return;
	/* One fresh clock read for the burst: every task of it was dispatched before it, so a
	 * sample is never shorter than the task's real latency (at most one burst longer). */
	now_vt = nl_dp_now_vt(dp);
	for (unsigned int i = 0; i < lc->lat_pend; i++) {
		double lat_vt = now_vt - lc->lat_arrive_vt[i];
		uint64_t ns = lat_vt > 0 ? (uint64_t)(lat_vt * dp->o.ns_per_vt) : 0;
		unsigned int b = nl_dp_log2_bucket(ns, 64), sub = 0;

		if (b >= 4)
			sub = (unsigned int)((ns >> (b - 4)) & 7);
		lc->lat_hist[b * 8 + sub]++;
		lc->lat_sum_ns += (double)ns;
	}
	lc->lat_n += lc->lat_pend;
	lc->lat_pend = 0;
}

static void
eng_dispatch(void *ctx, struct nl_task *t, const uint32_t *mach, unsigned int n, double now_vt)
{
	struct nl_dp_lcore *lc = ctx;
	struct nl_dp *dp = lc->dp;
	struct nl_dp_mgr *mg = lc->at;
	const struct nl_dp_gen *g = lc->gen;
	struct nl_dp_sub rec[NL_TASK_MAX_SPLIT];
	uint64_t seq[NL_TASK_MAX_SPLIT];
	double arrive = dp->o.emulate ? now_vt + dp->m.dispatch_delay_vt : now_vt;
	/* native booking: one sub-task's work, divided once per task (the model's own time,
	 * used otherwise, divides inside nl_model_sub_vt()) */
	double sub_instr = 0, sub_bits = 0;

	if (dp->o.native_book) {
		sub_instr = t->instr / t->n_split;
		sub_bits = t->data_bits / t->n_split;
	}

	if (n == 0 || n > NL_TASK_MAX_SPLIT) {
		nl_dp_task_fail_st(lc, t, NL_REJECT_BAD_TASK);
		return;
	}
	if (dp->o.trace != NULL && dp->o.trace->dispatch != NULL)
		dp->o.trace->dispatch(dp->o.trace->arg, t, mach, n, now_vt);
	if (mg->view.n_mach == 0) /* a policy that dispatched without reading load */
		nl_load_view_refresh_rcu(&mg->view, dp->load);
	/* book the machines (native capacity runs with instant machines book nothing); end_vt:
	 * when the last sub-task ends (a machine's new busy_until is start + dur) */
	double end_vt = now_vt;

	for (unsigned int j = 0; j < n && !dp->o.native_instant; j++) {
		uint32_t m = mach[j];
		double start = arrive, dur = 0;

		if (m < mg->view.n_mach && m < g->n_mach) {
			double bu = mg->view.load[m].busy_until_vt;

			start = bu > start ? bu : start; /* maxsd, no branch */
			/* native booking: the nominal service time from the machine's rates
			 * (multiplications; background load left out, docs/output.md
			 * `machines`); emulated and port modes: the model's, as the simulator */
			dur = dp->o.native_book ?
				      nl_mach_rate_service_vt(&g->s->rate[m], sub_instr, sub_bits) :
				      nl_model_sub_vt(&dp->bg, &g->mach[m], m, t, start);
			dur *= dp->dur_scale;
		}
		seq[j] = nl_load_view_book_st(&mg->view, m, arrive, dur);
		end_vt = start + dur > end_vt ? start + dur : end_vt; /* maxsd */
	}
	nl_stat_add_st(&mg->dispatched, 1);
	if (!dp->o.emulate)
		lat_note_st(lc, t);
	if (dp->o.native_instant) {
		/* Native capacity runs: machines finish at once; this lcore returns the task
		 * (the one exception to I3, documented in docs/dataplane.md). */
		nl_stat_add_st(&lc->dispatched_tasks, 1);
		rte_mempool_put(dp->pool, t);
		return;
	}
	if (dp->o.native_book) {
		/* Native booking: this lcore holds the task until its last sub-task ends
		 * (nl_dp_native_done_st); the pool bounds them, so the queue cannot fill. */
		uint32_t x = t->aux, w = (uint32_t)((uint64_t)end_vt & (NL_DP_WHEEL - 1));

		if (x >= dp->n_pool) { /* cannot happen: aux is the task's pool index */
			nl_dp_task_fail_st(lc, t, NL_REJECT_OVERLOAD);
			return;
		}
		lc->wh_end[x] = end_vt;
		lc->wh_next[x] = lc->wh_head[w];
		lc->wh_head[w] = x;
		lc->wh_n++;
		lc->booked_tasks++;
		return;
	}
	for (unsigned int j = 0; j < n; j++) /* the sub-task records, for the control lcore */
		rec[j] = (struct nl_dp_sub){ .t = t, .arrive_vt = arrive, .seq = seq[j],
					     .mach = mach[j], .mgr = (uint16_t)mg->id,
					     .sub = (uint16_t)j };
	nl_model_task_subs_set(t, n);
	/* After this enqueue the task belongs to the control lcore (I2): do not touch it. */
	if (rte_ring_mp_enqueue_bulk_elem(dp->sub_ring, rec, sizeof(rec[0]), n, NULL) != n)
		nl_dp_task_fail_st(lc, t, NL_REJECT_OVERLOAD);
}

/* I6 of nl_policy.h: a manager of this lcore decides at once in native and port modes (no
 * modelled service time); the hop is accounted as forward + arrival + decision would be. */
static bool
eng_pass(void *ctx, struct nl_task *t, uint32_t to, double now_vt)
{
	struct nl_dp_lcore *lc = ctx;
	struct nl_dp *dp = lc->dp;
	struct nl_dp_mgr *from = lc->at, *mg;

	(void)now_vt;
	if (dp->o.emulate || to >= dp->n_mgr || dp->mgr[to].owner != lc || from == NULL)
		return false;
	mg = &dp->mgr[to];
	t->hops++;
	t->at_mgr = to;
	nl_stat_add_st(&from->tasks_out, 1);
	nl_stat_add_st(&from->fwd_out, 1);
	nl_stat_add_st(&mg->tasks_in, 1);
	lc->at = mg;
	return true;
}

static void
eng_reject(void *ctx, struct nl_task *t, enum nl_reject_reason why, double now_vt)
{
	struct nl_dp_lcore *lc = ctx;
	const struct nl_model_trace *tr = lc->dp->o.trace;

	if (tr != NULL && tr->reject != NULL)
		tr->reject(tr->arg, t, why, now_vt);
	nl_dp_task_fail_st(lc, t, why);
}

static const struct nl_mach_load *
eng_load(void *ctx, uint32_t mgr, double now_vt)
{
	struct nl_dp_lcore *lc = ctx;
	struct nl_dp_mgr *mg = &lc->dp->mgr[mgr < lc->dp->n_mgr ? mgr : 0];

	(void)now_vt;
	/* Views are refreshed on demand: only managers that read load (NLSC leaves, 2LSC
	 * schedulers) pay for the copy, and only when a new snapshot was published. The
	 * caller is the view's owner (policies ask for their own manager, I3 of nl_policy.h). */
	nl_load_view_refresh_rcu(&mg->view, lc->dp->load);
	return mg->view.load;
}

/* The view changes other than by the manager's own bookings only when it is refreshed from
 * a new snapshot (eng_load), which bumps version_seen (nl_policy.h load_gen). */
static uint64_t
eng_load_gen(void *ctx, uint32_t mgr)
{
	struct nl_dp_lcore *lc = ctx;

	return lc->dp->mgr[mgr < lc->dp->n_mgr ? mgr : 0].view.version_seen;
}

static unsigned int
eng_queue_len(void *ctx, uint32_t mgr)
{
	struct nl_dp_lcore *lc = ctx;

	return mgr < lc->dp->n_mgr ? rte_ring_count(lc->dp->mgr[mgr].inbox) : 0;
}

const struct nl_engine_ops nl_dp_engine_ops = {
	.forward = eng_forward,
	.dispatch = eng_dispatch,
	.reject = eng_reject,
	.load = eng_load,
	.queue_len = eng_queue_len,
	.pass = eng_pass,
	.load_gen = eng_load_gen,
};

/* A decision on a manager the control lcore serves (nl_dp_mgr_serve_ctl()) passes on at
 * once to no other manager (I6): the lcore struct it runs on also owns managers that are
 * not decided here (a scale-out proxy's), so every hop goes through an inbox. */
static bool
eng_pass_never(void *ctx, struct nl_task *t, uint32_t to, double now_vt)
{
	(void)ctx;
	(void)t;
	(void)to;
	(void)now_vt;
	return false;
}

const struct nl_engine_ops nl_dp_engine_ops_ctl = {
	.forward = eng_forward,
	.dispatch = eng_dispatch,
	.reject = eng_reject,
	.load = eng_load,
	.queue_len = eng_queue_len,
	.pass = eng_pass_never,
	.load_gen = eng_load_gen,
};

/*
 * Lock-step runs only (opts.lockstep, one thread): a booking is put into every other view at
 * once, so a manager deciding later at the same instant sees it, as the simulator's one load
 * table does (nl_model.h I4: decisions at one instant in manager id order, each after the
 * ones before). Without it, managers sharing machines (star entries, subset matching, 2LSC's
 * global and group schedulers) would see each other's bookings of that instant only after
 * the control round. A view is first brought to the current snapshot (else its next refresh
 * would drop the booking, which the snapshot does not hold yet); its pick index learns of the
 * change through its manager's foreign count (eng_load_gen_lockstep()).
 */
static void
lockstep_share(struct nl_dp *dp, const struct nl_dp_mgr *from, const uint32_t *mach,
	       unsigned int n)
{
	for (uint32_t i = 0; i < dp->n_mgr; i++) {
		struct nl_dp_mgr *x = &dp->mgr[i];

		if (x == from || x->view.n_mach == 0) /* a view never read is built when read */
			continue;
		nl_load_view_refresh_rcu(&x->view, dp->load);
		/* every view holds the same table in lock-step: the booker's new entry is theirs */
		for (unsigned int j = 0; j < n; j++)
			if (mach[j] < x->view.n_mach && mach[j] < from->view.n_mach)
				x->view.load[mach[j]] = from->view.load[mach[j]];
		x->foreign++;
	}
}

/* Lock-step runs: the booking goes into every view at once (lockstep_share()). */
static void
eng_dispatch_lockstep(void *ctx, struct nl_task *t, const uint32_t *mach, unsigned int n,
		      double now_vt)
{
	struct nl_dp_lcore *lc = ctx;
	const struct nl_dp_mgr *mg = lc->at;

	eng_dispatch(ctx, t, mach, n, now_vt);
	lockstep_share(lc->dp, mg, mach, n);
}

/* Lock-step runs: a view also changes by other managers' bookings (foreign). */
static uint64_t
eng_load_gen_lockstep(void *ctx, uint32_t mgr)
{
	struct nl_dp_lcore *lc = ctx;
	const struct nl_dp_mgr *mg = &lc->dp->mgr[mgr < lc->dp->n_mgr ? mgr : 0];

	return mg->view.version_seen + mg->foreign; /* both only grow */
}

const struct nl_engine_ops nl_dp_engine_ops_lockstep = {
	.forward = eng_forward,
	.dispatch = eng_dispatch_lockstep,
	.reject = eng_reject,
	.load = eng_load,
	.queue_len = eng_queue_len,
	.pass = eng_pass,
	.load_gen = eng_load_gen_lockstep,
};

bool
nl_dp_inbox_put_ctl(struct nl_dp *dp, struct nl_task *t, uint32_t mgr)
{
	t->at_mgr = mgr;
	return inbox_put(dp, t, mgr, nl_dp_now_vt(dp));
}

int
nl_dp_ingress_at_st(struct nl_dp_lcore *lc, struct nl_task *t, uint32_t mgr, double stamp_vt)
{
	t->at_mgr = mgr;
	if (nl_dp_hand_put_st(lc, t, t->at_mgr))
		return 0;
	return inbox_put(lc->dp, t, t->at_mgr, stamp_vt) ? 0 : -ENOBUFS;
}

int
nl_dp_ingress_st(struct nl_dp_lcore *lc, struct nl_task *t, double stamp_vt, uint64_t rnd)
{
	const struct nl_sched *s = lc->gen->s;

	t->at_mgr = s->ops->entry(s, t, rnd);
	/* the entry manager is the ingress lcore's, or another manager lcore's (its SP/SC ring) */
	if (nl_dp_hand_put_st(lc, t, t->at_mgr))
		return 0;
	return inbox_put(lc->dp, t, t->at_mgr, stamp_vt) ? 0 : -ENOBUFS;
}
