/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale-out (nl_xa.h): hand-over and hand-back of tasks between appliances, proxies,
 * membership, the control-lcore round and reception.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include <sodium.h>

#include "nl_atomic.h"
#include "nl_dp_inline.h"
#include "nl_dp_port.h"
#include "nl_gossip.h"
#include "nl_policy.h"
#include "nl_rng.h"
#include "nl_xa_priv.h"

/* ---------------------------------------------------------------- sending ---- */

/* One datagram on the wire (or, test hook, not: every test_drop_every-th is dropped). */
static void
send_bytes(struct io *io, unsigned int app, const uint8_t *buf, size_t n)
{
	struct nl_xa *xa = io->dp->xa;
	struct xa_peer *p = &xa->peer[app];
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	nl_stat_add_st(&p->tx_dgrams, 1);
	if (xa->cfg.test_drop_every > 0 && ++xa->dgram_n % xa->cfg.test_drop_every == 0) {
		nl_stat_add_st(&xa->test_dropped, 1);
		return;
	}
	/* until we heard from it (or were told its MAC), Ethernet broadcast on our segment */
	nl_dp_io_send_bytes(io, buf, n, p->mac_known ? p->mac : bcast, xa->cfg.app[app].ip,
			    xa->cfg.app[app].port);
}

