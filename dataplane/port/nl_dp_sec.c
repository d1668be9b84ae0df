/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port mode's security and fair share (issue #16): see nl_dp_sec.h and docs/security.md.
 *
 * Fair admission. A SUBMIT that passes its principal's caps waits in that principal's fair
 * queue (a FIFO of the decoded message and its addresses). The I/O lcore admits from the
 * queues (nl_admit.h): while the appliance holds fewer tasks than its admission limit L
 * ([admission] max_in_flight, default 4 per machine slot), first the principals under their
 * share of L - R ([admission] reserve R), then, below L - R, anyone with a queue, each step by
 * deficit round robin (Shreedhar and Varghese, SIGCOMM 1995) with the weights as quanta. A
 * principal's share is its weight's part of the weights of the principals that have work
 * (tasks queued or in flight), so a heavy submitter holds its own share of L, the reserve stays
 * for principals under theirs (one that just started submitting is admitted at once), and an
 * idle principal's share goes to the others below L - R (work conserving). When the engine
 * cannot take the task (the pool or the entry inbox full), it stays at the head of its queue
 * and admission stops until the next loop: only a full fair queue is answered REJECT overload.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/prctl.h>

#include <sodium.h>

#include <rte_cycles.h>
#include <rte_log.h>
#include <rte_pause.h>
#include <rte_telemetry.h>

#include "nl_atomic.h"
#include "nl_dp_farm.h"
#include "nl_dp_sec.h"
#include "nl_admit.h"
#include "nl_port_priv.h"

#define DP_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)

struct sec_ent {
	struct nl_msg_submit s;
	struct nl_frame_addr a;
	struct nl_dp_farm_ctx farm; /* an FSUBMIT's handle and attempt (issue #15) */
};

struct sec_pr {
	struct nl_sec_counts c;
	double tokens;          /* token bucket [tasks] */
	uint64_t tok_ns;        /* last refill (CLOCK_REALTIME) */
	struct sec_ent *q;      /* FIFO [cap] */
	uint32_t head, cap;
};

struct nl_dp_sec {
	struct nl_principals ps;          /* copy */
	unsigned int site;                /* index of the site key's holder = ps.n */
	struct sec_pr pr[NL_PRINCIPAL_MAX + 1];
	struct nl_admit adm;              /* shares and the round over pr[] (nl_admit.h) */
	uint64_t limit;                   /* admission limit L */
	uint64_t denied;                  /* all principals */
	struct nl_sec_counts snap[NL_PRINCIPAL_MAX + 1]; /* with io->snap (seqlock) */
	nl_dp_sec_admit_fn admit;         /* the port's admission of a held SUBMIT */
};

static int snap_wait(struct nl_port *io, unsigned int timeout_ms);
static void snap_read(const struct nl_port *io, struct nl_dp_counts *c, struct nl_port_counts *pc,
		      struct nl_sec_counts *prc);

int
nl_dp_sec_create(struct nl_port *io, nl_dp_sec_admit_fn admit)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_sec *sec;

	if (io->o.principals == NULL)
		return 0;
	sec = calloc(1, sizeof(*sec));
	if (sec == NULL)
		return -ENOMEM;
	sec->ps = *io->o.principals;
	sec->admit = admit;
	sec->site = sec->ps.n;
	/* L: [admission] max_in_flight, else 4 tasks per machine slot (a task farm's machine runs
	 * one command at a time: more would wait in the workers' queues, out of fair order), at
	 * most the task pool; R: [admission] reserve, else L / 8 */
	sec->limit = sec->ps.max_in_flight != 0 ? sec->ps.max_in_flight : 4ull * dp->n_mach;
	if (sec->limit > dp->o.pool_size || sec->limit == 0)
		sec->limit = dp->o.pool_size;
	{
		uint32_t w[NL_PRINCIPAL_MAX + 1];
		uint64_t r = sec->ps.has_reserve ? sec->ps.reserve : sec->limit / 8;

		for (unsigned int i = 0; i <= sec->site; i++)
			w[i] = i < sec->site ? sec->ps.p[i].weight : 1;
		if (r >= sec->limit)
			DP_LOG(WARNING, "[admission] reserve = %llu is not below the admission limit "
			       "%llu: %llu used\n", (unsigned long long)r,
			       (unsigned long long)sec->limit, (unsigned long long)sec->limit - 1);
		if (nl_admit_init(&sec->adm, sec->site + 1, w, sec->limit, r) != 0) {
			nl_admit_free(&sec->adm);
			free(sec);
			return -ENOMEM;
		}
	}
	for (unsigned int i = 0; i <= sec->site; i++) {
		struct sec_pr *p = &sec->pr[i];

		p->cap = i < sec->site ? sec->ps.p[i].queue : sec->ps.queue;
		p->q = calloc(p->cap, sizeof(*p->q));
		if (p->q == NULL) {
			io->sec = sec;
			nl_dp_sec_free(io);
			return -ENOMEM;
		}
		p->tokens = i < sec->site ? sec->ps.p[i].burst : 0;
	}
	io->sec = sec;
	return 0;
}

