/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale-out membership (nl_xa_core.h): the SWIM + Lifeguard failure detector of
 * managers/swim (Das et al. 2002; Dadgar et al. 2018) between the appliances of a split tree.
 * One detector per appliance, members = the configured appliances in file order. The control
 * lcore drives it with its own monotonic clock (never another host's: nl_swim.h I1) and its
 * messages travel as inter-appliance datagrams of type 20 (nl_xa_proto.h), sealed like the
 * others. Its verdicts are only flagged here (xa->swim_dead_pend / swim_alive_pend): nl_xa.c,
 * above, declares a DEAD appliance gone and takes a returning one back, so no call runs up.
 *
 * The clock. The detector's clock is CLOCK_MONOTONIC, except that one reading advances it
 * by at most XA_SWIM_STEP_MAX_NS: while this process does not run (SIGSTOP, the host holding
 * it), the detector's time stands nearly still, so a paused appliance that resumes does not
 * end, at once, the suspicion timers it held (that is how it declared its healthy peer gone
 * in issue #36's table) and answers the suspicions of itself first (the control loop reads
 * its port before its timers).
 *
 * Reconnection. The detector probes and gossips to non-dead members only (SWIM §4.3). After
 * a partition or a pause longer than the suspicion, both sides may hold the other DEAD and
 * never speak again; so every protocol period (swim_period_ms) each DEAD peer is sent a GOSSIP carrying
 * its verdict (it refutes: a higher incarnation, SWIM §4.2) and our own alive (which a side
 * that declared us dead accepts once we refuted).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_log.h>

#include "nl_atomic.h"
#include "nl_swim.h"
#include "nl_xa_core.h"

_Static_assert(NL_XA_SWIM_MAX_UPD == NL_SWIM_MAX_UPDATES, "one SWIM message fits one datagram");
_Static_assert(NL_XA_MAX_APPS <= NL_SWIM_MAX_MEMBERS, "every appliance can be a member");

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The detector's clock: monotonic, one reading advancing it by XA_SWIM_STEP_MAX_NS at most. */
static uint64_t
swim_clock(struct nl_xa *xa)
{
	uint64_t now = mono_ns(), d = now > xa->mono_last_ns ? now - xa->mono_last_ns : 0;

	if (xa->mono_last_ns != 0 && d > XA_SWIM_STEP_MAX_NS) {
		d = XA_SWIM_STEP_MAX_NS;
		xa->swim_stalls++;
	}
	xa->mono_last_ns = now;
	xa->swim_now_ns += d;
	return xa->swim_now_ns;
}

/* nl_swim_send_fn: one SWIM message as a type-20 datagram to appliance `to`. */
static int
swim_send(void *ctx, uint32_t to, const struct nl_swim_msg *msg)
{
	struct nl_xa *xa = ctx;
	static struct nl_xa_msg m; /* control lcore only (X2); too large for its stack */

	if (to >= xa->cfg.n_app || to == xa->self || msg->n_upd > NL_XA_SWIM_MAX_UPD)
		return -EINVAL;
	memset(&m, 0, offsetof(struct nl_xa_msg, u));
	memset(&m.u.swim, 0, sizeof(m.u.swim));
	m.type = NL_XA_MSG_SWIM;
	nl_xa_prep_ctl(xa, &m);
	m.n = (uint16_t)(1u + msg->n_upd);
	m.u.swim.type = msg->type;
	m.u.swim.n_upd = msg->n_upd;
	m.u.swim.target = msg->target;
	m.u.swim.seq = msg->seq;
	for (unsigned int i = 0; i < msg->n_upd; i++) {
		m.u.swim.upd[i].id = msg->upd[i].id;
		m.u.swim.upd[i].incarnation = msg->upd[i].incarnation;
		m.u.swim.upd[i].from = msg->upd[i].from;
		m.u.swim.upd[i].state = msg->upd[i].state;
	}
	nl_xa_send_ctl(xa->swim_io, to, &m);
	return 0;
}

/* nl_swim_change_fn: keep a copy for telemetry, flag verdicts for nl_xa.c. */
static void
swim_change(void *ctx, uint32_t id, enum nl_swim_state old_state, enum nl_swim_state new_state,
	    uint32_t incarnation, uint64_t now_ns)
{
	struct nl_xa *xa = ctx;
	struct xa_peer *p;
	uint64_t bit = UINT64_C(1) << id;

	(void)now_ns;
	if (id >= xa->cfg.n_app || id == xa->self)
		return;
	p = &xa->peer[id];
	nl_atomic_store_relaxed(&p->swim_state, (uint32_t)new_state);
	nl_atomic_store_relaxed(&p->swim_inc, incarnation);
	switch (new_state) {
	case NL_SWIM_SUSPECT:
		nl_stat_add_st(&p->suspected, 1);
		XA_LOG(INFO, "appliance %s suspected (SWIM, incarnation %u)\n",
		       xa->cfg.app[id].name, incarnation);
		break;
	case NL_SWIM_DEAD:
		nl_stat_add_st(&p->swim_declared_dead, 1);
		xa->swim_dead_pend |= bit;
		xa->swim_alive_pend &= ~bit;
		break;
	case NL_SWIM_ALIVE:
		if (old_state == NL_SWIM_SUSPECT) {
			nl_stat_add_st(&p->refuted, 1);
			XA_LOG(INFO, "appliance %s refuted its suspicion (incarnation %u)\n",
			       xa->cfg.app[id].name, incarnation);
		}
		if (old_state == NL_SWIM_DEAD)
			xa->swim_alive_pend |= bit;
		break;
	}
}

static void
swim_publish(struct nl_xa *xa)
{
	const struct nl_swim_stats *st = nl_swim_stats(xa->swim);

	nl_atomic_store_relaxed(&xa->swim_self_inc, nl_swim_incarnation_of(xa->swim, xa->self));
	nl_atomic_store_relaxed(&xa->swim_lhm, nl_swim_lhm(xa->swim));
	nl_atomic_store_relaxed(&xa->swim_refuted_self, st->refuted);
	nl_atomic_store_relaxed(&xa->swim_msgs_in, st->msgs_in);
	nl_atomic_store_relaxed(&xa->swim_msgs_out, st->msgs_out);
	nl_atomic_store_relaxed(&xa->swim_probes, st->probes);
	nl_atomic_store_relaxed(&xa->swim_probes_failed, st->probes_failed);
}

static int
swim_start(struct nl_port *io)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct nl_swim_cfg c;
	int rc;

	if (xa->swim != NULL)
		return 0;
	nl_swim_cfg_default(&c, xa->cfg.n_app, xa->self);
	c.probe_interval_ns = (uint64_t)(xa->cfg.swim_period_s * 1e9);
	c.probe_timeout_ns = (uint64_t)(xa->cfg.swim_timeout_s * 1e9);
	c.suspicion_mult = xa->cfg.swim_suspicion_mult;
	c.indirect_checks = xa->cfg.swim_indirect;
	c.seed = xa->inc;
	c.send = swim_send;
	c.on_change = swim_change;
	c.ctx = xa;
	xa->swim_io = io;
	rc = nl_swim_create(&c, swim_clock(xa), &xa->swim);
	if (rc != 0) {
		static bool said; /* control lcore only (X2) */

		if (!said)
			XA_LOG(ERR, "SWIM failure detector not created (%d): no appliance will be "
			       "declared gone\n", rc);
		said = true;
		xa->swim = NULL;
		return rc;
	}
	xa->swim_next_ns = 0;
	xa->swim_reconnect_ns = xa->swim_now_ns + (uint64_t)(xa->cfg.swim_period_s * 1e9);
	return 0;
}