void
nl_xa_send_ctl(struct io *io, unsigned int app, const struct nl_xa_msg *m)
{
	struct nl_xa *xa = io->dp->xa;
	struct xa_peer *p = &xa->peer[app];
	uint8_t buf[NL_PROTO_MAX_LEN];
	int n = nl_xa_encode(m, buf, sizeof(buf));

	if (n < 0) {
		nl_stat_add_st(&io->dp->tx_fail, 1);
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
static void
retransmit(struct io *io, unsigned int app, uint64_t now)
{
	struct nl_xa *xa = io->dp->xa;
	struct xa_peer *p = &xa->peer[app];

	if (p->rtx == NULL || !p->live)
		return;
	for (unsigned int i = 0; i < XA_RTX_CAP; i++) {
		struct xa_unacked *u = &p->rtx[i];

		/* backing off: retransmit_s, then twice and four times as long (a dead peer is
		 * declared gone within gone_after_s; the ring holds longer than that) */
		if (u->seq == 0 || now - u->sent_tsc < xa->rtx_cyc << (u->tries < 3 ? u->tries - 1 : 2))
			continue;
		u->sent_tsc = now;
		u->tries++;
		nl_stat_add_st(&p->retx, 1);
		send_bytes(io, app, u->buf, u->len);
	}
}

/* Appliance app acknowledged datagram seq: forget it. */
static void
acked(struct xa_peer *p, uint32_t seq)
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

/* Forget every unacknowledged datagram to app (it is gone or restarted: what they carried
 * was answered by nl_xa_declare_lost_ctl()). */
static void
rtx_clear(struct xa_peer *p)
{
	if (p->rtx != NULL)
		for (unsigned int i = 0; i < XA_RTX_CAP; i++)
			p->rtx[i].seq = 0;
}

/* Receiver: whether datagram seq of app (its current incarnation) arrived before; marks it. */
static bool
dedup_seen(struct xa_peer *p, uint32_t seq)
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

static void
queue_ack(struct io *io, unsigned int app, uint32_t seq)
{
	struct xa_peer *p = &io->dp->xa->peer[app];

	if (p->out_ack.n == NL_XA_MAX_ACKS) {
		nl_xa_send_ctl(io, app, &p->out_ack);
		p->out_ack.n = 0;
	}
	nl_xa_prep_ctl(io->dp->xa, &p->out_ack);
	p->out_ack.u.ack[p->out_ack.n++] = seq;
}

static void
flush_peer(struct io *io, unsigned int app)
{
	struct xa_peer *p = &io->dp->xa->peer[app];

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
nl_xa_prep_ctl(struct nl_xa *xa, struct nl_xa_msg *m)
{
	m->from_app = (uint16_t)xa->self;
	m->incarnation = xa->inc;
}

static void
queue_task(struct io *io, unsigned int app, const struct nl_xa_task *r)
{
	struct xa_peer *p = &io->dp->xa->peer[app];
	size_t len = nl_xa_task_wire_len(r);

	if (p->out_task.n == NL_XA_MAX_TASKS || p->out_task_len + len > NL_XA_ROOM)
		flush_peer(io, app);
	nl_xa_prep_ctl(io->dp->xa, &p->out_task);
	p->out_task.u.task[p->out_task.n++] = *r;
	p->out_task_len += len;
	p->tx_tasks++;
}

static void
queue_back(struct io *io, unsigned int app, const struct nl_xa_back *r)
{
	struct xa_peer *p = &io->dp->xa->peer[app];

	if (p->out_back.n == NL_XA_MAX_BACKS)
		flush_peer(io, app);
	nl_xa_prep_ctl(io->dp->xa, &p->out_back);
	p->out_back.u.back[p->out_back.n++] = *r;
	p->tx_backs++;
}

/* ---------------------------------------------------------------- task ends ---- */

static void
set_failed(struct nl_task *t, enum nl_reject_reason why)
{
	t->flags = (t->flags & ~(NL_MODEL_SUBS_MASK | (0xffu << NL_TF_REASON_SHIFT))) |
		   NL_TF_FAILED | ((uint32_t)why << NL_TF_REASON_SHIFT);
}

bool
nl_xa_finish_ctl(struct io *io, struct nl_task *t)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	struct nl_dp_meta *mt = &dp->meta[t->aux];
	struct nl_xa_back b;

	if (xa == NULL)
		return false;
	mt->xa_flags = 0; /* the task ends here: its object starts clean */
	if (mt->xa_state != XA_FOREIGN)
		return false;
	memset(&b, 0, sizeof(b));
	b.task_id = t->id;
	b.origin_token = mt->xa_token;
	b.origin_seq = mt->xa_seq;
	b.reason = (t->flags & NL_TF_FAILED) ?
			   (uint16_t)((t->flags >> NL_TF_REASON_SHIFT) & 0xff) : 0;
	if ((t->flags & NL_TF_FAILED) && b.reason == 0)
		b.reason = NL_REJECT_OVERLOAD;
	b.n_done = mt->n_done;
	b.status = mt->status;
	b.hops = t->hops;
	queue_back(io, mt->xa_origin, &b);
	mt->active = 0;
	mt->xa_state = XA_OWN;
	rte_mempool_put(dp->pool, t);
	nl_atomic_store_relaxed(&xa->foreign_live, xa->foreign_live - 1);
	return true;
}

/* A task we cannot carry on here: ours is answered REJECT `why`; a foreign one is handed back
 * failed (nl_xa_finish_ctl() from the port's finish). */
static void
fail_task(struct io *io, struct nl_task *t, enum nl_reject_reason why)
{
	set_failed(t, why);
	nl_dp_port_finish(io, t);
}

/* ---------------------------------------------------------------- hand-over out ---- */

static bool inbox_put_ctl(struct nl_dp *dp, struct nl_task *t, uint32_t to);

/* A task whose next appliance is gone, when its client asked for it (SUBMIT flag reroute):
 * once, back into a live part of the tree: the top manager when its appliance is live, else
 * the first subtree root this appliance owns. It is routed from there as a new task would be
 * (machines of a gone appliance are gone in the load table). again: a task re-routed already
 * whose move (by a peer that did not know yet) to an appliance declared gone before that was
 * no second loss. false: answer machine_lost. */
static bool
reroute(struct io *io, struct nl_task *t, bool again)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	struct nl_dp_meta *mt = &dp->meta[t->aux];
	const struct nl_sched *s = dp->gen_rcu->s;
	uint32_t to = s->ops->top_mgr(s);

	if (!(mt->xa_flags & NL_XA_TF_REROUTE) || (!again && (mt->xa_flags & NL_XA_TF_REROUTED)))
		return false;
	if (xa->mgr_app[to] != xa->self && !xa->peer[xa->mgr_app[to]].live) {
		to = NL_NODE_NONE;
		for (unsigned int i = 0; i < xa->n_root && to == NL_NODE_NONE; i++)
			if (xa->root[i].app == xa->self)
				to = xa->root[i].mgr;
		if (to == NL_NODE_NONE)
			return false;
	}
	mt->xa_flags |= NL_XA_TF_REROUTED;
	mt->xa_rr_epoch = xa->gone_epoch;
	t->flags &= ~NL_MODEL_SUBS_MASK;
	t->hops++;
	if (!inbox_put_ctl(dp, t, to))
		return false;
	nl_atomic_store_relaxed(&xa->rerouted, xa->rerouted + 1);
	return true;
}

static void
hand_out(struct io *io, struct nl_task *t, uint32_t to_mgr)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	struct nl_dp_meta *mt = &dp->meta[t->aux];
	unsigned int app = xa->mgr_app[to_mgr];
	struct nl_xa_task r;
	uint64_t now = rte_rdtsc();

	if (!xa->peer[app].live) { /* its appliance is gone: nowhere to carry it */
		if (reroute(io, t, false))
			return;
		xa->peer[app].lost_tasks++;
		xa->lost_tasks++;
		fail_task(io, t, NL_REJECT_MACHINE_LOST);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.task_id = t->id;
	r.need = t->need;
	r.instr = (uint64_t)t->instr;
	r.data_bits = (uint64_t)t->data_bits;
	r.age_us = (uint64_t)((double)(now - mt->ingress_tsc) / (double)rte_get_tsc_hz() * 1e6);
	r.to_mgr = (uint16_t)to_mgr;
	r.n_split = t->n_split;
	r.hops = t->hops;
	r.cmd_id = mt->cmd_id;
	r.args_len = mt->args_len;
	r.flags = mt->xa_flags & NL_XA_TF_ALL;
	memcpy(r.args, mt->args, mt->args_len);
	if (mt->xa_state == XA_FOREIGN) { /* passing through: it stays the origin's */
		r.origin_app = mt->xa_origin;
		r.origin_token = mt->xa_token;
		r.origin_seq = mt->xa_seq;
		queue_task(io, app, &r);
		if (app != mt->xa_origin) { /* tell the origin whom to wait for (X1) */
			struct nl_xa_back mv = { .task_id = t->id,
						 .origin_token = mt->xa_token,
						 .origin_seq = mt->xa_seq,
						 .reason = NL_XA_REASON_MOVED,
						 .hops = t->hops,
						 .at_app = (uint16_t)app };

			queue_back(io, mt->xa_origin, &mv);
		}
		mt->xa_state = XA_OWN;
		rte_mempool_put(dp->pool, t);
		nl_atomic_store_relaxed(&xa->foreign_live, xa->foreign_live - 1);
		return;
	}
	mt->xa_state = XA_PARKED; /* ours: parked, in flight elsewhere (X1) */
	mt->xa_at = (uint16_t)app;
	mt->xa_seq = ++xa->seq;
	r.origin_app = (uint16_t)xa->self;
	r.origin_token = t->aux;
	r.origin_seq = mt->xa_seq;
	nl_atomic_store_relaxed(&xa->parked, xa->parked + 1);
	queue_task(io, app, &r);
}

/* Drain the proxies' inboxes (the pending bits other lcores set, as a manager lcore does). */
static unsigned int
drain_proxies(struct io *io)
{
	struct nl_xa *xa = io->dp->xa;
	struct nl_dp_lcore *px = xa->proxy;
	unsigned int work = 0, n_words = (px->n_mgr + 63) / 64;

	for (unsigned int w = 0; w < n_words; w++) {
		uint64_t bits;

		if (nl_atomic_load_relaxed(&px->pend[w]) == 0)
			continue;
		bits = nl_atomic_xchg_acquire(&px->pend[w], 0);
		while (bits != 0) {
			unsigned int b = (unsigned int)__builtin_ctzll(bits);
			struct nl_dp_mgr *mg = px->mgr[w * 64 + b];
			struct nl_dp_msg msg[32];
			unsigned int n;

			bits &= bits - 1;
			n = rte_ring_sc_dequeue_burst_elem(mg->inbox, msg, sizeof(msg[0]), 32, NULL);
			for (unsigned int i = 0; i < n; i++)
				hand_out(io, msg[i].t, mg->id);
			mg->tasks_in += n;
			work += n;
			if (rte_ring_count(mg->inbox) > 0)
				nl_dp_mgr_mark(mg);
		}
	}
	return work;
}

/* ---------------------------------------------------------------- hand-over in ---- */

static void
reject_back(struct io *io, const struct nl_xa_task *r, enum nl_reject_reason why)
{
	struct nl_xa_back b = { .task_id = r->task_id,
				.origin_token = r->origin_token,
				.origin_seq = r->origin_seq,
				.reason = (uint16_t)why,
				.hops = r->hops };

	queue_back(io, r->origin_app, &b);
}

static bool
inbox_put_ctl(struct nl_dp *dp, struct nl_task *t, uint32_t to)
{
	struct nl_dp_msg msg = { .t = t, .stamp_vt = nl_dp_now_vt(dp) };

	t->at_mgr = to;
	if (rte_ring_mp_enqueue_elem(dp->mgr[to].inbox, &msg, sizeof(msg)) != 0)
		return false;
	nl_dp_mgr_mark(&dp->mgr[to]);
	return true;
}

static struct nl_task *
parked_lookup(struct nl_xa *xa, uint32_t token, uint32_t seq, uint64_t id)
{
	struct nl_dp *dp = xa->dp;
	struct nl_dp_meta *mt;

	if (token >= dp->n_meta)
		return NULL;
	mt = &dp->meta[token];
	if (mt->task == NULL || mt->xa_state != XA_PARKED || mt->xa_seq != seq || mt->task->id != id)
		return NULL;
	return mt->task;
}

static void
unpark(struct nl_xa *xa, struct nl_task *t)
{
	xa->dp->meta[t->aux].xa_state = XA_OWN;
	nl_atomic_store_relaxed(&xa->parked, xa->parked - 1);
}

static void
hand_in(struct io *io, const struct nl_xa_task *r)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	struct nl_dp_meta *mt;
	struct nl_task *t;
	void *obj;

	if (r->to_mgr >= dp->n_mgr || r->origin_app >= xa->cfg.n_app) {
		xa->bad_task++;
		if (r->origin_app < xa->cfg.n_app && r->origin_app != xa->self)
			reject_back(io, r, NL_REJECT_BAD_TASK);
		return;
	}
	if (r->origin_app == xa->self) { /* one of ours comes back (e.g. up to our root) */
		t = parked_lookup(xa, r->origin_token, r->origin_seq, r->task_id);
		if (t == NULL) {
			xa->stale_back++;
			return;
		}
		unpark(xa, t);
		t->hops = r->hops;
		dp->meta[t->aux].xa_flags = r->flags;
		if (!inbox_put_ctl(dp, t, r->to_mgr))
			fail_task(io, t, NL_REJECT_OVERLOAD);
		return;
	}
	if (rte_mempool_get(dp->pool, &obj) != 0) {
		xa->overload_in++;
		reject_back(io, r, NL_REJECT_OVERLOAD);
		return;
	}
	t = obj;
	mt = &dp->meta[t->aux];
	t->id = r->task_id;
	t->need = r->need;
	t->instr = (double)r->instr;
	t->data_bits = (double)r->data_bits;
	t->n_split = r->n_split;
	t->t_arrive_vt = nl_dp_now_vt(dp) - (double)r->age_us * 1000.0 / dp->o.ns_per_vt;
	t->sched_wait_vt = 0;
	t->hops = r->hops;
	t->flags = 0;
	memset(&mt->client_ts_ns, 0, offsetof(struct nl_dp_meta, sub_mach) -
					     offsetof(struct nl_dp_meta, client_ts_ns));
	mt->active = 0;
	mt->ingress_tsc = rte_rdtsc() - (uint64_t)((double)r->age_us * 1e-6 *
						   (double)rte_get_tsc_hz());
	mt->cmd_id = r->cmd_id;
	mt->args_len = r->args_len;
	memcpy(mt->args, r->args, r->args_len);
	memset(mt->sub_mach, 0xff, sizeof(mt->sub_mach));
	mt->xa_state = XA_FOREIGN;
	mt->xa_flags = r->flags;
	mt->xa_origin = r->origin_app;
	mt->xa_token = r->origin_token;
	mt->xa_seq = r->origin_seq;
	nl_atomic_store_relaxed(&xa->foreign_live, xa->foreign_live + 1);
	if (!inbox_put_ctl(dp, t, r->to_mgr))
		fail_task(io, t, NL_REJECT_OVERLOAD); /* handed back failed */
}