void
nl_dp_sec_free(struct nl_port *io)
{
	struct nl_dp_sec *sec = io->sec;

	if (sec == NULL)
		return;
	for (unsigned int i = 0; i <= sec->site; i++)
		free(sec->pr[i].q);
	nl_admit_free(&sec->adm);
	sodium_memzero(&sec->ps, sizeof(sec->ps));
	free(sec);
	io->sec = NULL;
}

static unsigned int
pr_index(const struct nl_dp_sec *sec, uint32_t pr)
{
	return pr < sec->site ? pr : sec->site;
}

static bool
deny(struct nl_port *io)
{
	struct nl_dp_sec *sec = io->sec;

	nl_stat_add_st(&sec->pr[pr_index(sec, io->principal)].c.denied, 1);
	nl_stat_add_st(&sec->denied, 1);
	return false;
}

/* The worker id a worker's frame names (HELLO, LOAD, BYE, CMDS, MACHAD: each type's own
 * field); false for the other types. */
static bool
frame_worker_id(const struct nl_msg *m, uint32_t *wid)
{
	switch (m->type) {
	case NL_MSG_HELLO:
	case NL_MSG_LOAD:
		*wid = m->u.hello.worker_id;
		return true;
	case NL_MSG_BYE:
		*wid = m->u.bye.worker_id;
		return true;
	case NL_MSG_CMDS:
		*wid = m->u.farm.cmds.worker_id;
		return true;
	case NL_MSG_MACHAD:
		*wid = m->u.farm.machad.worker_id;
		return true;
	default:
		return false;
	}
}

/* What a frame its roles allow (the rights table) may still not touch: another principal's
 * sub-task, worker or slots. These checks only refuse, never grant. */
static bool
owns(struct nl_port *io, const struct nl_msg *m, const struct nl_frame_addr *a)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_sec *sec = io->sec;
	uint32_t cur = io->principal;
	const struct nl_principal *p;
	uint32_t wid;

	if (cur >= sec->site)
		return true; /* the site key's holder: the operator */
	p = &sec->ps.p[cur];
	if (m->type == NL_MSG_DONE) {
		const struct nl_msg_done *d = &m->u.done;
		const struct nl_dp_meta *mt;
		uint32_t mach, wi;

		if (d->token >= dp->n_pool || d->relay != NL_RELAY_NONE)
			return true; /* matches nothing: stale_done; relayed: nl_dp_relay_done() */
		mt = &io->meta[d->token];
		if (!mt->active || mt->task == NULL || d->sub >= NL_TASK_MAX_SPLIT)
			return true;
		mach = mt->sub_mach[d->sub];
		if (mach >= dp->n_mach || (wi = io->slot_worker[mach]) == NO_SLOT)
			return true;
		/* a sub-task out on another principal's machine: not ours to answer */
		return io->workers[wi].principal == cur ? true : deny(io);
	}
	if (!frame_worker_id(m, &wid))
		return true;
	/* HELLO, LOAD, BYE, CMDS, MACHAD: the configured worker id, and not the worker another
	 * principal registered at that address */
	if (p->has_worker_id && wid != p->worker_id)
		return deny(io);
	for (unsigned int i = 0; i < io->n_workers; i++) {
		const struct nl_dp_worker *w = &io->workers[i];

		if (w->live && w->ip == a->src_ip && w->port == a->src_port)
			return w->principal == cur ? true : deny(io);
	}
	return true;
}

