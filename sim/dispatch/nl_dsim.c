/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine ops for the seed 002 dispatch model in virtual time (see nl_dsim.h). The model
 * itself (task stream, manager FIFO, sub-task service, completion) is managers/nl_model.h,
 * the same code the live appliance runs; this file only turns it into events.
 *
 * Events per task: one arrival, then per manager visited an ARRIVE (nl_model_mgr_admit())
 * and a DECIDE (at the end of service, the policy acts), and one SUB_DONE per sub-task; the
 * task completes with its last one (nl_model_task_sub_done()).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "nl_dsim.h"
#include "nl_evq.h"
#include "nl_match.h"
#include "nl_model.h"
#include "nl_policy.h"

enum {
	EV_GEN = 0,  /* next Poisson arrival */
	EV_ARRIVE,   /* task ptr arrives at manager arg */
	EV_DECIDE,   /* manager arg finished serving task ptr */
	EV_SUB_DONE, /* a sub-task of task ptr finished on machine arg */
	EV_MEASURE,  /* the policy's periodic load measurement */
};

#define POOL_CHUNK 4096u

struct dsim {
	const struct nl_model_cfg *m;
	uint8_t *part;       /* [n_mgr] appliance of each manager (split), or NULL */
	uint8_t *mach_part;  /* [n_mach] appliance of each machine (split) */
	uint32_t *home;      /* [n_mach] the manager that dispatches to it (split) */
	struct nl_mach_load *sum_load; /* [n_mach] load as last summarised (split, gossip) */
	struct nl_mach_load *view;     /* [n_mach] the top manager's: own part exact, others summarised */
	double sum_vt;       /* when sum_load was taken; < 0 = never */
	uint32_t cur_mgr;    /* manager deciding now */
	const struct nl_machine *mach;
	struct nl_sched *s;
	struct nl_engine eng;
	const struct nl_model_trace *trace;
	struct nl_evq q;
	struct nl_model_src src; /* tasks: same stream for every variant and engine */
	struct nl_model_bg bg;
	double now;
	struct nl_mach_load *load;
	struct nl_model_mgr *mgr;
	uint32_t *mgr_qlen;
	uint64_t load_gen;     /* bookings so far (eng_load_gen) */
	/* task pool: a free list over chunks */
	struct nl_task **chunk;
	unsigned int n_chunk;
	struct nl_task **free_list;
	size_t n_free, cap_free;
	uint64_t next_id;
	/* statistics */
	double *resp;
	size_t n_resp, cap_resp;
	double sum_hops, sum_sched_wait;
	uint64_t generated, completed, rejected, in_system, arrivals_window;
	uint64_t admitted;   /* admissions so far: the low bits of decision keys (on_arrive) */
	uint64_t matched, matched_rejected;
	double area, last_t;
	bool over;
	int err;
};

static struct nl_task *
task_alloc(struct dsim *d)
{
	if (d->n_free == 0) {
		struct nl_task *c = aligned_alloc(64, POOL_CHUNK * sizeof(struct nl_task));
		struct nl_task **ca = realloc(d->chunk, (d->n_chunk + 1) * sizeof(*ca));
		struct nl_task **fl;

		if (c == NULL || ca == NULL) {
			free(c);
			if (ca != NULL)
				d->chunk = ca;
			return NULL;
		}
		d->chunk = ca;
		d->chunk[d->n_chunk++] = c;
		if (d->cap_free < d->n_chunk * POOL_CHUNK) {
			fl = realloc(d->free_list, d->n_chunk * POOL_CHUNK * sizeof(*fl));
			if (fl == NULL)
				return NULL;
			d->free_list = fl;
			d->cap_free = d->n_chunk * POOL_CHUNK;
		}
		for (unsigned int i = 0; i < POOL_CHUNK; i++)
			d->free_list[d->n_free++] = &c[POOL_CHUNK - 1 - i];
	}
	return d->free_list[--d->n_free];
}