static void
back_in(struct io *io, const struct nl_xa_back *b)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	struct nl_task *t = parked_lookup(xa, b->origin_token, b->origin_seq, b->task_id);
	struct nl_dp_meta *mt;

	if (t == NULL) { /* answered already (its appliance was declared gone), or forged */
		if (b->reason == NL_XA_REASON_MOVED) /* a note overtaken by the task's end */
			xa->late_moved++;
		else
			xa->stale_back++;
		return;
	}
	if (b->reason == NL_XA_REASON_MOVED) { /* still away: now at another appliance */
		if (b->at_app < xa->cfg.n_app && b->at_app != xa->self)
			dp->meta[t->aux].xa_at = b->at_app;
		xa->moved++;
		if (b->at_app < xa->cfg.n_app && !xa->peer[b->at_app].live) {
			/* moved to an appliance declared gone before the note arrived: lost there,
			 * unless it was gone already when we re-routed the task (the mover did not
			 * know yet): then it goes back into the tree again */
			const struct nl_dp_meta *tm = &dp->meta[t->aux];
			bool stale = (tm->xa_flags & NL_XA_TF_REROUTED) &&
				     xa->peer[b->at_app].gone_epoch <= tm->xa_rr_epoch;

			unpark(xa, t);
			if (!reroute(io, t, stale)) {
				xa->peer[b->at_app].lost_tasks++;
				xa->lost_tasks++;
				fail_task(io, t, NL_REJECT_MACHINE_LOST);
			}
		}
		return;
	}
	unpark(xa, t);
	mt = &dp->meta[t->aux];
	mt->n_done = (uint8_t)b->n_done;
	mt->status = b->status;
	t->hops = b->hops;
	t->flags &= ~NL_MODEL_SUBS_MASK;
	if (b->reason != 0)
		set_failed(t, (enum nl_reject_reason)b->reason);
	nl_dp_port_finish(io, t);
}

