/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "nl_pick.h"
#include "nl_pick_idx.h"
#include "nl_task.h"

#define NO_POS UINT32_MAX

static inline double
busy_of(const struct nl_pick_idx *x, uint32_t slot)
{
	return x->load[x->mem[slot]].busy_until_vt;
}

/* (busy_until, id) order of two member slots. */
static inline bool
before(const struct nl_pick_idx *x, uint32_t a, uint32_t b)
{
	double ba = busy_of(x, a), bb = busy_of(x, b);

	return ba < bb || (ba == bb && x->mem[a] < x->mem[b]);
}

static void
heap_place(struct nl_pick_idx *x, const struct nl_pick_cls *c, uint32_t i, uint32_t slot)
{
	x->heap[c->mem_off + i] = slot;
	x->hpos[slot] = i;
}

static void
heap_up(struct nl_pick_idx *x, const struct nl_pick_cls *c, uint32_t i, uint32_t slot)
{
	while (i > 0) {
		uint32_t p = (i - 1) / 2, ps = x->heap[c->mem_off + p];

		if (!before(x, slot, ps))
			break;
		heap_place(x, c, i, ps);
		i = p;
	}
	heap_place(x, c, i, slot);
}

static void
heap_down(struct nl_pick_idx *x, const struct nl_pick_cls *c, uint32_t i, uint32_t slot)
{
	for (;;) {
		uint32_t l = 2 * i + 1, best;

		if (l >= c->n_heap)
			break;
		best = l;
		if (l + 1 < c->n_heap &&
		    before(x, x->heap[c->mem_off + l + 1], x->heap[c->mem_off + l]))
			best = l + 1;
		if (!before(x, x->heap[c->mem_off + best], slot))
			break;
		heap_place(x, c, i, x->heap[c->mem_off + best]);
		i = best;
	}
	heap_place(x, c, i, slot);
}

static void
heap_push(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t slot)
{
	heap_up(x, c, c->n_heap++, slot);
}

