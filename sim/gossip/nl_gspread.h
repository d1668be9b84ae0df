/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Spread of one new record through N nodes running nl_gossip in synchronous rounds: the
 * propagation experiments of Umeda, Nakada and Matsuoka §5.1 (Fig. 6, 7, 8) and the
 * rounds-to-everyone figure checked against theory (push-pull, fan-out 1, anti-entropy:
 * log3 N + O(ln ln N) rounds, Karp, Schindelhauer, Shenker, Vöcking, FOCS 2000).
 *
 * Model. Every node holds an nl_gossip view. At round 0 one random node creates a new record.
 * In each round every node opens one exchange with each of f peers drawn uniformly among the
 * contactable nodes (not NAT'd, not itself) or, with nat_blind, among all other nodes (a NAT'd
 * one then refuses the connection: paper §5.1.2): the views hold every node's record, so drawing
 * from the membership is drawing from the view; only the tracked record is stored, since the
 * others are identical everywhere and an exchange of identical records changes nothing.
 * Rounds are synchronous: what a node sends in round r is what it held at the start of round
 * r (a record learnt in round r travels again from round r + 1), as in the theory.
 */
#ifndef NL_GSPREAD_H
#define NL_GSPREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_gossip.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most rounds one spread runs. */
#define NL_GSPREAD_MAX_ROUNDS 200u

/** One spread experiment. */
struct nl_gspread_cfg {
	uint32_t n_nodes;          /**< N >= 2 */
	double nat_share;          /**< share of nodes behind NAT, [0, 1) */
	/** Initiators do not know who is behind NAT: peers are drawn among all other nodes and
	 *  a draw of a NAT'd node is a connection that fails (the turn is lost, nothing is
	 *  exchanged). false: NAT'd nodes are never drawn (their records carry the flag). */
	bool nat_blind;
	struct nl_gossip_cfg g;    /**< fan-out, mode, rule, k */
	unsigned int max_rounds;   /**< stop after this many rounds, <= NL_GSPREAD_MAX_ROUNDS */
	uint64_t seed;
};

/** Its outcome. */
struct nl_gspread_res {
	unsigned int rounds_all;   /**< first round after which every node held it; 0 = never */
	unsigned int rounds_conv;  /**< rounds until nothing changes any more (converged) */
	double final_share;        /**< share of nodes holding it at the end */
	double share[NL_GSPREAD_MAX_ROUNDS + 1]; /**< share after round r (share[0] = 1/N) */
	unsigned int n_share;      /**< entries of share[] filled (rounds run + 1) */
	uint64_t exchanges;        /**< exchanges opened (failed connections to NAT'd peers
				    *   included) */
	uint64_t failed;           /**< of them, connections to a NAT'd peer that failed */
	uint64_t recs_sent;        /**< copies of the record carried, both directions: the
				    *   messages a rule costs (anti-entropy sends it on every
				    *   exchange once known, stop-k only while it is hot) */
};

/**
 * Run one spread.
 * @param c    Experiment.
 * @param res  Output.
 * @return 0; -EINVAL (bad parameters); -ENOMEM.
 * @par Context  Any thread (owns all it allocates). Cost O(N x rounds x f).
 * @par Source   seed paper §2.3.1, §4.5, §5.1.1, §5.1.2.
 */
int nl_gspread_run(const struct nl_gspread_cfg *c, struct nl_gspread_res *res);

#ifdef __cplusplus
}
#endif
#endif /* NL_GSPREAD_H */
