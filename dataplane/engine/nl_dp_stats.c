/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Run statistics of the live engine: the end of every task (completed or failed, response
 * time), the counters telemetry and nlevel print, and the figures of a finished run.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_mempool.h>

#include "nl_dp_inline.h"

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

uint64_t
nl_dp_sum_lc(const struct nl_dp *dp, size_t off)
{
	uint64_t s = 0;

	for (unsigned int i = 0; i < dp->n_lc; i++)
		s += nl_atomic_load_relaxed((const uint64_t *)((const char *)&dp->lc[i] + off));
	return s;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void
nl_dp_point_stats_ctl(struct nl_dp *dp, struct nl_dp_point *pt)
{
	const struct nl_sched *s = dp->gen_rcu->s;
	uint32_t top = s->ops->top_mgr(s);
	double maxu = 0;

	pt->measured = dp->n_resp;
	for (uint32_t i = 0; i < dp->n_mgr; i++)
		if (dp->mgr[i].srv.busy_vt / dp->horizon_vt > maxu)
			maxu = dp->mgr[i].srv.busy_vt / dp->horizon_vt;
	pt->global_util = top < dp->n_mgr ? dp->mgr[top].srv.busy_vt / dp->horizon_vt : 0;
	pt->max_mgr_util = maxu;
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
}

unsigned int
nl_dp_mgr_lcores(const struct nl_dp *dp)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < dp->n_lc; i++)
		n += dp->lc[i].n_mgr > 0;
	return n;
}

void
nl_dp_native_stats_ctl(const struct nl_dp *dp, double wall_s, uint64_t unfinished,
		       struct nl_dp_native_result *r)
{
	uint64_t n_lat = 0, hist[64 * 8];
	double sum = 0;

	memset(hist, 0, sizeof(hist));
	for (unsigned int i = 0; i < dp->n_lc; i++) {
		n_lat += dp->lc[i].lat_n;
		sum += dp->lc[i].lat_sum_ns;
		for (unsigned int b = 0; b < 64 * 8; b++)
			hist[b] += dp->lc[i].lat_hist[b];
	}
	r->tasks = nl_dp_sum_lc(dp, offsetof(struct nl_dp_lcore, dispatched_tasks));
	r->generated = nl_dp_sum_lc(dp, offsetof(struct nl_dp_lcore, generated));
	r->accepted = nl_dp_sum_lc(dp, offsetof(struct nl_dp_lcore, accepted));
	/* docs/output.md: rejected = refused at ingress only; what failed after acceptance and
	 * what a stop left in flight are counted apart (dp->failed holds both after the drain) */
	r->rejected = nl_dp_sum_lc(dp, offsetof(struct nl_dp_lcore, rejected_ingress));
	r->unfinished = unfinished;
	r->failed = dp->failed - unfinished;
	r->xhops = nl_dp_sum_lc(dp, offsetof(struct nl_dp_lcore, xhop_out));
	r->wall_s = wall_s;
	r->rate_tps = wall_s > 0 ? (double)r->tasks / wall_s : 0;
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
}

void
nl_dp_counts_get(const struct nl_dp *dp, struct nl_dp_counts *c)
{
	memset(c, 0, sizeof(*c));
	c->accepted = nl_dp_sum_lc(dp, offsetof(struct nl_dp_lcore, accepted));
	c->rejected_ingress = nl_dp_sum_lc(dp, offsetof(struct nl_dp_lcore, rejected_ingress));
	c->accepted += nl_atomic_load_relaxed(&dp->io_accepted);
	c->rejected_ingress += nl_atomic_load_relaxed(&dp->io_rejected);
	c->completed = nl_atomic_load_relaxed(&dp->completed) +
		       nl_dp_sum_lc(dp, offsetof(struct nl_dp_lcore, dispatched_tasks));
	c->failed = nl_atomic_load_relaxed(&dp->failed);
	c->in_flight = rte_mempool_in_use_count(dp->pool);
	if (dp->ext != NULL && dp->o.ext->foreign_live != NULL) {
		/* hook up: task objects held for other appliances are not our tasks (I1) */
		uint64_t f = dp->o.ext->foreign_live(dp->ext);

		c->in_flight = c->in_flight > f ? c->in_flight - f : 0;
	}
	for (uint32_t i = 0; i < dp->n_mgr; i++)
		c->forwards += nl_atomic_load_relaxed(&dp->mgr[i].fwd_out);
	c->xhops = nl_dp_sum_lc(dp, offsetof(struct nl_dp_lcore, xhop_out));
}

bool
nl_dp_accounting_ok(const struct nl_dp *dp)
{
	struct nl_dp_counts c;

	nl_dp_counts_get(dp, &c);
	return c.accepted == c.completed + c.failed + c.in_flight;
}
