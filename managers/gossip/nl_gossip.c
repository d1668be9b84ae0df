/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nl_gossip: views of resource records, merge (newer creation wins), exchanges with the
 * anti-entropy and stop-after-k rules, leave messages, expiry, join, NAT-aware peer choice.
 *
 * Layout: records live densely in ent[0..n) (so a random pick is O(1)); idx[] is an open
 * addressing table (linear probing, power-of-two size, at most half full) from source id to
 * position in ent[] + 1 (0 = empty). Removal moves the last entry into the hole and fixes its
 * index slot; deletion from the probe table uses backward-shift, so no tombstones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nl_gossip.h"

struct ent {
	struct nl_gossip_rec rec;
	uint32_t known; /* "already known" replies about this record */
	bool hot;       /* still pushed under NL_GOSSIP_STOP_K */
};

struct nl_gossip_view {
	uint32_t self;
	struct ent *ent;
	size_t n, cap;
	uint32_t *idx; /* [mask + 1] position + 1, 0 = empty */
	size_t mask;
	uint64_t epoch;
};

static inline size_t
hash_src(uint32_t src)
{
	uint64_t x = (uint64_t)src * UINT64_C(0x9e3779b97f4a7c15);

	return (size_t)(x >> 32);
}

static bool
rec_valid(const struct nl_gossip_rec *r, double now_s)
{
	return now_s < r->created_s + r->lifetime_s;
}

int
nl_gossip_cfg_check(const struct nl_gossip_cfg *cfg)
{
	if (cfg == NULL || cfg->fanout == 0 || cfg->fanout > NL_GOSSIP_MAX_FANOUT)
		return -EINVAL;
	if ((unsigned int)cfg->mode > NL_GOSSIP_PULL || (unsigned int)cfg->rule > NL_GOSSIP_STOP_K)
		return -EINVAL;
	if (cfg->rule == NL_GOSSIP_STOP_K && cfg->stop_k == 0)
		return -EINVAL;
	return 0;
}

static int
idx_alloc(struct nl_gossip_view *v, size_t slots)
{
	uint32_t *idx = calloc(slots, sizeof(*idx));

	if (idx == NULL)
		return -ENOMEM;
	free(v->idx);
	v->idx = idx;
	v->mask = slots - 1;
	for (size_t i = 0; i < v->n; i++) {
		size_t h = hash_src(v->ent[i].rec.src) & v->mask;

		while (v->idx[h] != 0)
			h = (h + 1) & v->mask;
		v->idx[h] = (uint32_t)(i + 1);
	}
	return 0;
}

int
nl_gossip_view_create(struct nl_gossip_view **out, uint32_t self, size_t cap_hint)
{
	struct nl_gossip_view *v = calloc(1, sizeof(*v));
	size_t slots = 16;

	if (v == NULL)
		return -ENOMEM;
	v->self = self;
	v->cap = cap_hint < 8 ? 8 : cap_hint;
	while (slots < 2 * v->cap)
		slots <<= 1;
	v->ent = malloc(v->cap * sizeof(*v->ent));
	if (v->ent == NULL || idx_alloc(v, slots) != 0) {
		nl_gossip_view_free(v);
		return -ENOMEM;
	}
	*out = v;
	return 0;
}

void
nl_gossip_view_free(struct nl_gossip_view *v)
{
	if (v == NULL)
		return;
	free(v->ent);
	free(v->idx);
	free(v);
}

size_t
nl_gossip_view_size(const struct nl_gossip_view *v)
{
	return v->n;
}

uint64_t
nl_gossip_view_epoch(const struct nl_gossip_view *v)
{
	return v->epoch;
}

/* Probe slot of src: the slot holding it, or the empty slot where it would go. */
static size_t
probe(const struct nl_gossip_view *v, uint32_t src)
{
	size_t h = hash_src(src) & v->mask;

	while (v->idx[h] != 0 && v->ent[v->idx[h] - 1].rec.src != src)
		h = (h + 1) & v->mask;
	return h;
}

static struct ent *
find(const struct nl_gossip_view *v, uint32_t src)
{
	size_t h = probe(v, src);

	return v->idx[h] != 0 ? &v->ent[v->idx[h] - 1] : NULL;
}

