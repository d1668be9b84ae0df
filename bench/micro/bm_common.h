/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Shared pieces of nlevel-bench (the Google Benchmark harness): the TSC counter behind every
 * "cyc_per_item" figure, the EAL state main() set up, and the C-header bridge.
 *
 * Every benchmark reports items/s (Google Benchmark's items_per_second) and cyc_per_item:
 * TSC ticks over the whole timed loop divided by the items it handled. On this machine the TSC
 * is invariant (constant_tsc, nonstop_tsc), so a TSC tick is a reference cycle, not a core
 * cycle under turbo.
 */
#ifndef NL_BM_COMMON_H
#define NL_BM_COMMON_H

#include <cstdint>
#include <cstdlib>
#include <string>

#include <benchmark/benchmark.h>

#include "nl_cfg.h"
#include "nl_model_cfg.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/** TSC now [cyc]; 0 where there is no TSC. */
static inline uint64_t
nl_bm_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return 0;
#endif
}

/**
 * Record items/s and cycles per item of a finished timed loop.
 *
 * @param st         The benchmark state.
 * @param tsc_cyc    TSC ticks the loop took [cyc].
 * @param n_item     Items the loop handled.
 */
static inline void
nl_bm_report(benchmark::State &st, uint64_t tsc_cyc, uint64_t n_item)
{
	st.SetItemsProcessed((int64_t)n_item);
	st.counters["cyc_per_item"] = n_item == 0 ? 0.0 : (double)tsc_cyc / (double)n_item;
}

/**
 * The seed 002 §4.2 model of config/paper-96.ini (M = 96, N = 4, L = 4), read from the source
 * tree ($NL_SRC_ROOT, else the build's source root); benchmarks change what they vary.
 *
 * @param st  The benchmark state (skipped with the reason when the file cannot be read).
 * @param m   Output.
 * @return true when m is filled.
 */
static inline bool
nl_bm_paper96(benchmark::State &st, struct nl_model_cfg *m)
{
	const char *root = getenv("NL_SRC_ROOT");
	std::string path = std::string(root != nullptr ? root : NL_BENCH_SRC_ROOT) +
			   "/config/paper-96.ini";
	struct nl_cfg *cfg = nullptr;
	char err[256];
	bool ok = nl_cfg_load(&cfg, path.c_str(), err, sizeof(err)) == 0 &&
		  nl_model_cfg_parse(cfg, m) == 0;

	nl_cfg_free(cfg);
	if (!ok)
		st.SkipWithError(("cannot load " + path).c_str());
	return ok;
}

/** Whether main() initialised the EAL (DPDK builds only). */
extern bool nl_bm_eal_ok;

/** Lcores the EAL gave us (1 when the EAL is not up). */
extern unsigned int nl_bm_n_lcore;

/** Skip a benchmark that needs the EAL (or two lcores) when it is not there. @return true if skipped. */
static inline bool
nl_bm_need_eal(benchmark::State &st, unsigned int n_lcore)
{
	if (!nl_bm_eal_ok) {
		st.SkipWithError("EAL not initialised");
		return true;
	}
	if (nl_bm_n_lcore < n_lcore) {
		st.SkipWithError("needs more lcores (-l 0-1)");
		return true;
	}
	return false;
}

#endif /* NL_BM_COMMON_H */