/* ---------------------------------------------------------------- membership ---- */

/* Appliance `app` is gone (silent past its records' lifetime, or restarted): what was parked
 * at it is answered REJECT machine_lost, now (X1: each exactly once). */
void
nl_xa_declare_lost_ctl(struct io *io, unsigned int app, const char *why)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	uint64_t n = 0, r = 0;

	flush_peer(io, app);
	xa->peer[app].gone_epoch = ++xa->gone_epoch;
	/* its machines are gone for the policies first: a task re-routed below must not be
	 * placed on them again (the lcore that takes it sees this snapshot) */
	nl_xa_install_ctl(io, app, true);
	for (unsigned int i = 0; i < dp->n_meta; i++) {
		struct nl_dp_meta *mt = &dp->meta[i];

		if (mt->xa_state != XA_PARKED || mt->xa_at != app || mt->task == NULL)
			continue;
		unpark(xa, mt->task);
		if (reroute(io, mt->task, false)) {
			r++;
			continue;
		}
		fail_task(io, mt->task, NL_REJECT_MACHINE_LOST);
		n++;
	}
	rtx_clear(&xa->peer[app]);
	xa->peer[app].lost_tasks += n;
	xa->lost_tasks += n;
	XA_LOG(WARNING, "appliance %s %s: %llu tasks parked there answered REJECT machine_lost, "
	       "%llu re-routed\n", xa->cfg.app[app].name, why, (unsigned long long)n,
	       (unsigned long long)r);
}

