/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The binary resource tree and the NLSC routing step (seed 002 §3.2-3.3).
 *
 * Theory of operation. With N resources the tree has N+1 levels; the node at level K holds a
 * prefix Gamma_k of K bits (resources 1..K) and splits its machines on resource K+1 into two
 * children. The 2^N leaves are the groups of machines with identical vectors. One manager
 * M(K,i) sits on every node: it knows its prefix, m_k (machines in its subtree), its parent
 * and its two children (seed 002 eq. (7)).
 *
 * The tree is stored sparsely: only nodes whose subtree holds at least one machine exist, so
 * N up to 64 works as long as the machines' '*' entries do not expand to too many leaves.
 * A missing child means "no machine can serve that side": routing there is a reject.
 *
 * Invariants:
 *  I1  node 0 is the root (level 0); nodes are ordered by (level, prefix); a node's
 *      parent has a smaller id.
 *  I2  every existing node has n_mach >= 1 and its parent exists (except the root).
 *  I3  a '*' machine (or, in subset mode, a machine holding an unneeded resource) is listed
 *      in every leaf it matches, so it is reachable from both sides of a split.
 *  I4  the tree is immutable after nl_tree_build(); readers need no synchronisation. The live
 *      engine replaces a whole tree under RCU.
 */
#ifndef NL_TREE_H
#define NL_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_resvec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NL_NODE_NONE UINT32_MAX      /**< no such node / manager */
#define NL_TREE_MAX_LEAF_ENTRIES (1u << 22) /**< cap on (leaf, machine) pairs built */

/** Build flags. */
#define NL_TREE_SUBSET 0x1u /**< subset mode: a machine holding extra resources may serve */

/** What a manager does with a task (seed 002 §3.3 steps 3-5). */
enum nl_route_act {
	NL_ROUTE_DOWN0 = 0, /**< step 4: to the child without resource K+1 */
	NL_ROUTE_DOWN1 = 1, /**< step 4: to the child with resource K+1 */
	NL_ROUTE_UP = 2,    /**< step 3: prefix mismatch, to the parent */
	NL_ROUTE_ASSIGN = 3, /**< step 5: leaf whose vector matches, assign to machines */
};

/** One node of the tree = one manager M(level, prefix). */
struct nl_tree_node {
	uint64_t prefix;   /**< Gamma_k: bits 0..level-1 = resources 1..level */
	uint64_t mask;     /**< nl_res_mask(level), kept so routing needs no branch */
	union {
		struct {
			uint32_t child[2]; /**< ac1_k, ac2_k: child without / with resource level+1 */
			uint32_t parent;   /**< ap_k, NL_NODE_NONE at the root */
		};
		uint32_t link[3]; /**< indexed by enum nl_route_act: child0, child1, parent */
	};
	uint32_t n_mach;   /**< m_k: machines in the subtree (a '*' machine counts once) */
	uint32_t leaf;     /**< leaf index (0..n_leaf-1) when level == N, else NL_NODE_NONE */
	uint8_t level;     /**< K, 0 (root) .. N (leaf) */
};

/** The resource tree. Immutable once built (I4). */
struct nl_tree {
	unsigned int n_res;  /**< N */
	unsigned int n_node; /**< existing nodes (managers) */
	unsigned int n_leaf; /**< existing leaves (non-empty machine groups) */
	unsigned int n_mach; /**< machines given to nl_tree_build() */
	bool subset;         /**< built in subset mode */
	struct nl_tree_node *node; /**< [n_node], ordered by (level, prefix) (I1) */
	uint32_t *leaf_node; /**< [n_leaf] leaf index -> node id, ordered by prefix */
	uint32_t *leaf_off;  /**< [n_leaf + 1] CSR offsets into leaf_mach */
	uint32_t *leaf_mach; /**< machine ids of each leaf group, ascending */
};

/**
 * The routing decision of a manager for one task (seed 002 §3.3 step 2).
 *
 * @param level   K of the manager, 0..n_res.
 * @param prefix  Its prefix Gamma_k (bits 0..K-1).
 * @param n_res   N, 1..64.
 * @param need    Task vector Delta.
 * @return NL_ROUTE_UP when the prefix differs from Delta on resources 1..K; NL_ROUTE_ASSIGN
 *         when it matches and K = N; else NL_ROUTE_DOWN0/1 by resource K+1 of Delta.
 * @par Context  Pure, O(1), no memory access beyond the arguments.
 * @par Source   seed 002 §3.3 steps 2-4.
 */
