/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pick index (managers/nl_pick_idx.h) against the scan it replaces: on random groups,
 * speed classes, loads (machines that left included), bookings, completions, snapshots and
 * clocks, every pick returns exactly nl_pick_least_loaded()'s machines in its order. TAP.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "nl_pick.h"
#include "nl_pick_idx.h"
#include "nl_task.h"
#include "nl_rng.h"
#include "nl_tap.h"

#define MAX_M 2048

static double
unif(struct nl_rng *r)
{
	return (double)(nl_rng_u64(r) >> 11) * 0x1.0p-53;
}

/* One random scenario: n_mach machines in n_cls speed classes, partitioned into groups (or,
 * with overlap, groups that share machines as subset matching makes them). */
static void
scenario(struct nl_rng *r, unsigned int round, unsigned int *n_ops, unsigned int *n_bad,
	 unsigned int *n_fallback)
{
	static struct nl_machine mach[MAX_M];
	static struct nl_mach_rate rate[MAX_M];
	static struct nl_mach_load load[MAX_M];
	static uint32_t cand[4 * MAX_M], off[MAX_M + 1];
	unsigned int n_mach = 1 + (unsigned int)(nl_rng_u64(r) % (round % 3 == 0 ? MAX_M : 200));
	unsigned int n_cls = 1 + (unsigned int)(nl_rng_u64(r) % 8), n_grp = 0, n = 0;
	bool overlap = round % 4 == 1, ties = round % 3 == 2;
	struct nl_pick_idx x;
	double now = 0;

	for (unsigned int i = 0; i < n_mach; i++) {
		unsigned int c = (unsigned int)(nl_rng_u64(r) % n_cls);

		memset(&mach[i], 0, sizeof(mach[i]));
		/* tie rounds: speeds 1, 2, 4, ... and integer work and times, so keys of
		 * different classes are often exactly equal */
		mach[i].speed_ips = ties ? (double)(1u << c) : 40e6 + 20e6 * c;
		mach[i].link_bps = ties ? 1 : 10e6;
		load[i].busy_until_vt = 0;
	}
	nl_mach_rates_build(mach, n_mach, rate);
	/* groups: contiguous blocks of random size, ascending ids; overlap adds each machine to a
	 * second group too */
	off[0] = 0;
	for (unsigned int i = 0; i < n_mach;) {
		unsigned int sz = 1 + (unsigned int)(nl_rng_u64(r) % 70);

		for (unsigned int j = 0; j < sz && i < n_mach; j++, i++)
			cand[n++] = i;
		off[++n_grp] = n;
	}
	if (overlap) {
		unsigned int extra = 1 + n_mach / 3;

		for (unsigned int i = 0; i < extra; i++)
			cand[n++] = (uint32_t)(i * 3 % n_mach);
		/* keep the extra group ascending and duplicate-free */
		unsigned int a = off[n_grp], k = a;

		for (unsigned int i = 0; i < n_mach; i++)
			for (unsigned int j = a; j < n; j++)
				if (cand[j] == i) {
					cand[k++] = i;
					break;
				}
		n = k;
		off[++n_grp] = n;
	}
	if (!nl_tap_ok(nl_pick_idx_build(&x, n_grp, off, cand, rate, n_mach) == 0,
		       "round %u: index of %u machines, %u classes, %u groups%s", round, n_mach, n_cls,
		       n_grp, overlap ? " (overlapping)" : ""))
		return;
	for (unsigned int op = 0; op < 3000; op++) {
		unsigned int what = (unsigned int)(nl_rng_u64(r) % 10);
		uint32_t m = (uint32_t)(nl_rng_u64(r) % n_mach);

		if (what == 0) { /* time passes */
			now += ties ? (double)(nl_rng_u64(r) % 3) : unif(r) * 50;
		} else if (what == 1) { /* a machine leaves or comes back */
			load[m].busy_until_vt = load[m].busy_until_vt >= NL_MACH_GONE_VT ? now : NL_MACH_GONE_VT;
			nl_pick_idx_set(&x, m, load[m].busy_until_vt);
		} else if (what == 2 && op % 97 == 0) { /* a new snapshot */
			for (unsigned int i = 0; i < n_mach; i++)
				if (load[i].busy_until_vt < NL_MACH_GONE_VT)
					load[i].busy_until_vt = now + (ties ? (double)(nl_rng_u64(r) % 4) : unif(r) * 100) - 20;
			nl_pick_idx_reset(&x, load, now);
		} else if (what <= 4) { /* a booking */
			if (load[m].busy_until_vt < NL_MACH_GONE_VT) {
				double st = load[m].busy_until_vt > now ? load[m].busy_until_vt : now;

				load[m].busy_until_vt = st + (ties ? 10 : 1 + unif(r) * 30);
				nl_pick_idx_set(&x, m, load[m].busy_until_vt);
			}
		} else { /* a pick, compared with the scan */
			uint32_t g = (uint32_t)(nl_rng_u64(r) % n_grp), a[NL_TASK_MAX_SPLIT], b[NL_TASK_MAX_SPLIT];
			unsigned int L = 1 + (unsigned int)(nl_rng_u64(r) % (op % 50 == 0 ? 64 : 8));
			double si = ties ? (double)(128 * (1 + nl_rng_u64(r) % 4)) : 8e9 * (0.5 + unif(r));
			double sb = ties ? 0 : 1e8 * unif(r);
			int ra = nl_pick_least_loaded(&cand[off[g]], off[g + 1] - off[g], rate, load, now,
						      si, sb, L, a);
			int rb = nl_pick_idx_pick(&x, g, now, si, sb, L, b);
			unsigned int live = 0;

			for (uint32_t j = off[g]; j < off[g + 1]; j++)
				live += load[cand[j]].busy_until_vt < NL_MACH_GONE_VT;
			*n_fallback += live < L;
			(*n_ops)++;
			if (ra != rb || (ra > 0 && memcmp(a, b, (size_t)ra * sizeof(a[0])) != 0)) {
				if (*n_bad == 0)
					nl_tap_diag("round %u op %u group %u L %u: scan %d [%u %u ...] index %d [%u %u ...]",
						    round, op, g, L, ra, a[0], ra > 1 ? a[1] : 0, rb, b[0],
						    rb > 1 ? b[1] : 0);
				(*n_bad)++;
			}
			/* the caller books what it picked, as the engines do */
			for (int j = 0; j < ra && what == 9; j++) {
				uint32_t p = a[j];
				double st = load[p].busy_until_vt > now ? load[p].busy_until_vt : now;

				load[p].busy_until_vt = st + nl_mach_rate_service_vt(&rate[p], si, sb);
				nl_pick_idx_set(&x, p, load[p].busy_until_vt);
			}
		}
	}
	nl_pick_idx_free(&x);
}

