/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The model's task classes in the emulated and native appliance (nl_dp_match.h).
 */
#include <errno.h>
#include <stdlib.h>

#include <rte_log.h>

#include "nl_dp_match.h"
#include "nl_dp_priv.h"
#include "nl_match_model.h"

int
nl_dp_match_attach_ctl(struct nl_dp *dp)
{
	char err[512];
	int rc;

	if (dp->m.n_tclass == 0 || dp->o.port_mode)
		return 0;
	rc = nl_match_model_build(&dp->m, dp->mach0, &dp->match_tab, err, sizeof(err));
	if (rc != 0) {
		rte_log(RTE_LOG_ERR, nl_dp_logtype, "nlevel: %s\n", err);
		return rc;
	}
	dp->match_h = calloc(dp->n_pool, sizeof(uint32_t));
	if (dp->match_h == NULL)
		return -ENOMEM;
	nl_match_src.h_by_aux = dp->match_h;
	nl_match_src.n_aux = dp->n_pool;
	__atomic_store_n(&nl_match_src.tab, dp->match_tab, __ATOMIC_RELEASE);
	return 0;
}

void
nl_dp_match_detach_ctl(struct nl_dp *dp)
{
	if (dp->match_tab != NULL &&
	    __atomic_load_n(&nl_match_src.tab, __ATOMIC_ACQUIRE) == dp->match_tab) {
		__atomic_store_n(&nl_match_src.tab, NULL, __ATOMIC_RELEASE);
		nl_match_src.h_by_aux = NULL;
		nl_match_src.n_aux = 0;
	}
	nl_match_tab_free(dp->match_tab);
	dp->match_tab = NULL;
	free(dp->match_h);
	dp->match_h = NULL;
}
