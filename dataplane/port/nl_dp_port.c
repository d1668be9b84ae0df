/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port mode (nl_port_serve): the main lcore is the I/O and control lcore. It receives frames
 * (SUBMIT from clients; HELLO, LOAD, DONE, BYE from nlevel-workers; ARP requests for our
 * address), hands new tasks to the entry manager's inbox, sends the sub-tasks the managers
 * assigned as DISPATCH frames to the workers that hold the chosen machines, and answers
 * ACCEPT / REJECT / COMPLETE. Machines are the configuration's slots, claimed by a worker's
 * HELLO; a worker that says BYE or is silent past the timeout is removed, and the sub-tasks it
 * held go to another live machine of the group, or fail (REJECT reason machine_lost). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <urcu/urcu-qsbr.h>

#include "nl_atomic.h"
#include "nl_dp_farm.h" /* issue #15: task farms */
#include "nl_dp_sec.h"
#include "nl_match.h"
#include "nl_port_priv.h"
#include "nl_xa_proto.h" /* nl_xa_is_xa(): the type range the extension takes */

#define DP_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)
#define REPLAY_SENDERS 4096u /* clients and workers remembered at once */

/* Where a sub-task of t goes when its machine is lost: the policy's own choice
 * (ops->replace, the cost model of its first pick) on the control's exact load table, where
 * machines that left are NL_MACH_GONE_VT. NO_SLOT when no live machine can serve t. */
static uint32_t
replace_sub(struct nl_port *io, const struct nl_task *t)
{
	struct nl_dp *dp = io->dp;
	const struct nl_sched *s = dp->gen_rcu->s;
	uint32_t m;
	const struct nl_mach_load *wl = dp->load->w_load;

	/* hook up (scale-out): machines of other appliances (summaries) cannot take it here */
	if (nl_port_ext(io) != NULL)
		wl = io->o.ext->local_load_ctl(dp->ext, wl, dp->n_mach);
	/* issue #15 hook: a matched task is re-placed among its eligible machines only */
	if ((nl_match_handle(t) != 0 ?
		     nl_match_replace(s, t, wl, nl_dp_now_vt(dp), &m) :
		     s->ops->replace(s, t, wl, nl_dp_now_vt(dp), &m)) != 0 ||
	    m >= dp->n_mach || !io->alive[m])
		return NO_SLOT;
	return m;
}

/* Sub-task `sub` of t ended or was given up: mark it, and end the task with its last one. */
static void
sub_settle(struct nl_port *io, struct nl_task *t, unsigned int sub)
{
	io->meta[t->aux].done_mask |= UINT64_C(1) << sub;
	if (nl_model_task_sub_done(t))
		nl_dp_port_finish(io, t);
}

/* Sub-task `sub` of t cannot be placed anywhere: t fails with machine_lost (after the rest). */
static void
sub_lost(struct nl_port *io, struct nl_task *t, unsigned int sub)
{
	t->flags |= NL_TF_FAILED | ((uint32_t)NL_REJECT_MACHINE_LOST << NL_TF_REASON_SHIFT);
	sub_settle(io, t, sub);
}

static void
send_dispatch(struct nl_port *io, struct nl_task *t, unsigned int sub, uint32_t m)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_meta *mt = &io->meta[t->aux];
	const struct nl_dp_worker *w = &io->workers[io->slot_worker[m]];
	struct nl_msg msg = { .type = NL_MSG_DISPATCH };
	struct nl_msg_dispatch *d = &msg.u.dispatch;
	struct nl_mach_load *wl = nl_load_entry_ctl(dp->load, m);
	double now = nl_dp_now_vt(dp);
	/* the booking estimate of the workers' time scale (nominal speed: bg load is off) */
	double dur = nl_model_sub_vt(&dp->bg, &dp->gen_rcu->mach[m], m, t, now) * dp->work_scale_us;

	mt->sub_mach[sub] = m;
	if (sub == 0) { /* #39: the dispatch latency histogram (I/O lcore, not the managers') */
		uint64_t us = (uint64_t)((double)(rte_rdtsc() - mt->ingress_tsc) * io->us_per_cyc);
		unsigned int b = us == 0 ? 0 : 64u - (unsigned int)__builtin_clzll(us);

		nl_stat_add_st(&io->c.disp_hist_us[b < NL_PORT_DISP_HIST ? b : NL_PORT_DISP_HIST - 1], 1);
		nl_stat_add_st(&io->c.disp_sum_us, us);
	}
	if (wl != NULL) {
		wl->busy_until_vt = (wl->busy_until_vt > now ? wl->busy_until_vt : now) + dur;
		wl->n_sub++;
	}
	d->task_id = t->id;
	d->instr = (uint64_t)(t->instr / t->n_split);
	d->data_bits = (uint64_t)(t->data_bits / t->n_split);
	d->mach = io->slot_local[m];
	d->token = t->aux;
	d->sub = (uint16_t)sub;
	d->n_split = t->n_split;
	d->cmd_id = mt->cmd_id;
	d->args_len = mt->args_len;
	memcpy(d->args, mt->args, mt->args_len);
	d->principal = nl_dp_sec_principal_id(io, mt->principal); /* #35: the worker's policy */
	nl_dp_farm_dispatch(io, t, m, d); /* issue #15 hook: the worker's id of a named command */
	nl_dp_relay_origin(io, t, d);      /* #36: another appliance's task: its origin */
	/* #16: its key; #34: a farm task's once its DISPATCH record is on disk */
	nl_dp_farm_send_worker(io, &msg, w->principal, w->mac, w->ip, w->port);
}