static inline enum nl_route_act
nl_route_step(unsigned int level, uint64_t prefix, unsigned int n_res, uint64_t need)
{
	if (((prefix ^ need) & nl_res_mask(level)) != 0)
		return NL_ROUTE_UP;
	if (level >= n_res)
		return NL_ROUTE_ASSIGN;
	return (enum nl_route_act)((need >> level) & 1);
}

/**
 * Next manager of a task at node `at`: the routing step applied to the tree.
 *
 * @param t     Tree.
 * @param at    Current node id (< t->n_node).
 * @param need  Task vector Delta.
 * @param act   Output: the action taken.
 * @return The node to forward to (parent or child); `at` itself for NL_ROUTE_ASSIGN;
 *         NL_NODE_NONE when the chosen child does not exist (no machine matches Delta).
 * @par Context  Pure read of an immutable tree; any thread. O(1).
 * @par Source   seed 002 §3.3 steps 2-4.
 */
static inline uint32_t
nl_tree_next(const struct nl_tree *t, uint32_t at, uint64_t need, enum nl_route_act *act)
{
	const struct nl_tree_node *n = &t->node[at];
	/* Same decision as nl_route_step(). Written with conditional expressions, which GCC
	 * compiles to jumps here; jumps let the CPU run ahead along the predicted path, which
	 * measured faster than conditional moves or masks (those put the whole decision on
	 * the load chain from one manager to the next: docs/benchmarks.md). */
	unsigned int down = (unsigned int)(need >> (n->level & 63)) & 1;
	unsigned int a = n->level >= t->n_res ? (unsigned int)NL_ROUTE_ASSIGN : down;

	a = ((n->prefix ^ need) & n->mask) != 0 ? (unsigned int)NL_ROUTE_UP : a;
	*act = (enum nl_route_act)a;
	return a == NL_ROUTE_ASSIGN ? at : n->link[a];
}

/**
 * Build the tree from a machine list.
 *
 * @param out     Output: the new tree (free with nl_tree_free()).
 * @param n_res   N, 1..NL_RES_MAX.
 * @param mach    [n_mach] machine vectors; machine id = index.
 * @param n_mach  Number of machines, >= 1.
 * @param flags   0 or NL_TREE_SUBSET.
 * @return 0; -EINVAL for bad arguments; -E2BIG when '*' (or subset) expansion would list more
 *         than NL_TREE_MAX_LEAF_ENTRIES (leaf, machine) pairs; -ENOMEM.
 * @par Context  Control path; allocates; not for the dispatch path.
 * @par Source   seed 002 §3.2 (Fig. 2, eq. (7)).
 */
int nl_tree_build(struct nl_tree **out, unsigned int n_res, const struct nl_resvec *mach,
		  unsigned int n_mach, unsigned int flags);

/**
 * Free a tree from nl_tree_build(). NULL is accepted.
 * @par Context  Control path (after a grace period when readers may still hold it).
 */
void nl_tree_free(struct nl_tree *t);

/**
 * Manager addressing M(K, i): the node at `level` with prefix `prefix`.
 *
 * @param t       Tree.
 * @param level   K, 0..N.
 * @param prefix  i, bits 0..K-1 (higher bits are ignored).
 * @return Node id, or NL_NODE_NONE when that subtree holds no machine.
 * @par Context  Pure read; any thread. O(log n_node).
 * @par Source   seed 002 §3.2 eq. (7).
 */
uint32_t nl_tree_find(const struct nl_tree *t, unsigned int level, uint64_t prefix);

/**
 * The leaf serving Delta, if any.
 *
 * @return Leaf index (0..n_leaf-1), or NL_NODE_NONE when no machine matches Delta.
 * @par Context  Pure read; any thread. O(log n_node).
 */
uint32_t nl_tree_leaf_of(const struct nl_tree *t, uint64_t need);

/**
 * Common prefix length of two vectors on resources 1..n_res.
 *
 * @return Number of leading resources (from resource 1) on which a and b agree, 0..n_res.
 * @par Context  Pure.
 */
unsigned int nl_res_common_prefix(uint64_t a, uint64_t b, unsigned int n_res);

#ifdef __cplusplus
}
#endif
#endif /* NL_TREE_H */