/* nl_pick_least_loaded() itself (both its ranking path for small groups and its insertion
 * path) against a plain stable selection by (key, position), on random small groups with
 * equal keys, idle and busy machines and machines that left. */
static void
scan_vs_reference(struct nl_rng *r)
{
	unsigned int n_bad = 0, n_cmp = 0, n_small = 0;

	for (unsigned int it = 0; it < 20000; it++) {
		struct nl_machine mach[16];
		struct nl_mach_rate rate[16];
		struct nl_mach_load load[16];
		uint32_t cand[16], out[16], ref[16];
		unsigned int n = 1 + (unsigned int)(nl_rng_u64(r) % 16), L = 1 + (unsigned int)(nl_rng_u64(r) % n);
		unsigned int n_live = 0;
		double now = 10, key[16];
		bool taken[16] = { false };

		for (unsigned int i = 0; i < n; i++) {
			memset(&mach[i], 0, sizeof(mach[i]));
			mach[i].speed_ips = (double)(1u << (nl_rng_u64(r) % 3)); /* equal keys are common */
			mach[i].link_bps = 1;
			load[i].busy_until_vt = nl_rng_u64(r) % 5 == 0 ? NL_MACH_GONE_VT :
						(double)(nl_rng_u64(r) % 20);
			cand[i] = i;
		}
		nl_mach_rates_build(mach, n, rate);
		for (unsigned int i = 0; i < n; i++) {
			double bu = load[i].busy_until_vt;

			key[i] = (bu > now ? bu - now : 0) + nl_mach_rate_service_vt(&rate[i], 4, 0);
			n_live += bu < NL_MACH_GONE_VT;
		}
		if (n_live < L)
			continue; /* the sharing case is test_policy's */
		for (unsigned int o = 0; o < L; o++) {
			unsigned int b = n;

			for (unsigned int i = 0; i < n; i++)
				if (!taken[i] && load[i].busy_until_vt < NL_MACH_GONE_VT &&
				    (b == n || key[i] < key[b]))
					b = i;
			taken[b] = true;
			ref[o] = b;
		}
		n_cmp++;
		n_small += n <= NL_PICK_RANK_MAX;
		if (nl_pick_least_loaded(cand, n, rate, load, now, 4, 0, L, out) != (int)L ||
		    memcmp(out, ref, L * sizeof(out[0])) != 0)
			n_bad++;
	}
	nl_tap_ok(n_bad == 0 && n_small > 1000 && n_cmp - n_small > 1000,
		  "scan: %u random groups of 1..16 (%u ranked, %u by insertion) pick the reference's machines in its order (%u differ)",
		  n_cmp, n_small, n_cmp - n_small, n_bad);
}

int
main(void)
{
	struct nl_rng r;
	unsigned int n_ops = 0, n_bad = 0, n_fallback = 0;

	nl_rng_seed(&r, nl_tap_seed(5));
	scan_vs_reference(&r);
	for (unsigned int round = 0; round < 40; round++)
		scenario(&r, round, &n_ops, &n_bad, &n_fallback);
	nl_tap_ok(n_bad == 0 && n_ops > 10000,
		  "%u picks over random loads, bookings, departures, snapshots and equal-time ties: the index returns the scan's machines in the scan's order (%u differ)",
		  n_ops, n_bad);
	nl_tap_ok(n_fallback > 0, "the fewer-live-than-L case was exercised (%u picks)", n_fallback);
	{
		struct nl_machine m1 = { .speed_ips = 1, .link_bps = 1 };
		struct nl_mach_rate rt;
		uint32_t off2[2] = { 0, 1 }, c1[1] = { 0 }, out[2];
		struct nl_pick_idx x;

		nl_mach_rates_build(&m1, 1, &rt);
		nl_tap_ok(nl_pick_idx_build(&x, 1, off2, c1, &rt, 1) == 0 &&
				  nl_pick_idx_pick(&x, 0, 0, 1, 0, 0, out) == -EINVAL,
			  "L = 0 is -EINVAL");
		nl_pick_idx_set(&x, 0, NL_MACH_GONE_VT);
		nl_tap_ok(nl_pick_idx_pick(&x, 0, 1, 1, 0, 2, out) == -ENOSPC,
			  "a group whose only machine left is -ENOSPC");
		nl_pick_idx_free(&x);
		c1[0] = 5;
		nl_tap_ok(nl_pick_idx_build(&x, 1, off2, c1, &rt, 1) == -EINVAL,
			  "a candidate id out of range is -EINVAL");
	}
	return nl_tap_done();
}