/* Sub-tasks the managers assigned: send each to its machine's worker. */
static unsigned int
drain_subs(struct nl_port *io)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_sub rec[64];
	unsigned int n = rte_ring_sc_dequeue_burst_elem(dp->sub_ring, rec, sizeof(rec[0]), 64, NULL);

	for (unsigned int i = 0; i < n; i++) {
		struct nl_task *t = rec[i].t;
		struct nl_dp_meta *mt = &io->meta[t->aux];
		uint32_t m = rec[i].mach;

		nl_load_mark_applied_ctl(dp->load, rec[i].mgr, rec[i].seq);
		if (nl_port_ext(io) != NULL && rec[i].sub == 0) {
			/* hook up (scale-out): a task placed on another appliance by summaries */
			unsigned int k = io->o.ext->place_ctl(io, &rec[i], n - i);

			if (k > 0) {
				i += k - 1;
				continue;
			}
		}
		if ((t->flags & NL_TF_FAILED) || nl_dp_farm_withdraw(io, t)) { /* no machine; #33 */
			sub_settle(io, t, rec[i].sub); /* not sent: the task ends with its last */
			continue;
		}
		mt->active = 1;
		if (m >= dp->n_mach || !io->alive[m]) {
			m = replace_sub(io, t);
			if (m == NO_SLOT) {
				sub_lost(io, t, rec[i].sub);
				continue;
			}
			nl_stat_add_st(&io->c.redispatched, 1);
		}
		if (!nl_dp_farm_park(io, t, rec[i].sub, &m)) /* #33: waits for an idle slot */
			send_dispatch(io, t, rec[i].sub, m);
	}
	return n;
}

static struct nl_task *
done_lookup(struct nl_port *io, const struct nl_msg_done *d, const struct nl_frame_addr *a)
{
	struct nl_dp *dp = io->dp;
	const struct nl_dp_meta *mt;
	const struct nl_dp_worker *w;
	struct nl_task *t;
	uint32_t m;

	if (d->token >= dp->n_pool || d->relay != NL_RELAY_NONE) /* #36: relayed: not ours */
		return NULL;
	mt = &io->meta[d->token];
	t = mt->task;
	if (!mt->active || t == NULL || t->id != d->task_id || d->sub >= t->n_split ||
	    (mt->done_mask >> d->sub) & 1)
		return NULL;
	m = mt->sub_mach[d->sub];
	if (m >= dp->n_mach || io->slot_worker[m] == NO_SLOT || io->slot_local[m] != d->mach)
		return NULL;
	w = &io->workers[io->slot_worker[m]];
	if (w->ip != a->src_ip || w->port != a->src_port)
		return NULL;
	return t;
}

static void
on_done(struct nl_port *io, const struct nl_msg_done *d, const struct nl_frame_addr *a)
{
	struct nl_dp *dp = io->dp;
	struct nl_task *t = done_lookup(io, d, a);
	struct nl_dp_meta *mt;
	struct nl_mach_load *wl;

	if (t == NULL) { /* late DONE of a re-dispatched sub-task, or a forged one */
		if (!nl_dp_relay_done(io, d, a)) /* #36: else a failed-over worker's word */
			nl_stat_add_st(&io->c.stale_done, 1);
		return;
	}
	mt = &io->meta[t->aux];
	io->workers[io->slot_worker[mt->sub_mach[d->sub]]].last_seen_tsc = rte_rdtsc();
	wl = nl_load_entry_ctl(dp->load, mt->sub_mach[d->sub]);
	if (wl != NULL && wl->n_sub > 0)
		wl->n_sub--;
	nl_dp_farm_done(io, t, mt->sub_mach[d->sub], d); /* #33: slot free, end record */
	mt->n_done++;
	if (d->status != 0 && mt->status == 0)
		mt->status = d->status;
	sub_settle(io, t, d->sub);
}

