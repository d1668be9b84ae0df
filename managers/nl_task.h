/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A task request (seed 002 §2.2 eq. (6)): (t_i, I_i, D_i, L_i, Delta_i), plus the routing
 * state the managers and engines keep with it. One cache line, so the live engine can keep
 * tasks in an rte_mempool and pass pointers through rte_rings.
 */
#ifndef NL_TASK_H
#define NL_TASK_H

#include <assert.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NL_TASK_MAX_SPLIT 64u /**< largest L a task may ask for */

/** Why a task was refused (REJECT reason on the wire, `rejected` in curves.csv). */
enum nl_reject_reason {
	NL_REJECT_NONE = 0,
	NL_REJECT_NO_MACHINE = 1, /**< no machine (group) matches Delta */
	NL_REJECT_BAD_TASK = 2,   /**< L out of range, or vector wider than N */
	NL_REJECT_OVERLOAD = 3,   /**< admission control: inbox or queue full */
	NL_REJECT_MACHINE_LOST = 4, /**< machines left while it waited; nowhere to re-dispatch */
	NL_REJECT_QUOTA = 5,      /**< over its principal's cap (tasks in flight, rate); #16 */
	NL_REJECT_MAX
};

/** One task. Fields marked (engine) are owned by the engine, never read by policies. */
struct nl_task {
	uint64_t id;          /**< t_i, unique per source */
	uint64_t need;        /**< Delta_i: bit k = needs resource k+1 */
	double instr;         /**< I_i [instr] */
	double data_bits;     /**< D_i [bit] */
	double t_arrive_vt;   /**< (engine) arrival in the system [u.t.] */
	double sched_wait_vt; /**< (engine) time spent queued at managers [u.t.] */
	uint32_t at_mgr;      /**< (engine) manager currently holding it */
	uint16_t n_split;     /**< L_i, 1..NL_TASK_MAX_SPLIT */
	uint16_t hops;        /**< manager-to-manager transfers so far */
	uint32_t flags;       /**< (engine) private flags */
	uint32_t aux;         /**< (engine) private */
};

static_assert(sizeof(struct nl_task) == 64, "a task is one cache line");

/**
 * Printable name of a reject reason (REJECT frames, logs, telemetry).
 *
 * @param why  Reason.
 * @return A static string such as "no_machine"; "unknown" for a value out of range.
 * @par Context  Pure; any thread.
 */
const char *nl_reject_name(enum nl_reject_reason why);

#ifdef __cplusplus
}
#endif
#endif /* NL_TASK_H */
