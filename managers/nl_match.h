/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Matching at the leaf (issue #15; seed 003 §4.3 matches jobs to nodes with ClassAds): a task
 * may carry a match handle, i.e. a command name, a Requirements and a Rank expression
 * compiled once (managers/match/nl_match_cad.h). For one machine generation, the expressions
 * are evaluated once per (handle, machine) on the control path into a match table: per handle,
 * a bitmap of the eligible machines (offers the command and Requirements is true) and each
 * machine's Rank. A leaf manager picking machines for such a task reads only the table:
 * Requirements filters, Rank orders (higher first) before load, load is the least-loaded key
 * of nl_pick.h (expected completion), ties go to the lower machine id. No ClassAd is
 * evaluated on the dispatch path.
 *
 * Theory of operation. The engine stores each task's handle in a side array indexed by the
 * task's aux (nl_match_src.h_by_aux), and the current table in nl_match_src.tab (published
 * with a release store; the engine frees the old one after a grace period of its readers).
 * Policies call nl_match_pick_task() where they called nl_pick_least_loaded(): a task without
 * a handle takes exactly the old path.
 *
 * Invariants:
 *  I1  a table is immutable once published; one table per machine generation and handle set.
 *  I2  handle 0 is "no handle"; h < tab->n_h for every handle a published task carries.
 *  I3  elig bit m is 0 for every machine id m >= tab->n_mach.
 */
#ifndef NL_MATCH_H
#define NL_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_machine.h"
#include "nl_pick.h"
#include "nl_policy.h"
#include "nl_task.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nl_sched;

/** One handle's result over one machine generation. */
struct nl_match_ent {
	const uint64_t *elig; /**< [tab->words] bit m: machine m is eligible */
	const double *rank;   /**< [tab->n_mach] Rank (0 when undefined or not a number); NULL = none */
	uint32_t n_elig;      /**< machines eligible */
};

/** The match table of one machine generation (I1). */
struct nl_match_tab {
	uint32_t n_mach;            /**< machine ids 0..n_mach-1 */
	uint32_t words;             /**< (n_mach + 63) / 64 */
	uint32_t n_h;               /**< handles 0..n_h-1 (0 unused) */
	uint64_t gen;               /**< machine generation it was built for */
	struct nl_match_ent *ent;   /**< [n_h] */
	void *mem;                  /**< one allocation holding everything (nl_match_tab_free) */
};

/** Where policies find the table and the tasks' handles (set by the engine). */
struct nl_match_src {
	const struct nl_match_tab *tab; /**< current table (release store / acquire load) */
	const uint32_t *h_by_aux;       /**< [n_aux] handle of the task with aux a, 0 = none */
	uint32_t n_aux;
};

/** The engine's binding (one engine per process matches). */
extern struct nl_match_src nl_match_src;

/**
 * The match handle of a task (0 = none).
 * @param t  Task. @return its handle. @par Context Any lcore; the engine wrote h_by_aux[aux]
 * before the task was enqueued (ring release).
 */
static inline uint32_t
nl_match_handle(const struct nl_task *t)
{
	const uint32_t *h = nl_match_src.h_by_aux;

	return h != NULL && t->aux < nl_match_src.n_aux ? h[t->aux] : 0;
}

/**
 * The extra service time of a decision that picks machines for t with Requirements/Rank
 * (`[scheduler] match_service_vt`, default 0): what the policies add to a picking manager's
 * service time, so the simulator charges the cost of matching.
 *
 * @param s  Scheduler (s->p.match_service_vt). @param t  Task.
 * @return [u.t.]; 0 for a task without a handle.
 * @par Context  Any lcore. @par Source docs/config.md "Machine records and task classes".
 */
static inline double
nl_match_service_vt(const struct nl_sched *s, const struct nl_task *t)
{
	return s->p.match_service_vt > 0 && nl_match_handle(t) != 0 ? s->p.match_service_vt : 0;
}

/**
 * Allocate an empty table (every handle matches nothing) for n_mach machines and n_h handles.
 *
 * @param n_mach  Machines, >= 1.
 * @param n_h     Handles, >= 1 (handle 0 included).
 * @param gen     Machine generation id.
 * @return the table, or NULL (-ENOMEM). Fill with nl_match_tab_set().
 * @par Context  Control path; allocates once.
 */
struct nl_match_tab *nl_match_tab_new(uint32_t n_mach, uint32_t n_h, uint64_t gen);

/**
 * Record one (handle, machine) result while building a table.
 *
 * @param tab   Table being built (not published yet).
 * @param h     Handle 1..n_h-1.
 * @param m     Machine id < n_mach.
 * @param ok    Eligible.
 * @param rank  Rank value (any finite double; NaN counts as 0).
 * @par Context  The builder's thread.
 */
void nl_match_tab_set(struct nl_match_tab *tab, uint32_t h, uint32_t m, bool ok, double rank);