/* Publish the control's alive[] and speeds as a new generation (RCU) and fix the load table:
 * a machine that left looks infinitely busy, one that joined starts idle. */
static int
publish_machines(struct nl_port *io, const uint32_t *set_m, const double *set_speed, unsigned int n)
{
	struct nl_dp *dp = io->dp;
	const struct nl_dp_gen *g = dp->gen_rcu;
	struct nl_machine *mach = malloc(g->n_mach * sizeof(*mach));
	int rc;

	if (mach == NULL)
		return -ENOMEM;
	memcpy(mach, g->mach, g->n_mach * sizeof(*mach));
	for (unsigned int i = 0; i < n; i++)
		if (set_m[i] < g->n_mach && set_speed[i] > 0)
			mach[set_m[i]].speed_ips = set_speed[i];
	rc = nl_dp_gen_publish_ctl(dp, mach, io->alive, dp->n_mach);
	free(mach);
	if (rc != 0)
		return rc;
	nl_dp_farm_machines(io); /* issue #15 hook: match table of the new generation */
	for (uint32_t m = 0; m < dp->n_mach; m++) {
		struct nl_mach_load *w = nl_load_entry_ctl(dp->load, m);

		if (nl_port_ext(io) != NULL && io->o.ext->keeps_load(dp->ext, m))
			continue; /* hook up: another appliance's machine, kept by its summaries */
		if (!io->alive[m]) {
			w->busy_until_vt = NL_MACH_GONE_VT;
			w->n_sub = 0;
		} else if (w->busy_until_vt >= NL_MACH_GONE_VT) {
			w->busy_until_vt = 0;
		}
	}
	return nl_load_publish_ctl(dp->load);
}

static void
redispatch_from(struct nl_port *io, const uint8_t *gone)
{
	struct nl_dp *dp = io->dp;

	for (unsigned int i = 0; i < dp->n_pool; i++) {
		struct nl_dp_meta *mt = &io->meta[i];
		struct nl_task *t = mt->task;

		if (!mt->active || t == NULL)
			continue;
		for (unsigned int s = 0; s < t->n_split && mt->active; s++) {
			uint32_t m = mt->sub_mach[s], alt;

			if ((mt->done_mask >> s) & 1 || m >= dp->n_mach || !gone[m])
				continue;
			if ((t->flags & NL_TF_FAILED) || nl_dp_farm_withdraw(io, t)) {
				sub_settle(io, t, s); /* failed or cancelled (#33): not run again */
				continue;
			}
			if (nl_match_handle(t) != 0) {
				/* #34: a farm command may have started there (its worker's keeper
				 * killed it): not run a second time behind the user's back; the
				 * task fails machine_lost, and --retries makes a numbered attempt */
				sub_lost(io, t, s);
				continue;
			}
			alt = replace_sub(io, t);
			if (alt == NO_SLOT) {
				sub_lost(io, t, s);
				continue;
			}
			nl_stat_add_st(&io->c.redispatched, 1);
			if (!nl_dp_farm_park(io, t, s, &alt)) /* #33: a busy slot is not doubled up */
				send_dispatch(io, t, s, alt);
		}
	}
}

static void
remove_worker(struct nl_port *io, uint32_t wi, const char *why)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_worker *w = &io->workers[wi];
	uint8_t *gone = calloc(dp->n_mach, 1);

	if (!w->live || gone == NULL) {
		free(gone);
		return;
	}
	nl_dp_farm_worker_gone(io, wi); /* issue #15 hook: its commands and records leave */
	for (unsigned int i = 0; i < w->n_mach; i++) {
		uint32_t m = w->slot[i];

		if (m == NO_SLOT)
			continue;
		gone[m] = 1;
		io->alive[m] = 0;
		io->slot_worker[m] = NO_SLOT;
	}
	w->live = false;
	publish_machines(io, NULL, NULL, 0);
	redispatch_from(io, gone);
	free(gone);
	nl_stat_add_st(&io->c.workers_left, 1);
	DP_LOG(INFO, "worker %u left (%s)\n", w->worker_id, why);
}

