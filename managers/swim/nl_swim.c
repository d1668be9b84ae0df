/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nl_swim: SWIM + Lifeguard failure detector (theory of operation and invariants in
 * nl_swim.h). One protocol period, worked through with the defaults (T' = 1 s, timeout
 * 500 ms, k = 3, N = 16, LHM 1):
 *   t = 0      PING b                                  (probe_start)
 *   t = 0.5 s  no ACK: PING_REQ to 3 alive helpers     (probe_timeout_at)
 *   t = 1 s    no ACK: b SUSPECT, suspicion timer      (probe_end_at)
 *              min = 4·max(1, log10 16)·1 s = 4.8 s, max = 6·min = 28.9 s, K = 2:
 *              DEAD after 28.9 s alone, 4.8 s once two other members confirm.
 *   Every NACK missing from a helper raises the LHM by one (Lifeguard §4.1); the next
 *   period's timeout and length are then multiplied by it, so a member that is itself slow
 *   probes more leniently instead of accusing healthy ones.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nl_swim.h"

/* One member as this instance sees it. */
struct swim_member {
	uint64_t susp_start_ns;    /* SUSPECT: when this instance started its timer */
	uint64_t susp_deadline_ns; /* SUSPECT: when it becomes DEAD here */
	uint32_t inc;              /* known incarnation (I2) */
	uint32_t accuser;          /* SUSPECT: first accuser; not a confirmation */
	uint32_t bcast_from;       /* SUSPECT: 'from' of the update we gossip */
	uint32_t conf[NL_SWIM_MAX_CONFIRM]; /* distinct confirmers */
	uint8_t state;             /* enum nl_swim_state */
	uint8_t n_conf;
	uint8_t bcast_left;        /* retransmissions still owed for its current update */
	uint8_t in_pend;           /* listed in sw->pend[] */
};

struct swim_relay {
	uint64_t deadline_ns; /* NACK due (Lifeguard) and slot freed */
	uint32_t seq;         /* our PING's seq */
	uint32_t origin;
	uint32_t origin_seq;
	uint32_t target;
	bool used;
};

struct nl_swim {
	struct nl_swim_cfg cfg;
	struct nl_swim_stats st;
	uint64_t now_ns;            /* last clock value seen (I1) */
	uint64_t rng;
	uint32_t seq;
	unsigned int score;         /* awareness score; LHM = score + 1 (I5) */
	unsigned int conf_k;        /* K of Lifeguard §4.2 */
	uint8_t retransmit;         /* retransmit_mult·ceil(log10(N+1)) */
	uint64_t susp_min_ns;
	uint64_t susp_max_ns;
	/* the probe in flight */
	bool probing;
	bool acked;
	bool indirect_sent;
	uint32_t probe_target;
	uint32_t probe_seq;
	unsigned int nacks_expected;
	unsigned int nacks;
	uint64_t probe_start_ns;
	uint64_t probe_timeout_at_ns;
	uint64_t probe_end_at_ns;
	uint64_t next_probe_ns;
	uint64_t next_gossip_ns;
	uint64_t next_deadline_ns;
	/* shuffled round-robin order (SWIM §4.3) */
	uint32_t *order;
	uint32_t n_order;
	uint32_t order_idx;
	/* members with updates to gossip, and members in SUSPECT */
	uint32_t *pend;
	uint32_t n_pend;
	uint32_t *susp;
	uint32_t n_susp;
	struct swim_relay relay[NL_SWIM_MAX_RELAYS];
	struct swim_member *mem;
};

static uint64_t
rng_next(struct nl_swim *sw)
{
	/* xorshift64* (Vigna): enough for probe order and helper choice */
	uint64_t x = sw->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	sw->rng = x;
	return x * 2685821657736338717ull;
}

static uint32_t
rng_below(struct nl_swim *sw, uint32_t n)
{
	return (uint32_t)((rng_next(sw) >> 32) * (uint64_t)n >> 32);
}

