/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port mode's private state (nl_dp_port.c: frames, workers, re-dispatch; nl_dp_io.c: the
 * port itself, transmit, ARP). Not a public header.
 */
#ifndef NL_DP_PORT_H
#define NL_DP_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "nl_dp_priv.h"

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

struct io {
	struct nl_dp *dp;
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
	struct nl_auth_tx seal;  /* our sender id and sequence */
	struct nl_replay rp;     /* per-sender replay windows */
	uint64_t now_ns;         /* CLOCK_REALTIME, read once per loop */
	/* #16 (nl_dp_sec.c): principal of the frame being handled; set while the fair queue
	 * admits a task it held */
	uint32_t principal;
	bool sec_admitting;
};

/* #16: admit one SUBMIT now (what the fair queue calls; nl_dp_port.c). @par Context I/O. */
void nl_dp_port_admit(struct io *io, const struct nl_msg_submit *s, const struct nl_frame_addr *a);

/* Start the port (one RX and one TX queue) and its mbuf pool; our MAC into dp->mac.
 * @return 0 or -errno. @par Context The I/O lcore, before serving. */
int nl_dp_io_port_init(struct io *io);

/* Send the queued frames (retried, then counted tx_fail). @par Context The I/O lcore. */
void nl_dp_io_tx_flush(struct io *io);

/* Queue message m to (mac, ip, port), sealed with the site key when one is set (--key).
 * @par Context The I/O lcore. */
void nl_dp_io_send(struct io *io, const struct nl_msg *m, const uint8_t *mac, uint32_t ip,
		   uint16_t port);

/* Queue an already encoded message (the inter-appliance codec, nl_xa_proto.h) to (mac, ip,
 * port), sealed with the site key when one is set (nl_xa_seal()). Scale-out hook.
 * @par Context The I/O lcore. */
void nl_dp_io_send_bytes(struct io *io, const void *msg, size_t n, const uint8_t *mac, uint32_t ip,
			 uint16_t port);

/* An ARP frame: answer a request for our address. @return true when f was ARP (consumed).
 * @par Context The I/O lcore. */
bool nl_dp_io_arp(struct io *io, const uint8_t *f, size_t len);

#endif /* NL_DP_PORT_H */