static void
on_hello(struct nl_port *io, const struct nl_msg_hello *h, const struct nl_frame_addr *a)
{
	struct nl_msg r = { .type = NL_MSG_HELLO };
	int32_t wi = nl_dp_live_worker(io, a);
	struct nl_dp_worker *w;
	uint32_t setm[NL_PROTO_MAX_MACH];
	double sets[NL_PROTO_MAX_MACH];
	unsigned int ns = 0, n_other = 0; /* #34: machines whose only slots are another appliance's */
	const bool fresh = wi < 0; /* #36: the reply says so (NL_HELLO_F_NEW) */

	if (h->flags & NL_HELLO_F_REPLY)
		return;
	if (wi < 0) {
		/* The same worker id from the same host (and principal) at a new port, its old
		 * address silent for over 1 s (a live worker speaks every 0.5 s at most: LOAD, or
		 * its heartbeat thread while its loop is held): the worker restarted. Its previous
		 * life is removed now, not at --worker-timeout: until then both lives' machines took
		 * tasks, and a farm task dispatched to the dead one failed machine_lost at the
		 * timeout, after the worker had joined again (seen: chaos_contain_v2's cancel check,
		 * a task submitted just after the restart). A second live worker of the same id (a
		 * misconfiguration) still speaks, so it is left alone: no flapping between two. */
		uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();

		for (unsigned int k = 0; k < io->n_workers; k++) {
			const struct nl_dp_worker *o = &io->workers[k];

			if (o->live && o->worker_id == h->worker_id && o->ip == a->src_ip &&
			    o->port != a->src_port && o->principal == io->principal &&
			    now > o->last_seen_tsc && now - o->last_seen_tsc > hz)
				remove_worker(io, k, "restarted: its HELLO came from a new port, the "
						     "old one silent over 1 s");
		}
		for (wi = 0; (unsigned int)wi < io->n_workers && io->workers[wi].live; wi++)
			;
		if ((unsigned int)wi == MAX_WORKERS)
			return;
		if ((unsigned int)wi == io->n_workers)
			io->n_workers++;
		w = &io->workers[wi];
		memset(w, 0, sizeof(*w));
		w->live = true;
		w->worker_id = h->worker_id;
		w->principal = io->principal; /* #16 */
		w->ip = a->src_ip;
		w->port = a->src_port;
		memcpy(w->mac, a->src_mac, 6);
		w->n_mach = h->n_mach;
		for (unsigned int i = 0; i < h->n_mach; i++)
			w->slot[i] = NO_SLOT;
		nl_dp_claim_slots(io, wi, h, setm, sets, &ns, &n_other);
		/* #35: a principal's HELLO that gets no slot keeps no record (a flood fills none) */
		if (ns == 0 && io->sec != NULL && io->principal != NL_PRINCIPAL_NONE) {
			w->live = false;
		} else {
			publish_machines(io, setm, sets, ns);
			nl_stat_add_st(&io->c.workers_joined, 1);
			DP_LOG(INFO, "worker %u joined with %u of its %u machines\n", w->worker_id, ns,
			       h->n_mach);
			if (ns < h->n_mach) /* #34: say why, on both sides (its HELLO reply) */
				DP_LOG(WARNING,
				       "worker %u: %u of its %u machines got no slot here (%u match only "
				       "slots of another appliance of the split: start that worker "
				       "with --appliance set to it; the rest: no free slot of their "
				       "resource vector); they take no task\n",
				       w->worker_id, h->n_mach - ns, h->n_mach, n_other);
		}
	} else {
		/* A HELLO again (idempotent): machines without a slot try once more; slots not ours
		 * before may be now (#36: a standby takes the workers of a subtree it adopted) */
		nl_dp_claim_slots(io, wi, h, setm, sets, &ns, &n_other);
		if (ns > 0) {
			publish_machines(io, setm, sets, ns);
			DP_LOG(INFO, "worker %u: %u more of its %u machines got a slot here\n",
			       io->workers[wi].worker_id, ns, h->n_mach);
		}
	}
	w = &io->workers[wi];
	w->last_seen_tsc = rte_rdtsc();
	r.u.hello.worker_id = w->worker_id;
	r.u.hello.n_mach = (uint16_t)w->n_mach;
	r.u.hello.flags = (uint16_t)(NL_HELLO_F_REPLY | (fresh ? NL_HELLO_F_NEW : 0));
	for (unsigned int i = 0; i < w->n_mach; i++)
		r.u.hello.mach[i].slot = w->slot[i];
	nl_dp_io_send(io, &r, w->principal, w->mac, w->ip, w->port); /* #16: its key */
}

