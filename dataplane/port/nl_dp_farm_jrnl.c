/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Task farms: the journal read back at start (issue #34 items 1 and 2; nl_dp_farm_priv.h;
 * docs/taskfarm.md "Exactly once"). The records on disk (nl_dp_farm_rec.h) hold every
 * accepted task, its first DISPATCH (worker, machine) and its final answer, and every
 * registered handle. At start:
 *  - handles are registered again under their numbers, so a submitter that outlived the
 *    appliance resends its FSUBMITs unchanged;
 *  - tasks not ended and the last FARM_JR_ENDED ended ones go into jr (open addressing by
 *    task id). A resent FSUBMIT (same task id and attempt) of an ended one is answered from
 *    the journal (TASKINFO, then COMPLETE or REJECT), never run again; a running one is
 *    admitted and each of its sub-tasks is dispatched to the same worker and machine as
 *    before (pinned: sub-task 0 from the task table, the others from table fdisp): the
 *    worker answers a run it holds or ended from its own record (tools/worker/nl_wrec.h)
 *    and runs it only when it never got it. A pinned run waits for its worker to join again
 *    (workers say HELLO every 2 s) until --worker-timeout + 5 s after the start; a worker
 *    that does not come back is dead (its commands die with its cgroups), and the run is
 *    placed as any other.
 *  - without waiting for a resend, tasks not ended whose FSUBMIT the journal kept (table
 *    fsubmit, attempt != 0) are admitted again by the appliance itself (requeue: the port's
 *    loop takes them from nl_dp_farm_requeue_next()) once a machine for their handle has
 *    joined: queued ones queue again, running ones go back to their worker as above; their
 *    answers go to the address that submitted them (or the last that resent them). A resend
 *    that comes first admits it instead; one that comes after is answered from its state.
 * Everything runs on the I/O lcore.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_log.h>

#include "nl_atomic.h"
#include "nl_dp_farm_priv.h"

#define DP_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)
#define FARM_JR_ENDED 65536u /* ended tasks read back for resends */

static uint32_t
jr_hash(uint64_t id, uint32_t cap)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (uint32_t)id & (cap - 1);
}

static struct farm_jr *
jr_find(struct nl_dp_farm *f, uint64_t id)
{
	if (f->jr == NULL || id == 0)
		return NULL;
	for (uint32_t i = jr_hash(id, f->jr_cap), k = 0; k < f->jr_cap;
	     i = (i + 1) & (f->jr_cap - 1), k++) {
		if (f->jr[i].task_id == id)
			return &f->jr[i];
		if (f->jr[i].task_id == 0)
			return NULL;
	}
	return NULL;
}

struct replay_disp {
	uint64_t task_id;
	struct farm_jr_sub s;
};

struct replay_ctx {
	struct nl_port *io;
	nl_dp_farm_restore_fn restore;
	struct nl_farm_rec_task *t;
	uint32_t n, cap;
	uint32_t n_h, n_h_bad;
	struct replay_disp *d; /* #34: fdisp rows */
	uint32_t n_d, cap_d;
};

static void
on_disp(void *ctx, uint64_t task_id, uint16_t sub, uint32_t worker_id, uint16_t mach)
{
	struct replay_ctx *c = ctx;

	if (c->n_d == c->cap_d) {
		uint32_t cap = c->cap_d ? c->cap_d * 2 : 256;
		struct replay_disp *n = realloc(c->d, (size_t)cap * sizeof(*n));

		if (n == NULL)
			return; /* that sub-task is placed as any other */
		c->d = n;
		c->cap_d = cap;
	}
	c->d[c->n_d++] = (struct replay_disp){ task_id, { worker_id + 1, sub, mach } };
}

/* Give each running task of jr the later sub-tasks' workers and machines (c->d, in task order). */
static void
attach_subs(struct nl_dp_farm *f, const struct replay_ctx *c)
{
	for (uint32_t i = 0, k; i < c->n_d; i = k) {
		struct farm_jr *j = jr_find(f, c->d[i].task_id);

		for (k = i; k < c->n_d && c->d[k].task_id == c->d[i].task_id; k++)
			;
		/* queued too: sub-task 0 may wait while later ones run */
		if (j == NULL || j->state < NL_FARM_T_QUEUED || j->state > NL_FARM_T_RUNNING ||
		    j->subs != NULL ||
		    (j->subs = malloc((k - i) * sizeof(*j->subs))) == NULL)
			continue;
		for (uint32_t x = i; x < k; x++)
			j->subs[j->n_subs++] = c->d[x].s;
	}
}