const struct nl_gossip_rec *
nl_gossip_view_find_st(const struct nl_gossip_view *v, uint32_t src)
{
	const struct ent *e = find(v, src);

	return e != NULL ? &e->rec : NULL;
}

/* Insert a new source (not present). */
static struct ent *
insert(struct nl_gossip_view *v, const struct nl_gossip_rec *r)
{
	if (v->n == v->cap) {
		size_t cap = v->cap * 2;
		struct ent *e = realloc(v->ent, cap * sizeof(*e));

		if (e == NULL)
			return NULL;
		v->ent = e;
		v->cap = cap;
	}
	if (2 * (v->n + 1) > v->mask + 1 && idx_alloc(v, 2 * (v->mask + 1)) != 0)
		return NULL;
	size_t h = probe(v, r->src);
	struct ent *e = &v->ent[v->n];

	v->idx[h] = (uint32_t)(++v->n);
	e->rec = *r;
	e->known = 0;
	e->hot = true;
	return e;
}

/* Remove the entry at position i (backward-shift deletion in the probe table). */
static void
remove_at(struct nl_gossip_view *v, size_t i)
{
	size_t h = probe(v, v->ent[i].rec.src), last = v->n - 1;

	/* backward-shift: move later members of the cluster into the hole */
	size_t j = h;

	for (;;) {
		j = (j + 1) & v->mask;
		if (v->idx[j] == 0)
			break;
		size_t home = hash_src(v->ent[v->idx[j] - 1].rec.src) & v->mask;

		/* can the entry at j move to h? yes unless home lies cyclically in (h, j] */
		if (h <= j ? (home <= h || home > j) : (home <= h && home > j)) {
			v->idx[h] = v->idx[j];
			h = j;
		}
	}
	v->idx[h] = 0;
	if (i != last) {
		size_t hl = probe(v, v->ent[last].rec.src);

		v->ent[i] = v->ent[last];
		v->idx[hl] = (uint32_t)(i + 1);
	}
	v->n--;
}

int
nl_gossip_set_self_st(struct nl_gossip_view *v, const struct nl_gossip_rec *rec)
{
	struct nl_gossip_rec r = *rec;
	struct ent *e;

	if (!(r.lifetime_s > 0))
		return -EINVAL;
	r.src = v->self;
	e = find(v, v->self);
	if (e != NULL && r.created_s < e->rec.created_s)
		return -EINVAL;
	if (e == NULL && (e = insert(v, &r)) == NULL)
		return -ENOMEM;
	e->rec = r;
	e->known = 0;
	e->hot = true;
	v->epoch++;
	return 0;
}

int
nl_gossip_merge_st(struct nl_gossip_view *v, const struct nl_gossip_rec *rec, double now_s)
{
	struct ent *e;

	if (!(rec->lifetime_s > 0))
		return -EINVAL;
	if (!rec_valid(rec, now_s))
		return NL_GOSSIP_MERGE_EXPIRED;
	e = find(v, rec->src);
	if (e == NULL) {
		if (insert(v, rec) == NULL)
			return -ENOMEM;
		v->epoch++;
		return NL_GOSSIP_MERGE_NEW;
	}
	/* I1: newer creation time wins; the owner's own record is only set by itself */
	if (rec->src == v->self || rec->created_s <= e->rec.created_s)
		return NL_GOSSIP_MERGE_KNOWN;
	e->rec = *rec;
	e->known = 0;
	e->hot = true;
	v->epoch++;
	return NL_GOSSIP_MERGE_NEW;
}

size_t
nl_gossip_collect_st(const struct nl_gossip_view *v, const struct nl_gossip_cfg *cfg,
		     double now_s, struct nl_gossip_rec *out, size_t cap)
{
	size_t k = 0;

	for (size_t i = 0; i < v->n && k < cap; i++) {
		const struct ent *e = &v->ent[i];

		if (!rec_valid(&e->rec, now_s))
			continue;
		/* I4 */
		if (cfg->rule == NL_GOSSIP_STOP_K && !e->hot)
			continue;
		out[k++] = e->rec;
	}
	return k;
}

