/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * nl_swim: a failure detector for a fixed group of members (nlevel appliances), SWIM with the
 * Lifeguard extensions, as pure C (no threads, no sockets, no clock of its own).
 *
 * Sources: A. Das, I. Gupta, A. Motivala, "SWIM: Scalable Weakly-consistent Infection-style
 * Process Group Membership Protocol", DSN 2002 (cited "SWIM §"); A. Dadgar, J. Phillips,
 * J. Currey, "Lifeguard: Local Health Awareness for More Accurate Failure Detection", 2018
 * (cited "Lifeguard §"); parameters are those of hashicorp/memberlist's DefaultLANConfig, the
 * implementation the Lifeguard paper evaluates (nl_swim_cfg_default()).
 *
 * Theory of operation. Each member runs one `struct nl_swim`. The host (simulator or
 * appliance) drives it with two calls and one callback:
 *  - nl_swim_tick_st(sw, now_ns) runs every timer due at now_ns (its own monotonic clock) and
 *    returns when it wants to be called again;
 *  - nl_swim_recv_st(sw, now_ns, msg) hands it one message another member sent;
 *  - cfg.send(ctx, to, msg) is how it sends (the host encodes, seals and transmits, or drops).
 * Every protocol period (probe_interval × LHM) it probes the next member of a shuffled
 * round-robin list (SWIM §4.3): PING; without an ACK within probe_timeout × LHM it asks
 * indirect_checks other members to probe it (PING_REQ; with Lifeguard they answer NACK when
 * they got no ACK either, Lifeguard §4.1); without any ACK by the end of the period the
 * member is SUSPECT (SWIM §4.2). A suspect that hears of it (by gossip, or at once by the
 * ping of the member suspecting it: the buddy system, Lifeguard §4.3) refutes with a higher
 * incarnation number; otherwise, when its suspicion timeout ends, it is DEAD. The timeout is
 * fixed (SWIM) or, with Lifeguard, starts at max and falls towards min as independent members
 * confirm the suspicion (Lifeguard §4.2). Membership updates (alive / suspect / dead, with
 * incarnation) travel piggy-backed on the probe messages and, while any is pending, in a
 * GOSSIP message to gossip_nodes random members every gossip_interval (memberlist's
 * addition to SWIM), each retransmitted retransmit_mult × ceil(log10(N + 1)) times
 * (SWIM §4.1).
 *
 * Invariants:
 *  - I1 Time is local. Every deadline is the receiver's now_ns plus a duration; no message
 *       carries a time, so no two members' clocks are ever compared. now_ns going backwards
 *       is clamped to the last value seen (a monotonic clock never does).
 *  - I2 Incarnations only grow: a member's known incarnation never decreases; only the member
 *       itself raises its own, and only to refute (SWIM §4.2).
 *  - I3 Precedence (SWIM §4.2): alive(i) overrides suspect/dead(j) iff i > j; suspect(i)
 *       overrides alive(j) iff i >= j; dead(i) overrides alive/suspect(j) iff i >= j.
 *  - I4 DEAD is reached only through SUSPECT and its timeout at some member (or directly
 *       when cfg.suspicion is false: plain SWIM §3, for comparison only).
 *  - I5 The LHM is in [1, awareness_max] and is always 1 without Lifeguard.
 *
 * Concurrency: a `struct nl_swim` has one owner (suffix _st): the control lcore of an
 * appliance, or the simulator. Nothing is shared between instances; the library never
 * allocates after nl_swim_create().
 */
#ifndef NL_SWIM_H
#define NL_SWIM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most members one group can have. */
#define NL_SWIM_MAX_MEMBERS 4096u
/** Most membership updates one message carries (piggy-back, SWIM §4.1). */
#define NL_SWIM_MAX_UPDATES 8u
/** Most distinct confirmers a suspicion counts (Lifeguard §4.2: K = suspicion_mult - 2). */
#define NL_SWIM_MAX_CONFIRM 8u
/** Most indirect probes one member relays at once for others. */
#define NL_SWIM_MAX_RELAYS 64u

/** What a member is believed to be. */
enum nl_swim_state {
	NL_SWIM_ALIVE = 0,
	NL_SWIM_SUSPECT = 1,
	NL_SWIM_DEAD = 2,
};

/** Message types (SWIM §3: ping, ping-req, ack; Lifeguard §4.1: nack). */
enum nl_swim_type {
	NL_SWIM_PING = 1,     /**< from -> target: answer ACK with seq */
	NL_SWIM_ACK = 2,      /**< target answered seq (directly, or relayed by from) */
	NL_SWIM_PING_REQ = 3, /**< from asks the receiver to ping target for it, seq is from's */
	NL_SWIM_NACK = 4,     /**< relay from got no ACK from target for seq (Lifeguard) */
	NL_SWIM_GOSSIP = 5,   /**< updates only (memberlist's gossip round; no answer) */
};

