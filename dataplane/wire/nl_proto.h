/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The nlevel wire protocol (docs/protocol.md): messages over UDP over IPv4 over Ethernet,
 * network byte order, a version field. Pure C, no DPDK: the appliance, nlevel-worker,
 * nlevel-loadgen, the unit tests and the fuzzer share this parser.
 *
 * Every message starts with an 8-byte header: magic "NL" (0x4e4c), version, type, total
 * length (header included), reserved (0). The parser checks every field against its bounds
 * and returns a reason for the first one that fails; the caller counts and drops.
 */
#ifndef NL_PROTO_H
#define NL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nl_proto_farm.h" /* task-farm messages, types 24..31 */

#ifdef __cplusplus
extern "C" {
#endif

#define NL_PROTO_MAGIC 0x4e4cu   /**< "NL" */
#define NL_PROTO_VERSION 1u      /**< unauthenticated (an appliance started without --key) */
#define NL_PROTO_VERSION_AUTH 2u /**< version 1 + authentication trailer (--key) */
#define NL_PROTO_PORT 7477u      /**< default UDP port of the appliance */
#define NL_PROTO_HDR_LEN 8u
#define NL_PROTO_MAX_ARGS 64u    /**< bytes of command arguments in SUBMIT / DISPATCH */
#define NL_PROTO_MAX_MACH 24u    /**< machines per HELLO / LOAD (fits NL_PROTO_MAX_LEN) */
#define NL_PROTO_MAX_SPLIT 64u   /**< L (= NL_TASK_MAX_SPLIT) */
#define NL_PROTO_MAX_RES 64u     /**< N */
#define NL_PROTO_MAX_LEN 1400u   /**< largest message [bytes]; fits one 1500-byte frame */

/** Message types. */
enum nl_msg_type {
	NL_MSG_SUBMIT = 1,   /**< client -> appliance: a task */
	NL_MSG_ACCEPT = 2,   /**< appliance -> client: admitted */
	NL_MSG_REJECT = 3,   /**< appliance -> client: refused (reason) */
	NL_MSG_COMPLETE = 4, /**< appliance -> client: all L sub-tasks done (or failed) */
	NL_MSG_DISPATCH = 5, /**< appliance -> worker: one sub-task */
	NL_MSG_DONE = 6,     /**< worker -> appliance: one sub-task finished */
	NL_MSG_LOAD = 7,     /**< worker -> appliance: load report */
	NL_MSG_HELLO = 8,    /**< worker -> appliance: join (reply: slot ids) */
	NL_MSG_BYE = 9,      /**< worker -> appliance: leave */
	NL_MSG_TYPE_MAX
};

/** Why a frame was dropped (counters per reason). */
enum nl_proto_err {
	NL_PROTO_OK = 0,
	NL_PROTO_E_TRUNC,    /**< shorter than its header / fixed part / length field */
	NL_PROTO_E_OVERSIZE, /**< longer than NL_PROTO_MAX_LEN or than its declared content */
	NL_PROTO_E_MAGIC,    /**< not "NL" */
	NL_PROTO_E_VERSION,  /**< unknown version */
	NL_PROTO_E_TYPE,     /**< unknown type, or a type this end does not accept */
	NL_PROTO_E_FIELD,    /**< a field out of its bounds */
	NL_PROTO_E_ETH,      /**< Ethernet: not IPv4, or too short */
	NL_PROTO_E_IP,       /**< IPv4 header bad (version, IHL, length, fragment, checksum) */
	NL_PROTO_E_UDP,      /**< not UDP, or UDP length bad */
	NL_PROTO_E_PORT,     /**< UDP destination port not ours */
	NL_PROTO_E_MAC,      /**< keyed end: no MAC (version 1), or the MAC does not verify */
	NL_PROTO_E_REPLAY,   /**< keyed end: sequence number seen, too old, or off the clock */
	NL_PROTO_E_ADDR,     /**< IPv4 destination not ours (a frame for another host that a
			      *   switch flooded to our promiscuous port; port mode) */
	NL_PROTO_E_MAX
};

struct nl_msg_submit {
	uint64_t task_id;
	uint64_t need;        /**< Delta, bit k = resource k+1 */
	uint64_t instr;       /**< I [instr] */
	uint64_t data_bits;   /**< D [bit] */
	uint64_t client_ts_ns; /**< echoed in ACCEPT / REJECT / COMPLETE */
	uint16_t n_split;     /**< L, 1..NL_PROTO_MAX_SPLIT */
	uint16_t cmd_id;      /**< task-farm command id (0 = emulated work) */
	uint8_t args_len;     /**< <= NL_PROTO_MAX_ARGS */
	uint8_t args[NL_PROTO_MAX_ARGS];
	uint8_t flags;        /**< NL_SUBMIT_F_*; version 2 (sealed) only: 0 in version 1 */
};

/** SUBMIT flag: if the task is handed to an appliance of a split tree that is then declared
 * gone, route it again through a live part of the tree instead of REJECT machine_lost
 * (docs/scale-out.md "Faults"). */
#define NL_SUBMIT_F_REROUTE 0x01u
/** SUBMIT flag (issue #36, both versions): a client's resend at a failover to its appliance's
 * standby (nlevel-loadgen --standby). The standby holds such a task until the workers of the
 * appliance it adopted have said whether it ran there (client-origin words, NL_ORIGIN_CLIENT),
 * and answers it from their words instead of running it twice (docs/scale-out.md "A client's
 * resend at the standby"). */
#define NL_SUBMIT_F_RESEND 0x02u
#define NL_SUBMIT_F_ALL 0x03u
#define NL_SUBMIT_F_V1 NL_SUBMIT_F_RESEND /**< the flags a version-1 SUBMIT may carry */

/** REJECT reason 9 (issue #34): the appliance is stopping (drain on stop). A new SUBMIT or
 * FSUBMIT during the drain, a task accepted and not dispatched yet, and one still running at
 * the drain's end are answered so: not run (or not to its end), to be submitted again.
 * Reasons 1..5 are enum nl_reject_reason (managers/nl_task.h); 7 no_handle and 8 cancelled
 * the task farm's (dataplane/port/nl_dp_farm.h); docs/protocol.md lists them all. */
#define NL_REJECT_SHUTDOWN 9u

struct nl_msg_reply {        /**< ACCEPT, REJECT, COMPLETE */
	uint64_t task_id;
	uint64_t client_ts_ns;
	uint16_t reason;      /**< REJECT: enum nl_reject_reason; COMPLETE: 0 ok, else why failed */
	uint16_t n_done;      /**< COMPLETE: sub-tasks done */
	int32_t status;       /**< COMPLETE: first non-zero exit status of a sub-task, else 0 */
	uint32_t resp_us;     /**< COMPLETE: appliance-measured response [us] */
};

struct nl_msg_dispatch {
	uint64_t task_id;
	uint64_t instr;       /**< of this sub-task [instr] */
	uint64_t data_bits;   /**< of this sub-task [bit] */
	uint32_t mach;        /**< worker-local machine index */
	uint32_t token;       /**< appliance's handle, echoed in DONE */
	uint16_t sub;         /**< sub-task index < n_split */
	uint16_t n_split;
	uint16_t cmd_id;
	uint8_t args_len;
	uint8_t attempt;      /**< #34: the submitter's attempt of the task (FSUBMIT's), 0 = not
			       *   given; with task_id and sub it names one run, which a worker
			       *   answers from its own record when it is sent again */
	uint8_t args[NL_PROTO_MAX_ARGS];
	uint32_t principal;   /**< version 2 only (after args; 0 in version 1): the submitter's
			       *   principal id (nl_principal_id()), 0 = the site key's holder;
			       *   the worker's per-principal command policy reads it (#35) */
	uint32_t time_limit_ms; /**< the task's wall-clock limit [ms], 0 = none (issue #33):
				 *   4 bytes after the principal (version 1: after the args),
				 *   present on the wire only when not 0 */
	/* issue #36, the origin block (16 bytes after the time limit, present only when
	 * has_origin): the task came from another appliance (a HANDOVER); a worker whose
	 * appliance dies tells the origin what became of the sub-task (struct nl_msg_done relay):
	 * through the standby it fails over to, or straight to the origin's address, so the
	 * origin asks the worker before it answers REJECT machine_lost (docs/scale-out.md "Asked
	 * before machine_lost") */
	uint8_t has_origin;
	uint16_t origin_app;  /**< the appliance that accepted the task (config index) */
	uint16_t origin_port; /**< its UDP port (host order) */
	uint32_t origin_ip;   /**< its IPv4 address (network order) */
	uint32_t origin_token; /**< its handle (HANDOVER's origin_token) */
	uint32_t origin_seq;  /**< its hand-over sequence (HANDOVER's origin_seq) */
};

/** Origin block, origin_app bit 15 (issue #36): the task is the DISPATCHing appliance's own,
 * from a client (origin_app & 0x7fff, that appliance); origin_ip and origin_port are 0 (a
 * worker tells nobody straight), origin_token is the client's IPv4 address (host order) and
 * origin_seq its UDP port (never 0). A worker that fails over tells the standby what became of
 * such a sub-task as of any other (relayed DONE, the same three fields), and the standby keeps
 * the word for the client's resend (NL_SUBMIT_F_RESEND). Sent only by an appliance that has a
 * standby (docs/scale-out.md "A client's resend at the standby"). */
#define NL_ORIGIN_CLIENT 0x8000u

/** DONE relay kinds (struct nl_msg_done relay, issue #36): a worker's word, to its dead
 * appliance's standby, of a sub-task that appliance DISPATCHed for another one (the origin). */
enum nl_done_relay {
	NL_RELAY_NONE = 0,      /**< a plain DONE, to the appliance that DISPATCHed it */
	NL_RELAY_ENDED = 1,     /**< it ran and ended: status, state and times are its end's */
	NL_RELAY_RUNNING = 2,   /**< it runs (not an end: its ENDED follows) */
	NL_RELAY_WITHDRAWN = 3, /**< it never started and never will (withdrawn at the failover) */
	NL_RELAY_MAX
};

/** How a sub-task ended (DONE's state, issue #33). */
enum nl_done_state {
	NL_DONE_EXITED = 0,    /**< the command exited (or was killed by a signal not ours) */
	NL_DONE_TIMEOUT = 1,   /**< killed at its wall-clock limit */
	NL_DONE_CANCELLED = 2, /**< killed or withdrawn by a KILL */
	NL_DONE_NOSTART = 3,   /**< could not start (exec, cgroup, refused) */
	NL_DONE_OOM = 4,       /**< killed at its memory limit */
	NL_DONE_STATE_MAX
};

struct nl_msg_done {
	uint64_t task_id;
	uint32_t mach;
	uint32_t token;
	uint16_t sub;
	int32_t status;       /**< exit status (0 = success; emulated work: 0) */
	/* issue #33, 20 bytes after status, present on the wire only when one is not 0: */
	uint8_t state;        /**< enum nl_done_state */
	uint32_t run_ms;      /**< the command's run time on the worker (start to end) [ms] */
	uint32_t queue_ms;    /**< time queued on the worker before its start [ms] */
	uint32_t cpu_ms;      /**< CPU time, user + system, of its cgroup / process tree [ms] */
	uint32_t mem_peak_kib; /**< peak memory of its cgroup (else ru_maxrss) [KiB] */
	/* issue #36, the relay block (12 bytes after the #33 fields, present only when relay
	 * != 0): origin_app (2), relay (1), 0 (1), origin_token (4), origin_seq (4), as the
	 * DISPATCH's origin block gave them. Sent by a worker that failed over, to the standby,
	 * for a sub-task its dead appliance DISPATCHed; the standby acknowledges it (DONE_ACK)
	 * and tells the origin (docs/protocol.md "Relayed DONE") */
	uint8_t relay;        /**< enum nl_done_relay */
	uint16_t origin_app;
	uint32_t origin_token;
	uint32_t origin_seq;
};

struct nl_msg_mach {
	uint64_t speed_ips;   /**< W_i */
	uint64_t link_bps;    /**< T_i */
	uint64_t res_set;     /**< Gamma_i bits held */
	uint64_t res_any;     /**< Gamma_i '*' bits */
	uint32_t slot;        /**< appliance machine id (HELLO reply), else 0 */
	uint32_t n_sub;       /**< LOAD: sub-tasks queued or running */
	uint64_t backlog_ns;  /**< LOAD: time to drain its queue [ns] */
};

struct nl_msg_hello {        /**< HELLO, LOAD */
	uint32_t worker_id;
	uint16_t n_mach;      /**< 1..NL_PROTO_MAX_MACH */
	uint16_t flags;       /**< HELLO: NL_HELLO_F_REPLY (and NL_HELLO_F_REJOIN) from the appliance */
	struct nl_msg_mach mach[NL_PROTO_MAX_MACH];
};

#define NL_HELLO_F_REPLY 0x1u
/** HELLO reply flag (issue #36, with NL_HELLO_F_REPLY only): the appliance does not know the
 * worker that sent this LOAD (it restarted, or timed the worker out): join again (HELLO).
 * The reply's machine entries carry no slot (UINT32_MAX). */
#define NL_HELLO_F_REJOIN 0x2u
/** HELLO flag of a worker (issue #36, never on a reply): its appliance has been silent for
 * --failover-s and it asks the other appliance (its standby) for slots. A standby that has
 * just adopted the silent appliance's subtree gives that subtree's slots only to such HELLOs
 * for a grace period, so that the dead appliance's own workers, which must fail over to tell
 * what became of its sub-tasks, find them free (docs/scale-out.md "Standby"). */
#define NL_HELLO_F_FAILOVER 0x4u
/** HELLO reply flag (issue #36, with NL_HELLO_F_REPLY only): this HELLO made the worker known
 * here (it was not). A worker that was joined already learns so that the appliance restarted
 * (or timed it out) even when its HELLO reached the new life before a LOAD (which is answered
 * NL_HELLO_F_REJOIN), and tells the new life what its previous one DISPATCHed. */
#define NL_HELLO_F_NEW 0x8u

struct nl_msg_bye {
	uint32_t worker_id;
};

/** A decoded message (host byte order). */
struct nl_msg {
	uint8_t type;
	union {
		struct nl_msg_submit submit;
		struct nl_msg_reply reply;
		struct nl_msg_dispatch dispatch;
		struct nl_msg_done done;
		struct nl_msg_hello hello;
		struct nl_msg_bye bye;
		union nl_msg_farm farm; /* types 24..31: nl_proto_farm.h */
	} u;
};

/**
 * Decode one message payload (the UDP payload).
 *
 * @param buf  Payload.
 * @param len  Its length [bytes].
 * @param out  Output, valid when 0 is returned.
 * @return NL_PROTO_OK (0) or the enum nl_proto_err of the first check that failed.
 * @par Context  Pure; any thread; no allocation. Reads at most len bytes of buf.
 */
enum nl_proto_err nl_proto_decode(const void *buf, size_t len, struct nl_msg *out);

/**
 * Encode one message.
 *
 * @param m    Message (its fields are checked as the decoder checks them).
 * @param buf  Output buffer.
 * @param cap  Its size [bytes].
 * @return bytes written; -EINVAL when a field is out of bounds; -ENOSPC when cap is short.
 * @par Context  Pure; any thread; no allocation.
 */
int nl_proto_encode(const struct nl_msg *m, void *buf, size_t cap);

/** Addresses of a UDP/IPv4/Ethernet frame (network byte order for ip/port fields). */
struct nl_frame_addr {
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	uint32_t src_ip;   /**< network byte order */
	uint32_t dst_ip;   /**< network byte order */
	uint16_t src_port; /**< host byte order */
	uint16_t dst_port; /**< host byte order */
};

/**
 * Check an Ethernet frame and find its UDP payload.
 *
 * @param frame     Frame bytes (Ethernet header first).
 * @param len       Frame length [bytes].
 * @param port      Our UDP port (host order); 0 = any.
 * @param addr      Output addresses.
 * @param payload   Output: payload start inside frame.
 * @param plen      Output: payload length [bytes].
 * @return NL_PROTO_OK or NL_PROTO_E_ETH / E_IP / E_UDP / E_PORT / E_TRUNC.
 * @par Context  Pure; any thread.
 */
enum nl_proto_err nl_frame_parse(const uint8_t *frame, size_t len, uint16_t port,
				 struct nl_frame_addr *addr, const uint8_t **payload,
				 size_t *plen);

/**
 * Write Ethernet + IPv4 + UDP headers (42 bytes) in front of a payload of plen bytes.
 *
 * @param frame  Output, at least 42 + plen bytes; the payload must already be at frame + 42.
 * @param addr   Addresses (as nl_frame_parse() returns them).
 * @param plen   Payload length [bytes], <= NL_PROTO_MAX_LEN.
 * @return frame length; -EINVAL when plen is too large.
 * @par Context  Pure; any thread.
 */
int nl_frame_build(uint8_t *frame, const struct nl_frame_addr *addr, size_t plen);

#define NL_FRAME_HDR_LEN 42u /**< Ethernet 14 + IPv4 20 + UDP 8 */

/** Printable name of a drop reason. @par Context Pure. */
const char *nl_proto_err_name(enum nl_proto_err e);

/** Printable name of a message type ("?" when unknown). @par Context Pure. */
const char *nl_msg_type_name(unsigned int type);

struct sockaddr_in;

/**
 * Parse an appliance address "A.B.C.D[:PORT]" for the plain-socket tools.
 *
 * @param s  NUL-terminated text; PORT 1..65535, NL_PROTO_PORT when absent.
 * @param a  Output IPv4 socket address (network byte order).
 * @return 0; -EINVAL for a bad address, a bad port or text over 63 characters.
 * @par Context  Pure.
 */
int nl_proto_parse_addr(const char *s, struct sockaddr_in *a);

/* ---- Authentication (protocol version 2, docs/protocol.md "Authentication") ---- */

#define NL_AUTH_KEY_LEN 16u      /**< SipHash-2-4 key [bytes], derived from the site key file */
#define NL_AUTH_TAG_LEN 16u      /**< MAC [bytes] (SipHash-2-4, 128-bit output) */
#define NL_AUTH_TRAILER_LEN 32u  /**< sender (8) + seq (8) + MAC (16), after the body */
/** Frames remembered per sender: the NL_REPLAY_DEPTH highest seqs accepted (a power of 2). A
 * frame that arrives after later ones of its sender is accepted while it is above the lowest
 * of them (or, before a sender had so many, above the owner's floor), whatever the time
 * between them: a reorder depth in frames, not in sequence numbers (seq is a clock in ns). */
#define NL_REPLAY_DEPTH 64u
#define NL_REPLAY_SKEW_NS 60000000000ull /**< clock tolerance: seq within +-60 s of now */

/** The MAC key (secret). */
struct nl_auth_key {
	uint8_t k[NL_AUTH_KEY_LEN];
};

/** One sender's sealing state: the key, its random sender id, its last sequence number. */
struct nl_auth_tx {
	struct nl_auth_key key;
	uint64_t sender;   /**< random, != 0, fixed for the process's life */
	uint64_t seq;      /**< last sequence number sent (ns of CLOCK_REALTIME, or last + 1) */
};

/**
 * Load the site key file, like MUNGE's: refused unless a regular file whose permissions give
 * nothing to group or others (mode & 077 == 0), holding 32..4096 bytes of any content. The
 * MAC key is BLAKE2b-128 of a domain label and the file's bytes.
 *
 * A symbolic link as path's last component is not followed: it is refused ("is a symbolic
 * link; give the key file itself"), so the mode checked is the key file's own. The file is
 * opened non-blocking, so a FIFO or a device is refused at once instead of waiting for a
 * writer.
 *
 * @param path    Key file.
 * @param key     Output key.
 * @param err     Output: a one-line error naming the file and the fix; may be NULL.
 * @param errlen  Size of err [bytes].
 * @return 0; -errno of open(), fstat() or read() (-ELOOP for a symbolic link); -EPERM when
 *         the permissions are too wide; -EINVAL for a file that is not regular (directory,
 *         FIFO, device, socket) or has the wrong size; -EIO when libsodium cannot start.
 * @par Context  Any thread; reads the file, never blocks on it; no allocation.
 * @par Source  MUNGE key file rules (munged(8)); libsodium crypto_generichash (BLAKE2b, RFC 7693).
 */
int nl_auth_key_load(const char *path, struct nl_auth_key *key, char *err, size_t errlen);

/**
 * Start a sender: copy the key and draw a random non-zero sender id (libsodium randombytes).
 *
 * @param tx   Output sealing state.
 * @param key  Key.
 * @par Context  Any thread; one nl_auth_tx per sending thread (its sequence is not shared).
 */
void nl_auth_tx_init(struct nl_auth_tx *tx, const struct nl_auth_key *key);

/**
 * Encode one message as protocol version 2: the version-1 body, then sender, seq and a
 * SipHash-2-4-128 MAC over everything before the MAC (header included). seq =
 * max(now_ns, last seq + 1), so it is strictly increasing and close to the sender's clock.
 *
 * @param m       Message (checked as nl_proto_encode() checks it).
 * @param tx      Sealing state (seq advanced); NULL: plain nl_proto_encode() (version 1).
 * @param now_ns  CLOCK_REALTIME [ns].
 * @param buf     Output.
 * @param cap     Its size [bytes].
 * @return bytes written; -EINVAL for a bad field; -ENOSPC when cap is short.
 * @par Context  Pure but for tx; the thread that owns tx.
 * @par Source  SipHash: Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012
 *              (libsodium crypto_shorthash_siphashx24).
 */
int nl_proto_seal(const struct nl_msg *m, struct nl_auth_tx *tx, uint64_t now_ns, void *buf,
		  size_t cap);

/**
 * nl_proto_seal() under another key than tx's: the sender id and sequence are tx's (advanced),
 * the MAC is computed under `key`. How an appliance seals each reply for its recipient (the
 * principal's key) with its one sender id and one strictly increasing sequence.
 *
 * @param m    Message. @param tx  Sealing state (sender, seq); NULL: version 1.
 * @param key  MAC key (not NULL when tx is not NULL).
 * @param now_ns, buf, cap  As nl_proto_seal().
 * @return bytes written; -EINVAL; -ENOSPC.
 * @par Context  Pure but for tx; the thread that owns tx.
 */
int nl_proto_seal_with(const struct nl_msg *m, struct nl_auth_tx *tx,
		       const struct nl_auth_key *key, uint64_t now_ns, void *buf, size_t cap);

/**
 * Check a version-2 message's MAC (constant-time compare) and read its sender and seq. Does
 * not look at the body: call nl_replay_check(), then nl_proto_decode_sealed().
 *
 * @param key     Key.
 * @param buf     Message (UDP payload).
 * @param len     Its length [bytes].
 * @param sender  Output sender id (valid on NL_PROTO_OK).
 * @param seq     Output sequence number (valid on NL_PROTO_OK).
 * @return NL_PROTO_OK; NL_PROTO_E_MAC for a version-1 message, a length field that is not len,
 *         or a MAC that does not verify; E_TRUNC / E_OVERSIZE / E_MAGIC / E_VERSION.
 * @par Context  Pure; any thread.
 */
enum nl_proto_err nl_auth_verify(const struct nl_auth_key *key, const void *buf, size_t len,
				 uint64_t *sender, uint64_t *seq);

/**
 * Decode a version-2 message (the trailer is skipped, not verified: nl_auth_verify() first).
 * Same checks and results as nl_proto_decode() otherwise.
 *
 * @par Context  Pure; any thread.
 */
enum nl_proto_err nl_proto_decode_sealed(const void *buf, size_t len, struct nl_msg *out);

struct nl_replay_ent;
struct nl_replay_own;

#define NL_REPLAY_MAX_OWNERS 4096u     /**< owners (principals + the site key's holders) */
#define NL_REPLAY_MAX_SENDERS (1u << 24) /**< senders remembered, all owners together */

/**
 * Anti-replay state of one receiver (docs/protocol.md "Replay window"): per sender the highest
 * seq and a window bitmap; senders grouped by owner (a principal, or the site key's holders),
 * each owner with a bound of its own on the senders it holds (nl_replay.c, invariants I1-I3).
 */
struct nl_replay {
	struct nl_replay_ent *ent;  /**< [n_ent], owner o's in [own[o].base, + its cap) */
	struct nl_replay_own *own;  /**< [n_own] */
	uint32_t *idx;              /**< open-addressing index: entry + 1, 0 = empty */
	unsigned int idx_mask;
	unsigned int n_ent, n_own;
	unsigned int def_own;       /**< the owner of nl_replay_check() */
	uint64_t skew_ns;           /**< clock tolerance (NL_REPLAY_SKEW_NS) */
	uint64_t evicted;           /**< senders forgotten to make room, all owners */
};

/**
 * Allocate the replay state for `senders` senders of one owner (a client's or a worker's
 * window for the appliance; an appliance without --principals).
 *
 * @return 0; -EINVAL (senders < 1 or > NL_REPLAY_MAX_SENDERS); -ENOMEM.
 * @par Context  Any thread; allocates.
 */
int nl_replay_init(struct nl_replay *rp, unsigned int senders);

/**
 * Allocate the replay state of n_own owners: owner o holds at most cap[o] senders at once; a
 * new sender of a full owner replaces that owner's least recently accepted sender, never
 * another owner's (I1), and raises the owner's floor to the forgotten sender's highest seq
 * (a new sender's first seq must be above the floor, I2).
 *
 * @param rp       Output (zeroed first; nl_replay_free() after an error is allowed).
 * @param n_own    Owners, 1..NL_REPLAY_MAX_OWNERS.
 * @param cap      [n_own] senders per owner, each >= 1; sum <= NL_REPLAY_MAX_SENDERS.
 * @param def_own  Owner of nl_replay_check() (< n_own).
 * @return 0; -EINVAL; -ENOMEM.
 * @par Context  Any thread; allocates (the entries' pages are touched as senders arrive).
 */
int nl_replay_init_owners(struct nl_replay *rp, unsigned int n_own, const uint32_t *cap,
			  unsigned int def_own);

/** Free the replay state (NULL parts accepted). @par Context The owner's thread. */
void nl_replay_free(struct nl_replay *rp);

/**
 * Accept (and remember) or refuse one authenticated frame's (sender, seq) for owner `own`:
 * refused when seq is more than NL_REPLAY_SKEW_NS away from now_ns; for a sender the owner
 * holds, when it is one of the NL_REPLAY_DEPTH highest seqs accepted from it, or at or below
 * its low-water mark (the highest seq it was accepted with that is no longer among those, or
 * the owner's floor when the sender was entered); for a sender it does not hold, when seq is
 * at or below the owner's floor. Every seq accepted from a sender is refused from then on.
 * Call only for a frame whose MAC verified and whose sender may send it (only an authorised
 * sender creates state).
 *
 * @param rp      Replay state.
 * @param own     Owner (< n_own; else refused).
 * @param sender  Sender id from nl_auth_verify() (0 refused).
 * @param seq     Its sequence number.
 * @param now_ns  Receiver's CLOCK_REALTIME [ns].
 * @return NL_PROTO_OK or NL_PROTO_E_REPLAY.
 * @par Context  Single-threaded (_st): the receiving thread. A hash probe; a frame in order
 *               is O(1), one that arrives after later ones scans at most NL_REPLAY_DEPTH seqs.
 * @par Source  RFC 4303 section 3.4.3 (anti-replay window), kept as the highest seqs accepted
 *              because seq is a clock (docs/protocol.md "Replay window").
 */
enum nl_proto_err nl_replay_check_own(struct nl_replay *rp, unsigned int own, uint64_t sender,
				      uint64_t seq, uint64_t now_ns);

/**
 * nl_replay_check_own() for the default owner (rp->def_own).
 * @par Context  Single-threaded (_st): the receiving thread.
 */
enum nl_proto_err nl_replay_check(struct nl_replay *rp, uint64_t sender, uint64_t seq,
				  uint64_t now_ns);

/** Senders owner `own` has had to forget to make room (0 for an unknown owner). @par Context Pure. */
uint64_t nl_replay_evicted(const struct nl_replay *rp, unsigned int own);

/**
 * Receive one message: with a key, nl_auth_verify(), nl_proto_decode_sealed() and
 * nl_replay_check() in that order (only authentic frames are decoded, and only authentic,
 * well-formed ones touch the replay state); without (key NULL), nl_proto_decode() (version 1
 * only).
 *
 * @param key     Key, or NULL (unauthenticated end).
 * @param rp      Replay state (unused when key is NULL).
 * @param buf     Message (UDP payload).
 * @param len     Its length [bytes].
 * @param now_ns  CLOCK_REALTIME [ns] (nl_auth_now_ns()).
 * @param out     Output message.
 * @return NL_PROTO_OK or the reason to count and drop (E_MAC, E_REPLAY, or a decode reason).
 * @par Context  The thread that owns rp.
 */
enum nl_proto_err nl_proto_open(const struct nl_auth_key *key, struct nl_replay *rp,
				const void *buf, size_t len, uint64_t now_ns, struct nl_msg *out);

/** CLOCK_REALTIME [ns], the clock of sequence numbers. @par Context Any thread. */
uint64_t nl_auth_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif /* NL_PROTO_H */