static void
peer_heard(struct io *io, unsigned int app, uint64_t inc, const struct nl_frame_addr *a)
{
	struct nl_xa *xa = io->dp->xa;
	struct xa_peer *p = &xa->peer[app];

	memcpy(p->mac, a->src_mac, 6);
	p->mac_known = true;
	p->last_rx_s = nl_xa_real_s();
	p->rx_dgrams++;
	if (p->inc != 0 && p->inc != inc) {
		nl_xa_declare_lost_ctl(io, app, "restarted");
		p->gone++;
		if (p->live)
			p->rejoined++;
	}
	if (p->inc != inc) { /* a new incarnation numbers its datagrams from 1 */
		p->rx_hi = 0;
		memset(p->rx_win, 0, sizeof(p->rx_win));
	}
	p->inc = inc;
	if (!p->live) {
		p->live = true;
		p->rejoined++;
		XA_LOG(INFO, "appliance %s rejoined\n", xa->cfg.app[app].name);
	}
}

/* ---------------------------------------------------------------- rounds ---- */

unsigned int
nl_xa_poll_ctl(struct io *io)
{
	struct nl_xa *xa = io->dp->xa;
	unsigned int work;
	uint64_t now = rte_rdtsc();

	if (xa == NULL)
		return 0;
	work = drain_proxies(io);
	if (now >= xa->next_check_tsc) { /* 100 times a second: is a gossip round due? */
		double s = nl_xa_real_s();

		xa->next_check_tsc = now + xa->check_cyc;
		for (unsigned int a = 0; a < xa->cfg.n_app; a++)
			if (a != xa->self)
				retransmit(io, a, now);
		if (s >= xa->next_gossip_s) {
			xa->next_gossip_s = s + xa->cfg.gossip_period_s;
			nl_xa_gossip_round_ctl(io, s);
			work++;
		}
	}
	for (unsigned int a = 0; a < xa->cfg.n_app; a++)
		if (xa->peer[a].out_task.n > 0 || xa->peer[a].out_back.n > 0 ||
		    xa->peer[a].out_ack.n > 0)
			flush_peer(io, a);
	return work;
}

