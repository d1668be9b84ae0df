/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A client's resend at the standby (issue #36, docs/scale-out.md "A client's resend at the
 * standby"). An appliance c that dies leaves its own clients' tasks unanswered; a client with
 * --standby sends them again to c's standby b. One of them may have run at c: its workers
 * live on and ran what c DISPATCHed. b must not run it a second time. So:
 *   - c, when it has a standby, puts a client-origin block on the DISPATCHes of its own tasks
 *     (origin_app | NL_ORIGIN_CLIENT, the client's address, nl_xa_origin_ctl());
 *   - c's workers, failing over to b, tell b what became of each such sub-task (ended, runs,
 *     withdrawn: relayed DONEs, as of other appliances' tasks); b keeps those words in a table
 *     by (client address, task id), DPDK's rte_hash, the oldest forgotten past XA_CW_CAP;
 *   - the client marks its resends (SUBMIT flag resend); b accepts such a task and holds it
 *     (XA_RESENT) until no more words can come: while an appliance it is the standby of is
 *     suspected, and XA_RESEND_TELL_S after it adopted a dead one's subtree (its workers
 *     fail over within a HELLO period of the adoption and tell at once); at least
 *     XA_RESEND_MIN_S, at most [scaleout] word_wait_s. Then nl_xa_resend_decide()
 *     (nl_xa_proto.h): a task none of whose sub-tasks was said to run is run here (entered
 *     as a new task); one that ran is answered COMPLETE from the words once the sub-tasks
 *     said to run have ended (reason machine_lost when not all ran, or an end was not heard
 *     in XA_AWAIT_S).
 * Two more sources of words: a task of c's client that had crossed to appliance d (c handed
 * it over) is told of by d when d declares c dead (running, or ended in the last
 * XA_CEND_RECENT_S; its later end too): the HANDOVER carries the client's address, and d
 * sends HANDBACKs of reason NL_XA_REASON_CLIENT to c's standby. And c restarted at once: its
 * workers rejoin its new life and tell it, and it passes the words on its previous life's
 * clients' tasks on to b (NL_XA_REASON_CLIENT_SUB).
 * A resend that no word said ran, while the one appliance we stand by is live (its client
 * failed over while it was alive), is handed to it instead of run (nl_xa_pass.c). An
 * appliance that is nobody's standby runs a resend at once. Control lcore only.
 * Source: Slurm's slurmctld asks a registering slurmd which jobs it still runs before it
 * requeues them (REQUEST_NODE_REGISTRATION_STATUS); HTCondor's schedd reconnects to a job's
 * starter before it runs the job again.
 */
#include <errno.h>
#include <string.h>

#include <arpa/inet.h>
#include <rte_cycles.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>

#include "nl_atomic.h"
#include "nl_dp_inline.h"
#include "nl_swim.h"
#include "nl_xa_core.h"

#define XA_CW_CAP 16384u       /* client tasks whose words are kept (the oldest forgotten) */
#define XA_RESEND_MIN_S 2.0    /* a resend is held at least this long [s]: the client failed
				* over after its own silence (3 s); SWIM suspects a dead peer
				* within about 1.5 s of its last frame (probe, indirect probes) */
#define XA_CEND_CAP 4096u      /* ends of crossed client tasks kept (the oldest forgotten) */
#define XA_CEND_RECENT_S 30.0  /* those told at their origin's death: ended this recently [s]
				* (their HANDBACK may not have reached it; as the workers'
				* recent ends) */

/* the key of a client task: the client's address and its task id */
struct xa_ckey {
	uint64_t task_id;
	uint32_t ip;   /* network order */
	uint16_t port; /* host order */
	uint16_t zero;
};

/* The end of a client task that had crossed to us (foreign), kept for its origin's death. */
struct xa_cend {
	uint64_t task_id;
	uint64_t tsc;      /* when it ended [TSC] */
	uint32_t cip;      /* the client: IPv4 address, host order */
	uint16_t cport;
	uint16_t origin;   /* the appliance that accepted it */
	uint16_t n_done;
	int32_t status;
};

