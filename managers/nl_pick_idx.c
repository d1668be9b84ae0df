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
#define HEAP_D 2u /* binary: 4- and 8-ary heaps measured slower here (BM_grp_pick_idx) */

static inline double
busy_of(const struct nl_pick_idx *x, uint32_t slot)
{
	return x->load[x->mem[slot]].busy_until_vt;
}

/* (busy_until, id) order of two heap entries. */
static inline bool
before(const struct nl_pick_hent *a, const struct nl_pick_hent *b)
{
	return a->busy_until_vt < b->busy_until_vt ||
	       (a->busy_until_vt == b->busy_until_vt && a->id < b->id);
}

static inline void
heap_place(struct nl_pick_idx *x, struct nl_pick_hent *h, uint32_t i, struct nl_pick_hent e)
{
	h[i] = e;
	x->hpos[e.slot] = i;
}

static void
heap_up(struct nl_pick_idx *x, const struct nl_pick_cls *c, uint32_t i, struct nl_pick_hent e)
{
	struct nl_pick_hent *h = &x->heap[c->mem_off];

	while (i > 0) {
		uint32_t p = (i - 1) / HEAP_D;

		if (!before(&e, &h[p]))
			break;
		heap_place(x, h, i, h[p]);
		i = p;
	}
	heap_place(x, h, i, e);
}

static void heap_up(struct nl_pick_idx *x, const struct nl_pick_cls *c, uint32_t i,
		    struct nl_pick_hent e);

/* Sift e down from position i (e no smaller than what sits above i), Floyd's way: the hole
 * goes down to a leaf along the smaller children (one comparison per level), then e rises
 * from there. Entries placed here are re-keyed machines and heap tails, which belong near the
 * bottom, so the rise is short. */
static void
heap_down(struct nl_pick_idx *x, const struct nl_pick_cls *c, uint32_t i, struct nl_pick_hent e)
{
	struct nl_pick_hent *h = &x->heap[c->mem_off];
	uint32_t n = c->n_heap;

	for (;;) {
		uint32_t l = HEAP_D * i + 1, best = l;

		if (l >= n)
			break;
		for (uint32_t j = l + 1; j < l + HEAP_D && j < n; j++)
			best = before(&h[j], &h[best]) ? j : best;
		heap_place(x, h, i, h[best]);
		i = best;
	}
	heap_up(x, c, i, e);
}

static void
heap_push(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t slot)
{
	struct nl_pick_hent e = { busy_of(x, slot), x->mem[slot], slot };

	heap_up(x, c, c->n_heap++, e);
}

/* Remove the entry at heap position i. */
static void
heap_remove(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t i)
{
	struct nl_pick_hent *h = &x->heap[c->mem_off];
	struct nl_pick_hent last = h[--c->n_heap];

	x->hpos[h[i].slot] = NO_POS;
	if (i == c->n_heap)
		return;
	if (i > 0 && before(&last, &h[(i - 1) / HEAP_D]))
		heap_up(x, c, i, last);
	else
		heap_down(x, c, i, last);
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

/* Put member slot (class c, index k in the class) where its busy_until says (I1, I2). */
static void
member_insert(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t slot)
{
	double b = busy_of(x, slot);

	if (b >= NL_MACH_GONE_VT)
		return;
	if (b <= c->now_vt)
		idle_put(x, c, slot - c->mem_off, true);
	else
		heap_push(x, c, slot);
}

static void
member_remove(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t slot)
{
	if (x->hpos[slot] != NO_POS)
		heap_remove(x, c, x->hpos[slot]);
	else if (idle_test(x, c, slot - c->mem_off))
		idle_put(x, c, slot - c->mem_off, false);
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
	free(x->heap);
	free(x->slot_cls);
	free(x->hpos);
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
	x->heap = malloc((n_slot + 1) * sizeof(*x->heap));
	x->slot_cls = malloc((n_slot + 1) * sizeof(uint32_t));
	x->hpos = malloc((n_slot + 1) * sizeof(uint32_t));
	x->idle = calloc(n_slot + n_grp + 1, sizeof(uint64_t)); /* <= one word per member */
	x->slot_off = calloc(n_mach + 1, sizeof(uint32_t));
	x->slot = malloc((n_slot + 1) * sizeof(uint32_t));
	fill = calloc(n_mach + 1, sizeof(uint32_t));
	if (x->grp_off == NULL || x->grp_cand == NULL || x->grp_cls == NULL || x->cls == NULL ||
	    x->mem == NULL || x->load == NULL || x->heap == NULL || x->slot_cls == NULL ||
	    x->hpos == NULL ||
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
		x->hpos[i] = NO_POS;
	}
	for (uint32_t m = 0; m < n_mach; m++)
		x->slot_off[m + 1] += x->slot_off[m];
	for (uint32_t i = 0; i < n_slot; i++)
		x->slot[x->slot_off[x->mem[i]] + fill[x->mem[i]]++] = i;
	free(fill);
	nl_pick_idx_reset(x, x->load, 0);
	return 0;
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
		k->n_heap = k->n_idle = 0;
		k->now_vt = now_vt;
		for (uint32_t i = 0; i < k->n_mem; i++) {
			x->hpos[k->mem_off + i] = NO_POS;
			member_insert(x, k, k->mem_off + i);
		}
	}
}

