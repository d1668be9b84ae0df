/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The live dispatch engine: managers on lcores, rte_ring inboxes, an rte_mempool of tasks,
 * RCU load tables, and the engine ops (struct nl_engine_ops) the shared policies call.
 *
 * Theory of operation. Every manager of the policy (NLSC tree node, 2LSC group / global
 * scheduler) owns one inbox rte_ring of struct nl_dp_msg (task pointer + time stamp), many
 * producers, one consumer. Managers are polled by their lcore (several per lcore) in bursts.
 * A poll takes a message, and the policy's decide() then calls exactly one engine op: forward
 * (enqueue into another manager's inbox), dispatch (book L sub-tasks in the manager's load
 * view and enqueue them on the sub-task ring) or reject (enqueue the task on the finish ring).
 * The control lcore (the main lcore) is the only consumer of the sub-task and finish rings:
 * it runs or sends the sub-tasks, applies completions to the load table (the RCU writer),
 * answers clients and returns tasks to the mempool. So every accepted task is at any moment
 * in exactly one place: an inbox, a manager's service slot, the sub-task path (machines), the
 * finish ring, or back in the pool after being counted completed or failed.
 *
 * Timing modes. Native: a manager decides as soon as it takes a task. Emulated: the engine
 * reproduces nlevel-sim's model in real time scaled by ns_per_vt: a manager is a FIFO server
 * (busy_until_vt; start = max(ready, busy_until), decide at start + service_vt), a transfer
 * adds transfer_delay_vt to the message's ready stamp, a dispatch adds dispatch_delay_vt, and
 * machines are FIFO servers emulated on the control lcore (I/L at W_i(1-b) + D/L at T_i). All
 * decisions use the virtual stamps, so a late poll delays nothing in the model.
 *
 * Invariants:
 *  I1  accepted = completed + failed + in flight, with in flight = tasks out of the mempool
 *      (checked by nl_dp_accounting_ok() at quiescence).
 *  I2  a task pointer is in at most one ring / slot at a time, except its sub-task records
 *      (one per sub-task) which all belong to the control lcore.
 *  I3  only the control lcore frees tasks, counts completed / failed and writes the load
 *      table and the machine generation (RCU root, nl_dp_gen).
 *  I4  the hot path (manager polls, engine ops) never locks, allocates, logs or blocks; a
 *      full ring becomes a REJECT (ingress) or a failed task (mid-route), never a drop.
 */
#ifndef NL_DP_H
#define NL_DP_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_load.h"
#include "nl_model.h"
#include "nl_model_cfg.h"
#include "nl_policy.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NL_DP_MAX_LCORES 64u
#define NL_DP_HIST_BUCKETS 24u /**< log2 buckets of service / latency [ns] */

struct nl_dp;
struct nl_dp_lcore;

/**
 * What a layer above the engine adds to it (scale-out: dataplane/xa/), as a policy fills
 * struct nl_engine_ops: the engine calls the layers below it directly and the layers above
 * only through this table, which the upper layer defines and the program hands over in
 * nl_dp_opts.ext (STYLE.md "Layers": calls run down, hooks run up). Every entry may be NULL.
 * Control path only: no entry runs on a manager lcore.
 */
struct nl_dp_ext_ops {
	/**
	 * nl_dp_create(), after the first machine generation is published and before managers
	 * are mapped to lcores: build the extension's state for dp.
	 * @param dp   Engine being created (policy, managers' count and names known).
	 * @param arg  nl_dp_opts.ext_arg.
	 * @param ext  Output: the state (dp->ext), or NULL when there is nothing to add.
	 * @return 0, or -errno: creation fails with it.
	 */
	int (*attach_ctl)(struct nl_dp *dp, const void *arg, void **ext);
	/**
	 * nl_dp_create(): the lcore that polls manager `mgr`: lc (a manager lcore), or one of
	 * the extension's own that is never launched (a scale-out proxy, drained elsewhere).
	 */
	struct nl_dp_lcore *(*mgr_lcore)(void *ext, uint32_t mgr, struct nl_dp_lcore *lc);
	/** nl_dp_free(), before the engine drains: account and return the tasks it holds. */
	void (*drain_ctl)(struct nl_dp *dp, void *ext);
	/** nl_dp_counts_get(): task objects of the pool it carries for another appliance (not
	 *  this engine's tasks, nl_dp.h I1). Any thread; relaxed. */
	uint64_t (*foreign_live)(const void *ext);
	/** nl_dp_free(), last: free the state. */
	void (*free)(void *ext);
};

