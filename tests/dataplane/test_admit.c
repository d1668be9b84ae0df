/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fair admission (dataplane/port/nl_admit.h; issue #35 item 5, issue #33 item 4), simulated in
 * steps against its invariants: tasks held never exceed the limit L (I1); the last R places
 * go only to principals under their share (I2); a principal under its share with a queued task
 * is admitted whenever a place is free (I3); two flooding principals hold their weight shares
 * of L - R; a principal that starts submitting while another's long tasks hold everything they
 * may is admitted at once, from the reserve, and the long tasks never take more; one principal
 * alone or beside an idle one uses L - R (work conserving); a principal offering less than its
 * weighted share of the throughput is never refused (its queue never fills) while another
 * floods 10x the capacity; the engine refusing an admission (undo, again) loses nothing.
 * Randomized parts print their seed and take NL_TEST_SEED. TAP.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_admit.h"
#include "nl_tap.h"

#define MAXP 8
#define MAXT 100000

static uint64_t rs;

static uint64_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* A small world: principals with queues (cap each) and tasks in flight with end times. */
struct world {
	struct nl_admit a;
	unsigned int n;
	uint64_t qcap[MAXP];
	uint64_t rejected[MAXP], admitted[MAXP], arrived[MAXP];
	uint64_t now;
	struct { uint64_t end; unsigned int who; uint64_t t_in; } t[MAXT];
	unsigned int n_t;
	uint64_t qt[MAXP][4096]; /* arrival steps of queued tasks, FIFO */
	unsigned int qh[MAXP];
	uint64_t dur[MAXP];      /* task duration of each principal [steps]; 0 = forever */
	uint64_t wait_max[MAXP]; /* longest queue wait of an admitted task [steps] */
	unsigned int viol;       /* invariant violations */
	double fail_p;           /* chance the engine refuses an admission (undo, again) */
};

static void
w_init(struct world *w, unsigned int n, const uint32_t *wt, uint64_t L, uint64_t R)
{
	memset(w, 0, sizeof(*w));
	w->n = n;
	if (nl_admit_init(&w->a, n, wt, L, R) != 0)
		abort();
	for (unsigned int i = 0; i < n; i++)
		w->qcap[i] = 64;
}

static void
arrive(struct world *w, unsigned int i)
{
	w->arrived[i]++;
	if (w->a.queued[i] >= w->qcap[i]) {
		w->rejected[i]++;
		return;
	}
	w->qt[i][(w->qh[i] + w->a.queued[i]) % 4096] = w->now;
	nl_admit_queued_st(&w->a, i);
}

static bool
under(const struct world *w, unsigned int i)
{
	return w->a.flight[i] == 0 || (double)w->a.flight[i] < nl_admit_share(&w->a, i) - 1e-9;
}

/* Admit until the policy says stop; check I1-I3 around every decision. */
static void
admit(struct world *w)
{
	for (;;) {
		uint64_t held = w->a.held;
		bool any_under = false;
		int i;

		for (unsigned int k = 0; k < w->n; k++)
			any_under |= w->a.queued[k] > 0 && under(w, k);
		bool was_under[MAXP];

		for (unsigned int k = 0; k < w->n; k++)
			was_under[k] = under(w, k);
		i = nl_admit_next_st(&w->a);
		if (i < 0) {
			/* I3: nobody under its share waits while a place is free */
			if (any_under && held < w->a.limit)
				w->viol++;
			return;
		}
		/* I2: over its share only below L - R, and only if nobody under it waited */
		if (!was_under[i] && (held >= w->a.limit - w->a.reserve || any_under))
			w->viol++;
		if (w->fail_p > 0 && (double)(rnd() % 1000000) < w->fail_p * 1e6) {
			nl_admit_undo_st(&w->a, (unsigned int)i, true); /* the engine was full */
			return;
		}
		w->qh[i] = (w->qh[i] + 1) % 4096;
		uint64_t waited = w->now - w->qt[i][(w->qh[i] + 4095) % 4096];

		if (waited > w->wait_max[i])
			w->wait_max[i] = waited;
		w->admitted[i]++;
		if (w->n_t == MAXT)
			abort();
		w->t[w->n_t].who = (unsigned int)i;
		w->t[w->n_t].end = w->dur[i] == 0 ? UINT64_MAX : w->now + w->dur[i];
		w->t[w->n_t++].t_in = w->now;
		/* I1 */
		uint64_t sum = 0;

		for (unsigned int k = 0; k < w->n; k++)
			sum += w->a.flight[k];
		if (w->a.held > w->a.limit || sum != w->a.held)
			w->viol++;
	}
}

static void
step(struct world *w)
{
	for (unsigned int k = 0; k < w->n_t;) {
		if (w->t[k].end <= w->now) {
			nl_admit_done_st(&w->a, w->t[k].who);
			w->t[k] = w->t[--w->n_t];
		} else {
			k++;
		}
	}
	admit(w);
	w->now++;
}

static struct world W;

static void
test_two_floods_hold_their_shares(void)
{
	uint32_t wt[2] = { 1, 3 };
	bool ok = true;

	w_init(&W, 2, wt, 64, 8);
	W.dur[0] = W.dur[1] = 10;
	for (unsigned int s = 0; s < 2000; s++) {
		for (unsigned int k = 0; k < 20; k++) {
			arrive(&W, 0);
			arrive(&W, 1);
		}
		step(&W);
		if (s > 50) /* shares of L - R = 56: 14 and 42, each at most one over */
			ok &= W.a.flight[0] >= 13 && W.a.flight[0] <= 15 && W.a.flight[1] >= 41 &&
			      W.a.flight[1] <= 43;
	}
	nl_tap_ok(ok && W.viol == 0, "two flooding principals (weights 1:3) hold their shares of L - R "
		  "= 56 (14 and 42, +-1): in flight %llu and %llu; violations %u",
		  (unsigned long long)W.a.flight[0], (unsigned long long)W.a.flight[1], W.viol);
	nl_tap_ok(W.admitted[1] > 2.9 * W.admitted[0] && W.admitted[1] < 3.1 * W.admitted[0],
		  "their admitted tasks are 1:3 (%llu, %llu)", (unsigned long long)W.admitted[0],
		  (unsigned long long)W.admitted[1]);
	nl_admit_free(&W.a);
}

static void
test_long_tasks_hold_only_their_share(void)
{
	uint32_t wt[2] = { 1, 1 };

	w_init(&W, 2, wt, 64, 8);
	W.dur[0] = 0; /* heavy: tasks that never end (nap 100000) */
	W.dur[1] = 5;
	for (unsigned int s = 0; s < 100; s++) {
		for (unsigned int k = 0; k < 10; k++)
			arrive(&W, 0);
		step(&W);
	}
	uint64_t alone = W.a.flight[0];

	/* light starts: 8 tasks at once, then 1 a step */
	for (unsigned int k = 0; k < 8; k++)
		arrive(&W, 1);
	step(&W);
	uint64_t at_once = W.a.flight[1];
	uint64_t max_wait = 0, heavy_more = 0;

	for (unsigned int s = 0; s < 1000; s++) {
		arrive(&W, 1); /* 5 in flight at a time: within the reserve of 8 */
		for (unsigned int k = 0; k < 10; k++)
			arrive(&W, 0);
		step(&W);
		heavy_more += W.a.flight[0] > alone;
	}
	max_wait = W.wait_max[1];
	nl_tap_ok(alone == 56 && at_once == 8 && heavy_more == 0 && W.viol == 0,
		  "a principal whose tasks never end takes L - R = 56 (%llu) and never more; one that "
		  "starts then gets its first 8 tasks in at once from the reserve (%llu)",
		  (unsigned long long)alone, (unsigned long long)at_once);
	nl_tap_ok(W.rejected[1] == 0 && max_wait <= 5 && W.a.flight[1] <= 8,
		  "it keeps running in the reserve beside the long tasks (what it may run there is R, "
		  "not its share, until they end): %llu of %llu refused, longest queue wait %llu "
		  "steps (tasks take 5)", (unsigned long long)W.rejected[1],
		  (unsigned long long)W.arrived[1], (unsigned long long)max_wait);
	nl_admit_free(&W.a);
}

static void
test_work_conserving_below_the_reserve(void)
{
	uint32_t wt[2] = { 1, 1 };
	bool ok = true;

	w_init(&W, 2, wt, 64, 8);
	W.dur[0] = 0; /* light: one task that never ends: it "has work", nothing queued */
	W.dur[1] = 4;
	arrive(&W, 0);
	step(&W);
	for (unsigned int s = 0; s < 500; s++) {
		for (unsigned int k = 0; k < 20; k++)
			arrive(&W, 1);
		step(&W);
		if (s > 20)
			ok &= W.a.held == 56;
	}
	nl_tap_ok(ok && W.viol == 0 && W.a.borrowed > 0,
		  "beside a principal with work but nothing queued, a flood borrows its unused share "
		  "up to L - R = 56 (held %llu, %llu admissions borrowed)",
		  (unsigned long long)W.a.held, (unsigned long long)W.a.borrowed);
	nl_admit_free(&W.a);
}

/* Throughput capacity C = L_eff / dur tasks a step; heavy offers 10 C, light 0.4 of its share. */
static void
test_light_under_its_share_never_refused(uint64_t seed)
{
	uint32_t wt[2] = { 1, 1 };
	double cap, light_rate, acc = 0;

	rs = seed * 0x9e3779b97f4a7c15ull | 1;
	w_init(&W, 2, wt, 32, 4);
	W.dur[0] = W.dur[1] = 8;
	cap = 28.0 / 8; /* L - R places, 8 steps a task */
	light_rate = 0.4 * cap / 2;
	for (unsigned int s = 0; s < 50000; s++) {
		unsigned int heavy = (unsigned int)(10 * cap) + (rnd() % 2);

		for (unsigned int k = 0; k < heavy; k++)
			arrive(&W, 0);
		/* light: Bernoulli arrivals at light_rate a step (bursty: up to 3 at once) */
		acc += light_rate * (0.5 + (double)(rnd() % 1000) / 1000.0);
		while (acc >= 1) {
			arrive(&W, 1);
			acc -= 1;
		}
		step(&W);
	}
	nl_tap_ok(W.rejected[1] == 0 && W.rejected[0] > 0 && W.viol == 0 && W.wait_max[1] <= 8,
		  "a principal offering 0.4 of its share beside a 10x flood: %llu of %llu refused "
		  "(the flood: %llu of %llu), its longest queue wait %llu steps (a task takes 8)",
		  (unsigned long long)W.rejected[1], (unsigned long long)W.arrived[1],
		  (unsigned long long)W.rejected[0], (unsigned long long)W.arrived[0],
		  (unsigned long long)W.wait_max[1]);
	nl_admit_free(&W.a);
}

static void
test_random_worlds_keep_the_invariants(uint64_t seed)
{
	unsigned int worlds = 200, bad = 0, lost = 0;

	rs = seed * 0xda942042e4dd58b5ull | 1;
	for (unsigned int k = 0; k < worlds; k++) {
		unsigned int n = 1 + (unsigned int)(rnd() % MAXP);
		uint32_t wt[MAXP];
		uint64_t L = 1 + rnd() % 100, R = rnd() % (L + 2);

		for (unsigned int i = 0; i < n; i++)
			wt[i] = 1 + (uint32_t)(rnd() % 10);
		w_init(&W, n, wt, L, R);
		W.fail_p = (rnd() % 4) == 0 ? 0.1 : 0;
		for (unsigned int i = 0; i < n; i++)
			W.dur[i] = rnd() % 8 == 0 ? 0 : 1 + rnd() % 30;
		for (unsigned int s = 0; s < 2000; s++) {
			for (unsigned int i = 0; i < n; i++)
				for (unsigned int a = (unsigned int)(rnd() % 4); a > 0; a--)
					if (rnd() % 3 == 0)
						arrive(&W, i);
			step(&W);
		}
		/* nothing lost: every arrival was refused, is queued, or was admitted */
		for (unsigned int i = 0; i < n; i++)
			lost += W.arrived[i] != W.rejected[i] + W.a.queued[i] + W.admitted[i];
		bad += W.viol;
		nl_admit_free(&W.a);
	}
	nl_tap_ok(bad == 0 && lost == 0,
		  "200 random worlds (1..8 principals, weights 1..10, L 1..100, any R, long tasks, the "
		  "engine refusing 10%% of admissions in some): %u invariant violations, %u "
		  "principals with tasks unaccounted", bad, lost);
}

int
main(void)
{
	uint64_t seed = nl_tap_seed(0xad317);
	uint32_t one = 1;
	struct nl_admit a;

	nl_tap_check(nl_admit_init(&a, 1, &one, 0, 0) != 0, "an admission limit of 0 refused");
	nl_admit_free(&a);
	test_two_floods_hold_their_shares();
	test_long_tasks_hold_only_their_share();
	test_work_conserving_below_the_reserve();
	test_light_under_its_share_never_refused(seed);
	test_random_worlds_keep_the_invariants(seed);
	return nl_tap_done();
}