static void
on_handle(void *ctx, const struct nl_farm_rec_handle *h)
{
	struct replay_ctx *c = ctx;

	if (c->restore(c->io, h->h, h->name, h->req, h->rank, h->principal) == 0)
		c->n_h++;
	else
		c->n_h_bad++;
}

static void
on_task(void *ctx, const struct nl_farm_rec_task *t)
{
	struct replay_ctx *c = ctx;

	if (c->n == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 1024;
		struct nl_farm_rec_task *n = realloc(c->t, (size_t)cap * sizeof(*n));

		if (n == NULL)
			return; /* counted below as not read back */
		c->t = n;
		c->cap = cap;
	}
	c->t[c->n++] = *t;
}

int
nl_dp_farm_jrnl_init(struct nl_port *io, nl_dp_farm_restore_fn restore)
{
	struct nl_dp_farm *f = io->farm;
	struct replay_ctx c = { .io = io, .restore = restore };
	uint32_t n_pool = io->dp->n_pool, n_run = 0, n_q = 0, n_end = 0;
	double grace = (io->o.worker_timeout_s > 0 ? io->o.worker_timeout_s : 5.0) + 5.0;
	int n;

	f->att = calloc(n_pool, sizeof(*f->att));
	f->pin_w = calloc(n_pool, sizeof(*f->pin_w));
	f->pin_m = calloc(n_pool, sizeof(*f->pin_m));
	f->held = io->o.journal_sync > 0 ? calloc(FARM_HELD, sizeof(*f->held)) : NULL;
	if (f->att == NULL || f->pin_w == NULL || f->pin_m == NULL ||
	    (f->held == NULL && io->o.journal_sync > 0))
		return -ENOMEM;
	f->pin_until_tsc = rte_rdtsc() + (uint64_t)(grace * (double)rte_get_tsc_hz());
	if (f->rec == NULL)
		return 0;
	n = nl_farm_rec_replay(f->rec, on_handle, on_task, on_disp, &c, FARM_JR_ENDED);
	if (n < 0)
		DP_LOG(ERR, "journal: cannot read it back (SQLite error): tasks of the last run "
			    "are answered as new\n");
	if (c.n > 0) {
		uint32_t cap = 2;

		while (cap < 2 * c.n)
			cap *= 2;
		f->jr = calloc(cap, sizeof(*f->jr));
		if (f->jr == NULL) {
			free(c.t);
			free(c.d);
			return -ENOMEM;
		}
		f->jr_cap = cap;
		for (uint32_t i = 0; i < c.n; i++) {
			const struct nl_farm_rec_task *t = &c.t[i];
			uint32_t k = jr_hash(t->task_id, cap);

			if (t->task_id == 0 || t->state == 0 || jr_find(f, t->task_id) != NULL)
				continue; /* a task both not ended and ended cannot be: the first wins */
			while (f->jr[k].task_id != 0)
				k = (k + 1) & (cap - 1);
			f->jr[k] = (struct farm_jr){ .task_id = t->task_id, .state = t->state,
						     .attempt = t->attempt, .status = t->status,
						     .worker_id = t->worker_id, .mach = t->mach,
						     .queue_ms = t->queue_ms, .run_ms = t->run_ms,
						     .cpu_ms = t->cpu_ms, .mem_kib = t->mem_kib };
			f->jr_n++;
			n_run += t->state == NL_FARM_T_RUNNING;
			n_q += t->state == NL_FARM_T_QUEUED;
			n_end += t->state >= NL_FARM_T_OK;
		}
		attach_subs(f, &c);
	}
	free(c.d);
	for (uint32_t i = 0; i < c.n; i++) /* #34: the FSUBMITs to admit again */
		f->rq_n += c.t[i].has_sub && c.t[i].sub.attempt != 0 &&
			   (c.t[i].state == NL_FARM_T_QUEUED || c.t[i].state == NL_FARM_T_RUNNING);
	if (f->rq_n > 0 && (f->rq = calloc(f->rq_n, sizeof(*f->rq))) == NULL) {
		free(c.t);
		return -ENOMEM;
	}
	for (uint32_t i = 0, k = 0; i < c.n && k < f->rq_n; i++) {
		const struct nl_farm_rec_task *t = &c.t[i];

		if (t->has_sub && t->sub.attempt != 0 &&
		    (t->state == NL_FARM_T_QUEUED || t->state == NL_FARM_T_RUNNING))
			f->rq[k++] = (struct farm_rq){ .task_id = t->task_id, .q = t->sub };
	}
	f->rq_left = f->rq_n;
	free(c.t);
	f->n_h_restored = f->n_h;
	if (c.n_h + c.n_h_bad + f->jr_n > 0)
		DP_LOG(NOTICE, "journal read back: %u handles (%u refused), %u tasks running on "
			       "workers at the last stop (asked of their workers again), %u "
			       "queued, %u ended (answered from the journal when resent); %u "
			       "admitted again as their machines join\n",
		       c.n_h, c.n_h_bad, n_run, n_q, n_end, f->rq_n);
	return 0;
}