bool
nl_dp_sec_receive(struct nl_port *io, const void *buf, size_t len,
		  const struct nl_frame_addr *a, struct nl_msg *out)
{
	struct nl_dp_sec *sec = io->sec;
	enum nl_proto_err why;
	enum nl_rx_verdict v;
	unsigned int who;

	v = nl_principals_open(&sec->ps, &io->o.auth_key, &io->rp, buf, len, io->now_ns, out,
			       &who, &why);
	io->principal = who < sec->site ? who : NL_PRINCIPAL_NONE;
	if (v == NL_RX_DROP) {
		nl_stat_add_st(&io->c.drops[why], 1); /* counted per reason and dropped */
		nl_dp_io_refused(io, a, why); /* #33: logged, rate-limited */
		return false;
	}
	nl_stat_add_st(&sec->pr[who].c.frames, 1);
	if (v == NL_RX_ACCEPT && nl_replay_evicted(&io->rp, who) != sec->pr[who].c.senders_evicted)
		nl_atomic_store_relaxed(&sec->pr[who].c.senders_evicted,
					nl_replay_evicted(&io->rp, who));
	if (v == NL_RX_DENIED)
		return deny(io); /* its roles may not send this type (docs/security.md "Rights") */
	return owns(io, out, a);
}

uint32_t
nl_dp_sec_principal_id(const struct nl_port *io, uint32_t pr)
{
	const struct nl_principals *ps = io->o.principals;

	return ps != NULL && pr < ps->n ? ps->p[pr].id : 0;
}

bool
nl_dp_sec_slot_ok(const struct nl_port *io, uint32_t m)
{
	const struct nl_dp_sec *sec = io->sec;

	return io->principal >= sec->site || nl_principal_slot_ok(&sec->ps.p[io->principal], m);
}

static void
reject(struct nl_port *io, uint32_t pr, const struct nl_msg_submit *s, const struct nl_frame_addr *a,
       uint16_t reason)
{
	struct nl_msg m = { .type = NL_MSG_REJECT };

	nl_stat_add_st(&io->dp->io_rejected, 1); /* the engine's count of outside refusals */
	m.u.reply.task_id = s->task_id;
	m.u.reply.client_ts_ns = s->client_ts_ns;
	m.u.reply.reason = reason;
	nl_dp_io_send(io, &m, pr, a->src_mac, a->src_ip, a->src_port);
}

void
nl_dp_sec_submit(struct nl_port *io, const struct nl_msg_submit *s, const struct nl_frame_addr *a)
{
	struct nl_dp_sec *sec = io->sec;
	unsigned int i = pr_index(sec, io->principal);
	struct sec_pr *p = &sec->pr[i];
	struct sec_ent *e;

	nl_stat_add_st(&p->c.submitted, 1);
	if (i < sec->site) {
		const struct nl_principal *cf = &sec->ps.p[i];

		if (cf->max_in_flight != 0 && p->c.in_flight + p->c.queued >= cf->max_in_flight) {
			nl_stat_add_st(&p->c.rejected_quota, 1);
			reject(io, io->principal, s, a, NL_REJECT_QUOTA);
			return;
		}
		if (cf->max_rate_tps > 0) {
			double dt = io->now_ns > p->tok_ns ? (double)(io->now_ns - p->tok_ns) * 1e-9 : 0;

			p->tokens += dt * cf->max_rate_tps;
			if (p->tokens > cf->burst)
				p->tokens = cf->burst;
			p->tok_ns = io->now_ns;
			if (p->tokens < 1) {
				nl_stat_add_st(&p->c.rejected_quota, 1);
				reject(io, io->principal, s, a, NL_REJECT_QUOTA);
				return;
			}
		}
	}
	for (uint64_t j = 0; j < p->c.queued; j++) { /* #33: a resend of one still queued */
		const struct sec_ent *q = &p->q[(p->head + j) % p->cap];
		struct nl_dp_farm_ctx fc;

		nl_dp_farm_ctx_get(io, &fc);
		if (q->s.task_id == s->task_id && q->a.src_ip == a->src_ip &&
		    q->a.src_port == a->src_port && q->farm.attempt == fc.attempt)
			return; /* it keeps its place; admitted once (it would run twice) */
	}
	if (p->c.queued == p->cap) {
		nl_stat_add_st(&p->c.rejected_overload, 1);
		reject(io, io->principal, s, a, NL_REJECT_OVERLOAD);
		return;
	}
	if (i < sec->site && sec->ps.p[i].max_rate_tps > 0)
		p->tokens -= 1;
	e = &p->q[(p->head + p->c.queued) % p->cap];
	e->s = *s;
	e->a = *a;
	nl_dp_farm_ctx_get(io, &e->farm);
	nl_stat_add_st(&p->c.queued, 1);
	nl_admit_queued_st(&sec->adm, i);
	nl_dp_sec_poll(io);
}

