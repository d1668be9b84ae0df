/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Task farms in port mode (nl_dp_farm.h). State of the I/O lcore:
 *  - names[]: every command name a worker ever announced (index = name id, < FARM_NAMES);
 *  - wk[wi].cmd[name id]: worker wi's local command id for it (0 = not offered);
 *  - ad[m]: machine m's ClassAd record (from its worker's MACHAD), with the text it came from;
 *  - hd[h]: registered handles (name id, compiled Requirements/Rank, their texts);
 *  - the match table of the current machine generation, published to the manager lcores
 *    through nl_match_src (release store) and freed after a QSBR grace period;
 *  - sub[]: counters per submit id (open addressing; an entry with nothing running is reused
 *    when the table is full);
 *  - dd: resent FSUBMITs (same task id and attempt, from any address of its principal: a
 *    resumed submitter has another port; #34) answered from the state of the first: ACCEPT while it runs, its stored TASKINFO and final reply once it
 *    ended; never run twice. Bounded: an in-flight entry per pool slot (n_meta) and the last
 *    FARM_DONE_KEEP ended ones (a ring; the oldest is forgotten first), in an open-addressing
 *    table of twice that with backward-shift deletion.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_log.h>
#include <rte_telemetry.h>

#include <urcu/urcu-qsbr.h>

#include "nl_atomic.h"
#include "nl_dp_farm_priv.h"

#define DP_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)

struct tab_free {
	struct rcu_head rcu;
	struct nl_match_tab *tab;
};

static void
tab_free_cb(struct rcu_head *h)
{
	struct tab_free *f = caa_container_of(h, struct tab_free, rcu);

	nl_match_tab_free(f->tab);
	free(f);
}

/* Rebuild the match table: per handle and machine, eligible = alive, its worker offers the
 * handle's command, and Requirements is true; Rank as evaluated. */
static void
rebuild(struct nl_port *io)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_farm *f = io->farm;
	struct nl_match_tab *tab, *old;
	struct tab_free *tf;

	tab = nl_match_tab_new(dp->n_mach, f->n_h, dp->gen_rcu->id);
	if (tab == NULL) {
		DP_LOG(ERR, "task farm: no memory for the match table\n");
		return;
	}
	for (uint32_t h = 1; h < f->n_h; h++) {
		struct farm_handle *hd = &f->hd[h];

		if (nl_match_expr_has_rank(hd->x))
			nl_match_tab_use_rank(tab, h);
		for (uint32_t m = 0; m < dp->n_mach; m++) {
			uint32_t wi = io->slot_worker[m];
			bool ok = false;
			double rank = 0;

			if (!io->alive[m] || wi == NO_SLOT || f->wk[wi].cmd[hd->name] == 0)
				continue;
			nl_match_expr_eval(hd->x, f->ad[m].ad, &ok, &rank);
			nl_match_tab_set(tab, h, m, ok, rank);
		}
	}
	old = f->tab;
	f->tab = tab;
	__atomic_store_n(&nl_match_src.tab, tab, __ATOMIC_RELEASE);
	f->n_rebuilds++;
	if (old != NULL) {
		tf = malloc(sizeof(*tf));
		if (tf == NULL) { /* cannot defer: leak rather than free under readers */
			DP_LOG(ERR, "task farm: old match table leaked (no memory)\n");
			return;
		}
		tf->tab = old;
		urcu_qsbr_call_rcu(&tf->rcu, tab_free_cb);
	}
}

static int32_t
worker_of(const struct nl_port *io, const struct nl_frame_addr *a)
{
	for (unsigned int i = 0; i < io->n_workers; i++)
		if (io->workers[i].live && io->workers[i].ip == a->src_ip &&
		    io->workers[i].port == a->src_port)
			return (int32_t)i;
	return -1;
}

static int
name_id(struct nl_dp_farm *f, const char *name, bool add)
{
	for (unsigned int i = 0; i < f->n_names; i++)
		if (strcmp(f->names[i], name) == 0)
			return (int)i;
	if (!add || f->n_names == FARM_NAMES)
		return -1;
	snprintf(f->names[f->n_names], sizeof(f->names[0]), "%s", name);
	return (int)f->n_names++;
}

