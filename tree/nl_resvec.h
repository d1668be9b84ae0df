/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Resource vectors (seed 002 §2.1 eq. (1)-(2), §2.2 eq. (4)-(5)).
 *
 * A machine's vector Gamma_i has N entries in {1, 0, *}; a task's required vector Delta has N
 * entries in {0, 1}. Resource j (1-based, as in the paper) is bit j-1 of a uint64_t, so up to
 * NL_RES_MAX = 64 resources. The tree's level-K node splits on resource K+1, i.e. bit K.
 *
 * Matching (seed 002 §2.2): a task runs only on machines whose vector matches Delta exactly;
 * '*' matches either value. Subset mode (ours, off by default): a machine that holds a
 * resource the task does not need may serve too (a 1 where Delta has 0 matches).
 */
#ifndef NL_RESVEC_H
#define NL_RESVEC_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NL_RES_MAX 64u /**< most resources a vector can describe */

/** A machine's resource vector Gamma_i over N resources. */
struct nl_resvec {
	uint64_t set; /**< bit k set = holds resource k+1 (ignored where any has bit k) */
	uint64_t any; /**< bit k set = '*' (undefined): serves either side of split k */
};

/**
 * Mask of the low n bits (resources 1..n).
 *
 * @param n  Number of bits, 0..64.
 * @return   (1 << n) - 1, all ones for n = 64.
 * @par Context  Pure.
 */
static inline uint64_t
nl_res_mask(unsigned int n)
{
	return n >= 64 ? ~UINT64_C(0) : ((UINT64_C(1) << n) - 1);
}

/**
 * Whether a machine may serve a task on resources 1..n_res.
 *
 * @param m       Machine vector Gamma.
 * @param need    Task vector Delta (bit k = needs resource k+1).
 * @param n_res   N, 1..64.
 * @param subset  false: exact match, '*' matches both (seed 002 §2.2); true: additionally a
 *                machine holding an unneeded resource matches (never one lacking a needed one).
 * @return true when the machine matches.
 * @par Context  Pure.
 * @par Source   seed 002 §2.2 ("only on machines whose vector matches").
 */
static inline bool
nl_res_match(const struct nl_resvec *m, uint64_t need, unsigned int n_res, bool subset)
{
	uint64_t mask = nl_res_mask(n_res) & ~m->any;
	uint64_t diff = (m->set ^ need) & mask;

	if (subset)
		diff &= need; /* only a missing needed resource disqualifies */
	return diff == 0;
}

/**
 * Parse a vector written resource 1 first, e.g. "10*1" (N = 4).
 *
 * @param s      NUL-terminated string of '0', '1', '*' (and for a task only '0'/'1').
 * @param out    Parsed vector.
 * @param n_res  Output: its length N.
 * @return 0; -EINVAL for another character or an empty string; -E2BIG if longer than 64.
 * @par Context  Pure.
 */
int nl_res_parse(const char *s, struct nl_resvec *out, unsigned int *n_res);

/**
 * Format a vector resource 1 first into buf ("10*1").
 *
 * @param v      Vector.
 * @param n_res  N, 1..64.
 * @param buf    Output, at least n_res + 1 bytes.
 * @param len    Size of buf [bytes].
 * @return buf, or NULL when len is too small.
 * @par Context  Pure.
 */
char *nl_res_format(const struct nl_resvec *v, unsigned int n_res, char *buf, unsigned int len);

#ifdef __cplusplus
}
#endif
#endif /* NL_RESVEC_H */