/** Run-time options of the engine (from the command line). */
struct nl_dp_opts {
	enum nl_scheme scheme;
	unsigned int n_groups;      /**< 2LSC G */
	unsigned int static_known;  /**< NLSC k */
	bool emulate;               /**< emulated timing (else native) */
	bool port_mode;             /**< tasks and machines are outside: no generator, the layer
				     *   driving the engine (port/) admits tasks with
				     *   nl_dp_ingress_st() and takes the sub-tasks and ends */
	double ns_per_vt;           /**< emulated: wall ns per u.t. */
	unsigned int inbox_size;    /**< per-manager ring size (power of two) */
	unsigned int pool_size;     /**< tasks in the mempool */
	unsigned int burst;         /**< tasks per manager per poll */
	double publish_vt;          /**< load snapshot period [u.t.] */
	double work_scale_s;        /**< port mode: workers' wall s per model s (load estimate) */
	unsigned int mgr_lcore[NL_DP_MAX_LCORES]; /**< lcores that run managers */
	unsigned int n_mgr_lcore;
	int mgr_map_n;              /**< entries in mgr_map (0 = round-robin) */
	unsigned int mgr_map[4096]; /**< manager id -> index into mgr_lcore */
	bool native_instant;        /**< native mode: machines finish sub-tasks at once */
	bool native_book;           /**< native mode: each sub-task is booked on its machine for
				     *   its modelled time x work_scale_s (the busy-until the pick
				     *   reads advances); the manager lcore completes the task when
				     *   its last sub-task ends. Excludes native_instant. */
	unsigned int idle_sleep_us; /**< port/native: an idle lcore naps this long (0 = spin) */
	const struct nl_policy_ops *policy; /**< NULL: the ops of `scheme` (nl_policy_of()); else
					     *   any policy, e.g. a test's (nl_policy.h I5) */
	bool lockstep;              /**< emulated: one thread runs every lcore round and the
				     *   control in virtual-time order (deterministic; tests) */
	const struct nl_model_trace *trace; /**< emulated: called at every dispatch and reject
					     *   (lock-step runs: from the driving thread); NULL */
	const struct nl_dp_ext_ops *ext; /**< a layer above that extends the engine (scale-out:
					  *   nl_xa.h), or NULL */
	const void *ext_arg;        /**< its argument (ext->attach_ctl()) */
};

/** Counters of one run (control lcore's view; see I1). */
struct nl_dp_counts {
	uint64_t accepted;
	uint64_t rejected_ingress;  /**< REJECT before acceptance (overload, bad task) */
	uint64_t completed;
	uint64_t failed;            /**< accepted, then refused or lost */
	uint64_t in_flight;         /**< tasks out of the pool */
	uint64_t forwards;          /**< manager-to-manager transfers (hops), all managers */
	uint64_t xhops;             /**< hand-overs between manager lcores on their SP/SC rings
				     *   (forwards, and new tasks from the ingress lcore) */
};

/**
 * Create the engine: task mempool, inboxes, rings, machine generation, load table.
 *
 * @param out   Output.
 * @param m     Model (machines, costs; copied).
 * @param mach  [m->n_mach] machines (copied).
 * @param o     Options (copied).
 * @return 0; -EINVAL; -ENOMEM (rte_errno turned into -errno).
 * @par Context  Main lcore after rte_eal_init(), registered QSBR reader; allocates.
 */
int nl_dp_create(struct nl_dp **out, const struct nl_model_cfg *m, const struct nl_machine *mach,
		 const struct nl_dp_opts *o);

/** Free the engine (lcores stopped). @param dp NULL accepted. @par Context Main lcore. */
void nl_dp_free(struct nl_dp *dp);

/** Result of one emulated curve point. */
struct nl_dp_point {
	double resp_mean_vt, resp_p50_vt, resp_p95_vt, resp_p99_vt;
	double hops_mean, sched_wait_mean_vt, global_util, max_mgr_util;
	uint64_t generated, measured, completed, rejected, unfinished;
	double wall_s;
	bool saturated;
};

