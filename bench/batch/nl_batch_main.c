/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>

#include "nl_sim_main.h"

int
nl_sim_main_batch(struct nl_cfg *cfg, const struct nl_sim_opts *o)
{
	(void)cfg;
	(void)o;
	fprintf(stderr, "nlevel-sim: batch model not built yet\n");
	return 1;
}
