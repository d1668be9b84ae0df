/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A least-loaded pick that does not scan: the same decisions as nl_pick_least_loaded() in
 * O(L C) in the steady state instead of O(m), for candidate groups whose machines fall into
 * few speed classes C (seed 002 §3.3 step 5; issue "Dispatch at the physical limit").
 *
 * Theory of operation. The pick's key of machine j for a sub-task is its expected completion
 * max(busy_until_j - now, 0) + s_j, where s_j = I/L / W_j + D/L / T_j depends on j only
 * through its rate. Machines of one class (equal rates) therefore differ only by backlog:
 * the idle ones (busy_until <= now) all have key s_c and are taken in id order; the busy ones
 * in (busy_until, id) order. Per group and class the index keeps the idle machines as a bitmap
 * (lowest id first) and the busy ones as a run: an array sorted on (busy_until, id). A pick
 * merges the classes' heads by (key, id), the scan's order (ties to the candidate listed
 * first, candidate lists ascending by id), walking at most L entries; it changes nothing.
 * Busy machines whose busy_until has passed move to the idle bitmap when a pick looks at
 * their class (lazily, from the front of the run).
 *
 * Why a sorted run and not a heap: a class's bookings come in its own order. The pick takes
 * a class's machines in (max(busy_until, now), id) order, and booking machine j makes it
 * max(busy_until_j, now) + s_c. If every effective busy_until max(b, now) of the class lies
 * within s_c of the smallest one (true of any class once each machine was booked once since
 * the last snapshot, and kept by bookings and by time passing), the machine booked is the
 * smallest and its new value is at least every other one's: it goes to the end of the run.
 * So in the steady state a booking is an append and a pick reads the run's first entries,
 * both O(1); the run's front holds entries of machines re-booked since (tombstones, skipped
 * and dropped when reached). A change out of that order (a snapshot's load, a completion
 * earlier or later than booked, a departure) is a tombstone, and an insertion placed by
 * binary search that moves the entries between its place and the nearer free end: O(log m)
 * plus the entries moved. A run is compacted (tombstones dropped) when it reaches the end of
 * its storage (four times the class's members), so that costs O(1) per insertion amortized.
 *
 * Invariants:
 *  I1  every live member (busy_until < NL_MACH_GONE_VT) of a class is either in its idle
 *      bitmap or has exactly one valid entry in its run (rpos[slot] is that entry), never
 *      both; members that left are in neither. Run entries at other positions are
 *      tombstones, marked in the entry itself (slot UINT32_MAX), so a walk reads no other
 *      array. Storage index tail holds a sentinel (key +inf), so a walk needs no bound.
 *  I2  an idle member has busy_until <= the class's watermark cls.now_vt (the latest `now`
 *      a pick or reset used for it); the run holds the others; the run, tombstones
 *      included, is sorted on (busy_until, id).
 *  I3  load[] mirrors the load table the owner maintains: after every change of load[m] the
 *      owner calls nl_pick_idx_set(m) (or nl_pick_idx_reset()).
 *  I4  a pick at a time earlier than its class's watermark, or with fewer live candidates
 *      than L, is answered by nl_pick_least_loaded() on the group's list (same result).
 *  I5  a run's first entry (storage index head) is valid unless the run is empty; front_vt,
 *      front_id, idle_lo and idle_id cache the class's two heads, so a pick reads a class's
 *      head without a branch and walks a class only when it takes from it.
 *
 * Exactness: the result equals nl_pick_least_loaded()'s (same machines, same order) except
 * where two keys are equal only after rounding although their backlogs differ (busy_until
 * values closer than one ulp of the key); the scan then orders by candidate position and the
 * index by busy_until.
 */
#ifndef NL_PICK_IDX_H
#define NL_PICK_IDX_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_busy_cnt.h"
#include "nl_machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A run entry: the key inline, so a pick reads no other array. */
struct nl_pick_ent {
	double busy_until_vt;
	uint32_t id;   /**< machine id (ties) */
	uint32_t slot; /**< member slot; UINT32_MAX marks a tombstone (I1), UINT32_MAX - 1 the sentinel */
};

