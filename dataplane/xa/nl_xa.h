/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Scale-out: one N-level tree across several nlevel appliances (docs/scale-out.md).
 *
 * Theory of operation. Every appliance reads the same configuration and builds the same
 * tree (same managers, same machine slots). `[appliance NAME]` sections say which appliance
 * owns which subtree roots; a manager belongs to the appliance owning its nearest listed
 * ancestor (or itself), what nobody lists to the first appliance. An appliance runs only its
 * own managers on its lcores; a manager of another appliance is a **proxy**: its inbox ring
 * is the same ring as before, but the lcore polling it is the control (I/O) lcore, which
 * packs what it finds into HANDOVER datagrams to the owner (several tasks per datagram).
 * So a task path that stays inside one appliance runs exactly the code it ran before: the
 * forward that reaches a proxy is the same rte_ring enqueue and pending bit as any other.
 *
 * The appliance that accepted a task (its origin) keeps it, parked, out of its pool while it
 * is elsewhere: the task counts as in flight there, and the client is answered from there
 * when the HANDBACK arrives. Another appliance carries the task in a task object of its own
 * pool (a *foreign* task), which it returns to its pool when it hands the task on or back;
 * foreign tasks are not counted in its accounting (nl_dp.h I1 holds per accepting appliance).
 *
 * Membership and summaries travel by gossip (managers/gossip): each appliance keeps one
 * record per owned subtree root (created now, lifetime gone_after_s) in an nl_gossip view
 * and pushes its valid records to `fanout` peers every gossip period (SUMMARY datagrams).
 * An appliance with no valid record left is declared gone: the tasks parked at it are
 * answered REJECT machine_lost (or, when the client asked, routed again through a live part);
 * tasks forwarded to its managers fail the same way until it comes back (its records
 * reappear, or a datagram with a new incarnation arrives). Every received record of a remote
 * subtree root is also installed in the control's load table (machines idle / busy / gone as
 * it summarises them) and published under QSBR, so a policy above the split (the 2LSC global)
 * reads remote load as it reads local load; a pick of machines all on one other appliance
 * hands the task there whole (nl_xa_place_ctl()).
 *
 * HANDOVER and HANDBACK datagrams are numbered per receiver, acknowledged (ACK) and sent again
 * until acknowledged while the receiver is live; the receiver acts on each number once per
 * sender incarnation, so a lost datagram neither loses a task nor runs it twice.
 *
 * Invariants:
 *  X1  A task accepted by appliance A is answered exactly once, by A: its task object never
 *      leaves A's pool until A answers (parked while away); a HANDBACK whose token, sequence
 *      and task id do not match a parked task is counted stale and dropped.
 *  X2  Only the control lcore touches nl_xa state, proxies' inboxes (as consumer), parked and
 *      foreign tasks' metadata, and sends inter-appliance datagrams.
 *  X3  Manager lcores never see scale-out code: placement is decided once, at creation;
 *      placement by summaries and re-routing run on the control lcore.
 *  X4  A numbered datagram (HANDOVER, HANDBACK) is acted on at most once per (sender,
 *      sender incarnation, dgram_seq), and kept by its sender until acknowledged or until
 *      the receiver is declared gone or restarts.
 */
#ifndef NL_XA_H
#define NL_XA_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_cfg.h"
#include "nl_dp.h"
#include "nl_port.h"
#include "nl_xa_proto.h"

struct nl_model_cfg;

#define NL_XA_NAME_LEN 32u
#define NL_XA_MAX_OWNS 64u /**< subtree roots one appliance lists */
#define NL_XA_MAX_ROOTS 256u /**< subtree roots of one tree: every appliance's owns names
				* together, plus the top manager when nobody lists it */