void
nl_swim_cfg_default(struct nl_swim_cfg *cfg, uint32_t n_members, uint32_t self)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->n_members = n_members;
	cfg->self = self;
	cfg->probe_interval_ns = 1000000000ull;
	cfg->probe_timeout_ns = 500000000ull;
	cfg->indirect_checks = 3;
	cfg->suspicion_mult = 4;
	cfg->suspicion_max_mult = 6;
	cfg->awareness_max = 8;
	cfg->retransmit_mult = 4;
	cfg->max_piggyback = NL_SWIM_MAX_UPDATES;
	cfg->gossip_interval_ns = 200000000ull;
	cfg->gossip_nodes = 3;
	cfg->lifeguard = true;
	cfg->suspicion = true;
	cfg->seed = 0x5eed5a17ull + self;
}

static uint64_t
lhm_scale(const struct nl_swim *sw, uint64_t d_ns)
{
	return d_ns * (sw->score + 1u);
}

static void
lhm_delta(struct nl_swim *sw, int delta)
{
	int s = (int)sw->score + delta;

	if (!sw->cfg.lifeguard)
		return;                  /* I5 */
	if (s < 0)
		s = 0;
	if (s > (int)sw->cfg.awareness_max - 1)
		s = (int)sw->cfg.awareness_max - 1;
	sw->score = (unsigned int)s;
}

uint64_t
nl_swim_suspicion_timeout_ns(const struct nl_swim *sw, unsigned int confirmations)
{
	double min = (double)sw->susp_min_ns, max = (double)sw->susp_max_ns, t;

	if (!sw->cfg.lifeguard || sw->conf_k == 0)
		return sw->susp_min_ns;
	if (confirmations > sw->conf_k)
		confirmations = sw->conf_k;
	t = max - (max - min) * log((double)confirmations + 1.0) / log((double)sw->conf_k + 1.0);
	if (t < min)
		t = min;
	return (uint64_t)t;
}

static void
pend_add(struct nl_swim *sw, uint32_t id)
{
	struct swim_member *m = &sw->mem[id];

	m->bcast_left = sw->retransmit;
	if (!m->in_pend) {
		m->in_pend = 1;
		sw->pend[sw->n_pend++] = id;
	}
}

static void
susp_remove(struct nl_swim *sw, uint32_t id)
{
	for (uint32_t i = 0; i < sw->n_susp; i++)
		if (sw->susp[i] == id) {
			sw->susp[i] = sw->susp[--sw->n_susp];
			return;
		}
}

static void
set_state(struct nl_swim *sw, uint32_t id, enum nl_swim_state st)
{
	struct swim_member *m = &sw->mem[id];
	enum nl_swim_state old = (enum nl_swim_state)m->state;

	if (old == NL_SWIM_SUSPECT && st != NL_SWIM_SUSPECT)
		susp_remove(sw, id);
	if (st == NL_SWIM_SUSPECT && old != NL_SWIM_SUSPECT)
		sw->susp[sw->n_susp++] = id;
	m->state = (uint8_t)st;
	if (old != st && sw->cfg.on_change != NULL)
		sw->cfg.on_change(sw->cfg.ctx, id, old, st, m->inc, sw->now_ns);
}

static void
fill_update(const struct nl_swim *sw, uint32_t id, struct nl_swim_update *u)
{
	const struct swim_member *m = &sw->mem[id];

	u->id = id;
	u->incarnation = m->inc;
	u->state = m->state;
	u->from = m->state == NL_SWIM_SUSPECT ? m->bcast_from : sw->cfg.self;
}

/* Piggy-back: first what the receiver must hear about itself (buddy system, Lifeguard §4.3;
 * a DEAD verdict so that a restarted member refutes it), then the pending updates that went
 * out the fewest times (SWIM §4.1). */
