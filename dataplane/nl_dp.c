/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live engine (nl_dp.h): engine ops for the shared policies, the lcore loop, the
 * control lcore (machines, load-table writer, accounting), emulated and native runs.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <urcu/urcu-qsbr.h>

#include "nl_atomic.h"
#include "nl_dp_priv.h"

RTE_LOG_REGISTER(nl_dp_logtype, user.nlevel.dataplane, INFO);
#define DP_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)

static uint64_t nl_dp_quit; /* set by nl_dp_stop(); relaxed flag polled in housekeeping */

#define SUB_RING_SIZE (1u << 17)
#define CTL_BURST 64u
#define NL_DP_SWEEPS 4u       /* pending-bit sweeps per lcore round at most */
#define NL_DP_EMU_STEP_VT 0.5 /* largest emulated clock step per lcore round [u.t.] */

/* --- clock --- */

double
nl_dp_now_vt(const struct nl_dp *dp)
{
	return (double)(rte_rdtsc() - dp->tsc0) * dp->vt_per_cyc;
}

/* Background load of machine i at time t: the simulator's model (nl_mach_bg_factor()), only
 * in emulated mode. */
double
nl_dp_bg_factor(const struct nl_dp *dp, uint32_t i, double t_vt)
{
	if (!dp->o.emulate)
		return 1.0;
	return nl_mach_bg_factor(dp->m.bg_load_max, dp->m.bg_period_vt, dp->bg_seed, i, t_vt);
}

static inline unsigned int
log2_bucket(uint64_t ns, unsigned int n)
{
	unsigned int b = ns == 0 ? 0 : 64 - (unsigned int)__builtin_clzll(ns);

	return b < n ? b : n - 1;
}

/* Announce work in mg's inbox to its lcore. The release RMW orders our ring enqueue before
 * the bit; pairs with the acquire exchange in lcore_poll_pending(). Always an RMW: a plain
 * "already set?" check could read the bit before our enqueue is visible and strand it. */
static inline void
mgr_mark(struct nl_dp_mgr *mg)
{
	nl_atomic_or_release(&mg->owner->pend[mg->lc_idx >> 6], UINT64_C(1) << (mg->lc_idx & 63));
}

/* --- engine ops (called by policies from a manager lcore) --- */

static void
task_fail_st(struct nl_dp_lcore *lc, struct nl_task *t, enum nl_reject_reason why)
{
	t->flags = (t->flags & ~(NL_TF_LEFT_MASK | (0xffu << NL_TF_REASON_SHIFT))) | NL_TF_FAILED |
		   ((uint32_t)why << NL_TF_REASON_SHIFT);
	if (lc->at != NULL)
		nl_stat_add_st(&lc->at->refused, 1);
	/* The finish ring holds more slots than the pool has tasks (I2), so this cannot fail. */
	if (rte_ring_mp_enqueue(lc->dp->fin_ring, t) != 0)
		RTE_VERIFY(0);
}

static void
eng_forward(void *ctx, struct nl_task *t, uint32_t to, double now_vt)
{
	struct nl_dp_lcore *lc = ctx;
	struct nl_dp *dp = lc->dp;
	struct nl_dp_msg msg = {
		.t = t,
		.stamp_vt = dp->o.emulate ? now_vt + dp->m.transfer_delay_vt : now_vt,
	};

	t->hops++;
	if (to >= dp->n_mgr ||
	    rte_ring_mp_enqueue_elem(dp->mgr[to].inbox, &msg, sizeof(msg)) != 0) {
		task_fail_st(lc, t, NL_REJECT_OVERLOAD); /* I4: a full inbox is a failure, not a drop */
		return;
	}
	mgr_mark(&dp->mgr[to]);
	nl_stat_add_st(&lc->at->fwd_out, 1);
}

static void
eng_dispatch(void *ctx, struct nl_task *t, const uint32_t *mach, unsigned int n, double now_vt)
{
	struct nl_dp_lcore *lc = ctx;
	struct nl_dp *dp = lc->dp;
	struct nl_dp_mgr *mg = lc->at;
	const struct nl_dp_gen *g = lc->gen;
	struct nl_dp_sub rec[NL_TASK_MAX_SPLIT];
	double arrive = dp->o.emulate ? now_vt + dp->m.dispatch_delay_vt : now_vt;
	double si = t->instr / t->n_split, sb = t->data_bits / t->n_split;

	if (n == 0 || n > NL_TASK_MAX_SPLIT) {
		task_fail_st(lc, t, NL_REJECT_BAD_TASK);
		return;
	}
	if (mg->view.n_mach == 0) /* a policy that dispatched without reading load */
		nl_load_view_refresh_rcu(&mg->view, dp->load);
	for (unsigned int j = 0; j < n; j++) {
		uint32_t m = mach[j];
		double start = arrive, dur = 0;

		rec[j].t = t;
		rec[j].arrive_vt = arrive;
		rec[j].seq = 0;
		rec[j].mach = m;
		rec[j].mgr = (uint16_t)mg->id;
		rec[j].sub = (uint16_t)j;
		if (dp->o.native_instant)
			continue; /* machines finish at once: nothing to book */
		if (m < mg->view.n_mach && m < g->n_mach) {
			const struct nl_mach_load *l = &mg->view.load[m];

			if (l->busy_until_vt > start)
				start = l->busy_until_vt;
			dur = (si / (g->mach[m].speed_ips * nl_dp_bg_factor(dp, m, start)) +
			       sb / g->mach[m].link_bps) * dp->dur_scale;
		}
		rec[j].seq = nl_load_view_book_st(&mg->view, m, arrive, dur);
	}
	nl_stat_add_st(&mg->dispatched, 1);
	if (!dp->o.emulate) {
		/* a fresh clock read: now_vt is the round's time, older than this decision */
		double lat_vt = nl_dp_now_vt(dp) - t->t_arrive_vt;
		uint64_t ns = lat_vt > 0 ? (uint64_t)(lat_vt * dp->o.ns_per_vt) : 0;
		unsigned int b = log2_bucket(ns, 64), sub = 0;

		if (b >= 4)
			sub = (unsigned int)((ns >> (b - 4)) & 7);
		lc->lat_hist[b * 8 + sub]++;
		lc->lat_n++;
		lc->lat_sum_ns += (double)ns;
	}
	if (dp->o.native_instant) {
		/* Native capacity runs: machines finish at once; this lcore returns the task
		 * (the one exception to I3, documented in docs/dataplane.md). */
		nl_stat_add_st(&lc->dispatched_tasks, 1);
		rte_mempool_put(dp->pool, t);
		return;
	}
	t->flags = (t->flags & ~NL_TF_LEFT_MASK) | n;
	/* After this enqueue the task belongs to the control lcore (I2): do not touch it. */
	if (rte_ring_mp_enqueue_bulk_elem(dp->sub_ring, rec, sizeof(rec[0]), n, NULL) != n)
		task_fail_st(lc, t, NL_REJECT_OVERLOAD);
}

