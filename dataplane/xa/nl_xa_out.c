/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scale-out: hand-over out (nl_xa_hand_out_ctl()). A task whose route leaves this appliance
 * is handed to the appliance of the next manager (a HANDOVER record, retransmitted until
 * acknowledged; ours parked until its HANDBACK, X1 in docs/scale-out.md); a farm task stays
 * in this appliance's part of the tree; that appliance gone, the task is detoured, re-routed
 * or answered. Called by the round (nl_xa.c) and by a client's resend passed on
 * (nl_xa_pass.c). Control lcore only.
 */
#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_log.h>
#include <rte_mempool.h>

#include "nl_atomic.h"
#include "nl_dp_inline.h"
#include "nl_xa_core.h"

/* #34 item 4: a farm task (XA_TF_FARM) whose route leaves this appliance (NLSC: it entered at
 * a random leaf, maybe another appliance's; 2LSC: it entered at `global`, maybe elsewhere) is
 * put into this appliance's next own subtree root instead, each root once: routed from there,
 * it reaches this appliance's machines of its vector if there are any. false: no root left
 * (or its inbox full): the caller answers it. */
static bool
farm_keep(struct nl_port *io, struct nl_task *t)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_task *xt = &xa->task[t->aux];
	unsigned int k = 0;

	for (unsigned int i = 0; i < xa->n_root; i++) {
		if (xa->root[i].app != xa->self || k++ < xt->farm_try)
			continue;
		xt->farm_try++;
		t->flags &= ~NL_MODEL_SUBS_MASK;
		t->hops++;
		if (!nl_dp_inbox_put_ctl(io->dp, t, xa->root[i].mgr))
			return false;
		nl_atomic_store_relaxed(&xa->farm_kept, xa->farm_kept + 1);
		return true;
	}
	return false;
}

void
nl_xa_hand_out_ctl(struct nl_port *io, struct nl_task *t, uint32_t to_mgr)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	const struct nl_dp_meta *mt = &io->meta[t->aux];
	struct xa_task *xt = &xa->task[t->aux];
	unsigned int app = xa->mgr_app[to_mgr];
	struct nl_xa_task r;
	uint64_t now = rte_rdtsc();

	if (xt->state != XA_FOREIGN && (xt->flags & XA_TF_FARM)) {
		/* #34 item 4: a farm task's command, handle and journal are this appliance's; a
		 * HANDOVER carries none of them, so another appliance would run it as a plain
		 * task (no command) and we would answer COMPLETE 0 for a run that never
		 * happened. Into our own part of the tree, else its machines are not here. */
		if (farm_keep(io, t))
			return;
		nl_atomic_store_relaxed(&xa->farm_no_machine, xa->farm_no_machine + 1);
		if (now - xa->farm_warn_tsc > rte_get_tsc_hz()) {
			xa->farm_warn_tsc = now;
			XA_LOG(WARNING,
			       "farm task %llx: no machine for it in this appliance's part of the "
			       "tree (its route goes on to appliance %s, manager %u): answered "
			       "REJECT no_machine (%llu so far); a farm task runs on the appliance "
			       "it is submitted to: submit it to one whose workers have its "
			       "machines\n",
			       (unsigned long long)t->id, xa->cfg.app[app].name, to_mgr,
			       (unsigned long long)xa->farm_no_machine);
		}
		nl_xa_fail_task(io, t, NL_REJECT_NO_MACHINE);
		return;
	}
	if (!xa->peer[app].live) { /* its appliance is gone: nowhere to carry it */
		if (nl_xa_detour_ctl(io, t, to_mgr) || nl_xa_reroute_ctl(io, t, false))
			return;
		xa->peer[app].lost_tasks++;
		xa->lost_tasks++;
		nl_xa_fail_task(io, t, NL_REJECT_MACHINE_LOST);
		return;
	}
	/* a hand-over is a transfer: hops rise strictly along the task's path between
	 * appliances (also when this one only passes it on), which orders its *moved* notes */
	t->hops++;
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
	r.flags = xt->flags & NL_XA_TF_ALL;
	r.client_ip = xt->state == XA_FOREIGN ? xt->cip : ntohl(mt->client_ip);
	r.client_port = xt->state == XA_FOREIGN ? xt->cport : mt->client_port;
	memcpy(r.args, mt->args, mt->args_len);
	if (xt->state == XA_FOREIGN) { /* passing through: it stays the origin's */
		r.origin_app = xt->origin;
		r.origin_token = xt->token;
		r.origin_seq = xt->seq;
		nl_xa_queue_task_ctl(io, app, &r);
		if (app != xt->origin) { /* tell the origin whom to wait for (X1) */
			struct nl_xa_back mv = { .task_id = t->id,
						 .origin_token = xt->token,
						 .origin_seq = xt->seq,
						 .reason = NL_XA_REASON_MOVED,
						 .hops = t->hops,
						 .at_app = (uint16_t)app };

			nl_xa_queue_back_ctl(io, xt->origin, &mv);
		}
		xt->state = XA_OWN;
		rte_mempool_put(dp->pool, t);
		nl_atomic_store_relaxed(&xa->foreign_live, xa->foreign_live - 1);
		return;
	}
	xt->state = XA_PARKED; /* ours: parked, in flight elsewhere (X1) */
	xt->unsent = 0;
	xt->at = (uint16_t)app;
	xt->at_hops = t->hops;
	xt->seq = ++xa->seq != 0 ? xa->seq : ++xa->seq; /* never 0: a worker reads 0 as none */
	r.origin_app = (uint16_t)xa->self;
	r.origin_token = t->aux;
	r.origin_seq = xt->seq;
	nl_atomic_store_relaxed(&xa->parked, xa->parked + 1);
	nl_xa_queue_task_ctl(io, app, &r);
}
