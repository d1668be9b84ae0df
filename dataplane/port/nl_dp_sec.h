/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Port mode's security and fair share (issue #16, docs/security.md): frames verified under
 * the key of the principal their sender id names; what a principal may send (the rights
 * table by role and message type, nl_principal_may_send(), before the replay window; then
 * only its own slots, workers and sub-tasks); replies
 * sealed under the addressee's key; per-submitter caps (tasks in flight, accepted rate) and
 * weighted fair admission by deficit round robin; per-principal counters; consistent counter
 * snapshots for telemetry; the privilege drop after start-up.
 *
 * Everything here runs on the I/O (control) lcore but the telemetry readers and
 * nl_dp_snap_get(), which read relaxed or through the snapshot handshake.
 */
#ifndef NL_DP_SEC_H
#define NL_DP_SEC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nl_dp.h"
#include "nl_principal.h"
#include "nl_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nl_port;
struct nl_port_counts;
struct nl_msg_submit;
struct nl_frame_addr;
struct nl_dp_meta;
struct rte_tel_data;

/** The port's admission of a SUBMIT the fair queue held (its normal SUBMIT path). */
typedef void (*nl_dp_sec_admit_fn)(struct nl_port *io, const struct nl_msg_submit *s,
				   const struct nl_frame_addr *a);

/** Per-principal counters (control lcore writes, telemetry reads relaxed). */
struct nl_sec_counts {
	uint64_t submitted;       /**< SUBMITs that passed authentication */
	uint64_t accepted;        /**< ACCEPTed */
	uint64_t completed;
	uint64_t failed;          /**< accepted, then REJECTed (lost, refused) */
	uint64_t in_flight;       /**< accepted, not ended */
	uint64_t queued;          /**< waiting in its fair queue */
	uint64_t rejected_quota;  /**< REJECT quota (over max_in_flight or max_rate) */
	uint64_t rejected_overload; /**< REJECT overload (fair queue full, engine full) */
	uint64_t rejected_other;  /**< REJECT bad_task / no_machine at ingress */
	uint64_t denied;          /**< frames dropped: not this principal's to send */
	uint64_t frames;          /**< authenticated frames from this principal */
	uint64_t senders_evicted; /**< its senders its part of the replay table had to forget
				   *   to make room for its new ones (#35) */
};

/**
 * Create the security state from io->o.principals (no-op when NULL).
 * @param io     The port.
 * @param admit  How a held SUBMIT is admitted when its turn comes (the port's SUBMIT path;
 *               a callback, since the port's loop is above this file).
 * @return 0; -ENOMEM. @par Context Control thread, before serving; allocates.
 */
int nl_dp_sec_create(struct nl_port *io, nl_dp_sec_admit_fn admit);

/** Free it (NULL-safe). @par Context Control thread, lcores stopped. */
void nl_dp_sec_free(struct nl_port *io);

/**
 * Receive one authenticated frame of the port (types outside the scale-out range): the MAC
 * under the key of the principal its sender id names (or the site key), the body, the rights
 * table by role and type (nl_principal_may_send()), the replay window of that principal, then
 * what it may touch: a DONE only for a sub-task out on a machine of a worker the principal
 * registered; HELLO, LOAD, BYE, CMDS, MACHAD only with its configured worker_id (each type's
 * own field) and not from the address of a worker another principal registered. io->principal
 * is set to the sender. A dropped frame is counted per reason (io->c.drops), a refused one
 * `denied` (per principal and in all).
 * @param io   The port. @param buf  UDP payload [len bytes]. @param a  Its addresses.
 * @param out  Output: the message.
 * @return true when the frame may be handled. @par Context I/O lcore.
 * @par Source  docs/security.md "Who a frame is from", "Rights".
 */
bool nl_dp_sec_receive(struct nl_port *io, const void *buf, size_t len,
		       const struct nl_frame_addr *a, struct nl_msg *out);

/**
 * The principal id (nl_principal_id()) of principal index pr, as DISPATCH carries it to the
 * worker (its per-principal command policy, docs/security.md): 0 for the site key's holder
 * (NL_PRINCIPAL_NONE) and without principals.
 * @param io  The port. @param pr  Principal index or NL_PRINCIPAL_NONE.
 * @return the id, or 0. @par Context Any (reads the principals only).
 */
uint32_t nl_dp_sec_principal_id(const struct nl_port *io, uint32_t pr);

/** Whether the HELLO being handled may claim machine slot m. @par Context I/O lcore. */
bool nl_dp_sec_slot_ok(const struct nl_port *io, uint32_t m);

/**
 * A SUBMIT of io->principal: REJECT quota over its caps, REJECT overload when its fair queue
 * is full, else queue it and run the fair admission (nl_dp_sec_poll()).
 * @par Context I/O lcore. @par Source deficit round robin: M. Shreedhar and G. Varghese,
 * "Efficient fair queuing using deficit round robin", SIGCOMM 1995.
 */
void nl_dp_sec_submit(struct nl_port *io, const struct nl_msg_submit *s, const struct nl_frame_addr *a);

/**
 * Admit queued SUBMITs by deficit round robin while the appliance holds fewer than its
 * admission limit. @return tasks admitted or refused. @par Context I/O lcore.
 */
unsigned int nl_dp_sec_poll(struct nl_port *io);

/** A task of principal mt->principal ended (failed or completed). @par Context I/O lcore. */
void nl_dp_sec_finish(struct nl_port *io, const struct nl_dp_meta *mt, bool failed);

/** Telemetry /nlevel/principals and the `denied` key of /nlevel/stats. @return 0; -errno. */
int nl_dp_sec_tel_init(void);

/** Add the security keys (denied, principals) to a /nlevel/stats dict. @par Context Telemetry. */
void nl_dp_sec_tel_stats(const struct nl_port *io, struct rte_tel_data *d);

/**
 * Print one `SUMMARY principal=NAME ...` line per principal (docs/output.md).
 * @par Context Control thread, after serving.
 */
void nl_dp_sec_summary(const struct nl_port *io, FILE *f);

/**
 * Drop root after start-up (dp->o.run_as): no new privileges, supplementary groups cleared,
 * the user's gid and uid (real, effective, saved), so no capability is left. The port, its
 * mbufs and the telemetry socket stay open.
 * @return 0 (or nothing to do); -errno, with a log line. @par Context Control, before the
 * manager lcores start (applies to every thread of the process: glibc setuid).
 */
int nl_dp_sec_drop_privileges(const struct nl_port *io);

/**
 * Serve a snapshot request: copy every counter (nl_dp_counts_get(), nl_port_counts_get()
 * and the per-principal ones) at one instant of the
 * control lcore, which in port mode is the only writer of accepted / completed / failed and
 * the only user of the task pool, so the copy satisfies I1 exactly.
 * @par Context Control lcore (port mode), once per loop (one relaxed load when idle).
 */
void nl_dp_snap_serve_ctl(struct nl_port *io);

/**
 * A consistent counters snapshot from the control lcore (port mode): requests one and waits
 * for it (up to timeout_ms): the engine's into c, the port's into pc.
 * @return 0; -ETIMEDOUT (the caller falls back to nl_dp_counts_get()); -EINVAL when the
 * engine is not serving a port (io NULL). @par Context Any thread but the control lcore.
 */
int nl_dp_snap_get(struct nl_port *io, struct nl_dp_counts *c, struct nl_port_counts *pc,
		   unsigned int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif /* NL_DP_SEC_H */