static void
send_msg(struct nl_swim *sw, uint32_t to, struct nl_swim_msg *msg)
{
	const struct swim_member *tm = &sw->mem[to];
	unsigned int cap = sw->cfg.max_piggyback;

	msg->from = sw->cfg.self;
	msg->n_upd = 0;
	if (tm->state == NL_SWIM_DEAD ||
	    (tm->state == NL_SWIM_SUSPECT && sw->cfg.lifeguard))
		fill_update(sw, to, &msg->upd[msg->n_upd++]);
	while (msg->n_upd < cap && sw->n_pend > 0) {
		uint32_t best = UINT32_MAX;
		uint8_t best_left = 0;

		for (uint32_t i = 0; i < sw->n_pend; i++) {
			const struct swim_member *m = &sw->mem[sw->pend[i]];
			bool taken = false;

			for (unsigned int j = 0; j < msg->n_upd; j++)
				taken |= msg->upd[j].id == sw->pend[i];
			if (!taken && m->bcast_left > best_left) {
				best_left = m->bcast_left;
				best = i;
			}
		}
		if (best == UINT32_MAX)
			break;
		{
			uint32_t id = sw->pend[best];
			struct swim_member *m = &sw->mem[id];

			fill_update(sw, id, &msg->upd[msg->n_upd++]);
			if (--m->bcast_left == 0) {
				m->in_pend = 0;
				sw->pend[best] = sw->pend[--sw->n_pend];
			}
		}
	}
	sw->st.msgs_out++;
	sw->cfg.send(sw->cfg.ctx, to, msg);
}

static void
send_simple(struct nl_swim *sw, uint32_t to, enum nl_swim_type type, uint32_t target,
	uint32_t seq)
{
	struct nl_swim_msg msg;

	msg.type = (uint8_t)type;
	msg.target = target;
	msg.seq = seq;
	send_msg(sw, to, &msg);
}

/* This member is accused (suspect / dead at @p inc) or shown at a newer incarnation:
 * take a higher one and gossip alive (SWIM §4.2). */
static void
refute(struct nl_swim *sw, uint32_t inc, bool accused)
{
	struct swim_member *me = &sw->mem[sw->cfg.self];

	if (inc < me->inc) {         /* about an older incarnation: refuted already, */
		if (accused)         /* but the accuser has not heard it (each copy of the */
			pend_add(sw, sw->cfg.self); /* refutation may have been lost): again */
		return;
	}
	me->inc = inc + 1;           /* I2 */
	pend_add(sw, sw->cfg.self);
	if (accused) {
		sw->st.refuted++;
		lhm_delta(sw, +1);       /* Lifeguard §4.1: being suspected is a sign of ill health */
	}
}

static void
suspicion_start(struct nl_swim *sw, uint32_t id, uint32_t inc, uint32_t accuser)
{
	struct swim_member *m = &sw->mem[id];

	if (!sw->cfg.suspicion) {
		m->inc = inc;
		set_state(sw, id, NL_SWIM_DEAD);
		pend_add(sw, id);
		sw->st.declared_dead++;
		return;
	}
	m->inc = inc;
	m->accuser = accuser;
	m->bcast_from = accuser;
	m->n_conf = 0;
	m->susp_start_ns = sw->now_ns;
	m->susp_deadline_ns = sw->now_ns + nl_swim_suspicion_timeout_ns(sw, 0);
	set_state(sw, id, NL_SWIM_SUSPECT);
	pend_add(sw, id);
}

/* An independent member confirms a running suspicion (Lifeguard §4.2). */
static void
suspicion_confirm(struct nl_swim *sw, uint32_t id, uint32_t from)
{
	struct swim_member *m = &sw->mem[id];

	if (from == m->accuser || m->n_conf >= sw->conf_k || m->n_conf >= NL_SWIM_MAX_CONFIRM)
		return;
	for (unsigned int i = 0; i < m->n_conf; i++)
		if (m->conf[i] == from)
			return;
	m->conf[m->n_conf++] = from;
	m->susp_deadline_ns = m->susp_start_ns + nl_swim_suspicion_timeout_ns(sw, m->n_conf);
	m->bcast_from = from;        /* pass the confirmation on */
	pend_add(sw, id);
}

