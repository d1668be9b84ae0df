/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batch engine (nl_batch.h): arrivals and ends from the simulator's event queue, one
 * scheduling pass per distinct event time, seed 000's connection reservation on top of
 * FirstFit. Worked example of a connection reservation (P = 16, R needs 10 CPUs):
 *   running A(8 CPUs), B(6), C(2); no running job has 10 CPUs, so no request-match job;
 *   max-space picks A (planned 8 < 10), then B (planned 14 >= 10): A and B are flagged.
 *   A ends first: R holds 8. B ends: R takes 2 more (held 10), the 4 surplus CPUs go back
 *   to the free pool at once, and R starts.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_batch.h"
#include "nl_evq.h"
#include "nl_plus.h"
#include "nl_rng.h"

#define NONE ((size_t)-1)
#define NO_NODE UINT32_MAX

/* EV_END carries the job's start count in arg: an end scheduled before a preemption is
 * stale and skipped. The EV_RSV_* events carry the request index in ptr. */
enum { EV_ARRIVE = 1, EV_END = 2, EV_RSV_REQ, EV_RSV_START, EV_RSV_END, EV_RSV_FORGET };
enum { ST_PENDING = 0, ST_WAITING, ST_RUNNING, ST_DONE };
enum { TRIG_PRIO = 0, TRIG_HEAD = 1, TRIG_NONWAIT = 2 };

/* A time of the conservative profile: s seconds plus k infinitesimal steps (pass_conservative()) */
struct inst {
	double s;
	uint64_t k;
};

struct eng {
	const struct nl_batch_sys *sys;
	const struct nl_batch_scenario *sc;
	struct nl_batch_job *j;
	size_t n;
	const struct nl_batch_hooks *hk;
	struct nl_batch_stats *st;
	struct nl_evq evq;
	double now;
	uint32_t free, held_total;
	/* waiting lists: one per queue, plus the global list (index n_q) for EASY/conservative */
	size_t *next, *prev;   /* per-queue lists */
	size_t *gnext, *gprev; /* global list, arrival order */
	size_t head[NL_BATCH_MAX_QUEUES + 1], tail[NL_BATCH_MAX_QUEUES + 1];
	size_t qlen[NL_BATCH_MAX_QUEUES + 1];
	/* running jobs sorted by (start + est, index) */
	size_t *run;
	size_t n_run;
	/* per job */
	uint8_t *state;
	bool *overtaker, *cand, *resv_active, *nonwait;
	size_t *flag_for;  /* running job: reserving job it is flagged for, or NONE */
	uint32_t *held;    /* reserving job: CPUs held so far */
	struct inst *slot; /* conservative: current reservation, seconds -1 = none yet */
	uint32_t ot_cpus[NL_BATCH_MAX_QUEUES];
	uint32_t active_resv[NL_BATCH_MAX_QUEUES];
	bool any_end;
	size_t *arrived;   /* arrivals of the current event time */
	size_t n_arrived;
	size_t *passed;    /* scratch: waiting jobs scanned in the current queue */
	size_t *ready;     /* reserving jobs that came to hold their need at this event time */
	size_t n_ready;
	/* conservative profile scratch */
	struct inst *pt;
	int64_t *pf;
	size_t pcap;
	uint32_t *run_gen;  /* per job: starts so far (stale EV_END detection) */
	/* advance reservations (nl_batch_run_rsv); all NULL without */
	const struct nl_batch_rsv *rsv;
	size_t *node_job;    /* [P] job running on the node, NONE = idle */
	uint32_t *node_next; /* [P] next node of the same job, NO_NODE = last */
	uint32_t *job_node;  /* [n] first node of a running job */
	double *nh;          /* [P] next hold start [trace s], INFINITY = none */
	bool *dirty;         /* [P] node record changed since the last sync to the manager */
	struct nl_plus_job *pj; /* [P] job records for the manager */
	struct pick { double nh; uint32_t k; } *pick; /* [P] scratch */
	/* which nodes a job may take, without scanning all P (node_note()): the idle nodes no
	 * window holds (nh = +inf) as a bitmap, every one eligible for any job; the idle nodes
	 * a window holds (nh finite) as a list, scanned by nodes_fit()/nodes_take() */
	uint64_t *free_inf;  /* [P/64] bit k: node k idle and nh[k] = +inf */
	uint32_t n_free_inf; /* its bits set */
	uint32_t *held_node; /* [P] the idle nodes with nh finite, in no order */
	uint32_t *held_pos;  /* [P] node k's index in held_node, else NO_NODE */
	uint32_t n_held_node;
	/* the same nodes counted per next hold (few distinct values: the windows' starts), so
	 * nodes_fit() counts the eligible ones in O(distinct holds) */
	double *hv;          /* [P] distinct nh of idle windowed nodes, ascending */
	uint32_t *hc;        /* [P] how many have that nh */
	uint32_t n_hv;
	double *held_nh;     /* [P] the nh node k is counted under in hv (while listed) */
	int64_t *hold_s;     /* [P] scratch: next holds from the manager */
	uint32_t *nodes;     /* [P] scratch for events */
	uint64_t *rsv_id;    /* [n_req] manager id of an accepted request */
};

static const char *const policy_names[] = { "fcfs", "firstfit", "easy", "conservative" };

const char *
nl_batch_policy_name(enum nl_batch_policy p)
{
	return (unsigned int)p < 4 ? policy_names[p] : "?";
}

bool
nl_batch_queue_accepts(const struct nl_batch_queue *q, const struct nl_batch_job *j)
{
	return j->cpus <= q->cpu_max && j->procs <= q->proc_max && j->threads <= q->thread_max &&
	       (q->walltime_max_s <= 0 || j->est_s <= q->walltime_max_s);
}

/* Strictness order of §3.1: negative when a is stricter than b. */
static int
stricter(const struct nl_batch_queue *a, const struct nl_batch_queue *b)
{
	double wa = a->walltime_max_s > 0 ? a->walltime_max_s : INFINITY;
	double wb = b->walltime_max_s > 0 ? b->walltime_max_s : INFINITY;

	if (a->cpu_max != b->cpu_max)
		return a->cpu_max < b->cpu_max ? -1 : 1;
	if (wa != wb)
		return wa < wb ? -1 : 1;
	if (a->thread_max != b->thread_max)
		return a->thread_max < b->thread_max ? -1 : 1;
	if (a->proc_max != b->proc_max)
		return a->proc_max < b->proc_max ? -1 : 1;
	return 0;
}

int
nl_batch_queue_auto(const struct nl_batch_sys *sys, const struct nl_batch_job *j)
{
	int best = -1;

	for (unsigned int i = 0; i < sys->n_q; i++) {
		if (!nl_batch_queue_accepts(&sys->q[i], j))
			continue;
		if (best < 0 || stricter(&sys->q[i], &sys->q[best]) < 0)
			best = (int)i;
	}
	return best;
}

double
nl_batch_prio_increment(const struct nl_batch_queue *q, const struct nl_batch_job *j)
{
	double x = ((double)j->threads / q->thread_max) * ((double)j->cpus / q->cpu_max);

	return x > 0 ? 1.0 / sqrt(x) : 0;
}

/* ---- observer ---- */

static void
emit_nodes(struct eng *e, enum nl_batch_ev_kind k, size_t job, long other, uint32_t cpus,
	   uint32_t held_used, const uint32_t *nodes)
{
	struct nl_batch_ev ev;

	if (e->hk == NULL || e->hk->on_ev == NULL)
		return;
	ev.nodes = nodes;
	ev.kind = k;
	ev.t_s = e->now;
	ev.job = job;
	ev.other = other;
	ev.cpus = cpus;
	ev.free_cpus = e->free;
	ev.held_cpus = e->held_total;
	ev.held_used = held_used;
	e->hk->on_ev(e->hk->arg, &ev);
}

