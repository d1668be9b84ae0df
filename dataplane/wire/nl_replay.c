/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replay window of protocol version 2 (nl_proto.h: nl_replay_init(), nl_replay_check()):
 * per sender the NL_REPLAY_DEPTH highest sequence numbers accepted and a low-water mark below
 * them; senders grouped by owner (a principal, or the site key's holders), each owner with a
 * bound of its own.
 *
 * Why not RFC 4303's bitmap: seq is the sender's clock in ns (nl_proto_seal()), so a bitmap of
 * the 1024 numbers below the highest covered 1 us of the sender's time, and a frame that
 * arrived after a later one of its sender sent more than 1 us after it was refused as a
 * replay. That happens: a veth pair queues a datagram on the backlog of the CPU its sender ran
 * on, so a sender that moves between CPUs can have its datagrams delivered out of order (seen
 * in tests/scaleout with both cores busy: one SUBMIT in 3,600 dropped as `replay`, its task
 * lost). Remembering the highest seqs themselves makes the tolerance a depth in frames.
 *
 * Theory of operation. Entries live in one array, owner o's in [base_o, base_o + cap_o); an
 * open-addressing index (linear probing, backward-shift deletion) finds (owner, sender). Each
 * owner keeps its entries in a doubly linked list, most recently accepted first. A new sender
 * of a full owner takes the entry of that owner's least recently accepted sender; the evicted
 * sender's highest sequence number raises the owner's floor, and a sender the owner does not
 * hold is accepted only above the floor. Invariants:
 *   I1  a sender of owner o is remembered only in o's entries: no owner's traffic evicts
 *       another owner's sender, and an owner with room always takes a new sender (if its
 *       first seq is above the floor and within the clock tolerance);
 *   I2  every seq ever accepted from a sender o does not hold any more is <= floor_o, so a
 *       replay of it is refused (the floor only rises);
 *   I3  no entry is created for a frame outside the clock tolerance or at or below the floor;
 *   I4  for a sender held: every seq accepted from it since it was entered is in rec[] or
 *       <= low, low < every seq in rec[], and rec[] holds at most NL_REPLAY_DEPTH seqs,
 *       ascending (so a seq is accepted at most once: it is refused when in rec[] or <= low).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nl_proto.h"

/* ---- replay window (RFC 4303 section 3.4.3's anti-replay check, kept as seqs: above) ---- */

#define NIL UINT32_MAX
#define REC_MASK (NL_REPLAY_DEPTH - 1u)
_Static_assert((NL_REPLAY_DEPTH & REC_MASK) == 0 && NL_REPLAY_DEPTH <= 32768,
	       "NL_REPLAY_DEPTH: a power of 2 (rec[] is a ring) that n (uint16_t) can count");

struct nl_replay_ent {
	uint64_t sender;      /* 0 = empty */
	uint64_t low;         /* I4: every seq accepted and not in rec[] is <= low */
	uint32_t own;         /* owner */
	uint32_t prev, next;  /* its owner's list, most recently accepted first */
	uint16_t head, n;     /* rec[]: n seqs, ascending from rec[head] (a ring) */
	uint64_t rec[NL_REPLAY_DEPTH];
};

/* The i-th lowest seq remembered (i < n); the highest is rec_at(e, e->n - 1). */
static inline uint64_t
rec_at(const struct nl_replay_ent *e, unsigned int i)
{
	return e->rec[(e->head + i) & REC_MASK];
}

/* Forget the lowest seq remembered: it becomes the low-water mark (I4). */
static void
rec_drop_lowest(struct nl_replay_ent *e)
{
	e->low = e->rec[e->head];
	e->head = (uint16_t)((e->head + 1u) & REC_MASK);
	e->n--;
}

