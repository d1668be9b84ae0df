/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Scheduling policies as const ops tables, and the engine ops they call.
 *
 * Theory of operation. A policy (NLSC, 2LSC, ...) owns a set of managers numbered
 * 0..n_mgr-1. An engine (the discrete-event simulator in bench/, the DPDK dataplane) owns the
 * clock, the queues in front of each manager and the machines. For every task a manager
 * serves, the engine calls ops->decide(); the policy then calls exactly one engine op on the
 * task: forward (to another manager), dispatch (its L sub-tasks to machines) or reject. A policy
 * never reads a clock and never sends anything itself; it gets `now` from the engine.
 *
 * Invariants:
 *  I1  every decide() call ends with exactly one of forward / dispatch / reject for its task.
 *  I2  a policy keeps no pointer to a task after decide() returns.
 *  I3  decide() for manager m is only called by the single owner of m (its lcore, or the
 *      simulator); policies keep per-manager state only, so managers on different lcores
 *      never share writable policy state. The exception is the 2LSC global load snapshot,
 *      written by measure() on the global scheduler's owner only.
 *  I4  the load table returned by engine->load() is stable for the duration of decide().
 *  I5  an engine knows a policy only through this table: which manager measures (top_mgr()
 *      with measure() set), how a lost sub-task is re-placed (replace()), what a decision
 *      costs (service_vt()). No engine compares ops pointers or schemes, so a new policy
 *      needs no change in either engine (tests/managers/nl_policy_p2c.c proves it).
 *  I6  a policy may route a task through several managers in one decide() call when the
 *      engine's pass() op takes each hop (no queue, no service time between them); the
 *      decide() then still ends with exactly one forward / dispatch / reject (I1), made by
 *      the last manager, and the engine accounts each manager passed as if it had
 *      decided on its own (Source: issue "Dispatch at the physical limit", item 2).
 */
#ifndef NL_POLICY_H
#define NL_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_machine.h"
#include "nl_model_cfg.h"
#include "nl_task.h"
#include "nl_tree.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What an engine provides to policies. */
struct nl_engine_ops {
	/** Transfer t to manager to_mgr (one hop; the engine adds the transfer delay). */
	void (*forward)(void *ctx, struct nl_task *t, uint32_t to_mgr, double now_vt);
	/** Start t's n sub-tasks on mach[0..n-1] (ids may repeat when sub-tasks share). */
	void (*dispatch)(void *ctx, struct nl_task *t, const uint32_t *mach, unsigned int n,
			 double now_vt);
	/** Refuse t with a reason (the engine answers REJECT and accounts it). */
	void (*reject)(void *ctx, struct nl_task *t, enum nl_reject_reason why, double now_vt);
	/** Machine load table as manager `mgr` knows it, indexed by machine id (I4). */
	const struct nl_mach_load *(*load)(void *ctx, uint32_t mgr, double now_vt);
	/** Tasks waiting in manager `mgr`'s queue (not counting the one being decided). */
	unsigned int (*queue_len)(void *ctx, uint32_t mgr);
	/**
	 * Optional (NULL: never). Offer to take t to manager to_mgr within the current decide()
	 * (I6): true when the engine did so (to_mgr is owned by the same thread, costs no modelled
	 * service time, and the engine counted the hop: t->hops and the managers' statistics);
	 * the policy then decides for to_mgr at once. false when it did nothing: the policy calls
	 * forward() as usual. Native and port modes of the dataplane say true for managers of
	 * the calling lcore; emulated runs and the simulator, where every manager costs its
	 * service time, never do.
	 */
	bool (*pass)(void *ctx, struct nl_task *t, uint32_t to_mgr, double now_vt);
	/**
	 * Optional (NULL: policies scan the table on every pick). A number that changes whenever
	 * the table load(ctx, mgr) returns changes other than by busy_until updates of the
	 * machines this manager's own dispatch() booked (a new snapshot, a machine joining or
	 * leaving, another manager's booking on a shared table). Policies keep pick indexes
	 * (nl_pick_idx.h) in step with it. Read after load().
	 */
	uint64_t (*load_gen)(void *ctx, uint32_t mgr);
};

