/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Machine load tables under liburcu QSBR: one writer, many leaf-manager readers.
 *
 * Theory of operation. The control thread owns a working table (per machine: busy_until_vt,
 * n_sub) that it updates from completions, machine bookings and LOAD reports. Every so often
 * it publishes an immutable snapshot: a fresh copy of the working table, a version number and,
 * per manager, the sequence number of the last booking of that manager the working table
 * already reflects (`applied`). The snapshot pointer is replaced with rcu_assign_pointer() and
 * the old snapshot is given back by urcu_qsbr_call_rcu() after a grace period: onto a
 * lock-free stack of spare snapshots (liburcu's cds_lfs; the call_rcu thread pushes, the writer
 * pops), which the next publish reuses. In steady state a publish allocates nothing, so the
 * writer (the I/O lcore) makes no mmap()/munmap() through the allocator: on a host whose kernel
 * holds a process's memory-map locks for seconds (seen here: DAMON's kdamond, preempted inside
 * its page-access checks for up to 6.3 s), such a call held the I/O lcore and its telemetry.
 *
 * A manager never reads the shared snapshot during a decision. It keeps a private view
 * (struct nl_load_view): on refresh, when the snapshot's version changed, it copies the
 * snapshot's table and replays on top of it every booking of its own that the snapshot does
 * not reflect yet (its log, sequence numbers > applied[mgr]). Between refreshes each booking
 * is applied to the view and logged. So the view is "the last snapshot plus what this manager
 * assigned since", and for machines only this manager books (an NLSC leaf's group) it equals
 * the writer's exact state.
 *
 * Invariants:
 *  I1  one writer per table: every *_ctl function is called by the same control thread.
 *  I2  a published snapshot is immutable; it is freed only through urcu_qsbr_call_rcu(), so
 *      a reader that dereferenced it before its last quiescent state may still read it.
 *  I3  readers copy what they need (nl_load_view_refresh_rcu()) and keep no pointer to a
 *      snapshot past their next quiescent state.
 *  I4  booking sequence numbers of one manager start at 1 and increase by one; the writer
 *      marks them applied in increasing order (bookings of one manager reach it in order), so
 *      applied[mgr] is monotonic across snapshots.
 *  I5  after refresh, view = snapshot + replay(log entries with seq > applied[mgr]), each
 *      replayed as busy_until = max(busy_until, arrive_vt) + dur_vt, n_sub += 1.
 *  I6  a resize (machine join) publishes a snapshot with the new machine count; a view whose
 *      size differs is rebuilt on its next refresh (its log is then replayed only for
 *      machine ids that still exist).
 *
 * Which calls need external exclusion:
 *   writer x writer: yes (I1, same thread);  writer x reader: no (RCU);
 *   reader x reader: no (each view has one owner).
 */
#ifndef NL_LOAD_H
#define NL_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include <urcu/lfstack.h>
#include <urcu/urcu-qsbr.h>

#include "nl_machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One immutable published snapshot (I2). */
struct nl_load_snap {
	uint64_t version;           /**< increases by one per publish */
	unsigned int n_mach;        /**< machines in load[] */
	unsigned int n_mgr;         /**< managers in applied[] */
	uint64_t *applied;          /**< [n_mgr] last booking seq of each manager reflected */
	struct nl_mach_load *load;  /**< [n_mach] */
	unsigned int cap_mach;      /**< machines load[] has room for (a reused snapshot) */
	struct nl_load_table *table; /**< whose spare stack takes it back */
	struct rcu_head rcu;        /**< for urcu_qsbr_call_rcu() */
	struct cds_lfs_node spare;  /**< on the table's spare stack */
};

