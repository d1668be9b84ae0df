/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The dispatch model of seed 002 around the policies, written once for both engines: the
 * discrete-event simulator (sim/dispatch/nl_dsim.c) and the live appliance (dataplane/). Pure C:
 * no clock, no DPDK; every time is given by the caller in u.t.
 *
 * Theory of operation. A task's life in either engine is the same sequence of model calls:
 *
 *   nl_model_src_draw()      a task from the configuration (Poisson arrivals, vector, work)
 *   ops->entry()             the manager where it appears (policy)
 *   nl_model_mgr_admit()     FIFO admission at a manager: start = max(arrival, busy_until),
 *                            service = ops->service_vt() (policy)
 *   ops->decide()            at the end of service: forward / dispatch / reject (policy)
 *   nl_model_sub_vt()        each sub-task's service time on its machine, background load
 *                            included, from the moment it starts there
 *   nl_model_task_sub_done() a sub-task finished; the task completes with its last one
 *
 * An engine owns only what differs between virtual time and a real machine: where time comes
 * from, how a task moves between managers (an event, an rte_ring), and how results are
 * collected. So the simulator predicts the appliance because the two call the same code, and
 * tests/lockstep/ holds them to it task by task.
 *
 * Invariants:
 *  I1  the same (configuration, lambda, seed) gives the same task stream, entry draws and
 *      background load in every engine (nl_model_src_init()).
 *  I2  a task's outstanding sub-task count lives in the low 16 bits of nl_task.flags; only
 *      nl_model_task_subs_set() and nl_model_task_sub_done() touch them. Engines may use the
 *      bits above for their own flags.
 *  I3  nl_model_mgr_admit() calls must be made in the order tasks reach the manager (FIFO).
 *  I4  decisions (ends of service) at one instant are taken in manager id order, after the
 *      instant's other events. Exact ties are common, not rare: a manager's service is a
 *      constant (mgr_service_vt), so ends of service fall on a lattice of 0.5 u.t. steps
 *      from a busy period's start, and two managers fed from one busy period share it;
 *      their tasks then reach a third manager at one instant, and the order of the two
 *      decisions is the order of its FIFO. The simulator keys its decision events so
 *      (nl_evq_push_key_st()); the lock-step appliance polls a lcore's managers in id
 *      order, so with one manager lcore it meets I4 exactly (with several, ties are taken
 *      lcore by lcore). One manager's decisions at one instant (a service time of 0 ends
 *      several) are taken in the order it admitted the tasks: its FIFO.
 */
#ifndef NL_MODEL_H
#define NL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_machine.h"
#include "nl_model_cfg.h"
#include "nl_policy.h"
#include "nl_rng.h"
#include "nl_task.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bits of nl_task.flags that count outstanding sub-tasks (I2). */
#define NL_MODEL_SUBS_MASK 0xffffu

/** Background load of the machines: W_i(t) = W_i (1 - b_i(t)) (nl_mach_bg_factor()). */
struct nl_model_bg {
	double load_max;  /**< largest b, 0..0.95; 0 = machines run at nominal speed */
	double period_vt; /**< b redrawn every period [u.t.] */
	uint64_t seed;    /**< run seed of the draws */
};

/** A task source: the Poisson stream of seed 002 §4.2 drawn from a model configuration. */
struct nl_model_src {
	struct nl_rng rng_task;  /**< inter-arrival gaps, vectors, work (same for every variant) */
	struct nl_rng rng_entry; /**< where tasks appear (policy entry draws) */
	double lambda;           /**< arrivals per u.t.; <= 0 = back to back (native runs) */
	double next_vt;          /**< arrival time of the next task [u.t.] */
	uint64_t next_id;        /**< id of the next task, from 0 */
	uint64_t bg_seed;        /**< background-load seed of the run (nl_model_bg.seed) */
};

/**
 * Start a task source: seeds the task and entry streams and the background load from `seed`
 * (common random numbers: every variant and engine sees the same stream, I1) and draws the
 * first arrival.
 *
 * @param src     Output.
 * @param lambda  Arrival rate [tasks per u.t.] (nl_model_arrival_rate()); <= 0: every task
 *                arrives at time 0 (as fast as the engine takes them).
 * @param seed    Run seed.
 * @par Context  Pure; the source has one owner (the simulator, or the ingress lcore).
 * @par Source   seed 002 §4.2 (Poisson arrivals).
 */
