/* SPDX-License-Identifier: BSD-3-Clause */
/* Policies against a recording engine: least-loaded picking, NLSC routing and assignment,
 * 2LSC group/global decisions, static scheduling start points (seed 002 §3.1, §3.3, §4.4). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "nl_pick.h"
#include "nl_policy.h"
#include "nl_policy_p2c.h"
#include "nl_rng.h"
#include "nl_tap.h"

enum { CALL_NONE, CALL_FWD, CALL_DISP, CALL_REJ };

struct mock {
	int call;
	int n_calls;
	uint32_t to;
	uint32_t mach[NL_TASK_MAX_SPLIT];
	unsigned int n;
	enum nl_reject_reason why;
	struct nl_mach_load load[256];
	unsigned int qlen[64];
	bool pass_on;          /* pass() takes every hop (nl_policy.h I6) */
	uint32_t path[64];     /* managers passed, in order */
	unsigned int n_path;
};

static void
m_fwd(void *c, struct nl_task *t, uint32_t to, double now)
{
	struct mock *m = c;

	(void)now;
	t->hops++; /* one transfer, as the engines count it */
	m->call = CALL_FWD;
	m->n_calls++;
	m->to = to;
}

static void
m_disp(void *c, struct nl_task *t, const uint32_t *mach, unsigned int n, double now)
{
	struct mock *m = c;

	(void)t;
	(void)now;
	m->call = CALL_DISP;
	m->n_calls++;
	m->n = n;
	memcpy(m->mach, mach, n * sizeof(*mach));
}

static void
m_rej(void *c, struct nl_task *t, enum nl_reject_reason why, double now)
{
	struct mock *m = c;

	(void)t;
	(void)now;
	m->call = CALL_REJ;
	m->n_calls++;
	m->why = why;
}

static const struct nl_mach_load *
m_load(void *c, uint32_t mgr, double now)
{
	(void)mgr;
	(void)now;
	return ((struct mock *)c)->load;
}

static unsigned int
m_qlen(void *c, uint32_t mgr)
{
	return ((struct mock *)c)->qlen[mgr];
}

static bool
m_pass(void *c, struct nl_task *t, uint32_t to, double now)
{
	struct mock *m = c;

	(void)now;
	if (!m->pass_on || m->n_path >= 64)
		return false;
	t->hops++;
	m->path[m->n_path++] = to;
	return true;
}

static const struct nl_engine_ops mock_ops = {
	.forward = m_fwd, .dispatch = m_disp, .reject = m_rej, .load = m_load, .queue_len = m_qlen,
	.pass = m_pass,
};

/* Outcome of one decide: the terminal op and its arguments. */
struct outcome {
	int call;
	uint32_t to;
	unsigned int n;
	uint32_t mach[NL_TASK_MAX_SPLIT];
	enum nl_reject_reason why;
	uint32_t path[64];
	unsigned int n_path;
};

/* t decided at `start`, then at every manager it is forwarded to, until a dispatch or a
 * reject; pass() on or off. false when a decide did not end in exactly one op. */
static bool
run_to_end(struct nl_sched *s, struct mock *m, const struct nl_engine *eng, struct nl_task *t,
	   uint32_t start, double now, bool pass_on, struct outcome *o)
{
	uint32_t mgr = start;

	memset(o, 0, sizeof(*o));
	for (unsigned int step = 0; step < 64; step++) {
		m->pass_on = pass_on;
		m->n_path = 0;
		m->call = CALL_NONE;
		m->n_calls = 0;
		s->ops->decide(s, mgr, t, now, eng);
		m->pass_on = false;
		if (m->n_calls != 1)
			return false;
		for (unsigned int i = 0; i < m->n_path && o->n_path < 64; i++)
			o->path[o->n_path++] = m->path[i];
		if (m->call != CALL_FWD)
			break;
		if (o->n_path < 64)
			o->path[o->n_path++] = m->to;
		mgr = m->to;
	}
	o->call = m->call;
	o->n = m->n;
	memcpy(o->mach, m->mach, sizeof(o->mach));
	o->why = m->why;
	return true;
}