/* Admit the head of principal i's queue through the port's normal SUBMIT path. false when
 * the engine could not take it (it stays at the head of the queue). */
static bool
admit_one(struct nl_port *io, unsigned int i)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_sec *sec = io->sec;
	struct sec_pr *p = &sec->pr[i];
	struct sec_ent *e = &p->q[p->head];
	uint64_t acc = dp->io_accepted, rej = dp->io_rejected;
	uint32_t saved = io->principal;
	struct nl_dp_farm_ctx farm_saved;

	p->head = (p->head + 1) % p->cap;
	nl_stat_add_st(&p->c.queued, (uint64_t)-1);
	io->principal = i < sec->site ? i : NL_PRINCIPAL_NONE;
	io->sec_admitting = true;
	io->sec_again = false;
	nl_dp_farm_ctx_get(io, &farm_saved); /* the frame being received may be another's */
	nl_dp_farm_ctx_set(io, &e->farm);
	sec->admit(io, &e->s, &e->a); /* hook up: the port's SUBMIT path */
	nl_dp_farm_ctx_set(io, &farm_saved);
	io->sec_admitting = false;
	io->principal = saved;
	if (io->sec_again) { /* the engine is full: back to the head of the queue, try later */
		p->head = (p->head + p->cap - 1) % p->cap;
		nl_stat_add_st(&p->c.queued, 1);
		nl_admit_undo_st(&sec->adm, i, true);
		return false;
	}
	if (dp->io_accepted != acc) {
		nl_stat_add_st(&p->c.accepted, 1);
		nl_stat_add_st(&p->c.in_flight, 1);
		return true;
	}
	nl_admit_undo_st(&sec->adm, i, false); /* answered at once (bad_task, no_handle, ...) */
	if (dp->io_rejected != rej)
		nl_stat_add_st(&p->c.rejected_other, 1);
	return true;
}

unsigned int
nl_dp_sec_poll(struct nl_port *io)
{
	struct nl_dp_sec *sec = io->sec;
	unsigned int n = 0;
	int i;

	/* shares of the admission limit, then the reserve rule, each step in DRR order */
	while ((i = nl_admit_next_st(&sec->adm)) >= 0) {
		if (!admit_one(io, (unsigned int)i))
			break;
		n++;
	}
	return n;
}

void
nl_dp_sec_finish(struct nl_port *io, const struct nl_dp_meta *mt, bool failed)
{
	struct nl_dp_sec *sec = io->sec;
	struct sec_pr *p = &sec->pr[pr_index(sec, mt->principal)];

	nl_stat_add_st(failed ? &p->c.failed : &p->c.completed, 1);
	if (p->c.in_flight > 0)
		nl_stat_add_st(&p->c.in_flight, (uint64_t)-1);
	nl_admit_done_st(&sec->adm, pr_index(sec, mt->principal));
}

/* ---- telemetry and SUMMARY ---- */

#define N_KEYS 12
static const char *const key_names[N_KEYS] = {
	"submitted", "accepted", "completed", "failed", "in_flight", "queued", "rejected_quota",
	"rejected_overload", "rejected_other", "denied", "frames", "senders_evicted",
};

static uint64_t
count_at(const struct nl_sec_counts *c, unsigned int k)
{
	const uint64_t *v[N_KEYS] = {
		&c->submitted, &c->accepted, &c->completed, &c->failed, &c->in_flight, &c->queued,
		&c->rejected_quota, &c->rejected_overload, &c->rejected_other, &c->denied, &c->frames,
		&c->senders_evicted,
	};

	return nl_atomic_load_relaxed(v[k]);
}

static const char *
pr_name(const struct nl_dp_sec *sec, unsigned int i)
{
	return i < sec->site ? sec->ps.p[i].name : "(site-key)";
}