void nl_model_src_init(struct nl_model_src *src, double lambda, uint64_t seed);

/**
 * Draw the next task: its arrival time (then the next gap), resource vector Delta (each of
 * the N resources needed with need_prob), L and work (fixed or exponential). Every field the
 * engines and policies read is set; `aux` is left as it was (an engine's own index).
 *
 * @param src        Source.
 * @param m          Model configuration (n_res, need_prob, n_split, instr, data_bits, work).
 * @param t          Output task (t_arrive_vt = the arrival time, id from the source).
 * @param entry_rnd  Output: the uniform 64-bit draw for ops->entry().
 * @par Context  The source's owner; no allocation.
 * @par Source   seed 002 §2.2 eq. (6), §4.2.
 */
void nl_model_src_draw(struct nl_model_src *src, const struct nl_model_cfg *m, struct nl_task *t,
		       uint64_t *entry_rnd);

/**
 * The task class of t (issue #15: `[class NAME]` sections, nl_model_cfg.h): class k's handle
 * is k + 1, 0 = no class (plain vector matching). A pure function of the run seed and the
 * task id (a hash to [0, 1), classes take consecutive shares of it), so every engine and every
 * variant gives a task the same class however it draws (nl_model.h I1), and the task stream
 * of a configuration without classes is unchanged.
 *
 * @param m    Model (tclass[], n_tclass).
 * @param src  The run's source (bg_seed).
 * @param t    Task (id).
 * @return 0..m->n_tclass.
 * @par Context  Pure; any thread.
 * @par Source   docs/config.md "Machine records and task classes".
 */
uint32_t nl_model_task_class(const struct nl_model_cfg *m, const struct nl_model_src *src,
			     const struct nl_task *t);

/**
 * The background-load description of a model for a run seeded by `src`.
 *
 * @param m        Model (bg_load_max, bg_period_vt).
 * @param bg_seed  Run seed of the draws (nl_model_src.bg_seed).
 * @param on       false: machines at nominal speed (native and port modes).
 * @return the description. @par Context Pure.
 */
struct nl_model_bg nl_model_bg_of(const struct nl_model_cfg *m, uint64_t bg_seed, bool on);

/**
 * Service time of one sub-task of t on machine `id` when it starts there at start_vt:
 * (I/L) / (W_i (1 - b_i(start))) + (D/L) / T_i.
 *
 * @param bg        Background load.
 * @param mach      The machine's description (speed W_i [instr/u.t.], link T_i [bit/u.t.]).
 * @param id        Its machine id (background-load draw).
 * @param t         The task (instr, data_bits, n_split >= 1).
 * @param start_vt  When the sub-task starts on the machine [u.t.].
 * @return service time [u.t.].
 * @par Context  Pure; any thread.
 * @par Source   seed 002 §2.1 eq. (3) (W_i(t)), §2.2 (I at W_i, D at T_i).
 */
static inline double
nl_model_sub_vt(const struct nl_model_bg *bg, const struct nl_machine *mach, uint32_t id,
		const struct nl_task *t, double start_vt)
{
	double f = nl_mach_bg_factor(bg->load_max, bg->period_vt, bg->seed, id, start_vt);

	return t->instr / t->n_split / (mach->speed_ips * f) + t->data_bits / t->n_split /
									mach->link_bps;
}

/** A manager as a FIFO single server (seed 002 §4.1). */
struct nl_model_mgr {
	double busy_until_vt; /**< when its last admitted task's service ends [u.t.] */
	double busy_vt;       /**< service booked so far (utilization = busy_vt / horizon) */
};

/**
 * Admit a task reaching manager `mgr` at arrive_vt: it starts service when the manager is
 * free, is served for ops->service_vt(), and waits meanwhile (t->sched_wait_vt grows).
 *
 * @param q          The manager's server state.
 * @param s          Policy (its service_vt()).
 * @param mgr        Manager id.
 * @param t          Task; at_mgr set to mgr.
 * @param arrive_vt  When it reaches the manager [u.t.].
 * @return when its service ends, i.e. when the manager decides on it [u.t.].
 * @par Context  The manager's owner (I3).
 * @par Source   seed 002 §4.1 (managers are FIFO servers; response includes their wait).
 */