static void
emit(struct eng *e, enum nl_batch_ev_kind k, size_t job, long other, uint32_t cpus,
     uint32_t held_used)
{
	emit_nodes(e, k, job, other, cpus, held_used, NULL);
}

/* ---- waiting lists ---- */

static void
list_push(struct eng *e, unsigned int l, size_t i)
{
	size_t *nx = l == e->sys->n_q ? e->gnext : e->next;
	size_t *pv = l == e->sys->n_q ? e->gprev : e->prev;

	nx[i] = NONE;
	pv[i] = e->tail[l];
	if (e->tail[l] != NONE)
		nx[e->tail[l]] = i;
	else
		e->head[l] = i;
	e->tail[l] = i;
	e->qlen[l]++;
}

/* Put a job back at its arrival position (a preempted job: jobs are indexed in arrival
 * order). Walks from the tail: the waiting lists are short beside the trace. */
static void
list_insert_sorted(struct eng *e, unsigned int l, size_t i)
{
	size_t *nx = l == e->sys->n_q ? e->gnext : e->next;
	size_t *pv = l == e->sys->n_q ? e->gprev : e->prev;
	size_t a = e->tail[l];

	while (a != NONE && a > i)
		a = pv[a];
	if (a == e->tail[l]) {
		list_push(e, l, i);
		return;
	}
	/* insert after a (NONE: at the head) */
	size_t b = a == NONE ? e->head[l] : nx[a];

	pv[i] = a;
	nx[i] = b;
	pv[b] = i;
	if (a == NONE)
		e->head[l] = i;
	else
		nx[a] = i;
	e->qlen[l]++;
}

static void
list_del(struct eng *e, unsigned int l, size_t i)
{
	size_t *nx = l == e->sys->n_q ? e->gnext : e->next;
	size_t *pv = l == e->sys->n_q ? e->gprev : e->prev;

	if (pv[i] != NONE)
		nx[pv[i]] = nx[i];
	else
		e->head[l] = nx[i];
	if (nx[i] != NONE)
		pv[nx[i]] = pv[i];
	else
		e->tail[l] = pv[i];
	e->qlen[l]--;
}

/* Per-queue lists are kept for FCFS/FirstFit; the global list (index n_q) always. */
static bool
per_queue(const struct eng *e)
{
	return e->sc->policy <= NL_BATCH_FIRSTFIT;
}

/* ---- running set, sorted by expected end ---- */

static inline bool
run_before(const struct eng *e, size_t a, size_t b)
{
	double ea = e->j[a].start_s + e->j[a].est_s, eb = e->j[b].start_s + e->j[b].est_s;

	return ea < eb || (ea == eb && a < b);
}

static void
run_insert(struct eng *e, size_t i)
{
	size_t lo = 0, hi = e->n_run;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (run_before(e, e->run[mid], i))
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&e->run[lo + 1], &e->run[lo], (e->n_run - lo) * sizeof(*e->run));
	e->run[lo] = i;
	e->n_run++;
}

static void
run_remove(struct eng *e, size_t i)
{
	size_t lo = 0, hi = e->n_run;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (run_before(e, e->run[mid], i))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo is i's position (keys are unique) */
	memmove(&e->run[lo], &e->run[lo + 1], (e->n_run - lo - 1) * sizeof(*e->run));
	e->n_run--;
}

/* ---- nodes (advance reservations only) ---- */

/* Node k may take a job of estimate est now: idle, and free of reservations until the
 * job's estimated end (nl_plus_node_next_hold(), cached in nh). */
static inline bool
node_ok(const struct eng *e, uint32_t k, double est_s)
{
	return e->node_job[k] == NONE && e->now + est_s <= e->nh[k];
}