/* Per-principal arrays from one snapshot of the control lcore (nl_dp_snap_serve_ctl), so each
 * principal's accepted = completed + failed + in_flight holds in what telemetry shows;
 * "snapshot" = 0 when the control lcore did not answer in time (relaxed reads instead). */
static int
tel_principals(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nl_port *io = nl_dp_tel_driver();
	struct nl_dp_sec *sec = io != NULL ? io->sec : NULL;
	struct rte_tel_data *arr[N_KEYS + 1];
	struct nl_sec_counts *prc;
	struct nl_port_counts pc;
	struct nl_dp_counts c;
	bool snap;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (sec == NULL) {
		rte_tel_data_add_dict_u64(d, "principals", 0);
		return 0;
	}
	for (unsigned int k = 0; k <= N_KEYS; k++) {
		arr[k] = rte_tel_data_alloc();
		if (arr[k] == NULL) {
			while (k-- > 0)
				rte_tel_data_free(arr[k]);
			return -ENOMEM;
		}
		rte_tel_data_start_array(arr[k], k < N_KEYS ? RTE_TEL_U64_VAL : RTE_TEL_STRING_VAL);
	}
	prc = calloc(sec->site + 1, sizeof(*prc));
	snap = prc != NULL && snap_wait(io, 100) == 0;
	if (snap)
		snap_read(io, &c, &pc, prc);
	for (unsigned int i = 0; i <= sec->site && i < RTE_TEL_MAX_ARRAY_ENTRIES; i++) {
		const struct nl_sec_counts *pc = snap ? &prc[i] : &sec->pr[i].c;

		for (unsigned int k = 0; k < N_KEYS; k++)
			rte_tel_data_add_array_u64(arr[k], count_at(pc, k));
		rte_tel_data_add_array_string(arr[N_KEYS], pr_name(sec, i));
	}
	free(prc);
	rte_tel_data_add_dict_u64(d, "snapshot", snap);
	rte_tel_data_add_dict_u64(d, "principals", sec->site + 1);
	rte_tel_data_add_dict_u64(d, "admission_limit", sec->limit);
	rte_tel_data_add_dict_u64(d, "admission_reserve", sec->adm.reserve);
	rte_tel_data_add_dict_container(d, "name", arr[N_KEYS], 0);
	for (unsigned int k = 0; k < N_KEYS; k++)
		rte_tel_data_add_dict_container(d, key_names[k], arr[k], 0);
	return 0;
}

int
nl_dp_sec_tel_init(void)
{
	return nl_dp_tel_register("/nlevel/principals", tel_principals,
					  "Per-principal counters (issue #16): submitted, accepted, "
					  "completed, failed, in_flight, queued, rejected_*, denied.");
}

void
nl_dp_sec_tel_stats(const struct nl_port *io, struct rte_tel_data *d)
{
	const struct nl_dp_sec *sec = io->sec;

	rte_tel_data_add_dict_u64(d, "denied", sec != NULL ? nl_atomic_load_relaxed(&sec->denied) : 0);
	rte_tel_data_add_dict_u64(d, "principals", sec != NULL ? sec->ps.n : 0);
}

void
nl_dp_sec_summary(const struct nl_port *io, FILE *f)
{
	const struct nl_dp_sec *sec = io->sec;

	if (sec == NULL)
		return;
	for (unsigned int i = 0; i <= sec->site; i++) {
		const struct nl_sec_counts *c = &sec->pr[i].c;

		if (i == sec->site && c->frames == 0)
			continue; /* nobody used the site key */
		fprintf(f, "SUMMARY principal=%s weight=%u", pr_name(sec, i),
			i < sec->site ? sec->ps.p[i].weight : 1);
		for (unsigned int k = 0; k < N_KEYS; k++)
			fprintf(f, " %s=%llu", key_names[k], (unsigned long long)count_at(c, k));
		fprintf(f, "\n");
	}
	fflush(f);
}

/* ---- privilege drop ---- */