/* Tell every DEAD peer its verdict, with our own alive (see the file's comment). */
static void
swim_reconnect(struct nl_xa *xa)
{
	struct nl_swim_msg msg;
	uint32_t me = xa->self;

	for (unsigned int a = 0; a < xa->cfg.n_app; a++) {
		if (a == me || nl_swim_state_of(xa->swim, a) != NL_SWIM_DEAD)
			continue;
		memset(&msg, 0, sizeof(msg));
		msg.type = NL_SWIM_GOSSIP;
		msg.from = me;
		msg.target = a;
		msg.n_upd = 2;
		msg.upd[0] = (struct nl_swim_update){ .id = a, .from = me, .state = NL_SWIM_DEAD,
						      .incarnation = nl_swim_incarnation_of(xa->swim, a) };
		msg.upd[1] = (struct nl_swim_update){ .id = me, .from = me, .state = NL_SWIM_ALIVE,
						      .incarnation = nl_swim_incarnation_of(xa->swim, me) };
		swim_send(xa, a, &msg);
		nl_stat_add_st(&xa->swim_reconnects, 1);
	}
}

int
nl_xa_swim_tick_ctl(struct nl_port *io)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	uint64_t now;
	int rc = swim_start(io);

	if (rc != 0)
		return rc;
	xa->swim_io = io;
	now = swim_clock(xa);
	if (now >= xa->swim_next_ns)
		xa->swim_next_ns = nl_swim_tick_st(xa->swim, now);
	if (now >= xa->swim_reconnect_ns) {
		xa->swim_reconnect_ns = now + (uint64_t)(xa->cfg.swim_period_s * 1e9);
		swim_reconnect(xa);
	}
	swim_publish(xa);
	return 0;
}

int
nl_xa_swim_rx_ctl(struct nl_port *io, const struct nl_xa_msg *m)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct nl_swim_msg msg;
	int rc = swim_start(io);

	if (rc != 0)
		return rc;
	xa->swim_io = io;
	memset(&msg, 0, sizeof(msg));
	msg.type = m->u.swim.type;
	msg.n_upd = m->u.swim.n_upd;
	msg.from = m->from_app;
	msg.target = m->u.swim.target;
	msg.seq = m->u.swim.seq;
	for (unsigned int i = 0; i < msg.n_upd && i < NL_SWIM_MAX_UPDATES; i++) {
		msg.upd[i].id = m->u.swim.upd[i].id;
		msg.upd[i].incarnation = m->u.swim.upd[i].incarnation;
		msg.upd[i].from = m->u.swim.upd[i].from;
		msg.upd[i].state = m->u.swim.upd[i].state;
	}
	rc = nl_swim_recv_st(xa->swim, swim_clock(xa), &msg);
	if (rc != 0)
		nl_stat_add_st(&xa->swim_bad, 1);
	xa->swim_next_ns = nl_swim_next_deadline(xa->swim);
	swim_publish(xa);
	return rc;
}