struct xa_resend {
	struct xa_cend cend[XA_CEND_CAP]; /* ring: the last XA_CEND_CAP ends */
	uint64_t n_cend;
	struct rte_hash *h;
	struct xa_words *w;    /* [rte_hash_max_key_id() + 1], by the key's position */
	struct xa_ckey *fifo;  /* [XA_CW_CAP] keys in the order put (the oldest goes first) */
	uint64_t n_put;
	uint64_t scan_tsc;
};

int
nl_xa_resend_init(struct nl_xa *xa)
{
	char name[RTE_HASH_NAMESIZE];
	struct xa_resend *r;
	struct rte_hash_parameters p = {
		.entries = XA_CW_CAP,
		.key_len = sizeof(struct xa_ckey),
		.hash_func = rte_jhash,
		.socket_id = (int)rte_socket_id(),
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE, /* the full capacity, no bucket miss */
	};
	int32_t max;

	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	static unsigned int made; /* a unique name per table made in this process */

	snprintf(name, sizeof(name), "nl_xa_cw_%u_%u", xa->self, made++);
	p.name = name;
	r->h = rte_hash_create(&p);
	max = r->h != NULL ? rte_hash_max_key_id(r->h) : -1;
	r->fifo = calloc(XA_CW_CAP, sizeof(*r->fifo));
	r->w = max >= 0 ? calloc((size_t)max + 1, sizeof(*r->w)) : NULL;
	xa->resend = r;
	if (r->h == NULL || r->fifo == NULL || r->w == NULL || nl_xa_pass_init(xa) != 0) {
		nl_xa_resend_free(xa);
		return -ENOMEM;
	}
	return 0;
}

void
nl_xa_resend_free(struct nl_xa *xa)
{
	struct xa_resend *r = xa->resend;

	nl_xa_pass_free(xa);
	if (r == NULL)
		return;
	rte_hash_free(r->h);
	free(r->w);
	free(r->fifo);
	free(r);
	xa->resend = NULL;
}

static struct xa_ckey
key_of(uint32_t ip, uint16_t port, uint64_t task_id)
{
	return (struct xa_ckey){ .task_id = task_id, .ip = ip, .port = port };
}

/* The words of key k, or NULL. */
static struct xa_words *
find(struct xa_resend *r, const struct xa_ckey *k)
{
	int32_t pos = rte_hash_lookup(r->h, k);

	return pos >= 0 ? &r->w[pos] : NULL;
}

/* The words of key k, made empty when new (the oldest key forgotten when full). */
static struct xa_words *
find_or_add(struct xa_resend *r, const struct xa_ckey *k)
{
	struct xa_words *w = find(r, k);
	int32_t pos;

	if (w != NULL)
		return w;
	if (r->n_put >= XA_CW_CAP)
		(void)rte_hash_del_key(r->h, &r->fifo[r->n_put % XA_CW_CAP]);
	pos = rte_hash_add_key(r->h, k);
	if (pos < 0)
		return NULL;
	r->fifo[r->n_put++ % XA_CW_CAP] = *k;
	memset(&r->w[pos], 0, sizeof(r->w[pos]));
	return &r->w[pos];
}

/* Whether this appliance is the configured standby of some appliance. */
static bool
is_standby(const struct nl_xa *xa)
{
	for (unsigned int x = 0; x < xa->cfg.n_app; x++)
		if (xa->cfg.app[x].standby == (int)xa->self)
			return true;
	return false;
}

/* Whether the workers of the appliances we are the standby of have had their time to tell
 * (a resend held since held_tsc): none of them is suspected; each declared dead whose
 * subtree we adopted was adopted XA_RESEND_TELL_S ago and has a worker on each adopted slot
 * (its workers fail over after their own --failover-s, maybe longer than ours); each that
 * restarted did so XA_RESEND_TELL_S ago (its workers rejoin it, tell it, and it passes the
 * words on); at least XA_RESEND_MIN_S, at most [scaleout] word_wait_s after the resend
 * came. */
