/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control lcore of emulated and native runs: emulated machines (each sub-task booked on
 * its machine's FIFO and completed at its finish time, nl_model.h), the load-table writer,
 * accounting; and the runs themselves: nl_dp_run_point() on the manager lcores in wall-clock
 * time or, with opts.lockstep, every lcore round driven from this thread in virtual-time
 * order (deterministic: tests/lockstep/ compares it with the simulator task by task), and
 * nl_dp_run_native().
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <urcu/urcu-qsbr.h>

#include "nl_dp_inline.h"

#define CTL_BURST 64u

#define DP_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)

/* Finish a burst of the tasks the manager lcores handed back on fin_ring, at now_vt.
 * @return how many. */
static unsigned int
finish_burst(struct nl_dp *dp, double now_vt)
{
	void *fin[CTL_BURST];
	unsigned int n = rte_ring_sc_dequeue_burst(dp->fin_ring, fin, CTL_BURST, NULL);

	for (unsigned int i = 0; i < n; i++)
		nl_dp_task_finish_ctl(dp, fin[i], now_vt);
	return n;
}

unsigned int
nl_dp_ctl_poll_emul(struct nl_dp *dp, double now_vt)
{
	struct nl_dp_sub rec[CTL_BURST];
	const struct nl_dp_gen *g = dp->gen_rcu; /* I3: the writer reads its own root */
	unsigned int n, work = 0;
	struct nl_ev ev;

	n = rte_ring_sc_dequeue_burst_elem(dp->sub_ring, rec, sizeof(rec[0]), CTL_BURST, NULL);
	for (unsigned int i = 0; i < n; i++) {
		struct nl_task *t = rec[i].t;
		uint32_t m = rec[i].mach;
		struct nl_mach_load *w = nl_load_entry_ctl(dp->load, m);
		double start, dur, fin_vt = now_vt;

		if (w != NULL && m < g->n_mach) {
			start = w->busy_until_vt > rec[i].arrive_vt ? w->busy_until_vt :
								      rec[i].arrive_vt;
			dur = nl_model_sub_vt(&dp->bg, &g->mach[m], m, t, start);
			nl_load_apply_ctl(dp->load, rec[i].mgr, rec[i].seq, m, rec[i].arrive_vt, dur);
			fin_vt = start + dur;
		} else { /* cannot happen with in-process machines */
			t->flags |= NL_TF_FAILED |
				    ((uint32_t)NL_REJECT_MACHINE_LOST << NL_TF_REASON_SHIFT);
			m = UINT32_MAX;
		}
		if (nl_evq_push_st(&dp->fin_q, fin_vt, 0, m, t) != 0) {
			/* no memory to hold it: the sub-task is lost, the task fails (I1) */
			t->flags |= NL_TF_FAILED |
				    ((uint32_t)NL_REJECT_MACHINE_LOST << NL_TF_REASON_SHIFT);
			if (nl_model_task_sub_done(t))
				nl_dp_task_finish_ctl(dp, t, now_vt);
		}
	}
	work += n;
	while (dp->fin_q.n > 0 && dp->fin_q.h[0].t_vt <= now_vt) {
		struct nl_mach_load *w;

		nl_evq_pop_st(&dp->fin_q, &ev);
		w = nl_load_entry_ctl(dp->load, ev.arg);
		if (w != NULL && w->n_sub > 0)
			w->n_sub--;
		if (nl_model_task_sub_done(ev.ptr))
			nl_dp_task_finish_ctl(dp, ev.ptr, ev.t_vt);
		work++;
	}
	work += finish_burst(dp, now_vt);
	dp->ctl_dirty |= work > 0;
	if (dp->ctl_dirty && now_vt - dp->last_publish_vt >= dp->o.publish_vt) {
		nl_load_publish_ctl(dp->load);
		dp->last_publish_vt = now_vt;
		dp->ctl_dirty = false;
	}
	return work;
}

double
nl_dp_ctl_next_vt(const struct nl_dp *dp, double now_vt)
{
	if (rte_ring_count(dp->sub_ring) > 0 || rte_ring_count(dp->fin_ring) > 0)
		return now_vt;
	return dp->fin_q.n > 0 ? fmax(dp->fin_q.h[0].t_vt, now_vt) : INFINITY;
}

/* Tasks accepted and not yet completed or failed. */
static uint64_t
in_system(const struct nl_dp *dp)
{
	return nl_dp_sum_lc(dp, offsetof(struct nl_dp_lcore, accepted)) - dp->completed -
	       dp->failed;
}

/* Emulated run on the manager lcores in wall-clock time; this thread is the control lcore.
 * true when the run could not keep up. */
static bool
run_threads(struct nl_dp *dp)
{
	uint64_t loops = 0;

	for (;;) {
		double now = nl_dp_now_vt(dp), slow = now;
		unsigned int work = nl_dp_ctl_poll_emul(dp, now);
		uint64_t in_sys = in_system(dp);

		if (nl_atomic_load_relaxed(&dp->gen_done) != 0 && in_sys == 0)
			return false;
		/* the slowest manager lcore's clock: a lagging lcore is not a stuck run */
		for (unsigned int i = 0; i < dp->n_lc; i++) {
			double c = (double)nl_atomic_load_relaxed(&dp->lc[i].clock_mvt) / 1000.0;

			if (c < slow)
				slow = c;
		}
		if (in_sys > dp->m.max_in_system || slow > 2 * dp->horizon_vt)
			return true;
		if (nl_dp_stopping())
			return false;
		if (work == 0)
			rte_pause();
		if ((++loops & 255) == 0)
			urcu_qsbr_quiescent_state();
	}
}

/* Lock-step emulated run: this thread runs every lcore's round and the control round at the
 * time of the next event anywhere, so managers meet tasks in time-stamp order whatever the
 * host does (ties: lcores in index order, managers in pending-bit order, which is manager id
 * order within an lcore: nl_model.h I4). */
static bool
run_lockstep(struct nl_dp *dp)
{
	double now = 0;
	uint64_t loops = 0;

	for (;;) {
		double t = nl_dp_ctl_next_vt(dp, now);

		for (unsigned int i = 0; i < dp->n_lc; i++)
			t = fmin(t, nl_dp_lcore_next_vt(&dp->lc[i], now));
		if (t == INFINITY)
			return false;
		now = t;
		for (unsigned int i = 0; i < dp->n_lc; i++) {
			struct nl_dp_lcore *lc = &dp->lc[i];

			lc->now_vt = now;
			lc->gen = rcu_dereference(dp->gen_rcu);
			nl_dp_lcore_round_st(lc, now);
			lc->gen = NULL;
		}
		nl_dp_ctl_poll_emul(dp, now);
		if (in_system(dp) > dp->m.max_in_system || now > 2 * dp->horizon_vt)
			return true;
		if ((++loops & 255) == 0) {
			urcu_qsbr_quiescent_state();
			if (nl_dp_stopping())
				return false;
		}
	}
}

int
nl_dp_run_point(struct nl_dp *dp, double load_pct, uint64_t seed, struct nl_dp_point *pt)
{
	double lambda = nl_model_arrival_rate(&dp->m, load_pct);
	double t0 = (double)rte_rdtsc();
	uint64_t failed_before;
	bool saturated;
	size_t cap;
	int rc;

	memset(pt, 0, sizeof(*pt));
	if (!dp->o.emulate || !(lambda > 0))
		return -EINVAL;
	dp->horizon_vt = dp->m.horizon_vt;
	dp->warmup_vt = dp->m.warmup_vt;
	cap = (size_t)(lambda * (dp->horizon_vt - dp->warmup_vt) * 1.5) + 1024;
	if (cap > dp->cap_resp) {
		double *r = realloc(dp->resp, cap * sizeof(*r));

		if (r == NULL)
			return -ENOMEM;
		dp->resp = r;
		dp->cap_resp = cap;
	}
	nl_dp_run_reset_ctl(dp, lambda, seed);
	if (dp->o.lockstep) {
		saturated = run_lockstep(dp);
	} else {
		rc = nl_dp_launch_ctl(dp);
		if (rc != 0)
			return rc;
		saturated = run_threads(dp);
		nl_atomic_store_relaxed(&dp->run_quit, 1);
		rte_eal_mp_wait_lcore();
	}
	failed_before = dp->failed;
	nl_dp_drain_ctl(dp);
	pt->unfinished = dp->failed - failed_before;
	pt->wall_s = ((double)rte_rdtsc() - t0) / (double)rte_get_tsc_hz();
	pt->generated = nl_dp_sum_lc(dp, offsetof(struct nl_dp_lcore, generated));
	pt->completed = dp->completed;
	pt->rejected = failed_before + nl_dp_sum_lc(dp, offsetof(struct nl_dp_lcore, rejected_ingress));
	nl_dp_point_stats_ctl(dp, pt);
	pt->saturated = saturated || pt->unfinished > 0 || pt->max_mgr_util > 0.97;
	DP_LOG(DEBUG, "point %g%%: %llu tasks, mean %.1f u.t., %.2f s\n", load_pct,
	       (unsigned long long)pt->measured, pt->resp_mean_vt, pt->wall_s);
	return 0;
}

int
nl_dp_run_native(struct nl_dp *dp, double rate_tps, double secs, struct nl_dp_native_result *r)
{
	uint64_t t0, t1, failed_before;
	int rc;

	memset(r, 0, sizeof(*r));
	if (dp->o.emulate || (!dp->o.native_instant && !dp->o.native_book) || !(secs > 0))
		return -EINVAL;
	/* vt = microseconds in native mode (ns_per_vt = 1000). */
	dp->horizon_vt = secs * 1e9 / dp->o.ns_per_vt;
	dp->warmup_vt = 0;
	nl_dp_run_reset_ctl(dp, rate_tps > 0 ? rate_tps * dp->o.ns_per_vt * 1e-9 : 0, 1);
	t0 = rte_rdtsc();
	rc = nl_dp_launch_ctl(dp);
	if (rc != 0)
		return rc;
	for (;;) {
		double now = nl_dp_now_vt(dp);

		finish_burst(dp, now);
		/* A snapshot only when the table changed (machines joined, left, or bookings
		 * were applied): each new one costs every reader a view refresh. */
		if (dp->ctl_dirty && now - dp->last_publish_vt >= dp->o.publish_vt) {
			dp->ctl_dirty = false;
			nl_load_publish_ctl(dp->load);
			dp->last_publish_vt = now;
		}
		if (now > dp->horizon_vt + 1000 || nl_dp_stopping())
			break;
		/* Native runs: machines are instant, so the control lcore has little to do; it
		 * naps (offline, as every sleeping QSBR thread) and leaves the CPU to the
		 * manager lcores on a shared machine. */
		urcu_qsbr_thread_offline();
		rte_delay_us_sleep(200);
		urcu_qsbr_thread_online();
	}
	nl_atomic_store_relaxed(&dp->run_quit, 1);
	rte_eal_mp_wait_lcore();
	t1 = rte_rdtsc(); /* the run's wall time: a stop (SIGINT) shortens it */
	/* tasks failed during the run still on the finish ring: counted failed, not unfinished */
	while (finish_burst(dp, nl_dp_now_vt(dp)) > 0)
		;
	failed_before = dp->failed;
	nl_dp_drain_ctl(dp); /* what is still in flight: counted failed (I1), reported unfinished */
	nl_dp_native_stats_ctl(dp, (double)(t1 - t0) / (double)rte_get_tsc_hz(),
			       dp->failed - failed_before, r);
	return 0;
}

int
nl_dp_drive_begin(struct nl_dp *dp)
{
	if (dp->o.emulate || (!dp->o.native_instant && !dp->o.native_book))
		return -EINVAL;
	dp->horizon_vt = INFINITY;
	dp->warmup_vt = 0;
	nl_dp_run_reset_ctl(dp, 0, 1);
	return 0;
}

uint64_t
nl_dp_drive_round(struct nl_dp *dp, unsigned int idx)
{
	struct nl_dp_lcore *lc = &dp->lc[idx];

	/* Valid until the caller's next quiescent state (pairs with rcu_assign_pointer()). */
	lc->gen = rcu_dereference(dp->gen_rcu);
	nl_dp_lcore_round_st(lc, nl_dp_now_vt(dp));
	lc->gen = NULL;
	return dp->o.native_book ? lc->booked_tasks : lc->dispatched_tasks;
}