/**
 * Emulated mode: run one load point of the model with an in-process Poisson generator and
 * in-process machines; returns when every task is done, at 2 x horizon, or on saturation.
 * The task stream, entry draws and background load are the simulator's for the same seed
 * (managers/nl_model.h I1). With opts.lockstep the calling thread runs every lcore round and
 * the control round in virtual-time order instead of launching the lcores: deterministic,
 * and the same decisions as nl_dsim_run_ops() task by task (tests/lockstep/).
 *
 * @param dp        Engine (emulate = true).
 * @param load_pct  Offered load [%].
 * @param seed      Seed of arrivals, vectors and background load.
 * @param pt        Output statistics (tasks arriving in [warmup, horizon)).
 * @return 0; -EINVAL (not emulated, or no arrivals at this load); -ENOMEM; the EAL's error
 *         when an lcore cannot be launched.
 * @par Context  Main lcore (becomes the control lcore for the run), QSBR-registered; launches
 *               the manager lcores and waits for them (not with opts.lockstep).
 * @par Source   seed 002 §4.1-4.2 (the model), docs/dataplane.md "Timing modes".
 */
int nl_dp_run_point(struct nl_dp *dp, double load_pct, uint64_t seed, struct nl_dp_point *pt);

/** Native-mode capacity measurement. */
struct nl_dp_native_result {
	double rate_tps;            /**< tasks per wall second of the run (wall_s) */
	double wall_s;              /**< wall time of the run: launch to stop [s] */
	double lat_mean_ns;         /**< ingress -> sub-task assignment */
	double lat_p99_ns;
	uint64_t tasks;             /**< dispatched (instant machines) or completed (booked) */
	uint64_t accepted;          /**< tasks the ingress took (= tasks + failed + unfinished) */
	uint64_t rejected;          /**< refused at ingress: pool or inbox full */
	uint64_t failed;            /**< accepted, then failed during the run (REJECT no_machine,
				     *   a full hand-over ring: overload) */
	uint64_t unfinished;        /**< accepted, still in flight when the run stopped */
	uint64_t generated;         /**< tasks the generator drew (= accepted + rejected) */
	uint64_t xhops;             /**< hand-overs between manager lcores on their SP/SC rings */
};

/**
 * Native mode: inject tasks for `secs` seconds at `rate_tps` (0 = as fast as possible) with
 * in-process machines (instant or booked), measuring the dispatch rate and latency. Every
 * generated task is counted once: tasks, failed, unfinished or rejected.
 *
 * @param dp        Engine (emulate = false).
 * @param rate_tps  Offered rate [tasks/s]; 0 = saturate.
 * @param secs      Duration of the arrivals [s], > 0 (nl_dp_stop() ends it sooner).
 * @param r         Output; r->rate_tps is over the measured wall time r->wall_s.
 * @return 0; -EINVAL (emulated engine, secs not > 0); -errno of the lcore launch.
 * @par Context  Main lcore.
 */
int nl_dp_run_native(struct nl_dp *dp, double rate_tps, double secs,
		     struct nl_dp_native_result *r);

/**
 * Driven native run (benchmarks): the engine in native mode with back-to-back arrivals, its
 * manager lcores not launched; the caller runs their rounds on its own thread with
 * nl_dp_drive_round(), so a benchmark times exactly the code the lcore loop runs (ingress,
 * entry, every hop's admission and decide, the leaf's pick, the dispatch).
 *
 * @param dp  Engine created with emulate = false and native_instant or native_book.
 * @return 0; -EINVAL for any other mode.
 * @par Context  Control thread, manager lcores stopped; QSBR-registered.
 */
int nl_dp_drive_begin(struct nl_dp *dp);

/**
 * One round of manager lcore `idx` (index into opts.mgr_lcore) on the calling thread: new
 * tasks (the ingress lcore), then the managers with work, as nl_dp_lcore_main() does.
 *
 * @param dp   Engine after nl_dp_drive_begin().
 * @param idx  Lcore index, < opts.n_mgr_lcore.
 * @return tasks this lcore has dispatched since nl_dp_drive_begin() (native_book: booked on
 *         their machines, complete or not).
 * @par Context  The driving thread, QSBR-online (it must announce quiescent states itself).
 */
uint64_t nl_dp_drive_round(struct nl_dp *dp, unsigned int idx);

/** Ask every loop to stop. @par Context Any thread, signal handler included. */
void nl_dp_stop(void);

/** Whether nl_dp_stop() was called. @return true after a stop request. @par Context Any. */
bool nl_dp_stopping(void);

/** Counters snapshot. @param dp Engine. @param c Output. @par Context Any thread. */
void nl_dp_counts_get(const struct nl_dp *dp, struct nl_dp_counts *c);