static bool
told_over(const struct nl_port *io, const struct nl_xa *xa, uint64_t held_tsc, uint64_t now)
{
	const double hz = (double)rte_get_tsc_hz();

	if ((double)(now - held_tsc) >= xa->cfg.word_wait_s * hz)
		return true;
	if ((double)(now - held_tsc) < XA_RESEND_MIN_S * hz)
		return false;
	for (unsigned int x = 0; x < xa->cfg.n_app; x++) {
		const struct xa_peer *p = &xa->peer[x];

		if (x == xa->self || xa->cfg.app[x].standby != (int)xa->self)
			continue;
		if (p->live && nl_atomic_load_relaxed(&p->swim_state) == NL_SWIM_SUSPECT)
			return false; /* its verdict is coming */
		if (!p->live && xa->holder[x] == xa->self &&
		    ((double)(now - xa->adopt_tsc[x]) < XA_RESEND_TELL_S * hz ||
		     nl_xa_adopted_slot_empty(io, xa, x)))
			return false; /* its workers are failing over to us */
		if (p->live && xa->reborn_tsc[x] != 0 &&
		    (double)(now - xa->reborn_tsc[x]) < XA_RESEND_TELL_S * hz)
			return false; /* its workers are telling its new life */
	}
	return true;
}

bool
nl_xa_resend_take_ctl(struct nl_port *io, struct nl_task *t)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_task *xt = &xa->task[t->aux];

	if (!(xt->flags & XA_TF_RESEND) || xa->resend == NULL || !is_standby(xa))
		return false;
	xt->state = XA_RESENT;
	xt->held_tsc = rte_rdtsc();
	nl_atomic_store_relaxed(&xa->resends_held, xa->resends_held + 1);
	nl_atomic_store_relaxed(&xa->resend_holding, xa->resend_holding + 1);
	return true;
}

/* Run resend t here: entered as a new task, at one of the managers this appliance runs when
 * local entry finds one, else where the policy's entry() says (not at one of our own managers
 * we left at our standby: then our first subtree root). */
static void
run(struct nl_port *io, struct nl_task *t)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	const struct nl_sched *s = dp->gen_rcu->s;
	uint64_t rnd = nl_port_xorshift(&io->rnd);
	uint32_t m = nl_xa_entry_ctl(io, t, rnd);

	if (m == NL_NODE_NONE)
		m = s->ops->entry(s, t, rnd);
	if (m < dp->n_mgr && xa->mgr_home[m] == xa->self && xa->mgr_app[m] != xa->self) {
		m = NL_NODE_NONE;
		for (unsigned int i = 0; i < xa->n_root && m == NL_NODE_NONE; i++)
			if (xa->root[i].app == xa->self)
				m = xa->root[i].mgr;
	}
	nl_atomic_store_relaxed(&xa->resends_run, xa->resends_run + 1);
	xa->task[t->aux].flags &= (uint8_t)~NL_XA_TF_RESEND; /* a task now: not a passed resend */
	if (m >= dp->n_mgr) {
		nl_xa_fail_task(io, t, NL_REJECT_NO_MACHINE);
		return;
	}
	t->flags &= ~NL_MODEL_SUBS_MASK;
	if (!nl_dp_inbox_put_ctl(dp, t, m))
		nl_xa_fail_task(io, t, NL_REJECT_OVERLOAD);
}

/* Resend t, held: run it, answer it, or hold it on (nl_xa_resend_decide()). */
static void
settle(struct nl_port *io, struct nl_task *t, uint64_t now)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_task *xt = &xa->task[t->aux];
	const struct nl_dp_meta *mt = &io->meta[t->aux];
	struct xa_ckey k = key_of(mt->client_ip, mt->client_port, t->id);
	const struct xa_words none = { 0 }, *w = find(xa->resend, &k);
	bool await_over = (double)(now - xt->held_tsc) >=
			  XA_AWAIT_S * (double)rte_get_tsc_hz();
	enum nl_xa_resend_act act;

	w = w != NULL ? w : &none;
	act = nl_xa_resend_decide(t->n_split, w->ran, w->end, told_over(io, xa, xt->held_tsc, now),
				  await_over);
	if (act == NL_XA_RESEND_WAIT)
		return;
	xt->state = XA_OWN;
	nl_atomic_store_relaxed(&xa->resend_holding, xa->resend_holding - 1);
	if (act == NL_XA_RESEND_RUN) {
		if (!nl_xa_pass_ctl(io, t)) /* its appliance live: it may hold the task (nl_xa_pass.c) */
			run(io, t);
		return;
	}
	nl_atomic_store_relaxed(&xa->resends_answered, xa->resends_answered + 1);
	nl_xa_answer_words(io, t, w, await_over && (w->ran & ~w->end) != 0);
}