void
nl_xa_rx_ctl(struct io *io, const struct nl_frame_addr *a, const uint8_t *pl, size_t plen)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	static struct nl_xa_msg m; /* control lcore only (X2); too large for its stack */
	enum nl_proto_err e;

	if (xa == NULL) {
		nl_stat_add_st(&dp->drops[NL_PROTO_E_TYPE], 1); /* not split: not ours to take */
		return;
	}
	if (a->dst_ip != dp->o.ip) { /* flooded by a switch to everyone (broadcast): not ours */
		nl_stat_add_st(&xa->not_ours, 1);
		return;
	}
	e = nl_xa_open(dp->o.auth ? &dp->o.auth_key : NULL, &io->rp, pl, plen, io->now_ns, &m);
	if (e != NL_PROTO_OK) {
		nl_stat_add_st(&dp->drops[e], 1);
		return;
	}
	/* the sender must be a configured appliance, speaking from its configured address */
	if (m.from_app >= xa->cfg.n_app || m.from_app == xa->self ||
	    xa->cfg.app[m.from_app].ip != a->src_ip || xa->cfg.app[m.from_app].port != a->src_port) {
		nl_stat_add_st(&xa->bad_peer, 1);
		return;
	}
	peer_heard(io, m.from_app, m.incarnation, a);
	if (m.dgram_seq != 0) { /* numbered: acknowledge (again, if a duplicate), act once */
		queue_ack(io, m.from_app, m.dgram_seq);
		if (dedup_seen(&xa->peer[m.from_app], m.dgram_seq)) {
			nl_stat_add_st(&xa->peer[m.from_app].dup_rx, 1);
			return;
		}
	}
	switch (m.type) {
	case NL_XA_MSG_HANDOVER:
		xa->peer[m.from_app].rx_tasks += m.n;
		for (unsigned int i = 0; i < m.n; i++)
			hand_in(io, &m.u.task[i]);
		break;
	case NL_XA_MSG_HANDBACK:
		xa->peer[m.from_app].rx_backs += m.n;
		for (unsigned int i = 0; i < m.n; i++)
			back_in(io, &m.u.back[i]);
		break;
	case NL_XA_MSG_ACK:
		for (unsigned int i = 0; i < m.n; i++)
			acked(&xa->peer[m.from_app], m.u.ack[i]);
		break;
	default:
		nl_xa_summary_in_ctl(io, &m);
		break;
	}
}

