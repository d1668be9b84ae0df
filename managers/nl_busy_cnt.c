/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "nl_busy_cnt.h"

/* Heap entry i holds e: store it and its position. */
static inline void
put(struct nl_busy_cnt *bc, uint32_t i, struct nl_busy_ent e)
{
	bc->heap[i] = e;
	bc->hpos[e.id] = i;
}

/* Move e, meant for index i, up to its place. */
static void
sift_up(struct nl_busy_cnt *bc, uint32_t i, struct nl_busy_ent e)
{
	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (!(e.busy_until_vt < bc->heap[p].busy_until_vt))
			break;
		put(bc, i, bc->heap[p]);
		i = p;
	}
	put(bc, i, e);
}

/* Move e, meant for index i, down to its place. */
static void
sift_down(struct nl_busy_cnt *bc, uint32_t i, struct nl_busy_ent e)
{
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= bc->n_heap)
			break;
		if (c + 1 < bc->n_heap && bc->heap[c + 1].busy_until_vt < bc->heap[c].busy_until_vt)
			c++;
		if (!(bc->heap[c].busy_until_vt < e.busy_until_vt))
			break;
		put(bc, i, bc->heap[c]);
		i = c;
	}
	put(bc, i, e);
}

/* Take heap entry i out (its member's hpos is the caller's to set). */
static void
heap_del(struct nl_busy_cnt *bc, uint32_t i)
{
	struct nl_busy_ent last = bc->heap[--bc->n_heap];

	if (i == bc->n_heap)
		return;
	if (i > 0 && last.busy_until_vt < bc->heap[(i - 1) / 2].busy_until_vt)
		sift_up(bc, i, last);
	else
		sift_down(bc, i, last);
}

void
nl_busy_cnt_free(struct nl_busy_cnt *bc)
{
	free(bc->mem);
	free(bc->hpos);
	free(bc->bu);
	free(bc->heap);
	memset(bc, 0, sizeof(*bc));
}

int
nl_busy_cnt_build(struct nl_busy_cnt *bc, const uint32_t *mem, unsigned int n_mem,
		  unsigned int n_mach)
{
	memset(bc, 0, sizeof(*bc));
	bc->n_mach = n_mach;
	bc->n_mem = n_mem;
	bc->mem = malloc((n_mem + 1) * sizeof(uint32_t));
	bc->hpos = malloc((n_mach + 1) * sizeof(uint32_t));
	bc->bu = calloc(n_mach + 1, sizeof(double));
	bc->heap = malloc((n_mem + 1) * sizeof(*bc->heap));
	if (bc->mem == NULL || bc->hpos == NULL || bc->bu == NULL || bc->heap == NULL) {
		nl_busy_cnt_free(bc);
		return -ENOMEM;
	}
	for (uint32_t m = 0; m < n_mach; m++)
		bc->hpos[m] = NL_BUSY_OUT;
	for (uint32_t i = 0; i < n_mem; i++) {
		if (mem[i] >= n_mach || bc->hpos[mem[i]] != NL_BUSY_OUT) {
			nl_busy_cnt_free(bc);
			return -EINVAL;
		}
		bc->mem[i] = mem[i];
		bc->hpos[mem[i]] = NL_BUSY_IDLE;
	}
	return 0;
}

void
nl_busy_cnt_reset(struct nl_busy_cnt *bc, const struct nl_mach_load *load, double now_vt)
{
	bc->n_heap = bc->n_gone = 0;
	bc->now_vt = now_vt;
	for (uint32_t i = 0; i < bc->n_mem; i++) {
		uint32_t id = bc->mem[i];
		double b = load[id].busy_until_vt;

		bc->bu[id] = b;
		if (b >= NL_MACH_GONE_VT) {
			bc->hpos[id] = NL_BUSY_GONE;
			bc->n_gone++;
		} else if (b > now_vt) {
			put(bc, bc->n_heap++, (struct nl_busy_ent){ b, id });
		} else {
			bc->hpos[id] = NL_BUSY_IDLE;
		}
	}
	for (uint32_t i = bc->n_heap / 2; i-- > 0;) /* heapify */
		sift_down(bc, i, bc->heap[i]);
}

void
nl_busy_cnt_set(struct nl_busy_cnt *bc, uint32_t mach, double b)
{
	uint32_t p;
	bool busy = b < NL_MACH_GONE_VT && b > bc->now_vt;

	if (mach >= bc->n_mach || (p = bc->hpos[mach]) == NL_BUSY_OUT)
		return;
	bc->bu[mach] = b;
	bc->n_gone += (b >= NL_MACH_GONE_VT) - (p == NL_BUSY_GONE);
	if (p < NL_BUSY_IDLE) { /* in the heap */
		if (busy) {
			struct nl_busy_ent e = { b, mach };

			if (p > 0 && b < bc->heap[(p - 1) / 2].busy_until_vt)
				sift_up(bc, p, e);
			else
				sift_down(bc, p, e);
			return;
		}
		heap_del(bc, p);
	} else if (busy) {
		sift_up(bc, bc->n_heap++, (struct nl_busy_ent){ b, mach });
		return;
	}
	bc->hpos[mach] = b >= NL_MACH_GONE_VT ? NL_BUSY_GONE : NL_BUSY_IDLE;
}

void
nl_busy_cnt_count(struct nl_busy_cnt *bc, double now_vt, unsigned int *busy, unsigned int *live)
{
	*live = bc->n_mem - bc->n_gone;
	if (now_vt < bc->now_vt) { /* time went back (C3) */
		*busy = 0;
		for (uint32_t i = 0; i < bc->n_mem; i++) {
			double b = bc->bu[bc->mem[i]];

			*busy += b < NL_MACH_GONE_VT && b > now_vt;
		}
		return;
	}
	bc->now_vt = now_vt;
	while (bc->n_heap > 0 && bc->heap[0].busy_until_vt <= now_vt) {
		bc->hpos[bc->heap[0].id] = NL_BUSY_IDLE;
		heap_del(bc, 0);
	}
	*busy = bc->n_heap;
}