static void
on_cmds(struct nl_port *io, const struct nl_msg_cmds *c, const struct nl_frame_addr *a)
{
	struct nl_dp_farm *f = io->farm;
	int32_t wi = worker_of(io, a);
	uint16_t cmd[FARM_NAMES] = { 0 };

	if (wi < 0)
		return; /* not joined yet: the worker repeats its CMDS */
	for (unsigned int i = 0; i < c->n; i++) {
		int id = name_id(f, c->cmd[i].name, true);

		if (id >= 0)
			cmd[id] = c->cmd[i].id;
	}
	if (memcmp(cmd, f->wk[wi].cmd, sizeof(cmd)) == 0)
		return;
	memcpy(f->wk[wi].cmd, cmd, sizeof(cmd));
	rebuild(io);
	nl_dp_farm_pull(io); /* #34: a pinned run waits for its worker's commands */
}

static void
on_machad(struct nl_port *io, const struct nl_msg_machad *ma, const struct nl_frame_addr *a)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_farm *f = io->farm;
	int32_t wi = worker_of(io, a);
	struct nl_match_mad *ad = NULL;
	char err[200];
	uint32_t m;

	if (wi < 0 || ma->mach >= io->workers[wi].n_mach)
		return;
	m = io->workers[wi].slot[ma->mach];
	if (m == NO_SLOT || m >= dp->n_mach)
		return;
	if (f->ad[m].text != NULL && strcmp(f->ad[m].text, ma->ad) == 0)
		return; /* unchanged (workers repeat their records) */
	if (nl_match_mad_parse(ma->ad, ma->len, &ad, err, sizeof(err)) != 0) {
		DP_LOG(WARNING, "worker %u machine %u: bad ClassAd record ignored: %s\n",
		       io->workers[wi].worker_id, ma->mach, err);
		return;
	}
	nl_match_mad_free(f->ad[m].ad);
	free(f->ad[m].text);
	f->ad[m].ad = ad;
	f->ad[m].text = strdup(ma->ad);
	rebuild(io); /* a new record: a new generation of every handle's result */
}

/* Answer the frame being handled: to its address, sealed for its sender (#35). */
static void
send_to(struct nl_port *io, const struct nl_frame_addr *a, const struct nl_msg *m)
{
	nl_dp_io_send(io, m, io->principal, a->src_mac, a->src_ip, a->src_port);
}

static void
on_register(struct nl_port *io, const struct nl_msg_register *r, const struct nl_frame_addr *a)
{
	struct nl_dp_farm *f = io->farm;
	struct nl_msg out = { .type = NL_MSG_REGISTERED };
	struct nl_msg_registered *rd = &out.u.farm.regd;
	int id = name_id(f, r->name, false);
	uint32_t h;

	rd->req_id = r->req_id;
	if (id < 0) { /* #33: say which commands the workers offer */
		size_t n = 0;

		rd->status = NL_FARM_REG_UNKNOWN_CMD;
		for (unsigned int i = 0; i < f->n_names && n < NL_FARM_ERR_MAX; i++) {
			bool offered = false;

			for (unsigned int w = 0; w < io->n_workers && !offered; w++)
				offered = io->workers[w].live && f->wk[w].cmd[i] != 0;
			if (offered)
				n += (size_t)snprintf(rd->err + n, NL_FARM_ERR_MAX + 1 - n, "%s%s",
						      n ? ", " : "", f->names[i]);
		}
		rd->err_len = (uint8_t)(n < NL_FARM_ERR_MAX ? n : NL_FARM_ERR_MAX);
		goto reply;
	}
	for (h = 1; h < f->n_h; h++)
		if (f->hd[h].name == (uint32_t)id && strcmp(f->hd[h].req, r->req) == 0 &&
		    strcmp(f->hd[h].rank, r->rank) == 0)
			break;
	if (h == f->n_h) {
		struct farm_handle *hd = &f->hd[h];
		char err[NL_FARM_ERR_MAX + 1];
		int rc;

		if (h == FARM_HANDLES ||
		    (io->principal < NL_PRINCIPAL_MAX && f->pr_h[io->principal] >= FARM_PR_HANDLES)) {
			rd->status = NL_FARM_REG_FULL; /* #35: no principal fills the table for all */
			rd->err_len = (uint8_t)snprintf(rd->err, sizeof(rd->err), "%s",
							h == FARM_HANDLES ?
								"the appliance's handles are all in use" :
								"this principal's 128 handles are in use");
			goto reply;
		}
		rc = nl_match_expr_compile(r->req, r->req_len, r->rank, r->rank_len, &hd->x, err,
					   sizeof(err));
		if (rc != 0) {
			rd->status = rc == -EDOM ? NL_FARM_REG_BAD_RANK : NL_FARM_REG_BAD_REQ;
			rd->err_len = (uint8_t)strnlen(err, NL_FARM_ERR_MAX);
			memcpy(rd->err, err, rd->err_len);
			goto reply;
		}
		hd->name = (uint32_t)id;
		hd->has_rank = nl_match_expr_has_rank(hd->x); /* #33: no pull with a Rank */
		hd->req = strdup(r->req);
		hd->rank = strdup(r->rank);
		if (hd->req == NULL || hd->rank == NULL) {
			free(hd->req);
			free(hd->rank);
			nl_match_expr_free(hd->x);
			rd->status = NL_FARM_REG_FULL;
			goto reply;
		}
		f->n_h++;
		if (io->principal < NL_PRINCIPAL_MAX)
			f->pr_h[io->principal]++;
		rebuild(io); /* the new handle's row, before the client can use it */
		nl_dp_farm_jrnl_handle(io, h); /* #34: it outlives a restart */
	}
	rd->handle = h;
	rd->status = NL_FARM_REG_OK;
	if (f->tab != NULL && h < f->tab->n_h)
		rd->n_match = (uint16_t)(f->tab->ent[h].n_elig > 65535 ? 65535 :
					 f->tab->ent[h].n_elig);
reply:
	send_to(io, a, &out);
}

