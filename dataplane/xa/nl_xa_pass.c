/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A client that fails over while its appliance is alive (issue #36, docs/scale-out.md "A
 * client that fails over while its appliance is alive"). Appliance x is live, but its client
 * heard nothing from it for its --failover-s (the client alone was cut off, or x's new life
 * served just as the client failed over) and sent its unanswered tasks again, flagged resend,
 * to x's standby b. No word of x's workers comes (they did not fail over), so b would run
 * each resend, while x may run or have run the first copy. So:
 *   - b, about to run a held resend (nl_xa_resend_decide() said run), hands it to x instead
 *     when x is the one live, unsuspected appliance b stands by: a HANDOVER record flagged
 *     NL_XA_TF_RESEND, parked at x as any hand-over (retransmitted; answered when x dies);
 *   - x runs nothing for it: when it holds a task of that client and id (accepted and not
 *     answered: here, or parked elsewhere), it ties the record to it, and that task's end
 *     is handed back to b as well; when it answered one lately (a ring of XA_OEND_CAP ends),
 *     it hands back that end; else it hands the record back of reason NL_XA_REASON_NOT_HELD;
 *   - b answers the client from x's end; on NOT_HELD, or when x is declared dead or
 *     restarts, b holds the resend again and decides on it itself (run, or answered from
 *     its workers' words), never passing it twice.
 * The client gets the end from both (the first final answer counts: nlevel-loadgen counts
 * the other dup_answers). Control lcore only.
 * Source: HTCondor's schedd asks the starter of a job it lost track of before it runs the job
 * again (job leases, "reconnect"); Slurm's slurmctld asks a registering slurmd for the jobs
 * it runs (REQUEST_NODE_REGISTRATION_STATUS).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "nl_atomic.h"
#include "nl_dp_inline.h"
#include "nl_swim.h"
#include "nl_xa_core.h"

#define XA_OEND_CAP 16384u /* own tasks' ends kept for a resend passed later (the oldest
			    * forgotten): 16 s of ends at 1,000 tasks/s; a client fails over
			    * after 3 s of silence and b holds a resend 2 s */

/* The end of an own task of a client, kept at x for its resend passed by b. */
struct xa_oend {
	uint64_t task_id;
	uint32_t cip;     /* the client: IPv4 address, network order */
	uint16_t cport;   /* host order */
	uint16_t reason;  /* 0: every sub-task ran; else the REJECT reason */
	uint16_t n_done;
	uint16_t pad;
	int32_t status;
};

int
nl_xa_pass_init(struct nl_xa *xa)
{
	if (xa->cfg.app[xa->self].standby < 0 || xa->oend != NULL)
		return 0; /* nobody passes us a resend */
	xa->oend = calloc(XA_OEND_CAP, sizeof(*xa->oend));
	return xa->oend != NULL ? 0 : -ENOMEM;
}

void
nl_xa_pass_free(struct nl_xa *xa)
{
	free(xa->oend);
	xa->oend = NULL;
}

/* The one live appliance we are the standby of, not suspected, with a manager that decides
 * there (a resend handed there reaches it); -1 when none, or more than one (the client's
 * appliance is then not known). */
static int
target(const struct nl_port *io, const struct nl_xa *xa, uint32_t *mgr)
{
	int x = -1;

	for (unsigned int a = 0; a < xa->cfg.n_app; a++) {
		if (a == xa->self || xa->cfg.app[a].standby != (int)xa->self)
			continue;
		if (x >= 0)
			return -1;
		x = (int)a;
	}
	if (x < 0 || !xa->peer[x].live ||
	    nl_atomic_load_relaxed(&xa->peer[x].swim_state) == NL_SWIM_SUSPECT)
		return -1;
	for (uint32_t m = 0; m < io->dp->n_mgr; m++)
		if (xa->mgr_app[m] == (unsigned int)x) {
			*mgr = m;
			return x;
		}
	return -1;
}

bool
nl_xa_pass_ctl(struct nl_port *io, struct nl_task *t)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_task *xt = &xa->task[t->aux];
	uint32_t m = 0;

	if ((xt->flags & NL_XA_TF_RESEND) || target(io, xa, &m) < 0)
		return false;
	xt->flags |= NL_XA_TF_RESEND;
	nl_atomic_store_relaxed(&xa->resends_passed, xa->resends_passed + 1);
	nl_xa_hand_out_ctl(io, t, m);
	return true;
}

/* The own task of the client at cip (network order), cport, with this id, accepted here and
 * not answered (here, or parked at another appliance); NULL when none. A scan of the pool:
 * passed resends are few (one per task unanswered at a client's failover). */
