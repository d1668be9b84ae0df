/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Task farms: resent FSUBMITs (nl_dp_farm.c's top: the same submitter address, task id and
 * attempt answered from the state of the first, never run twice), split from nl_dp_farm.c
 * (the layers test's 800 lines). The I/O lcore.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nl_atomic.h"
#include "nl_dp_farm_priv.h"

/* Answer the frame being handled: to its address, sealed for its sender (#35). */
static void
send_to(struct nl_port *io, const struct nl_frame_addr *a, const struct nl_msg *m)
{
	nl_dp_io_send(io, m, io->principal, a->src_mac, a->src_ip, a->src_port);
}

/* ---- resent FSUBMITs ---- */

/* Pool slot aux no longer holds its in-flight FSUBMIT (ended, or reused): drop the entry. */
void
nl_dp_farm_dd_forget_aux(struct nl_dp_farm *f, uint32_t aux)
{
	struct nl_farm_dd *e;

	if (f->inf_tid[aux] == 0)
		return;
	e = nl_farm_dd_find(&f->dd, f->inf_tid[aux], 0, 0);
	if (e != NULL && !e->done && e->ref == aux)
		nl_farm_dd_del(&f->dd, e);
	f->inf_tid[aux] = 0;
}

/* An FSUBMIT already accepted from this submitter with this attempt: answer from its state
 * (ACCEPT while it runs; its TASKINFO and final reply once ended). true when answered. */
bool
nl_dp_farm_dd_resend(struct nl_port *io, const struct nl_msg_fsubmit *fs, const struct nl_frame_addr *a)
{
	struct nl_dp_farm *f = io->farm;
	struct nl_farm_dd *e = nl_farm_dd_find(&f->dd, fs->task_id, 0, 0);
	struct nl_msg m = { 0 };

	if (e == NULL)
		return false;
	if (e->attempt != fs->attempt || (e->done && fs->attempt == 0) ||
	    (!e->done && f->inf_tid[e->ref] != fs->task_id))
		return false; /* new, another attempt (a retry), ended and not told apart from a
			       * retry, or stale */
	if (!e->done) {
		struct nl_dp_meta *mt = &io->meta[e->ref];

		if (mt->principal != io->principal)
			return false; /* another principal's task id: its batch check refuses it */
		if (mt->client_ip != a->src_ip || mt->client_port != a->src_port) {
			/* #34: a resumed submitter (another port) resends it: the answers go to
			 * the one that asked last */
			mt->client_ip = a->src_ip;
			mt->client_port = a->src_port;
			memcpy(mt->client_mac, a->src_mac, sizeof(mt->client_mac));
			f->inf_ip[e->ref] = a->src_ip;
			f->inf_port[e->ref] = a->src_port;
		}
		m.type = NL_MSG_ACCEPT;
		m.u.reply.task_id = fs->task_id;
		m.u.reply.client_ts_ns = fs->client_ts_ns;
	} else {
		const struct farm_done *d = &f->done[e->ref];

		if (d->principal != io->principal)
			return false; /* another principal's task id: its batch check refuses it */
		if (d->has_info) {
			m.type = NL_MSG_TASKINFO;
			m.u.farm.taskinfo = d->ti;
			send_to(io, a, &m);
		}
		memset(&m, 0, sizeof(m));
		m.type = d->type;
		m.u.reply = d->rep;
		m.u.reply.client_ts_ns = fs->client_ts_ns;
	}
	send_to(io, a, &m);
	nl_atomic_store_relaxed(&f->n_resent, f->n_resent + 1);
	return true;
}

/* The FSUBMIT of pool slot aux ended with reply m: keep it for resends. */
void
nl_dp_farm_dd_ended(struct nl_dp_farm *f, uint32_t aux, const struct nl_msg *m,
		    uint32_t principal)
{
	struct nl_farm_dd *e;
	struct farm_done *d;
	uint32_t slot;

	if (f->inf_tid[aux] == 0)
		return;
	uint64_t tid = f->inf_tid[aux];
	uint32_t ip = f->inf_ip[aux];
	uint16_t port = f->inf_port[aux];

	e = nl_farm_dd_find(&f->dd, tid, 0, 0);
	f->inf_tid[aux] = 0;
	if (e == NULL || e->done || e->ref != aux)
		return;
	slot = f->done_next++ & (FARM_DONE_KEEP - 1);
	d = &f->done[slot];
	if (d->task_id != 0) { /* the ring is full: forget the oldest */
		struct nl_farm_dd *o = nl_farm_dd_find(&f->dd, d->task_id, 0, 0);

		if (o != NULL && o->done && o->ref == slot)
			nl_farm_dd_del(&f->dd, o);
		e = nl_farm_dd_find(&f->dd, tid, 0, 0); /* the deletion may have moved it */
		if (e == NULL)
			return;
	}
	d->task_id = e->task_id;
	d->ip = ip;
	d->port = port;
	d->principal = principal;
	d->type = m->type;
	d->rep = m->u.reply;
	d->has_info = m->type == NL_MSG_COMPLETE && f->last_ti_id == e->task_id;
	if (d->has_info)
		d->ti = f->last_ti;
	e->done = 1;
	e->ref = slot;
}

void
nl_dp_farm_dd_fini(struct nl_dp_farm *f)
{
	free(f->dd.e);
	free(f->done);
	free(f->inf_tid);
	free(f->inf_ip);
	free(f->inf_port);
}

int
nl_dp_farm_dd_init(struct nl_dp_farm *f, uint32_t n_meta)
{
	uint64_t cap = 2;

	while (cap < 2 * ((uint64_t)n_meta + FARM_DONE_KEEP))
		cap *= 2;
	f->dd.cap = (uint32_t)cap;
	f->dd.e = calloc(cap, sizeof(*f->dd.e));
	f->done = calloc(FARM_DONE_KEEP, sizeof(*f->done));
	f->inf_tid = calloc(n_meta, sizeof(*f->inf_tid));
	f->inf_ip = calloc(n_meta, sizeof(*f->inf_ip));
	f->inf_port = calloc(n_meta, sizeof(*f->inf_port));
	if (f->dd.e == NULL || f->done == NULL || f->inf_tid == NULL || f->inf_ip == NULL ||
	    f->inf_port == NULL) {
		nl_dp_farm_dd_fini(f);
		return -ENOMEM;
	}
	return 0;
}

