/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Building the sparse binary resource tree (seed 002 §3.2).
 *
 * Worked example, N = 2, machines 0:"10", 1:"1*", 2:"00":
 *   machine 1 expands to leaves "10" and "11" (I3); leaves (resource 1 first) are
 *   00 -> {2}, 10 -> {0, 1}, 11 -> {1}. Level-1 nodes: "0" (m=1), "1" (m=2: machine 1 counts
 *   once); root m = 3. Routing a task "11" that appears at leaf "00": up, up, down 1, down 1.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nl_tree.h"

int
nl_res_parse(const char *s, struct nl_resvec *out, unsigned int *n_res)
{
	unsigned int n = 0;

	out->set = 0;
	out->any = 0;
	for (; s[n] != '\0'; n++) {
		if (n >= NL_RES_MAX)
			return -E2BIG;
		switch (s[n]) {
		case '1':
			out->set |= UINT64_C(1) << n;
			break;
		case '0':
			break;
		case '*':
			out->any |= UINT64_C(1) << n;
			break;
		default:
			return -EINVAL;
		}
	}
	if (n == 0)
		return -EINVAL;
	*n_res = n;
	return 0;
}

char *
nl_res_format(const struct nl_resvec *v, unsigned int n_res, char *buf, unsigned int len)
{
	if (len < n_res + 1)
		return NULL;
	for (unsigned int k = 0; k < n_res; k++) {
		if ((v->any >> k) & 1)
			buf[k] = '*';
		else
			buf[k] = ((v->set >> k) & 1) ? '1' : '0';
	}
	buf[n_res] = '\0';
	return buf;
}

unsigned int
nl_res_common_prefix(uint64_t a, uint64_t b, unsigned int n_res)
{
	uint64_t diff = (a ^ b) & nl_res_mask(n_res);

	return diff == 0 ? n_res : (unsigned int)__builtin_ctzll(diff);
}

struct pair {
	uint64_t key; /* leaf vector, or node prefix */
	uint32_t mach;
	uint32_t level;
};

static int
pair_cmp(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;

	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->mach != b->mach)
		return a->mach < b->mach ? -1 : 1;
	return 0;
}

uint32_t
nl_tree_find(const struct nl_tree *t, unsigned int level, uint64_t prefix)
{
	const struct nl_tree_node *nd = t->node;
	uint32_t n = t->n_node, b = 0, lo;

	if (level > t->n_res || n == 0)
		return NL_NODE_NONE;
	prefix &= nl_res_mask(level);
	/* Lower bound of (level, prefix) in the (level, prefix) order (I1), with arithmetic
	 * instead of branches on the comparisons: a task's vector is data the predictor cannot
	 * learn, and the loop's trip count depends on the tree only. */
	while (n > 1) {
		uint32_t h = n / 2;
		uint32_t lt = (nd[b + h].level < level) |
			      ((nd[b + h].level == level) & (nd[b + h].prefix < prefix));

		b += h & (0u - lt);
		n -= h;
	}
	lo = b + ((nd[b].level < level) | ((nd[b].level == level) & (nd[b].prefix < prefix)));
	if (lo < t->n_node && t->node[lo].level == level && t->node[lo].prefix == prefix)
		return lo;
	return NL_NODE_NONE;
}

uint32_t
nl_tree_leaf_of(const struct nl_tree *t, uint64_t need)
{
	uint32_t id = nl_tree_find(t, t->n_res, need);

	return id == NL_NODE_NONE ? NL_NODE_NONE : t->node[id].leaf;
}

void
nl_tree_free(struct nl_tree *t)
{
	if (t == NULL)
		return;
	free(t->node);
	free(t->leaf_node);
	free(t->leaf_off);
	free(t->leaf_mach);
	free(t);
}

/* Count (leaf, machine) pairs a machine expands to; 0 on overflow of the cap. */
static uint64_t
free_bits_of(const struct nl_resvec *m, unsigned int n_res, unsigned int flags)
{
	uint64_t mask = nl_res_mask(n_res);
	uint64_t fb = m->any & mask;

	if (flags & NL_TREE_SUBSET)
		fb |= m->set & mask; /* may also serve tasks that do not need it */
	return fb;
}