/** One speed class of one group. */
struct nl_pick_cls {
	struct nl_mach_rate rate; /**< the members' rate */
	uint32_t mem_off;         /**< first member slot (members ascending by machine id) */
	uint32_t n_mem;
	uint32_t n_idle;
	uint32_t run_cap;         /**< entries of storage: 4 n_mem + 4 */
	uint32_t head, tail;      /**< its run: storage entries [head, tail), tombstones included */
	uint32_t n_run;           /**< valid entries of the run (busy members) */
	uint32_t idle_lo;         /**< lowest idle member index, n_mem if none (I5) */
	uint32_t idle_id;         /**< its machine id, UINT32_MAX if none */
	uint32_t front_id;        /**< machine id of the run's first entry, UINT32_MAX if none */
	double front_vt;          /**< its busy_until, +inf if none (I5) */
	double now_vt;            /**< watermark (I2) */
	struct nl_pick_ent *run_e; /**< its run storage [run_cap + 1] in run[] (+ the sentinel) */
	uint64_t *idle_w;         /**< its idle bitmap in idle[] */
	const uint32_t *mem_id;   /**< &mem[mem_off]: machine id of each member */
};

/** The index. Single owner (the manager that picks, or the simulator). */
struct nl_pick_idx {
	unsigned int n_grp;
	unsigned int n_mach;
	uint32_t *grp_off;      /**< [n_grp + 1] candidate list of each group (CSR) */
	uint32_t *grp_cand;     /**< candidates, ascending within a group */
	uint32_t *grp_cls;      /**< [n_grp + 1] class range of each group (CSR into cls) */
	struct nl_pick_cls *cls;
	uint32_t *mem;          /**< [slots] machine id of each member slot */
	struct nl_mach_load *load; /**< [n_mach] mirror of the owner's load table (I3) */
	struct nl_pick_ent *run;   /**< run storage, per class from run_off */
	uint32_t *slot_cls;     /**< [slots] class of each member slot */
	uint32_t *rpos;         /**< [slots] its valid run entry (storage index), or UINT32_MAX */
	uint64_t *idle;         /**< idle bitmaps, per class from word_off */
	uint32_t *slot_off;     /**< [n_mach + 1] member slots of each machine (CSR) */
	uint32_t *slot;
	uint32_t *one_slot;     /**< [n_mach] the machine's slot when it has exactly one, else
				 *   UINT32_MAX (a booking's lookup in one load) */
	const struct nl_mach_rate *rate; /**< [n_mach] (borrowed) */
};

/**
 * Build an index over candidate groups.
 *
 * @param idx       Output (zeroed first).
 * @param n_grp     Groups, >= 1.
 * @param grp_off   [n_grp + 1] offsets into grp_cand (CSR).
 * @param grp_cand  Candidate machine ids, ascending within each group (copied).
 * @param rate      [n_mach] machine rates (nl_mach_rates_build()); must outlive the index.
 * @param n_mach    Machines (ids < n_mach).
 * @return 0; -EINVAL (a candidate out of range); -ENOMEM. Every machine starts idle at 0.
 * @par Context  Control path / policy init; allocates.
 */
int nl_pick_idx_build(struct nl_pick_idx *idx, unsigned int n_grp, const uint32_t *grp_off,
		      const uint32_t *grp_cand, const struct nl_mach_rate *rate,
		      unsigned int n_mach);

/** Free what nl_pick_idx_build() allocated; a zeroed index is accepted. @par Context Owner. */
void nl_pick_idx_free(struct nl_pick_idx *idx);

/**
 * Load every machine from a load table (a new snapshot, or a new run).
 * @param idx     Index.
 * @param load    [n_mach] load table.
 * @param now_vt  Current time [u.t.]: the watermark of every class.
 * @par Context  Owner; O(m log m).
 */
void nl_pick_idx_reset(struct nl_pick_idx *idx, const struct nl_mach_load *load, double now_vt);

/**
 * Machine `mach`'s busy_until changed (a booking, a completion, a join or leave).
 * @param idx            Index.
 * @param mach           Machine id < n_mach.
 * @param busy_until_vt  Its new value; >= NL_MACH_GONE_VT removes it (it left).
 * @par Context  Owner; per group the machine belongs to, O(1) for a booking in its class's
 *               order (the steady state, see above), else O(log m) plus the entries moved.
 */
void nl_pick_idx_set(struct nl_pick_idx *idx, uint32_t mach, double busy_until_vt);

