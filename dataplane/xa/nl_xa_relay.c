/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "Asked before machine_lost" (issue #36, docs/scale-out.md): a task handed to an appliance
 * that then dies may have run there. Its workers know: each DISPATCH of another appliance's
 * task carries the task's origin (nl_xa_origin_ctl(): appliance, handle, hand-over sequence),
 * and a worker that fails over to the dead appliance's standby tells the standby, for each
 * such sub-task it held, that it ended (its DONE), runs, or was withdrawn before it started
 * (relayed DONEs, docs/protocol.md "Relayed DONE"). The standby passes each word on to the
 * origin as a HANDBACK record of reason NL_XA_REASON_WORKER (nl_xa_relay_ctl()), over the
 * acknowledged link. The origin keeps the words with the parked task (nl_xa_worker_word_ctl())
 * and, when the dead appliance's hold is over, answers REJECT machine_lost only a task none of
 * whose sub-tasks ran (nl_xa_asked_ctl()); one that ran is answered COMPLETE when each of its
 * sub-tasks that ran has ended (with reason machine_lost and the sub-tasks done when not all
 * of them ran), waiting up to 2 minutes for those still running. An appliance that restarts
 * (a new incarnation) has lost what was parked at it; its workers, told to join again, tell its
 * new life the same things, and it tells the origins: a task lost so waits XA_RESTART_WAIT_S
 * for a word before it is answered (nl_xa_restart_wait_ctl()). Control lcore only.
 * Source: Slurm's slurmctld asks slurmd which jobs it still runs when a node registers again
 * (REQUEST_NODE_REGISTRATION_STATUS); HTCondor's shadow reconnects to the starter before a job
 * is declared lost.
 */
#include <string.h>

#include <arpa/inet.h>
#include <rte_cycles.h>
#include <rte_log.h>

#include "nl_atomic.h"
#include "nl_xa_core.h"

#define XA_RESTART_WAIT_S 3.0 /* a task lost by a restart waits this long for its workers'
			       * word [s]: they rejoin the new life within about 0.5 s (their LOAD
			       * is answered "join again"), tell it, and it tells us */

void
nl_xa_origin_ctl(struct nl_port *io, const struct nl_task *t, struct nl_msg_dispatch *d)
{
	const struct nl_xa *xa = nl_xa_of(io->dp);
	const struct xa_task *xt = &xa->task[t->aux];
	const struct nl_dp_meta *mt = &io->meta[t->aux];

	if (xt->state == XA_OWN && xa->resend != NULL && xa->cfg.app[xa->self].standby >= 0 &&
	    !(xt->flags & XA_TF_FARM) && mt->client_port != 0) {
		/* our own client's task: the client's address, for its resend at our standby
		 * (NL_ORIGIN_CLIENT, nl_xa_resend.c) */
		d->has_origin = 1;
		d->origin_app = (uint16_t)(xa->self | NL_ORIGIN_CLIENT);
		d->origin_ip = 0;
		d->origin_port = 0;
		d->origin_token = ntohl(mt->client_ip);
		d->origin_seq = mt->client_port;
		return;
	}
	if (xt->state != XA_FOREIGN)
		return;
	d->has_origin = 1;
	d->origin_app = xt->origin;
	d->origin_ip = xa->cfg.app[xt->origin].ip;
	d->origin_port = xa->cfg.app[xt->origin].port;
	d->origin_token = xt->token;
	d->origin_seq = xt->seq;
}

bool
nl_xa_relay_ctl(struct nl_port *io, const struct nl_msg_done *d, int32_t wi)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct nl_xa_back b;

	/* wi >= 0: a worker joined here (the port checked its address and key), one that failed
	 * over from its dead appliance or rejoined it after its restart; wi < 0: a worker whose
	 * appliance fell silent, telling the origin straight: only for our own tasks */
	if (wi < 0 && d->origin_app != xa->self)
		return false;
	if (d->origin_app & NL_ORIGIN_CLIENT) { /* a client task of the appliance that died */
		if (nl_xa_client_word_ctl(io, d))
			return true;
		nl_atomic_store_relaxed(&xa->relay_bad, xa->relay_bad + 1);
		return false;
	}
	if (d->origin_app >= xa->cfg.n_app || d->sub >= NL_PROTO_MAX_SPLIT) {
		nl_atomic_store_relaxed(&xa->relay_bad, xa->relay_bad + 1);
		return false;
	}
	memset(&b, 0, sizeof(b));
	b.task_id = d->task_id;
	b.origin_token = d->origin_token;
	b.origin_seq = d->origin_seq;
	b.reason = NL_XA_REASON_WORKER;
	b.n_done = d->sub;
	b.at_app = d->relay;
	b.hops = d->state;
	b.status = d->status;
	if (wi < 0)
		nl_atomic_store_relaxed(&xa->told_direct, xa->told_direct + 1);
	else
		nl_atomic_store_relaxed(&xa->relayed, xa->relayed + 1);
	if (d->origin_app == xa->self)
		nl_xa_worker_word_ctl(io, &b);
	else
		nl_xa_queue_back_ctl(io, d->origin_app, &b);
	return true;
}

