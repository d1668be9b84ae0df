/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * nl_gossip: resource records shared by gossip (Umeda, Nakada, Matsuoka, "Decentralized Job
 * Scheduling System based on Information Sharing framework for Large-Scale Computing
 * Environment", IPSJ; the year is not printed in our copy, its newest reference is of 2003 —
 * §2.3.1, §4.5, §5.1.2; "the seed paper" below). Pure C: no DPDK, no clock, no thread, no
 * I/O. Every function takes the current time `now_s` from its caller, so the simulator
 * (virtual time) and the dataplane (TSC converted to seconds) run the same code.
 *
 * Theory of operation. Each node owns one view (struct nl_gossip_view): at most one record per
 * source node, keyed by source id. A record carries the source's resources (cores, free cores,
 * memory, architecture), a state (up, or left = a leave message), whether the source is behind
 * NAT, its creation time at the source and a lifetime. Merging a received record keeps the one
 * with the newer creation time (§4.5 step 2); an equal creation time is "already known" and is
 * reported back to the sender (§4.5 step 3).
 *
 * An exchange (§4.5 step 1) between an initiator and a peer sends records initiator -> peer
 * (push), peer -> initiator (pull), or both (push-pull). Which records are sent depends on the
 * rule:
 *  - NL_GOSSIP_ANTI_ENTROPY: every valid record of the view, at every exchange, forever
 *    (anti-entropy; converges to every live node, Karp et al. 2000: log3 N + O(ln ln N) rounds
 *    for push-pull with fan-out 1).
 *  - NL_GOSSIP_STOP_K: rumour mongering (§2.3.1): only "hot" records. A record becomes hot when
 *    it is new to the view (or is the node's own fresh record) and stops being pushed once
 *    `stop_k` receivers answered that they already knew it (§2.3.1 step 3). Some nodes may never
 *    learn it (the seed's Fig. 6 shows the share informed).
 *
 * Leaving: nl_gossip_leave_st() replaces the node's own record by a leave message (state
 * NL_GOSSIP_LEFT, newer creation time); it spreads as any record and makes every view that
 * receives it drop the source from its candidates (§4.5, last paragraph). Expiry:
 * nl_gossip_expire_st() removes records past created_s + lifetime_s, so a failed node that
 * could not send a leave message disappears by itself. Joining: a new node runs
 * nl_gossip_join_st() with any live node, which copies that node's view (anti-entropy
 * push-pull whatever the rule) and hands its own record over.
 *
 * NAT (§5.1.2): a record flagged NL_GOSSIP_F_NAT comes from a node that can open exchanges but
 * cannot be contacted. Initiators never pick it as a peer (nl_gossip_pick_peers_st() skips it);
 * it still learns everything through the exchanges it opens, because a push-pull exchange is
 * one connection carrying both directions (TCP opened from inside the NAT).
 *
 * How a reader reads the view without stopping the exchange. A view is single-owner (`_st`):
 * only its owner thread merges, expires and exchanges. Every change bumps the view's epoch
 * (nl_gossip_view_epoch()). A reader on another thread never touches the view: the owner
 * copies it with nl_gossip_view_copy_st() into a buffer when the epoch moved (after an
 * exchange, at most once per period) and publishes the copy — in the dataplane by
 * rcu_assign_pointer() on a liburcu QSBR root, freeing the previous copy after a grace period;
 * in the simulator the scheduling node reads its own view directly. The exchange never waits
 * for a reader, and a reader sees a whole view of one epoch, never a half-merged one.
 *
 * Invariants:
 *  - I1: a view holds at most one record per source; it is the one with the largest
 *        created_s ever merged and not yet expired (a leave message included).
 *  - I2: the epoch strictly increases at every change of the set of records or of a record.
 *  - I3: a record flagged NAT is never returned by nl_gossip_pick_peers_st(), nor is the
 *        owner's own record, a leave message or an expired record.
 *  - I4: under NL_GOSSIP_STOP_K a record is sent only while its "already known" count is
 *        below stop_k; under NL_GOSSIP_ANTI_ENTROPY every valid record is sent.
 */
#ifndef NL_GOSSIP_H
#define NL_GOSSIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nl_rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest fan-out (peers per exchange round of one node). */
#define NL_GOSSIP_MAX_FANOUT 16u
/** Record flag: the source is behind NAT (can initiate, cannot be contacted). */
#define NL_GOSSIP_F_NAT 0x01u

