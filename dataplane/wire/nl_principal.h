/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Principals (docs/security.md): named submitters and workers, each with a key of its own,
 * derived from the site key (or read from a key file of its own), and the limits the
 * appliance applies to it (fair-share weight, tasks in flight, accepted rate; for a worker,
 * the machine slots it may claim and the worker id it must use).
 *
 * A principal signs its frames with its own key and puts its principal id in the high 32 bits
 * of the trailer's sender id (the low 32 bits are random per process, so two processes of one
 * principal keep separate replay windows). The principal id is a hash of the name, so a
 * client needs only its name and its key file. Pure C, no DPDK (libsodium).
 */
#ifndef NL_PRINCIPAL_H
#define NL_PRINCIPAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nl_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NL_PRINCIPAL_MAX 255u      /**< principals per appliance */
#define NL_PRINCIPAL_NAME_MAX 32u  /**< bytes of a name: [A-Za-z0-9._-], 1..32 */
#define NL_PRINCIPAL_MAX_SLOTS 4096u /**< machine slots a worker principal may be given */
#define NL_PRINCIPAL_DERIVED_LEN 32u /**< bytes of a derived principal key file */
#define NL_PRINCIPAL_NONE UINT32_MAX /**< not a principal (the site key's holder) */

#define NL_PRINCIPAL_SENDERS_DEF 1024u /**< senders (processes) remembered per principal */
#define NL_PRINCIPAL_SITE_SENDERS_DEF 4096u /**< ... for the site key's holders */

/** A sender's roles (bit set): what it may send is decided by these and the message type
 *  alone (nl_principal_may_send(), the table of docs/security.md "Rights"). */
enum nl_principal_kind {
	NL_PRINCIPAL_SUBMITTER = 1u, /**< [submitter NAME]: submits and follows its tasks */
	NL_PRINCIPAL_WORKER = 2u,    /**< [worker NAME]: joins with machines, runs sub-tasks */
	NL_PRINCIPAL_OPERATOR = 4u,  /**< the site key's holder ([admission] site_key = operator) */
};

/** One principal, as configured. */
struct nl_principal {
	char name[NL_PRINCIPAL_NAME_MAX + 1];
	uint32_t id;                /**< nl_principal_id(name) */
	unsigned int kind;          /**< enum nl_principal_kind bits */
	struct nl_auth_key key;     /**< its MAC key */
	unsigned int line;          /**< line of its section in the file */
	/* submitter */
	uint32_t weight;            /**< fair-share weight (DRR quantum) 1..1000; default 1 */
	uint32_t max_in_flight;     /**< tasks held (queued + accepted, not ended); 0 = no cap */
	double max_rate_tps;        /**< accepted tasks per second (token bucket); 0 = no cap */
	double burst;               /**< token bucket depth [tasks]; default max(1, rate / 10) */
	uint32_t queue;             /**< fair-queue depth [tasks] (default [admission] queue) */
	uint32_t senders;           /**< senders (processes) its replay state holds at once
				     *   (default [admission] senders) */
	/* worker */
	bool has_worker_id;
	uint32_t worker_id;         /**< HELLO / LOAD / BYE must carry this id when set */
	uint64_t slots[NL_PRINCIPAL_MAX_SLOTS / 64]; /**< machine slots it may claim */
};

/** The principals file (nl_principals_load()). */
struct nl_principals {
	struct nl_principal p[NL_PRINCIPAL_MAX];
	unsigned int n;
	uint32_t max_in_flight;     /**< [admission] max_in_flight: tasks held by the appliance
				     *   before SUBMITs wait in the fair queues; 0 = the pool */
	uint32_t queue;             /**< [admission] queue: default fair-queue depth (64) */
	bool site_key_ok;           /**< [admission] site_key = operator | refuse */
	uint32_t senders;           /**< [admission] senders: default per principal */
	uint32_t site_senders;      /**< [admission] site_senders: the site key's holders' */
	uint32_t reserve;           /**< [admission] reserve: tasks in flight kept free for
				     *   principals without work (docs/security.md) */
	bool has_reserve;           /**< reserve given (else 1/8 of the admission limit) */
	uint16_t tab[1024];         /**< id -> index + 1, open addressing (0 = empty) */
};

/**
 * The principal id of a name: the first 32 bits (big-endian) of BLAKE2b-128 of a domain label
 * and the name; never 0.
 * @param name  NUL-terminated name. @return the id. @par Context Pure; any thread.
 * @par Source  libsodium crypto_generichash (BLAKE2b, RFC 7693).
 */
uint32_t nl_principal_id(const char *name);

/**
 * Whether a name is valid: 1..NL_PRINCIPAL_NAME_MAX bytes of [A-Za-z0-9._-].
 * @par Context Pure.
 */
bool nl_principal_name_ok(const char *name);

/**
 * Derive a principal's key file content from the site key: BLAKE2b-256 keyed with the site's
 * MAC key over a domain label and the name (one key per name, whatever its rights). Loading
 * those 32 bytes as a key file (nl_auth_key_load()) gives the principal's MAC key.
 *
 * @param site  Site MAC key (nl_auth_key_load() of the site key file).
 * @param name  Principal name (nl_principal_name_ok()).
 * @param out   Output, NL_PRINCIPAL_DERIVED_LEN bytes (secret).
 * @return 0; -EINVAL for a bad name; -EIO when libsodium cannot start.
 * @par Context Pure; any thread.
 * @par Source  keyed BLAKE2b as a KDF (libsodium crypto_kdf's construction, RFC 7693).
 */