static void
task_free(struct dsim *d, struct nl_task *t)
{
	d->free_list[d->n_free++] = t;
}

/* Time integral of tasks in the system over the measurement window (Little's law). */
static void
account_area(struct dsim *d, double t)
{
	double a = d->last_t, b = t;

	if (a < d->m->warmup_vt)
		a = d->m->warmup_vt;
	if (b > d->m->horizon_vt)
		b = d->m->horizon_vt;
	if (b > a)
		d->area += (double)d->in_system * (b - a);
	d->last_t = t;
}

/* Decision keys: manager id from this bit up (ids < 2^27), the admission count below it
 * (modulo 2^36, ~7e10: a run admits far fewer). */
#define DSIM_KEY_MGR_SHIFT 36

static void
push(struct dsim *d, double t, uint32_t kind, uint32_t arg, void *ptr)
{
	if (nl_evq_push_st(&d->q, t, kind, arg, ptr) != 0)
		d->err = -ENOMEM;
}

/* --- engine ops --- */

static void
eng_forward(void *ctx, struct nl_task *t, uint32_t to, double now)
{
	struct dsim *d = ctx;

	t->hops++;
	push(d, now + nl_model_hop_vt(d->m, d->part, d->cur_mgr, to), EV_ARRIVE, to, t);
}

static void
record(struct dsim *d, const struct nl_task *t, double resp)
{
	if (t->t_arrive_vt < d->m->warmup_vt || t->t_arrive_vt >= d->m->horizon_vt)
		return;
	if (d->n_resp == d->cap_resp) {
		size_t cap = d->cap_resp ? 2 * d->cap_resp : 4096;
		double *r = realloc(d->resp, cap * sizeof(*r));

		if (r == NULL) {
			d->err = -ENOMEM;
			return;
		}
		d->resp = r;
		d->cap_resp = cap;
	}
	d->resp[d->n_resp++] = resp;
	d->sum_hops += t->hops;
	d->sum_sched_wait += t->sched_wait_vt;
}

/* nl_task.flags bit of this engine: placed on another part by summaries once (split) */
#define DSIM_PLACED (1u << 20)

static void
eng_dispatch(void *ctx, struct nl_task *t, const uint32_t *mach, unsigned int n, double now)
{
	struct dsim *d = ctx;
	double arrive = now + d->m->dispatch_delay_vt;

	/* A split tree: a decision that picked machines of one other part only (on its
	 * summary) hands the task, once, to the manager that dispatches to the first of them
	 * there, as the live appliance does (docs/scale-out.md "Summaries"). */
	if (d->part != NULL && n > 0 && d->part[d->cur_mgr] != d->mach_part[mach[0]] &&
	    !(t->flags & DSIM_PLACED)) {
		unsigned int j = 1;

		while (j < n && d->mach_part[mach[j]] == d->mach_part[mach[0]])
			j++;
		if (j == n) {
			t->flags |= DSIM_PLACED;
			eng_forward(d, t, d->home[mach[0]], now);
			return;
		}
	}

	if (d->trace != NULL && d->trace->dispatch != NULL)
		d->trace->dispatch(d->trace->arg, t, mach, n, now);
	nl_model_task_subs_set(t, n);
	d->load_gen++; /* one table for every manager: each booking is news to the others */
	for (unsigned int j = 0; j < n; j++) {
		struct nl_mach_load *ld = &d->load[mach[j]];
		double start = ld->busy_until_vt > arrive ? ld->busy_until_vt : arrive;

		ld->busy_until_vt = start + nl_model_sub_vt(&d->bg, &d->mach[mach[j]], mach[j], t,
							    start);
		push(d, ld->busy_until_vt, EV_SUB_DONE, mach[j], t);
	}
}

static void
on_sub_done(struct dsim *d, struct nl_task *t)
{
	if (!nl_model_task_sub_done(t))
		return;
	account_area(d, d->now);
	d->completed++;
	d->in_system--;
	record(d, t, d->now - t->t_arrive_vt);
	task_free(d, t);
}