/* I6: a task decided with every hop passed ends as the same task decided manager by manager
 * through forward(): the same managers in the same order, the same hop count, the same final
 * op. true if so. */
static bool
pass_matches_steps(struct nl_sched *s, struct mock *m, const struct nl_engine *eng,
		   const struct nl_task *t0, uint32_t start, double now)
{
	struct outcome a, b;
	struct nl_task ta = *t0, tb = *t0;

	if (!run_to_end(s, m, eng, &ta, start, now, false, &a) ||
	    !run_to_end(s, m, eng, &tb, start, now, true, &b))
		return false;
	if (a.call != b.call || a.n_path != b.n_path ||
	    memcmp(a.path, b.path, a.n_path * sizeof(a.path[0])) != 0 || ta.hops != tb.hops)
		return false;
	if (a.call == CALL_DISP)
		return a.n == b.n && memcmp(a.mach, b.mach, a.n * sizeof(a.mach[0])) == 0;
	return a.call != CALL_REJ || a.why == b.why;
}

/* 96 machines as paper-96: speed class = i / 16 (6 classes), vector = i % 16. */
static void
paper_machines(struct nl_machine *mach, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		memset(&mach[i], 0, sizeof(mach[i]));
		mach[i].speed_class = i / 16;
		mach[i].speed_ips = 40e6 + 20e6 * (i / 16);
		mach[i].link_bps = 10e6;
		mach[i].res.set = i % 16;
	}
}

static struct nl_task
task(uint64_t need, unsigned int L)
{
	struct nl_task t;

	memset(&t, 0, sizeof(t));
	t.need = need;
	t.n_split = (uint16_t)L;
	t.instr = 32e9;
	t.data_bits = 400e6;
	return t;
}