/** Record state. */
enum nl_gossip_state {
	NL_GOSSIP_UP = 0,   /**< the source offers its resources */
	NL_GOSSIP_LEFT = 1, /**< leave message: drop the source */
};

/** Direction of an exchange (§4.5 step 1). */
enum nl_gossip_mode {
	NL_GOSSIP_PUSH_PULL = 0, /**< both send */
	NL_GOSSIP_PUSH,          /**< initiator -> peer only */
	NL_GOSSIP_PULL,          /**< peer -> initiator only */
};

/** Which records an exchange carries. */
enum nl_gossip_rule {
	NL_GOSSIP_ANTI_ENTROPY = 0, /**< every valid record, forever */
	NL_GOSSIP_STOP_K,           /**< hot records until stop_k "already known" replies (§2.3.1) */
};

/** Protocol parameters, fixed per deployment. */
struct nl_gossip_cfg {
	unsigned int fanout;     /**< f: peers per round, 1..NL_GOSSIP_MAX_FANOUT */
	enum nl_gossip_mode mode;
	enum nl_gossip_rule rule;
	unsigned int stop_k;     /**< k for NL_GOSSIP_STOP_K, >= 1 */
};

/** One resource record (§4.5 step 0). 64 bytes, copied by value. */
struct nl_gossip_rec {
	uint32_t src;        /**< source node id */
	uint32_t cores;      /**< cores of the source */
	uint32_t free_cores; /**< cores not running a job when the record was made */
	uint32_t mem_mb;     /**< memory [MiB] */
	uint16_t arch;       /**< architecture code (application-defined) */
	uint8_t state;       /**< enum nl_gossip_state */
	uint8_t flags;       /**< NL_GOSSIP_F_* */
	uint32_t rsvd;
	double created_s;    /**< creation time at the source [s] */
	double lifetime_s;   /**< valid while now_s < created_s + lifetime_s [s], > 0 */
	uint64_t aux[3];     /**< application payload (e.g. a group-load summary), verbatim */
};

/** An "already known" reply: which record (source and creation time) the receiver had. */
struct nl_gossip_ack {
	uint32_t src;
	double created_s; /**< [s] */
};

/** Result of merging one record. */
enum nl_gossip_merge {
	NL_GOSSIP_MERGE_NEW = 0,   /**< stored (new source or newer record) */
	NL_GOSSIP_MERGE_KNOWN,     /**< same or older than the stored record: reply "known" */
	NL_GOSSIP_MERGE_EXPIRED,   /**< past its lifetime: dropped */
};

/** Counters of one or more exchanges. */
struct nl_gossip_xstats {
	uint64_t exchanges;  /**< exchanges run */
	uint64_t recs_sent;  /**< records carried, both directions */
	uint64_t recs_new;   /**< records that were new to their receiver */
	uint64_t recs_known; /**< "already known" replies */
};

struct nl_gossip_view;

/**
 * Check protocol parameters.
 * @param cfg  Parameters.
 * @return 0; -EINVAL when fanout is 0 or above NL_GOSSIP_MAX_FANOUT, mode/rule unknown, or
 *         stop_k is 0 under NL_GOSSIP_STOP_K.
 * @par Context  Any thread; pure.
 * @par Source   seed paper §2.3.1, §4.5.
 */
int nl_gossip_cfg_check(const struct nl_gossip_cfg *cfg);

/**
 * Create an empty view owned by node `self`.
 * @param out       Output view, freed by nl_gossip_view_free().
 * @param self      Owner's node id.
 * @param cap_hint  Expected records (the view grows past it).
 * @return 0; -ENOMEM.
 * @par Context  Control path; allocates.
 * @par Source   seed paper §4.5.
 */
int nl_gossip_view_create(struct nl_gossip_view **out, uint32_t self, size_t cap_hint);

/**
 * Free a view; NULL is a no-op.
 * @param v  View.
 * @par Context  Owner thread.
 * @par Source   seed paper §4.5 (views of resource records).
 */
void nl_gossip_view_free(struct nl_gossip_view *v);

/**
 * @param v  View.
 * @return records held (valid or not yet expired by nl_gossip_expire_st(), leave messages
 *         included).
 * @par Context  Owner thread.
 * @par Source   seed paper §4.5 (views of resource records).
 */
