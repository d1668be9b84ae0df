/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale-out internals shared by nl_xa.c (hand-over, hand-back, membership, rounds),
 * nl_xa_cfg.c (configuration, placement) and nl_xa_gossip.c (summaries, telemetry).
 * Not a public header. Control lcore only (nl_xa.h X2), telemetry reads counters relaxed.
 */
#ifndef NL_XA_PRIV_H
#define NL_XA_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "nl_dp_port.h"
#include "nl_gossip.h"
#include "nl_rng.h"
#include "nl_xa.h"

#define XA_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)

/* meta->xa_state */
#define XA_OWN 0     /* ours, here */
#define XA_PARKED 1  /* ours, handed to another appliance (meta->xa_at) */
#define XA_FOREIGN 2 /* another appliance's (meta->xa_origin), carried here */

#define XA_MAX_ROOTS NL_XA_MAX_ROOTS

/* meta->xa_flags: NL_XA_TF_* (travel in HANDOVER records) */

#define XA_RTX_CAP 1024u   /* unacknowledged datagrams kept per peer (ring by dgram_seq) */
#define XA_DEDUP_WIN 4096u /* datagram numbers remembered per peer (> XA_RTX_CAP) */

/* A numbered datagram sent and not yet acknowledged (retransmitted every retransmit_s). */
struct xa_unacked {
	uint32_t seq;        /* 0 = free */
	uint16_t len;
	uint16_t tries;
	uint64_t sent_tsc;
	uint8_t buf[NL_PROTO_MAX_LEN]; /* encoded, unsealed (sealed anew at each send) */
};

struct xa_root {
	uint32_t mgr;        /* subtree root manager */
	uint16_t app;        /* owner */
	uint16_t k;          /* index among the owner's roots (gossip src = app * 64 + k) */
	uint32_t *mach;      /* machines of the subtree */
	unsigned int n_mach;
	/* the last summary of this root (own: made; remote: received); telemetry reads it */
	double created_s;
	double rx_s;         /* when it was received (own: made) [CLOCK_REALTIME s] */
	uint32_t live, idle, n_sub;
	uint64_t free_mask;
	uint32_t backlog_us;
	uint64_t n_rx;
	uint64_t n_installed; /* times installed in the load table (remote roots) */
};

struct xa_peer {
	bool live;           /* not declared gone */
	bool mac_known;
	uint8_t mac[6];
	uint64_t inc;        /* incarnation last seen (0 = never heard) */
	double last_rx_s;
	struct nl_xa_msg out_task, out_back, out_ack; /* batches being filled */
	size_t out_task_len;
	/* retransmission (sender) and de-duplication (receiver) */
	uint32_t tx_seq;     /* last datagram number sent to it */
	struct xa_unacked *rtx; /* [XA_RTX_CAP] */
	uint32_t rx_hi;      /* highest datagram number received from it (its incarnation) */
	uint64_t rx_win[XA_DEDUP_WIN / 64]; /* bit (seq % XA_DEDUP_WIN): received */
	uint64_t retx, dup_rx, acked, rtx_overflow;
	/* counters (control writes, telemetry reads relaxed) */
	uint64_t tx_tasks, rx_tasks, tx_backs, rx_backs, tx_dgrams, rx_dgrams;
	uint64_t lost_tasks, gone, rejoined;
	uint32_t gone_epoch; /* xa->gone_epoch when last declared gone (0 = never) */
};

