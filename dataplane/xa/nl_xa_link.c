/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale-out's datagram link (nl_xa_core.h): inter-appliance messages encoded, sealed and sent
 * through the port; numbered datagrams (HANDOVER, HANDBACK) kept until acknowledged and sent
 * again, with back-off; the receiver's de-duplication window; the per-peer batches being
 * filled. Below the hand-over logic (nl_xa.c) and the summaries (nl_xa_gossip.c), which both
 * send through it; it calls only the port and the wire codec.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "nl_atomic.h"
#include "nl_xa_core.h"

/* ---------------------------------------------------------------- sending ---- */

/* One datagram on the wire (or, test hook, not: every test_drop_every-th is dropped). */
static void
send_bytes(struct nl_port *io, unsigned int app, const uint8_t *buf, size_t n)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_peer *p = &xa->peer[app];
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t out[NL_PROTO_MAX_LEN];
	int k;

	nl_stat_add_st(&p->tx_dgrams, 1);
	if (xa->cfg.test_drop_every > 0 && ++xa->dgram_n % xa->cfg.test_drop_every == 0) {
		nl_stat_add_st(&xa->test_dropped, 1);
		return;
	}
	/* sealed with the pair's key (#36, --appliance-key), else with the site key when one is
	 * set; until we heard from it (or were told its MAC), Ethernet broadcast on our segment */
	k = nl_xa_seal(buf, n, xa->cfg.paired ? &p->tx : io->o.auth ? &io->seal : NULL,
		       nl_xa_skewed_ns(io->now_ns), out, sizeof(out));
	if (k < 0) {
		nl_stat_add_st(&io->c.tx_fail, 1);
		return;
	}
	nl_dp_io_send_raw(io, out, (size_t)k, p->mac_known ? p->mac : bcast, xa->cfg.app[app].ip,
			  xa->cfg.app[app].port);
}

void
nl_xa_send_ctl(struct nl_port *io, unsigned int app, const struct nl_xa_msg *m)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_peer *p = &xa->peer[app];
	uint8_t buf[NL_PROTO_MAX_LEN];
	int n = nl_xa_encode(m, buf, sizeof(buf));

	if (n < 0) {
		nl_stat_add_st(&io->c.tx_fail, 1);
		return;
	}
	if (m->dgram_seq != 0 && p->rtx != NULL) { /* kept until acknowledged (retransmission) */
		struct xa_unacked *u = &p->rtx[m->dgram_seq % XA_RTX_CAP];

		if (u->seq != 0) /* XA_RTX_CAP unacknowledged: the oldest is no longer retransmitted */
			nl_stat_add_st(&p->rtx_overflow, 1);
		u->seq = m->dgram_seq;
		u->len = (uint16_t)n;
		u->tries = 1;
		u->sent_tsc = rte_rdtsc();
		u->first_tsc = u->sent_tsc;
		memcpy(u->buf, buf, (size_t)n);
	}
	send_bytes(io, app, buf, (size_t)n);
}

/* The next datagram number to appliance app (never 0). */
static uint32_t
next_dgram(struct xa_peer *p)
{
	if (++p->tx_seq == 0)
		p->tx_seq = 1;
	return p->tx_seq;
}

/* Send again what app has not acknowledged within retransmit_s. */
void
nl_xa_retransmit_ctl(struct nl_port *io, unsigned int app, uint64_t now)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_peer *p = &xa->peer[app];
	bool stalled = false;

	if (p->rtx == NULL || !p->live) {
		p->stalled = false;
		return;
	}
	for (unsigned int i = 0, burst = 0; i < XA_RTX_CAP; i++) {
		struct xa_unacked *u = &p->rtx[i];

		if (u->seq != 0 && now - u->first_tsc >= xa->rtx_cyc * XA_STALL_RTX)
			stalled = true;
		if (burst == XA_RTX_BURST) /* the rest at the next check (XA_RTX_BURST) */
			continue;
		/* backing off: retransmit_s, then 2, 4, 8 and 16 times as long (a peer that is
		 * paused or overloaded is not flooded; a dead one is declared so by SWIM) */
		if (u->seq == 0 || now - u->sent_tsc < xa->rtx_cyc << (u->tries < 5 ? u->tries - 1 : 4))
			continue;
		u->sent_tsc = now;
		u->tries++;
		burst++;
		nl_stat_add_st(&p->retx, 1);
		send_bytes(io, app, u->buf, u->len);
	}
	p->stalled = stalled;
}

