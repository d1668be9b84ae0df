/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hot-path inlines of the live engine (as DPDK's rte_ring_elem_pvt.h beside rte_ring_core.h):
 * what the manager lcores call per task. Not a public header.
 */
#ifndef NL_DP_INLINE_H
#define NL_DP_INLINE_H

#include <stdint.h>

#include "nl_atomic.h"
#include "nl_dp_priv.h"

#define NL_DP_SWEEPS 4u       /* pending-bit sweeps per lcore round at most */
#define NL_DP_EMU_STEP_VT 0.5 /* largest emulated clock step per lcore round [u.t.] */

/* Announce work in mg's inbox to its lcore. The release RMW orders our ring enqueue before
 * the bit; pairs with the acquire exchange in lcore_poll_pending(). Always an RMW: a plain
 * "already set?" check could read the bit before our enqueue is visible and strand it. */
static inline void
nl_dp_mgr_mark(struct nl_dp_mgr *mg)
{
	nl_atomic_or_release(&mg->owner->pend[mg->lc_idx >> 6], UINT64_C(1) << (mg->lc_idx & 63));
}

/* log2 bucket of a value in [ns]: 0 for 0, else its bit length, capped at n - 1. */
static inline unsigned int
nl_dp_log2_bucket(uint64_t ns, unsigned int n)
{
	unsigned int b = ns == 0 ? 0 : 64 - (unsigned int)__builtin_clzll(ns);

	return b < n ? b : n - 1;
}

#endif /* NL_DP_INLINE_H */
