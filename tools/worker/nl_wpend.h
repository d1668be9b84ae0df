/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * nlevel-worker's DONEs not yet acknowledged (issue #34: every accepted task answered once).
 * A DONE is one UDP datagram; the kernel, a full receive ring at a busy or paused appliance,
 * or an ARP probe unanswered in time can drop it, and then its task waits for an answer that
 * never comes. The appliance answers every DONE it takes in with a DONE_ACK (docs/protocol.md);
 * the worker keeps each DONE here until then and resends it after NL_WPEND_FIRST_NS, doubling
 * up to NL_WPEND_MAX_GAP_NS, for NL_WPEND_GIVE_UP_NS at most (an appliance down that long
 * re-DISPATCHes its journaled runs when it is back, and the run record, nl_wrec.h, answers
 * them). A resend the appliance already took is a duplicate there: counted stale and
 * acknowledged, never settled twice.
 *
 * A set-associative table (NL_WPEND_SETS x NL_WPEND_WAYS, 16,384 DONEs, 1 MiB) keyed by
 * (task id, sub-task, token); a DONE that finds its set full is sent once, not kept, and
 * counted. Each DONE names the appliance it goes to (dest, an index: 0 = --appliance, 1 =
 * --standby): a resend goes where the first send went, and the DONEs of an appliance the worker
 * left after its failure are dropped at once (nl_wpend_drop_to()). Pure bookkeeping, no system
 * calls; the worker's loop owns it (one thread).
 * Source: positive acknowledgement with retransmission (RFC 793 §1.5, §3.7; Stevens, "TCP/IP
 * Illustrated" vol. 1, 1994, ch. 21 for the doubling back-off).
 */
#ifndef NL_WPEND_H
#define NL_WPEND_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_proto.h"

#define NL_WPEND_SETS 2048u                 /**< sets (power of two) */
#define NL_WPEND_WAYS 8u                    /**< ways per set */
#define NL_WPEND_FIRST_NS 300000000ull      /**< first resend after 0.3 s */
#define NL_WPEND_MAX_GAP_NS 3000000000ull   /**< resends at most 3 s apart */
#define NL_WPEND_GIVE_UP_NS 120000000000ull /**< kept at most 120 s after the first send */
#define NL_WPEND_DESTS 2u                   /**< appliances a DONE may go to (dest < this) */

struct nl_wpend_ent {
	struct nl_msg_done done; /**< the DONE (task_id 0 = empty way) */
	uint64_t first_ns;       /**< first sent [ns, the caller's monotonic clock] */
	uint64_t due_ns;         /**< next resend */
	uint64_t gap_ns;         /**< the gap before the resend after that */
	uint8_t dest;            /**< the appliance it goes to (< NL_WPEND_DESTS) */
};

struct nl_wpend {
	struct nl_wpend_ent *e; /**< [NL_WPEND_SETS * NL_WPEND_WAYS] */
	uint64_t next_ns;       /**< no entry is due before this (UINT64_MAX: none kept) */
	uint32_t n;             /**< DONEs kept */
	uint32_t n_to[NL_WPEND_DESTS]; /**< DONEs kept per dest (they sum to n) */
	uint64_t n_kept, n_acked, n_resent, n_gave_up, n_full, n_ack_unknown;
	uint64_t n_dropped;     /**< dropped by nl_wpend_drop_to() */
};

/**
 * Allocate an empty table (1 MiB).
 * @return 0; -ENOMEM. @par Context The worker's loop, at start.
 */
int nl_wpend_init(struct nl_wpend *p);

/** Free it (p->e NULL accepted). */
void nl_wpend_fini(struct nl_wpend *p);

/**
 * Keep DONE d, sent at now_ns, until its DONE_ACK. A DONE of the same (task id, sub-task,
 * token) already kept is replaced (its back-off starts again).
 * @param now_ns  Monotonic clock [ns]. @return true when kept; false when d's set is full
 * (counted n_full) or d's task id is 0.
 * @par Context The worker's loop.
 */
bool nl_wpend_add(struct nl_wpend *p, const struct nl_msg_done *d, uint64_t now_ns);

/**
 * nl_wpend_add() of a DONE that goes to appliance dest (nl_wpend_add() is dest 0). A DONE of
 * the same (task id, sub-task, token) already kept is replaced, its dest too.
 * @param dest  < NL_WPEND_DESTS (else not kept: false).
 * @par Context The worker's loop.
 */
bool nl_wpend_add_to(struct nl_wpend *p, const struct nl_msg_done *d, uint64_t now_ns,
		     unsigned int dest);

/**
 * A DONE_ACK came: forget the DONE it names.
 * @return true when one was kept (n_acked), false otherwise (n_ack_unknown: a second ack of
 * a resend, or an ack of a DONE not kept).
 * @par Context The worker's loop.
 */
bool nl_wpend_ack(struct nl_wpend *p, uint64_t task_id, uint16_t sub, uint32_t token);

/**
 * The DONEs due for a resend at now_ns: each is passed to resend(arg, d) and its next resend
 * set (gap doubled, at most NL_WPEND_MAX_GAP_NS); one kept NL_WPEND_GIVE_UP_NS is dropped
 * instead (n_gave_up). Scans the table only when something is due (p->next_ns).
 * @param now_ns  Monotonic clock [ns]. @return The time the next one is due (UINT64_MAX: none
 * kept). @par Context The worker's loop.
 */
uint64_t nl_wpend_poll(struct nl_wpend *p, uint64_t now_ns,
		       void (*resend)(void *arg, const struct nl_msg_done *d), void *arg);

/**
 * nl_wpend_poll() whose resend callback also gets each DONE's dest (where to send it again).
 * @par Context The worker's loop.
 */
uint64_t nl_wpend_poll_to(struct nl_wpend *p, uint64_t now_ns,
			  void (*resend)(void *arg, const struct nl_msg_done *d, unsigned int dest),
			  void *arg);

/**
 * Forget every DONE kept for appliance dest (the worker left it after its failure: no
 * acknowledgement will come). Counted in n_dropped.
 * @return How many were dropped.
 * @par Context The worker's loop.
 */
uint32_t nl_wpend_drop_to(struct nl_wpend *p, unsigned int dest);

/**
 * Issue #36: the worker failed over from appliance `from` to `to` (its standby). Each DONE
 * kept for `from` whose sub-task came from another appliance (origin_seq != 0, from the
 * DISPATCH's origin block) goes to `to` instead, as a relayed DONE (relay NL_RELAY_ENDED, due
 * at now_ns); the others are dropped as nl_wpend_drop_to() does. With from == to (the
 * appliance restarted and the worker joined its new life) the others stay.
 * @param now_ns  Monotonic clock [ns]. @param relayed  Output: how many go to `to` now.
 * @return How many were dropped. @par Context The worker's loop.
 */
uint32_t nl_wpend_relay_to(struct nl_wpend *p, unsigned int from, unsigned int to,
			   uint64_t now_ns, uint32_t *relayed);

/**
 * Issue #36: call fn(arg, d) for each DONE kept for appliance dest (no change to the table).
 * @par Context The worker's loop.
 */
void nl_wpend_each_to(const struct nl_wpend *p, unsigned int dest,
		      void (*fn)(void *arg, const struct nl_msg_done *d), void *arg);

#endif /* NL_WPEND_H */