/** One membership update (SWIM §4.2 alive / suspect / confirm). */
struct nl_swim_update {
	uint32_t id;          /**< member the update is about */
	uint32_t incarnation; /**< its incarnation number */
	uint32_t from;        /**< suspect: the member that suspects it (for confirmations) */
	uint8_t state;        /**< enum nl_swim_state */
};

/** One protocol message; the host encodes it for the wire (fixed fields, no time in it, I1). */
struct nl_swim_msg {
	uint8_t type;   /**< enum nl_swim_type */
	uint8_t n_upd;  /**< updates in upd[], 0..NL_SWIM_MAX_UPDATES */
	uint32_t from;  /**< sender */
	uint32_t target; /**< the member probed (PING: the receiver) */
	uint32_t seq;   /**< the prober's sequence number, echoed by ACK / NACK */
	struct nl_swim_update upd[NL_SWIM_MAX_UPDATES];
};

/**
 * Send one message. Called from inside nl_swim_tick_st() / nl_swim_recv_st().
 * @param ctx  cfg.ctx.
 * @param to   Member id of the receiver (never the sender itself).
 * @param msg  The message, valid during the call only.
 * @return Ignored (a lost message is what the protocol is made for).
 */
typedef int nl_swim_send_fn(void *ctx, uint32_t to, const struct nl_swim_msg *msg);

/**
 * A member's state changed in this instance's view.
 * @param ctx  cfg.ctx. @param id  The member. @param old_state, new_state  enum nl_swim_state.
 * @param incarnation  Its incarnation now. @param now_ns  When (the instance's clock).
 */
typedef void nl_swim_change_fn(void *ctx, uint32_t id, enum nl_swim_state old_state,
	enum nl_swim_state new_state, uint32_t incarnation, uint64_t now_ns);

/** Configuration; nl_swim_cfg_default() fills the published defaults. */
struct nl_swim_cfg {
	uint32_t n_members;          /**< N, members 0..N-1; 1 <= N <= NL_SWIM_MAX_MEMBERS */
	uint32_t self;               /**< this member's id, < N */
	uint32_t incarnation;        /**< this member's first incarnation (e.g. a boot counter) */
	uint64_t probe_interval_ns;  /**< protocol period T' [ns] (memberlist 1 s) */
	uint64_t probe_timeout_ns;   /**< direct ACK wait [ns] (memberlist 500 ms) */
	unsigned int indirect_checks; /**< k members asked for indirect probes (memberlist 3) */
	unsigned int suspicion_mult; /**< min timeout = mult·max(1,log10 N)·T' (memberlist 4) */
	unsigned int suspicion_max_mult; /**< max timeout = this × min (memberlist 6, Lifeguard) */
	unsigned int awareness_max;  /**< LHM upper bound (memberlist 8, Lifeguard) */
	unsigned int retransmit_mult; /**< an update goes out mult·ceil(log10(N+1)) times (4) */
	unsigned int max_piggyback;  /**< updates per message, <= NL_SWIM_MAX_UPDATES (8) */
	uint64_t gossip_interval_ns; /**< pending updates also go to gossip_nodes members every
	                              *   this [ns] (memberlist 200 ms); 0: piggy-back only (SWIM) */
	unsigned int gossip_nodes;   /**< members per gossip round (memberlist 3) */
	bool lifeguard;              /**< LHM, nacks, dynamic suspicion, buddy (default true) */
	bool suspicion;              /**< false: a failed probe is DEAD at once (plain SWIM §3) */
	uint64_t seed;               /**< probe order and helper choice (xorshift64*) */
	nl_swim_send_fn *send;       /**< required */
	nl_swim_change_fn *on_change; /**< optional */
	void *ctx;                   /**< passed to send and on_change */
};

/** Counters of one instance (plain integers, read by the owner). */
struct nl_swim_stats {
	uint64_t probes;          /**< protocol periods that probed a member */
	uint64_t probes_failed;   /**< ... that ended without any ACK */
	uint64_t indirect;        /**< PING_REQs sent */
	uint64_t relayed;         /**< PING_REQs served for others */
	uint64_t relay_full;      /**< PING_REQs not served: NL_SWIM_MAX_RELAYS busy */
	uint64_t nacks_in;        /**< NACKs received in time */
	uint64_t suspected;       /**< members this instance moved to SUSPECT */
	uint64_t declared_dead;   /**< suspicions this instance's timer ended (DEAD) */
	uint64_t refuted;         /**< times this member refuted a suspicion of itself */
	uint64_t msgs_out;        /**< messages sent */
	uint64_t msgs_in;         /**< messages received */
	uint64_t bad_in;          /**< messages refused (unknown member, bad type or count) */
};

struct nl_swim;