/* Accept seq from a sender held (and remember it), or refuse it: seen, or at or below low. */
static bool
rec_accept(struct nl_replay_ent *e, uint64_t seq)
{
	unsigned int i;

	if (seq <= e->low)
		return false;
	if (seq > rec_at(e, e->n - 1u)) { /* in order: the common case, O(1) */
		if (e->n == NL_REPLAY_DEPTH)
			rec_drop_lowest(e);
		e->rec[(e->head + e->n) & REC_MASK] = seq;
		e->n++;
		return true;
	}
	/* after later ones (reordered): its place, from the highest down */
	for (i = e->n; i > 0 && rec_at(e, i - 1u) > seq; i--)
		;
	if (i > 0 && rec_at(e, i - 1u) == seq)
		return false; /* seen */
	if (e->n == NL_REPLAY_DEPTH) {
		if (i == 0) { /* below every seq remembered: accepted, and at once the mark */
			e->low = seq;
			return true;
		}
		rec_drop_lowest(e);
		i--;
	}
	for (unsigned int j = e->n; j > i; j--)
		e->rec[(e->head + j) & REC_MASK] = e->rec[(e->head + j - 1u) & REC_MASK];
	e->rec[(e->head + i) & REC_MASK] = seq;
	e->n++;
	return true;
}

struct nl_replay_own {
	uint32_t base, cap, used;
	uint32_t head, tail;  /* most / least recently accepted */
	uint64_t floor;       /* highest seq of a sender forgotten; new senders must be above */
	uint64_t evicted;     /* senders forgotten to make room */
};

int
nl_replay_init_owners(struct nl_replay *rp, unsigned int n_own, const uint32_t *cap,
		      unsigned int def_own)
{
	uint64_t total = 0, slots = 2;

	memset(rp, 0, sizeof(*rp));
	if (n_own == 0 || n_own > NL_REPLAY_MAX_OWNERS || def_own >= n_own)
		return -EINVAL;
	for (unsigned int o = 0; o < n_own; o++) {
		if (cap[o] < 1 || cap[o] > NL_REPLAY_MAX_SENDERS)
			return -EINVAL;
		total += cap[o];
	}
	if (total > NL_REPLAY_MAX_SENDERS)
		return -EINVAL;
	while (slots < 2 * total)
		slots <<= 1;
	rp->ent = calloc(total, sizeof(*rp->ent));
	rp->own = calloc(n_own, sizeof(*rp->own));
	rp->idx = calloc(slots, sizeof(*rp->idx));
	if (rp->ent == NULL || rp->own == NULL || rp->idx == NULL) {
		nl_replay_free(rp);
		return -ENOMEM;
	}
	total = 0;
	for (unsigned int o = 0; o < n_own; o++) {
		rp->own[o].base = (uint32_t)total;
		rp->own[o].cap = cap[o];
		rp->own[o].head = rp->own[o].tail = NIL;
		total += cap[o];
	}
	rp->n_ent = (unsigned int)total;
	rp->n_own = n_own;
	rp->def_own = def_own;
	rp->idx_mask = (unsigned int)(slots - 1);
	rp->skew_ns = NL_REPLAY_SKEW_NS;
	return 0;
}

int
nl_replay_init(struct nl_replay *rp, unsigned int senders)
{
	uint32_t cap = senders;

	return nl_replay_init_owners(rp, 1, &cap, 0);
}

void
nl_replay_free(struct nl_replay *rp)
{
	free(rp->ent);
	free(rp->own);
	free(rp->idx);
	rp->ent = NULL;
	rp->own = NULL;
	rp->idx = NULL;
	rp->n_ent = rp->n_own = 0;
}

uint64_t
nl_replay_evicted(const struct nl_replay *rp, unsigned int own)
{
	return own < rp->n_own ? rp->own[own].evicted : 0;
}

static unsigned int
home(const struct nl_replay *rp, uint32_t own, uint64_t sender)
{
	uint64_t h = (sender ^ ((uint64_t)own << 40)) * 0x9e3779b97f4a7c15ull;

	return (unsigned int)(h >> 32) & rp->idx_mask;
}

/* Index slot of (own, sender), or of the empty slot where it would go. */
static unsigned int
slot_of(const struct nl_replay *rp, uint32_t own, uint64_t sender)
{
	unsigned int i = home(rp, own, sender);

	for (;;) {
		uint32_t k = rp->idx[i];

		if (k == 0)
			return i;
		if (rp->ent[k - 1].sender == sender && rp->ent[k - 1].own == own)
			return i;
		i = (i + 1) & rp->idx_mask;
	}
}