size_t nl_gossip_view_size(const struct nl_gossip_view *v);

/**
 * @param v  View.
 * @return the epoch: bumped by every change (I2).
 * @par Context  Owner thread.
 * @par Source   seed paper §4.5 (views of resource records).
 */
uint64_t nl_gossip_view_epoch(const struct nl_gossip_view *v);

/**
 * Look a source up.
 * @param v    View.
 * @param src  Source id.
 * @return the stored record (valid until the next change of the view), or NULL.
 * @par Context  Owner thread; O(1) expected.
 * @par Source   seed paper §4.5 (views of resource records).
 */
const struct nl_gossip_rec *nl_gossip_view_find_st(const struct nl_gossip_view *v, uint32_t src);

/**
 * Set the owner's own record (its fresh state): src is forced to the owner, the record becomes
 * hot with no "known" reply yet. Refresh it at least once per lifetime (the simulator does it
 * before every exchange): an expired own record is kept but no longer sent.
 * @param v    View.
 * @param rec  Record; created_s should be now, lifetime_s > 0.
 * @return 0; -EINVAL (lifetime_s <= 0 or created_s older than the stored own record); -ENOMEM.
 * @par Context  Owner thread.
 * @par Source   seed paper §4.5 step 0.
 */
int nl_gossip_set_self_st(struct nl_gossip_view *v, const struct nl_gossip_rec *rec);

/**
 * Merge one received record: keep the newer creation time per source (I1).
 * @param v      View.
 * @param rec    Record.
 * @param now_s  Current time [s].
 * @return enum nl_gossip_merge (>= 0); -EINVAL (lifetime_s <= 0); -ENOMEM.
 * @par Context  Owner thread; O(1) expected.
 * @par Source   seed paper §4.5 steps 2-3.
 */
int nl_gossip_merge_st(struct nl_gossip_view *v, const struct nl_gossip_rec *rec, double now_s);

/**
 * Records this view sends in one exchange (I4): every valid record (anti-entropy) or the hot
 * ones (stop-k). Leave messages are sent like any record.
 * @param v      View.
 * @param cfg    Parameters (rule, stop_k).
 * @param now_s  Current time [s]; expired records are not sent.
 * @param out    Output [cap] records.
 * @param cap    Capacity of out.
 * @return records written (at most cap; the first cap in view order when more qualify).
 * @par Context  Owner thread; O(view).
 * @par Source   seed paper §2.3.1 step 1, §4.5 step 1.
 */
size_t nl_gossip_collect_st(const struct nl_gossip_view *v, const struct nl_gossip_cfg *cfg,
			    double now_s, struct nl_gossip_rec *out, size_t cap);

/**
 * Receive the records of an exchange: merge each and list those already known.
 * @param v        Receiver's view.
 * @param in       [n] received records.
 * @param n        Count.
 * @param now_s    Current time [s].
 * @param ack      Output [n] "already known" replies for the sender (may be NULL).
 * @param n_ack    Output: replies written (may be NULL).
 * @param n_new    Output: records that were new (may be NULL).
 * @return 0; -ENOMEM (records before the failing one are merged).
 * @par Context  Owner thread; O(n) expected.
 * @par Source   seed paper §4.5 steps 2-3.
 */
int nl_gossip_receive_st(struct nl_gossip_view *v, const struct nl_gossip_rec *in, size_t n,
			 double now_s, struct nl_gossip_ack *ack, size_t *n_ack, size_t *n_new);

/**
 * Apply "already known" replies to the sender's rumour counters: each reply about the stored
 * record (same source and creation time) counts once; at stop_k the record stops being hot.
 * @param v    Sender's view.
 * @param cfg  Parameters.
 * @param ack  [n] replies.
 * @param n    Count.
 * @par Context  Owner thread; O(n) expected.
 * @par Source   seed paper §2.3.1 steps 2a and 3.
 */
void nl_gossip_acked_st(struct nl_gossip_view *v, const struct nl_gossip_cfg *cfg,
			const struct nl_gossip_ack *ack, size_t n);

/** Scratch buffers for in-process exchanges (grow as needed; one per thread). */
struct nl_gossip_scratch {
	struct nl_gossip_rec *rec;
	struct nl_gossip_ack *ack;
	size_t cap;
};