void
nl_dp_farm_jrnl_fini(struct nl_dp_farm *f)
{
	free(f->att);
	free(f->pin_w);
	free(f->pin_m);
	for (uint32_t i = 0; f->jr != NULL && i < f->jr_cap; i++)
		free(f->jr[i].subs);
	free(f->jr);
	free(f->rq);
	f->rq = NULL;
	f->rq_n = f->rq_left = 0;
	free(f->held);
	f->held = NULL;
	f->n_held = 0;
	f->att = NULL;
	f->pin_w = NULL;
	f->pin_m = NULL;
	f->jr = NULL;
}

static void
send_to(struct nl_port *io, const struct nl_frame_addr *a, const struct nl_msg *m)
{
	nl_dp_io_send(io, m, io->principal, a->src_mac, a->src_ip, a->src_port);
}

/* The answers of an ended task of the journal: TASKINFO (its end), then COMPLETE (it ran:
 * exit status) or REJECT (it did not run to its end: the reason its state stands for). */
static void
answer_ended(struct nl_port *io, const struct farm_jr *j, const struct nl_msg_fsubmit *fs,
	     const struct nl_frame_addr *a)
{
	struct nl_msg m = { .type = NL_MSG_TASKINFO };
	struct nl_msg_taskinfo *ti = &m.u.farm.taskinfo;
	bool ran = j->state == NL_FARM_T_OK || j->state == NL_FARM_T_TIMEOUT ||
		   (j->state == NL_FARM_T_FAILED && j->status >= 0);

	ti->task_id = fs->task_id;
	ti->worker_id = j->worker_id;
	ti->mach = j->mach;
	ti->n_split = fs->n_split;
	ti->has_end = 1;
	ti->state = j->state == NL_FARM_T_TIMEOUT ? NL_DONE_TIMEOUT :
		    j->state == NL_FARM_T_CANCELLED ? NL_DONE_CANCELLED : NL_DONE_EXITED;
	ti->run_ms = j->run_ms;
	ti->queue_ms = j->queue_ms;
	ti->cpu_ms = j->cpu_ms;
	ti->mem_kib = j->mem_kib;
	if (ran)
		send_to(io, a, &m);
	memset(&m, 0, sizeof(m));
	m.type = ran ? NL_MSG_COMPLETE : NL_MSG_REJECT;
	m.u.reply.task_id = fs->task_id;
	m.u.reply.client_ts_ns = fs->client_ts_ns;
	if (ran)
		m.u.reply.status = j->status;
	else
		m.u.reply.reason = j->state == NL_FARM_T_CANCELLED ? NL_REJECT_CANCELLED :
				   j->state == NL_FARM_T_SHUTDOWN ? NL_REJECT_SHUTDOWN :
				   j->state == NL_FARM_T_REJECTED ? NL_REJECT_NO_MACHINE :
								    NL_REJECT_MACHINE_LOST;
	send_to(io, a, &m);
}

