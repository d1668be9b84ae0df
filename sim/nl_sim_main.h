/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The models nlevel-sim runs, chosen by the configuration's sections. Each model has one
 * entry point taking the loaded configuration and the command-line options; it prints its
 * errors and returns the process exit status (0 ok, 1 run failed, 2 bad configuration).
 */
#ifndef NL_SIM_MAIN_H
#define NL_SIM_MAIN_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "nl_cfg.h"
#include "nl_gnuplot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Command-line options of nlevel-sim. */
struct nl_sim_opts {
	const char *config;  /**< --config */
	const char *out_dir; /**< --out */
	const char *trace;   /**< --trace (batch models), or NULL */
	const char *rsv_policy; /**< --rsv-policy (batch models with [reservations]), or NULL */
	const char *loads;   /**< --loads, or NULL */
	unsigned int seeds;  /**< --seeds, 0 = configuration's */
	unsigned int threads; /**< --threads, 0 = configuration's */
	double horizon_vt;   /**< --horizon, 0 = configuration's */
	bool quiet;          /**< --quiet */
};

/**
 * Monotonic wall clock for progress lines and the SUMMARY figures.
 * @return seconds since an arbitrary origin [s]. @par Context Any thread.
 */
static inline double
nl_sim_wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/** Seed 002 dispatch curves ([system]/[task]/[nlsc]/[2lsc] sections). @return exit status. */
int nl_sim_main_curves(struct nl_cfg *cfg, const struct nl_sim_opts *o);

/** Batch model (a [batch] section; sim/batch/). @return exit status. */
int nl_sim_main_batch(struct nl_cfg *cfg, const struct nl_sim_opts *o);

/** Gossip model (a [gossip] section; sim/gossip/, docs/gossip.md). @return exit status. */
int nl_sim_main_gossip(struct nl_cfg *cfg, const struct nl_sim_opts *o);

/**
 * Pick the model by the configuration's sections and run it.
 * @return exit status.
 */
static inline int
nl_sim_main_dispatch(struct nl_cfg *cfg, const struct nl_sim_opts *o)
{
#ifdef NL_HAVE_GOSSIP
	if (nl_cfg_has_section(cfg, "gossip")) {
		if (o->trace != NULL || o->rsv_policy != NULL || o->loads != NULL ||
		    o->horizon_vt > 0 || o->seeds > 0) {
			fprintf(stderr, "nlevel-sim: --trace, --rsv-policy, --loads, --horizon and "
					"--seeds do not apply to the gossip model (see --help)\n");
			return 2;
		}
		return nl_sim_main_gossip(cfg, o);
	}
#endif
#ifdef NL_HAVE_BATCH
	if (nl_cfg_has_section(cfg, "batch")) {
		if (o->loads != NULL || o->seeds > 0 || o->horizon_vt > 0 || o->threads > 0) {
			fprintf(stderr, "nlevel-sim: --loads, --seeds, --horizon and --threads do not "
					"apply to the batch model (see --help)\n");
			return 2;
		}
		return nl_sim_main_batch(cfg, o);
	}
#endif
	if (o->trace != NULL || o->rsv_policy != NULL) {
		fprintf(stderr, "nlevel-sim: --trace and --rsv-policy apply to the batch model only "
				"(a [batch] section; see --help)\n");
		return 2;
	}
	return nl_sim_main_curves(cfg, o);
}

#ifdef __cplusplus
}
#endif
#endif /* NL_SIM_MAIN_H */
