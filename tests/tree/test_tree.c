/* SPDX-License-Identifier: BSD-3-Clause */
/* Resource tree and routing step (seed 002 §3.2-3.3). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "nl_tap.h"
#include "nl_tree.h"

/* Follow the routing from node `at` until ASSIGN or a dead end; count hops. */
static uint32_t
route(const struct nl_tree *t, uint32_t at, uint64_t need, unsigned int *hops)
{
	enum nl_route_act act;

	*hops = 0;
	for (unsigned int guard = 0; guard < 4 * 65; guard++) {
		uint32_t nx = nl_tree_next(t, at, need, &act);

		if (act == NL_ROUTE_ASSIGN || nx == NL_NODE_NONE)
			return act == NL_ROUTE_ASSIGN ? at : NL_NODE_NONE;
		at = nx;
		(*hops)++;
	}
	return NL_NODE_NONE;
}

static void
test_route_reaches_matching_leaf_in_2_times_mismatch_hops(void)
{
	for (unsigned int N = 1; N <= 8; N++) {
		unsigned int M = 1u << N;
		struct nl_resvec *v = calloc(M, sizeof(*v));
		struct nl_tree *t = NULL;
		bool ok_leaf = true, ok_hops = true, ok_any = true, ok_shape;

		for (unsigned int i = 0; i < M; i++)
			v[i].set = i; /* one machine per vector: full tree */
		if (nl_tree_build(&t, N, v, M, 0) != 0) {
			nl_tap_ok(0, "N=%u: tree builds", N);
			free(v);
			continue;
		}
		ok_shape = t->n_node == (2u << N) - 1 && t->n_leaf == M && t->node[0].level == 0 &&
			   t->node[0].n_mach == M;
		for (uint32_t at = 0; at < t->n_node; at++) {
			for (uint64_t need = 0; need < M; need++) {
				unsigned int hops;
				uint32_t leaf = route(t, at, need, &hops);
				const struct nl_tree_node *a = &t->node[at];

				if (leaf == NL_NODE_NONE || t->node[leaf].prefix != need ||
				    t->node[leaf].level != N) {
					ok_any = false;
					continue;
				}
				if (t->leaf_mach[t->leaf_off[t->node[leaf].leaf]] != need)
					ok_leaf = false;
				if (a->level == N) {
					unsigned int cpl = nl_res_common_prefix(a->prefix, need, N);

					if (hops != 2 * (N - cpl))
						ok_hops = false;
				}
			}
		}
		nl_tap_ok(ok_shape, "N=%u: full tree has 2^(N+1)-1 managers and 2^N leaves", N);
		nl_tap_ok(ok_any, "N=%u: from every manager, every Delta reaches the leaf of Delta", N);
		nl_tap_ok(ok_leaf, "N=%u: the reached leaf holds the machine of that vector", N);
		nl_tap_ok(ok_hops, "N=%u: from a leaf, hops = 2 (N - common prefix length)", N);
		nl_tree_free(t);
		free(v);
	}
}

static void
test_star_machine_reachable_from_both_sides(void)
{
	/* N=3: machine 0 "1*0", machine 1 "000", machine 2 "***". */
	struct nl_resvec v[3];
	unsigned int n;
	struct nl_tree *t = NULL;
	bool ok = true;

	nl_res_parse("1*0", &v[0], &n);
	nl_res_parse("000", &v[1], &n);
	nl_res_parse("***", &v[2], &n);
	nl_tap_ok(nl_tree_build(&t, 3, v, 3, 0) == 0, "a tree with '*' machines builds");
	nl_tap_ok(t->n_leaf == 8, "'***' makes all 8 leaves exist");
	for (uint64_t need = 0; need < 8; need++) {
		uint32_t l = nl_tree_leaf_of(t, need);
		bool has0 = false, has2 = false;

		for (uint32_t j = t->leaf_off[l]; j < t->leaf_off[l + 1]; j++) {
			has0 |= t->leaf_mach[j] == 0;
			has2 |= t->leaf_mach[j] == 2;
		}
		/* "1*0": resource 1 set, 2 any, 3 unset -> needs 100 (bit0) and 110 (bits 0,1). */
		if (has0 != (need == 1 || need == 3) || !has2)
			ok = false;
	}
	nl_tap_ok(ok, "a '*' machine is in the leaves of both sides of its '*' split, and only those");
	nl_tap_ok(t->node[0].n_mach == 3, "root m_k counts a '*' machine once (m=3)");
	uint32_t l1 = nl_tree_find(t, 1, 1);

	nl_tap_ok(l1 != NL_NODE_NONE && t->node[l1].n_mach == 2,
		  "M(1,1) has m_k = 2 (machine 0 in two leaves counted once, plus '***')");
	nl_tree_free(t);
}

static void
test_subset_mode_never_lacks_a_required_resource(void)
{
	struct nl_resvec v[16];
	struct nl_tree *t = NULL;
	bool ok = true, richer = false;

	for (unsigned int i = 0; i < 16; i++) {
		v[i].set = i;
		v[i].any = 0;
	}
	nl_tap_ok(nl_tree_build(&t, 4, v, 16, NL_TREE_SUBSET) == 0, "subset-mode tree builds");
	for (uint64_t need = 0; need < 16; need++) {
		uint32_t l = nl_tree_leaf_of(t, need);

		for (uint32_t j = t->leaf_off[l]; j < t->leaf_off[l + 1]; j++) {
			uint64_t has = v[t->leaf_mach[j]].set;

			if ((has & need) != need)
				ok = false;
			if (has != need)
				richer = true;
			if (!nl_res_match(&v[t->leaf_mach[j]], need, 4, true))
				ok = false;
		}
		if (t->leaf_off[l + 1] - t->leaf_off[l] != (1u << (4 - __builtin_popcountll(need))))
			ok = false;
	}
	nl_tap_ok(ok, "subset mode: every machine of Delta's leaf holds every needed resource, and all such machines are there");
	nl_tap_ok(richer, "subset mode: machines with extra resources do serve");
	nl_tree_free(t);
	nl_tap_ok(!nl_res_match(&v[3], 1, 4, false), "exact mode: a machine with an extra resource does not match");
}

