/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include "nl_pick.h"
#include "nl_task.h"

int
nl_pick_least_loaded(const uint32_t *cand, unsigned int n_cand, const struct nl_machine *mach,
		     const struct nl_mach_load *load, double now_vt, double sub_instr,
		     double sub_bits, unsigned int n_split, uint32_t *out)
{
	double key[NL_TASK_MAX_SPLIT];
	unsigned int n = 0;

	if (n_split == 0 || n_split > NL_TASK_MAX_SPLIT)
		return -EINVAL;
	if (n_cand == 0)
		return -ENOSPC;
	if (n_cand >= n_split) {
		unsigned int n_live = 0;

		/* Keep the n_split best in key[] ascending; a strictly better candidate is needed
		 * to displace one, so earlier candidates win ties. */
		for (unsigned int c = 0; c < n_cand; c++) {
			uint32_t id = cand[c];
			double b = load[id].busy_until_vt - now_vt;
			double k = (b > 0 ? b : 0) +
				   nl_mach_service_vt(&mach[id], sub_instr, sub_bits);
			unsigned int j;

			if (load[id].busy_until_vt >= NL_MACH_GONE_VT)
				continue;
			n_live++;
			if (n == n_split && k >= key[n - 1])
				continue;
			j = n < n_split ? n++ : n - 1;
			while (j > 0 && key[j - 1] > k) {
				key[j] = key[j - 1];
				out[j] = out[j - 1];
				j--;
			}
			key[j] = k;
			out[j] = id;
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
				   nl_mach_service_vt(&mach[live[c]], sub_instr, sub_bits);

			if (c == 0 || k < best_k) {
				best = c;
				best_k = k;
			}
		}
		extra[best] += nl_mach_service_vt(&mach[live[best]], sub_instr, sub_bits);
		out[s] = live[best];
	}
	return (int)n_split;
}
