/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A second lcore for the cross-lcore benchmarks: run a function on the first worker lcore
 * while the benchmark thread (the main lcore) measures, then stop it and wait.
 * DPDK builds only.
 */
#ifndef NL_BM_LCORE_H
#define NL_BM_LCORE_H

#include <atomic>

#include <rte_launch.h>
#include <rte_lcore.h>

/** A peer lcore running fn(arg) until stop is set. */
struct nl_bm_peer {
	unsigned int lcore = RTE_MAX_LCORE;
	std::atomic<bool> stop{ false };

	/** Launch fn(arg) on the first worker lcore. @return 0 or -EBUSY / -ENODEV. */
	int
	start(lcore_function_t *fn, void *arg)
	{
		lcore = rte_get_next_lcore(-1, 1, 0);
		if (lcore >= RTE_MAX_LCORE)
			return -ENODEV;
		stop.store(false, std::memory_order_relaxed);
		return rte_eal_remote_launch(fn, arg, lcore);
	}

	/** Tell it to stop and wait for it. */
	void
	join(void)
	{
		if (lcore >= RTE_MAX_LCORE)
			return;
		/* Pairs with the acquire load in the peer's loop. */
		stop.store(true, std::memory_order_release);
		rte_eal_wait_lcore(lcore);
		lcore = RTE_MAX_LCORE;
	}

	/** Whether the peer should stop (called by the peer). */
	bool
	stopping(void) const
	{
		return stop.load(std::memory_order_acquire);
	}
};

#endif /* NL_BM_LCORE_H */