int
nl_dp_sec_drop_privileges(const struct nl_port *io)
{
	const char *user = io->o.run_as;
	struct passwd *pw;

	if (user == NULL)
		return 0;
	pw = getpwnam(user);
	if (pw == NULL) {
		DP_LOG(ERR, "--user %s: no such user\n", user);
		return -ENOENT;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || setgroups(0, NULL) != 0 ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) != 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) != 0) {
		int e = errno;

		DP_LOG(ERR, "--user %s: cannot drop privileges: %s\n", user, strerror(e));
		return -e;
	}
	if (pw->pw_uid != 0 && setuid(0) == 0) { /* must be impossible now */
		DP_LOG(ERR, "--user %s: root could be regained\n", user);
		return -EPERM;
	}
	DP_LOG(INFO, "running as %s (uid %u, gid %u) after start-up\n", user,
	       (unsigned int)pw->pw_uid, (unsigned int)pw->pw_gid);
	return 0;
}

/* ---- consistent snapshots ---- */

static void
store_words(void *dst, const void *src, size_t bytes)
{
	uint64_t *d = dst;
	const uint64_t *s = src;

	for (size_t i = 0; i < bytes / sizeof(uint64_t); i++)
		nl_atomic_store_relaxed(&d[i], s[i]);
}

static void
load_words(void *dst, const void *src, size_t bytes)
{
	uint64_t *d = dst;
	const uint64_t *s = src;

	for (size_t i = 0; i < bytes / sizeof(uint64_t); i++)
		d[i] = nl_atomic_load_relaxed(&s[i]);
}

void
nl_dp_snap_serve_ctl(struct nl_port *io)
{
	uint64_t req = nl_atomic_load_acquire(&io->snap_req);
	struct nl_dp_sec *sec = io->sec;
	struct nl_port_counts pc;
	struct nl_dp_counts c;

	if (req == io->snap_done)
		return;
	nl_dp_counts_get(io->dp, &c);
	nl_port_counts_get(io, &pc);
	/* seqlock: odd while writing; readers retry on a change */
	nl_atomic_store_relaxed(&io->snap_seq, io->snap_seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	store_words(&io->snap, &c, sizeof(c));
	store_words(&io->psnap, &pc, sizeof(pc));
	if (sec != NULL)
		for (unsigned int i = 0; i <= sec->site; i++)
			store_words(&sec->snap[i], &sec->pr[i].c, sizeof(sec->snap[i]));
	nl_atomic_store_release(&io->snap_seq, io->snap_seq + 1);
	nl_atomic_store_release(&io->snap_done, req);
}

/* Request a snapshot and wait for it. 0; -ETIMEDOUT; -EINVAL (not serving a port). */
static int
snap_wait(struct nl_port *io, unsigned int timeout_ms)
{
	uint64_t req, t_end, hz = rte_get_tsc_hz();

	if (io == NULL)
		return -EINVAL;
	req = __atomic_add_fetch(&io->snap_req, 1, __ATOMIC_ACQ_REL);
	t_end = rte_rdtsc() + (uint64_t)timeout_ms * (hz / 1000);
	while ((int64_t)(nl_atomic_load_acquire(&io->snap_done) - req) < 0) {
		if (rte_rdtsc() > t_end)
			return -ETIMEDOUT;
		rte_delay_us_sleep(50);
	}
	return 0;
}

/* Copy the last snapshot: the engine's and the port's counters, and the per-principal ones
 * (prc[site + 1]) when prc is not NULL. */
static void
snap_read(const struct nl_port *io, struct nl_dp_counts *c, struct nl_port_counts *pc,
	  struct nl_sec_counts *prc)
{
	const struct nl_dp_sec *sec = io->sec;

	for (;;) {
		uint64_t s0 = nl_atomic_load_acquire(&io->snap_seq), s1;

		if (s0 & 1) {
			rte_pause();
			continue;
		}
		load_words(c, &io->snap, sizeof(*c));
		load_words(pc, &io->psnap, sizeof(*pc));
		if (prc != NULL && sec != NULL)
			for (unsigned int i = 0; i <= sec->site; i++)
				load_words(&prc[i], &sec->snap[i], sizeof(prc[i]));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s1 = nl_atomic_load_relaxed(&io->snap_seq);
		if (s0 == s1)
			return;
	}
}

int
nl_dp_snap_get(struct nl_port *io, struct nl_dp_counts *c, struct nl_port_counts *pc,
	       unsigned int timeout_ms)
{
	int rc = snap_wait(io, timeout_ms);

	if (rc == 0)
		snap_read(io, c, pc, NULL);
	return rc;
}
