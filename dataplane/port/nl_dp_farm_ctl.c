/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Task farms: the user's view and control (issue #33 items 3 and 5; nl_dp_farm.h):
 *  - per task (pool slot aux): its wall-clock limit (FSUBMIT time_limit_ms, put in every
 *    DISPATCH), its end record gathered from the DONEs (worst state, run, queue and CPU time,
 *    peak memory), whether a CANCEL withdrew it;
 *  - the records on disk (nl_dp_farm_rec.h): ACCEPT (queued), first DISPATCH (running), the
 *    final answer (ok, failed, timeout, cancelled, rejected); STATUS_Q and TASKS_Q are
 *    answered from them by the records thread, the answers sent here;
 *  - CANCEL: a batch (or one task) of the asker's own: tasks not dispatched yet are withdrawn
 *    (answered REJECT cancelled when a manager hands them over: nl_dp_farm_withdraw()),
 *    dispatched ones are sent KILL per sub-task (the worker answers DONE cancelled), FSUBMITs
 *    of a cancelled batch admitted later are withdrawn the same way.
 * Everything runs on the I/O lcore.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_log.h>

#include "nl_dp_farm_priv.h"

#define DP_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)
#define DEF_STATE_DIR "/var/lib/nlevel"

static uint64_t
wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int
nl_dp_farm_ctl_init(struct nl_port *io)
{
	struct nl_dp_farm *f = io->farm;
	uint32_t n = io->dp->n_pool;
	char err[512];
	const char *dir = io->o.state_dir != NULL ? io->o.state_dir : DEF_STATE_DIR;
	int rc;

	f->tl_ms = calloc(n, sizeof(*f->tl_ms));
	f->end = calloc(n, sizeof(*f->end));
	f->withdraw = calloc(n, 1);
	if (f->tl_ms == NULL || f->end == NULL || f->withdraw == NULL)
		return -ENOMEM;
	rc = nl_farm_rec_open(&f->rec, dir, io->o.ip, io->o.udp_port, io->o.journal_sync == 2, err,
			      sizeof(err));
	if (rc != 0) {
		DP_LOG(ERR, "%s\n", err);
		fprintf(stderr, "nlevel: %s\n", err);
		return rc;
	}
	DP_LOG(INFO, "task records in %s\n", dir);
	return 0;
}

void
nl_dp_farm_ctl_fini(struct nl_dp_farm *f)
{
	struct nl_farm_rec_out *o;

	while ((o = nl_farm_rec_answer(f->rec)) != NULL)
		free(o);
	nl_farm_rec_close(f->rec);
	f->rec = NULL;
	free(f->tl_ms);
	free(f->end);
	free(f->withdraw);
}

static void
put(struct nl_dp_farm *f, struct nl_farm_rec_ev *e)
{
	if (f->rec != NULL)
		nl_farm_rec_put(f->rec, e);
}

/* A submission of batch s (NULL: none) is being admitted into pool slot aux
 * (nl_dp_farm_task()). */
void
nl_dp_farm_ctl_task(struct nl_port *io, uint32_t aux, const struct farm_sub *s)
{
	struct nl_dp_farm *f = io->farm;

	memset(&f->end[aux], 0, sizeof(f->end[aux]));
	f->tl_ms[aux] = f->cur_tl_ms;
	f->withdraw[aux] = 0;
	if (s != NULL && s->cancelled) /* a CANCEL came before its admission */
		f->withdraw[aux] = NL_REJECT_CANCELLED;
}

void
nl_dp_farm_ctl_accept(struct nl_port *io, uint64_t task_id, uint8_t attempt)
{
	struct nl_dp_farm *f = io->farm;
	struct nl_farm_rec_ev e = { .kind = NL_REC_ACCEPT, .task_id = task_id,
				    .attempt = attempt, .principal = io->principal,
				    .t_ns = wall_ns() };

	if (f->rec != NULL && f->cur_aux < io->dp->n_pool &&
	    (e.sub = malloc(sizeof(*e.sub))) != NULL) {
		/* #34: the FSUBMIT, for a restart to admit it again (nl_dp_farm_jrnl.c) */
		const struct nl_dp_meta *mt = &io->meta[f->cur_aux];
		const struct nl_task *t = mt->task;
		struct nl_farm_rec_sub *q = e.sub;

		memset(q, 0, sizeof(*q));
		q->handle = f->cur_h;
		q->tl_ms = f->cur_tl_ms;
		q->need = t->need;
		q->data_bits = (uint64_t)t->data_bits;
		q->client_ts_ns = mt->client_ts_ns;
		q->n_split = (uint16_t)t->n_split;
		q->attempt = attempt;
		q->args_len = mt->args_len;
		memcpy(q->args, mt->args, mt->args_len);
		q->principal = io->principal;
		q->ip = mt->client_ip;
		q->port = mt->client_port;
		memcpy(q->mac, mt->client_mac, 6);
	}
	put(f, &e);
}