/**
 * Fill @p cfg with memberlist's DefaultLANConfig (the Lifeguard paper's implementation):
 * T' = 1 s, probe timeout 500 ms, k = 3, suspicion_mult 4, suspicion_max_mult 6,
 * awareness_max 8, retransmit_mult 4, gossip every 200 ms to 3 members, 8 updates per
 * message, Lifeguard and suspicion on.
 * @param cfg  Output. Not NULL. send / on_change / ctx are left NULL.
 * @param n_members  N. @param self  This member's id.
 * @par Context  Any thread; pure.
 * @par Source   Lifeguard §5 (memberlist defaults); SWIM §4.
 */
void nl_swim_cfg_default(struct nl_swim_cfg *cfg, uint32_t n_members, uint32_t self);

/**
 * Create one member's detector; every other member starts ALIVE at incarnation 0, and this
 * member's own alive(incarnation) is queued for gossip (so a restart is announced).
 * @param cfg     Configuration (copied). @param now_ns  The owner's monotonic clock [ns].
 * @param out     Output: the instance.
 * @return 0; -EINVAL if a field is out of range or send is NULL; -ENOMEM.
 * @par Context  Control thread, init-time; allocates O(N).
 * @par Source   SWIM §4.
 */
int nl_swim_create(const struct nl_swim_cfg *cfg, uint64_t now_ns, struct nl_swim **out);

/** Free an instance (NULL is fine). @par Context  Owner, control thread. @par Source  — */
void nl_swim_free(struct nl_swim *sw);

/**
 * Run every timer due at @p now_ns: start a probe, send the indirect probes, end a period
 * (suspect the target on no ACK, adjust the LHM), answer NACK for relays that timed out,
 * end suspicions (DEAD).
 * @param sw  Instance. @param now_ns  Owner's monotonic clock [ns] (I1).
 * @return The next time [ns] it wants to be called (earlier calls are harmless).
 * @par Context  Owner (_st); no allocation; calls cfg.send / cfg.on_change.
 *               Cost per message sent O(max_piggyback · pending updates); O(N) per indirect
 *               probe (helper choice) and O(suspects + NL_SWIM_MAX_RELAYS) per call.
 * @par Source   SWIM §3, §4.2, §4.3; Lifeguard §4.1, §4.2.
 */
uint64_t nl_swim_tick_st(struct nl_swim *sw, uint64_t now_ns);

/**
 * Earliest pending deadline [ns] on the owner's clock (what nl_swim_tick_st() last returned,
 * updated by nl_swim_recv_st()); the host calls nl_swim_tick_st() then, or earlier.
 * @return Time [ns]. @par Context  Owner; pure read. @par Source  —
 */
uint64_t nl_swim_next_deadline(const struct nl_swim *sw);

/**
 * Take one message: apply its piggy-backed updates (I3; refute a suspicion of this member),
 * answer a PING (ACK), serve a PING_REQ (relay), match an ACK / NACK to the probe in flight
 * or to a relay.
 * @param sw  Instance. @param now_ns  Owner's monotonic clock [ns].
 * @param msg The message as sent by msg->from.
 * @return 0; -EINVAL if it names an unknown member, is its own sender, or has a bad type or
 *         update count (counted bad_in; nothing applied).
 * @par Context  Owner (_st); no allocation; may call cfg.send / cfg.on_change.
 * @par Source   SWIM §3, §4.2; Lifeguard §4.1, §4.3.
 */
int nl_swim_recv_st(struct nl_swim *sw, uint64_t now_ns, const struct nl_swim_msg *msg);

/** @return @p id's state in this view (DEAD for an unknown id).
 * @par Context  Owner; pure read. @par Source  SWIM §4.2 (alive / suspect / confirmed). */
enum nl_swim_state nl_swim_state_of(const struct nl_swim *sw, uint32_t id);

/** @return @p id's known incarnation (0 for an unknown id).
 * @par Context  Owner; pure read. @par Source  SWIM §4.2. */
uint32_t nl_swim_incarnation_of(const struct nl_swim *sw, uint32_t id);

/**
 * Local health multiplier now: 1 + awareness score, in [1, awareness_max] (I5).
 * @par Context  Owner. @par Source  Lifeguard §4.1.
 */
unsigned int nl_swim_lhm(const struct nl_swim *sw);

/**
 * Suspicion timeout [ns] after @p confirmations independent confirmations:
 * without Lifeguard min; with it max(min, max − (max − min)·log(C+1)/log(K+1)), where
 * min = suspicion_mult·max(1, log10 N)·T', max = suspicion_max_mult·min, K = suspicion_mult − 2
 * (0, hence min, when N − 2 < K).
 * @par Context  Owner; pure. @par Source  Lifeguard §4.2 (memberlist suspicion.go).
 */
uint64_t nl_swim_suspicion_timeout_ns(const struct nl_swim *sw, unsigned int confirmations);

/** @return the counters (valid while @p sw lives). @par Context  Owner; pure read.
 * @par Source  — */
const struct nl_swim_stats *nl_swim_stats(const struct nl_swim *sw);

#ifdef __cplusplus
}
#endif

#endif /* NL_SWIM_H */
