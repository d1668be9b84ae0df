/* SPDX-License-Identifier: BSD-3-Clause */
/* nl_busy_cnt (2LSC's group load without a count over the group): against a count over the
 * table after every change, with bookings, completions early and late, departures and
 * returns, time going forward in small and large steps and now and then back (C1-C3). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nl_busy_cnt.h"
#include "nl_rng.h"
#include "nl_tap.h"

#define N_MACH 300u

/* The reference: busy and live members of mem[] by a count over the table. */
static void
ref_count(const struct nl_mach_load *ld, const uint32_t *mem, unsigned int n, double now,
	  unsigned int *busy, unsigned int *live)
{
	*busy = *live = 0;
	for (unsigned int i = 0; i < n; i++) {
		double b = ld[mem[i]].busy_until_vt;

		*live += b < NL_MACH_GONE_VT;
		*busy += b < NL_MACH_GONE_VT && b > now;
	}
}

int
main(void)
{
	struct nl_rng r;
	uint64_t seed = nl_tap_seed(0xb05c0417ULL);
	static struct nl_mach_load ld[N_MACH];
	uint32_t mem[N_MACH];
	unsigned int n_mem = 0, bad = 0, n_cnt = 0, n_back = 0, max_busy = 0;
	struct nl_busy_cnt bc;
	double now = 10;

	nl_rng_seed(&r, seed);
	for (uint32_t i = 0; i < N_MACH; i++) { /* members: about two thirds, unordered */
		ld[i].busy_until_vt = nl_rng_unif(&r) * 40;
		if (nl_rng_unif(&r) < 0.67)
			mem[n_mem++] = (i * 7919u) % N_MACH;
	}
	/* (i * 7919) % 300 is a permutation of 0..299 restricted to the chosen i: no repeats */
	nl_tap_ok(nl_busy_cnt_build(&bc, mem, n_mem, N_MACH) == 0, "build over %u of %u machines",
		  n_mem, N_MACH);
	nl_busy_cnt_reset(&bc, ld, now);
	for (unsigned int step = 0; step < 200000; step++) {
		double u = nl_rng_unif(&r);
		uint32_t m = (uint32_t)(nl_rng_unif(&r) * N_MACH) % N_MACH;
		double b = ld[m].busy_until_vt;

		if (u < 0.55) /* a booking */
			b = (b > now && b < NL_MACH_GONE_VT ? b : now) + 0.5 + 20 * nl_rng_unif(&r);
		else if (u < 0.75) /* a completion, early or late */
			b = now + (nl_rng_unif(&r) - 0.5) * 10;
		else if (u < 0.78) /* leaves */
			b = NL_MACH_GONE_VT;
		else if (u < 0.80) /* returns idle */
			b = now - 1;
		else { /* a count; time moves on, now and then back */
			unsigned int busy, live, rb, rl;
			double t = now;

			if (nl_rng_unif(&r) < 0.05) {
				t = now - 5 * nl_rng_unif(&r);
				n_back++;
			} else {
				now += nl_rng_unif(&r) < 0.1 ? 15 * nl_rng_unif(&r) : 0.3 * nl_rng_unif(&r);
				t = now;
			}
			nl_busy_cnt_count(&bc, t, &busy, &live);
			ref_count(ld, mem, n_mem, t, &rb, &rl);
			bad += busy != rb || live != rl;
			max_busy = busy > max_busy ? busy : max_busy;
			n_cnt++;
			continue;
		}
		ld[m].busy_until_vt = b;
		nl_busy_cnt_set(&bc, m, b);
		if (nl_rng_unif(&r) < 0.0005) { /* a new snapshot */
			nl_busy_cnt_reset(&bc, ld, now);
		}
	}
	nl_tap_ok(bad == 0 && n_cnt > 10000 && n_back > 100 && max_busy > 20,
		  "%u counts (%u at an earlier time) equal a count over the table (seed %#llx; busy up to %u)",
		  n_cnt, n_back, (unsigned long long)seed, max_busy);
	nl_busy_cnt_free(&bc);
	uint32_t dup[2] = { 3, 3 }, out[1] = { N_MACH };

	nl_tap_ok(nl_busy_cnt_build(&bc, dup, 2, N_MACH) == -EINVAL, "a repeated member is -EINVAL");
	nl_tap_ok(nl_busy_cnt_build(&bc, out, 1, N_MACH) == -EINVAL, "a member out of range is -EINVAL");
	return nl_tap_done();
}
