/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "nl_pick.h"
#include "nl_pick_idx.h"
#include "nl_task.h"

#define NO_POS UINT32_MAX

/* (busy_until, id) order of two run entries. */
static inline bool
before(const struct nl_pick_ent *a, const struct nl_pick_ent *b)
{
	return a->busy_until_vt < b->busy_until_vt ||
	       (a->busy_until_vt == b->busy_until_vt && a->id < b->id);
}

static inline bool
idle_test(const struct nl_pick_idx *x, const struct nl_pick_cls *c, uint32_t k)
{
	return (x->idle[c->word_off + k / 64] >> (k % 64)) & 1;
}

static inline void
idle_put(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t k, bool on)
{
	uint64_t bit = UINT64_C(1) << (k % 64);

	if (on)
		x->idle[c->word_off + k / 64] |= bit;
	else
		x->idle[c->word_off + k / 64] &= ~bit;
	c->n_idle += on ? 1 : (uint32_t)-1;
}

/* Storage entry i of class c's run, and whether it is valid (I1). */
static inline struct nl_pick_ent *
run_at(const struct nl_pick_idx *x, const struct nl_pick_cls *c, uint32_t i)
{
	return &x->run[c->run_off + i];
}

static inline bool
run_valid(const struct nl_pick_idx *x, const struct nl_pick_cls *c, uint32_t i)
{
	return x->rpos[run_at(x, c, i)->slot] == i;
}

/* Drop the tombstones of class c's run and move it to the start of its storage. */
static void
run_compact(struct nl_pick_idx *x, struct nl_pick_cls *c)
{
	uint32_t n = 0;

	for (uint32_t i = c->head; i < c->tail; i++) {
		if (!run_valid(x, c, i))
			continue;
		*run_at(x, c, n) = *run_at(x, c, i);
		x->rpos[run_at(x, c, n)->slot] = n;
		n++;
	}
	c->head = 0;
	c->tail = n;
}

/* Move storage entries [a, b) of class c by d = +1 or -1, keeping valid entries valid. */
static void
run_shift(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t a, uint32_t b, int d)
{
	if (d > 0) {
		for (uint32_t i = b; i-- > a;) {
			bool v = run_valid(x, c, i);

			*run_at(x, c, i + 1) = *run_at(x, c, i);
			if (v)
				x->rpos[run_at(x, c, i + 1)->slot] = i + 1;
		}
	} else {
		for (uint32_t i = a; i < b; i++) {
			bool v = run_valid(x, c, i);

			*run_at(x, c, i - 1) = *run_at(x, c, i);
			if (v)
				x->rpos[run_at(x, c, i - 1)->slot] = i - 1;
		}
	}
}

/* Put e (not in the run) into class c's run at its (busy_until, id) place (I2). */
static void
run_insert(struct nl_pick_idx *x, struct nl_pick_cls *c, struct nl_pick_ent e)
{
	uint32_t p;

	if (c->tail == c->run_cap)
		run_compact(x, c);
	p = c->tail;
	if (c->tail > c->head && before(&e, run_at(x, c, c->tail - 1))) {
		/* out of the class's order: binary search for the first entry after e */
		uint32_t lo = c->head, hi = c->tail - 1;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (before(&e, run_at(x, c, mid)))
				hi = mid;
			else
				lo = mid + 1;
		}
		p = lo;
		if (c->head > 0 && (p - c->head < c->tail - p || c->tail == c->run_cap)) {
			run_shift(x, c, c->head, p, -1);
			c->head--;
			p--;
		} else {
			run_shift(x, c, p, c->tail, +1);
			c->tail++;
		}
	} else {
		c->tail++;
	}
	*run_at(x, c, p) = e;
	x->rpos[e.slot] = p;
	c->n_run++;
}

/* Put member slot where its busy_until says (I1, I2). */
static void
member_insert(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t slot)
{
	uint32_t id = x->mem[slot];
	double b = x->load[id].busy_until_vt;

	if (b >= NL_MACH_GONE_VT)
		return;
	if (b <= c->now_vt)
		idle_put(x, c, slot - c->mem_off, true);
	else
		run_insert(x, c, (struct nl_pick_ent){ b, id, slot });
}

static void
member_remove(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t slot)
{
	if (x->rpos[slot] != NO_POS) {
		x->rpos[slot] = NO_POS; /* its entry is now a tombstone */
		c->n_run--;
	} else if (idle_test(x, c, slot - c->mem_off)) {
		idle_put(x, c, slot - c->mem_off, false);
	}
}

static inline struct nl_pick_cls *
cls_of(struct nl_pick_idx *x, uint32_t slot)
{
	return &x->cls[x->slot_cls[slot]];
}