/* Appliance app acknowledged datagram seq: forget it. */
void
nl_xa_acked_ctl(struct xa_peer *p, uint32_t seq)
{
	struct xa_unacked *u;

	if (p->rtx == NULL)
		return;
	u = &p->rtx[seq % XA_RTX_CAP];
	if (u->seq == seq) {
		u->seq = 0;
		nl_stat_add_st(&p->acked, 1);
	}
}

/* Forget the unacknowledged datagrams to app: its HANDOVERs (what they carried was answered
 * by settle_lost() in nl_xa.c: it must never arrive and run now), and with `all` (it
 * restarted: it numbers anew and holds none of our tasks) every other one too. HANDBACKs to a
 * peer declared dead stay: they answer its tasks, and a peer that returns still waits for
 * them (#36). A forgotten HANDOVER of another appliance's task (passing through) was answered
 * by nobody: its origin, which may still wait for it at app (a *moved* note said so, and app
 * came back to it within its own hold), is told (NL_XA_REASON_UNSENT); not when app
 * restarted (`all`): every origin hears that itself and settles after the workers' words. */
uint64_t
nl_xa_rtx_clear_ctl(struct nl_port *io, unsigned int app, bool all)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_peer *p = &xa->peer[app];
	static struct nl_xa_msg m; /* (large; the control lcore's alone) */
	struct told { struct nl_xa_back b; unsigned int to; } *tell = NULL;
	size_t n = 0, cap = 0;

	if (p->rtx == NULL)
		return 0;
	for (unsigned int i = 0; i < XA_RTX_CAP; i++) {
		struct xa_unacked *u = &p->rtx[i];

		if (u->seq == 0 || (!all && u->buf[3] != NL_XA_MSG_HANDOVER)) /* type: byte 3 */
			continue;
		u->seq = 0;
		/* (a restart, `all`, is heard by every appliance: each origin settles what it had
		 * there itself, after its workers' words, nl_xa_restart_wait_ctl()) */
		if (all || nl_xa_decode(u->buf, u->len, 1, &m) != NL_PROTO_OK)
			continue;
		for (unsigned int k = 0; k < m.n; k++) {
			const struct nl_xa_task *r = &m.u.task[k];

			if (r->origin_app == xa->self || r->origin_app >= xa->cfg.n_app)
				continue;
			if (n == cap) { /* told after the loop: a batch sent to app meanwhile would
					 * take a slot of this ring */
				size_t c2 = cap ? 2 * cap : 64;
				struct told *g = realloc(tell, c2 * sizeof(*tell));

				if (g == NULL) {
					XA_LOG(ERR, "no memory to tell the origins of forgotten "
					       "hand-overs\n");
					continue;
				}
				tell = g;
				cap = c2;
			}
			tell[n++] = (struct told){ .b = { .task_id = r->task_id,
							  .origin_token = r->origin_token,
							  .origin_seq = r->origin_seq,
							  .reason = NL_XA_REASON_UNSENT,
							  .hops = r->hops,
							  .at_app = (uint16_t)app },
						   .to = r->origin_app };
		}
	}
	for (size_t k = 0; k < n; k++)
		nl_xa_queue_back_ctl(io, tell[k].to, &tell[k].b);
	free(tell);
	return n;
}

