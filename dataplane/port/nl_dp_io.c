/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port mode's port: start-up, the headers of what it receives (ours: our UDP port and IPv4
 * address), transmit (frames sealed for their recipient: a principal's key, or the site key)
 * and ARP answers for our address.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "nl_atomic.h"
#include "nl_port_priv.h"
#include "nl_xa_proto.h"

#define DP_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)

void
nl_dp_io_tx_flush(struct nl_port *io)
{
	unsigned int sent = 0;

	for (int tries = 0; tries < 64 && sent < io->n_tx; tries++)
		sent += rte_eth_tx_burst(io->o.port_id, 0, io->tx + sent, (uint16_t)(io->n_tx - sent));
	if (sent < io->n_tx) {
		rte_pktmbuf_free_bulk(io->tx + sent, io->n_tx - sent);
		nl_stat_add_st(&io->c.tx_fail, io->n_tx - sent);
	}
	nl_stat_add_st(&io->c.tx_frames, sent);
	io->n_tx = 0;
}

/* A frame to send: an mbuf with room for the headers and the largest message; the message
 * goes at the returned pointer + NL_FRAME_HDR_LEN. NULL (counted tx_fail) when none is left. */
static uint8_t *
tx_begin(struct nl_port *io, struct rte_mbuf **mb)
{
	uint8_t *p;

	*mb = rte_pktmbuf_alloc(io->mbufs);
	p = *mb == NULL ? NULL :
			  (uint8_t *)rte_pktmbuf_append(*mb, NL_FRAME_HDR_LEN + NL_PROTO_MAX_LEN);
	if (p == NULL) {
		rte_pktmbuf_free(*mb); /* NULL accepted */
		nl_stat_add_st(&io->c.tx_fail, 1);
	}
	return p;
}

/* The message of n bytes (< 0: sealing failed, counted and dropped) is at p +
 * NL_FRAME_HDR_LEN: add Ethernet/IPv4/UDP headers to (mac, ip, port), trim, queue. */
static void
tx_end(struct nl_port *io, struct rte_mbuf *mb, uint8_t *p, int n, const uint8_t *mac, uint32_t ip,
       uint16_t port)
{
	struct nl_frame_addr a;

	if (n < 0) {
		rte_pktmbuf_free(mb);
		nl_stat_add_st(&io->c.tx_fail, 1);
		return;
	}
	memcpy(a.src_mac, io->mac, 6);
	memcpy(a.dst_mac, mac, 6);
	a.src_ip = io->o.ip;
	a.dst_ip = ip;
	a.src_port = io->o.udp_port;
	a.dst_port = port;
	n = nl_frame_build(p, &a, (size_t)n);
	rte_pktmbuf_trim(mb, (uint16_t)(NL_FRAME_HDR_LEN + NL_PROTO_MAX_LEN - (unsigned int)n));
	io->tx[io->n_tx++] = mb;
	if (io->n_tx == TX_BUF)
		nl_dp_io_tx_flush(io);
}

void
nl_dp_io_send(struct nl_port *io, const struct nl_msg *m, uint32_t to, const uint8_t *mac,
	      uint32_t ip, uint16_t port)
{
	const struct nl_principals *ps = io->o.principals;
	struct rte_mbuf *mb;
	uint8_t *p = tx_begin(io, &mb);

	/* #35: the recipient's key, chosen per frame (io->seal.key stays the site key) */
	if (p != NULL)
		tx_end(io, mb, p,
		       nl_proto_seal_with(m, io->o.auth ? &io->seal : NULL,
					  ps != NULL && to < ps->n ? &ps->p[to].key : &io->o.auth_key,
					  io->now_ns, p + NL_FRAME_HDR_LEN, NL_PROTO_MAX_LEN),
		       mac, ip, port);
}

void
nl_dp_io_done_ack(struct nl_port *io, const struct nl_msg_done *d, const struct nl_frame_addr *a)
{
	struct nl_msg m = { .type = NL_MSG_DONE_ACK };

	if (io->no_done_ack) { /* #36: a relayed DONE before its worker (re)joined */
		io->no_done_ack = false;
		return;
	}
	m.u.farm.done_ack.task_id = d->task_id;
	m.u.farm.done_ack.token = d->token;
	m.u.farm.done_ack.sub = d->sub;
	nl_dp_io_send(io, &m, io->principal, a->src_mac, a->src_ip, a->src_port);
}

void
nl_dp_io_send_raw(struct nl_port *io, const void *pl, size_t n, const uint8_t *mac, uint32_t ip,
		  uint16_t port)
{
	struct rte_mbuf *mb;
	uint8_t *p = tx_begin(io, &mb);

	if (p != NULL) {
		if (n > NL_PROTO_MAX_LEN) {
			tx_end(io, mb, p, -1, mac, ip, port); /* counted tx_fail */
			return;
		}
		memcpy(p + NL_FRAME_HDR_LEN, pl, n);
		tx_end(io, mb, p, (int)n, mac, ip, port);
	}
}

enum nl_proto_err
nl_dp_io_parse(const struct nl_port *io, const uint8_t *f, size_t len, struct nl_frame_addr *a,
	       const uint8_t **pl, size_t *plen)
{
	enum nl_proto_err e = nl_frame_parse(f, len, io->o.udp_port, a, pl, plen);

	if (e == NL_PROTO_OK && a->dst_ip != io->o.ip && !(*plen >= 4 && nl_xa_is_xa(*pl)))
		e = NL_PROTO_E_ADDR;
	return e;
}

bool
nl_dp_io_arp(struct nl_port *io, const uint8_t *f, size_t len)
{
	struct rte_mbuf *mb;
	uint8_t *p;

	if (len < 42 || f[12] != 0x08 || f[13] != 0x06)
		return false;
	/* Ethernet/IPv4 request (op 1) for our address */
	if (f[14] != 0 || f[15] != 1 || f[16] != 0x08 || f[17] != 0 || f[18] != 6 || f[19] != 4 ||
	    f[20] != 0 || f[21] != 1 || memcmp(f + 38, &io->o.ip, 4) != 0)
		return true;
	mb = rte_pktmbuf_alloc(io->mbufs);
	if (mb == NULL)
		return true;
	p = (uint8_t *)rte_pktmbuf_append(mb, 60);
	if (p == NULL) {
		rte_pktmbuf_free(mb);
		return true;
	}
	memset(p, 0, 60);
	memcpy(p, f + 6, 6);
	memcpy(p + 6, io->mac, 6);
	p[12] = 0x08;
	p[13] = 0x06;
	memcpy(p + 14, f + 14, 6); /* htype, ptype, hlen, plen */
	p[20] = 0;
	p[21] = 2;
	memcpy(p + 22, io->mac, 6);
	memcpy(p + 28, &io->o.ip, 4);
	memcpy(p + 32, f + 22, 6);
	memcpy(p + 38, f + 28, 4);
	io->tx[io->n_tx++] = mb;
	if (io->n_tx == TX_BUF)
		nl_dp_io_tx_flush(io);
	return true;
}

int
nl_dp_io_port_init(struct nl_port *io)
{
	struct rte_eth_conf conf;
	struct rte_ether_addr mac;
	uint16_t port = io->o.port_id;
	int rc;

	if (!rte_eth_dev_is_valid_port(port)) {
		DP_LOG(ERR, "port %u does not exist (give a --vdev or a NIC)\n", port);
		return -ENODEV;
	}
	io->mbufs = rte_pktmbuf_pool_create("nl_mbuf", 4095, 128, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					    (int)rte_socket_id());
	if (io->mbufs == NULL)
		return -rte_errno;
	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, 512, rte_eth_dev_socket_id(port), NULL,
					    io->mbufs);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, 512, rte_eth_dev_socket_id(port), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc != 0)
		return rc < 0 ? rc : -EIO;
	rte_eth_promiscuous_enable(port); /* best effort: not every PMD has it */
	rte_eth_macaddr_get(port, &mac);
	memcpy(io->mac, mac.addr_bytes, 6);
	return 0;
}

