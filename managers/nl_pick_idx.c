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
#define END_SLOT (UINT32_MAX - 1) /* slot of the sentinel entry at a run's tail */

/* (busy_until, id) order of two run entries. */
static inline bool
before(const struct nl_pick_ent *a, const struct nl_pick_ent *b)
{
	return a->busy_until_vt < b->busy_until_vt ||
	       (a->busy_until_vt == b->busy_until_vt && a->id < b->id);
}

static inline bool
idle_test(const struct nl_pick_cls *c, uint32_t k)
{
	return (c->idle_w[k / 64] >> (k % 64)) & 1;
}

/* Lowest idle member index >= from in class c, or n_mem. */
static uint32_t
idle_next(const struct nl_pick_cls *c, uint32_t from)
{
	uint32_t w = from / 64, n_w = (c->n_mem + 63) / 64;
	uint64_t bits;

	if (from >= c->n_mem)
		return c->n_mem;
	bits = c->idle_w[w] & (~UINT64_C(0) << (from % 64));
	for (;;) {
		if (bits != 0)
			return w * 64 + (uint32_t)__builtin_ctzll(bits);
		if (++w >= n_w)
			return c->n_mem;
		bits = c->idle_w[w];
	}
}

/* Machine id of member index i of class c, UINT32_MAX for n_mem (none). */
static inline uint32_t
mem_id(const struct nl_pick_cls *c, uint32_t i)
{
	return i < c->n_mem ? c->mem_id[i] : UINT32_MAX;
}

/* Member k of class c joins (on) or leaves its idle set; keeps idle_lo (I5). */
static inline void
idle_put(struct nl_pick_cls *c, uint32_t k, bool on)
{
	uint64_t bit = UINT64_C(1) << (k % 64);

	if (on) {
		c->idle_w[k / 64] |= bit;
		c->n_idle++;
		if (k < c->idle_lo) {
			c->idle_lo = k;
			c->idle_id = c->mem_id[k];
		}
	} else {
		c->idle_w[k / 64] &= ~bit;
		c->n_idle--;
		if (k == c->idle_lo) {
			c->idle_lo = idle_next(c, k + 1);
			c->idle_id = mem_id(c, c->idle_lo);
		}
	}
}

/* Storage entry i of class c's run, and whether it is valid (I1). */
static inline struct nl_pick_ent *
run_at(const struct nl_pick_cls *c, uint32_t i)
{
	return &c->run_e[i];
}

/* A tombstone's slot is NO_POS, so a walk tells it from the entry it reads anyway. */
static inline bool
run_valid(const struct nl_pick_cls *c, uint32_t i)
{
	return run_at(c, i)->slot != NO_POS;
}

/* Class c's run ends at tail t: the sentinel there (key +inf, valid) stops a walk without a
 * bounds check. */
static inline void
run_end(struct nl_pick_cls *c, uint32_t t)
{
	c->tail = t;
	c->run_e[t] = (struct nl_pick_ent){ INFINITY, UINT32_MAX, END_SLOT };
}

/* Entry pos of class c's run becomes a tombstone (its member left the run). */
static inline void
run_kill(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t pos)
{
	x->rpos[run_at(c, pos)->slot] = NO_POS;
	run_at(c, pos)->slot = NO_POS;
	c->n_run--;
}

/* Drop the tombstones at the front of class c's run and cache its first entry (I5). */
static void
front_fix(struct nl_pick_cls *c)
{
	while (c->head < c->tail && !run_valid(c, c->head))
		c->head++;
	if (c->head == c->tail) {
		c->head = 0;
		run_end(c, 0);
		c->front_vt = INFINITY;
		c->front_id = UINT32_MAX;
	} else {
		c->front_vt = run_at(c, c->head)->busy_until_vt;
		c->front_id = run_at(c, c->head)->id;
	}
}

/* Drop the tombstones of class c's run and move it to the start of its storage. */
static void
run_compact(struct nl_pick_idx *x, struct nl_pick_cls *c)
{
	uint32_t n = 0;

	for (uint32_t i = c->head; i < c->tail; i++) {
		if (!run_valid(c, i))
			continue;
		*run_at(c, n) = *run_at(c, i);
		x->rpos[run_at(c, n)->slot] = n;
		n++;
	}
	c->head = 0;
	run_end(c, n);
}

/* Move storage entries [a, b) of class c by d = +1 or -1, keeping valid entries valid. */
static void
run_shift(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t a, uint32_t b, int d)
{
	if (d > 0) {
		for (uint32_t i = b; i-- > a;) {
			bool v = run_valid(c, i);

			*run_at(c, i + 1) = *run_at(c, i);
			if (v)
				x->rpos[run_at(c, i + 1)->slot] = i + 1;
		}
	} else {
		for (uint32_t i = a; i < b; i++) {
			bool v = run_valid(c, i);

			*run_at(c, i - 1) = *run_at(c, i);
			if (v)
				x->rpos[run_at(c, i - 1)->slot] = i - 1;
		}
	}
}