void
nl_dp_farm_ctl_dispatch(struct nl_port *io, const struct nl_task *t, struct nl_msg_dispatch *d,
			uint32_t worker_id)
{
	struct nl_dp_farm *f = io->farm;

	d->time_limit_ms = f->tl_ms[t->aux]; /* #33 item 3: the worker enforces it */
	d->attempt = f->att[t->aux];          /* #34: (task, sub, attempt) names the run */
	/* every sub-task's worker and machine (#34: a restart sends each back there) */
	put(f, &(struct nl_farm_rec_ev){ .kind = NL_REC_DISPATCH, .task_id = t->id,
					 .subtask = d->sub, .worker_id = worker_id,
					 .mach = (uint16_t)d->mach });
}

void
nl_dp_farm_ctl_done(struct nl_port *io, const struct nl_task *t, const struct nl_msg_done *d)
{
	struct nl_dp_farm *f = io->farm;
	struct farm_end *x;

	if (f == NULL || t->aux >= io->dp->n_pool)
		return;
	x = &f->end[t->aux];
	if (d->state != NL_DONE_EXITED && (x->state == NL_DONE_EXITED ||
					  d->state == NL_DONE_CANCELLED))
		x->state = d->state; /* the first that did not just exit; cancelled wins */
	if (d->run_ms > x->run_ms)
		x->run_ms = d->run_ms;
	if (d->queue_ms > x->queue_ms)
		x->queue_ms = d->queue_ms;
	x->cpu_ms += d->cpu_ms;
	if (d->mem_peak_kib > x->mem_kib)
		x->mem_kib = d->mem_peak_kib;
	x->n_done++;
}

void
nl_dp_farm_ctl_taskinfo(struct nl_port *io, uint32_t aux, struct nl_msg_taskinfo *ti)
{
	const struct farm_end *x = &io->farm->end[aux];

	ti->has_end = 1;
	ti->state = x->state;
	ti->run_ms = x->run_ms != 0 || x->n_done == 0 ? x->run_ms : ti->run_us / 1000;
	ti->queue_ms = ti->disp_us / 1000 + x->queue_ms;
	ti->cpu_ms = x->cpu_ms;
	ti->mem_kib = x->mem_kib;
}

void
nl_dp_farm_ctl_end(struct nl_port *io, uint32_t aux, uint64_t task_id, const struct nl_msg *m,
		   const struct nl_msg_taskinfo *ti)
{
	struct nl_dp_farm *f = io->farm;
	const struct farm_end *x = &f->end[aux];
	struct nl_farm_rec_ev e = { .kind = NL_REC_END, .task_id = task_id, .t_ns = wall_ns(),
				    .status = -1 };

	if (m->type == NL_MSG_REJECT) {
		unsigned int r = m->u.reply.reason;

		e.state = r == NL_REJECT_CANCELLED ? NL_FARM_T_CANCELLED :
			  r == NL_REJECT_SHUTDOWN ? NL_FARM_T_SHUTDOWN : /* #34: drain on stop */
			  r == NL_REJECT_NO_MACHINE || r == NL_REJECT_BAD_TASK ? NL_FARM_T_REJECTED :
										   NL_FARM_T_FAILED;
	} else {
		e.status = m->u.reply.status;
		e.state = x->state == NL_DONE_CANCELLED ? NL_FARM_T_CANCELLED :
			  x->state == NL_DONE_TIMEOUT ? NL_FARM_T_TIMEOUT :
			  x->state != NL_DONE_EXITED || e.status != 0 ? NL_FARM_T_FAILED :
									NL_FARM_T_OK;
	}
	if (ti != NULL) {
		e.worker_id = ti->worker_id;
		e.mach = ti->mach;
		e.queue_ms = ti->queue_ms;
		e.run_ms = ti->run_ms;
		e.cpu_ms = ti->cpu_ms;
		e.mem_kib = ti->mem_kib;
	}
	put(f, &e);
}

bool
nl_dp_farm_withdraw(struct nl_port *io, struct nl_task *t)
{
	struct nl_dp_farm *f = io->farm;

	if (f == NULL || t->aux >= io->dp->n_pool || !f->withdraw[t->aux] ||
	    (t->flags & NL_TF_FAILED))
		return false;
	/* the reason it was withdrawn for: cancelled, or shutdown (#34, nl_dp_farm_shutdown()) */
	t->flags |= NL_TF_FAILED | ((uint32_t)f->withdraw[t->aux] << NL_TF_REASON_SHIFT);
	return true;
}