/** The table: RCU root plus the writer's working state. */
struct nl_load_table {
	struct nl_load_snap *cur_rcu; /**< RCU root, written with rcu_assign_pointer() only */
	struct nl_mach_load *w_load;  /**< writer's working table [n_mach] (I1) */
	uint64_t *w_applied;          /**< writer's applied[] [n_mgr] */
	unsigned int n_mach;
	unsigned int n_mgr;
	uint64_t version;             /**< of the last publish */
	uint64_t n_publish;           /**< publishes so far (statistics) */
	uint64_t n_snap_alloc;        /**< snapshots allocated (not reused) so far (statistics) */
	struct __cds_lfs_stack spare; /**< snapshots past their grace period, for reuse (no lock) */
	unsigned long n_spare;        /**< on it (uatomic; at most NL_LOAD_SPARE_MAX) */
};

/** Spare snapshots a table keeps at most; more are freed (only as many as wait for a grace
 *  period at once are ever needed). */
#define NL_LOAD_SPARE_MAX 64u

/** One booking a manager made since its last snapshot. */
struct nl_load_booking {
	uint64_t seq;
	double arrive_vt;
	double dur_vt;
	uint32_t mach;
	uint32_t pad;
};

/** A manager's private view: last snapshot plus its own bookings (I5). */
struct nl_load_view {
	uint32_t mgr;                 /**< manager id (index into applied[]) */
	unsigned int n_mach;
	uint64_t version_seen;        /**< snapshot version the view was built from; 0 = none */
	uint64_t next_seq;            /**< seq of the next booking, starts at 1 (I4) */
	struct nl_mach_load *load;    /**< [cap_mach] the view */
	unsigned int cap_mach;
	struct nl_load_booking *log;  /**< ring of bookings [log_cap] */
	unsigned int log_cap;         /**< power of two */
	uint64_t log_head;            /**< seq of the oldest entry kept */
	uint64_t log_lost;            /**< bookings dropped from a full log (view then approximate) */
};

/**
 * Create a table with every machine idle and publish its first snapshot.
 *
 * @param out     Output table.
 * @param n_mach  Machines, 1..NL_MODEL_MAX_MACH.
 * @param n_mgr   Managers that book, >= 1.
 * @return 0; -EINVAL; -ENOMEM.
 * @par Context  Control thread, registered QSBR reader (I1); allocates.
 */
int nl_load_create(struct nl_load_table **out, unsigned int n_mach, unsigned int n_mgr);

/**
 * Free a table and its current snapshot. Readers must be gone (or offline for good).
 *
 * @param t  Table; NULL accepted.
 * @par Context  Control thread; waits for a grace period and for pending call_rcu callbacks;
 *               the caller must be offline or unregistered.
 */
void nl_load_free(struct nl_load_table *t);

/**
 * The writer's working entry of one machine (to update after a completion or a LOAD report).
 *
 * @param t     Table.
 * @param mach  Machine id < t->n_mach.
 * @return the entry; NULL when mach is out of range.
 * @par Context  Writer only (I1).
 */
struct nl_mach_load *nl_load_entry_ctl(struct nl_load_table *t, uint32_t mach);

/**
 * Apply one booking of manager `mgr` to the working table: busy_until = max(busy_until,
 * arrive) + dur, n_sub + 1, applied[mgr] = seq.
 *
 * @param t  Table.
 * @param mgr  Manager that booked, < n_mgr.
 * @param seq  Its booking sequence number (I4).
 * @param mach Machine id.
 * @param arrive_vt  When the sub-task reaches the machine [u.t.].
 * @param dur_vt     Its service time on the machine [u.t.].
 * @return 0; -EINVAL when mgr or mach is out of range.
 * @par Context  Writer only (I1).
 */
int nl_load_apply_ctl(struct nl_load_table *t, uint32_t mgr, uint64_t seq, uint32_t mach,
		      double arrive_vt, double dur_vt);

/**
 * Mark manager `mgr`'s bookings up to seq as reflected without applying them (a booking the
 * engine could not deliver, or one reflected by a worker's LOAD report instead).
 *
 * @param t    Table.
 * @param mgr  Manager id.
 * @param seq  Booking sequence number.
 * @par Context  Writer only (I1).
 */
