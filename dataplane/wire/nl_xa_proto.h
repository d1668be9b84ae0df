/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Inter-appliance messages (scale-out, docs/scale-out.md): the wire codec of the datagrams
 * nlevel appliances that share one N-level tree exchange. Pure C, no DPDK (the libFuzzer
 * target and the unit tests link it), beside nl_proto.h whose header, versions, length rule
 * and authentication trailer these messages share (docs/protocol.md "Between appliances").
 *
 * Types 16..23 are reserved for these messages; six are defined:
 *   16 HANDOVER  tasks handed to the appliance that owns their next manager, with their state
 *   17 HANDBACK  the end of tasks handed over, back to the appliance that accepted them
 *   18 SUMMARY   gossip records: one group-load summary per owned subtree root
 *   19 ACK       the datagram numbers of HANDOVERs and HANDBACKs received (retransmission)
 *   20 SWIM      one failure-detector message (managers/swim: PING, ACK, PING_REQ, NACK,
 *                GOSSIP) with its piggy-backed membership updates (SWIM §4.1, Lifeguard §4)
 *   21 HOLD      the subtrees the sender runs now (standby with `failback = no`, issue #36)
 *
 * Every message: the 8-byte header of nl_proto.h, then a 16-byte prefix (from_app,
 * n records, the datagram number dgram_seq, the sender's incarnation), then n records. As in nl_proto.h, everything the
 * decoder accepts re-encodes to the same bytes, and the encoder refuses what the decoder
 * would refuse.
 */
#ifndef NL_XA_PROTO_H
#define NL_XA_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nl_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NL_XA_MSG_HANDOVER 16u /**< appliance -> appliance: tasks with their state */
#define NL_XA_MSG_HANDBACK 17u /**< appliance -> accepting appliance: task ends */
#define NL_XA_MSG_SUMMARY 18u  /**< appliance -> appliance: gossip records */
#define NL_XA_MSG_ACK 19u      /**< appliance -> appliance: datagram numbers received */
#define NL_XA_MSG_SWIM 20u     /**< appliance -> appliance: a failure-detector message */
#define NL_XA_MSG_HOLD 21u     /**< appliance -> appliance: the subtrees it runs now */
#define NL_XA_MSG_FIRST 16u    /**< types 16..23 are the scale-out range */
#define NL_XA_MSG_LAST 23u

#define NL_XA_MAX_APPS 64u      /**< appliances in one tree */
#define NL_XA_MAX_MGR 4096u     /**< manager ids (as the dataplane) */
#define NL_XA_PREFIX_LEN 16u    /**< after the 8-byte header */
#define NL_XA_TASK_LEN 72u      /**< fixed part of a HANDOVER record (args follow, padded to 8) */
#define NL_XA_BACK_LEN 32u      /**< HANDBACK record */
#define NL_XA_SUM_LEN 64u       /**< SUMMARY record (one gossip record) */
#define NL_XA_ACK_LEN 8u        /**< ACK record: dgram_seq (4), pad (4) */
#define NL_XA_SWIM_LEN 16u      /**< SWIM record: the head first, then one per update */
#define NL_XA_HOLD_LEN 16u      /**< HOLD record (one per message) */
#define NL_XA_SWIM_MAX_UPD 8u   /**< updates one SWIM message carries (NL_SWIM_MAX_UPDATES) */
#define NL_XA_SWIM_TYPE_MAX 5u  /**< SWIM message types 1..5 (enum nl_swim_type) */
#define NL_XA_SWIM_STATE_MAX 2u /**< update states 0..2: alive, suspect, dead */
/** A SUMMARY record dated more than this ahead of the receiver's wall clock is refused: the
 *  clocks of a site's appliances agree within it (docs/scale-out.md). [s] */
#define NL_XA_SUM_AHEAD_MAX_S 60.0
/** Room for records in one message, trailer included (version 2). */
#define NL_XA_ROOM (NL_PROTO_MAX_LEN - NL_PROTO_HDR_LEN - NL_XA_PREFIX_LEN - NL_AUTH_TRAILER_LEN)
#define NL_XA_MAX_TASKS (NL_XA_ROOM / NL_XA_TASK_LEN) /**< 18 */
#define NL_XA_MAX_BACKS (NL_XA_ROOM / NL_XA_BACK_LEN) /**< 41 */
#define NL_XA_MAX_SUMS (NL_XA_ROOM / NL_XA_SUM_LEN)   /**< 20 */
#define NL_XA_MAX_ACKS (NL_XA_ROOM / NL_XA_ACK_LEN)   /**< 163 */

/** HANDOVER record flags (nl_xa_task.flags). */
#define NL_XA_TF_PLACED 0x01u  /**< placed on this appliance by load above the split (once) */
#define NL_XA_TF_REROUTE 0x02u /**< the client asked for re-routing when an appliance is lost */
#define NL_XA_TF_REROUTED 0x04u /**< re-routed once already (not again: REJECT machine_lost) */
/** #36: a client's resend, passed by the standby that received it to the live appliance it
 * stands by (the client failed over while that one was alive): the receiver runs nothing; it
 * ties the record to the task of that client and id it holds (its end is handed back to the
 * sender too), or hands back the end of one it answered lately, or hands it back of reason
 * NL_XA_REASON_NOT_HELD (docs/scale-out.md "A client that fails over while its appliance
 * is alive") */
#define NL_XA_TF_RESEND 0x08u
#define NL_XA_TF_ALL 0x0fu

/** A task handed over (HANDOVER record): what the next appliance needs to carry it on. */
struct nl_xa_task {
	uint64_t task_id;      /**< the client's id */
	uint64_t need;         /**< Delta */
	uint64_t instr;        /**< I of the whole task */
	uint64_t data_bits;    /**< D of the whole task */
	uint64_t age_us;       /**< time since the accepting appliance admitted it [us] */
	uint32_t origin_seq;   /**< the accepting appliance's hand-over sequence (echoed) */
	uint32_t origin_token; /**< the accepting appliance's handle (echoed) */
	uint16_t to_mgr;       /**< manager that receives it (< NL_XA_MAX_MGR) */
	uint16_t origin_app;   /**< appliance that accepted it (< NL_XA_MAX_APPS) */
	uint16_t n_split;      /**< L, 1..64 */
	uint16_t hops;         /**< manager-to-manager transfers so far */
	uint16_t cmd_id;       /**< task-farm command id */
	uint8_t args_len;      /**< <= NL_PROTO_MAX_ARGS */
	uint8_t flags;         /**< NL_XA_TF_* */
	uint32_t client_ip;    /**< the client that submitted it: IPv4 address, host order (#36:
				* its resend at the accepting appliance's standby; 0 unknown) */
	uint16_t client_port;  /**< and its UDP port */
	uint8_t args[NL_PROTO_MAX_ARGS];
};

/** The end of a task handed over (HANDBACK record). */
struct nl_xa_back {
	uint64_t task_id;
	uint32_t origin_token; /**< as handed over */
	uint32_t origin_seq;   /**< as handed over */
	uint16_t reason;       /**< 0 = every sub-task ran; else enum nl_reject_reason (failed) */
	uint16_t n_done;       /**< sub-tasks done, <= 64 */
	int32_t status;        /**< first non-zero exit status of a sub-task */
	uint16_t hops;         /**< transfers of the whole path */
	uint16_t at_app;       /**< NL_XA_REASON_MOVED: the appliance that holds it now */
};

/** HANDBACK reason: not an end; a worker's word on one sub-task of a task it was DISPATCHed
 * by an appliance now dead, relayed to the task's origin by the standby the worker failed over
 * to (issue #36, docs/protocol.md "Relayed DONE"): n_done = the sub-task, at_app = what became
 * of it (enum nl_done_relay: ended, running, withdrawn), hops = its DONE state (enum
 * nl_done_state), status = its exit status. */
#define NL_XA_REASON_WORKER 14u

/** HANDBACK reason: not an end; what became of a task of a client of appliance at_app, now
 * dead, told to at_app's standby by the appliance that held the task (it had crossed there;
 * issue #36, docs/scale-out.md "A client's resend at the standby"): origin_token = the
 * client's IPv4 address (host order), origin_seq = its UDP port (1..65535), hops = enum
 * nl_done_relay (ended: n_done sub-tasks done, status; running: its end follows). */
#define NL_XA_REASON_CLIENT 13u

/** HANDBACK reason: not an end; a resend passed here (NL_XA_TF_RESEND) is of no task this
 * appliance holds or answered lately: the sender (a standby) decides on it itself (issue #36). */
#define NL_XA_REASON_NOT_HELD 11u

/** HANDBACK reason: not an end; a worker's word on one sub-task of a task of a client of the
 * sender's previous life (the sender restarted; the worker rejoined it and told it), passed on
 * to the sender's standby, where the client may have sent it again (issue #36): fields as
 * NL_XA_REASON_WORKER's (n_done = the sub-task, < 64; at_app = enum nl_done_relay; hops = its
 * DONE state; status), origin_token = the client's IPv4 address (host order), origin_seq = its
 * UDP port. */
#define NL_XA_REASON_CLIENT_SUB 12u

/** HANDBACK reason: not an end; the task passed on to appliance at_app (a transit's note
 * to the accepting appliance, so it knows whom to wait for). */
#define NL_XA_REASON_MOVED 15u

/** HANDBACK reason: not an end; the sender handed the task on to appliance at_app (hops =
 * its hops on that hand-over, as in the MOVED note), was never told it arrived, and forgot
 * the hand-over when at_app was declared dead and not back within its dead_hold_s (issue #36,
 * docs/scale-out.md "Partitions"). The origin, when it knows the task at at_app (passed
 * home: at the transit) and not further on, answers it as settled at a dead appliance:
 * re-routed, or REJECT machine_lost. */
#define NL_XA_REASON_UNSENT 16u

/**
 * Whether a *moved* note of `note_hops` is newer than what the accepting appliance applied
 * (`have_hops`: the task's hops at its hand-over, or in the last note applied). Every
 * hand-over between appliances adds a hop, so along one task's path the notes' hops rise
 * strictly; notes come from different appliances over different links, and one that left
 * before a later move may arrive after that move's note. Serial-number arithmetic over 16
 * bits (RFC 1982): newer when 1..32767 ahead, so a count that wraps still orders.
 * @param note_hops  The note's hops (struct nl_xa_back.hops).
 * @param have_hops  The hops of the location the origin holds.
 * @return true when the note is newer (the task moved on since), false when it is late.
 * @par Context Pure. @par Source docs/scale-out.md "Acknowledgement, retransmission,
 * de-duplication" (issue #36).
 */
static inline bool
nl_xa_moved_newer(uint16_t note_hops, uint16_t have_hops)
{
	return (int16_t)(uint16_t)(note_hops - have_hops) > 0;
}

/**
 * Who should run the subtree of appliance x, an appliance with `failback = no` and standby
 * sb, from the verdicts and the HOLD claims (docs/scale-out.md "Failback or not"): x dead: the
 * verdicts decided (the holder stays); x claims its own subtree: x (a primary that never
 * stopped running it wins); sb live and claiming it: sb; x settling (just started, waiting
 * for sb's word; only x itself knows): the holder stays; else x.
 * @param x          The appliance whose subtree it is.
 * @param x_live     x is live (not declared dead; the caller itself is).
 * @param x_claims   x runs its own subtree by decision (its HOLD of its current incarnation).
 * @param sb         x's standby, or -1.
 * @param sb_live    sb is live.
 * @param sb_claims  sb's HOLD (of its current incarnation) says it runs x's subtree.
 * @param x_settling The caller is x and settles.
 * @param holder     The appliance holding x's subtree in the caller's map now.
 * @return the appliance that should hold it.
 * @par Context Pure. @par Source issue #36.
 */
static inline unsigned int
nl_xa_hold_want(unsigned int x, bool x_live, bool x_claims, int sb, bool sb_live, bool sb_claims,
		bool x_settling, unsigned int holder)
{
	if (!x_live)
		return holder;
	if (x_claims)
		return x;
	if (sb >= 0 && sb_live && sb_claims)
		return (unsigned int)sb;
	return x_settling ? holder : x;
}

/** What a standby does with a client's resend it holds (nl_xa_resend_decide()). */
enum nl_xa_resend_act {
	NL_XA_RESEND_WAIT = 0, /**< hold it on: words may still come, or a sub-task still runs */
	NL_XA_RESEND_RUN,      /**< run it: no word says a sub-task of it ran at the dead one */
	NL_XA_RESEND_ANSWER    /**< answer it COMPLETE from the words (it ran there) */
};

/**
 * A client's resend (SUBMIT flag resend) held at the standby of an appliance that died: run
 * it, answer it from what that appliance's workers said of its sub-tasks (client-origin
 * words), or hold it on (docs/scale-out.md "A client's resend at the standby"). Run only when
 * no word says a sub-task ran and the workers' telling is over; answer when each sub-task said
 * to run has ended and the telling is over, or every sub-task has ended (nothing more to
 * learn), or the wait for a running one's end is over (its end unheard).
 * @param n_split    The task's sub-tasks, 1..64.
 * @param ran        Sub-tasks said running or ended (bit = sub-task; bits >= n_split ignored).
 * @param end        Sub-tasks said ended.
 * @param told_over  The workers of every appliance this one adopted have had their time to
 *                   tell (or the longest hold is over).
 * @param await_over A sub-task said running has been waited for as long as its worker
 *                   resends a DONE (2 minutes).
 * @return the action.
 * @par Context Pure. @par Source issue #36; Slurm's slurmctld, which asks a registering
 * slurmd which jobs it still runs before it requeues them.
 */
static inline enum nl_xa_resend_act
nl_xa_resend_decide(unsigned int n_split, uint64_t ran, uint64_t end, bool told_over,
		    bool await_over)
{
	uint64_t all = n_split >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n_split) - 1;

	ran &= all;
	end &= all;
	if (ran == 0)
		return told_over ? NL_XA_RESEND_RUN : NL_XA_RESEND_WAIT;
	if (end == all || await_over || (told_over && (ran & ~end) == 0))
		return NL_XA_RESEND_ANSWER;
	return NL_XA_RESEND_WAIT;
}

/** One gossip record (nl_gossip_rec of managers/gossip, field for field). */
struct nl_xa_sum {
	uint32_t src;
	uint32_t cores;
	uint32_t free_cores;
	uint32_t mem_mb;
	uint16_t arch;
	uint8_t state;         /**< 0 up, 1 left */
	uint8_t flags;
	double created_s;      /**< finite */
	double lifetime_s;     /**< finite, > 0 */
	uint64_t aux[3];
};

/** One membership update of a SWIM message (struct nl_swim_update, on the wire). */
struct nl_xa_swim_upd {
	uint32_t id;          /**< appliance the update is about (< NL_XA_MAX_APPS) */
	uint32_t incarnation; /**< its SWIM incarnation number (SWIM §4.2) */
	uint32_t from;        /**< suspect: the appliance suspecting it (< NL_XA_MAX_APPS) */
	uint8_t state;        /**< 0 alive, 1 suspect, 2 dead */
};

/** A SWIM message (struct nl_swim_msg; its sender is the message's from_app). On the wire:
 *  n = 1 + n_upd records of NL_XA_SWIM_LEN bytes, the head first: type (1), 3 zero bytes,
 *  target (4), seq (4), 4 zero bytes; then each update: id (4), incarnation (4), from (4),
 *  state (1), 3 zero bytes. No time travels in it (nl_swim.h I1). */
struct nl_xa_swim {
	uint8_t type;         /**< 1 PING, 2 ACK, 3 PING_REQ, 4 NACK, 5 GOSSIP */
	uint8_t n_upd;        /**< updates, 0..NL_XA_SWIM_MAX_UPD (the message's n - 1) */
	uint32_t target;      /**< the appliance probed (< NL_XA_MAX_APPS) */
	uint32_t seq;         /**< the prober's sequence number */
	struct nl_xa_swim_upd upd[NL_XA_SWIM_MAX_UPD];
};

/** HOLD flag: the sender has just started and does not run its own subtree yet: it waits for
 *  its standby's HOLD, which says whether the standby keeps it (`failback = no`). */
#define NL_XA_HOLD_F_SETTLING 0x01u
#define NL_XA_HOLD_F_ALL 0x01u

/** The subtrees an appliance runs now (HOLD, type 21; issue #36, docs/scale-out.md "Failback
 *  or not"). Sent every SWIM period by each appliance of a tree where some appliance has
 *  `failback = no`. On the wire: held (8), flags (1), 7 zero bytes. */
struct nl_xa_hold {
	uint64_t held;         /**< bit a: the sender runs appliance a's configured subtree now
				*   (its own bit: it runs its own) */
	uint8_t flags;         /**< NL_XA_HOLD_F_* */
};

/** A decoded inter-appliance message (host byte order). */
struct nl_xa_msg {
	uint8_t type;          /**< NL_XA_MSG_* */
	uint16_t from_app;     /**< sender's appliance index (< NL_XA_MAX_APPS) */
	uint16_t n;            /**< records, >= 1 */
	uint32_t dgram_seq;    /**< HANDOVER, HANDBACK: the sender's datagram number to this
				*   receiver, != 0 (acknowledged by ACK); SUMMARY, ACK, SWIM: 0 */
	uint64_t incarnation;  /**< sender's start (random, != 0): changes when it restarts */
	union {
		struct nl_xa_task task[NL_XA_MAX_TASKS];
		struct nl_xa_back back[NL_XA_MAX_BACKS];
		struct nl_xa_sum sum[NL_XA_MAX_SUMS];
		uint32_t ack[NL_XA_MAX_ACKS]; /**< ACK: datagram numbers received, != 0 */
		struct nl_xa_swim swim; /**< SWIM: n = 1 + swim.n_upd */
		struct nl_xa_hold hold; /**< HOLD: n = 1 */
	} u;
};

/**
 * Bytes one record takes on the wire.
 * @return NL_XA_TASK_LEN + args rounded up to 8 for HANDOVER; the fixed size otherwise.
 * @par Context Pure.
 */
size_t nl_xa_task_wire_len(const struct nl_xa_task *t);

/**
 * Encode m as a version-1 message (seal it with nl_xa_seal() for version 2).
 *
 * @param m    Message; n records of its type.
 * @param buf  Output, cap bytes.
 * @return length [bytes]; -EINVAL (a field the decoder would refuse); -ENOSPC (cap, or more
 *         than NL_XA_ROOM bytes of records).
 * @par Context Pure. @par Source docs/protocol.md "Between appliances".
 */
int nl_xa_encode(const struct nl_xa_msg *m, void *buf, size_t cap);

/**
 * Decode an inter-appliance message of protocol version `version` (1, or 2 with its trailer,
 * whose MAC the caller checked).
 * @return NL_PROTO_OK, or the drop reason (nl_proto.h): truncated, oversized, bad_magic,
 *         bad_version, bad_type (not 16..21), bad_field (n = 0, from_app / origin_app /
 *         to_mgr out of range, L or args out of bounds, pad or reserved != 0, an unknown
 *         flag, dgram_seq 0 on a HANDOVER / HANDBACK or != 0 on a SUMMARY / ACK / SWIM / HOLD, an
 *         ACK of datagram 0, a NaN or non-positive lifetime, a SWIM type outside 1..5, a
 *         SWIM target / update id / from >= NL_XA_MAX_APPS or state > 2, more than
 *         NL_XA_SWIM_MAX_UPD updates, a HOLD of n != 1 or an unknown HOLD flag, ...).
 * @par Context Pure.
 */
enum nl_proto_err nl_xa_decode(const void *buf, size_t len, unsigned int version,
			       struct nl_xa_msg *out);

/**
 * Seal an encoded message (nl_xa_encode()) exactly as nl_proto_seal() seals the client and
 * worker messages: version byte 2, length including the trailer, sender, seq (max(now_ns,
 * last + 1)), SipHash-2-4 MAC under the site key. Without tx, copies it unchanged (version 1).
 * @param msg, n  Encoded message (header first), NL_PROTO_HDR_LEN <= n <= NL_PROTO_MAX_LEN.
 * @return sealed length; -EINVAL (n out of range, or too long with the trailer); -ENOSPC (cap).
 * @par Context The sender's thread (tx is its own). @par Source docs/protocol.md.
 */
int nl_xa_seal(const void *msg, size_t n, struct nl_auth_tx *tx, uint64_t now_ns, void *buf,
	       size_t cap);

/**
 * Open a received message: without a key, decode version 1; with a key, the MAC
 * (nl_auth_verify), the sender's replay window (nl_replay_check), then the body.
 * @return as nl_xa_decode(), or bad_mac / replay.
 * @par Context The receiver's thread (rp is its replay state).
 */
enum nl_proto_err nl_xa_open(const struct nl_auth_key *key, struct nl_replay *rp, const void *buf,
			     size_t len, uint64_t now_ns, struct nl_xa_msg *out);

/**
 * Whether a SUMMARY record is dated in the future beyond what clock disagreement explains:
 * its created_s (the sender's wall clock) later than the receiver's wall clock plus
 * ahead_max_s. Such a record is refused (counted), never merged: a record from the future
 * would outlive every later one of its source (newer wins) and never expire.
 * @param s            A decoded SUMMARY record.
 * @param now_s        The receiver's CLOCK_REALTIME [s].
 * @param ahead_max_s  Tolerance [s], >= 0 (NL_XA_SUM_AHEAD_MAX_S).
 * @return true when refused.
 * @par Context Pure. @par Source docs/scale-out.md "Membership, summaries, faults" (issue #36).
 */
bool nl_xa_sum_from_future(const struct nl_xa_sum *s, double now_s, double ahead_max_s);

/**
 * Whether the type byte of a datagram is in the scale-out range (16..23). The caller checks
 * len >= 4 first.
 * @par Context Pure.
 */
static inline int
nl_xa_is_xa(const uint8_t *payload)
{
	return payload[3] >= NL_XA_MSG_FIRST && payload[3] <= NL_XA_MSG_LAST;
}

#ifdef __cplusplus
}
#endif
#endif /* NL_XA_PROTO_H */