static void
on_submit(struct nl_port *io, const struct nl_msg_submit *s, const struct nl_frame_addr *a)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_meta tmp = { 0 }, *mt;
	struct nl_task *t;
	void *obj;

	tmp.principal = io->principal;
	tmp.client_ts_ns = s->client_ts_ns;
	tmp.client_ip = a->src_ip;
	tmp.client_port = a->src_port;
	memcpy(tmp.client_mac, a->src_mac, 6);
	if (nl_dp_draining(io)) { /* #34: drain on stop, no new task (nl_dp_drain.c I2) */
		nl_dp_drain_refused(io);
		nl_dp_port_reply(io, &tmp, s->task_id, NL_MSG_REJECT, NL_REJECT_SHUTDOWN, 0, 0, 0);
		return;
	}
	if (io->sec != NULL && !io->sec_admitting) { /* #16: caps, then the fair queue */
		nl_dp_sec_submit(io, s, a);
		return;
	}
	if ((s->need & ~nl_res_mask(dp->m.n_res)) != 0) {
		nl_stat_add_st(&dp->io_rejected, 1);
		nl_dp_port_reply(io, &tmp, s->task_id, NL_MSG_REJECT, NL_REJECT_BAD_TASK, 0, 0, 0);
		return;
	}
	if (rte_mempool_get(dp->pool, &obj) != 0) {
		if ((io->sec_again = io->sec_admitting)) /* #35: it stays in its fair queue */
			return;
		nl_stat_add_st(&dp->io_rejected, 1);
		nl_dp_port_reply(io, &tmp, s->task_id, NL_MSG_REJECT, NL_REJECT_OVERLOAD, 0, 0, 0);
		return;
	}
	t = obj;
	mt = &io->meta[t->aux];
	t->id = s->task_id;
	t->need = s->need;
	t->instr = (double)s->instr;
	t->data_bits = (double)s->data_bits;
	t->n_split = s->n_split;
	t->t_arrive_vt = nl_dp_now_vt(dp);
	t->sched_wait_vt = 0;
	t->hops = 0;
	t->flags = 0;
	mt->client_ts_ns = s->client_ts_ns;
	mt->principal = io->principal; /* #16 */
	mt->ingress_tsc = rte_rdtsc();
	mt->client_ip = a->src_ip;
	mt->client_port = a->src_port;
	memcpy(mt->client_mac, a->src_mac, 6);
	mt->cmd_id = s->cmd_id;
	mt->args_len = s->args_len;
	memcpy(mt->args, s->args, s->args_len);
	mt->n_done = 0;
	mt->status = 0;
	mt->done_mask = 0;
	mt->active = 0;
	memset(mt->sub_mach, 0xff, sizeof(mt->sub_mach));
	if (nl_port_ext(io) != NULL) /* hook up (scale-out): the SUBMIT's re-route flag */
		io->o.ext->task_new_ctl(io, t, s->flags);
	nl_dp_farm_task(io, t, mt); /* issue #15 hook: the task's match handle (0 = none) */
	uint64_t rnd = nl_port_xorshift(&io->rnd);
	uint32_t at = nl_port_ext(io) != NULL && io->o.ext->entry_ctl != NULL ?
			      io->o.ext->entry_ctl(io, t, rnd) : NL_NODE_NONE; /* #36: local entry */

	if (at != NL_PORT_ENTRY_TAKEN &&
	    (at != NL_NODE_NONE ? nl_dp_ingress_at_st(io->lc, t, at, t->t_arrive_vt) :
				  nl_dp_ingress_st(io->lc, t, t->t_arrive_vt, rnd)) != 0) {
		rte_mempool_put(dp->pool, t);
		if ((io->sec_again = io->sec_admitting)) /* #35: it stays in its fair queue */
			return;
		nl_stat_add_st(&dp->io_rejected, 1);
		nl_dp_port_reply(io, &tmp, s->task_id, NL_MSG_REJECT, NL_REJECT_OVERLOAD, 0, 0, 0);
		return;
	}
	mt->held = 1; /* #34: answered once, whatever ends it (nl_dp_drain.c I1) */
	nl_stat_add_st(&dp->io_accepted, 1);
	/* The task may already be decided on another lcore: reply from the copy, not from t. */
	nl_dp_port_reply(io, &tmp, s->task_id, NL_MSG_ACCEPT, 0, 0, 0, 0);
}