void
nl_xa_drain_ctl(struct nl_dp *dp)
{
	struct nl_xa *xa = dp->xa;
	uint64_t n = 0;

	if (xa == NULL || dp->meta == NULL)
		return;
	for (unsigned int i = 0; i < dp->n_meta; i++) {
		struct nl_dp_meta *mt = &dp->meta[i];

		if (mt->xa_state == XA_PARKED && mt->task != NULL) {
			mt->xa_state = XA_OWN;
			rte_mempool_put(dp->pool, mt->task);
			n++;
		}
	}
	xa->parked = 0;
	nl_stat_add_st(&dp->failed, n); /* I1: what a stop leaves unfinished is reported failed */
}

/* ---------------------------------------------------------------- telemetry ---- */

/* ---------------------------------------------------------------- placement by load ---- */

unsigned int
nl_xa_place_ctl(struct io *io, const struct nl_dp_sub *rec, unsigned int n_rec)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = dp->xa;
	struct nl_task *t = rec[0].t;
	struct nl_dp_meta *mt = &dp->meta[t->aux];
	unsigned int n = nl_model_task_subs_left(t), app;
	uint32_t m = rec[0].mach;

	/* a decision above the split (on summaries) chose machines of another appliance for
	 * all the task's sub-tasks: the task goes, once, to the manager that dispatches to the
	 * first of them there */
	if (rec[0].sub != 0 || mt->active || n == 0 || n > n_rec || m >= dp->n_mach ||
	    io->alive[m] || !xa->mach_inst[m] || (mt->xa_flags & NL_XA_TF_PLACED) ||
	    (t->flags & NL_TF_FAILED))
		return 0;
	app = xa->mach_app[m];
	if (!xa->peer[app].live)
		return 0;
	for (unsigned int j = 1; j < n; j++)
		if (rec[j].t != t || rec[j].sub != j || rec[j].mach >= dp->n_mach ||
		    xa->mach_app[rec[j].mach] != app || !xa->mach_inst[rec[j].mach])
			return 0; /* not all there: its other sub-tasks are placed here */
	for (unsigned int j = 1; j < n; j++)
		nl_load_mark_applied_ctl(dp->load, rec[j].mgr, rec[j].seq);
	mt->xa_flags |= NL_XA_TF_PLACED;
	t->flags &= ~NL_MODEL_SUBS_MASK;
	t->hops++;
	nl_atomic_store_relaxed(&xa->placed_out, xa->placed_out + 1);
	hand_out(io, t, xa->mach_mgr[m]);
	return n;
}

const struct nl_mach_load *
nl_xa_local_load_ctl(struct nl_xa *xa, const struct nl_mach_load *w, unsigned int n_mach)
{
	if (xa == NULL)
		return w;
	for (unsigned int m = 0; m < n_mach; m++) {
		xa->local_load[m] = w[m];
		if (xa->mach_app[m] != xa->self)
			xa->local_load[m].busy_until_vt = NL_MACH_GONE_VT;
	}
	return xa->local_load;
}

bool
nl_xa_keeps_load(const struct nl_xa *xa, uint32_t m)
{
	return xa != NULL && xa->mach_inst[m];
}