/* Remove index slot i (backward-shift deletion: no tombstones, probes stay short). */
static void
idx_del(struct nl_replay *rp, unsigned int i)
{
	unsigned int j = i;

	rp->idx[i] = 0;
	for (;;) {
		uint32_t k;
		unsigned int h;

		j = (j + 1) & rp->idx_mask;
		k = rp->idx[j];
		if (k == 0)
			return;
		h = home(rp, rp->ent[k - 1].own, rp->ent[k - 1].sender);
		/* the entry at j may move to i unless its home lies cyclically in (i, j] */
		if (((j - h) & rp->idx_mask) >= ((j - i) & rp->idx_mask)) {
			rp->idx[i] = k;
			rp->idx[j] = 0;
			i = j;
		}
	}
}

static void
lru_unlink(struct nl_replay *rp, struct nl_replay_own *o, uint32_t e)
{
	struct nl_replay_ent *x = &rp->ent[e];

	if (x->prev != NIL)
		rp->ent[x->prev].next = x->next;
	else
		o->head = x->next;
	if (x->next != NIL)
		rp->ent[x->next].prev = x->prev;
	else
		o->tail = x->prev;
	x->prev = x->next = NIL;
}

static void
lru_front(struct nl_replay *rp, struct nl_replay_own *o, uint32_t e)
{
	struct nl_replay_ent *x = &rp->ent[e];

	x->prev = NIL;
	x->next = o->head;
	if (o->head != NIL)
		rp->ent[o->head].prev = e;
	o->head = e;
	if (o->tail == NIL)
		o->tail = e;
}

/* A new sender of owner o: an entry of o's (its least recently accepted sender's when o is
 * full: that sender's highest seq raises the floor, I2). */
static uint32_t
take_entry(struct nl_replay *rp, uint32_t own)
{
	struct nl_replay_own *o = &rp->own[own];
	uint32_t e;

	if (o->used < o->cap) {
		e = o->base + o->used++;
	} else {
		struct nl_replay_ent *v;

		e = o->tail;
		v = &rp->ent[e];
		if (rec_at(v, v->n - 1u) > o->floor) /* its highest: I2 */
			o->floor = rec_at(v, v->n - 1u);
		idx_del(rp, slot_of(rp, own, v->sender));
		lru_unlink(rp, o, e);
		o->evicted++;
		rp->evicted++;
	}
	return e;
}

enum nl_proto_err
nl_replay_check_own(struct nl_replay *rp, unsigned int own, uint64_t sender, uint64_t seq,
		    uint64_t now_ns)
{
	struct nl_replay_own *o;
	struct nl_replay_ent *e;
	unsigned int s;
	uint32_t k;

	/* Outside the clock tolerance: too old to be told from a replay, or from the future. */
	if (own >= rp->n_own || sender == 0 || seq + rp->skew_ns < now_ns ||
	    seq > now_ns + rp->skew_ns)
		return NL_PROTO_E_REPLAY;
	o = &rp->own[own];
	s = slot_of(rp, own, sender);
	k = rp->idx[s];
	if (k == 0) {
		uint64_t fl = o->floor; /* (before take_entry() raises it for the sender it evicts) */

		if (seq <= fl)
			return NL_PROTO_E_REPLAY; /* I2: perhaps a forgotten sender's old frame */
		k = take_entry(rp, own) + 1;
		e = &rp->ent[k - 1];
		e->sender = sender;
		e->own = own;
		e->low = fl; /* I4: what it was accepted with before it was forgotten is <= fl (I2) */
		e->head = 0;
		e->n = 1;
		e->rec[0] = seq;
		rp->idx[slot_of(rp, own, sender)] = k; /* the eviction may have moved slots */
		lru_front(rp, o, k - 1);
		return NL_PROTO_OK;
	}
	e = &rp->ent[k - 1];
	if (!rec_accept(e, seq))
		return NL_PROTO_E_REPLAY; /* seen, or at or below its low-water mark */
	if (o->head != k - 1) {
		lru_unlink(rp, o, k - 1);
		lru_front(rp, o, k - 1);
	}
	return NL_PROTO_OK;
}

enum nl_proto_err
nl_replay_check(struct nl_replay *rp, uint64_t sender, uint64_t seq, uint64_t now_ns)
{
	return nl_replay_check_own(rp, rp->def_own, sender, seq, now_ns);
}