/* #34: register handle h again from the journal (nl_dp_farm_jrnl_init()'s restore): 0, or -1
 * (refused, logged) */
static int
handle_restore(struct nl_port *io, uint32_t h, const char *name, const char *req, const char *rank,
	       uint32_t principal)
{
	struct nl_dp_farm *f = io->farm;
	struct farm_handle *hd = &f->hd[h];
	char err[NL_FARM_ERR_MAX + 1];
	int id;

	if (h != f->n_h || h >= FARM_HANDLES || (id = name_id(f, name, true)) < 0 ||
	    nl_match_expr_compile(req, strlen(req), rank, strlen(rank), &hd->x, err,
				  sizeof(err)) != 0) {
		DP_LOG(WARNING, "journal: handle %u (%s) not registered again: handles after it "
				"are registered anew by their submitters\n", h, name);
		return -1;
	}
	hd->name = (uint32_t)id;
	hd->has_rank = nl_match_expr_has_rank(hd->x);
	hd->req = strdup(req);
	hd->rank = strdup(rank);
	if (hd->req == NULL || hd->rank == NULL) {
		free(hd->req);
		free(hd->rank);
		nl_match_expr_free(hd->x);
		return -1;
	}
	f->n_h++;
	if (principal < NL_PRINCIPAL_MAX)
		f->pr_h[principal]++;
	return 0;
}

static struct farm_sub *sub_find(struct nl_dp_farm *f, uint64_t id, bool add);

static struct farm_sub *
sub_find(struct nl_dp_farm *f, uint64_t id, bool add)
{
	uint32_t i0 = (uint32_t)(id * 0x9e3779b97f4a7c15ull >> 52) & (FARM_SUBMITS - 1);
	struct farm_sub *victim = NULL;

	if (id == 0)
		return NULL;
	for (uint32_t k = 0; k < FARM_SUBMITS; k++) {
		struct farm_sub *s = &f->sub[(i0 + k) & (FARM_SUBMITS - 1)];

		if (s->id == id)
			return s;
		if (s->id == 0) {
			if (!add)
				return NULL;
			victim = s;
			break;
		}
		if (add && s->c.running == 0 && (victim == NULL || s->last_tsc < victim->last_tsc))
			victim = s;
	}
	if (victim == NULL)
		return NULL;
	/* a new submit id (or one replacing the least recent idle one) */
	memset(&victim->c, 0, sizeof(victim->c));
	victim->owned = false;
	victim->cancelled = false;
	nl_atomic_store_relaxed(&victim->id, id);
	return victim;
}