int nl_principal_derive(const struct nl_auth_key *site, const char *name,
			uint8_t out[NL_PRINCIPAL_DERIVED_LEN]);

/**
 * The MAC key of key-file bytes (what nl_auth_key_load() computes from a file).
 * @param raw  Key bytes. @param n  Their count (32..4096). @param key  Output.
 * @return 0; -EINVAL for a bad size. @par Context Pure.
 */
int nl_auth_key_from_bytes(const uint8_t *raw, size_t n, struct nl_auth_key *key);

/**
 * Start a principal's sender: as nl_auth_tx_init(), but the sender id carries the principal id
 * in its high 32 bits (low 32 bits random, non-zero).
 * @param tx  Output. @param key  The principal's key. @param name  Its name.
 * @par Context Any thread.
 */
void nl_auth_tx_init_principal(struct nl_auth_tx *tx, const struct nl_auth_key *key,
			       const char *name);

/**
 * Load a principals file (docs/security.md). Sections `[submitter NAME]` and `[worker NAME]`
 * (a name may have both), keys weight, max_in_flight, max_rate, burst, queue (submitter),
 * slots, worker_id (worker), key_file and senders (either: a key list entry instead of the
 * derived key; the senders its replay state holds); section `[admission]` with
 * max_in_flight, reserve, queue, senders, site_senders, site_key. Lines `;` or `#` are
 * comments.
 *
 * @param ps       Output (zeroed first).
 * @param path     File.
 * @param site     Site MAC key (derivation).
 * @param n_slots  Machine slots of the appliance (slot numbers must be below it).
 * @param err      Output "FILE:LINE: what" on error; may be NULL.
 * @param errlen   Size of err.
 * @return 0; -errno of fopen(); -EINVAL for bad content (err says where).
 * @par Context Any thread; reads files.
 */
int nl_principals_load(struct nl_principals *ps, const char *path, const struct nl_auth_key *site,
		       unsigned int n_slots, char *err, size_t errlen);

/**
 * Index of the principal whose id is the high 32 bits of sender.
 * @return index < ps->n, or -1. @par Context Pure; a hash probe (about 10 ns).
 */
int nl_principals_find(const struct nl_principals *ps, uint64_t sender);

/**
 * The rights table (docs/security.md "Rights"): whether a sender with roles `kind` may send a
 * message of type `type` to an appliance. Decided by the roles and the type alone, never by a
 * field of the message; a principal with several roles has the rights of each. Types the
 * appliance only sends (ACCEPT, DISPATCH, REGISTERED, ...) and unknown types: nobody.
 * @param kind  enum nl_principal_kind bits. @param type  Message type (header byte 3).
 * @return true when allowed. @par Context Pure; a table look-up.
 */
bool nl_principal_may_send(unsigned int kind, unsigned int type);

/** The roles of principal index `who` (ps->n = the site key's holder). @par Context Pure. */
unsigned int nl_principals_kind(const struct nl_principals *ps, unsigned int who);

/**
 * Set up the appliance's replay state for ps: one owner per principal (owner i = principal i,
 * its `senders` bound) and one for the site key's holders (owner ps->n, site_senders), which
 * is also the owner of nl_replay_check() (the scale-out layer's peers).
 * @return 0; -EINVAL; -ENOMEM. @par Context Any thread; allocates.
 */
int nl_principals_replay_init(const struct nl_principals *ps, struct nl_replay *rp);

/** What nl_principals_open() decided about a frame. */
enum nl_rx_verdict {
	NL_RX_ACCEPT = 0, /**< authentic, well-formed, its sender may send its type, fresh */
	NL_RX_DROP,       /**< not authentic, malformed, or a replay: count *why, drop */
	NL_RX_DENIED,     /**< authentic and well-formed, but its sender's roles may not send
			   *   this type: count `denied`, drop; no replay state was created */
};

/**
 * Receive one version-2 frame at an appliance with principals: the MAC under the key of the
 * principal its sender id names (the site key when it names none; refused as E_MAC with
 * site_key = refuse), the body, the rights table (nl_principal_may_send()), then the replay
 * window of the sender's principal (nl_replay_check_own()): only an authorised sender
 * creates replay state, and a principal's senders only ever evict its own.
 *
 * @param ps      Principals (nl_principals_load()).
 * @param site    Site MAC key.
 * @param rp      Replay state of nl_principals_replay_init().
 * @param buf     Message (UDP payload). @param len  Its length [bytes].
 * @param now_ns  CLOCK_REALTIME [ns].
 * @param out     Output: the message (valid for ACCEPT and DENIED).
 * @param who     Output: principal index, ps->n for the site key's holder (valid for ACCEPT
 *                and DENIED; ps->n on a MAC failure).
 * @param why     Output: the drop reason (NL_PROTO_OK unless DROP).
 * @return the verdict. @par Context The thread that owns rp (the appliance's I/O lcore).
 * @par Source docs/security.md "Who a frame is from", "Rights".
 */
enum nl_rx_verdict nl_principals_open(const struct nl_principals *ps,
				      const struct nl_auth_key *site, struct nl_replay *rp,
				      const void *buf, size_t len, uint64_t now_ns,
				      struct nl_msg *out, unsigned int *who,
				      enum nl_proto_err *why);

/** Whether principal p may claim machine slot m. @par Context Pure. */
static inline bool
nl_principal_slot_ok(const struct nl_principal *p, uint32_t m)
{
	return m < NL_PRINCIPAL_MAX_SLOTS && ((p->slots[m / 64] >> (m % 64)) & 1);
}

#ifdef __cplusplus
}
#endif
#endif /* NL_PRINCIPAL_H */