/* Answer t, parked, whose sub-tasks that ran have all ended: COMPLETE with the sub-tasks done;
 * reason machine_lost when not all of them ran or one's end was not heard (it ran in part). */
static void
answer_ran(struct nl_port *io, struct nl_task *t, bool end_unheard)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_words w = xa->task[t->aux].w; /* (unparking clears them) */

	nl_xa_unpark(xa, t);
	nl_xa_answer_words(io, t, &w, end_unheard);
}

void
nl_xa_worker_word_ctl(struct nl_port *io, const struct nl_xa_back *b)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct nl_task *t = nl_xa_parked_lookup(xa, b->origin_token, b->origin_seq, b->task_id);
	struct xa_task *xt;

	if (t == NULL || b->n_done >= t->n_split) { /* answered already, or not ours */
		nl_atomic_store_relaxed(&xa->late_words, xa->late_words + 1);
		return;
	}
	xt = &xa->task[t->aux];
	nl_atomic_store_relaxed(&xa->worker_words, xa->worker_words + 1);
	xa_words_put(&xt->w, b->at_app, b->n_done, b->status);
	if (xt->await && (xt->w.ran & ~xt->w.end) == 0)
		answer_ran(io, t, false);
}

bool
nl_xa_asked_ctl(struct nl_port *io, struct nl_task *t)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_task *xt = &xa->task[t->aux];

	if (xt->w.ran == 0)
		return false; /* no worker said it ran: REJECT machine_lost is true */
	if (xt->await)
		return true; /* waiting already (settled again: its appliance restarted) */
	nl_atomic_store_relaxed(&xa->asked_ran, xa->asked_ran + 1);
	if ((xt->w.ran & ~xt->w.end) == 0) {
		answer_ran(io, t, false);
		return true;
	}
	xt->await = 1;
	xt->await_tsc = rte_rdtsc() + (uint64_t)(XA_AWAIT_S * (double)rte_get_tsc_hz());
	nl_atomic_store_relaxed(&xa->awaiting, xa->awaiting + 1);
	return true;
}

/* t waits `s` seconds (lost_tsc, scanned by nl_xa_await_poll_ctl()) unless it waits already. */
static void
lost_wait(struct nl_xa *xa, struct xa_task *xt, double s)
{
	if (xt->lost_tsc == 0) {
		xt->lost_tsc = rte_rdtsc() + (uint64_t)(s * (double)rte_get_tsc_hz());
		nl_atomic_store_relaxed(&xa->restart_waiting, xa->restart_waiting + 1);
	}
}

bool
nl_xa_restart_wait_ctl(struct nl_port *io, struct nl_task *t)
{
	struct nl_xa *xa = nl_xa_of(io->dp);

	lost_wait(xa, &xa->task[t->aux], XA_RESTART_WAIT_S);
	return true;
}

void
nl_xa_dead_at_wait_ctl(struct nl_port *io, struct nl_task *t)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_task *xt = &xa->task[t->aux];

	xt->dead_at = 1;
	lost_wait(xa, xt, xa->cfg.dead_hold_s + xa->cfg.word_wait_s);
}

void
nl_xa_dead_at_clear(struct nl_xa *xa, struct nl_task *t)
{
	struct xa_task *xt = &xa->task[t->aux];

	if (!xt->dead_at)
		return;
	xt->dead_at = 0;
	nl_xa_lost_wait_end(xa, xt);
}

void
nl_xa_await_poll_ctl(struct nl_port *io)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	uint64_t now = rte_rdtsc();

	if ((xa->awaiting == 0 && xa->restart_waiting == 0) ||
	    now - xa->await_scan_tsc < rte_get_tsc_hz() / 4)
		return;
	xa->await_scan_tsc = now;
	for (unsigned int i = 0; i < dp->n_pool; i++) {
		struct nl_task *t = dp->pool_task[i];
		struct xa_task *xt = &xa->task[i];

		if (t == NULL || xt->state != XA_PARKED)
			continue;
		if (xt->await && now > xt->await_tsc) {
			answer_ran(io, t, true); /* it ran; the end of one is not heard */
		} else if (xt->lost_tsc != 0 && now > xt->lost_tsc) {
			nl_xa_lost_wait_end(xa, xt); /* its wait is over: asked, else lost */
			if (!nl_xa_asked_ctl(io, t))
				nl_xa_lost_one_ctl(io, t, xt->at);
		}
	}
}