/* A worker's word on a sub-task of a task of our previous life's client (we restarted; the
 * worker rejoined us and told us): passed on to our standby, where the client may have sent
 * the task again when we fell silent (HANDBACK reason NL_XA_REASON_CLIENT_SUB). */
static void
pass_on(struct nl_port *io, const struct nl_msg_done *d)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	int sb = xa->cfg.app[xa->self].standby;
	struct nl_xa_back b = { .task_id = d->task_id, .origin_token = d->origin_token,
				.origin_seq = d->origin_seq, .reason = NL_XA_REASON_CLIENT_SUB,
				.n_done = d->sub, .status = d->status, .hops = d->state,
				.at_app = d->relay };

	if (sb < 0 || (unsigned int)sb == xa->self || !xa->peer[sb].live)
		return;
	nl_xa_queue_back_ctl(io, (unsigned int)sb, &b);
	nl_atomic_store_relaxed(&xa->client_passed, xa->client_passed + 1);
}

/* The words kept on task task_id of the client at IPv4 cip (host order), UDP port cport, for
 * its resend, found or added (and counted: client_words); NULL when the table is full. */
static struct xa_words *
client_words(struct nl_xa *xa, uint32_t cip, uint32_t cport, uint64_t task_id)
{
	struct xa_ckey k = key_of(htonl(cip), (uint16_t)cport, task_id);
	struct xa_words *w = find_or_add(xa->resend, &k);

	if (w != NULL)
		nl_atomic_store_relaxed(&xa->client_words, xa->client_words + 1);
	return w;
}

bool
nl_xa_client_word_ctl(struct nl_port *io, const struct nl_msg_done *d)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_words *w;

	if (xa->resend == NULL || d->origin_seq == 0 || d->origin_seq > 0xffff ||
	    (d->origin_app & ~NL_ORIGIN_CLIENT) >= xa->cfg.n_app)
		return false;
	w = client_words(xa, d->origin_token, d->origin_seq, d->task_id);
	if (w == NULL)
		return false;
	xa_words_put(w, d->relay, d->sub, d->status);
	if ((d->origin_app & ~NL_ORIGIN_CLIENT) == xa->self) /* our previous life's client */
		pass_on(io, d);
	return true;
}

/* One whole-task word (relay: ended with n_done sub-tasks done, or running) into w: an end
 * is final (a `running` that arrives after it, in another datagram, changes nothing). */
static void
put_whole(struct xa_words *w, unsigned int relay, unsigned int n_done, int32_t status)
{
	if (relay == NL_RELAY_ENDED) {
		w->ran = n_done >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n_done) - 1;
		w->end = w->ran;
		w->status = status;
		w->whole = 1;
	} else if (relay == NL_RELAY_RUNNING && !w->whole) {
		w->ran = ~UINT64_C(0); /* which sub-tasks run is not said: all, until its end */
	}
}

void
nl_xa_client_back_ctl(struct nl_port *io, const struct nl_xa_back *b)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_words *w;

	if (xa->resend == NULL || b->origin_seq == 0 || b->origin_seq > 0xffff ||
	    (b->reason == NL_XA_REASON_CLIENT &&
	     (b->at_app >= xa->cfg.n_app || (b->hops != NL_RELAY_ENDED &&
					     b->hops != NL_RELAY_RUNNING))) ||
	    (b->reason == NL_XA_REASON_CLIENT_SUB &&
	     (b->n_done >= 64 || b->at_app == NL_RELAY_NONE || b->at_app >= NL_RELAY_MAX))) {
		nl_atomic_store_relaxed(&xa->relay_bad, xa->relay_bad + 1);
		return;
	}
	w = client_words(xa, b->origin_token, b->origin_seq, b->task_id);
	if (w == NULL)
		return;
	if (b->reason == NL_XA_REASON_CLIENT_SUB) /* one sub-task, as the worker said it */
		xa_words_put(w, b->at_app, b->n_done, b->status);
	else
		put_whole(w, b->hops, b->n_done, b->status);
}

