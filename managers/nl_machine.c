/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include "nl_machine.h"
#include "nl_task.h"

const char *
nl_reject_name(enum nl_reject_reason why)
{
	switch (why) {
	case NL_REJECT_NONE:
		return "none";
	case NL_REJECT_NO_MACHINE:
		return "no_machine";
	case NL_REJECT_BAD_TASK:
		return "bad_task";
	case NL_REJECT_OVERLOAD:
		return "overload";
	case NL_REJECT_MACHINE_LOST:
		return "machine_lost";
	case NL_REJECT_QUOTA:
		return "quota";
	default:
		return "unknown";
	}
}

int
nl_machines_build(const struct nl_model_cfg *m, uint64_t seed, struct nl_machine *out)
{
	uint64_t s = seed ^ UINT64_C(0x6e6c6576656c); /* "nlevel" */

	if (m->n_mach == 0 || m->n_speed == 0 || m->n_res == 0 || m->n_res > 64)
		return -EINVAL;
	for (unsigned int i = 0; i < m->n_mach; i++) {
		struct nl_machine *p = &out[i];
		unsigned int cls = (unsigned int)((uint64_t)i * m->n_speed / m->n_mach);

		p->speed_class = cls;
		p->speed_ips = m->speed_ips[cls];
		p->link_bps = m->link_bps;
		p->res.any = 0;
		p->res.set = 0;
		p->pad = 0;
		if (m->vectors == NL_VECTORS_BALANCED) {
			p->res.set = (uint64_t)i & nl_res_mask(m->n_res);
		} else {
			for (unsigned int k = 0; k < m->n_res; k++) {
				double u = (double)(nl_splitmix64(&s) >> 11) * 0x1.0p-53;
				double w = (double)(nl_splitmix64(&s) >> 11) * 0x1.0p-53;

				if (w < m->star_prob)
					p->res.any |= UINT64_C(1) << k;
				else if (u < m->res_prob)
					p->res.set |= UINT64_C(1) << k;
			}
		}
	}
	return 0;
}

void
nl_mach_rates_build(const struct nl_machine *mach, unsigned int n, struct nl_mach_rate *rate)
{
	for (unsigned int i = 0; i < n; i++) {
		rate[i].vt_per_instr = 1.0 / mach[i].speed_ips;
		rate[i].vt_per_bit = 1.0 / mach[i].link_bps;
	}
}
