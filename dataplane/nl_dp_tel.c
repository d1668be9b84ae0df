/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include "nl_dp_priv.h"

int
nl_dp_telemetry_init(struct nl_dp *dp)
{
	(void)dp;
	return 0;
}