/* Receiver: whether datagram seq of app (its current incarnation) arrived before; marks it. */
bool
nl_xa_dedup_seen_ctl(struct xa_peer *p, uint32_t seq)
{
	uint32_t bit = seq % XA_DEDUP_WIN;

	if (p->rx_hi == 0 || (int32_t)(seq - p->rx_hi) > 0) { /* newer: clear the bits skipped */
		uint32_t gap = p->rx_hi == 0 ? XA_DEDUP_WIN : seq - p->rx_hi;

		if (gap >= XA_DEDUP_WIN)
			memset(p->rx_win, 0, sizeof(p->rx_win));
		else /* the skipped numbers and seq itself: their bits held older numbers */
			for (uint32_t s = p->rx_hi + 1; s != seq + 1; s++)
				p->rx_win[(s % XA_DEDUP_WIN) / 64] &= ~(UINT64_C(1) << (s % 64));
		p->rx_hi = seq;
	} else if (p->rx_hi - seq >= XA_DEDUP_WIN) {
		return true; /* older than the window: the sender gave it up long ago */
	}
	if (p->rx_win[bit / 64] & (UINT64_C(1) << (bit % 64)))
		return true;
	p->rx_win[bit / 64] |= UINT64_C(1) << (bit % 64);
	return false;
}

void
nl_xa_queue_ack_ctl(struct nl_port *io, unsigned int app, uint32_t seq)
{
	struct xa_peer *p = &nl_xa_of(io->dp)->peer[app];

	if (p->out_ack.n == NL_XA_MAX_ACKS) {
		nl_xa_send_ctl(io, app, &p->out_ack);
		p->out_ack.n = 0;
	}
	nl_xa_prep_ctl(nl_xa_of(io->dp), &p->out_ack);
	p->out_ack.u.ack[p->out_ack.n++] = seq;
}

void
nl_xa_flush_peer_ctl(struct nl_port *io, unsigned int app)
{
	struct xa_peer *p = &nl_xa_of(io->dp)->peer[app];

	if (p->out_task.n > 0) {
		p->out_task.dgram_seq = next_dgram(p);
		nl_xa_send_ctl(io, app, &p->out_task);
		p->out_task.n = 0;
		p->out_task_len = 0;
	}
	if (p->out_back.n > 0) {
		p->out_back.dgram_seq = next_dgram(p);
		nl_xa_send_ctl(io, app, &p->out_back);
		p->out_back.n = 0;
	}
	if (p->out_ack.n > 0) {
		nl_xa_send_ctl(io, app, &p->out_ack);
		p->out_ack.n = 0;
	}
}

void
nl_xa_flush_round_ctl(struct nl_port *io, unsigned int app, uint64_t now)
{
	struct xa_peer *p = &nl_xa_of(io->dp)->peer[app];

	if (p->stalled && p->out_task.n < NL_XA_MAX_TASKS && p->out_back.n < NL_XA_MAX_BACKS &&
	    now - p->flush_tsc < rte_get_tsc_hz() / 1000 * XA_STALL_FLUSH_MS) {
		if (p->out_ack.n > 0) {
			nl_xa_send_ctl(io, app, &p->out_ack);
			p->out_ack.n = 0;
		}
		if (p->out_task.n > 0 || p->out_back.n > 0)
			nl_stat_add_st(&p->held, 1);
		return;
	}
	if (p->stalled)
		p->flush_tsc = now;
	nl_xa_flush_peer_ctl(io, app);
}

void
nl_xa_prep_ctl(struct nl_xa *xa, struct nl_xa_msg *m)
{
	m->from_app = (uint16_t)xa->self;
	m->incarnation = xa->inc;
}

void
nl_xa_queue_task_ctl(struct nl_port *io, unsigned int app, const struct nl_xa_task *r)
{
	struct xa_peer *p = &nl_xa_of(io->dp)->peer[app];
	size_t len = nl_xa_task_wire_len(r);

	if (p->out_task.n == NL_XA_MAX_TASKS || p->out_task_len + len > NL_XA_ROOM)
		nl_xa_flush_peer_ctl(io, app);
	nl_xa_prep_ctl(nl_xa_of(io->dp), &p->out_task);
	p->out_task.u.task[p->out_task.n++] = *r;
	p->out_task_len += len;
	p->tx_tasks++;
}

void
nl_xa_queue_back_ctl(struct nl_port *io, unsigned int app, const struct nl_xa_back *r)
{
	struct xa_peer *p = &nl_xa_of(io->dp)->peer[app];

	if (p->out_back.n == NL_XA_MAX_BACKS)
		nl_xa_flush_peer_ctl(io, app);
	nl_xa_prep_ctl(nl_xa_of(io->dp), &p->out_back);
	p->out_back.u.back[p->out_back.n++] = *r;
	p->tx_backs++;
}

