/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "nl_pick.h"
#include "nl_task.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* x > 0 ? x : 0 as one maxsd (GCC compiles the conditional expression to a jump, and the
 * sign of a machine's backlog is data the predictor cannot learn). */
static inline double
pos_part(double x)
{
#ifdef __SSE2__
	return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(x), _mm_setzero_pd()));
#else
	return x > 0 ? x : 0;
#endif
}

/* tmp[rank of candidate i] = cand[i] for n candidates of keys kb (nl_pick_least_loaded()'s
 * small groups). */
static inline __attribute__((always_inline)) void
rank(const uint64_t *kb, const uint32_t *cand, uint64_t *tmp, unsigned int n)
{
#pragma GCC unroll 8
	for (unsigned int i = 0; i < n; i++) {
		unsigned int r = 0;

#pragma GCC unroll 8
		for (unsigned int j = 0; j < i; j++)
			r += kb[j] <= kb[i];
#pragma GCC unroll 8
		for (unsigned int j = i + 1; j < n; j++)
			r += kb[j] < kb[i];
		tmp[r] = cand[i];
	}
}

int
nl_pick_least_loaded(const uint32_t *cand, unsigned int n_cand, const struct nl_mach_rate *rate,
		     const struct nl_mach_load *load, double now_vt, double sub_instr,
		     double sub_bits, unsigned int n_split, uint32_t *out)
{
	double key[NL_TASK_MAX_SPLIT];
	unsigned int n = 0;

	if (n_split == 0 || n_split > NL_TASK_MAX_SPLIT)
		return -EINVAL;
	if (n_cand == 0)
		return -ENOSPC;
	if (n_cand <= NL_PICK_RANK_MAX && n_cand >= n_split) {
		/* Small groups (a paper-96 leaf holds 6 machines): rank every candidate against
		 * every other, without a branch the loads could mispredict. A key's rank is the
		 * number of candidates before it in (key, position) order; the ranks are a
		 * permutation, so tmp[rank] = id needs no test. Keys are >= 0 or +inf, and such
		 * doubles order as their bit patterns do. */
		uint64_t kb[NL_PICK_RANK_MAX];
		uint64_t tmp[NL_PICK_RANK_MAX]; /* 8-byte slots: 4-byte ones, copied out 8 bytes
						 * at a time, stalled on store forwarding (perf
						 * annotate; native paper-96 NLSC ~1 % faster) */
		unsigned int n_live = 0;

		for (unsigned int c = 0; c < n_cand; c++) {
			double bu = load[cand[c]].busy_until_vt;
			double b = bu - now_vt; /* = the scan's backlog: > 0 iff bu > now */
			double k;
			bool live = bu < NL_MACH_GONE_VT;

			b = pos_part(b);
			k = b + nl_mach_rate_service_vt(&rate[cand[c]], sub_instr, sub_bits);
			k = live ? k : INFINITY;
			memcpy(&kb[c], &k, sizeof(k));
			n_live += live;
		}
		if (n_live >= n_split) {
			switch (n_cand) { /* a constant n: the loops unrolled (half the instructions) */
			case 1: rank(kb, cand, tmp, 1); break;
			case 2: rank(kb, cand, tmp, 2); break;
			case 3: rank(kb, cand, tmp, 3); break;
			case 4: rank(kb, cand, tmp, 4); break;
			case 5: rank(kb, cand, tmp, 5); break;
			case 6: rank(kb, cand, tmp, 6); break;
			case 7: rank(kb, cand, tmp, 7); break;
			default: rank(kb, cand, tmp, NL_PICK_RANK_MAX); break;
			}
			for (unsigned int o = 0; o < n_split; o++)
				out[o] = (uint32_t)tmp[o];
			return (int)n_split;
		}
		/* machines left: fewer live candidates than sub-tasks, share them below */
	}
	if (n_cand >= n_split) {
		unsigned int n_live = 0;
		double thr = INFINITY; /* key of the worst kept while n == n_split */

		/* Keep the n_split best in key[] ascending. Keys are computed without branches (a
		 * machine that left gets +inf); only a candidate strictly better than the worst
		 * kept is inserted, which is rare once key[] is full, so earlier candidates win
		 * ties and the branch predicts well on random loads. */
		for (unsigned int c = 0; c < n_cand; c++) {
			uint32_t id = cand[c];
			double bu = load[id].busy_until_vt;
			double b = bu > now_vt ? bu - now_vt : 0;
			double k = b + nl_mach_rate_service_vt(&rate[id], sub_instr, sub_bits);
			unsigned int j;

			k = bu < NL_MACH_GONE_VT ? k : INFINITY;
			n_live += bu < NL_MACH_GONE_VT;
			if (!(k < thr))
				continue;
			j = n < n_split ? n++ : n - 1;
			while (j > 0 && key[j - 1] > k) {
				key[j] = key[j - 1];
				out[j] = out[j - 1];
				j--;
			}
			key[j] = k;
			out[j] = id;
			if (n == n_split)
				thr = key[n - 1];
		}
		if (n_live >= n_split)
			return (int)n_split;
		/* machines left: fewer live candidates than sub-tasks, share them below */
	}
	/* Fewer live candidates than sub-tasks (there are then at most n_split - 1 of them):
	 * place one sub-task at a time where it completes first, counting those placed. */
	uint32_t live[NL_TASK_MAX_SPLIT];
	double extra[NL_TASK_MAX_SPLIT] = { 0 };
	unsigned int n_live = 0;

	for (unsigned int c = 0; c < n_cand && n_live < NL_TASK_MAX_SPLIT; c++)
		if (load[cand[c]].busy_until_vt < NL_MACH_GONE_VT)
			live[n_live++] = cand[c];
	if (n_live == 0)
		return -ENOSPC;
	for (unsigned int s = 0; s < n_split; s++) {
		unsigned int best = 0;
		double best_k = 0;

		for (unsigned int c = 0; c < n_live; c++) {
			double b = load[live[c]].busy_until_vt - now_vt;
			double k = (b > 0 ? b : 0) + extra[c] +
				   nl_mach_rate_service_vt(&rate[live[c]], sub_instr, sub_bits);

			if (c == 0 || k < best_k) {
				best = c;
				best_k = k;
			}
		}
		extra[best] += nl_mach_rate_service_vt(&rate[live[best]], sub_instr, sub_bits);
		out[s] = live[best];
	}
	return (int)n_split;
}