/**
 * Manager lcores that run at least one manager of this appliance (SUMMARY mgr_lcores): a
 * --map that puts every manager on one lcore counts 1 however many worker lcores the EAL has.
 * @param dp Engine. @return that count. @par Context Any thread (set at creation).
 */
unsigned int nl_dp_mgr_lcores(const struct nl_dp *dp);

/**
 * I1 at quiescence: accepted == completed + failed + tasks out of the pool.
 * @param dp Engine. @return true when it holds. @par Context Main lcore, lcores stopped.
 */
bool nl_dp_accounting_ok(const struct nl_dp *dp);

/**
 * Machine join / leave / speed change at run time: publish a new machine generation.
 *
 * @param dp        Engine.
 * @param mach      Machine id (slot).
 * @param alive     Whether the machine may receive sub-tasks.
 * @param speed_ips New W_i (0 = unchanged).
 * @return 0; -EINVAL; -ENOMEM.
 * @par Context  Control lcore only (I3); allocates; the old generation is freed after a
 *               grace period.
 */
int nl_dp_machine_set_ctl(struct nl_dp *dp, uint32_t mach, bool alive, double speed_ips);

/**
 * Open the telemetry gate for dp and register the engine's commands /nlevel/managers and
 * /nlevel/machines (nl_dp_tel_register()); the layers above register theirs behind the same
 * gate (port: /nlevel/stats and the rest; scale-out: /nlevel/appliances, /nlevel/summaries).
 * @param dp Engine, until nl_dp_free() closes the gate. @return 0; -errno.
 * @par Context Main lcore, init.
 */
int nl_dp_telemetry_init(struct nl_dp *dp);

struct rte_tel_data;

/**
 * Register a telemetry command of the appliance behind its gate: the handler runs only while
 * the appliance is open (between nl_dp_telemetry_init() and nl_dp_free()), under a read lock
 * that nl_dp_free() takes for writing before it frees anything a handler reads; a closed gate
 * answers -EINVAL. A name already registered in this process keeps its first handler's slot
 * and gets the new handler.
 * @param name     Command ("/nlevel/...").
 * @param fn       Handler (runs on DPDK's telemetry thread).
 * @param help     Help text.
 * @return 0; -ENOSPC (more than 32 commands); -EINVAL or -ENOENT from rte_telemetry.
 * @par Context  Control path, before or while serving. @par Source  DPDK telemetry library.
 */
int nl_dp_tel_register(const char *name, int (*fn)(const char *, const char *, struct rte_tel_data *),
		       const char *help);

/**
 * Close the telemetry gate when it is open for dp: waits for handlers in progress, then every
 * command answers -EINVAL until nl_dp_telemetry_init() opens it again (for another engine).
 * An engine the gate is not open for changes nothing.
 * @param dp Engine being freed. @par Context Control path (nl_dp_free()).
 */
void nl_dp_tel_close(const struct nl_dp *dp);

/**
 * Open the telemetry gate for dp (nl_dp_telemetry_init() does, with the engine's commands).
 * @param dp  Engine, until nl_dp_tel_close(). @par Context Control path, init.
 */
void nl_dp_tel_open(struct nl_dp *dp);

/**
 * Hand the gate the state of the layer driving dp (port mode: its struct nl_port; NULL when
 * it stops), which that layer's handlers get back with nl_dp_tel_driver(): set under the
 * gate's write lock, so a handler sees the old value or the new one for its whole run. Does
 * nothing when the gate is not open for dp.
 * @param dp      Engine. @param driver  The driver's state, or NULL.
 * @par Context  Control path (the driving layer, at its start and end).
 */
void nl_dp_tel_driver_set(const struct nl_dp *dp, void *driver);

/**
 * The driving layer's state set with nl_dp_tel_driver_set(), NULL when none or closed.
 * @return State; valid while the caller holds the gate (inside a handler).
 * @par Context DPDK's telemetry thread, in a handler.
 */
void *nl_dp_tel_driver(void);

/**
 * The engine the telemetry gate is open for, NULL when closed.
 * @return Engine; valid while the caller holds the gate (inside a handler registered with
 *         nl_dp_tel_register()). @par Context DPDK's telemetry thread, in a handler.
 */
struct nl_dp *nl_dp_tel_dp(void);

/** Log type of the dataplane (user.nlevel.dataplane). */
extern int nl_dp_logtype;

#ifdef __cplusplus
}
#endif
#endif /* NL_DP_H */