void
nl_port_counts_get(const struct nl_port *io, struct nl_port_counts *c)
{
	const uint64_t *s = (const uint64_t *)&io->c;
	uint64_t *d = (uint64_t *)c;

	for (size_t i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		d[i] = nl_atomic_load_relaxed(&s[i]);
}

/* A line is due when none was said within `period` cycles (then *quiet, the ones held back
 * since, is for the caller to say and reset); else this one is counted in *quiet. */
static bool
line_due(uint64_t *last, uint64_t *quiet, uint64_t now, uint64_t period)
{
	if (*last != 0 && now - *last < period) {
		(*quiet)++;
		return false;
	}
	*last = now;
	return true;
}

void
nl_dp_io_refused(struct nl_port *io, const struct nl_frame_addr *a, int why)
{
	static uint64_t key_tsc, key_quiet, addr_tsc, addr_quiet;
	uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();
	struct in_addr ip = { .s_addr = a->src_ip };
	char txt[INET_ADDRSTRLEN] = "?";

	if (why == NL_PROTO_E_ADDR) { /* one line per 10 s: a wrong address, or a flood */
		struct in_addr dst = { .s_addr = a->dst_ip }, own = { .s_addr = io->o.ip };
		char d[INET_ADDRSTRLEN] = "?", o[INET_ADDRSTRLEN] = "?";

		if (!line_due(&addr_tsc, &addr_quiet, now, 10 * hz))
			return;
		inet_ntop(AF_INET, &ip, txt, sizeof(txt));
		inet_ntop(AF_INET, &dst, d, sizeof(d));
		inet_ntop(AF_INET, &own, o, sizeof(o));
		rte_log(RTE_LOG_WARNING, nl_dp_logtype,
			"nlevel: dropped a frame from %s:%u to %s, not this appliance's --ip %s "
			"(drop_wrong_ip; a client or worker given another address, or a switch "
			"flooding another host's frames); %llu more since the last line\n", txt,
			a->src_port, d, o, (unsigned long long)addr_quiet);
		addr_quiet = 0;
		return;
	}
	if ((why != NL_PROTO_E_MAC && why != NL_PROTO_E_VERSION) ||
	    !line_due(&key_tsc, &key_quiet, now, hz)) /* one line a second at most */
		return;
	inet_ntop(AF_INET, &ip, txt, sizeof(txt));
	rte_log(RTE_LOG_WARNING, nl_dp_logtype,
		"nlevel: refused a frame from %s:%u: %s (a worker or client with another --key, "
		"or none); %llu more refused since the last line\n", txt, a->src_port,
		why == NL_PROTO_E_MAC ? "its MAC does not verify under our keys" :
					"not the protocol version our --key speaks",
		(unsigned long long)key_quiet);
	key_quiet = 0;
}
