/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale-out (nl_xa.h): group-load summaries by gossip (managers/gossip), and telemetry.
 * Membership is SWIM's (nl_xa_swim.c), not the summaries': a summary's age is measured on the
 * receiver's monotonic clock from its receipt, and a record dated in the future beyond
 * NL_XA_SUM_AHEAD_MAX_S is refused (counted summaries_future_refused).
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
#include "nl_port_priv.h"
#include "nl_gossip.h"
#include "nl_policy.h"
#include "nl_rng.h"
#include "nl_xa_core.h"

/* ---------------------------------------------------------------- summaries ---- */

static void
make_summary(struct nl_port *io, struct xa_root *r, double now_s, struct nl_gossip_rec *g)
{
	struct nl_dp *dp = io->dp;
	const struct nl_dp_gen *gen = dp->gen_rcu;
	double now_vt = nl_dp_now_vt(dp), backlog = 0;
	uint32_t live = 0, idle = 0, n_sub = 0;
	uint64_t mask = 0;

	for (unsigned int j = 0; j < r->n_mach; j++) {
		uint32_t m = r->mach[j];
		const struct nl_mach_load *w = nl_load_entry_ctl(dp->load, m);

		if (!io->alive[m] || w == NULL)
			continue;
		live++;
		n_sub += w->n_sub;
		if (w->busy_until_vt > now_vt)
			backlog += w->busy_until_vt - now_vt;
		else {
			idle++;
			mask |= gen->mach[m].res.set | gen->mach[m].res.any;
		}
	}
	memset(g, 0, sizeof(*g));
	g->src = r->src; /* its own id whoever makes it (a standby that adopted it, #36) */
	g->cores = live;
	g->free_cores = idle;
	g->mem_mb = n_sub;
	g->arch = (uint16_t)r->mgr;
	g->state = NL_GOSSIP_UP;
	g->created_s = now_s;
	g->lifetime_s = nl_xa_of(io->dp)->cfg.gone_after_s;
	g->aux[0] = nl_xa_of(io->dp)->inc;
	g->aux[1] = mask;
	g->aux[2] = live > 0 ? (uint64_t)(backlog / live) : 0; /* mean backlog [us] */
	r->created_s = r->rx_s = now_s;
	r->rx_tsc = rte_rdtsc();
	r->live = live;
	r->idle = idle;
	r->n_sub = n_sub;
	r->free_mask = mask;
	r->backlog_us = (uint32_t)g->aux[2];
}

/* Root r's summary (remote) into the working load table: of its machines that its appliance
 * owns, `idle` idle (those whose resources the free mask holds first), `live - idle` busy for
 * the mean backlog of a busy machine less the summary's age, with the queued sub-tasks spread
 * over them, the rest gone; everything gone when `gone`. Exactly what a policy reading load
 * needs (free capacity per resource, queue depth), as old as the summary. */
static void
install_root(struct nl_port *io, struct xa_root *r, bool gone)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	const struct nl_dp_gen *gen = dp->gen_rcu;
	double now_vt = nl_dp_now_vt(dp);
	/* its age on our monotonic clock since we received it (never the sender's clock) */
	double age_vt = nl_xa_root_age_s(r) * 1e9 / dp->o.ns_per_vt;
	uint32_t busy = r->live > r->idle ? r->live - r->idle : 0;
	double left_vt = busy > 0 ? (double)r->backlog_us * r->live / busy - age_vt : 0;
	uint32_t n_idle = 0, n_busy = 0;

	if (left_vt < 1)
		left_vt = 1;
	for (int pass = 0; pass < 2; pass++)
		for (unsigned int j = 0; j < r->n_mach; j++) {
			uint32_t m = r->mach[j];
			struct nl_mach_load *w = nl_load_entry_ctl(dp->load, m);
			uint64_t res = gen->mach[m].res.set | gen->mach[m].res.any;
			bool fits = (res & ~r->free_mask) == 0;

			if (w == NULL || xa->mach_app[m] != r->app || xa->mach_app[m] == xa->self)
				continue;
			if (pass == 0) { /* the first pass places the idle machines, by resources */
				xa->mach_inst[m] = 2; /* not placed yet */
				if (gone || !fits || n_idle == r->idle)
					continue;
				n_idle++;
				w->busy_until_vt = 0;
				w->n_sub = 0;
				xa->mach_inst[m] = 1;
				continue;
			}
			if (xa->mach_inst[m] != 2)
				continue;
			xa->mach_inst[m] = 1;
			if (gone) {
				w->busy_until_vt = NL_MACH_GONE_VT;
				w->n_sub = 0;
			} else if (n_idle < r->idle) {
				n_idle++;
				w->busy_until_vt = 0;
				w->n_sub = 0;
			} else if (n_busy < busy) {
				w->n_sub = r->n_sub / busy + (n_busy < r->n_sub % busy);
				w->busy_until_vt = now_vt + left_vt;
				n_busy++;
			} else {
				w->busy_until_vt = NL_MACH_GONE_VT;
				w->n_sub = 0;
			}
		}
	if (!gone)
		r->n_installed++;
	xa->installs++;
}