/**
 * Declare that handle h has a Rank (otherwise ranks are ignored: pure least-loaded order).
 * @par Context  The builder's thread.
 */
void nl_match_tab_use_rank(struct nl_match_tab *tab, uint32_t h);

/** Free a table; NULL accepted. @par Context After a grace period of its readers. */
void nl_match_tab_free(struct nl_match_tab *tab);

/**
 * Pick the machines of a matched task's n_split sub-tasks among candidates: only eligible
 * machines (I3) that have not left; the n_split distinct ones of highest Rank, then least
 * expected completion (nl_pick.h), then lowest id. With fewer eligible live candidates than
 * n_split, sub-tasks share them: each in turn goes to the best by (Rank, completion counting
 * the sub-tasks already placed here).
 *
 * @param tab        Match table (non-NULL).
 * @param h          Handle 1..tab->n_h-1 (out of range: nothing eligible).
 * @param cand       [n_cand] candidate machine ids, ascending.
 * @param n_cand     Candidates.
 * @param rate       Machine rates, by id. @param load  Load table, by id.
 * @param now_vt     Now [u.t.]. @param sub_instr, sub_bits  One sub-task's I/L, D/L.
 * @param n_split    L, 1..NL_TASK_MAX_SPLIT.
 * @param out        Output [n_split] machine ids.
 * @return n_split; -EINVAL (n_split out of range); -ENOSPC (no eligible live candidate: the
 *         caller rejects no_machine).
 * @par Context  Any lcore; no allocation; reads tab and load only. O(n_cand * n_split) worst.
 * @par Source   seed 003 §4.3 (Requirements filter, Rank order); HTCondor manual,
 *               "Matchmaking with ClassAds" (Rank: higher preferred).
 */
int nl_match_pick(const struct nl_match_tab *tab, uint32_t h, const uint32_t *cand,
		  unsigned int n_cand, const struct nl_mach_rate *rate,
		  const struct nl_mach_load *load, double now_vt, double sub_instr,
		  double sub_bits, unsigned int n_split, uint32_t *out);

/**
 * nl_match_pick() on the table published in nl_match_src (acquire load).
 * @return as nl_match_pick(); -ENOSPC when no table is published.
 * @par Context  Any lcore (an RCU reader of the engine's table).
 */
int nl_match_pick_cur(uint32_t h, const uint32_t *cand, unsigned int n_cand,
		      const struct nl_mach_rate *rate, const struct nl_mach_load *load,
		      double now_vt, double sub_instr, double sub_bits, unsigned int n_split,
		      uint32_t *out);

/**
 * The policies' hook: nl_match_pick() on the current table when t has a handle, else
 * nl_pick_least_loaded() unchanged (same parameters and results). Inline, so a task without
 * a handle pays one load and one predictable branch.
 *
 * @param t  Task being placed; the other parameters as nl_pick_least_loaded().
 * @return as nl_pick_least_loaded(); -ENOSPC when t has a handle but no table is published.
 * @par Context  Any lcore (an RCU reader of the engine's table).
 */
static inline int
nl_match_pick_task(const struct nl_task *t, const uint32_t *cand, unsigned int n_cand,
		   const struct nl_mach_rate *rate, const struct nl_mach_load *load,
		   double now_vt, double sub_instr, double sub_bits, unsigned int n_split,
		   uint32_t *out)
{
	uint32_t h = nl_match_handle(t);

	if (__builtin_expect(h == 0, 1))
		return nl_pick_least_loaded(cand, n_cand, rate, load, now_vt, sub_instr, sub_bits,
					    n_split, out);
	return nl_match_pick_cur(h, cand, n_cand, rate, load, now_vt, sub_instr, sub_bits,
				 n_split, out);
}

/**
 * Candidates eligible for handle h (current table) that have not left: what a 2LSC group
 * scheduler counts, for a task with a handle, as "its machines matching" (fewer than L: it
 * passes the task to the global scheduler, which refuses it only when no machine of the
 * system is eligible).
 *
 * @param h     Handle (0 or unknown: 0 eligible).
 * @param cand  [n_cand] machine ids. @param load  Load table, by id.
 * @return the count. @par Context Any lcore (an RCU reader of the engine's table).
 * @par Source  seed 002 §3.1 (group: fewer than L matching machines → global scheduler).
 */
unsigned int nl_match_live_cur(uint32_t h, const uint32_t *cand, unsigned int n_cand,
			       const struct nl_mach_load *load);

/**
 * Re-place one sub-task of a matched task whose machine was lost: nl_match_pick() with
 * n_split = 1 among the machines of the leaf group of t's vector (as nl_sched_replace_leaf()).
 *
 * @return 0 and *out_mach; -ENOSPC when no eligible live machine is left.
 * @par Context  Engine control thread.
 */
int nl_match_replace(const struct nl_sched *s, const struct nl_task *t,
		     const struct nl_mach_load *load, double now_vt, uint32_t *out_mach);

#ifdef __cplusplus
}
#endif
#endif /* NL_MATCH_H */