/** One `[appliance NAME]` section. */
struct nl_xa_app_cfg {
	char name[NL_XA_NAME_LEN];
	uint32_t ip;                 /**< network order */
	uint16_t port;               /**< UDP, host order */
	uint8_t mac[6];              /**< optional `mac =`; else learnt from its datagrams */
	bool has_mac;
	unsigned int n_owns;
	char owns[NL_XA_MAX_OWNS][NL_XA_NAME_LEN]; /**< manager names (policy mgr_name()) */
	unsigned int owns_line;      /**< line of `owns` (errors) */
	uint8_t pk[32];              /**< `public_key =`: its X25519 public key (#36) */
	bool has_pk;
	unsigned int pk_line;        /**< line of `public_key` (errors) */
	double test_skew_s;          /**< `test_clock_skew_ms` / 1000: test hook, its wall clock
				      *   this far off (records' dates, seals' sequence) [s] */
	int standby;                 /**< `standby = OTHER`: the appliance that adopts this one's
				      *   subtree when it is declared dead (#36, docs/scale-out.md
				      *   "Standby"); index into nl_xa_cfg.app, -1 = none */
	unsigned int standby_line;   /**< line of `standby` (errors) */
	char standby_name[NL_XA_NAME_LEN]; /**< as written (resolved after every section) */
	bool failback;               /**< `failback` (yes): when it comes back it takes its
				      *   subtree back from its standby; no: after a restart it
				      *   leaves it there and is its standby's standby (#36) */
};

/** The scale-out part of a configuration. */
struct nl_xa_cfg {
	char path[256];              /**< configuration file (errors) */
	unsigned int n_app;          /**< 0 = not split */
	struct nl_xa_app_cfg app[NL_XA_MAX_APPS];
	int self;                    /**< index of this appliance (--appliance), -1 = none */
	bool any_no_failback;        /**< some appliance has `failback = no`: HOLD messages */
	double gossip_period_s;      /**< [scaleout] gossip_period_ms / 1000 */
	double gone_after_s;         /**< [scaleout] gone_after_s: record lifetime */
	unsigned int fanout;         /**< [scaleout] fanout: peers per gossip round */
	double retransmit_s;         /**< [scaleout] retransmit_ms / 1000: an unacknowledged
				      *   HANDOVER / HANDBACK is sent again after it */
	unsigned int test_drop_every; /**< [scaleout] test_drop_every: test hook, every k-th
				       *   inter-appliance datagram not sent (0 = off) */
	/* membership: SWIM + Lifeguard (managers/swim, docs/scale-out.md "Membership") */
	double swim_period_s;        /**< [scaleout] swim_period_ms / 1000: protocol period T' */
	double swim_timeout_s;       /**< [scaleout] swim_timeout_ms / 1000: direct ACK wait */
	unsigned int swim_suspicion_mult; /**< [scaleout] swim_suspicion_mult: a suspect has
					   *   mult x max(1, log10 N) x T' to refute */
	unsigned int swim_indirect;  /**< [scaleout] swim_indirect: k, helpers per failed probe */
	double dead_hold_s;          /**< [scaleout] dead_hold_s: tasks parked at an appliance
				      *   declared dead are held this long for its return (a
				      *   partition, a false verdict) before they are answered
				      *   REJECT machine_lost or re-routed (#36; 0 = at once) */
	double word_wait_s;          /**< [scaleout] word_wait_s: a standby that adopted a dead
				      *   appliance's subtree waits at most this long [s] for the
				      *   dead one's workers to fail over and tell what ran: a
				      *   client's resend is held so long at most, what was parked
				      *   there so long past dead_hold_s (#36; default 30, 1..3600;
				      *   above the workers' --failover-s) */
	bool entry_tree;             /**< [scaleout] entry = tree: a task enters where the
				      *   policy's entry() says over the whole tree; local (default):
				      *   at one of this appliance's entry managers when its own
				      *   machines can take it (#36, docs/scale-out.md "Local entry") */
	/* appliance keys (#36, docs/scale-out.md "Appliance keys"): set by nl_xa_cfg_keys() */
	bool paired;                 /**< datagrams to and from each peer under the pair's key */
	struct nl_auth_key pair[NL_XA_MAX_APPS]; /**< [app] the pair (self, app)'s MAC key */
};