void
nl_dp_farm_shutdown(struct nl_port *io, uint32_t aux)
{
	struct nl_dp_farm *f = io->farm;

	if (f != NULL && aux < io->dp->n_pool && !f->withdraw[aux])
		f->withdraw[aux] = NL_REJECT_SHUTDOWN;
}

/* ---- queries ---- */

static void
query(struct nl_port *io, struct nl_farm_rec_ev *e, const struct nl_frame_addr *a)
{
	e->principal = io->principal;
	e->ip = a->src_ip;
	e->port = a->src_port;
	memcpy(e->mac, a->src_mac, 6);
	put(io->farm, e);
}

void
nl_dp_farm_ctl_status_q(struct nl_port *io, const struct nl_msg_status_q *q,
			const struct nl_frame_addr *a, const struct farm_sub *s)
{
	struct nl_farm_rec_ev e = { .kind = NL_REC_STATUS_Q, .task_id = q->submit_id << 32,
				    .req_id = q->req_id };

	if (s != NULL) {
		e.known = 1;
		e.c = s->c;
	}
	query(io, &e, a);
}

void
nl_dp_farm_ctl_tasks_q(struct nl_port *io, const struct nl_msg_tasks_q *q,
		       const struct nl_frame_addr *a)
{
	struct nl_farm_rec_ev e = { .kind = NL_REC_TASKS_Q, .task_id = q->submit_id << 32,
				    .req_id = q->req_id, .from = q->from, .max = q->max };

	query(io, &e, a);
}

/* KILL every dispatched, not settled sub-task of the task in pool slot aux; how many. */
unsigned int
nl_dp_farm_kill(struct nl_port *io, uint32_t aux)
{
	unsigned int n = 0;

	struct nl_dp *dp = io->dp;
	const struct nl_dp_meta *mt = &io->meta[aux];
	const struct nl_task *t = mt->task;

	for (unsigned int s = 0; s < t->n_split; s++) {
		uint32_t m = mt->sub_mach[s];
		struct nl_msg k = { .type = NL_MSG_KILL };
		const struct nl_dp_worker *w;

		if ((mt->done_mask >> s) & 1 || m >= dp->n_mach || io->slot_worker[m] == NO_SLOT)
			continue;
		w = &io->workers[io->slot_worker[m]];
		k.u.farm.kill.task_id = t->id;
		k.u.farm.kill.token = aux;
		k.u.farm.kill.mach = io->slot_local[m];
		k.u.farm.kill.sub = (uint16_t)s;
		k.u.farm.kill.reason = NL_KILL_CANCEL;
		nl_dp_farm_send_worker(io, &k, w->principal, w->mac, w->ip, w->port); /* #34 */
		n++;
	}
	return n;
}

void
nl_dp_farm_ctl_cancel(struct nl_port *io, const struct nl_msg_cancel *c,
		      const struct nl_frame_addr *a, struct farm_sub *s)
{
	struct nl_dp_farm *f = io->farm;
	struct nl_dp *dp = io->dp;
	struct nl_msg out = { .type = NL_MSG_CANCELLED };
	struct nl_msg_cancelled *r = &out.u.farm.cancelled;

	r->req_id = c->req_id;
	r->submit_id = c->submit_id;
	if (s != NULL) {
		r->known = 1;
		if (c->all)
			s->cancelled = true; /* FSUBMITs admitted from now on are withdrawn */
		for (uint32_t aux = 0; aux < dp->n_pool; aux++) {
			uint64_t tid = f->inf_tid[aux];
			const struct nl_dp_meta *mt = &io->meta[aux];

			if (tid == 0 || (tid >> 32) != c->submit_id ||
			    (!c->all && (uint32_t)tid != c->index) || mt->task == NULL ||
			    mt->task->id != tid || f->withdraw[aux])
				continue;
			f->withdraw[aux] = NL_REJECT_CANCELLED;
			if (mt->active && nl_dp_farm_kill(io, aux) > 0)
				r->killed++;
			else /* not dispatched yet, or parked waiting for a slot */
				r->withdrawn++;
		}
		DP_LOG(INFO, "batch %llu%s: cancel: %u withdrawn, %u killed\n",
		       (unsigned long long)c->submit_id, c->all ? "" : " (one task)", r->withdrawn,
		       r->killed);
	}
	nl_dp_io_send(io, &out, io->principal, a->src_mac, a->src_ip, a->src_port);
}

unsigned int
nl_dp_farm_ctl_poll(struct nl_port *io)
{
	struct nl_dp_farm *f = io->farm;
	struct nl_farm_rec_out *o;
	unsigned int n = 0;

	if (f == NULL)
		return 0;
	while ((o = nl_farm_rec_answer(f->rec)) != NULL) {
		nl_dp_io_send(io, &o->m, o->principal, o->mac, o->ip, o->port);
		free(o);
		n++;
	}
	return n;
}