void
nl_xa_install_ctl(struct nl_port *io, unsigned int app, bool gone)
{
	struct nl_xa *xa = nl_xa_of(io->dp);

	for (unsigned int i = 0; i < xa->n_root; i++)
		if (xa->root[i].app != xa->self && (app >= NL_XA_MAX_APPS || xa->root[i].app == app) &&
		    (gone || xa->root[i].created_s > 0))
			install_root(io, &xa->root[i], gone);
	nl_load_publish_ctl(io->dp->load);
}

static struct xa_root *
root_of_src(struct nl_xa *xa, uint32_t src)
{
	for (unsigned int i = 0; i < xa->n_root; i++)
		if (xa->root[i].src == src)
			return &xa->root[i];
	return NULL;
}

void
nl_xa_gossip_round_ctl(struct nl_port *io, double now_s)
{
	struct nl_xa *xa = nl_xa_of(io->dp);

	for (unsigned int i = 0; i < xa->n_root; i++) {
		struct nl_gossip_rec g;

		if (xa->root[i].app != xa->self)
			continue;
		make_summary(io, &xa->root[i], now_s, &g);
		if (xa->root[i].src == xa->self * 64u)
			nl_gossip_set_self_st(xa->view, &g);
		else
			nl_gossip_merge_st(xa->view, &g, now_s);
	}
	nl_gossip_expire_st(xa->view, now_s);
	xa->grec_n = nl_gossip_collect_st(xa->view, &xa->gcfg, now_s, xa->grec, xa->gcap);
}

void
nl_xa_gossip_push_ctl(struct nl_port *io)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	size_t n = xa->grec_n;
	struct nl_xa_msg m;

	/* push every valid record to `fanout` appliances drawn at random (gone ones included,
	 * so one that comes back hears from us) */
	memset(&m, 0, sizeof(m));
	m.type = NL_XA_MSG_SUMMARY;
	nl_xa_prep_ctl(xa, &m);
	for (unsigned int f = 0; f < xa->cfg.fanout && f + 1 < xa->cfg.n_app; f++) {
		/* fan-out >= peers: everyone once, in turn; else a random peer per draw */
		unsigned int a = xa->cfg.fanout + 1 >= xa->cfg.n_app ?
					 (xa->self + 1 + f) % xa->cfg.n_app :
					 (unsigned int)(nl_rng_u64(&xa->rng) % (xa->cfg.n_app - 1));

		if (xa->cfg.fanout + 1 < xa->cfg.n_app && a >= xa->self)
			a++;
		for (size_t i = 0; i < n;) {
			m.n = 0;
			while (i < n && m.n < NL_XA_MAX_SUMS) {
				const struct nl_gossip_rec *g = &xa->grec[i++];
				struct nl_xa_sum *s = &m.u.sum[m.n++];

				s->src = g->src;
				s->cores = g->cores;
				s->free_cores = g->free_cores;
				s->mem_mb = g->mem_mb;
				s->arch = g->arch;
				s->state = g->state;
				s->flags = g->flags;
				s->created_s = g->created_s;
				s->lifetime_s = g->lifetime_s;
				memcpy(s->aux, g->aux, sizeof(s->aux));
			}
			nl_xa_send_ctl(io, a, &m);
			xa->sum_tx += m.n;
		}
	}
	xa->gossip_rounds++;
}