/**
 * Read the `[appliance NAME]` sections and `[scaleout]` from a configuration.
 *
 * @param c     Loaded configuration (keys read are marked used).
 * @param m     The same configuration's model, parsed (nl_model_cfg_parse()): `owns` names
 *              must name managers of its curves (nl_model_mgr_name_ok()).
 * @param self  This appliance's NAME (--appliance), or NULL.
 * @param out   Output; out->n_app = 0 when the file has no appliance section.
 * @return 0; -EINVAL with "FILE:LINE: ..." in c->err (bad address, port or MAC address; an
 *         owns name that is no manager name of m's curves, an empty owns item, a name
 *         listed twice, more than NL_XA_MAX_ROOTS - 1 owns names in all; more than
 *         NL_XA_MAX_APPS appliances, --appliance naming no section, --appliance without
 *         sections).
 * @par Context Control path. @par Source docs/scale-out.md "Configuration".
 */
int nl_xa_cfg_parse(struct nl_cfg *c, const struct nl_model_cfg *m, const char *self,
		    struct nl_xa_cfg *out);

/**
 * Appliance keys (issue #36, docs/scale-out.md "Appliance keys"): with this appliance's own
 * key, compute each pair's MAC key from the configuration's `public_key` lines, so that the
 * datagrams between appliances are sealed and verified under the pair's key (nl_appkey.h),
 * never under the site key.
 *
 * @param x        Parsed scale-out configuration (nl_xa_cfg_parse()); x->paired and x->pair
 *                 are set on success with a key.
 * @param keyfile  --appliance-key FILE, or NULL.
 * @param auth     Whether --key is given (sealed protocol, version 2).
 * @param err      Output: "FILE:LINE: ..." or "--appliance-key FILE: ..." on error.
 * @param errlen   Size of err [bytes].
 * @return 0 (also: no key and no public_key anywhere: the site key seals as before); -EINVAL
 *         for a key without --appliance or without --key, public keys configured but no
 *         --appliance-key (an appliance of such a tree never takes the site key's word), an
 *         appliance without public_key, a key that is not this appliance's (its public key
 *         differs from the configuration's), a public key unusable as a peer's (low-order,
 *         or two appliances with one key); the key file's errors (nl_appkey_load()).
 * @par Context Control path, at start.
 */
int nl_xa_cfg_keys(struct nl_xa_cfg *x, const char *keyfile, bool auth, char *err,
		   size_t errlen);

/**
 * The hooks scale-out registers on the layers below it: on the engine (placement of managers
 * on appliances and their proxies at creation, tasks parked elsewhere at teardown, foreign
 * tasks out of the accounting) and on port mode (inter-appliance datagrams, the gossip and
 * hand-over rounds, task ends, placement by summaries). The program (nlevel.c) hands them
 * over: nl_dp_opts.ext = &nl_xa_dp_ext with ext_arg = the parsed struct nl_xa_cfg (an engine
 * outside port mode refuses a split tree: -EINVAL), and nl_port_opts.ext = &nl_xa_port_ext.
 * A configuration without `[appliance]` sections attaches nothing (dp->ext stays NULL).
 * @par Context Control path (nl_xa.h X2). @par Source docs/scale-out.md.
 */
extern const struct nl_dp_ext_ops nl_xa_dp_ext;
extern const struct nl_port_ext_ops nl_xa_port_ext;

struct nl_dp;

/** Register /nlevel/appliances and /nlevel/summaries behind the telemetry gate (nothing
 *  when dp is not split). @par Context Main lcore at start. */
void nl_xa_telemetry_init(struct nl_dp *dp);

#endif /* NL_XA_H */