void
nl_pick_idx_free(struct nl_pick_idx *x)
{
	free(x->grp_off);
	free(x->grp_cand);
	free(x->grp_cls);
	free(x->cls);
	free(x->mem);
	free(x->load);
	free(x->run);
	free(x->slot_cls);
	free(x->rpos);
	free(x->idle);
	free(x->slot_off);
	free(x->slot);
	memset(x, 0, sizeof(*x));
}

static bool
same_rate(const struct nl_mach_rate *a, const struct nl_mach_rate *b)
{
	return a->vt_per_instr == b->vt_per_instr && a->vt_per_bit == b->vt_per_bit;
}

int
nl_pick_idx_build(struct nl_pick_idx *x, unsigned int n_grp, const uint32_t *grp_off,
		  const uint32_t *grp_cand, const struct nl_mach_rate *rate, unsigned int n_mach)
{
	uint32_t n_slot = grp_off[n_grp], n_cls = 0, n_word = 0, *fill;

	memset(x, 0, sizeof(*x));
	for (uint32_t i = 0; i < n_slot; i++)
		if (grp_cand[i] >= n_mach)
			return -EINVAL;
	x->n_grp = n_grp;
	x->n_mach = n_mach;
	x->rate = rate;
	x->grp_off = malloc((n_grp + 1) * sizeof(uint32_t));
	x->grp_cand = malloc((n_slot + 1) * sizeof(uint32_t));
	x->grp_cls = calloc(n_grp + 1, sizeof(uint32_t));
	x->cls = malloc((n_slot + 1) * sizeof(*x->cls)); /* at most one class per slot */
	x->mem = malloc((n_slot + 1) * sizeof(uint32_t));
	x->load = calloc(n_mach, sizeof(*x->load));
	x->slot_cls = malloc((n_slot + 1) * sizeof(uint32_t));
	x->rpos = malloc((n_slot + 1) * sizeof(uint32_t));
	x->idle = calloc(n_slot + n_grp + 1, sizeof(uint64_t)); /* <= one word per member */
	x->slot_off = calloc(n_mach + 1, sizeof(uint32_t));
	x->slot = malloc((n_slot + 1) * sizeof(uint32_t));
	fill = calloc(n_mach + 1, sizeof(uint32_t));
	if (x->grp_off == NULL || x->grp_cand == NULL || x->grp_cls == NULL || x->cls == NULL ||
	    x->mem == NULL || x->load == NULL || x->slot_cls == NULL || x->rpos == NULL ||
	    x->idle == NULL || x->slot_off == NULL || x->slot == NULL || fill == NULL) {
		free(fill);
		nl_pick_idx_free(x);
		return -ENOMEM;
	}
	memcpy(x->grp_off, grp_off, (n_grp + 1) * sizeof(uint32_t));
	memcpy(x->grp_cand, grp_cand, n_slot * sizeof(uint32_t));
	/* Classes: per group, the distinct rates in order of first appearance; members of a
	 * class keep the candidates' (ascending) order. */
	uint32_t s = 0;

	for (uint32_t g = 0; g < n_grp; g++) {
		uint32_t first = n_cls;

		for (uint32_t i = grp_off[g]; i < grp_off[g + 1]; i++) {
			const struct nl_mach_rate *r = &rate[grp_cand[i]];
			bool known = false;

			for (uint32_t c = first; c < n_cls && !known; c++)
				known = same_rate(&x->cls[c].rate, r);
			if (known)
				continue;
			struct nl_pick_cls *c = &x->cls[n_cls++];

			memset(c, 0, sizeof(*c));
			c->rate = *r;
			c->mem_off = s;
			c->word_off = n_word;
			for (uint32_t j = i; j < grp_off[g + 1]; j++) {
				if (same_rate(&rate[grp_cand[j]], r)) {
					x->slot_cls[s] = n_cls - 1;
					x->mem[s++] = grp_cand[j];
				}
			}
			c->n_mem = s - c->mem_off;
			n_word += (c->n_mem + 63) / 64;
		}
		x->grp_cls[g + 1] = n_cls;
	}
	for (uint32_t i = 0; i < n_slot; i++) {
		x->slot_off[x->mem[i] + 1]++;
		x->rpos[i] = NO_POS;
	}
	for (uint32_t m = 0; m < n_mach; m++)
		x->slot_off[m + 1] += x->slot_off[m];
	for (uint32_t i = 0; i < n_slot; i++)
		x->slot[x->slot_off[x->mem[i]] + fill[x->mem[i]]++] = i;
	free(fill);
	/* run storage: 2 n_mem + 2 entries per class, so compaction is O(1) per insertion */
	uint32_t n_run = 0;

	for (uint32_t c = 0; c < n_cls; c++) {
		x->cls[c].run_off = n_run;
		x->cls[c].run_cap = 2 * x->cls[c].n_mem + 2;
		n_run += x->cls[c].run_cap;
	}
	x->run = malloc((n_run + 1) * sizeof(*x->run));
	if (x->run == NULL) {
		nl_pick_idx_free(x);
		return -ENOMEM;
	}
	nl_pick_idx_reset(x, x->load, 0);
	return 0;
}