/* #35: whether the principal of the frame being handled may see or add to batch s: the one
 * that submitted it first, or the site key's holder (the operator). */
static bool
farm_sub_mine(const struct nl_port *io, const struct farm_sub *s)
{
	return !s->owned || s->owner == io->principal || io->principal == NL_PRINCIPAL_NONE;
}

/* The slot of a DONE is free again (occupancy, then a parked sub-task may take it), after
 * the task's end record: nl_dp_farm_occ.c and nl_dp_farm_ctl.c, this file above both. */
void
nl_dp_farm_done(struct nl_port *io, const struct nl_task *t, uint32_t m,
		const struct nl_msg_done *d)
{
	struct nl_dp_farm *f = io->farm;

	if (f == NULL || t->aux >= io->dp->n_pool || f->h_by_aux[t->aux] == 0 ||
	    f->h_by_aux[t->aux] >= f->n_h)
		return;
	nl_dp_farm_ctl_done(io, t, d); /* the task's end record */
	nl_dp_farm_occ_done(io, t, m, d);
}

unsigned int
nl_dp_farm_poll(struct nl_port *io)
{
	struct nl_dp_farm *f = io->farm;

	if (f == NULL)
		return 0;
	if (f->pin_until_tsc != 0 && rte_rdtsc() >= f->pin_until_tsc) {
		f->pin_until_tsc = 0; /* #34: runs still waiting for their worker are placed now */
		nl_dp_farm_pull(io);
	}
	return nl_dp_farm_ctl_poll(io) /* the records thread's answers */ +
	       nl_dp_farm_jrnl_release(io) + /* #34: DISPATCHes whose records are on disk */
	       nl_dp_farm_occ_poll(io);
}

static void
on_status_q(struct nl_port *io, const struct nl_msg_status_q *q, const struct nl_frame_addr *a)
{
	struct nl_msg out = { .type = NL_MSG_STATUS };
	struct farm_sub *s = sub_find(io->farm, q->submit_id, false);

	out.u.farm.status.req_id = q->req_id;
	out.u.farm.status.submit_id = q->submit_id;
	if (s != NULL && !farm_sub_mine(io, s)) /* #35: another principal's batch: unknown */
		s = NULL;
	if (io->farm->rec != NULL) { /* #33: task counts from the records (their thread answers) */
		nl_dp_farm_ctl_status_q(io, q, a, s);
		return;
	}
	if (s != NULL) {
		out.u.farm.status.known = 1;
		out.u.farm.status.c = s->c;
	}
	send_to(io, a, &out);
}

/* Answer the FSUBMIT being handled REJECT reason (counted as rejected at ingress): false, the
 * frame is not admitted. */
static bool
reject(struct nl_port *io, const struct nl_frame_addr *a, const struct nl_msg_fsubmit *fs,
       uint16_t reason)
{
	struct nl_msg r = { .type = NL_MSG_REJECT };

	r.u.reply.task_id = fs->task_id;
	r.u.reply.client_ts_ns = fs->client_ts_ns;
	r.u.reply.reason = reason;
	nl_stat_add_st(&io->dp->io_rejected, 1);
	send_to(io, a, &r);
	io->farm->last_reject = reason; /* #34: for a task the journal admits again */
	return false;
}

bool
nl_dp_farm_frame(struct nl_port *io, const struct nl_msg *m, const struct nl_frame_addr *a,
		 struct nl_msg_submit *s)
{
	struct nl_dp_farm *f = io->farm;
	const struct nl_msg_fsubmit *fs;
	struct farm_sub *sc;

