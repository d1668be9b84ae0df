/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * PluS-style advance-reservation manager with an administrator-written ClassAd admission
 * policy (seed 004 §2, §4.3).
 *
 * Theory of operation. The manager holds the node table (name, isAlive, loadavg, nRunJobs,
 * jobs: seed 004 Table 2; jobs: id, owner, state, priority, startTime, wallTime: Table 3) as
 * host ClassAd records, and the reservations. A request (owner, start, end, node count) is
 * admitted by walking the nodes free in [start, end) in index order: each is bound as
 * PLUS_CANDIDATE_NODE together with PLUS_RSV_OWNER, PLUS_RSV_START, PLUS_RSV_END,
 * PLUS_ALL_NODES and PLUS_ALLOCATED_NODES (nodes accepted so far), and the policy's
 * PLUS_NODE_RESERVABLE is evaluated; only `true` accepts the node (undefined refuses). The
 * walk stops as soon as enough nodes are accepted (seed 004 §4.3). A refusal names the first
 * refused node and the first clause of PLUS_NODE_RESERVABLE that was not true.
 *
 * Reservations go through a two-phase commit (seed 004 §2): prepare holds the nodes,
 * commit makes the hold durable (idempotent), abort releases it. reserve = prepare + commit.
 *
 * Invariants:
 *  - I1: a node is held by at most one active (prepared or committed) reservation at any
 *        instant: the windows of two active reservations sharing a node do not overlap.
 *  - I2: abort and cancel release every node of the reservation; a failed modify leaves the
 *        reservation exactly as it was.
 *  - I3: an admission decision allocates nothing: it only binds values and evaluates the
 *        compiled policy (nl_classad I1).
 *
 * Not thread-safe: one control thread owns a manager (all functions are `_ctl` in spirit).
 */
#ifndef NL_PLUS_H
#define NL_PLUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nl_classad.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NL_PLUS_NAME_MAX 32   /**< bytes of names, owners, ids (with the NUL) */

/** A job running (or queued) on a node: seed 004 Table 3. */
struct nl_plus_job {
	char id[NL_PLUS_NAME_MAX];
	char owner[NL_PLUS_NAME_MAX];
	char state[16];        /**< Queued, Running, Exiting, Held, Suspended */
	int64_t priority;
	int64_t start_s;       /**< startTime [s since the epoch] */
	double wall_s;         /**< wallTime [s] */
};

/** A node: seed 004 Table 2 (nRunJobs counts the jobs in state Running). */
struct nl_plus_node {
	char name[NL_PLUS_NAME_MAX];
	bool alive;
	double loadavg;
	unsigned int n_jobs;
	const struct nl_plus_job *jobs;  /**< [n_jobs], copied by nl_plus_node_set() */
};

/** A reservation request. */
struct nl_plus_req {
	const char *owner;     /**< NUL-terminated, 1..NL_PLUS_NAME_MAX-1 bytes */
	int64_t start_s;       /**< [s since the epoch] */
	int64_t end_s;         /**< > start_s */
	unsigned int n_nodes;  /**< >= 1 */
};

enum nl_plus_state {
	NL_PLUS_PREPARED = 1,
	NL_PLUS_COMMITTED = 2,
};

/** Why a request was refused. */
struct nl_plus_refusal {
	int rc;                 /**< -EINVAL bad request, -ENOSPC too few free nodes, -EACCES policy */
	unsigned int n_free;    /**< nodes free in the window */
	unsigned int n_accepted;/**< nodes the policy accepted before giving up */
	char node[NL_PLUS_NAME_MAX]; /**< first node the policy refused ("" if none) */
	char clause[160];       /**< first clause of PLUS_NODE_RESERVABLE not true */
	char value[64];         /**< its value (false, undefined, error, ...) */
	unsigned int line, col; /**< clause position in the policy */
	char detail[160];       /**< values of the policy attributes the clause names, e.g.
				  *   "nAllocate = 51, nAllocatable = 50.0" ("" if none) */
	char msg[640];          /**< one line for humans */
};