int
nl_gossip_receive_st(struct nl_gossip_view *v, const struct nl_gossip_rec *in, size_t n,
		     double now_s, struct nl_gossip_ack *ack, size_t *n_ack, size_t *n_new)
{
	size_t na = 0, nn = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		int m = nl_gossip_merge_st(v, &in[i], now_s);

		if (m < 0) {
			rc = m;
			break;
		}
		if (m == NL_GOSSIP_MERGE_NEW)
			nn++;
		else if (m == NL_GOSSIP_MERGE_KNOWN && ack != NULL)
			ack[na++] = (struct nl_gossip_ack){ .src = in[i].src,
							    .created_s = in[i].created_s };
		else if (m == NL_GOSSIP_MERGE_KNOWN)
			na++;
	}
	if (n_ack != NULL)
		*n_ack = na;
	if (n_new != NULL)
		*n_new = nn;
	return rc;
}

void
nl_gossip_acked_st(struct nl_gossip_view *v, const struct nl_gossip_cfg *cfg,
		   const struct nl_gossip_ack *ack, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ent *e = find(v, ack[i].src);

		if (e == NULL || e->rec.created_s != ack[i].created_s)
			continue; /* about an older record: does not count */
		e->known++;
		if (cfg->rule == NL_GOSSIP_STOP_K && e->hot && e->known >= cfg->stop_k) {
			e->hot = false;
			v->epoch++;
		}
	}
}

void
nl_gossip_scratch_fini(struct nl_gossip_scratch *s)
{
	free(s->rec);
	free(s->ack);
	s->rec = NULL;
	s->ack = NULL;
	s->cap = 0;
}

