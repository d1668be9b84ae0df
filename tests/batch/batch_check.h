/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Independent bookkeeping of a batch run from the engine's event hook: checks invariants
 * I1-I5 of nl_batch.h with its own counters (running CPUs, held CPUs per reserving job,
 * active reservations per queue) rather than trusting the engine's.
 */
#ifndef BATCH_CHECK_H
#define BATCH_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_batch.h"

struct chk {
	const struct nl_batch_sys *sys;
	const struct nl_batch_scenario *sc;
	const struct nl_batch_job *j;
	size_t n;
	uint64_t running; /* CPUs of running jobs */
	uint64_t held;    /* CPUs held, all reservations */
	uint32_t *held_of;
	unsigned char *st; /* 0 waiting, 1 running, 2 done */
	bool *resv;
	size_t *flag_for;
	unsigned int active[NL_BATCH_MAX_QUEUES];
	double last_t;
	unsigned long errors;
	char first[256];
};

static void
chk_fail(struct chk *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#include <stdarg.h>

static void
chk_fail(struct chk *c, const char *fmt, ...)
{
	va_list ap;

	if (c->errors++ == 0) {
		va_start(ap, fmt);
		vsnprintf(c->first, sizeof(c->first), fmt, ap);
		va_end(ap);
	}
}

static void
chk_init(struct chk *c, const struct nl_batch_sys *sys, const struct nl_batch_scenario *sc,
	 const struct nl_batch_job *j, size_t n)
{
	memset(c, 0, sizeof(*c));
	c->sys = sys;
	c->sc = sc;
	c->j = j;
	c->n = n;
	c->held_of = calloc(n + 1, sizeof(*c->held_of));
	c->st = calloc(n + 1, 1);
	c->resv = calloc(n + 1, sizeof(bool));
	c->flag_for = malloc((n + 1) * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		c->flag_for[i] = (size_t)-1;
	c->last_t = -INFINITY;
}

static void
chk_fini(struct chk *c)
{
	free(c->held_of);
	free(c->st);
	free(c->resv);
	free(c->flag_for);
}

static void
chk_on_ev(void *arg, const struct nl_batch_ev *e)
{
	struct chk *c = arg;
	bool is_job = e->kind != NL_BATCH_EV_ADMIT && e->kind != NL_BATCH_EV_WINDOW;
	const struct nl_batch_job *jb = is_job ? &c->j[e->job] : c->j;
	uint32_t P = c->sys->cpus;

	if (e->t_s < c->last_t)
		chk_fail(c, "time goes back %g < %g", e->t_s, c->last_t);
	c->last_t = e->t_s;
	switch (e->kind) {
	case NL_BATCH_EV_ADMIT:
	case NL_BATCH_EV_WINDOW:
		break; /* advance reservations: checked by test_rsv.c */
	case NL_BATCH_EV_PREEMPT:
		if (c->st[e->job] != 1)
			chk_fail(c, "job %zu preempted without running", e->job);
		c->st[e->job] = 0;
		c->running -= jb->cpus;
		break;
	case NL_BATCH_EV_START:
		if (c->st[e->job] != 0)
			chk_fail(c, "job %zu starts twice", e->job);
		c->st[e->job] = 1;
		if (e->t_s < jb->submit_s)
			chk_fail(c, "I2: job %zu starts %g before submit %g", e->job, e->t_s,
				 jb->submit_s);
		if (!c->resv[e->job] && e->held_used != 0)
			chk_fail(c, "I3: job %zu without reservation used %u held CPUs", e->job,
				 e->held_used);
		if (e->held_used > c->held_of[e->job])
			chk_fail(c, "I3: job %zu used %u held CPUs, held %u", e->job, e->held_used,
				 c->held_of[e->job]);
		if (c->resv[e->job]) {
			/* the rest of its pool goes back to the free pool */
			c->held -= c->held_of[e->job];
			c->held_of[e->job] = 0;
			c->resv[e->job] = false;
			c->active[jb->queue]--;
			for (size_t i = 0; i < c->n; i++)
				if (c->flag_for[i] == e->job)
					c->flag_for[i] = (size_t)-1;
		}
		c->running += e->cpus;
		break;
	case NL_BATCH_EV_END:
		if (c->st[e->job] != 1)
			chk_fail(c, "I2: job %zu ends without running", e->job);
		c->st[e->job] = 2;
		if ((e->other >= 0) != (c->flag_for[e->job] != (size_t)-1) ||
		    (e->other >= 0 && (size_t)e->other != c->flag_for[e->job]))
			chk_fail(c, "job %zu ends flagged for %ld, expected %ld", e->job, e->other,
				 (long)c->flag_for[e->job]);
		c->flag_for[e->job] = (size_t)-1;
		if (fabs(e->t_s - (jb->start_s + jb->run_s)) > 1e-6)
			chk_fail(c, "I2: job %zu ends at %g, not start + run", e->job, e->t_s);
		c->running -= e->cpus;
		break;
	case NL_BATCH_EV_HOLD:
		if (!c->resv[e->job])
			chk_fail(c, "hold for job %zu without reservation", e->job);
		c->held_of[e->job] += e->cpus;
		c->held += e->cpus;
		if (c->held_of[e->job] > jb->cpus)
			chk_fail(c, "job %zu holds %u > its %u CPUs (surplus not released)", e->job,
				 c->held_of[e->job], jb->cpus);
		break;
	case NL_BATCH_EV_FLAG:
		if (c->st[e->other] != 1 || c->flag_for[e->other] != (size_t)-1)
			chk_fail(c, "flagged job %ld not running or flagged twice", e->other);
		c->flag_for[e->other] = e->job;
		break;
	case NL_BATCH_EV_RESV:
		if (c->resv[e->job] || c->st[e->job] != 0)
			chk_fail(c, "reservation for job %zu twice or not waiting", e->job);
		c->resv[e->job] = true;
		c->held_of[e->job] += e->held_used; /* taken from the free pool at once */
		c->held += e->held_used;
		if (++c->active[jb->queue] > c->sc->resv_max[jb->queue])
			chk_fail(c, "I5: queue %d has %u reservations > %u", jb->queue,
				 c->active[jb->queue], c->sc->resv_max[jb->queue]);
		break;
	}
	if (c->running + c->held + e->free_cpus != P)
		chk_fail(c, "I1: at %g running %llu + held %llu + free %u != P %u (event %d job %zu)",
			 e->t_s, (unsigned long long)c->running, (unsigned long long)c->held,
			 e->free_cpus, P, (int)e->kind, e->job);
	if (c->held != e->held_cpus)
		chk_fail(c, "held CPUs: ours %llu, engine %u", (unsigned long long)c->held,
			 e->held_cpus);
	if (c->running > P)
		chk_fail(c, "I1: %llu CPUs in use > P %u", (unsigned long long)c->running, P);
}

/* After the run: every runnable job ran exactly once; I4 for EASY / conservative. */
static void
chk_done(struct chk *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct nl_batch_job *jb = &c->j[i];

		if (jb->queue < 0)
			continue;
		if (c->st[i] != 2)
			chk_fail(c, "job %zu never finished (state %d)", i, c->st[i]);
		if ((c->sc->policy == NL_BATCH_EASY || c->sc->policy == NL_BATCH_CONSERVATIVE) &&
		    jb->resv_s >= 0 && jb->start_s > jb->resv_s + 1e-6)
			chk_fail(c, "I4: job %zu starts %g after its reservation %g", i, jb->start_s,
				 jb->resv_s);
	}
	if (c->running != 0 || c->held != 0)
		chk_fail(c, "at the end running %llu held %llu", (unsigned long long)c->running,
			 (unsigned long long)c->held);
}

/* A rigid job with one process per CPU, no queue preference. */
static inline struct nl_batch_job
chk_job(double submit_s, double run_s, double est_s, uint32_t cpus)
{
	struct nl_batch_job j;

	memset(&j, 0, sizeof(j));
	j.submit_s = submit_s;
	j.run_s = run_s;
	j.est_s = est_s;
	j.cpus = cpus;
	j.procs = cpus;
	j.threads = 1;
	j.user_queue = -1;
	return j;
}

/* A machine of P CPUs with one queue "q" that accepts every job. */
static inline void
chk_one_queue(struct nl_batch_sys *s, uint32_t P)
{
	memset(s, 0, sizeof(*s));
	s->cpus = P;
	s->n_q = 1;
	snprintf(s->q[0].name, sizeof(s->q[0].name), "q");
	s->q[0].cpu_max = P;
	s->q[0].proc_max = P;
	s->q[0].thread_max = P;
	s->q[0].overtake_cpus_max = UINT32_MAX;
}

#endif /* BATCH_CHECK_H */