static void
test_missing_child_is_a_dead_end(void)
{
	struct nl_resvec v[2] = { { .set = 0 }, { .set = 1 } }; /* N=2: "00" and "10" */
	struct nl_tree *t = NULL;
	unsigned int hops;

	nl_tree_build(&t, 2, v, 2, 0);
	nl_tap_ok(t->n_node == 5 && nl_tree_find(t, 2, 2) == NL_NODE_NONE,
		  "sparse tree: only non-empty subtrees exist (root, M(1,0), M(1,1), leaves 00 and 10)");
	nl_tap_ok(route(t, t->leaf_node[0], 2 /* "01" */, &hops) == NL_NODE_NONE,
		  "a Delta no machine has ends at a missing child (reject), not in a loop");
	nl_tree_free(t);
}

static void
test_parse_and_errors(void)
{
	struct nl_resvec v;
	unsigned int n;
	char buf[80], big[70];
	struct nl_tree *t = NULL;

	nl_tap_ok(nl_res_parse("10*1", &v, &n) == 0 && n == 4 && v.set == 0x9 && v.any == 0x4,
		  "parse '10*1': resource 1 first");
	nl_tap_ok(strcmp(nl_res_format(&v, 4, buf, sizeof(buf)), "10*1") == 0, "format round-trips");
	nl_tap_ok(nl_res_parse("10x", &v, &n) == -EINVAL, "a bad character is -EINVAL");
	memset(big, '1', 65);
	big[65] = 0;
	nl_tap_ok(nl_res_parse(big, &v, &n) == -E2BIG, "65 resources is -E2BIG");
	big[64] = 0;
	nl_tap_ok(nl_res_parse(big, &v, &n) == 0 && n == 64 && v.set == ~0ull, "64 resources parse");
	v.any = ~0ull;
	v.set = 0;
	nl_tap_ok(nl_tree_build(&t, 64, &v, 1, 0) == -E2BIG,
		  "a machine with 64 '*' is refused (-E2BIG), not expanded");
	v.any = 0;
	v.set = 0x8000000000000001ull;
	nl_tap_ok(nl_tree_build(&t, 64, &v, 1, 0) == 0 && t->n_node == 65 &&
		  route(t, t->leaf_node[0], v.set, &n) == t->leaf_node[0],
		  "N = 64: sparse tree of one path, routing works");
	nl_tree_free(t);
	nl_tap_ok(nl_route_step(2, 0x1, 4, 0x3) == NL_ROUTE_UP, "step: mismatch on resource 2 goes up");
	nl_tap_ok(nl_route_step(2, 0x1, 4, 0x5) == NL_ROUTE_DOWN1, "step: match, resource 3 set goes down to child 1");
	nl_tap_ok(nl_route_step(4, 0x5, 4, 0x5) == NL_ROUTE_ASSIGN, "step: a matching leaf assigns");
}

static uint64_t
mix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* nl_tree_find() (a branch-free binary search) against a linear search, on sparse trees
 * (random machine vectors, so many (level, prefix) pairs have no node), hits and misses. */
static void
test_find_equals_linear_search(void)
{
	unsigned int n_bad = 0, n_q = 0, n_hit = 0;
	uint64_t x = 0x7472656566696e64ULL;

	for (unsigned int N = 1; N <= 7; N++) {
		for (unsigned int rep = 0; rep < 20; rep++) {
			unsigned int M = 1 + (unsigned int)(mix(&x) % (2u << N));
			struct nl_resvec *v = calloc(M, sizeof(*v));
			struct nl_tree *t = NULL;

			for (unsigned int i = 0; i < M; i++)
				v[i].set = mix(&x) & ((1u << N) - 1);
			if (nl_tree_build(&t, N, v, M, 0) != 0) {
				free(v);
				n_bad++;
				continue;
			}
			for (unsigned int lv = 0; lv <= N + 1; lv++) {
				for (uint64_t p = 0; p < (2u << N); p++) {
					uint32_t want = NL_NODE_NONE;

					for (uint32_t i = 0; i < t->n_node && lv <= N; i++)
						if (t->node[i].level == lv &&
						    t->node[i].prefix == (p & nl_res_mask(lv)))
							want = i;
					n_q++;
					n_hit += want != NL_NODE_NONE;
					n_bad += nl_tree_find(t, lv, p) != want;
				}
			}
			nl_tree_free(t);
			free(v);
		}
	}
	nl_tap_ok(n_bad == 0 && n_hit > 0 && n_hit < n_q,
		  "find: %u lookups (%u hits) on sparse trees N = 1..7 equal a linear search (%u differ)",
		  n_q, n_hit, n_bad);
}

int
main(void)
{
	test_find_equals_linear_search();
	test_route_reaches_matching_leaf_in_2_times_mismatch_hops();
	test_star_machine_reachable_from_both_sides();
	test_subset_mode_never_lacks_a_required_resource();
	test_missing_child_is_a_dead_end();
	test_parse_and_errors();
	return nl_tap_done();
}