static inline double
nl_model_mgr_admit(struct nl_model_mgr *q, const struct nl_sched *s, uint32_t mgr,
		   struct nl_task *t, double arrive_vt)
{
	double start = q->busy_until_vt > arrive_vt ? q->busy_until_vt : arrive_vt;
	double svc = s->ops->service_vt(s, mgr, t);

	t->at_mgr = mgr;
	t->sched_wait_vt += start - arrive_vt;
	q->busy_until_vt = start + svc;
	q->busy_vt += svc;
	return start + svc;
}

/**
 * A task was dispatched as n sub-tasks: n are now outstanding (I2).
 * @param t  Task. @param n  1..NL_TASK_MAX_SPLIT. @par Context Owner of the task.
 */
static inline void
nl_model_task_subs_set(struct nl_task *t, unsigned int n)
{
	t->flags = (t->flags & ~NL_MODEL_SUBS_MASK) | (n & NL_MODEL_SUBS_MASK);
}

/**
 * One sub-task of t finished (or was given up): one fewer outstanding (I2).
 * @param t  Task.
 * @return true when it was the last one: the task is complete (or failed) now.
 * @par Context  Owner of the task (the simulator; the appliance's control lcore).
 * @par Source   seed 002 §4.1 (a task ends when its last sub-task does).
 */
static inline bool
nl_model_task_sub_done(struct nl_task *t)
{
	if ((t->flags & NL_MODEL_SUBS_MASK) > 0)
		t->flags--;
	return (t->flags & NL_MODEL_SUBS_MASK) == 0;
}

/** Sub-tasks of t still outstanding. @par Context Owner of the task. */
static inline unsigned int
nl_model_task_subs_left(const struct nl_task *t)
{
	return t->flags & NL_MODEL_SUBS_MASK;
}

/**
 * Optional per-task record an engine reports at every decision that ends a task's routing
 * (tests/lockstep/: both engines report, the records must agree).
 */
struct nl_model_trace {
	/** t was dispatched at now_vt to mach[0..n-1] (t->hops transfers so far). */
	void (*dispatch)(void *arg, const struct nl_task *t, const uint32_t *mach, unsigned int n,
			 double now_vt);
	/** t was refused at now_vt. */
	void (*reject)(void *arg, const struct nl_task *t, enum nl_reject_reason why,
		       double now_vt);
	void *arg;
};

#ifdef __cplusplus
}
#endif
/**
 * Simulating a split tree (docs/scale-out.md): the part (appliance) of every manager of s,
 * from m's [split] cut roots: a manager belongs to the cut root that is its nearest ancestor
 * (NLSC: tree parent; 2LSC: every group's parent is the global scheduler), part k + 1 for
 * m->cut[k], part 0 when it has none. Names of the other scheme are ignored.
 * @param part  Output [s->n_mgr].
 * @return number of cut roots found among s's managers.
 * @par Context Control path. @par Source docs/scale-out.md.
 */
unsigned int nl_model_split_parts(const struct nl_model_cfg *m, const struct nl_sched *s,
				  uint8_t *part);

/**
 * The part (appliance) of every machine: the part of the manager that dispatches to it (NLSC:
 * its leaf; a policy with fewer managers than tree nodes, 2LSC: its group).
 * @param s         Policy bound to machines.
 * @param part      [s->n_mgr] from nl_model_split_parts().
 * @param mach_part Output [s->n_mach].
 * @param home      Output [s->n_mach], that manager; NULL accepted.
 * @par Context Control path; O(n_mach). @par Source docs/scale-out.md "Simulating a split".
 */
void nl_model_split_mach_parts(const struct nl_sched *s, const uint8_t *part, uint8_t *mach_part,
			       uint32_t *home);

/**
 * The time a transfer from manager `from` to manager `to` takes: transfer_delay_vt, plus
 * cut_delay_vt + cut_datagram_vt when part (nl_model_split_parts()) puts them on different
 * appliances. part NULL: transfer_delay_vt (not split).
 * @return [u.t.]. @par Context Pure.
 */
static inline double
nl_model_hop_vt(const struct nl_model_cfg *m, const uint8_t *part, uint32_t from, uint32_t to)
{
	if (part == NULL || part[from] == part[to])
		return m->transfer_delay_vt;
	return m->transfer_delay_vt + m->cut_delay_vt + m->cut_datagram_vt;
}

#endif /* NL_MODEL_H */