static void
apply_update(struct nl_swim *sw, const struct nl_swim_update *u)
{
	struct swim_member *m = &sw->mem[u->id];
	bool is_self = u->id == sw->cfg.self;

	switch ((enum nl_swim_state)u->state) {
	case NL_SWIM_ALIVE:
		if (is_self) {
			if (u->incarnation > m->inc)  /* a former life of ours still gossiped */
				refute(sw, u->incarnation, false);
			return;
		}
		if (u->incarnation <= m->inc)     /* I3 */
			return;
		m->inc = u->incarnation;
		m->n_conf = 0;
		set_state(sw, u->id, NL_SWIM_ALIVE);
		pend_add(sw, u->id);
		return;
	case NL_SWIM_SUSPECT:
		if (is_self) {
			refute(sw, u->incarnation, true);
			return;
		}
		if (u->incarnation < m->inc || m->state == NL_SWIM_DEAD)
			return;
		if (m->state == NL_SWIM_SUSPECT) {
			if (u->incarnation > m->inc)
				m->inc = u->incarnation;
			suspicion_confirm(sw, u->id, u->from);
			return;
		}
		suspicion_start(sw, u->id, u->incarnation, u->from);
		return;
	case NL_SWIM_DEAD:
		if (is_self) {
			refute(sw, u->incarnation, true);
			return;
		}
		if (u->incarnation < m->inc || m->state == NL_SWIM_DEAD)
			return;
		m->inc = u->incarnation;
		set_state(sw, u->id, NL_SWIM_DEAD);
		pend_add(sw, u->id);
		return;
	}
}

int
nl_swim_create(const struct nl_swim_cfg *cfg, uint64_t now_ns, struct nl_swim **out)
{
	struct nl_swim *sw;
	uint32_t n = cfg->n_members;
	double lg;

	if (cfg->send == NULL || n == 0 || n > NL_SWIM_MAX_MEMBERS || cfg->self >= n ||
	    cfg->probe_interval_ns == 0 || cfg->probe_timeout_ns == 0 ||
	    cfg->probe_timeout_ns > cfg->probe_interval_ns || cfg->awareness_max == 0 ||
	    cfg->max_piggyback > NL_SWIM_MAX_UPDATES || cfg->suspicion_mult == 0 ||
	    cfg->suspicion_max_mult == 0 || cfg->retransmit_mult == 0 ||
	    cfg->probe_interval_ns > UINT64_MAX / 64 / (cfg->suspicion_mult + 1u) /
	    (cfg->suspicion_max_mult + 1u) / (cfg->awareness_max + 1u))
		return -EINVAL;
	sw = calloc(1, sizeof(*sw));
	if (sw == NULL)
		return -ENOMEM;
	sw->cfg = *cfg;
	sw->mem = calloc(n, sizeof(*sw->mem));
	sw->order = calloc(n, sizeof(*sw->order));
	sw->pend = calloc(n, sizeof(*sw->pend));
	sw->susp = calloc(n, sizeof(*sw->susp));
	if (sw->mem == NULL || sw->order == NULL || sw->pend == NULL || sw->susp == NULL) {
		nl_swim_free(sw);
		return -ENOMEM;
	}
	sw->now_ns = now_ns;
	sw->rng = cfg->seed != 0 ? cfg->seed : 0x9e3779b97f4a7c15ull;
	lg = log10((double)n);
	sw->susp_min_ns = (uint64_t)((double)cfg->suspicion_mult * (lg > 1.0 ? lg : 1.0) *
		(double)cfg->probe_interval_ns);
	sw->susp_max_ns = sw->susp_min_ns * cfg->suspicion_max_mult;
	sw->conf_k = cfg->suspicion_mult >= 2 ? cfg->suspicion_mult - 2 : 0;
	if (n < 2 || n - 2 < sw->conf_k)
		sw->conf_k = 0;
	if (sw->conf_k > NL_SWIM_MAX_CONFIRM)
		sw->conf_k = NL_SWIM_MAX_CONFIRM;
	{
		unsigned int r = cfg->retransmit_mult * (unsigned int)ceil(log10((double)n + 1.0));

		sw->retransmit = (uint8_t)(r > 255 ? 255 : r);
	}
	for (uint32_t i = 0; i < n; i++)
		if (i != cfg->self)
			sw->order[sw->n_order++] = i;
	sw->order_idx = sw->n_order;     /* shuffle at the first probe */
	sw->mem[cfg->self].inc = cfg->incarnation;
	pend_add(sw, cfg->self);         /* announce this incarnation */
	/* stagger the first probe over one period, as memberlist does */
	sw->next_probe_ns = now_ns + rng_below(sw, (uint32_t)(cfg->probe_interval_ns / 1000u))
		* 1000ull;
	sw->next_gossip_ns = now_ns + rng_below(sw, (uint32_t)(cfg->probe_interval_ns / 1000u))
		% (cfg->gossip_interval_ns / 1000u + 1u) * 1000ull;
	sw->next_deadline_ns = sw->next_probe_ns;
	*out = sw;
	return 0;
}