void
nl_xa_summary_in_ctl(struct nl_port *io, const struct nl_xa_msg *m)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	double now_s = nl_xa_real_s();
	uint64_t now_tsc = rte_rdtsc();
	size_t n_ack = 0, n_new = 0, n = 0;
	bool fresh = false;

	for (unsigned int i = 0; i < m->n; i++) {
		const struct nl_xa_sum *s = &m->u.sum[i];
		struct nl_gossip_rec *g;

		if (nl_xa_sum_from_future(s, now_s, NL_XA_SUM_AHEAD_MAX_S)) {
			/* newer wins: it would outlive every later record of its source */
			nl_stat_add_st(&xa->sum_future, 1);
			continue;
		}
		g = &xa->grec[n++];
		memset(g, 0, sizeof(*g));
		g->src = s->src;
		g->cores = s->cores;
		g->free_cores = s->free_cores;
		g->mem_mb = s->mem_mb;
		g->arch = s->arch;
		g->state = s->state;
		g->flags = s->flags;
		g->created_s = s->created_s;
		g->lifetime_s = s->lifetime_s;
		memcpy(g->aux, s->aux, sizeof(g->aux));
	}
	if (n > 0)
		nl_gossip_receive_st(xa->view, xa->grec, n, now_s, xa->gack, &n_ack, &n_new);
	xa->sum_rx += n;
	for (unsigned int i = 0; i < m->n; i++) {
		const struct nl_xa_sum *s = &m->u.sum[i];
		struct xa_root *r = root_of_src(xa, s->src);
		unsigned int app = r != NULL ? r->app : NL_XA_MAX_APPS;

		/* newer wins, by its source's own clock (one host's dates compared with each
		 * other only); the age is ours: time since receipt. Only the records its
		 * appliance now makes count (#36 standby: a root moves to the standby and back;
		 * a record of the other, or of an earlier incarnation, still relayed, does not) */
		if (r == NULL || r->app == xa->self || s->created_s <= r->created_s ||
		    nl_xa_sum_from_future(s, now_s, NL_XA_SUM_AHEAD_MAX_S) ||
		    (xa->peer[app].inc != 0 && s->aux[0] != xa->peer[app].inc))
			continue;
		r->created_s = s->created_s;
		r->rx_s = now_s;
		r->rx_tsc = now_tsc;
		r->live = s->cores;
		r->idle = s->free_cores;
		r->n_sub = s->mem_mb;
		r->free_mask = s->aux[1];
		r->backlog_us = (uint32_t)s->aux[2];
		r->n_rx++;
		/* membership is SWIM's: a record installs load only while its appliance is live */
		if (app < xa->cfg.n_app && xa->peer[app].live && s->state == NL_GOSSIP_UP) {
			install_root(io, r, false); /* the policies read it from now on */
			fresh = true;
		}
	}
	if (fresh)
		nl_load_publish_ctl(io->dp->load);
}