struct nl_xa {
	struct nl_dp *dp;
	struct nl_xa_cfg cfg;
	unsigned int self;
	uint64_t inc;
	uint8_t *mgr_app;    /* [n_mgr] */
	uint8_t *mach_app;   /* [n_mach] */
	uint32_t *mach_mgr;  /* [n_mach] the manager that dispatches to it (leaf / group) */
	uint8_t *mach_inst;  /* [n_mach] remote machine whose load entry summaries keep */
	struct nl_mach_load *local_load; /* [n_mach] scratch: our machines only (replace) */
	struct nl_dp_lcore *proxy;
	struct xa_peer peer[NL_XA_MAX_APPS];
	struct xa_root root[XA_MAX_ROOTS];
	unsigned int n_root;
	uint32_t seq;
	uint64_t foreign_live;
	uint64_t parked;
	uint64_t stale_back, bad_peer, bad_task, lost_tasks, overload_in, not_ours, moved;
	uint64_t gossip_rounds, sum_tx, sum_rx;
	uint64_t installs, placed_out, rerouted, test_dropped, dgram_n, late_moved;
	uint64_t rtx_cyc;
	uint32_t gone_epoch; /* declarations of a peer gone so far */
	struct nl_gossip_view *view;
	struct nl_gossip_cfg gcfg;
	struct nl_rng rng;
	double start_s, next_gossip_s;
	uint64_t next_check_tsc, check_cyc;
	struct nl_gossip_rec *grec;  /* scratch */
	struct nl_gossip_ack *gack;
	size_t gcap;
};

/* CLOCK_REALTIME [s] (the clock of gossip records). */
static inline double
nl_xa_real_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/**
 * Encode m and queue it as one datagram to appliance `app` (its configured IP and port; its
 * MAC once heard, else Ethernet broadcast on our segment), sealed with --key when set.
 * @param io   The control lcore's I/O state.
 * @param app  Appliance index (order of the [appliance] sections), < cfg.n_app.
 * @param m    Message with 1..20 task, 1..41 hand-back or 1..20 summary records.
 * @return nothing; an encoding or transmit failure is counted in tx_fail, the datagram lost.
 * @par Context  Control lcore only (nl_xa.c). @par Source docs/protocol.md "Between appliances".
 */
void nl_xa_send_ctl(struct io *io, unsigned int app, const struct nl_xa_msg *m);

/**
 * Fill the sender fields of a message of ours: from_app (our index) and our incarnation.
 * @par Context  Control lcore only (nl_xa.c). @par Source docs/protocol.md "Between appliances".
 */
void nl_xa_prep_ctl(struct nl_xa *xa, struct nl_xa_msg *m);

/**
 * Appliance `app` is gone (expired) or restarted (new incarnation): flush what we queued for
 * it and answer every task parked there REJECT machine_lost (counted in lost_tasks).
 * @param app  Appliance index, < cfg.n_app.
 * @param why  For the log line ("gone", "restarted").
 * @par Context  Control lcore only (nl_xa.c); O(task pool). @par Source docs/scale-out.md "Faults".
 */
void nl_xa_declare_lost_ctl(struct io *io, unsigned int app, const char *why);

/**
 * One gossip round (every gossip_period_ms): our own subtree summaries into the gossip view,
 * expiry, membership (an appliance is live while one of its records is; a silent one is
 * declared lost), then a push of the view to `fanout` peers.
 * @param now_s  Wall clock [s] (nl_xa_real_s()).
 * @par Context  Control lcore only (nl_xa_gossip.c).
 * @par Source   managers/gossip/nl_gossip.h (Umeda, Nakada, Matsuoka); docs/scale-out.md.
 */
void nl_xa_gossip_round_ctl(struct io *io, double now_s);

/**
 * A SUMMARY received: its records merged into the gossip view (telemetry /nlevel/summaries
 * shows them with their age).
 * @param m  Decoded and authenticated SUMMARY (1..20 records).
 * @par Context  Control lcore only (nl_xa_gossip.c). @par Source docs/protocol.md, type 18.
 */
void nl_xa_summary_in_ctl(struct io *io, const struct nl_xa_msg *m);

/**
 * Install the last summary of every remote root of appliance `app` (all remote roots when
 * app >= NL_XA_MAX_APPS) in the control's load table, or mark their machines gone when
 * `gone`, then publish (nl_load_publish_ctl()).
 * @par Context  Control lcore only (nl_xa_gossip.c). @par Source docs/scale-out.md "Summaries".
 */
void nl_xa_install_ctl(struct io *io, unsigned int app, bool gone);

#endif /* NL_XA_PRIV_H */