/** A reservation as seen from outside. */
struct nl_plus_rsv_info {
	uint64_t id;
	char owner[NL_PLUS_NAME_MAX];
	int64_t start_s, end_s;
	unsigned int n_nodes;
	enum nl_plus_state state;
	const uint32_t *nodes;  /**< [n_nodes] node indices, valid until the next call */
};

struct nl_plus;

/**
 * Create a manager for n_nodes nodes (all dead, no jobs, named "node<i>") with a policy.
 *
 * @param policy  ClassAd source defining PLUS_NODE_RESERVABLE (seed 004 Fig. 4, 5, 7, 8).
 * @param len     Bytes of policy.
 * @param n_nodes Number of nodes, >= 1.
 * @param out     Output manager.
 * @param err     Output on a policy error (line:column). May be NULL.
 * @return 0; -EINVAL bad policy (or no PLUS_NODE_RESERVABLE); -E2BIG; -ENOMEM.
 * @par Context  Control thread; allocates.
 * @par Source   seed 004 §4.3.
 */
int nl_plus_create(const char *policy, size_t len, unsigned int n_nodes, struct nl_plus **out,
		   struct nl_cad_err *err);

/**
 * Free a manager. NULL is a no-op.
 * @param pl  Manager.
 * @par Context  Control thread.
 */
void nl_plus_free(struct nl_plus *pl);

/**
 * Set the state of node idx (copies the name and the jobs).
 *
 * @param pl    Manager.
 * @param idx   Node index < n_nodes.
 * @param node  New state.
 * @return 0; -EINVAL bad index; -ENOMEM.
 * @par Context  Control thread; allocates when the job list grows.
 */
int nl_plus_node_set(struct nl_plus *pl, unsigned int idx, const struct nl_plus_node *node);

/**
 * Fix the time the policy's time() sees; INT64_MIN for the wall clock.
 * @param pl     Manager.
 * @param now_s  Seconds since the epoch.
 * @par Context  Control thread.
 */
void nl_plus_set_now(struct nl_plus *pl, int64_t now_s);

/**
 * Admission decision only: which nodes the policy would give this request now. No state
 * changes.
 *
 * @param pl   Manager.
 * @param req  Request.
 * @param out  Output [req->n_nodes] node indices, or NULL.
 * @param why  Output on refusal, or NULL (then no explanation is computed).
 * @return req->n_nodes on acceptance; -EINVAL, -ENOSPC or -EACCES (why->rc) on refusal.
 * @par Context  Control thread; no allocation (I3). Cost linear in the nodes evaluated.
 * @par Source   seed 004 §4.3, §6.
 */
int nl_plus_admit(struct nl_plus *pl, const struct nl_plus_req *req, uint32_t *out,
		  struct nl_plus_refusal *why);

/**
 * Phase 1: admit and hold the nodes.
 * @param pl   Manager.
 * @param req  Request.
 * @param id   Output reservation id (> 0).
 * @param why  Output on refusal, or NULL.
 * @return 0; as nl_plus_admit() on refusal; -ENOMEM.
 * @par Context  Control thread.
 * @par Source   seed 004 §2 (two-phase commit).
 */
int nl_plus_prepare(struct nl_plus *pl, const struct nl_plus_req *req, uint64_t *id,
		    struct nl_plus_refusal *why);

/**
 * Phase 2: commit a prepared reservation. Idempotent.
 * @param pl  Manager.
 * @param id  Reservation id.
 * @return 0 (also when already committed); -ENOENT unknown (or aborted) id.
 * @par Context  Control thread.
 */
int nl_plus_commit(struct nl_plus *pl, uint64_t id);

/**
 * Abort a prepared reservation, releasing its nodes (I2).
 * @param pl  Manager.
 * @param id  Reservation id.
 * @return 0; -ENOENT unknown id; -EBUSY already committed (use nl_plus_cancel()).
 * @par Context  Control thread.
 */
int nl_plus_abort(struct nl_plus *pl, uint64_t id);

/**
 * Prepare and commit in one step.
 * @param pl   Manager.
 * @param req  Request.
 * @param id   Output id.
 * @param why  Output on refusal, or NULL.
 * @return as nl_plus_prepare().
 * @par Context  Control thread.
 */