	if (f == NULL)
		return false;
	switch (m->type) {
	case NL_MSG_CMDS:
		on_cmds(io, &m->u.farm.cmds, a);
		return false;
	case NL_MSG_MACHAD:
		on_machad(io, &m->u.farm.machad, a);
		return false;
	case NL_MSG_REGISTER:
		on_register(io, &m->u.farm.reg, a);
		return false;
	case NL_MSG_STATUS_Q:
		on_status_q(io, &m->u.farm.status_q, a);
		return false;
	case NL_MSG_TASKS_Q: /* #33 */
		nl_dp_farm_ctl_tasks_q(io, &m->u.farm.tasks_q, a);
		return false;
	case NL_MSG_CANCEL: { /* #33 */
		struct farm_sub *s = sub_find(io->farm, m->u.farm.cancel.submit_id, false);

		nl_dp_farm_ctl_cancel(io, &m->u.farm.cancel, a,
				      s != NULL && farm_sub_mine(io, s) ? s : NULL);
		nl_dp_farm_pull(io); /* parked sub-tasks of a cancelled batch end now */
		return false;
	}
	case NL_MSG_FSUBMIT:
		break;
	default: /* REGISTERED, STATUS: ours to send */
		nl_stat_add_st(&io->c.drops[NL_PROTO_E_TYPE], 1);
		return false;
	}
	fs = &m->u.farm.fsubmit;
	if (nl_dp_farm_dd_resend(io, fs, a))
		return false; /* a resend of an accepted FSUBMIT: answered, not run again */
	if (nl_dp_farm_jrnl_resend(io, fs, a))
		return false; /* #34: ended before a restart: answered from the journal */
	sc = sub_find(f, fs->task_id >> 32, true);
	if (sc != NULL && !farm_sub_mine(io, sc)) { /* #35: another principal's batch */
		return reject(io, a, fs, NL_REJECT_BAD_TASK);
	}
	if (sc != NULL) {
		if (!sc->owned)
			sc->owner = io->principal;
		sc->owned = true;
		sc->c.submitted++;
		sc->last_tsc = rte_rdtsc();
	}
	memset(s, 0, sizeof(*s));
	s->task_id = fs->task_id;
	s->need = fs->need;
	s->instr = fs->instr;
	s->data_bits = fs->data_bits;
	s->client_ts_ns = fs->client_ts_ns;
	s->n_split = fs->n_split;
	s->args_len = fs->args_len;
	memcpy(s->args, fs->args, fs->args_len);
	if (fs->handle >= f->n_h) { /* e.g. the appliance restarted: the client registers again */
		if (sc != NULL)
			sc->c.rejected++;
		return reject(io, a, fs, NL_REJECT_NO_HANDLE);
	}
	if (fs->handle < f->n_h_restored && rte_rdtsc() < f->pin_until_tsc &&
	    (f->tab == NULL || fs->handle >= f->tab->n_h || f->tab->ent[fs->handle].n_elig == 0)) {
		/* #34: just restarted with handles of the journal, and no machine for this one
		 * has joined again yet: "later", not "no machine" (the client backs off) */
		return reject(io, a, fs, NL_REJECT_OVERLOAD);
	}
	s->instr = (uint64_t)nl_dp_farm_instr(io, f->hd[fs->handle].name); /* #33: booking */
	f->cur_h = fs->handle;
	f->cur_attempt = fs->attempt;
	f->cur_tl_ms = fs->time_limit_ms; /* #33 */
	f->cur_tid = fs->task_id;
	return true;
}

void
nl_dp_farm_ctx_get(const struct nl_port *io, struct nl_dp_farm_ctx *c)
{
	const struct nl_dp_farm *f = io->farm;

	c->h = f != NULL ? f->cur_h : 0;
	c->attempt = f != NULL ? f->cur_attempt : 0;
	c->tl_ms = f != NULL ? f->cur_tl_ms : 0;
	c->tid = f != NULL ? f->cur_tid : 0;
	c->pin_w = f != NULL ? f->cur_pin_w : 0; /* #34 */
	c->pin_m = f != NULL ? f->cur_pin_m : 0;
}

void
nl_dp_farm_ctx_set(struct nl_port *io, const struct nl_dp_farm_ctx *c)
{
	struct nl_dp_farm *f = io->farm;

	if (f == NULL)
		return;
	f->cur_h = c->h;
	f->cur_attempt = c->attempt;
	f->cur_tl_ms = c->tl_ms;
	f->cur_tid = c->tid;
	f->cur_pin_w = c->pin_w; /* #34 */
	f->cur_pin_m = c->pin_m;
}

void
nl_dp_farm_submit_end(struct nl_port *io)
{
	if (io->farm != NULL)
		io->farm->cur_h = 0;
}