static void
eng_reject(void *ctx, struct nl_task *t, enum nl_reject_reason why, double now)
{
	struct dsim *d = ctx;

	if (d->trace != NULL && d->trace->reject != NULL)
		d->trace->reject(d->trace->arg, t, why, now);
	d->matched_rejected += why == NL_REJECT_NO_MACHINE && nl_match_handle(t) != 0;
	account_area(d, now);
	d->rejected++;
	d->in_system--;
	task_free(d, t);
}

static const struct nl_mach_load *
eng_load(void *ctx, uint32_t mgr, double now)
{
	struct dsim *d = ctx;

	/* A split tree with summaries modelled: the top manager reads the machines of other
	 * parts as summarised at the last gossip period (at most summary_period_vt old). */
	if (d->view == NULL || mgr != d->s->ops->top_mgr(d->s))
		return d->load;
	if (d->sum_vt < 0 || now >= d->sum_vt + d->m->summary_period_vt) {
		d->sum_vt = d->sum_vt < 0 ? now :
			    d->sum_vt + d->m->summary_period_vt *
				    floor((now - d->sum_vt) / d->m->summary_period_vt);
		memcpy(d->sum_load, d->load, d->m->n_mach * sizeof(*d->load));
	}
	for (uint32_t m = 0; m < d->m->n_mach; m++)
		d->view[m] = d->mach_part[m] == d->part[mgr] ? d->load[m] : d->sum_load[m];
	return d->view;
}

static unsigned int
eng_queue_len(void *ctx, uint32_t mgr)
{
	return ((struct dsim *)ctx)->mgr_qlen[mgr];
}

static uint64_t
eng_load_gen(void *ctx, uint32_t mgr)
{
	(void)mgr;
	return ((struct dsim *)ctx)->load_gen;
}

static const struct nl_engine_ops dsim_ops = {
	.forward = eng_forward,
	.dispatch = eng_dispatch,
	.reject = eng_reject,
	.load = eng_load,
	.queue_len = eng_queue_len,
	.load_gen = eng_load_gen,
};

/* m->pick_scan: the same engine without load_gen, so policies scan on every pick. */
static const struct nl_engine_ops dsim_ops_scan = {
	.forward = eng_forward,
	.dispatch = eng_dispatch,
	.reject = eng_reject,
	.load = eng_load,
	.queue_len = eng_queue_len,
};

/* --- events --- */

static void
on_arrive(struct dsim *d, uint32_t mgr, struct nl_task *t)
{
	d->mgr_qlen[mgr]++;
	/* Decisions that end at one instant are taken in manager id order, after the instant's
	 * other events (nl_model.h I4); one manager's in the order it admitted them (a manager
	 * of service time 0 ends several at one instant): the key's high bits are the manager,
	 * its low bits the admission count, so equal keys never occur. */
	uint64_t key = NL_EVQ_KEY_LATE | ((uint64_t)mgr << DSIM_KEY_MGR_SHIFT) |
		       (d->admitted++ & ((UINT64_C(1) << DSIM_KEY_MGR_SHIFT) - 1));

	if (nl_evq_push_key_st(&d->q, nl_model_mgr_admit(&d->mgr[mgr], d->s, mgr, t, d->now),
			       key, EV_DECIDE, mgr, t) != 0)
		d->err = -ENOMEM;
}

static void
on_gen(struct dsim *d)
{
	const struct nl_model_cfg *m = d->m;
	struct nl_task *t;
	uint64_t rnd;

	if (d->now >= m->horizon_vt)
		return;
	t = task_alloc(d);
	if (t == NULL) {
		d->err = -ENOMEM;
		return;
	}
	nl_model_src_draw(&d->src, m, t, &rnd);
	t->aux = nl_model_task_class(m, &d->src, t); /* its match handle (nl_match_model.h) */
	d->matched += t->aux != 0;
	push(d, d->src.next_vt, EV_GEN, 0, NULL);
	account_area(d, d->now);
	d->generated++;
	d->in_system++;
	if (d->now >= m->warmup_vt)
		d->arrivals_window++;
	if (d->in_system > m->max_in_system)
		d->over = true;
	on_arrive(d, d->s->ops->entry(d->s, t, rnd), t);
}