bool
nl_dp_farm_jrnl_resend(struct nl_port *io, const struct nl_msg_fsubmit *fs,
		       const struct nl_frame_addr *a)
{
	struct nl_dp_farm *f = io->farm;
	struct farm_jr *j;

	f->cur_pin_w = 0;
	if (fs->attempt == 0 || f->jr_n == 0 || (j = jr_find(f, fs->task_id)) == NULL ||
	    j->state == 0 || j->attempt != fs->attempt)
		return false; /* new here, or another attempt: admitted as any FSUBMIT */
	if (j->state >= NL_FARM_T_OK) {
		answer_ended(io, j, fs, a);
		nl_atomic_store_relaxed(&f->n_jr_answered, f->n_jr_answered + 1);
		return true; /* kept: a later resend is answered the same */
	}
	if (j->state == NL_FARM_T_RUNNING) {
		f->cur_pin_w = j->worker_id + 1;
		f->cur_pin_m = j->mach;
	}
	return false;
}

void
nl_dp_farm_jrnl_admitted(struct nl_dp_farm *f, uint64_t task_id)
{
	struct farm_jr *j;

	if (f->jr_n == 0 || (j = jr_find(f, task_id)) == NULL || j->state >= NL_FARM_T_OK)
		return;
	j->state = 0; /* admitted again: from here on its resends are the live state's */
}

/* Slot of machine `mach` of the live worker whose id is wid, once that worker offers the
 * command of handle h again (its CMDS follow its HELLO: a DISPATCH before them would name no
 * command, and the worker would answer 127 without running it); else NO_SLOT. */
static uint32_t
slot_of(const struct nl_port *io, uint32_t wid, uint16_t mach, uint32_t h)
{
	const struct nl_dp_farm *f = io->farm;

	for (unsigned int i = 0; i < io->n_workers; i++) {
		const struct nl_dp_worker *w = &io->workers[i];

		if (w->live && w->worker_id == wid && mach < w->n_mach) {
			uint32_t m = w->slot[mach];

			if (h == 0 || h >= f->n_h || f->wk[i].cmd[f->hd[h].name] == 0)
				return NO_SLOT;
			return m < io->dp->n_mach && io->alive[m] ? m : NO_SLOT;
		}
	}
	return NO_SLOT;
}

/* A journaled run of handle h on worker w1 - 1, machine mach: *m = that slot now (1; *w1 = 0,
 * decided), wait for the worker to join again (2), or given up (0; *w1 = 0): its commands
 * died with it. Sub-task 0's (pin_w, pin_m) and the later ones' (farm_jr.subs) alike. */
static int
pin_try(struct nl_port *io, uint32_t *w1, uint16_t mach, uint32_t h, uint32_t *m)
{
	struct nl_dp_farm *f = io->farm;
	uint32_t s = slot_of(io, *w1 - 1, mach, h);

	if (s != NO_SLOT) {
		*m = s;
		*w1 = 0;
		nl_atomic_store_relaxed(&f->n_jr_pinned, f->n_jr_pinned + 1);
		return 1;
	}
	if (rte_rdtsc() < f->pin_until_tsc)
		return 2; /* its worker may join again: wait */
	*w1 = 0; /* gone for good: its commands died with it */
	nl_atomic_store_relaxed(&f->n_jr_unpinned, f->n_jr_unpinned + 1);
	return 0;
}

int
nl_dp_farm_jrnl_pin(struct nl_port *io, uint32_t aux, uint32_t *m)
{
	struct nl_dp_farm *f = io->farm;

	if (f->pin_w == NULL || aux >= io->dp->n_pool || f->pin_w[aux] == 0)
		return 0;
	return pin_try(io, &f->pin_w[aux], f->pin_m[aux], f->h_by_aux[aux], m);
}

int
nl_dp_farm_jrnl_pin_sub(struct nl_port *io, const struct nl_task *t, unsigned int sub, uint32_t *m)
{
	struct nl_dp_farm *f = io->farm;
	struct farm_jr *j;

	if (f->jr_n == 0 || sub == 0 || t->aux >= io->dp->n_pool ||
	    (j = jr_find(f, t->id)) == NULL || j->subs == NULL || j->attempt != f->att[t->aux])
		return 0;
	for (unsigned int i = 0; i < j->n_subs; i++)
		if (j->subs[i].sub == sub && j->subs[i].w1 != 0)
			return pin_try(io, &j->subs[i].w1, j->subs[i].mach, f->h_by_aux[t->aux], m);
	return 0;
}

