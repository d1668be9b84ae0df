/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Advance reservations in the batch engine (nl_batch_run_rsv(), seed 004): R1-R4 of
 * nl_batch.h on random workloads with random request streams, checked from the event hook
 * with our own node bookkeeping; seed 004 Fig. 8 never preempts where a permissive policy
 * does; hand-made cases for preemption and restart, keeping jobs off held nodes, the
 * nearest-hold-first node choice; the [reservations] configuration and its errors; the
 * request generator.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_check.h"
#include "nl_batch.h"
#include "nl_batch_cfg.h"
#include "nl_cfg.h"
#include "nl_plus.h"
#include "nl_rng.h"
#include "nl_tap.h"

#define ok(cond, name) nl_tap_ok((cond), "%s", (name))

static const char permissive[] = "PLUS_NODE_RESERVABLE = true;";

static char *
read_policy(const char *rel, size_t *len)
{
	const char *root = getenv("NL_SRC_ROOT");
	char path[4096];
	FILE *f;
	char *buf = calloc(1, 1 << 16);

	snprintf(path, sizeof(path), "%s/%s", root ? root : ".", rel);
	f = fopen(path, "rb");
	if (f == NULL || buf == NULL) {
		fprintf(stderr, "# cannot open %s\n", path);
		exit(1);
	}
	*len = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	return buf;
}

/* ---- node-level checker (R1, R4) on top of batch_check.h (I1-I3) ---- */

#define MAXW 4096

struct rchk {
	struct chk base;
	uint32_t P;
	size_t *on;        /* [P] job on node, or -1 */
	double *since;     /* [P] when it got there */
	struct { uint32_t node; double s, e; } w[MAXW];
	unsigned int n_w;
	const struct nl_batch_rsv_req *req;
	unsigned long admits, preempts;
};

static void
rchk_leave(struct rchk *c, const struct nl_batch_ev *e)
{
	for (uint32_t q = 0; q < e->cpus; q++) {
		uint32_t k = e->nodes[q];

		if (c->on[k] != e->job)
			chk_fail(&c->base, "node %u: job %zu leaves, but %zd was there", k, e->job,
				 (ssize_t)c->on[k]);
		for (unsigned int m = 0; m < c->n_w; m++)
			if (c->w[m].node == k && c->since[k] < c->w[m].e && e->t_s > c->w[m].s)
				chk_fail(&c->base, "R1: job %zu ran on node %u in [%g,%g) inside "
					 "window [%g,%g)", e->job, k, c->since[k], e->t_s, c->w[m].s,
					 c->w[m].e);
		c->on[k] = (size_t)-1;
	}
}

static void
rchk_on_ev(void *arg, const struct nl_batch_ev *e)
{
	struct rchk *c = arg;

	chk_on_ev(&c->base, e);
	switch (e->kind) {
	case NL_BATCH_EV_START:
		if (e->nodes == NULL) {
			chk_fail(&c->base, "START without nodes");
			break;
		}
		for (uint32_t q = 0; q < e->cpus; q++) {
			uint32_t k = e->nodes[q];

			if (k >= c->P || c->on[k] != (size_t)-1)
				chk_fail(&c->base, "job %zu given busy or bad node %u", e->job, k);
			else {
				c->on[k] = e->job;
				c->since[k] = e->t_s;
			}
		}
		break;
	case NL_BATCH_EV_END:
		rchk_leave(c, e);
		break;
	case NL_BATCH_EV_PREEMPT:
		c->preempts++;
		rchk_leave(c, e);
		break;
	case NL_BATCH_EV_ADMIT:
		if (e->other == 1) {
			c->admits++;
			for (uint32_t q = 0; q < e->cpus && c->n_w < MAXW; q++) {
				c->w[c->n_w].node = e->nodes[q];
				c->w[c->n_w].s = c->req[e->job].start_s;
				c->w[c->n_w].e = c->req[e->job].end_s;
				c->n_w++;
			}
		}
		break;
	default:
		break;
	}
}

static void
rchk_init(struct rchk *c, const struct nl_batch_sys *sys, const struct nl_batch_scenario *sc,
	  const struct nl_batch_job *j, size_t n, const struct nl_batch_rsv_req *req)
{
	chk_init(&c->base, sys, sc, j, n);
	c->P = sys->cpus;
	c->on = malloc(c->P * sizeof(*c->on));
	c->since = calloc(c->P, sizeof(*c->since));
	for (uint32_t k = 0; k < c->P; k++)
		c->on[k] = (size_t)-1;
	c->n_w = 0;
	c->req = req;
	c->admits = c->preempts = 0;
}