/* Remove the entry at heap position i. */
static void
heap_remove(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t i)
{
	uint32_t gone = x->heap[c->mem_off + i], last = x->heap[c->mem_off + --c->n_heap];

	x->hpos[gone] = NO_POS;
	if (i == c->n_heap)
		return;
	if (i > 0 && before(x, last, x->heap[c->mem_off + (i - 1) / 2]))
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

/* The class of a member slot: classes are laid out in slot order. */
static struct nl_pick_cls *
cls_of(struct nl_pick_idx *x, uint32_t slot)
{
	uint32_t lo = 0, hi = x->grp_cls[x->n_grp];

	while (hi - lo > 1) { /* last class whose mem_off <= slot */
		uint32_t mid = (lo + hi) / 2;

		if (x->cls[mid].mem_off <= slot)
			lo = mid;
		else
			hi = mid;
	}
	return &x->cls[lo];
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
	x->heap = malloc((n_slot + 1) * sizeof(uint32_t));
	x->hpos = malloc((n_slot + 1) * sizeof(uint32_t));
	x->idle = calloc(n_slot + n_grp + 1, sizeof(uint64_t)); /* <= one word per member */
	x->slot_off = calloc(n_mach + 1, sizeof(uint32_t));
	x->slot = malloc((n_slot + 1) * sizeof(uint32_t));
	fill = calloc(n_mach + 1, sizeof(uint32_t));
	if (x->grp_off == NULL || x->grp_cand == NULL || x->grp_cls == NULL || x->cls == NULL ||
	    x->mem == NULL || x->load == NULL || x->heap == NULL || x->hpos == NULL ||
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
			for (uint32_t j = i; j < grp_off[g + 1]; j++)
				if (same_rate(&rate[grp_cand[j]], r))
					x->mem[s++] = grp_cand[j];
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

	if (load != x->load)
		memcpy(x->load, load, x->n_mach * sizeof(*load));
	for (uint32_t c = 0; c < n_cls; c++) {
		struct nl_pick_cls *k = &x->cls[c];

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
	if (mach >= x->n_mach)
		return;
	for (uint32_t j = x->slot_off[mach]; j < x->slot_off[mach + 1]; j++) {
		uint32_t slot = x->slot[j];

		member_remove(x, cls_of(x, slot), slot);
	}
	x->load[mach].busy_until_vt = busy_until_vt;
	for (uint32_t j = x->slot_off[mach]; j < x->slot_off[mach + 1]; j++) {
		uint32_t slot = x->slot[j];

		member_insert(x, cls_of(x, slot), slot);
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

int
nl_pick_idx_pick(struct nl_pick_idx *x, uint32_t grp, double now_vt, double sub_instr,
		 double sub_bits, unsigned int n_split, uint32_t *out)
{
	uint32_t c0 = x->grp_cls[grp], c1 = x->grp_cls[grp + 1], n_live = 0;
	uint32_t cur[NL_TASK_MAX_SPLIT], popped[NL_TASK_MAX_SPLIT], pop_cls[NL_TASK_MAX_SPLIT];
	double svc[NL_TASK_MAX_SPLIT];
	unsigned int n_pop = 0;
	bool fallback = c1 - c0 > NL_TASK_MAX_SPLIT;

	if (n_split == 0 || n_split > NL_TASK_MAX_SPLIT)
		return -EINVAL;
	for (uint32_t c = c0; c < c1 && !fallback; c++) {
		struct nl_pick_cls *k = &x->cls[c];

		if (now_vt < k->now_vt) { /* time went back for this class (I4) */
			fallback = true;
			break;
		}
		k->now_vt = now_vt;
		while (k->n_heap > 0 && busy_of(x, x->heap[k->mem_off]) <= now_vt) {
			uint32_t slot = x->heap[k->mem_off];

			heap_remove(x, k, 0);
			idle_put(x, k, slot - k->mem_off, true);
		}
		n_live += k->n_idle + k->n_heap;
		cur[c - c0] = idle_next(x, k, 0);
		svc[c - c0] = nl_mach_rate_service_vt(&k->rate, sub_instr, sub_bits);
	}
	if (fallback || n_live < n_split)
		return nl_pick_least_loaded(&x->grp_cand[x->grp_off[grp]],
					    x->grp_off[grp + 1] - x->grp_off[grp], x->rate, x->load,
					    now_vt, sub_instr, sub_bits, n_split, out);
	/* Merge the classes' heads by (key, id): an idle head has key s_c, a heap head
	 * (busy_until - now) + s_c; at most n_split heads are taken (I4 covers fewer live). */
	for (unsigned int o = 0; o < n_split; o++) {
		uint32_t best_c = UINT32_MAX, best_id = 0;
		double best_k = 0;
		bool best_heap = false;

		for (uint32_t c = c0; c < c1; c++) {
			struct nl_pick_cls *k = &x->cls[c];

			if (cur[c - c0] < k->n_mem) {
				uint32_t id = x->mem[k->mem_off + cur[c - c0]];
				double key = svc[c - c0];

				if (best_c == UINT32_MAX || key < best_k || (key == best_k && id < best_id)) {
					best_c = c;
					best_k = key;
					best_id = id;
					best_heap = false;
				}
			}
			if (k->n_heap > 0) {
				uint32_t slot = x->heap[k->mem_off], id = x->mem[slot];
				double key = (busy_of(x, slot) - now_vt) + svc[c - c0];

				if (best_c == UINT32_MAX || key < best_k || (key == best_k && id < best_id)) {
					best_c = c;
					best_k = key;
					best_id = id;
					best_heap = true;
				}
			}
		}
		struct nl_pick_cls *k = &x->cls[best_c];

		out[o] = best_id;
		if (best_heap) {
			popped[n_pop] = x->heap[k->mem_off];
			pop_cls[n_pop++] = best_c;
			heap_remove(x, k, 0);
		} else {
			cur[best_c - c0] = idle_next(x, k, cur[best_c - c0] + 1);
		}
	}
	for (unsigned int i = 0; i < n_pop; i++)
		heap_push(x, &x->cls[pop_cls[i]], popped[i]);
	return (int)n_split;
}
