/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The answers of port mode (issue #34): ACCEPT / REJECT / COMPLETE to a task's submitter, and
 * the end of a task on the control lcore. Called by the I/O loop (nl_dp_port.c) and by the
 * drain on stop (nl_dp_drain.c); calls down to the farm, the security layer and the I/O.
 */
#include <rte_cycles.h>

#include "nl_dp_farm.h"
#include "nl_dp_sec.h"
#include "nl_port_priv.h"

void
nl_dp_port_reply(struct nl_port *io, const struct nl_dp_meta *mt, uint64_t task_id, uint8_t type,
		 uint16_t reason, uint16_t n_done, int32_t status, uint32_t resp_us)
{
	struct nl_msg m = { .type = type };

	m.u.reply.task_id = task_id;
	m.u.reply.client_ts_ns = mt->client_ts_ns;
	m.u.reply.reason = reason;
	m.u.reply.n_done = n_done;
	m.u.reply.status = status;
	m.u.reply.resp_us = resp_us;
	nl_dp_farm_reply(io, mt, task_id, type, status, &m); /* issue #15 hook: counters, resends */
	/* #16: sealed under the submitter's key */
	nl_dp_io_send(io, &m, mt->principal, mt->client_mac, mt->client_ip, mt->client_port);
}

/* Control-lcore end of a task in port mode: COMPLETE or REJECT, then back to the pool (also
 * how the scale-out layer ends a task it cannot carry on). */
void
nl_dp_port_finish(struct nl_port *io, struct nl_task *t)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_meta *mt = &io->meta[t->aux];
	uint32_t us = (uint32_t)((double)(rte_rdtsc() - mt->ingress_tsc) /
				 (double)rte_get_tsc_hz() * 1e6);

	if (nl_port_ext(io) != NULL && io->o.ext->finish_ctl(io, t))
		return; /* hook up (scale-out): another appliance's task, handed back */
	mt->active = mt->held = 0;
	if (io->sec != NULL) /* #16: per-principal accounting, fair queue */
		nl_dp_sec_finish(io, mt, (t->flags & NL_TF_FAILED) != 0 || mt->end_reason != 0);
	if (t->flags & NL_TF_FAILED) {
		uint16_t why = (uint16_t)((t->flags >> NL_TF_REASON_SHIFT) & 0xff);

		nl_dp_port_reply(io, mt, t->id, NL_MSG_REJECT, why ? why : NL_REJECT_OVERLOAD, 0, 0,
				 0);
	} else {
		nl_dp_port_reply(io, mt, t->id, NL_MSG_COMPLETE, mt->end_reason, mt->n_done,
				 mt->status, us);
		mt->end_reason = 0;
	}
	nl_dp_task_finish_ctl(dp, t, nl_dp_now_vt(dp));
}

void
nl_dp_relay_origin(struct nl_port *io, const struct nl_task *t, struct nl_msg_dispatch *d)
{
	if (nl_port_ext(io) != NULL && io->o.ext->origin_ctl != NULL)
		io->o.ext->origin_ctl(io, t, d);
}

bool
nl_dp_relay_done(struct nl_port *io, const struct nl_msg_done *d, const struct nl_frame_addr *a)
{
	int32_t wi;

	if (d->relay == NL_RELAY_NONE || nl_port_ext(io) == NULL || io->o.ext->relay_ctl == NULL)
		return false;
	wi = nl_dp_live_worker(io, a); /* a joined worker; else one told straight (origin) */
	io->no_done_ack = wi < 0; /* not acknowledged (not joined: sent again once it is) */
	return io->o.ext->relay_ctl(io, d, wi);
}