/**
 * Free scratch buffers (the struct itself is the caller's).
 * @param s  Scratch.
 * @par Context  Owner thread.
 * @par Source   seed paper §4.5 (views of resource records).
 */
void nl_gossip_scratch_fini(struct nl_gossip_scratch *s);

/**
 * One exchange between two views held in the same process (simulator, tests): collect, send,
 * receive, reply, in the directions of cfg->mode. Both directions use the views as they were
 * at the start of the exchange (the peer's reply does not echo what it just learnt).
 * @param init   Initiator's view.
 * @param peer   Peer's view (must not be NAT'd: the caller picked it).
 * @param cfg    Parameters.
 * @param now_s  Current time [s].
 * @param scr    Scratch buffers.
 * @param st     Counters to add to (may be NULL).
 * @return 0; -ENOMEM.
 * @par Context  Owner thread of both views.
 * @par Source   seed paper §4.5 steps 1-3.
 */
int nl_gossip_exchange_st(struct nl_gossip_view *init, struct nl_gossip_view *peer,
			  const struct nl_gossip_cfg *cfg, double now_s,
			  struct nl_gossip_scratch *scr, struct nl_gossip_xstats *st);

/**
 * Join through a live node: anti-entropy push-pull with it whatever cfg->rule, so the joiner
 * learns the whole view and the contact learns the joiner's record.
 * @param joiner   New node's view (holding its own record).
 * @param contact  Any live node's view.
 * @param now_s    Current time [s].
 * @param scr      Scratch buffers.
 * @return 0; -ENOMEM.
 * @par Context  Owner thread of both views.
 * @par Source   seed paper §4.5 (joining like a scheduling node, from a neighbour).
 */
int nl_gossip_join_st(struct nl_gossip_view *joiner, struct nl_gossip_view *contact,
		      double now_s, struct nl_gossip_scratch *scr);

/**
 * Replace the owner's record by a leave message (state NL_GOSSIP_LEFT, created now, hot).
 * @param v           View.
 * @param now_s       Current time [s] (must not be older than the own record).
 * @param lifetime_s  How long views keep the leave message [s], > 0.
 * @return 0; -ENOENT (no own record); -EINVAL.
 * @par Context  Owner thread.
 * @par Source   seed paper §4.5 (leave messages spread by gossip).
 */
int nl_gossip_leave_st(struct nl_gossip_view *v, double now_s, double lifetime_s);

/**
 * Drop records past their lifetime (the owner's own record excepted).
 * @param v      View.
 * @param now_s  Current time [s].
 * @return records dropped.
 * @par Context  Owner thread; O(view).
 * @par Source   seed paper §4.5 (expiry removes failed nodes).
 */
size_t nl_gossip_expire_st(struct nl_gossip_view *v, double now_s);

/**
 * Pick up to cfg->fanout distinct peers at random among the view's contactable sources (I3:
 * not the owner, not NAT'd, not left, not expired).
 * @param v      View.
 * @param cfg    Parameters (fanout).
 * @param now_s  Current time [s].
 * @param rng    Random generator (owner's).
 * @param out    Output [NL_GOSSIP_MAX_FANOUT] source ids.
 * @return peers written (fewer than fanout when the view has fewer candidates).
 * @par Context  Owner thread; O(fanout) expected when most records qualify, O(view) worst.
 * @par Source   seed paper §4.5 step 1, §5.1.2.
 */
unsigned int nl_gossip_pick_peers_st(const struct nl_gossip_view *v,
				     const struct nl_gossip_cfg *cfg, double now_s,
				     struct nl_rng *rng, uint32_t *out);

/**
 * Copy the valid records for a reader (see "How a reader reads the view" above).
 * @param v        View.
 * @param now_s    Current time [s]; expired records are skipped (not the owner's own).
 * @param up_only  true: skip leave messages.
 * @param out      Output [cap].
 * @param cap      Capacity.
 * @param epoch    Output: the epoch the copy belongs to (may be NULL).
 * @return records that qualify (may exceed cap: only cap are written).
 * @par Context  Owner thread; O(view). The copy is then the reader's.
 * @par Source   seed paper §4.5 (views of resource records).
 */
size_t nl_gossip_view_copy_st(const struct nl_gossip_view *v, double now_s, bool up_only,
			      struct nl_gossip_rec *out, size_t cap, uint64_t *epoch);

#ifdef __cplusplus
}
#endif
#endif /* NL_GOSSIP_H */