static void
rchk_fini(struct rchk *c)
{
	chk_fini(&c->base);
	free(c->on);
	free(c->since);
}

/* ---- workloads ---- */

static void
random_jobs(struct nl_rng *r, struct nl_batch_job *j, size_t n, uint32_t P)
{
	double t = 0;

	for (size_t i = 0; i < n; i++) {
		double u = nl_rng_unif(r);

		memset(&j[i], 0, sizeof(j[i]));
		if (nl_rng_unif(r) > 0.2)
			t += floor(nl_rng_exp(r, 40));
		j[i].submit_s = t;
		j[i].run_s = floor(nl_rng_exp(r, 400));
		j[i].est_s = floor(j[i].run_s * (1 + 2 * nl_rng_unif(r))) + 1; /* >= run */
		j[i].cpus = u < 0.5 ? 1 : u < 0.9 ? 1 + (uint32_t)(nl_rng_u64(r) % 6) :
			    1 + (uint32_t)(nl_rng_u64(r) % P);
		j[i].threads = 1;
		j[i].procs = j[i].cpus;
		j[i].user_queue = -1;
		j[i].swf_id = (int64_t)i + 1;
		j[i].user = (int32_t)(i % 7);
	}
}

static void
random_reqs(struct nl_rng *r, struct nl_batch_rsv_req *q, size_t m, double span, uint32_t P)
{
	static const char *const owners[] = { "userA", "userX", "userZ" };

	for (size_t k = 0; k < m; k++) {
		memset(&q[k], 0, sizeof(q[k]));
		q[k].at_s = floor(nl_rng_unif(r) * span);
		q[k].start_s = q[k].at_s + 60 + floor(nl_rng_unif(r) * 3000);
		q[k].end_s = q[k].start_s + 60 + floor(nl_rng_unif(r) * 1500);
		q[k].nodes = 1 + (uint32_t)(nl_rng_u64(r) % (P / 3));
		snprintf(q[k].owner, sizeof(q[k].owner), "%s", owners[k % 3]);
	}
}

static struct nl_batch_sys
one_queue(uint32_t P)
{
	struct nl_batch_sys s;

	chk_one_queue(&s, P);
	return s;
}

static struct nl_batch_scenario
scen(enum nl_batch_policy p)
{
	struct nl_batch_scenario sc;

	memset(&sc, 0, sizeof(sc));
	snprintf(sc.name, sizeof(sc.name), "%s", nl_batch_policy_name(p));
	sc.policy = p;
	sc.qsel = NL_BATCH_QSEL_FIXED;
	sc.fixed_queue = 0;
	return sc;
}

/* Run with a fresh manager on policy src. @return engine rc. */
static int
run(const struct nl_batch_sys *sys, const struct nl_batch_scenario *sc, struct nl_batch_job *j,
    size_t n, const char *src, size_t len, struct nl_batch_rsv_req *req, size_t m,
    struct nl_batch_stats *st, struct rchk *c)
{
	struct nl_batch_rsv rv = { .epoch_s = 1.7e9, .history_s = 86400, .req = req, .n_req = m };
	struct nl_batch_hooks hk = { rchk_on_ev, c };
	int rc = nl_plus_create(src, len, sys->cpus, &rv.plus, NULL);

	if (rc != 0)
		return rc;
	rc = nl_batch_run_rsv(sys, sc, j, n, &rv, st, c != NULL ? &hk : NULL);
	nl_plus_free(rv.plus);
	return rc;
}

/* ---- tests ---- */