static void
handle_frame(struct nl_port *io, const uint8_t *f, size_t len)
{
	struct nl_frame_addr a;
	const uint8_t *pl;
	size_t plen;
	struct nl_msg m;
	enum nl_proto_err e;
	int32_t wi;

	if (nl_dp_io_arp(io, f, len))
		return;
	e = nl_dp_io_parse(io, f, len, &a, &pl, &plen);
	if (e == NL_PROTO_OK && plen >= 4 && nl_xa_is_xa(pl)) { /* types 16..23: scale-out */
		nl_stat_add_st(&io->c.rx_appliance, 1);
		if (nl_port_ext(io) != NULL) /* hook up */
			io->o.ext->rx_ctl(io, &a, pl, plen);
		else /* not split: not ours to take */
			nl_stat_add_st(&io->c.drops[NL_PROTO_E_TYPE], 1);
		return;
	}
	/* --key: MAC, body, (principals: rights) and replay window; only authentic, fresh frames
	 * reach the handlers below. Without --key: version 1 only. */
	if (e == NL_PROTO_OK && io->sec == NULL)
		e = nl_proto_open(io->o.auth ? &io->o.auth_key : NULL, &io->rp, pl, plen, io->now_ns,
				  &m);
	else if (e == NL_PROTO_OK && !nl_dp_sec_receive(io, pl, plen, &a, &m))
		return; /* #16: the principal's key, rights, replay window; counted (drops, denied) */
	if (e != NL_PROTO_OK) {
		nl_stat_add_st(&io->c.drops[e], 1); /* counted per reason and dropped */
		nl_dp_io_refused(io, &a, e); /* #33: a wrong --key is logged (once a second) */
		return;
	}
	if (nl_farm_type(m.type)) { /* issue #15 hook: task-farm messages (nl_dp_farm.c) */
		struct nl_msg_submit fs;

		if (nl_dp_farm_frame(io, &m, &a, &fs))
			on_submit(io, &fs, &a);
		nl_dp_farm_submit_end(io);
		return;
	}
	nl_stat_add_st(&io->c.rx_msgs[m.type], 1);
	switch (m.type) {
	case NL_MSG_SUBMIT:
		on_submit(io, &m.u.submit, &a);
		break;
	case NL_MSG_DONE: /* #34: acknowledged, settling or not: the worker resends no more */
		on_done(io, &m.u.done, &a);
		nl_dp_io_done_ack(io, &m.u.done, &a);
		break;
	case NL_MSG_HELLO:
		on_hello(io, &m.u.hello, &a);
		break;
	case NL_MSG_LOAD:
		nl_dp_live_load(io, &m.u.hello, &a); /* LOAD: the load table */
		break;
	case NL_MSG_BYE:
		wi = nl_dp_live_worker(io, &a);
		if (wi >= 0)
			remove_worker(io, (uint32_t)wi, "bye");
		break;
	default: /* ACCEPT, REJECT, COMPLETE, DISPATCH are ours to send, not to receive */
		nl_stat_add_st(&io->c.drops[NL_PROTO_E_TYPE], 1);
		break;
	}
}

/* #34: tasks of the journal not ended at the last stop, admitted again as if their
 * submitter had resent them (nl_dp_farm_requeue_next()); a few per turn. How many. */
static unsigned int
requeue(struct nl_port *io)
{
	uint32_t saved = io->principal, principal;
	struct nl_frame_addr a;
	struct nl_msg m;
	unsigned int n = 0;

	while (n < 16 && !nl_dp_draining(io) && nl_dp_farm_requeue_next(io, &m, &a, &principal)) {
		struct nl_msg_submit fs;

		io->principal = principal;
		if (nl_dp_farm_frame(io, &m, &a, &fs))
			on_submit(io, &fs, &a);
		nl_dp_farm_submit_end(io);
		io->principal = saved;
		nl_dp_farm_requeue_done(io);
		n++;
	}
	return n;
}

/* #33: a parked sub-task of a cancelled farm task ends without running (REJECT cancelled). */
static void
farm_withdrawn(struct nl_port *io, struct nl_task *t, unsigned int sub)
{
	nl_dp_farm_withdraw(io, t);
	sub_settle(io, t, sub);
}

/* Free what port_create() built (NULL parts accepted). */
static void
port_free(struct nl_port *io)
{
	if (io == NULL)
		return;
	nl_dp_farm_fini(io); /* issue #15 hook */
	free(io->slot_worker);
	free(io->slot_local);
	free(io->alive);
	free(io->lc);
	free(io->meta);
	free(io->workers);
	rte_ring_free(io->req_ring);
	if (io->o.auth)
		nl_replay_free(&io->rp);
	sodium_memzero(&io->seal, sizeof(io->seal));
	nl_dp_sec_summary(io, stdout); /* #16 */
	nl_dp_sec_free(io);
	sodium_memzero(&io->o.auth_key, sizeof(io->o.auth_key));
	free(io);
}