static double
quickselect(double *a, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;

	while (lo < hi) {
		double pivot = a[lo + (hi - lo) / 2];
		ptrdiff_t i = lo, j = hi;

		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				double tmp = a[i];

				a[i++] = a[j];
				a[j--] = tmp;
			}
		}
		if (kk <= j)
			hi = j;
		else if (kk >= i)
			lo = i;
		else
			break;
	}
	return a[k];
}

static void
dsim_free(struct dsim *d)
{
	free(d->part);
	free(d->mach_part);
	free(d->home);
	free(d->sum_load);
	free(d->view);
	nl_sched_free(d->s);
	nl_evq_fini(&d->q);
	for (unsigned int i = 0; i < d->n_chunk; i++)
		free(d->chunk[i]);
	free(d->chunk);
	free(d->free_list);
	free(d->load);
	free(d->mgr);
	free(d->mgr_qlen);
	free(d->resp);
}

int
nl_dsim_run(const struct nl_model_cfg *m, const struct nl_machine *mach,
	    const struct nl_variant *v, double load_pct, uint64_t seed, struct nl_dsim_result *r)
{
	struct nl_sched_params sp = m->sp;

	sp.n_groups = v->n_groups;
	sp.static_known = v->static_known;
	return nl_dsim_run_ops(m, mach, nl_policy_of(v->scheme), &sp, load_pct, seed, NULL, r);
}