/** An engine instance: its ops and context. */
struct nl_engine {
	const struct nl_engine_ops *ops;
	void *ctx;
};

struct nl_sched;

/**
 * Take t on to manager to_mgr within the current decide() when the engine allows it (I6).
 * @return true when the engine took the hop (decide for to_mgr now); false: forward() it.
 * @par Context  The caller of decide(). @par Source nl_engine_ops.pass.
 */
static inline bool
nl_engine_pass(const struct nl_engine *eng, struct nl_task *t, uint32_t to_mgr, double now_vt)
{
	return eng->ops->pass != NULL && eng->ops->pass(eng->ctx, t, to_mgr, now_vt);
}

/** A scheduling policy. */
struct nl_policy_ops {
	const char *name; /**< "nlsc", "2lsc" */
	/** Build per-policy state on s (s->tree, s->mach already set). 0 or -errno. */
	int (*init)(struct nl_sched *s);
	/** Free what init() built. */
	void (*fini)(struct nl_sched *s);
	/** Manager where a new task appears; rnd is a uniform 64-bit random number. */
	uint32_t (*entry)(const struct nl_sched *s, const struct nl_task *t, uint64_t rnd);
	/** Service time of manager mgr's decision on t [u.t.] (the FIFO server's cost). */
	double (*service_vt)(const struct nl_sched *s, uint32_t mgr, const struct nl_task *t);
	/** The decision of manager mgr on t (I1, I2). */
	void (*decide)(struct nl_sched *s, uint32_t mgr, struct nl_task *t, double now_vt,
		       const struct nl_engine *eng);
	/** Periodic load measurement (NULL if the policy has none); period s->p.measure_period_vt. */
	void (*measure)(struct nl_sched *s, double now_vt, const struct nl_engine *eng);
	/** Printable name of manager mgr into buf ("M(2,01)", "global"). */
	void (*mgr_name)(const struct nl_sched *s, uint32_t mgr, char *buf, unsigned int len);
	/**
	 * The manager at the top of the policy: the one that runs measure() (when set) and whose
	 * utilization engines report as global_util (2LSC: the global scheduler; NLSC: the root).
	 */
	uint32_t (*top_mgr)(const struct nl_sched *s);
	/**
	 * Re-place one sub-task of t whose machine was lost (I5): the machine the policy would
	 * pick for it now, by the same cost model as its first pick (expected completion on
	 * `load`, machines with busy_until_vt >= NL_MACH_GONE_VT never chosen). 0 and *out_mach,
	 * or -ENOSPC when no live machine can serve t. Called by the engine's control thread.
	 */
	int (*replace)(const struct nl_sched *s, const struct nl_task *t,
		       const struct nl_mach_load *load, double now_vt, uint32_t *out_mach);
};

/** A policy bound to a machine set. */
struct nl_sched {
	const struct nl_policy_ops *ops;
	struct nl_sched_params p;      /**< costs and knobs (copied) */
	struct nl_tree *tree;          /**< resource tree of the machines (owned) */
	const struct nl_machine *mach; /**< [n_mach] (borrowed, outlives the sched) */
	struct nl_mach_rate *rate;     /**< [n_mach] derived from mach at creation (owned) */
	unsigned int n_mach;
	unsigned int n_mgr;            /**< managers of this policy */
	void *priv;                    /**< policy state */
};

extern const struct nl_policy_ops nl_policy_nlsc; /**< N-level, seed 002 §3.3 */
extern const struct nl_policy_ops nl_policy_2lsc; /**< 2-level, seed 002 §3.1 */

/**
 * The ops table of a scheme.
 * @return &nl_policy_nlsc or &nl_policy_2lsc. @par Context Pure.
 */
const struct nl_policy_ops *nl_policy_of(enum nl_scheme scheme);