/* The port's state for dp: machines without workers, per-task records, farm, replay window. */
static int
port_create(struct nl_port **out, struct nl_dp *dp, const struct nl_port_opts *o)
{
	struct nl_port *io = calloc(1, sizeof(*io));
	int rc;

	*out = io;
	if (io == NULL)
		return -ENOMEM;
	io->dp = dp;
	io->us_per_cyc = 1e6 / (double)rte_get_tsc_hz();
	io->o = *o;
	io->rnd = 0x9e3779b97f4a7c15ull;
	io->principal = NL_PRINCIPAL_NONE;
	io->workers = calloc(MAX_WORKERS, sizeof(*io->workers));
	io->meta = calloc(dp->n_pool, sizeof(*io->meta));
	io->slot_worker = malloc(dp->n_mach * sizeof(uint32_t));
	io->slot_local = calloc(dp->n_mach, sizeof(uint32_t));
	io->alive = calloc(dp->n_mach, 1);
	io->lc = calloc(1, sizeof(*io->lc));
	io->req_ring = rte_ring_create_elem("nl_req", sizeof(struct nl_dp_req), 64, SOCKET_ID_ANY,
					    RING_F_SC_DEQ);
	if (io->workers == NULL || io->meta == NULL || io->slot_worker == NULL ||
	    io->slot_local == NULL || io->alive == NULL || io->lc == NULL || io->req_ring == NULL)
		return -ENOMEM;
	for (unsigned int i = 0; i < dp->n_pool; i++)
		io->meta[i].task = dp->pool_task[i];
	memset(io->slot_worker, 0xff, dp->n_mach * sizeof(uint32_t));
	io->lc->dp = dp;
	rc = nl_dp_farm_init(io); /* issue #15 hook */
	if (rc != 0)
		return rc;
	nl_dp_farm_set_port_fns(io, send_dispatch, farm_withdrawn); /* #33: the pull */
	if (io->o.auth) {
		nl_auth_tx_init(&io->seal, &io->o.auth_key);
		io->now_ns = nl_auth_now_ns();
		/* #16: principals: senders bounded per principal, each evicts its own (nl_replay.c) */
		rc = io->o.principals != NULL ? nl_principals_replay_init(io->o.principals, &io->rp) :
						nl_replay_init(&io->rp, REPLAY_SENDERS);
	}
	return rc;
}