void
nl_dp_farm_jrnl_handle(struct nl_port *io, uint32_t h)
{
	struct nl_dp_farm *f = io->farm;
	const struct farm_handle *hd = &f->hd[h];
	const char *name = f->names[hd->name];
	size_t ln = strlen(name) + 1, lq = strlen(hd->req) + 1, lr = strlen(hd->rank) + 1;
	struct nl_farm_rec_ev e = { .kind = NL_REC_HANDLE, .worker_id = h,
				    .principal = io->principal };

	if (f->rec == NULL || (e.text = malloc(ln + lq + lr)) == NULL)
		return;
	memcpy(e.text, name, ln);
	memcpy(e.text + ln, hd->req, lq);
	memcpy(e.text + ln + lq, hd->rank, lr);
	nl_farm_rec_put(f->rec, &e);
}

/* ---- write-ahead: frames to workers held until their records are on disk ---- */

void
nl_dp_farm_send_worker(struct nl_port *io, const struct nl_msg *msg, uint32_t principal,
		       const uint8_t mac[6], uint32_t ip, uint16_t port)
{
	struct nl_dp_farm *f = io->farm;
	struct farm_held *h;
	uint64_t mark;
	bool farm = false;

	if (f != NULL && msg->type == NL_MSG_DISPATCH && msg->u.dispatch.token < io->dp->n_pool)
		farm = f->h_by_aux[msg->u.dispatch.token] != 0;
	if (f == NULL || f->rec == NULL || f->held == NULL ||
	    !(farm || (msg->type == NL_MSG_KILL && f->n_held > 0)))
		goto now;
	mark = nl_farm_rec_mark(f->rec);
	if (f->n_held == 0 && nl_farm_rec_durable(f->rec, mark))
		goto now;
	if (f->n_held == FARM_HELD) {
		nl_atomic_store_relaxed(&f->n_held_full, f->n_held_full + 1);
		goto now;
	}
	h = &f->held[(f->held_head + f->n_held++) % FARM_HELD];
	h->type = msg->type;
	if (msg->type == NL_MSG_DISPATCH)
		h->u.d = msg->u.dispatch;
	else
		h->u.k = msg->u.farm.kill;
	h->principal = principal;
	memcpy(h->mac, mac, 6);
	h->ip = ip;
	h->port = port;
	h->mark = mark;
	return;
now:
	nl_dp_io_send(io, msg, principal, mac, ip, port);
}

unsigned int
nl_dp_farm_jrnl_release(struct nl_port *io)
{
	struct nl_dp_farm *f = io->farm;
	unsigned int n = 0;

	while (f->n_held > 0) {
		struct farm_held *h = &f->held[f->held_head];
		struct nl_msg m = { .type = h->type };

		if (!nl_farm_rec_durable(f->rec, h->mark))
			break;
		if (h->type == NL_MSG_DISPATCH)
			m.u.dispatch = h->u.d;
		else
			m.u.farm.kill = h->u.k;
		nl_dp_io_send(io, &m, h->principal, h->mac, h->ip, h->port);
		f->held_head = (f->held_head + 1) % FARM_HELD;
		f->n_held--;
		n++;
	}
	return n;
}

void
nl_dp_farm_jrnl_stop(struct nl_port *io)
{
	struct nl_dp_farm *f = io->farm;

	/* at the stop: a held DISPATCH's task was answered already (shutdown) and is not sent;
	 * a KILL behind it goes (a KILL of a sub-task a worker does not hold is counted there) */
	for (; f != NULL && f->n_held > 0; f->n_held--) {
		struct farm_held *h = &f->held[f->held_head];

		if (h->type == NL_MSG_KILL) {
			struct nl_msg m = { .type = NL_MSG_KILL };

			m.u.farm.kill = h->u.k;
			nl_dp_io_send(io, &m, h->principal, h->mac, h->ip, h->port);
		}
		f->held_head = (f->held_head + 1) % FARM_HELD;
	}
}