static void
test_pick(void)
{
	struct nl_machine mach[8];
	struct nl_mach_load ld[8];
	uint32_t cand[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, out[8];
	struct nl_mach_rate rate[8];

	memset(ld, 0, sizeof(ld));
	for (unsigned int i = 0; i < 8; i++) {
		memset(&mach[i], 0, sizeof(mach[i]));
		mach[i].speed_ips = 1;
		mach[i].link_bps = 1;
	}
	nl_mach_rates_build(mach, 8, rate);
	nl_tap_ok(nl_pick_least_loaded(cand, 8, rate, ld, 0, 1, 0, 4, out) == 4 && out[0] == 0 &&
		  out[1] == 1 && out[2] == 2 && out[3] == 3,
		  "pick: ties on idle equal machines go to the lowest ids, in order");
	ld[0].busy_until_vt = 5;
	ld[2].busy_until_vt = 3;
	ld[5].busy_until_vt = 1; /* in the past at now = 2: idle */
	nl_tap_ok(nl_pick_least_loaded(cand, 8, rate, ld, 2, 1, 0, 4, out) == 4 && out[0] == 1 &&
		  out[1] == 3 && out[2] == 4 && out[3] == 5,
		  "pick: busy machines are skipped for idle ones; a past busy_until counts as idle");
	nl_tap_ok(nl_pick_least_loaded(cand, 8, rate, ld, 2, 1, 0, 7, out) == 7 && out[6] == 2,
		  "pick: with L = 7 of 8, after the six idle machines the less busy one (2) is taken, not 0");
	mach[7].speed_ips = 4; /* faster: expected completion 0.25 */
	nl_mach_rates_build(mach, 8, rate);
	nl_tap_ok(nl_pick_least_loaded(cand, 8, rate, ld, 2, 1, 0, 1, out) == 1 && out[0] == 7,
		  "pick: on idle machines the fastest finishes first and is chosen");
	memset(ld, 0, sizeof(ld));
	mach[7].speed_ips = 1;
	nl_mach_rates_build(mach, 8, rate);
	nl_tap_ok(nl_pick_least_loaded(cand, 2, rate, ld, 0, 1, 0, 5, out) == 5 && out[0] == 0 &&
		  out[1] == 1 && out[2] == 0 && out[3] == 1 && out[4] == 0,
		  "pick: fewer machines than L: sub-tasks share them, spread round the least loaded");
	ld[1].busy_until_vt = NL_MACH_GONE_VT;
	ld[2].busy_until_vt = NL_MACH_GONE_VT;
	nl_tap_ok(nl_pick_least_loaded(cand, 8, rate, ld, 0, 1, 0, 4, out) == 4 && out[0] == 0 &&
		  out[1] == 3 && out[2] == 4 && out[3] == 5,
		  "pick: machines that left (busy_until = NL_MACH_GONE_VT) are never picked");
	for (unsigned int i = 2; i < 8; i++)
		ld[i].busy_until_vt = NL_MACH_GONE_VT;
	nl_tap_ok(nl_pick_least_loaded(cand, 8, rate, ld, 0, 1, 0, 4, out) == 4 && out[0] == 0 &&
		  out[1] == 0 && out[2] == 0 && out[3] == 0,
		  "pick: with fewer live machines than L, the live ones share the sub-tasks");
	ld[0].busy_until_vt = NL_MACH_GONE_VT;
	nl_tap_ok(nl_pick_least_loaded(cand, 8, rate, ld, 0, 1, 0, 4, out) == -ENOSPC,
		  "pick: a group whose machines all left is -ENOSPC");
	memset(ld, 0, sizeof(ld));
	nl_tap_ok(nl_pick_least_loaded(cand, 0, rate, ld, 0, 1, 0, 4, out) == -ENOSPC,
		  "pick: an empty group is -ENOSPC");
	nl_tap_ok(nl_pick_least_loaded(cand, 8, rate, ld, 0, 1, 0, 0, out) == -EINVAL &&
		  nl_pick_least_loaded(cand, 8, rate, ld, 0, 1, 0, NL_TASK_MAX_SPLIT + 1, out) == -EINVAL,
		  "pick: L = 0 or L > max is -EINVAL");
}

static void
test_nlsc(void)
{
	struct nl_machine mach[96];
	struct nl_sched_params p = { .n_res = 4, .mgr_service_vt = 0.5, .pick_service_vt = 1 };
	struct mock m;
	struct nl_engine eng = { &mock_ops, &m };
	struct nl_sched *s = NULL;
	struct nl_task t;

	memset(&m, 0, sizeof(m));
	paper_machines(mach, 96);
	nl_tap_ok(nl_sched_create(&s, &nl_policy_nlsc, &p, mach, 96) == 0 && s->n_mgr == 31,
		  "NLSC on 96 machines, N = 4: 31 managers");
	uint32_t leaf5 = nl_tree_find(s->tree, 4, 5), leaf6 = nl_tree_find(s->tree, 4, 6);

	t = task(5, 4);
	s->ops->decide(s, leaf5, &t, 0, &eng);
	bool mine = m.call == CALL_DISP && m.n == 4;

	for (unsigned int j = 0; mine && j < 4; j++)
		mine = mach[m.mach[j]].res.set == 5;
	nl_tap_ok(mine && m.mach[0] / 16 == 5 && m.mach[1] / 16 == 4,
		  "NLSC leaf: assigns L = 4 machines of its own vector, fastest idle first");
	nl_tap_ok(s->ops->service_vt(s, leaf5, &t) == 1 && s->ops->service_vt(s, leaf6, &t) == 0.5,
		  "NLSC service time: pick cost at the assigning leaf, routing cost elsewhere");
	s->ops->decide(s, leaf6, &t, 0, &eng);
	nl_tap_ok(m.call == CALL_FWD && m.to == s->tree->node[leaf6].parent,
		  "NLSC leaf: a task of another vector goes to the parent");
	s->ops->decide(s, 0, &t, 0, &eng);
	nl_tap_ok(m.call == CALL_FWD && m.to == nl_tree_find(s->tree, 1, 1),
		  "NLSC root: goes down on resource 1 of Delta");
	t = task(5, 0);
	s->ops->decide(s, leaf5, &t, 0, &eng);
	nl_tap_ok(m.call == CALL_REJ && m.why == NL_REJECT_BAD_TASK, "NLSC: L = 0 is rejected (bad task)");
	t = task(0x15, 4);
	s->ops->decide(s, leaf5, &t, 0, &eng);
	nl_tap_ok(m.call == CALL_REJ && m.why == NL_REJECT_BAD_TASK,
		  "NLSC: a vector wider than N is rejected (bad task)");
	nl_sched_free(s);

	/* Machines of vector 3 removed: a task needing 3 is rejected with a reason. */
	for (unsigned int i = 0; i < 96; i++)
		if (mach[i].res.set == 3)
			mach[i].res.set = 2;
	nl_sched_create(&s, &nl_policy_nlsc, &p, mach, 96);
	t = task(3, 4);
	m.n_calls = 0;
	m.call = CALL_NONE;
	uint32_t at = s->tree->leaf_node[0];

	for (int guard = 0; guard < 20 && m.call != CALL_REJ && m.call != CALL_DISP; guard++) {
		s->ops->decide(s, at, &t, 0, &eng);
		at = m.to;
	}
	nl_tap_ok(m.call == CALL_REJ && m.why == NL_REJECT_NO_MACHINE,
		  "NLSC: an empty group's task is rejected with reason no_machine");
	nl_sched_free(s);
}

static void
test_static_entry(void)
{
	struct nl_machine mach[96];
	struct nl_sched_params p = { .n_res = 4, .static_known = 2 };
	struct nl_sched *s = NULL;
	bool ok = true;
	unsigned int seen[16] = { 0 };

	paper_machines(mach, 96);
	nl_sched_create(&s, &nl_policy_nlsc, &p, mach, 96);
	for (uint64_t need = 0; need < 16; need++) {
		struct nl_task t = task(need, 4);

		for (uint64_t r = 0; r < 64; r++) {
			uint32_t e = s->ops->entry(s, &t, r * 0x9e3779b97f4a7c15ull);
			const struct nl_tree_node *nd = &s->tree->node[e];

			if (nd->level != 4 || (nd->prefix & 3) != (need & 3))
				ok = false;
			if (need == 0)
				seen[nd->prefix]++;
		}
	}
	nl_tap_ok(ok, "static k = 2: a task starts at a leaf whose resources 1-2 match Delta");
	nl_tap_ok(seen[0] && seen[4] && seen[8] && seen[12],
		  "static k = 2: all four leaves of that subtree are used as start points");
	nl_sched_free(s);
	p.static_known = 0;
	nl_sched_create(&s, &nl_policy_nlsc, &p, mach, 96);
	memset(seen, 0, sizeof(seen));
	struct nl_task t = task(0, 4);

	for (uint64_t r = 0; r < 16; r++)
		seen[s->tree->node[s->ops->entry(s, &t, r)].prefix]++;
	ok = true;
	for (unsigned int i = 0; i < 16; i++)
		ok &= seen[i] == 1;
	nl_tap_ok(ok, "no static knowledge: a task may appear at any of the 16 leaves");
	nl_sched_free(s);
}

static void
test_2lsc(void)
{
	struct nl_machine mach[96];
	struct nl_sched_params p = { .n_res = 4, .pick_service_vt = 1, .global_base_vt = 32,
				     .global_per_group_vt = 0.5, .measure_period_vt = 50,
				     .grp_threshold = 1.0, .n_groups = 2 };
	struct mock m;
	struct nl_engine eng = { &mock_ops, &m };
	struct nl_sched *s = NULL;
	struct nl_task t;

	memset(&m, 0, sizeof(m));
	paper_machines(mach, 96);
	nl_tap_ok(nl_sched_create(&s, &nl_policy_2lsc, &p, mach, 96) == 0 && s->n_mgr == 3,
		  "2LSC G = 2: two group schedulers and one global");
	nl_tap_ok(nl_2lsc_group_of(s, 0) == 0 && nl_2lsc_group_of(s, 47) == 0 &&
		  nl_2lsc_group_of(s, 48) == 1 && nl_2lsc_group_of(s, 95) == 1,
		  "2LSC groups by CPU speed: the slow half is group 0, the fast half group 1");
	nl_tap_ok(s->ops->service_vt(s, 2, NULL) == 33 && s->ops->service_vt(s, 0, NULL) == 1,
		  "2LSC global service time grows with G: 32 + 2 x 0.5");
	t = task(5, 4);
	s->ops->decide(s, 0, &t, 0, &eng);
	nl_tap_ok(m.call == CALL_FWD && m.to == 2,
		  "2LSC group: 3 matching machines < L = 4 -> forwarded to the global scheduler");
	s->ops->decide(s, 2, &t, 0, &eng);
	bool ok = m.call == CALL_DISP && m.n == 4;

	for (unsigned int j = 0; ok && j < 4; j++)
		ok = mach[m.mach[j]].res.set == 5;
	nl_tap_ok(ok && m.mach[0] == 85 && m.mach[1] == 69 && m.mach[2] == 53 && m.mach[3] == 37,
		  "2LSC global: places sub-tasks on matching machines across groups, least loaded (fastest idle) first");
	/* Stale view: the machines it chose get busy, but until the next measurement the global
	 * scheduler does not see it. */
	m.load[85].busy_until_vt = 1000;
	s->ops->measure(s, 0, &eng);
	m.load[69].busy_until_vt = 1000;
	s->ops->decide(s, 2, &t, 10, &eng);
	nl_tap_ok(m.mach[0] == 69 && m.mach[1] == 53,
		  "2LSC global: uses its last measurement (69 looks idle although it is busy now)");
	s->ops->measure(s, 20, &eng);
	s->ops->decide(s, 2, &t, 20, &eng);
	nl_tap_ok(m.mach[0] == 53 && m.mach[1] == 37,
		  "2LSC global: after the next measurement it avoids the busy machines");
	/* Machines of vector 5 joined after the last measurement (they were gone then): the
	 * global scheduler measures again instead of refusing. */
	for (unsigned int i = 0; i < 96; i++)
		m.load[i].busy_until_vt = NL_MACH_GONE_VT;
	s->ops->measure(s, 30, &eng);
	for (unsigned int i = 0; i < 96; i++)
		m.load[i].busy_until_vt = 0;
	s->ops->decide(s, 2, &t, 40, &eng);
	nl_tap_ok(m.call == CALL_DISP && m.mach[0] == 85,
		  "2LSC global: a stale view with no live machine is refreshed, not a reject");
	for (unsigned int i = 0; i < 96; i++)
		m.load[i].busy_until_vt = NL_MACH_GONE_VT;
	s->ops->measure(s, 50, &eng);
	s->ops->decide(s, 2, &t, 50, &eng);
	nl_tap_ok(m.call == CALL_REJ && m.why == NL_REJECT_NO_MACHINE,
		  "2LSC global: when every matching machine has left, the task is rejected (no_machine)");
	nl_sched_free(s);

	/* G = 1: 6 matching machines >= L, so the group decides locally unless loaded. */
	memset(&m, 0, sizeof(m));
	p.n_groups = 1;
	nl_sched_create(&s, &nl_policy_2lsc, &p, mach, 96);
	s->ops->decide(s, 0, &t, 0, &eng);
	nl_tap_ok(m.call == CALL_DISP && m.n == 4, "2LSC G = 1: enough matching machines -> assigned locally");
	for (unsigned int i = 0; i < 96; i++)
		m.load[i].busy_until_vt = 100;
	m.qlen[0] = 3;
	nl_tap_ok(nl_2lsc_group_load(s, 0, 0, &eng, 4) == (96 + 12) / 96.0,
		  "2LSC group load = (busy machines + L x queued tasks) / machines");
	s->ops->decide(s, 0, &t, 0, &eng);
	nl_tap_ok(m.call == CALL_FWD && m.to == 1, "2LSC group: load above threshold -> forwarded");
	nl_sched_free(s);
	p.n_groups = 97;
	nl_tap_ok(nl_sched_create(&s, &nl_policy_2lsc, &p, mach, 96) == -EINVAL,
		  "2LSC: more groups than machines is -EINVAL");
}

/* Does machine `id` hold what t needs (exact matching, as the configurations here)? */
static bool
serves(const struct nl_machine *mach, uint32_t id, const struct nl_task *t)
{
	return mach[id].res.set == t->need;
}

/*
 * The ops contract (nl_policy.h I1, I5) for every policy, the shipped ones and the test-only
 * power-of-two choices, in one loop: random tasks (some bad, some needing vectors no machine
 * holds) at every manager, random loads with machines that left; each decide() ends in
 * exactly one forward (to an existing manager), dispatch (L machines, live, matching Delta)
 * or reject (a valid reason); entry() and top_mgr() name existing managers, service times
 * are positive; replace() picks a live matching machine of least expected completion, never
 * one that left, and -ENOSPC once none is live.
 */
static void
test_contract(void)
{
	struct pol {
		const char *name;
		const struct nl_policy_ops *ops;
		unsigned int groups, k;
		bool random; /* decisions draw random numbers: no decide-twice comparison */
	} pols[] = {
		{ "NLSC", &nl_policy_nlsc, 0, 0, false },
		{ "NLSC static k = 2", &nl_policy_nlsc, 0, 2, false },
		{ "2LSC G = 2", &nl_policy_2lsc, 2, 0, false },
		{ "2LSC G = 8", &nl_policy_2lsc, 8, 0, false },
		{ "p2c (test policy)", &nl_test_policy_p2c, 0, 0, true },
	};
	struct nl_machine mach[96];
	struct nl_rng rng;

	paper_machines(mach, 80); /* vectors 0..15, but 16 machines short: */
	for (unsigned int i = 80; i < 96; i++) { /* the last 16 hold only vectors 0..7 */
		mach[i] = mach[i - 16];
		mach[i].res.set = i % 8;
	}
	nl_rng_seed(&rng, nl_tap_seed(11));
	for (unsigned int pi = 0; pi < sizeof(pols) / sizeof(pols[0]); pi++) {
		struct nl_sched_params p = { .n_res = 4, .n_groups = pols[pi].groups,
					     .static_known = pols[pi].k, .mgr_service_vt = 0.5,
					     .pick_service_vt = 1, .global_base_vt = 32,
					     .global_per_group_vt = 0.5, .measure_period_vt = 50,
					     .grp_threshold = 1.0 };
		struct mock m;
		struct nl_engine eng = { .ops = &mock_ops, .ctx = &m };
		struct nl_sched *s;
		unsigned int bad_calls = 0, bad_fwd = 0, bad_disp = 0, bad_rej = 0, bad_meta = 0;
		unsigned int n_fwd = 0, n_disp = 0, n_rej = 0, bad_repl = 0, n_repl = 0;
		unsigned int n_pass = 0, bad_pass = 0;

		if (!nl_tap_ok(nl_sched_create(&s, pols[pi].ops, &p, mach, 96) == 0,
			       "%s: binds to 96 machines", pols[pi].name))
			continue;
		memset(&m, 0, sizeof(m));
		bad_meta += s->ops->top_mgr(s) >= s->n_mgr;
		for (unsigned int it = 0; it < 20000; it++) {
			struct nl_task t = task(nl_rng_u64(&rng) & 15, 1 + (unsigned int)(nl_rng_u64(&rng) % 8));
			uint32_t mgr = (uint32_t)(nl_rng_u64(&rng) % s->n_mgr), e, r;
			double now = (double)it;

			if (it % 97 == 0)
				t.n_split = 0;            /* bad task */
			if (it % 89 == 0)
				t.need |= UINT64_C(1) << 7; /* wider than N */
			for (unsigned int i = 0; i < 96; i++) {
				uint64_t x = nl_rng_u64(&rng) % 100;

				m.load[i].busy_until_vt = x < 3 ? NL_MACH_GONE_VT : now + (double)(x % 40);
			}
			for (uint32_t q = 0; q < s->n_mgr && q < 64; q++)
				m.qlen[q] = (unsigned int)(nl_rng_u64(&rng) % 4);
			e = s->ops->entry(s, &t, nl_rng_u64(&rng));
			bad_meta += e >= s->n_mgr || !(s->ops->service_vt(s, mgr, &t) > 0);
			if (s->ops->measure != NULL) /* the global picks on its measurement */
				s->ops->measure(s, now, &eng);
			m.call = CALL_NONE;
			m.n_calls = 0;
			s->ops->decide(s, mgr, &t, now, &eng);
			bad_calls += m.n_calls != 1;
			switch (m.call) {
			case CALL_FWD:
				n_fwd++;
				bad_fwd += m.to >= s->n_mgr;
				break;
			case CALL_DISP:
				n_disp++;
				bad_disp += m.n != t.n_split;
				for (unsigned int j = 0; j < m.n; j++)
					bad_disp += m.mach[j] >= 96 || !serves(mach, m.mach[j], &t) ||
						    m.load[m.mach[j]].busy_until_vt >= NL_MACH_GONE_VT;
				break;
			case CALL_REJ:
				n_rej++;
				bad_rej += m.why <= NL_REJECT_NONE || m.why >= NL_REJECT_MAX;
				break;
			default:
				break;
			}
			if (it % 4 == 0 && !pols[pi].random) {
				n_pass++;
				bad_pass += !pass_matches_steps(s, &m, &eng, &t, mgr, now);
			}
			if (t.n_split == 0 || (t.need & ~UINT64_C(15)) != 0)
				continue;
			n_repl++;
			if (s->ops->replace(s, &t, m.load, now, &r) == 0) {
				uint32_t best;

				bad_repl += r >= 96 || !serves(mach, r, &t) ||
					    m.load[r].busy_until_vt >= NL_MACH_GONE_VT;
				/* the same cost model as the first pick: least-loaded of one sub-task */
				const uint32_t *c = &s->tree->leaf_mach[s->tree->leaf_off[nl_tree_leaf_of(s->tree, t.need)]];
				unsigned int nc = s->tree->leaf_off[nl_tree_leaf_of(s->tree, t.need) + 1] -
						  s->tree->leaf_off[nl_tree_leaf_of(s->tree, t.need)];

				if (nl_pick_least_loaded(c, nc, s->rate, m.load, now, t.instr / t.n_split,
							 t.data_bits / t.n_split, 1, &best) == 1)
					bad_repl += best != r;
			} else {
				bool any = false;

				for (uint32_t i = 0; i < 96; i++)
					any |= serves(mach, i, &t) && m.load[i].busy_until_vt < NL_MACH_GONE_VT;
				bad_repl += any; /* refused although a live matching machine exists */
			}
		}
		nl_tap_ok(bad_calls == 0, "%s: every decide ends in exactly one forward, dispatch or reject",
			  pols[pi].name);
		nl_tap_ok(bad_fwd == 0 && bad_rej == 0 && bad_meta == 0,
			  "%s: forwards name existing managers, rejects valid reasons; entry, top_mgr, service times valid",
			  pols[pi].name);
		nl_tap_ok(bad_disp == 0 && n_disp > 0,
			  "%s: %u dispatches, each of L live machines holding Delta", pols[pi].name, n_disp);
		nl_tap_ok(n_rej > 0 && (s->n_mgr == 1 || n_fwd > 0),
			  "%s: the random stream exercised reject (%u) and forward (%u)", pols[pi].name,
			  n_rej, n_fwd);
		if (!pols[pi].random) /* deciding twice draws different numbers */
			nl_tap_ok(bad_pass == 0 && n_pass > 0,
				  "%s: %u decisions with every hop passed (I6) end like the same decisions made manager by manager",
				  pols[pi].name, n_pass);
		nl_tap_ok(bad_repl == 0 && n_repl > 0,
			  "%s: replace() of %u lost sub-tasks: a live matching machine of least expected completion, or -ENOSPC only when none is live",
			  pols[pi].name, n_repl);
		/* every machine of one vector gone: replace refuses */
		struct nl_task t = task(3, 4);
		uint32_t r;

		for (uint32_t i = 0; i < 96; i++)
			m.load[i].busy_until_vt = mach[i].res.set == 3 ? NL_MACH_GONE_VT : 0;
		nl_tap_ok(s->ops->replace(s, &t, m.load, 0, &r) == -ENOSPC,
			  "%s: replace() is -ENOSPC when every machine of the vector left", pols[pi].name);
		nl_sched_free(s);
	}
}

int
main(void)
{
	test_pick();
	test_nlsc();
	test_static_entry();
	test_2lsc();
	test_contract();
	return nl_tap_done();
}
