/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine ops for the seed 002 dispatch model in virtual time (see nl_dsim.h).
 *
 * Events per task: one arrival, then per manager visited an ARRIVE (join the FIFO queue:
 * start = max(now, busy_until), done = start + service) and a DECIDE (at done, the policy
 * acts), and one DONE when the last sub-task finishes.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "nl_dsim.h"
#include "nl_evq.h"
#include "nl_policy.h"
#include "nl_rng.h"

enum {
	EV_GEN = 0,  /* next Poisson arrival */
	EV_ARRIVE,   /* task ptr arrives at manager arg */
	EV_DECIDE,   /* manager arg finished serving task ptr */
	EV_DONE,     /* a task's last sub-task finished */
	EV_MEASURE,  /* periodic load measurement (2LSC global) */
};

#define POOL_CHUNK 4096u

struct dsim {
	const struct nl_model_cfg *m;
	const struct nl_machine *mach;
	struct nl_sched *s;
	struct nl_engine eng;
	struct nl_evq q;
	struct nl_rng rng_task;  /* arrivals, vectors, work: same for every variant */
	struct nl_rng rng_entry; /* where tasks appear */
	uint64_t bg_seed;
	double lambda;
	double now;
	struct nl_mach_load *load;
	double *mgr_busy_until;
	double *mgr_busy_total;
	uint32_t *mgr_qlen;
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
	push(d, now + d->m->transfer_delay_vt, EV_ARRIVE, to, t);
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

static void
eng_dispatch(void *ctx, struct nl_task *t, const uint32_t *mach, unsigned int n, double now)
{
	struct dsim *d = ctx;
	double arrive = now + d->m->dispatch_delay_vt, done = arrive;
	double sub_instr = t->instr / t->n_split, sub_bits = t->data_bits / t->n_split;

	for (unsigned int j = 0; j < n; j++) {
		struct nl_mach_load *ld = &d->load[mach[j]];
		const struct nl_machine *p = &d->mach[mach[j]];
		double start = ld->busy_until_vt > arrive ? ld->busy_until_vt : arrive;
		double bg = nl_mach_bg_factor(d->m->bg_load_max, d->m->bg_period_vt, d->bg_seed,
					      mach[j], start);
		double fin = start + sub_instr / (p->speed_ips * bg) +
			     sub_bits / p->link_bps;

		ld->busy_until_vt = fin;
		if (fin > done)
			done = fin;
	}
	record(d, t, done - t->t_arrive_vt);
	push(d, done, EV_DONE, 0, NULL);
	task_free(d, t);
}

static void
eng_reject(void *ctx, struct nl_task *t, enum nl_reject_reason why, double now)
{
	struct dsim *d = ctx;

	(void)why;
	account_area(d, now);
	d->rejected++;
	d->in_system--;
	task_free(d, t);
}

static const struct nl_mach_load *
eng_load(void *ctx, uint32_t mgr, double now)
{
	(void)mgr;
	(void)now;
	return ((struct dsim *)ctx)->load;
}

static unsigned int
eng_queue_len(void *ctx, uint32_t mgr)
{
	return ((struct dsim *)ctx)->mgr_qlen[mgr];
}

static const struct nl_engine_ops dsim_ops = {
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
	double start = d->mgr_busy_until[mgr] > d->now ? d->mgr_busy_until[mgr] : d->now;
	double svc = d->s->ops->service_vt(d->s, mgr, t);

	t->at_mgr = mgr;
	t->sched_wait_vt += start - d->now;
	d->mgr_busy_until[mgr] = start + svc;
	d->mgr_busy_total[mgr] += svc;
	d->mgr_qlen[mgr]++;
	push(d, start + svc, EV_DECIDE, mgr, t);
}

static void
on_gen(struct dsim *d)
{
	const struct nl_model_cfg *m = d->m;
	struct nl_task *t;
	uint64_t need = 0;

	if (d->now >= m->horizon_vt)
		return;
	push(d, d->now + nl_rng_exp(&d->rng_task, 1.0 / d->lambda), EV_GEN, 0, NULL);
	t = task_alloc(d);
	if (t == NULL) {
		d->err = -ENOMEM;
		return;
	}
	if (m->need_prob == 0.5) {
		need = nl_rng_u64(&d->rng_task) & nl_res_mask(m->n_res);
	} else {
		for (unsigned int k = 0; k < m->n_res; k++)
			if (nl_rng_unif(&d->rng_task) <= m->need_prob)
				need |= UINT64_C(1) << k;
	}
	memset(t, 0, sizeof(*t));
	t->id = d->next_id++;
	t->need = need;
	t->n_split = (uint16_t)m->n_split;
	if (m->work_dist == NL_WORK_EXP) {
		t->instr = nl_rng_exp(&d->rng_task, m->instr);
		t->data_bits = m->data_bits > 0 ? nl_rng_exp(&d->rng_task, m->data_bits) : 0;
	} else {
		t->instr = m->instr;
		t->data_bits = m->data_bits;
	}
	t->t_arrive_vt = d->now;
	account_area(d, d->now);
	d->generated++;
	d->in_system++;
	if (d->now >= m->warmup_vt)
		d->arrivals_window++;
	if (d->in_system > m->max_in_system)
		d->over = true;
	on_arrive(d, d->s->ops->entry(d->s, t, nl_rng_u64(&d->rng_entry)), t);
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
	nl_sched_free(d->s);
	nl_evq_fini(&d->q);
	for (unsigned int i = 0; i < d->n_chunk; i++)
		free(d->chunk[i]);
	free(d->chunk);
	free(d->free_list);
	free(d->load);
	free(d->mgr_busy_until);
	free(d->mgr_busy_total);
	free(d->mgr_qlen);
	free(d->resp);
}

int
nl_dsim_run(const struct nl_model_cfg *m, const struct nl_machine *mach,
	    const struct nl_variant *v, double load_pct, uint64_t seed, struct nl_dsim_result *r)
{
	struct dsim d = { .m = m, .mach = mach };
	struct nl_sched_params sp = m->sp;
	struct nl_ev ev;
	uint64_t x = seed;
	int rc;

	memset(r, 0, sizeof(*r));
	sp.n_groups = v->n_groups;
	sp.static_known = v->static_known;
	rc = nl_sched_create(&d.s, nl_policy_of(v->scheme), &sp, mach, m->n_mach);
	if (rc != 0)
		return rc;
	d.eng.ops = &dsim_ops;
	d.eng.ctx = &d;
	nl_rng_seed(&d.rng_task, nl_splitmix64(&x));
	nl_rng_seed(&d.rng_entry, nl_splitmix64(&x));
	d.bg_seed = nl_splitmix64(&x);
	d.lambda = nl_model_arrival_rate(m, load_pct);
	d.load = calloc(m->n_mach, sizeof(*d.load));
	d.mgr_busy_until = calloc(d.s->n_mgr, sizeof(double));
	d.mgr_busy_total = calloc(d.s->n_mgr, sizeof(double));
	d.mgr_qlen = calloc(d.s->n_mgr, sizeof(uint32_t));
	if (nl_evq_init(&d.q, 1024) != 0 || d.load == NULL || d.mgr_busy_until == NULL ||
	    d.mgr_busy_total == NULL || d.mgr_qlen == NULL || d.lambda <= 0) {
		rc = d.lambda <= 0 ? -EINVAL : -ENOMEM;
		dsim_free(&d);
		return rc;
	}
	push(&d, nl_rng_exp(&d.rng_task, 1.0 / d.lambda), EV_GEN, 0, NULL);
	if (d.s->ops->measure != NULL && sp.measure_period_vt > 0)
		push(&d, 0, EV_MEASURE, 0, NULL);

	while (d.err == 0 && !d.over && nl_evq_pop_st(&d.q, &ev)) {
		if (ev.t_vt > 2 * m->horizon_vt)
			break;
		d.now = ev.t_vt;
		r->events++;
		switch (ev.kind) {
		case EV_GEN:
			on_gen(&d);
			break;
		case EV_ARRIVE:
			on_arrive(&d, ev.arg, ev.ptr);
			break;
		case EV_DECIDE:
			d.mgr_qlen[ev.arg]--;
			d.s->ops->decide(d.s, ev.arg, ev.ptr, d.now, &d.eng);
			break;
		case EV_DONE:
			account_area(&d, d.now);
			d.completed++;
			d.in_system--;
			break;
		case EV_MEASURE:
			d.s->ops->measure(d.s, d.now, &d.eng);
			/* measure only while tasks are still generated */
			if (d.now + sp.measure_period_vt < m->horizon_vt)
				push(&d, d.now + sp.measure_period_vt, EV_MEASURE, 0, NULL);
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
	uint32_t gm = v->scheme == NL_SCHEME_2LSC ? nl_2lsc_global_mgr(d.s) : 0;

	for (uint32_t i = 0; i < d.s->n_mgr; i++)
		if (d.mgr_busy_total[i] / m->horizon_vt > maxu)
			maxu = d.mgr_busy_total[i] / m->horizon_vt;
	r->generated = d.generated;
	r->completed = d.completed;
	r->rejected = d.rejected;
	r->unfinished = d.in_system;
	r->measured = d.n_resp;
	r->global_util = d.mgr_busy_total[gm] / m->horizon_vt;
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
