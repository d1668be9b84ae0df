/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The appliance's table of accepted FSUBMITs (issue #15: a resent FSUBMIT is answered from
 * the first one's state, dataplane/port/nl_dp_farm.c): open addressing with linear probing keyed
 * by (task id, submitter IPv4 address, UDP port), and backward-shift deletion, so there are no
 * tombstones and a lookup ends at the first free slot. Pure C (tests/taskfarm/test_farm_dd.c).
 *
 * Invariants:
 *  I1  task_id 0 marks a free slot (FSUBMIT task ids have a non-zero submit id above bit 32).
 *  I2  every entry lies in the run of occupied slots that starts at its home slot.
 *  I3  the caller keeps the table at most half full (it sizes it to twice its entries).
 */
#ifndef NL_FARM_DD_H
#define NL_FARM_DD_H

#include <stdint.h>

/** One accepted FSUBMIT. */
struct nl_farm_dd {
	uint64_t task_id; /**< 0 = free slot (I1) */
	uint32_t ip;      /**< submitter address */
	uint16_t port;    /**< submitter port */
	uint8_t attempt;  /**< the submitter's attempt (FSUBMIT attempt byte) */
	uint8_t done;     /**< 0: in flight (ref = pool index); 1: ended (ref = stored reply) */
	uint32_t ref;
};

/** The table. */
struct nl_farm_dd_tab {
	struct nl_farm_dd *e; /**< [cap] */
	uint32_t cap;         /**< power of two */
};

/**
 * Home slot of a key (a multiplicative hash of the three fields).
 * @return 0..cap-1. @par Context Pure. @par Source Knuth, TAOCP vol. 3 §6.4 (hashing).
 */
static inline uint32_t
nl_farm_dd_hash(const struct nl_farm_dd_tab *t, uint64_t tid, uint32_t ip, uint16_t port)
{
	uint64_t x = (tid ^ ((uint64_t)ip << 16 | port) * 0xff51afd7ed558ccdull) *
		     0x9e3779b97f4a7c15ull;

	return (uint32_t)(x >> 32) & (t->cap - 1);
}

/**
 * Find a key.
 * @return its entry, or NULL. @par Context The table's owner (the I/O lcore).
 * @par Source Knuth, TAOCP vol. 3 §6.4 algorithm L (linear probing).
 */
static inline struct nl_farm_dd *
nl_farm_dd_find(struct nl_farm_dd_tab *t, uint64_t tid, uint32_t ip, uint16_t port)
{
	for (uint32_t i = nl_farm_dd_hash(t, tid, ip, port);; i = (i + 1) & (t->cap - 1)) {
		struct nl_farm_dd *e = &t->e[i];

		if (e->task_id == 0)
			return NULL;
		if (e->task_id == tid && e->ip == ip && e->port == port)
			return e;
	}
}

/**
 * Find a key or insert it (the key fields set, the others as they were: the caller sets
 * them). tid must not be 0 (I1); the table must have a free slot (I3).
 * @return its entry. @par Context The table's owner.
 */
static inline struct nl_farm_dd *
nl_farm_dd_put(struct nl_farm_dd_tab *t, uint64_t tid, uint32_t ip, uint16_t port)
{
	for (uint32_t i = nl_farm_dd_hash(t, tid, ip, port);; i = (i + 1) & (t->cap - 1)) {
		struct nl_farm_dd *e = &t->e[i];

		if (e->task_id == 0 || (e->task_id == tid && e->ip == ip && e->port == port)) {
			e->task_id = tid;
			e->ip = ip;
			e->port = port;
			return e;
		}
	}
}

/**
 * Delete an entry: later entries of its run move back over the hole (I2), so pointers to
 * other entries may no longer point at them: find them again.
 * @param e  An entry of t. @par Context The table's owner.
 * @par Source Knuth, TAOCP vol. 3 §6.4 algorithm R (deletion with linear probing).
 */
static inline void
nl_farm_dd_del(struct nl_farm_dd_tab *t, struct nl_farm_dd *e)
{
	uint32_t mask = t->cap - 1, i = (uint32_t)(e - t->e), j = i;

	for (;;) {
		j = (j + 1) & mask;
		if (t->e[j].task_id == 0)
			break;
		uint32_t k = nl_farm_dd_hash(t, t->e[j].task_id, t->e[j].ip, t->e[j].port);

		/* j stays unless its home k lies cyclically in (i, j] */
		if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		t->e[i] = t->e[j];
		i = j;
	}
	t->e[i].task_id = 0;
}

#endif /* NL_FARM_DD_H */
