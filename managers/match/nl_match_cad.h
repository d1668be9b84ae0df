/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Requirements and Rank compiled once, machine ClassAd records, and their evaluation into a
 * match table (managers/nl_match.h). Uses the ClassAd evaluator of managers/classad/ with
 * HTCondor's matchmaking reading (nl_cad_parse_match()): `TARGET.x` is the machine's x, and
 * a bare name the job expression does not define is looked up in the machine record too
 * (HTCondor: MY first, then TARGET), so `Memory >= 16384 && Arch == "X86_64"` reads the
 * machine's attributes.
 *
 * Everything here runs on the control path (REGISTER, machine record change, generation
 * publish); the dispatch path reads only the table.
 */
#ifndef NL_MATCH_CAD_H
#define NL_MATCH_CAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nl_match.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nl_match_expr;
struct nl_match_mad;

/**
 * Compile a Requirements and a Rank expression once (HTCondor job-ad semantics).
 *
 * @param req, req_len    Requirements text; empty = true.
 * @param rank, rank_len  Rank text; empty = no Rank.
 * @param out     Output, freed with nl_match_expr_free().
 * @param err     Output: "Requirements: line L col C: message" on a syntax error; may be NULL.
 * @param errlen  Size of err.
 * @return 0; -EINVAL (syntax, err filled; -EDOM when the error is in Rank); -E2BIG; -ENOMEM.
 * @par Context  Control path; allocates.
 * @par Source   HTCondor manual, "Matchmaking with ClassAds"; seed 004 §3 (compiled ads).
 */
int nl_match_expr_compile(const char *req, size_t req_len, const char *rank, size_t rank_len,
			  struct nl_match_expr **out, char *err, size_t errlen);

/** Free a compiled expression; NULL accepted. @par Context Control path. */
void nl_match_expr_free(struct nl_match_expr *x);

/**
 * Parse a machine record: a ClassAd attribute list (`Memory = 16384; Arch = "X86_64"`, or a
 * bracketed record) whose attributes are evaluated once to constants (numbers, strings,
 * booleans; anything else is kept as undefined).
 *
 * @param text, len  Record text (<= NL_CAD_MAX_SRC_BYTES).
 * @param out     Output, freed with nl_match_mad_free().
 * @param err     Output on a syntax error ("line L col C: message"); may be NULL.
 * @param errlen  Size of err.
 * @return 0; -EINVAL (syntax); -E2BIG (more than NL_CAD_SCHEMA_MAX attributes); -ENOMEM.
 * @par Context  Any thread; allocates.
 */
int nl_match_mad_parse(const char *text, size_t len, struct nl_match_mad **out, char *err,
		       size_t errlen);

/** Free a machine record; NULL accepted. @par Context Owner. */
void nl_match_mad_free(struct nl_match_mad *ad);

/**
 * A record's attribute as text (tests, telemetry): "16384", "\"X86_64\"", "undefined".
 * @return bytes written as snprintf. @par Context Owner.
 */
int nl_match_mad_get(const struct nl_match_mad *ad, const char *name, char *buf, size_t n);

/**
 * Evaluate a compiled expression against one machine record.
 *
 * @param x     Compiled expression.
 * @param ad    Machine record, or NULL (a machine without a record: every attribute undefined).
 * @param ok    Output: Requirements is the boolean true.
 * @param rank  Output: Rank as a number (0 when there is none, or it is not a number).
 * @return 0; -EINVAL on bad arguments.
 * @par Context  One thread at a time per expression (it owns an evaluation context).
 */
int nl_match_expr_eval(struct nl_match_expr *x, const struct nl_match_mad *ad, bool *ok,
		       double *rank);

/** @return true when the expression has a Rank. @par Context Any. */
bool nl_match_expr_has_rank(const struct nl_match_expr *x);

#ifdef __cplusplus
}
#endif
#endif /* NL_MATCH_CAD_H */