void
nl_swim_free(struct nl_swim *sw)
{
	if (sw == NULL)
		return;
	free(sw->mem);
	free(sw->order);
	free(sw->pend);
	free(sw->susp);
	free(sw);
}

/* Next member to probe: shuffled round-robin over the non-dead (SWIM §4.3). */
static bool
pick_target(struct nl_swim *sw, uint32_t *out)
{
	for (uint32_t tries = 0; tries <= sw->n_order; tries++) {
		uint32_t id;

		if (sw->order_idx >= sw->n_order) {
			for (uint32_t i = sw->n_order; i > 1; i--) {
				uint32_t j = rng_below(sw, i), t = sw->order[i - 1];

				sw->order[i - 1] = sw->order[j];
				sw->order[j] = t;
			}
			sw->order_idx = 0;
			if (sw->n_order == 0)
				return false;
		}
		id = sw->order[sw->order_idx++];
		if (sw->mem[id].state != NL_SWIM_DEAD) {
			*out = id;
			return true;
		}
	}
	return false;
}

static void
probe_start(struct nl_swim *sw)
{
	uint32_t target;

	if (!pick_target(sw, &target)) {
		sw->next_probe_ns = sw->now_ns + sw->cfg.probe_interval_ns;
		return;
	}
	sw->probing = true;
	sw->acked = false;
	sw->indirect_sent = false;
	sw->nacks = 0;
	sw->nacks_expected = 0;
	sw->probe_target = target;
	sw->probe_seq = ++sw->seq;
	sw->probe_start_ns = sw->now_ns;
	sw->probe_timeout_at_ns = sw->now_ns + lhm_scale(sw, sw->cfg.probe_timeout_ns);
	sw->probe_end_at_ns = sw->now_ns + lhm_scale(sw, sw->cfg.probe_interval_ns);
	sw->st.probes++;
	send_simple(sw, target, NL_SWIM_PING, target, sw->probe_seq);
}

/* k helpers drawn from the ALIVE members other than us and the target (reservoir). */
static void
probe_indirect(struct nl_swim *sw)
{
	uint32_t pick[16];
	unsigned int k = sw->cfg.indirect_checks, got = 0;
	uint32_t seen = 0;

	if (k > 16)
		k = 16;
	sw->indirect_sent = true;
	for (uint32_t id = 0; id < sw->cfg.n_members && k > 0; id++) {
		if (id == sw->cfg.self || id == sw->probe_target ||
		    sw->mem[id].state != NL_SWIM_ALIVE)
			continue;
		seen++;
		if (got < k)
			pick[got++] = id;
		else {
			uint32_t j = rng_below(sw, seen);

			if (j < k)
				pick[j] = id;
		}
	}
	for (unsigned int i = 0; i < got; i++) {
		sw->st.indirect++;
		send_simple(sw, pick[i], NL_SWIM_PING_REQ, sw->probe_target, sw->probe_seq);
	}
	sw->nacks_expected = sw->cfg.lifeguard ? got : 0;
}

static void
probe_end(struct nl_swim *sw)
{
	struct swim_member *t = &sw->mem[sw->probe_target];

	sw->probing = false;
	sw->next_probe_ns = sw->probe_start_ns + sw->cfg.probe_interval_ns;
	if (sw->next_probe_ns < sw->now_ns)
		sw->next_probe_ns = sw->now_ns;
	if (sw->acked) {
		lhm_delta(sw, -1);
		return;
	}
	sw->st.probes_failed++;
	/* Lifeguard §4.1: a missing NACK means we (not the target) may be the slow one */
	if (sw->nacks_expected > 0)
		lhm_delta(sw, (int)(sw->nacks_expected - sw->nacks));
	else
		lhm_delta(sw, +1);
	if (t->state == NL_SWIM_ALIVE) {
		sw->st.suspected++;
		suspicion_start(sw, sw->probe_target, t->inc, sw->cfg.self);
	} else if (t->state == NL_SWIM_SUSPECT) {
		suspicion_confirm(sw, sw->probe_target, sw->cfg.self);
	}
}