int
nl_tree_build(struct nl_tree **out, unsigned int n_res, const struct nl_resvec *mach,
	      unsigned int n_mach, unsigned int flags)
{
	struct nl_tree *t = NULL;
	struct pair *lp = NULL, *np = NULL;
	uint64_t n_pair = 0;
	size_t n_np = 0;
	int rc = -ENOMEM;

	if (out == NULL || mach == NULL || n_mach == 0 || n_res == 0 || n_res > NL_RES_MAX ||
	    (flags & ~NL_TREE_SUBSET) != 0)
		return -EINVAL;
	for (unsigned int i = 0; i < n_mach; i++) {
		unsigned int k = (unsigned int)__builtin_popcountll(free_bits_of(&mach[i], n_res, flags));

		if (k >= 23)
			return -E2BIG;
		n_pair += UINT64_C(1) << k;
		if (n_pair > NL_TREE_MAX_LEAF_ENTRIES)
			return -E2BIG;
	}
	t = calloc(1, sizeof(*t));
	lp = malloc(n_pair * sizeof(*lp));
	if (t == NULL || lp == NULL)
		goto fail;
	t->n_res = n_res;
	t->n_mach = n_mach;
	t->subset = (flags & NL_TREE_SUBSET) != 0;

	/* 1. (leaf vector, machine) pairs: enumerate the subsets of the free bits (I3). */
	size_t p = 0;
	for (unsigned int i = 0; i < n_mach; i++) {
		uint64_t fb = free_bits_of(&mach[i], n_res, flags);
		uint64_t fixed = mach[i].set & nl_res_mask(n_res) & ~fb;
		uint64_t sub = 0;

		do {
			lp[p].key = fixed | sub;
			lp[p].mach = i;
			lp[p].level = n_res;
			p++;
			sub = (sub - fb) & fb; /* next subset of fb */
		} while (sub != 0);
	}
	qsort(lp, p, sizeof(*lp), pair_cmp);

	/* 2. Leaves and their machine lists (CSR). */
	unsigned int n_leaf = 0;
	for (size_t j = 0; j < p; j++)
		if (j == 0 || lp[j].key != lp[j - 1].key)
			n_leaf++;
	t->leaf_off = malloc((n_leaf + 1) * sizeof(uint32_t));
	t->leaf_mach = malloc(p * sizeof(uint32_t));
	t->leaf_node = malloc(n_leaf * sizeof(uint32_t));
	/* 3. Node keys: (level, prefix) of every leaf's ancestors, with one entry per machine,
	 *    so that m_k counts each machine once per node. */
	np = malloc(p * (n_res + 1) * sizeof(*np));
	if (t->leaf_off == NULL || t->leaf_mach == NULL || t->leaf_node == NULL || np == NULL)
		goto fail;
	n_leaf = 0;
	for (size_t j = 0; j < p; j++) {
		if (j == 0 || lp[j].key != lp[j - 1].key)
			t->leaf_off[n_leaf++] = (uint32_t)j;
		t->leaf_mach[j] = lp[j].mach;
		for (unsigned int lv = 0; lv <= n_res; lv++) {
			np[n_np].key = lp[j].key & nl_res_mask(lv);
			np[n_np].mach = lp[j].mach;
			np[n_np].level = lv;
			n_np++;
		}
	}
	t->leaf_off[n_leaf] = (uint32_t)p;
	t->n_leaf = n_leaf;
	qsort(np, n_np, sizeof(*np), pair_cmp);

	unsigned int n_node = 0;
	for (size_t j = 0; j < n_np; j++)
		if (j == 0 || np[j].level != np[j - 1].level || np[j].key != np[j - 1].key)
			n_node++;
	t->node = calloc(n_node, sizeof(*t->node));
	if (t->node == NULL)
		goto fail;
	n_node = 0;
	for (size_t j = 0; j < n_np; j++) {
		bool new_node = j == 0 || np[j].level != np[j - 1].level || np[j].key != np[j - 1].key;

		if (new_node) {
			struct nl_tree_node *n = &t->node[n_node++];

			n->prefix = np[j].key;
			n->mask = nl_res_mask(np[j].level);
			n->level = (uint8_t)np[j].level;
			n->n_mach = 1;
			n->leaf = NL_NODE_NONE;
		} else if (np[j].mach != np[j - 1].mach) {
			t->node[n_node - 1].n_mach++;
		}
	}
	t->n_node = n_node;

	/* 4. Links (I1, I2). */
	for (unsigned int i = 0; i < n_node; i++) {
		struct nl_tree_node *n = &t->node[i];

		n->parent = n->level == 0 ? NL_NODE_NONE :
					    nl_tree_find(t, n->level - 1u, n->prefix);
		if (n->level < n_res) {
			n->child[0] = nl_tree_find(t, n->level + 1u, n->prefix);
			n->child[1] = nl_tree_find(t, n->level + 1u,
						   n->prefix | (UINT64_C(1) << n->level));
		} else {
			n->child[0] = n->child[1] = NL_NODE_NONE;
		}
	}
	for (unsigned int l = 0; l < n_leaf; l++) {
		uint32_t id = nl_tree_find(t, n_res, lp[t->leaf_off[l]].key);

		t->leaf_node[l] = id;
		t->node[id].leaf = l;
	}
	free(lp);
	free(np);
	*out = t;
	return 0;
fail:
	free(lp);
	free(np);
	nl_tree_free(t);
	return rc;
}