/**
 * Bind a policy to machines: builds the resource tree and the policy's state.
 *
 * @param out     Output.
 * @param ops     Policy.
 * @param p       Costs and knobs (copied); p->n_res = N; p->n_groups for 2LSC.
 * @param mach    [n_mach] machines; must outlive the sched.
 * @param n_mach  >= 1.
 * @return 0; -EINVAL (bad parameters, e.g. G > M); -E2BIG (tree too large); -ENOMEM.
 * @par Context  Control path; allocates.
 */
int nl_sched_create(struct nl_sched **out, const struct nl_policy_ops *ops,
		    const struct nl_sched_params *p, const struct nl_machine *mach,
		    unsigned int n_mach);

/** Free a sched; NULL accepted. @par Context Control path (after a grace period live). */
void nl_sched_free(struct nl_sched *s);

/**
 * The check every policy's decide() makes first: L within 1..NL_TASK_MAX_SPLIT and the vector
 * naming no resource beyond N. A task that fails it is rejected NL_REJECT_BAD_TASK.
 * @return true when t is well formed for s. @par Context Pure.
 * @par Source seed 002 §2.2 eq. (6) (L_i >= 1, Delta_i over the N resources).
 */
static inline bool
nl_sched_task_ok(const struct nl_sched *s, const struct nl_task *t)
{
	return t->n_split >= 1 && t->n_split <= NL_TASK_MAX_SPLIT &&
	       (t->need & ~nl_res_mask(s->tree->n_res)) == 0;
}

/**
 * The manager that runs ops->measure(), or NL_NODE_NONE when the policy measures nothing.
 * @return a manager id < s->n_mgr, or NL_NODE_NONE. @par Context Pure read of s.
 */
static inline uint32_t
nl_sched_measure_mgr(const struct nl_sched *s)
{
	return s->ops->measure != NULL ? s->ops->top_mgr(s) : NL_NODE_NONE;
}

/**
 * The replace() of NLSC and 2LSC: the least-loaded live machine of the leaf group that
 * matches t's vector (for 2LSC the matching machines of every group, as its global
 * scheduler sees them), by expected completion of one sub-task (nl_pick_least_loaded()).
 *
 * @param s         Policy bound to machines.
 * @param t         Task whose sub-task is re-placed (need, instr, data_bits, n_split).
 * @param load      Load table indexed by machine id (the engine's exact table).
 * @param now_vt    Current time [u.t.].
 * @param out_mach  Output machine id.
 * @return 0; -ENOSPC when no machine matches t or every matching machine left.
 * @par Context  Engine control thread; reads s and load only.
 * @par Source   seed 002 §3.3 step 5 (least-loaded pick), applied to one sub-task.
 */
int nl_sched_replace_leaf(const struct nl_sched *s, const struct nl_task *t,
			  const struct nl_mach_load *load, double now_vt, uint32_t *out_mach);

/* --- 2LSC introspection (tests, telemetry) --- */

/**
 * 2LSC: the group of a machine (groups by CPU speed, slowest first, sizes differ by <= 1).
 * @return group index 0..G-1. @par Context Pure read.
 */
unsigned int nl_2lsc_group_of(const struct nl_sched *s, uint32_t mach);

/**
 * 2LSC: a group's load as its scheduler measures it: (busy machines + L * queued tasks) /
 * live machines in the group, with busy = busy_until > now; machines that left
 * (NL_MACH_GONE_VT) are not counted.
 * @return load [sub-tasks per machine]; INFINITY when no machine of the group is live. @par Context Owner of the group's manager.
 * @par Source seed 002 §3.1 (1): "machine states and the tasks in its queue".
 */
double nl_2lsc_group_load(const struct nl_sched *s, unsigned int grp, double now_vt,
			  const struct nl_engine *eng, unsigned int n_split);

/** 2LSC: manager id of the global scheduler (= G). @par Context Pure. */
static inline uint32_t
nl_2lsc_global_mgr(const struct nl_sched *s)
{
	return s->n_mgr - 1;
}

#ifdef __cplusplus
}
#endif
#endif /* NL_POLICY_H */