static uint64_t
compute_deadline(struct nl_swim *sw)
{
	uint64_t d;

	if (!sw->probing)
		d = sw->next_probe_ns;
	else if (!sw->indirect_sent && !sw->acked)
		d = sw->probe_timeout_at_ns;
	else
		d = sw->probe_end_at_ns;
	for (unsigned int i = 0; i < NL_SWIM_MAX_RELAYS; i++)
		if (sw->relay[i].used && sw->relay[i].deadline_ns < d)
			d = sw->relay[i].deadline_ns;
	for (uint32_t i = 0; i < sw->n_susp; i++)
		if (sw->mem[sw->susp[i]].susp_deadline_ns < d)
			d = sw->mem[sw->susp[i]].susp_deadline_ns;
	if (sw->cfg.gossip_interval_ns != 0 && sw->n_pend > 0 && sw->next_gossip_ns < d)
		d = sw->next_gossip_ns;
	sw->next_deadline_ns = d;
	return d;
}

/* memberlist's gossip: the pending updates to gossip_nodes random non-dead members. */
static void
gossip_round(struct nl_swim *sw)
{
	uint32_t sent[16];
	unsigned int want = sw->cfg.gossip_nodes < 16 ? sw->cfg.gossip_nodes : 16, got = 0;

	for (unsigned int tries = 0; tries < 4 * want && got < want && sw->n_pend > 0; tries++) {
		uint32_t id = rng_below(sw, sw->cfg.n_members);
		bool dup = id == sw->cfg.self || sw->mem[id].state == NL_SWIM_DEAD;
		struct nl_swim_msg msg;

		for (unsigned int i = 0; i < got && !dup; i++)
			dup = sent[i] == id;
		if (dup)
			continue;
		sent[got++] = id;
		msg.type = NL_SWIM_GOSSIP;
		msg.target = id;
		msg.seq = 0;
		send_msg(sw, id, &msg);
	}
}

static void
clock_set(struct nl_swim *sw, uint64_t now_ns)
{
	if (now_ns > sw->now_ns)         /* I1: never backwards */
		sw->now_ns = now_ns;
}

uint64_t
nl_swim_tick_st(struct nl_swim *sw, uint64_t now_ns)
{
	clock_set(sw, now_ns);
	now_ns = sw->now_ns;
	/* the probe: at most one phase change per loop, so a late tick (a paused process)
	 * still goes through indirect probes before it ends the period, as memberlist does */
	for (int guard = 0; guard < 4; guard++) {
		if (!sw->probing) {
			if (now_ns < sw->next_probe_ns)
				break;
			probe_start(sw);
			if (!sw->probing)
				break;
			continue;
		}
		if (!sw->acked && !sw->indirect_sent && now_ns >= sw->probe_timeout_at_ns) {
			probe_indirect(sw);
			continue;
		}
		if (now_ns >= sw->probe_end_at_ns) {
			probe_end(sw);
			continue;
		}
		break;
	}
	if (sw->cfg.gossip_interval_ns != 0 && now_ns >= sw->next_gossip_ns) {
		if (sw->n_pend > 0)
			gossip_round(sw);
		sw->next_gossip_ns += sw->cfg.gossip_interval_ns;
		if (sw->next_gossip_ns <= now_ns)
			sw->next_gossip_ns = now_ns + sw->cfg.gossip_interval_ns;
	}
	for (unsigned int i = 0; i < NL_SWIM_MAX_RELAYS; i++) {
		struct swim_relay *r = &sw->relay[i];

		if (!r->used || now_ns < r->deadline_ns)
			continue;
		r->used = false;
		if (sw->cfg.lifeguard)
			send_simple(sw, r->origin, NL_SWIM_NACK, r->target, r->origin_seq);
	}
	for (uint32_t i = 0; i < sw->n_susp;) {
		uint32_t id = sw->susp[i];
		struct swim_member *m = &sw->mem[id];

		if (now_ns < m->susp_deadline_ns) {
			i++;
			continue;
		}
		sw->st.declared_dead++;
		set_state(sw, id, NL_SWIM_DEAD);     /* removes susp[i] */
		pend_add(sw, id);
	}
	return compute_deadline(sw);
}