static struct nl_task *
held_task(const struct nl_port *io, const struct nl_xa *xa, uint32_t cip, uint16_t cport,
	  uint64_t id)
{
	const struct nl_dp *dp = io->dp;

	for (unsigned int i = 0; i < dp->n_pool; i++) {
		const struct nl_dp_meta *mt = &io->meta[i];
		struct nl_task *t = dp->pool_task[i];

		if (t != NULL && mt->held && mt->client_port == cport && mt->client_ip == cip &&
		    t->id == id && xa->task[i].state != XA_FOREIGN)
			return t;
	}
	return NULL;
}

/* The end kept of the own task of that client and id, newest first; NULL when none. */
static const struct xa_oend *
kept_end(const struct nl_xa *xa, uint32_t cip, uint16_t cport, uint64_t id)
{
	uint64_t n = xa->n_oend < XA_OEND_CAP ? xa->n_oend : XA_OEND_CAP;

	for (uint64_t k = 1; k <= n; k++) {
		const struct xa_oend *e = &xa->oend[(xa->n_oend - k) % XA_OEND_CAP];

		if (e->task_id == id && e->cport == cport && e->cip == cip)
			return e;
	}
	return NULL;
}

void
nl_xa_pass_in_ctl(struct nl_port *io, const struct nl_xa_task *r)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	const uint32_t cip = htonl(r->client_ip);
	struct nl_xa_back b = { .task_id = r->task_id, .origin_token = r->origin_token,
				.origin_seq = r->origin_seq, .hops = r->hops,
				.reason = NL_XA_REASON_NOT_HELD };
	const struct xa_oend *e;
	struct nl_task *t;

	if (r->client_port != 0 &&
	    (t = held_task(io, xa, cip, r->client_port, r->task_id)) != NULL) {
		struct xa_task *xt = &xa->task[t->aux];

		xt->tie_app = r->origin_app;
		xt->tie_token = r->origin_token;
		xt->tie_seq = r->origin_seq; /* != 0: the standby's hand-over sequence */
		nl_atomic_store_relaxed(&xa->resends_tied, xa->resends_tied + 1);
		return;
	}
	if (r->client_port != 0 && xa->oend != NULL &&
	    (e = kept_end(xa, cip, r->client_port, r->task_id)) != NULL) {
		b.reason = e->reason;
		b.n_done = e->n_done;
		b.status = e->status;
		nl_atomic_store_relaxed(&xa->resends_ended, xa->resends_ended + 1);
	} else {
		nl_atomic_store_relaxed(&xa->resends_not_held, xa->resends_not_held + 1);
	}
	nl_xa_queue_back_ctl(io, r->origin_app, &b);
}

bool
nl_xa_own_end_ctl(struct nl_port *io, const struct nl_task *t)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_task *xt = &xa->task[t->aux];
	const struct nl_dp_meta *mt = &io->meta[t->aux];
	const bool keep = xa->oend != NULL && mt->held && mt->client_port != 0;
	uint16_t reason;

	xt->flags = 0; /* the task ends here: its object starts clean */
	if (xt->tie_seq == 0 && !keep)
		return false; /* no standby, or no client: nothing more per task end */
	reason = nl_xa_end_reason(t);
	if (xt->tie_seq != 0) { /* its resend, passed here by our standby: the same end there */
		struct nl_xa_back b = { .task_id = t->id, .origin_token = xt->tie_token,
					.origin_seq = xt->tie_seq, .reason = reason,
					.n_done = mt->n_done, .status = mt->status,
					.hops = t->hops };

		xt->tie_seq = 0;
		nl_xa_queue_back_ctl(io, xt->tie_app, &b);
	}
	if (keep) {
		struct xa_oend *e = &xa->oend[xa->n_oend++ % XA_OEND_CAP];

		*e = (struct xa_oend){ .task_id = t->id, .cip = mt->client_ip,
				       .cport = mt->client_port, .reason = reason,
				       .n_done = mt->n_done, .status = mt->status };
	}
	return false;
}

bool
nl_xa_pass_back_ctl(struct nl_port *io, struct nl_task *t)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_task *xt = &xa->task[t->aux];

	if ((xt->flags & (NL_XA_TF_RESEND | XA_TF_RESEND)) != (NL_XA_TF_RESEND | XA_TF_RESEND))
		return false;
	nl_xa_unpark(xa, t);
	/* decided here now (nl_xa_resend.c), not passed again; held_tsc stays when it came: a
	 * task c did not hold is run at once, one of a c declared dead waits for its workers'
	 * words (told_over() reads c's state, not only the time) */
	xt->state = XA_RESENT;
	nl_atomic_store_relaxed(&xa->resend_holding, xa->resend_holding + 1);
	return true;
}
