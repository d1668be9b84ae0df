/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * How many machines of a set are busy at `now`, kept up to date in O(log m) per change
 * instead of counted in O(m): 2LSC's group load (seed 002 §3.1 (1): busy machines of the
 * group) on groups of many machines (issue "Dispatch at the physical limit").
 *
 * Theory of operation. A member is busy at t when busy_until > t, live when busy_until <
 * NL_MACH_GONE_VT. The busy members sit in a binary min-heap on busy_until; a count at now
 * takes off the top every member whose busy_until passed (it is idle from then on) and
 * answers the heap's size. A change of a member's busy_until moves it in the heap (sift up or
 * down), puts it in or takes it out.
 *
 * Invariants:
 *  C1  the heap holds exactly the live members with busy_until > now_vt (the watermark, the
 *      latest `now` of a count or reset); hpos[id] is a member's heap index, or IDLE / GONE.
 *  C2  bu[id] is every member's busy_until as last set (the owner's table, as nl_pick_idx I3).
 *  C3  a count at a time before the watermark scans the members (same answer, O(m)).
 */
#ifndef NL_BUSY_CNT_H
#define NL_BUSY_CNT_H

#include <stdint.h>

#include "nl_machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A heap entry: the key inline. */
struct nl_busy_ent {
	double busy_until_vt;
	uint32_t id;
};

/** The counter. Single owner (the manager that counts, or the simulator). */
struct nl_busy_cnt {
	unsigned int n_mach;
	unsigned int n_mem;
	unsigned int n_gone;     /**< members that left */
	unsigned int n_heap;     /**< busy members (C1) */
	double now_vt;           /**< watermark (C1) */
	uint32_t *mem;           /**< [n_mem] member ids */
	uint32_t *hpos;          /**< [n_mach] heap index, or NL_BUSY_IDLE / _GONE / _OUT */
	double *bu;              /**< [n_mach] busy_until of members (C2) */
	struct nl_busy_ent *heap; /**< [n_mem] */
};

#define NL_BUSY_OUT UINT32_MAX        /**< hpos: not a member */
#define NL_BUSY_GONE (UINT32_MAX - 1) /**< hpos: a member that left */
#define NL_BUSY_IDLE (UINT32_MAX - 2) /**< hpos: a live member, idle at the watermark */

/**
 * Build a counter over a set of machines; every member starts idle at time 0.
 * @param bc      Output (zeroed first).
 * @param mem     [n_mem] member machine ids, each < n_mach, no repeats (copied).
 * @param n_mem   Members.
 * @param n_mach  Machines of the table (ids < n_mach).
 * @return 0; -EINVAL (an id out of range or repeated); -ENOMEM.
 * @par Context  Control path / policy init; allocates.
 */
int nl_busy_cnt_build(struct nl_busy_cnt *bc, const uint32_t *mem, unsigned int n_mem,
		      unsigned int n_mach);

/** Free what nl_busy_cnt_build() allocated; a zeroed counter is accepted. @par Context Owner. */
void nl_busy_cnt_free(struct nl_busy_cnt *bc);

/**
 * Load every member from a load table (a new snapshot, or a new run).
 * @param bc      Counter.
 * @param load    [n_mach] load table (only members are read).
 * @param now_vt  Current time [u.t.]: the watermark.
 * @par Context  Owner; O(m).
 */
void nl_busy_cnt_reset(struct nl_busy_cnt *bc, const struct nl_mach_load *load, double now_vt);

/**
 * Machine `mach`'s busy_until changed (a booking, a completion, a join or leave); a machine
 * not in the set is ignored.
 * @param bc             Counter.
 * @param mach           Machine id.
 * @param busy_until_vt  Its new value [u.t.]; >= NL_MACH_GONE_VT: it left.
 * @par Context  Owner; O(log m).
 */
void nl_busy_cnt_set(struct nl_busy_cnt *bc, uint32_t mach, double busy_until_vt);

/**
 * Busy and live members at now_vt (C1, C3).
 * @param bc      Counter.
 * @param now_vt  Current time [u.t.].
 * @param busy    Output: members with now_vt < busy_until < NL_MACH_GONE_VT.
 * @param live    Output: members with busy_until < NL_MACH_GONE_VT.
 * @par Context  Owner; O(1) plus O(log m) per member whose busy_until passed since the last
 *               count; a time before the watermark scans the members.
 * @par Source   seed 002 §3.1 (1) (a group scheduler's load).
 */
void nl_busy_cnt_count(struct nl_busy_cnt *bc, double now_vt, unsigned int *busy,
		       unsigned int *live);

#ifdef __cplusplus
}
#endif
#endif /* NL_BUSY_CNT_H */