/* Tell the standby of dead appliance `origin` a word on a task of its client (cip, cport):
 * queued to it (a numbered HANDBACK: retransmitted until acknowledged), or kept here when we
 * are that standby. false (nothing told) when it has none, or it is not live. */
static bool
tell_standby(struct nl_port *io, unsigned int origin, uint64_t task_id, uint32_t cip,
	     uint16_t cport, unsigned int relay, unsigned int n_done, int32_t status)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	int sb = xa->cfg.app[origin].standby;
	struct nl_xa_back b = { .task_id = task_id, .origin_token = cip, .origin_seq = cport,
				.reason = NL_XA_REASON_CLIENT, .n_done = (uint16_t)n_done,
				.status = status, .hops = (uint16_t)relay,
				.at_app = (uint16_t)origin };

	if (sb < 0 || (unsigned int)sb == origin || cport == 0 || xa->resend == NULL)
		return false;
	if ((unsigned int)sb == xa->self)
		nl_xa_client_back_ctl(io, &b);
	else if (xa->peer[sb].live)
		nl_xa_queue_back_ctl(io, (unsigned int)sb, &b);
	else
		return false;
	nl_atomic_store_relaxed(&xa->crossed_told, xa->crossed_told + 1);
	return true;
}

void
nl_xa_crossed_end_ctl(struct nl_port *io, const struct nl_task *t, bool told)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	const struct xa_task *xt = &xa->task[t->aux];
	const struct nl_dp_meta *mt = &io->meta[t->aux];
	struct xa_resend *r = xa->resend;
	struct xa_cend *e;

	if (r == NULL || xt->cport == 0 || xa->cfg.app[xt->origin].standby < 0)
		return;
	e = &r->cend[r->n_cend++ % XA_CEND_CAP];
	*e = (struct xa_cend){ .task_id = t->id, .tsc = rte_rdtsc(), .cip = xt->cip,
			       .cport = xt->cport, .origin = xt->origin, .n_done = mt->n_done,
			       .status = mt->status };
	if (told || !xa->peer[xt->origin].live) /* it died while the task ran here */
		tell_standby(io, xt->origin, t->id, xt->cip, xt->cport, NL_RELAY_ENDED,
			     mt->n_done, mt->status);
}

void
nl_xa_crossed_dead_ctl(struct nl_port *io, unsigned int app)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	struct xa_resend *r = xa->resend;
	uint64_t now = rte_rdtsc(), recent = (uint64_t)(XA_CEND_RECENT_S * (double)rte_get_tsc_hz());
	uint64_t n = r != NULL && r->n_cend < XA_CEND_CAP ? r->n_cend : XA_CEND_CAP;

	if (r == NULL || xa->cfg.app[app].standby < 0)
		return;
	for (uint64_t i = 0; i < n; i++) { /* ended here; the HANDBACK may not have reached it */
		const struct xa_cend *e = &r->cend[i];

		if (e->origin == app && now - e->tsc <= recent)
			tell_standby(io, app, e->task_id, e->cip, e->cport, NL_RELAY_ENDED,
				     e->n_done, e->status);
	}
	for (unsigned int i = 0; i < dp->n_pool; i++) { /* here now: it runs, or will */
		struct xa_task *xt = &xa->task[i];

		if (dp->pool_task[i] == NULL || xt->state != XA_FOREIGN || xt->origin != app)
			continue;
		if (tell_standby(io, app, dp->pool_task[i]->id, xt->cip, xt->cport,
				 NL_RELAY_RUNNING, 0, 0))
			xt->flags |= XA_TF_TOLD;
	}
}

void
nl_xa_resend_poll_ctl(struct nl_port *io)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	uint64_t now = rte_rdtsc();

	if (xa->resend_holding == 0 || now - xa->resend->scan_tsc < rte_get_tsc_hz() / 10)
		return;
	xa->resend->scan_tsc = now;
	for (unsigned int i = 0; i < dp->n_pool && xa->resend_holding > 0; i++)
		if (dp->pool_task[i] != NULL && xa->task[i].state == XA_RESENT)
			settle(io, dp->pool_task[i], now);
}