static int
tel_appliances(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nl_dp *dp = nl_dp_tel_dp();
	struct nl_xa *xa = dp != NULL ? nl_xa_of(dp) : NULL;
	double now_s = nl_xa_real_s();
	enum { K_NAME, K_IP, K_SWIM, K_SBY, K_HOLDER, K_LIVE, K_TOUT, K_TIN, K_BOUT, K_BIN, K_DOUT, K_DIN, K_LOST,
	       K_GONE, K_REJ, K_HEARD, K_RETX, K_DUP, K_ACKED, K_OVF, K_SINC, K_SUSP, K_REFU,
	       K_SDEAD, K_HELD, K_PREF, K_HOLD, K_KEPT, K_HON, K_N };
	static const char *const key[K_N] = { "name", "ip", "swim_state", "standby",
					      "subtree_at", "live", "tasks_out",
					      "tasks_in", "handbacks_out", "handbacks_in",
					      "datagrams_out", "datagrams_in", "lost_tasks", "gone",
					      "rejoined", "last_heard_ms", "retransmitted",
					      "duplicates_in", "acked", "unacked_overflow",
					      "swim_incarnation", "suspected", "refuted",
					      "swim_dead", "held", "pair_refused",
					      "dead_hold", "hold_kept", "held_on" };
	static const char *const swim_name[3] = { "alive", "suspect", "dead" };
	struct rte_tel_data *a[K_N];

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (xa == NULL)
		return 0;
	rte_tel_data_add_dict_string(d, "self", xa->cfg.app[xa->self].name);
	rte_tel_data_add_dict_u64(d, "incarnation", xa->inc);
	rte_tel_data_add_dict_u64(d, "parked", nl_atomic_load_relaxed(&xa->parked));
	rte_tel_data_add_dict_u64(d, "foreign", nl_atomic_load_relaxed(&xa->foreign_live));
	rte_tel_data_add_dict_u64(d, "lost_tasks_total", nl_atomic_load_relaxed(&xa->lost_tasks));
	rte_tel_data_add_dict_u64(d, "stale_handback", nl_atomic_load_relaxed(&xa->stale_back));
	rte_tel_data_add_dict_u64(d, "bad_peer", nl_atomic_load_relaxed(&xa->bad_peer));
	rte_tel_data_add_dict_u64(d, "paired", xa->cfg.paired); /* #36: appliance keys */
	rte_tel_data_add_dict_string(d, "entry", xa->cfg.entry_tree ? "tree" : "local"); /* #36 */
	rte_tel_data_add_dict_u64(d, "dead_hold_ms", (uint64_t)(xa->cfg.dead_hold_s * 1e3));
	rte_tel_data_add_dict_u64(d, "entry_local", nl_atomic_load_relaxed(&xa->entry_local));
	rte_tel_data_add_dict_u64(d, "entry_policy", nl_atomic_load_relaxed(&xa->entry_policy));
	rte_tel_data_add_dict_u64(d, "bad_task", nl_atomic_load_relaxed(&xa->bad_task));
	rte_tel_data_add_dict_u64(d, "overload_in", nl_atomic_load_relaxed(&xa->overload_in));
	rte_tel_data_add_dict_u64(d, "not_ours", nl_atomic_load_relaxed(&xa->not_ours));
	rte_tel_data_add_dict_u64(d, "moved", nl_atomic_load_relaxed(&xa->moved));
	rte_tel_data_add_dict_u64(d, "late_moved", nl_atomic_load_relaxed(&xa->late_moved));
	rte_tel_data_add_dict_u64(d, "unsent", nl_atomic_load_relaxed(&xa->unsent));
	rte_tel_data_add_dict_u64(d, "moved_dead", nl_atomic_load_relaxed(&xa->moved_dead));
	/* #36 "asked before machine_lost" (nl_xa_relay.c) */
	rte_tel_data_add_dict_u64(d, "relayed", nl_atomic_load_relaxed(&xa->relayed));
	rte_tel_data_add_dict_u64(d, "told_direct", nl_atomic_load_relaxed(&xa->told_direct));
	rte_tel_data_add_dict_u64(d, "relay_bad", nl_atomic_load_relaxed(&xa->relay_bad));
	rte_tel_data_add_dict_u64(d, "worker_words", nl_atomic_load_relaxed(&xa->worker_words));
	rte_tel_data_add_dict_u64(d, "late_words", nl_atomic_load_relaxed(&xa->late_words));
	rte_tel_data_add_dict_u64(d, "asked_ran", nl_atomic_load_relaxed(&xa->asked_ran));
	rte_tel_data_add_dict_u64(d, "awaiting", nl_atomic_load_relaxed(&xa->awaiting));
	/* #36 a client's resend at the standby (nl_xa_resend.c) */
	rte_tel_data_add_dict_u64(d, "client_words", nl_atomic_load_relaxed(&xa->client_words));
	rte_tel_data_add_dict_u64(d, "resends_held", nl_atomic_load_relaxed(&xa->resends_held));
	rte_tel_data_add_dict_u64(d, "resend_holding",
				  nl_atomic_load_relaxed(&xa->resend_holding));
	rte_tel_data_add_dict_u64(d, "resends_run", nl_atomic_load_relaxed(&xa->resends_run));
	rte_tel_data_add_dict_u64(d, "resends_answered",
				  nl_atomic_load_relaxed(&xa->resends_answered));
	rte_tel_data_add_dict_u64(d, "resends_passed", nl_atomic_load_relaxed(&xa->resends_passed));
	rte_tel_data_add_dict_u64(d, "resends_tied", nl_atomic_load_relaxed(&xa->resends_tied));
	rte_tel_data_add_dict_u64(d, "resends_ended", nl_atomic_load_relaxed(&xa->resends_ended));
	rte_tel_data_add_dict_u64(d, "resends_not_held",
				  nl_atomic_load_relaxed(&xa->resends_not_held));
	rte_tel_data_add_dict_u64(d, "crossed_told", nl_atomic_load_relaxed(&xa->crossed_told));
	rte_tel_data_add_dict_u64(d, "client_passed", nl_atomic_load_relaxed(&xa->client_passed));
	rte_tel_data_add_dict_u64(d, "gossip_rounds", nl_atomic_load_relaxed(&xa->gossip_rounds));
	rte_tel_data_add_dict_u64(d, "summaries_tx", nl_atomic_load_relaxed(&xa->sum_tx));
	rte_tel_data_add_dict_u64(d, "summaries_rx", nl_atomic_load_relaxed(&xa->sum_rx));
	rte_tel_data_add_dict_u64(d, "summaries_installed", nl_atomic_load_relaxed(&xa->installs));
	rte_tel_data_add_dict_u64(d, "placed_out", nl_atomic_load_relaxed(&xa->placed_out));
	rte_tel_data_add_dict_u64(d, "rerouted", nl_atomic_load_relaxed(&xa->rerouted));
	rte_tel_data_add_dict_u64(d, "detoured", nl_atomic_load_relaxed(&xa->detoured));
	rte_tel_data_add_dict_u64(d, "adoptions", nl_atomic_load_relaxed(&xa->adoptions));
	rte_tel_data_add_dict_u64(d, "adopted_returned", nl_atomic_load_relaxed(&xa->returned));
	rte_tel_data_add_dict_u64(d, "adopted_in", nl_atomic_load_relaxed(&xa->adopted_in));
	rte_tel_data_add_dict_u64(d, "farm_no_machine",
				  nl_atomic_load_relaxed(&xa->farm_no_machine));
	rte_tel_data_add_dict_u64(d, "farm_kept", nl_atomic_load_relaxed(&xa->farm_kept));
	rte_tel_data_add_dict_u64(d, "test_dropped", nl_atomic_load_relaxed(&xa->test_dropped));
	rte_tel_data_add_dict_u64(d, "summaries_future_refused",
				  nl_atomic_load_relaxed(&xa->sum_future));
	/* #36 failback = no (docs/scale-out.md "Failback or not") */
	rte_tel_data_add_dict_u64(d, "failback", xa->cfg.app[xa->self].failback);
	rte_tel_data_add_dict_u64(d, "settling", nl_atomic_load_relaxed(&xa->settling));
	rte_tel_data_add_dict_u64(d, "left_at_standby",
				  nl_atomic_load_relaxed(&xa->left_at_standby));
	rte_tel_data_add_dict_u64(d, "taken_back", nl_atomic_load_relaxed(&xa->taken_back));
	rte_tel_data_add_dict_u64(d, "entry_taken", nl_atomic_load_relaxed(&xa->entry_taken));
	rte_tel_data_add_dict_u64(d, "hold_msgs_in", nl_atomic_load_relaxed(&xa->hold_rx));
	rte_tel_data_add_dict_u64(d, "hold_msgs_out", nl_atomic_load_relaxed(&xa->hold_tx));
	rte_tel_data_add_dict_u64(d, "swim_incarnation", nl_atomic_load_relaxed(&xa->swim_self_inc));
	rte_tel_data_add_dict_u64(d, "swim_lhm", nl_atomic_load_relaxed(&xa->swim_lhm));
	rte_tel_data_add_dict_u64(d, "swim_refuted_self",
				  nl_atomic_load_relaxed(&xa->swim_refuted_self));
	rte_tel_data_add_dict_u64(d, "swim_probes", nl_atomic_load_relaxed(&xa->swim_probes));
	rte_tel_data_add_dict_u64(d, "swim_probes_failed",
				  nl_atomic_load_relaxed(&xa->swim_probes_failed));
	rte_tel_data_add_dict_u64(d, "swim_msgs_in", nl_atomic_load_relaxed(&xa->swim_msgs_in));
	rte_tel_data_add_dict_u64(d, "swim_msgs_out", nl_atomic_load_relaxed(&xa->swim_msgs_out));
	rte_tel_data_add_dict_u64(d, "swim_bad", nl_atomic_load_relaxed(&xa->swim_bad));
	rte_tel_data_add_dict_u64(d, "swim_stalls", nl_atomic_load_relaxed(&xa->swim_stalls));
	rte_tel_data_add_dict_u64(d, "swim_reconnects",
				  nl_atomic_load_relaxed(&xa->swim_reconnects));
	for (unsigned int k = 0; k < K_N; k++) {
		a[k] = rte_tel_data_alloc();
		if (a[k] == NULL) {
			while (k > 0)
				rte_tel_data_free(a[--k]);
			return -ENOMEM;
		}
		rte_tel_data_start_array(a[k], k <= K_HOLDER ? RTE_TEL_STRING_VAL :
					 k == K_HEARD ? RTE_TEL_INT_VAL : RTE_TEL_U64_VAL);
	}
	for (unsigned int i = 0; i < xa->cfg.n_app; i++) {
		const struct xa_peer *p = &xa->peer[i];
		char ip[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &xa->cfg.app[i].ip, ip, sizeof(ip));
		rte_tel_data_add_array_string(a[K_NAME], xa->cfg.app[i].name);
		rte_tel_data_add_array_string(a[K_IP], ip);
		rte_tel_data_add_array_string(a[K_SWIM], i == xa->self ? "alive" :
					      swim_name[nl_atomic_load_relaxed(&p->swim_state) % 3]);
		rte_tel_data_add_array_string(a[K_SBY], xa->cfg.app[i].standby < 0 ? "" :
					      xa->cfg.app[xa->cfg.app[i].standby].name);
		rte_tel_data_add_array_string(a[K_HOLDER],
					      xa->cfg.app[nl_atomic_load_relaxed(&xa->holder[i]) %
							   xa->cfg.n_app].name);
		rte_tel_data_add_array_u64(a[K_LIVE], i == xa->self || p->live);
		rte_tel_data_add_array_u64(a[K_TOUT], nl_atomic_load_relaxed(&p->tx_tasks));
		rte_tel_data_add_array_u64(a[K_TIN], nl_atomic_load_relaxed(&p->rx_tasks));
		rte_tel_data_add_array_u64(a[K_BOUT], nl_atomic_load_relaxed(&p->tx_backs));
		rte_tel_data_add_array_u64(a[K_BIN], nl_atomic_load_relaxed(&p->rx_backs));
		rte_tel_data_add_array_u64(a[K_DOUT], nl_atomic_load_relaxed(&p->tx_dgrams));
		rte_tel_data_add_array_u64(a[K_DIN], nl_atomic_load_relaxed(&p->rx_dgrams));
		rte_tel_data_add_array_u64(a[K_LOST], nl_atomic_load_relaxed(&p->lost_tasks));
		rte_tel_data_add_array_u64(a[K_GONE], nl_atomic_load_relaxed(&p->gone));
		rte_tel_data_add_array_u64(a[K_REJ], nl_atomic_load_relaxed(&p->rejoined));
		rte_tel_data_add_array_int(a[K_HEARD], p->last_rx_s > 0 ?
						       (int)((now_s - p->last_rx_s) * 1e3) : -1);
		rte_tel_data_add_array_u64(a[K_RETX], nl_atomic_load_relaxed(&p->retx));
		rte_tel_data_add_array_u64(a[K_DUP], nl_atomic_load_relaxed(&p->dup_rx));
		rte_tel_data_add_array_u64(a[K_ACKED], nl_atomic_load_relaxed(&p->acked));
		rte_tel_data_add_array_u64(a[K_OVF], nl_atomic_load_relaxed(&p->rtx_overflow));
		rte_tel_data_add_array_u64(a[K_SINC], i == xa->self ?
						      nl_atomic_load_relaxed(&xa->swim_self_inc) :
						      nl_atomic_load_relaxed(&p->swim_inc));
		rte_tel_data_add_array_u64(a[K_SUSP], nl_atomic_load_relaxed(&p->suspected));
		rte_tel_data_add_array_u64(a[K_REFU], nl_atomic_load_relaxed(&p->refuted));
		rte_tel_data_add_array_u64(a[K_SDEAD], nl_atomic_load_relaxed(&p->swim_declared_dead));
		rte_tel_data_add_array_u64(a[K_HOLD], nl_atomic_load_relaxed(&p->hold_tsc) != 0);
		rte_tel_data_add_array_u64(a[K_KEPT], nl_atomic_load_relaxed(&p->hold_kept));
		rte_tel_data_add_array_u64(a[K_HON], nl_atomic_load_relaxed(&p->held_on));
		rte_tel_data_add_array_u64(a[K_HELD], nl_atomic_load_relaxed(&p->held));
		rte_tel_data_add_array_u64(a[K_PREF], nl_atomic_load_relaxed(&p->pair_refused));
	}
	for (unsigned int k = 0; k < K_N; k++)
		rte_tel_data_add_dict_container(d, key[k], a[k], 0);
	return 0;
}