void
nl_pick_idx_set(struct nl_pick_idx *x, uint32_t mach, double busy_until_vt)
{
	double old;

	if (mach >= x->n_mach)
		return;
	old = x->load[mach].busy_until_vt;
	x->load[mach].busy_until_vt = busy_until_vt;
	for (uint32_t j = x->slot_off[mach]; j < x->slot_off[mach + 1]; j++) {
		uint32_t slot = x->slot[j];
		struct nl_pick_cls *c = cls_of(x, slot);
		uint32_t pos = x->hpos[slot];

		if (pos != NO_POS && busy_until_vt < NL_MACH_GONE_VT && busy_until_vt > c->now_vt) {
			/* busy stays busy: re-key in place (a booking only increases it) */
			struct nl_pick_hent e = x->heap[c->mem_off + pos];

			e.busy_until_vt = busy_until_vt;
			if (busy_until_vt >= old)
				heap_down(x, c, pos, e);
			else
				heap_up(x, c, pos, e);
			continue;
		}
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

/* Move the members of class k whose busy_until passed by now_vt to its idle set (I2). */
static void
cls_settle(struct nl_pick_idx *x, struct nl_pick_cls *k, double now_vt)
{
	k->now_vt = now_vt;
	while (k->n_heap > 0 && x->heap[k->mem_off].busy_until_vt <= now_vt) {
		uint32_t slot = x->heap[k->mem_off].slot;

		heap_remove(x, k, 0);
		idle_put(x, k, slot - k->mem_off, true);
	}
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
				double b = busy_of(x, k->mem_off + i);

				*live += b < NL_MACH_GONE_VT;
				*busy += b < NL_MACH_GONE_VT && b > now_vt;
			}
			continue;
		}
		cls_settle(x, k, now_vt);
		*busy += k->n_heap;
		*live += k->n_heap + k->n_idle;
	}
}

#define FAST_CLS 16u /* classes of a group merged without falling back to the scan */

/* Best (busy, id) among class c's heap frontier positions fr[0..n-1]; n > 0. */
static inline uint32_t
frontier_best(const struct nl_pick_hent *h, const uint32_t *fr, unsigned int n)
{
	uint32_t b = 0;

	for (unsigned int i = 1; i < n; i++)
		if (before(&h[fr[i]], &h[fr[b]]))
			b = i;
	return b;
}

/* Class k's head: its lowest idle member at or after `cur` (key s_c) or the best entry of its
 * heap frontier fr[0..n_fr-1] (key backlog + s_c), whichever is first by (key, id); *fb is the
 * frontier index of the latter, *heap whether the head is it. No candidate: key INFINITY. */