static int
ent_cmp(const void *a, const void *b)
{
	return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

void
nl_pick_idx_reset(struct nl_pick_idx *x, const struct nl_mach_load *load, double now_vt)
{
	uint32_t n_cls = x->grp_cls[x->n_grp];

	for (uint32_t c = 0; c < n_cls; c++) {
		struct nl_pick_cls *k = &x->cls[c];

		/* only members are ever read from the mirror (I3): copy theirs, not the table */
		if (load != x->load)
			for (uint32_t i = 0; i < k->n_mem; i++)
				x->load[x->mem[k->mem_off + i]] = load[x->mem[k->mem_off + i]];

		memset(&x->idle[k->word_off], 0, ((k->n_mem + 63) / 64) * sizeof(uint64_t));
		k->n_idle = k->n_run = k->head = k->tail = 0;
		k->now_vt = now_vt;
		for (uint32_t i = 0; i < k->n_mem; i++) {
			uint32_t slot = k->mem_off + i, id = x->mem[slot];
			double b = x->load[id].busy_until_vt;

			x->rpos[slot] = NO_POS;
			if (b < NL_MACH_GONE_VT && b > now_vt)
				*run_at(x, k, k->tail++) = (struct nl_pick_ent){ b, id, slot };
			else if (b < NL_MACH_GONE_VT)
				idle_put(x, k, i, true);
		}
		qsort(run_at(x, k, 0), k->tail, sizeof(struct nl_pick_ent), ent_cmp);
		for (uint32_t i = 0; i < k->tail; i++)
			x->rpos[run_at(x, k, i)->slot] = i;
		k->n_run = k->tail;
	}
}

void
nl_pick_idx_set(struct nl_pick_idx *x, uint32_t mach, double busy_until_vt)
{
	if (mach >= x->n_mach)
		return;
	x->load[mach].busy_until_vt = busy_until_vt;
	for (uint32_t j = x->slot_off[mach]; j < x->slot_off[mach + 1]; j++) {
		uint32_t slot = x->slot[j];
		struct nl_pick_cls *c = cls_of(x, slot);

		member_remove(x, c, slot);
		member_insert(x, c, slot);
	}
}

/* Lowest idle member index >= from in class c, or n_mem. */
static uint32_t
idle_next(const struct nl_pick_idx *x, const struct nl_pick_cls *c, uint32_t from)
{
	uint32_t w = from / 64, n_w = (c->n_mem + 63) / 64;
	uint64_t bits;

	if (from >= c->n_mem)
		return c->n_mem;
	bits = x->idle[c->word_off + w] & (~UINT64_C(0) << (from % 64));
	for (;;) {
		if (bits != 0)
			return w * 64 + (uint32_t)__builtin_ctzll(bits);
		if (++w >= n_w)
			return c->n_mem;
		bits = x->idle[c->word_off + w];
	}
}

/* Drop the tombstones at the front of class k's run and move the members whose busy_until
 * passed by now_vt to its idle set (I2). */
static void
cls_settle(struct nl_pick_idx *x, struct nl_pick_cls *k, double now_vt)
{
	k->now_vt = now_vt;
	while (k->head < k->tail) {
		const struct nl_pick_ent *e = run_at(x, k, k->head);

		if (x->rpos[e->slot] == k->head) {
			if (e->busy_until_vt > now_vt)
				break;
			x->rpos[e->slot] = NO_POS;
			k->n_run--;
			idle_put(x, k, e->slot - k->mem_off, true);
		}
		k->head++;
	}
	if (k->head == k->tail)
		k->head = k->tail = 0;
}

void
nl_pick_idx_count(struct nl_pick_idx *x, uint32_t grp, double now_vt, unsigned int *busy,
		  unsigned int *live)
{
	*busy = *live = 0;
	for (uint32_t c = x->grp_cls[grp]; c < x->grp_cls[grp + 1]; c++) {
		struct nl_pick_cls *k = &x->cls[c];

		if (now_vt < k->now_vt) { /* time went back for this class: count by scanning */
			for (uint32_t i = 0; i < k->n_mem; i++) {
				double b = x->load[x->mem[k->mem_off + i]].busy_until_vt;

				*live += b < NL_MACH_GONE_VT;
				*busy += b < NL_MACH_GONE_VT && b > now_vt;
			}
			continue;
		}
		cls_settle(x, k, now_vt);
		*busy += k->n_run;
		*live += k->n_run + k->n_idle;
	}
}

#define FAST_CLS 16u /* classes of a group merged without falling back to the scan */

/* A class's place in a pick: its idle cursor (member index) and run cursor (storage index). */
struct walk {
	double svc;   /* s_c for this sub-task shape */
	double key;   /* key of its head, INFINITY when it has none */
	uint32_t id;  /* machine id of its head */
	uint32_t idle; /* next idle member index, or n_mem */
	uint32_t run;  /* next valid run entry, or tail */
	bool from_run; /* the head is the run's entry */
};

/* Class k's head: its lowest idle member at or after w->idle (key s_c) or its run's entry at
 * w->run (key backlog + s_c), whichever is first by (key, id). */
static inline void
walk_head(const struct nl_pick_idx *x, const struct nl_pick_cls *k, struct walk *w, double now_vt)
{
	w->key = INFINITY;
	w->id = UINT32_MAX;
	w->from_run = false;
	if (w->idle < k->n_mem) {
		w->key = w->svc;
		w->id = x->mem[k->mem_off + w->idle];
	}
	if (w->run < k->tail) {
		const struct nl_pick_ent *e = run_at(x, k, w->run);
		double rkey = (e->busy_until_vt - now_vt) + w->svc;

		if (rkey < w->key || (rkey == w->key && e->id < w->id)) {
			w->key = rkey;
			w->id = e->id;
			w->from_run = true;
		}
	}
}

/* Next valid run entry of class k at or after storage index i, or tail. */
static inline uint32_t
run_next(const struct nl_pick_idx *x, const struct nl_pick_cls *k, uint32_t i)
{
	while (i < k->tail && !run_valid(x, k, i))
		i++;
	return i;
}

int
nl_pick_idx_pick(struct nl_pick_idx *x, uint32_t grp, double now_vt, double sub_instr,
		 double sub_bits, unsigned int n_split, uint32_t *out)
{
	uint32_t c0 = x->grp_cls[grp], c1 = x->grp_cls[grp + 1], n_c = c1 - c0, n_live = 0;
	struct walk w[FAST_CLS];

	if (n_split == 0 || n_split > NL_TASK_MAX_SPLIT)
		return -EINVAL;
	if (n_c > FAST_CLS)
		goto scan;
	for (uint32_t c = 0; c < n_c; c++) {
		struct nl_pick_cls *k = &x->cls[c0 + c];

		if (now_vt < k->now_vt) /* time went back for this class (I4) */
			goto scan;
		cls_settle(x, k, now_vt); /* the run's first entry is now valid and busy */
		n_live += k->n_idle + k->n_run;
		w[c].svc = nl_mach_rate_service_vt(&k->rate, sub_instr, sub_bits);
		w[c].idle = k->n_idle > 0 ? idle_next(x, k, 0) : k->n_mem;
		w[c].run = k->head;
		walk_head(x, k, &w[c], now_vt);
	}
	if (n_live < n_split)
		goto scan;
	/* Merge the classes' heads by (key, id); the index is read, not changed. */
	for (unsigned int o = 0; o < n_split; o++) {
		uint32_t b = 0;

		for (uint32_t c = 1; c < n_c; c++)
			if (w[c].key < w[b].key || (w[c].key == w[b].key && w[c].id < w[b].id))
				b = c;
		const struct nl_pick_cls *k = &x->cls[c0 + b];

		out[o] = w[b].id;
		if (w[b].from_run)
			w[b].run = run_next(x, k, w[b].run + 1);
		else
			w[b].idle = idle_next(x, k, w[b].idle + 1);
		walk_head(x, k, &w[b], now_vt);
	}
	return (int)n_split;
scan:
	return nl_pick_least_loaded(&x->grp_cand[x->grp_off[grp]], x->grp_off[grp + 1] - x->grp_off[grp],
				    x->rate, x->load, now_vt, sub_instr, sub_bits, n_split, out);
}

void
nl_pick_mirror_sync(struct nl_pick_mirror *pm, const struct nl_mach_load *load, uint64_t gen,
		    double now_vt)
{
	if (pm->synced && pm->gen == gen)
		return;
	nl_pick_idx_reset(&pm->idx, load, now_vt);
	pm->gen = gen;
	pm->synced = true;
}

void
nl_pick_mirror_booked(struct nl_pick_mirror *pm, const struct nl_mach_load *load,
		      const uint32_t *mach, unsigned int n, uint64_t gen_after)
{
	if (!pm->synced)
		return;
	for (unsigned int j = 0; j < n; j++)
		if (load[mach[j]].busy_until_vt != pm->idx.load[mach[j]].busy_until_vt)
			nl_pick_idx_set(&pm->idx, mach[j], load[mach[j]].busy_until_vt);
	pm->gen = gen_after;
}