/* Put e (not in the run) into class c's run at its (busy_until, id) place (I2, I5). */
static void
run_insert(struct nl_pick_idx *x, struct nl_pick_cls *c, struct nl_pick_ent e)
{
	uint32_t p;

	if (c->tail == c->run_cap)
		run_compact(x, c);
	p = c->tail;
	if (c->tail > c->head && before(&e, run_at(c, c->tail - 1))) {
		/* out of the class's order: binary search for the first entry after e */
		uint32_t lo = c->head, hi = c->tail - 1;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (before(&e, run_at(c, mid)))
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
			run_end(c, c->tail + 1);
		}
		*run_at(c, p) = e;
		x->rpos[e.slot] = p;
		c->n_run++;
		c->front_vt = run_at(c, c->head)->busy_until_vt; /* head is valid (I5) */
		c->front_id = run_at(c, c->head)->id;
		return;
	}
	*run_at(c, p) = e;
	x->rpos[e.slot] = p;
	run_end(c, p + 1);
	if (c->n_run++ == 0) { /* the run was empty: e is its front */
		c->head = p;
		c->front_vt = e.busy_until_vt;
		c->front_id = e.id;
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
	free(x->one_slot);
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
	x->one_slot = malloc((n_mach + 1) * sizeof(uint32_t));
	fill = calloc(n_mach + 1, sizeof(uint32_t));
	if (x->grp_off == NULL || x->grp_cand == NULL || x->grp_cls == NULL || x->cls == NULL ||
	    x->mem == NULL || x->load == NULL || x->slot_cls == NULL || x->rpos == NULL ||
	    x->idle == NULL || x->slot_off == NULL || x->slot == NULL || x->one_slot == NULL ||
	    fill == NULL) {
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
			c->mem_id = &x->mem[s];
			c->idle_w = &x->idle[n_word];
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
	for (uint32_t m = 0; m < n_mach; m++)
		x->one_slot[m] = x->slot_off[m + 1] == x->slot_off[m] + 1 ? x->slot[x->slot_off[m]] :
									   NO_POS;
	/* run storage: 4 n_mem + 4 entries per class, so compaction (O(n_mem)) comes at most
	 * once per 3 n_mem insertions */
	uint32_t n_run = 0;

	for (uint32_t c = 0; c < n_cls; c++) {
		x->cls[c].run_cap = 4 * x->cls[c].n_mem + 4;
		n_run += x->cls[c].run_cap + 1; /* + the sentinel */
	}
	x->run = malloc((n_run + 1) * sizeof(*x->run));
	if (x->run == NULL) {
		nl_pick_idx_free(x);
		return -ENOMEM;
	}
	n_run = 0;
	for (uint32_t c = 0; c < n_cls; c++) {
		x->cls[c].run_e = &x->run[n_run];
		n_run += x->cls[c].run_cap + 1;
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

		memset(k->idle_w, 0, ((k->n_mem + 63) / 64) * sizeof(uint64_t));
		k->n_idle = k->n_run = k->head = k->tail = 0;
		k->idle_lo = k->n_mem;
		k->idle_id = UINT32_MAX;
		k->now_vt = now_vt;
		for (uint32_t i = 0; i < k->n_mem; i++) {
			uint32_t slot = k->mem_off + i, id = x->mem[slot];
			double b = x->load[id].busy_until_vt;

			x->rpos[slot] = NO_POS;
			if (b < NL_MACH_GONE_VT && b > now_vt)
				*run_at(k, k->tail++) = (struct nl_pick_ent){ b, id, slot };
			else if (b < NL_MACH_GONE_VT)
				idle_put(k, i, true);
		}
		qsort(run_at(k, 0), k->tail, sizeof(struct nl_pick_ent), ent_cmp);
		run_end(k, k->tail);
		for (uint32_t i = 0; i < k->tail; i++)
			x->rpos[run_at(k, i)->slot] = i;
		k->n_run = k->tail;
		front_fix(k);
	}
}

/* Member slot (machine id, in class c) has a new busy_until b: out of where it was, into
 * where b says (I1, I2). */
static inline void
slot_set(struct nl_pick_idx *x, struct nl_pick_cls *c, uint32_t slot, uint32_t id, double b)
{
	uint32_t pos = x->rpos[slot];

	if (pos != NO_POS) {
		run_kill(x, c, pos);
		if (pos == c->head)
			front_fix(c);
	} else if (idle_test(c, slot - c->mem_off)) {
		idle_put(c, slot - c->mem_off, false);
	}
	if (b >= NL_MACH_GONE_VT)
		return;
	if (b <= c->now_vt)
		idle_put(c, slot - c->mem_off, true);
	else
		run_insert(x, c, (struct nl_pick_ent){ b, id, slot });
}

/* nl_pick_idx_set() on a machine of several slots, or off the steady state. */
static __attribute__((noinline)) void
set_slow(struct nl_pick_idx *x, uint32_t mach, double busy_until_vt)
{
	for (uint32_t j = x->slot_off[mach]; j < x->slot_off[mach + 1]; j++) {
		uint32_t slot = x->slot[j];

		slot_set(x, cls_of(x, slot), slot, mach, busy_until_vt);
	}
}

void
nl_pick_idx_set(struct nl_pick_idx *x, uint32_t mach, double b)
{
	uint32_t slot, pos, t;
	struct nl_pick_cls *c;
	const struct nl_pick_ent *last;

	if (mach >= x->n_mach)
		return;
	x->load[mach].busy_until_vt = b;
	slot = x->one_slot[mach];
	if (slot == NO_POS) /* in several groups, or in none */
		goto slow;
	c = cls_of(x, slot);
	pos = x->rpos[slot];
	t = c->tail;
	last = run_at(c, t - 1); /* read only when the run is not empty, so t >= 1 */
	if (pos == NO_POS) {
		/* An idle member booked (a pick took it first, idle ones before busy ones): off
		 * the idle set, appended to the run when its busy_until goes after the last. */
		uint32_t k = slot - c->mem_off;

		if (!idle_test(c, k) || !(b > c->now_vt) || !(b < NL_MACH_GONE_VT) ||
		    t == c->run_cap ||
		    (t > c->head && (b < last->busy_until_vt ||
				     (b == last->busy_until_vt && mach < last->id))))
			goto slow;
		idle_put(c, k, false);
		*run_at(c, t) = (struct nl_pick_ent){ b, mach, slot };
		x->rpos[slot] = t;
		run_end(c, t + 1);
		if (c->n_run++ == 0) { /* the run was empty (head = tail = 0, front_fix) */
			c->head = t;
			c->front_vt = b;
			c->front_id = mach;
		}
		return;
	}
	/* The steady state (see the header): the machine was its class's first busy entry and
	 * its new busy_until goes after the last one. Append it, make the old entry a
	 * tombstone, and move the head to the next valid entry (the new one at the latest). */
	if (pos != c->head || !(b > c->now_vt) || !(b < NL_MACH_GONE_VT) ||
	    t == c->run_cap || b < last->busy_until_vt ||
	    (b == last->busy_until_vt && mach < last->id))
		goto slow;
	run_at(c, pos)->slot = NO_POS;
	*run_at(c, t) = (struct nl_pick_ent){ b, mach, slot };
	x->rpos[slot] = t;
	run_end(c, t + 1);
	while (!run_valid(c, ++pos))
		;
	c->head = pos;
	c->front_vt = run_at(c, pos)->busy_until_vt;
	c->front_id = run_at(c, pos)->id;
	return;
slow:
	set_slow(x, mach, b);
}

/* Move the members of class k whose busy_until passed by now_vt from the front of its run to
 * its idle set (I2). */
static __attribute__((noinline)) void
cls_settle(struct nl_pick_idx *x, struct nl_pick_cls *k, double now_vt)
{
	k->now_vt = now_vt;
	while (k->front_vt <= now_vt) {
		uint32_t slot = run_at(k, k->head)->slot;

		run_kill(x, k, k->head);
		idle_put(k, slot - k->mem_off, true);
		front_fix(k);
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

/* A key's bits: non-negative doubles and +inf order as their bit patterns do, so (key, id)
 * compares as two integers, without a branch. */
static inline uint64_t
key_bits(double k)
{
	uint64_t u;

	memcpy(&u, &k, sizeof(u));
	return u;
}

/*
 * One step of the merge's arg-min: (key, id) replaces (*best, *bid) and c replaces *b when
 * (key, id) is first. Which class wins is data the branch predictor cannot learn, so on
 * x86-64 this is a 96-bit compare (cmp on the ids, sbb on the keys) and conditional moves;
 * elsewhere the same with masks.
 */
static inline void
min_step(uint64_t key, uint32_t id, uint32_t c, uint64_t *best, uint32_t *bid, uint32_t *b)
{
#if defined(__x86_64__) && defined(__GNUC__)
	uint64_t t;

	__asm__("cmpl %[bid], %[id]\n\t"
		"movq %[key], %[t]\n\t"
		"sbbq %[best], %[t]\n\t"
		"cmovbq %[key], %[best]\n\t"
		"cmovbl %[id], %[bid]\n\t"
		"cmovbl %[c], %[b]"
		: [best] "+r"(*best), [bid] "+r"(*bid), [b] "+r"(*b), [t] "=&r"(t)
		: [key] "r"(key), [id] "r"(id), [c] "r"(c)
		: "cc");
#else
	uint64_t lt = -(uint64_t)((key < *best) | ((key == *best) & (id < *bid)));

	*best = (key & lt) | (*best & ~lt);
	*bid = (uint32_t)((id & lt) | (*bid & ~lt));
	*b = (uint32_t)((c & lt) | (*b & ~lt));
#endif
}

/*
 * Class k's first entry at its cursors (run storage index r, idle member index i) for a
 * sub-task of service time s at now_vt: the idle one (key s) or the run's (key
 * busy_until - now + s; the sentinel's +inf when the run is done), first by (key, id).
 * @return its key bits; *id its machine id, *from_run whether it is the run's.
 */
static inline uint64_t
head_at(const struct nl_pick_cls *k, double s, double now_vt, uint32_t r, uint32_t i,
	uint32_t *id, bool *from_run)
{
	const struct nl_pick_ent *e = run_at(k, r);
	uint64_t rk = key_bits((e->busy_until_vt - now_vt) + s), ik = key_bits(INFINITY);
	uint32_t iid = UINT32_MAX;

	if (i < k->n_mem) {
		ik = key_bits(s);
		iid = k->mem_id[i];
	}
	*from_run = (rk < ik) | ((rk == ik) & (e->id < iid));
	*id = *from_run ? e->id : iid;
	return *from_run ? rk : ik;
}

int
nl_pick_idx_pick(struct nl_pick_idx *x, uint32_t grp, double now_vt, double sub_instr,
		 double sub_bits, unsigned int n_split, uint32_t *out)
{
	uint32_t c0 = x->grp_cls[grp], n_c = x->grp_cls[grp + 1] - c0;
	struct nl_pick_cls *k0 = &x->cls[c0];
	/* per class: its head (key bits, id, from the run or not), the service time of this
	 * sub-task shape there, and its cursors (run storage index, idle member index) */
	uint64_t hk[FAST_CLS];
	uint32_t hid[FAST_CLS], ri[FAST_CLS], ii[FAST_CLS];
	double sv[FAST_CLS];
	bool hrun[FAST_CLS];

	if (n_split == 0 || n_split > NL_TASK_MAX_SPLIT)
		return -EINVAL;
	if (n_c > FAST_CLS)
		goto scan;
	for (uint32_t c = 0; c < n_c; c++) {
		struct nl_pick_cls *k = k0 + c;

		if (now_vt < k->now_vt) /* time went back for this class (I4) */
			goto scan;
		if (k->front_vt <= now_vt)
			cls_settle(x, k, now_vt);
		k->now_vt = now_vt;
		sv[c] = nl_mach_rate_service_vt(&k->rate, sub_instr, sub_bits);
		ri[c] = k->head;
		ii[c] = k->idle_lo;
		hk[c] = head_at(k, sv[c], now_vt, ri[c], ii[c], &hid[c], &hrun[c]);
	}
	/* Merge the classes' heads by (key, id); the index is read, not changed. */
	for (unsigned int o = 0;;) {
		uint64_t best = hk[0];
		uint32_t b = 0, bid = hid[0];

		for (uint32_t c = 1; c < n_c; c++)
			min_step(hk[c], hid[c], c, &best, &bid, &b);
		if (best == key_bits(INFINITY)) /* fewer live candidates than L (I4) */
			goto scan;
		out[o] = bid;
		if (++o == n_split)
			break;
		const struct nl_pick_cls *k = k0 + b;

		if (hrun[b]) {
			uint32_t r = ri[b];

			while (!run_valid(k, ++r)) /* the sentinel stops it */
				;
			ri[b] = r;
		} else {
			ii[b] = idle_next(k, ii[b] + 1);
		}
		hk[b] = head_at(k, sv[b], now_vt, ri[b], ii[b], &hid[b], &hrun[b]);
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
	if (pm->has_cnt)
		nl_busy_cnt_reset(&pm->cnt, load, now_vt);
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
		if (load[mach[j]].busy_until_vt != pm->idx.load[mach[j]].busy_until_vt) {
			nl_pick_idx_set(&pm->idx, mach[j], load[mach[j]].busy_until_vt);
			if (pm->has_cnt)
				nl_busy_cnt_set(&pm->cnt, mach[j], load[mach[j]].busy_until_vt);
		}
	pm->gen = gen_after;
}
