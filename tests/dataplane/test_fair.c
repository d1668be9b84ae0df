/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Deficit round robin (dataplane/port/nl_fair.h), the appliance's fair admission between
 * submitters: against queues driven at random, it is work conserving (serves whenever a flow
 * has a backlog, never a flow without one), keeps DRR's fairness bound between any two flows
 * over every interval in which both stay backlogged (|S_i/w_i - S_j/w_j| <= 2), gives
 * continuously backlogged flows their weight shares, and a flow that only joins later is not
 * starved by a backlog that was there first. TAP; NL_TEST_SEED.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_fair.h"
#include "nl_tap.h"

#define NF 6

static uint64_t rs;

static uint64_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static uint64_t q[NF];

static bool
has(void *ctx, unsigned int i)
{
	(void)ctx;
	return q[i] > 0;
}

int
main(void)
{
	struct nl_fair f;
	uint32_t w[NF] = { 1, 4, 2, 7, 1, 3 };
	uint64_t seed = nl_tap_seed(0x5eed16);

	rs = seed | 1;
	nl_tap_check(nl_fair_init(&f, 0, w) != 0, "no flows refused");
	{
		uint32_t z[2] = { 1, 0 };

		nl_tap_check(nl_fair_init(&f, 2, z) != 0, "a zero weight refused");
	}

	/* 1. two flows always backlogged: exactly 1:4 per round */
	if (nl_fair_init(&f, 2, (uint32_t[]){ 1, 4 }) == 0) {
		uint64_t s[2] = { 0, 0 };

		memset(q, 0, sizeof(q));
		q[0] = q[1] = 1000000;
		nl_fair_backlogged_st(&f, 0);
		nl_fair_backlogged_st(&f, 1);
		for (int k = 0; k < 5000; k++) {
			int i = nl_fair_next_st(&f, has, NULL);

			s[i]++;
			q[i]--;
		}
		nl_tap_ok(s[0] == 1000 && s[1] == 4000, "weights 1:4, both backlogged: %llu:%llu of 5000",
			  (unsigned long long)s[0], (unsigned long long)s[1]);
		nl_fair_free(&f);
	}

	/* 2. random arrivals below the service rate: work conservation */
	if (nl_fair_init(&f, NF, w) == 0) {
		uint64_t served[NF] = { 0 };
		bool conserve = true, no_idle_pick = true;

		memset(q, 0, sizeof(q));
		for (int step = 0; step < 400000; step++) {
			/* arrivals: flow i gets an item with a probability of its own */
			for (unsigned int i = 0; i < NF; i++) {
				if (rnd() % 100 < (i == 4 ? 5u : 10u)) { /* 0.55 a step in all */
					q[i]++;
					nl_fair_backlogged_st(&f, i);
				}
			}
			bool any = false;

			for (unsigned int i = 0; i < NF; i++)
				any |= q[i] > 0;
			/* serve one item most steps */
			if (rnd() % 100 < 85) {
				int i = nl_fair_next_st(&f, has, NULL);

				if (i < 0) {
					conserve &= !any;
				} else {
					no_idle_pick &= q[i] > 0;
					q[i]--;
					served[i]++;
				}
			}
		}
		nl_tap_check(conserve, "work conserving: -1 only when no flow has a backlog (queues empty and refill)");
		nl_tap_check(no_idle_pick, "never serves a flow without a backlog");
		nl_tap_ok(served[4] > 15000 && served[0] > 30000,
			  "every flow is served (flow 4, 5 %% arrivals: %llu; flow 0: %llu)",
			  (unsigned long long)served[4], (unsigned long long)served[0]);
		nl_fair_free(&f);
	}

	/* 3. the bound, measured over windows in which two flows stay backlogged */
	if (nl_fair_init(&f, NF, w) == 0) {
		double worst = 0;
		uint64_t windows = 0;

		memset(q, 0, sizeof(q));
		for (int rep = 0; rep < 200; rep++) {
			/* pick two flows, give them a deep backlog, others random; serve a while */
			unsigned int a = (unsigned int)(rnd() % NF), b = (unsigned int)((a + 1 + rnd() % (NF - 1)) % NF);
			uint64_t sa = 0, sb = 0;
			unsigned int len = 50 + (unsigned int)(rnd() % 500);

			q[a] += 100000;
			q[b] += 100000;
			nl_fair_backlogged_st(&f, a);
			nl_fair_backlogged_st(&f, b);
			for (unsigned int k = 0; k < len; k++) {
				for (unsigned int i = 0; i < NF; i++)
					if (i != a && i != b && rnd() % 100 < 20) {
						q[i]++;
						nl_fair_backlogged_st(&f, i);
					}
				int i = nl_fair_next_st(&f, has, NULL);

				if (i < 0)
					break;
				q[i]--;
				sa += (unsigned int)i == a;
				sb += (unsigned int)i == b;
				double d = (double)sa / w[a] - (double)sb / w[b];

				if (d < 0)
					d = -d;
				if (d > worst)
					worst = d;
			}
			windows++;
			/* drain a and b back to what the random arrivals left */
			q[a] = q[a] > 100000 ? q[a] - 100000 : 0;
			q[b] = q[b] > 100000 ? q[b] - 100000 : 0;
		}
		nl_tap_ok(worst <= 2.0 + 1e-9,
			  "DRR bound: |S_a/w_a - S_b/w_b| <= 2 over %llu windows of two backlogged flows "
			  "among 6 (worst %.2f)", (unsigned long long)windows, worst);
		nl_fair_free(&f);
	}

	/* 4. a late light flow is not starved by a deep heavy backlog */
	if (nl_fair_init(&f, 2, (uint32_t[]){ 4, 1 }) == 0) {
		int first = -1;

		memset(q, 0, sizeof(q));
		q[0] = 1000000;
		nl_fair_backlogged_st(&f, 0);
		for (int k = 0; k < 1000; k++) {
			q[nl_fair_next_st(&f, has, NULL)]--;
		}
		q[1] = 10;
		nl_fair_backlogged_st(&f, 1);
		for (int k = 0; k < 10 && first < 0; k++) {
			int i = nl_fair_next_st(&f, has, NULL);

			q[i]--;
			if (i == 1)
				first = k;
		}
		nl_tap_ok(first >= 0 && first <= 4,
			  "a light flow joining behind 999,000 queued heavy items is served within one "
			  "heavy quantum (after %d items)", first);
		nl_fair_free(&f);
	}
	return nl_tap_done();
}