static int
scratch_need(struct nl_gossip_scratch *s, size_t n)
{
	if (n <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap : 64;

	while (cap < n)
		cap *= 2;
	struct nl_gossip_rec *r = realloc(s->rec, cap * sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	s->rec = r;
	struct nl_gossip_ack *a = realloc(s->ack, cap * sizeof(*a));

	if (a == NULL)
		return -ENOMEM;
	s->ack = a;
	s->cap = cap;
	return 0;
}

/* Run one exchange; `rule` overrides cfg->rule (join). */
static int
exchange(struct nl_gossip_view *a, struct nl_gossip_view *b, const struct nl_gossip_cfg *cfg0,
	 enum nl_gossip_mode mode, double now_s, struct nl_gossip_scratch *scr,
	 struct nl_gossip_xstats *st)
{
	bool push = mode != NL_GOSSIP_PULL, pull = mode != NL_GOSSIP_PUSH;
	size_t na = 0, nb = 0, n_ack, n_new;
	int rc;

	/* both messages are built from the views as they were before the exchange */
	rc = scratch_need(scr, 2 * (a->n + b->n) + 2);
	if (rc != 0)
		return rc;
	if (push)
		na = nl_gossip_collect_st(a, cfg0, now_s, scr->rec, a->n);
	if (pull)
		nb = nl_gossip_collect_st(b, cfg0, now_s, scr->rec + na, b->n);
	if (st != NULL) {
		st->exchanges++;
		st->recs_sent += na + nb;
	}
	if (push) {
		rc = nl_gossip_receive_st(b, scr->rec, na, now_s, scr->ack, &n_ack, &n_new);
		if (rc != 0)
			return rc;
		nl_gossip_acked_st(a, cfg0, scr->ack, n_ack);
		if (st != NULL) {
			st->recs_new += n_new;
			st->recs_known += n_ack;
		}
	}
	if (pull) {
		rc = nl_gossip_receive_st(a, scr->rec + na, nb, now_s, scr->ack, &n_ack, &n_new);
		if (rc != 0)
			return rc;
		nl_gossip_acked_st(b, cfg0, scr->ack, n_ack);
		if (st != NULL) {
			st->recs_new += n_new;
			st->recs_known += n_ack;
		}
	}
	return 0;
}

int
nl_gossip_exchange_st(struct nl_gossip_view *init, struct nl_gossip_view *peer,
		      const struct nl_gossip_cfg *cfg, double now_s,
		      struct nl_gossip_scratch *scr, struct nl_gossip_xstats *st)
{
	return exchange(init, peer, cfg, cfg->mode, now_s, scr, st);
}

int
nl_gossip_join_st(struct nl_gossip_view *joiner, struct nl_gossip_view *contact,
		  double now_s, struct nl_gossip_scratch *scr)
{
	const struct nl_gossip_cfg ae = { .fanout = 1, .mode = NL_GOSSIP_PUSH_PULL,
					  .rule = NL_GOSSIP_ANTI_ENTROPY, .stop_k = 1 };

	return exchange(joiner, contact, &ae, NL_GOSSIP_PUSH_PULL, now_s, scr, NULL);
}

int
nl_gossip_leave_st(struct nl_gossip_view *v, double now_s, double lifetime_s)
{
	struct ent *e = find(v, v->self);

	if (e == NULL)
		return -ENOENT;
	if (!(lifetime_s > 0) || now_s < e->rec.created_s)
		return -EINVAL;
	e->rec.state = NL_GOSSIP_LEFT;
	e->rec.free_cores = 0;
	e->rec.created_s = now_s;
	e->rec.lifetime_s = lifetime_s;
	e->known = 0;
	e->hot = true;
	v->epoch++;
	return 0;
}

size_t
nl_gossip_expire_st(struct nl_gossip_view *v, double now_s)
{
	size_t dropped = 0;

	for (size_t i = 0; i < v->n;) {
		const struct nl_gossip_rec *r = &v->ent[i].rec;

		if (r->src != v->self && !rec_valid(r, now_s)) {
			remove_at(v, i); /* the last entry moved to i: look at i again */
			dropped++;
		} else {
			i++;
		}
	}
	if (dropped > 0)
		v->epoch++;
	return dropped;
}

static bool
contactable(const struct nl_gossip_view *v, const struct nl_gossip_rec *r, double now_s)
{
	/* I3 */
	return r->src != v->self && (r->flags & NL_GOSSIP_F_NAT) == 0 &&
	       r->state == NL_GOSSIP_UP && rec_valid(r, now_s);
}

unsigned int
nl_gossip_pick_peers_st(const struct nl_gossip_view *v, const struct nl_gossip_cfg *cfg,
			double now_s, struct nl_rng *rng, uint32_t *out)
{
	unsigned int want = cfg->fanout, k = 0;

	if (want > NL_GOSSIP_MAX_FANOUT)
		want = NL_GOSSIP_MAX_FANOUT;
	if (v->n == 0 || want == 0)
		return 0;
	/* fast path: random draws, distinct, up to 8 tries per wanted peer */
	for (unsigned int t = 0; t < 8 * want && k < want; t++) {
		const struct nl_gossip_rec *r = &v->ent[nl_rng_u64(rng) % v->n].rec;
		bool dup = false;

		if (!contactable(v, r, now_s))
			continue;
		for (unsigned int j = 0; j < k; j++)
			dup |= out[j] == r->src;
		if (!dup)
			out[k++] = r->src;
	}
	if (k == want)
		return k;
	/* slow path (few candidates): reservoir sampling over the remaining ones */
	unsigned int seen = 0, base = k;

	for (size_t i = 0; i < v->n; i++) {
		const struct nl_gossip_rec *r = &v->ent[i].rec;
		bool dup = false;

		if (!contactable(v, r, now_s))
			continue;
		for (unsigned int j = 0; j < base; j++)
			dup |= out[j] == r->src;
		if (dup)
			continue;
		seen++;
		if (k < want) {
			out[k++] = r->src;
		} else {
			uint64_t j = nl_rng_u64(rng) % seen;

			if (j < want - base)
				out[base + j] = r->src;
		}
	}
	return k;
}

size_t
nl_gossip_view_copy_st(const struct nl_gossip_view *v, double now_s, bool up_only,
		       struct nl_gossip_rec *out, size_t cap, uint64_t *epoch)
{
	size_t k = 0;

	for (size_t i = 0; i < v->n; i++) {
		const struct nl_gossip_rec *r = &v->ent[i].rec;

		/* the owner's own record is always current to its owner */
		if ((r->src != v->self && !rec_valid(r, now_s)) ||
		    (up_only && r->state != NL_GOSSIP_UP))
			continue;
		if (k < cap)
			out[k] = *r;
		k++;
	}
	if (epoch != NULL)
		*epoch = v->epoch;
	return k;
}