static inline void
class_head(const struct nl_pick_idx *x, const struct nl_pick_cls *k, uint32_t cur,
	   const uint32_t *fr, unsigned int n_fr, double now_vt, double svc, uint32_t *fb,
	   double *key, uint32_t *id, bool *heap)
{
	*key = INFINITY;
	*id = UINT32_MAX;
	*heap = false;
	if (cur < k->n_mem) {
		*key = svc;
		*id = x->mem[k->mem_off + cur];
	}
	if (n_fr > 0) {
		const struct nl_pick_hent *h = &x->heap[k->mem_off];
		uint32_t f = frontier_best(h, fr, n_fr);
		double hkey = (h[fr[f]].busy_until_vt - now_vt) + svc;

		*fb = f;
		if (hkey < *key || (hkey == *key && h[fr[f]].id < *id)) {
			*key = hkey;
			*id = h[fr[f]].id;
			*heap = true;
		}
	}
}

int
nl_pick_idx_pick(struct nl_pick_idx *x, uint32_t grp, double now_vt, double sub_instr,
		 double sub_bits, unsigned int n_split, uint32_t *out)
{
	uint32_t c0 = x->grp_cls[grp], c1 = x->grp_cls[grp + 1], n_c = c1 - c0, n_live = 0;
	uint32_t cur[FAST_CLS], fr[FAST_CLS][(HEAP_D - 1) * NL_TASK_MAX_SPLIT + 1], fb[FAST_CLS];
	unsigned int n_fr[FAST_CLS];
	double svc[FAST_CLS], hk[FAST_CLS];
	uint32_t hid[FAST_CLS];
	bool hheap[FAST_CLS];

	if (n_split == 0 || n_split > NL_TASK_MAX_SPLIT)
		return -EINVAL;
	for (uint32_t c = 0; c < n_c && n_c <= FAST_CLS; c++) {
		struct nl_pick_cls *k = &x->cls[c0 + c];

		if (now_vt < k->now_vt) /* time went back for this class (I4) */
			goto scan;
		cls_settle(x, k, now_vt);
		n_live += k->n_idle + k->n_heap;
		cur[c] = idle_next(x, k, 0);
		svc[c] = nl_mach_rate_service_vt(&k->rate, sub_instr, sub_bits);
		n_fr[c] = k->n_heap > 0;
		fr[c][0] = 0;
		fb[c] = 0;
	}
	if (n_c > FAST_CLS || n_live < n_split)
		goto scan;
	/* Each class's head: its lowest idle id (key s_c) or the best of its heap frontier
	 * (key backlog + s_c), whichever is first by (key, id); the heap is read, not changed:
	 * taking a frontier position adds its two children. */
	for (uint32_t c = 0; c < n_c; c++)
		class_head(x, &x->cls[c0 + c], cur[c], fr[c], n_fr[c], now_vt, svc[c], &fb[c], &hk[c],
			   &hid[c], &hheap[c]);
	for (unsigned int o = 0; o < n_split; o++) {
		uint32_t b = 0;

		for (uint32_t c = 1; c < n_c; c++)
			if (hk[c] < hk[b] || (hk[c] == hk[b] && hid[c] < hid[b]))
				b = c;
		const struct nl_pick_cls *k = &x->cls[c0 + b];

		out[o] = hid[b];
		if (hheap[b]) {
			uint32_t p = fr[b][fb[b]];

			fr[b][fb[b]] = fr[b][--n_fr[b]];
			for (uint32_t j = HEAP_D * p + 1; j <= HEAP_D * p + HEAP_D && j < k->n_heap; j++)
				fr[b][n_fr[b]++] = j;
		} else {
			cur[b] = idle_next(x, k, cur[b] + 1);
		}
		class_head(x, k, cur[b], fr[b], n_fr[b], now_vt, svc[b], &fb[b], &hk[b], &hid[b],
			   &hheap[b]);
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