/* ---- tasks of the journal admitted again without their submitter ---- */

#define RQ_LOOK 256u     /* entries looked at per call */
#define RQ_IDLE_MS 10u   /* nothing due: look again after [ms] */
#define RQ_RETRY_MS 500u /* REJECT overload (the pool is full): again after [ms] */

static void
rq_done(struct nl_dp_farm *f, struct farm_rq *e)
{
	e->task_id = 0;
	f->rq_left--;
}

/* Whether a machine for handle h has joined (its match table entry has one eligible). */
static bool
rq_eligible(const struct nl_dp_farm *f, uint32_t h)
{
	return f->tab != NULL && h < f->tab->n_h && f->tab->ent[h].n_elig > 0;
}

bool
nl_dp_farm_requeue_next(struct nl_port *io, struct nl_msg *m, struct nl_frame_addr *a,
			uint32_t *principal)
{
	struct nl_dp_farm *f = io->farm;
	uint64_t now, hz;

	if (f == NULL || f->rq_left == 0)
		return false;
	now = rte_rdtsc();
	if (now < f->rq_next_tsc)
		return false;
	hz = rte_get_tsc_hz();
	for (uint32_t k = 0; k < RQ_LOOK && k < f->rq_n; k++) {
		uint32_t i = (f->rq_cur + k) % f->rq_n;
		struct farm_rq *e = &f->rq[i];
		const struct farm_jr *j;
		struct nl_msg_fsubmit *fs;

		if (e->task_id == 0)
			continue;
		j = jr_find(f, e->task_id);
		if (j == NULL || j->state == 0 || j->state >= NL_FARM_T_OK) {
			rq_done(f, e); /* a resend admitted it first (or it ended) */
			continue;
		}
		if (now < e->retry_tsc || !rq_eligible(f, e->q.handle))
			continue; /* its machines have not joined (again) yet */
		memset(m, 0, sizeof(*m));
		m->type = NL_MSG_FSUBMIT;
		fs = &m->u.farm.fsubmit;
		fs->task_id = e->task_id;
		fs->need = e->q.need;
		fs->data_bits = e->q.data_bits;
		fs->client_ts_ns = e->q.client_ts_ns;
		fs->handle = e->q.handle;
		fs->n_split = e->q.n_split;
		fs->args_len = e->q.args_len;
		fs->attempt = e->q.attempt;
		memcpy(fs->args, e->q.args, e->q.args_len);
		fs->time_limit_ms = e->q.tl_ms;
		memset(a, 0, sizeof(*a));
		memcpy(a->src_mac, e->q.mac, 6);
		a->src_ip = e->q.ip;
		a->src_port = e->q.port;
		*principal = e->q.principal;
		e->retry_tsc = now + (uint64_t)RQ_RETRY_MS * hz / 1000;
		f->rq_cur = (i + 1) % f->rq_n;
		f->rq_last = i;
		f->last_reject = 0;
		return true;
	}
	f->rq_cur = (f->rq_cur + RQ_LOOK) % f->rq_n;
	f->rq_next_tsc = now + (uint64_t)RQ_IDLE_MS * hz / 1000;
	return false;
}

void
nl_dp_farm_requeue_done(struct nl_port *io)
{
	struct nl_dp_farm *f = io->farm;
	struct farm_rq *e;

	if (f == NULL || f->rq_last >= f->rq_n || (e = &f->rq[f->rq_last])->task_id == 0)
		return;
	if (f->last_reject == NL_REJECT_OVERLOAD)
		return; /* the pool or the engine is full: again after RQ_RETRY_MS */
	if (f->last_reject != 0) {
		nl_atomic_store_relaxed(&f->n_jr_requeue_refused, f->n_jr_requeue_refused + 1);
		DP_LOG(WARNING, "journal: task %u_%u not admitted again (REJECT reason %u); "
				"its submitter may resend it\n", (unsigned int)(e->task_id >> 32),
		       (unsigned int)(e->task_id & 0xffffffffu), f->last_reject);
	} else {
		nl_atomic_store_relaxed(&f->n_jr_requeued, f->n_jr_requeued + 1);
	}
	rq_done(f, e);
}
