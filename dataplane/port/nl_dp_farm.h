/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Task farms in port mode (issue #15; docs/taskfarm.md, docs/protocol.md "Task farms"):
 * the command names workers offer (CMDS), their machines' ClassAd records (MACHAD), the
 * Requirements/Rank handles clients register (REGISTER), tasks naming a handle (FSUBMIT),
 * the match table the leaf managers read (managers/nl_match.h), and per-submit counters
 * (STATUS_Q, telemetry /nlevel/submits). Everything here runs on the I/O (control) lcore
 * but the telemetry callbacks, which read the counters with relaxed loads.
 *
 * nl_dp_port.c calls in at a few marked hooks ("issue #15 hook"). Not a public header.
 */
#ifndef NL_DP_FARM_H
#define NL_DP_FARM_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_port_priv.h"

/** The port's DISPATCH of sub-task sub of t to slot m, and its end of a withdrawn (cancelled)
 * sub-task: what the farm's pull calls (nl_dp_farm_set_port_fns()). */
typedef void (*nl_dp_farm_dispatch_fn)(struct nl_port *io, struct nl_task *t, unsigned int sub,
				       uint32_t m);
typedef void (*nl_dp_farm_withdraw_fn)(struct nl_port *io, struct nl_task *t, unsigned int sub);

/** REJECT reason 7: the FSUBMIT's handle is unknown here (register again). */
#define NL_REJECT_NO_HANDLE 7u
/** REJECT reason 8 (#33): a CANCEL withdrew the task before it was dispatched. */
#define NL_REJECT_CANCELLED 8u

/* Start / stop the task-farm state of port mode. @return 0 or -ENOMEM. @par Context I/O lcore. */
int nl_dp_farm_init(struct nl_port *io);
void nl_dp_farm_fini(struct nl_port *io);

/* A task-farm frame (types 24..30). Returns true when it was an FSUBMIT that the caller must
 * now admit as the plain SUBMIT written to *s (then call nl_dp_farm_submit_end()). */
bool nl_dp_farm_frame(struct nl_port *io, const struct nl_msg *m, const struct nl_frame_addr *a,
		      struct nl_msg_submit *s);
void nl_dp_farm_submit_end(struct nl_port *io);

/* The farm state of the submission being admitted: its Requirements/Rank handle and attempt
 * (0, 0 for a plain SUBMIT). The fair queue (nl_dp_sec.c) keeps it with a queued submission
 * and puts it back around that submission's admission, so a queued FSUBMIT keeps its match
 * handle, its resend record and its submit counters, and no other submission takes them. */
struct nl_dp_farm_ctx {
	uint32_t h;       /**< Requirements/Rank handle, 0 = none */
	uint8_t attempt;  /**< FSUBMIT attempt number */
	uint32_t tl_ms;   /**< #33: its wall-clock limit [ms], 0 = none */
	uint64_t tid;     /**< #33: its task id */
	uint32_t pin_w;   /**< #34: a run the journal has on worker pin_w - 1, 0 = none */
	uint16_t pin_m;   /**< #34: its worker-local machine */
};

/**
 * Read the farm state of the submission being admitted.
 * @param io  Port I/O state. @param c  Output (0, 0 when the farm is off or for a SUBMIT).
 * @par Context  The I/O lcore, inside on_submit(). @par Source  issue #15 (docs/taskfarm.md).
 */
void nl_dp_farm_ctx_get(const struct nl_port *io, struct nl_dp_farm_ctx *c);

/**
 * Make c the farm state of the submission admitted next (put it back around a queued
 * submission's admission, then restore the previous one).
 * @param io  Port I/O state. @param c  State from nl_dp_farm_ctx_get(). No-op without a farm.
 * @par Context  The I/O lcore (nl_dp_sec.c admit_one()). @par Source  issue #15.
 */
void nl_dp_farm_ctx_set(struct nl_port *io, const struct nl_dp_farm_ctx *c);

/* on_submit(), before ingress: record the task's handle (0 for a plain SUBMIT). */
void nl_dp_farm_task(struct nl_port *io, struct nl_task *t, struct nl_dp_meta *mt);

/* reply_client(): count the reply against the task's submit id (farm tasks only), and keep
 * the state of an accepted FSUBMIT (in flight, then its final reply m) for resends. */
void nl_dp_farm_reply(struct nl_port *io, const struct nl_dp_meta *mt, uint64_t task_id, uint8_t type,
		      int32_t status, const struct nl_msg *m);

/* send_dispatch(): the worker-local command id of a farm task's command on machine m. */
void nl_dp_farm_dispatch(struct nl_port *io, const struct nl_task *t, uint32_t m,
			 struct nl_msg_dispatch *d);

/* publish_machines(): machines joined, left or changed: rebuild the match table. */
void nl_dp_farm_machines(struct nl_port *io);

/* remove_worker(): forget what worker wi offered (before its slots are released). */
void nl_dp_farm_worker_gone(struct nl_port *io, uint32_t wi);

/**
 * on_done(): sub-task of farm task t ended on slot m with DONE d (its state, run time: 0 =
 * not given, the appliance measures). Frees the slot's occupancy, learns the command's mean
 * run time, keeps the task's end record. No-op for a task without a handle.
 * @param io  Port. @param t  Task. @param m  Its slot. @param d  The DONE.
 * @par Context The I/O lcore. @par Source issue #33 items 1 and 5 (nl_dp_farm_occ.c).
 */
void nl_dp_farm_done(struct nl_port *io, const struct nl_task *t, uint32_t m,
		     const struct nl_msg_done *d);

/**
 * drain_subs(): whether a CANCEL (or a drain on stop, #34) withdrew task t before its
 * dispatch; then t is marked failed with that reason (NL_REJECT_CANCELLED or
 * NL_REJECT_SHUTDOWN) and its sub-tasks are not sent.
 * @return true when withdrawn now. @par Context The I/O lcore. @par Source issue #33 item 5.
 */
bool nl_dp_farm_withdraw(struct nl_port *io, struct nl_task *t);

/**
 * Drain on stop (#34, nl_dp_drain.c): withdraw the task in pool slot aux, not dispatched yet,
 * as a CANCEL does but with reason NL_REJECT_SHUTDOWN: drain_subs() or the pull ends it
 * without running it (REJECT shutdown, record state shutdown). A task a CANCEL withdrew
 * already keeps its reason. @par Context The I/O lcore.
 */
void nl_dp_farm_shutdown(struct nl_port *io, uint32_t aux);

/**
 * KILL every dispatched sub-task of the task in pool slot aux that has not ended (reason
 * cancel: the worker kills its cgroup and answers DONE cancelled, or nothing once the
 * appliance is gone). @return KILLs sent. @par Context The I/O lcore (a CANCEL; the end of
 * a drain, #34).
 */
unsigned int nl_dp_farm_kill(struct nl_port *io, uint32_t aux);

/**
 * #34, write-ahead: send msg (a DISPATCH or KILL to a worker at mac/ip/port, sealed for
 * principal) once the journal has the records it follows on disk: a farm task's DISPATCH
 * waits for its DISPATCH record (so an appliance killed at any moment knows, after its
 * restart, every run it started: docs/taskfarm.md "Exactly once"); a KILL waits behind the
 * DISPATCHes held before it (order kept). Anything else, or with no records, goes at once.
 * Held frames go out from nl_dp_farm_poll() (a group commit: about a millisecond).
 * @par Context The I/O lcore. @par Source issue #34 item 1 (write-ahead logging).
 */
void nl_dp_farm_send_worker(struct nl_port *io, const struct nl_msg *msg, uint32_t principal,
			    const uint8_t mac[6], uint32_t ip, uint16_t port);

/**
 * on_load(): the worker's LOAD for slot m (sub-tasks n_sub, backlog_ns [ns]) was written to
 * the load table; a slot that held farm sub-tasks is rewritten from its occupancy as well
 * (the larger backlog wins). @par Context The I/O lcore. @par Source issue #33 item 1.
 */
void nl_dp_farm_load(struct nl_port *io, uint32_t m, uint32_t n_sub, uint64_t backlog_ns);

/**
 * Once per millisecond at most: occupied slots' load entries move with time (a running
 * command never looks done). @return 0 (not counted as work). @par Context The I/O lcore.
 * @par Source issue #33 item 1.
 */
unsigned int nl_dp_farm_poll(struct nl_port *io);

/**
 * drain_subs(): sub-task sub of farm task t was placed on slot *m; if *m is busy (a farm
 * sub-task dispatched there and not done) and another eligible slot of its leaf is idle, *m
 * becomes that one; if none is idle, the sub-task waits here (parked, in arrival order)
 * instead of queueing behind a command that may run for hours: true, do not send it. A task
 * whose handle has a Rank is not parked (it queues for its best machine, as before).
 * @param io  Port. @param t  Task. @param sub  Sub-task. @param m  In: the manager's choice;
 * out: where to send it. @return true when parked.
 * @par Context The I/O lcore. @par Source issue #33 item 1; HTCondor's negotiator matches a
 * job to an unclaimed slot (HTCondor manual, "Matchmaking"); Slurm's backfill keeps jobs
 * pending until their resources are free.
 */
bool nl_dp_farm_park(struct nl_port *io, struct nl_task *t, unsigned int sub, uint32_t *m);

/**
 * A slot went idle (a DONE, a worker joined): send the parked sub-tasks that can run on an
 * idle slot now, in arrival order; withdrawn ones end (cancelled). @par Context The I/O lcore.
 */
void nl_dp_farm_pull(struct nl_port *io);

/**
 * Register the port's DISPATCH and withdraw functions for the pull.
 * @par Context The I/O lcore, start-up (after nl_dp_farm_init()).
 */
void nl_dp_farm_set_port_fns(struct nl_port *io, nl_dp_farm_dispatch_fn d,
			     nl_dp_farm_withdraw_fn w);

/**
 * #34: the next task of the journal to admit again without its submitter (tasks not ended at
 * the last stop whose FSUBMIT the journal kept; docs/taskfarm.md "Exactly once"): its FSUBMIT
 * in *m, the submitter's address in *a and its principal in *principal, for the caller to
 * admit as a received FSUBMIT (nl_dp_farm_frame(), then the SUBMIT path) and then to call
 * nl_dp_farm_requeue_done(). Tasks whose handle has no machine yet wait; one a resend
 * admitted first is skipped.
 * @return true: one to admit; false: none now (looks again every 10 ms while any is left).
 * @par Context The I/O lcore, not while draining. @par Source issue #34 item 1.
 */
bool nl_dp_farm_requeue_next(struct nl_port *io, struct nl_msg *m, struct nl_frame_addr *a,
			     uint32_t *principal);

/**
 * #34: the admission of the task nl_dp_farm_requeue_next() returned last is over: accepted
 * (or answered from its state), it is done; REJECT overload, it is tried again after 0.5 s;
 * another REJECT, it is dropped (logged, counted in /nlevel/submits journal_requeue_refused).
 * @par Context The I/O lcore.
 */
void nl_dp_farm_requeue_done(struct nl_port *io);

#endif /* NL_DP_FARM_H */
