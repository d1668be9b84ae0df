/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Port mode: the live engine (nl_dp.h) behind a DPDK port, serving clients (SUBMIT, the task
 * farm's FSUBMIT) and nlevel-workers (HELLO, LOAD, DONE, BYE) over UDP frames on the wire
 * protocol (nl_proto.h, docs/protocol.md), with security and fair share (nl_dp_sec.h), task
 * farms (nl_dp_farm.h) and its telemetry. The main lcore is the I/O and control lcore.
 *
 * Layers (dataplane/README.md): the port uses the engine and the wire codec below it; the
 * scale-out layer above it (xa/) reaches in through struct nl_port_ext_ops, which the port
 * calls and never names.
 */
#ifndef NL_PORT_H
#define NL_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nl_dp.h"
#include "nl_principal.h"
#include "nl_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nl_port;
struct nl_dp_sub;
struct nl_frame_addr;
struct nl_mach_load;
struct nl_task;

/**
 * What the layer above the port (scale-out, dataplane/xa/) adds to port mode: the hook table
 * it defines and the program hands over in nl_port_opts.ext. The entries take the extension's
 * state from dp->ext (built by its struct nl_dp_ext_ops). Every entry is called on the I/O and
 * control lcore only; the table is used only when dp->ext is not NULL.
 */
/** entry_ctl(): the extension took the task (issue #36: its entry manager's subtree runs at
 *  another appliance, `failback = no`); not a manager id (those are below NL_NODE_NONE). */
#define NL_PORT_ENTRY_TAKEN 0xfffffffeu

struct nl_port_ext_ops {
	/** A datagram of the extension's type range arrived (types 16..23, nl_xa_is_xa()):
	 *  open it, act, count what is dropped. */
	void (*rx_ctl)(struct nl_port *io, const struct nl_frame_addr *a, const uint8_t *pl,
		       size_t plen);
	/** Every round of the control loop. @return work done. */
	unsigned int (*poll_ctl)(struct nl_port *io);
	/** A SUBMIT's task object was filled, before its ingress (flags: NL_SUBMIT_F_*). */
	void (*task_new_ctl)(struct nl_port *io, struct nl_task *t, uint8_t submit_flags);
	/** The entry manager of a new task (issue #36, local entry): one of this appliance's
	 *  managers, or NL_NODE_NONE for the policy's own entry(), or NL_PORT_ENTRY_TAKEN when
	 *  the extension took the task itself (handed to another appliance: the port answers
	 *  ACCEPT and does not enter it). rnd: uniform random. */
	uint32_t (*entry_ctl)(struct nl_port *io, struct nl_task *t, uint64_t rnd);
	/** The end of task t: @return true when the extension took it (a task of another
	 *  appliance, handed back), false when the port answers its client. */
	bool (*finish_ctl)(struct nl_port *io, struct nl_task *t);
	/** The first sub-task record of a task the control drains: @return records taken (the
	 *  task placed elsewhere), or 0 to send them as usual. */
	unsigned int (*place_ctl)(struct nl_port *io, const struct nl_dp_sub *rec,
				  unsigned int n_rec);
	/** The load table for re-placing a lost sub-task here (machines that only this
	 *  appliance may take), valid until the next call. */
	const struct nl_mach_load *(*local_load_ctl)(void *ext, const struct nl_mach_load *w,
						     unsigned int n_mach);
	/** Whether machine m's load entry is kept by the extension (not reset by the port). */
	bool (*keeps_load)(const void *ext, uint32_t m);
	/** Whether this appliance's workers may claim machine slot m, for a HELLO with flags
	 *  hello_flags (NL_HELLO_F_FAILOVER: from a worker whose appliance fell silent); true
	 *  grants it (the claim follows at once), and the hook may note by whom. */
	bool (*owns_mach)(void *ext, uint32_t m, uint16_t hello_flags);
	/** #36: fill DISPATCH d's origin block when task t came from another appliance. */
	void (*origin_ctl)(struct nl_port *io, const struct nl_task *t,
			   struct nl_msg_dispatch *d);
	/** #36: a relayed DONE (d->relay != 0) from joined worker wi (failed over or rejoined
	 *  here), or from an address of no joined worker (wi < 0: told straight, taken only when
	 *  this appliance is the origin): tell the origin. @return false when not taken. */
	bool (*relay_ctl)(struct nl_port *io, const struct nl_msg_done *d, int32_t wi);
	/** Serving ends (lcores stopped): account and return the tasks it holds. */
	void (*stop_ctl)(struct nl_dp *dp, void *ext);
};

/** Options of port mode (from the command line). */
struct nl_port_opts {
	uint16_t port_id;           /**< DPDK port */
	uint16_t udp_port;          /**< host order */
	uint32_t ip;                /**< our IPv4 address, network order */
	double worker_timeout_s;    /**< a worker silent this long is removed [s]; 0 = never */
	bool auth;                  /**< protocol version 2 (authenticated) only */
	struct nl_auth_key auth_key; /**< auth: the site key (nl_auth_key_load()) */
	/* issue #16: identities, fair share, privilege drop (nl_dp_sec.c, docs/security.md) */
	const struct nl_principals *principals; /**< auth: per-principal keys, rights and
						 *   limits; NULL = site key only */
	const char *run_as;         /**< drop to this user after start-up; NULL */
	const struct nl_port_ext_ops *ext; /**< scale-out (nl_xa.h), or NULL */
	const char *state_dir;      /**< #33: the task farm's records (--state-dir); NULL =
				     *   /var/lib/nlevel */
	int journal_sync;           /**< #34: --journal-sync: 2 full (fsync per pass, write-ahead
				     *   DISPATCH), 1 normal (write-ahead, no fsync), 0 off */
	double drain_timeout_s;     /**< #34: drain on stop: the longest wait for running tasks
				     *   after SIGTERM [s] (SIGINT: at most 2 s); 0 = none */
};

#define NL_PORT_DISP_HIST 32u /**< dispatch latency buckets (2^31 us: 36 min and above) */

/** Counters of the port (the I/O lcore writes, telemetry reads relaxed or as a snapshot). */
struct nl_port_counts {
	uint64_t redispatched;      /**< sub-tasks moved off a removed worker */
	uint64_t stale_done;        /**< DONEs matching nothing outstanding */
	uint64_t rejoin_asked;      /**< #36: LOADs of no joined worker, answered "join again" */
	uint64_t workers_joined;
	uint64_t workers_left;
	uint64_t rx_frames;         /**< frames received */
	/** frames the port dropped before the I/O lcore read them (rte_eth_stats imissed: its
	 *  receive ring full), its receive errors (ierrors) and mbuf shortages (rx_nombuf); read
	 *  by the I/O lcore every 100 ms (nl_dp_live_turn()) */
	uint64_t rx_missed, rx_errors, rx_nombuf;
	uint64_t rx_appliance;      /**< inter-appliance datagrams received (types 16..23) */
	uint64_t tx_frames;         /**< frames sent */
	uint64_t tx_fail;           /**< frames not sent (no mbuf, port full, encode failed) */
	uint64_t drops[NL_PROTO_E_MAX]; /**< malformed frames per reason */
	uint64_t rx_msgs[NL_MSG_TYPE_MAX]; /**< authentic messages per type */
	/** #39: dispatch latency, a task's ingress to the DISPATCH of its sub-task 0 [us], log2
	 *  buckets: bucket b counts [2^(b-1), 2^b) us (bucket 0: under 1 us; the last: the rest) */
	uint64_t disp_hist_us[NL_PORT_DISP_HIST];
	uint64_t disp_sum_us;       /**< their sum [us] */
};

/**
 * A stop signal arrived (SIGTERM, SIGINT; issue #34): while nl_port_serve() serves, the first
 * one starts a drain (no new task, queued ones REJECT shutdown, running ones may end within
 * nl_port_opts.drain_timeout_s) and true is returned; otherwise (not serving, or a second
 * signal) false: the caller stops at once (nl_dp_stop()).
 * @param sig  The signal's number. @return true when a drain was started.
 * @par Context Any thread, a signal handler included (async-signal-safe: atomics only).
 * @par Source docs/taskfarm.md "Stopping the appliance".
 */
bool nl_port_drain_request_mt(int sig);

/**
 * Serve SUBMITs and workers on the port until nl_dp_stop(), a second signal or the end of a
 * drain (nl_port_drain_request_mt()): start the port, the
 * farm, security and the port's telemetry (/nlevel/stats, /nlevel/machine/set,
 * /nlevel/principals, the farm's), launch the manager lcores, run the I/O and control loop;
 * at the end stop the lcores, close the telemetry gate and free the port.
 *
 * @param dp   Engine created with port_mode = true.
 * @param o    Options (copied).
 * @param out  When not NULL: the port's counters at the end.
 * @return 0; -EINVAL (not port mode); -ENOMEM; -ENODEV (no such port); -errno of the port,
 *         of the privilege drop or of an lcore launch.
 * @par Context  Main lcore, QSBR-registered: it becomes the I/O and control lcore.
 * @par Source   docs/dataplane.md "Port mode", docs/protocol.md.
 */
int nl_port_serve(struct nl_dp *dp, const struct nl_port_opts *o, struct nl_port_counts *out);

#ifdef __cplusplus
}
#endif
#endif /* NL_PORT_H */