int
nl_dsim_run_ops(const struct nl_model_cfg *m, const struct nl_machine *mach,
		const struct nl_policy_ops *ops, const struct nl_sched_params *sp, double load_pct,
		uint64_t seed, const struct nl_model_trace *trace, struct nl_dsim_result *r)
{
	struct dsim d = { .m = m, .mach = mach, .trace = trace };
	double lambda = nl_model_arrival_rate(m, load_pct);
	struct nl_ev ev;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!(lambda > 0))
		return -EINVAL;
	if (m->n_tclass > 0 && (__atomic_load_n(&nl_match_src.tab, __ATOMIC_ACQUIRE) == NULL ||
				nl_match_src.n_aux <= m->n_tclass))
		return -EINVAL; /* task classes without their table (nl_match_model_bind()) */
	rc = nl_sched_create(&d.s, ops, sp, mach, m->n_mach);
	if (rc != 0)
		return rc;
	if (m->n_cut > 0) { /* a split tree: extra delay on the cut edges */
		d.part = calloc(d.s->n_mgr, 1);
		d.mach_part = calloc(m->n_mach, 1);
		d.home = calloc(m->n_mach, sizeof(*d.home));
		if (d.part == NULL || d.mach_part == NULL || d.home == NULL) {
			dsim_free(&d);
			return -ENOMEM;
		}
		nl_model_split_parts(m, d.s, d.part);
		nl_model_split_mach_parts(d.s, d.part, d.mach_part, d.home);
		d.sum_vt = -1;
		if (m->summary_period_vt > 0) {
			d.sum_load = calloc(m->n_mach, sizeof(*d.sum_load));
			d.view = calloc(m->n_mach, sizeof(*d.view));
			if (d.sum_load == NULL || d.view == NULL) {
				dsim_free(&d);
				return -ENOMEM;
			}
		}
	}
	d.eng.ops = m->pick_scan ? &dsim_ops_scan : &dsim_ops;
	d.eng.ctx = &d;
	nl_model_src_init(&d.src, lambda, seed);
	d.bg = nl_model_bg_of(m, d.src.bg_seed, true);
	d.load = calloc(m->n_mach, sizeof(*d.load));
	d.mgr = calloc(d.s->n_mgr, sizeof(*d.mgr));
	d.mgr_qlen = calloc(d.s->n_mgr, sizeof(uint32_t));
	if (nl_evq_init(&d.q, 1024) != 0 || d.load == NULL || d.mgr == NULL ||
	    d.mgr_qlen == NULL) {
		dsim_free(&d);
		return -ENOMEM;
	}
	push(&d, d.src.next_vt, EV_GEN, 0, NULL);
	if (nl_sched_measure_mgr(d.s) != NL_NODE_NONE && sp->measure_period_vt > 0)
		push(&d, 0, EV_MEASURE, 0, NULL);

	double last_decide_vt = -INFINITY;

	while (d.err == 0 && !d.over && nl_evq_pop_st(&d.q, &ev)) {
		if (ev.t_vt > 2 * m->horizon_vt)
			break;
		d.now = ev.t_vt;
		if ((++r->events & 0xffff) == 0)
			__atomic_store_n(&r->progress_ppm, (uint64_t)(d.now / m->horizon_vt * 1e6),
					 __ATOMIC_RELAXED);
		switch (ev.kind) {
		case EV_GEN:
			on_gen(&d);
			break;
		case EV_ARRIVE:
			on_arrive(&d, ev.arg, ev.ptr);
			break;
		case EV_DECIDE:
			r->decide_ties += ev.t_vt == last_decide_vt;
			last_decide_vt = ev.t_vt;
			d.mgr_qlen[ev.arg]--;
			d.cur_mgr = ev.arg;
			d.s->ops->decide(d.s, ev.arg, ev.ptr, d.now, &d.eng);
			break;
		case EV_SUB_DONE:
			on_sub_done(&d, ev.ptr);
			break;
		case EV_MEASURE:
			d.s->ops->measure(d.s, d.now, &d.eng);
			/* measure only while tasks are still generated */
			if (d.now + sp->measure_period_vt < m->horizon_vt)
				push(&d, d.now + sp->measure_period_vt, EV_MEASURE, 0, NULL);
			break;
		}
	}
	if (d.err != 0) {
		rc = d.err;
		dsim_free(&d);
		return rc;
	}
	account_area(&d, m->horizon_vt);

	double win = m->horizon_vt - m->warmup_vt, maxu = 0;
	uint32_t gm = d.s->ops->top_mgr(d.s);

	for (uint32_t i = 0; i < d.s->n_mgr; i++)
		if (d.mgr[i].busy_vt / m->horizon_vt > maxu)
			maxu = d.mgr[i].busy_vt / m->horizon_vt;
	r->generated = d.generated;
	r->completed = d.completed;
	r->rejected = d.rejected;
	r->unfinished = d.in_system;
	r->matched = d.matched;
	r->matched_rejected = d.matched_rejected;
	r->measured = d.n_resp;
	r->global_util = d.mgr[gm].busy_vt / m->horizon_vt;
	r->max_mgr_util = maxu;
	r->in_system_mean = d.area / win;
	r->lambda_measured = (double)d.arrivals_window / win;
	r->saturated = d.over || d.in_system > 0 || maxu > 0.97;
	if (d.n_resp > 0) {
		double sum = 0;

		for (size_t i = 0; i < d.n_resp; i++)
			sum += d.resp[i];
		r->resp_mean_vt = sum / (double)d.n_resp;
		r->hops_mean = d.sum_hops / (double)d.n_resp;
		r->sched_wait_mean_vt = d.sum_sched_wait / (double)d.n_resp;
		r->resp_p99_vt = quickselect(d.resp, d.n_resp, (size_t)(0.99 * (double)(d.n_resp - 1)));
		r->resp_p95_vt = quickselect(d.resp, d.n_resp, (size_t)(0.95 * (double)(d.n_resp - 1)));
		r->resp_p50_vt = quickselect(d.resp, d.n_resp, (size_t)(0.50 * (double)(d.n_resp - 1)));
	}
	dsim_free(&d);
	return 0;
}