void
nl_dp_farm_task(struct nl_port *io, struct nl_task *t, struct nl_dp_meta *mt)
{
	struct nl_dp_farm *f = io->farm;

	(void)mt;
	if (f != NULL && t->aux < io->dp->n_pool) {
		f->h_by_aux[t->aux] = f->cur_h;
		f->att[t->aux] = f->cur_h != 0 ? f->cur_attempt : 0; /* #34: in its DISPATCHes */
		f->pin_w[t->aux] = f->cur_h != 0 ? f->cur_pin_w : 0; /* #34: the journal's run */
		f->pin_m[t->aux] = f->cur_pin_m;
		f->cur_pin_w = 0;
		nl_dp_farm_dd_forget_aux(f, t->aux); /* the slot's last FSUBMIT, if it never ended here */
		f->cur_aux = t->aux;
		nl_dp_farm_ctl_task(io, t->aux, /* #33: time limit, a pending CANCEL */
				    f->cur_h != 0 ? sub_find(f, f->cur_tid >> 32, false) : NULL);
	}
}

/* TASKINFO before a farm task's COMPLETE: where sub-task 0 ran, and when. */
static void
taskinfo(struct nl_port *io, const struct nl_dp_meta *mt, uint64_t task_id)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_farm *f = io->farm;
	size_t aux = (size_t)(mt - io->meta);
	struct nl_msg m = { .type = NL_MSG_TASKINFO };
	struct nl_msg_taskinfo *ti = &m.u.farm.taskinfo;
	double us_per_cyc = 1e6 / (double)rte_get_tsc_hz();
	uint64_t now = rte_rdtsc(), d = f->disp_tsc[aux];
	uint32_t slot = f->disp_slot[aux];

	ti->task_id = task_id;
	ti->n_split = mt->task != NULL && mt->task->n_split > 0 ? mt->task->n_split : 1;
	ti->slot = slot;
	if (slot < dp->n_mach && io->slot_worker[slot] != NO_SLOT) {
		ti->worker_id = io->workers[io->slot_worker[slot]].worker_id;
		ti->mach = (uint16_t)io->slot_local[slot];
	}
	if (d >= mt->ingress_tsc && d <= now) {
		ti->disp_us = (uint32_t)((double)(d - mt->ingress_tsc) * us_per_cyc);
		ti->run_us = (uint32_t)((double)(now - d) * us_per_cyc);
	}
	nl_dp_farm_ctl_taskinfo(io, (uint32_t)aux, ti); /* #33: state, run/queue/CPU time, memory */
	f->last_ti = *ti; /* kept with the COMPLETE for resends (dd_ended) */
	f->last_ti_id = task_id;
	nl_dp_io_send(io, &m, mt->principal, mt->client_mac, mt->client_ip, mt->client_port);
}

