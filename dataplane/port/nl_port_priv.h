/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port mode's private state (nl_port.h), shared by the port's files and read by the layer
 * above (xa/). Not a public header.
 *
 *   nl_port.h          public API: nl_port_serve(), options, counters, the extension hooks
 *   nl_port_priv.h     the port's state and per-task records (this file)
 *   nl_dp_io.c         the DPDK port: start-up, transmit (sealed), ARP
 *   nl_dp_farm.c       task farms: named commands, FSUBMIT, Requirements/Rank, resends
 *   nl_dp_farm_tel.c   the farm's telemetry
 *   nl_dp_sec.c        principals, rights, caps and fair admission, privilege drop,
 *                      consistent counter snapshots
 *   nl_admit.c         fair admission: shares of the admission limit, the reserve (pure)
 *   nl_fair.c          deficit round robin (pure)
 *   nl_port_tel.c      /nlevel/stats and /nlevel/machine/set
 *   nl_dp_live.c       workers' liveness, which worker sent a frame, its LOAD
 *   nl_dp_drain.c      drain on stop (#34): refuse, withdraw, wait, answer the rest
 *   nl_dp_port.c       the I/O and control loop: frames, workers, sub-tasks out, task ends
 * Calls run down this list's reverse order (nl_dp_port.c is the top); the fair queue admits
 * through a callback the loop registers (nl_dp_sec_create()).
 */
#ifndef NL_PORT_PRIV_H
#define NL_PORT_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "nl_dp_priv.h"
#include "nl_port.h"

#define RX_BURST 32u
#define TX_BUF 64u
#define MAX_WORKERS 256u
#define NO_SLOT UINT32_MAX

struct nl_dp_worker {
	bool live;
	uint32_t worker_id;
	uint32_t ip;          /* network order */
	uint16_t port;        /* host order */
	uint8_t mac[6];
	uint64_t last_seen_tsc;
	unsigned int n_mach;
	uint32_t slot[NL_PROTO_MAX_MACH]; /* worker-local index -> machine slot */
	uint32_t principal;   /* #16: the worker principal that said HELLO (nl_dp_sec.c) */
};

/* Per-task data of port mode the 64-byte task has no room for (index = task->aux). */
struct nl_dp_meta {
	struct nl_task *task;  /* the task this meta belongs to (dp->pool_task[aux]) */
	uint8_t active;        /* sub-tasks out on workers */
	uint8_t held;          /* #34: accepted here (on_submit) and not answered yet */
	uint8_t end_reason;    /* #36: COMPLETE's reason, else 0: a task that ran in part at an
				* appliance that died (its workers said so), answered failed */
	uint8_t pad;
	uint32_t principal;    /* #16: the submitter (nl_dp_sec.c) */
	uint64_t client_ts_ns;
	uint64_t ingress_tsc;
	uint32_t client_ip;    /* network order */
	uint16_t client_port;  /* host order */
	uint16_t cmd_id;
	uint8_t client_mac[6];
	uint8_t args_len;
	uint8_t n_done;
	int32_t status;        /* first non-zero exit status */
	uint64_t done_mask;    /* sub-tasks done */
	uint32_t sub_mach[NL_TASK_MAX_SPLIT]; /* machine of each sub-task */
	uint8_t args[NL_PROTO_MAX_ARGS];
};

/* A control request (telemetry -> control lcore). */
struct nl_dp_req {
	uint32_t mach;
	uint32_t alive;
	double speed_ips;
};

struct nl_dp_sec;
struct nl_dp_farm;

/* #34: drain on stop (nl_dp_drain.c), the I/O lcore's */
struct nl_dp_drain {
	int sig;                 /* the signal that started it; 0 = serving */
	uint64_t t0_tsc, end_tsc; /* its start and its deadline (--drain-timeout) */
	uint64_t done0;          /* tasks ended (completed + failed) at its start */
	uint64_t refused;        /* new SUBMITs and FSUBMITs answered REJECT shutdown */
	uint64_t withdrawn;      /* accepted tasks not dispatched yet: REJECT shutdown */
	uint64_t running0;       /* tasks under way at its start */
};

/* The port: the I/O and control lcore's state (nl_port_serve(); the telemetry handlers find
 * it with nl_dp_tel_driver() while the gate is open). */
struct nl_port {
	struct nl_dp *dp;
	double us_per_cyc;       /* #39: 1e6 / TSC hz (the dispatch latency histogram) */
	struct nl_port_opts o;   /* copied */
	struct rte_mempool *mbufs;
	struct rte_mbuf *tx[TX_BUF];
	unsigned int n_tx;
	uint32_t *slot_worker;   /* [n_mach] worker index holding the slot, or NO_SLOT */
	uint32_t *slot_local;    /* [n_mach] worker-local index */
	uint8_t *alive;          /* [n_mach] control's copy */
	struct nl_dp_lcore *lc;  /* ingress context for nl_dp_ingress_st() */
	uint64_t rnd;
	/* --key (protocol version 2): frames are verified here, once, before any manager sees
	 * them; replies are sealed here. */
	struct nl_auth_tx seal;  /* our sender id and sequence; its key is the site key (a reply
				  * is sealed for its recipient: nl_dp_io_send()) */
	struct nl_replay rp;     /* per-sender replay windows */
	uint64_t now_ns;         /* CLOCK_REALTIME, read once per loop */
	/* #16 (nl_dp_sec.c): principal of the frame being handled (what answers it is sealed
	 * for); set while the fair queue admits a task it held */
	uint32_t principal;
	bool sec_admitting;
	bool sec_again;          /* the engine could not take the task being admitted (pool or
				  * entry inbox full): it stays queued, no reply (on_submit) */
	bool no_done_ack;        /* #36: the DONE being handled is a relayed one not taken (its
				  * worker has not joined): nl_dp_io_done_ack() sends nothing, so
				  * the worker sends it again after joining */
	struct nl_dp_meta *meta; /* [dp->n_pool] */
	struct nl_dp_worker *workers; /* [MAX_WORKERS] */
	unsigned int n_workers;
	uint8_t mac[6];
	struct rte_ring *req_ring;    /* control requests from telemetry (machine set) */
	struct nl_port_counts c;      /* the I/O lcore writes, telemetry reads relaxed */
	struct nl_dp_sec *sec;        /* NULL: no --principals */
	struct nl_dp_farm *farm;      /* task farms (issue #15, nl_dp_farm.c) */
	/* consistent counter snapshots taken by the control lcore on request (telemetry) */
	uint64_t snap_req;            /* requests (telemetry, atomic increment) */
	uint64_t snap_done;           /* last request served (release) */
	uint64_t snap_seq;            /* seqlock of snap: odd while the control writes it */
	struct nl_dp_counts snap;     /* the control lcore's snapshot of request snap_done */
	struct nl_port_counts psnap;  /* and the port's */
	uint64_t live_tsc;            /* the I/O loop's last turn (TSC; nl_dp_live_turn()) */
	uint64_t nap_cyc;             /* the last turn's idle nap (TSC cycles; --idle-sleep-us) */
	uint64_t ru_tsc;              /* when ru was read (at most every 100 ms) */
	double ru_cpu_s;              /* this thread's CPU time then [s] (getrusage) */
	long ru_nivcsw, ru_nvcsw;     /* and its context switches then */
	struct nl_dp_drain drain;     /* #34: drain on stop */
};

/**
 * Drain on stop (#34, nl_dp_drain.c), once per turn of the I/O loop: start the drain when a
 * signal asked for one (nl_port_drain_request_mt()): no new task from now on, tasks accepted
 * and not dispatched yet withdrawn (REJECT shutdown), running ones go on; tell when it is over.
 * @param io  The port. @return true when the loop should end: the drain started and nothing
 * is in flight any more, or its deadline (--drain-timeout) passed.
 * @par Context The I/O lcore.
 */
bool nl_dp_drain_poll(struct nl_port *io);

/** Whether the port drains (a new SUBMIT is answered REJECT shutdown; nl_dp_drain_refused()
 * counts it). @par Context The I/O lcore. */
static inline bool
nl_dp_draining(const struct nl_port *io)
{
	return io->drain.sig != 0;
}

/** Let a signal start a drain (on: nl_port_serve()'s loop runs) or not (the caller of
 * nl_port_drain_request_mt() then stops at once). @par Context The I/O lcore. */
void nl_port_drain_arm(bool on);

/** Count a new submission refused during the drain. @par Context The I/O lcore. */
void nl_dp_drain_refused(struct nl_port *io);

/**
 * The end of serving (the manager lcores stopped; a drain timed out, a second signal, or
 * nothing was left): every task accepted here and not answered yet is answered now, REJECT
 * shutdown (its sub-tasks still on workers are KILLed first), so none is left silent; logs
 * the drain's counts. Tasks still inside the engine are only answered (nl_dp_drain_ctl()
 * returns them to the pool).
 * @param io  The port. @param subs  The port's handling of the sub-task ring (drain_subs()):
 * records still there are ended first. @par Context The I/O lcore, lcores stopped.
 */
void nl_dp_drain_end(struct nl_port *io, unsigned int (*subs)(struct nl_port *io));

/**
 * Once per turn of the I/O loop: a turn of over 100 ms since the last one (the lcore held by
 * the host) moves every live worker's last-heard time on by its length, so that
 * --worker-timeout counts only silence while the appliance ran (nl_dp_live.c; memberlist's
 * Lifeguard, "local health awareness"). Logs a turn over 1 s with where its time went: in
 * the lcore's idle nap (io->nap_cyc; the kernel woke it late), on the CPU (a long turn), or
 * neither (not scheduled), read from getrusage(RUSAGE_THREAD) every 100 ms.
 * @param io   The port. @param tsc  rte_rdtsc() now.
 * @par Context The I/O lcore only.
 */
void nl_dp_live_turn(struct nl_port *io, uint64_t tsc);

/**
 * At the stop, after the I/O loop's last turn: logs that turn's hold as nl_dp_live_turn()
 * does, stops the manager lcores (run_quit, rte_eal_mp_wait_lcore()) and logs a wait for them
 * over 1 s ("the manager lcores took S s to stop": each looks at the flag every few
 * microseconds, so the host held one; docs/dataplane.md "What holds the I/O lcore").
 * @param io  The port.
 * @par Context The I/O lcore only, once, after its loop.
 */
void nl_dp_live_stop(struct nl_port *io);

/**
 * The first live worker silent for over timeout_cyc (TSC cycles) at tsc, or -1.
 * @param io  The port. @param tsc  rte_rdtsc() now. @param timeout_cyc  --worker-timeout in
 * TSC cycles. @return a worker index, or -1.
 * @par Context The I/O lcore only; pure (nothing changes).
 */
int32_t nl_dp_live_due(const struct nl_port *io, uint64_t tsc, uint64_t timeout_cyc);

/* Slots for worker wi's machines that have none (h: its HELLO, first or again): each takes a
 * free slot of its exact resource vector that this appliance owns (scale-out: a slot of
 * another appliance's counts in *n_other; a standby's adopted slots are its own, #36). The
 * machines that got one (alive now, not yet published) go into setm[]/sets[] (*ns of them;
 * room for NL_PROTO_MAX_MACH). I/O lcore (nl_dp_live.c). */
void nl_dp_claim_slots(struct nl_port *io, int32_t wi, const struct nl_msg_hello *h,
		       uint32_t *setm, double *sets, unsigned int *ns, unsigned int *n_other);

/**
 * The live worker that sent from a's source address and port, or -1 (nl_dp_live.c).
 * @par Context The I/O lcore; pure.
 */
int32_t nl_dp_live_worker(const struct nl_port *io, const struct nl_frame_addr *a);

/**
 * A worker's LOAD: a sign of life, and its per-machine queue and backlog written into the
 * load table (slots taken out of service are left gone; a farm slot's occupancy counts
 * beside the report: nl_dp_farm_load()). A LOAD of no joined worker is ignored.
 * @param io  The port. @param h  The LOAD (HELLO layout). @param a  Its addresses.
 * @par Context The I/O lcore (nl_dp_live.c).
 */
void nl_dp_live_load(struct nl_port *io, const struct nl_msg_hello *h,
		     const struct nl_frame_addr *a);

/**
 * Forget the live workers none of whose machines holds a slot here (issue #36: they joined
 * while a restarted appliance with `failback = no` settled and gave none): each one's next LOAD
 * is answered NL_HELLO_F_REJOIN, and its HELLO then claims the slots this appliance owns now.
 * A worker holding a slot is left alone.
 * @param io  The port. @return workers forgotten (counted workers_left).
 * @par Context The I/O and control lcore (nl_dp_live.c). @par Source docs/scale-out.md
 * "Failback or not".
 */
unsigned int nl_dp_live_forget_slotless(struct nl_port *io);

/* xorshift64 step of the port's ingress randomness (the start leaf of a task). */
static inline uint64_t
nl_port_xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* The extension's hooks when there is one (dp->ext), else NULL. */
static inline const struct nl_port_ext_ops *
nl_port_ext(const struct nl_port *io)
{
	return io->dp->ext != NULL ? io->o.ext : NULL;
}

/**
 * Start the port (one RX and one TX queue) and its mbuf pool; our MAC into io->mac.
 * @param io  The port (io->o.port_id). @return 0; -ENODEV (no such port); -errno of DPDK.
 * @par Context The I/O lcore, before serving. @par Source DPDK ethdev.
 */
int nl_dp_io_port_init(struct nl_port *io);

/**
 * Send the queued frames: retried 64 times, then freed and counted tx_fail.
 * @param io  The port. @par Context The I/O lcore.
 */
void nl_dp_io_tx_flush(struct nl_port *io);

/**
 * Queue message m to (mac, ip, port), sealed for its recipient when --key is set: under
 * principal `to`'s key (an index of io->o.principals), or the site key (NL_PRINCIPAL_NONE,
 * or no principals), with the appliance's sender id and sequence (io->seal, whose key stays
 * the site key); sent at the next flush or when TX_BUF are queued.
 * @param io  The port. @param m  Message. @param to  Recipient principal (NL_PRINCIPAL_NONE:
 * the site key's holder). @param mac  Destination MAC [6].
 * @param ip  IPv4, network order. @param port  UDP, host order.
 * @par Context The I/O lcore. @par Source docs/protocol.md, docs/security.md.
 */
void nl_dp_io_send(struct nl_port *io, const struct nl_msg *m, uint32_t to, const uint8_t *mac,
		   uint32_t ip, uint16_t port);

/**
 * Acknowledge DONE d to its sender (issue #34): a DONE_ACK with d's task id, token and
 * sub-task to the frame's source address, sealed under the sender's principal key
 * (io->principal); sent for every DONE that passed the key and rights checks, whether it
 * settled a sub-task or was a duplicate or stale, so that the worker stops resending it;
 * not a relayed DONE (#36) from an address that is no joined worker (io->no_done_ack, set
 * by nl_dp_relay_done(): not taken, sent again).
 * @param io  The port. @param d  The DONE. @param a  Its frame's addresses.
 * @par Context The I/O lcore, while handling d's frame. @par Source docs/protocol.md "DONE_ACK".
 */
void nl_dp_io_done_ack(struct nl_port *io, const struct nl_msg_done *d,
		       const struct nl_frame_addr *a);

/**
 * Queue a payload the caller encoded and sealed (the inter-appliance codec: nl_xa_seal()).
 * @param pl  Payload [n bytes], n <= NL_PROTO_MAX_LEN (else counted tx_fail, not sent).
 * @param mac, ip, port  As nl_dp_io_send(). @par Context The I/O lcore.
 */
void nl_dp_io_send_raw(struct nl_port *io, const void *pl, size_t n, const uint8_t *mac,
		       uint32_t ip, uint16_t port);

/**
 * Answer a task's submitter: a frame of type (NL_MSG_ACCEPT, NL_MSG_REJECT, NL_MSG_COMPLETE)
 * for task_id, through the farm's hook (counters, the record kept for resends) and sealed under
 * the submitter's key (#16).
 * @param io  The port. @param mt  The task's metadata (the submitter's address and stamp).
 * @param reason  REJECT reason (NL_REJECT_*), else 0. @param n_done  Sub-tasks done.
 * @param status  Exit status (COMPLETE). @param resp_us  Response time [us] (COMPLETE).
 * @par Context The I/O lcore (nl_dp_finish.c). @par Source docs/protocol.md.
 */
void nl_dp_port_reply(struct nl_port *io, const struct nl_dp_meta *mt, uint64_t task_id,
		      uint8_t type, uint16_t reason, uint16_t n_done, int32_t status,
		      uint32_t resp_us);

/**
 * The end of task t on the control lcore: the extension's (a task of another appliance, handed
 * back), or COMPLETE / REJECT to its client, accounting (nl_dp_task_finish_ctl()), the pool.
 * Also how the scale-out layer ends a task it cannot carry on.
 * @param io  The port. @param t  A task of the pool, all its sub-tasks settled.
 * @par Context The I/O lcore (nl_dp_finish.c).
 */
void nl_dp_port_finish(struct nl_port *io, struct nl_task *t);

/**
 * Issue #36: fill the origin block of DISPATCH d (struct nl_msg_dispatch has_origin..) when
 * task t came from another appliance (the scale-out hook; nothing without one), so that a
 * worker that fails over can tell the standby, and the standby the origin, what became of it.
 * @param io  The port. @param t  The task. @param d  Its DISPATCH, being built.
 * @par Context The I/O lcore (nl_dp_finish.c). @par Source docs/scale-out.md "Asked before
 * machine_lost".
 */
void nl_dp_relay_origin(struct nl_port *io, const struct nl_task *t, struct nl_msg_dispatch *d);

/**
 * Issue #36: a DONE that matched no sub-task here: when it is relayed (d->relay != 0), hand it
 * to the scale-out layer, which tells the task's origin (counted there): from a worker that
 * joined here, any; from another address (a worker whose appliance fell silent, telling the
 * origin straight), only one whose origin is this appliance, and not acknowledged (no DONE_ACK:
 * io->no_done_ack).
 * @param io  The port. @param d  The DONE. @param a  Its frame's addresses.
 * @return true when taken; false (a plain DONE, an unknown worker, no scale-out, refused): the
 * caller counts it stale_done.
 * @par Context The I/O lcore (nl_dp_finish.c). @par Source docs/protocol.md "Relayed DONE".
 */
bool nl_dp_relay_done(struct nl_port *io, const struct nl_msg_done *d,
		      const struct nl_frame_addr *a);

/**
 * Register the port's telemetry: /nlevel/stats, /nlevel/machine/set (nl_port_tel.c) and the
 * security layer's /nlevel/principals; the handlers find the port with nl_dp_tel_driver().
 * @param io  The port. @return 0; -errno of nl_dp_tel_register().
 * @par Context The I/O lcore, start-up. @par Source DPDK telemetry library.
 */
int nl_port_telemetry_init(struct nl_port *io);

/**
 * The port's counters now, each read relaxed (nl_dp_io.c); a consistent set: nl_dp_snap_get().
 * @param io  The port. @param c  Output. @par Context Any thread.
 */
void nl_port_counts_get(const struct nl_port *io, struct nl_port_counts *c);

/**
 * Log a frame refused for its key (bad MAC, or the wrong protocol version for our --key):
 * one line a second at most, with the count of the quiet ones (issue #33: a worker or client
 * with a wrong or missing key); one addressed to another IPv4 address (NL_PROTO_E_ADDR: a
 * client or worker given a wrong address, or a switch's flood): one line per 10 s. Other
 * reasons are only counted.
 * @param io  The port. @param a  The frame's addresses. @param why  enum nl_proto_err.
 * @par Context The I/O lcore.
 */
void nl_dp_io_refused(struct nl_port *io, const struct nl_frame_addr *a, int why);

/**
 * A received frame's Ethernet, IPv4 and UDP headers (nl_frame_parse() for our UDP port), and
 * its IPv4 destination: the port is promiscuous and a switch floods a frame for an unknown
 * MAC to every port, so a client's or worker's frame for another host is NL_PROTO_E_ADDR
 * (`drop_wrong_ip`); a datagram between appliances (types 16..23) is left to scale-out,
 * which counts those as not_ours.
 * @param f  Frame [len bytes]. @param a, pl, plen  As nl_frame_parse().
 * @return NL_PROTO_OK, or nl_frame_parse()'s error, or NL_PROTO_E_ADDR.
 * @par Context The I/O lcore. @par Source docs/protocol.md "Drop reasons".
 */
enum nl_proto_err nl_dp_io_parse(const struct nl_port *io, const uint8_t *f, size_t len,
				 struct nl_frame_addr *a, const uint8_t **pl, size_t *plen);

/**
 * An ARP frame: answer a request for our address.
 * @param f  Frame [len bytes]. @return true when f was ARP (consumed), false otherwise.
 * @par Context The I/O lcore. @par Source RFC 826.
 */
bool nl_dp_io_arp(struct nl_port *io, const uint8_t *f, size_t len);

#endif /* NL_PORT_PRIV_H */
