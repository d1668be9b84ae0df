/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Matching in the model (issue #15 item 4): the `[machine NAME]` records and `[class NAME]`
 * Requirements/Rank of a model configuration (config/nl_model_cfg.h) evaluated into the same
 * match table (managers/nl_match.h) the live leaf reads, so `nlevel-sim` and the emulated
 * appliance place a matched task with the code the appliance runs in port mode
 * (nl_match_pick_task()).
 *
 * Theory of operation. Task class k (tclass[k]) is match handle k + 1; a task's class is
 * nl_model_task_class(). Machine m's record is the attributes of every `[machine NAME]`
 * section selecting it, a later section's value replacing an earlier one's, on top of two
 * attributes every machine has: `Machine` (its model id) and `Mips` (its nominal speed in
 * millions of instructions per u.t.), as a live worker announces them. Every machine offers
 * every task (the model has no command names). The table is built once per run set-up (the
 * model's machines do not change); nothing is evaluated while tasks are placed.
 */
#ifndef NL_MATCH_MODEL_H
#define NL_MATCH_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nl_machine.h"
#include "nl_match.h"
#include "nl_model_cfg.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Compile every task class's Requirements and Rank, build every machine's record and evaluate
 * them into a match table (handles 1..m->n_tclass).
 *
 * @param m       Model with its [machine] / [class] sections parsed.
 * @param mach    [m->n_mach] machines (nl_machines_build()).
 * @param out     Output table (nl_match_tab_free()); NULL when the model has no task class.
 * @param err     Output: "FILE:LINE: [class NAME] requirements: line L col C: message", or
 *                "FILE:LINE: [machine NAME] Attr: ..." for a bad attribute value.
 * @param errlen  Size of err.
 * @return 0; -EINVAL (a ClassAd text does not parse: err filled); -E2BIG (a machine with more
 *         than NL_CAD_SCHEMA_MAX attributes); -ENOMEM.
 * @par Context  Control path; allocates. O(n_tclass * n_mach) evaluations.
 * @par Source   HTCondor manual, "Matchmaking with ClassAds"; seed 003 §4.3.
 */
int nl_match_model_build(const struct nl_model_cfg *m, const struct nl_machine *mach,
			 struct nl_match_tab **out, char *err, size_t errlen);

/**
 * Check a model's ClassAd texts (nl_match_model_build() without keeping the table): what a
 * program calls right after nl_model_cfg_parse() to refuse bad configuration with FILE:LINE.
 * @return as nl_match_model_build(). @par Context Control path.
 * @par Source  docs/config.md "Machine records and task classes".
 */
int nl_match_model_check(const struct nl_model_cfg *m, const struct nl_machine *mach, char *err,
			 size_t errlen);

/**
 * Bind the model's table for an engine whose tasks carry their class handle in nl_task.aux
 * (the simulator): builds the table and publishes it in nl_match_src with an identity
 * handle map. One binding per process at a time; runs of the same model on several threads
 * share it (read-only). A model without task classes unbinds.
 *
 * @return as nl_match_model_build().
 * @par Context  Control path, before any run that reads it starts.
 * @par Source   managers/nl_match.h (the binding the policies read).
 */
int nl_match_model_bind(const struct nl_model_cfg *m, const struct nl_machine *mach, char *err,
			size_t errlen);

/**
 * Undo nl_match_model_bind(); safe when nothing is bound.
 * @par Context After the runs. @par Source managers/nl_match.h.
 */
void nl_match_model_unbind(void);

#ifdef __cplusplus
}
#endif
#endif /* NL_MATCH_MODEL_H */