void
nl_dp_farm_reply(struct nl_port *io, const struct nl_dp_meta *mt, uint64_t task_id, uint8_t type,
		 int32_t status, const struct nl_msg *m)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_farm *f = io->farm;
	struct farm_sub *s;
	bool at_ingress;

	if (f == NULL)
		return;
	/* during an FSUBMIT's admission the replies are its ACCEPT / REJECT (mt may be a copy) */
	at_ingress = f->cur_h != 0;
	size_t aux = 0;

	if (!at_ingress) { /* mt is io->meta[aux] of a task, or a copy on on_submit()'s stack */
		uintptr_t off = (uintptr_t)mt - (uintptr_t)io->meta;

		aux = off / sizeof(*mt);
		if ((uintptr_t)mt < (uintptr_t)io->meta || aux >= dp->n_pool ||
		    off % sizeof(*mt) != 0 || f->h_by_aux[aux] == 0)
			return;
	}
	if (at_ingress && type == NL_MSG_ACCEPT && f->cur_aux < dp->n_pool) {
		/* #34: keyed by task id alone: a resend from any address of the submitter (a
		 * resumed one has another port) is answered from this state */
		struct nl_farm_dd *e = nl_farm_dd_put(&f->dd, task_id, 0, 0);

		e->attempt = f->cur_attempt;
		e->done = 0;
		e->ref = f->cur_aux;
		f->inf_tid[f->cur_aux] = task_id;
		f->inf_ip[f->cur_aux] = mt->client_ip;
		f->inf_port[f->cur_aux] = mt->client_port;
		nl_dp_farm_ctl_accept(io, task_id, f->cur_attempt); /* #33: recorded queued */
		nl_dp_farm_jrnl_admitted(f, task_id); /* #34: accepted (not at a REJECT overload) */
	}
	if (at_ingress && type == NL_MSG_REJECT && m != NULL)
		f->last_reject = m->u.reply.reason; /* #34: for a task the journal admits again */
	s = sub_find(f, task_id >> 32, false);
	if (s == NULL)
		return;
	s->last_tsc = rte_rdtsc();
	switch (type) {
	case NL_MSG_ACCEPT:
		nl_atomic_store_relaxed(&s->c.accepted, s->c.accepted + 1);
		nl_atomic_store_relaxed(&s->c.running, s->c.running + 1);
		break;
	case NL_MSG_REJECT:
		if (at_ingress) {
			nl_atomic_store_relaxed(&s->c.rejected, s->c.rejected + 1);
			break;
		}
		nl_dp_farm_dd_ended(f, (uint32_t)aux, m, io->meta[aux].principal);
		nl_dp_farm_ctl_end(io, (uint32_t)aux, task_id, m, NULL); /* #33 */
		nl_atomic_store_relaxed(&s->c.lost, s->c.lost + 1);
		nl_atomic_store_relaxed(&s->c.running, s->c.running - (s->c.running > 0));
		break;
	case NL_MSG_COMPLETE:
		taskinfo(io, mt, task_id);
		nl_dp_farm_dd_ended(f, (uint32_t)aux, m, io->meta[aux].principal);
		nl_dp_farm_ctl_end(io, (uint32_t)aux, task_id, m, &f->last_ti); /* #33 */
		if (status == 0)
			nl_atomic_store_relaxed(&s->c.done_ok, s->c.done_ok + 1);
		else
			nl_atomic_store_relaxed(&s->c.done_err, s->c.done_err + 1);
		nl_atomic_store_relaxed(&s->c.running, s->c.running - (s->c.running > 0));
		break;
	default:
		break;
	}
}

void
nl_dp_farm_dispatch(struct nl_port *io, const struct nl_task *t, uint32_t m,
		    struct nl_msg_dispatch *d)
{
	struct nl_dp_farm *f = io->farm;
	uint32_t h, wi;

	if (f == NULL || t->aux >= io->dp->n_pool || (h = f->h_by_aux[t->aux]) == 0 ||
	    h >= f->n_h)
		return;
	wi = io->slot_worker[m];
	if (d->sub == 0) {
		f->disp_tsc[t->aux] = rte_rdtsc();
		f->disp_slot[t->aux] = m;
	}
	nl_dp_farm_occ_dispatch(io, t, f->hd[h].name, m); /* #33: occupies m until its DONE */
	nl_dp_farm_ctl_dispatch(io, t, d, wi == NO_SLOT ? 0 : io->workers[wi].worker_id);
	/* not offered there (cannot happen after a matched pick): 0xffff is in no worker's list,
	 * so the worker answers 127 */
	d->cmd_id = wi == NO_SLOT || f->wk[wi].cmd[f->hd[h].name] == 0 ?
			    0xffff : f->wk[wi].cmd[f->hd[h].name];
}

void
nl_dp_farm_machines(struct nl_port *io)
{
	const struct nl_dp_gen *g = io->dp->gen_rcu;
	double sum = 0;
	unsigned int n = 0;

	if (io->farm == NULL)
		return;
	for (uint32_t m = 0; m < g->n_mach; m++) /* #33: the booking scale of farm tasks */
		if (io->alive[m]) {
			sum += g->mach[m].speed_ips;
			n++;
		}
	io->farm->mean_speed = n > 0 ? sum / n : 0;
	if (io->farm->n_h > 1)
		rebuild(io);
	nl_dp_farm_pull(io); /* #33: a slot that joined takes parked sub-tasks */
}