static int
tel_summaries(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nl_dp *dp = nl_dp_tel_dp();
	struct nl_xa *xa = dp != NULL ? nl_xa_of(dp) : NULL;
	struct rte_tel_data *a[10];
	static const char *const key[10] = { "root", "appliance", "live", "idle", "n_sub",
					     "backlog_us", "free_res_mask", "age_ms", "received",
					     "installed" };

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (xa == NULL)
		return 0;
	for (unsigned int k = 0; k < 10; k++) {
		a[k] = rte_tel_data_alloc();
		if (a[k] == NULL) {
			while (k > 0)
				rte_tel_data_free(a[--k]);
			return -ENOMEM;
		}
		rte_tel_data_start_array(a[k], k <= 1 ? RTE_TEL_STRING_VAL : RTE_TEL_U64_VAL);
	}
	for (unsigned int i = 0; i < xa->n_root; i++) {
		const struct xa_root *r = &xa->root[i];
		char name[64];
		double age = nl_xa_root_age_s(r) * 1e3; /* since receipt, our clock (#36) */

		dp->gen_rcu->s->ops->mgr_name(dp->gen_rcu->s, r->mgr, name,
					       sizeof(name));
		rte_tel_data_add_array_string(a[0], name);
		rte_tel_data_add_array_string(a[1], xa->cfg.app[r->app].name);
		rte_tel_data_add_array_u64(a[2], r->live);
		rte_tel_data_add_array_u64(a[3], r->idle);
		rte_tel_data_add_array_u64(a[4], r->n_sub);
		rte_tel_data_add_array_u64(a[5], r->backlog_us);
		rte_tel_data_add_array_u64(a[6], r->free_mask);
		rte_tel_data_add_array_u64(a[7], age >= 0 ? (uint64_t)age : UINT64_MAX);
		rte_tel_data_add_array_u64(a[8], r->app == xa->self ? 0 : r->n_rx);
		rte_tel_data_add_array_u64(a[9], r->app == xa->self ? 0 : r->n_installed);
	}
	for (unsigned int k = 0; k < 10; k++)
		rte_tel_data_add_dict_container(d, key[k], a[k], 0);
	return 0;
}

void
nl_xa_telemetry_init(struct nl_dp *dp)
{
	if (nl_xa_of(dp) == NULL)
		return;
	nl_dp_tel_register("/nlevel/appliances", tel_appliances,
				   "Scale-out: each peer (SWIM state, incarnation, suspicions, "
				   "live, tasks and hand-backs each way, datagrams, lost tasks).");
	nl_dp_tel_register("/nlevel/summaries", tel_summaries,
				   "Scale-out: the group-load summary of every subtree root "
				   "(own: made; remote: received by gossip), its age [ms] since receipt.");
}

