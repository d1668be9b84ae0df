/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live engine (nl_dp.h): creation, the state of a new run, draining and teardown. The
 * other parts are listed in nl_dp_priv.h.
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

#include "nl_dp_inline.h"
#include "nl_dp_match.h"

RTE_LOG_REGISTER(nl_dp_logtype, user.nlevel.dataplane, INFO);
#define DP_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)

static uint64_t nl_dp_quit; /* set by nl_dp_stop(); relaxed flag polled in housekeeping */

#define SUB_RING_SIZE (1u << 17)

/* --- clock --- */

double
nl_dp_now_vt(const struct nl_dp *dp)
{
	return (double)(rte_rdtsc() - dp->tsc0) * dp->vt_per_cyc;
}

/* --- creation --- */

static void
task_obj_init(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct nl_task *t = obj;
	struct nl_dp *dp = arg;

	(void)mp;
	memset(t, 0, sizeof(*t));
	t->aux = idx; /* pool index, kept for the task's whole life in the pool */
	if (idx < dp->n_pool)
		dp->pool_task[idx] = t;
}

static unsigned int
pow2_at_least(unsigned int x)
{
	unsigned int p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

/* Native and port modes with several manager lcores: one SP/SC ring per ordered pair of
 * manager lcores, and each lcore's per-destination stages (nl_dp_hand_put_st). A ring holds
 * the pool's tasks shared among the other lcores (at least 1,024): with two manager lcores a
 * pool's worth, so a hop never fails on a full ring; with more, about a pool's worth of
 * hand-overs per lcore in all (a full ring fails the task, REJECT overload, as a full inbox
 * does). */
static int
xring_create(struct nl_dp *dp)
{
	unsigned int n = dp->n_lc, cap;
	char name[RTE_RING_NAMESIZE];

	if (dp->o.emulate || n < 2)
		return 0;
	cap = (dp->o.pool_size + 1) / (n - 1);
	cap = cap < 1024 ? 1024 : cap;
	dp->xring = calloc((size_t)n * n, sizeof(*dp->xring));
	if (dp->xring == NULL)
		return -ENOMEM;
	for (unsigned int s = 0; s < n; s++) {
		struct nl_dp_lcore *lc = &dp->lc[s];

		lc->xout = calloc((size_t)n * NL_DP_XBURST, sizeof(*lc->xout));
		lc->xout_n = calloc(n, sizeof(*lc->xout_n));
		if (lc->xout == NULL || lc->xout_n == NULL)
			return -ENOMEM;
		for (unsigned int d = 0; d < n; d++) {
			if (d == s)
				continue;
			snprintf(name, sizeof(name), "nl_x%u_%u", s, d);
			dp->xring[s * n + d] = rte_ring_create_elem(name, sizeof(struct nl_dp_hand),
					cap, SOCKET_ID_ANY,
					RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
			if (dp->xring[s * n + d] == NULL)
				return -rte_errno;
		}
	}
	return 0;
}

static void
xring_free(struct nl_dp *dp)
{
	for (unsigned int i = 0; dp->lc != NULL && i < dp->n_lc; i++) {
		free(dp->lc[i].xout);
		free(dp->lc[i].xout_n);
		dp->lc[i].xout = NULL;
		dp->lc[i].xout_n = NULL;
	}
	for (unsigned int i = 0; dp->xring != NULL && i < dp->n_lc * dp->n_lc; i++)
		rte_ring_free(dp->xring[i]);
	free(dp->xring);
	dp->xring = NULL;
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
	dp->policy = o->policy != NULL ? o->policy : nl_policy_of(o->scheme);
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
	dp->dur_scale = o->port_mode || o->native_book ? dp->work_scale_us : 1.0;
	dp->vt_per_cyc = 1.0 / (dp->cyc_per_ns * o->ns_per_vt);
	dp->tsc0 = rte_rdtsc();
	rc = nl_dp_gen_publish_ctl(dp, mach, NULL, m->n_mach);
	if (rc != 0)
		goto fail;
	dp->n_mgr = dp->gen_rcu->s->n_mgr;
	dp->measure_mgr = nl_sched_measure_mgr(dp->gen_rcu->s);
	if (m->n_cut > 0 && o->emulate) { /* a simulated split (nl_model_hop_vt) */
		dp->split_part = calloc(dp->n_mgr, 1);
		if (dp->split_part == NULL) {
			rc = -ENOMEM;
			goto fail;
		}
		nl_model_split_parts(&dp->m, dp->gen_rcu->s, dp->split_part);
	}
	if (o->ext != NULL && o->ext->attach_ctl != NULL) {
		/* hook up (scale-out: placement of managers on appliances, before the mapping) */
		rc = o->ext->attach_ctl(dp, o->ext_arg, &dp->ext);
		if (rc != 0)
			goto fail;
	}
	rc = nl_load_create(&dp->load, m->n_mach, dp->n_mgr);
	if (rc != 0)
		goto fail;
	dp->mgr = rte_zmalloc("nl_mgr", dp->n_mgr * sizeof(*dp->mgr), RTE_CACHE_LINE_SIZE);
	dp->lc = rte_zmalloc("nl_lc", o->n_mgr_lcore * sizeof(*dp->lc), RTE_CACHE_LINE_SIZE);
	dp->n_pool = o->pool_size;
	dp->pool_task = calloc(dp->n_pool, sizeof(*dp->pool_task));
	if (dp->mgr == NULL || dp->lc == NULL || dp->pool_task == NULL) {
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
		dp->lc[i].eng.ops = o->lockstep ? &nl_dp_engine_ops_lockstep : &nl_dp_engine_ops;
		dp->lc[i].eng.ctx = &dp->lc[i];
		dp->lc[i].hk_mask = 63;
		dp->lc[i].idx = i;
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
		if (dp->ext != NULL && o->ext->mgr_lcore != NULL) /* hook up: a scale-out proxy */
			lc = o->ext->mgr_lcore(dp->ext, i, lc);
		mg->id = i;
		mg->lcore = lc->lcore_id;
		mg->owner = lc;
		mg->owner_lc = lc == &dp->lc[li] ? li : UINT32_MAX;
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
	rc = xring_create(dp);
	if (rc != 0)
		goto fail;
	for (unsigned int i = 0; i < dp->n_lc; i++) {
		/* emulated: tasks in transit; native booking: tasks until their last sub-task ends */
		rc = nl_evq_init(&dp->lc[i].transit, o->emulate ? o->pool_size : 1);
		if (rc != 0)
			goto fail;
		if (o->native_book) {
			dp->lc[i].wh_next = calloc(o->pool_size, sizeof(uint32_t));
			dp->lc[i].wh_end = calloc(o->pool_size, sizeof(double));
			if (dp->lc[i].wh_next == NULL || dp->lc[i].wh_end == NULL) {
				rc = -ENOMEM;
				goto fail;
			}
			memset(dp->lc[i].wh_head, 0xff, sizeof(dp->lc[i].wh_head));
		}
	}
	rc = nl_evq_init(&dp->fin_q, (size_t)o->pool_size * (m->n_split ? m->n_split : 1));
	if (rc != 0)
		goto fail;
	rc = nl_dp_match_attach_ctl(dp); /* issue #15 hook: the model's [class] match table */
	if (rc != 0)
		goto fail;
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

	/* Also on a half-built engine (nl_dp_create()'s failure path): n_mgr is set before
	 * dp->mgr exists, so every array is checked before it is walked. */
	for (uint32_t i = 0; dp->mgr != NULL && i < dp->n_mgr; i++) {
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
	for (unsigned int i = 0; dp->lc != NULL && i < dp->n_lc; i++) {
		struct nl_dp_lcore *lc = &dp->lc[i];

		for (size_t k = 0; k < lc->transit.n; k++)
			drain_task(dp, lc->transit.h[k].ptr, &n);
		lc->transit.n = 0;
		for (unsigned int w = 0; lc->wh_next != NULL && w < NL_DP_WHEEL; w++) {
			for (uint32_t x = lc->wh_head[w]; x != UINT32_MAX; x = lc->wh_next[x])
				if (x < dp->n_pool)
					drain_task(dp, dp->pool_task[x], &n);
			lc->wh_head[w] = UINT32_MAX;
		}
		lc->wh_n = 0;
		while (lc->hand_head != lc->hand_tail)
			drain_task(dp, lc->hand[lc->hand_head++ & (NL_DP_HAND_CAP - 1)].t, &n);
		for (unsigned int d = 0; dp->xring != NULL && lc->xout_n != NULL && d < dp->n_lc; d++) {
			struct nl_dp_hand h;

			for (uint32_t k = 0; k < lc->xout_n[d]; k++)
				drain_task(dp, lc->xout[d * NL_DP_XBURST + k].t, &n);
			lc->xout_n[d] = 0;
			while (dp->xring[i * dp->n_lc + d] != NULL &&
			       rte_ring_sc_dequeue_elem(dp->xring[i * dp->n_lc + d], &h, sizeof(h)) == 0)
				drain_task(dp, h.t, &n);
		}
	}
	for (size_t i = 0; dp->fin_q.h != NULL && i < dp->fin_q.n; i++)
		drain_task(dp, dp->fin_q.h[i].ptr, &n);
	dp->fin_q.n = 0;
	while (dp->fin_ring != NULL && rte_ring_sc_dequeue(dp->fin_ring, &p) == 0)
		drain_task(dp, p, &n);
	nl_stat_add_st(&dp->failed, n); /* I1: what a stop leaves unfinished is reported failed */
}

void
nl_dp_free(struct nl_dp *dp)
{
	if (dp == NULL)
		return;
	nl_dp_tel_close(dp); /* no telemetry handler reads dp from here on */
	if (dp->ext != NULL && dp->o.ext->drain_ctl != NULL)
		dp->o.ext->drain_ctl(dp, dp->ext); /* hook up: tasks parked at other appliances */
	nl_dp_drain_ctl(dp);
	for (uint32_t i = 0; dp->mgr != NULL && i < dp->n_mgr; i++) {
		rte_ring_free(dp->mgr[i].inbox);
		nl_load_view_fini(&dp->mgr[i].view);
	}
	xring_free(dp);
	rte_ring_free(dp->sub_ring);
	rte_ring_free(dp->fin_ring);
	rte_mempool_free(dp->pool);
	urcu_qsbr_thread_offline();
	if (dp->gen_rcu != NULL) {
		urcu_qsbr_barrier();
		nl_dp_gen_free_ctl(dp->gen_rcu);
	}
	nl_load_free(dp->load);
	urcu_qsbr_thread_online();
	for (unsigned int i = 0; dp->lc != NULL && i < dp->n_lc; i++) {
		nl_evq_fini(&dp->lc[i].transit);
		free(dp->lc[i].wh_next);
		free(dp->lc[i].wh_end);
	}
	nl_evq_fini(&dp->fin_q);
	rte_free(dp->mgr);
	rte_free(dp->lc);
	free(dp->pool_task);
	free(dp->resp);
	free(dp->mach0);
	if (dp->ext != NULL && dp->o.ext->free != NULL)
		dp->o.ext->free(dp->ext); /* hook up */
	free(dp->split_part);
	nl_dp_match_detach_ctl(dp); /* issue #15 hook */
	free(dp);
}

/* --- runs --- */

void
nl_dp_run_reset_ctl(struct nl_dp *dp, double lambda, uint64_t seed)
{
	for (uint32_t i = 0; i < dp->n_mgr; i++) {
		struct nl_dp_mgr *mg = &dp->mgr[i];
		unsigned int cap = mg->view.cap_mach, logc = mg->view.log_cap;

		mg->has_cur = false;
		memset(&mg->srv, 0, sizeof(mg->srv));
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

		/* The simulator's task stream for the same seed (nl_model.h I1). */
		nl_model_src_init(&lc->src, lambda, seed);
		lc->generated = lc->accepted = lc->rejected_ingress = 0;
		lc->lat_n = 0;
		lc->lat_sum_ns = 0;
		lc->dispatched_tasks = 0;
		lc->now_vt = 0;
		lc->clock_mvt = 0;
		lc->transit.n = 0;
		lc->hand_head = lc->hand_tail = 0;
		lc->xhop_out = 0;
		lc->wh_cur = lc->wh_n = lc->booked_tasks = 0; /* drained by nl_dp_drain_ctl() */
		memset(lc->wh_head, 0xff, sizeof(lc->wh_head));
		memset(lc->pend, 0, sizeof(lc->pend));
		memset(lc->lat_hist, 0, sizeof(lc->lat_hist));
	}
	dp->lambda = lambda;
	dp->bg = nl_model_bg_of(&dp->m, dp->lc[0].src.bg_seed, dp->o.emulate);
	dp->completed = dp->failed = 0;
	dp->n_resp = 0;
	dp->sum_hops = dp->sum_wait = 0;
	dp->fin_q.n = 0;
	dp->gen_done = 0;
	dp->run_quit = 0;
	dp->last_publish_vt = 0;
	nl_dp_kick_ctl(dp); /* every manager polled once (the measuring one keeps itself marked) */
	dp->tsc0 = rte_rdtsc();
}

void
nl_dp_kick_ctl(struct nl_dp *dp)
{
	for (uint32_t i = 0; i < dp->n_mgr; i++)
		nl_dp_mgr_mark(&dp->mgr[i]);
}

int
nl_dp_launch_ctl(struct nl_dp *dp)
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