int
nl_port_serve(struct nl_dp *dp, const struct nl_port_opts *o, struct nl_port_counts *out)
{
	struct nl_port *io = NULL;
	uint64_t loops = 0, idle = 0, hz = rte_get_tsc_hz();
	uint64_t timeout_cyc = (uint64_t)(o->worker_timeout_s * (double)hz);
	bool launched = false;
	int rc;

	if (!dp->o.port_mode)
		return -EINVAL;
	rc = port_create(&io, dp, o);
	if (rc == 0)
		rc = nl_dp_io_port_init(io);
	if (rc == 0)
		rc = nl_dp_sec_create(io, on_submit); /* #16: principals, fair queues (admission) */
	if (rc == 0)
		rc = nl_dp_sec_drop_privileges(io); /* #16: --user, after the port is up */
	if (rc != 0)
		goto out;
	/* Every slot starts empty: machines exist once a worker claims them. */
	rc = publish_machines(io, NULL, NULL, 0);
	if (rc != 0)
		goto out;
	/* the port's telemetry handlers find it through the engine's gate */
	nl_dp_tel_driver_set(dp, io);
	nl_port_telemetry_init(io);
	dp->horizon_vt = 1e300;
	dp->tsc0 = rte_rdtsc();
	nl_atomic_store_relaxed(&dp->run_quit, 0);
	/* No in-process generator: tasks come from the port. */
	nl_atomic_store_relaxed(&dp->gen_done, 1);
	nl_dp_kick_ctl(dp);
	for (unsigned int i = 0; i < dp->n_lc; i++) {
		rc = rte_eal_remote_launch(nl_dp_lcore_main, &dp->lc[i], dp->lc[i].lcore_id);
		if (rc != 0) {
			nl_atomic_store_relaxed(&dp->run_quit, 1);
			rte_eal_mp_wait_lcore();
			goto out;
		}
	}
	launched = true;
	DP_LOG(INFO, "serving on port %u, udp %u, %u managers on %u lcores, %s\n", io->o.port_id,
	       io->o.udp_port, dp->n_mgr, dp->n_lc,
	       io->o.auth ? "authenticated (protocol version 2, --key)" :
			    "UNAUTHENTICATED (protocol version 1: no --key)");
	nl_port_drain_arm(true); /* #34: from now on the first signal drains */
	while (!nl_dp_stopping()) {
		struct rte_mbuf *rx[RX_BURST];
		void *fin[64];
		struct nl_dp_req req;
		unsigned int n, work = 0;
		double now = nl_dp_now_vt(dp);

		/* Valid until our next quiescent state; we are also the writer (I3). */
		io->lc->gen = rcu_dereference(dp->gen_rcu);
		if (io->o.auth)
			io->now_ns = nl_auth_now_ns();
		if (nl_dp_drain_poll(io)) /* #34: drained, or its time is up */
			break;
		n = rte_eth_rx_burst(io->o.port_id, 0, rx, RX_BURST);
		nl_stat_add_st(&io->c.rx_frames, n);
		for (unsigned int i = 0; i < n; i++) {
			if (rx[i]->nb_segs == 1)
				handle_frame(io, rte_pktmbuf_mtod(rx[i], const uint8_t *),
					     rx[i]->data_len);
			else
				nl_stat_add_st(&io->c.drops[NL_PROTO_E_OVERSIZE], 1);
		}
		if (n > 0)
			rte_pktmbuf_free_bulk(rx, n);
		work += n;
		work += drain_subs(io);
		work += nl_dp_farm_poll(io); /* #33: occupied slots stay busy as time passes */
		work += requeue(io);         /* #34: the journal's tasks, without their submitter */
		if (nl_port_ext(io) != NULL) /* hook up (scale-out): proxies, gossip */
			work += io->o.ext->poll_ctl(io);
		n = rte_ring_sc_dequeue_burst(dp->fin_ring, fin, 64, NULL);
		for (unsigned int i = 0; i < n; i++)
			nl_dp_port_finish(io, fin[i]);
		work += n;
		if (io->sec != NULL) /* #16: fair admission as tasks end */
			work += nl_dp_sec_poll(io);
		nl_dp_snap_serve_ctl(io); /* #16: consistent counters for telemetry */
		while (rte_ring_sc_dequeue_elem(io->req_ring, &req, sizeof(req)) == 0) {
			if (req.mach < dp->n_mach && (io->slot_worker[req.mach] != NO_SLOT || !req.alive)) {
				uint8_t *gone = calloc(dp->n_mach, 1);

				io->alive[req.mach] = (uint8_t)req.alive;
				publish_machines(io, &req.mach, &req.speed_ips, 1);
				if (gone != NULL && !req.alive) {
					gone[req.mach] = 1;
					redispatch_from(io, gone);
				}
				free(gone);
			}
		}
		dp->ctl_dirty |= work > 0;
		if (dp->ctl_dirty && now - dp->last_publish_vt >= dp->o.publish_vt) {
			/* publish only what changed: an idle appliance allocates nothing */
			nl_load_publish_ctl(dp->load);
			dp->last_publish_vt = now;
			dp->ctl_dirty = false;
		}
		uint64_t tsc = rte_rdtsc(); /* #33: our own stalls are nobody's silence */

		nl_dp_live_turn(io, tsc);
		for (int32_t wi; (loops & 1023) == 0 && timeout_cyc > 0 &&
				 (wi = nl_dp_live_due(io, tsc, timeout_cyc)) >= 0;)
			remove_worker(io, (uint32_t)wi, "timeout");
		if (io->n_tx > 0)
			nl_dp_io_tx_flush(io);
		io->lc->gen = NULL;
		if ((++loops & 255) == 0)
			urcu_qsbr_quiescent_state();
		if (work == 0) {
			rte_pause();
			idle++;
		} else {
			idle = 0;
		}
		if (dp->o.idle_sleep_us > 0 && idle > 256) {
			uint64_t t0 = rte_rdtsc();

			urcu_qsbr_thread_offline();
			rte_delay_us_sleep(dp->o.idle_sleep_us);
			urcu_qsbr_thread_online();
			io->nap_cyc = rte_rdtsc() - t0; /* a late wake-up tells in nl_dp_live_turn() */
		}
	}
	rc = 0;
out:
	if (launched) {
		nl_dp_live_stop(io); /* the manager lcores stop; a hold on the way is logged */
		nl_dp_drain_end(io, drain_subs); /* #34: every accepted task answered (I1) */
		if (nl_port_ext(io) != NULL) /* hook up (scale-out): tasks parked elsewhere fail */
			io->o.ext->stop_ctl(dp, dp->ext);
		DP_LOG(INFO, "stopping\n");
	}
	nl_dp_tel_close(dp); /* no handler reads the port, farm or fair-share state freed below */
	if (io != NULL && io->n_tx > 0)
		nl_dp_io_tx_flush(io);
	if (rte_eth_dev_is_valid_port(o->port_id))
		rte_eth_dev_stop(o->port_id);
	if (out != NULL && io != NULL)
		nl_port_counts_get(io, out);
	port_free(io);
	return rc;
}