void nl_load_mark_applied_ctl(struct nl_load_table *t, uint32_t mgr, uint64_t seq);

/**
 * Publish the working table as a new snapshot; the old one goes back to the table's spare
 * stack after a grace period (I2), and a publish reuses a spare one: it allocates only when
 * none is left or the machine count grew past the spare's room.
 *
 * @param t  Table.
 * @return 0; -ENOMEM (the old snapshot stays current).
 * @par Context  Writer only (I1); registered and online QSBR thread (call_rcu).
 */
int nl_load_publish_ctl(struct nl_load_table *t);

/**
 * Change the machine count (join: new machines idle; leave: the table keeps its size and the
 * engine marks the machine gone) and publish (I6).
 *
 * @param t       Table.
 * @param n_mach  New machine count, >= 1.
 * @return 0; -EINVAL; -ENOMEM.
 * @par Context  Writer only (I1); as nl_load_publish_ctl().
 */
int nl_load_resize_ctl(struct nl_load_table *t, unsigned int n_mach);

/**
 * Initialise a manager's view.
 *
 * @param v        View.
 * @param mgr      Manager id.
 * @param cap_mach Machines the view can hold without reallocating (>= current count).
 * @param log_cap  Bookings kept between snapshots, rounded up to a power of two (>= 2).
 * @return 0; -EINVAL; -ENOMEM.
 * @par Context  Control path; allocates.
 */
int nl_load_view_init(struct nl_load_view *v, uint32_t mgr, unsigned int cap_mach,
		      unsigned int log_cap);

/** Free a view's memory. @param v View (may be zeroed). @par Context Control path. */
void nl_load_view_fini(struct nl_load_view *v);

/**
 * Bring the view up to date with the current snapshot (I5), if it changed.
 *
 * @param v  View (owned by the caller's thread).
 * @param t  Table.
 * @return true when the view was rebuilt.
 * @par Context  Owner of the view; registered, online QSBR reader; no allocation, no lock.
 *               Cost O(n_mach + bookings pending) when rebuilt, O(1) otherwise.
 */
bool nl_load_view_refresh_rcu(struct nl_load_view *v, const struct nl_load_table *t);

/**
 * Book a sub-task on machine `mach` in the view and log it.
 *
 * @param v          View.
 * @param mach       Machine id < v->n_mach.
 * @param arrive_vt  When it reaches the machine [u.t.].
 * @param dur_vt     Its time on the machine [u.t.].
 * @return the booking's sequence number (I4), to send along with the sub-task; 0 when mach
 *         is out of range.
 * @par Context  Owner of the view; no allocation, O(1).
 */
static inline uint64_t
nl_load_view_book_st(struct nl_load_view *v, uint32_t mach, double arrive_vt, double dur_vt)
{
	/* inline: a leaf books L sub-tasks per task; a call spilled the caller's loop */
	struct nl_mach_load *l;
	struct nl_load_booking *b;
	uint64_t seq;

	if (mach >= v->n_mach)
		return 0;
	l = &v->load[mach];
	l->busy_until_vt = (l->busy_until_vt > arrive_vt ? l->busy_until_vt : arrive_vt) + dur_vt;
	l->n_sub++;
	seq = v->next_seq++;
	if (seq - v->log_head >= v->log_cap) { /* full: forget the oldest */
		v->log_head++;
		v->log_lost++;
	}
	b = &v->log[seq & (v->log_cap - 1)];
	b->seq = seq;
	b->mach = mach;
	b->arrive_vt = arrive_vt;
	b->dur_vt = dur_vt;
	return seq;
}

/**
 * Read-side helper for tests and benchmarks: the current snapshot's version.
 * @param t Table. @return version. @par Context Registered, online QSBR reader.
 */
uint64_t nl_load_version_rcu(const struct nl_load_table *t);

#ifdef __cplusplus
}
#endif
#endif /* NL_LOAD_H */