void
nl_dp_farm_worker_gone(struct nl_port *io, uint32_t wi)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_farm *f = io->farm;

	if (f == NULL || wi >= MAX_WORKERS)
		return;
	memset(f->wk[wi].cmd, 0, sizeof(f->wk[wi].cmd));
	for (unsigned int i = 0; i < io->workers[wi].n_mach; i++) {
		uint32_t m = io->workers[wi].slot[i];

		if (m == NO_SLOT || m >= dp->n_mach)
			continue;
		nl_dp_farm_slot_gone(io, m);
		nl_match_mad_free(f->ad[m].ad);
		free(f->ad[m].text);
		f->ad[m].ad = NULL;
		f->ad[m].text = NULL;
	}
}

int
nl_dp_farm_init(struct nl_port *io)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_farm *f = calloc(1, sizeof(*f));
	int rc;

	if (f == NULL)
		return -ENOMEM;
	f->ad = calloc(dp->n_mach, sizeof(*f->ad));
	f->h_by_aux = calloc(dp->n_pool, sizeof(uint32_t));
	f->disp_tsc = calloc(dp->n_pool, sizeof(uint64_t));
	f->disp_slot = calloc(dp->n_pool, sizeof(uint32_t));
	if (f->ad == NULL || f->h_by_aux == NULL || f->disp_tsc == NULL || f->disp_slot == NULL) {
		free(f->ad);
		free(f->h_by_aux);
		free(f->disp_tsc);
		free(f->disp_slot);
		free(f);
		return -ENOMEM;
	}
	rc = nl_dp_farm_dd_init(f, dp->n_pool);
	if (rc == 0 && nl_dp_farm_occ_init(f, dp->n_mach, dp->n_pool) != 0) {
		nl_dp_farm_dd_fini(f);
		rc = -ENOMEM;
	}
	if (rc == 0) {
		io->farm = f;
		rc = nl_dp_farm_ctl_init(io); /* #33: records on disk (--state-dir) */
		io->farm = NULL;
		if (rc != 0) {
			nl_dp_farm_ctl_fini(f);
			nl_dp_farm_occ_fini(f);
			nl_dp_farm_dd_fini(f);
		}
	}
	if (rc != 0) {
		free(f->ad);
		free(f->h_by_aux);
		free(f->disp_tsc);
		free(f->disp_slot);
		free(f);
		return rc;
	}
	f->n_h = 1;
	io->farm = f;
	rc = nl_dp_farm_jrnl_init(io, handle_restore); /* #34: handles and tasks of the last run */
	if (rc != 0) {
		DP_LOG(ERR, "task farm: no memory for the journal\n");
		nl_dp_farm_fini(io);
		return rc;
	}
	nl_match_src.n_aux = dp->n_pool;
	nl_match_src.h_by_aux = f->h_by_aux;
	__atomic_store_n(&nl_match_src.tab, NULL, __ATOMIC_RELEASE);
	if (nl_dp_farm_tel_attach() != 0) /* telemetry is an extra: serve without it */
		DP_LOG(WARNING, "task-farm telemetry commands not registered\n");
	return 0;
}

void
nl_dp_farm_fini(struct nl_port *io)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_farm *f = io->farm;

	if (f == NULL)
		return;
	nl_dp_farm_jrnl_stop(io); /* #34 */
	/* the manager lcores have stopped: nobody reads the table any more */
	__atomic_store_n(&nl_match_src.tab, NULL, __ATOMIC_RELEASE);
	nl_match_src.h_by_aux = NULL;
	nl_match_src.n_aux = 0;
	nl_match_tab_free(f->tab); /* older tables are freed by call_rcu */
	for (uint32_t h = 1; h < f->n_h; h++) {
		nl_match_expr_free(f->hd[h].x);
		free(f->hd[h].req);
		free(f->hd[h].rank);
	}
	for (uint32_t m = 0; m < dp->n_mach; m++) {
		nl_match_mad_free(f->ad[m].ad);
		free(f->ad[m].text);
	}
	free(f->ad);
	free(f->h_by_aux);
	free(f->disp_tsc);
	free(f->disp_slot);
	nl_dp_farm_dd_fini(f);
	nl_dp_farm_occ_fini(f);
	nl_dp_farm_ctl_fini(f);
	nl_dp_farm_jrnl_fini(f);
	io->farm = NULL;
	free(f);
}