/* R3: no request: the node-level engine gives nl_batch_run()'s schedule, job by job. */
static void
t_no_request_same_schedule(uint64_t seed)
{
	const uint32_t P = 24;
	const size_t n = 1500;
	struct nl_batch_sys sys = one_queue(P);
	struct nl_batch_job *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	struct nl_rng r;

	nl_rng_seed(&r, seed);
	random_jobs(&r, a, n, P);
	for (int p = NL_BATCH_FCFS; p <= NL_BATCH_FIRSTFIT; p++) {
		struct nl_batch_scenario sc = scen((enum nl_batch_policy)p);
		struct nl_batch_stats s1, s2;
		struct rchk c;
		size_t diff = 0;
		char name[512];

		memcpy(b, a, n * sizeof(*a));
		rchk_init(&c, &sys, &sc, b, n, NULL);
		int rc1 = nl_batch_run(&sys, &sc, a, n, &s1, NULL);
		int rc2 = run(&sys, &sc, b, n, permissive, sizeof(permissive) - 1, NULL, 0, &s2, &c);

		chk_done(&c.base);
		for (size_t i = 0; i < n; i++)
			diff += a[i].start_s != b[i].start_s;
		snprintf(name, sizeof(name), "R3 %s: no request: same start for all %zu jobs as "
			 "without nodes (differ %zu, rc %d %d)", sc.name, n, diff, rc1, rc2);
		ok(rc1 == 0 && rc2 == 0 && diff == 0, name);
		snprintf(name, sizeof(name), "%s node bookkeeping and I1-I3 hold (%lu errors: %s)",
			 sc.name, c.base.errors, c.base.first);
		ok(c.base.errors == 0, name);
		rchk_fini(&c);
		random_jobs(&r, a, n, P); /* fresh inputs for the next policy */
	}
	free(a);
	free(b);
}

/* R1, R2, R4 with a permissive policy (it preempts) and with Fig. 8 (it must not). */
static void
t_random_streams(uint64_t seed)
{
	const uint32_t P = 32;
	const size_t n = 1200, m = 150;
	struct nl_batch_sys sys = one_queue(P);
	struct nl_batch_job *j = malloc(n * sizeof(*j)), *j0 = malloc(n * sizeof(*j));
	struct nl_batch_rsv_req *q = malloc(m * sizeof(*q));
	size_t f8len;
	char *fig8 = read_policy("config/policies/fig8-running-jobs.cad", &f8len);
	struct nl_rng r;
	char name[512];

	nl_rng_seed(&r, seed ^ 0x5eed);
	random_jobs(&r, j0, n, P);
	random_reqs(&r, q, m, j0[n - 1].submit_s, P);
	for (int p = NL_BATCH_FCFS; p <= NL_BATCH_FIRSTFIT; p++) {
		struct nl_batch_scenario sc = scen((enum nl_batch_policy)p);
		uint64_t preempted[2] = { 0, 0 };

		for (int pol = 0; pol < 2; pol++) {
			struct nl_batch_stats st;
			struct rchk c;
			unsigned long acc = 0, ref = 0, pre = 0;

			memcpy(j, j0, n * sizeof(*j));
			rchk_init(&c, &sys, &sc, j, n, q);
			int rc = pol == 0 ? run(&sys, &sc, j, n, permissive, sizeof(permissive) - 1,
						q, m, &st, &c) :
					    run(&sys, &sc, j, n, fig8, f8len, q, m, &st, &c);

			chk_done(&c.base);
			for (size_t k = 0; k < m; k++) {
				acc += q[k].outcome == NL_BATCH_RSV_ACCEPTED;
				ref += q[k].outcome >= NL_BATCH_RSV_REFUSED_POLICY;
				pre += q[k].preempted;
			}
			preempted[pol] = st.preempted;
			snprintf(name, sizeof(name), "%s/%s: R1 no job inside a window, R4 all jobs "
				 "done once, I1-I3 (rc %d, %lu errors: %s)", sc.name,
				 pol ? "fig8" : "permissive", rc, c.base.errors, c.base.first);
			ok(rc == 0 && c.base.errors == 0, name);
			snprintf(name, sizeof(name), "%s/%s: R2 accepted %lu + refused %lu == %zu "
				 "requested; stats agree (%llu, %llu+%llu+%llu); %lu ADMIT events",
				 sc.name, pol ? "fig8" : "permissive", acc, ref, m,
				 (unsigned long long)st.rsv_accepted,
				 (unsigned long long)st.rsv_refused_policy,
				 (unsigned long long)st.rsv_refused_space,
				 (unsigned long long)st.rsv_invalid, c.admits);
			ok(acc + ref == m && st.rsv_requests == m && st.rsv_accepted == acc &&
				   st.rsv_refused_policy + st.rsv_refused_space + st.rsv_invalid == ref &&
				   c.admits == acc && acc > 0,
			   name);
			snprintf(name, sizeof(name), "%s/%s: preemptions counted alike by the engine "
				 "(%llu), the requests (%lu) and the events (%lu)", sc.name,
				 pol ? "fig8" : "permissive", (unsigned long long)st.preempted, pre,
				 c.preempts);
			ok(st.preempted == pre && pre == c.preempts, name);
			rchk_fini(&c);
		}
		snprintf(name, sizeof(name), "%s: the permissive policy preempts running jobs "
			 "(%llu), seed 004 Fig. 8 never does (%llu)", sc.name,
			 (unsigned long long)preempted[0], (unsigned long long)preempted[1]);
		ok(preempted[0] > 0 && preempted[1] == 0, name);
	}
	free(fig8);
	free(j);
	free(j0);
	free(q);
}