static void
eng_reject(void *ctx, struct nl_task *t, enum nl_reject_reason why, double now_vt)
{
	(void)now_vt;
	task_fail_st(ctx, t, why);
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

static unsigned int
eng_queue_len(void *ctx, uint32_t mgr)
{
	struct nl_dp_lcore *lc = ctx;

	return mgr < lc->dp->n_mgr ? rte_ring_count(lc->dp->mgr[mgr].inbox) : 0;
}

static const struct nl_engine_ops dp_ops = {
	.forward = eng_forward,
	.dispatch = eng_dispatch,
	.reject = eng_reject,
	.load = eng_load,
	.queue_len = eng_queue_len,
};

/* --- manager lcores --- */

int
nl_dp_ingress_st(struct nl_dp_lcore *lc, struct nl_task *t, double stamp_vt, uint64_t rnd)
{
	struct nl_dp *dp = lc->dp;
	struct nl_dp_gen *g = lc->gen;
	struct nl_dp_msg msg = { .t = t, .stamp_vt = stamp_vt };
	uint32_t e = g->s->ops->entry(g->s, t, rnd);

	t->at_mgr = e;
	if (e >= dp->n_mgr || rte_ring_mp_enqueue_elem(dp->mgr[e].inbox, &msg, sizeof(msg)) != 0)
		return -ENOBUFS;
	mgr_mark(&dp->mgr[e]);
	return 0;
}

/* Poisson generator of emulated / native runs (the ingress role). */
static unsigned int
gen_poll_st(struct nl_dp_lcore *lc, double now_vt)
{
	struct nl_dp *dp = lc->dp;
	const struct nl_model_cfg *m = &dp->m;
	unsigned int n = 0;
	double ingress_vt;

	if (nl_atomic_load_relaxed(&dp->gen_done) != 0 || lc->next_arrival_vt > now_vt)
		return 0;
	ingress_vt = dp->o.emulate ? 0 : nl_dp_now_vt(dp); /* one fresh read per burst */
	while (lc->next_arrival_vt <= now_vt && n < dp->o.burst) {
		double t_arr = lc->next_arrival_vt;
		struct nl_task *t;
		void *obj;

		if (t_arr >= dp->horizon_vt) {
			nl_atomic_store_relaxed(&dp->gen_done, 1);
			break;
		}
		lc->next_arrival_vt += dp->lambda > 0 ? nl_rng_exp(&lc->rng, 1.0 / dp->lambda) : 0;
		if (!dp->o.emulate)
			t_arr = ingress_vt; /* native: latency counts from the real ingress */
		n++;
		nl_stat_add_st(&lc->generated, 1);
		if (rte_mempool_get(dp->pool, &obj) != 0) {
			nl_stat_add_st(&lc->rejected_ingress, 1);
			continue;
		}
		t = obj;
		uint64_t need = 0;

		if (m->need_prob == 0.5) {
			need = nl_rng_u64(&lc->rng) & nl_res_mask(m->n_res);
		} else {
			for (unsigned int k = 0; k < m->n_res; k++)
				if (nl_rng_unif(&lc->rng) <= m->need_prob)
					need |= UINT64_C(1) << k;
		}
		t->id = dp->gen_next_id++;
		t->need = need;
		t->n_split = (uint16_t)m->n_split;
		if (m->work_dist == NL_WORK_EXP) {
			t->instr = nl_rng_exp(&lc->rng, m->instr);
			t->data_bits = m->data_bits > 0 ? nl_rng_exp(&lc->rng, m->data_bits) : 0;
		} else {
			t->instr = m->instr;
			t->data_bits = m->data_bits;
		}
		t->t_arrive_vt = t_arr;
		t->sched_wait_vt = 0;
		t->hops = 0;
		t->flags = 0; /* aux (meta index) is kept */
		if (nl_dp_ingress_st(lc, t, t_arr, nl_rng_u64(&lc->rng)) != 0) {
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

static unsigned int
mgr_poll_st(struct nl_dp_lcore *lc, struct nl_dp_mgr *mg, double now_vt)
{
	struct nl_dp *dp = lc->dp;
	struct nl_sched *s = lc->gen->s;
	bool emu = dp->o.emulate;
	unsigned int n = 0;

	lc->at = mg;
	if (s->ops->measure != NULL && mg->id == s->n_mgr - 1 && dp->sp.measure_period_vt > 0 &&
	    s->ops == &nl_policy_2lsc) {
		while (now_vt >= mg->next_measure_vt && mg->next_measure_vt < dp->horizon_vt) {
			s->ops->measure(s, emu ? mg->next_measure_vt : now_vt, &lc->eng);
			mg->next_measure_vt += dp->sp.measure_period_vt;
		}
	}
	while (n < dp->o.burst) {
		if (!mg->has_cur) {
			struct nl_task *t;

			if (rte_ring_sc_dequeue_elem(mg->inbox, &mg->cur, sizeof(mg->cur)) != 0)
				break;
			t = mg->cur.t;
			t->at_mgr = mg->id;
			nl_stat_add_st(&mg->tasks_in, 1);
			if (emu) {
				double st = mg->cur.stamp_vt > mg->busy_until_vt ? mg->cur.stamp_vt :
										     mg->busy_until_vt;
				double svc = s->ops->service_vt(s, mg->id, t);

				t->sched_wait_vt += st - mg->cur.stamp_vt;
				mg->busy_until_vt = st + svc;
				mg->busy_vt += svc;
				mg->cur_done_vt = st + svc;
			} else {
				mg->cur_done_vt = now_vt;
			}
			mg->has_cur = true;
		}
		if (mg->cur_done_vt > now_vt)
			break;
		mg->has_cur = false;
		/* The decide() cost histogram samples one decision in 16 (a TSC read costs as
		 * much as a routing step). */
		if ((mg->tasks_out & 15) == 0) {
			uint64_t c0 = rte_rdtsc();

			s->ops->decide(s, mg->id, mg->cur.t, emu ? mg->cur_done_vt : now_vt,
				       &lc->eng);
			uint64_t ns = (uint64_t)((double)(rte_rdtsc() - c0) / dp->cyc_per_ns);

			nl_stat_add_st(&mg->svc_hist[log2_bucket(ns, NL_DP_HIST_BUCKETS)], 1);
		} else {
			s->ops->decide(s, mg->id, mg->cur.t, emu ? mg->cur_done_vt : now_vt,
				       &lc->eng);
		}
		nl_stat_add_st(&mg->tasks_out, 1);
		n++;
	}
	lc->at = NULL;
	return n;
}

/* Poll the managers whose pending bit is set; a manager that still has work (a task in
 * service, a burst cut short, the 2LSC global's periodic measurement) sets its bit again. */
static unsigned int
lcore_poll_pending(struct nl_dp_lcore *lc, double now_vt)
{
	unsigned int busy = 0, n_words = (lc->n_mgr + 63) / 64;
	const struct nl_sched *s = lc->gen->s;

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
			if (mg->has_cur || rte_ring_count(mg->inbox) > 0 ||
			    (s->ops->measure != NULL && mg->id == s->n_mgr - 1))
				mgr_mark(mg);
		}
	}
	return busy;
}

int
nl_dp_lcore_main(void *arg)
{
	struct nl_dp_lcore *lc = arg; /* owned by this lcore only */
	struct nl_dp *dp = lc->dp;
	uint64_t loops = 0, idle = 0;

	urcu_qsbr_register_thread();
	for (;;) {
		unsigned int busy = 0;
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
		if (lc->ingress)
			busy += gen_poll_st(lc, now);
		/* A task forwarded to a manager already polled this round would wait a whole
		 * round per hop: sweep the pending bits again while sweeps find work. */
		for (unsigned int k = 0; k < NL_DP_SWEEPS; k++) {
			unsigned int b = lcore_poll_pending(lc, now);

			busy += b;
			if (b == 0)
				break;
		}
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
		if (nl_atomic_load_relaxed(&nl_dp_quit) != 0 ||
		    nl_atomic_load_relaxed(&dp->run_quit) != 0)
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

/* --- control lcore --- */

static void
heap_push(struct nl_dp *dp, double fin, struct nl_task *t, uint32_t mach)
{
	size_t i = dp->heap_n++;

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (dp->heap[p].fin_vt <= fin)
			break;
		dp->heap[i] = dp->heap[p];
		i = p;
	}
	dp->heap[i] = (struct nl_dp_heap_ent){ .fin_vt = fin, .t = t, .mach = mach };
}

static struct nl_dp_heap_ent
heap_pop(struct nl_dp *dp)
{
	struct nl_dp_heap_ent top = dp->heap[0], last = dp->heap[--dp->heap_n];
	size_t i = 0, n = dp->heap_n;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && dp->heap[c + 1].fin_vt < dp->heap[c].fin_vt)
			c++;
		if (dp->heap[c].fin_vt >= last.fin_vt)
			break;
		dp->heap[i] = dp->heap[c];
		i = c;
	}
	if (n > 0)
		dp->heap[i] = last;
	return top;
}

void
nl_dp_task_finish_ctl(struct nl_dp *dp, struct nl_task *t, double fin_vt)
{
	if (t->flags & NL_TF_FAILED) {
		nl_stat_add_st(&dp->failed, 1);
	} else {
		nl_stat_add_st(&dp->completed, 1);
		if (t->t_arrive_vt >= dp->warmup_vt && t->t_arrive_vt < dp->horizon_vt &&
		    dp->n_resp < dp->cap_resp) {
			dp->resp[dp->n_resp++] = fin_vt - t->t_arrive_vt;
			dp->sum_hops += t->hops;
			dp->sum_wait += t->sched_wait_vt;
		}
	}
	rte_mempool_put(dp->pool, t);
}

/* Emulated machines: book each sub-task on its machine's FIFO (exact state = the load
 * table's working copy), complete those whose finish time has passed. */
static unsigned int
ctl_poll_emul(struct nl_dp *dp, double now_vt)
{
	struct nl_dp_sub rec[CTL_BURST];
	const struct nl_dp_gen *g = dp->gen_rcu; /* I3: the writer reads its own root */
	unsigned int n, work = 0;
	void *fin[CTL_BURST];

	n = rte_ring_sc_dequeue_burst_elem(dp->sub_ring, rec, sizeof(rec[0]), CTL_BURST, NULL);
	for (unsigned int i = 0; i < n; i++) {
		struct nl_task *t = rec[i].t;
		uint32_t m = rec[i].mach;
		struct nl_mach_load *w = nl_load_entry_ctl(dp->load, m);
		double start, dur;

		if (w == NULL || m >= g->n_mach) { /* cannot happen with in-process machines */
			t->flags |= NL_TF_FAILED | ((uint32_t)NL_REJECT_MACHINE_LOST << NL_TF_REASON_SHIFT);
			heap_push(dp, now_vt, t, UINT32_MAX);
			continue;
		}
		start = w->busy_until_vt > rec[i].arrive_vt ? w->busy_until_vt : rec[i].arrive_vt;
		dur = t->instr / t->n_split /
			      (g->mach[m].speed_ips * nl_dp_bg_factor(dp, m, start)) +
		      t->data_bits / t->n_split / g->mach[m].link_bps;
		nl_load_apply_ctl(dp->load, rec[i].mgr, rec[i].seq, m, rec[i].arrive_vt, dur);
		heap_push(dp, start + dur, t, m);
	}
	work += n;
	while (dp->heap_n > 0 && dp->heap[0].fin_vt <= now_vt) {
		struct nl_dp_heap_ent e = heap_pop(dp);
		struct nl_mach_load *w = nl_load_entry_ctl(dp->load, e.mach);

		if (w != NULL && w->n_sub > 0)
			w->n_sub--;
		if ((e.t->flags & NL_TF_LEFT_MASK) > 0)
			e.t->flags--;
		if ((e.t->flags & NL_TF_LEFT_MASK) == 0)
			nl_dp_task_finish_ctl(dp, e.t, e.fin_vt);
		work++;
	}
	n = rte_ring_sc_dequeue_burst(dp->fin_ring, fin, CTL_BURST, NULL);
	for (unsigned int i = 0; i < n; i++)
		nl_dp_task_finish_ctl(dp, fin[i], now_vt);
	work += n;
	dp->ctl_dirty |= work > 0;
	if (dp->ctl_dirty && now_vt - dp->last_publish_vt >= dp->o.publish_vt) {
		nl_load_publish_ctl(dp->load);
		dp->last_publish_vt = now_vt;
		dp->ctl_dirty = false;
	}
	return work;
}

static void
gen_free_cb(struct rcu_head *head)
{
	struct nl_dp_gen *g = caa_container_of(head, struct nl_dp_gen, rcu);

	nl_sched_free(g->s);
	free(g->mach);
	free(g->alive);
	free(g);
}

int
nl_dp_gen_publish_ctl(struct nl_dp *dp, const struct nl_machine *mach, const uint8_t *alive,
		      unsigned int n_mach)
{
	struct nl_dp_gen *g = calloc(1, sizeof(*g)), *old;
	int rc;

	if (g == NULL)
		return -ENOMEM;
	g->mach = malloc(n_mach * sizeof(*g->mach));
	g->alive = malloc(n_mach);
	if (g->mach == NULL || g->alive == NULL) {
		free(g->mach);
		free(g->alive);
		free(g);
		return -ENOMEM;
	}
	memcpy(g->mach, mach, n_mach * sizeof(*mach));
	if (alive != NULL)
		memcpy(g->alive, alive, n_mach);
	else
		memset(g->alive, 1, n_mach);
	g->n_mach = n_mach;
	rc = nl_sched_create(&g->s, nl_policy_of(dp->o.scheme), &dp->sp, g->mach, n_mach);
	if (rc != 0) {
		free(g->mach);
		free(g->alive);
		free(g);
		return rc;
	}
	if (dp->n_mgr != 0 && g->s->n_mgr != dp->n_mgr) { /* manager ids must stay valid */
		gen_free_cb(&g->rcu);
		return -EINVAL;
	}
	old = dp->gen_rcu;
	g->id = old != NULL ? old->id + 1 : 1;
	/* Orders the generation's contents before the pointer; pairs with rcu_dereference()
	 * in nl_dp_lcore_main(). */
	rcu_assign_pointer(dp->gen_rcu, g);
	if (old != NULL)
		urcu_qsbr_call_rcu(&old->rcu, gen_free_cb);
	return 0;
}

int
nl_dp_machine_set_ctl(struct nl_dp *dp, uint32_t mach, bool alive, double speed_ips)
{
	const struct nl_dp_gen *g = dp->gen_rcu;
	struct nl_machine *m;
	uint8_t *al;
	int rc;

	if (mach >= g->n_mach || speed_ips < 0)
		return -EINVAL;
	m = malloc(g->n_mach * sizeof(*m));
	al = malloc(g->n_mach);
	if (m == NULL || al == NULL) {
		free(m);
		free(al);
		return -ENOMEM;
	}
	memcpy(m, g->mach, g->n_mach * sizeof(*m));
	memcpy(al, g->alive, g->n_mach);
	al[mach] = alive;
	if (speed_ips > 0)
		m[mach].speed_ips = speed_ips;
	rc = nl_dp_gen_publish_ctl(dp, m, al, g->n_mach);
	free(m);
	free(al);
	if (rc == 0) {
		/* A machine that left looks infinitely busy to every view (it is skipped unless
		 * fewer than L machines remain; the control lcore re-dispatches then). */
		struct nl_mach_load *w = nl_load_entry_ctl(dp->load, mach);

		if (w != NULL && !alive)
			w->busy_until_vt = NL_MACH_GONE_VT;
		else if (w != NULL && w->busy_until_vt >= NL_MACH_GONE_VT)
			w->busy_until_vt = 0;
		rc = nl_load_publish_ctl(dp->load);
	}
	return rc;
}

/* --- creation --- */

static void
task_obj_init(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct nl_task *t = obj;
	struct nl_dp *dp = arg;

	(void)mp;
	memset(t, 0, sizeof(*t));
	t->aux = idx; /* meta index, kept for the task's whole life in the pool */
	if (idx < dp->n_meta)
		dp->meta[idx].task = t;
}

static unsigned int
pow2_at_least(unsigned int x)
{
	unsigned int p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

int
nl_dp_create(struct nl_dp **out, const struct nl_model_cfg *m, const struct nl_machine *mach,
	     const struct nl_dp_opts *o)
{
	struct nl_dp *dp;
	char name[RTE_RING_NAMESIZE];
	int rc;

	if (out == NULL || m == NULL || mach == NULL || o == NULL || o->n_mgr_lcore == 0 ||
	    o->burst == 0 || o->pool_size < 64)
		return -EINVAL;
	dp = calloc(1, sizeof(*dp));
	if (dp == NULL)
		return -ENOMEM;
	dp->m = *m;
	dp->o = *o;
	dp->sp = m->sp;
	dp->sp.n_groups = o->n_groups;
	dp->sp.static_known = o->static_known;
	dp->n_mach = m->n_mach;
	dp->mach0 = malloc(m->n_mach * sizeof(*mach));
	if (dp->mach0 == NULL) {
		free(dp);
		return -ENOMEM;
	}
	memcpy(dp->mach0, mach, m->n_mach * sizeof(*mach));
	dp->cyc_per_ns = (double)rte_get_tsc_hz() / 1e9;
	/* Bookings in managers' views: model seconds = u.t. when emulated; port mode: the
	 * workers' time scale in the engine's us clock. */
	dp->work_scale_us = o->work_scale_s * 1e6;
	dp->dur_scale = o->port_mode ? dp->work_scale_us : 1.0;
	dp->vt_per_cyc = 1.0 / (dp->cyc_per_ns * o->ns_per_vt);
	dp->tsc0 = rte_rdtsc();
	rc = nl_dp_gen_publish_ctl(dp, mach, NULL, m->n_mach);
	if (rc != 0)
		goto fail;
	dp->n_mgr = dp->gen_rcu->s->n_mgr;
	rc = nl_load_create(&dp->load, m->n_mach, dp->n_mgr);
	if (rc != 0)
		goto fail;
	dp->mgr = rte_zmalloc("nl_mgr", dp->n_mgr * sizeof(*dp->mgr), RTE_CACHE_LINE_SIZE);
	dp->lc = rte_zmalloc("nl_lc", o->n_mgr_lcore * sizeof(*dp->lc), RTE_CACHE_LINE_SIZE);
	dp->n_meta = o->pool_size;
	dp->meta = calloc(dp->n_meta, sizeof(*dp->meta));
	if (dp->mgr == NULL || dp->lc == NULL || dp->meta == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	dp->pool = rte_mempool_create("nl_tasks", o->pool_size, sizeof(struct nl_task),
				      o->pool_size >= 4096 ? 256 : 0, 0, NULL, NULL, task_obj_init,
				      dp, SOCKET_ID_ANY, 0);
	dp->sub_ring = rte_ring_create_elem("nl_sub", sizeof(struct nl_dp_sub), SUB_RING_SIZE,
					    SOCKET_ID_ANY, RING_F_SC_DEQ);
	dp->fin_ring = rte_ring_create("nl_fin", pow2_at_least(o->pool_size + 1), SOCKET_ID_ANY,
				       RING_F_SC_DEQ);
	if (dp->pool == NULL || dp->sub_ring == NULL || dp->fin_ring == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	dp->n_lc = o->n_mgr_lcore;
	for (unsigned int i = 0; i < dp->n_lc; i++) {
		dp->lc[i].dp = dp;
		dp->lc[i].lcore_id = o->mgr_lcore[i];
		dp->lc[i].eng.ops = &dp_ops;
		dp->lc[i].eng.ctx = &dp->lc[i];
		dp->lc[i].hk_mask = 63;
	}
	for (uint32_t i = 0; i < dp->n_mgr; i++) {
		struct nl_dp_mgr *mg = &dp->mgr[i];
		unsigned int li = (o->mgr_map_n > 0 && i < (uint32_t)o->mgr_map_n) ? o->mgr_map[i] :
										  i % dp->n_lc;
		struct nl_dp_lcore *lc;

		if (li >= dp->n_lc) {
			rc = -EINVAL;
			goto fail;
		}
		lc = &dp->lc[li];
		mg->id = i;
		mg->lcore = lc->lcore_id;
		mg->owner = lc;
		mg->lc_idx = lc->n_mgr;
		lc->mgr[lc->n_mgr++] = mg;
		snprintf(name, sizeof(name), "nl_inbox_%u", i);
		mg->inbox = rte_ring_create_elem(name, sizeof(struct nl_dp_msg), o->inbox_size,
						 SOCKET_ID_ANY, RING_F_SC_DEQ);
		if (mg->inbox == NULL) {
			rc = -rte_errno;
			goto fail;
		}
		rc = nl_load_view_init(&mg->view, i, NL_MODEL_MAX_MACH < 4096 ? NL_MODEL_MAX_MACH : 4096,
				       1024);
		if (rc != 0)
			goto fail;
	}
	dp->lc[0].ingress = true;
	dp->heap_cap = (size_t)o->pool_size * (m->n_split ? m->n_split : 1) + SUB_RING_SIZE;
	dp->heap = malloc(dp->heap_cap * sizeof(*dp->heap));
	if (dp->heap == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	*out = dp;
	return 0;
fail:
	nl_dp_free(dp);
	return rc;
}

static void
drain_task(struct nl_dp *dp, struct nl_task *t, uint64_t *n)
{
	if (t->flags & NL_TF_DEAD)
		return;
	t->flags |= NL_TF_DEAD;
	(*n)++;
	rte_mempool_put(dp->pool, t);
}

/* After the lcores stopped: return every task still in an inbox, a service slot, the
 * sub-task ring, the heap or the finish ring to the pool (each once: NL_TF_DEAD). */
void
nl_dp_drain_ctl(struct nl_dp *dp)
{
	uint64_t n = 0;
	struct nl_dp_msg msg;
	struct nl_dp_sub rec;
	void *p;

	for (uint32_t i = 0; i < dp->n_mgr; i++) {
		struct nl_dp_mgr *mg = &dp->mgr[i];

		if (mg->inbox == NULL)
			continue;
		if (mg->has_cur)
			drain_task(dp, mg->cur.t, &n);
		mg->has_cur = false;
		while (rte_ring_sc_dequeue_elem(mg->inbox, &msg, sizeof(msg)) == 0)
			drain_task(dp, msg.t, &n);
	}
	while (dp->sub_ring != NULL &&
	       rte_ring_sc_dequeue_elem(dp->sub_ring, &rec, sizeof(rec)) == 0)
		drain_task(dp, rec.t, &n);
	for (size_t i = 0; i < dp->heap_n; i++)
		drain_task(dp, dp->heap[i].t, &n);
	dp->heap_n = 0;
	while (dp->fin_ring != NULL && rte_ring_sc_dequeue(dp->fin_ring, &p) == 0)
		drain_task(dp, p, &n);
	nl_stat_add_st(&dp->failed, n); /* I1: what a stop leaves unfinished is reported failed */
}

void
nl_dp_free(struct nl_dp *dp)
{
	if (dp == NULL)
		return;
	nl_dp_drain_ctl(dp);
	for (uint32_t i = 0; dp->mgr != NULL && i < dp->n_mgr; i++) {
		rte_ring_free(dp->mgr[i].inbox);
		nl_load_view_fini(&dp->mgr[i].view);
	}
	rte_ring_free(dp->sub_ring);
	rte_ring_free(dp->fin_ring);
	rte_ring_free(dp->req_ring);
	rte_mempool_free(dp->pool);
	urcu_qsbr_thread_offline();
	if (dp->gen_rcu != NULL) {
		urcu_qsbr_barrier();
		gen_free_cb(&dp->gen_rcu->rcu);
	}
	nl_load_free(dp->load);
	urcu_qsbr_thread_online();
	rte_free(dp->mgr);
	rte_free(dp->lc);
	free(dp->meta);
	free(dp->heap);
	free(dp->resp);
	free(dp->mach0);
	free(dp->workers);
	free(dp);
}

/* --- runs --- */

static void
run_reset(struct nl_dp *dp, uint64_t seed)
{
	uint64_t x = seed;

	for (uint32_t i = 0; i < dp->n_mgr; i++) {
		struct nl_dp_mgr *mg = &dp->mgr[i];
		unsigned int cap = mg->view.cap_mach, logc = mg->view.log_cap;

		mg->has_cur = false;
		mg->busy_until_vt = 0;
		mg->busy_vt = 0;
		mg->next_measure_vt = 0;
		nl_load_view_fini(&mg->view);
		nl_load_view_init(&mg->view, i, cap, logc);
	}
	memset(dp->load->w_load, 0, dp->load->n_mach * sizeof(*dp->load->w_load));
	memset(dp->load->w_applied, 0, dp->load->n_mgr * sizeof(*dp->load->w_applied));
	nl_load_publish_ctl(dp->load);
	/* A fresh generation: fresh policy state (2LSC measurement) for every run. */
	nl_dp_gen_publish_ctl(dp, dp->gen_rcu->mach, dp->gen_rcu->alive, dp->gen_rcu->n_mach);
	for (unsigned int i = 0; i < dp->n_lc; i++) {
		struct nl_dp_lcore *lc = &dp->lc[i];

		nl_rng_seed(&lc->rng, nl_splitmix64(&x) + i);
		lc->generated = lc->accepted = lc->rejected_ingress = 0;
		lc->lat_n = 0;
		lc->lat_sum_ns = 0;
		lc->dispatched_tasks = 0;
		lc->now_vt = 0;
		lc->clock_mvt = 0;
		memset(lc->pend, 0, sizeof(lc->pend));
		memset(lc->lat_hist, 0, sizeof(lc->lat_hist));
	}
	dp->bg_seed = nl_splitmix64(&x);
	dp->completed = dp->failed = 0;
	dp->n_resp = 0;
	dp->sum_hops = dp->sum_wait = 0;
	dp->heap_n = 0;
	dp->gen_done = 0;
	dp->run_quit = 0;
	dp->last_publish_vt = 0;
	nl_dp_kick_ctl(dp); /* every manager polled once (the 2LSC global keeps itself marked) */
}

void
nl_dp_kick_ctl(struct nl_dp *dp)
{
	for (uint32_t i = 0; i < dp->n_mgr; i++)
		mgr_mark(&dp->mgr[i]);
}

static uint64_t
sum_lc(const struct nl_dp *dp, size_t off)
{
	uint64_t s = 0;

	for (unsigned int i = 0; i < dp->n_lc; i++)
		s += nl_atomic_load_relaxed((const uint64_t *)((const char *)&dp->lc[i] + off));
	return s;
}

static int
launch(struct nl_dp *dp)
{
	for (unsigned int i = 0; i < dp->n_lc; i++) {
		int rc = rte_eal_remote_launch(nl_dp_lcore_main, &dp->lc[i], dp->lc[i].lcore_id);

		if (rc != 0) {
			nl_atomic_store_relaxed(&dp->run_quit, 1);
			rte_eal_mp_wait_lcore();
			return rc;
		}
	}
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
nl_dp_run_point(struct nl_dp *dp, double load_pct, uint64_t seed, struct nl_dp_point *pt)
{
	size_t cap;
	uint64_t loops = 0;
	double t0 = (double)rte_rdtsc();
	bool saturated = false;
	int rc;

	memset(pt, 0, sizeof(*pt));
	if (!dp->o.emulate)
		return -EINVAL;
	dp->lambda = nl_model_arrival_rate(&dp->m, load_pct);
	if (!(dp->lambda > 0))
		return -EINVAL;
	dp->horizon_vt = dp->m.horizon_vt;
	dp->warmup_vt = dp->m.warmup_vt;
	cap = (size_t)(dp->lambda * (dp->horizon_vt - dp->warmup_vt) * 1.5) + 1024;
	if (cap > dp->cap_resp) {
		double *r = realloc(dp->resp, cap * sizeof(*r));

		if (r == NULL)
			return -ENOMEM;
		dp->resp = r;
		dp->cap_resp = cap;
	}
	run_reset(dp, seed);
	dp->tsc0 = rte_rdtsc();
	for (unsigned int i = 0; i < dp->n_lc; i++)
		dp->lc[i].next_arrival_vt = nl_rng_exp(&dp->lc[i].rng, 1.0 / dp->lambda);
	rc = launch(dp);
	if (rc != 0)
		return rc;
	for (;;) {
		double now = nl_dp_now_vt(dp);
		unsigned int work = ctl_poll_emul(dp, now);
		uint64_t acc = sum_lc(dp, offsetof(struct nl_dp_lcore, accepted));
		uint64_t in_sys = acc - dp->completed - dp->failed;

		if (nl_atomic_load_relaxed(&dp->gen_done) != 0 && in_sys == 0)
			break;
		double slow = now;

		/* the slowest manager lcore's clock: a lagging lcore is not a stuck run */
		for (unsigned int i = 0; i < dp->n_lc; i++) {
			double c = (double)nl_atomic_load_relaxed(&dp->lc[i].clock_mvt) / 1000.0;

			if (c < slow)
				slow = c;
		}
		if (in_sys > dp->m.max_in_system || slow > 2 * dp->horizon_vt) {
			saturated = true;
			break;
		}
		if (nl_atomic_load_relaxed(&nl_dp_quit) != 0)
			break;
		if (work == 0)
			rte_pause();
		if ((++loops & 255) == 0)
			urcu_qsbr_quiescent_state();
	}
	nl_atomic_store_relaxed(&dp->run_quit, 1);
	rte_eal_mp_wait_lcore();
	uint64_t failed_before = dp->failed;

	nl_dp_drain_ctl(dp);
	pt->unfinished = dp->failed - failed_before;
	pt->wall_s = ((double)rte_rdtsc() - t0) / (double)rte_get_tsc_hz();
	pt->generated = sum_lc(dp, offsetof(struct nl_dp_lcore, generated));
	pt->completed = dp->completed;
	pt->rejected = failed_before + sum_lc(dp, offsetof(struct nl_dp_lcore, rejected_ingress));
	pt->measured = dp->n_resp;
	double maxu = 0, gu;
	const struct nl_sched *s = dp->gen_rcu->s;
	uint32_t gm = dp->o.scheme == NL_SCHEME_2LSC ? nl_2lsc_global_mgr(s) : 0;

	for (uint32_t i = 0; i < dp->n_mgr; i++)
		if (dp->mgr[i].busy_vt / dp->horizon_vt > maxu)
			maxu = dp->mgr[i].busy_vt / dp->horizon_vt;
	gu = dp->mgr[gm].busy_vt / dp->horizon_vt;
	pt->global_util = gu;
	pt->max_mgr_util = maxu;
	pt->saturated = saturated || pt->unfinished > 0 || maxu > 0.97;
	if (dp->n_resp > 0) {
		double sum = 0;

		qsort(dp->resp, dp->n_resp, sizeof(double), cmp_double);
		for (size_t i = 0; i < dp->n_resp; i++)
			sum += dp->resp[i];
		pt->resp_mean_vt = sum / (double)dp->n_resp;
		pt->resp_p50_vt = dp->resp[(size_t)(0.50 * (double)(dp->n_resp - 1))];
		pt->resp_p95_vt = dp->resp[(size_t)(0.95 * (double)(dp->n_resp - 1))];
		pt->resp_p99_vt = dp->resp[(size_t)(0.99 * (double)(dp->n_resp - 1))];
		pt->hops_mean = dp->sum_hops / (double)dp->n_resp;
		pt->sched_wait_mean_vt = dp->sum_wait / (double)dp->n_resp;
	}
	DP_LOG(DEBUG, "point %g%%: %llu tasks, mean %.1f u.t., %.2f s\n", load_pct,
	       (unsigned long long)pt->measured, pt->resp_mean_vt, pt->wall_s);
	return 0;
}

int
nl_dp_run_native(struct nl_dp *dp, double rate_tps, double secs, struct nl_dp_native_result *r)
{
	uint64_t loops = 0, n_lat = 0;
	double sum = 0;
	uint64_t hist[64 * 8];
	int rc;

	memset(r, 0, sizeof(*r));
	if (dp->o.emulate || !dp->o.native_instant || secs <= 0)
		return -EINVAL;
	/* vt = microseconds in native mode (ns_per_vt = 1000). */
	dp->lambda = rate_tps > 0 ? rate_tps * dp->o.ns_per_vt * 1e-9 : 0;
	dp->horizon_vt = secs * 1e9 / dp->o.ns_per_vt;
	dp->warmup_vt = 0;
	run_reset(dp, 1);
	dp->tsc0 = rte_rdtsc();
	for (unsigned int i = 0; i < dp->n_lc; i++)
		dp->lc[i].next_arrival_vt =
			dp->lambda > 0 ? nl_rng_exp(&dp->lc[i].rng, 1.0 / dp->lambda) : 0;
	rc = launch(dp);
	if (rc != 0)
		return rc;
	for (;;) {
		double now = nl_dp_now_vt(dp);
		void *fin[CTL_BURST];
		unsigned int n = rte_ring_sc_dequeue_burst(dp->fin_ring, fin, CTL_BURST, NULL);

		for (unsigned int i = 0; i < n; i++)
			nl_dp_task_finish_ctl(dp, fin[i], now);
		if (now - dp->last_publish_vt >= dp->o.publish_vt) {
			nl_load_publish_ctl(dp->load);
			dp->last_publish_vt = now;
		}
		if (now > dp->horizon_vt + 1000 || nl_atomic_load_relaxed(&nl_dp_quit) != 0)
			break;
		/* Native runs: machines are instant, so the control lcore has little to do; it
		 * naps (offline, as every sleeping QSBR thread) and leaves the CPU to the
		 * manager lcores on a shared machine. */
		(void)loops;
		urcu_qsbr_thread_offline();
		rte_delay_us_sleep(200);
		urcu_qsbr_thread_online();
	}
	nl_atomic_store_relaxed(&dp->run_quit, 1);
	rte_eal_mp_wait_lcore();
	nl_dp_drain_ctl(dp);
	memset(hist, 0, sizeof(hist));
	for (unsigned int i = 0; i < dp->n_lc; i++) {
		n_lat += dp->lc[i].lat_n;
		sum += dp->lc[i].lat_sum_ns;
		for (unsigned int b = 0; b < 64 * 8; b++)
			hist[b] += dp->lc[i].lat_hist[b];
	}
	r->tasks = sum_lc(dp, offsetof(struct nl_dp_lcore, dispatched_tasks));
	r->rejected = sum_lc(dp, offsetof(struct nl_dp_lcore, rejected_ingress)) + dp->failed;
	r->rate_tps = (double)r->tasks / secs;
	r->lat_mean_ns = n_lat ? sum / (double)n_lat : 0;
	uint64_t want = (uint64_t)(0.99 * (double)n_lat), acc = 0;

	for (unsigned int b = 0; b < 64 * 8 && n_lat > 0; b++) {
		acc += hist[b];
		if (acc > want) {
			unsigned int e = b / 8, s = b % 8;
			/* upper edge of the bucket */
			double lo = e < 4 ? (double)(e ? (1ull << (e - 1)) : 0) :
					    (double)(1ull << (e - 1)) + (double)s * (double)(1ull << (e - 4));

			r->lat_p99_ns = e < 4 ? (double)(1ull << e) : lo + (double)(1ull << (e - 4));
			break;
		}
	}
	return 0;
}

void
nl_dp_stop(void)
{
	nl_atomic_store_relaxed(&nl_dp_quit, 1);
}

bool
nl_dp_stopping(void)
{
	return nl_atomic_load_relaxed(&nl_dp_quit) != 0;
}

void
nl_dp_counts_get(const struct nl_dp *dp, struct nl_dp_counts *c)
{
	memset(c, 0, sizeof(*c));
	c->accepted = sum_lc(dp, offsetof(struct nl_dp_lcore, accepted));
	c->rejected_ingress = sum_lc(dp, offsetof(struct nl_dp_lcore, rejected_ingress));
	c->accepted += nl_atomic_load_relaxed(&dp->io_accepted);
	c->rejected_ingress += nl_atomic_load_relaxed(&dp->io_rejected);
	c->completed = nl_atomic_load_relaxed(&dp->completed) +
		       sum_lc(dp, offsetof(struct nl_dp_lcore, dispatched_tasks));
	c->failed = nl_atomic_load_relaxed(&dp->failed);
	c->in_flight = rte_mempool_in_use_count(dp->pool);
	c->redispatched = nl_atomic_load_relaxed(&dp->redispatched);
	c->stale_done = nl_atomic_load_relaxed(&dp->stale_done);
	c->workers_joined = nl_atomic_load_relaxed(&dp->workers_joined);
	c->workers_left = nl_atomic_load_relaxed(&dp->workers_left);
	for (unsigned int i = 0; i < NL_PROTO_E_MAX; i++)
		c->drops[i] = nl_atomic_load_relaxed(&dp->drops[i]);
}

bool
nl_dp_accounting_ok(const struct nl_dp *dp)
{
	struct nl_dp_counts c;

	nl_dp_counts_get(dp, &c);
	return c.accepted == c.completed + c.failed + c.in_flight;
}
