/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The dispatch model of seed 002 in virtual time: the simulator engine behind nlevel-sim's
 * response curves.
 *
 * Theory of operation. Tasks arrive as a Poisson stream at a random leaf (NLSC) or group
 * (2LSC). Every manager / scheduler is a FIFO single server whose service time per decision is
 * the policy's service_vt(); every transfer between managers takes transfer_delay_vt and every
 * dispatch to a machine dispatch_delay_vt. Machines are FIFO servers too: a sub-task takes
 * (I/L)/W_i(t) + (D/L)/T_i, W_i(t) = W_i (1 - b_i(t)) with background load b_i(t) redrawn every
 * bg_period_vt. A task completes when its last sub-task does; its response time runs from
 * arrival to completion, scheduling wait included (seed 002 §4.1).
 *
 * The model is managers/nl_model.h (shared with the live appliance, which tests/lockstep/
 * checks task by task); this engine turns its steps into events.
 *
 * Sub-tasks are booked on their machine when dispatched: the machine's busy_until advances by
 * the sub-task's time, so a policy reading the load table sees everything already assigned
 * (the live leaf does the same with its local accounting).
 *
 * Invariants (checked by tests/sim/test_dsim.c):
 *  I1  generated = completed + rejected + unfinished; unfinished = 0 unless saturated.
 *  I2  each task's completion is counted exactly once.
 *  I3  runs are deterministic in (model, variant, load, seed).
 */
#ifndef NL_DSIM_H
#define NL_DSIM_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_machine.h"
#include "nl_model.h"
#include "nl_model_cfg.h"
#include "nl_policy.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Outcome of one run (one variant, load and seed). Times in u.t. */
struct nl_dsim_result {
	double resp_mean_vt;      /**< mean response of measured tasks */
	double resp_p50_vt;
	double resp_p95_vt;
	double resp_p99_vt;
	double hops_mean;         /**< manager-to-manager transfers per task */
	double sched_wait_mean_vt; /**< time queued at managers per task */
	double global_util;       /**< busy fraction of the 2LSC global scheduler / NLSC root */
	double max_mgr_util;      /**< busy fraction of the busiest manager */
	double in_system_mean;    /**< time-average tasks in the system (Little's law check) */
	double lambda_measured;   /**< measured arrivals per u.t. */
	uint64_t generated;       /**< tasks generated */
	uint64_t measured;        /**< tasks in the statistics (arrived after warm-up) */
	uint64_t completed;       /**< tasks completed (all of them, warm-up included) */
	uint64_t rejected;        /**< tasks rejected (all reasons) */
	uint64_t unfinished;      /**< still in the system when the run stopped */
	uint64_t events;          /**< events processed */
	uint64_t decide_ties;     /**< decisions taken at the instant of the one before (nl_model.h I4) */
	uint64_t matched;         /**< tasks of a [class] (Requirements/Rank; issue #15) */
	uint64_t matched_rejected; /**< of them, rejected no_machine (nothing eligible) */
	bool saturated;           /**< the run could not keep up (see nl_dsim_run) */
	uint64_t progress_ppm;    /**< simulated time reached ÷ horizon_vt, in millionths, stored
				   *   every 65,536 events while the run goes (relaxed
				   *   __atomic_store_n: another thread may read it for progress) */
};

/**
 * Run one point of a curve.
 *
 * The run generates arrivals until horizon_vt, then drains (no new arrivals) until every task
 * is done or 2 x horizon_vt. It is saturated when tasks in the system exceed max_in_system
 * (the run stops there), when it does not drain, or when a manager is busy more than 97 %
 * of the time. Statistics cover tasks arriving in [warmup_vt, horizon_vt).
 *
 * @param m         Model.
 * @param mach      [m->n_mach] machines (nl_machines_build()).
 * @param v         Variant (scheme, G, static k).
 * @param load_pct  Offered system load [%] (nl_model_arrival_rate()).
 * @param seed      Replication seed; the same seed gives the same arrival stream under every
 *                  variant (common random numbers).
 * @param r         Output.
 * @return 0; -EINVAL (bad variant for the machines); -ENOMEM.
 * @par Context  Any thread; runs are independent (no shared mutable state).
 */
int nl_dsim_run(const struct nl_model_cfg *m, const struct nl_machine *mach,
		const struct nl_variant *v, double load_pct, uint64_t seed,
		struct nl_dsim_result *r);

/**
 * Run one point with any policy: nl_dsim_run() with the policy given as an ops table (a
 * policy the configuration cannot name, e.g. a test's), its parameters, and an optional
 * per-task trace.
 *
 * @param m         Model.
 * @param mach      [m->n_mach] machines.
 * @param ops       Policy.
 * @param sp        Its parameters (copied by nl_sched_create()).
 * @param load_pct  Offered system load [%].
 * @param seed      Replication seed (nl_model_src_init()).
 * @param trace     Called at every dispatch and reject; NULL for none.
 * @param r         Output.
 * A model with task classes ([class NAME]) needs its match table bound first
 * (nl_match_model_bind(), managers/match/nl_match_model.h): each task carries its class
 * handle in nl_task.aux.
 *
 * @return 0; -EINVAL (bad load or policy parameters, or task classes and no bound table);
 *         -ENOMEM.
 * @par Context  Any thread; runs are independent. The trace runs on the calling thread.
 */
int nl_dsim_run_ops(const struct nl_model_cfg *m, const struct nl_machine *mach,
		    const struct nl_policy_ops *ops, const struct nl_sched_params *sp,
		    double load_pct, uint64_t seed, const struct nl_model_trace *trace,
		    struct nl_dsim_result *r);

#ifdef __cplusplus
}
#endif
#endif /* NL_DSIM_H */