uint64_t
nl_swim_next_deadline(const struct nl_swim *sw)
{
	return sw->next_deadline_ns;
}

static bool
msg_valid(const struct nl_swim *sw, const struct nl_swim_msg *msg)
{
	uint32_t n = sw->cfg.n_members;

	if (msg->type < NL_SWIM_PING || msg->type > NL_SWIM_GOSSIP ||
	    msg->n_upd > NL_SWIM_MAX_UPDATES || msg->from >= n || msg->from == sw->cfg.self ||
	    msg->target >= n)
		return false;
	for (unsigned int i = 0; i < msg->n_upd; i++)
		if (msg->upd[i].id >= n || msg->upd[i].state > NL_SWIM_DEAD ||
		    (msg->upd[i].state == NL_SWIM_SUSPECT && msg->upd[i].from >= n))
			return false;
	return true;
}

int
nl_swim_recv_st(struct nl_swim *sw, uint64_t now_ns, const struct nl_swim_msg *msg)
{
	clock_set(sw, now_ns);
	if (!msg_valid(sw, msg)) {
		sw->st.bad_in++;
		return -EINVAL;
	}
	sw->st.msgs_in++;
	for (unsigned int i = 0; i < msg->n_upd; i++)
		apply_update(sw, &msg->upd[i]);
	switch ((enum nl_swim_type)msg->type) {
	case NL_SWIM_PING:
		if (msg->target == sw->cfg.self)
			send_simple(sw, msg->from, NL_SWIM_ACK, sw->cfg.self, msg->seq);
		else
			sw->st.bad_in++;     /* meant for someone else (a stale address) */
		break;
	case NL_SWIM_PING_REQ: {
		struct swim_relay *r = NULL;

		if (msg->target == sw->cfg.self) {  /* odd, but the answer is plain */
			send_simple(sw, msg->from, NL_SWIM_ACK, sw->cfg.self, msg->seq);
			break;
		}
		for (unsigned int i = 0; i < NL_SWIM_MAX_RELAYS && r == NULL; i++)
			if (!sw->relay[i].used)
				r = &sw->relay[i];
		if (r == NULL) {
			sw->st.relay_full++;
			break;
		}
		sw->st.relayed++;
		r->used = true;
		r->seq = ++sw->seq;
		r->origin = msg->from;
		r->origin_seq = msg->seq;
		r->target = msg->target;
		r->deadline_ns = sw->now_ns + sw->cfg.probe_timeout_ns;
		send_simple(sw, msg->target, NL_SWIM_PING, msg->target, r->seq);
		break;
	}
	case NL_SWIM_ACK:
		if (sw->probing && !sw->acked && msg->seq == sw->probe_seq &&
		    msg->target == sw->probe_target) {
			sw->acked = true;
			probe_end(sw);
			break;
		}
		for (unsigned int i = 0; i < NL_SWIM_MAX_RELAYS; i++) {
			struct swim_relay *r = &sw->relay[i];

			if (r->used && r->seq == msg->seq && r->target == msg->from) {
				r->used = false;
				send_simple(sw, r->origin, NL_SWIM_ACK, r->target, r->origin_seq);
				break;
			}
		}
		break;
	case NL_SWIM_GOSSIP:
		break;                   /* its updates are all it carries */
	case NL_SWIM_NACK:
		if (sw->probing && !sw->acked && msg->seq == sw->probe_seq &&
		    msg->target == sw->probe_target && sw->nacks < sw->nacks_expected) {
			sw->nacks++;
			sw->st.nacks_in++;
		}
		break;
	}
	compute_deadline(sw);
	return 0;
}

enum nl_swim_state
nl_swim_state_of(const struct nl_swim *sw, uint32_t id)
{
	return id < sw->cfg.n_members ? (enum nl_swim_state)sw->mem[id].state : NL_SWIM_DEAD;
}

uint32_t
nl_swim_incarnation_of(const struct nl_swim *sw, uint32_t id)
{
	return id < sw->cfg.n_members ? sw->mem[id].inc : 0;
}

unsigned int
nl_swim_lhm(const struct nl_swim *sw)
{
	return sw->score + 1u;
}

const struct nl_swim_stats *
nl_swim_stats(const struct nl_swim *sw)
{
	return &sw->st;
}