int nl_plus_reserve(struct nl_plus *pl, const struct nl_plus_req *req, uint64_t *id,
		    struct nl_plus_refusal *why);

/**
 * Change a reservation's window or size: re-admitted as if it did not hold its nodes; on
 * refusal it stays as it was (I2). The owner cannot change.
 *
 * @param pl   Manager.
 * @param id   Reservation id.
 * @param req  New start, end, n_nodes (owner ignored).
 * @param why  Output on refusal, or NULL.
 * @return 0; -ENOENT; refusal codes as nl_plus_admit(); -ENOMEM.
 * @par Context  Control thread.
 */
int nl_plus_modify(struct nl_plus *pl, uint64_t id, const struct nl_plus_req *req,
		   struct nl_plus_refusal *why);

/**
 * Cancel a reservation (prepared or committed), releasing its nodes (I2).
 * @param pl  Manager.
 * @param id  Reservation id.
 * @return 0; -ENOENT.
 * @par Context  Control thread.
 */
int nl_plus_cancel(struct nl_plus *pl, uint64_t id);

/**
 * @param pl    Manager.
 * @param id    Reservation id.
 * @param info  Output.
 * @return 0; -ENOENT.
 * @par Context  Control thread.
 */
int nl_plus_get(const struct nl_plus *pl, uint64_t id, struct nl_plus_rsv_info *info);

/**
 * @param pl  Manager.
 * @return active (prepared or committed) reservations.
 */
unsigned int nl_plus_n_active(const struct nl_plus *pl);

/**
 * @param pl  Manager.
 * @return nodes.
 */
unsigned int nl_plus_n_nodes(const struct nl_plus *pl);

/**
 * Is node idx held by an active reservation at some instant of [t0_s, t1_s)?
 *
 * @param pl    Manager.
 * @param idx   Node index.
 * @param t0_s  Window start.
 * @param t1_s  Window end (> t0_s).
 * @return true when held.
 * @par Context  Control thread. Cost O(active reservations).
 */
bool nl_plus_node_held(const struct nl_plus *pl, unsigned int idx, int64_t t0_s, int64_t t1_s);

/**
 * When must a normal job on node idx be off it? The start of the earliest active reservation
 * holding idx that has not ended at t_s (<= t_s when one holds it now). A batch engine gives
 * node idx to a normal job of estimate d only if t_s + d <= this (the reservation/batch contract
 * of docs/classad.md; seed 004 Fig. 8 is the admission side of the same rule).
 *
 * @param pl    Manager.
 * @param idx   Node index.
 * @param t_s   Now [s since the epoch].
 * @return the start [s]; INT64_MAX when no reservation holds idx after t_s.
 * @par Context  Control thread. Cost O(active reservations x their nodes).
 */
int64_t nl_plus_node_next_hold(const struct nl_plus *pl, unsigned int idx, int64_t t_s);

/**
 * nl_plus_node_next_hold() of several nodes at once, in one pass over the active reservations
 * (a window ending frees thousands of nodes on a large machine: O(their nodes) for all of them
 * instead of for each).
 *
 * @param pl    Manager.
 * @param idx   [n] node indices, distinct, each < the manager's node count.
 * @param n     Their count.
 * @param t_s   Now [s since the epoch].
 * @param out   [n] out[i]: nl_plus_node_next_hold(pl, idx[i], t_s).
 * @return 0; -EINVAL (an index out of range or listed twice; out is then undefined).
 * @par Context  Control thread (uses the manager's scratch). Cost O(n + active reservations x
 *               their nodes).
 */
int nl_plus_nodes_next_hold(struct nl_plus *pl, const uint32_t *idx, unsigned int n, int64_t t_s,
			    int64_t *out);

/**
 * The policy's evaluation context (for tests and the benchmark; e.g. nl_cad_explain()).
 * @param pl  Manager.
 * @return the context.
 */
struct nl_cad_ctx *nl_plus_ctx(struct nl_plus *pl);

#ifdef __cplusplus
}
#endif
#endif /* NL_PLUS_H */
