/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include "nl_dp_priv.h"

int
nl_dp_serve(struct nl_dp *dp)
{
	(void)dp;
	return -ENOTSUP;
}