/* One more (d = +1) or one less (d = -1) idle windowed node of next hold v in hv/hc. */
static void
hv_count(struct eng *e, double v, int d)
{
	uint32_t lo = 0, hi = e->n_hv;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (e->hv[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (d > 0 && (lo == e->n_hv || e->hv[lo] != v)) {
		memmove(&e->hv[lo + 1], &e->hv[lo], (e->n_hv - lo) * sizeof(*e->hv));
		memmove(&e->hc[lo + 1], &e->hc[lo], (e->n_hv - lo) * sizeof(*e->hc));
		e->hv[lo] = v;
		e->hc[lo] = 0;
		e->n_hv++;
	}
	e->hc[lo] += (uint32_t)d;
	if (e->hc[lo] == 0) {
		memmove(&e->hv[lo], &e->hv[lo + 1], (e->n_hv - lo - 1) * sizeof(*e->hv));
		memmove(&e->hc[lo], &e->hc[lo + 1], (e->n_hv - lo - 1) * sizeof(*e->hc));
		e->n_hv--;
	}
}

/* Node k's idle state or nh[k] changed: keep free_inf, the held list and hv/hc (struct eng). */
static void
node_note(struct eng *e, uint32_t k)
{
	uint64_t bit = UINT64_C(1) << (k % 64), *w = &e->free_inf[k / 64];
	bool idle = e->node_job[k] == NONE, inf = isinf(e->nh[k]), in = (*w & bit) != 0;
	bool want = idle && inf, held = idle && !inf;

	if (want != in) {
		*w ^= bit;
		e->n_free_inf += want ? 1 : (uint32_t)-1;
	}
	if (e->held_pos[k] != NO_NODE && (!held || e->held_nh[k] != e->nh[k]))
		hv_count(e, e->held_nh[k], -1);
	if (held && (e->held_pos[k] == NO_NODE || e->held_nh[k] != e->nh[k])) {
		hv_count(e, e->nh[k], +1);
		e->held_nh[k] = e->nh[k];
	}
	if (held && e->held_pos[k] == NO_NODE) {
		e->held_pos[k] = e->n_held_node;
		e->held_node[e->n_held_node++] = k;
	} else if (!held && e->held_pos[k] != NO_NODE) {
		uint32_t at = e->held_pos[k], last = e->held_node[--e->n_held_node];

		e->held_node[at] = last;
		e->held_pos[last] = at;
		e->held_pos[k] = NO_NODE;
	}
}

/* Whether job w may start now: at least its CPU count of nodes node_ok() (the idle nodes no
 * window holds, then the idle ones a window holds, counted per next hold from the latest).
 * O(distinct next holds), not O(P). */
static bool
nodes_fit(const struct eng *e, size_t w)
{
	const struct nl_batch_job *jw = &e->j[w];
	uint32_t got = e->n_free_inf;
	double t = e->now + jw->est_s; /* node_ok(): t <= nh */

	if (jw->cpus == 0 || got + e->n_held_node < jw->cpus)
		return false;
	for (uint32_t d = e->n_hv; d-- > 0 && got < jw->cpus && t <= e->hv[d];)
		got += e->hc[d];
	return got >= jw->cpus;
}

static int
cmp_pick(const void *a, const void *b)
{
	const struct pick *x = a, *y = b;

	if (x->nh != y->nh)
		return x->nh < y->nh ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

static int
cmp_pick_k(const void *a, const void *b)
{
	const struct pick *x = a, *y = b;

	return x->k < y->k ? -1 : x->k > y->k;
}

/* Append to e->pick[m..) the lowest-id idle nodes no window holds, up to `want` of them. */
static uint32_t
pick_free_inf(struct eng *e, uint32_t m, uint32_t want)
{
	uint32_t n_w = (e->sys->cpus + 63) / 64;

	for (uint32_t w = 0; w < n_w && want > 0; w++)
		for (uint64_t b = e->free_inf[w]; b != 0 && want > 0; b &= b - 1, want--)
			e->pick[m++] = (struct pick){ INFINITY, w * 64 + (uint32_t)__builtin_ctzll(b) };
	return m;
}

/* Give job i its nodes (nodes_fit() holds): the nearest next holds first, so the nodes no
 * reservation wants stay for long jobs; among equal holds (none: +inf) the lowest ids.
 * e->nodes[0..cpus) lists them in (next hold, id) order, or in id order when the job takes
 * every eligible node. */
static void
nodes_take(struct eng *e, size_t i)
{
	uint32_t m = 0, c = e->j[i].cpus;
	bool any_held = e->n_hv > 0 && e->now + e->j[i].est_s <= e->hv[e->n_hv - 1];

	for (uint32_t h = 0; any_held && h < e->n_held_node; h++) {
		uint32_t k = e->held_node[h];

		if (node_ok(e, k, e->j[i].est_s))
			e->pick[m++] = (struct pick){ e->nh[k], k };
	}
	if (m + e->n_free_inf > c) {
		qsort(e->pick, m, sizeof(*e->pick), cmp_pick);
		if (m < c)
			pick_free_inf(e, m, c - m);
	} else {
		m = pick_free_inf(e, m, e->n_free_inf);
		qsort(e->pick, m, sizeof(*e->pick), cmp_pick_k);
	}
	e->job_node[i] = NO_NODE;
	for (uint32_t q = c; q-- > 0;) {
		uint32_t k = e->pick[q].k;

		e->node_job[k] = i;
		e->node_next[k] = e->job_node[i];
		e->job_node[i] = k;
		e->dirty[k] = true;
		e->nodes[q] = k;
		node_note(e, k);
	}
}

/* Free job i's nodes into e->nodes. @return their count. */
static uint32_t
nodes_release(struct eng *e, size_t i)
{
	uint32_t m = 0;

	for (uint32_t k = e->job_node[i], nx; k != NO_NODE; k = nx) {
		nx = e->node_next[k];
		e->node_job[k] = NONE;
		e->node_next[k] = NO_NODE;
		e->dirty[k] = true;
		e->nodes[m++] = k;
		node_note(e, k);
	}
	e->job_node[i] = NO_NODE;
	return m;
}

/* ---- start / end ---- */

static void
unflag_for(struct eng *e, size_t r)
{
	for (size_t k = 0; k < e->n_run; k++)
		if (e->flag_for[e->run[k]] == r)
			e->flag_for[e->run[k]] = NONE;
}

static int
start_job(struct eng *e, size_t i, enum nl_batch_how how)
{
	struct nl_batch_job *jb = &e->j[i];
	uint32_t from_held = 0;
	int q = jb->queue;

	if (per_queue(e))
		list_del(e, (unsigned int)q, i);
	list_del(e, e->sys->n_q, i);
	if (e->resv_active[i]) {
		from_held = e->held[i] < jb->cpus ? e->held[i] : jb->cpus;
		e->held_total -= e->held[i];
		e->free += e->held[i] - from_held;
		e->held[i] = 0;
		e->resv_active[i] = false;
		e->active_resv[q]--;
		unflag_for(e, i);
		how = NL_BATCH_HOW_RESERVED;
	}
	e->free -= jb->cpus - from_held;
	jb->start_s = e->now;
	jb->how = (uint8_t)how;
	e->state[i] = ST_RUNNING;
	e->overtaker[i] = how == NL_BATCH_HOW_OVERTAKE && e->sc->policy <= NL_BATCH_FIRSTFIT;
	if (e->overtaker[i])
		e->ot_cpus[q] += jb->cpus;
	run_insert(e, i);
	if (e->rsv != NULL)
		nodes_take(e, i);
	emit_nodes(e, NL_BATCH_EV_START, i, -1, jb->cpus, from_held,
		   e->rsv != NULL ? e->nodes : NULL);
	return nl_evq_push_st(&e->evq, e->now + jb->run_s, EV_END, ++e->run_gen[i],
			      (void *)(uintptr_t)i);
}

static int
end_job(struct eng *e, size_t i)
{
	struct nl_batch_job *jb = &e->j[i];
	size_t r = e->flag_for[i];

	run_remove(e, i);
	jb->end_s = e->now;
	e->state[i] = ST_DONE;
	e->any_end = true;
	if (e->overtaker[i])
		e->ot_cpus[jb->queue] -= jb->cpus;
	if (r == NONE) {
		e->free += jb->cpus;
		if (e->rsv != NULL)
			nodes_release(e, i);
		emit_nodes(e, NL_BATCH_EV_END, i, -1, jb->cpus, 0, e->rsv != NULL ? e->nodes : NULL);
		return 0;
	}
	/* flagged: the CPUs go to reserving job r, surplus released at once */
	e->flag_for[i] = NONE;
	e->free += jb->cpus;
	emit(e, NL_BATCH_EV_END, i, (long)r, jb->cpus, 0);

	uint32_t need = e->j[r].cpus - e->held[r];
	uint32_t take = jb->cpus < need ? jb->cpus : need;

	e->free -= take;
	e->held[r] += take;
	e->held_total += take;
	emit(e, NL_BATCH_EV_HOLD, r, (long)i, take, 0);
	if (take > 0 && e->held[r] == e->j[r].cpus)
		e->ready[e->n_ready++] = r; /* starts in this time's pass: start_ready() */
	return 0;
}

/* Start the reserving jobs that came to hold their whole need while this event time's events
 * were applied, before the pass (docs/batch.md: all events of one time are applied first,
 * then one pass runs; so what a same-time arrival sees does not depend on the order of that
 * time's events). Such a start is not an overtaking (how = reserved); their order among
 * themselves changes nothing (each takes only its held CPUs). */
static int
start_ready(struct eng *e)
{
	size_t n = e->n_ready;

	e->n_ready = 0;
	for (size_t k = 0; k < n; k++) {
		int rc = start_job(e, e->ready[k], NL_BATCH_HOW_RESERVED);

		if (rc != 0)
			return rc;
	}
	return 0;
}

/* ---- connection reservation (seed 000 §3.2) ---- */

static bool
maxspace_better(const struct eng *e, size_t a, size_t b)
{
	const struct nl_batch_job *x = &e->j[a], *y = &e->j[b];

	if (x->cpus != y->cpus)
		return x->cpus > y->cpus;
	if (x->threads != y->threads)
		return x->threads > y->threads;
	if (x->start_s != y->start_s)
		return x->start_s < y->start_s;
	return a < b;
}

static int
try_reserve(struct eng *e, size_t r, int trig)
{
	const struct nl_batch_job *jr = &e->j[r];
	int q = jr->queue;
	uint32_t need = jr->cpus, sum_q = 0, sum_all = 0, planned = 0;
	bool all;
	size_t match = NONE;

	if (e->sc->resv_max[q] == 0 || e->resv_active[r] || e->state[r] != ST_WAITING)
		return 0;
	if (e->active_resv[q] >= e->sc->resv_max[q]) {
		e->st->resv_refused++;
		return 0;
	}
	for (size_t k = 0; k < e->n_run; k++) {
		size_t i = e->run[k];

		if (e->flag_for[i] != NONE)
			continue;
		sum_all += e->j[i].cpus;
		if (e->j[i].queue == q)
			sum_q += e->j[i].cpus;
	}
	all = sum_q < need;
	/* request-match: same CPU request, earliest start */
	for (size_t k = 0; k < e->n_run; k++) {
		size_t i = e->run[k];

		if (e->flag_for[i] != NONE || (!all && e->j[i].queue != q) || e->j[i].cpus != need)
			continue;
		if (match == NONE || e->j[i].start_s < e->j[match].start_s ||
		    (e->j[i].start_s == e->j[match].start_s && i < match))
			match = i;
	}
	if (match != NONE) {
		e->flag_for[match] = r;
		planned = need;
		emit(e, NL_BATCH_EV_FLAG, r, (long)match, e->j[match].cpus, 0);
	} else {
		/* max-space jobs until the planned CPUs cover the request */
		uint32_t avail = all ? sum_all : sum_q;
		uint32_t from_free = 0;

		if (avail < need) {
			/* not enough running CPUs to ever cover it (the paper's machine always
			 * had): hold the missing part from the free pool now (docs/batch.md) */
			if (avail + e->free < need) {
				e->st->resv_refused++;
				return 0;
			}
			from_free = need - avail;
		}
		planned = from_free;
		while (planned < need) {
			size_t best = NONE;

			for (size_t k = 0; k < e->n_run; k++) {
				size_t i = e->run[k];

				if (e->flag_for[i] != NONE || (!all && e->j[i].queue != q))
					continue;
				if (best == NONE || maxspace_better(e, i, best))
					best = i;
			}
			e->flag_for[best] = r; /* avail >= need - from_free: never NONE */
			planned += e->j[best].cpus;
			emit(e, NL_BATCH_EV_FLAG, r, (long)best, e->j[best].cpus, 0);
		}
		if (from_free > 0) {
			e->free -= from_free;
			e->held[r] += from_free;
			e->held_total += from_free;
		}
	}
	e->resv_active[r] = true;
	e->j[r].reserved = true;
	e->active_resv[q]++;
	e->st->resv_made++;
	e->st->resv_by_trigger[trig]++;
	emit(e, NL_BATCH_EV_RESV, r, match == NONE ? -1 : (long)match, planned,
	     e->held[r]);
	/* no running job to flag and the free pool covered R (it was kept back by
	 * overtake_bound): it holds its need and starts at once, after this pass */
	return e->held[r] >= need ? start_job(e, r, NL_BATCH_HOW_RESERVED) : 0;
}

/* ---- passes ---- */

/* Formula (1) increments for the waiting jobs of queue q that w (just started) overtook:
 * those in passed[0..n_passed) (queue order) or, when passed is NULL, those ahead of w in the
 * queue's list (arrival order). */
static void
overtaken(struct eng *e, unsigned int q, const size_t *passed, size_t n_passed, size_t w)
{
	const struct nl_batch_queue *qq = &e->sys->q[q];
	size_t k = 0, u = passed != NULL ? (n_passed ? passed[0] : NONE) : e->head[q];

	while (u != NONE && u != w) {
		if (!e->resv_active[u]) {
			e->j[u].prio += nl_batch_prio_increment(qq, &e->j[u]);
			if (e->sc->trig_priority && qq->prio_threshold > 0 &&
			    e->j[u].prio > qq->prio_threshold)
				e->cand[u] = true;
		}
		if (passed != NULL)
			u = ++k < n_passed ? passed[k] : NONE;
		else
			u = e->next[u];
	}
}

/* May waiting job w of queue q start now? blocked: an earlier job of q still waits. */
static bool
ff_fits(const struct eng *e, size_t w, unsigned int q, bool blocked)
{
	const struct nl_batch_queue *qq = &e->sys->q[q];
	const struct nl_batch_job *jw = &e->j[w];
	uint32_t avail = e->free + (e->resv_active[w] ? e->held[w] : 0);

	if (jw->cpus > avail)
		return false;
	if (blocked && !e->resv_active[w] && e->sc->overtake_bound &&
	    qq->overtake_cpus_max != UINT32_MAX && e->ot_cpus[q] + jw->cpus > qq->overtake_cpus_max)
		return false;
	return e->rsv == NULL || nodes_fit(e, w);
}

static int
pass_firstfit(struct eng *e)
{
	const struct nl_batch_scenario *sc = e->sc;

	if (sc->queue_order == NL_BATCH_ORDER_ARRIVAL) {
		bool blocked[NL_BATCH_MAX_QUEUES] = { false };

		for (size_t w = e->head[e->sys->n_q], nx; w != NONE; w = nx) {
			unsigned int q = (unsigned int)e->j[w].queue;

			nx = e->gnext[w];
			if (e->free == 0 && e->held_total == 0)
				return 0; /* nothing can start anywhere */
			if ((sc->policy == NL_BATCH_FCFS && blocked[q]) || !ff_fits(e, w, q, blocked[q])) {
				blocked[q] = true;
				continue;
			}
			if (blocked[q])
				overtaken(e, q, NULL, 0, w);
			if (start_job(e, w, blocked[q] ? NL_BATCH_HOW_OVERTAKE : NL_BATCH_HOW_HEAD) != 0)
				return -ENOMEM;
		}
		return 0;
	}
	for (unsigned int q = 0; q < e->sys->n_q; q++) {
		size_t n_passed = 0, w, nx;
		bool blocked = false;

		for (w = e->head[q]; w != NONE; w = nx) {
			nx = e->next[w];
			if (e->free == 0 && e->held_total == 0)
				return 0; /* nothing can start anywhere */
			if (!ff_fits(e, w, q, blocked)) {
				blocked = true;
				e->passed[n_passed++] = w;
				if (sc->policy == NL_BATCH_FCFS)
					break;
				continue;
			}
			if (start_job(e, w, blocked ? NL_BATCH_HOW_OVERTAKE : NL_BATCH_HOW_HEAD) != 0)
				return -ENOMEM;
			if (blocked)
				overtaken(e, q, e->passed, n_passed, w);
		}
	}
	return 0;
}

static int
pass_easy(struct eng *e)
{
	unsigned int l = e->sys->n_q;
	size_t h;

	for (;;) {
		h = e->head[l];
		if (h == NONE)
			return 0;
		if (e->j[h].cpus > e->free)
			break;
		if (start_job(e, h, NL_BATCH_HOW_HEAD) != 0)
			return -ENOMEM;
	}
	if (e->free == 0)
		return 0;
	/* shadow time and extra processors of the head */
	uint32_t avail = e->free, need = e->j[h].cpus, extra = 0;
	double shadow = INFINITY;

	for (size_t k = 0; k < e->n_run; k++) {
		size_t i = e->run[k];

		avail += e->j[i].cpus;
		if (avail >= need) {
			/* extra: every CPU free at the shadow time beyond the head's need, so the
			 * jobs that end (by estimate) at that same time count too, whatever their
			 * place in the running list (Mu'alem & Feitelson's "extra nodes") */
			shadow = e->j[i].start_s + e->j[i].est_s;
			while (++k < e->n_run &&
			       e->j[e->run[k]].start_s + e->j[e->run[k]].est_s == shadow)
				avail += e->j[e->run[k]].cpus;
			extra = avail - need;
			break;
		}
	}
	if (e->j[h].resv_s < 0)
		e->j[h].resv_s = shadow;
	for (size_t w = e->gnext[h], nx; w != NONE && e->free > 0; w = nx) {
		struct nl_batch_job *jw = &e->j[w];

		nx = e->gnext[w];
		if (jw->cpus > e->free)
			continue;
		if (e->now + jw->est_s <= shadow) {
			/* ends before the head's reservation */
		} else if (jw->cpus <= extra) {
			extra -= jw->cpus;
		} else {
			continue;
		}
		if (start_job(e, w, NL_BATCH_HOW_OVERTAKE) != 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * Conservative backfilling with compression (Mu'alem & Feitelson): the profile holds the
 * running jobs (until start + estimate) and every waiting job's reservation. At each pass
 * every waiting job, in arrival order, is taken out of the profile and put back at the
 * earliest time it fits; its old slot is still free, so no reservation ever moves later
 * (I4). Jobs whose slot is now start. Profile: breakpoints pt[0..np) with free CPUs pf[k]
 * on [pt[k], pt[k+1]); the last segment runs to infinity.
 *
 * Profile times are instants (struct inst): a time in seconds plus a count of infinitesimal
 * steps. A job of estimate 0 (run time 0 and no request, or exact estimates) still holds its
 * CPUs at the instant it starts: the pass that starts it cannot give them to another job, so
 * its reservation is the one step [at, at + 1 step), and a wider job placed later cannot take
 * that instant from it (I4; found by the SWF fuzz target). Any other reservation keeps its
 * steps: placed at (s, k) with estimate d > 0 it holds [(s, k), (s + d, k)). Steps never
 * collapse, so a chain of zero-estimate jobs and the jobs placed after them keep their order
 * at every second (found by tests/batch/ref_batch.py: with one double per time, a step after
 * 3808 s and two steps after it both ended at the same double after 7408 s). The engine
 * starts jobs only at event times, step 0, so nothing starts inside a step; a zero-run job's
 * end at the same second is followed by another pass.
 */
static inline bool
inst_lt(struct inst a, struct inst b)
{
	return a.s < b.s || (a.s == b.s && a.k < b.k);
}

static inline bool
inst_eq(struct inst a, struct inst b)
{
	return a.s == b.s && a.k == b.k;
}

/* End of a reservation of estimate est (seconds) from at: at + est, or one step after at
 * where est is 0 (or too small to move at's seconds). */
static inline struct inst
resv_end(struct inst at, double est)
{
	double t = at.s + est;

	if (!(t > at.s))
		return (struct inst){ at.s, at.k + 1 };
	return (struct inst){ t, at.k };
}

static size_t
prof_split(struct eng *e, size_t *np, struct inst t)
{
	size_t n = *np, k = 1, hi = n;

	if (!inst_lt(e->pt[0], t))
		return 0;
	while (k < hi) { /* first breakpoint not before t, in (0, n] */
		size_t mid = k + (hi - k) / 2;

		if (inst_lt(e->pt[mid], t))
			k = mid + 1;
		else
			hi = mid;
	}
	if (k < n && inst_eq(e->pt[k], t))
		return k;
	memmove(&e->pt[k + 1], &e->pt[k], (n - k) * sizeof(*e->pt));
	memmove(&e->pf[k + 1], &e->pf[k], (n - k) * sizeof(*e->pf));
	e->pt[k] = t;
	e->pf[k] = e->pf[k - 1];
	*np = n + 1;
	return k;
}

static void
prof_add(struct eng *e, size_t *np, struct inst t0, struct inst t1, int64_t delta)
{
	size_t k0, k1;

	if (!inst_lt(t0, t1))
		return;
	k0 = prof_split(e, np, t0);
	k1 = isfinite(t1.s) ? prof_split(e, np, t1) : *np;
	for (size_t m = k0; m < k1; m++)
		e->pf[m] += delta;
}

/*
 * Earliest breakpoint at which cpus CPUs stay free for dur seconds. The segment k that blocks
 * start i also blocks each later start j <= k whose reservation still covers pt[k]
 * (pt[k] < resv_end(pt[j], dur)), and only those are passed over. The second of an end never
 * decreases with the start (rounding is monotone), so when it is past pt[k]'s second every
 * start up to k is blocked: the usual jump past k, O(np) for the whole search. But its step
 * does not follow: two starts less than half a double's spacing apart end at the same second,
 * each keeping its own step, so the later start can end first ((s + 1 step) + d and
 * (s + u) + d both rounding to E end at (E, 1) and (E, 0)). When the end and pt[k] share a
 * second the starts up to k are therefore tried on their own ends. Jumping past k there also
 * jumped past the job's own old slot, and its reservation moved later (I4; found by the SWF
 * fuzz target with a run time of 9.2e17 s, where doubles are 128 s apart; reached with
 * submit_scale = 0.35 at 30 s).
 */
static struct inst
prof_fit(const struct eng *e, size_t np, uint32_t cpus, double dur)
{
	for (size_t i = 0; i < np; i++) {
		struct inst end;
		size_t k = i + 1;

		if (e->pf[i] < (int64_t)cpus)
			continue; /* blocked by its own first segment */
		end = resv_end(e->pt[i], dur);
		while (k < np && inst_lt(e->pt[k], end) && e->pf[k] >= (int64_t)cpus)
			k++;
		if (k == np || !inst_lt(e->pt[k], end))
			return e->pt[i];
		/* segment k blocks start i */
		if (e->pt[k].s != end.s) {
			i = k; /* the loop's i++ moves past the blocking segment */
			continue;
		}
		/* the first start before k that ends by pt[k] is tried next (k itself is blocked:
		 * a reservation always holds its own start) */
		while (++i < k && inst_lt(e->pt[k], resv_end(e->pt[i], dur)))
			;
		if (i < k)
			i--;
	}
	return (struct inst){ INFINITY, 0 }; /* wider than the machine: filtered before the run */
}

static int
pass_conservative(struct eng *e)
{
	unsigned int l = e->sys->n_q;
	size_t np, need_cap = 2 + e->n_run + 4 * e->qlen[l];
	const struct inst now = { e->now, 0 };

	if (need_cap > e->pcap) {
		struct inst *pt = realloc(e->pt, need_cap * sizeof(*pt));
		int64_t *pf;

		if (pt == NULL)
			return -ENOMEM;
		e->pt = pt;
		pf = realloc(e->pf, need_cap * sizeof(*pf));
		if (pf == NULL)
			return -ENOMEM;
		e->pf = pf;
		e->pcap = need_cap;
	}
	/* running jobs, in order of start + estimate: CPUs come free at each one's end (at now
	 * for those past it); the one step of a zero-estimate job started at this second can
	 * come in that order after an end at this second, step 0, so the profile is built as
	 * changes and summed after */
	e->pt[0] = now;
	e->pf[0] = e->free;
	np = 1;
	for (size_t k = 0; k < e->n_run; k++) {
		size_t i = e->run[k];
		struct inst t = resv_end((struct inst){ e->j[i].start_s, 0 }, e->j[i].est_s);

		if (!inst_lt(now, t)) {
			e->pf[0] += e->j[i].cpus;
		} else if (inst_eq(t, e->pt[np - 1])) {
			e->pf[np - 1] += e->j[i].cpus;
		} else {
			e->pt[np] = t;
			e->pf[np] = e->j[i].cpus;
			np++;
		}
	}
	for (size_t k = 1; k < np; k++)
		e->pf[k] += e->pf[k - 1];
	/* current reservations of the waiting jobs */
	for (size_t w = e->head[l]; w != NONE; w = e->gnext[w])
		if (e->slot[w].s >= 0)
			prof_add(e, &np, inst_lt(e->slot[w], now) ? now : e->slot[w],
				 resv_end(e->slot[w], e->j[w].est_s), -(int64_t)e->j[w].cpus);
	for (size_t w = e->head[l], nx; w != NONE; w = nx) {
		struct nl_batch_job *jw = &e->j[w];
		struct inst at;

		nx = e->gnext[w];
		if (e->slot[w].s >= 0)
			prof_add(e, &np, inst_lt(e->slot[w], now) ? now : e->slot[w],
				 resv_end(e->slot[w], jw->est_s), (int64_t)jw->cpus);
		at = prof_fit(e, np, jw->cpus, jw->est_s);
		e->slot[w] = at;
		if (jw->resv_s < 0)
			jw->resv_s = at.s;
		prof_add(e, &np, at, resv_end(at, jw->est_s), -(int64_t)jw->cpus);
		if (inst_eq(at, now) && jw->cpus <= e->free) {
			if (start_job(e, w, w == e->head[l] ? NL_BATCH_HOW_HEAD :
					  NL_BATCH_HOW_OVERTAKE) != 0)
				return -ENOMEM;
		}
	}
	return 0;
}

static int
triggers(struct eng *e)
{
	const struct nl_batch_scenario *sc = e->sc;

	if (sc->trig_priority) {
		for (unsigned int q = 0; q < e->sys->n_q; q++) {
			for (size_t w = e->head[q], nx; w != NONE; w = nx) {
				nx = e->next[w];
				if (!e->cand[w])
					continue;
				e->cand[w] = false;
				if (try_reserve(e, w, TRIG_PRIO) != 0)
					return -ENOMEM;
			}
		}
	}
	if (sc->trig_head && e->any_end) {
		for (unsigned int q = 0; q < e->sys->n_q; q++) {
			size_t h = e->head[q];

			if (e->sys->q[q].head_type && h != NONE && !e->resv_active[h] &&
			    try_reserve(e, h, TRIG_HEAD) != 0)
				return -ENOMEM;
		}
	}
	if (sc->trig_nonwait) {
		for (size_t k = 0; k < e->n_arrived; k++) {
			size_t i = e->arrived[k];

			if (e->nonwait[i] && e->state[i] == ST_WAITING && !e->resv_active[i] &&
			    try_reserve(e, i, TRIG_NONWAIT) != 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* ---- advance reservations (seed 004) ---- */

/* Preempt running job i at the start of request r's window (PluS, seed 004 §1): its work is
 * lost, it waits again at its arrival position; its pending end event becomes stale. */
static void
preempt_job(struct eng *e, size_t i, size_t r)
{
	struct nl_batch_job *jb = &e->j[i];
	int q = jb->queue;
	uint32_t m;

	run_remove(e, i);
	e->run_gen[i]++; /* its pending end event is stale from now on */
	m = nodes_release(e, i);
	e->free += jb->cpus;
	if (e->overtaker[i]) {
		e->ot_cpus[q] -= jb->cpus;
		e->overtaker[i] = false;
	}
	e->st->preempted++;
	e->st->preempted_cpu_s += (double)jb->cpus * (e->now - jb->start_s);
	e->rsv->req[r].preempted++;
	emit_nodes(e, NL_BATCH_EV_PREEMPT, i, (long)r, m, 0, e->nodes);
	jb->start_s = -1;
	jb->how = NL_BATCH_HOW_NONE;
	e->state[i] = ST_WAITING;
	if (per_queue(e))
		list_insert_sorted(e, (unsigned int)q, i);
	list_insert_sorted(e, e->sys->n_q, i);
}

/* Copy the changed node records into the manager (seed 004 Tables 2-3): a busy node has
 * load average 1 and one Running job whose wallTime is the job's estimate. */
static int
rsv_sync(struct eng *e)
{
	double ep = e->rsv->epoch_s;

	for (uint32_t k = 0; k < e->sys->cpus; k++) {
		struct nl_plus_node nd = { .alive = true };
		size_t i = e->node_job[k];
		int rc;

		if (!e->dirty[k])
			continue;
		snprintf(nd.name, sizeof(nd.name), "node%u", k);
		if (i != NONE) {
			struct nl_plus_job *pj = &e->pj[k];

			memset(pj, 0, sizeof(*pj));
			snprintf(pj->id, sizeof(pj->id), "%lld", (long long)e->j[i].swf_id);
			snprintf(pj->owner, sizeof(pj->owner), "user%d", (int)e->j[i].user);
			snprintf(pj->state, sizeof(pj->state), "Running");
			pj->start_s = (int64_t)ceil(ep + e->j[i].start_s);
			pj->wall_s = e->j[i].est_s;
			nd.loadavg = 1.0;
			nd.n_jobs = 1;
			nd.jobs = pj;
		}
		if ((rc = nl_plus_node_set(e->rsv->plus, k, &nd)) != 0)
			return rc;
		e->dirty[k] = false;
	}
	return 0;
}

/* nh[] of the n nodes of a window that ended, from the manager. */
static int
rsv_refresh(struct eng *e, const uint32_t *node, unsigned int n)
{
	double ep = e->rsv->epoch_s;
	int rc = nl_plus_nodes_next_hold(e->rsv->plus, node, n, (int64_t)floor(ep + e->now),
					 e->hold_s);

	if (rc != 0)
		return rc;
	for (unsigned int k = 0; k < n; k++) {
		e->nh[node[k]] = e->hold_s[k] == INT64_MAX ? INFINITY : (double)e->hold_s[k] - ep;
		node_note(e, node[k]);
	}
	return 0;
}

static int
rsv_admit(struct eng *e, size_t r)
{
	const struct nl_batch_rsv *rv = e->rsv;
	struct nl_batch_rsv_req *rq = &rv->req[r];
	struct nl_plus_refusal why;
	struct nl_plus_rsv_info in;
	struct nl_plus_req pr;
	uint64_t id;
	int rc;

	if ((rc = rsv_sync(e)) != 0)
		return rc;
	nl_plus_set_now(rv->plus, (int64_t)floor(rv->epoch_s + e->now));
	pr.owner = rq->owner;
	pr.start_s = llround(rv->epoch_s + rq->start_s);
	pr.end_s = llround(rv->epoch_s + rq->end_s);
	pr.n_nodes = rq->nodes;
	e->st->rsv_requests++;
	rc = nl_plus_reserve(rv->plus, &pr, &id, &why);
	if (rc == -ENOMEM)
		return rc;
	if (rc != 0) {
		if (why.rc == -EACCES) {
			rq->outcome = NL_BATCH_RSV_REFUSED_POLICY;
			e->st->rsv_refused_policy++;
		} else if (why.rc == -ENOSPC) {
			rq->outcome = NL_BATCH_RSV_REFUSED_SPACE;
			e->st->rsv_refused_space++;
		} else {
			rq->outcome = NL_BATCH_RSV_INVALID;
			e->st->rsv_invalid++;
		}
		snprintf(rq->why, sizeof(rq->why), "%s", why.clause);
		emit(e, NL_BATCH_EV_ADMIT, r, 0, rq->nodes, 0);
		return 0;
	}
	rq->outcome = NL_BATCH_RSV_ACCEPTED;
	e->rsv_id[r] = id;
	e->st->rsv_accepted++;
	e->st->rsv_node_s += (double)rq->nodes * (rq->end_s - rq->start_s);
	if (nl_plus_get(rv->plus, id, &in) != 0)
		return -EIO;
	for (unsigned int k = 0; k < in.n_nodes; k++) {
		e->nh[in.nodes[k]] = fmin(e->nh[in.nodes[k]], rq->start_s);
		node_note(e, in.nodes[k]);
	}
	emit_nodes(e, NL_BATCH_EV_ADMIT, r, 1, in.n_nodes, 0, in.nodes);
	if ((rc = nl_evq_push_st(&e->evq, fmax(rq->start_s, e->now), EV_RSV_START, 0,
				 (void *)(uintptr_t)r)) != 0 ||
	    (rc = nl_evq_push_st(&e->evq, fmax(rq->end_s, e->now), EV_RSV_END, 0,
				 (void *)(uintptr_t)r)) != 0)
		return rc;
	return nl_evq_push_st(&e->evq, fmax(rq->end_s, e->now) + rv->history_s, EV_RSV_FORGET, 0,
			      (void *)(uintptr_t)r);
}

static int
rsv_event(struct eng *e, uint32_t kind, size_t r)
{
	struct nl_plus_rsv_info in;

	if (kind == EV_RSV_REQ)
		return rsv_admit(e, r);
	if (kind == EV_RSV_FORGET)
		return nl_plus_cancel(e->rsv->plus, e->rsv_id[r]) == 0 ? 0 : -EIO;
	if (nl_plus_get(e->rsv->plus, e->rsv_id[r], &in) != 0)
		return -EIO;
	if (kind == EV_RSV_START) {
		emit(e, NL_BATCH_EV_WINDOW, r, 1, in.n_nodes, 0);
		for (unsigned int k = 0; k < in.n_nodes; k++) {
			size_t i = e->node_job[in.nodes[k]];

			/* a job ending at this very instant is not disturbed */
			if (i != NONE && e->j[i].start_s + e->j[i].run_s > e->now)
				preempt_job(e, i, r);
		}
		return 0;
	}
	/* EV_RSV_END: the nodes' next holds move on */
	int rc = rsv_refresh(e, in.nodes, in.n_nodes);

	if (rc != 0)
		return rc;
	emit(e, NL_BATCH_EV_WINDOW, r, 0, in.n_nodes, 0);
	return 0;
}

static int
eng_alloc(struct eng *e, size_t n)
{
	size_t m = n ? n : 1;

	e->next = malloc(m * sizeof(*e->next));
	e->prev = malloc(m * sizeof(*e->prev));
	e->gnext = malloc(m * sizeof(*e->gnext));
	e->gprev = malloc(m * sizeof(*e->gprev));
	e->run = malloc(((size_t)e->sys->cpus + 1) * sizeof(*e->run));
	e->state = calloc(m, 1);
	e->overtaker = calloc(m, sizeof(bool));
	e->cand = calloc(m, sizeof(bool));
	e->resv_active = calloc(m, sizeof(bool));
	e->nonwait = calloc(m, sizeof(bool));
	e->flag_for = malloc(m * sizeof(*e->flag_for));
	e->held = calloc(m, sizeof(*e->held));
	e->slot = malloc(m * sizeof(*e->slot));
	e->arrived = malloc(m * sizeof(*e->arrived));
	e->passed = malloc(m * sizeof(*e->passed));
	e->ready = malloc(m * sizeof(*e->ready));
	e->run_gen = calloc(m, sizeof(*e->run_gen));
	if (e->run_gen == NULL)
		return -ENOMEM;
	if (e->rsv != NULL) {
		size_t p = e->sys->cpus;

		e->node_job = malloc(p * sizeof(*e->node_job));
		e->node_next = malloc(p * sizeof(*e->node_next));
		e->job_node = malloc(m * sizeof(*e->job_node));
		e->nh = malloc(p * sizeof(*e->nh));
		e->dirty = malloc(p * sizeof(*e->dirty));
		e->pj = calloc(p, sizeof(*e->pj));
		e->pick = malloc(p * sizeof(*e->pick));
		e->nodes = malloc(p * sizeof(*e->nodes));
		e->rsv_id = calloc(e->rsv->n_req + 1, sizeof(*e->rsv_id));
		e->free_inf = calloc((p + 63) / 64, sizeof(*e->free_inf));
		e->held_node = malloc(p * sizeof(*e->held_node));
		e->held_pos = malloc(p * sizeof(*e->held_pos));
		e->hold_s = malloc(p * sizeof(*e->hold_s));
		e->hv = malloc(p * sizeof(*e->hv));
		e->hc = malloc(p * sizeof(*e->hc));
		e->held_nh = malloc(p * sizeof(*e->held_nh));
		if (e->node_job == NULL || e->node_next == NULL || e->job_node == NULL ||
		    e->nh == NULL || e->dirty == NULL || e->pj == NULL || e->pick == NULL ||
		    e->nodes == NULL || e->rsv_id == NULL || e->free_inf == NULL ||
		    e->held_node == NULL || e->held_pos == NULL || e->hold_s == NULL ||
		    e->hv == NULL || e->hc == NULL || e->held_nh == NULL)
			return -ENOMEM;
		for (size_t k = 0; k < p; k++) {
			e->node_job[k] = NONE;
			e->node_next[k] = NO_NODE;
			e->nh[k] = INFINITY;
			e->dirty[k] = true;
			e->held_pos[k] = NO_NODE;
			node_note(e, (uint32_t)k);
		}
	}
	if (e->next == NULL || e->prev == NULL || e->gnext == NULL || e->gprev == NULL ||
	    e->run == NULL || e->state == NULL ||
	    e->overtaker == NULL || e->cand == NULL || e->resv_active == NULL ||
	    e->nonwait == NULL || e->flag_for == NULL || e->held == NULL || e->slot == NULL ||
	    e->arrived == NULL || e->passed == NULL || e->ready == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		e->flag_for[i] = NONE;
		e->slot[i] = (struct inst){ -1, 0 };
	}
	return nl_evq_init(&e->evq, 1024);
}

static void
eng_free(struct eng *e)
{
	free(e->next);
	free(e->prev);
	free(e->gnext);
	free(e->gprev);
	free(e->run);
	free(e->state);
	free(e->overtaker);
	free(e->cand);
	free(e->resv_active);
	free(e->nonwait);
	free(e->flag_for);
	free(e->held);
	free(e->slot);
	free(e->arrived);
	free(e->passed);
	free(e->ready);
	free(e->pt);
	free(e->pf);
	free(e->run_gen);
	free(e->node_job);
	free(e->node_next);
	free(e->job_node);
	free(e->nh);
	free(e->dirty);
	free(e->pj);
	free(e->pick);
	free(e->nodes);
	free(e->rsv_id);
	free(e->free_inf);
	free(e->held_node);
	free(e->held_pos);
	free(e->hold_s);
	free(e->hv);
	free(e->hc);
	free(e->held_nh);
	nl_evq_fini(&e->evq);
}

static void
select_queues(const struct nl_batch_sys *sys, const struct nl_batch_scenario *sc,
	      struct nl_batch_job *jobs, size_t n)
{
	struct nl_rng rng;

	nl_rng_seed(&rng, sc->seed);
	for (size_t i = 0; i < n; i++) {
		struct nl_batch_job *jb = &jobs[i];
		int q = -1;

		switch (sc->qsel) {
		case NL_BATCH_QSEL_AUTO:
			q = nl_batch_queue_auto(sys, jb);
			break;
		case NL_BATCH_QSEL_FIXED:
			q = nl_batch_queue_accepts(&sys->q[sc->fixed_queue], jb) ?
				    (int)sc->fixed_queue : -1;
			break;
		case NL_BATCH_QSEL_TRACE:
			q = jb->user_queue;
			if (q < 0 || (unsigned int)q >= sys->n_q ||
			    !nl_batch_queue_accepts(&sys->q[q], jb))
				q = nl_batch_queue_auto(sys, jb); /* documented fall-back */
			break;
		case NL_BATCH_QSEL_RANDOM: {
			unsigned int ok[NL_BATCH_MAX_QUEUES], n_ok = 0;

			for (unsigned int k = 0; k < sys->n_q; k++)
				if (nl_batch_queue_accepts(&sys->q[k], jb))
					ok[n_ok++] = k;
			/* one draw per job whatever the outcome: the choice of job i does not
			 * depend on earlier jobs' runnable sets */
			uint64_t x = nl_rng_u64(&rng);

			q = n_ok ? (int)ok[x % n_ok] : -1;
			break;
		}
		}
		if (jb->cpus == 0 || jb->cpus > sys->cpus)
			q = -1;
		jb->queue = q;
	}
}

int
nl_batch_run(const struct nl_batch_sys *sys, const struct nl_batch_scenario *sc,
	     struct nl_batch_job *jobs, size_t n, struct nl_batch_stats *st,
	     const struct nl_batch_hooks *hooks)
{
	return nl_batch_run_rsv(sys, sc, jobs, n, NULL, st, hooks);
}

int
nl_batch_run_rsv(const struct nl_batch_sys *sys, const struct nl_batch_scenario *sc,
		 struct nl_batch_job *jobs, size_t n, const struct nl_batch_rsv *rsv,
		 struct nl_batch_stats *st, const struct nl_batch_hooks *hooks)
{
	struct eng e;
	struct nl_ev ev;
	size_t next_arr = 0;
	bool resv = false;
	int rc = 0;

	memset(st, 0, sizeof(*st));
	if (sys->n_q == 0 || sys->n_q > NL_BATCH_MAX_QUEUES || sys->cpus == 0)
		return -EINVAL;
	if (sc->qsel == NL_BATCH_QSEL_FIXED && sc->fixed_queue >= sys->n_q)
		return -EINVAL;
	for (unsigned int q = 0; q < sys->n_q; q++)
		resv |= sc->resv_max[q] > 0;
	if (resv && sc->policy != NL_BATCH_FIRSTFIT)
		return -EINVAL;
	if (rsv != NULL) {
		if (rsv->plus == NULL || resv || sc->policy > NL_BATCH_FIRSTFIT ||
		    nl_plus_n_nodes(rsv->plus) != sys->cpus || (rsv->n_req > 0 && rsv->req == NULL) ||
		    !(rsv->history_s >= 0))
			return -EINVAL;
		for (size_t r = 0; r < rsv->n_req; r++)
			if (rsv->req[r].nodes == 0)
				return -EINVAL;
	}
	for (size_t i = 1; i < n; i++)
		if (jobs[i].submit_s < jobs[i - 1].submit_s)
			return -EINVAL;
	memset(&e, 0, sizeof(e));
	e.sys = sys;
	e.sc = sc;
	e.j = jobs;
	e.n = n;
	e.hk = hooks;
	e.st = st;
	e.rsv = rsv;
	e.free = sys->cpus;
	e.now = n ? jobs[0].submit_s : 0;
	for (unsigned int l = 0; l <= NL_BATCH_MAX_QUEUES; l++)
		e.head[l] = e.tail[l] = NONE;
	if (eng_alloc(&e, n) != 0) {
		eng_free(&e);
		return -ENOMEM;
	}
	select_queues(sys, sc, jobs, n);
	st->first_submit_s = n ? jobs[0].submit_s : 0;
	for (size_t i = 0; i < n; i++) {
		jobs[i].how = NL_BATCH_HOW_NONE;
		jobs[i].reserved = false;
		jobs[i].start_s = jobs[i].end_s = jobs[i].resv_s = -1;
		jobs[i].prio = 0;
		if (jobs[i].queue < 0)
			st->unrunnable++;
	}
	for (size_t r = 0; rc == 0 && rsv != NULL && r < rsv->n_req; r++) {
		rsv->req[r].outcome = NL_BATCH_RSV_PENDING;
		rsv->req[r].preempted = 0;
		rsv->req[r].why[0] = '\0';
		if (rsv->req[r].at_s < e.now)
			e.now = rsv->req[r].at_s;
		rc = nl_evq_push_st(&e.evq, rsv->req[r].at_s, EV_RSV_REQ, 0, (void *)(uintptr_t)r);
	}
	while (next_arr < n && jobs[next_arr].queue < 0)
		next_arr++;
	if (rc == 0 && next_arr < n)
		rc = nl_evq_push_st(&e.evq, jobs[next_arr].submit_s, EV_ARRIVE, 0,
				    (void *)(uintptr_t)next_arr);
	while (rc == 0 && nl_evq_pop_st(&e.evq, &ev)) {
		st->held_cpu_s += (double)e.held_total * (ev.t_vt - e.now);
		e.now = ev.t_vt;
		e.any_end = false;
		e.n_arrived = 0;
		for (;;) {
			size_t i = (size_t)(uintptr_t)ev.ptr;

			st->events++;
			if (ev.kind == EV_ARRIVE) {
				unsigned int q = (unsigned int)jobs[i].queue;

				/* non-waiting trigger: nobody waits in its queue (FirstFit lists) */
				e.nonwait[i] = e.qlen[q] == 0;
				e.state[i] = ST_WAITING;
				if (per_queue(&e))
					list_push(&e, q, i);
				list_push(&e, sys->n_q, i);
				e.arrived[e.n_arrived++] = i;
				for (next_arr = i + 1; next_arr < n && jobs[next_arr].queue < 0; next_arr++)
					;
				if (next_arr < n)
					rc = nl_evq_push_st(&e.evq, jobs[next_arr].submit_s, EV_ARRIVE, 0,
							    (void *)(uintptr_t)next_arr);
			} else if (ev.kind == EV_END) {
				if (ev.arg == e.run_gen[i]) /* else stale: preempted since */
					rc = end_job(&e, i);
			} else {
				rc = rsv_event(&e, ev.kind, i);
			}
			if (rc != 0 || e.evq.n == 0 || e.evq.h[0].t_vt != e.now)
				break;
			nl_evq_pop_st(&e.evq, &ev);
		}
		if (rc == 0)
			rc = start_ready(&e);
		if (rc != 0)
			break;
		st->passes++;
		switch (sc->policy) {
		case NL_BATCH_EASY:
			rc = pass_easy(&e);
			break;
		case NL_BATCH_CONSERVATIVE:
			rc = pass_conservative(&e);
			break;
		default:
			rc = pass_firstfit(&e);
			if (rc == 0 && resv)
				rc = triggers(&e);
			break;
		}
	}
	if (rc == 0) {
		double last = st->first_submit_s;

		for (size_t i = 0; i < n; i++) {
			if (jobs[i].queue < 0)
				continue;
			st->jobs++;
			st->cpu_s += (double)jobs[i].cpus * jobs[i].run_s;
			if (jobs[i].end_s > last)
				last = jobs[i].end_s;
		}
		st->makespan_s = last - st->first_submit_s;
	}
	eng_free(&e);
	return rc;
}

/* ---- metrics ---- */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
nl_batch_metrics(const struct nl_batch_sys *sys, const struct nl_batch_job *jobs, size_t n,
		 const struct nl_batch_stats *st, int q, double tau_s, struct nl_batch_metrics *out)
{
	double *w = malloc((n ? n : 1) * sizeof(*w)), sum = 0, bs = 0, cpu = 0, mx = 0;
	size_t m = 0;

	memset(out, 0, sizeof(*out));
	if (w == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct nl_batch_job *jb = &jobs[i];
		double wait, den;

		if (jb->queue < 0 || jb->start_s < 0 || (q >= 0 && jb->queue != q))
			continue;
		wait = jb->start_s - jb->submit_s;
		den = jb->run_s > tau_s ? jb->run_s : tau_s;
		w[m++] = wait;
		sum += wait;
		mx = wait > mx ? wait : mx;
		bs += fmax(1.0, (wait + jb->run_s) / den);
		cpu += (double)jb->cpus * jb->run_s;
	}
	out->jobs = m;
	if (m > 0) {
		qsort(w, m, sizeof(*w), cmp_double);
		out->wait_mean_s = sum / m;
		out->wait_median_s = m % 2 ? w[m / 2] : 0.5 * (w[m / 2 - 1] + w[m / 2]);
		out->wait_max_s = mx;
		out->bsld_mean = bs / m;
	}
	if (st->makespan_s > 0)
		out->utilization = cpu / ((double)sys->cpus * st->makespan_s);
	free(w);
	return 0;
}