/**
 * nl_pick_least_loaded() on group `grp`'s candidates, without scanning them (I4).
 *
 * @param idx        Index (its busy values are the load table the caller means, I3).
 * @param grp        Group < n_grp.
 * @param now_vt     Current time [u.t.].
 * @param sub_instr  Instructions of one sub-task [instr].
 * @param sub_bits   Data of one sub-task [bit].
 * @param n_split    L, 1..NL_TASK_MAX_SPLIT.
 * @param out        Output [n_split] machine ids, ascending by expected completion.
 * @return n_split; -EINVAL if n_split is out of range; -ENOSPC if no candidate is live.
 * @par Context  Owner; no allocation; O(L C) plus the tombstones and the busy members whose
 *               time passed met on the way, C = classes of the group.
 * @par Source   seed 002 §3.3 step 5.
 */
int nl_pick_idx_pick(struct nl_pick_idx *idx, uint32_t grp, double now_vt, double sub_instr,
		     double sub_bits, unsigned int n_split, uint32_t *out);

/**
 * Live and busy members of group `grp` at now_vt, without scanning them: busy = busy_until >
 * now_vt, live = busy_until < NL_MACH_GONE_VT (2LSC's group load, seed 002 §3.1 (1)).
 * @param idx     Index.
 * @param grp     Group < n_grp.
 * @param now_vt  Current time [u.t.].
 * @param busy    Output.
 * @param live    Output.
 * @par Context  Owner; O(C) plus O(1) per member whose busy_until passed since the last
 *               look; a time before a class's watermark counts by scanning that class.
 */
void nl_pick_idx_count(struct nl_pick_idx *idx, uint32_t grp, double now_vt, unsigned int *busy,
		       unsigned int *live);

/**
 * Groups of fewer candidates than this are picked by nl_pick_least_loaded()'s scan, which is
 * faster there (BM_grp_pick_scan vs BM_grp_pick_idx in docs/benchmarks.md) and exact even in
 * the rounding case the index header describes; from this size on, policies keep an index.
 */
#define NL_PICK_IDX_MIN_CAND 32u

/**
 * Whether a pick of n_split among n_cand candidates is cheaper through the index than by the
 * scan: the index pays per machine taken (a merge step and a re-booking, ~30 ns), the scan
 * per candidate (2-3.5 ns); the index wins from 32 candidates and 4 per sub-task
 * (BM_grp_pick_scan vs BM_grp_pick_idx, m = 16..4096, L = 1..64, docs/benchmarks.md). Both
 * give the same machines.
 * @par Context Pure.
 */
static inline bool
nl_pick_idx_worth(unsigned int n_cand, unsigned int n_split)
{
	return n_cand >= NL_PICK_IDX_MIN_CAND && n_cand >= 4u * n_split;
}

/**
 * A policy manager's index kept equal to the load table its engine gives it (I3), with the
 * engine's load_gen() telling when that table changed other than by the manager's own
 * bookings. Zeroed = not built (the policy then scans).
 */
struct nl_pick_mirror {
	struct nl_pick_idx idx;
	struct nl_busy_cnt cnt; /**< optional busy counter kept in step too (has_cnt) */
	bool has_cnt;
	uint64_t gen;  /**< engine load_gen() the index mirrors */
	bool built;    /**< idx built (policy init) */
	bool synced;   /**< idx holds the table of generation `gen` */
};

/**
 * Before a pick: make the index (and the counter, has_cnt) mirror `load` when the engine's
 * table changed.
 * @param pm      Mirror (built).
 * @param load    The table engine->load() returned for this manager, indexed by machine id.
 * @param gen     engine->load_gen() for this manager, read after load().
 * @param now_vt  Current time [u.t.] (the watermark of a reset).
 * @par Context  The manager's owner (policy decide()); O(1), or O(m log m) after a change.
 */
void nl_pick_mirror_sync(struct nl_pick_mirror *pm, const struct nl_mach_load *load,
			 uint64_t gen, double now_vt);

/**
 * After dispatch(): the engine booked mach[0..n-1] in `load`; read their new busy_until back.
 * @param gen_after  engine->load_gen() after the dispatch (an engine whose table is shared by
 *                   several managers counts every booking; this manager's own is then known).
 * @par Context  The manager's owner; O(n) in the steady state.
 */
void nl_pick_mirror_booked(struct nl_pick_mirror *pm, const struct nl_mach_load *load,
			   const uint32_t *mach, unsigned int n, uint64_t gen_after);

#ifdef __cplusplus
}
#endif
#endif /* NL_PICK_IDX_H */