/* ---- the node choice, against the manager's own view ---- */

/* What a START should have taken: the idle nodes (our bookkeeping) whose next hold by the
 * manager (nl_plus_node_next_hold()) is at or after the job's estimated end; the job takes
 * the `cpus` of them first by (next hold, id), or all of them, in id order, when it needs
 * every one (nl_batch.h: "nearest next hold first"). */
struct choice {
	struct rchk c;
	struct nl_plus *plus;
	double epoch_s;
	const struct nl_batch_job *j;
	struct { double h; uint32_t k; } *el;
	unsigned long starts, checked, wrong;
	char first[200];
};

static int
cmp_el(const void *a, const void *b)
{
	const struct { double h; uint32_t k; } *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

static void
choice_on_ev(void *arg, const struct nl_batch_ev *e)
{
	struct choice *ch = arg;
	bool at_window_end = false;

	if (e->kind == NL_BATCH_EV_START && e->nodes != NULL) {
		uint32_t m = 0, P = ch->c.P;
		double est = ch->j[e->job].est_s;

		for (unsigned int w = 0; w < ch->c.n_w; w++)
			at_window_end |= ch->c.w[w].e == e->t_s; /* the manager moved on already */
		for (uint32_t k = 0; k < P; k++) {
			int64_t h = nl_plus_node_next_hold(ch->plus, k,
							   (int64_t)floor(ch->epoch_s + e->t_s));
			double hs = h == INT64_MAX ? INFINITY : (double)h - ch->epoch_s;

			if (ch->c.on[k] == (size_t)-1 && e->t_s + est <= hs) {
				ch->el[m].h = hs;
				ch->el[m++].k = k;
			}
		}
		qsort(ch->el, m, sizeof(*ch->el), cmp_el);
		if (m == e->cpus)
			for (uint32_t q = 0; q < m; q++)
				ch->el[q].h = 0; /* every one: id order */
		qsort(ch->el, m, sizeof(*ch->el), cmp_el);
		ch->starts++;
		if (!at_window_end) {
			bool same = m >= e->cpus;

			for (uint32_t q = 0; same && q < e->cpus; q++)
				same = ch->el[q].k == e->nodes[q];
			ch->checked++;
			if (!same && ch->wrong++ == 0)
				snprintf(ch->first, sizeof(ch->first), "job %zu at %g: %u of %u eligible, "
					 "first node %u, expected %u", e->job, e->t_s, e->cpus, m,
					 e->nodes[0], m ? ch->el[0].k : UINT32_MAX);
		}
	}
	rchk_on_ev(&ch->c, e);
}

/* Every START takes the nodes the contract says, on machines of 1 to 5 bitmap words, with a
 * policy that preempts and with Fig. 8. */
static void
t_node_choice(uint64_t seed)
{
	const uint32_t Ps[] = { 48, 200, 300 };
	size_t f8len;
	char *fig8 = read_policy("config/policies/fig8-running-jobs.cad", &f8len);

	for (unsigned int pi = 0; pi < 3; pi++) {
		const uint32_t P = Ps[pi];
		const size_t n = 1500, m = 200;
		struct nl_batch_sys sys = one_queue(P);
		struct nl_batch_job *j0 = malloc(n * sizeof(*j0)), *j = malloc(n * sizeof(*j));
		struct nl_batch_rsv_req *q0 = malloc(m * sizeof(*q0)), *q = malloc(m * sizeof(*q));
		struct nl_rng r;

		nl_rng_seed(&r, seed ^ (0xc401ce + P));
		random_jobs(&r, j0, n, P);
		random_reqs(&r, q0, m, j0[n - 1].submit_s, P);
		for (int p = NL_BATCH_FCFS; p <= NL_BATCH_FIRSTFIT; p++) {
			for (int pol = 0; pol < 2; pol++) {
				struct nl_batch_scenario sc = scen((enum nl_batch_policy)p);
				struct choice ch = { .epoch_s = 1.7e9, .j = j };
				struct nl_batch_rsv rv = { .epoch_s = 1.7e9, .history_s = 86400,
							   .req = q, .n_req = m };
				struct nl_batch_hooks hk = { choice_on_ev, &ch };
				struct nl_batch_stats st;
				char name[512];
				int rc;

				memcpy(j, j0, n * sizeof(*j));
				memcpy(q, q0, m * sizeof(*q));
				rchk_init(&ch.c, &sys, &sc, j, n, q);
				ch.el = malloc(P * sizeof(*ch.el));
				rc = pol == 0 ? nl_plus_create(permissive, sizeof(permissive) - 1, P,
							       &rv.plus, NULL) :
						nl_plus_create(fig8, f8len, P, &rv.plus, NULL);
				ch.plus = rv.plus;
				if (rc == 0)
					rc = nl_batch_run_rsv(&sys, &sc, j, n, &rv, &st, &hk);
				chk_done(&ch.c.base);
				snprintf(name, sizeof(name), "P = %u %s/%s: every start takes the "
					 "eligible nodes of nearest next hold, then lowest id (%lu of "
					 "%lu starts checked, %lu wrong%s%s; %llu accepted, %llu "
					 "preempted; rc %d, %lu errors)", P, sc.name,
					 pol ? "fig8" : "permissive", ch.checked, ch.starts, ch.wrong,
					 ch.wrong ? ": " : "", ch.first,
					 (unsigned long long)st.rsv_accepted,
					 (unsigned long long)st.preempted, rc, ch.c.base.errors);
				ok(rc == 0 && ch.c.base.errors == 0 && ch.wrong == 0 &&
					   ch.checked > n / 2 && st.rsv_accepted > 0,
				   name);
				nl_plus_free(rv.plus);
				free(ch.el);
				rchk_fini(&ch.c);
			}
		}
		free(j0);
		free(j);
		free(q0);
		free(q);
	}
	free(fig8);
}

static struct nl_batch_rsv_req
req(double at, double start, double end, uint32_t nodes)
{
	struct nl_batch_rsv_req q;

	memset(&q, 0, sizeof(q));
	q.at_s = at;
	q.start_s = start;
	q.end_s = end;
	q.nodes = nodes;
	snprintf(q.owner, sizeof(q.owner), "userA");
	return q;
}

struct nodes_seen {
	uint32_t start_nodes[8][4];
	uint32_t rsv_nodes[4];
};

static void
seen_on_ev(void *arg, const struct nl_batch_ev *e)
{
	struct nodes_seen *s = arg;

	if (e->kind == NL_BATCH_EV_START && e->job < 8)
		memcpy(s->start_nodes[e->job], e->nodes, (e->cpus < 4 ? e->cpus : 4) * 4);
	if (e->kind == NL_BATCH_EV_ADMIT && e->other == 1)
		memcpy(s->rsv_nodes, e->nodes, (e->cpus < 4 ? e->cpus : 4) * 4);
}

/* P = 4. A (4 nodes, run = est = 100) starts at 0. At 10 a request for 2 nodes over
 * [50, 150): Fig. 8 refuses it (A would still run); a permissive policy accepts, A is
 * preempted at 50 and restarts at 150, when the window ends; B (1 node, est 30) submitted
 * at 60 runs at once on a node outside the window. */
static void
t_preempt_and_restart(void)
{
	struct nl_batch_sys sys = one_queue(4);
	struct nl_batch_scenario sc = scen(NL_BATCH_FIRSTFIT);
	struct nl_batch_job j[2];
	struct nl_batch_rsv_req q[1];
	struct nl_batch_stats st;
	struct nl_batch_rsv rv = { .epoch_s = 1.7e9, .history_s = 0, .req = q, .n_req = 1 };
	struct nodes_seen seen;
	struct nl_batch_hooks hk = { seen_on_ev, &seen };
	size_t f8len;
	char *fig8 = read_policy("config/policies/fig8-running-jobs.cad", &f8len);
	char name[512];
	int rc;

	j[0] = chk_job(0, 100, 100, 4);
	j[1] = chk_job(60, 30, 30, 1);
	q[0] = req(10, 50, 150, 2);
	rc = run(&sys, &sc, j, 2, fig8, f8len, q, 1, &st, NULL);
	snprintf(name, sizeof(name), "Fig. 8 refuses a window over a running job (outcome %u, "
		 "clause '%s'); A runs 0-100 undisturbed", q[0].outcome, q[0].why);
	ok(rc == 0 && q[0].outcome == NL_BATCH_RSV_REFUSED_POLICY && j[0].start_s == 0 &&
		   j[0].end_s == 100 && st.preempted == 0 && strstr(q[0].why, "finishTimes") != NULL,
	   name);

	j[0] = chk_job(0, 100, 100, 4);
	j[1] = chk_job(60, 30, 30, 1);
	q[0] = req(10, 50, 150, 2);
	memset(&seen, 0, sizeof(seen));
	rc = nl_plus_create(permissive, sizeof(permissive) - 1, 4, &rv.plus, NULL);
	if (rc == 0)
		rc = nl_batch_run_rsv(&sys, &sc, j, 2, &rv, &st, &hk);
	nl_plus_free(rv.plus);
	snprintf(name, sizeof(name), "permissive: accepted, A preempted at 50 (%llu, %.0f CPU s "
		 "lost), restarts at 150 and ends at 250 (start %g end %g)",
		 (unsigned long long)st.preempted, st.preempted_cpu_s, j[0].start_s, j[0].end_s);
	ok(rc == 0 && q[0].outcome == NL_BATCH_RSV_ACCEPTED && q[0].preempted == 1 &&
		   st.preempted == 1 && st.preempted_cpu_s == 200 && j[0].start_s == 150 &&
		   j[0].end_s == 250,
	   name);
	snprintf(name, sizeof(name), "B starts at its submit time 60 on node %u, not one of the "
		 "reserved %u, %u", seen.start_nodes[1][0], seen.rsv_nodes[0], seen.rsv_nodes[1]);
	ok(j[1].start_s == 60 && seen.start_nodes[1][0] != seen.rsv_nodes[0] &&
		   seen.start_nodes[1][0] != seen.rsv_nodes[1],
	   name);
	free(fig8);
}

/* P = 2, a window [100, 200) on one node accepted at 0. C (2 nodes, est 200) at 10 cannot
 * start before 200. D (1 node, est 50) at 10 fits before the window: it takes the held node
 * (nearest hold first), so E (1 node, est 500) at 20 still finds the free one. */
static void
t_keep_off_and_best_fit(void)
{
	struct nl_batch_sys sys = one_queue(2);
	struct nl_batch_scenario sc = scen(NL_BATCH_FIRSTFIT);
	struct nl_batch_job j[3];
	struct nl_batch_rsv_req q[1];
	struct nl_batch_stats st;
	struct nl_batch_rsv rv = { .epoch_s = 0, .history_s = 0, .req = q, .n_req = 1 };
	struct nodes_seen seen;
	struct nl_batch_hooks hk = { seen_on_ev, &seen };
	char name[512];
	int rc;

	j[0] = chk_job(10, 150, 200, 2);
	j[1] = chk_job(10, 40, 50, 1);
	j[2] = chk_job(20, 400, 500, 1);
	q[0] = req(0, 100, 200, 1);
	memset(&seen, 0, sizeof(seen));
	rc = nl_plus_create(permissive, sizeof(permissive) - 1, 2, &rv.plus, NULL);
	if (rc == 0)
		rc = nl_batch_run_rsv(&sys, &sc, j, 3, &rv, &st, &hk);
	nl_plus_free(rv.plus);
	snprintf(name, sizeof(name), "D takes the reserved node %u (nearest hold) at 10; E the "
		 "other at 20 (D node %u start %g, E node %u start %g)", seen.rsv_nodes[0],
		 seen.start_nodes[1][0], j[1].start_s, seen.start_nodes[2][0], j[2].start_s);
	ok(rc == 0 && j[1].start_s == 10 && seen.start_nodes[1][0] == seen.rsv_nodes[0] &&
		   j[2].start_s == 20 && seen.start_nodes[2][0] != seen.rsv_nodes[0],
	   name);
	snprintf(name, sizeof(name), "C (2 nodes, est 200) waits for E's end at 420, not "
		 "inside the window; nothing preempted (C start %g, preempted %llu)", j[0].start_s,
		 (unsigned long long)st.preempted);
	ok(rc == 0 && j[0].start_s == 420 && st.preempted == 0, name);
}

/* P = 1, a window [100, 200) on the node accepted at 0. X (est 90) submitted at 10 ends by
 * its estimate exactly when the window starts: it may run (a job that ends at the hold does
 * not overlap it); Y (est 91) submitted at 11 must wait for the window's end. FCFS and
 * FirstFit: both decide the fit by the nodes' next holds (nodes_fit(), node_ok()). */
static void
t_end_at_the_hold(void)
{
	static const enum nl_batch_policy pol[] = { NL_BATCH_FCFS, NL_BATCH_FIRSTFIT };
	struct nl_batch_sys sys = one_queue(1);

	for (size_t p = 0; p < 2; p++) {
		struct nl_batch_scenario sc = scen(pol[p]);
		struct nl_batch_job j[2];
		struct nl_batch_rsv_req q[1];
		struct nl_batch_stats st;
		struct nl_batch_rsv rv = { .epoch_s = 0, .history_s = 0, .req = q, .n_req = 1 };
		char name[256];
		int rc;

		j[0] = chk_job(10, 90, 90, 1);
		j[1] = chk_job(11, 10, 91, 1);
		q[0] = req(0, 100, 200, 1);
		rc = nl_plus_create(permissive, sizeof(permissive) - 1, 1, &rv.plus, NULL);
		if (rc == 0)
			rc = nl_batch_run_rsv(&sys, &sc, j, 2, &rv, &st, NULL);
		nl_plus_free(rv.plus);
		snprintf(name, sizeof(name), "%s: X ending at the window's start runs at 10 (%g), "
			 "Y (one second longer) after the window at 200 (%g)",
			 nl_batch_policy_name(pol[p]), j[0].start_s, j[1].start_s);
		ok(rc == 0 && q[0].outcome == NL_BATCH_RSV_ACCEPTED && j[0].start_s == 10 &&
			   j[1].start_s == 200 && st.preempted == 0,
		   name);
	}
}

/* Arguments the engine refuses. */
static void
t_refusals(void)
{
	struct nl_batch_sys sys = one_queue(4);
	struct nl_batch_scenario sc = scen(NL_BATCH_EASY);
	struct nl_batch_job j[1] = { chk_job(0, 10, 10, 1) };
	struct nl_batch_rsv_req q[1] = { req(0, 10, 20, 0) };
	struct nl_batch_stats st;
	struct nl_batch_rsv rv = { .history_s = 0, .req = q, .n_req = 0 };
	int r1, r2, r3;

	nl_plus_create(permissive, sizeof(permissive) - 1, 4, &rv.plus, NULL);
	r1 = nl_batch_run_rsv(&sys, &sc, j, 1, &rv, &st, NULL);      /* EASY */
	sc = scen(NL_BATCH_FIRSTFIT);
	rv.n_req = 1;
	r2 = nl_batch_run_rsv(&sys, &sc, j, 1, &rv, &st, NULL);      /* 0 nodes */
	sys.cpus = 5;
	sys.q[0].cpu_max = 5;
	rv.n_req = 0;
	r3 = nl_batch_run_rsv(&sys, &sc, j, 1, &rv, &st, NULL);      /* 5 CPUs, 4 nodes */
	nl_plus_free(rv.plus);
	ok(r1 == -EINVAL && r2 == -EINVAL && r3 == -EINVAL,
	   "refused: EASY with reservations, a request for 0 nodes, P != the manager's nodes");
}

static const char cfg_ok[] =
	"[batch]\ncpus = 64\nqueues = q\nscenarios = ff\n"
	"[queue.q]\ncpu_max = 64\n"
	"[scenario.ff]\npolicy = firstfit\nqueue_select = q\n"
	"[reservations]\npolicy_file = policies/fig8-running-jobs.cad\nrate_per_h = 2\n"
	"lead_min_s = 600\nlead_max_s = 7200\ndur_min_s = 300\ndur_max_s = 3600\n"
	"nodes_min = 2\nnodes_max = 5\nowners = userA, userX\nseed = 9\n";

static int
parse(const char *text, struct nl_batch_cfg *c, char *err, size_t len)
{
	struct nl_cfg *cfg;
	int rc = nl_cfg_load_string(&cfg, "t.ini", text, err, len);

	if (rc != 0)
		return rc;
	rc = nl_batch_cfg_parse(cfg, c);
	if (rc == 0)
		rc = nl_cfg_check_unused(cfg);
	snprintf(err, len, "%s", cfg->err);
	nl_cfg_free(cfg);
	return rc;
}

static void
t_config_and_generator(void)
{
	struct nl_batch_cfg c;
	struct nl_batch_rsv_req *a = NULL, *b = NULL;
	size_t na = 0, nb = 0, bad = 0;
	char err[512], name[640];
	int rc = parse(cfg_ok, &c, err, sizeof(err));

	ok(rc == 0 && c.rsv.on && c.rsv.rate_per_h == 2 && c.rsv.nodes_min == 2 &&
		   c.rsv.nodes_max == 5 && c.rsv.n_owners == 2 && c.rsv.history_s == 604800,
	   "[reservations] parsed, history_s defaults to 7 days (Fig. 7's look-back)");
	rc = nl_batch_rsv_generate(&c.rsv, 1000, 1000 + 1000 * 3600.0, &a, &na);
	nl_batch_rsv_generate(&c.rsv, 1000, 1000 + 1000 * 3600.0, &b, &nb);
	for (size_t k = 0; k < na; k++) {
		const struct nl_batch_rsv_req *q = &a[k];
		double lead = q->start_s - q->at_s, dur = q->end_s - q->start_s;

		bad += q->at_s < 1000 || (k && q->at_s < a[k - 1].at_s) || lead < 600 ||
		       lead > 7200 || dur < 300 || dur > 3600 || q->nodes < 2 || q->nodes > 5 ||
		       floor(q->start_s) != q->start_s ||
		       (strcmp(q->owner, "userA") != 0 && strcmp(q->owner, "userX") != 0);
	}
	snprintf(name, sizeof(name), "generator: %zu requests in 1000 h at 2/h (Poisson: 2000 +- "
		 "150), sorted, all within the ranges (%zu bad), same stream twice", na, bad);
	ok(rc == 0 && na > 1850 && na < 2150 && bad == 0 && na == nb &&
		   memcmp(a, b, na * sizeof(*a)) == 0,
	   name);
	free(a);
	free(b);

	static const struct {
		const char *from, *to, *want;
	} bad_cfg[] = {
		{ "policy = firstfit", "policy = easy", "t.ini:8: [scenario.ff] policy" },
		{ "lead_max_s = 7200", "lead_max_s = 60", "t.ini:14: [reservations] lead_max_s" },
		{ "nodes_max = 5", "nodes_max = 65", "t.ini:18: [reservations] nodes_max" },
		{ "owners = userA, userX", "owners = user A!", "t.ini:19: [reservations] owners" },
		{ "rate_per_h = 2", "rate_per_h = 2\nlead = 3", "t.ini:13: unknown key 'lead'" },
		{ "policy_file = policies/fig8-running-jobs.cad\n", "", "[reservations] policy_file" },
	};
	for (unsigned int k = 0; k < sizeof(bad_cfg) / sizeof(bad_cfg[0]); k++) {
		char text[2048];
		const char *p = strstr(cfg_ok, bad_cfg[k].from);
		size_t pre = (size_t)(p - cfg_ok);

		snprintf(text, sizeof(text), "%.*s%s%s", (int)pre, cfg_ok, bad_cfg[k].to,
			 p + strlen(bad_cfg[k].from));
		rc = parse(text, &c, err, sizeof(err));
		snprintf(name, sizeof(name), "bad config refused with file:line: '%s' -> %s",
			 bad_cfg[k].to, err);
		ok(rc != 0 && strstr(err, bad_cfg[k].want) != NULL, name);
	}
}

int
main(void)
{
	const char *s = getenv("NL_TEST_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 0) : 20261121;

	printf("# seed %llu (NL_TEST_SEED)\n", (unsigned long long)seed);
	t_no_request_same_schedule(seed);
	t_random_streams(seed);
	t_node_choice(seed);
	t_preempt_and_restart();
	t_keep_off_and_best_fit();
	t_end_at_the_hold();
	t_refusals();
	t_config_and_generator();
	return nl_tap_done();
}
